/**
 * @file opt/train.h
 * @brief The data-parallel twin of snapshot-model training (ref/train.h): windows shared among
 *        MPI ranks, one gradient all-reduce per step, the optimized kernels.
 *
 * What changes from the reference trainer, and why the result is still equal:
 *  - Window j of every optimizer step runs on rank j % size. Each rank adds its windows'
 *    gradients (each already scaled by 1 / windows-in-step), then one all-reduce sums them:
 *    the step's gradient is the sum over all its windows divided by their number, exactly
 *    the reference's mean, never divided by the rank count (which would be wrong when ranks
 *    hold different numbers of windows). Only the order of the float additions differs.
 *  - Every rank applies the same Adam update to the same gradient, so parameters stay
 *    identical on all ranks without being sent (checked once at the start).
 *  - The models run on opt_kernels (opt/kernels.h): BLAS products within the fp tolerance,
 *    propagation bitwise.
 * Hence "equal within fp tolerance": the loss curve and final parameters of `--impl opt` on
 * any number of ranks match `--impl ref` (verify/test_train_mpi.c).
 *
 * The bytes sent are counted by the comm layer: per step, one all-reduce of every gradient;
 * per epoch, two of one double (train loss, test MSE).
 */
#ifndef TWOFOLD_OPT_TRAIN_H
#define TWOFOLD_OPT_TRAIN_H

#include "opt/comm.h"
#include "ref/error.h"
#include "ref/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Make @p tr the data-parallel twin: optimized kernels, the ranks of @p c as its group.
 * Every rank must have created its trainer identically; this checks that the parameters
 * agree on all ranks. @p c must use the MPI transport (gradients are host memory).
 */
int opt_trainer_parallel(trainer *tr, comm *c, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
