/**
 * @file opt/incremental_inputs.h
 * Twins: ref_propagate_forward() (ref/nn/propagate.h), chebyshev_basis_forward() (ref/nn/chebconv.h),
 *        DCRNN's diffusions of X_t (ref/models/model_dcrnn.c).
 * @brief The input-side aggregations of the snapshot models (T-GCN, GConvGRU, DCRNN, ...) served
 *        by ReInc's machinery during training: the global cache in front of the incremental engine
 *        (opt/incremental.h).
 *
 * What is served for snapshot t depends on t only, never on a parameter, so any source of the
 * same numbers will do (ref/models/model.h, #input_aggregations):
 *  - T-GCN: A^ X_t, its layer-1 aggregation (GCN's symmetric normalization with self loops),
 *    the engine's symmetric aggregator;
 *  - GConvGRU: the terms T_1 .. T_{K-1} of the Chebyshev basis of X_t that its three x-gates
 *    share (T_0 = X_t is the snapshot's own features, copied by the model, not cached).
 *    T_1 = L^ X_t is the engine's chebyshev aggregator: L^ = -D^-1/2 A D^-1/2 when ChebConv's
 *    lambda_max is 2, which it is whenever no weight is negative; otherwise lambda_max is the
 *    whole snapshot's and the answer is rescaled, T_1 = (2 / lambda) y + (2 / lambda - 1) X_t for
 *    the engine's y. T_k for k >= 2 is the recurrence 2 L^ T_{k-1} - T_{k-2} with the
 *    snapshot's own operator: a delta of T_1 touches every neighbour of a changed row, so
 *    carrying T_2 forward by deltas would mean a delta as large as two hops of churn; it is
 *    recomputed once per miss instead and reused like T_1 (chapters/02-incremental.md).
 *  - DCRNN: T_1 .. T_{K-1} of X_t on its forward and its backward random walk, from two engines
 *    over the walks' messages and the K-hop closure of each change (opt/incremental_walks.h).
 *  - GC-LSTM has nothing to serve: its input term is X_t W (PyTorch Geometric Temporal's
 *    GCLSTM convolves H only), which holds a parameter; incremental_inputs_create() refuses it,
 *    and EvolveGCN-O, whose convolution weight evolves inside the window.
 *
 * A window asks for its snapshots' answers. A cache hit is a copy of an earlier answer; a miss
 * brings the engine to t (one delta from t-1 in the common case, since windows move forward)
 * and offers the result to the cache. Values are the engine's, which depend on t only, so the
 * whole training run is bitwise the same for every cache policy and capacity and fp-equal to
 * the full-recompute run (verify/test_incremental_train.c).
 *
 * F, the future access count ReInc's score needs, is exact here: every epoch visits each
 * training snapshot in as many windows as contain it, and each test snapshot once per
 * evaluation, so F = those visits minus the ones made so far this epoch. (ReInc's closed
 * forms in [ReInc] §3.3.3 describe its encoder-decoder; this trainer has no decoder. See
 * chapters/references.md and chapters/02-incremental.md, "What ReInc leaves unsaid".)
 * Imminence I = L - S for every entry (ReInc's value for the encoder's global cache).
 *
 * Ownership: owns the deltas, the engine and the cache; borrows the sequence and the trainer's
 * model (whose kernels and operators compute GConvGRU's T_k, k >= 2), which must outlive it.
 */
#ifndef TWOFOLD_OPT_INCREMENTAL_INPUTS_H
#define TWOFOLD_OPT_INCREMENTAL_INPUTS_H

#include <stdint.h>

#include "opt/incremental.h"
#include "opt/incremental_cache.h"
#include "opt/incremental_walks.h"
#include "opt/train.h"
#include "ref/models/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How to serve the inputs. */
typedef struct incremental_inputs_options {
    cache_policy policy;          /**< eviction policy */
    double capacity;              /**< cache size as a fraction of all snapshots' aggregations (0 = no cache) */
    incremental_options engine;   /**< threshold and refresh */
} incremental_inputs_options;

/** Defaults: ReInc's policy, capacity 1 (everything fits), the engine's defaults. */
void incremental_inputs_options_default(incremental_inputs_options *options);

/** The server of the input-side aggregations. */
typedef struct incremental_inputs {
    const snapshot_seq *seq;          /**< the data (borrowed) */
    const model *model;               /**< the trainer's model (borrowed): its kind, K, kernels, operators */
    aggregator kind;                  /**< the engine's aggregator: symmetric (T-GCN) or chebyshev (GConvGRU) */
    int64_t terms;                    /**< [N][F] blocks per answer: 1 (T-GCN), K - 1 (GConvGRU), 2 (K - 1) (DCRNN) */
    double *lambda_max;               /**< [num_snapshots] ChebConv's lambda_max of each snapshot (GConvGRU) */
    snapshot_delta *deltas;           /**< [num_snapshots] symmetric deltas, deltas[t]: t-1 -> t */
    incremental_aggregation engine;   /**< the chain head */
    incremental_walks walks;          /**< DCRNN: both walks' engines and closures (opt/incremental_walks.h) */
    int diffusion;                    /**< 1 when `walks` serves (DCRNN), not deltas and engine */
    incremental_cache cache;          /**< ReInc's global cache */
    int64_t *visits;                  /**< [num_snapshots] accesses per epoch */
    int64_t *visited;                 /**< [num_snapshots] accesses so far this epoch */
    double imminence;                 /**< I = L - S */
    int64_t produced;                 /**< answers the engine had to produce (cache misses) */
    input_aggregations source;        /**< what to put in model.inputs */
} incremental_inputs;

/**
 * Build the deltas of @p seq for @p trainer's model (T-GCN, or GConvGRU with K >= 2; any other
 * is an input error naming why) and an empty cache sized @p options->capacity x (snapshots x
 * terms x N x F floats), with the visit counts of the windows this process runs of @p trainer's
 * schedule: those of this rank of @p ranks when opt_trainer_epoch() shares them, all of them
 * when @p ranks is NULL (trainer_epoch(), one process).
 */
int incremental_inputs_create(incremental_inputs *in, const snapshot_seq *seq, const trainer *trainer,
                              const comm *ranks, const incremental_inputs_options *options, tf_error *err);

/** What the engine did: its counts, or the sum of DCRNN's two walks' engines. */
incremental_stats incremental_inputs_engine_stats(const incremental_inputs *in);

/** Release everything. */
void incremental_inputs_free(incremental_inputs *in);

#ifdef __cplusplus
}
#endif

#endif
