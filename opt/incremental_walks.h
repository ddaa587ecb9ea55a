/**
 * @file opt/incremental_walks.h
 * Twins: ref_propagation_walk() (ref/nn/propagate.h), as DCRNN diffuses X_t on its two walks
 *        (the model's own loop in ref/models/model_dcrnn.c is the reference).
 * @brief DCRNN's diffusions of X_t on both random walks served by ReInc's delta engine
 *        (opt/incremental.h): T_1 by deltas, T_2 .. T_{K-1} by recomputing the rows a change can reach.
 *
 * DCRNN diffuses X_t on each walk W by T_0 = X_t, T_1 = W X_t, T_k = 2 W T_{k-1} - T_{k-2}: all of
 * it depends on the snapshot only, so it can be served (ref/models/model.h, #input_aggregations).
 *  - **T_1 is a sum over walk messages.** The forward walk is y[v] = sum over in-edges u -> v of
 *    w x_u / d_out(u): the engine's sum aggregator over the *message* x_u / d_out(u) (0 where
 *    d_out(u) = 0, as the reference gives such an edge 0). The backward walk, y[u] = sum over
 *    out-edges u -> v of w x_v / d_in(v), is the same on the reversed graph, whose out-degrees are
 *    the in-degrees. So each walk is one sum engine over its own sequence of messages; a vertex whose
 *    degree changed has a changed message, so its out-edges re-enter the delta, as the chebyshev
 *    aggregator's do (ref/incremental.h). Equal to the reference within fp: the reference multiplies
 *    x by the float coefficient w / d, the engine w by the float message x / d.
 *  - **T_k for k >= 2 is not a one-hop delta.** A power of a changing operator changes wherever a
 *    changed row can reach in k hops; carrying T_k by deltas would need the k-hop products of the
 *    changes. The rule here: row v of T_k is recomputed, 2 (W T_{k-1})[v] - T_{k-2}[v], exactly
 *    when it may have changed, C_k = A + C_{k-1} + its out-neighbours + C_{k-2}, where A is the rows
 *    of W that changed (an in-edge, or a source's degree: a zero message hides that from the delta),
 *    C_1 the delta's rows (T_1's changes) and C_0 the vertices whose features changed: the K-hop
 *    closure of the change, counted. The
 *    other rows keep their value. A row is always formed by the same function of the same inputs
 *    (ref_propagate_row() on the snapshot's walk), so the closure's terms are **bitwise** the ones
 *    a recompute of every row from the same T_1 gives (verify/test_incremental_train.c checks it).
 *    Where the engine recomputed T_1 fully (its first snapshot, a refresh, a fallback), every row is.
 *
 * As the engine's, the value served for t depends on t only: it is stepped one snapshot at a time
 * from the start of t's refresh segment (opt_incremental_seek()'s rule), so a cache in front of it
 * never changes a result.
 *
 * Ownership: owns the message sequences, deltas, engines and terms; borrows the sequence, which
 * must outlive it.
 */
#ifndef TWOFOLD_OPT_INCREMENTAL_WALKS_H
#define TWOFOLD_OPT_INCREMENTAL_WALKS_H

#include <stdint.h>

#include "opt/incremental.h"
#include "ref/nn/propagate.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One walk's server: forward (on the snapshots' graphs) or backward (on their reverses). */
typedef struct diffusion_walk {
    snapshot_seq messages;          /**< [T] the walk's graphs (G_t or its reverse), features = messages */
    snapshot_delta *deltas;         /**< [T] sum deltas of `messages`, deltas[t]: t-1 -> t */
    incremental_aggregation engine; /**< T_1 of the held snapshot (engine.value) */
    float *higher;                  /**< [K-2][N][F] T_2 .. T_{K-1} of the held snapshot */
    double *degrees;                /**< [T][N] out-degrees of the walk's graphs (the messages' divisors) */
    int64_t held;                   /**< the snapshot of `higher`, -1 for none */
} diffusion_walk;

/** What the closure did (both walks, since creation). */
typedef struct diffusion_stats {
    int64_t rows_recomputed; /**< rows of T_2 .. T_{K-1} formed */
    int64_t rows_full;       /**< rows a recompute of every row at every step would have formed */
} diffusion_stats;

/** The server of DCRNN's x-diffusions. */
typedef struct incremental_walks {
    const snapshot_seq *seq; /**< the data (borrowed) */
    int order;               /**< K (>= 2) */
    diffusion_walk walks[2]; /**< forward, backward */
    uint8_t *changed;        /**< [K + 1][N] scratch: C_0 .. C_{K-1} of one step, and its changed operator rows */
    diffusion_stats stats;   /**< counts */
} incremental_walks;

/** Build both walks' messages and deltas for @p seq and order @p order (K >= 2). */
int incremental_walks_create(incremental_walks *w, const snapshot_seq *seq, int order,
                             const incremental_options *options, tf_error *err);

/** out [2][K-1][N][F] = T_1 .. T_{K-1} of X_t on the forward, then the backward walk. */
int incremental_walks_get(incremental_walks *w, int64_t t, float *out, tf_error *err);

/** Release everything (safe on a zeroed server). */
void incremental_walks_free(incremental_walks *w);

#ifdef __cplusplus
}
#endif

#endif
