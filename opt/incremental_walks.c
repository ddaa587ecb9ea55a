/* DCRNN's diffusions of X_t served by deltas and the K-hop closure (opt/incremental_walks.h). */
#include "opt/incremental_walks.h"

#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"

/* Walk d's graphs and messages for every snapshot: the snapshots' own graphs (d = 0) or their
 * reverses (d = 1), features x_u / d_out(u) over that graph (0 where the degree is 0), and those
 * out-degrees into degrees [T][N]. */
static int build_messages(snapshot_seq *messages, double *degrees, const snapshot_seq *seq, int d, tf_error *err)
{
    const int64_t n = seq->num_nodes, f = seq->feature_width;
    int status = snapshot_seq_alloc(messages, seq->num_snapshots, n, f, seq->target_width, err);
    double *degree = status == TF_OK ? tf_alloc((size_t)n + 1, sizeof *degree, "walk degrees", err) : NULL;
    if (!degree)
        status = TF_ERR_INPUT;
    for (int64_t t = 0; status == TF_OK && t < seq->num_snapshots; t++) {
        const csr *g = &seq->snapshots[t].graph;
        int32_t *ends = tf_alloc((size_t)(2 * g->num_edges) + 1, sizeof *ends, "walk edges", err);
        if (!ends) {
            status = TF_ERR_INPUT;
            break;
        }
        for (int64_t v = 0; v < n; v++) /* ends [2][E]: sources, then destinations, of the walk's graph */
            for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++) {
                ends[(d == 0 ? 0 : g->num_edges) + e] = g->col[e];
                ends[(d == 0 ? g->num_edges : 0) + e] = (int32_t)v;
            }
        status = snapshot_seq_set_edges(messages, t, g->num_edges, ends, ends + g->num_edges, g->weight, err);
        free(ends);
        const csr *walk = &messages->snapshots[t].graph;
        memset(degree, 0, (size_t)n * sizeof *degree);
        for (int64_t v = 0; status == TF_OK && v < n; v++) /* out-degrees of the walk's graph, as the reference's */
            for (int64_t e = walk->row_ptr[v]; e < walk->row_ptr[v + 1]; e++)
                degree[walk->col[e]] += walk->weight[e];
        const float *x = seq->snapshots[t].features.data;
        float *message = messages->snapshots[t].features.data;
        for (int64_t i = 0; status == TF_OK && i < n * f; i++)
            message[i] = degree[i / f] != 0.0 ? (float)(x[i] / degree[i / f]) : 0.0f;
        if (status == TF_OK)
            memcpy(degrees + t * n, degree, (size_t)n * sizeof *degree);
    }
    free(degree);
    return status;
}

int incremental_walks_create(incremental_walks *w, const snapshot_seq *seq, int order,
                             const incremental_options *options, tf_error *err)
{
    memset(w, 0, sizeof *w);
    if (order < 2)
        return tf_error_set(err, TF_ERR_INPUT, "incremental walks: K = %d diffuses nothing (T_0 = X_t); use K >= 2",
                            order);
    w->seq = seq;
    w->order = order;
    const int64_t size = seq->num_nodes * seq->feature_width;
    int status = (w->changed = tf_alloc((size_t)((order + 1) * seq->num_nodes), 1, "closure rows", err)) ? TF_OK
                                                                                                 : TF_ERR_INPUT;
    for (int d = 0; status == TF_OK && d < 2; d++) {
        diffusion_walk *walk = &w->walks[d];
        walk->held = -1;
        if (!(walk->degrees = tf_alloc((size_t)(seq->num_snapshots * seq->num_nodes) + 1, sizeof(double),
                                       "walk degrees", err)))
            status = TF_ERR_INPUT;
        else if ((status = build_messages(&walk->messages, walk->degrees, seq, d, err)) == TF_OK &&
            (status = snapshot_delta_chain_build(&walk->deltas, &walk->messages, AGGREGATOR_SUM, err)) == TF_OK &&
            (status = opt_incremental_create(&walk->engine, AGGREGATOR_SUM, seq->num_nodes, seq->feature_width,
                                             options, err)) == TF_OK &&
            !(walk->higher = tf_alloc((size_t)((order - 2) * size) + 1, sizeof(float), "diffusion terms", err)))
            status = TF_ERR_INPUT;
    }
    if (status != TF_OK)
        incremental_walks_free(w);
    return status;
}

void incremental_walks_free(incremental_walks *w)
{
    for (int d = 0; d < 2; d++) {
        diffusion_walk *walk = &w->walks[d];
        if (walk->deltas)
            snapshot_delta_chain_free(walk->deltas, walk->messages.num_snapshots);
        snapshot_seq_free(&walk->messages);
        opt_incremental_free(&walk->engine);
        free(walk->higher);
        free(walk->degrees);
    }
    free(w->changed);
    memset(w, 0, sizeof *w);
}

/* Whether row v of walk d's operator differs between t - 1 and t: its in-edges (sources, weights)
 * or one of its sources' out-degrees. A source with a changed degree but a zero message leaves no
 * delta entry, yet its coefficient w / d_out changed: the delta's rows alone would miss the row. */
static int operator_row_changed(const diffusion_walk *walk, int64_t t, int64_t v)
{
    const csr *now = &walk->messages.snapshots[t].graph, *before = &walk->messages.snapshots[t - 1].graph;
    const int64_t n = now->num_nodes, edges = now->row_ptr[v + 1] - now->row_ptr[v];
    if (edges != before->row_ptr[v + 1] - before->row_ptr[v] ||
        memcmp(now->col + now->row_ptr[v], before->col + before->row_ptr[v], (size_t)edges * sizeof *now->col) ||
        memcmp(now->weight + now->row_ptr[v], before->weight + before->row_ptr[v], (size_t)edges * sizeof *now->weight))
        return 1;
    for (int64_t e = now->row_ptr[v]; e < now->row_ptr[v + 1]; e++)
        if (walk->degrees[t * n + now->col[e]] != walk->degrees[(t - 1) * n + now->col[e]])
            return 1;
    return 0;
}

/* The closure C_0 .. C_{K-1} of walk d's step to t (w->changed [K + 1][N]): C_0 the vertices whose
 * features changed, C_1 the delta's rows (T_1's), A (row K) the rows whose operator row changed, and
 * C_k = A + C_{k-1} + out-neighbours of C_{k-1} + C_{k-2}. C_{k-1} itself: a row reads its own value
 * through the operator's diagonal, which is 0 for a walk, yet 0 x is -0 for a negative x, and the
 * claim is bitwise. The walk's out-neighbours of u are the rows of u in the other walk's graph (the
 * reverse). */
static void closure(incremental_walks *w, int d, int64_t t, const snapshot_delta *delta)
{
    const int64_t n = w->seq->num_nodes, f = w->seq->feature_width;
    const float *x = w->seq->snapshots[t].features.data, *before = w->seq->snapshots[t - 1].features.data;
    const csr *out = &w->walks[1 - d].messages.snapshots[t].graph;
    uint8_t *c = w->changed, *rows = w->changed + w->order * n;
    memset(c, 0, (size_t)(w->order * n));
    for (int64_t v = 0; v < n; v++) {
        c[v] = memcmp(x + v * f, before + v * f, (size_t)f * sizeof *x) != 0;
        rows[v] = (uint8_t)operator_row_changed(&w->walks[d], t, v);
    }
    for (int64_t i = 0; i < delta->num_rows; i++)
        c[n + delta->rows[i]] = 1;
    for (int k = 2; k < w->order; k++) {
        uint8_t *now = c + k * n;
        for (int64_t v = 0; v < n; v++)
            now[v] = rows[v] | c[(k - 1) * n + v] | c[(k - 2) * n + v];
        for (int64_t u = 0; u < n; u++)
            if (c[(k - 1) * n + u])
                for (int64_t e = out->row_ptr[u]; e < out->row_ptr[u + 1]; e++)
                    now[out->col[e]] = 1;
    }
}

/* T_2 .. T_{K-1} of walk d at t, on the rows of the closure (@p delta, the step's) or on every row
 * (@p delta NULL): row v of T_k = 2 (W T_{k-1})[v] - T_{k-2}[v], the same function whichever rows run. */
static int higher_terms(incremental_walks *w, int d, int64_t t, const snapshot_delta *delta, tf_error *err)
{
    diffusion_walk *walk = &w->walks[d];
    const int64_t n = w->seq->num_nodes, f = w->seq->feature_width, size = n * f;
    walk->held = t;
    if (w->order < 3)
        return TF_OK;
    propagation p;
    if (ref_propagation_walk(&p, &walk->messages.snapshots[t].graph, WALK_FORWARD, err) != TF_OK)
        return TF_ERR_INPUT;
    if (delta)
        closure(w, d, t, delta);
    for (int k = 2; k < w->order; k++) {
        const float *previous = k == 2 ? walk->engine.value : walk->higher + (k - 3) * size;
        const float *earlier = k == 2 ? w->seq->snapshots[t].features.data
                               : k == 3 ? walk->engine.value
                                        : walk->higher + (k - 4) * size;
        float *current = walk->higher + (k - 2) * size;
        for (int64_t v = 0; v < n; v++) {
            if (delta && !w->changed[k * n + v])
                continue;
            ref_propagate_row(&p, previous, f, v, current + v * f);
            for (int64_t j = 0; j < f; j++)
                current[v * f + j] = 2.0f * current[v * f + j] - earlier[v * f + j];
            w->stats.rows_recomputed++;
        }
        w->stats.rows_full += n;
    }
    ref_propagation_free(&p);
    return TF_OK;
}

/* Walk d to snapshot t, one snapshot at a time from the start of t's refresh segment or from the
 * held one (opt_incremental_seek()'s rule), the higher terms following every step. */
static int seek(incremental_walks *w, int d, int64_t t, tf_error *err)
{
    diffusion_walk *walk = &w->walks[d];
    incremental_aggregation *a = &walk->engine;
    const snapshot *s = walk->messages.snapshots;
    const int64_t segment = a->options.refresh_interval > 0 ? t - t % a->options.refresh_interval : 0;
    int status = TF_OK;
    if (walk->held < segment || walk->held > t) {
        opt_incremental_reset(a, &s[segment], segment);
        status = higher_terms(w, d, segment, NULL, err);
    }
    while (status == TF_OK && walk->held < t) {
        const int64_t next = walk->held + 1, full = a->stats.full;
        opt_incremental_advance(a, &s[next - 1], &s[next], &walk->deltas[next], next);
        /* a fallback recomputed T_1 whole: its rows may all have moved by a rounding */
        status = higher_terms(w, d, next, a->stats.full == full ? &walk->deltas[next] : NULL, err);
    }
    return status;
}

int incremental_walks_get(incremental_walks *w, int64_t t, float *out, tf_error *err)
{
    const int64_t size = w->seq->num_nodes * w->seq->feature_width;
    for (int d = 0; d < 2; d++) {
        if (seek(w, d, t, err) != TF_OK)
            return TF_ERR_INPUT;
        float *terms = out + d * (w->order - 1) * size;
        memcpy(terms, w->walks[d].engine.value, (size_t)size * sizeof(float));
        memcpy(terms + size, w->walks[d].higher, (size_t)((w->order - 2) * size) * sizeof(float));
    }
    return TF_OK;
}
