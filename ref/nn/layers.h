/**
 * @file ref/nn/layers.h
 * @brief Dense layers, activations and losses, each as a forward and a backward function.
 *
 * Conventions for every layer in ref/:
 *  - Arrays are row-major; a comment `[n][in]` gives an array's shape.
 *  - Forward functions overwrite their output, except the `_accumulate` ones which add to it.
 *  - Backward functions **add** into the gradients they produce (dx, dweight, dbias), so a
 *    value used in several places (a hidden state feeding three gates) collects all its
 *    gradients without the caller summing. Any gradient pointer may be NULL when not wanted.
 *  - Parameter gradients, which sum over every row (thousands of vertices x snapshots), are
 *    accumulated in double and added once; other sums are short and stay in float.
 *  - Weights are laid out as PyTorch stores them, so parameters load and save as the same
 *    numbers torch has: torch.nn.Linear's weight is [out][in].
 *
 * One thread, textbook loops, no BLAS: this is the reference the optimized twins are
 * checked against (verify/test_gradcheck.c checks every backward by finite differences).
 */
#ifndef TWOFOLD_REF_LAYERS_H
#define TWOFOLD_REF_LAYERS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Linear layer (torch.nn.Linear): y = x W^T + b.
 * @param x       [n][in] input rows
 * @param weight  [out][in]
 * @param bias    [out], or NULL for none
 * @param n       number of rows
 * @param in      input width
 * @param out     output width
 * @param y       [n][out] output (overwritten)
 */
void ref_linear_forward(const float *x, const float *weight, const float *bias, int64_t n, int64_t in, int64_t out,
                        float *y);

/** Like ref_linear_forward() without bias, adding into @p y: y [n][out] += x [n][in] W^T, weight [out][in]. */
void ref_linear_accumulate(const float *x, const float *weight, int64_t n, int64_t in, int64_t out, float *y);

/**
 * Backward of y = x W^T + b at x [n][in] and weight [out][in], given dy [n][out]:
 * dx [n][in] += dy W,  dweight [out][in] += dy^T x,  dbias [out] += sum over rows of dy.
 * Each of @p dx, @p dweight, @p dbias may be NULL.
 */
void ref_linear_backward(const float *x, const float *weight, const float *dy, int64_t n, int64_t in, int64_t out,
                         float *dx, float *dweight, float *dbias);

/**
 * ref_linear_backward() with the parameter gradients added into double sums, not rounded:
 * dweight [out][in] += dy^T x, dbias [out] += sum over rows of dy. The event models' gradients
 * stay in double until every process's rows are summed (ref/nn/parameters.h, parameter.sums).
 * Each of @p dx, @p dweight, @p dbias may be NULL.
 */
void ref_linear_backward_sums(const float *x, const float *weight, const float *dy, int64_t n, int64_t in, int64_t out,
                              float *dx, double *dweight, double *dbias);

/**
 * Matrix product with the weight stored [in][out] (a raw torch Parameter used as x @ W, as
 * GC-LSTM's W_i): y += x W. x [n][in], weight [in][out], y [n][out].
 */
void ref_matmul_accumulate(const float *x, const float *weight, int64_t n, int64_t in, int64_t out, float *y);

/**
 * Backward of y += x W at x [n][in] and weight [in][out], given dy [n][out]:
 * dx [n][in] += dy W^T, dweight [in][out] += x^T dy (either may be NULL).
 */
void ref_matmul_backward(const float *x, const float *weight, const float *dy, int64_t n, int64_t in, int64_t out,
                         float *dx, float *dweight);

/** y[i] += bias[i % width] for every row of an [n][width] array. */
void ref_add_bias(float *y, const float *bias, int64_t n, int64_t width);

/** dbias[j] += sum over rows of dy[i][j] (backward of ref_add_bias()). */
void ref_add_bias_backward(const float *dy, int64_t n, int64_t width, float *dbias);

/**
 * Copy @p rows rows of @p width floats: to[i * to_stride + j] = from[i * from_stride + j]. One
 * contiguous block is rows = 1 (strides unused); a block of columns (T-GCN's [C | H] gate input)
 * has strides wider than @p width. The regions must not overlap. A function, not a memcpy, so the
 * kernel table (ref/nn/kernels.h) can count the bytes the models and trainers move.
 */
void ref_copy_rows(float *to, int64_t to_stride, const float *from, int64_t from_stride, int64_t rows, int64_t width);

/** Sigmoid 1 / (1 + e^-x), elementwise over x, y [count] (y may alias x). */
void ref_sigmoid_forward(const float *x, int64_t count, float *y);

/** dx += dy * y * (1 - y), from the sigmoid's output y; y, dy, dx [count]. */
void ref_sigmoid_backward(const float *y, const float *dy, int64_t count, float *dx);

/** Hyperbolic tangent, elementwise over x, y [count] (y may alias x). */
void ref_tanh_forward(const float *x, int64_t count, float *y);

/** dx += dy * (1 - y^2), from the tanh's output y; y, dy, dx [count]. */
void ref_tanh_backward(const float *y, const float *dy, int64_t count, float *dx);

/** ReLU max(x, 0), elementwise over x, y [count] (y may alias x). */
void ref_relu_forward(const float *x, int64_t count, float *y);

/** dx += dy where the ReLU's output y > 0; y, dy, dx [count]. */
void ref_relu_backward(const float *y, const float *dy, int64_t count, float *dx);

/**
 * Mean squared error of prediction and target [n][width] over the rows whose mask [n] is
 * nonzero (all rows if mask is NULL):
 * L = (1 / (m * width)) * sum (prediction - target)^2 with m the number of counted rows.
 * Writes dprediction [n][width] = scale * dL/dprediction (zero on masked-out rows) when it is
 * not NULL.
 * @return L, accumulated in double; 0 when no row counts.
 */
double ref_mse_loss(const float *prediction, const float *target, const uint8_t *mask, int64_t n, int64_t width,
                    float scale, float *dprediction);

/**
 * ref_mse_loss() over some of a snapshot's rows with the denominator of all of them: the sum over
 * the counted rows (mask [n]) of (prediction - target)^2, prediction and target [n][width],
 * divided by @p total_rows * width, where @p total_rows is given from outside (the whole
 * snapshot's present vertices, when a rank holds only its own rows: chapter 06). ref_mse_loss()
 * is this with its own row count. Writes dprediction [n][width] like ref_mse_loss().
 * @return the partial loss, accumulated in double; 0 when total_rows is 0.
 */
double ref_mse_loss_over(const float *prediction, const float *target, const uint8_t *mask, int64_t n, int64_t width,
                         int64_t total_rows, float scale, float *dprediction);

/**
 * Softmax cross-entropy over the rows whose mask [n] is nonzero: L = mean over counted rows
 * of -log softmax(logits)[label]. logits [n][classes], labels [n] in 0..classes-1. Writes
 * dlogits [n][classes] = scale * dL/dlogits when not NULL. @return L in double; 0 when no row
 * counts.
 */
double ref_cross_entropy_loss(const float *logits, const int32_t *labels, const uint8_t *mask, int64_t n,
                              int64_t classes, float scale, float *dlogits);

/** LeakyReLU: y = x for x > 0, else slope * x, elementwise over x, y [count] (y may alias x). TGN uses slope 0.2. */
void ref_leaky_relu_forward(const float *x, int64_t count, float slope, float *y);

/**
 * dx += dy where the LeakyReLU's output y > 0, else dx += slope * dy (slope > 0, so y > 0 iff
 * x > 0); y, dy, dx [count].
 */
void ref_leaky_relu_backward(const float *y, const float *dy, int64_t count, float slope, float *dx);

/**
 * Layer normalization over each row (torch.nn.LayerNorm(width), Ba et al., 2016):
 * x^ = (x - mean) / sqrt(var + epsilon) with the biased variance, y = x^ * weight + bias.
 * Mean and variance are computed in double.
 * @param x            [n][width] input rows
 * @param weight       [width] scale (torch: `weight`, initialized to 1)
 * @param bias         [width] shift (torch: `bias`, initialized to 0)
 * @param n            number of rows
 * @param width        row width
 * @param epsilon      added to the variance (torch default 1e-5)
 * @param y            [n][width] output (may alias x)
 * @param normalized   [n][width] out: x^, kept for the backward
 * @param inverse_std  [n] out: 1 / sqrt(var + epsilon), kept for the backward
 */
void ref_layer_norm_forward(const float *x, const float *weight, const float *bias, int64_t n, int64_t width,
                            float epsilon, float *y, float *normalized, float *inverse_std);

/**
 * Backward of ref_layer_norm_forward() from its normalized [n][width], inverse_std [n] and
 * weight [width], given dy [n][width], into dx [n][width], dweight and dbias [width]:
 * dx += inverse_std * (g - mean(g) - x^ * mean(g * x^)) with g = dy * weight,
 * dweight += sum over rows of dy * x^, dbias += sum over rows of dy (double sums, not rounded:
 * used by the event models, see parameter.sums). Each of @p dx, @p dweight, @p dbias may be NULL.
 */
void ref_layer_norm_backward(const float *normalized, const float *inverse_std, const float *weight, const float *dy,
                             int64_t n, int64_t width, float *dx, double *dweight, double *dbias);

/**
 * Binary cross-entropy on logits [n], every logit with the same @p target (1 for true links, 0
 * for negative samples), summed: S = sum_i [max(x_i, 0) - x_i target + log(1 + e^-|x_i|)]
 * (torch.nn.BCEWithLogitsLoss's terms, written so exp() never overflows). The mean over a batch
 * of n is S / n; a rank holding part of a batch passes the whole batch's size as
 * @p denominator, so its gradients are already those of the batch mean. Writes
 * dlogits [n], dlogits_i = (sigmoid(x_i) - target) / denominator unless @p dlogits is NULL.
 * @return S in double; 0 when n is 0.
 */
double ref_bce_with_logits_sum(const float *logits, int64_t n, float target, int64_t denominator, float *dlogits);

#ifdef __cplusplus
}
#endif

#endif
