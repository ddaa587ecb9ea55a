/**
 * @file opt/schedule_simulate.h
 * Twins: none — a simulator: schedules for 4 .. 1024 ranks rated by the cost model, nothing run.
 * @brief The scaling simulator: schedules for 4 .. 1024 ranks replayed with the cost model, and
 *        the ESDG baseline's predicted imbalance ([DyGNeX] §5.4, Fig. 5, App. H).
 *
 * DyGNeX generates 10,000 snapshots and predicts each one's time with a linear model of its
 * vertex and edge counts, then reports how well DyGNeX-G keeps the ranks busy at up to 1024
 * GPUs (95 % at 512). The paper's generator is not available; here the per-snapshot sizes of a
 * real sequence are repeated (cycled) to the wanted length, its windows become the groups, and
 * each group's time is the cost model of its rows and edges. Nothing runs on the ranks: each
 * schedule is evaluated (ref/schedule.h's efficiency E = sum t / (G * critical path), alpha 0:
 * load balance only, and the rank-total imbalance).
 */
#ifndef TWOFOLD_OPT_SCHEDULE_SIMULATE_H
#define TWOFOLD_OPT_SCHEDULE_SIMULATE_H

#include <stdint.h>

#include "ref/core/error.h"
#include "ref/schedule.h"
#include "ref/schedule_cost.h"
#include "ref/data/snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One simulated schedule. */
typedef struct simulation_row {
    int ranks;              /**< G */
    schedule_method method; /**< roundrobin (batch G), lpt or greedy */
    int64_t groups;         /**< n */
    int64_t iterations;     /**< m */
    double efficiency;      /**< sum t / (G * critical path) */
    double imbalance;       /**< busiest rank's total / idlest rank's (infinity when a rank gets nothing) */
    double solve_seconds;   /**< wall time to compute the schedule */
} simulation_row;

/**
 * The sizes of @p seq's snapshots repeated to @p snapshots snapshots.
 * (@p nodes: out [snapshots], allocated (caller frees).)
 * (@p edges: out [snapshots], allocated (caller frees).)
 */
int schedule_sizes_cycle(const snapshot_seq *seq, int64_t snapshots, int64_t **nodes, int64_t **edges, tf_error *err);

/**
 * The times of the windows (@p window snapshots every @p stride, cut at the end: the trainer's
 * rule) of a sequence of @p snapshots snapshots with sizes @p nodes [snapshots] and @p edges
 * [snapshots] under the model @p m. @p times gets ceil(snapshots / stride) values (allocated,
 * caller frees); @p groups their count.
 */
int schedule_window_times(const int64_t *nodes, const int64_t *edges, int64_t snapshots, int64_t window,
                          int64_t stride, const cost_model *m, double **times, int64_t *groups, tf_error *err);

/**
 * For each rank count in @p ranks [rank_counts]: round-robin (batch = G), LPT and the optimized
 * greedy on @p times [groups], evaluated. @p rows gets 3 * rank_counts rows (allocated, caller
 * frees).
 */
int opt_schedule_simulate(const double *times, int64_t groups, const int *ranks, int rank_counts,
                          simulation_row **rows, tf_error *err);

/**
 * ESDG's predicted imbalance ([DyGNeX] §2: the snapshots of a group spread evenly over the
 * ranks by time): rank j takes snapshots floor(j w / G) .. floor((j + 1) w / G) - 1 of every
 * window (positions within the window), each costing a nodes + b edges + c / w; the imbalance is
 * the largest rank total over the smallest. Needs G <= the window length (an input error
 * otherwise).
 */
int schedule_predict_esdg(const int64_t *nodes, const int64_t *edges, int64_t snapshots, int64_t window,
                          int64_t stride, const cost_model *m, int ranks, double *imbalance, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
