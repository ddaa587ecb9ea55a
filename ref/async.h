/**
 * @file ref/async.h
 * @brief The serial references of two kinds of staleness in snapshot training: Sven's stale
 *        gradients (one step of delay) and DynaHB's local updates with periodic model
 *        averaging, each simulated in one process so that the MPI twins (opt/async.h) can be
 *        checked against them step by step.
 *
 * **Stale gradients** ([Sven] §3.3.3, Eq. 13): w_{t+1} = w_t - Adam(grad f(w_{t-1})). The
 * gradient of step t is applied one step late, so the all-reduce of step t can run while step
 * t+1 computes. Schedule of an epoch of S steps:
 *
 *     step k:  g_k = the step's mean window gradient at the current parameters
 *              k >= 1: apply g_{k-1} (one optimizer step);  keep g_k
 *     flush:   apply g_{S-1}
 *
 * S optimizer steps per epoch, as in synchronous training; the first step of an epoch applies
 * nothing and the flush applies the last gradient before evaluation, so an epoch ends with no
 * pending gradient (a checkpoint needs none). Synchronous data parallelism does not depend on
 * the rank count, so neither does this reference: it is the plain trainer with the delay.
 *
 * **Local updates and averaging** ([DynaHB] §4.1 and Algorithm 2): R replicas, each with its
 * own parameters and its own Adam state. Slot j of every step belongs to replica j % R (the
 * data-parallel placement, opt_trainer_rank_of()); replica i trains its n_i windows of the step
 * with each loss scaled by 1 / n_i and takes its own optimizer step, no gradient exchange
 * (a replica with no window in the step takes none: a zero-gradient Adam step would still move
 * it through its momentum). After every `every` steps, and after the last step of every epoch,
 * every replica's parameters become the weighted average
 *
 *     x = (sum_i m_i x_i) / (sum_i m_i),   m_i = windows replica i trained since the last average
 *
 * (local_average_combine()). Adam's moments are never averaged (DynaHB's code does not). The
 * weights reduce to DynaHB's 1/M when replicas train equally many windows; with unequal counts
 * they make one SGD step per average equal the synchronous step: sum_i (n_i/n)(x - lr g_i) =
 * x - lr sum_w g_w / n, up to rounding. With Adam the two differ by design (each replica's
 * moments see its own gradients). The interval is a step count, not DynaHB's wall-clock T_mu,
 * so a run replays.
 *
 * Ownership: each create() allocates, each free() releases (safe after a failed create).
 */
#ifndef TWOFOLD_REF_ASYNC_H
#define TWOFOLD_REF_ASYNC_H

#include <stdint.h>

#include "ref/core/error.h"
#include "ref/nn/parameters.h"
#include "ref/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- stale gradients ------------------------------------------------------------------------- */

/** One step of delay between a gradient and its update. Owns pending [size]. */
typedef struct delayed_gradient {
    float *pending;     /**< [size] the gradient kept for the next step, packed in list order */
    float *current;     /**< [size] scratch: this step's gradient while the swap runs */
    int64_t size;       /**< parameters_size() of the list it was made for */
    int has_pending;    /**< 1 when pending holds a gradient not yet applied */
} delayed_gradient;

/** Make a delay for @p parameters' layout, with nothing pending. */
int delayed_gradient_create(delayed_gradient *d, const parameter_list *parameters, tf_error *err);

/** Release the buffers. */
void delayed_gradient_free(delayed_gradient *d);

/**
 * Keep this step's gradients (those in @p parameters) and put the previous step's in their
 * place. @return 1 when an update is due with them, 0 on the first step of an epoch (nothing
 * pending: the gradients are left as they were and must not be applied).
 */
int delayed_gradient_exchange(delayed_gradient *d, parameter_list *parameters);

/** The end of an epoch: the pending gradient into @p parameters. @return 1 if one was pending. */
int delayed_gradient_flush(delayed_gradient *d, parameter_list *parameters);

/**
 * One epoch of @p tr with staleness 1 (the schedule above), then trainer_close_epoch() and
 * the test MSE, as trainer_epoch() does: the serial reference of the stale-gradient twin.
 * @p report->steps counts the optimizer steps (S, the flush included).
 */
int ref_delayed_epoch(trainer *tr, const snapshot_seq *seq, epoch_report *report, tf_error *err);

/* ---- local updates and averaging ------------------------------------------------------------ */

/** The replica (or rank) among @p replicas that trains slot @p slot of a step: slot % replicas,
 *  the data-parallel placement of opt_trainer_rank_of() (verify/test_async.c checks they agree). */
int replica_of_slot(int64_t slot, int replicas);

/** How many windows of step @p step replica @p replica trains: its non-empty slots. */
int64_t replica_windows_in_step(const train_schedule *s, int64_t step, int replica, int replicas);

/** When the averages fall, and each replica's weight in them. Owns windows_since [replicas]. */
typedef struct average_clock {
    int replicas;              /**< R */
    int64_t every;             /**< K: steps between averages (>= 1) */
    int64_t steps_since;       /**< steps since the last average */
    int64_t *windows_since;    /**< [replicas] m_i: windows each replica trained since the last average */
} average_clock;

/** A clock for @p replicas (>= 1) replicas averaging every @p every (>= 1) steps. */
int average_clock_create(average_clock *c, int replicas, int64_t every, tf_error *err);

/** Release the counts. */
void average_clock_free(average_clock *c);

/**
 * Count step @p step of @p s, just taken by every replica. @return 1 when an average is due
 * after it: `every` steps since the last, or the epoch's last step. The caller averages with
 * windows_since as weights, then calls average_clock_reset().
 */
int average_clock_tick(average_clock *c, const train_schedule *s, int64_t step);

/** Start a new interval: every count back to zero. */
void average_clock_reset(average_clock *c);

/**
 * The weighted average of @p count replicas' flat parameters: out[k] = (float)((sum_i
 * (double)w_i * (double)x_i[k]) / (double)sum_i w_i), i ascending. Every product and partial sum is
 * exact in double when the replicas agree (a float times an integer below 2^29), so replicas
 * that are equal average to exactly their value, whatever the weights.
 * @param replicas  [count][size] replica i's values at replicas + i * size
 * @param weights   [count] w_i >= 0, not all zero
 * @param count     how many replicas
 * @param size      values per replica
 * @param out       [size] the average; may alias no replica
 */
void local_average_combine(const float *replicas, const int64_t *weights, int count, int64_t size, float *out);

/** R replicas of a snapshot trainer stepped serially: DynaHB's protocol in one process. */
typedef struct replica_set {
    int count;                /**< R */
    trainer *replicas;        /**< [count], created identically; each its own model and optimizer */
    average_clock clock;      /**< when to average, with which weights */
    int64_t step;             /**< the next step of the current epoch */
    double loss_sum;          /**< window losses of the current epoch, replica after replica */
    int64_t averages;         /**< averages taken in the current (or just finished) epoch */
    float *packed;            /**< [count + 1][P] the replicas' values while averaging, then their average */
} replica_set;

/**
 * Create @p replicas (>= 1) trainers on @p seq with the same @p config and @p options (so the
 * same starting parameters), averaging every @p every (>= 1) steps. The models run on the
 * reference kernels; a caller may point each replica's model.kernels elsewhere.
 */
int replica_set_create(replica_set *rs, const snapshot_seq *seq, const model_config *config,
                       const train_options *options, int replicas, int64_t every, tf_error *err);

/** Release every replica. */
void replica_set_free(replica_set *rs);

/**
 * One step of every replica, then the average if due. After the epoch's last step: counts the
 * epoch on every replica, evaluates the (averaged) model, fills @p report and sets
 * *epoch_done = 1 (0 otherwise; @p report is then untouched).
 */
int ref_local_average_step(replica_set *rs, const snapshot_seq *seq, epoch_report *report, int *epoch_done,
                           tf_error *err);

/** The steps of one whole epoch (ref_local_average_step() until the epoch is done). */
int ref_local_average_epoch(replica_set *rs, const snapshot_seq *seq, epoch_report *report, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
