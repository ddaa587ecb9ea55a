/**
 * @file opt/train_partition.h
 * Twins: trainer_epoch() and trainer_evaluate() (ref/train.h), on one rank's rows.
 * @brief The vertex-partitioned twin of snapshot-model training (ref/train.h): each of R ranks
 *        holds the rows of its vertices (chapter 06), in cache mode (DynaHB) or exchange mode.
 *
 * Twin of the single-process trainer, trainer_train_slot() over every slot of a step then one Adam
 * step (ref/train.h). Every rank runs **every** window of every step, on its own rows: its part
 * (opt/partition_part.h), made from an owner array of any partitioner (ref/partition.h). What
 * changes, and why the result is still equal:
 *  - **the loss** is the reference's, split by rows: a window's loss is the mean over its snapshots
 *    of the MSE over present vertices, and each rank adds its owned rows' squared errors divided by
 *    the *whole* snapshot's present count (ref_mse_loss_over(), partition_part::present_total).
 *    Summed over ranks that is the reference's loss, and each owned row's d loss / d prediction is
 *    bitwise the reference's: R does not change the loss.
 *  - **the rows a product reads**: cache mode keeps the receptive field's inputs once (no feature
 *    bytes at all: there is no exchange object); exchange mode fetches halo rows in every product
 *    and returns their gradients (opt/partition_exchange.h). Either way the owned rows' forward
 *    values are those of the whole graph, bitwise with exact halo values (the products add the same
 *    terms in the same order; the dense kernels are row-independent).
 *  - **the gradient**: each rank's parameter gradient sums over its own rows; one all-reduce of every
 *    gradient, packed, adds the ranks' sums; every rank takes the same Adam step, so the parameters
 *    stay equal (checked at the start, as opt/train.h does). Sums over rows, over ranks and over the
 *    halo contributions of a backward run in another order than the reference's, and the dense
 *    products are BLAS's: **fp**, 1e-5 (verify/test_partition_mpi.c compares the loss and every
 *    gradient at every step, on 1 to 4 ranks).
 *
 * Which combinations are trainable (partition_training_supported()): every vertex owner array in
 * both modes, except: pss (a split of time, not of vertices: `--split window --blocks` is PSS at
 * window granularity), dgc-st (an owner per (t, v) moves a vertex's state between ranks inside a
 * window, and the models have no hook between steps to move it), and pss-ts beyond T-GCN and WD-GCN
 * in exchange mode (only their structure encoder, A^ X_t before any parameter, is separable from the
 * recurrence; in cache mode the shuffle would happen once and become pts with cached inputs).
 *
 * Bytes: exchange bytes are the feature and embedding rows this rank sent; gradient bytes the
 * all-reduces (comm formula, opt/comm.h). Busy time is this thread's CPU time in steps minus the
 * CPU time inside collectives (oversubscribed ranks' wall time means nothing).
 */
#ifndef TWOFOLD_OPT_TRAIN_PARTITION_H
#define TWOFOLD_OPT_TRAIN_PARTITION_H

#include <stdint.h>

#include "opt/comm.h"
#include "opt/partition_exchange.h"
#include "opt/partition_part.h"
#include "opt/partition_shuffle.h"
#include "ref/partition.h"
#include "ref/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * 0 if @p method can train @p model in @p mode; TF_ERR_INPUT with the reason otherwise (the file
 * comment's list).
 */
int partition_training_supported(partition_method method, partition_mode mode, model_kind model, tf_error *err);

/** What a partitioned trainer measured on this rank. */
typedef struct partition_stats {
    uint64_t exchange_bytes;     /**< feature and embedding rows sent (exchange mode; 0 in cache mode) */
    uint64_t gradient_bytes;     /**< sent in gradient and loss all-reduces */
    double busy_cpu_seconds;     /**< CPU time in steps and evaluation outside collectives */
    double step_cpu_seconds;     /**< CPU time in steps and evaluation, collectives included */
    int64_t steps;               /**< optimizer steps taken */
} partition_stats;

/** A vertex-partitioned trainer on one rank. */
typedef struct partition_trainer {
    trainer base;                /**< the model on this rank's rows: the reference's parameters (config and seed) */
    comm *group;                 /**< the ranks (borrowed) */
    partition_mode mode;         /**< cache or exchange */
    partition_operators operators; /**< the whole graph's operators (freed once the part is built) */
    partition_part part;         /**< this rank's rows */
    partition_exchange exchange; /**< exchange mode's plans (zeroed in cache mode) */
    partition_shuffle shuffle;   /**< pss-ts: A^ X_t from the snapshot owners (zeroed otherwise) */
    kernels table;               /**< exchange mode: partition_kernels(dense) */
    float *packed;               /**< [parameter count] the gradient all-reduce buffer */
    partition_stats stats;       /**< this rank's counts */
} partition_trainer;

/**
 * Create rank group->rank's trainer: its part of @p seq under @p owner [N] (values 0 .. size-1), the
 * model of @p config on it, the optimizer; check that every rank starts from the same parameters.
 * Every rank calls it with the same data, owners and options. @p snapshot_owner [T] is pss-ts's
 * placement of the structure encoder (T-GCN and WD-GCN in exchange mode only; NULL otherwise). @p dense:
 * opt_kernels, or ref_kernels for a bitwise check of the forward. The sequence may be freed
 * afterwards. The trainer points into itself: do not copy it. On one rank it makes no collective
 * call at all, so @p group may then be a comm that never started MPI ({.rank = 0, .size = 1}).
 */
int partition_trainer_create(partition_trainer *pt, comm *group, const snapshot_seq *seq, const int32_t *owner,
                             const int32_t *snapshot_owner, partition_mode mode, const model_config *config,
                             const train_options *options, const kernels *dense, tf_error *err);

/** Release everything. */
void partition_trainer_free(partition_trainer *pt);

/** The schedule (ref/train.h), the reference's. */
train_schedule partition_trainer_schedule(const partition_trainer *pt);

/**
 * Step @p step's gradient without the Adam step: zero the gradients, run every window of the step on
 * this rank's rows, all-reduce. Afterwards every rank holds the step's whole gradient in
 * base.model.parameters; @p loss_sum receives the step's windows' loss sum over all ranks.
 */
int partition_trainer_gradient(partition_trainer *pt, int64_t step, double *loss_sum, tf_error *err);

/** One optimizer step: partition_trainer_gradient() then Adam. Adds the step's loss sum to @p loss_sum. */
int partition_trainer_step(partition_trainer *pt, int64_t step, double *loss_sum, tf_error *err);

/** Twin of trainer_epoch(): every step, then the test MSE. Every rank's @p report ends the same. */
int opt_partition_trainer_epoch(partition_trainer *pt, epoch_report *report, tf_error *err);

/** Twin of trainer_evaluate() without predictions: the MSE over snapshots first .. first+count-1. */
int opt_partition_trainer_evaluate(partition_trainer *pt, int64_t first, int64_t count, double *mse, tf_error *err);

/** This rank's predictions of window [first, first+count) for its owned rows, forward only:
 *  @p predictions [count][owned][out] out (a test compares them with the reference's rows). */
int partition_trainer_predict(partition_trainer *pt, int64_t first, int64_t count, float *predictions, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
