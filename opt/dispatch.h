/**
 * @file opt/dispatch.h
 * Twins: ref_dispatch_plan() (ref/dispatch.h).
 * @brief Algorithm 2 in O(N) (the twin of ref_dispatch_plan()), the naive baseline's identity
 *        plan, the global-winner filter, and the per-owner request lists of a plan.
 *
 * **opt_dispatch_plan()** twins ref_dispatch_plan(): the paper's linear search of V_u becomes a
 * direct-address table position[v] (the "hash" of Sven's dual hash for dense ids, TPDS §4.1),
 * -1 between batches and reset after each by walking V_u (O(U), never O(num_nodes)). It visits
 * the entries in the same order and makes the same decisions, so the plan is **bitwise** the
 * reference's (same integers in the same order): verify/test_dispatch.c checks it on every batch.
 *
 * **Global winners.** A rank's plan is built over its slice of a global batch, and a vertex
 * written in two slices has a writer in both; only the one of larger key survives in the
 * reference, which writes the whole global batch in key order. Every rank holds the whole stream,
 * so opt_dispatch_plan_keep_winners() scans the global batch's events (O(B)) for every vertex's
 * last key and drops each writer that is not it: each vertex is then written exactly once, by the
 * rank holding its winning write (the paper's per-trainer Phi would also send the rows a later
 * trainer overwrites; opt/train_events.h counts those as per_trainer_writes_remote).
 *
 * **Requests** group rows by owner (opt/dispatch_placement.h): the ids to ask each rank for, and
 * which row each answer fills.
 *
 * Reentrant: no static state; the table is scratch of the caller (one per thread that builds
 * plans), restored to all -1 before each function returns.
 */
#ifndef TWOFOLD_OPT_DISPATCH_H
#define TWOFOLD_OPT_DISPATCH_H

#include <stdint.h>

#include "opt/dispatch_placement.h"
#include "ref/dispatch.h"
#include "ref/core/error.h"
#include "ref/data/events.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Scratch indexed by vertex id, all -1 between calls. */
typedef struct dispatch_table {
    int64_t num_nodes;     /**< the id space */
    int32_t *position;     /**< [num_nodes] v's row in the V_u being built, or -1 */
    int64_t *last_key;     /**< [num_nodes] v's largest write key in a global batch, or -1 */
} dispatch_table;

/** Allocate a table for ids 0 .. num_nodes-1, all -1. @return 0, or TF_ERR_INPUT (no memory). */
int dispatch_table_create(dispatch_table *t, int64_t num_nodes, tf_error *err);

/** Release a table and zero it. Safe on a zeroed table. */
void dispatch_table_free(dispatch_table *t);

/**
 * Twin of ref_dispatch_plan(): the same plan, bitwise, in O(N).
 * @param t           scratch covering every vertex of @p entries
 * @param entries     [count] V_o
 * @param count       N
 * @param first       the batch's first event
 * @param batch_size  B
 * @param plan        out (capacity >= count)
 * @param err         out: capacity too small, a vertex outside the table
 * @return 0, or TF_ERR_INPUT
 */
int opt_dispatch_plan(dispatch_table *t, const int32_t *entries, int64_t count, int64_t first, int64_t batch_size,
                      dispatch_plan *plan, tf_error *err);

/**
 * The naive baseline's plan: no deduplication. V_u = V_o (repeats and all), Psi the identity,
 * and every positive root writes (writer[k] = k for k < 2B, -1 otherwise).
 * @param entries     [count] V_o
 * @param count       N (<= plan->capacity)
 * @param batch_size  B
 * @param plan        out
 */
void opt_dispatch_plan_identity(const int32_t *entries, int64_t count, int64_t batch_size, dispatch_plan *plan);

/**
 * Keep only the writers that win in the whole global batch [global_first, global_first +
 * global_size) of @p es (largest key: event index, then dst over src); @p plan was built for the
 * slice [first, first + batch_size) of it.
 * @param t             scratch (its last_key is used and restored)
 * @param es            the stream
 * @param global_first  the global batch's first event
 * @param global_size   its events
 * @param first         this plan's first event
 * @param batch_size    this plan's events
 * @param plan          the plan whose writers are filtered
 */
void opt_dispatch_plan_keep_winners(dispatch_table *t, const event_stream *es, int64_t global_first,
                                    int64_t global_size, int64_t first, int64_t batch_size, dispatch_plan *plan);

/** Rows to fetch, grouped by owner. */
typedef struct dispatch_requests {
    int ranks;             /**< R */
    int64_t total;         /**< rows requested in all */
    int64_t *count;        /**< [R] rows asked of each rank */
    int64_t *offset;       /**< [R] where each rank's block starts in vertex and row */
    int32_t *vertex;       /**< [capacity] the ids asked, grouped by owner, in row order within a group */
    int32_t *row;          /**< [capacity] the row each answer fills */
    int64_t capacity;      /**< rows it can hold */
} dispatch_requests;

/** Allocate request lists for @p ranks ranks and up to @p capacity rows. @return 0 or TF_ERR_INPUT. */
int dispatch_requests_create(dispatch_requests *r, int ranks, int64_t capacity, tf_error *err);

/** Release request lists and zero them. Safe on zeroed lists. */
void dispatch_requests_free(dispatch_requests *r);

/**
 * Group rows by owner (a counting sort by rank, stable): row i of @p vertices goes to its
 * owner's block, and out->row says which i each answer fills. Sven passes the plan's V_u; the
 * per-occurrence baselines pass every entry.
 * @param vertices   [count] the vertex of each row
 * @param count      rows (<= out->capacity)
 * @param placement  who owns what
 * @param out        out: the lists
 */
void dispatch_requests_build(const int32_t *vertices, int64_t count, const dispatch_placement *placement,
                             dispatch_requests *out);

#ifdef __cplusplus
}
#endif

#endif
