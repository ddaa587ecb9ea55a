/**
 * @file opt/incremental_inputs.h
 * @brief T-GCN's layer-1 aggregations A^ X_t served by ReInc's machinery during training: the
 *        global cache in front of the incremental engine (opt/incremental.h).
 *
 * Twin of the reference's per-window recompute in ref/model_tgcn.c (model.inputs == NULL).
 * A window asks for A^ X_t of each of its snapshots. A cache hit is a copy of an earlier
 * answer; a miss brings the engine to t (one delta from t-1 in the common case, since windows
 * move forward) and offers the result to the cache. Values are the engine's, which depend on
 * t only, so the whole training run is bitwise the same for every cache policy and capacity
 * and fp-equal to the full-recompute run (verify/test_incremental_train.c).
 *
 * F, the future access count ReInc's score needs, is exact here: every epoch visits each
 * training snapshot in as many windows as contain it, and each test snapshot once per
 * evaluation, so F = those visits minus the ones made so far this epoch. (ReInc's closed
 * forms in [ReInc] §3.3.3 describe its encoder-decoder; this trainer has no decoder. See
 * chapters/references.md and chapters/02-incremental.md, "What ReInc leaves unsaid".)
 * Imminence I = L - S for every entry (ReInc's value for the encoder's global cache).
 *
 * Ownership: owns the deltas, the engine and the cache; borrows the sequence, which must
 * outlive it.
 */
#ifndef TWOFOLD_OPT_INCREMENTAL_INPUTS_H
#define TWOFOLD_OPT_INCREMENTAL_INPUTS_H

#include <stdint.h>

#include "opt/incremental.h"
#include "opt/incremental_cache.h"
#include "opt/train.h"
#include "ref/model.h"

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

/** The server of A^ X_t. */
typedef struct incremental_inputs {
    const snapshot_seq *seq;          /**< the data (borrowed) */
    snapshot_delta *deltas;           /**< [num_snapshots] symmetric deltas, deltas[t]: t-1 -> t */
    incremental_aggregation engine;   /**< the chain head */
    incremental_cache cache;          /**< ReInc's global cache */
    int64_t *visits;                  /**< [num_snapshots] accesses per epoch */
    int64_t *visited;                 /**< [num_snapshots] accesses so far this epoch */
    double imminence;                 /**< I = L - S */
    int64_t produced;                 /**< answers the engine had to produce (cache misses) */
    input_aggregations source;        /**< what to put in model.inputs */
} incremental_inputs;

/**
 * Build the deltas of @p seq and an empty cache sized @p options->capacity x (snapshots x
 * N x F floats), with the visit counts of the windows this process runs of @p trainer's
 * schedule: those of this rank of @p ranks when opt_trainer_epoch() shares them, all of them
 * when @p ranks is NULL (trainer_epoch(), one process).
 */
int incremental_inputs_create(incremental_inputs *in, const snapshot_seq *seq, const trainer *trainer,
                              const comm *ranks, const incremental_inputs_options *options, tf_error *err);

/** Release everything. */
void incremental_inputs_free(incremental_inputs *in);

#ifdef __cplusplus
}
#endif

#endif
