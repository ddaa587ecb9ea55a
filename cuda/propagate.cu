#include "cuda/propagate.h"

#include <cuda_runtime.h>
#include <string.h>

#include "cuda/check.h"

/* y[v][j] = self[v] x[v][j] + sum over the row's edges of coefficient[e] x[col[e]][j], added in
 * the reference's order with separately rounded multiplies and adds. One thread per (v, j):
 * threads of a warp read consecutive columns of the same rows, so loads coalesce.
 *   row_ptr [num_nodes + 1], col [edges], edge_coefficient [edges]   the rows' in-edges
 *   self_coefficient [num_nodes]; x, y [num_nodes][width] */
__global__ static void propagate_forward_kernel(int64_t num_nodes, const int64_t *row_ptr, const int32_t *col,
                                                const float *edge_coefficient, const float *self_coefficient,
                                                const float *x, int64_t width, float *y)
{
    int64_t index = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= num_nodes * width)
        return;
    int64_t v = index / width, j = index % width;
    float sum = __fmul_rn(self_coefficient[v], x[v * width + j]);
    for (int64_t e = row_ptr[v]; e < row_ptr[v + 1]; e++)
        sum = __fadd_rn(sum, __fmul_rn(edge_coefficient[e], x[(int64_t)col[e] * width + j]));
    y[index] = sum;
}

/* dx[u][j] += the terms the reference's scatter adds, in its order: destinations in increasing
 * order, the diagonal term at v = u before the edges of row u.
 *   transpose_offsets [num_nodes + 1]; transpose_edge, transpose_destination [edges]
 *                     the transpose of propagation_add_transpose() (ref/nn/propagate.h)
 *   edge_coefficient [edges], self_coefficient [num_nodes]; dy, dx [num_nodes][width] */
__global__ static void propagate_backward_kernel(int64_t num_nodes, const int64_t *transpose_offsets,
                                                 const int64_t *transpose_edge, const int32_t *transpose_destination,
                                                 const float *edge_coefficient, const float *self_coefficient,
                                                 const float *dy, int64_t width, float *dx)
{
    int64_t index = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= num_nodes * width)
        return;
    int64_t u = index / width, j = index % width;
    float sum = dx[index];
    int diagonal_done = 0;
    for (int64_t slot = transpose_offsets[u]; slot < transpose_offsets[u + 1]; slot++) {
        int64_t v = transpose_destination[slot];
        if (!diagonal_done && v >= u) {
            sum = __fadd_rn(sum, __fmul_rn(self_coefficient[u], dy[u * width + j]));
            diagonal_done = 1;
        }
        sum = __fadd_rn(sum, __fmul_rn(edge_coefficient[transpose_edge[slot]], dy[v * width + j]));
    }
    if (!diagonal_done)
        sum = __fadd_rn(sum, __fmul_rn(self_coefficient[u], dy[u * width + j]));
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
    cuda_free(context, p->d_row_ptr);
    cuda_free(context, p->d_col);
    cuda_free(context, p->d_edge_coefficient);
    cuda_free(context, p->d_self_coefficient);
    cuda_free(context, p->d_transpose_offsets);
    cuda_free(context, p->d_transpose_edge);
    cuda_free(context, p->d_transpose_destination);
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
        p->num_nodes, p->d_row_ptr, p->d_col, p->d_edge_coefficient, p->d_self_coefficient, d_x, width, d_y);
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
        p->num_nodes, p->d_transpose_offsets, p->d_transpose_edge, p->d_transpose_destination, p->d_edge_coefficient,
        p->d_self_coefficient, d_dy, width, d_dx);
    CUDA_CHECK(cudaGetLastError(), err);
    return TF_OK;
}
