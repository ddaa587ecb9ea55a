#include "cuda/context.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/check.h"

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
    cublasHandle_t blas;
    if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS || cublasSetStream(blas, stream) != CUBLAS_STATUS_SUCCESS) {
        cudaStreamDestroy(stream);
        return tf_error_set(err, TF_ERR_SYSTEM, "cuBLAS: cannot create a handle on device %d", device);
    }
    /* Full float32 products: no TF32 tensor-core rounding, so results stay within the fp
     * tolerance of the CPU reference. */
    cublasSetMathMode(blas, CUBLAS_PEDANTIC_MATH);
    context->blas = blas;
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
    for (int i = 0; i < context->allocation_count; i++)
        cudaFree(context->allocations[i]);
    free(context->allocations);
    for (int slot = 0; slot < CUDA_SCRATCH_SLOTS; slot++)
        cudaFree(context->scratch[slot]);
    if (context->blas)
        cublasDestroy((cublasHandle_t)context->blas);
    if (context->stream)
        cudaStreamDestroy((cudaStream_t)context->stream);
    memset(context, 0, sizeof *context);
}

extern "C" void *cuda_alloc(cuda_context *context, size_t bytes, tf_error *err)
{
    if (context->allocation_count == context->allocation_capacity) {
        int capacity = context->allocation_capacity ? 2 * context->allocation_capacity : 64;
        void **grown = (void **)realloc(context->allocations, (size_t)capacity * sizeof *grown);
        if (!grown) {
            tf_error_set(err, TF_ERR_SYSTEM, "cuda_alloc: out of host memory");
            return NULL;
        }
        context->allocations = grown;
        context->allocation_capacity = capacity;
    }
    void *pointer = NULL;
    if (cuda_check(cudaMalloc(&pointer, bytes ? bytes : 1), __FILE__, __LINE__, err) != TF_OK)
        return NULL;
    context->allocations[context->allocation_count++] = pointer;
    return pointer;
}

extern "C" void cuda_free(cuda_context *context, void *device_pointer)
{
    if (!device_pointer)
        return;
    for (int i = 0; i < context->allocation_count; i++)
        if (context->allocations[i] == device_pointer) {
            cudaFree(device_pointer);
            context->allocations[i] = context->allocations[--context->allocation_count];
            return;
        }
}

extern "C" void cuda_free_each(cuda_context *context, void *const *buffers, size_t count)
{
    for (size_t i = 0; i < count; i++)
        cuda_free(context, buffers[i]);
}

extern "C" void *cuda_scratch(cuda_context *context, int slot, size_t bytes, tf_error *err)
{
    if (bytes > context->scratch_bytes[slot]) {
        cudaFree(context->scratch[slot]);
        context->scratch[slot] = NULL;
        context->scratch_bytes[slot] = 0;
        if (cuda_check(cudaMalloc(&context->scratch[slot], bytes), __FILE__, __LINE__, err) != TF_OK)
            return NULL;
        context->scratch_bytes[slot] = bytes;
    }
    return context->scratch[slot];
}

extern "C" int cuda_upload(cuda_context *context, void *device_pointer, const void *host_pointer, size_t bytes,
                           tf_error *err)
{
    cudaStream_t stream = (cudaStream_t)context->stream;
    CUDA_CHECK(cudaMemcpyAsync(device_pointer, host_pointer, bytes, cudaMemcpyHostToDevice, stream), err);
    CUDA_CHECK(cudaStreamSynchronize(stream), err);
    return TF_OK;
}

extern "C" int cuda_download(cuda_context *context, void *host_pointer, const void *device_pointer, size_t bytes,
                             tf_error *err)
{
    cudaStream_t stream = (cudaStream_t)context->stream;
    CUDA_CHECK(cudaMemcpyAsync(host_pointer, device_pointer, bytes, cudaMemcpyDeviceToHost, stream), err);
    CUDA_CHECK(cudaStreamSynchronize(stream), err);
    return TF_OK;
}

/* Element i of out [count] gets the value i: a result only a kernel that really ran can produce. */
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
