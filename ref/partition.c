/* The simple partitioners, DynaHB's load, the graphs partitioners read, and the metrics of a split
 * (ref/partition.h). */
#include "ref/partition.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"
#include "ref/partition_chunks.h"

static const char *const method_names[PARTITION_METHODS] = {
    "hash", "pts", "pss", "pss-ts", "metis", "dynahb", "dgc", "dgc-st", "reflexbicut", "interval",
};

const char *partition_method_name(partition_method m)
{
    return m >= 0 && m < PARTITION_METHODS ? method_names[m] : "unknown";
}

int partition_method_parse(const char *name, partition_method *out, tf_error *err)
{
    for (int m = 0; m < PARTITION_METHODS; m++)
        if (strcmp(name, method_names[m]) == 0) {
            *out = (partition_method)m;
            return TF_OK;
        }
    return tf_error_set(err, TF_ERR_INPUT,
                        "partition method \"%s\" is not one of hash, pts, pss, pss-ts, metis, dynahb, dgc, dgc-st "
                        "(snapshots), reflexbicut, interval (event streams; hash and pts too)",
                        name);
}

int partition_method_for_events(partition_method m)
{
    return m == PARTITION_REFLEXBICUT || m == PARTITION_INTERVAL || m == PARTITION_HASH || m == PARTITION_PTS;
}

int partition_method_for_snapshots(partition_method m)
{
    return m != PARTITION_REFLEXBICUT && m != PARTITION_INTERVAL && m >= 0 && m < PARTITION_METHODS;
}

void partition_options_default(partition_options *o)
{
    memset(o, 0, sizeof *o);
    o->ranks = 1;
    o->seed = 1;
    o->model.kind = MODEL_TGCN;
    o->model.hidden = 32;
    o->model.chebyshev_k = 2;
}

int partition_model_layers(const model_config *c)
{
    if (c->kind == MODEL_GCLSTM || c->kind == MODEL_GCONVGRU)
        return c->chebyshev_k > 2 ? c->chebyshev_k - 1 : 1;
    return 1;
}

/* ---- the simple ones ----------------------------------------------------------------------- */

void partition_hash(int64_t n, int ranks, int32_t *owner)
{
    for (int64_t v = 0; v < n; v++)
        owner[v] = (int32_t)(v % ranks);
}

void partition_range(int64_t n, int ranks, int32_t *owner)
{
    for (int64_t v = 0; v < n; v++) /* v R < 2^31 * 2^31: fits in int64 */
        owner[v] = (int32_t)(v * ranks / n);
}

void partition_interval(int64_t n, int ranks, int64_t block, int32_t *owner)
{
    for (int64_t v = 0; v < n; v++)
        owner[v] = (int32_t)((v / block) % ranks);
}

/* ---- DynaHB --------------------------------------------------------------------------------- */

int partition_dynahb_load(const snapshot_seq *seq, int layers, int64_t *load, tf_error *err)
{
    const int64_t n = seq->num_nodes;
    if (layers < 1)
        return tf_error_set(err, TF_ERR_INPUT, "DynaHB load over %d layers, expected >= 1", layers);
    int64_t *raw = tf_alloc((size_t)layers * (size_t)n, sizeof *raw, "DynaHB walk counts", err); /* [L][N] */
    int64_t *walks = raw ? tf_alloc((size_t)n, sizeof *walks, "DynaHB walk counts", err) : NULL;
    int64_t *next = walks ? tf_alloc((size_t)n, sizeof *next, "DynaHB walk counts", err) : NULL;
    int status = next ? TF_OK : TF_ERR_INPUT;
    for (int64_t t = 0; status == TF_OK && t < seq->num_snapshots; t++) {
        const csr *g = &seq->snapshots[t].graph;
        for (int64_t v = 0; v < n; v++)
            walks[v] = 1; /* a_0: every vertex starts one walk */
        for (int l = 1; status == TF_OK && l <= layers; l++) {
            for (int64_t v = 0; status == TF_OK && v < n; v++) {
                int64_t sum = 0;
                int overflow = 0;
                for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++)
                    overflow |= __builtin_add_overflow(sum, walks[g->col[e]], &sum);
                int64_t *total = &raw[(int64_t)(l - 1) * n + v];
                overflow |= __builtin_add_overflow(*total, sum, total);
                if (overflow)
                    status = tf_error_set(err, TF_ERR_INPUT,
                                          "DynaHB load of vertex %lld overflows int64 at layer %d (snapshot %lld): use "
                                          "fewer layers",
                                          (long long)v, l, (long long)t);
                next[v] = sum;
            }
            int64_t *swap = walks;
            walks = next;
            next = swap;
        }
    }
    /* load(v) = sum_{l'} (L - l' + 1) raw_{l'}(v): Algorithm 1's double sum in closed form. */
    for (int64_t v = 0; status == TF_OK && v < n; v++) {
        int64_t sum = 0, term;
        for (int l = 1; status == TF_OK && l <= layers; l++)
            if (__builtin_mul_overflow(raw[(int64_t)(l - 1) * n + v], (int64_t)(layers - l + 1), &term) ||
                __builtin_add_overflow(sum, term, &sum))
                status = tf_error_set(err, TF_ERR_INPUT,
                                      "DynaHB load of vertex %lld overflows int64 at layer %d: use fewer layers",
                                      (long long)v, l);
        load[v] = sum;
    }
    free(raw);
    free(walks);
    free(next);
    return status;
}

/* Sort keys for the serpentine deal: decreasing load, then increasing id (a total order). */
typedef struct load_item {
    int64_t load;
    int64_t id;
} load_item;

static int by_decreasing_load(const void *a, const void *b)
{
    const load_item *x = a, *y = b;
    if (x->load != y->load)
        return x->load > y->load ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

int partition_serpentine(const int64_t *load, int64_t n, int ranks, int32_t *owner, tf_error *err)
{
    load_item *items = tf_alloc((size_t)n, sizeof *items, "serpentine order", err);
    if (!items)
        return TF_ERR_INPUT;
    for (int64_t v = 0; v < n; v++)
        items[v] = (load_item){load[v], v};
    qsort(items, (size_t)n, sizeof *items, by_decreasing_load);
    for (int64_t i = 0; i < n; i++) {
        const int64_t round = i / ranks, position = i % ranks;
        owner[items[i].id] = (int32_t)(round % 2 == 0 ? position : ranks - 1 - position);
    }
    free(items);
    return TF_OK;
}

/* ---- graphs --------------------------------------------------------------------------------- */

/* One undirected contribution {a, b} of weight w, stored at a. */
typedef struct graph_entry {
    int32_t neighbour;
    int64_t weight;
} graph_entry;

static int by_neighbour(const void *a, const void *b)
{
    const graph_entry *x = a, *y = b;
    return (x->neighbour > y->neighbour) - (x->neighbour < y->neighbour);
}

int partition_graph_from_pairs(partition_graph *g, int64_t vertices, int64_t count, const int32_t *a, const int32_t *b,
                            const int64_t *w, tf_error *err)
{
    memset(g, 0, sizeof *g);
    g->num_vertices = vertices;
    g->offsets = tf_alloc((size_t)vertices + 1, sizeof *g->offsets, "partition graph", err);
    g->vertex_weight = g->offsets ? tf_alloc((size_t)vertices, sizeof *g->vertex_weight, "partition graph", err) : NULL;
    graph_entry *entries = g->vertex_weight ? tf_alloc((size_t)(2 * count), sizeof *entries, "partition graph", err)
                                            : NULL;
    int64_t *cursor = entries ? tf_alloc((size_t)vertices + 1, sizeof *cursor, "partition graph", err) : NULL;
    if (!cursor) {
        free(entries);
        partition_graph_free(g);
        return TF_ERR_INPUT;
    }
    for (int64_t i = 0; i < count; i++) {
        cursor[a[i] + 1]++;
        cursor[b[i] + 1]++;
    }
    for (int64_t v = 0; v < vertices; v++)
        cursor[v + 1] += cursor[v];
    for (int64_t i = 0; i < count; i++) {
        entries[cursor[a[i]]++] = (graph_entry){b[i], w[i]};
        entries[cursor[b[i]]++] = (graph_entry){a[i], w[i]};
    }
    /* cursor[v] now ends row v, which starts at cursor[v - 1] (0 for v = 0). */
    int64_t stored = 0;
    for (int64_t v = 0; v < vertices; v++) {
        const int64_t begin = v == 0 ? 0 : cursor[v - 1], end = cursor[v];
        qsort(entries + begin, (size_t)(end - begin), sizeof *entries, by_neighbour);
        g->offsets[v] = stored;
        for (int64_t e = begin; e < end; e++) {
            if (stored > g->offsets[v] && entries[stored - 1].neighbour == entries[e].neighbour)
                entries[stored - 1].weight += entries[e].weight;
            else
                entries[stored++] = entries[e];
        }
    }
    g->offsets[vertices] = g->num_edges = stored;
    free(cursor);
    g->neighbours = tf_alloc((size_t)stored, sizeof *g->neighbours, "partition graph", err);
    g->edge_weight = g->neighbours ? tf_alloc((size_t)stored, sizeof *g->edge_weight, "partition graph", err) : NULL;
    if (!g->edge_weight) {
        free(entries);
        partition_graph_free(g);
        return TF_ERR_INPUT;
    }
    for (int64_t e = 0; e < stored; e++) {
        g->neighbours[e] = entries[e].neighbour;
        g->edge_weight[e] = entries[e].weight;
    }
    free(entries);
    return TF_OK;
}

/* Edge occurrences u -> v with u != v over every snapshot. */
static int64_t non_loop_edges(const snapshot_seq *seq)
{
    int64_t count = 0;
    for (int64_t t = 0; t < seq->num_snapshots; t++) {
        const csr *g = &seq->snapshots[t].graph;
        for (int64_t v = 0; v < g->num_nodes; v++)
            for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++)
                count += g->col[e] != v;
    }
    return count;
}

/* The pair arrays of graph_from_pairs(). */
typedef struct pair_list {
    int32_t *a, *b;
    int64_t *w;
    int64_t count;
} pair_list;

static int pair_list_alloc(pair_list *p, int64_t capacity, tf_error *err)
{
    memset(p, 0, sizeof *p);
    p->a = tf_alloc((size_t)capacity, sizeof *p->a, "partition graph edges", err);
    p->b = p->a ? tf_alloc((size_t)capacity, sizeof *p->b, "partition graph edges", err) : NULL;
    p->w = p->b ? tf_alloc((size_t)capacity, sizeof *p->w, "partition graph edges", err) : NULL;
    return p->w ? TF_OK : TF_ERR_INPUT;
}

static void pair_list_free(pair_list *p)
{
    free(p->a);
    free(p->b);
    free(p->w);
}

int partition_union_graph(const snapshot_seq *seq, int64_t spatial_weight, partition_graph *out, tf_error *err)
{
    const int64_t n = seq->num_nodes;
    pair_list pairs;
    if (pair_list_alloc(&pairs, non_loop_edges(seq), err) != TF_OK) {
        pair_list_free(&pairs);
        return TF_ERR_INPUT;
    }
    for (int64_t t = 0; t < seq->num_snapshots; t++) {
        const csr *g = &seq->snapshots[t].graph;
        for (int64_t v = 0; v < n; v++)
            for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++)
                if (g->col[e] != v) {
                    pairs.a[pairs.count] = g->col[e];
                    pairs.b[pairs.count] = (int32_t)v;
                    pairs.w[pairs.count++] = spatial_weight;
                }
    }
    int status = partition_graph_from_pairs(out, n, pairs.count, pairs.a, pairs.b, pairs.w, err);
    pair_list_free(&pairs);
    if (status != TF_OK)
        return status;
    for (int64_t v = 0; v < n; v++) {
        int64_t present = 0;
        for (int64_t t = 0; t < seq->num_snapshots; t++)
            present += seq->snapshots[t].present[v] != 0;
        out->vertex_weight[v] = present > 0 ? present : 1;
    }
    return TF_OK;
}

int partition_super_graph(const snapshot_seq *seq, int64_t spatial_weight, int64_t temporal_weight,
                          partition_graph *out, int64_t *step_index, tf_error *err)
{
    const int64_t n = seq->num_nodes, steps = seq->num_snapshots;
    int64_t vertices = 0, temporal = 0;
    for (int64_t t = 0; t < steps; t++)
        for (int64_t v = 0; v < n; v++) {
            const int here = seq->snapshots[t].present[v] != 0;
            step_index[t * n + v] = here ? vertices++ : -1;
            temporal += here && t > 0 && seq->snapshots[t - 1].present[v] && temporal_weight > 0;
        }
    if (vertices > INT32_MAX)
        return tf_error_set(err, TF_ERR_INPUT, "super graph of %lld vertices: more than int32 ids allow",
                            (long long)vertices);
    pair_list pairs;
    if (pair_list_alloc(&pairs, non_loop_edges(seq) + temporal, err) != TF_OK) {
        pair_list_free(&pairs);
        return TF_ERR_INPUT;
    }
    for (int64_t t = 0; t < steps; t++) {
        const csr *g = &seq->snapshots[t].graph;
        for (int64_t v = 0; v < n; v++) {
            for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++)
                if (g->col[e] != v) { /* absent vertices have no edges: both ends have an index */
                    pairs.a[pairs.count] = (int32_t)step_index[t * n + g->col[e]];
                    pairs.b[pairs.count] = (int32_t)step_index[t * n + v];
                    pairs.w[pairs.count++] = spatial_weight;
                }
            if (temporal_weight > 0 && t > 0 && step_index[t * n + v] >= 0 && step_index[(t - 1) * n + v] >= 0) {
                pairs.a[pairs.count] = (int32_t)step_index[(t - 1) * n + v];
                pairs.b[pairs.count] = (int32_t)step_index[t * n + v];
                pairs.w[pairs.count++] = temporal_weight;
            }
        }
    }
    int status = partition_graph_from_pairs(out, vertices, pairs.count, pairs.a, pairs.b, pairs.w, err);
    pair_list_free(&pairs);
    for (int64_t v = 0; status == TF_OK && v < vertices; v++)
        out->vertex_weight[v] = 1;
    return status;
}

void partition_graph_free(partition_graph *g)
{
    free(g->offsets);
    free(g->neighbours);
    free(g->edge_weight);
    free(g->vertex_weight);
    memset(g, 0, sizeof *g);
}

int partition_in_union(const snapshot_seq *seq, csr *out, tf_error *err)
{
    const int64_t n = seq->num_nodes;
    memset(out, 0, sizeof *out);
    int64_t total = 0;
    for (int64_t t = 0; t < seq->num_snapshots; t++)
        total += seq->snapshots[t].graph.num_edges;
    graph_entry *entries = tf_alloc((size_t)total, sizeof *entries, "in-edge union", err);
    int64_t *start = entries ? tf_alloc((size_t)n + 1, sizeof *start, "in-edge union", err) : NULL;
    out->row_ptr = start ? tf_alloc((size_t)n + 1, sizeof *out->row_ptr, "in-edge union", err) : NULL;
    if (!out->row_ptr) {
        free(entries);
        free(start);
        return TF_ERR_INPUT;
    }
    for (int64_t t = 0; t < seq->num_snapshots; t++)
        for (int64_t v = 0; v < n; v++)
            start[v + 1] += seq->snapshots[t].graph.row_ptr[v + 1] - seq->snapshots[t].graph.row_ptr[v];
    for (int64_t v = 0; v < n; v++)
        start[v + 1] += start[v];
    int64_t *fill = out->row_ptr; /* borrowed as the fill cursor, rewritten below */
    memcpy(fill, start, (size_t)(n + 1) * sizeof *fill);
    for (int64_t t = 0; t < seq->num_snapshots; t++) {
        const csr *g = &seq->snapshots[t].graph;
        for (int64_t v = 0; v < n; v++)
            for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++)
                entries[fill[v]++] = (graph_entry){g->col[e], 1};
    }
    int64_t stored = 0;
    for (int64_t v = 0; v < n; v++) {
        qsort(entries + start[v], (size_t)(start[v + 1] - start[v]), sizeof *entries, by_neighbour);
        out->row_ptr[v] = stored;
        for (int64_t e = start[v]; e < start[v + 1]; e++) {
            if (stored > out->row_ptr[v] && entries[stored - 1].neighbour == entries[e].neighbour)
                entries[stored - 1].weight++;
            else
                entries[stored++] = entries[e];
        }
    }
    out->row_ptr[n] = stored;
    free(start);
    out->num_nodes = n;
    out->num_edges = stored;
    out->col = tf_alloc((size_t)stored, sizeof *out->col, "in-edge union", err);
    out->weight = out->col ? tf_alloc((size_t)stored, sizeof *out->weight, "in-edge union", err) : NULL;
    if (!out->weight) {
        free(entries);
        csr_free(out);
        return TF_ERR_INPUT;
    }
    for (int64_t e = 0; e < stored; e++) {
        out->col[e] = entries[e].neighbour;
        out->weight[e] = (float)entries[e].weight;
    }
    free(entries);
    return TF_OK;
}

/* Makes @p in_union hold every edge both ways (each edge u -> v also as v -> u). */
static int both_ways(csr *in_union, tf_error *err)
{
    const int64_t edges = in_union->num_edges;
    int32_t *ends = tf_alloc((size_t)(4 * edges) + 1, sizeof *ends, "closure both ways", err);
    if (!ends)
        return TF_ERR_INPUT;
    for (int64_t v = 0; v < in_union->num_nodes; v++) /* ends [4][E]: sources and destinations, then reversed */
        for (int64_t e = in_union->row_ptr[v]; e < in_union->row_ptr[v + 1]; e++) {
            ends[e] = ends[3 * edges + e] = in_union->col[e];
            ends[edges + e] = ends[2 * edges + e] = (int32_t)v;
        }
    csr both;
    int status = csr_from_edges(&both, in_union->num_nodes, 2 * edges, ends, ends + 2 * edges, NULL, err);
    free(ends);
    if (status == TF_OK) {
        csr_free(in_union);
        *in_union = both;
    }
    return status;
}

int partition_cache_union(const snapshot_seq *seq, model_kind model, csr *out, tf_error *err)
{
    int status = partition_in_union(seq, out, err);
    if (status == TF_OK && model_info_of(model)->graph_operator == OPERATOR_WALK_FORWARD)
        status = both_ways(out, err);
    if (status != TF_OK)
        csr_free(out);
    return status;
}

int64_t partition_in_closure(const csr *in_union, const uint8_t *start, int depth, uint8_t *member, int32_t *level)
{
    const int64_t n = in_union->num_nodes;
    /* Breadth-first along in-edges: level[begin .. end) are the vertices first reached at this hop. */
    int64_t count = 0, begin = 0, end;
    for (int64_t v = 0; v < n; v++) {
        member[v] = start[v] != 0;
        if (member[v])
            level[count++] = (int32_t)v;
    }
    for (int hop = 0; hop < depth && begin < count; hop++) {
        end = count;
        for (int64_t i = begin; i < end; i++) {
            const int32_t v = level[i];
            for (int64_t e = in_union->row_ptr[v]; e < in_union->row_ptr[v + 1]; e++)
                if (!member[in_union->col[e]]) {
                    member[in_union->col[e]] = 1;
                    level[count++] = in_union->col[e];
                }
        }
        begin = end;
    }
    return count;
}

int partition_cache_depth(const model_config *c, int64_t window_length)
{
    const int64_t k = c->chebyshev_k > 1 ? c->chebyshev_k - 1 : 0, w = window_length > 0 ? window_length : 1;
    const int64_t layers = c->layers > 0 ? c->layers : model_info_of(c->kind)->layers;
    int64_t depth = 1;
    switch (c->kind) {
    case MODEL_GCLSTM: /* H_t reads K - 1 hops of H_{t-1}; X_t enters through a plain product */
        depth = k * (w - 1);
        break;
    case MODEL_GCONVGRU: /* X_1 through K - 1 hops, then 2 (K - 1) per step: R's convolution of H, then H * R's */
    case MODEL_DCRNN:    /* the same on both walks: hops along and against the edges (a closure both ways) */
        depth = k * (2 * w - 1);
        break;
    case MODEL_GCONVLSTM: /* K - 1 hops of X_t and of H_{t-1} in every step */
        depth = k * w;
        break;
    case MODEL_TGCN2:    /* two GCN layers on X_t; the recurrence after them is per vertex */
    case MODEL_MPNNLSTM:
        depth = 2;
        break;
    case MODEL_GCRNM1: /* each pair convolves the one below's output (K - 1 hops); its LSTM is per vertex */
        depth = k * layers;
        break;
    case MODEL_CDGCN: /* each pair's GCN reads the pair below's output, one hop */
        depth = layers;
        break;
    default: /* T-GCN, EvolveGCN-O, WD-GCN, GAT-LSTM, DySAT: one hop of X_t (attention reads in-neighbours once) */
        break;
    }
    if (depth < 1)
        depth = 1;
    return depth > INT32_MAX ? INT32_MAX : (int)depth;
}

void partition_model_traffic(const model_config *c, int64_t *forward, int64_t *backward, int64_t *temporal)
{
    model_cost cost;
    model_info_of(c->kind)->cost(c, &cost);
    *forward = cost.forward;
    *backward = cost.backward;
    *temporal = cost.temporal;
}

/* ---- traffic of a split of (snapshot, vertex) pairs ----------------------------------------------- */

void partition_step_owners(const partition *p, int32_t *step_owner)
{
    const int64_t n = p->num_nodes;
    for (int64_t t = 0; t < p->num_snapshots; t++)
        for (int64_t v = 0; v < n; v++)
            step_owner[t * n + v] = p->step_owner                          ? p->step_owner[t * n + v]
                                    : p->snapshot_owner && !p->vertex_owner ? p->snapshot_owner[t]
                                                                            : p->vertex_owner[v];
}

/* The ranks other than (tau, v)'s own that read row (tau, v) in window [tau + 1, end): the distinct owners of
 * the later snapshots where v is present (attention), or of tau + 1 alone (a recurrence). @p stamp [R] holds
 * the last (tau, v) key each rank was counted for. */
static int64_t temporal_readers(const snapshot_seq *seq, const int32_t *step_owner, int64_t tau, int64_t v,
                                int64_t end, int whole_window, int64_t key, int64_t *stamp)
{
    const int64_t n = seq->num_nodes, last = whole_window ? end : (tau + 2 < end ? tau + 2 : end);
    const int32_t mine = step_owner[tau * n + v];
    int64_t readers = 0;
    for (int64_t t = tau + 1; t < last; t++) {
        const int32_t r = step_owner[t * n + v];
        if (!seq->snapshots[t].present[v] || r == mine || r < 0 || stamp[r] == key)
            continue;
        stamp[r] = key;
        readers++;
    }
    return readers;
}

int partition_split_traffic(const snapshot_seq *seq, const int32_t *step_owner, int ranks, const model_config *c,
                            int64_t window, int64_t *spatial_bytes, int64_t *temporal_bytes, tf_error *err)
{
    const int64_t n = seq->num_nodes, steps = seq->num_snapshots, length = window > 0 ? window : steps;
    for (int64_t i = 0; i < steps * n; i++)
        if (step_owner[i] < -1 || step_owner[i] >= ranks)
            return tf_error_set(err, TF_ERR_INPUT, "traffic: (snapshot %lld, vertex %lld) has owner %d, expected 0..%d",
                                (long long)(i / n), (long long)(i % n), step_owner[i], ranks - 1);
    model_config shaped = *c;
    shaped.in_features = seq->feature_width;
    model_cost cost;
    model_info_of(c->kind)->cost(&shaped, &cost);
    int32_t *mark = tf_alloc((size_t)n, sizeof *mark, "traffic marks", err);
    int64_t *stamp = mark ? tf_alloc((size_t)ranks, sizeof *stamp, "traffic marks", err) : NULL;
    if (!stamp) {
        free(mark);
        return TF_ERR_INPUT;
    }
    for (int r = 0; r < ranks; r++)
        stamp[r] = -1;
    int64_t halo = 0, crossings = 0;
    for (int64_t t = 0; t < steps; t++) {
        memset(mark, 0, (size_t)n * sizeof *mark);
        halo += partition_halo_rows(&seq->snapshots[t].graph, step_owner + t * n, ranks, NULL, mark);
        const int64_t end = (t / length + 1) * length < steps ? (t / length + 1) * length : steps;
        for (int64_t v = 0; v < n; v++)
            if (seq->snapshots[t].present[v] && step_owner[t * n + v] >= 0)
                crossings += temporal_readers(seq, step_owner, t, v, end, cost.reads_window, t * n + v, stamp);
    }
    *spatial_bytes = halo * (cost.forward + cost.backward) * 4;
    *temporal_bytes = crossings * cost.temporal * 4;
    free(mark);
    free(stamp);
    return TF_OK;
}

/* ---- metrics -------------------------------------------------------------------------------- */

int64_t partition_halo_rows(const csr *g, const int32_t *owner, int ranks, int64_t *per_rank, int32_t *mark)
{
    int64_t total = 0;
    /* mark[u] = 1 + the last rank that counted u, so each (rank, u) counts once; ranks are visited
     * in order, so the rows of one rank are visited together. */
    for (int r = 0; r < ranks; r++) {
        int64_t here = 0;
        for (int64_t v = 0; v < g->num_nodes; v++) {
            if (owner[v] != r)
                continue;
            for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++) {
                const int32_t u = g->col[e];
                if (owner[u] != r && mark[u] != r + 1) {
                    mark[u] = r + 1;
                    here++;
                }
            }
        }
        total += here;
        if (per_rank)
            per_rank[r] += here;
    }
    for (int64_t v = 0; v < g->num_nodes; v++)
        mark[v] = 0;
    return total;
}

int partition_exchange_bytes(const snapshot_seq *seq, const int32_t *owner, int ranks, const model_config *c,
                             int64_t train_snapshots, int64_t window, int64_t stride, int64_t *bytes, tf_error *err)
{
    const int64_t steps = seq->num_snapshots;
    if (train_snapshots < 1 || train_snapshots > steps || window < 0 || stride < 0)
        return tf_error_set(err, TF_ERR_INPUT, "exchange bytes of %lld training snapshots of %lld in windows of %lld "
                                               "every %lld: out of range",
                            (long long)train_snapshots, (long long)steps, (long long)window, (long long)stride);
    model_config shaped = *c;
    shaped.in_features = seq->feature_width;
    int64_t forward, backward, temporal;
    partition_model_traffic(&shaped, &forward, &backward, &temporal);
    const int64_t length = window == 0 || window > train_snapshots ? train_snapshots : window;
    const int64_t every = stride > 0 ? stride : length;
    int32_t *mark = tf_alloc((size_t)seq->num_nodes, sizeof *mark, "halo marks", err);
    if (!mark)
        return TF_ERR_INPUT;
    int64_t floats = 0;
    for (int64_t t = 0; t < steps; t++) {
        int64_t visits = 0; /* training windows holding t, or one forward evaluation */
        if (t >= train_snapshots)
            visits = 0;
        else
            for (int64_t first = 0; first < train_snapshots; first += every)
                visits += t >= first && t < first + length;
        const int64_t halo = partition_halo_rows(&seq->snapshots[t].graph, owner, ranks, NULL, mark);
        floats += t >= train_snapshots ? halo * forward : visits * halo * (forward + backward);
    }
    free(mark);
    *bytes = floats * (int64_t)sizeof(float);
    return TF_OK;
}

void partition_pss_costs(const snapshot_seq *seq, const int32_t *snapshot_owner, int ranks, int64_t *rank_load,
                         int64_t *boundary_rows)
{
    memset(rank_load, 0, (size_t)ranks * sizeof *rank_load);
    *boundary_rows = 0;
    for (int64_t t = 0; t < seq->num_snapshots; t++) {
        const snapshot *s = &seq->snapshots[t];
        int64_t present = 0, carried = 0;
        for (int64_t v = 0; v < seq->num_nodes; v++) {
            present += s->present[v] != 0;
            carried += t > 0 && s->present[v] && seq->snapshots[t - 1].present[v];
        }
        rank_load[snapshot_owner[t]] += present + s->graph.num_edges;
        if (t > 0 && snapshot_owner[t] != snapshot_owner[t - 1])
            *boundary_rows += carried;
    }
}

void partition_metrics_free(partition_metrics *m)
{
    free(m->rank_vertices);
    free(m->rank_load);
    free(m->rank_halo);
    free(m->rank_cache);
    memset(m, 0, sizeof *m);
}

int partition_measure(const snapshot_seq *seq, const int32_t *owner, int ranks, int layers, int cache_depth,
                      model_kind cache_model, partition_metrics *out, tf_error *err)
{
    const int64_t n = seq->num_nodes;
    memset(out, 0, sizeof *out);
    out->ranks = ranks;
    out->cache_depth = cache_depth;
    out->rank_vertices = tf_alloc((size_t)ranks, sizeof(int64_t), "partition metrics", err);
    out->rank_load = out->rank_vertices ? tf_alloc((size_t)ranks, sizeof(int64_t), "partition metrics", err) : NULL;
    out->rank_halo = out->rank_load ? tf_alloc((size_t)ranks, sizeof(int64_t), "partition metrics", err) : NULL;
    out->rank_cache = out->rank_halo ? tf_alloc((size_t)ranks, sizeof(int64_t), "partition metrics", err) : NULL;
    int64_t *load = out->rank_cache ? tf_alloc((size_t)n, sizeof *load, "partition metrics", err) : NULL;
    int32_t *mark = load ? tf_alloc((size_t)n, sizeof *mark, "partition metrics", err) : NULL;
    uint8_t *start = mark ? tf_alloc((size_t)n, 1, "partition metrics", err) : NULL;
    uint8_t *member = start ? tf_alloc((size_t)n, 1, "partition metrics", err) : NULL;
    int32_t *queue = member ? tf_alloc((size_t)n, sizeof *queue, "partition metrics", err) : NULL;
    csr in_union;
    memset(&in_union, 0, sizeof in_union);
    int status = queue ? partition_dynahb_load(seq, layers, load, err) : TF_ERR_INPUT;
    if (status == TF_OK && cache_depth > 0)
        status = partition_cache_union(seq, cache_model, &in_union, err);
    if (status == TF_OK) {
        for (int64_t v = 0; v < n; v++) {
            out->rank_vertices[owner[v]]++;
            out->rank_load[owner[v]] += load[v];
        }
        for (int64_t t = 0; t < seq->num_snapshots; t++) {
            const csr *g = &seq->snapshots[t].graph;
            out->total_edges += g->num_edges;
            for (int64_t v = 0; v < n; v++)
                for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++)
                    out->cut_edges += owner[g->col[e]] != owner[v];
            out->halo_rows += partition_halo_rows(g, owner, ranks, out->rank_halo, mark);
        }
        double total_load = 0, max_load = 0, min_load = INFINITY;
        out->vertices_min = INT64_MAX;
        int64_t held = 0;
        for (int r = 0; r < ranks; r++) {
            total_load += (double)out->rank_load[r];
            max_load = fmax(max_load, (double)out->rank_load[r]);
            min_load = fmin(min_load, (double)out->rank_load[r]);
            if (out->rank_vertices[r] < out->vertices_min)
                out->vertices_min = out->rank_vertices[r];
            if (out->rank_vertices[r] > out->vertices_max)
                out->vertices_max = out->rank_vertices[r];
            for (int64_t v = 0; v < n; v++)
                start[v] = owner[v] == r;
            out->rank_cache[r] = cache_depth > 0 ? partition_in_closure(&in_union, start, cache_depth, member, queue)
                                                 : out->rank_vertices[r];
            held += out->rank_cache[r];
            if (out->rank_cache[r] > out->cache_rows_max)
                out->cache_rows_max = out->rank_cache[r];
        }
        out->load_max_over_mean = total_load > 0 ? max_load / (total_load / ranks) : 1.0;
        out->load_max_over_min = min_load > 0 ? max_load / min_load : (max_load > 0 ? INFINITY : 1.0);
        out->replication = n > 0 ? (double)held / (double)n : 1.0;
    }
    csr_free(&in_union);
    free(load);
    free(mark);
    free(start);
    free(member);
    free(queue);
    if (status != TF_OK)
        partition_metrics_free(out);
    return status;
}

/* ---- the dispatcher ------------------------------------------------------------------------- */

void partition_free(partition *p)
{
    free(p->vertex_owner), free(p->snapshot_owner), free(p->step_owner);
    memset(p, 0, sizeof *p);
}

int ref_partition_snapshots(const snapshot_seq *seq, partition_method m, const partition_options *o, partition *out,
                            tf_error *err)
{
    memset(out, 0, sizeof *out);
    const int64_t n = seq->num_nodes, steps = seq->num_snapshots;
    const int ranks = o->ranks;
    out->method = m;
    out->ranks = ranks;
    out->num_nodes = n;
    out->num_snapshots = steps;
    if (!partition_method_for_snapshots(m))
        return tf_error_set(err, TF_ERR_INPUT, "partition method %s places an event model's memory; a snapshot "
                                               "sequence takes hash, pts, pss, pss-ts, metis, dynahb, dgc or dgc-st",
                            partition_method_name(m));
    if (ranks < 1)
        return tf_error_set(err, TF_ERR_INPUT, "partition into %d ranks, expected >= 1", ranks);
    const int by_time = m == PARTITION_PSS || m == PARTITION_PSS_TS;
    if (by_time && ranks > steps)
        return tf_error_set(err, TF_ERR_INPUT, "%s cannot split %lld snapshots among %d ranks", partition_method_name(m),
                            (long long)steps, ranks);
    if (m != PARTITION_PSS && ranks > n)
        return tf_error_set(err, TF_ERR_INPUT, "%s cannot split %lld vertices into %d parts", partition_method_name(m),
                            (long long)n, ranks);
    if (by_time) {
        if (!(out->snapshot_owner = tf_alloc((size_t)steps, sizeof(int32_t), "snapshot owners", err)))
            return TF_ERR_INPUT;
        partition_range(steps, ranks, out->snapshot_owner);
        if (m == PARTITION_PSS)
            return TF_OK;
    }
    if (m == PARTITION_DGC_ST) {
        if (!(out->step_owner = tf_alloc((size_t)(steps * n), sizeof(int32_t), "step owners", err)))
            return TF_ERR_INPUT;
        int status = partition_dgc_steps(seq, o, out->step_owner, err);
        if (status != TF_OK)
            partition_free(out);
        return status;
    }
    if (!(out->vertex_owner = tf_alloc((size_t)n, sizeof(int32_t), "vertex owners", err))) {
        partition_free(out);
        return TF_ERR_INPUT;
    }
    int status = TF_OK;
    int layers = o->layers > 0 ? o->layers : partition_model_layers(&o->model);
    int64_t *load = NULL;
    partition_graph g;
    memset(&g, 0, sizeof g);
    switch (m) {
    case PARTITION_HASH:
        partition_hash(n, ranks, out->vertex_owner);
        break;
    case PARTITION_PTS:
    case PARTITION_PSS_TS:
        partition_range(n, ranks, out->vertex_owner);
        break;
    case PARTITION_METIS:
        status = partition_union_graph(seq, 1, &g, err);
        if (status == TF_OK)
            status = partition_metis(&g, ranks, o->seed, out->vertex_owner, NULL, err);
        break;
    case PARTITION_DYNAHB:
        if (!(load = tf_alloc((size_t)n, sizeof *load, "DynaHB loads", err)))
            status = TF_ERR_INPUT;
        if (status == TF_OK)
            status = partition_dynahb_load(seq, layers, load, err);
        if (status == TF_OK)
            status = partition_serpentine(load, n, ranks, out->vertex_owner, err);
        break;
    default: /* PARTITION_DGC */
        status = partition_dgc(seq, o, out->vertex_owner, err);
        break;
    }
    free(load);
    partition_graph_free(&g);
    if (status != TF_OK)
        partition_free(out);
    return status;
}
