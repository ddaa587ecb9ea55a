/**
 * @file ref/schedule_hybrid_train.h
 * @brief Training on hybrid batches (ref/schedule_hybrid.h): fixed sizes or the DQN's
 *        (ref/schedule_dqn.h), batches built when needed or from a reservoir.
 *
 * A step takes `batch` hybrid batches (slots), applies Adam to the mean of their gradients (each
 * batch's loss is already a mean), and counts one step. Slot j of the run's step k trains batch
 * number q = k * batch + j; with fresh batches, q keys its draws (rng_seed_keyed(seed,
 * HYBRID_STREAM, q)), so every rank count sees the same batches. An epoch is
 * ceil(N T_train / (N_V N_S batch)) steps with the middle action's sizes (5 % of the vertices,
 * 20 % of the training snapshots): the vertex-snapshot pairs covered once in expectation,
 * whatever the sizes in use. Then the test evaluation, as for snapshot batches.
 *
 * With the DQN, interval k is `adjust_every` steps under action a_k. At its end: L_k, the mean
 * batch loss, and W_k, the work (rows and edges) of its batches; for k >= 1 the relative drop
 * Delta_k = (L_{k-1} - L_k) / L_{k-1}; for k >= 2 the transition (Delta_{k-1}, a_k,
 * R(W_{k-1}, W_k, Delta_{k-1}, Delta_k), Delta_k) is remembered and the agent trains once; for
 * k >= 1 the next action is chosen from Delta_k (a_1 = a_0 = the middle action).
 *
 * The ranks: one process runs every slot. The data-parallel twin (opt/schedule_hybrid_train.h) runs
 * slot j on rank j mod R through the #hybrid_ranks hooks, which is why they exist: ref includes
 * nothing of opt.
 *
 * Ownership: a run owns its source, agent, reservoir and scratch; the trainer and sequence are
 * borrowed.
 */
#ifndef TWOFOLD_REF_SCHEDULE_HYBRID_TRAIN_H
#define TWOFOLD_REF_SCHEDULE_HYBRID_TRAIN_H

#include <stdint.h>

#include "ref/core/error.h"
#include "ref/schedule_dqn.h"
#include "ref/schedule_hybrid.h"
#include "ref/schedule_reservoir.h"
#include "ref/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How to batch. */
typedef struct hybrid_options {
    int adjust_dqn;            /**< 1: the DQN picks among the nine sizes; 0: the fixed sizes */
    int64_t adjust_every;      /**< steps per DQN interval (10) */
    hybrid_sizes fixed;        /**< fixed sizes (0: the middle action's) */
    int balanced_groups;       /**< (10) */
    int64_t batch;             /**< batches per step (1) */
    int reservoir;             /**< 0: fresh batches built when needed; >= 1: a reservoir (threads in opt) */
    uint64_t seed;             /**< batch draws and the DQN (1) */
} hybrid_options;

/** The defaults above. */
void hybrid_options_default(hybrid_options *o);

/** Where batches come from: fresh, or a reservoir (the ref one here; opt installs its own). */
typedef struct batch_supplier {
    /** Batch number @p number of action @p action: *batch is lent until release(). */
    int (*get)(void *context, int action, uint64_t number, const hybrid_batch **batch, tf_error *err);
    /** Done with a batch get() lent (NULL: nothing to do). */
    void (*release)(void *context, const hybrid_batch *batch);
    void *context;  /**< passed to get() and release() */
} batch_supplier;

/** The ranks a hybrid epoch runs on: NULL for one process. */
typedef struct hybrid_ranks {
    int rank;       /**< this rank */
    int size;       /**< the ranks */
    /** Sum the gradients over the ranks, in place. */
    int (*sum_gradients)(void *context, parameter_list *list, tf_error *err);
    /** Sum @p count doubles over the ranks, in place. */
    int (*sum_numbers)(void *context, double *values, int64_t count, tf_error *err);
    /** Rank 0's action to every rank. */
    int (*share_action)(void *context, int *action, tf_error *err);
    void *context;  /**< passed to the three hooks */
} hybrid_ranks;

/** A hybrid training run: what persists from epoch to epoch. */
typedef struct hybrid_run {
    hybrid_options options;                /**< as created */
    hybrid_source source;                  /**< loads, groups, operators */
    int actions;                           /**< 1 (fixed) or HYBRID_ACTIONS (DQN) */
    hybrid_sizes sizes[HYBRID_ACTIONS];    /**< per action */
    int action;                            /**< the current one */
    int64_t steps_per_epoch;               /**< ceil(N T_train / (N_V N_S batch)) at the middle sizes */
    int64_t steps;                         /**< taken over the run */
    dqn agent;                             /**< the adjuster (with --adjust dqn) */
    int have_agent;                        /**< agent is created */
    ref_reservoir reservoir;               /**< when options.reservoir and nobody installed another supplier */
    int have_reservoir;                    /**< reservoir is created */
    batch_supplier supplier;               /**< where batches come from */
    int32_t *scratch;                      /**< [num_nodes] all -1, for fresh batches */
    hybrid_batch fresh;                    /**< the fresh batch being trained */
    int64_t interval;                      /**< DQN intervals completed */
    int64_t interval_steps;                /**< steps of the current interval */
    double interval_loss;                  /**< its batch losses, summed */
    double interval_batches;               /**< its batches */
    double interval_work;                  /**< its rows + edges */
    double last_loss;                      /**< the previous interval's mean batch loss L_{k-1} */
    double last_drop;                      /**< its relative drop Delta_{k-1} */
    double last_work;                      /**< its work W_{k-1} */
    int64_t action_steps[HYBRID_ACTIONS];  /**< steps taken under each action */
    double work;                           /**< rows + edges trained over the run */
} hybrid_run;

/**
 * Start a run for @p tr (T-GCN or WD-GCN: an input error names them otherwise) on @p seq: the
 * source (loads, groups, operators), the sizes, the agent, and a ref reservoir when asked.
 */
int hybrid_run_create(hybrid_run *run, const trainer *tr, const snapshot_seq *seq, const hybrid_options *o,
                      tf_error *err);

/** Release the run. */
void hybrid_run_free(hybrid_run *run);

/** Use @p supplier for batches instead of the run's own (the threaded reservoir does). */
void hybrid_run_set_supplier(hybrid_run *run, const batch_supplier *supplier);

/**
 * One epoch on @p ranks (NULL: this process runs every slot): steps, Adam, the DQN; fills
 * @p report's epoch, train loss (the mean batch loss), windows (batches) and steps. The test
 * MSE is the caller's. Every rank calls it; with a reservoir every rank asks for every slot's
 * batch (so the ledgers agree) and trains its own slots only.
 */
int hybrid_epoch(trainer *tr, hybrid_run *run, const hybrid_ranks *ranks, epoch_report *report, tf_error *err);

/** The reference epoch: hybrid_epoch() in one process, then trainer_evaluate() on the test split. */
int ref_hybrid_epoch(trainer *tr, hybrid_run *run, const snapshot_seq *seq, epoch_report *report, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
