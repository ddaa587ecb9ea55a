/* CUDA SpMM (graph propagation) benchmark: validates against the reference, then times, then
 * reports effective bandwidth as a fraction of a copy kernel measured on the same device in the
 * same run (llm.c's and nccl-tests' habit: validate first, state the bytes formula).
 *
 *   build/bench/bench_propagate_cuda [DATASET [WIDTH]]     (default: a generated 10^6-edge graph, width 32)
 *
 * Bytes moved by y = P x over N vertices, E edges and W columns, counting each array once and
 * the gathered rows of x once per edge:
 *     bytes = 8 (N + 1) + 8 E  (row offsets; column + coefficient per edge)
 *           + 4 N              (diagonal coefficients)
 *           + 4 E W            (the source row of x, per edge)
 *           + 4 N W            (y written)
 * The copy kernel moves 8 bytes per float (one read, one write). Without a GPU it says so and
 * exits 0. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "cuda/context.h"
#include "cuda/layers.h"
#include "cuda/propagate.h"
#include "datasets/dataset.h"
#include "ref/core/rng.h"

static int fail(const tf_error *err)
{
    fprintf(stderr, "bench_propagate_cuda: %s\n", err->message);
    return err->code ? err->code : 1;
}

/* Seconds per call of `run`, from `repeats` calls timed with CUDA events after one warm-up. */
typedef int (*kernel_call)(void *context, tf_error *err);
static double time_kernel(cuda_context *gpu, kernel_call run, void *context, int repeats, tf_error *err)
{
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    if (run(context, err) != TF_OK)
        return -1;
    cudaEventRecord(start, (cudaStream_t)gpu->stream);
    for (int i = 0; i < repeats; i++)
        if (run(context, err) != TF_OK)
            return -1;
    cudaEventRecord(stop, (cudaStream_t)gpu->stream);
    cudaEventSynchronize(stop);
    float milliseconds = 0;
    cudaEventElapsedTime(&milliseconds, start, stop);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return milliseconds / 1000.0 / repeats;
}

typedef struct spmm_call {
    cuda_context *gpu;
    cuda_propagation *p;
    const float *d_x;
    float *d_y;
    int64_t width;
} spmm_call;

static int run_spmm(void *context, tf_error *err)
{
    spmm_call *c = context;
    return cuda_propagate_forward(c->gpu, c->p, c->d_x, c->width, c->d_y, err);
}

typedef struct copy_call {
    cuda_context *gpu;
    const float *d_source;
    float *d_destination;
    int64_t count;
} copy_call;

static int run_copy(void *context, tf_error *err)
{
    copy_call *c = context;
    return cuda_copy(c->gpu, c->d_source, c->count, c->d_destination, err);
}

int main(int argc, char **argv)
{
    const char *spec = argc > 1 ? argv[1] : "powerlaw:nodes=100000,edges=1000000,snapshots=1,seed=1";
    const int64_t width = argc > 2 ? atoll(argv[2]) : 32;
    if (cuda_device_count() == 0) {
        printf("bench_propagate_cuda: no GPU (or no driver) on this machine: nothing to measure\n");
        return 0;
    }
    tf_error err;
    cuda_context gpu;
    dataset d;
    if (cuda_context_create(&gpu, 0, &err) != TF_OK || dataset_load(spec, NULL, &d, &err) != TF_OK)
        return fail(&err);
    const csr *g = &d.snapshots.snapshots[0].graph;
    const int64_t n = g->num_nodes, e = g->num_edges, size = n * width;
    propagation p;
    cuda_propagation device;
    if (ref_propagation_gcn(&p, g, EDGE_NORM_SYMMETRIC, 1, &err) != TF_OK ||
        propagation_add_transpose(&p, &err) != TF_OK || cuda_propagation_upload(&gpu, &p, &device, &err) != TF_OK)
        return fail(&err);
    rng r;
    rng_seed(&r, 1);
    float *x = malloc((size_t)size * sizeof(float)), *y_ref = malloc((size_t)size * sizeof(float));
    float *y_gpu = malloc((size_t)size * sizeof(float));
    for (int64_t i = 0; i < size; i++)
        x[i] = (float)(2.0 * rng_uniform(&r) - 1.0);
    float *d_x = cuda_alloc(&gpu, (size_t)size * sizeof(float), &err);
    float *d_y = d_x ? cuda_alloc(&gpu, (size_t)size * sizeof(float), &err) : NULL;
    if (!d_y || cuda_upload(&gpu, d_x, x, (size_t)size * sizeof(float), &err) != TF_OK)
        return fail(&err);

    /* 1. Validate: the GPU result must equal the reference bit for bit. */
    ref_propagate_forward(&p, x, width, y_ref);
    spmm_call spmm = {&gpu, &device, d_x, d_y, width};
    if (run_spmm(&spmm, &err) != TF_OK || cuda_download(&gpu, y_gpu, d_y, (size_t)size * sizeof(float), &err) != TF_OK)
        return fail(&err);
    int64_t wrong = 0;
    for (int64_t i = 0; i < size; i++)
        wrong += memcmp(&y_gpu[i], &y_ref[i], sizeof(float)) != 0;
    printf("%s: %lld vertices, %lld edges, width %lld on %s: #wrong %lld\n", spec, (long long)n, (long long)e,
           (long long)width, gpu.name, (long long)wrong);
    if (wrong != 0) {
        printf("FAILED: not timing a wrong kernel\n");
        return 1;
    }
    /* 2. Time the kernel and a copy of the same total bytes, in the same run. */
    double seconds = time_kernel(&gpu, run_spmm, &spmm, 50, &err);
    double bytes = 8.0 * (double)(n + 1) + 8.0 * (double)e + 4.0 * (double)n + 4.0 * (double)e * (double)width +
                   4.0 * (double)size;
    int64_t copy_count = (int64_t)(bytes / 8.0) + 1;
    float *d_source = cuda_alloc(&gpu, (size_t)copy_count * sizeof(float), &err);
    float *d_destination = d_source ? cuda_alloc(&gpu, (size_t)copy_count * sizeof(float), &err) : NULL;
    if (seconds < 0 || !d_destination)
        return fail(&err);
    copy_call copy = {&gpu, d_source, d_destination, copy_count};
    double copy_seconds = time_kernel(&gpu, run_copy, &copy, 50, &err);
    if (copy_seconds < 0)
        return fail(&err);
    double bandwidth = bytes / seconds / 1e9, copy_bandwidth = 8.0 * (double)copy_count / copy_seconds / 1e9;
    printf("spmm: %.3f ms, %.1f GB/s effective (bytes = 8(N+1) + 8E + 4N + 4EW + 4NW = %.3g)\n", seconds * 1e3,
           bandwidth, bytes);
    printf("copy: %.3f ms, %.1f GB/s measured (8 bytes per float, %lld floats)\n", copy_seconds * 1e3, copy_bandwidth,
           (long long)copy_count);
    printf("spmm reaches %.0f%% of the measured copy bandwidth\n", 100.0 * bandwidth / copy_bandwidth);
    free(x);
    free(y_ref);
    free(y_gpu);
    cuda_propagation_free(&gpu, &device);
    ref_propagation_free(&p);
    dataset_free(&d);
    cuda_context_destroy(&gpu);
    return 0;
}
