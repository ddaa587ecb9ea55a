#include "opt/schedule_ilp.h"

#include <glpk.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opt/schedule.h"
#include "ref/core/clock.h"
#include "ref/core/memory.h"

void ilp_options_default(ilp_options *o)
{
    o->seconds = 10;
    o->gap = 0.02;
}

/* Column numbers (GLPK counts from 1): x_kij, then C_i, then y_i. */
typedef struct layout {
    int64_t groups, iterations;
    int ranks;
    int with_alpha;
} layout;

static int column_x(const layout *l, int64_t k, int64_t i, int j)
{
    return (int)(1 + (k * l->iterations + i) * l->ranks + j);
}
static int column_c(const layout *l, int64_t i) { return (int)(1 + l->groups * l->iterations * l->ranks + i); }
static int column_y(const layout *l, int64_t i)
{
    return (int)(1 + l->groups * l->iterations * l->ranks + l->iterations + i);
}
static int64_t column_count(const layout *l)
{
    return l->groups * l->iterations * l->ranks + l->iterations * (1 + l->with_alpha);
}

/* What the branch-and-cut callback needs and records. */
typedef struct search_state {
    double *start;  /* [columns + 1] the starting schedule as a solution, 1-based */
    int offered;    /* the start was handed to GLPK */
    double bound;   /* the best bound seen (scaled) */
    int bounded;    /* bound is set */
} search_state;

static void on_search(glp_tree *tree, void *info)
{
    search_state *state = info;
    if (glp_ios_reason(tree) == GLP_IHEUR && !state->offered) {
        state->offered = 1;
        glp_ios_heur_sol(tree, state->start);
    }
    const int best = glp_ios_best_node(tree);
    if (best) {
        state->bound = glp_ios_node_bound(tree, best);
        state->bounded = 1;
    }
}

/* The start schedule as a 1-based solution vector of the program (times scaled). */
static void start_solution(const layout *l, const schedule *start, const double *scaled, double *x)
{
    for (int64_t k = 0; k < l->groups; k++) {
        x[column_x(l, k, start->iteration[k], start->rank[k])] = 1;
        if (l->with_alpha)
            x[column_y(l, start->iteration[k])] = 1;
    }
    for (int64_t i = 0; i < start->iterations; i++) {
        /* C_i: the heaviest rank of iteration i */
        for (int j = 0; j < l->ranks; j++) {
            double load = 0;
            for (int64_t k = 0; k < l->groups; k++)
                if (start->iteration[k] == i && start->rank[k] == j)
                    load += scaled[k];
            x[column_c(l, i)] = fmax(x[column_c(l, i)], load);
        }
    }
}

/* Builds the rows and matrix of the program into p. */
static int build_program(glp_prob *p, const layout *l, const double *scaled, int per_rank, double alpha_scaled,
                         tf_error *err)
{
    const int64_t n = l->groups, m = l->iterations, g = l->ranks;
    const int64_t nonzeros = 3 * n * m * g + m * g + (l->with_alpha ? n * m * g + m : 0);
    int *row = tf_alloc((size_t)nonzeros + 1, sizeof *row, "ILP matrix", err);
    int *column = tf_alloc((size_t)nonzeros + 1, sizeof *column, "ILP matrix", err);
    double *value = tf_alloc((size_t)nonzeros + 1, sizeof *value, "ILP matrix", err);
    if (!row || !column || !value) {
        free(row), free(column), free(value);
        return TF_ERR_INPUT;
    }
    glp_set_obj_dir(p, GLP_MIN);
    glp_add_cols(p, (int)column_count(l));
    for (int64_t k = 0; k < n; k++)
        for (int64_t i = 0; i < m; i++)
            for (int j = 0; j < g; j++)
                glp_set_col_kind(p, column_x(l, k, i, j), GLP_BV);
    for (int64_t i = 0; i < m; i++) {
        glp_set_col_bnds(p, column_c(l, i), GLP_LO, 0, 0);
        glp_set_obj_coef(p, column_c(l, i), 1);
        if (l->with_alpha) {
            glp_set_col_kind(p, column_y(l, i), GLP_BV);
            glp_set_obj_coef(p, column_y(l, i), alpha_scaled);
        }
    }
    int64_t at = 0;
    int next_row = 1;
    /* every group once */
    glp_add_rows(p, (int)n);
    for (int64_t k = 0; k < n; k++, next_row++) {
        glp_set_row_bnds(p, next_row, GLP_FX, 1, 1);
        for (int64_t i = 0; i < m; i++)
            for (int j = 0; j < g; j++)
                ++at, row[at] = next_row, column[at] = column_x(l, k, i, j), value[at] = 1;
    }
    /* at most L per (iteration, rank), and C_i at least each rank's load */
    glp_add_rows(p, (int)(2 * m * g));
    for (int64_t i = 0; i < m; i++)
        for (int j = 0; j < g; j++, next_row += 2) {
            glp_set_row_bnds(p, next_row, GLP_UP, 0, per_rank);
            glp_set_row_bnds(p, next_row + 1, GLP_LO, 0, 0);
            ++at, row[at] = next_row + 1, column[at] = column_c(l, i), value[at] = 1;
            for (int64_t k = 0; k < n; k++) {
                ++at, row[at] = next_row, column[at] = column_x(l, k, i, j), value[at] = 1;
                ++at, row[at] = next_row + 1, column[at] = column_x(l, k, i, j), value[at] = -scaled[k];
            }
        }
    /* an iteration that holds a group pays alpha */
    if (l->with_alpha) {
        glp_add_rows(p, (int)m);
        for (int64_t i = 0; i < m; i++, next_row++) {
            glp_set_row_bnds(p, next_row, GLP_UP, 0, 0);
            ++at, row[at] = next_row, column[at] = column_y(l, i), value[at] = -(double)n;
            for (int64_t k = 0; k < n; k++)
                for (int j = 0; j < g; j++)
                    ++at, row[at] = next_row, column[at] = column_x(l, k, i, j), value[at] = 1;
        }
    }
    glp_load_matrix(p, (int)at, row, column, value);
    free(row);
    free(column);
    free(value);
    return TF_OK;
}

/* Reads the solution's placement into s, numbering the non-empty iterations 0..m'-1 in order. */
static int read_solution(glp_prob *p, const layout *l, schedule *s, tf_error *err)
{
    int64_t *renumber = tf_alloc((size_t)l->iterations, sizeof *renumber, "ILP iterations", err);
    if (!renumber)
        return TF_ERR_INPUT;
    for (int64_t k = 0; k < l->groups; k++)
        for (int64_t i = 0; i < l->iterations; i++)
            for (int j = 0; j < l->ranks; j++)
                if (glp_mip_col_val(p, column_x(l, k, i, j)) > 0.5) {
                    s->iteration[k] = i;
                    s->rank[k] = j;
                }
    for (int64_t k = 0; k < l->groups; k++)
        renumber[s->iteration[k]] = 1;
    int64_t used = 0;
    for (int64_t i = 0; i < l->iterations; i++)
        renumber[i] = renumber[i] ? used++ : -1;
    for (int64_t k = 0; k < l->groups; k++)
        s->iteration[k] = renumber[s->iteration[k]];
    s->iterations = used;
    free(renumber);
    return TF_OK;
}

/* The time limit ended the solve before it had a schedule of its own: the start stands (moved
 * into s), with the simple bound max(t_max, sum t / G) + alpha ceil(n / (G L)) (an iteration
 * holds at most G L groups). */
static void keep_start(schedule *s, schedule *start, const schedule_cost *start_cost, const double *times,
                       int64_t groups, int ranks, int per_rank, double alpha, double started, ilp_report *report)
{
    double total = 0, longest = 0;
    for (int64_t k = 0; k < groups; k++) {
        total += times[k];
        longest = fmax(longest, times[k]);
    }
    report->status = "time limit";
    report->objective = start_cost->objective;
    report->bound = fmax(longest, total / ranks) +
                    alpha * (double)((groups + (int64_t)ranks * per_rank - 1) / ((int64_t)ranks * per_rank));
    report->gap = fmax(0, (report->objective - report->bound) / report->objective);
    report->seconds = wall_seconds() - started;
    *s = *start;
    memset(start, 0, sizeof *start);
}

int opt_schedule_ilp(schedule *s, const double *times, int64_t groups, int ranks, int per_rank, double alpha,
                     const ilp_options *o, ilp_report *report, tf_error *err)
{
    memset(report, 0, sizeof *report);
    const double started = wall_seconds();
    if (schedule_check_times(times, groups, err) != TF_OK)
        return TF_ERR_INPUT;
    if (ranks < 1 || per_rank < 1)
        return tf_error_set(err, TF_ERR_INPUT, "ILP on %d rank(s), %d per rank: expected at least 1 of each", ranks,
                            per_rank);
    if (!(alpha >= 0 && isfinite(alpha)))
        return tf_error_set(err, TF_ERR_INPUT, "alpha %g: expected a finite number >= 0", alpha);
    if (!(o->seconds > 0 && o->seconds <= 86400) || !(o->gap >= 0 && o->gap < 1))
        return tf_error_set(err, TF_ERR_INPUT, "ILP limits %g s and gap %g: expected 0 < seconds <= 86400 and a gap in "
                                               "[0, 1)", o->seconds, o->gap);
    layout l = {groups, (groups + ranks - 1) / ranks, ranks, alpha > 0};
    report->columns = column_count(&l);
    if (groups > ranks && ((double)groups * (double)l.iterations * ranks > ILP_MAX_COLUMNS ||
                           report->columns > ILP_MAX_COLUMNS))
        return tf_error_set(err, TF_ERR_INPUT, "the ILP of %lld groups on %d ranks needs %.0f columns, more than %d: use "
                                               "--method greedy", (long long)groups, ranks,
                            (double)groups * (double)l.iterations * ranks + (double)l.iterations, ILP_MAX_COLUMNS);
    /* The start: greedy where it applies (L = 2), else LPT; both fit in ceil(n / G) iterations. */
    schedule start;
    int status = per_rank == 2 ? opt_schedule_greedy(&start, times, groups, ranks, err)
                               : ref_schedule_lpt(&start, times, groups, ranks, per_rank, err);
    if (status != TF_OK)
        return status;
    start.per_rank = per_rank;
    schedule_cost start_cost;
    schedule_evaluate(&start, times, alpha, &start_cost);
    report->start_objective = start_cost.objective;
    double longest = 0;
    for (int64_t k = 0; k < groups; k++)
        longest = fmax(longest, times[k]);
    if (longest == 0 || groups <= ranks) { /* every group alone in one iteration (or nothing to balance): optimal */
        *s = start;
        report->status = "optimal";
        report->objective = report->bound = start_cost.objective;
        report->seconds = wall_seconds() - started;
        return TF_OK;
    }
    double *scaled = tf_alloc((size_t)groups, sizeof *scaled, "scaled times", err);
    double *solution = scaled ? tf_alloc((size_t)report->columns + 1, sizeof *solution, "ILP start", err) : NULL;
    if (!solution) {
        free(scaled);
        schedule_free(&start);
        return TF_ERR_INPUT;
    }
    for (int64_t k = 0; k < groups; k++)
        scaled[k] = times[k] / longest;
    start_solution(&l, &start, scaled, solution);

    glp_term_out(GLP_OFF);
    glp_prob *p = glp_create_prob();
    status = build_program(p, &l, scaled, per_rank, alpha / longest, err);
    search_state state = {solution, 0, 0, 0};
    int solved = 0, returned = 0, out_of_time = 0;
    if (status == TF_OK) {
        glp_smcp simplex;
        glp_init_smcp(&simplex);
        simplex.msg_lev = GLP_MSG_OFF;
        simplex.tm_lim = (int)fmin(o->seconds * 1000, 2e9);
        const int lp = glp_simplex(p, &simplex);
        out_of_time = lp == GLP_ETMLIM || o->seconds - (wall_seconds() - started) < 1e-3;
        if (!out_of_time && (lp != 0 || glp_get_status(p) != GLP_OPT))
            status = tf_error_set(err, TF_ERR_SYSTEM, "GLPK: the relaxation of the schedule ILP failed (code %d)", lp);
    }
    if (status == TF_OK && !out_of_time) {
        glp_iocp search;
        glp_init_iocp(&search);
        search.msg_lev = GLP_MSG_OFF;
        search.presolve = GLP_OFF; /* the callback's solution vector uses the original columns */
        search.tm_lim = (int)fmax(1, fmin((o->seconds - (wall_seconds() - started)) * 1000, 2e9));
        search.mip_gap = o->gap;
        search.cb_func = on_search;
        search.cb_info = &state;
        returned = glp_intopt(p, &search);
        const int mip = glp_mip_status(p);
        solved = (returned == 0 || returned == GLP_ETMLIM || returned == GLP_EMIPGAP) &&
                 (mip == GLP_OPT || mip == GLP_FEAS);
        out_of_time = returned == GLP_ETMLIM && !solved; /* the limit came before the start was offered */
        if (!out_of_time) {
            if (returned != 0 && returned != GLP_ETMLIM && returned != GLP_EMIPGAP)
                status = tf_error_set(err, TF_ERR_SYSTEM, "GLPK: branch and cut failed with code %d", returned);
            else if (!solved)
                status = tf_error_set(err, TF_ERR_SYSTEM, "GLPK: no integer solution, not even the greedy start");
            else if (returned == 0 && mip == GLP_OPT)
                report->status = "optimal";
            else
                report->status = returned == GLP_EMIPGAP || returned == 0 ? "gap reached" : "time limit";
        }
    }
    if (status == TF_OK && out_of_time) /* no schedule of its own: the start stands */
        keep_start(s, &start, &start_cost, times, groups, ranks, per_rank, alpha, started, report);
    else if (status == TF_OK)
        status = schedule_alloc(s, groups, ranks, per_rank, err);
    if (status == TF_OK && (read_solution(p, &l, s, err) != TF_OK || schedule_balance_ranks(s, times, err) != TF_OK)) {
        schedule_free(s);
        status = TF_ERR_INPUT;
    }
    glp_delete_prob(p);
    glp_free_env(); /* GLPK's environment holds memory until freed; nothing is kept between solves */
    free(scaled);
    free(solution);
    schedule_free(&start);
    if (status != TF_OK || out_of_time)
        return status; /* keep_start() filled the report */
    schedule_cost cost;
    schedule_evaluate(s, times, alpha, &cost);
    report->objective = cost.objective;
    if (strcmp(report->status, "optimal") == 0) {
        report->bound = cost.objective;
        report->gap = 0;
    } else {
        report->bound = state.bounded ? state.bound * longest : 0;
        report->gap = fmax(0, (cost.objective - report->bound) / cost.objective);
    }
    report->seconds = wall_seconds() - started;
    return TF_OK;
}
