#include "datasets/generate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"
#include "ref/core/rng.h"

/* ---- power-law endpoint sampling ---------------------------------------------------- */

/* Cumulative Chung-Lu weights over a seeded random vertex order. */
typedef struct weighted_vertices {
    int64_t count;
    double *cumulative;   /* [count] running sum of weights, in `order` */
    int32_t *order;       /* [count] vertex at each rank */
} weighted_vertices;

static int weighted_vertices_init(weighted_vertices *w, int64_t count, double exponent, rng *r, tf_error *err)
{
    w->count = count;
    w->cumulative = tf_alloc((size_t)count, sizeof *w->cumulative, "vertex weights", err);
    w->order = w->cumulative ? tf_alloc((size_t)count, sizeof *w->order, "vertex order", err) : NULL;
    if (!w->order) {
        free(w->cumulative);
        w->cumulative = NULL;
        return TF_ERR_INPUT;
    }
    for (int64_t k = 0; k < count; k++)
        w->order[k] = (int32_t)k;
    for (int64_t k = count - 1; k > 0; k--) { /* Fisher-Yates */
        int64_t j = (int64_t)rng_below(r, (uint64_t)k + 1);
        int32_t swap = w->order[k];
        w->order[k] = w->order[j];
        w->order[j] = swap;
    }
    double total = 0;
    for (int64_t k = 0; k < count; k++) {
        total += pow((double)(k + 1), -1.0 / (exponent - 1.0));
        w->cumulative[k] = total;
    }
    return TF_OK;
}

static void weighted_vertices_free(weighted_vertices *w)
{
    free(w->cumulative);
    free(w->order);
}

/* A vertex drawn with probability proportional to its weight (binary search). */
static int32_t weighted_vertices_draw(const weighted_vertices *w, rng *r)
{
    double u = rng_uniform(r) * w->cumulative[w->count - 1];
    int64_t low = 0, high = w->count - 1;
    while (low < high) {
        int64_t middle = low + (high - low) / 2;
        if (w->cumulative[middle] <= u)
            low = middle + 1;
        else
            high = middle;
    }
    return w->order[low];
}

/* ---- the current edge set: arrays + a hash index for O(1) lookup and removal --------- */

#define EMPTY_KEY UINT64_MAX

typedef struct edge_set {
    int64_t count, capacity;
    int32_t *src, *dst;
    float *weight;
    uint64_t *keys;      /* hash table of src<<32|dst, linear probing */
    int64_t *slots;      /* index into the arrays for each key */
    uint64_t mask;       /* table size - 1 (a power of two >= 2 capacity) */
} edge_set;

static uint64_t edge_key(int32_t src, int32_t dst) { return (uint64_t)(uint32_t)src << 32 | (uint32_t)dst; }

static uint64_t hash_position(const edge_set *s, uint64_t key)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return key & s->mask;
}

static int edge_set_init(edge_set *s, int64_t capacity, tf_error *err)
{
    memset(s, 0, sizeof *s);
    uint64_t table = 16;
    while (table < 2 * (uint64_t)capacity)
        table *= 2;
    s->capacity = capacity;
    s->mask = table - 1;
    if (!(s->src = tf_alloc((size_t)capacity, sizeof *s->src, "generator edges", err)) ||
        !(s->dst = tf_alloc((size_t)capacity, sizeof *s->dst, "generator edges", err)) ||
        !(s->weight = tf_alloc((size_t)capacity, sizeof *s->weight, "generator edges", err)) ||
        !(s->keys = tf_alloc(table, sizeof *s->keys, "generator edge index", err)) ||
        !(s->slots = tf_alloc(table, sizeof *s->slots, "generator edge index", err)))
        return TF_ERR_INPUT;
    memset(s->keys, 0xff, table * sizeof *s->keys);
    return TF_OK;
}

static void edge_set_free(edge_set *s)
{
    free(s->src);
    free(s->dst);
    free(s->weight);
    free(s->keys);
    free(s->slots);
}

/* Table position holding `key`, or the empty position where it would go. */
static uint64_t edge_set_find(const edge_set *s, uint64_t key)
{
    uint64_t p = hash_position(s, key);
    while (s->keys[p] != EMPTY_KEY && s->keys[p] != key)
        p = (p + 1) & s->mask;
    return p;
}

/* Adds src -> dst if absent; returns 1 if added. */
static int edge_set_add(edge_set *s, int32_t src, int32_t dst, float weight)
{
    uint64_t key = edge_key(src, dst), p = edge_set_find(s, key);
    if (s->keys[p] == key)
        return 0;
    s->keys[p] = key;
    s->slots[p] = s->count;
    s->src[s->count] = src;
    s->dst[s->count] = dst;
    s->weight[s->count] = weight;
    s->count++;
    return 1;
}

/* Removes the table entry at p, shifting later entries of its probe run back (no tombstones). */
static void hash_remove_at(edge_set *s, uint64_t p)
{
    uint64_t hole = p;
    for (uint64_t q = (p + 1) & s->mask; s->keys[q] != EMPTY_KEY; q = (q + 1) & s->mask) {
        uint64_t home = hash_position(s, s->keys[q]);
        /* Move q into the hole unless its home lies cyclically in (hole, q]. */
        if (((q - home) & s->mask) >= ((q - hole) & s->mask)) {
            s->keys[hole] = s->keys[q];
            s->slots[hole] = s->slots[q];
            hole = q;
        }
    }
    s->keys[hole] = EMPTY_KEY;
}

/* Removes the edge stored at array index i; the last edge takes its place. */
static void edge_set_remove(edge_set *s, int64_t i)
{
    hash_remove_at(s, edge_set_find(s, edge_key(s->src[i], s->dst[i])));
    int64_t last = --s->count;
    if (i != last) {
        s->src[i] = s->src[last];
        s->dst[i] = s->dst[last];
        s->weight[i] = s->weight[last];
        s->slots[edge_set_find(s, edge_key(s->src[i], s->dst[i]))] = i;
    }
}

/* ---- evolving power-law snapshots ---------------------------------------------------- */

void powerlaw_params_default(powerlaw_params *p)
{
    memset(p, 0, sizeof *p);
    p->num_nodes = 1000;
    p->num_edges = 10000;
    p->num_snapshots = 10;
    p->churn = 0.01;
    p->vertex_churn = 0.0;
    p->growth = 1.0;
    p->exponent = 2.5;
    p->feature_width = 4;
    p->degree_features = 1;
    p->seed = 1;
}

int64_t powerlaw_edges_at(const powerlaw_params *p, int64_t t)
{
    if (p->growth == 1 || p->num_snapshots < 2)
        return p->num_edges;
    return (int64_t)llround((double)p->num_edges * (1 + (p->growth - 1) * (double)t / (double)(p->num_snapshots - 1)));
}

static int check_powerlaw_params(const powerlaw_params *p, tf_error *err)
{
    if (p->num_nodes < 2 || p->num_nodes > INT32_MAX)
        return tf_error_set(err, TF_ERR_INPUT, "powerlaw: nodes=%lld, expected 2..%d", (long long)p->num_nodes, INT32_MAX);
    if (p->num_snapshots < 1)
        return tf_error_set(err, TF_ERR_INPUT, "powerlaw: snapshots=%lld, expected at least 1", (long long)p->num_snapshots);
    if (p->num_edges < 0)
        return tf_error_set(err, TF_ERR_INPUT, "powerlaw: edges=%lld, expected at least 0", (long long)p->num_edges);
    if (!(p->churn >= 0 && p->churn <= 1))
        return tf_error_set(err, TF_ERR_INPUT, "powerlaw: churn=%g, expected a fraction in [0, 1]", p->churn);
    if (!(p->vertex_churn >= 0 && p->vertex_churn <= 0.5))
        return tf_error_set(err, TF_ERR_INPUT, "powerlaw: arrival=%g, expected a fraction in [0, 0.5]", p->vertex_churn);
    if (!(p->growth >= 1 && p->growth <= 1000))
        return tf_error_set(err, TF_ERR_INPUT, "powerlaw: growth=%g, expected a factor in [1, 1000]", p->growth);
    if (!(p->exponent > 2 && p->exponent < 100))
        return tf_error_set(err, TF_ERR_INPUT, "powerlaw: exponent=%g, expected a value in (2, 100)", p->exponent);
    if (p->feature_width < 1 || p->feature_width > 4096)
        return tf_error_set(err, TF_ERR_INPUT, "powerlaw: features=%lld, expected 1..4096", (long long)p->feature_width);
    /* Present vertices never drop below (1 - 2 vertex_churn) N; a simple graph on P vertices
     * has P (P - 1) edges, and the skewed draw needs slack: allow a quarter of them. */
    double present = floor((double)p->num_nodes * (1 - 2 * p->vertex_churn));
    const int64_t most = powerlaw_edges_at(p, p->num_snapshots - 1); /* the largest snapshot */
    /* The hint: the fewest vertices whose quarter of ordered pairs holds the edges, P (P - 1) / 4 >= most,
     * and the nodes= that keeps that many present. */
    const double needed = ceil((1 + sqrt(1 + 16 * (double)most)) / 2);
    const double nodes = ceil(needed / (1 - 2 * p->vertex_churn));
    if ((double)most > present * (present - 1) / 4 && p->growth != 1)
        return tf_error_set(err, TF_ERR_INPUT,
                            "powerlaw: edges=%lld with growth=%g (%lld in the last snapshot) is too dense for %.0f "
                            "present vertices, which hold at most %.0f (a quarter of their ordered pairs): give fewer "
                            "edges or nodes=%.0f or more",
                            (long long)p->num_edges, p->growth, (long long)most, present,
                            floor(present * (present - 1) / 4), nodes);
    if ((double)most > present * (present - 1) / 4)
        return tf_error_set(err, TF_ERR_INPUT,
                            "powerlaw: edges=%lld is too dense for %.0f present vertices, which hold at most %.0f (a "
                            "quarter of their ordered pairs): give fewer edges or nodes=%.0f or more",
                            (long long)most, present, floor(present * (present - 1) / 4), nodes);
    double per_snapshot = (double)most * (sizeof(int32_t) + sizeof(float)) + (double)(p->num_nodes + 1) * 8 +
                          (double)p->num_nodes * (double)(p->feature_width + 1) * sizeof(float) + (double)p->num_nodes;
    double working = (double)most * (3 * 4 + 8 + 2 * 2 * 16) + (double)p->num_nodes * 40;
    return tf_check_memory(per_snapshot * (double)p->num_snapshots + working, "the generated graph", err);
}

/* Draws edges among the vertices present [num_nodes] marks until the set holds `target` edges. */
static int fill_edges(edge_set *edges, int64_t target, const weighted_vertices *w, const uint8_t *present, rng *r,
                      tf_error *err)
{
    int64_t attempts = 0, budget = 100 * (target - edges->count) + 1000;
    while (edges->count < target) {
        if (++attempts > budget)
            return tf_error_set(err, TF_ERR_INPUT,
                                "powerlaw: could not place %lld distinct edges (too dense for the power law: lower "
                                "edges or raise the exponent)",
                                (long long)target);
        int32_t src = weighted_vertices_draw(w, r), dst = weighted_vertices_draw(w, r);
        if (src == dst || !present[src] || !present[dst])
            continue;
        edge_set_add(edges, src, dst, (float)(0.5 + rng_uniform(r)));
    }
    return TF_OK;
}

/* Departs `count` random present vertices and arrives as many that were absent: present
 * [num_nodes] updated, departed [num_nodes] marks the ones that left. */
static void churn_vertices(uint8_t *present, int64_t num_nodes, int64_t count, rng *r, uint8_t *departed)
{
    memset(departed, 0, (size_t)num_nodes);
    int64_t absent = 0;
    for (int64_t v = 0; v < num_nodes; v++)
        absent += !present[v];
    int64_t arrivals = count < absent ? count : absent;
    /* Choose the arrivals among vertices absent before this step, then the departures. */
    for (int64_t done = 0; done < arrivals;) {
        int64_t v = (int64_t)rng_below(r, (uint64_t)num_nodes);
        if (!present[v] && !departed[v]) {
            departed[v] = 2; /* marks "arriving" */
            done++;
        }
    }
    int64_t departures = count < num_nodes - absent ? count : num_nodes - absent;
    for (int64_t done = 0; done < departures;) {
        int64_t v = (int64_t)rng_below(r, (uint64_t)num_nodes);
        if (present[v] && !departed[v]) {
            departed[v] = 1;
            done++;
        }
    }
    for (int64_t v = 0; v < num_nodes; v++) {
        if (departed[v] == 1)
            present[v] = 0;
        else if (departed[v] == 2) {
            present[v] = 1;
            departed[v] = 0;
        }
    }
}

/* log(1 + weighted in-degree) per vertex of graph g into one column of a feature array:
 * out [num_nodes][stride], already offset to that column. */
static void in_degree_feature(const csr *g, float *out, int64_t stride)
{
    for (int64_t v = 0; v < g->num_nodes; v++) {
        double degree = 0;
        for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++)
            degree += g->weight[e];
        out[v * stride] = (float)log1p(degree);
    }
}

int generate_powerlaw(const powerlaw_params *p, snapshot_seq *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    if (check_powerlaw_params(p, err) != TF_OK)
        return TF_ERR_INPUT;
    const int64_t n = p->num_nodes, f = p->feature_width;
    rng r;
    rng_seed(&r, p->seed);
    weighted_vertices w = {0, NULL, NULL};
    edge_set edges;
    memset(&edges, 0, sizeof edges);
    uint8_t *present = NULL, *departed = NULL;
    float *drift = NULL; /* the random feature columns, [n][f] */
    int64_t *out_degree = NULL;
    int status = snapshot_seq_alloc(out, p->num_snapshots, n, f, 1, err);
    if (status == TF_OK)
        status = weighted_vertices_init(&w, n, p->exponent, &r, err);
    if (status == TF_OK)
        status = edge_set_init(&edges, powerlaw_edges_at(p, p->num_snapshots - 1), err);
    if (status == TF_OK &&
        (!(present = tf_alloc((size_t)n, 1, "vertex presence", err)) ||
         !(departed = tf_alloc((size_t)n, 1, "vertex churn marks", err)) ||
         !(drift = tf_alloc((size_t)(n * f), sizeof *drift, "vertex features", err)) ||
         !(out_degree = tf_alloc((size_t)n, sizeof *out_degree, "out-degrees", err))))
        status = TF_ERR_INPUT;
    if (status == TF_OK) {
        memset(present, 1, (size_t)n);
        for (int64_t k = 0; k < (int64_t)llround(p->vertex_churn * (double)n); k++)
            present[w.order[n - 1 - k]] = 0; /* the lowest-weight ranks start absent */
        for (int64_t i = 0; i < n * f; i++)
            drift[i] = (float)rng_normal(&r);
    }

    for (int64_t t = 0; status == TF_OK && t < p->num_snapshots; t++) {
        if (t > 0) {
            int64_t removals = (int64_t)llround(p->churn * (double)edges.count);
            for (int64_t k = 0; k < removals; k++)
                edge_set_remove(&edges, (int64_t)rng_below(&r, (uint64_t)edges.count));
            int64_t movers = (int64_t)llround(p->vertex_churn * (double)n);
            if (movers > 0) {
                churn_vertices(present, n, movers, &r, departed);
                for (int64_t i = edges.count - 1; i >= 0; i--)
                    if (departed[edges.src[i]] || departed[edges.dst[i]])
                        edge_set_remove(&edges, i);
                for (int64_t v = 0; v < n; v++)
                    if (departed[v])
                        for (int64_t k = 0; k < f; k++) /* a vertex that returns is a new one */
                            drift[v * f + k] = (float)rng_normal(&r);
            }
            for (int64_t v = 0; v < n; v++)
                if (present[v] && rng_uniform(&r) < p->churn)
                    for (int64_t k = 0; k < f; k++)
                        drift[v * f + k] += (float)(0.1 * rng_normal(&r));
        }
        status = fill_edges(&edges, powerlaw_edges_at(p, t), &w, present, &r, err);
        if (status == TF_OK)
            status = snapshot_seq_set_edges(out, t, edges.count, edges.src, edges.dst, edges.weight, err);
        if (status != TF_OK)
            break;
        snapshot *s = &out->snapshots[t];
        memcpy(s->present, present, (size_t)n);
        memset(out_degree, 0, (size_t)n * sizeof *out_degree);
        for (int64_t i = 0; i < edges.count; i++)
            out_degree[edges.src[i]]++;
        int64_t first_drifting = p->degree_features ? 2 : 0;
        if (p->degree_features)
            in_degree_feature(&s->graph, s->features.data, f);
        for (int64_t v = 0; v < n; v++) {
            if (!present[v]) {
                s->features.data[v * f] = 0;
                continue;
            }
            if (p->degree_features && f >= 2)
                s->features.data[v * f + 1] = (float)log1p((double)out_degree[v]);
            for (int64_t k = first_drifting; k < f; k++)
                s->features.data[v * f + k] = drift[v * f + k];
        }
        if (p->progress)
            p->progress(p->progress_context, "generating snapshots", t + 1, p->num_snapshots);
    }
    /* Target of t: the in-degree feature of t + 1 (the last snapshot predicts itself). */
    for (int64_t t = 0; status == TF_OK && t < p->num_snapshots; t++) {
        int64_t next = t + 1 < p->num_snapshots ? t + 1 : t;
        in_degree_feature(&out->snapshots[next].graph, out->snapshots[t].targets.data, 1);
        for (int64_t v = 0; v < n; v++)
            if (!out->snapshots[t].present[v])
                out->snapshots[t].targets.data[v] = 0;
    }
    weighted_vertices_free(&w);
    edge_set_free(&edges);
    free(present);
    free(departed);
    free(drift);
    free(out_degree);
    if (status != TF_OK)
        snapshot_seq_free(out);
    return status;
}

/* ---- planted communities that evolve ------------------------------------------------- */

void community_params_default(community_params *p)
{
    memset(p, 0, sizeof *p);
    p->num_nodes = 200;
    p->num_edges = 1600;
    p->num_snapshots = 10;
    p->num_classes = 4;
    p->change = 0.05;
    p->homophily = 0.8;
    p->feature_width = 8;
    p->noise = 1.0;
    p->labelled = 0.8;
    p->seed = 1;
}

static int check_community_params(const community_params *p, tf_error *err)
{
    if (p->num_nodes < 2 || p->num_nodes > INT32_MAX)
        return tf_error_set(err, TF_ERR_INPUT, "communities: nodes=%lld, expected 2..%d", (long long)p->num_nodes,
                            INT32_MAX);
    if (p->num_snapshots < 1)
        return tf_error_set(err, TF_ERR_INPUT, "communities: snapshots=%lld, expected at least 1",
                            (long long)p->num_snapshots);
    if (p->num_classes < 2 || p->num_classes > p->num_nodes)
        return tf_error_set(err, TF_ERR_INPUT, "communities: classes=%lld, expected 2..nodes (%lld)",
                            (long long)p->num_classes, (long long)p->num_nodes);
    if (!(p->change >= 0 && p->change <= 1))
        return tf_error_set(err, TF_ERR_INPUT, "communities: change=%g, expected a fraction in [0, 1]", p->change);
    if (!(p->homophily >= 0 && p->homophily <= 1))
        return tf_error_set(err, TF_ERR_INPUT, "communities: homophily=%g, expected a probability in [0, 1]",
                            p->homophily);
    if (p->feature_width < 1 || p->feature_width > 4096)
        return tf_error_set(err, TF_ERR_INPUT, "communities: features=%lld, expected 1..4096",
                            (long long)p->feature_width);
    if (!(p->noise >= 0 && p->noise <= 1e6))
        return tf_error_set(err, TF_ERR_INPUT, "communities: noise=%g, expected a deviation in [0, 1e6]", p->noise);
    if (!(p->labelled > 0 && p->labelled <= 1))
        return tf_error_set(err, TF_ERR_INPUT, "communities: labelled=%g, expected a fraction in (0, 1]", p->labelled);
    /* a quarter of the ordered pairs, as the power-law generator allows (the in-community draws need slack) */
    const double most = (double)p->num_nodes * (double)(p->num_nodes - 1) / 4;
    if (p->num_edges < 0 || (double)p->num_edges > most)
        return tf_error_set(err, TF_ERR_INPUT, "communities: edges=%lld, expected 0..%.0f (a quarter of the ordered "
                            "pairs of %lld vertices)", (long long)p->num_edges, most, (long long)p->num_nodes);
    double bytes = (double)p->num_snapshots * ((double)p->num_edges * 8 + (double)p->num_nodes *
                                               (double)(p->feature_width + 4) * 4) + (double)p->num_edges * 48;
    return tf_check_memory(bytes, "the generated graph", err);
}

/* Moves round(change N) distinct vertices to another community: community [n] updated, order [n] scratch. */
static void move_communities(const community_params *p, int32_t *community, int32_t *order, rng *r)
{
    const int64_t n = p->num_nodes, movers = (int64_t)llround(p->change * (double)n);
    for (int64_t i = 0; i < n; i++)
        order[i] = (int32_t)i;
    for (int64_t k = 0; k < movers; k++) { /* a partial Fisher-Yates shuffle: the first `movers` */
        const int64_t j = k + (int64_t)rng_below(r, (uint64_t)(n - k));
        const int32_t v = order[j];
        order[j] = order[k];
        order[k] = v;
        const int32_t other = (int32_t)rng_below(r, (uint64_t)(p->num_classes - 1));
        community[v] = other >= community[v] ? other + 1 : other; /* any class but its own */
    }
}

/* One snapshot's edges: members [n] lists the vertices by community, from start [C + 1]. */
static int draw_community_edges(const community_params *p, const int32_t *community, const int32_t *members,
                                const int64_t *start, edge_set *edges, rng *r, tf_error *err)
{
    while (edges->count > 0)
        edge_set_remove(edges, edges->count - 1);
    int64_t attempts = 0, budget = 100 * p->num_edges + 1000;
    while (edges->count < p->num_edges) {
        if (++attempts > budget)
            return tf_error_set(err, TF_ERR_INPUT, "communities: could not place %lld distinct edges (too dense for "
                                "the communities: lower edges or homophily)", (long long)p->num_edges);
        const int32_t dst = (int32_t)rng_below(r, (uint64_t)p->num_nodes);
        const int64_t c = community[dst], size = start[c + 1] - start[c];
        const int32_t src = rng_uniform(r) < p->homophily ? members[start[c] + (int64_t)rng_below(r, (uint64_t)size)]
                                                          : (int32_t)rng_below(r, (uint64_t)p->num_nodes);
        if (src != dst)
            edge_set_add(edges, src, dst, 1.0f);
    }
    return TF_OK;
}

/* Snapshot t's edges, features, labels and target from the communities [n]; members [n] and
 * start [C + 1] are scratch (the vertices sorted by community). */
static int fill_community_snapshot(const community_params *p, snapshot_seq *out, int64_t t, const int32_t *community,
                                   int32_t *members, int64_t *start, edge_set *edges, rng *r, tf_error *err)
{
    const int64_t n = p->num_nodes, f = p->feature_width;
    memset(start, 0, (size_t)(p->num_classes + 1) * sizeof *start);
    for (int64_t v = 0; v < n; v++) /* counting sort by community */
        start[community[v] + 1]++;
    for (int64_t c = 0; c < p->num_classes; c++)
        start[c + 1] += start[c];
    for (int64_t v = 0; v < n; v++)
        members[start[community[v]]++] = (int32_t)v;
    for (int64_t c = p->num_classes; c > 0; c--) /* the fill moved each start to its end: back */
        start[c] = start[c - 1];
    start[0] = 0;
    if (draw_community_edges(p, community, members, start, edges, r, err) != TF_OK ||
        snapshot_seq_set_edges(out, t, edges->count, edges->src, edges->dst, edges->weight, err) != TF_OK)
        return TF_ERR_INPUT;
    snapshot *s = &out->snapshots[t];
    for (int64_t v = 0; v < n; v++) {
        for (int64_t k = 0; k < f; k++)
            s->features.data[v * f + k] = (float)(p->noise * rng_normal(r)) + (k == community[v] % f ? 1.0f : 0.0f);
        s->labels[v] = rng_uniform(r) < p->labelled ? community[v] : SNAPSHOT_UNLABELLED;
    }
    in_degree_feature(&s->graph, s->targets.data, 1);
    return TF_OK;
}

int generate_communities(const community_params *p, snapshot_seq *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    if (check_community_params(p, err) != TF_OK)
        return TF_ERR_INPUT;
    const int64_t n = p->num_nodes;
    rng r;
    rng_seed(&r, p->seed);
    edge_set edges;
    memset(&edges, 0, sizeof edges);
    int32_t *community = NULL, *members = NULL;
    int64_t *start = NULL;
    int status = snapshot_seq_alloc(out, p->num_snapshots, n, p->feature_width, 1, err);
    if (status == TF_OK)
        status = snapshot_seq_alloc_labels(out, p->num_classes, err);
    if (status == TF_OK)
        status = edge_set_init(&edges, p->num_edges, err);
    if (status == TF_OK && (!(community = tf_alloc((size_t)n, sizeof *community, "communities", err)) ||
                            !(members = tf_alloc((size_t)n, sizeof *members, "communities", err)) ||
                            !(start = tf_alloc((size_t)p->num_classes + 1, sizeof *start, "communities", err))))
        status = TF_ERR_INPUT;
    for (int64_t v = 0; status == TF_OK && v < n; v++)
        community[v] = (int32_t)rng_below(&r, (uint64_t)p->num_classes);
    for (int64_t t = 0; status == TF_OK && t < p->num_snapshots; t++) {
        if (t > 0)
            move_communities(p, community, members, &r); /* members is scratch until the fill rebuilds it */
        status = fill_community_snapshot(p, out, t, community, members, start, &edges, &r, err);
    }
    edge_set_free(&edges);
    free(community);
    free(members);
    free(start);
    if (status != TF_OK)
        snapshot_seq_free(out);
    return status;
}

/* ---- event streams -------------------------------------------------------------------- */

void event_params_default(event_params *p)
{
    memset(p, 0, sizeof *p);
    p->num_nodes = 1000;
    p->num_events = 10000;
    p->repeat = 0.5;
    p->exponent = 2.5;
    p->feature_width = 0;
    p->seed = 1;
}

int generate_events(const event_params *p, event_stream *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    if (p->num_nodes < 2 || p->num_nodes > INT32_MAX)
        return tf_error_set(err, TF_ERR_INPUT, "events: nodes=%lld, expected 2..%d", (long long)p->num_nodes, INT32_MAX);
    if (p->num_events < 1)
        return tf_error_set(err, TF_ERR_INPUT, "events: events=%lld, expected at least 1", (long long)p->num_events);
    if (!(p->repeat >= 0 && p->repeat < 1))
        return tf_error_set(err, TF_ERR_INPUT, "events: repeat=%g, expected a probability in [0, 1)", p->repeat);
    if (!(p->exponent > 2 && p->exponent < 100))
        return tf_error_set(err, TF_ERR_INPUT, "events: exponent=%g, expected a value in (2, 100)", p->exponent);
    if (p->feature_width < 0 || p->feature_width > 4096)
        return tf_error_set(err, TF_ERR_INPUT, "events: features=%lld, expected 0..4096", (long long)p->feature_width);
    double bytes = (double)p->num_events * (4 + 4 + 8 + 4.0 * (double)p->feature_width) + (double)p->num_nodes * 12;
    if (tf_check_memory(bytes, "the generated event stream", err) != TF_OK)
        return TF_ERR_INPUT;
    rng r;
    rng_seed(&r, p->seed);
    weighted_vertices w;
    if (weighted_vertices_init(&w, p->num_nodes, p->exponent, &r, err) != TF_OK)
        return TF_ERR_INPUT;
    if (event_stream_alloc(out, p->num_events, p->feature_width, 0, err) != TF_OK) {
        weighted_vertices_free(&w);
        return TF_ERR_INPUT;
    }
    out->num_nodes = p->num_nodes;
    double now = 0;
    for (int64_t i = 0; i < p->num_events; i++) {
        if (i > 0 && rng_uniform(&r) < p->repeat) {
            int64_t j = (int64_t)rng_below(&r, (uint64_t)i);
            out->src[i] = out->src[j];
            out->dst[i] = out->dst[j];
        } else {
            do {
                out->src[i] = weighted_vertices_draw(&w, &r);
                out->dst[i] = weighted_vertices_draw(&w, &r);
            } while (out->src[i] == out->dst[i]);
        }
        now += floor(-5.0 * log(1.0 - rng_uniform(&r)));
        out->time[i] = now;
        for (int64_t k = 0; k < p->feature_width; k++)
            out->features[i * p->feature_width + k] = (float)rng_normal(&r);
    }
    weighted_vertices_free(&w);
    return TF_OK;
}
