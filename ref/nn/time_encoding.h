/**
 * @file ref/nn/time_encoding.h
 * @brief The cosine time encoding of TGAT/TGN: a time difference becomes a vector of
 *        cosines with trainable frequencies and phases.
 *
 *     phi(delta) = cos(delta * w + b)          phi: R -> R^d
 *
 * ([TGAT] Eq. 6 with trainable w and b, as [TGN] and [TGL] use it; citations:
 * chapters/references.md.) TGL's `TimeEncode` is a torch.nn.Linear(1, d) followed by cos, so
 * its parameters are `w.weight` [d][1] and `w.bias` [d]; they are initialized to
 * w_i = 10^(-9 i / (d - 1)), i = 0..d-1 (frequencies spread over nine decades, so time
 * differences from seconds to decades all move some of the cosines) and b = 0. Both stay trainable.
 *
 * The argument delta * w + b is computed in float32, as torch computes it. For deltas of 10^6
 * (Wikipedia spans 2.7 * 10^6 seconds) the first cosines are then dominated by rounding; the
 * slower ones carry the information. TGL behaves the same way.
 *
 * Rows may be written into (and read from) a wider array: @p stride is the distance in floats
 * between consecutive rows of the encoding, so an encoding can go straight into the time
 * columns of a concatenated input [message || phi(delta)].
 */
#ifndef TWOFOLD_REF_TIME_ENCODING_H
#define TWOFOLD_REF_TIME_ENCODING_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * TGL's initial values: weight[i] = 10^(-9 i / (width - 1)) (1 when width is 1), bias[i] = 0.
 * @param weight  [width] out
 * @param bias    [width] out, or NULL when only the weights are wanted
 * @param width   d, the encoding's width
 */
void ref_time_encoding_init(float *weight, float *bias, int64_t width);

/**
 * out[k][i] = cos(delta[k] * weight[i] + bias[i]) for k < n, i < width.
 * @param delta   [n] time differences
 * @param n       number of differences
 * @param weight  [width] frequencies w
 * @param bias    [width] phases b
 * @param width   d
 * @param stride  floats between the starts of consecutive output rows (>= width)
 * @param out     [n][stride] output; columns width..stride-1 are left untouched
 */
void ref_time_encoding_forward(const float *delta, int64_t n, const float *weight, const float *bias, int64_t width,
                               int64_t stride, float *out);

/**
 * Backward with respect to the parameters (the deltas are data): with a_ki = delta_k w_i + b_i,
 * dweight[i] += sum_k dout[k][i] * (-sin a_ki) * delta_k and dbias[i] += sum_k dout[k][i] * (-sin a_ki),
 * summed over rows in double.
 * @param delta    [n] the forward's time differences
 * @param n        number of differences
 * @param weight   [width] frequencies w
 * @param bias     [width] phases b
 * @param width    d
 * @param stride   floats between the starts of consecutive rows of @p dout
 * @param dout     [n][stride] gradient of the loss with respect to the encoding
 * @param dweight  [width] gradient of w, added into, in double (parameter.sums, ref/nn/parameters.h)
 * @param dbias    [width] gradient of b, added into, in double
 */
void ref_time_encoding_backward(const float *delta, int64_t n, const float *weight, const float *bias, int64_t width,
                                int64_t stride, const float *dout, double *dweight, double *dbias);

#ifdef __cplusplus
}
#endif

#endif
