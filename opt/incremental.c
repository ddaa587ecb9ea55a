#include "opt/incremental.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"

void incremental_options_default(incremental_options *options)
{
    options->threshold = INCREMENTAL_DEFAULT_THRESHOLD;
    options->refresh_interval = INCREMENTAL_DEFAULT_REFRESH;
}

static int is_extreme(aggregator kind) { return kind == AGGREGATOR_MAX || kind == AGGREGATOR_MIN; }

int opt_incremental_create(incremental_aggregation *a, aggregator kind, int64_t num_nodes, int64_t width,
                           const incremental_options *options, tf_error *err)
{
    memset(a, 0, sizeof *a);
    a->kind = kind;
    a->num_nodes = num_nodes;
    a->width = width;
    a->snapshot = -1;
    if (options)
        a->options = *options;
    else
        incremental_options_default(&a->options);
    size_t cells = (size_t)(num_nodes * width);
    int ok = (a->value = tf_alloc(cells, sizeof(float), "incremental aggregation", err)) != NULL;
    if (ok && is_extreme(kind))
        ok = (a->winner = tf_alloc(cells, sizeof(int32_t), "incremental aggregation winners", err)) != NULL;
    else if (ok)
        ok = (a->accumulator = tf_alloc(cells, sizeof(double), "incremental aggregation sums", err)) != NULL &&
             (a->scale = tf_alloc((size_t)num_nodes, sizeof(double), "incremental aggregation scales", err)) != NULL;
    if (!ok) {
        opt_incremental_free(a);
        return TF_ERR_INPUT;
    }
    return TF_OK;
}

void opt_incremental_free(incremental_aggregation *a)
{
    free(a->value);
    free(a->accumulator);
    free(a->scale);
    free(a->winner);
    memset(a, 0, sizeof *a);
}

/* Max/min message, exactly as ref/incremental.c forms it (w x, -0 made +0). */
static float message(float weight, float x)
{
    float m = weight * x;
    return m == 0.0f ? 0.0f : m;
}

/* Column c of row v of max (sign 1) or min (sign -1) from scratch, with its winner: the
 * reference's first-best rule in CSR order. x [num_nodes][width]. */
static void extreme_cell(incremental_aggregation *a, const csr *g, const float *x, int64_t v, int64_t c, int sign)
{
    const int64_t width = a->width;
    float best = 0.0f;
    int32_t winner = -1;
    for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++) {
        float m = message(g->weight[e], x[(int64_t)g->col[e] * width + c]);
        if (winner < 0 || (sign > 0 ? m > best : m < best)) {
            best = m;
            winner = g->col[e];
        }
    }
    a->value[v * width + c] = best;
    a->winner[v * width + c] = winner;
}

/* Every column of row v, as extreme_cell(); x [num_nodes][width]. */
static void extreme_row(incremental_aggregation *a, const csr *g, const float *x, int64_t v, int sign)
{
    for (int64_t c = 0; c < a->width; c++)
        extreme_cell(a, g, x, v, c, sign);
}

/* The symmetric self loop of row v: the weight of its last loop edge, else 1. */
static double loop_weight(const csr *g, int64_t v)
{
    double loop = 1.0;
    for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++)
        if (g->col[e] == v)
            loop = g->weight[e];
    return loop;
}

void opt_incremental_reset(incremental_aggregation *a, const snapshot *s, int64_t t)
{
    const csr *g = &s->graph;
    const float *x = s->features.data;
    const int64_t n = a->num_nodes, width = a->width;
    const aggregator kind = a->kind;
    a->snapshot = t;
    a->stats.full++;
    if (is_extreme(kind)) {
#pragma omp parallel for schedule(dynamic, 256)
        for (int64_t v = 0; v < n; v++)
            extreme_row(a, g, x, v, kind == AGGREGATOR_MAX ? 1 : -1);
        return;
    }
    /* Scales first: the symmetric and chebyshev coefficients of an edge need its source's
     * 1 / sqrt(d_u). Chebyshev's out-degrees are sums over each vertex's out-edges, scattered
     * across rows: one thread, by the delta's own function, so the scales agree bit for bit. */
    const int chebyshev = kind == AGGREGATOR_CHEBYSHEV;
    if (chebyshev)
        chebyshev_scales(g, a->scale);
#pragma omp parallel for schedule(static)
    for (int64_t v = 0; v < n; v++) {
        if (chebyshev)
            continue;
        int64_t count = g->row_ptr[v + 1] - g->row_ptr[v];
        if (kind == AGGREGATOR_SUM) {
            a->scale[v] = 1.0;
        } else if (kind == AGGREGATOR_MEAN) {
            a->scale[v] = count ? 1.0 / (double)count : 0.0;
        } else {
            double degree = loop_weight(g, v);
            for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++)
                if (g->col[e] != v)
                    degree += g->weight[e];
            a->scale[v] = degree > 0 ? 1.0 / sqrt(degree) : 0.0;
        }
    }
#pragma omp parallel for schedule(dynamic, 256)
    for (int64_t v = 0; v < n; v++) {
        double *sum = a->accumulator + v * width;
        for (int64_t c = 0; c < width; c++)
            sum[c] = 0.0;
        for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++) {
            int32_t u = g->col[e];
            if ((kind == AGGREGATOR_SYMMETRIC || chebyshev) && u == v)
                continue;
            double coefficient = kind == AGGREGATOR_SYMMETRIC ? g->weight[e] * a->scale[u]
                                 : chebyshev                  ? -g->weight[e] * a->scale[u]
                                                              : g->weight[e];
            const float *xu = x + (int64_t)u * width;
            for (int64_t c = 0; c < width; c++)
                sum[c] += coefficient * xu[c];
        }
        if (kind == AGGREGATOR_SYMMETRIC) {
            double coefficient = loop_weight(g, v) * a->scale[v];
            for (int64_t c = 0; c < width; c++)
                sum[c] += coefficient * x[v * width + c];
        }
        for (int64_t c = 0; c < width; c++)
            a->value[v * width + c] = (float)(sum[c] * a->scale[v]);
    }
}

/* How many delta rows ahead apply_linear() and apply_extreme() ask the memory system for. */
enum { PREFETCH_DISTANCE = 4 };

/* The rows and sources are scattered: each touch is a cache miss. Asking for what delta row
 * i + PREFETCH_DISTANCE touches a few iterations ahead overlaps those misses (a speed hint only;
 * no effect on values): its two state rows (rows of first_row and second_row bytes in first and
 * second) and its sources, of x_before for the lost edges (when given) and of x_after for the
 * new ones ([num_nodes][width] each). */
static void prefetch_ahead(const snapshot_delta *d, int64_t i, int64_t width, const void *first, size_t first_row,
                           const void *second, size_t second_row, const float *x_before, const float *x_after)
{
    const int64_t j = i + PREFETCH_DISTANCE;
    if (j >= d->num_rows)
        return;
    const int64_t ahead = d->rows[j];
    __builtin_prefetch((const char *)first + ahead * (int64_t)first_row, 1);
    __builtin_prefetch((const char *)second + ahead * (int64_t)second_row, 1);
    for (int64_t k = d->minus_offsets[j]; x_before && k < d->minus_offsets[j + 1]; k++)
        __builtin_prefetch(x_before + (int64_t)d->minus_source[k] * width);
    for (int64_t k = d->plus_offsets[j]; k < d->plus_offsets[j + 1]; k++)
        __builtin_prefetch(x_after + (int64_t)d->plus_source[k] * width);
}

/* Apply a delta to the linear aggregators: row i of the delta, in parallel. x_before, x_after
 * [num_nodes][width]: the features before and after the delta. */
static void apply_linear(incremental_aggregation *a, const float *x_before, const float *x_after,
                         const snapshot_delta *d)
{
    const int64_t width = a->width;
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t i = 0; i < d->num_rows; i++) {
        const int64_t v = d->rows[i];
        double *sum = a->accumulator + v * width;
        prefetch_ahead(d, i, width, a->accumulator, (size_t)width * sizeof(double), a->value,
                       (size_t)width * sizeof(float), x_before, x_after);
        for (int64_t k = d->minus_offsets[i]; k < d->minus_offsets[i + 1]; k++) {
            const float *xu = x_before + (int64_t)d->minus_source[k] * width;
            for (int64_t c = 0; c < width; c++)
                sum[c] -= d->minus_coefficient[k] * xu[c];
        }
        for (int64_t k = d->plus_offsets[i]; k < d->plus_offsets[i + 1]; k++) {
            const float *xu = x_after + (int64_t)d->plus_source[k] * width;
            for (int64_t c = 0; c < width; c++)
                sum[c] += d->plus_coefficient[k] * xu[c];
        }
        a->scale[v] = d->row_scale[i];
        for (int64_t c = 0; c < width; c++)
            a->value[v * width + c] = (float)(sum[c] * a->scale[v]);
    }
}

/* Apply a delta to max or min: recompute the cells (row, column) that lost their winner,
 * compare G+ into the rest. A lost winner is marked -2 first, so the G+ pass skips the cells
 * the recompute (which reads the current graph, G+ included) will settle. x_after
 * [num_nodes][width]. */
static void apply_extreme(incremental_aggregation *a, const csr *g_after, const float *x_after, const snapshot_delta *d)
{
    const int64_t width = a->width;
    const int sign = a->kind == AGGREGATOR_MAX ? 1 : -1;
    int64_t recomputed = 0;
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : recomputed)
    for (int64_t i = 0; i < d->num_rows; i++) {
        const int64_t v = d->rows[i];
        float *value = a->value + v * width;
        int32_t *winner = a->winner + v * width;
        prefetch_ahead(d, i, width, a->value, (size_t)width * sizeof(float), a->winner, (size_t)width * sizeof(int32_t),
                       NULL, x_after);
        int lost = 0;
        for (int64_t k = d->minus_offsets[i]; k < d->minus_offsets[i + 1]; k++)
            for (int64_t c = 0; c < width; c++)
                if (winner[c] == d->minus_source[k]) {
                    winner[c] = -2;
                    lost = 1;
                }
        for (int64_t k = d->plus_offsets[i]; k < d->plus_offsets[i + 1]; k++) {
            const int32_t u = d->plus_source[k];
            const float weight = (float)d->plus_coefficient[k];
            for (int64_t c = 0; c < width; c++) {
                if (winner[c] == -2)
                    continue;
                float m = message(weight, x_after[(int64_t)u * width + c]);
                if (winner[c] < 0 || (sign > 0 ? m > value[c] : m < value[c])) {
                    value[c] = m;
                    winner[c] = u;
                }
            }
        }
        for (int64_t c = 0; lost && c < width; c++)
            if (winner[c] == -2)
                extreme_cell(a, g_after, x_after, v, c, sign);
        recomputed += lost;
    }
    a->stats.rows_recomputed += recomputed;
}

void opt_incremental_advance(incremental_aggregation *a, const snapshot *previous, const snapshot *current,
                             const snapshot_delta *delta, int64_t t)
{
    int64_t entries = snapshot_delta_entries(delta);
    double edges = current->graph.num_edges > 0 ? (double)current->graph.num_edges : 1.0;
    if ((double)entries > a->options.threshold * edges) {
        a->stats.fallbacks++;
        opt_incremental_reset(a, current, t);
        return;
    }
    if (is_extreme(a->kind))
        apply_extreme(a, &current->graph, current->features.data, delta);
    else
        apply_linear(a, previous->features.data, current->features.data, delta);
    a->snapshot = t;
    a->stats.incremental++;
    a->stats.entries += entries;
}

void opt_incremental_seek(incremental_aggregation *a, const snapshot_seq *seq, const snapshot_delta *deltas, int64_t t)
{
    if (a->snapshot == t)
        return;
    int64_t segment = a->options.refresh_interval > 0 ? t - t % a->options.refresh_interval : 0;
    if (a->snapshot < segment || a->snapshot > t)
        opt_incremental_reset(a, &seq->snapshots[segment], segment);
    while (a->snapshot < t) {
        int64_t next = a->snapshot + 1;
        opt_incremental_advance(a, &seq->snapshots[next - 1], &seq->snapshots[next], &deltas[next], next);
    }
}

int snapshot_delta_chain_build(snapshot_delta **deltas, const snapshot_seq *seq, aggregator kind, tf_error *err)
{
    *deltas = tf_alloc((size_t)seq->num_snapshots, sizeof **deltas, "snapshot deltas", err);
    if (!*deltas)
        return TF_ERR_INPUT;
    for (int64_t t = 1; t < seq->num_snapshots; t++)
        if (snapshot_delta_build(&(*deltas)[t], &seq->snapshots[t - 1], &seq->snapshots[t], kind, err) != TF_OK) {
            snapshot_delta_chain_free(*deltas, seq->num_snapshots);
            *deltas = NULL;
            tf_error_prefix(err, "snapshot %lld", (long long)t);
            return TF_ERR_INPUT;
        }
    return TF_OK;
}

void snapshot_delta_chain_free(snapshot_delta *deltas, int64_t num_snapshots)
{
    if (!deltas)
        return;
    for (int64_t t = 0; t < num_snapshots; t++)
        snapshot_delta_free(&deltas[t]);
    free(deltas);
}

int opt_aggregate(const csr *g, const float *x, int64_t width, aggregator kind, float *y, tf_error *err)
{
    incremental_aggregation a;
    if (opt_incremental_create(&a, kind, g->num_nodes, width, NULL, err) != TF_OK)
        return TF_ERR_INPUT;
    /* reset() reads only the graph and the features of its snapshot. */
    snapshot s = {.graph = *g, .features = {.data = (float *)x, .size = g->num_nodes * width}};
    opt_incremental_reset(&a, &s, 0);
    memcpy(y, a.value, (size_t)(g->num_nodes * width) * sizeof(float));
    opt_incremental_free(&a);
    return TF_OK;
}
