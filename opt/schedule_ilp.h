/**
 * @file opt/schedule_ilp.h
 * Twins: none — DyGNeX-L solved by GLPK, checked against ref_schedule_optimal() (ref/schedule.h).
 * @brief DyGNeX-L: the scheduling problem of ref/schedule.h as an integer program, solved by
 *        GLPK's branch and cut with a time limit and a gap ([DyGNeX] §4.2, App. C.4).
 *
 * Not a twin of an algorithm but a solver with a stopping rule: its schedule is valid, never
 * worse than the greedy (or LPT) schedule it starts from, and within the reported gap of the
 * optimum (checked against ref_schedule_optimal() in verify/test_schedule.c).
 *
 * The program (the compact form; the paper's running maximum z_ij with big-M rows and u_ij is
 * the same under minimization, chapters/07-schedule.md compares them):
 *
 *     x_kij in {0,1} (group k, iteration i < m = ceil(n / G), rank j),  C_i >= 0,
 *     y_i in {0,1} (only when alpha > 0)
 *     min   sum_i C_i + alpha sum_i y_i
 *     s.t.  sum_{i,j} x_kij = 1               every group once
 *           sum_k x_kij <= L                  per (iteration, rank)
 *           C_i - sum_k t_k x_kij >= 0        every (i, j): C_i is the iteration's maximum
 *           sum_{k,j} x_kij <= n y_i          only when alpha > 0: an iteration used pays alpha
 *
 * Times are divided by the longest before the solve (GLPK's tolerances are absolute). GLPK's
 * presolver is off so its callback sees the original columns: at the first heuristic point the
 * greedy (L = 2) or LPT (other L) schedule is offered as an incumbent (glp_ios_heur_sol), so
 * a gap exists from the first node. The search stops at the time limit or the relative gap
 * (GLPK's mip_gap). The result's empty iterations are dropped, then the balance pass. When the
 * time limit ends even the LP relaxation (hundreds of groups), the start is returned with the
 * bound max(t_max, sum t / G) + alpha ceil(n / (G L)) and status "time limit"; so it is when the
 * limit ends branch and cut before the start was offered (a very slow machine, Valgrind).
 *
 * GLPK is the only library this file needs; no other file includes glpk.h.
 */
#ifndef TWOFOLD_OPT_SCHEDULE_ILP_H
#define TWOFOLD_OPT_SCHEDULE_ILP_H

#include <stdint.h>

#include "ref/core/error.h"
#include "ref/schedule.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The most columns (x, C, y) the solver is asked to hold; larger problems are refused. */
#define ILP_MAX_COLUMNS 2000000

/** When to stop. */
typedef struct ilp_options {
    double seconds;  /**< time limit (default 10) */
    double gap;      /**< relative gap between the incumbent and the bound at which to stop, in [0, 1) (default 0.02) */
} ilp_options;

/** Set @p o to the defaults: 10 s, 2 %. */
void ilp_options_default(ilp_options *o);

/** What the solve did. */
typedef struct ilp_report {
    const char *status;       /**< "optimal", "gap reached", "time limit" */
    double objective;         /**< Eq. 4-5 of the returned schedule (seconds, alpha per iteration) */
    double bound;             /**< the best lower bound GLPK proved (seconds) */
    double gap;               /**< (objective - bound) / objective; 0 when optimal */
    double seconds;           /**< wall time of the solve */
    double start_objective;   /**< the greedy or LPT start's objective */
    int64_t columns;          /**< variables of the program */
} ilp_report;

/**
 * Solve DyGNeX-L for @p times [groups] on @p ranks ranks, at most @p per_rank per rank and
 * iteration, all-reduce time @p alpha. An input error for more than #ILP_MAX_COLUMNS columns
 * (it names --method greedy) and for bad times; a system error when GLPK fails.
 */
int opt_schedule_ilp(schedule *s, const double *times, int64_t groups, int ranks, int per_rank, double alpha,
                     const ilp_options *o, ilp_report *report, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
