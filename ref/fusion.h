/**
 * @file ref/fusion.h
 * @brief The time encoder run over each sequence of a #sequence_set alone: the reference of
 *        DGC's temporal fusion (chapter 03).
 *
 * A dynamic graph's time encoder (a GRU or an LSTM, or a model's own form of one: T-GCN's GRU,
 * GCRN's LSTM with peepholes) runs over each vertex's own sequence of
 * embeddings (ref/fusion_sequences.h). The reference here does the obvious thing: each sequence
 * separately, step by step, from a zero state, with the cells of recurrent.h. The
 * optimized twins (opt/fusion.h: zero-padded batches and DGC's fused lanes; cuda/fusion.h)
 * must give the same outputs and gradients. The reference of spatial fusion, per-chunk
 * loading, is ref/fusion_chunks.h.
 *
 * Layout: every per-step array is in **sequence order** (#sequence_set's offsets say where
 * each sequence starts). x is [total][in], h [total][hidden], with total =
 * sequence_set::total_steps.
 *
 * Ownership: the encoder's weights are borrowed; the functions allocate only scratch, freed
 * before they return. Functions that can fail return a #tf_error_code and leave a message in
 * @p err.
 */
#ifndef TWOFOLD_REF_FUSION_H
#define TWOFOLD_REF_FUSION_H

#include <stdint.h>

#include "ref/core/error.h"
#include "ref/fusion_sequences.h"
#include "ref/nn/recurrent.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Gate blocks of a kind: 3 for the GRUs, 4 for the LSTMs. */
int64_t time_encoder_gates(time_encoder_kind kind);

/**
 * A time encoder's shape and weights (borrowed, not owned), in torch's layout. x rows are @p in wide;
 * T-GCN's cell (#TIME_ENCODER_TGCN) reads them as three blocks of in / 3, one per gate, and has one
 * bias per gate (in bias_ih; bias_hh is unused); only the LSTM with peepholes has the peepholes.
 */
typedef struct time_encoder {
    time_encoder_kind kind;   /**< the cell (ref/nn/recurrent.h) */
    int64_t in;               /**< input width */
    int64_t hidden;           /**< state width H */
    const float *weight_ih;   /**< [G H][in], for T-GCN [3 H][in / 3], G = time_encoder_gates(kind) */
    const float *weight_hh;   /**< [G H][H] */
    const float *bias_ih;     /**< [G H] */
    const float *bias_hh;     /**< [G H]; T-GCN: none (NULL) */
    const float *peephole[3]; /**< #TIME_ENCODER_PEEPHOLE: w_ci, w_cf, w_co, each [H]; others none */
} time_encoder;

/** Where a backward adds the parameter gradients (same shapes as #time_encoder; any may be NULL). */
typedef struct time_encoder_gradients {
    float *weight_ih;   /**< [G H][in] (T-GCN: [3 H][in / 3]) */
    float *weight_hh;   /**< [G H][H] */
    float *bias_ih;     /**< [G H] */
    float *bias_hh;     /**< [G H] (T-GCN: none) */
    float *peephole[3]; /**< LSTM with peepholes: [H] each */
} time_encoder_gradients;

/** How many parameter tensors an encoder has at most: the four of torch's cells and three peepholes. */
#define TIME_ENCODER_TENSORS 7

/** The lengths of @p encoder's tensors, in the order of #time_encoder (weight_ih, weight_hh, bias_ih,
 *  bias_hh, the peepholes) into @p sizes [TIME_ENCODER_TENSORS]: 0 for a tensor its kind has not. */
void time_encoder_sizes(const time_encoder *encoder, int64_t *sizes);

/** Check an encoder's shape (in, hidden >= 1, T-GCN's in a multiple of 3, its kind's tensors given).
 *  @return 0 or TF_ERR_INPUT. */
int time_encoder_check(const time_encoder *encoder, tf_error *err);

/**
 * The time encoder over each sequence of @p set separately, in order, from h = 0 (and c = 0):
 * h_out at step p of a sequence is the cell applied to x at p and h_out at p - 1.
 * @param encoder  the cell and its weights
 * @param set      the sequences
 * @param x        [total_steps][in] inputs in sequence order
 * @param h_out    [total_steps][hidden] the state after every step
 * @param err      the failure, if any
 * @return 0, or TF_ERR_INPUT for a bad encoder, or when scratch memory is refused.
 */
int ref_fusion_forward(const time_encoder *encoder, const sequence_set *set, const float *x, float *h_out,
                       tf_error *err);

/**
 * Backward of ref_fusion_forward() at the inputs x [total_steps][in], given the loss gradient
 * @p dh_out [total_steps][hidden] with respect to every step's output. Adds into @p dx
 * [total_steps][in] (may be NULL) and the parameter gradients. Each sequence's forward is
 * recomputed, so no tape is kept between the calls. A parameter's gradient is summed over all
 * steps in double (as ref_linear_backward() sums over rows), so the reference does not drift
 * over thousands of steps.
 */
int ref_fusion_backward(const time_encoder *encoder, const sequence_set *set, const float *x, const float *dh_out,
                        float *dx, const time_encoder_gradients *gradients, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
