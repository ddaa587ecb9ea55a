/**
 * @file opt/fusion.h
 * Twins: ref_fusion_forward(), ref_fusion_backward() (ref/fusion.h), ref_fusion_load_chunk() (ref/fusion_chunks.h).
 * @brief The optimized twins of ref/fusion.h and ref/fusion_chunks.h: the time encoder over
 *        many sequences as one batched recurrence (zero-padded, or DGC's fused lanes with a
 *        reset mask), and chunk loading with spatial fusion. Implemented in opt/fusion.c.
 *
 * **Temporal fusion** (DGC, Section 5.1, Fig. 9 and Eqs. 4-5). Both batched layouts are a
 * #fusion_plan: a grid of lanes (batch rows) by steps, in which every sequence of the
 * #sequence_set occupies consecutive steps of one lane.
 *  - Padded (opt_fusion_plan_padded()): one sequence per lane, every lane computed for all
 *    T_max steps; the steps after a sequence ends are padding (zero input, its output unused).
 *  - Lanes (opt_fusion_plan_lanes()): sequences packed end to end into lanes of length T_max by
 *    first-fit decreasing (longest first, each into the first lane with room, a new lane when
 *    none has; ties by sequence index). Lanes are then sorted by how full they are, longest
 *    first, so the lanes still running at step t are a prefix 0 .. active[t]-1 and only those
 *    rows are computed: the computed steps are exactly the useful ones.
 *
 * One engine runs both plans. At step t, row l of the batch is the cell applied to x(t, l) and
 * the carried state, where the carried state passes through the reset mask first:
 *
 *     h_prev(t, l) = reset(t, l) ? 0 : h(t-1, l)        (and c_prev likewise for the LSTM)
 *
 * and h_prev is what **every** gate, the candidate and the final interpolation read. reset is 1
 * at t = 0 and at the first step of every sequence (only at t = 0 for padding). This is DGC's
 * mask M of Eq. 4 applied to the state itself rather than to one gate's product; a select, not
 * a multiply, so a NaN or Inf in the previous sequence cannot leak through 0 * Inf. With it,
 * each row computes exactly what the reference computes for its sequence, because the reference
 * starts every sequence from h = 0 (and c = 0). The paper writes the mask into the update gate
 * only; #FUSION_MASK_UPDATE_GATE_ONLY keeps that reading so a test can show it is wrong.
 *
 * Why the results equal ref_fusion_forward() / ref_fusion_backward(), and how closely: every
 * row is the same cell on the same inputs and the same carried state, and every sum is formed
 * with the same float terms added in the same order as the reference cell's loops (bias first,
 * then k = 0, 1, ...; the GRU backward's per-unit order). The loops run across output units and
 * across lanes instead of along k, which vectorizes and threads without reordering any one sum
 * (BLAS would reorder them: tried first, it drifted to 2e-5 in the parameter gradients over
 * 65,000 steps, past the 1e-5 tolerance). So outputs and input gradients are **bitwise** equal.
 * Parameter gradients are sums over all steps of the same float terms, in double, as in the
 * reference; only the order of that double sum differs (rows in plan order, threads' partial
 * sums): **fp**, measured 0 on every test set. The backward drops the gradient at every reset,
 * which is the gradient of the zero initial state that ref drops too; padding rows are skipped
 * in the sums (their terms are exact zeros). Only the h W_hh products run step by step; the
 * input sums of all steps are formed before the recurrence.
 *
 * **Spatial fusion** (DGC, Section 5.1, Fig. 8): chunks placed on one device that share halo
 * vertices are loaded as one union, each vertex once. opt_fusion_spatial_groups() merges the
 * pair of groups with the largest shared load R(a, b) (bytes both would load) while the merged
 * load stays within a memory cap, which is the paper's rule ("fuse the pair with the largest
 * redundant loading until close to the GPU memory limit"). The paper measures each chunk's
 * memory in a first epoch; here a load's size is known exactly from its vertices, so the cap
 * is checked before loading. Equal to ref_fusion_load_chunk(): **bitwise** (the same floats
 * are copied, only fewer times).
 *
 * Ownership: plans, tapes and groups own their arrays; free them with their _free functions
 * (safe on zeroed structs). Functions that can fail return a #tf_error_code.
 */
#ifndef TWOFOLD_OPT_FUSION_H
#define TWOFOLD_OPT_FUSION_H

#include <stdint.h>

#include "ref/fusion.h"
#include "ref/fusion_chunks.h"
#include "ref/fusion_plan.h"
#include "ref/fusion_sequences.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Plan the zero-padded baseline: @p set's sequence s in lane s, steps 0 .. T_max-1 all computed. */
int opt_fusion_plan_padded(const sequence_set *set, fusion_plan *plan, tf_error *err);

/** Plan fused lanes by first-fit decreasing into lanes of length T_max (see the file comment). */
int opt_fusion_plan_lanes(const sequence_set *set, fusion_plan *plan, tf_error *err);


/** What the forward keeps for the backward, in plan row order. Owns its arrays. */
typedef struct fusion_tape {
    int64_t rows;     /**< computed rows */
    float *x;         /**< [rows][in] inputs (zero on padding) */
    float *h_prev;    /**< [rows][H] the carried state after the mask */
    float *h;         /**< [rows][H] the new state */
    float *c_prev;    /**< [rows][H] LSTM: the carried cell state after the mask */
    float *c;         /**< [rows][H] LSTM: the new cell state */
    float *cache;     /**< [rows][4H] GRU: r, z, n, h W_hn^T + b_hn; LSTM: activated gates i, f, g, o */
} fusion_tape;

/** Release @p tape's arrays and zero it. */
void fusion_tape_free(fusion_tape *tape);

/**
 * Twin of ref_fusion_forward(): the whole set as one batched recurrence laid out by @p plan.
 * x [total_steps][in] and h_out [total_steps][hidden] are in sequence order, as for the
 * reference. Fills @p tape (freed by the
 * caller with fusion_tape_free(), also on failure).
 * @return 0, or TF_ERR_INPUT for a bad encoder, a plan of another set, a mask rule the kind
 *         does not support, or memory refused.
 */
int opt_fusion_forward(const time_encoder *encoder, const sequence_set *set, const fusion_plan *plan, const float *x,
                       float *h_out, fusion_tape *tape, tf_error *err);

/**
 * Twin of ref_fusion_backward(): from dh_out [total_steps][hidden], adds into dx
 * [total_steps][in] (may be NULL) and the parameter gradients, from the tape of
 * opt_fusion_forward() with the same plan.
 * @return 0, or TF_ERR_INPUT when the plan's mask rule is not FUSION_MASK_EVERY_GATE.
 */
int opt_fusion_backward(const time_encoder *encoder, const sequence_set *set, const fusion_plan *plan,
                        const fusion_tape *tape, const float *dh_out, float *dx,
                        const time_encoder_gradients *gradients, tf_error *err);

/** Chunks grouped by spatial fusion: group g holds chunks chunk_of[offsets[g] .. offsets[g+1]). */
typedef struct fusion_groups {
    int64_t count;               /**< number of groups */
    int64_t *offsets;            /**< [count + 1] */
    int64_t *chunks;             /**< [number of chunks] chunk ids, increasing within a group */
    int64_t *load_bytes;         /**< [count] bytes the group's union load brings in */
    int64_t unfused_bytes;       /**< sum over chunks of their own loads (ref_fusion_load_chunk()) */
    int64_t fused_bytes;         /**< sum over groups of load_bytes */
} fusion_groups;

/**
 * Group @p chunks by the paper's rule: start with one group per chunk; repeatedly merge the
 * two groups whose loads share the most bytes, provided the merged load is at most
 * @p memory_cap_bytes; stop when no pair shares anything or every sharing pair is over the
 * cap. Ties go to the lowest pair of group indices. A chunk over the cap alone stays alone.
 * @return 0, or TF_ERR_INPUT for a cap <= 0 or chunks that do not fit @p seq.
 */
int opt_fusion_spatial_groups(const snapshot_seq *seq, const chunk_set *chunks, int64_t memory_cap_bytes,
                              fusion_groups *out, tf_error *err);

/** Release @p groups's arrays and zero it. */
void fusion_groups_free(fusion_groups *groups);

/** Twin of ref_fusion_load_chunk() for a whole group: the union of its chunks' vertices, loaded once. */
int opt_fusion_load_group(const snapshot_seq *seq, const chunk_set *chunks, const fusion_groups *groups,
                          int64_t group, chunk_load *out, tf_error *err);

/**
 * Chunk @p chunk's view of its group's load: for each vertex of ref_fusion_chunk_vertices(),
 * its row in @p group_load. out_rows [1] gets an allocated [count] array (caller frees),
 * out_count [1] its length.
 * @return 0, or TF_ERR_INPUT when the group's load lacks one of the chunk's vertices.
 */
int opt_fusion_chunk_rows(const snapshot_seq *seq, const chunk_set *chunks, int64_t chunk,
                          const chunk_load *group_load, int64_t **out_rows, int64_t *out_count, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
