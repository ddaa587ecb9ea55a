/**
 * @file ref/schedule_hybrid.h
 * @brief DynaHB's hybrid batches: N_V target vertices x N_S consecutive snapshots, the targets
 *        drawn from balanced groups of load-sorted vertices ([DynaHB] §4.2, Definition 3,
 *        Algorithm 1).
 *
 * A snapshot batch trains every vertex of a window; a hybrid batch trains N_V of them over N_S
 * snapshots. For T-GCN and WD-GCN that is exact: their graph convolution reads only X_t
 * (ref/models/model_tgcn.c, ref/models/model_wdgcn.c: A^ X_t, served to them, before any parameter),
 * so a target's prediction at t needs its own past and its in-neighbours' features at t, one hop
 * whatever N_S. (GConvGRU and GC-LSTM convolve the state too: their dependency grows K hops per
 * snapshot; the two-layer models read two hops: this file serves the models with #MODEL_ONE_HOP only.)
 *
 * **Equality** (verify/test_schedule_hybrid.c): a hybrid batch's loss and gradient are those of
 * the full window over its snapshots with the loss taken over the present targets only: each
 * target's aggregation is the full snapshot's row of A^ X_t, the same float sum in the same order
 * (the self term first, then the in-edges in the full snapshot's CSR order, with the full
 * snapshot's coefficients: recomputing them from the batch's degrees would change them), and the
 * other vertices' rows only ever add exact zeros to the parameter gradients. fp, with 0 differing
 * values expected on the reference kernels.
 *
 * **Load** (Algorithm 1's meaning: walk counts, not distinct neighbours): a_1^t(v) = the number
 * of in-edges of v in snapshot t, a_l^t(v) = sum over in-edges (u -> v) of a_{l-1}^t(u),
 * raw_l(v) = sum over the training snapshots of a_l^t(v), load(v) = sum_{l=1..L} (L - l + 1)
 * raw_l(v), exact in int64. T-GCN and WD-GCN need L = 1.
 *
 * **Sampling**: vertices sorted by (load descending, id ascending) are cut into `groups`
 * contiguous groups of floor(N / groups) (the last takes the remainder); a batch takes
 * floor(N_V / groups) distinct vertices uniformly from every group, then sorts them ascending.
 * Its snapshots start at s, uniform in 0 .. T_train - N_S, so a batch stays inside the training
 * split (Definition 3 prints N_S + 1 snapshots, and the text's and Algorithm 3's start ranges
 * disagree: chapters/07-schedule.md). Every draw of batch q comes from
 * rng_seed_keyed(seed, stream, q): the same batches on any rank or thread.
 *
 * Ownership: a source owns its operators and order and borrows the sequence; a batch owns all
 * its arrays and its view.
 */
#ifndef TWOFOLD_REF_SCHEDULE_HYBRID_H
#define TWOFOLD_REF_SCHEDULE_HYBRID_H

#include <stdint.h>

#include "ref/core/error.h"
#include "ref/models/model.h"
#include "ref/nn/propagate.h"
#include "ref/data/snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The default number of balanced groups (DynaHB's code). */
#define HYBRID_BALANCED_GROUPS 10

/** The rng stream of fresh hybrid batches (keys of rng_seed_keyed()). */
#define HYBRID_STREAM 0x48594252ull

/**
 * Walk-count load of every vertex over snapshots first .. first+count-1, @p hops hops (>= 1).
 * (@p load: out [num_nodes].)
 */
int hybrid_vertex_load(const snapshot_seq *seq, int64_t first, int64_t count, int hops, int64_t *load, tf_error *err);

/** What every batch of a run is cut from: built once, read-only afterwards (threads share it). */
typedef struct hybrid_source {
    const snapshot_seq *seq;       /**< borrowed */
    int64_t train_snapshots;       /**< batches lie in 0 .. train_snapshots-1 */
    propagation *operators;        /**< [train_snapshots] each full snapshot's GCN operator */
    int32_t *order;                /**< [num_nodes] vertices by (load descending, id ascending) */
    int groups;                    /**< balanced groups */
    int64_t *group_offsets;        /**< [groups + 1] group g is order[group_offsets[g] .. group_offsets[g+1]) */
} hybrid_source;

/** Build the operators, the loads (one hop) and the groups; an input error when N < groups. */
int hybrid_source_create(hybrid_source *h, const snapshot_seq *seq, int64_t train_snapshots, int balanced_groups,
                         tf_error *err);

/** Release what the source owns. */
void hybrid_source_free(hybrid_source *h);

/** A batch's size: N_S snapshots, N_V targets asked for. */
typedef struct hybrid_sizes {
    int64_t snapshots;  /**< N_S */
    int64_t targets;    /**< N_V (the batch holds groups x floor(N_V / groups)) */
} hybrid_sizes;

/** One snapshot of a batch: the targets' in-edges as a CSR block over frontier positions. */
typedef struct hybrid_block {
    int64_t *row_ptr;          /**< [targets + 1] */
    int32_t *col;              /**< [edges] frontier position of each source, full CSR order */
    float *edge_coefficient;   /**< [edges] copied from the full snapshot's operator */
    float *self_coefficient;   /**< [targets] copied likewise */
} hybrid_block;

/** A hybrid batch (Definition 3) and what training it needs. */
typedef struct hybrid_batch {
    int64_t first;               /**< the first snapshot */
    int64_t count;               /**< snapshots first .. first+count-1 (N_S) */
    int64_t num_targets;         /**< N_V' */
    int64_t num_frontier;        /**< targets and their in-neighbours over the batch's snapshots */
    int32_t *frontier;           /**< [num_frontier] vertex ids: the targets ascending, then the rest ascending */
    hybrid_block *blocks;        /**< [count] */
    float *features;             /**< [count][num_frontier][F] the frontier's features */
    snapshot_seq view;           /**< num_targets vertices x count snapshots: targets, presence, the targets'
                                      features (graphs empty: T-GCN reads A^ X_t from the batch's blocks) */
    int64_t work;                /**< rows + edges over the batch's snapshots: its cost in work units */
} hybrid_batch;

/**
 * Build batch @p index of stream @p stream: draws from rng_seed_keyed(seed, stream, index).
 * (@p scratch: [num_nodes] all -1 on entry and on return (the frontier's position map).)
 */
int hybrid_batch_build(hybrid_batch *b, const hybrid_source *h, hybrid_sizes sizes, uint64_t seed, uint64_t stream,
                       uint64_t index, int32_t *scratch, tf_error *err);

/** Release a batch (safe on a zeroed one). */
void hybrid_batch_free(hybrid_batch *b);

/** How many values of two batches differ (every array, bit for bit; shapes first). */
int64_t hybrid_batch_differing(const hybrid_batch *a, const hybrid_batch *b);

/**
 * Forward and backward of @p m (T-GCN or WD-GCN) on batch @p b: the loss (the mean over the snapshots of
 * the MSE over present targets) scaled by @p scale, gradients added to the model's. @p m's
 * aggregation source is the batch during the call and restored after. An input error for any
 * other model.
 */
int hybrid_batch_gradient(model *m, const hybrid_batch *b, float scale, double *loss, tf_error *err);

/**
 * The oracle of hybrid_batch_gradient(): the full snapshot batch of @p seq over the batch's
 * snapshots (every vertex computed) with the loss over the batch's present targets only, combined
 * over the snapshots as model_window_loss() combines them, scaled by @p scale; gradients added to
 * @p m's. Any model kind (it never reads the batch's blocks).
 */
int hybrid_window_gradient(model *m, const snapshot_seq *seq, const hybrid_batch *b, float scale, double *loss,
                           tf_error *err);

/**
 * DynaHB's nine batch sizes (Definition 5, its code): snapshots {10, 20, 30} % of T_train (at
 * least 1), targets {1, 5, 10} % of N (within groups .. N); action a is (snapshots[a / 3],
 * targets[a % 3]); action 4 (20 %, 5 %) is the paper's default.
 */
void hybrid_action_sizes(int action, int64_t train_snapshots, int64_t vertices, int balanced_groups,
                         hybrid_sizes *out);

/** The number of batch-size actions. */
#define HYBRID_ACTIONS 9

#ifdef __cplusplus
}
#endif

#endif
