/**
 * @file cuda/incremental.h
 * Twins: ref_aggregate() with snapshot_delta_build()'s deltas (ref/incremental.h).
 * @brief The CUDA twin of incremental aggregation: y = A_t x_t by a full recompute on the GPU
 *        (cuda_aggregate()), and a device-resident engine that keeps it up to date from one
 *        snapshot to the next by applying ReInc's deltas (Eq. 2) in a delta kernel.
 *
 * Twins of ref_aggregate() and snapshot_delta (ref/incremental.h); the same state and the same
 * math as the CPU twin opt/incremental.h (opt_incremental_reset(), apply_linear(),
 * apply_extreme() in opt/incremental.c), for every aggregator but chebyshev (refused:
 * its out-degree scales would need atomic double adds on the GPU, whose order and so whose bits
 * vary). What changes and why it is still equal:
 *  - The state lives on the device: value [N][W] float (the output), for sum, mean and
 *    symmetric an unscaled double accumulator [N][W] and a row scale [N], for max and min the
 *    source of each cell's winning message [N][W] (int32, -1 for none).
 *  - Full recompute: one thread per (row, column) walks the row's in-edges in CSR order,
 *    exactly the CPU twin's loop. sum, mean, symmetric accumulate in double with separately
 *    rounded multiplies and adds (__dmul_rn, __dadd_rn: no FMA contraction), so the output is
 *    the reference's float sum up to rounding: fp, 1e-4 of the size of the summed terms on the
 *    GPU. max, min form the reference's message m = w x in float (one rounding, -0 made +0)
 *    and keep the first best in CSR order: **bitwise** the reference.
 *  - Delta apply, linear aggregators: one thread per (delta row, column); the delta lists each
 *    destination row once, so every cell has one writer and no atomics are needed. The thread
 *    subtracts the G- terms coefficient x_{t-1}[source] and adds the G+ terms coefficient
 *    x_t[source] in the delta's order, then writes value = (float)(accumulator x row_scale).
 *    Exact in real arithmetic; the double accumulator keeps the drift along a chain far below
 *    float rounding (fp).
 *  - Delta apply, max and min: one warp per delta row, its lanes over the columns. If a G-
 *    entry's source is the winner of any column of the row (its edge was deleted or its
 *    features changed), the warp recomputes the whole row from the current graph (ReInc
 *    section 3.2); otherwise the G+ messages are compared in. The extreme of a set does not
 *    depend on the order it is formed in, and equal messages have equal bits (-0 is made +0),
 *    so the value is **bitwise** the reference's.
 *  - No churn threshold or periodic refresh (the CPU engine's options): the caller chooses
 *    between cuda_incremental_advance() and cuda_incremental_reset().
 *
 * Transfers are separate from compute so a benchmark can time the delta kernel alone:
 * cuda_incremental_load() + cuda_incremental_recompute() = cuda_incremental_reset(), and
 * cuda_incremental_stage() + cuda_incremental_apply() = cuda_incremental_advance(). The load
 * and stage calls copy host data to the device (graph, features, delta); recompute and apply
 * run kernels on device data only and wait for them.
 *
 * Ownership: every device buffer of a #cuda_incremental is allocated from its context
 * (cuda_alloc()) and released by cuda_incremental_free() (or, at the latest, with the context).
 * Snapshots and deltas are borrowed for the duration of a call.
 */
#ifndef TWOFOLD_CUDA_INCREMENTAL_H
#define TWOFOLD_CUDA_INCREMENTAL_H

#include <stddef.h>
#include <stdint.h>

#include "cuda/context.h"
#include "ref/data/csr.h"
#include "ref/core/error.h"
#include "ref/incremental.h"
#include "ref/data/snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The stateless CUDA twin of ref_aggregate(): y = A x by a full recompute on the GPU. Host
 * pointers in and out: @p g and @p x are copied to the device, @p y back.
 * @param context the GPU to run on (its stream; temporary buffers are allocated from it and freed)
 * @param g      the graph (rows = destinations)
 * @param x      [num_nodes][width] features (host)
 * @param width  feature columns
 * @param kind   the aggregator
 * @param y      [num_nodes][width] out (host; overwritten)
 * @param err    out: what failed
 * @return 0, or TF_ERR_SYSTEM on a CUDA failure (out of device memory, lost device).
 */
int cuda_aggregate(cuda_context *context, const csr *g, const float *x, int64_t width, aggregator kind, float *y,
                   tf_error *err);

/** What the engine did (counts since creation). */
typedef struct cuda_incremental_stats {
    int64_t full;         /**< full recomputes */
    int64_t incremental;  /**< deltas applied */
    int64_t entries;      /**< delta entries applied */
} cuda_incremental_stats;

/** The device-resident engine: the aggregation of one snapshot, kept up to date on the GPU. */
typedef struct cuda_incremental {
    cuda_context *context;    /**< owns every device buffer below (borrowed; must outlive the engine) */
    aggregator kind;          /**< the aggregator */
    int64_t num_nodes;        /**< rows */
    int64_t width;            /**< columns */
    float *d_value;           /**< [num_nodes][width] the aggregation of the held snapshot (the output) */
    double *d_accumulator;    /**< [num_nodes][width] unscaled sums (sum, mean, symmetric; else NULL) */
    double *d_scale;          /**< [num_nodes] each row's output scale (sum, mean, symmetric; else NULL) */
    int32_t *d_winner;        /**< [num_nodes][width] source of the winning message, -1 if none (max, min; else NULL) */
    unsigned long long *d_rows_recomputed; /**< [1] max/min rows recomputed because a winner left */

    /* The graph on the device: the held snapshot's after load(), the staged one after stage()
     * (max and min only; the linear delta needs no graph). */
    int64_t *d_row_ptr;       /**< [num_nodes + 1] */
    int32_t *d_col;           /**< [edge_capacity] */
    float *d_weight;          /**< [edge_capacity] */
    int64_t num_edges;        /**< edges of the graph on the device */
    size_t edge_capacity;     /**< edges d_col and d_weight can hold */
    int graph_held;           /**< 1 when the device graph is the held snapshot's (recompute needs that) */

    /* Features: two [num_nodes][width] buffers, the held snapshot's and the staged one's. */
    float *d_features[2];     /**< device feature buffers */
    int held;                 /**< index in d_features of the held snapshot's features */
    const float *held_host;   /**< host address the held features were copied from (NULL: none) */
    const float *staged_host; /**< host address of the staged features (NULL: nothing staged) */

    /* The staged delta, grown as needed. */
    int64_t delta_rows;       /**< rows of the staged delta */
    int64_t delta_entries;    /**< its G- plus G+ entries */
    int32_t *d_rows;          /**< [delta_rows] */
    double *d_row_scale;      /**< [delta_rows] */
    int64_t *d_minus_offsets; /**< [delta_rows + 1] */
    int64_t *d_plus_offsets;  /**< [delta_rows + 1] */
    int32_t *d_minus_source;  /**< [minus entries] */
    double *d_minus_coefficient; /**< [minus entries] */
    int32_t *d_plus_source;   /**< [plus entries] */
    double *d_plus_coefficient;  /**< [plus entries] */
    size_t row_capacity;      /**< rows the row arrays can hold */
    size_t minus_capacity;    /**< entries the minus arrays can hold */
    size_t plus_capacity;     /**< entries the plus arrays can hold */

    cuda_incremental_stats stats; /**< counts */
} cuda_incremental;

/**
 * Allocate an empty engine on @p context for @p kind, @p num_nodes rows and @p width columns.
 * @return 0, or TF_ERR_SYSTEM when the device memory cannot be allocated (nothing is left
 *         allocated then).
 */
int cuda_incremental_create(cuda_incremental *a, cuda_context *context, aggregator kind, int64_t num_nodes,
                            int64_t width, tf_error *err);

/** Release every device buffer of @p a and zero it. Safe on a zeroed engine. */
void cuda_incremental_free(cuda_incremental *a);

/**
 * Copy snapshot @p s's graph and features to the device as the held snapshot (transfers only).
 * @return 0, TF_ERR_INPUT when @p s does not have the engine's shape, or TF_ERR_SYSTEM.
 */
int cuda_incremental_load(cuda_incremental *a, const snapshot *s, tf_error *err);

/** Full recompute of the held snapshot from the device graph and features (kernels only; waits). */
int cuda_incremental_recompute(cuda_incremental *a, tf_error *err);

/** cuda_incremental_load() then cuda_incremental_recompute(): set the state to snapshot @p s. */
int cuda_incremental_reset(cuda_incremental *a, const snapshot *s, tf_error *err);

/**
 * Copy what cuda_incremental_apply() needs to go from the held snapshot @p previous to
 * @p current (transfers only): @p delta's arrays, @p current's features, and for max and min
 * @p current's graph. @p previous should be the snapshot the engine holds; when its feature
 * array is not the one last copied (a different host address), its features are copied too.
 * @return 0, TF_ERR_INPUT for a delta of another aggregator or snapshots of another shape,
 *         or TF_ERR_SYSTEM.
 */
int cuda_incremental_stage(cuda_incremental *a, const snapshot *previous, const snapshot *current,
                           const snapshot_delta *delta, tf_error *err);

/**
 * Apply the staged delta with the delta kernel (kernels only; waits for them); the staged
 * snapshot becomes the held one. @return 0, TF_ERR_INPUT when nothing is staged, or TF_ERR_SYSTEM.
 */
int cuda_incremental_apply(cuda_incremental *a, tf_error *err);

/** cuda_incremental_stage() then cuda_incremental_apply(): advance by @p delta to @p current. */
int cuda_incremental_advance(cuda_incremental *a, const snapshot *previous, const snapshot *current,
                             const snapshot_delta *delta, tf_error *err);

/** Copy the held aggregation to @p host_value [num_nodes][width]. */
int cuda_incremental_download(cuda_incremental *a, float *host_value, tf_error *err);

/** Max/min rows recomputed by the delta kernel since creation, into @p rows [1] (0 for the linear aggregators). */
int cuda_incremental_rows_recomputed(cuda_incremental *a, int64_t *rows, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
