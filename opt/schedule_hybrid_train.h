/**
 * @file opt/schedule_hybrid_train.h
 * Twins: ref_hybrid_epoch() (ref/schedule_hybrid_train.h).
 * @brief The data-parallel twin of hybrid-batch training (ref/schedule_hybrid_train.h), and the
 *        threaded reservoir as its batch supplier.
 *
 * Twin of ref_hybrid_epoch(): slot j of every step runs on rank j mod R; each rank adds its
 * batches' gradients (each loss scaled by 1 / batch), one all-reduce of every gradient sums them,
 * and every rank takes the same Adam step. Batch number q draws the same batch on every rank
 * count (rng_seed_keyed()), so the step's gradient is the reference's up to the order of float
 * additions (and the opt kernels' BLAS): fp, verify/test_schedule_mpi.c. The DQN's interval sums
 * (loss, work) are all-reduced and rank 0's agent decides the next size, broadcast as one int:
 * for a fixed rank count the run repeats bit for bit, but across rank counts the all-reduced
 * loss differs in its last bits and a near tie could pick another action, so cross-rank equality
 * is claimed for fixed sizes only. With a reservoir every rank keeps its own (built from the
 * same keys) and asks for every slot's batch, so all ledgers agree: the price of rank-count
 * invariance is that every rank builds every batch, in its generator threads.
 */
#ifndef TWOFOLD_OPT_SCHEDULE_HYBRID_TRAIN_H
#define TWOFOLD_OPT_SCHEDULE_HYBRID_TRAIN_H

#include "opt/comm.h"
#include "opt/schedule_reservoir.h"
#include "ref/schedule_hybrid_train.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Start a threaded reservoir with @p threads generators over @p run's source and sizes and make
 * it @p run's batch supplier. The caller frees *reservoir (opt_reservoir_free()) after
 * hybrid_run_free().
 */
int opt_hybrid_use_reservoir(hybrid_run *run, int threads, opt_reservoir **reservoir, tf_error *err);

/** Twin of ref_hybrid_epoch() on the ranks of @p c; every rank calls it; the test MSE by
 *  opt_trainer_evaluate(). */
int opt_hybrid_epoch(trainer *tr, hybrid_run *run, comm *c, const snapshot_seq *seq, epoch_report *report,
                     tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
