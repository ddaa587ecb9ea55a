/**
 * @file cuda/fusion.h
 * Twins: ref_fusion_forward() and ref_fusion_backward() (ref/fusion.h).
 * @brief DGC's temporal fusion on the GPU: the masked GRU and LSTM step over all lanes of a
 *        #fusion_plan, forward and backward. CUDA twins of opt_fusion_forward() and
 *        opt_fusion_backward() (opt/fusion.h), and so of ref_fusion_forward() and
 *        ref_fusion_backward() (ref/fusion.h). Implemented in cuda/fusion.cu.
 *
 * It runs torch's GRU and LSTM; the models' own cells (T-GCN's GRU, the LSTM with peepholes) run
 * in the CPU lanes of opt/fusion.h only, and the GPU refuses them with an input error.
 *
 * Same plan, same row layout, same mask as the CPU twin: the carried state of row (t, l) is
 * reset(t, l) ? 0 : h(t-1, l), read by every gate and by the interpolation (c likewise for the
 * LSTM). One step is: a cuBLAS product h_prev W_hh^T + b_hh over the step's active lanes, then
 * one fused kernel that computes the gates and the new state of every (lane, unit) **and**
 * writes the masked carried state of the next step, so no separate mask pass and no padding
 * row is ever computed (a reset row of the next step is left at the zero it was given: a
 * select, never a multiply by the mask). The input products of all steps are one cuBLAS call
 * before the loop; the parameter gradients one call each after the backward loop.
 *
 * Equal to the reference within the GPU fp tolerance (relative 1e-4): the device's expf/tanhf
 * and cuBLAS's summation order round differently from the CPU's.
 *
 * All float pointers named d_* are on the device; the plan stays on the host (its per-step
 * lane counts drive the launches) with its per-row arrays copied to the device by
 * cuda_fusion_plan_upload(). Device buffers belong to the context (cuda_alloc()).
 */
#ifndef TWOFOLD_CUDA_FUSION_H
#define TWOFOLD_CUDA_FUSION_H

#include <stdint.h>

#include "cuda/context.h"
#include "ref/core/error.h"
#include "ref/fusion.h"
#include "ref/fusion_plan.h"
#include "ref/fusion_sequences.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A #fusion_plan with its per-row arrays on the device. */
typedef struct cuda_fusion_plan {
    const fusion_plan *host;   /**< the plan itself (borrowed; must outlive this) */
    uint8_t *d_reset;          /**< [computed_rows] the reset mask */
    int64_t *d_row_of_step;    /**< [useful_rows] row of each sequence step */
} cuda_fusion_plan;

/** Copy @p plan's per-row arrays to the device. The plan must use FUSION_MASK_EVERY_GATE. */
int cuda_fusion_plan_upload(cuda_context *context, const fusion_plan *plan, cuda_fusion_plan *out, tf_error *err);

/** Free the device arrays of @p plan and zero it. */
void cuda_fusion_plan_free(cuda_context *context, cuda_fusion_plan *plan);

/** What the forward keeps for the backward (device buffers, plan row order). */
typedef struct cuda_fusion_tape {
    int64_t rows;     /**< computed rows */
    float *d_x;       /**< [rows][in] */
    float *d_h_prev;  /**< [rows][H] carried state after the mask */
    float *d_h;       /**< [rows][H] new state */
    float *d_c_prev;  /**< [rows][H] LSTM carried cell state after the mask */
    float *d_c;       /**< [rows][H] LSTM new cell state */
    float *d_cache;   /**< [rows][4H] GRU r, z, n, h W_hn^T + b_hn; LSTM activated gates */
} cuda_fusion_tape;

/** Free the tape's device buffers and zero it. */
void cuda_fusion_tape_free(cuda_context *context, cuda_fusion_tape *tape);

/**
 * Twin of opt_fusion_forward(). @p encoder holds **device** weight pointers; d_x
 * [total_steps][in] and d_h_out [total_steps][hidden] are in sequence order.
 */
int cuda_fusion_forward(cuda_context *context, const time_encoder *encoder, const sequence_set *set,
                        const cuda_fusion_plan *plan, const float *d_x, float *d_h_out, cuda_fusion_tape *tape,
                        tf_error *err);

/**
 * Twin of opt_fusion_backward(): from @p d_dh_out [total_steps][hidden], adds into @p d_dx
 * [total_steps][in] (may be NULL) and the **device** parameter gradients of @p gradients (any
 * may be NULL).
 */
int cuda_fusion_backward(cuda_context *context, const time_encoder *encoder, const sequence_set *set,
                         const cuda_fusion_plan *plan, const cuda_fusion_tape *tape, const float *d_dh_out,
                         float *d_dx, const time_encoder_gradients *gradients, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
