/**
 * @file ref/data/snapshot.h
 * @brief A discrete-time dynamic graph: a sequence of snapshots, each a graph with node
 *        features and targets.
 *
 * Every snapshot has the same vertex id space 0..num_nodes-1 but its own edges, features
 * and targets. A vertex that does not exist at snapshot t (it has not arrived yet or has
 * left) has `present[v] == 0`, no edges, zero features and zero targets; models skip it in
 * the loss. The PyTorch Geometric Temporal datasets have every vertex present throughout;
 * the generator (datasets/generate.h) makes vertices arrive and depart.
 *
 * Node classification (ref/models/classify_task.h) reads per-snapshot class labels: a vertex's
 * label at t is in 0 .. num_classes - 1, or #SNAPSHOT_UNLABELLED, which masks it out of the loss
 * and the accuracy (an absent vertex is always unlabelled). Data without labels has
 * num_classes 0 and NULL labels.
 */
#ifndef TWOFOLD_REF_SNAPSHOT_H
#define TWOFOLD_REF_SNAPSHOT_H

#include <stdint.h>

#include "ref/data/csr.h"
#include "ref/core/error.h"
#include "ref/core/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One point in time. Owns its graph, tensors and mask. */
typedef struct snapshot {
    csr graph;          /**< the edges at this time, in-edges by destination */
    tensor features;    /**< [num_nodes][feature_width] node inputs */
    tensor targets;     /**< [num_nodes][target_width] what the model should predict */
    uint8_t *present;   /**< [num_nodes] 1 if the vertex exists at this time */
    int32_t *labels;    /**< [num_nodes] class of each vertex, or #SNAPSHOT_UNLABELLED; NULL without labels */
} snapshot;

/** The label of a vertex that has none at this time: the classification loss skips it. */
#define SNAPSHOT_UNLABELLED (-1)

/** A whole snapshot sequence. Owns its snapshots; free with snapshot_seq_free(). */
typedef struct snapshot_seq {
    int64_t num_nodes;        /**< size of the vertex id space, shared by all snapshots */
    int64_t num_snapshots;    /**< number of snapshots */
    int64_t feature_width;    /**< columns of every features tensor */
    int64_t target_width;     /**< columns of every targets tensor */
    int64_t num_classes;      /**< classes of the labels; 0: the data has no labels */
    snapshot *snapshots;      /**< [num_snapshots] */
} snapshot_seq;

/**
 * Allocate @p num_snapshots snapshots with zeroed features and targets, every vertex
 * present and empty graphs (num_nodes rows, no edges). Loaders then fill them in.
 */
int snapshot_seq_alloc(snapshot_seq *seq, int64_t num_snapshots, int64_t num_nodes,
                       int64_t feature_width, int64_t target_width, tf_error *err);

/**
 * Replace the edges of snapshot @p t of @p seq with the given edge list src, dst, weight
 * [num_edges] (see csr_from_edges(); @p weight may be NULL for all ones).
 */
int snapshot_seq_set_edges(snapshot_seq *seq, int64_t t, int64_t num_edges, const int32_t *src,
                           const int32_t *dst, const float *weight, tf_error *err);

/**
 * Give every snapshot of @p seq a labels array [num_nodes], all #SNAPSHOT_UNLABELLED, and set
 * num_classes to @p num_classes (>= 2); loaders and generators then fill them in.
 */
int snapshot_seq_alloc_labels(snapshot_seq *seq, int64_t num_classes, tf_error *err);

/** Release everything @p seq owns and zero it. Safe on a zeroed or partly built sequence. */
void snapshot_seq_free(snapshot_seq *seq);

/**
 * Check the invariants every consumer relies on: well-formed graphs (offsets increasing,
 * sources in range), finite edge weights, features and targets, absent vertices without
 * edges (nor labels), labels within 0 .. num_classes - 1 or #SNAPSHOT_UNLABELLED. @p source names the data in the message.
 */
int snapshot_seq_validate(const snapshot_seq *seq, const char *source, tf_error *err);

/** Edge counts over the snapshots: smallest, mean, largest and total. */
typedef struct snapshot_edge_stats {
    int64_t min_edges;     /**< fewest edges in one snapshot */
    double mean_edges;     /**< average edges per snapshot */
    int64_t max_edges;     /**< most edges in one snapshot */
    int64_t total_edges;   /**< sum over all snapshots */
} snapshot_edge_stats;

/** Compute the edge statistics of @p seq. */
snapshot_edge_stats snapshot_seq_edge_stats(const snapshot_seq *seq);

/** 1 if the two sequences are identical bit for bit (graphs, features, targets, masks, labels). */
int snapshot_seq_equal(const snapshot_seq *a, const snapshot_seq *b);

#ifdef __cplusplus
}
#endif

#endif
