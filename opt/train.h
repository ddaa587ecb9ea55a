/**
 * @file opt/train.h
 * Twins: trainer_epoch() and trainer_evaluate() (ref/train.h).
 * @brief The data-parallel twin of snapshot-model training (ref/train.h): a step's windows
 *        shared among MPI ranks, one gradient all-reduce per step, the optimized kernels.
 *
 * What changes from the reference trainer, and why the result is still equal:
 *  - The windows and steps are the reference's (trainer_schedule()); slot j of every step runs
 *    on rank j % size (opt_trainer_rank_of()). Each rank adds its windows' gradients, each
 *    already scaled by 1 / windows-in-step (trainer_train_slot()), then one all-reduce of every
 *    gradient, packed into one buffer, sums them: the step's gradient is the sum over all its
 *    windows divided by their number, exactly the reference's mean, never divided by the rank
 *    count (which would be wrong when ranks hold different numbers of windows). Only the order
 *    of the float additions differs.
 *  - With the block order (BATCH_ACROSS_BLOCKS) slot j of a step is block j, so with one rank
 *    per block (size = batch) each rank walks its own block of consecutive snapshots: ReInc's
 *    placement, which lets a rank's incremental engine move forward one delta at a time
 *    (opt/incremental_inputs.h). The order, and so the result, is the reference's.
 *  - Every rank applies the same Adam update to the same gradient, so parameters stay
 *    identical on all ranks without being sent (checked once at the start).
 *  - Evaluation windows are shared the same way, window j on rank j % size, and the squared
 *    errors summed across ranks; so is the epoch's train loss.
 *  - Inside a rank, its windows of a step are shared among its OpenMP threads the same way
 *    (the rank's k-th window on thread k % threads, opt_set_threads()): thread 0 trains into
 *    the rank's model, each other thread into a replica with the rank's parameter values and
 *    its own gradients and workspace, added into the rank's in thread order before the
 *    all-reduce. One parallel region per step, so a thread runs whole windows and never waits
 *    inside one: 1 rank x 2 threads adds the terms 2 ranks x 1 thread adds. One thread where
 *    the model reads a shared source (incremental inputs, a partition's operators) or runs on
 *    a GPU. Evaluation windows are shared among threads as well.
 *  - The models run on opt_kernels (opt/kernels.h): BLAS products within the fp tolerance,
 *    propagation bitwise.
 * Hence "equal within fp tolerance": the loss curve and final parameters of `--impl opt` on
 * any number of ranks match `--impl ref` (verify/test_train_mpi.c).
 *
 * The bytes sent are counted by the comm layer: per step, one all-reduce of every gradient and
 * one float more (how many ranks failed in the step's windows: a rank that ran out of
 * --memory-limit there stops every rank at that all-reduce instead of leaving them in it); per
 * epoch, two of one double (train loss, test MSE). A rank alone sends nothing.
 */
#ifndef TWOFOLD_OPT_TRAIN_H
#define TWOFOLD_OPT_TRAIN_H

#include <stdint.h>

#include "opt/comm.h"
#include "ref/core/error.h"
#include "ref/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Make @p tr the data-parallel twin on the ranks of @p c: optimized kernels, and a check that
 * the parameters agree on all ranks. Every rank must have created its trainer identically
 * (same data, options and seed, or the same checkpoint) and call this once before
 * opt_trainer_epoch(). @p c must use the MPI transport (gradients are host memory).
 */
int opt_trainer_parallel(trainer *tr, comm *c, tf_error *err);

/**
 * Twin of trainer_epoch(): train one epoch with the step's slots shared among the ranks of
 * @p c, and a rank's slots among its threads, and evaluate (opt_trainer_evaluate()). Every rank
 * calls it; every rank's @p tr and @p report end the same. Allocates and frees its gradient
 * packing buffer and its threads' replicas.
 */
int opt_trainer_epoch(trainer *tr, comm *c, const snapshot_seq *seq, epoch_report *report, tf_error *err);

/**
 * Twin of trainer_evaluate() without predictions: evaluation window j of snapshots first ..
 * first+count-1 runs on rank j % size (and a rank's windows on its threads), and every rank
 * receives the mean squared error.
 * (Predictions of every window live on one rank: use trainer_evaluate() there.)
 */
int opt_trainer_evaluate(const trainer *tr, comm *c, const snapshot_seq *seq, int64_t first, int64_t count,
                         double *mse, tf_error *err);

/**
 * Check that every rank of @p c (re)starts from the same state as rank 0: the same epoch, Adam
 * step, parameter values and Adam moments (checksums of their bits), gathered in one collective.
 * After --load this catches a rank whose copy of the checkpoint differs (an older one, one
 * without trainer.npy, other moment files), which would otherwise train to another result or
 * stop in MPI. Every rank calls it and gets the same answer; on one rank there is nothing to do.
 * @param c          the ranks
 * @param list       this rank's parameters
 * @param optimizer  this rank's Adam state (step and moments)
 * @param epoch      epochs this rank has completed
 * @param err        out: one line naming the first differing rank and what differs
 * @return 0, TF_ERR_INPUT, or the error of the collective
 */
int opt_state_agree(comm *c, const parameter_list *list, const adam *optimizer, int64_t epoch, tf_error *err);

/**
 * Sum every parameter's gradient across the ranks of @p c: packed into @p packed [parameter
 * count] (the caller's buffer, unused on one rank), one all-reduce, unpacked. Every rank calls it
 * once per step, holding windows or not (opt/schedule.h's epoch shares it). The packing copies go
 * through @p copier's copy_rows (the model's kernel table, so `--profile` counts them), or are
 * ref_copy_rows() when @p copier is NULL.
 *
 * @p failed (NULL: none) carries a step's failure to every rank in the same all-reduce: in, 1 when
 * this rank's windows failed (it joins anyway, so the others do not wait for it in this
 * collective for ever); out, how many ranks failed. @p packed then holds one more value.
 */
int opt_trainer_sum_gradients(parameter_list *list, float *packed, comm *c, const kernels *copier, int *failed,
                              tf_error *err);

/**
 * End a data-parallel step: the gradients summed across the ranks with the ranks' failures
 * (opt_trainer_sum_gradients() with @p packed), then, when no rank failed, the optimizer step and
 * report->steps + 1. @p status is this rank's windows' own; a rank that did not fail but whose
 * peer did returns TF_ERR_INPUT with an empty message (the failing rank's line is the one
 * printed). Every rank calls it once per step. @return the step's status.
 */
int opt_trainer_finish_step(trainer *tr, comm *c, float *packed, int status, epoch_report *report, tf_error *err);

/** The rank among @p size that runs slot @p position of a step, and evaluation window @p position. */
int opt_trainer_rank_of(int64_t position, int size);

#ifdef __cplusplus
}
#endif

#endif
