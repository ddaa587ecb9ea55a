/**
 * @file opt/incremental.h
 * Twins: ref_aggregate() (ref/incremental.h).
 * @brief The optimized twin of ref_aggregate(): a first-layer aggregation kept up to date from
 *        snapshot to snapshot by applying deltas (ReInc's incremental aggregation, Eq. 2), with
 *        fallback to full recompute above a churn threshold and a periodic exact refresh.
 *
 * Twin of ref_aggregate() (ref/incremental.h). What changes and why it is still equal:
 *  - sum, mean, symmetric, chebyshev: each row keeps its unscaled sum in **double** and the output is
 *    (float)(sum x scale). A delta subtracts the old contributions of G- and adds the new ones
 *    of G+ (ReInc Eq. 2) to only the rows they touch. Exact in real arithmetic; the float
 *    output differs from the reference's float sum by rounding only (fp tolerance), and the
 *    double accumulator keeps the drift along a chain of deltas about 2^-29 below float's
 *    rounding, so it does not grow visibly over hundreds of snapshots (measured in
 *    verify/test_incremental.c). Degree changes are exact: the delta carries each row's new
 *    scale (1 / in-edges, 1 / sqrt(d_v)) and re-enters every out-edge of a vertex whose
 *    1 / sqrt(d_u) changed.
 *  - max, min: each (row, column) keeps the source of its winning message. A G- entry whose
 *    source is a column's winner makes that cell recompute from the current graph (ReInc
 *    section 3.2 recomputes from scratch; per cell, not per row, is this project's choice);
 *    G+ entries are compared into the other cells. The maximum of a set does not
 *    depend on the order it is formed in, so the result is **bitwise** the reference's.
 *  - Rows are updated in parallel (OpenMP): the delta is grouped by destination row, so no two
 *    threads write one row and no atomics are needed.
 *
 * The value the engine gives for snapshot t depends on t only, never on which snapshots were
 * asked for before: t is computed by a full recompute at the start of its refresh segment
 * (t rounded down to a multiple of refresh_interval) and deltas from there (a delta above the
 * threshold is a full recompute too). A cache in front of it therefore never changes a
 * result, bit for bit (opt/incremental_cache.h).
 *
 * Ownership: the engine owns its state; the snapshots and deltas are borrowed.
 */
#ifndef TWOFOLD_OPT_INCREMENTAL_H
#define TWOFOLD_OPT_INCREMENTAL_H

#include <stdint.h>

#include "ref/core/error.h"
#include "ref/incremental.h"
#include "ref/data/snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Default churn threshold: above this many delta entries per edge of the current snapshot,
 * a full recompute is cheaper. Chosen from the crossover measured by `bench incremental` on a
 * 10^6-edge generated graph (chapters/02-incremental.md shows the run); ReInc leaves it to
 * the user.
 */
#define INCREMENTAL_DEFAULT_THRESHOLD 1.0

/** Default refresh interval: a full recompute every this many snapshots. */
#define INCREMENTAL_DEFAULT_REFRESH 100

/** Settings of the engine. */
typedef struct incremental_options {
    double threshold;          /**< full recompute when delta entries / current edges exceed this */
    int64_t refresh_interval;  /**< full recompute at every multiple of this snapshot index; 0 = only at the start */
} incremental_options;

/** Set the defaults above. */
void incremental_options_default(incremental_options *options);

/** What the engine did (counts since creation). */
typedef struct incremental_stats {
    int64_t full;             /**< full recomputes (first snapshot, refresh, fallback, seek) */
    int64_t fallbacks;        /**< of which because the delta exceeded the threshold */
    int64_t incremental;      /**< deltas applied */
    int64_t entries;          /**< delta entries applied */
    int64_t rows_recomputed;  /**< max/min rows with a cell recomputed because its winner left */
} incremental_stats;

/** The engine: the aggregation of one snapshot, kept up to date. */
typedef struct incremental_aggregation {
    aggregator kind;              /**< the aggregator */
    int64_t num_nodes;            /**< rows */
    int64_t width;                /**< columns */
    incremental_options options;  /**< threshold and refresh */
    int64_t snapshot;             /**< index of the snapshot the state holds, -1 for none */
    float *value;                 /**< [num_nodes][width] the aggregation of that snapshot (the output) */
    double *accumulator;          /**< [num_nodes][width] unscaled sums (the linear aggregators) */
    double *scale;                /**< [num_nodes] each row's output scale (the linear aggregators) */
    int32_t *winner;              /**< [num_nodes][width] source of the winning message, -1 if none (max, min) */
    incremental_stats stats;      /**< counts */
} incremental_aggregation;

/** Allocate an empty engine. @return 0, or TF_ERR_INPUT when it does not fit in memory. */
int opt_incremental_create(incremental_aggregation *a, aggregator kind, int64_t num_nodes, int64_t width,
                           const incremental_options *options, tf_error *err);

/** Release the state and zero @p a. */
void opt_incremental_free(incremental_aggregation *a);

/** Full recompute: set the state to snapshot @p t, @p s (rows in parallel). */
void opt_incremental_reset(incremental_aggregation *a, const snapshot *s, int64_t t);

/**
 * Apply @p delta (from the held snapshot @p previous to @p current), or recompute @p current
 * fully when the delta has more than threshold x |E_t| entries. Does not look at the refresh
 * interval (opt_incremental_seek() does). @p t is @p current's index.
 */
void opt_incremental_advance(incremental_aggregation *a, const snapshot *previous, const snapshot *current,
                             const snapshot_delta *delta, int64_t t);

/**
 * Bring the state to snapshot @p t of @p seq: advance through the deltas when the held
 * snapshot is earlier in t's refresh segment, else recompute the segment's first snapshot and
 * advance from there. @p deltas [num_snapshots]: deltas[k] goes from k-1 to k (deltas[0] unused).
 */
void opt_incremental_seek(incremental_aggregation *a, const snapshot_seq *seq, const snapshot_delta *deltas, int64_t t);

/**
 * The delta chain of a whole sequence: snapshot_delta_build() (one pair of snapshots, in
 * ref/incremental.h) for every consecutive pair. Builds deltas[k] from snapshot k-1 to k for
 * every k >= 1 of @p seq (deltas[0] left zeroed).
 * @p *deltas is allocated here; free with snapshot_delta_chain_free().
 */
int snapshot_delta_chain_build(snapshot_delta **deltas, const snapshot_seq *seq, aggregator kind, tf_error *err);

/** Free what snapshot_delta_chain_build() made. */
void snapshot_delta_chain_free(snapshot_delta *deltas, int64_t num_snapshots);

/**
 * The stateless twin of ref_aggregate(): y [num_nodes][width] = A x [num_nodes][width] by a
 * full recompute in parallel.
 */
int opt_aggregate(const csr *g, const float *x, int64_t width, aggregator kind, float *y, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
