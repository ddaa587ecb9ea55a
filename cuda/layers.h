/**
 * @file cuda/layers.h
 * Twins: the dense layers of ref/nn/layers.h, ref_linear_forward() to ref_relu_backward().
 * @brief Dense layers on the GPU: cuBLAS products, bias, activations, and a plain copy kernel
 *        for measuring memory bandwidth. The CUDA twins of ref/nn/layers.h.
 *
 * All pointers are device pointers with the shapes and row-major layouts of the ref_
 * functions of the same name; contracts are the same (backward functions add into their
 * gradients, any gradient may be NULL). cuBLAS is column-major: a row-major [r][c] array is its
 * column-major transpose, so each product below is the ref product transposed (the comments
 * in layers.cu give the mapping). The context's cuBLAS handle runs in pedantic float32 mode (no
 * TF32), and the results agree with the reference within the GPU fp tolerance (1e-4), not
 * bitwise: cuBLAS orders and fuses its sums in its own way.
 */
#ifndef TWOFOLD_CUDA_LAYERS_H
#define TWOFOLD_CUDA_LAYERS_H

#include <stdint.h>

#include "cuda/context.h"
#include "ref/core/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Twin of ref_linear_forward(): y = x W^T + b (b may be NULL).
 * Shapes: d_x [n][in], d_weight [out][in], d_bias [out] (or NULL), d_y [n][out].
 */
int cuda_linear_forward(cuda_context *context, const float *d_x, const float *d_weight, const float *d_bias, int64_t n,
                        int64_t in, int64_t out, float *d_y, tf_error *err);

/**
 * Twin of ref_linear_accumulate(): y += x W^T.
 * Shapes: d_x [n][in], d_weight [out][in], d_y [n][out].
 */
int cuda_linear_accumulate(cuda_context *context, const float *d_x, const float *d_weight, int64_t n, int64_t in,
                           int64_t out, float *d_y, tf_error *err);

/**
 * Twin of ref_linear_backward(): dx += dy W, dweight += dy^T x, dbias += column sums of dy.
 * Shapes: d_x [n][in], d_weight [out][in], d_dy [n][out]; d_dx [n][in], d_dweight [out][in],
 * d_dbias [out] (any may be NULL).
 */
int cuda_linear_backward(cuda_context *context, const float *d_x, const float *d_weight, const float *d_dy, int64_t n,
                         int64_t in, int64_t out, float *d_dx, float *d_dweight, float *d_dbias, tf_error *err);

/**
 * Twin of ref_matmul_accumulate(): y += x W with W [in][out].
 * Shapes: d_x [n][in], d_weight [in][out], d_y [n][out].
 */
int cuda_matmul_accumulate(cuda_context *context, const float *d_x, const float *d_weight, int64_t n, int64_t in,
                           int64_t out, float *d_y, tf_error *err);

/**
 * Twin of ref_matmul_backward(): dx += dy W^T, dweight += x^T dy.
 * Shapes: d_x [n][in], d_weight [in][out], d_dy [n][out]; d_dx [n][in], d_dweight [in][out] (either
 * may be NULL).
 */
int cuda_matmul_backward(cuda_context *context, const float *d_x, const float *d_weight, const float *d_dy, int64_t n,
                         int64_t in, int64_t out, float *d_dx, float *d_dweight, tf_error *err);

/** Twin of ref_add_bias(): y[i][j] += bias[j]; d_y [n][width], d_bias [width]. */
int cuda_add_bias(cuda_context *context, float *d_y, const float *d_bias, int64_t n, int64_t width, tf_error *err);

/**
 * Twin of ref_add_bias_backward(): dbias[j] += sum over rows of dy[i][j] (accumulated in
 * double); d_dy [n][width], d_dbias [width].
 */
int cuda_add_bias_backward(cuda_context *context, const float *d_dy, int64_t n, int64_t width, float *d_dbias,
                           tf_error *err);

/** Which elementwise nonlinearity. */
typedef enum cuda_activation {
    CUDA_SIGMOID,   /**< 1 / (1 + e^-x) */
    CUDA_TANH,      /**< tanh x */
    CUDA_RELU,      /**< max(x, 0) */
} cuda_activation;

/** Twins of ref_sigmoid_forward(), ref_tanh_forward(), ref_relu_forward(): d_x, d_y [count] (y may alias x). */
int cuda_activation_forward(cuda_context *context, cuda_activation kind, const float *d_x, int64_t count, float *d_y,
                            tf_error *err);

/** Twins of the ref_*_backward() activations: dx += dy * f'(from the output y); d_y, d_dy, d_dx [count]. */
int cuda_activation_backward(cuda_context *context, cuda_activation kind, const float *d_y, const float *d_dy,
                             int64_t count, float *d_dx, tf_error *err);

/**
 * Copy d_source [count] to d_destination [count] device to device with a plain kernel (one read and one write per
 * element, 8 bytes): the STREAM-like "copy" benchmarks divide by to report the fraction of
 * measured memory bandwidth a kernel reaches.
 */
int cuda_copy(cuda_context *context, const float *d_source, int64_t count, float *d_destination, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
