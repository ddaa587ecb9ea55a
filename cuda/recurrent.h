/**
 * @file cuda/recurrent.h
 * Twins: ref_gru_cell_forward(), ref_lstm_pointwise_forward(), their backwards (ref/nn/recurrent.h).
 * @brief Recurrent cells on the GPU: the GRU cell and the LSTM pointwise part, forward and
 *        backward. CUDA twins of ref_gru_cell_*() and ref_lstm_pointwise_*() (ref/nn/recurrent.h).
 *
 * Same shapes, cache layouts and contracts as the reference (all pointers on the device). The
 * GRU's six products go to cuBLAS (layers.h), the gates are one fused kernel over all rows;
 * the LSTM's pointwise part is one kernel. Equal to the reference within the GPU fp tolerance:
 * the device's expf/tanhf and cuBLAS's sums round differently from the CPU's.
 */
#ifndef TWOFOLD_CUDA_RECURRENT_H
#define TWOFOLD_CUDA_RECURRENT_H

#include <stdint.h>

#include "cuda/context.h"
#include "ref/core/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Twin of ref_gru_cell_forward(); the cache has the reference's layout.
 * Shapes: d_x [n][in], d_h [n][hidden], d_weight_ih [3 hidden][in], d_weight_hh [3 hidden][hidden],
 * d_bias_ih, d_bias_hh [3 hidden]; d_h_out [n][hidden], d_cache [n][4 hidden].
 */
int cuda_gru_cell_forward(cuda_context *context, const float *d_x, const float *d_h, const float *d_weight_ih,
                          const float *d_weight_hh, const float *d_bias_ih, const float *d_bias_hh, int64_t n,
                          int64_t in, int64_t hidden, float *d_h_out, float *d_cache, tf_error *err);

/**
 * Twin of ref_gru_cell_backward(): adds into every gradient given (any may be NULL).
 * Shapes: d_x [n][in], d_h [n][hidden], d_weight_ih [3 hidden][in], d_weight_hh [3 hidden][hidden],
 * d_cache [n][4 hidden], d_dh_out [n][hidden]; d_dx [n][in], d_dh [n][hidden],
 * d_dweight_ih [3 hidden][in], d_dweight_hh [3 hidden][hidden], d_dbias_ih, d_dbias_hh [3 hidden].
 */
int cuda_gru_cell_backward(cuda_context *context, const float *d_x, const float *d_h, const float *d_weight_ih,
                           const float *d_weight_hh, const float *d_cache, const float *d_dh_out, int64_t n,
                           int64_t in, int64_t hidden, float *d_dx, float *d_dh, float *d_dweight_ih,
                           float *d_dweight_hh, float *d_dbias_ih, float *d_dbias_hh, tf_error *err);

/**
 * Twin of ref_lstm_pointwise_forward().
 * Shapes: d_preactivation [n][4 hidden], d_c [n][hidden]; d_c_out, d_h_out [n][hidden],
 * d_gates [n][4 hidden].
 */
int cuda_lstm_pointwise_forward(cuda_context *context, const float *d_preactivation, const float *d_c, int64_t n,
                                int64_t hidden, float *d_c_out, float *d_h_out, float *d_gates, tf_error *err);

/**
 * Twin of ref_lstm_pointwise_backward() (@p d_dc_out and @p d_dc may be NULL).
 * Shapes: d_gates [n][4 hidden], d_c, d_c_out, d_dh_out, d_dc_out [n][hidden];
 * d_dpreactivation [n][4 hidden], d_dc [n][hidden].
 */
int cuda_lstm_pointwise_backward(cuda_context *context, const float *d_gates, const float *d_c, const float *d_c_out,
                                 const float *d_dh_out, const float *d_dc_out, int64_t n, int64_t hidden,
                                 float *d_dpreactivation, float *d_dc, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
