/**
 * @file opt/async_microbatch.h
 * Twins: event_trainer_run_batch() (ref/train_events.h), one batch cut into micro-batches.
 * @brief Level 1 of Sven's pipeline ([Sven] §3.3.2): a rank's slice of a training batch cut into
 *        n micro-batches whose row fetch (a non-blocking all-to-all-v) overlaps the compute of the
 *        micro-batch before.
 *
 * Twin of steps 2-5 of opt/train_events.h for one training batch in Sven's mode. What changes:
 *
 *  - **Plan** (microbatch_split_build(), no memory, no MPI, so the prefetch thread can run it):
 *    the slice's b events are cut into n contiguous ranges [floor(i b / n), floor((i + 1) b / n));
 *    each gets its own entries (event_model_collect() of its events: the same entries the whole
 *    slice has, since a root's neighbours are a function of the stream); each entry is mapped to
 *    its row of the slice's V_u; a V_u row belongs to the first micro-batch reading it; within
 *    every owner's block the request list is reordered (stably) by that micro-batch.
 *  - **Counts**: one all-to-all of n counts per pair of ranks (rows asked for each micro-batch)
 *    instead of one; the ids once per batch, as before.
 *  - **Fetch**: owners pack every asked row from the pre-batch memory at the batch start;
 *    micro-batch i's rows move in their own comm_ialltoallv(), posted before micro-batch i - 1 is
 *    computed and waited for after. Every row moves once: row and id bytes are unchanged; the
 *    count exchange grows by 8 (n - 1) R (R - 1) bytes per training batch.
 *  - **Compute**: each micro-batch runs the memory updater, the embedding, the loss terms (the
 *    batch's denominator B) and backward on its own entries, adding into the gradients; its
 *    roots' s' go back into the slice's tape for the write-back.
 *  - The write-back (step 8) runs once after the last micro-batch, unchanged: owners commit only
 *    after every read of the batch has been served (the pre-batch invariant).
 *
 * **Why it is still equal.** Every entry's row is the pre-batch row (the owners pack before any
 * write), and s' is computed row by row, so the memory written is **bitwise** the plain step's.
 * The loss sums and the gradients add the micro-batches' parts in another order: **fp** (1e-5);
 * n = 1 does exactly the plain step's operations: **bitwise**.
 *
 * Ownership: microbatch_split_create() allocates for the trainer's batch size; each build replaces
 * the tapes; microbatch_split_free() releases all.
 */
#ifndef TWOFOLD_OPT_ASYNC_MICROBATCH_H
#define TWOFOLD_OPT_ASYNC_MICROBATCH_H

#include <stdint.h>

#include "opt/async.h"
#include "opt/train_events.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The most micro-batches a batch is cut into. */
#define MICROBATCH_MAX 8

/** A slice cut into micro-batches, planned. */
typedef struct microbatch_split {
    int count;                              /**< n; 0: the batch runs whole (not a training batch) */
    int ranks;                              /**< R */
    int64_t begin[MICROBATCH_MAX + 1];      /**< micro-batch i: slice events begin[i] .. begin[i + 1] - 1 */
    event_batch batch[MICROBATCH_MAX];      /**< its events */
    event_tape tape[MICROBATCH_MAX];        /**< its entries */
    int64_t entry_offset[MICROBATCH_MAX + 1]; /**< micro-batch i's entries start here in position */
    int64_t capacity;                       /**< entries of a whole slice, at most */
    int32_t *position;                      /**< [capacity] the V_u row every entry reads */
    int32_t *first;                         /**< [capacity] the first micro-batch reading each V_u row */
    int64_t *asked;                         /**< [MICROBATCH_MAX][R] rows asked of each rank, by first reader */
    int32_t *vertex;                        /**< [capacity] scratch for the reordering */
    int32_t *row;                           /**< [capacity] scratch for the reordering */
} microbatch_split;

/** Allocate a split for @p s's batch size. @return 0, or TF_ERR_INPUT (no memory). */
int microbatch_split_create(microbatch_split *split, const dispatch_setup *s, tf_error *err);

/** Release everything and zero it. Safe on a zeroed split. */
void microbatch_split_free(microbatch_split *split);

/**
 * Cut planned batch @p b (Sven's mode) into @p n micro-batches and reorder its requests by first
 * reader (above). Reads only read-only data: safe on the prefetch thread.
 * @param split    a created split (its previous content is replaced)
 * @param b        a built batch (its requests are reordered)
 * @param s        the setup it was built with
 * @param n        1 .. MICROBATCH_MAX
 * @param scratch  a table over the vertex ids, all -1 (left so)
 * @param err      out: a bad n, no memory
 * @return 0, or TF_ERR_INPUT
 */
int microbatch_split_build(microbatch_split *split, dispatch_batch *b, const dispatch_setup *s, int n,
                           dispatch_table *scratch, tf_error *err);

/**
 * Steps 2-5 of tr->batch through the micro-batches of @p split: counts, ids, the overlapped row
 * fetches, and per micro-batch update, embedding, loss terms and backward into zeroed gradients;
 * the loss sums all-reduced. Collective (every rank, the same n). @p reducer's all-reduce in
 * flight, if any, is driven between the stages.
 * @param tr       the trainer, its batch planned and split (Sven's mode)
 * @param split    the split of tr->batch
 * @param reducer  the gradient reducer whose request may be in flight (progress only)
 * @param loss     out: the global batch's loss
 * @param err      out: what failed
 * @return 0, or an error code
 */
int opt_microbatch_forward_backward(opt_event_trainer *tr, const microbatch_split *split,
                                    opt_delayed_gradient *reducer, double *loss, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
