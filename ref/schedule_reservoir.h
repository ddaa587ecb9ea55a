/**
 * @file ref/schedule_reservoir.h
 * @brief DynaHB's batch reservoir: batches of every size kept and handed out again, so building
 *        them costs less than training on them ([DynaHB] §5.2, Algorithm 3, Eq. 4-5).
 *
 * For action a (a batch size), at most max_a = max(floor(N T / (N_S^a N_V^a) / N_A), 1) batches
 * are ever built (Eq. 5; Algorithm 3 writes N_H for N_A, the number of actions). A request for
 * action a reuses a stored batch with probability p_a = stored_a / max_a (Eq. 4), else builds the
 * next fresh one; once max_a are stored every request reuses.
 *
 * The **ledger** makes those decisions, and only from the count of requests so far: request c
 * draws from rng_seed_keyed(seed, RESERVOIR_STREAM, c), and stored_a counts the batches of a
 * handed out so far. (The paper's N_rsv counts the batches its generator threads have *built*,
 * which depends on thread timing; counting what was handed out is the decision that makes any
 * number of generator threads give the same batches.) Fresh batch b of action a is built from
 * key (seed, RESERVOIR_BATCH_STREAM + a, b). So the serial reservoir here and the threaded twin
 * (opt/schedule_reservoir.h) hand out the same batches bit for bit. DynaHB's fallback to a
 * snapshot batch when memory runs short is left out (it follows a GPU-memory rule and changes
 * which batches are drawn).
 *
 * Ownership: the reservoir owns every batch it built until it is freed; get() lends them.
 */
#ifndef TWOFOLD_REF_SCHEDULE_RESERVOIR_H
#define TWOFOLD_REF_SCHEDULE_RESERVOIR_H

#include <stdint.h>

#include "ref/core/error.h"
#include "ref/schedule_hybrid.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The rng stream of the ledger's decisions. */
#define RESERVOIR_STREAM 0x52535256ull
/** Fresh batches of action a come from stream RESERVOIR_BATCH_STREAM + a. */
#define RESERVOIR_BATCH_STREAM 0x52534200ull

/** The decisions: which batch each request gets. */
typedef struct reservoir_ledger {
    int actions;            /**< N_A */
    int64_t *max_batches;   /**< [actions] max_a */
    int64_t *stored;        /**< [actions] batches of a handed out so far (built, kept) */
    int64_t calls;          /**< requests so far */
    uint64_t seed;          /**< of every decision and every fresh batch */
} reservoir_ledger;

/** A ledger for @p actions sizes @p sizes [actions] on @p vertices x @p train_snapshots. */
int reservoir_ledger_create(reservoir_ledger *l, int actions, const hybrid_sizes *sizes, int64_t vertices,
                            int64_t train_snapshots, uint64_t seed, tf_error *err);

/** Release a ledger (safe on a zeroed one). */
void reservoir_ledger_free(reservoir_ledger *l);

/** Decide request number l->calls for @p action: *fresh = 1 and *index the new batch's index, or
 *  *fresh = 0 and the stored index to reuse. */
void reservoir_ledger_next(reservoir_ledger *l, int action, int *fresh, int64_t *index);

/** The serial reservoir: fresh batches built when the ledger asks for them. */
typedef struct ref_reservoir {
    reservoir_ledger ledger;       /**< the decisions */
    const hybrid_source *source;   /**< borrowed */
    hybrid_sizes *sizes;           /**< [actions] */
    hybrid_batch **store;          /**< [actions][max_a] */
    int32_t *scratch;              /**< [num_nodes] all -1 */
} ref_reservoir;

/** A reservoir over @p source for @p actions sizes @p sizes [actions]. */
int ref_reservoir_create(ref_reservoir *r, const hybrid_source *source, int actions, const hybrid_sizes *sizes,
                         uint64_t seed, tf_error *err);

/** The next batch of @p action (lent: valid until the reservoir is freed). */
int ref_reservoir_get(ref_reservoir *r, int action, const hybrid_batch **batch, tf_error *err);

/** Release the reservoir and every batch it built. */
void ref_reservoir_free(ref_reservoir *r);

#ifdef __cplusplus
}
#endif

#endif
