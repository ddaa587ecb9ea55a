#include "ref/incremental.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"
#include "ref/nn/propagate.h"

static const char *const aggregator_names[AGGREGATOR_COUNT] = {"sum", "mean", "symmetric", "chebyshev",
                                                                        "max", "min"};

const char *aggregator_name(aggregator kind)
{
    return kind >= 0 && kind < AGGREGATOR_COUNT ? aggregator_names[kind] : "unknown";
}

int aggregator_parse(const char *name, aggregator *kind, tf_error *err)
{
    for (int k = 0; k < AGGREGATOR_COUNT; k++)
        if (strcmp(name, aggregator_names[k]) == 0) {
            *kind = (aggregator)k;
            return TF_OK;
        }
    return tf_error_set(err, TF_ERR_INPUT, "unknown aggregator '%s': expected sum, mean, symmetric, chebyshev, max or "
                                               "min", name);
}

/* The message of an edge for max and min: w x, with -0 made +0 so that which of two equal
 * messages wins can never change the bits of the result. */
static float message(float weight, float x)
{
    float m = weight * x;
    return m == 0.0f ? 0.0f : m;
}

/* One row of max (sign = 1) or min (sign = -1): the first best message in CSR order.
 * x [num_nodes][width]; row v of y [num_nodes][width] written. */
static void extreme_row(const csr *g, const float *x, int64_t width, int64_t v, int sign, float *y)
{
    int64_t begin = g->row_ptr[v], end = g->row_ptr[v + 1];
    for (int64_t c = 0; c < width; c++) {
        float best = 0.0f;
        for (int64_t e = begin; e < end; e++) {
            float m = message(g->weight[e], x[(int64_t)g->col[e] * width + c]);
            if (e == begin || (sign > 0 ? m > best : m < best))
                best = m;
        }
        y[v * width + c] = best;
    }
}

void chebyshev_scales(const csr *g, double *scale)
{
    const int64_t n = g->num_nodes;
    for (int64_t v = 0; v < n; v++)
        scale[v] = 0.0;
    for (int64_t v = 0; v < n; v++) /* out-degrees first, as ref_propagation_chebyshev() sums them */
        for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++)
            if (g->col[e] != v)
                scale[g->col[e]] += g->weight[e];
    for (int64_t v = 0; v < n; v++)
        scale[v] = scale[v] > 0 ? 1.0 / sqrt(scale[v]) : 0.0;
}

/* The operator of a linear aggregator: propagate.h's GCN operator for sum, mean and symmetric;
 * for chebyshev the scaled Laplacian with lambda_max fixed at 2, -w / sqrt(d_u d_v) off the
 * loops and 0 on the diagonal (ref_propagation_chebyshev() gives the same whenever its
 * lambda_max is 2; this aggregator is defined without lambda_max, which is the whole graph's
 * and so cannot be updated row by row: opt/incremental_inputs.c rescales where it is not 2). */
static int linear_operator(propagation *p, const csr *g, aggregator kind, tf_error *err)
{
    if (kind != AGGREGATOR_CHEBYSHEV) {
        edge_normalization normalization = kind == AGGREGATOR_SUM    ? EDGE_NORM_NONE
                                           : kind == AGGREGATOR_MEAN ? EDGE_NORM_MEAN
                                                                     : EDGE_NORM_SYMMETRIC;
        return ref_propagation_gcn(p, g, normalization, kind == AGGREGATOR_SYMMETRIC, err);
    }
    if (ref_propagation_chebyshev(p, g, err) != TF_OK)
        return TF_ERR_INPUT;
    double *scale = tf_alloc((size_t)g->num_nodes + 1, sizeof *scale, "weighted out-degrees", err);
    if (!scale) {
        ref_propagation_free(p);
        return TF_ERR_INPUT;
    }
    chebyshev_scales(g, scale);
    for (int64_t v = 0; v < g->num_nodes; v++) {
        for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++)
            p->edge_coefficient[e] = g->col[e] == v ? 0.0f : (float)(-g->weight[e] * scale[g->col[e]] * scale[v]);
        p->self_coefficient[v] = 0.0f;
    }
    free(scale);
    return TF_OK;
}

int ref_aggregate(const csr *g, const float *x, int64_t width, aggregator kind, float *y, tf_error *err)
{
    if (kind == AGGREGATOR_MAX || kind == AGGREGATOR_MIN) {
        for (int64_t v = 0; v < g->num_nodes; v++)
            extreme_row(g, x, width, v, kind == AGGREGATOR_MAX ? 1 : -1, y);
        return TF_OK;
    }
    propagation p;
    if (linear_operator(&p, g, kind, err) != TF_OK)
        return TF_ERR_INPUT;
    ref_propagate_forward(&p, x, width, y);
    ref_propagation_free(&p);
    return TF_OK;
}

double aggregation_error(const csr *g, const float *x, int64_t width, aggregator kind, const float *ours,
                         const float *reference)
{
    tf_error err;
    const int64_t cells = g->num_nodes * width;
    float *absolute = malloc((size_t)cells * sizeof(float) + 1), *magnitude = malloc((size_t)cells * sizeof(float) + 1);
    propagation p;
    memset(&p, 0, sizeof p);
    double worst = -1;
    if (!absolute || !magnitude)
        goto done;
    for (int64_t i = 0; i < cells; i++)
        absolute[i] = fabsf(x[i]);
    if (kind == AGGREGATOR_MAX || kind == AGGREGATOR_MIN) {
        /* the largest |w x| per value: the max of |messages| */
        csr positive = *g;
        float *weights = malloc((size_t)g->num_edges * sizeof(float) + 1);
        if (!weights)
            goto done;
        for (int64_t e = 0; e < g->num_edges; e++)
            weights[e] = fabsf(g->weight[e]);
        positive.weight = weights;
        ref_aggregate(&positive, absolute, width, AGGREGATOR_MAX, magnitude, &err);
        free(weights);
    } else {
        if (linear_operator(&p, g, kind, &err) != TF_OK)
            goto done;
        for (int64_t e = 0; e < g->num_edges; e++)
            p.edge_coefficient[e] = fabsf(p.edge_coefficient[e]);
        for (int64_t v = 0; v < g->num_nodes; v++)
            p.self_coefficient[v] = fabsf(p.self_coefficient[v]);
        ref_propagate_forward(&p, absolute, width, magnitude);
    }
    worst = 0;
    for (int64_t i = 0; i < cells; i++) {
        double e = fabs((double)ours[i] - (double)reference[i]) / fmax(1.0, (double)magnitude[i]);
        worst = isnan(e) ? INFINITY : fmax(worst, e);
    }
done:
    ref_propagation_free(&p);
    free(absolute);
    free(magnitude);
    return worst;
}

/* ---- the structural difference ------------------------------------------------------------ */

static uint32_t weight_bits(float w)
{
    uint32_t bits;
    memcpy(&bits, &w, sizeof bits);
    return bits;
}

int64_t edge_difference(const csr *previous, const csr *current, uint8_t *removed, uint8_t *added)
{
    int64_t marked = 0;
    for (int64_t v = 0; v < previous->num_nodes; v++) {
        int64_t a = previous->row_ptr[v], a_end = previous->row_ptr[v + 1];
        int64_t b = current->row_ptr[v], b_end = current->row_ptr[v + 1];
        /* Both rows are sorted by source: walk them together, one source group at a time. */
        while (a < a_end || b < b_end) {
            int32_t source = a < a_end && (b >= b_end || previous->col[a] <= current->col[b]) ? previous->col[a]
                                                                                              : current->col[b];
            int64_t a_group = a, b_group = b;
            while (a_group < a_end && previous->col[a_group] == source)
                a_group++;
            while (b_group < b_end && current->col[b_group] == source)
                b_group++;
            /* Within a group (duplicate edges u -> v) pair equal weights, first come first paired. */
            for (int64_t i = a; i < a_group; i++)
                removed[i] = 1;
            for (int64_t j = b; j < b_group; j++) {
                added[j] = 1;
                for (int64_t i = a; i < a_group; i++)
                    if (removed[i] && weight_bits(previous->weight[i]) == weight_bits(current->weight[j])) {
                        removed[i] = 0;
                        added[j] = 0;
                        break;
                    }
            }
            for (int64_t i = a; i < a_group; i++)
                marked += removed[i];
            for (int64_t j = b; j < b_group; j++)
                marked += added[j];
            a = a_group;
            b = b_group;
        }
    }
    return marked;
}

/* ---- the delta ---------------------------------------------------------------------------- */

void snapshot_delta_free(snapshot_delta *delta)
{
    free(delta->rows);
    free(delta->row_scale);
    free(delta->minus_offsets);
    free(delta->minus_source);
    free(delta->minus_coefficient);
    free(delta->plus_offsets);
    free(delta->plus_source);
    free(delta->plus_coefficient);
    memset(delta, 0, sizeof *delta);
}

int64_t snapshot_delta_entries(const snapshot_delta *delta)
{
    return delta->num_rows ? delta->minus_offsets[delta->num_rows] + delta->plus_offsets[delta->num_rows] : 0;
}

/* What the symmetric aggregator needs of one graph: per vertex the weight of its self loop
 * (the last existing loop, else 1) and 1/sqrt(d) with d the weighted in-degree without loops
 * plus that loop weight, computed in double exactly as ref_propagation_gcn() does.
 * loop, scale [num_nodes] (overwritten). */
static void symmetric_scales(const csr *g, double *loop, double *scale)
{
    for (int64_t v = 0; v < g->num_nodes; v++) {
        double degree = 0.0;
        loop[v] = 1.0;
        for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++) {
            if (g->col[e] == v)
                loop[v] = g->weight[e];
            else
                degree += g->weight[e];
        }
        degree += loop[v];
        scale[v] = degree > 0 ? 1.0 / sqrt(degree) : 0.0;
    }
}

/* Whether the aggregator scales each source by 1 / sqrt(d_u) (and so changes a source's every
 * out-edge with its degree). */
static int degree_normalized(aggregator kind) { return kind == AGGREGATOR_SYMMETRIC || kind == AGGREGATOR_CHEBYSHEV; }

/* The output scale of row v of graph g for the linear aggregators; vertex_scale [num_nodes]:
 * symmetric_scales() or chebyshev_scales() of g. */
static double row_scale(aggregator kind, const csr *g, int64_t v, const double *vertex_scale)
{
    if (kind == AGGREGATOR_MEAN) {
        int64_t count = g->row_ptr[v + 1] - g->row_ptr[v];
        return count ? 1.0 / (double)count : 0.0;
    }
    return degree_normalized(kind) ? vertex_scale[v] : 1.0;
}

/* Growing entry arrays for one side (minus or plus). */
typedef struct entry_side {
    int64_t count, capacity;
    int32_t *source;
    double *coefficient;
} entry_side;

static int side_push(entry_side *s, int32_t source, double coefficient, tf_error *err)
{
    if (s->count == s->capacity) {
        int64_t capacity = s->capacity ? 2 * s->capacity : 1024;
        int32_t *src = tf_realloc(s->source, (size_t)capacity, sizeof *src, "delta entries", err);
        if (!src)
            return TF_ERR_INPUT;
        s->source = src;
        double *c = tf_realloc(s->coefficient, (size_t)capacity, sizeof *c, "delta entries", err);
        if (!c)
            return TF_ERR_INPUT;
        s->coefficient = c;
        s->capacity = capacity;
    }
    s->source[s->count] = source;
    s->coefficient[s->count] = coefficient;
    s->count++;
    return TF_OK;
}

/* Scratch of snapshot_delta_build(), freed in one place. */
typedef struct delta_scratch {
    uint8_t *removed, *added, *feature_changed, *source_changed;
    double *loop_before, *scale_before, *loop_after, *scale_after;
} delta_scratch;

static void scratch_free(delta_scratch *s)
{
    free(s->removed);
    free(s->added);
    free(s->feature_changed);
    free(s->source_changed);
    free(s->loop_before);
    free(s->scale_before);
    free(s->loop_after);
    free(s->scale_after);
}

/* Appends the entries of row v of g to `side`: every edge whose source changed, plus the
 * structurally marked ones (marked [num_edges of g]); for symmetric, loops are left out (the
 * self term is its own entry), and for chebyshev too (L^ has no diagonal). source_changed
 * [num_nodes], scale [num_nodes]. */
static int row_entries(const csr *g, int64_t v, aggregator kind, const uint8_t *marked, const uint8_t *source_changed,
                       const double *scale, entry_side *side, tf_error *err)
{
    for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++) {
        int32_t u = g->col[e];
        if (!(marked[e] || source_changed[u]))
            continue;
        if (degree_normalized(kind) && u == v)
            continue;
        double coefficient = kind == AGGREGATOR_SYMMETRIC   ? g->weight[e] * scale[u]
                             : kind == AGGREGATOR_CHEBYSHEV ? -g->weight[e] * scale[u]
                                                            : g->weight[e];
        if (side_push(side, u, coefficient, err) != TF_OK)
            return TF_ERR_INPUT;
    }
    return TF_OK;
}

int snapshot_delta_build(snapshot_delta *delta, const snapshot *previous, const snapshot *current,
                         aggregator kind, tf_error *err)
{
    memset(delta, 0, sizeof *delta);
    const csr *before = &previous->graph, *after = &current->graph;
    const int64_t n = before->num_nodes;
    if (after->num_nodes != n || previous->features.size != current->features.size)
        return tf_error_set(err, TF_ERR_INPUT, "snapshot delta: snapshots of different shapes (%lld and %lld vertices)",
                            (long long)n, (long long)after->num_nodes);
    const int64_t width = n ? previous->features.size / n : 0;
    delta->kind = kind;
    delta->previous_edges = before->num_edges;
    delta->current_edges = after->num_edges;

    delta_scratch s = {0};
    entry_side minus = {0}, plus = {0};
    const int symmetric = kind == AGGREGATOR_SYMMETRIC, normalized = degree_normalized(kind);
    if (!(s.removed = tf_alloc((size_t)before->num_edges, 1, "delta marks", err)) ||
        !(s.added = tf_alloc((size_t)after->num_edges, 1, "delta marks", err)) ||
        !(s.feature_changed = tf_alloc((size_t)n, 1, "delta marks", err)) ||
        !(s.source_changed = tf_alloc((size_t)n, 1, "delta marks", err)) ||
        !(delta->rows = tf_alloc((size_t)n, sizeof *delta->rows, "delta rows", err)) ||
        !(delta->row_scale = tf_alloc((size_t)n, sizeof *delta->row_scale, "delta rows", err)) ||
        !(delta->minus_offsets = tf_alloc((size_t)n + 1, sizeof(int64_t), "delta rows", err)) ||
        !(delta->plus_offsets = tf_alloc((size_t)n + 1, sizeof(int64_t), "delta rows", err)) ||
        (normalized && (!(s.loop_before = tf_alloc((size_t)n, sizeof(double), "delta scales", err)) ||
                       !(s.scale_before = tf_alloc((size_t)n, sizeof(double), "delta scales", err)) ||
                       !(s.loop_after = tf_alloc((size_t)n, sizeof(double), "delta scales", err)) ||
                       !(s.scale_after = tf_alloc((size_t)n, sizeof(double), "delta scales", err)))))
        goto fail;

    int64_t marked = edge_difference(before, after, s.removed, s.added);
    for (int64_t e = 0; e < before->num_edges; e++)
        delta->removed_edges += s.removed[e];
    delta->added_edges = marked - delta->removed_edges;
    for (int64_t v = 0; v < n; v++) {
        s.feature_changed[v] = memcmp(previous->features.data + v * width, current->features.data + v * width,
                                      (size_t)width * sizeof(float)) != 0;
        delta->changed_vertices += s.feature_changed[v];
    }
    /* A source whose contributions change: its features, and for symmetric and chebyshev also its
     * scale. */
    if (symmetric) {
        symmetric_scales(before, s.loop_before, s.scale_before);
        symmetric_scales(after, s.loop_after, s.scale_after);
    } else if (normalized) {
        chebyshev_scales(before, s.scale_before);
        chebyshev_scales(after, s.scale_after);
    }
    for (int64_t u = 0; u < n; u++)
        s.source_changed[u] = s.feature_changed[u] || (normalized && s.scale_before[u] != s.scale_after[u]);

    for (int64_t v = 0; v < n; v++) {
        int64_t minus_start = minus.count, plus_start = plus.count;
        if (row_entries(before, v, kind, s.removed, s.source_changed, s.scale_before, &minus, err) != TF_OK ||
            row_entries(after, v, kind, s.added, s.source_changed, s.scale_after, &plus, err) != TF_OK)
            goto fail;
        /* The symmetric self term w_loop x_v / sqrt(d_v) changes with x_v, d_v or the loop weight. */
        if (symmetric && (s.source_changed[v] || s.loop_before[v] != s.loop_after[v]) &&
            (side_push(&minus, (int32_t)v, s.loop_before[v] * s.scale_before[v], err) != TF_OK ||
             side_push(&plus, (int32_t)v, s.loop_after[v] * s.scale_after[v], err) != TF_OK))
            goto fail;
        double scale_after = kind == AGGREGATOR_MAX || kind == AGGREGATOR_MIN ? 1.0 : row_scale(kind, after, v, s.scale_after);
        double scale_before =
            kind == AGGREGATOR_MAX || kind == AGGREGATOR_MIN ? 1.0 : row_scale(kind, before, v, s.scale_before);
        if (minus.count == minus_start && plus.count == plus_start && scale_after == scale_before)
            continue;
        int64_t i = delta->num_rows++;
        delta->rows[i] = (int32_t)v;
        delta->row_scale[i] = scale_after;
        delta->minus_offsets[i] = minus_start;
        delta->plus_offsets[i] = plus_start;
    }
    delta->minus_offsets[delta->num_rows] = minus.count;
    delta->plus_offsets[delta->num_rows] = plus.count;
    delta->minus_source = minus.source;
    delta->minus_coefficient = minus.coefficient;
    delta->plus_source = plus.source;
    delta->plus_coefficient = plus.coefficient;
    scratch_free(&s);
    return TF_OK;
fail:
    free(minus.source);
    free(minus.coefficient);
    free(plus.source);
    free(plus.coefficient);
    scratch_free(&s);
    snapshot_delta_free(delta);
    return TF_ERR_INPUT;
}
