#include "cuda/layers.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "cuda/check.h"

static const int threads_per_block = 256;
static unsigned blocks_for(int64_t count) { return (unsigned)((count + threads_per_block - 1) / threads_per_block); }

static int blas_check(cublasStatus_t status, const char *call, tf_error *err)
{
    return status == CUBLAS_STATUS_SUCCESS ? TF_OK
                                           : tf_error_set(err, TF_ERR_SYSTEM, "cuBLAS: %s failed (status %d)", call,
                                                          (int)status);
}

/* C = alpha op(A) op(B) + beta C in cuBLAS's column-major terms (alpha = 1), C being m x n.
 * Seen from C as arrays of columns: a [op_a == N ? k : m][lda], b [op_b == N ? n : k][ldb],
 * c [n][ldc]. */
static int gemm(cuda_context *context, cublasOperation_t op_a, cublasOperation_t op_b, int64_t m, int64_t n, int64_t k,
                const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc,
                tf_error *err)
{
    if (m == 0 || n == 0)
        return TF_OK;
    const float alpha = 1.0f;
    return blas_check(cublasSgemm((cublasHandle_t)context->blas, op_a, op_b, (int)m, (int)n, (int)k, &alpha, a, (int)lda,
                                  b, (int)ldb, &beta, c, (int)ldc),
                      "cublasSgemm", err);
}

/* y [n][width] += bias [width] on every row; one thread per element. */
__global__ static void add_bias_kernel(float *y, const float *bias, int64_t n, int64_t width)
{
    int64_t index = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (index < n * width)
        y[index] += bias[index % width];
}

/* dbias [width] += the column sums of dy [n][width]; one thread per column. */
__global__ static void column_sums_kernel(const float *dy, int64_t n, int64_t width, float *dbias)
{
    int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= width)
        return;
    double sum = 0; /* a sum over every row: in double, as ref */
    for (int64_t i = 0; i < n; i++)
        sum += dy[i * width + j];
    dbias[j] += (float)sum;
}

extern "C" int cuda_add_bias(cuda_context *context, float *d_y, const float *d_bias, int64_t n, int64_t width,
                             tf_error *err)
{
    if (n * width == 0)
        return TF_OK;
    add_bias_kernel<<<blocks_for(n * width), threads_per_block, 0, (cudaStream_t)context->stream>>>(d_y, d_bias, n,
                                                                                                    width);
    CUDA_CHECK(cudaGetLastError(), err);
    return TF_OK;
}

extern "C" int cuda_add_bias_backward(cuda_context *context, const float *d_dy, int64_t n, int64_t width,
                                      float *d_dbias, tf_error *err)
{
    if (width == 0)
        return TF_OK;
    column_sums_kernel<<<blocks_for(width), threads_per_block, 0, (cudaStream_t)context->stream>>>(d_dy, n, width,
                                                                                                   d_dbias);
    CUDA_CHECK(cudaGetLastError(), err);
    return TF_OK;
}

/* Row-major y [n][out] = x [n][in] W^T: column-major y^T = W x^T, i.e. C (out x n) = A^T B with
 * A = W seen as (in x out), B = x seen as (in x n). */
extern "C" int cuda_linear_accumulate(cuda_context *context, const float *d_x, const float *d_weight, int64_t n,
                                      int64_t in, int64_t out, float *d_y, tf_error *err)
{
    return gemm(context, CUBLAS_OP_T, CUBLAS_OP_N, out, n, in, d_weight, in, d_x, in, 1.0f, d_y, out, err);
}

extern "C" int cuda_linear_forward(cuda_context *context, const float *d_x, const float *d_weight, const float *d_bias,
                                   int64_t n, int64_t in, int64_t out, float *d_y, tf_error *err)
{
    if (gemm(context, CUBLAS_OP_T, CUBLAS_OP_N, out, n, in, d_weight, in, d_x, in, 0.0f, d_y, out, err) != TF_OK)
        return TF_ERR_SYSTEM;
    return d_bias ? cuda_add_bias(context, d_y, d_bias, n, out, err) : TF_OK;
}

extern "C" int cuda_linear_backward(cuda_context *context, const float *d_x, const float *d_weight, const float *d_dy,
                                    int64_t n, int64_t in, int64_t out, float *d_dx, float *d_dweight, float *d_dbias,
                                    tf_error *err)
{
    /* dx [n][in] += dy W: column-major dx^T (in x n) += W^T-view (in x out) dy^T (out x n) */
    if (d_dx && gemm(context, CUBLAS_OP_N, CUBLAS_OP_N, in, n, out, d_weight, in, d_dy, out, 1.0f, d_dx, in, err) != TF_OK)
        return TF_ERR_SYSTEM;
    /* dW [out][in] += dy^T x: column-major dW^T (in x out) += x^T-view (in x n) dy (n x out) */
    if (d_dweight &&
        gemm(context, CUBLAS_OP_N, CUBLAS_OP_T, in, out, n, d_x, in, d_dy, out, 1.0f, d_dweight, in, err) != TF_OK)
        return TF_ERR_SYSTEM;
    return d_dbias ? cuda_add_bias_backward(context, d_dy, n, out, d_dbias, err) : TF_OK;
}

/* Row-major y [n][out] += x [n][in] W [in][out]: column-major y^T = W^T-view x^T. */
extern "C" int cuda_matmul_accumulate(cuda_context *context, const float *d_x, const float *d_weight, int64_t n,
                                      int64_t in, int64_t out, float *d_y, tf_error *err)
{
    return gemm(context, CUBLAS_OP_N, CUBLAS_OP_N, out, n, in, d_weight, out, d_x, in, 1.0f, d_y, out, err);
}

extern "C" int cuda_matmul_backward(cuda_context *context, const float *d_x, const float *d_weight, const float *d_dy,
                                    int64_t n, int64_t in, int64_t out, float *d_dx, float *d_dweight, tf_error *err)
{
    /* dx [n][in] += dy W^T: column-major dx^T (in x n) += (W^T-view)^T (in x out) dy^T (out x n) */
    if (d_dx && gemm(context, CUBLAS_OP_T, CUBLAS_OP_N, in, n, out, d_weight, out, d_dy, out, 1.0f, d_dx, in, err) != TF_OK)
        return TF_ERR_SYSTEM;
    /* dW [in][out] += x^T dy: column-major dW^T (out x in) += dy^T-view (out x n) x (n x in) */
    if (d_dweight &&
        gemm(context, CUBLAS_OP_N, CUBLAS_OP_T, out, in, n, d_dy, out, d_x, in, 1.0f, d_dweight, out, err) != TF_OK)
        return TF_ERR_SYSTEM;
    return TF_OK;
}

/* y [count] = the activation of x [count]; one thread per element. */
__global__ static void activation_forward_kernel(cuda_activation kind, const float *x, int64_t count, float *y)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count)
        return;
    float v = x[i];
    y[i] = kind == CUDA_SIGMOID ? 1.0f / (1.0f + expf(-v)) : kind == CUDA_TANH ? tanhf(v) : (v > 0.0f ? v : 0.0f);
}

/* dx [count] += dy [count] times the activation's derivative from its output y [count]. */
__global__ static void activation_backward_kernel(cuda_activation kind, const float *y, const float *dy, int64_t count,
                                                  float *dx)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count)
        return;
    float v = y[i];
    dx[i] += kind == CUDA_SIGMOID ? dy[i] * v * (1.0f - v) : kind == CUDA_TANH ? dy[i] * (1.0f - v * v)
                                                                               : (v > 0.0f ? dy[i] : 0.0f);
}

extern "C" int cuda_activation_forward(cuda_context *context, cuda_activation kind, const float *d_x, int64_t count,
                                       float *d_y, tf_error *err)
{
    if (count == 0)
        return TF_OK;
    activation_forward_kernel<<<blocks_for(count), threads_per_block, 0, (cudaStream_t)context->stream>>>(kind, d_x,
                                                                                                          count, d_y);
    CUDA_CHECK(cudaGetLastError(), err);
    return TF_OK;
}

extern "C" int cuda_activation_backward(cuda_context *context, cuda_activation kind, const float *d_y,
                                        const float *d_dy, int64_t count, float *d_dx, tf_error *err)
{
    if (count == 0)
        return TF_OK;
    activation_backward_kernel<<<blocks_for(count), threads_per_block, 0, (cudaStream_t)context->stream>>>(
        kind, d_y, d_dy, count, d_dx);
    CUDA_CHECK(cudaGetLastError(), err);
    return TF_OK;
}

/* destination [count] = source [count]; one thread per element. */
__global__ static void copy_kernel(const float *source, int64_t count, float *destination)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count)
        destination[i] = source[i];
}

extern "C" int cuda_copy(cuda_context *context, const float *d_source, int64_t count, float *d_destination,
                         tf_error *err)
{
    if (count == 0)
        return TF_OK;
    copy_kernel<<<blocks_for(count), threads_per_block, 0, (cudaStream_t)context->stream>>>(d_source, count,
                                                                                            d_destination);
    CUDA_CHECK(cudaGetLastError(), err);
    return TF_OK;
}
