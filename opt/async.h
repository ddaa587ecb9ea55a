/**
 * @file opt/async.h
 * Twins: ref_delayed_epoch() and ref_local_average_step() (ref/async.h).
 * @brief The MPI twins of ref/async.h for snapshot training: stale gradients (Sven Eq. 13, the
 *        all-reduce of step t overlapping step t+1) and local updates with periodic averaging
 *        (DynaHB), each with an optional injected straggler (opt/async_straggler.h).
 *
 * Both walk the reference's schedule (trainer_schedule()) with slot j of a step on rank
 * j % size, the data-parallel placement of opt/train.h, on the optimized kernels. What changes,
 * and why the result is still equal to its serial reference:
 *
 *  - **Stale gradients** (`staleness` 1; twin of ref_delayed_epoch()). Each rank packs its
 *    windows' gradients and starts a non-blocking all-reduce of them (comm_iallreduce_sum()),
 *    then waits for the previous step's and applies it: the sum of step t travels while step
 *    t+1 computes. The library here has no progress thread, so the twin calls comm_test()
 *    after every window it trains; without that the all-reduce would only move at the wait.
 *    The last gradient of an epoch is flushed before evaluation. The reduced sum is the
 *    reference's mean up to float addition order: **fp**. On one rank the all-reduce is the
 *    identity and nothing else differs: **bitwise** against the reference on the same kernels.
 *    With `staleness` 0 the same loop calls the *blocking* all-reduce, exactly as
 *    opt_trainer_epoch() does: **bitwise** equal to synchronous training. (Not a non-blocking
 *    one plus a wait: MPI may reduce in another order in its non-blocking algorithms.)
 *  - **Local averaging** (`SYNC_AVERAGE`, every K steps; twin of ref_local_average_step() with
 *    R = the rank count). Rank r *is* replica r: it trains its windows with its own Adam and no
 *    gradient exchange, and every K steps (and at each epoch's end) gathers every rank's
 *    parameters (comm_allgatherv()) and forms the same weighted average with the same function,
 *    local_average_combine(), summed in rank order. The weights come from the schedule, known on
 *    every rank, so none are sent. Same windows, same kernels, same operations in the same
 *    order: **bitwise** equal to the serial simulation after every step, on every rank, when
 *    the simulation runs on opt_kernels too (on the reference kernels: fp, BLAS).
 *
 * Traffic (counted by the comm layer), per epoch of S steps and P parameters on R ranks:
 * stale: S all-reduces of 4P bytes, 2 (R - 1) / R * 4P each; synchronous: the same with 4 (P + 1),
 * the step's status value beside the gradient as the synchronous trainer sends it (the same length
 * keeps MPI's order of addition, so the two stay bitwise); averaging:
 * ceil(S / K) all-gathers, (R - 1) * 4P each; both: two all-reduces of one double (train loss,
 * test MSE). The all-gather moves R/2 times a ring all-reduce's bytes: the price of a sum in
 * rank order, which is what makes the twin bitwise.
 *
 * On one rank no collective is called at all (a rank alone has nothing to exchange).
 */
#ifndef TWOFOLD_OPT_ASYNC_H
#define TWOFOLD_OPT_ASYNC_H

#include <stdint.h>

#include "opt/async_straggler.h"
#include "opt/comm.h"
#include "ref/async.h"
#include "ref/core/error.h"
#include "ref/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How the ranks keep their models together. */
typedef enum sync_mode {
    SYNC_ALLREDUCE,   /**< one gradient all-reduce per step (staleness 0 or 1) */
    SYNC_AVERAGE,     /**< DynaHB: local steps, parameters averaged every K steps */
} sync_mode;

/** "allreduce" or "average". */
const char *sync_mode_name(sync_mode mode);

/** Parse "allreduce" or "average". */
int sync_mode_parse(const char *text, sync_mode *mode, tf_error *err);

/** The options of an asynchronous run. */
typedef struct async_options {
    sync_mode mode;        /**< all-reduce or averaging */
    int64_t every;         /**< K, steps between averages (SYNC_AVERAGE), >= 1 */
    int staleness;         /**< 0 or 1: steps of delay of the gradient (SYNC_ALLREDUCE) */
    straggler straggler;   /**< injected delay (a test option) */
} async_options;

/** All-reduce, staleness 0, every 1, no straggler: synchronous training. */
void async_options_default(async_options *options);

/** Check @p options: one line naming what is wrong (staleness not 0 or 1, K < 1, staleness
 *  with averaging, a straggler rank not below @p ranks). */
int async_options_check(const async_options *options, int ranks, tf_error *err);

/**
 * The gradient reduction with 0 or 1 step of delay, shared by the snapshot twin and (later) the
 * event twin. Owns two packed buffers [size]; two all-reduces may be in flight at the same
 * time only across a push (the previous one is waited for inside it).
 */
typedef struct opt_delayed_gradient {
    comm *c;                    /**< the ranks (borrowed) */
    int staleness;              /**< 0 or 1 */
    int sums;                   /**< 1: the parameters' double sums travel (event models), 0: the float gradients */
    int64_t size;               /**< values per gradient */
    void *buffers[2];           /**< [2][size] floats or doubles: step k's packed gradient in buffers[k % 2] */
    comm_request requests[2];   /**< their all-reduces */
    int64_t pushed;             /**< gradients pushed since the last flush */
} opt_delayed_gradient;

/**
 * A reducer of gradients of @p size values over @p c with @p staleness 0 or 1: of the float
 * gradients (@p sums 0, the snapshot models), or of the double sums rounded once after the
 * all-reduce (@p sums 1, the event models: see parameter.sums in ref/nn/parameters.h).
 */
int opt_delayed_gradient_create(opt_delayed_gradient *r, comm *c, int64_t size, int staleness, int sums, tf_error *err);

/** Release the buffers; one whose all-reduce is still in flight (a rank that failed mid-step) is
 *  left to MPI, which may yet write it. */
void opt_delayed_gradient_free(opt_delayed_gradient *r);

/**
 * Hand over this step's local gradients (those in @p parameters). On *apply = 1 the
 * parameters' gradients hold the all-reduced sum to apply now: this step's for staleness 0,
 * the previous step's for staleness 1 (*apply = 0 on the first push after a flush).
 */
int opt_delayed_gradient_push(opt_delayed_gradient *r, parameter_list *parameters, int *apply, tf_error *err);

/** The end of an epoch: wait for the last all-reduce; *apply = 1 when its sum is now in the gradients. */
int opt_delayed_gradient_flush(opt_delayed_gradient *r, parameter_list *parameters, int *apply, tf_error *err);

/** Let the all-reduce in flight advance (comm_test()); nothing when none is. */
int opt_delayed_gradient_progress(opt_delayed_gradient *r, tf_error *err);

/** A trainer taking part in an asynchronous run. Borrows the trainer and the comm. */
typedef struct async_trainer {
    trainer *tr;               /**< this rank's trainer (its replica in averaging mode) */
    comm *c;                   /**< the ranks */
    async_options options;     /**< the settings */
    opt_delayed_gradient reducer;     /**< SYNC_ALLREDUCE */
    average_clock clock;       /**< SYNC_AVERAGE: when, and the weights */
    float *packed;             /**< [P] this rank's parameters (averaging) */
    float *gathered;           /**< [R + 1][P] every rank's, then the average */
    int64_t *counts;           /**< [2R] all-gather counts and offsets */
    int64_t step;              /**< the next step of the current epoch */
    double loss_sum;           /**< this rank's window losses in the current epoch */
    int64_t steps_applied;     /**< optimizer steps this rank took in the current epoch */
    int64_t averages;          /**< averages taken in the current (or just finished) epoch */
    double blocked_seconds;    /**< wall time in the step's exchange (push, flush, average), all epochs */
} async_trainer;

/**
 * Prepare @p tr for an asynchronous run on @p c: optimized kernels and, on more than one rank,
 * opt_trainer_parallel()'s check that every rank starts from the same parameters. Every rank
 * calls it with identically created trainers and the same @p options.
 */
int opt_async_create(async_trainer *at, trainer *tr, comm *c, const async_options *options, tf_error *err);

/** Release the buffers (the trainer and the comm are the caller's). */
void opt_async_free(async_trainer *at);

/**
 * One step on every rank: local gradient, straggler delay, then the mode's exchange. After the
 * epoch's last step (flush or final average): sums the losses, counts the epoch, evaluates
 * (opt_trainer_evaluate()), fills @p report and sets *epoch_done = 1; otherwise *epoch_done = 0.
 */
int opt_async_step(async_trainer *at, const snapshot_seq *seq, epoch_report *report, int *epoch_done, tf_error *err);

/** The steps of one whole epoch. */
int opt_async_epoch(async_trainer *at, const snapshot_seq *seq, epoch_report *report, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
