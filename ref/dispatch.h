/**
 * @file ref/dispatch.h
 * @brief Sven's redundancy-free organization of a batch (Algorithm 2), the plain reference:
 *        unique vertices, who writes back, and how to restore every occurrence's row.
 *
 * A batch of a memory-based TGNN reads the node memory once per *entry* (every occurrence of a
 * vertex in the batch graph: roots [src; dst; neg] and TGN's sampled neighbours, event_model.h)
 * and writes it once per positive endpoint. Many entries name the same vertex; all of them read
 * the same pre-batch row, and of a vertex's writes only the last one survives. Sven
 * ([Sven] §3.1.1, Algorithm 2) therefore organizes a batch's entries V_o (N of them) as
 *
 *     V_u     the unique vertices, in order of first appearance in V_o          [U]
 *     Psi     position[k]: where entry k's vertex is in V_u, V_o[k] = V_u[position[k]]   [N]
 *     Phi     writer[i]: the entry whose write of V_u[i] survives, or -1 if none        [U]
 *
 * so the rows of V_u are moved once (dispatch) and expanded by Psi into the per-entry copies the
 * reference reads: rows_o[k] = rows_u[position[k]], an exact copy; and only Phi's entries are written
 * back (aggregation). The redundancy the paper measures is eta = 1 - U / N ([Sven] Eq. 1): eta_1
 * over all entries (dispatch), eta_2 over the 2B positive endpoints (aggregation).
 *
 * **The write key.** Entry k of a batch of B events starting at event `first` writes iff it is a
 * positive root (k < 2B); its key is 2 (first + k mod B) + k / B: event index first, and within an
 * event the destination (role 1) after the source (role 0). The surviving write of a vertex is the
 * one with the largest key: event_model.h's conflict rule, "largest event index wins, dst after
 * src". The paper's line 8 ("replace") gives the latest interaction only when V_o is flattened in
 * time order; entries here are [src; dst; neg; neighbours], so Phi is an explicit maximum over keys.
 * Negatives and neighbours have key -1 and never write.
 *
 * **Errata of Algorithm 2** (chapters/04-dispatch.md): line 4 tests "v_i not in V", meaning V_u; the
 * text says l indexes V_o, but it is V_u (as line 10 has it); and its linear search of V_u makes it
 * O(N U), which ref_dispatch_plan() keeps on purpose (it is the oracle; opt/dispatch.h is the
 * O(N) twin with a direct-address table).
 *
 * Ownership: dispatch_plan_create() allocates the three arrays for a capacity of entries;
 * dispatch_plan_free() releases them. Plans are reused batch after batch.
 */
#ifndef TWOFOLD_REF_DISPATCH_H
#define TWOFOLD_REF_DISPATCH_H

#include <stddef.h>
#include <stdint.h>

#include "ref/core/error.h"
#include "ref/models/event_model.h"
#include "ref/models/node_memory.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Algorithm 2's output for one batch. */
typedef struct dispatch_plan {
    int64_t entries;    /**< N = |V_o| */
    int64_t unique;     /**< U = |V_u| */
    int64_t capacity;   /**< the most entries it can hold */
    int32_t *vertex;    /**< [capacity] V_u: unique vertices in order of first appearance (first U used) */
    int32_t *position;  /**< [capacity] Psi: V_o[k] = V_u[position[k]] (first N used) */
    int64_t *writer;    /**< [capacity] Phi: the entry whose write of V_u[i] survives, or -1 (first U used) */
} dispatch_plan;

/**
 * Allocate a plan for up to @p capacity entries (at least 1).
 * @return 0, or TF_ERR_INPUT (no memory; nothing is left allocated)
 */
int dispatch_plan_create(dispatch_plan *plan, int64_t capacity, tf_error *err);

/** Release a plan and zero it. Safe on a zeroed plan. */
void dispatch_plan_free(dispatch_plan *plan);

/**
 * The write key of entry @p entry of a batch of @p batch_size events from event @p first:
 * 2 (first + entry mod B) + entry / B for a positive root (entry < 2B), -1 otherwise.
 */
int64_t dispatch_write_key(int64_t entry, int64_t first, int64_t batch_size);

/**
 * Algorithm 2, literally: for each entry in order, search V_u for its vertex; append it (with
 * its entry as writer when it writes) if absent; else keep the writer of larger key; record its
 * position in Psi. O(N U).
 * @param entries     [count] V_o, the vertex of every entry
 * @param count       N
 * @param first       the batch's first event
 * @param batch_size  B (its first 2B entries are the positive roots)
 * @param plan        out: filled (its capacity must be >= count)
 * @param err         out: capacity too small, a negative vertex id
 * @return 0, or TF_ERR_INPUT
 */
int ref_dispatch_plan(const int32_t *entries, int64_t count, int64_t first, int64_t batch_size, dispatch_plan *plan,
                      tf_error *err);

/**
 * Restore: rows_o[k] = rows_u[position[k]] for k < count, rows of @p row_bytes bytes (packed rows,
 * copied as bytes, so the copy is exact whatever they hold).
 * @param rows_u     [U][row_bytes] one row per unique vertex
 * @param position   [count] Psi
 * @param count      N
 * @param row_bytes  bytes of a row
 * @param rows_o     [count][row_bytes] out
 */
void ref_dispatch_expand(const void *rows_u, const int32_t *position, int64_t count, size_t row_bytes, void *rows_o);

/**
 * The aggregation through Phi: each V_u[i] with a writer k is written once, with the s' of entry
 * k, the message event_model_entry_message() builds for it and its event's time. With Phi the
 * largest-key writer, the memory ends bitwise as event_model_write_memory() leaves it (which
 * writes every positive endpoint in key order); verify/test_dispatch.c checks both, and that an
 * earliest-writer Phi is caught.
 * @param m       the model
 * @param tape    the batch's forward tape (its s')
 * @param batch   the batch
 * @param plan    a plan of the tape's entries
 * @param memory  the node memory written
 */
void ref_dispatch_write_memory(const event_model *m, const event_tape *tape, const event_batch *batch,
                               const dispatch_plan *plan, node_memory *memory);

/** eta = 1 - unique / total ([Sven] Eq. 1: duplicates over all); 0 when total is 0. The counts
 *  (N1 = plan->entries, U1 = plan->unique, N2 = 2B, U2 = writers) are summed over batches and
 *  ranks by the twin's #dispatch_counts (opt/dispatch_batch.h). */
double dispatch_eta(int64_t total, int64_t unique);

#ifdef __cplusplus
}
#endif

#endif
