/**
 * @file opt/partition_shuffle.h
 * Twins: T-GCN's input aggregation A^ X_t, ref_propagate_forward() (ref/nn/propagate.h).
 * @brief PSS-TS (DGC section 2.1, after Chakaravarthy et al.): T-GCN's structure encoder runs on
 *        snapshot blocks, and its output is shuffled to the vertex owners, which run the time
 *        encoder (chapter 06).
 *
 * T-GCN aggregates before any parameter (A^ X_t, ref/models/model_tgcn.c), so its structure encoder is
 * separable from the recurrence: rank snapshot_owner[t] computes A^ X_t for every vertex of its
 * snapshots from the whole graph, and one all-to-all-v gives each rank the rows of its vertices. An
 * #input_aggregations source: the model asks for A^ X_t, every rank at the same point of the same
 * window (so the collectives line up), and receives the whole graph's rows: **bitwise** the
 * reference's A^ X_t (the product is the reference's on the whole graph). The other models convolve
 * inside their gates or read X W_t, so they have no such encoder (opt/train_partition.h refuses them).
 *
 * Bytes: per visit of snapshot t, the rows of every vertex not owned by t's owner, F floats each.
 * Ownership: the shuffle owns copies of its own snapshots' graphs, operators and features.
 */
#ifndef TWOFOLD_OPT_PARTITION_SHUFFLE_H
#define TWOFOLD_OPT_PARTITION_SHUFFLE_H

#include <stdint.h>

#include "opt/comm.h"
#include "ref/models/model.h"
#include "ref/data/snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The shuffle on one rank. */
typedef struct partition_shuffle {
    comm *group;                /**< the ranks (borrowed) */
    int64_t num_nodes;          /**< N */
    int64_t num_snapshots;      /**< T */
    int64_t features;           /**< F */
    int64_t owned;              /**< this rank's vertices */
    const int32_t *snapshot_owner; /**< [T] (copied) */
    int32_t *snapshot_owners;   /**< [T] the copy */
    int32_t *order;             /**< [N] vertices grouped by owner, each group by id: the send order */
    int64_t *counts;            /**< [4][R] rows to each rank (sender side), offsets, and the receive counts/offsets */
    csr *graphs;                /**< [T] the graphs of this rank's snapshots (empty elsewhere) */
    propagation *operators;     /**< [T] their GCN operators */
    float **inputs;             /**< [T][N][F] their features (NULL elsewhere) */
    float *aggregated;          /**< [N][F] scratch: A^ X_t */
    float *send;                /**< [N][F] scratch: the rows in send order */
    uint64_t bytes;             /**< bytes this rank sent */
    double cpu_seconds;         /**< this thread's CPU time inside the all-to-all-v */
    input_aggregations source;  /**< what the model reads */
} partition_shuffle;

/**
 * Set up the shuffle: @p snapshot_owner [T] places the snapshots (pss), @p vertex_owner [N] the
 * vertices (pts). No communication.
 */
int partition_shuffle_create(partition_shuffle *s, comm *group, const snapshot_seq *seq, const int32_t *snapshot_owner,
                             const int32_t *vertex_owner, tf_error *err);

/** Release it (safe on a zeroed shuffle). */
void partition_shuffle_free(partition_shuffle *s);

#ifdef __cplusplus
}
#endif

#endif
