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
 * An optimizer step takes `batch` windows (consecutive ones, or with `blocks` one from each
 * of `batch` consecutive blocks of the epoch) and applies Adam to the *mean* of their gradients: the sum divided by the number of windows in that step (the last step of
 * an epoch may hold fewer), never by anything else; the data-parallel twin divides the same
 * way. Windows are visited in time order, so a seed fixes the whole run bit for bit.
 *
 * Evaluation runs the test split in windows of the same length (stride = window, state from
 * zero in each; window 0: the whole test split from one zero state) and reports the mean over
 * test snapshots of their mean squared error.
 */
#ifndef TWOFOLD_REF_TRAIN_H
#define TWOFOLD_REF_TRAIN_H

#include <stdint.h>

#include "ref/adam.h"
#include "ref/error.h"
#include "ref/model.h"
#include "ref/snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How to train. */
typedef struct train_options {
    int64_t epochs;          /**< epochs to reach (a resumed run continues up to this) */
    double learning_rate;    /**< Adam's lr */
    int64_t window;          /**< snapshots per window; 0 = the whole split */
    int64_t stride;          /**< snapshots between window starts; 0 = window (no overlap) */
    int64_t batch;           /**< windows per optimizer step (>= 1) */
    int blocks;              /**< 0: a step takes `batch` consecutive windows; 1: the epoch's windows
                                  are cut into `batch` consecutive blocks and step k takes the k-th
                                  window of each block (ReInc's placement: with one rank per block,
                                  each rank walks consecutive snapshots) */
    double train_ratio;      /**< fraction of snapshots used for training, in (0, 1) */
    uint64_t seed;           /**< initial parameters */
} train_options;

/** Set @p options to the defaults: 50 epochs, lr 0.01, window 0, batch 1, ratio 0.8, seed 1. */
void train_options_default(train_options *options);

/**
 * How the windows of a step are shared among processes and their partial sums combined.
 * Window j of a step (j = 0, 1, ...) is run by the process with rank j % size; after the
 * step's windows every gradient is summed across the group, so each process applies the same
 * Adam update to the same parameters. A group of one (the default) is plain training; the
 * data-parallel twin (opt/train.h) makes a group of MPI ranks.
 */
typedef struct train_group {
    int rank;     /**< this process, 0 .. size-1 */
    int size;     /**< processes sharing the work */
    /** Sum @p count floats across the group in place (the gradients). */
    int (*sum_floats)(void *context, float *values, int64_t count, tf_error *err);
    /** Sum @p count doubles across the group in place (losses). */
    int (*sum_doubles)(void *context, double *values, int64_t count, tf_error *err);
    void *context; /**< passed to the two functions */
} train_group;

/** A model being trained: the model, its optimizer and where training stands. */
typedef struct trainer {
    model model;               /**< the model (parameters and gradients) */
    adam optimizer;            /**< Adam state */
    train_options options;     /**< the settings */
    int64_t epoch;             /**< epochs completed */
    int64_t train_snapshots;   /**< snapshots 0 .. train_snapshots-1 train, the rest test */
    train_group group;         /**< who shares the work (a group of one by default) */
    float *gradients;          /**< [parameter count] packing buffer for the group's sum, or NULL */
} trainer;

/** Results of one epoch. */
typedef struct epoch_report {
    int64_t epoch;         /**< 1-based number of the epoch just finished */
    double train_loss;     /**< mean window loss over the epoch (each computed before its step) */
    double test_mse;       /**< test MSE after the epoch */
    int64_t windows;       /**< windows trained on */
    int64_t steps;         /**< optimizer steps taken */
} epoch_report;

/** Create a model for @p seq's shapes and its optimizer; check the options against the data. */
int trainer_create(trainer *tr, const snapshot_seq *seq, const model_config *config, const train_options *options,
                   tf_error *err);

/** Release the model and the optimizer. */
void trainer_free(trainer *tr);

/**
 * Share the work with a group of processes (see #train_group). Every process must create
 * its trainer identically (same data, options and seed, or the same checkpoint) and call this.
 */
int trainer_join_group(trainer *tr, const train_group *group, tf_error *err);

/** Train one epoch and evaluate. */
int trainer_epoch(trainer *tr, const snapshot_seq *seq, epoch_report *report, tf_error *err);

/**
 * Mean squared error over snapshots first .. first+count-1, run in windows of the
 * training window length from a zero state; writes every prediction into @p predictions
 * [count][N][out] unless it is NULL.
 */
int trainer_evaluate(const trainer *tr, const snapshot_seq *seq, int64_t first, int64_t count, double *mse,
                     float *predictions, tf_error *err);

/**
 * Save a checkpoint in @p directory: parameters as NAME.npy (PyTorch state_dict names), Adam
 * moments as adam.exp_avg.NAME.npy / adam.exp_avg_sq.NAME.npy, and trainer.npy (epoch, step
 * and the model's shape). Atomic: written into DIRECTORY.partial, which then replaces
 * DIRECTORY, so a crash leaves either the old checkpoint or the new one. An existing
 * DIRECTORY is replaced only if it is empty or a twofold checkpoint; anything else is an error.
 */
int trainer_save(const trainer *tr, const char *directory, tf_error *err);

/**
 * Load parameters from @p directory; if it holds trainer.npy, also the Adam state and the
 * epoch, so training resumes where it stopped. A directory of parameters only (for example
 * exported from PyTorch) starts at epoch 0 with a fresh optimizer.
 */
int trainer_load(trainer *tr, const char *directory, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
