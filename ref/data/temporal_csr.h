/**
 * @file ref/data/temporal_csr.h
 * @brief Per-vertex interaction history for "the k most recent neighbours before t".
 *
 * Memory-based models (TGN) look at a vertex's latest interactions before the event being
 * scored. The temporal CSR stores, for every vertex v, each event v took part in (as source
 * or destination: neighbourhoods are undirected, as in TGN and TGL) in time order:
 * the other endpoint, the event index and the timestamp. A query is then a binary search in
 * v's row for the first entry at or after t, and the k entries just before it.
 */
#ifndef TWOFOLD_REF_TEMPORAL_CSR_H
#define TWOFOLD_REF_TEMPORAL_CSR_H

#include <stdint.h>

#include "ref/core/error.h"
#include "ref/data/events.h"

/** Interaction lists of all vertices, each sorted by (time, event index). Owns its arrays. */
typedef struct temporal_csr {
    int64_t num_nodes;     /**< rows, one per vertex id */
    int64_t num_entries;   /**< 2 x number of events (each event is in both endpoints' rows) */
    int64_t *row_ptr;      /**< [num_nodes + 1] offsets */
    int32_t *neighbour;     /**< [num_entries] the other endpoint */
    int64_t *event;        /**< [num_entries] index of the event in the stream */
    double *time;          /**< [num_entries] the event's timestamp */
} temporal_csr;

/** Build the temporal CSR of @p es (which must be time-sorted, as loaders guarantee). */
int temporal_csr_build(temporal_csr *g, const event_stream *es, tf_error *err);

/** Release @p g's arrays and zero it. */
void temporal_csr_free(temporal_csr *g);

/**
 * The at most @p k most recent interactions of @p node strictly before time @p t,
 * written oldest first into the three output arrays neighbours, events, times [k] (any of them
 * may be NULL if not wanted). Events at exactly time t are excluded.
 * @return the number written, 0..k.
 */
int temporal_csr_recent(const temporal_csr *g, int32_t node, double t, int k, int32_t *neighbours,
                        int64_t *events, double *times);

#endif
