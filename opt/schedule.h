/**
 * @file opt/schedule.h
 * Twins: ref_schedule_greedy() and ref_schedule_epoch() (ref/schedule.h).
 * @brief DyGNeX schedules on the ranks: the optimized greedy, measured group times, the
 *        all-reduce time, one schedule for every rank, and the data-parallel epoch that runs a
 *        schedule (the placement the trainer of opt/train.h otherwise takes as slot j on rank
 *        j mod R).
 *
 * **opt_schedule_greedy()**, twin of ref_schedule_greedy(): the same schedule bit for bit
 * (checked on hundreds of instances in verify/test_schedule.c). What changes:
 *  - the free groups of a candidate are kept in a compacted array, the target's members and each
 *    pair's removed as they are taken; a scan over it meets the same groups in the same order
 *    as the reference's scan that skips taken positions;
 *  - a candidate is abandoned as soon as its partial waste
 *        W_k = (k + 1) M_k - sum_{j <= k} p_j - T,   M_k = max(T, p_1 .. p_k),
 *    reaches the best waste of the candidates before it: W_k never decreases as pairs are added
 *    (W_{k+1} - W_k = (k + 1)(M_{k+1} - M_k) + M_{k+1} - p_{k+1} >= 0) and W_{G-1} is Eq. 9's
 *    waste, so such a candidate cannot win under the strict < rule. Times are integer ticks
 *    (ref/schedule.h), so W_k is exact and the bound can never cut a winner;
 *  - candidates are split into contiguous OpenMP chunks; each chunk keeps its first best, and
 *    the chunk winners are compared in chunk order with strict <: the first best overall, as
 *    in the reference.
 *
 * **opt_schedule_epoch()**, twin of ref_schedule_epoch(): rank r runs the groups of each
 * iteration placed on it (ascending id), each window's loss scaled by 1 / B_i where B_i counts
 * the iteration's groups on *all* ranks (read from the schedule, never from a local count);
 * every rank joins every iteration's gradient all-reduce (zeros when it holds no group) and
 * takes the same Adam step. The sum over ranks of the scaled gradients is the reference's
 * iteration mean; only the order of float additions (and the opt kernels' BLAS) differ: fp.
 * With the round-robin schedule of the trainer's steps it runs exactly opt_trainer_epoch()'s
 * windows on the same ranks in the same order, so the result is that epoch's bit for bit.
 *
 * **One schedule for every rank**: measured times differ per rank and the ILP stops on a
 * clock, so rank 0 alone schedules and broadcasts (opt_schedule_build()); a rank computing
 * its own could run other windows (wrong gradients) or another iteration count (a deadlock
 * in the all-reduce).
 */
#ifndef TWOFOLD_OPT_SCHEDULE_H
#define TWOFOLD_OPT_SCHEDULE_H

#include <stdint.h>

#include "opt/comm.h"
#include "opt/schedule_ilp.h"
#include "ref/core/error.h"
#include "ref/schedule.h"
#include "ref/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Twin of ref_schedule_greedy(): the same schedule, bit for bit (see the file comment). */
int opt_schedule_greedy(schedule *s, const double *times, int64_t groups, int ranks, tf_error *err);

/**
 * Any method by name, for @p ranks ranks: roundrobin (from @p steps, the trainer's steps),
 * lpt (@p per_rank recorded), greedy (opt twin, L = 2: another @p per_rank is an input error
 * naming --method ilp), ilp (@p ilp limits, @p report filled; NULL report allowed).
 * (@p times: [groups] group times (unused by roundrobin).)
 */
int opt_schedule_compute(schedule *s, schedule_method method, const double *times, int64_t groups, int ranks,
                         int per_rank, const train_schedule *steps, double alpha, const ilp_options *ilp,
                         ilp_report *report, tf_error *err);

/**
 * opt_schedule_compute() on rank 0 of @p c, then broadcast: every rank returns the same
 * schedule, or the same error when rank 0 failed (its message travels with it). Ranks =
 * c->size. @p report is filled on rank 0 only (it prints). Every rank must call it.
 */
int opt_schedule_build(schedule *s, schedule_method method, const double *times, int64_t groups, comm *c, int per_rank,
                       const train_schedule *steps, double alpha, const ilp_options *ilp, ilp_report *report,
                       tf_error *err);

/**
 * Measured group times: rank r runs forward and backward of windows k = r, r + R, ... of
 * @p tr at its current parameters @p repeats times, timing each with the thread's CPU clock
 * (several ranks sharing cores would otherwise time each other), and keeps the median; the
 * gradients are zeroed afterwards. Every rank receives every group's time.
 * (@p seconds: out [windows].)
 */
int opt_schedule_profile(trainer *tr, const snapshot_seq *seq, comm *c, int repeats, double *seconds, tf_error *err);

/**
 * Alpha: the median wall time of @p repeats all-reduces of @p floats floats (the gradient's
 * size), each started after a barrier; 0 on one rank. Every rank receives rank 0's value.
 */
int opt_schedule_alpha(comm *c, int64_t floats, int repeats, double *seconds, tf_error *err);

/**
 * Twin of ref_schedule_epoch() on the ranks of @p c (see the file comment); @p s must be the
 * same on every rank and have c->size ranks. When @p group_seconds [windows] is not NULL, the
 * thread CPU time of each group this rank ran is added to its entry (others untouched).
 */
int opt_schedule_epoch(trainer *tr, comm *c, const snapshot_seq *seq, const schedule *s, double *group_seconds,
                       epoch_report *report, tf_error *err);

/**
 * The epoch gradient at the current parameters, sum_k grad L_k over every window (each loss
 * scaled by 1), computed the way training under @p s shares the work: iteration by iteration each
 * rank runs its groups and one all-reduce sums them; the iterations' sums are added into
 * @p sum [parameter count, in parameter_list order] on every rank. It is the same for every
 * schedule up to the order of float additions: the check that a schedule drops or repeats no
 * window (verify/test_schedule_mpi.c). The parameters do not change; the gradients end zeroed.
 */
int opt_schedule_gradient(trainer *tr, comm *c, const snapshot_seq *seq, const schedule *s, float *sum,
                          tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
