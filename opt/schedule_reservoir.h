/**
 * @file opt/schedule_reservoir.h
 * Twins: ref_reservoir_create() and ref_reservoir_get() (ref/schedule_reservoir.h).
 * @brief The batch reservoir with generator threads: DynaHB's producer threads build fresh
 *        batches ahead of training ([DynaHB] §5.2, Algorithm 3).
 *
 * Twin of ref_reservoir (ref/schedule_reservoir.h): the same batches, bit for bit, for the same
 * requests, on any number of threads. What changes and why it is still equal:
 *  - T generator threads (1 <= T <= actions) each serve the actions a = t, t + T, ... and build
 *    their fresh batches 0, 1, 2, ... in order, at most 4 ahead of what training has taken, up
 *    to max_a; building runs outside the lock, the lock guards only the counts (the paper's
 *    "lock only the append", not its code's global lock around every request);
 *  - the decisions are the shared ledger's (reservoir_ledger_next()), made by the consumer from
 *    the request count alone, and fresh batch b of action a comes from key (seed, a, b), so
 *    which thread built it and when never matters; one producer per action builds its batches
 *    in index order, so batch b is ready exactly when it is wanted or waited for.
 * A generator's error is kept and returned by the next request. Shutdown sets a stop flag, wakes
 * both condition variables and joins the threads.
 *
 * Ownership: the reservoir owns its threads and every batch; get() lends them until it is freed.
 */
#ifndef TWOFOLD_OPT_SCHEDULE_RESERVOIR_H
#define TWOFOLD_OPT_SCHEDULE_RESERVOIR_H

#include "ref/core/error.h"
#include "ref/schedule_reservoir.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Fresh batches a generator may build ahead of training, per action. */
#define RESERVOIR_AHEAD 4

/** The threaded reservoir (opaque: its threads, locks and store are opt/schedule_reservoir.c's). */
typedef struct opt_reservoir opt_reservoir;

/** Start a reservoir with @p threads generator threads over @p source for @p sizes [actions]. */
int opt_reservoir_create(opt_reservoir **r, const hybrid_source *source, int actions, const hybrid_sizes *sizes,
                         int threads, uint64_t seed, tf_error *err);

/** The next batch of @p action (lent until the reservoir is freed); waits for its generator. */
int opt_reservoir_get(opt_reservoir *r, int action, const hybrid_batch **batch, tf_error *err);

/** Stop and join the threads and release every batch (safe on NULL). */
void opt_reservoir_free(opt_reservoir *r);

#ifdef __cplusplus
}
#endif

#endif
