#include "cuda/recurrent.h"

#include <cuda_runtime.h>

#include "cuda/check.h"
#include "cuda/layers.h"
#include "ref/nn/recurrent_gates.h"

static const int threads_per_block = 256;
static unsigned blocks_for(int64_t count) { return (unsigned)((count + threads_per_block - 1) / threads_per_block); }

/* One thread per (row, unit): the gates from the two pre-activation arrays.
 *   input, recurrent [n][3H]  x W_ih^T + b_ih and h W_hh^T + b_hh
 *   h, h_out         [n][H]   the carried state and the new one
 *   cache            [n][4H]  r, z, n, h_n per row (ref/nn/recurrent_gates.h) */
__global__ static void gru_gates_forward(const float *input, const float *recurrent, const float *h, int64_t n,
                                         int64_t H, float *h_out, float *cache)
{
    int64_t index = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= n * H)
        return;
    int64_t row = index / H, j = index % H;
    const float *a = input + row * 3 * H + j, *b = recurrent + row * 3 * H + j;
    h_out[index] = gru_unit_forward(a[0], a[H], a[2 * H], b[0], b[H], b[2 * H], &h[index], H, cache + row * 4 * H + j);
}

/* The gradients of the six pre-activations per (row, unit); dh gets its direct term.
 *   h, dh_out, dh              [n][H]   the carried state, dL/dh', dL/dh (may be NULL)
 *   cache                      [n][4H]  the forward's r, z, n, h_n
 *   d_input, d_recurrent       [n][3H]  the gradients of x W_ih^T + b_ih and h W_hh^T + b_hh */
__global__ static void gru_gates_backward(const float *h, const float *cache, const float *dh_out, int64_t n, int64_t H,
                                          float *d_input, float *d_recurrent, float *dh)
{
    int64_t index = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= n * H)
        return;
    int64_t row = index / H, j = index % H;
    gru_unit_backward(dh_out[index], h[index], cache + row * 4 * H + j, H, d_input + row * 3 * H + j,
                      d_recurrent + row * 3 * H + j, dh ? &dh[index] : NULL);
}

extern "C" int cuda_gru_cell_forward(cuda_context *context, const float *d_x, const float *d_h,
                                     const float *d_weight_ih, const float *d_weight_hh, const float *d_bias_ih,
                                     const float *d_bias_hh, int64_t n, int64_t in, int64_t hidden, float *d_h_out,
                                     float *d_cache, tf_error *err)
{
    const int64_t H = hidden;
    float *input = (float *)cuda_alloc(context, (size_t)(n * 3 * H) * sizeof(float), err);
    float *recurrent = input ? (float *)cuda_alloc(context, (size_t)(n * 3 * H) * sizeof(float), err) : NULL;
    int status = recurrent ? TF_OK : TF_ERR_SYSTEM;
    if (status == TF_OK)
        status = cuda_linear_forward(context, d_x, d_weight_ih, d_bias_ih, n, in, 3 * H, input, err);
    if (status == TF_OK)
        status = cuda_linear_forward(context, d_h, d_weight_hh, d_bias_hh, n, H, 3 * H, recurrent, err);
    if (status == TF_OK && n * H > 0) {
        gru_gates_forward<<<blocks_for(n * H), threads_per_block, 0, (cudaStream_t)context->stream>>>(
            input, recurrent, d_h, n, H, d_h_out, d_cache);
        status = cuda_check(cudaGetLastError(), __FILE__, __LINE__, err);
    }
    if (status == TF_OK) /* the scratch buffers are freed below: let the kernel finish first */
        status = cuda_check(cudaStreamSynchronize((cudaStream_t)context->stream), __FILE__, __LINE__, err);
    cuda_free(context, input);
    cuda_free(context, recurrent);
    return status;
}

extern "C" int cuda_gru_cell_backward(cuda_context *context, const float *d_x, const float *d_h,
                                      const float *d_weight_ih, const float *d_weight_hh, const float *d_cache,
                                      const float *d_dh_out, int64_t n, int64_t in, int64_t hidden, float *d_dx,
                                      float *d_dh, float *d_dweight_ih, float *d_dweight_hh, float *d_dbias_ih,
                                      float *d_dbias_hh, tf_error *err)
{
    const int64_t H = hidden;
    float *d_input = (float *)cuda_alloc(context, (size_t)(n * 3 * H) * sizeof(float), err);
    float *d_recurrent = d_input ? (float *)cuda_alloc(context, (size_t)(n * 3 * H) * sizeof(float), err) : NULL;
    int status = d_recurrent ? TF_OK : TF_ERR_SYSTEM;
    if (status == TF_OK && n * H > 0) {
        gru_gates_backward<<<blocks_for(n * H), threads_per_block, 0, (cudaStream_t)context->stream>>>(
            d_h, d_cache, d_dh_out, n, H, d_input, d_recurrent, d_dh);
        status = cuda_check(cudaGetLastError(), __FILE__, __LINE__, err);
    }
    if (status == TF_OK)
        status = cuda_linear_backward(context, d_x, d_weight_ih, d_input, n, in, 3 * H, d_dx, d_dweight_ih, d_dbias_ih,
                                      err);
    if (status == TF_OK)
        status = cuda_linear_backward(context, d_h, d_weight_hh, d_recurrent, n, H, 3 * H, d_dh, d_dweight_hh,
                                      d_dbias_hh, err);
    if (status == TF_OK)
        status = cuda_check(cudaStreamSynchronize((cudaStream_t)context->stream), __FILE__, __LINE__, err);
    cuda_free(context, d_input);
    cuda_free(context, d_recurrent);
    return status;
}

/* One thread per (row, unit).
 *   preactivation, gates  [n][4H]  a = x W_ih^T + b_ih + h W_hh^T + b_hh; i, f, g, o
 *   c, c_out, h_out       [n][H]   the carried cell state, the new cell state and output */
__global__ static void lstm_forward_kernel(const float *preactivation, const float *c, int64_t n, int64_t H,
                                           float *c_out, float *h_out, float *gates)
{
    int64_t index = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= n * H)
        return;
    int64_t row = index / H, j = index % H;
    const float *a = preactivation + row * 4 * H + j;
    h_out[index] =
        lstm_unit_forward(a[0], a[H], a[2 * H], a[3 * H], c[index], H, gates + row * 4 * H + j, &c_out[index]);
}

/* One thread per (row, unit).
 *   gates, dpreactivation           [n][4H]  the forward's i, f, g, o; their pre-activations' gradients
 *   c, c_out, dh_out, dc_out, dc    [n][H]   dc_out and dc may be NULL */
__global__ static void lstm_backward_kernel(const float *gates, const float *c, const float *c_out, const float *dh_out,
                                            const float *dc_out, int64_t n, int64_t H, float *dpreactivation,
                                            float *dc)
{
    int64_t index = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= n * H)
        return;
    int64_t row = index / H, j = index % H;
    lstm_unit_backward(dh_out[index], dc_out ? dc_out[index] : 0.0f, c[index], c_out[index], gates + row * 4 * H + j, H,
                       dpreactivation + row * 4 * H + j, dc ? &dc[index] : NULL);
}

extern "C" int cuda_lstm_pointwise_forward(cuda_context *context, const float *d_preactivation, const float *d_c,
                                           int64_t n, int64_t hidden, float *d_c_out, float *d_h_out, float *d_gates,
                                           tf_error *err)
{
    if (n * hidden == 0)
        return TF_OK;
    lstm_forward_kernel<<<blocks_for(n * hidden), threads_per_block, 0, (cudaStream_t)context->stream>>>(
        d_preactivation, d_c, n, hidden, d_c_out, d_h_out, d_gates);
    CUDA_CHECK(cudaGetLastError(), err);
    return TF_OK;
}

extern "C" int cuda_lstm_pointwise_backward(cuda_context *context, const float *d_gates, const float *d_c,
                                            const float *d_c_out, const float *d_dh_out, const float *d_dc_out,
                                            int64_t n, int64_t hidden, float *d_dpreactivation, float *d_dc,
                                            tf_error *err)
{
    if (n * hidden == 0)
        return TF_OK;
    lstm_backward_kernel<<<blocks_for(n * hidden), threads_per_block, 0, (cudaStream_t)context->stream>>>(
        d_gates, d_c, d_c_out, d_dh_out, d_dc_out, n, hidden, d_dpreactivation, d_dc);
    CUDA_CHECK(cudaGetLastError(), err);
    return TF_OK;
}
