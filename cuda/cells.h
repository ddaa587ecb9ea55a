/**
 * @file cuda/cells.h
 * @brief Recurrent cells on the GPU: the GRU cell and the LSTM pointwise part, forward and
 *        backward. CUDA twins of ref_gru_cell_*() and ref_lstm_pointwise_*() (ref/recurrent.h).
 *
 * Same shapes, cache layouts and contracts as the reference (all pointers on the device). The
 * GRU's six products go to cuBLAS (dense.h), the gates are one fused kernel over all rows;
 * the LSTM's pointwise part is one kernel. Equal to the reference within the GPU fp tolerance:
 * the device's expf/tanhf and cuBLAS's sums round differently from the CPU's.
 */
#ifndef TWOFOLD_CUDA_CELLS_H
#define TWOFOLD_CUDA_CELLS_H

#include <stdint.h>

#include "cuda/context.h"
#include "ref/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Twin of ref_gru_cell_forward(); @p d_cache is [n][4 hidden] as in the reference. */
int cuda_gru_cell_forward(cuda_context *context, const float *d_x, const float *d_h, const float *d_weight_ih,
                          const float *d_weight_hh, const float *d_bias_ih, const float *d_bias_hh, int64_t n,
                          int64_t in, int64_t hidden, float *d_h_out, float *d_cache, tf_error *err);

/** Twin of ref_gru_cell_backward(): adds into every gradient given (any may be NULL). */
int cuda_gru_cell_backward(cuda_context *context, const float *d_x, const float *d_h, const float *d_weight_ih,
                           const float *d_weight_hh, const float *d_cache, const float *d_dh_out, int64_t n,
                           int64_t in, int64_t hidden, float *d_dx, float *d_dh, float *d_dweight_ih,
                           float *d_dweight_hh, float *d_dbias_ih, float *d_dbias_hh, tf_error *err);

/** Twin of ref_lstm_pointwise_forward(). */
int cuda_lstm_pointwise_forward(cuda_context *context, const float *d_preactivation, const float *d_c, int64_t n,
                                int64_t hidden, float *d_c_out, float *d_h_out, float *d_gates, tf_error *err);

/** Twin of ref_lstm_pointwise_backward() (@p d_dc_out and @p d_dc may be NULL). */
int cuda_lstm_pointwise_backward(cuda_context *context, const float *d_gates, const float *d_c, const float *d_c_out,
                                 const float *d_dh_out, const float *d_dc_out, int64_t n, int64_t hidden,
                                 float *d_dpreactivation, float *d_dc, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
