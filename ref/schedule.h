/**
 * @file ref/schedule.h
 * @brief Which windows share an optimizer step and which rank runs each: DyGNeX's scheduling
 *        problem, its plain schedulers, and the reference epoch that runs a schedule.
 *
 * A *group* is one training window (ref/train.h): the model state starts from zero in every
 * window, so windows are independent samples and may be combined and placed in any way
 * ([DyGNeX] §1). A schedule assigns each group k an iteration a_k (one optimizer step) and a
 * rank g_k, at most L groups per (iteration, rank). With t_k the time of group k and alpha the
 * time of one gradient all-reduce, an epoch costs ([DyGNeX] §4.1, Eq. 4-5)
 *
 *     T = sum_i T_i,   T_i = max_j sum_{k: a_k = i, g_k = j} t_k + alpha.
 *
 * Eq. 4 prints i = 0..m; the sum is over the m iterations. Empty iterations never exist here
 * (every schedule numbers its non-empty iterations 0..m-1), so alpha is paid once per step
 * that really runs. Lower bound of the compute part: max(max_k t_k, sum_k t_k / G).
 *
 * Within an iteration a rank runs its groups in ascending group id, and the reference runs
 * all of an iteration's groups in ascending id: that is the trainer's own order, so the
 * round-robin schedule of the trainer's steps gives today's results bit for bit.
 *
 * The gradient of iteration i is the sum of its groups' gradients divided by B_i, the number
 * of groups in the iteration over all ranks (each window's loss is scaled by 1 / B_i before
 * backward). Dividing by the rank count, or averaging per-rank means, weights the groups
 * unequally as soon as one rank holds two groups and another one.
 *
 * Ownership: a schedule owns its two arrays (schedule_alloc(), schedule_free()); times are
 * borrowed.
 */
#ifndef TWOFOLD_REF_SCHEDULE_H
#define TWOFOLD_REF_SCHEDULE_H

#include <stdint.h>

#include "ref/core/error.h"
#include "ref/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The most groups ref_schedule_optimal() searches exhaustively. */
#define SCHEDULE_OPTIMAL_MAX_GROUPS 10

/** The scheduling methods. */
typedef enum schedule_method {
    SCHEDULE_ROUNDROBIN, /**< the trainer's steps, slot j on rank j mod G (today's placement; PSG when batch = G) */
    SCHEDULE_LPT,        /**< longest first, G per iteration, one per rank (optimal for L = 1) */
    SCHEDULE_GREEDY,     /**< DyGNeX-G, Algorithm 2, with placed groups excluded (L = 2) */
    SCHEDULE_ILP,        /**< DyGNeX-L, the integer program, solved by GLPK (opt/schedule_ilp.h) */
} schedule_method;

/** "roundrobin", "lpt", "greedy", "ilp". */
const char *schedule_method_name(schedule_method method);

/** Parse a method name; an input error lists the four. */
int schedule_method_parse(const char *name, schedule_method *method, tf_error *err);

/** A schedule: group k runs in iteration iteration[k] on rank rank[k]. */
typedef struct schedule {
    int64_t groups;      /**< n */
    int ranks;           /**< G */
    int per_rank;        /**< L: groups one rank may run in one iteration */
    int64_t iterations;  /**< m: iterations 0 .. m-1, none of them empty */
    int64_t *iteration;  /**< [groups] a_k */
    int32_t *rank;       /**< [groups] g_k */
} schedule;

/** Allocate a schedule of @p groups groups (iterations 0, ranks 0); input error on n < 1, G < 1, L < 1. */
int schedule_alloc(schedule *s, int64_t groups, int ranks, int per_rank, tf_error *err);

/** Release the arrays (safe on a zeroed schedule). */
void schedule_free(schedule *s);

/** Make @p to a copy of @p from (allocates). */
int schedule_copy(schedule *to, const schedule *from, tf_error *err);

/**
 * Check the rules: every a_k in 0..m-1 and g_k in 0..G-1 (so every group sits exactly once),
 * at most L groups per (iteration, rank), no empty iteration. The first violation is a
 * one-line input error naming the group, iteration or rank.
 */
int schedule_validate(const schedule *s, tf_error *err);

/** Check @p times [groups]: every value finite and >= 0; input error naming the first bad one. */
int schedule_check_times(const double *times, int64_t groups, tf_error *err);

/** The number of groups in iteration @p i (B_i, the divisor of its gradient). */
int64_t schedule_groups_in_iteration(const schedule *s, int64_t i);

/** A schedule's predicted cost under the group times. */
typedef struct schedule_cost {
    double critical_path;  /**< sum_i max_j load_ij: the compute time of an epoch */
    double objective;      /**< critical_path + alpha * iterations (Eq. 4-5) */
    double lower_bound;    /**< max(max_k t_k, sum_k t_k / G) <= critical_path */
    double busy_max;       /**< the largest rank total sum_{k: g_k = j} t_k over the epoch */
    double busy_min;       /**< the smallest rank total */
    double imbalance;      /**< busy_max / busy_min ([DyGNeX] §5.2); infinity when a rank runs nothing */
    double efficiency;     /**< sum_k t_k / (G * critical_path): 1 when no rank ever waits at an all-reduce */
} schedule_cost;

/**
 * Evaluate @p s under @p times [groups] and @p alpha. Loads are summed in double in ascending
 * group order.
 */
void schedule_evaluate(const schedule *s, const double *times, double alpha, schedule_cost *out);

/**
 * Round-robin: the trainer's steps (@p steps: batch, batching order, windows) as iterations,
 * slot j of a step on rank j mod @p ranks. This is the placement the data-parallel trainer
 * uses without a schedule (opt/train.h), so training under it is today's training bit for bit.
 * L = ceil(batch / ranks). No balance pass: it is the baseline as it runs.
 */
int ref_schedule_roundrobin(schedule *s, const train_schedule *steps, int ranks, tf_error *err);

/**
 * Longest processing time first: groups sorted by (t descending, id ascending), the first G in
 * iteration 0 one per rank, the next G in iteration 1, ... (then the balance pass). For L = 1
 * this is optimal (chapters/07-schedule.md proves it); @p per_rank is recorded as L.
 * (@p times: [groups] group times.)
 */
int ref_schedule_lpt(schedule *s, const double *times, int64_t groups, int ranks, int per_rank, tf_error *err);

/**
 * DyGNeX-G ([DyGNeX] §4.3, Algorithm 2), L = 2, with the points the pseudo-code leaves open
 * fixed (chapters/07-schedule.md lists them): groups are sorted ascending by (t, id) behind a
 * reusable zero sentinel (a pair (0, x) is x alone); while more than G groups remain, every
 * target (the longest group alone, then the longest with each other group in ascending
 * order) is completed by G - 1 two-pointer pair searches over the groups that are still free
 * (not placed, not in the target, not in an earlier pair of this target: the paper's
 * printed search never excludes them); a target whose pairs waste least,
 * W = max(T, max_j p_j) G - sum_j p_j - T (Eq. 9 without alpha), wins, the first one on ties
 * (strict <), as does the first pair met in a scan. A search that finds no free group leaves an
 * empty bin. The last <= G groups form one iteration, one per rank. Then the balance pass.
 *
 * Times are compared as integers: t_k is quantized to round(t_k / max_t * 2^40) ticks, so every
 * sum and waste is exact and the optimized twin's pruning can never change a choice.
 * (@p times: [groups] group times.)
 */
int ref_schedule_greedy(schedule *s, const double *times, int64_t groups, int ranks, tf_error *err);

/** Ticks of the longest group in DyGNeX-G's integer times (2^40). */
#define SCHEDULE_GREEDY_TICKS 1099511627776.0

/**
 * DyGNeX-G's sorted order, shared with its optimized twin: @p ticks [groups + 1] gets 0 (the
 * sentinel) then the groups' integer times ascending, @p ids [groups] the group at each sorted
 * position 1..n (ids[p - 1]); ties in ticks are ordered by id.
 */
int schedule_greedy_sort(const double *times, int64_t groups, int64_t *ticks, int64_t *ids, tf_error *err);

/**
 * The exact optimum of Eq. 4-5 by exhaustive search (at most #SCHEDULE_OPTIMAL_MAX_GROUPS
 * groups): the oracle the ILP and LPT are checked against. Depth-first over groups in
 * descending time; a group goes to an iteration already opened or the first new one, and
 * within it to a rank bin already opened or the first new one (iterations and ranks are
 * interchangeable); at most ceil(n / G) iterations; a branch is cut when its partial cost
 * (its iterations' maxima plus alpha each) reaches the best. Then the balance pass.
 * (@p times: [groups] group times.)
 */
int ref_schedule_optimal(schedule *s, const double *times, int64_t groups, int ranks, int per_rank, double alpha,
                         tf_error *err);

/**
 * The rank balance pass: permuting the ranks within an iteration never changes Eq. 5, but it
 * decides each rank's busy total, which the imbalance ratio measures. For i = 0 .. m-1 the
 * iteration's bins (the groups of one rank) are sorted by load descending (ties: lower rank
 * first) and the k-th heaviest goes to the rank with the k-th smallest total so far (ties:
 * lower rank first). Deterministic.
 * (@p times: [groups] group times.)
 */
int schedule_balance_ranks(schedule *s, const double *times, tf_error *err);

/**
 * The reference epoch of a schedule: iterations in order, each zeroes the gradients, runs its
 * groups (windows of @p tr, ascending id) with the loss scaled by 1 / B_i, and takes one Adam
 * step; then the test evaluation. One process runs every group, whatever its rank: the oracle
 * of opt_schedule_epoch(). @p s must have as many groups as @p tr has windows.
 */
int ref_schedule_epoch(trainer *tr, const snapshot_seq *seq, const schedule *s, epoch_report *report, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
