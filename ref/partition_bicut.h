/**
 * @file ref/partition_bicut.h
 * @brief Sven's Re-FlexBiCut (TPDS section 4.2, Eqs. 2-6, Algorithm 3): where to keep each
 *        vertex's memory and mail so that no rank's communication stands out.
 *
 * **The problem** (CBG-P, read as the paper's hardness proof reads it: min-max multiway cut).
 * Trainer j needs vertex v's row ω(j, v) times per epoch; S(v) = sum_k ω(k, v). A placement puts v
 * on one rank, whose W_j are the vertices it holds. A rank receives the rows it needs and does not
 * hold, and serves the rows others need from it:
 *
 *     recv_j = sum_{v not in W_j} ω(j, v)      serve_j = sum_{v in W_j} (S(v) - ω(j, v))
 *     cap_j  = recv_j + serve_j                 ζ(W) = max_j cap_j     (minimize)
 *
 * The printed Eq. 5 sums each trainer's *local* weight, sum_{v in W_j} ω(j, v), which contradicts
 * the paper's own NP-hardness reduction (a min-max cut) and would be minimized by placing nothing
 * where it is used; bicut_literal_cost() computes it for reference only.
 *
 * **Demand** (the paper's "pre-sampling", ω left undefined there): partition_event_demand() walks
 * the training events in global batches of R x local_batch consecutive events, trainer j's slice
 * being the j-th block of local_batch events (the dispatch trainer's order). In a slice, each
 * distinct vertex among the positive roots and their `neighbours` most recent interactions before
 * the event adds 1 to ω(j, v) (one fetch of its row per batch: what deduplicated dispatch moves),
 * and each distinct positive root 1 more (its write-back). Negatives are excluded: drawn
 * uniformly, they add the same expected demand wherever v is placed.
 *
 * **The BiCut step needs a substitute.** The paper gives no BiCut implementation, and its line 9
 * reassigns W_i ∩ W_j, empty for disjoint sets. In this bipartite trainer-vertex graph an exact
 * s-t min cut of t_i against the other trainers decomposes per vertex (v goes with t_i iff
 * ω(i, v) > S(v) - ω(i, v)), so balance can only come from a capacity bound and the reassignment.
 * This project's substitute:
 *  1. **Partition stage** (Algorithm 3 lines 3-7): a vertex with a strict majority demander goes
 *     to it (the exact per-vertex cut); the other demanded vertices, in order of (-S(v), id), each
 *     go to the rank giving the smallest (ζ, sum_j cap_j) after the move, ties to the lowest rank;
 *     vertices nobody demands cost nothing anywhere and are dealt round-robin by id.
 *  2. **Flexible reassignment** (lines 8-12): moving v from a to b changes two caps only,
 *     cap_a += 2 ω(a, v) - S(v) and cap_b += S(v) - 2 ω(b, v). Passes over the vertices in id order
 *     take, for each, the best destination when it makes the caps sorted in decreasing order
 *     lexicographically smaller (ζ first, then the next largest, ...). Only strict decreases are
 *     accepted, so ζ never rises and the search ends (the paper's "if ζ >= ζ'" accepts ties, which
 *     can cycle); it stops after a pass without a move, or at 100 N moves (reported).
 * The result is a local optimum under single moves. Theorem 2's O(log^2 N) ratio is not claimed
 * for it; verify/test_partition.c measures the ratio to the brute-force optimum on small cases.
 */
#ifndef TWOFOLD_REF_PARTITION_BICUT_H
#define TWOFOLD_REF_PARTITION_BICUT_H

#include <stdint.h>

#include "ref/core/error.h"
#include "ref/data/events.h"
#include "ref/data/temporal_csr.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Demand ω of every rank for every vertex. Owns its array. */
typedef struct bicut_demand {
    int ranks;          /**< R */
    int64_t num_nodes;  /**< N */
    int64_t batches;    /**< global batches it was measured over (0 for a demand made by hand) */
    int64_t *weight;    /**< [R][N] ω(j, v) */
} bicut_demand;

/** Allocate a zero demand of @p ranks x @p num_nodes (0 batches). */
int bicut_demand_alloc(bicut_demand *d, int ranks, int64_t num_nodes, tf_error *err);

/** Release @p d's array. */
void bicut_demand_free(bicut_demand *d);

/**
 * The demand @p out of training on events @p first .. @p end - 1 of @p es in global batches of
 * @p ranks x @p local_batch events (file comment). @p history is temporal_csr_build() of @p es, where
 * the @p neighbours most recent interactions of each root are looked up (10 for TGN, 0 for JODIE).
 * Fails (@p err) for a range outside the stream, a batch or rank count below 1, or without memory.
 */
int partition_event_demand(const event_stream *es, const temporal_csr *history, int64_t first, int64_t end,
                           int64_t local_batch, int ranks, int neighbours, bicut_demand *out, tf_error *err);

/** recv_j and serve_j of the placement @p owner [N] under demand @p d: @p received [R] and @p served [R] out.
 *  They may be the same array, which then holds cap_j = recv_j + serve_j. */
void bicut_costs(const bicut_demand *d, const int32_t *owner, int64_t *received, int64_t *served);

/** ζ = max_j (recv_j + serve_j). */
int64_t bicut_balance_cost(const bicut_demand *d, const int32_t *owner);

/** The printed Eq. 5 read literally: max_j sum_{v in W_j} ω(j, v) (for reference, not minimized). */
int64_t bicut_literal_cost(const bicut_demand *d, const int32_t *owner);

/** Eq. 2's residual R = J C_max - C at its largest: C_max - min_{i != j} C_ij, where C_ij is the
 *  rows rank i serves rank j (0 on one rank). */
int64_t bicut_residual_max(const bicut_demand *d, const int32_t *owner);

/** What Re-FlexBiCut did. Owns its trace. */
typedef struct bicut_stats {
    int64_t initial_cost;   /**< ζ after the partition stage */
    int64_t final_cost;     /**< ζ at the end */
    int64_t moves;          /**< accepted moves */
    int hit_move_cap;       /**< 1 if it stopped at 100 N moves */
    int64_t *trace;         /**< [moves] ζ after each accepted move */
} bicut_stats;

/** Re-FlexBiCut on demand @p d as the file comment describes: @p owner [N] out, @p stats (may be NULL)
 *  what it did; fails (@p err) only without memory. */
int ref_reflexbicut(const bicut_demand *d, int32_t *owner, bicut_stats *stats, tf_error *err);

/** Release @p s's trace. */
void bicut_stats_free(bicut_stats *s);

#ifdef __cplusplus
}
#endif

#endif
