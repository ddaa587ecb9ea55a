/**
 * @file ref/fusion_sequences.h
 * @brief Sets of sequences of different lengths, laid end to end: what DGC's temporal fusion
 *        (chapter 03) batches. Built from lengths, from vertex lifetimes in snapshots or in an
 *        event stream, or generated.
 *
 * A dynamic graph's time encoder runs over each vertex's own sequence of embeddings, one per
 * snapshot in which the vertex exists. Vertices arrive and depart, so the sequences have
 * different lengths. A #sequence_set records where each one starts in **sequence order**:
 * sequence 0's steps first, then sequence 1's, and so on; every per-step array of the fusion
 * code (ref/fusion.h, opt/fusion.h, cuda/fusion.h) follows that order.
 *
 * Ownership: a set owns its arrays; sequence_set_free() releases them (safe on a zeroed set).
 * Functions that can fail return a #tf_error_code and leave a message in @p err.
 */
#ifndef TWOFOLD_REF_FUSION_SEQUENCES_H
#define TWOFOLD_REF_FUSION_SEQUENCES_H

#include <stdint.h>

#include "ref/core/error.h"
#include "ref/data/events.h"
#include "ref/data/snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A set of sequences laid end to end in sequence order. Owns its arrays. */
typedef struct sequence_set {
    int64_t count;            /**< number of sequences */
    int64_t total_steps;      /**< sum of their lengths (= offsets[count]) */
    int64_t max_length;       /**< the longest length, T_max */
    int64_t *offsets;         /**< [count + 1] sequence s is steps offsets[s] .. offsets[s+1]-1 */
    int32_t *vertex;          /**< [count] the vertex it follows, or NULL (generated lengths) */
    int32_t *first_snapshot;  /**< [count] the snapshot of its first step, or NULL */
} sequence_set;

/**
 * Build a set from lengths [count] (each >= 1). vertex and first_snapshot stay NULL.
 * @return 0, or TF_ERR_INPUT naming the first bad length.
 */
int sequence_set_from_lengths(const int64_t *lengths, int64_t count, sequence_set *out, tf_error *err);

/**
 * The vertex lifetimes of a snapshot sequence: a vertex is alive at t when `present[v]` and,
 * if @p require_edge, it has at least one in- or out-edge at t. Each maximal run of
 * consecutive snapshots in which a vertex is alive is one sequence (a vertex that leaves and
 * comes back starts again from a zero state, as a new vertex would). Sequences are ordered by
 * first snapshot, then vertex.
 * @return 0, or TF_ERR_INPUT when no vertex is ever alive.
 */
int sequence_set_from_snapshots(const snapshot_seq *seq, int require_edge, sequence_set *out, tf_error *err);

/**
 * The vertex lifetimes of an event stream grouped into @p num_snapshots snapshots of equal
 * time span (the last one closed at the last timestamp): a vertex is alive in a snapshot when
 * it takes part in an event there; maximal runs are sequences, as for snapshots.
 * @return 0, or TF_ERR_INPUT for an empty stream or @p num_snapshots < 1.
 */
int sequence_set_from_events(const event_stream *events, int64_t num_snapshots, sequence_set *out, tf_error *err);

/** Generated length distributions (sequence_set_generate()). */
typedef enum length_distribution {
    LENGTHS_UNIFORM,       /**< uniform in 1 .. T */
    LENGTHS_HEAVY_TAILED,  /**< discrete Pareto: floor(u^(-1/1.2)) capped at T, most are short */
    LENGTHS_EQUAL,         /**< all exactly T */
    LENGTHS_ONE,           /**< all 1 */
} length_distribution;

/** The distribution's name, e.g. "heavy-tailed". */
const char *length_distribution_name(length_distribution kind);

/**
 * @p count sequences with lengths drawn from @p kind with cap @p max_length, seeded by @p seed.
 * @return 0, or TF_ERR_INPUT for count < 1 or max_length < 1.
 */
int sequence_set_generate(length_distribution kind, int64_t count, int64_t max_length, uint64_t seed,
                          sequence_set *out, tf_error *err);

/** Release @p set's arrays and zero it. */
void sequence_set_free(sequence_set *set);

#ifdef __cplusplus
}
#endif

#endif
