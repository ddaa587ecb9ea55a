/**
 * @file ref/train.h
 * @brief Training a snapshot model: temporal split, windows, truncated BPTT, Adam,
 *        evaluation, and checkpoints that resume exactly.
 *
 * The snapshots are split in time: the first `train_ratio` of them train, the rest test
 * (PyTorch Geometric Temporal's temporal_signal_split). The training snapshots are cut into
 * windows of `window` consecutive snapshots starting every `stride` snapshots (a window is
 * shorter when it reaches the end of the split; window 0 means the whole split). The model's
 * state starts at zero at each window's first snapshot and gradients stop at its start
 * (truncated back-propagation through time). A window's loss is the mean over its snapshots
 * of the mean squared error over present vertices.
 *
 * An optimizer step takes `batch` windows and applies Adam to the *mean* of their gradients:
 * the sum divided by the number of windows in that step (the last step of an epoch may hold
 * fewer), never by anything else. Which windows share a step is the batching order
 * (#batch_order): it changes the result, since each step averages other gradients. Windows are
 * visited in a fixed order (no shuffling), so a seed fixes the whole run bit for bit.
 *
 * This is the oracle: one process runs every window of a step. The data-parallel twin
 * (opt/train.h) shares a step's windows among ranks; it builds on the schedule and the
 * one-window functions below, so both walk the same windows.
 *
 * Evaluation runs the test split in windows of the same length (stride = window, state from
 * zero in each; window 0: the whole test split from one zero state) and reports the mean over
 * test snapshots of their mean squared error.
 */
#ifndef TWOFOLD_REF_TRAIN_H
#define TWOFOLD_REF_TRAIN_H

#include <stdint.h>

#include "ref/nn/adam.h"
#include "ref/core/error.h"
#include "ref/models/model.h"
#include "ref/data/snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Which windows share an optimizer step. */
typedef enum batch_order {
    BATCH_CONSECUTIVE,   /**< step k takes windows k * batch .. k * batch + batch - 1 */
    BATCH_ACROSS_BLOCKS, /**< the epoch's windows are cut into `batch` consecutive blocks of `steps`
                              windows, and step k takes the k-th window of each block (ReInc's order:
                              a step's windows lie far apart in time, and slot j of successive
                              steps walks consecutive snapshots) */
} batch_order;

/** Which update a step applies to its gradient. */
typedef enum optimizer_kind {
    OPTIMIZER_ADAM,  /**< Adam (ref/nn/adam.h), the default */
    OPTIMIZER_SGD,   /**< plain SGD (ref/nn/sgd.h): linear in the gradient, for chapter 05's checks */
} optimizer_kind;

/** "adam" or "sgd". */
const char *optimizer_kind_name(optimizer_kind kind);

/** Parse "adam" or "sgd". @return 0, or TF_ERR_INPUT naming the value and the choices. */
int optimizer_kind_parse(const char *name, optimizer_kind *kind, tf_error *err);

/** How to train. */
typedef struct train_options {
    int64_t epochs;          /**< epochs to reach (a resumed run continues up to this) */
    double learning_rate;    /**< the optimizer's lr */
    optimizer_kind optimizer; /**< Adam (default) or SGD */
    int64_t window;          /**< snapshots per window; 0 = the whole split */
    int64_t stride;          /**< snapshots between window starts; 0 = window (no overlap) */
    int64_t batch;           /**< windows per optimizer step (>= 1) */
    batch_order batching;    /**< which windows share a step */
    double train_ratio;      /**< fraction of snapshots used for training, in (0, 1) */
    uint64_t seed;           /**< initial parameters, and the link task's negatives */
    train_task task;         /**< what it learns (default regression) */
} train_options;

/** Set @p options to the defaults: 50 epochs, lr 0.01, Adam, window 0, batch 1 (consecutive), ratio 0.8, seed 1. */
void train_options_default(train_options *options);

/** Values a checkpoint records of the sampled mini-batches (ref/minibatch.h): N and four hops' fan-outs. */
#define TRAIN_SAMPLING_VALUES 5

/** A model being trained: the model, its optimizer and where training stands. */
typedef struct trainer {
    model model;               /**< the model (parameters and gradients) */
    adam optimizer;            /**< Adam state (with SGD only its step count moves) */
    train_options options;     /**< the settings */
    int64_t epoch;             /**< epochs completed */
    int64_t train_snapshots;   /**< snapshots 0 .. train_snapshots-1 train, the rest test */
    uint64_t data_digest;      /**< checkpoint_snapshot_digest() of the data, kept in checkpoints */
    /** What checkpoints record of --minibatch (minibatch_record(), ref/minibatch.h): the targets
     *  per mini-batch, then each hop's fan-out (0 past the last hop); all 0 on whole graphs, so a
     *  resume in the other setting, or with another sample, is refused naming the values. */
    int64_t sampling[TRAIN_SAMPLING_VALUES];
} trainer;

/** Results of one epoch. */
typedef struct epoch_report {
    int64_t epoch;         /**< 1-based number of the epoch just finished */
    double train_loss;     /**< mean window loss over the epoch (each computed before its step) */
    double test_mse;       /**< test MSE after the epoch (link task: the test BCE; classify: the test
                                cross-entropy) */
    double test_ap;        /**< link task: the test pairs' average precision (ref/nn/metrics.h); else 0 */
    double test_auc;       /**< link task: their ROC AUC; else 0 */
    double test_accuracy;  /**< classify task: the fraction of the test snapshots' labelled vertices
                                predicted right (ref/models/classify_task.h); else 0 */
    int64_t windows;       /**< windows trained on */
    int64_t steps;         /**< optimizer steps taken */
} epoch_report;

/** Create a model for @p seq's shapes and its optimizer; check the options against the data. */
int trainer_create(trainer *tr, const snapshot_seq *seq, const model_config *config, const train_options *options,
                   tf_error *err);

/** Release the model and the optimizer. */
void trainer_free(trainer *tr);

/**
 * Train one epoch and evaluate: every step's gradient (trainer_train_step(): its slots by
 * trainer_train_slot()), then one optimizer step (trainer_apply_gradient()).
 */
int trainer_epoch(trainer *tr, const snapshot_seq *seq, epoch_report *report, tf_error *err);

/**
 * Whether training is still finite after an epoch: its losses, every parameter and Adam's
 * moments. A run on data near float's range can overflow into Inf or NaN while the loss (summed
 * in double) still looks finite; a checkpoint of that state would be refused by its own --load.
 * @param tr the trainer after the epoch
 * @param report the epoch's report
 * @param err set to "epoch E: training diverged (what is not finite)" on failure
 * @return 0, or TF_ERR_INPUT
 */
int trainer_check_finite(const trainer *tr, const epoch_report *report, tf_error *err);

/**
 * The test metrics of the trainer's task after the epoch, into @p report: with the link task
 * (#TASK_LINK) the test pairs' average precision and ROC AUC (test_ap, test_auc; every pair's logit
 * collected, ref/models/link_task.h, then ref/nn/metrics.h); with classification (#TASK_CLASSIFY)
 * the accuracy over the test snapshots' labelled vertices (test_accuracy). The test snapshots run
 * in the evaluation's windows on the trainer's model. With regression, nothing. Every rank of a
 * data-parallel run holds the whole model and data: each can call it and gets the same numbers.
 */
int trainer_task_metrics(const trainer *tr, const snapshot_seq *seq, epoch_report *report, tf_error *err);

/**
 * Mean squared error (the task's loss) over snapshots first .. first+count-1, run in windows of the
 * training window length from a zero state (trainer_evaluate_window() for each); writes every
 * prediction into @p predictions [count][N][out] unless it is NULL.
 */
int trainer_evaluate(const trainer *tr, const snapshot_seq *seq, int64_t first, int64_t count, double *mse,
                     float *predictions, tf_error *err);

/* ---- the building blocks of an epoch, shared with the data-parallel twin ------------------ */

/**
 * Where an epoch's windows lie and which of them share a step. Window w covers training
 * snapshots w * stride .. w * stride + length - 1, cut at the end of the split; a step has
 * `batch` slots, each holding one window or none.
 */
typedef struct train_schedule {
    int64_t train_snapshots; /**< snapshots the windows cover */
    int64_t length;          /**< snapshots per window (one at the end of the split may hold fewer) */
    int64_t stride;          /**< snapshots between window starts */
    int64_t windows;         /**< windows per epoch: ceil(train_snapshots / stride) */
    int64_t batch;           /**< slots per step */
    int64_t steps;           /**< optimizer steps per epoch: ceil(windows / batch) */
    batch_order batching;    /**< which windows share a step */
} train_schedule;

/** The schedule of every epoch of @p tr (its options and split). */
train_schedule trainer_schedule(const trainer *tr);

/**
 * The window in slot @p slot (0 .. batch-1) of step @p step, or -1 when the slot is empty (the
 * last step of the consecutive order, the last block of the block order). Every window sits in
 * exactly one slot of one step.
 */
int64_t train_schedule_window(const train_schedule *s, int64_t step, int64_t slot);

/** The number of windows in step @p step: `batch`, or fewer in a step with empty slots. */
int64_t train_schedule_windows_in_step(const train_schedule *s, int64_t step);

/** The snapshots of window @p window: @p first and the @p count that follow it. */
void train_schedule_span(const train_schedule *s, int64_t window, int64_t *first, int64_t *count);

/**
 * Train slot @p slot of step @p step: its window forward and backward with the loss scaled by
 * 1 / windows-in-step, so the gradients added to the model's (zeroed by the caller before the
 * step) sum to the step's mean once every slot has run, whoever ran them. Adds the window's
 * (unscaled) loss to @p loss_sum. An empty slot does nothing.
 */
int trainer_train_slot(trainer *tr, const snapshot_seq *seq, const train_schedule *s, int64_t step, int64_t slot,
                       double *loss_sum, tf_error *err);

/**
 * The gradient of step @p step on this process: zero the model's gradients, then
 * trainer_train_slot() for every slot of the step, so they hold the step's mean gradient, ready
 * for an optimizer step. Adds the windows' (unscaled) losses to @p loss_sum.
 */
int trainer_train_step(trainer *tr, const snapshot_seq *seq, const train_schedule *s, int64_t step, double *loss_sum,
                       tf_error *err);

/**
 * Train window @p window alone: forward and backward with the loss scaled by @p scale (the
 * caller's 1 / groups-in-step), gradients added to the model's; adds the window's unscaled
 * loss to @p loss_sum. trainer_train_slot() is this with the step's scale; a schedule that
 * groups windows otherwise (ref/schedule.h) calls it directly.
 */
int trainer_train_window(trainer *tr, const snapshot_seq *seq, const train_schedule *s, int64_t window, float scale,
                         double *loss_sum, tf_error *err);

/** One optimizer step (Adam or SGD, as the options say) on the model's current gradients;
 *  counts it in tr->optimizer.step either way. */
void trainer_apply_gradient(trainer *tr);

/**
 * Count the epoch just trained (after its last Adam step) and fill @p report's epoch, windows,
 * and train loss: @p loss_sum, the sum of every window's loss, over the number of windows.
 * The steps taken and the test MSE are the caller's.
 */
void trainer_close_epoch(trainer *tr, const train_schedule *s, double loss_sum, epoch_report *report);

/**
 * Snapshots per evaluation window over a range of @p count: the training window, or all of
 * @p count for window 0 or a window longer than the range. Evaluation window j starts at the
 * range's first snapshot + j * length.
 */
int64_t trainer_evaluation_length(const trainer *tr, int64_t count);

/**
 * Evaluation window @p j of snapshots first .. first+count-1, forward from a zero state (the
 * model is only read): adds its squared error, the mean over its snapshots times their number,
 * to @p error_sum, and writes its rows of @p predictions [count][N][out] unless it is NULL.
 */
int trainer_evaluate_window(const trainer *tr, const snapshot_seq *seq, int64_t first, int64_t count, int64_t j,
                            double *error_sum, float *predictions, tf_error *err);

/* ---- checkpoints -------------------------------------------------------------------------- */

/**
 * Save a checkpoint in @p directory (ref/models/checkpoint.h): parameters as NAME.npy (PyTorch
 * state_dict names), Adam moments as adam.exp_avg.NAME.npy / adam.exp_avg_sq.NAME.npy, and
 * trainer.npy, written last (the header with epoch, step and data digest; hidden, K, features,
 * targets, window, stride, train snapshots, layers, classes, and the mini-batch size and fan-outs
 * of trainer.sampling). A kill at any instant leaves a complete checkpoint
 * that trainer_load() finds. An existing DIRECTORY is replaced only if it is empty or a twofold
 * checkpoint; anything else is an error.
 */
int trainer_save(const trainer *tr, const char *directory, tf_error *err);

/**
 * Load the checkpoint in @p directory (or the complete one an interrupted save left beside it).
 * trainer.npy is checked first: the model, the data, the shapes, the windows and the split must
 * be this run's, or the error names what differs; then the parameters, the Adam state and the
 * epoch are read, so training resumes where it stopped. A directory of parameters only (for
 * example exported from PyTorch) starts at epoch 0 with a fresh optimizer.
 */
int trainer_load(trainer *tr, const char *directory, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
