/**
 * @file opt/async_embeddings.h
 * Twins: ref_stale_embeddings_epoch() (ref/async_embeddings.h), on R ranks instead of R simulated.
 * @brief DGC's adaptive stale embeddings ([DGC] §5.2, Eqs. 6-7) on chapter 06's exchange mode: an
 *        #exchange_policy whose sender re-sends a halo row only when it moved more than theta_r
 *        since it last sent it, and whose receiver fills the other rows from its copy of the same
 *        cache.
 *
 * Twin of the serial simulation, ref_stale_embeddings_epoch() (ref/async_embeddings.h), which runs
 * the same rule for R simulated ranks in one process. What changes, and why it is still equal:
 *  - **the decision** is the simulation's own function, stale_decide_rows(), called by the sender
 *    on the rows it owes one peer in one transfer, keyed by the transfer's #exchange_key (snapshot,
 *    product ordinal since the operator was built): the simulation's (snapshot, ordinal) and pair.
 *    The cache is the copy last *sent*, one per (key, sender, receiver).
 *  - **the wire**: a transfer's first time, epoch 1 and `off` send every row as it is; later a
 *    bitmap of ceil(n / 8) bytes (bit i: row i is fresh), then the fresh rows. The receiver copies
 *    each fresh row into its cache and reads every other one from it, so **sender and receiver caches
 *    hold the same bits** after every transfer (stale_fetcher_compare_caches() checks it). Messages
 *    vary in size, so the exchange sends their sizes first ((R - 1) int64 per transfer and rank,
 *    counted in the exchange's bytes, not in #stale_stats).
 *  - **backward and evaluation are untouched**: gradients go back as they are (the gradient at the
 *    value the receiver used), and products on snapshots at or after the training split, or outside
 *    stale_fetcher_begin_epoch() .. stale_fetcher_end_epoch(), send every row without touching the
 *    caches or the counts, as the simulation does.
 *  - **theta is the same on every rank**: l_1 and l_{r-1} are the epochs' global mean training
 *    losses, which every rank's trainer holds.
 * With theta = 0 (`zero`) only rows bitwise equal to the cached copy are reused, so the run is
 * **bitwise** the plain exchange mode's (values; bytes smaller). For theta > 0 the run equals the
 * simulation's up to fp (the exchange mode's backward adds halo contributions in another order):
 * decisions agree unless a distance lies within that rounding of theta (chapter 05 says what the test
 * found). Ownership: the fetcher owns its caches; the communicator is borrowed.
 */
#ifndef TWOFOLD_OPT_ASYNC_EMBEDDINGS_H
#define TWOFOLD_OPT_ASYNC_EMBEDDINGS_H

#include <stdint.h>

#include "opt/comm.h"
#include "opt/train_partition.h"
#include "ref/async_embeddings.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The caches of one forward transfer (one #exchange_key), from this rank's side. */
typedef struct stale_link_caches {
    int64_t width;          /**< floats per row, fixed when first seen */
    int64_t *send_count;    /**< [R] rows owed to each peer (-1: never sent to it yet) */
    float **send;           /**< [R] [send_count][width] the copy last sent to each peer */
    int64_t *receive_count; /**< [R] rows owed by each peer (-1: never received yet) */
    float **receive;        /**< [R] [receive_count][width] the copy last received from each peer */
} stale_link_caches;

/** DGC's stale fetcher on one rank. */
typedef struct stale_fetcher {
    comm *group;                    /**< the ranks (borrowed) */
    stale_schedule schedule;        /**< the rule */
    int64_t num_snapshots;          /**< T */
    int64_t train_snapshots;        /**< products on snapshots from here on are evaluation: fresh */
    int training;                   /**< 1 between begin_epoch and end_epoch */
    int64_t epoch;                  /**< the epoch being trained, 1-based */
    double first_loss;              /**< l_1 */
    double previous_loss;           /**< l_{r-1} */
    double fraction;                /**< theta / D this epoch */
    int64_t *call_count;            /**< [T] forward transfers keyed so far per snapshot */
    stale_link_caches **links;      /**< [T][call_count] the caches of each key */
    stale_stats stats;              /**< this rank as a sender, training forwards only */
} stale_fetcher;

/**
 * Prepare a fetcher for @p pt (exchange mode), with @p schedule, and make it @p pt's exchange
 * policy. Every rank calls it; no communication.
 */
int stale_fetcher_attach(stale_fetcher *f, partition_trainer *pt, const stale_schedule *schedule, tf_error *err);

/** Release the caches (safe on a zeroed fetcher). The trainer's policy is left dangling: free it too. */
void stale_fetcher_free(stale_fetcher *f);

/** An epoch starts: epoch++, theta / D from the recorded losses (0 in epoch 1). */
void stale_fetcher_begin_epoch(stale_fetcher *f);

/** The epoch's global mean training loss: l_1 in epoch 1, l_{r-1} for the next. */
void stale_fetcher_end_epoch(stale_fetcher *f, double train_loss);

/** One epoch of @p pt through the fetcher: begin, opt_partition_trainer_epoch(), end. */
int opt_stale_embeddings_epoch(stale_fetcher *f, partition_trainer *pt, epoch_report *report, tf_error *err);

/**
 * Test support: every rank sends every sender-side cache to its receiver, which counts the values
 * whose bits differ from its own copy. @p differing and @p compared: summed over ranks, on every
 * rank. Collective; its bytes are a check's (comm::check_bytes), not traffic.
 */
int stale_fetcher_compare_caches(stale_fetcher *f, int64_t *differing, int64_t *compared, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
