#include "opt/schedule_simulate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opt/schedule.h"
#include "ref/core/clock.h"
#include "ref/core/memory.h"

int schedule_sizes_cycle(const snapshot_seq *seq, int64_t snapshots, int64_t **nodes, int64_t **edges, tf_error *err)
{
    *nodes = *edges = NULL;
    if (snapshots < 1)
        return tf_error_set(err, TF_ERR_INPUT, "%lld simulated snapshots: expected at least 1", (long long)snapshots);
    *nodes = tf_alloc((size_t)snapshots, sizeof **nodes, "simulated sizes", err);
    *edges = *nodes ? tf_alloc((size_t)snapshots, sizeof **edges, "simulated sizes", err) : NULL;
    if (!*edges) {
        free(*nodes);
        *nodes = NULL;
        return TF_ERR_INPUT;
    }
    for (int64_t t = 0; t < snapshots; t++) {
        (*nodes)[t] = seq->num_nodes;
        (*edges)[t] = seq->snapshots[t % seq->num_snapshots].graph.num_edges;
    }
    return TF_OK;
}

/* The trainer's windows over `snapshots` snapshots. */
static train_schedule windows_of(int64_t snapshots, int64_t window, int64_t stride)
{
    train_schedule w = {0};
    w.train_snapshots = snapshots;
    w.length = window < snapshots ? window : snapshots;
    w.stride = stride;
    w.windows = (snapshots + stride - 1) / stride;
    w.batch = 1;
    w.steps = w.windows;
    return w;
}

int schedule_window_times(const int64_t *nodes, const int64_t *edges, int64_t snapshots, int64_t window,
                          int64_t stride, const cost_model *m, double **times, int64_t *groups, tf_error *err)
{
    *times = NULL;
    if (window < 1 || stride < 1 || snapshots < 1)
        return tf_error_set(err, TF_ERR_INPUT, "windows of %lld every %lld over %lld snapshots: expected all >= 1",
                            (long long)window, (long long)stride, (long long)snapshots);
    const train_schedule w = windows_of(snapshots, window, stride);
    if (!(*times = tf_alloc((size_t)w.windows, sizeof **times, "window times", err)))
        return TF_ERR_INPUT;
    for (int64_t k = 0; k < w.windows; k++) {
        int64_t first, count, rows = 0, window_edges = 0;
        train_schedule_span(&w, k, &first, &count);
        for (int64_t t = first; t < first + count; t++) {
            rows += nodes[t];
            window_edges += edges[t];
        }
        (*times)[k] = cost_model_predict(m, rows, window_edges);
    }
    *groups = w.windows;
    return schedule_check_times(*times, w.windows, err) == TF_OK ? TF_OK : TF_ERR_INPUT;
}

int opt_schedule_simulate(const double *times, int64_t groups, const int *ranks, int rank_counts,
                          simulation_row **rows, tf_error *err)
{
    if (!(*rows = tf_alloc(3 * (size_t)rank_counts, sizeof **rows, "simulation rows", err)))
        return TF_ERR_INPUT;
    int status = TF_OK;
    for (int r = 0; status == TF_OK && r < rank_counts; r++)
        for (int method = SCHEDULE_ROUNDROBIN; status == TF_OK && method <= SCHEDULE_GREEDY; method++) {
            const train_schedule steps = {groups, 1, 1, groups, ranks[r], (groups + ranks[r] - 1) / ranks[r],
                                          BATCH_CONSECUTIVE};
            schedule s;
            const double started = wall_seconds();
            status = opt_schedule_compute(&s, (schedule_method)method, times, groups, ranks[r], 2, &steps, 0, NULL,
                                          NULL, err);
            if (status != TF_OK)
                break;
            simulation_row *row = &(*rows)[3 * r + method];
            row->solve_seconds = wall_seconds() - started;
            schedule_cost cost;
            schedule_evaluate(&s, times, 0, &cost);
            row->ranks = ranks[r];
            row->method = (schedule_method)method;
            row->groups = groups;
            row->iterations = s.iterations;
            row->efficiency = cost.efficiency;
            row->imbalance = cost.imbalance;
            schedule_free(&s);
        }
    if (status != TF_OK) {
        free(*rows);
        *rows = NULL;
    }
    return status;
}

int schedule_predict_esdg(const int64_t *nodes, const int64_t *edges, int64_t snapshots, int64_t window,
                          int64_t stride, const cost_model *m, int ranks, double *imbalance, tf_error *err)
{
    const train_schedule w = windows_of(snapshots, window, stride);
    if (ranks < 1 || ranks > w.length)
        return tf_error_set(err, TF_ERR_INPUT, "ESDG spreads a window's %lld snapshots over the ranks: %d rank(s) need "
                                               "1..%lld", (long long)w.length, ranks, (long long)w.length);
    double *busy = tf_alloc((size_t)ranks, sizeof *busy, "ESDG totals", err);
    if (!busy)
        return TF_ERR_INPUT;
    for (int64_t k = 0; k < w.windows; k++) {
        int64_t first, count;
        train_schedule_span(&w, k, &first, &count);
        for (int j = 0; j < ranks; j++)
            for (int64_t p = j * count / ranks; p < (j + 1) * count / ranks; p++)
                busy[j] += m->per_row * (double)nodes[first + p] + m->per_edge * (double)edges[first + p] +
                           m->per_group / (double)count;
    }
    double most = busy[0], least = busy[0];
    for (int j = 1; j < ranks; j++) {
        most = fmax(most, busy[j]);
        least = fmin(least, busy[j]);
    }
    *imbalance = least > 0 ? most / least : INFINITY;
    free(busy);
    return TF_OK;
}
