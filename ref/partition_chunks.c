/* DGC's chunks: label propagation, the chunk graph and its cost model, Algorithm 1
 * (ref/partition_chunks.h). */
#include "ref/partition_chunks.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"

/* The sweeps of ref_label_propagation(), on its zeroed scratch: size [V] units per label, and
 * around one vertex at a time, weight [V] per label, stamp [V] (v + 1 on the labels seen) and
 * touched [V] (the labels seen). stats starts zeroed. */
static void propagate_labels(const partition_graph *g, int64_t cap, int max_sweeps, int32_t *label,
                             label_propagation_stats *stats, int64_t *size, int64_t *weight, int64_t *stamp,
                             int32_t *touched)
{
    const int64_t vertices = g->num_vertices;
    for (int64_t v = 0; v < vertices; v++) { /* Eq. 1: every super vertex starts with its own index */
        label[v] = (int32_t)v;
        size[v] = g->vertex_weight[v];
    }
    int changed = 1;
    while (changed && stats->sweeps < max_sweeps) {
        changed = 0;
        stats->sweeps++;
        for (int64_t v = 0; v < vertices; v++) {
            /* weight(c) = sum of w(u, v) over neighbours u labelled c (Eq. 2); stamp marks the labels seen. */
            int64_t labels = 0;
            for (int64_t e = g->offsets[v]; e < g->offsets[v + 1]; e++) {
                const int32_t c = label[g->neighbours[e]];
                if (stamp[c] != v + 1) {
                    stamp[c] = v + 1;
                    weight[c] = 0;
                    touched[labels++] = c;
                }
                weight[c] += g->edge_weight[e];
            }
            const int32_t own = label[v];
            const int64_t unit = g->vertex_weight[v];
            int32_t best = own;
            int64_t best_weight = stamp[own] == v + 1 ? weight[own] : 0;
            for (int64_t i = 0; i < labels; i++) {
                const int32_t c = touched[i];
                if (c == own || size[c] + unit > cap)
                    continue;
                /* Strictly heavier than the best so far; among equals (never equal to the own
                 * label's weight once best is the own label) the smallest label. */
                if (weight[c] > best_weight || (weight[c] == best_weight && best != own && c < best)) {
                    best = c;
                    best_weight = weight[c];
                }
            }
            if (best != own) {
                size[own] -= unit;
                size[best] += unit;
                label[v] = best;
                stats->changes++;
                changed = 1;
            }
        }
    }
    stats->hit_sweep_cap = changed;
}

int ref_label_propagation(const partition_graph *g, int64_t cap, int max_sweeps, int32_t *label,
                          label_propagation_stats *stats, tf_error *err)
{
    const int64_t vertices = g->num_vertices;
    label_propagation_stats local = {0, 0, 0};
    int64_t *size = tf_alloc((size_t)vertices, sizeof *size, "label sizes", err);
    int64_t *weight = size ? tf_alloc((size_t)vertices, sizeof *weight, "label weights", err) : NULL;
    int64_t *stamp = weight ? tf_alloc((size_t)vertices, sizeof *stamp, "label weights", err) : NULL;
    int32_t *touched = stamp ? tf_alloc((size_t)vertices, sizeof *touched, "label weights", err) : NULL;
    const int status = touched ? TF_OK : TF_ERR_INPUT;
    if (status == TF_OK) {
        propagate_labels(g, cap, max_sweeps, label, &local, size, weight, stamp, touched);
        if (stats)
            *stats = local;
    }
    free(size);
    free(weight);
    free(stamp);
    free(touched);
    return status;
}

void chunk_cost_model_for(const model_config *c, chunk_cost_model *out)
{
    model_cost cost;
    model_info_of(c->kind)->cost(c, &cost);
    out->per_vertex_step = cost.flops;
    out->per_edge = (double)(cost.forward + cost.backward); /* the floats an edge moves, each way */
}

void chunk_graph_free(chunk_graph *c)
{
    free(c->work);
    partition_graph_free(&c->adjacency);
    memset(c, 0, sizeof *c);
}

int chunk_graph_build(const partition_graph *g, const int32_t *label, const int64_t *steps, const int64_t *edges_in,
                      const chunk_cost_model *cost, chunk_graph *out, int32_t *chunk_of, tf_error *err)
{
    const int64_t vertices = g->num_vertices;
    memset(out, 0, sizeof *out);
    int32_t *chunk_of_label = tf_alloc((size_t)vertices, sizeof *chunk_of_label, "chunk numbers", err);
    if (!chunk_of_label)
        return TF_ERR_INPUT;
    for (int64_t v = 0; v < vertices; v++)
        chunk_of_label[v] = -1;
    for (int64_t v = 0; v < vertices; v++) { /* numbered by their smallest member */
        if (chunk_of_label[label[v]] < 0)
            chunk_of_label[label[v]] = (int32_t)out->count++;
        chunk_of[v] = chunk_of_label[label[v]];
    }
    free(chunk_of_label);
    /* h(a, a'): each undirected edge between two chunks once (from its smaller end). */
    int64_t crossing = 0;
    for (int64_t v = 0; v < vertices; v++)
        for (int64_t e = g->offsets[v]; e < g->offsets[v + 1]; e++)
            crossing += g->neighbours[e] > v && chunk_of[g->neighbours[e]] != chunk_of[v];
    int32_t *a = tf_alloc((size_t)crossing, sizeof *a, "chunk edges", err);
    int32_t *b = a ? tf_alloc((size_t)crossing, sizeof *b, "chunk edges", err) : NULL;
    int64_t *w = b ? tf_alloc((size_t)crossing, sizeof *w, "chunk edges", err) : NULL;
    out->work = w ? tf_alloc((size_t)out->count, sizeof *out->work, "chunk work", err) : NULL;
    int status = out->work ? TF_OK : TF_ERR_INPUT;
    int64_t next = 0;
    for (int64_t v = 0; status == TF_OK && v < vertices; v++)
        for (int64_t e = g->offsets[v]; e < g->offsets[v + 1]; e++)
            if (g->neighbours[e] > v && chunk_of[g->neighbours[e]] != chunk_of[v]) {
                a[next] = chunk_of[v];
                b[next] = chunk_of[g->neighbours[e]];
                w[next++] = g->edge_weight[e];
            }
    if (status == TF_OK)
        status = partition_graph_from_pairs(&out->adjacency, out->count, crossing, a, b, w, err);
    free(a);
    free(b);
    free(w);
    if (status != TF_OK) {
        chunk_graph_free(out);
        return status;
    }
    for (int64_t v = 0; v < vertices; v++) {
        out->adjacency.vertex_weight[chunk_of[v]] += g->vertex_weight[v];
        out->work[chunk_of[v]] += cost->per_vertex_step * (double)steps[v] + cost->per_edge * (double)edges_in[v];
    }
    return TF_OK;
}

/* Chunks in Algorithm 1's order: decreasing work, then increasing id. */
typedef struct work_item {
    double work;
    int64_t id;
} work_item;

static int by_decreasing_work(const void *a, const void *b)
{
    const work_item *x = a, *y = b;
    if (x->work != y->work)
        return x->work > y->work ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* Algorithm 1 on ref_chunk_assign()'s zeroed scratch: order [count], load, connection and held
 * [ranks] (each rank's work, its edge weight to the chunk being placed, its chunk count). */
static void assign_chunks(const chunk_graph *chunks, int ranks, int32_t *rank_of_chunk, work_item *order,
                          double *load, double *connection, int64_t *held)
{
    const int64_t count = chunks->count;
    const partition_graph *adj = &chunks->adjacency;
    double total = 0;
    for (int64_t a = 0; a < count; a++) {
        order[a] = (work_item){chunks->work[a], a};
        total += chunks->work[a];
        rank_of_chunk[a] = -1;
    }
    const double mean = total / ranks; /* g-bar */
    qsort(order, (size_t)count, sizeof *order, by_decreasing_work);
    for (int64_t i = 0; i < count; i++) {
        const int64_t a = order[i].id;
        int chosen = -1;
        for (int m = 0; m < ranks && chosen < 0; m++) /* 1. the lowest empty rank */
            if (held[m] == 0)
                chosen = m;
        if (chosen < 0) {
            memset(connection, 0, (size_t)ranks * sizeof *connection);
            for (int64_t e = adj->offsets[a]; e < adj->offsets[a + 1]; e++) {
                const int32_t placed = rank_of_chunk[adj->neighbours[e]];
                if (placed >= 0)
                    connection[placed] += (double)adj->edge_weight[e];
            }
            double best = 0;
            for (int m = 0; m < ranks; m++) { /* 2. Eq. 3; ties: least load, then lowest rank */
                const double score = (mean - load[m]) * connection[m];
                if (chosen < 0 || score > best || (score == best && load[m] < load[chosen])) {
                    chosen = m;
                    best = score;
                }
            }
        }
        rank_of_chunk[a] = chosen;
        load[chosen] += chunks->work[a];
        held[chosen]++;
    }
}

int ref_chunk_assign(const chunk_graph *chunks, int ranks, int32_t *rank_of_chunk, tf_error *err)
{
    const int64_t count = chunks->count;
    work_item *order = tf_alloc((size_t)count, sizeof *order, "chunk order", err);
    double *load = order ? tf_alloc((size_t)ranks, sizeof *load, "rank loads", err) : NULL;
    double *connection = load ? tf_alloc((size_t)ranks, sizeof *connection, "rank connections", err) : NULL;
    int64_t *held = connection ? tf_alloc((size_t)ranks, sizeof *held, "rank chunks", err) : NULL;
    const int status = held ? TF_OK : TF_ERR_INPUT;
    if (status == TF_OK)
        assign_chunks(chunks, ranks, rank_of_chunk, order, load, connection, held);
    free(order);
    free(load);
    free(connection);
    free(held);
    return status;
}

/* The cap in units: the option, or ceil(units / (4 R)). */
static int64_t label_cap(const partition_graph *g, const partition_options *o)
{
    if (o->chunk_cap > 0)
        return o->chunk_cap;
    int64_t units = 0;
    for (int64_t v = 0; v < g->num_vertices; v++)
        units += g->vertex_weight[v];
    const int64_t parts = 4 * (int64_t)o->ranks;
    return (units + parts - 1) / parts;
}

/* The weights DGC's graphs carry, from the model (o->model with the data's widths): an edge's
 * spatial traffic (forward + backward, at least 1), a step-to-step edge's temporal traffic, and
 * the cost model of a chunk's work. */
static void dgc_weights(const snapshot_seq *seq, const partition_options *o, int64_t *spatial, int64_t *temporal,
                        chunk_cost_model *cost)
{
    model_config model = o->model;
    model.in_features = seq->feature_width;
    model.out_features = seq->target_width;
    int64_t forward, backward;
    partition_model_traffic(&model, &forward, &backward, temporal);
    *spatial = forward + backward > 0 ? forward + backward : 1;
    chunk_cost_model_for(&model, cost);
}

/* LP on g, chunks, Algorithm 1: rank_of_vertex [V] out, from steps [V] and edges_in [V]. */
static int chunks_and_ranks(const partition_graph *g, const partition_options *o, const int64_t *steps,
                            const int64_t *edges_in, const chunk_cost_model *cost, int32_t *rank_of_vertex,
                            tf_error *err)
{
    const int64_t vertices = g->num_vertices;
    int32_t *label = tf_alloc((size_t)vertices, sizeof *label, "labels", err);
    int32_t *chunk_of = label ? tf_alloc((size_t)vertices, sizeof *chunk_of, "chunks", err) : NULL;
    int status = chunk_of ? TF_OK : TF_ERR_INPUT;
    chunk_graph chunks;
    memset(&chunks, 0, sizeof chunks);
    int32_t *rank_of_chunk = NULL;
    if (status == TF_OK)
        status = ref_label_propagation(g, label_cap(g, o), LABEL_PROPAGATION_MAX_SWEEPS, label, NULL, err);
    if (status == TF_OK)
        status = chunk_graph_build(g, label, steps, edges_in, cost, &chunks, chunk_of, err);
    if (status == TF_OK &&
        !(rank_of_chunk = tf_alloc((size_t)chunks.count, sizeof *rank_of_chunk, "chunk ranks", err)))
        status = TF_ERR_INPUT;
    if (status == TF_OK)
        status = ref_chunk_assign(&chunks, o->ranks, rank_of_chunk, err);
    for (int64_t v = 0; status == TF_OK && v < vertices; v++)
        rank_of_vertex[v] = rank_of_chunk[chunk_of[v]];
    free(label);
    free(chunk_of);
    free(rank_of_chunk);
    chunk_graph_free(&chunks);
    return status;
}

int partition_dgc(const snapshot_seq *seq, const partition_options *o, int32_t *owner, tf_error *err)
{
    const int64_t n = seq->num_nodes;
    int64_t spatial, temporal;
    chunk_cost_model cost;
    dgc_weights(seq, o, &spatial, &temporal, &cost);
    partition_graph g;
    int status = partition_union_graph(seq, spatial, &g, err);
    if (status != TF_OK)
        return status;
    int64_t *steps = tf_alloc((size_t)n, sizeof *steps, "vertex steps", err);
    int64_t *edges_in = steps ? tf_alloc((size_t)n, sizeof *edges_in, "vertex in-edges", err) : NULL;
    status = edges_in ? TF_OK : TF_ERR_INPUT;
    for (int64_t t = 0; status == TF_OK && t < seq->num_snapshots; t++)
        for (int64_t v = 0; v < n; v++) {
            steps[v] += seq->snapshots[t].present[v] != 0;
            edges_in[v] += seq->snapshots[t].graph.row_ptr[v + 1] - seq->snapshots[t].graph.row_ptr[v];
        }
    if (status == TF_OK)
        status = chunks_and_ranks(&g, o, steps, edges_in, &cost, owner, err);
    free(steps);
    free(edges_in);
    partition_graph_free(&g);
    return status;
}

int partition_dgc_steps(const snapshot_seq *seq, const partition_options *o, int32_t *step_owner, tf_error *err)
{
    const int64_t n = seq->num_nodes, count = seq->num_snapshots * n;
    int64_t spatial, temporal;
    chunk_cost_model cost;
    dgc_weights(seq, o, &spatial, &temporal, &cost);
    int64_t *index = tf_alloc((size_t)count, sizeof *index, "super vertex index", err);
    if (!index)
        return TF_ERR_INPUT;
    partition_graph g;
    int status = partition_super_graph(seq, spatial, temporal, &g, index, err);
    if (status != TF_OK) {
        free(index);
        return status;
    }
    int64_t *steps = tf_alloc((size_t)g.num_vertices, sizeof *steps, "super vertex steps", err);
    int64_t *edges_in = steps ? tf_alloc((size_t)g.num_vertices, sizeof *edges_in, "super vertex in-edges", err) : NULL;
    int32_t *rank = edges_in ? tf_alloc((size_t)g.num_vertices, sizeof *rank, "super vertex ranks", err) : NULL;
    status = rank ? TF_OK : TF_ERR_INPUT;
    for (int64_t t = 0; status == TF_OK && t < seq->num_snapshots; t++)
        for (int64_t v = 0; v < n; v++)
            if (index[t * n + v] >= 0) {
                steps[index[t * n + v]] = 1;
                edges_in[index[t * n + v]] = seq->snapshots[t].graph.row_ptr[v + 1] - seq->snapshots[t].graph.row_ptr[v];
            }
    if (status == TF_OK)
        status = chunks_and_ranks(&g, o, steps, edges_in, &cost, rank, err);
    for (int64_t i = 0; status == TF_OK && i < count; i++)
        step_owner[i] = index[i] >= 0 ? rank[index[i]] : -1;
    free(index);
    free(steps);
    free(edges_in);
    free(rank);
    partition_graph_free(&g);
    return status;
}

int partition_dgc_steps_costs(const snapshot_seq *seq, const partition_options *o, const int32_t *step_owner,
                              int64_t *spatial_cut, int64_t *temporal_cut, double *rank_work, tf_error *err)
{
    (void)err;
    const int64_t n = seq->num_nodes;
    int64_t spatial, temporal;
    chunk_cost_model cost;
    dgc_weights(seq, o, &spatial, &temporal, &cost);
    *spatial_cut = *temporal_cut = 0;
    memset(rank_work, 0, (size_t)o->ranks * sizeof *rank_work);
    for (int64_t t = 0; t < seq->num_snapshots; t++) {
        const csr *g = &seq->snapshots[t].graph;
        const int32_t *here = step_owner + t * n, *before = step_owner + (t - 1) * n;
        for (int64_t v = 0; v < n; v++) {
            if (here[v] < 0)
                continue;
            const int64_t degree = g->row_ptr[v + 1] - g->row_ptr[v];
            rank_work[here[v]] += cost.per_vertex_step + cost.per_edge * (double)degree;
            for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++)
                *spatial_cut += g->col[e] != v && here[g->col[e]] != here[v] ? spatial : 0;
            if (t > 0 && before[v] >= 0 && before[v] != here[v])
                *temporal_cut += temporal;
        }
    }
    return TF_OK;
}
