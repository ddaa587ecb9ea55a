#include "cuda/propagate.h"

#include <cuda_runtime.h>
#include <string.h>

#include "cuda/check.h"

/* Both kernels take the operator by value (its device arrays, see cuda_propagation in
 * propagate.h) and run one thread per (vertex, column) of [num_nodes][width]. */

/* y[v][j] = self[v] x[v][j] + sum over the row's edges of coefficient[e] x[col[e]][j], added in
 * the reference's order with separately rounded multiplies and adds. Threads of a warp read
 * consecutive columns of the same rows, so loads coalesce. x, y [num_nodes][width]. */
__global__ static void propagate_forward_kernel(cuda_propagation p, const float *x, int64_t width, float *y)
{
    int64_t index = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= p.num_nodes * width)
        return;
    int64_t v = index / width, j = index % width;
    float sum = __fmul_rn(p.d_self_coefficient[v], x[v * width + j]);
    for (int64_t e = p.d_row_ptr[v]; e < p.d_row_ptr[v + 1]; e++)
        sum = __fadd_rn(sum, __fmul_rn(p.d_edge_coefficient[e], x[(int64_t)p.d_col[e] * width + j]));
    y[index] = sum;
}

/* dx[u][j] += the terms the reference's scatter adds, in its order: destinations in increasing
 * order, the diagonal term at v = u before the edges of row u, gathered over the transpose of
 * propagation_add_transpose() (ref/nn/propagate.h). dy, dx [num_nodes][width]. */
__global__ static void propagate_backward_kernel(cuda_propagation p, const float *dy, int64_t width, float *dx)
{
    int64_t index = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= p.num_nodes * width)
        return;
    int64_t u = index / width, j = index % width;
    float sum = dx[index];
    int diagonal_done = 0;
    for (int64_t slot = p.d_transpose_offsets[u]; slot < p.d_transpose_offsets[u + 1]; slot++) {
        int64_t v = p.d_transpose_destination[slot];
        if (!diagonal_done && v >= u) {
            sum = __fadd_rn(sum, __fmul_rn(p.d_self_coefficient[u], dy[u * width + j]));
            diagonal_done = 1;
        }
        sum = __fadd_rn(sum, __fmul_rn(p.d_edge_coefficient[p.d_transpose_edge[slot]], dy[v * width + j]));
    }
    if (!diagonal_done)
        sum = __fadd_rn(sum, __fmul_rn(p.d_self_coefficient[u], dy[u * width + j]));
    dx[index] = sum;
}

/* Allocates device memory for `count` elements of `size` bytes and copies `host` there. */
static void *upload_array(cuda_context *context, const void *host, int64_t count, size_t size, tf_error *err)
{
    void *device = cuda_alloc(context, (size_t)count * size, err);
    if (device && count > 0 && cuda_upload(context, device, host, (size_t)count * size, err) != TF_OK)
        return NULL;
    return device;
}

extern "C" int cuda_propagation_upload(cuda_context *context, const propagation *p, cuda_propagation *out,
                                       tf_error *err)
{
    memset(out, 0, sizeof *out);
    if (!p->transpose_offsets)
        return tf_error_set(err, TF_ERR_INPUT, "cuda_propagation_upload: the operator has no transpose "
                                               "(call propagation_add_transpose first)");
    const csr *g = p->graph;
    out->num_nodes = g->num_nodes;
    out->num_edges = g->num_edges;
    if (!(out->d_row_ptr = (int64_t *)upload_array(context, g->row_ptr, g->num_nodes + 1, sizeof(int64_t), err)) ||
        !(out->d_col = (int32_t *)upload_array(context, g->col, g->num_edges, sizeof(int32_t), err)) ||
        !(out->d_edge_coefficient = (float *)upload_array(context, p->edge_coefficient, g->num_edges, sizeof(float), err)) ||
        !(out->d_self_coefficient = (float *)upload_array(context, p->self_coefficient, g->num_nodes, sizeof(float), err)) ||
        !(out->d_transpose_offsets =
              (int64_t *)upload_array(context, p->transpose_offsets, g->num_nodes + 1, sizeof(int64_t), err)) ||
        !(out->d_transpose_edge = (int64_t *)upload_array(context, p->transpose_edge, g->num_edges, sizeof(int64_t), err)) ||
        !(out->d_transpose_destination =
              (int32_t *)upload_array(context, p->transpose_destination, g->num_edges, sizeof(int32_t), err))) {
        cuda_propagation_free(context, out);
        return TF_ERR_SYSTEM;
    }
    return TF_OK;
}

extern "C" void cuda_propagation_free(cuda_context *context, cuda_propagation *p)
{
    void *arrays[] = {p->d_row_ptr, p->d_col, p->d_edge_coefficient, p->d_self_coefficient,
                      p->d_transpose_offsets, p->d_transpose_edge, p->d_transpose_destination};
    cuda_free_each(context, arrays, sizeof arrays / sizeof arrays[0]);
    memset(p, 0, sizeof *p);
}

static const int threads_per_block = 256;

static unsigned blocks_for(int64_t count) { return (unsigned)((count + threads_per_block - 1) / threads_per_block); }

extern "C" int cuda_propagate_forward(cuda_context *context, const cuda_propagation *p, const float *d_x, int64_t width,
                                      float *d_y, tf_error *err)
{
    int64_t count = p->num_nodes * width;
    if (count == 0)
        return TF_OK;
    propagate_forward_kernel<<<blocks_for(count), threads_per_block, 0, (cudaStream_t)context->stream>>>(
        *p, d_x, width, d_y);
    CUDA_CHECK(cudaGetLastError(), err);
    return TF_OK;
}

extern "C" int cuda_propagate_backward(cuda_context *context, const cuda_propagation *p, const float *d_dy,
                                       int64_t width, float *d_dx, tf_error *err)
{
    int64_t count = p->num_nodes * width;
    if (count == 0)
        return TF_OK;
    propagate_backward_kernel<<<blocks_for(count), threads_per_block, 0, (cudaStream_t)context->stream>>>(
        *p, d_dy, width, d_dx);
    CUDA_CHECK(cudaGetLastError(), err);
    return TF_OK;
}
