#include "context.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"

extern "C" int cuda_device_count(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError(); /* clear the sticky error so later calls start clean */
        return 0;
    }
    return count;
}

extern "C" int cuda_context_create(cuda_context *context, int device, tf_error *err)
{
    memset(context, 0, sizeof *context);
    cudaDeviceProp properties;
    CUDA_CHECK(cudaSetDevice(device), err);
    CUDA_CHECK(cudaGetDeviceProperties(&properties, device), err);
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), err);
    context->device = device;
    snprintf(context->name, sizeof context->name, "%s", properties.name);
    context->compute_major = properties.major;
    context->compute_minor = properties.minor;
    context->total_memory = properties.totalGlobalMem;
    context->stream = stream;
    return TF_OK;
}

extern "C" void cuda_context_destroy(cuda_context *context)
{
    if (context->stream)
        cudaStreamDestroy((cudaStream_t)context->stream);
    memset(context, 0, sizeof *context);
}

/* Element i gets the value i: a result only a kernel that really ran can produce. */
__global__ static void write_indices(int *out, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count)
        out[i] = i;
}

extern "C" int cuda_context_selftest(cuda_context *context, int count, tf_error *err)
{
    cudaStream_t stream = (cudaStream_t)context->stream;
    int *d_values = NULL;
    int *values = (int *)malloc((size_t)count * sizeof *values);
    if (!values)
        return tf_error_set(err, TF_ERR_SYSTEM, "cuda self-test: out of host memory");
    int status = TF_OK;
    if ((status = cuda_check(cudaMallocAsync((void **)&d_values, (size_t)count * sizeof *d_values, stream), __FILE__,
                             __LINE__, err)) == TF_OK) {
        write_indices<<<(count + 255) / 256, 256, 0, stream>>>(d_values, count);
        status = cuda_check(cudaGetLastError(), __FILE__, __LINE__, err);
        if (status == TF_OK)
            status = cuda_check(cudaMemcpyAsync(values, d_values, (size_t)count * sizeof *values,
                                                cudaMemcpyDeviceToHost, stream),
                                __FILE__, __LINE__, err);
        if (status == TF_OK)
            status = cuda_check(cudaStreamSynchronize(stream), __FILE__, __LINE__, err);
        cudaFreeAsync(d_values, stream);
        cudaStreamSynchronize(stream);
    }
    for (int i = 0; status == TF_OK && i < count; i++)
        if (values[i] != i)
            status = tf_error_set(err, TF_ERR_SYSTEM, "cuda self-test: element %d is %d, expected %d", i, values[i], i);
    free(values);
    return status;
}
