/* One rank's share of a snapshot sequence (opt/partition_part.h). */
#include "opt/partition_part.h"

#include <stdlib.h>
#include <string.h>

#include "opt/kernels.h"
#include "ref/core/memory.h"
#include "ref/partition.h"

const char *partition_mode_name(partition_mode m) { return m == PARTITION_CACHE ? "cache" : "exchange"; }

static operator_kind operator_of(model_kind kind)
{
    return model_info_of(kind)->graph_operator;
}

/* Snapshot t's operators of @p ops from its whole graph @p g: DCRNN's two walks, its backward one
 * also in the in-edge form an exchange-mode part applies as a transpose (opt/partition_part.h). */
static int whole_operators(partition_operators *ops, int64_t t, const csr *g, tf_error *err)
{
    if (ops->kind == OPERATOR_CHEBYSHEV)
        return ref_propagation_chebyshev(&ops->whole[t], g, err);
    if (ops->kind == OPERATOR_GCN)
        return ref_propagation_gcn(&ops->whole[t], g, EDGE_NORM_SYMMETRIC, 1, err);
    csr *reversed = &ops->reversed[t];
    reversed->row_ptr = tf_alloc((size_t)g->num_nodes + 1, sizeof *reversed->row_ptr, "reversed graphs", err);
    reversed->col = reversed->row_ptr ? tf_alloc((size_t)g->num_edges + 1, sizeof *reversed->col, "reversed graphs", err)
                                      : NULL;
    reversed->weight = reversed->col ? tf_alloc((size_t)g->num_edges + 1, sizeof *reversed->weight, "reversed graphs", err)
                                     : NULL;
    int status = reversed->weight ? ref_propagation_walk(&ops->whole[t], g, WALK_FORWARD, err) : TF_ERR_INPUT;
    if (status == TF_OK)
        status = ref_propagation_walk(&ops->transposed[t], g, WALK_BACKWARD_TRANSPOSED, err);
    return status == TF_OK ? ref_propagation_transpose(&ops->backward[t], reversed, &ops->transposed[t], err) : status;
}

int partition_operators_create(partition_operators *ops, const snapshot_seq *seq, model_kind model, tf_error *err)
{
    memset(ops, 0, sizeof *ops);
    const int64_t steps = seq->num_snapshots;
    ops->kind = operator_of(model);
    ops->num_snapshots = steps;
    int status = (ops->whole = tf_alloc((size_t)steps, sizeof *ops->whole, "whole-graph operators", err)) ? TF_OK
                                                                                                          : TF_ERR_INPUT;
    if (status == TF_OK && ops->kind == OPERATOR_WALK_FORWARD &&
        (!(ops->transposed = tf_alloc((size_t)steps, sizeof *ops->transposed, "whole-graph operators", err)) ||
         !(ops->backward = tf_alloc((size_t)steps, sizeof *ops->backward, "whole-graph operators", err)) ||
         !(ops->reversed = tf_alloc((size_t)steps, sizeof *ops->reversed, "whole-graph operators", err))))
        status = TF_ERR_INPUT;
    for (int64_t t = 0; status == TF_OK && t < steps; t++)
        status = whole_operators(ops, t, &seq->snapshots[t].graph, err);
    if (status != TF_OK)
        partition_operators_free(ops);
    return status;
}

void partition_operators_free(partition_operators *ops)
{
    for (int64_t t = 0; ops->whole && t < ops->num_snapshots; t++) {
        ref_propagation_free(&ops->whole[t]);
        if (ops->reversed) {
            ref_propagation_free(&ops->transposed[t]);
            ref_propagation_free(&ops->backward[t]);
            csr_free(&ops->reversed[t]);
        }
    }
    free(ops->whole);
    free(ops->transposed);
    free(ops->backward);
    free(ops->reversed);
    memset(ops, 0, sizeof *ops);
}

void partition_part_free(partition_part *part)
{
    const int64_t steps = part->local.num_snapshots;
    for (int64_t t = 0; t < steps; t++) {
        if (part->graphs)
            csr_free(&part->graphs[t]);
        if (part->edge_coefficient)
            free(part->edge_coefficient[t]);
        if (part->backward_coefficient)
            free(part->backward_coefficient[t]);
        if (part->reversed_graphs)
            csr_free(&part->reversed_graphs[t]);
        if (part->self_coefficient)
            free(part->self_coefficient[t]);
        if (part->halo_vertices)
            free(part->halo_vertices[t]);
    }
    free(part->graphs);
    free(part->operator_rows);
    free(part->edge_coefficient);
    free(part->backward_coefficient);
    free(part->reversed_graphs);
    free(part->transposed_halos);
    free(part->self_coefficient);
    free(part->halo);
    free(part->halo_vertices);
    free(part->halos);
    free(part->present_total);
    free(part->global_id);
    free(part->cached_features);
    free(part->scratch);
    snapshot_seq_free(&part->local);
    memset(part, 0, sizeof *part);
}

static const char *operator_name(operator_kind kind)
{
    return kind == OPERATOR_GCN ? "GCN" : kind == OPERATOR_CHEBYSHEV ? "Chebyshev" : "random-walk";
}

/* operator_source::build: snapshot t's local operator with fresh copies of its coefficients (the
 * model frees what it gets); graph and halo borrowed from the part. A part of DCRNN's forward walk
 * serves its backward walk too: on the reversed graph in cache mode, as the transpose of the
 * in-edge operator (transposed_halos) in exchange mode. */
static int build_operator(void *context, int64_t t, operator_kind kind, propagation *out, tf_error *err)
{
    const partition_part *part = context;
    memset(out, 0, sizeof *out);
    const int backward = kind == OPERATOR_WALK_BACKWARD && part->backward_coefficient;
    if (kind != part->kind && !backward)
        return tf_error_set(err, TF_ERR_INPUT, "partition part holds %s operators; the model asked for %s",
                            operator_name(part->kind), operator_name(kind));
    const csr *g = backward && part->reversed_graphs ? &part->reversed_graphs[t] : &part->graphs[t];
    out->graph = g;
    out->edge_coefficient = tf_alloc((size_t)g->num_edges, sizeof(float), "local edge coefficients", err);
    out->self_coefficient = out->edge_coefficient
                                ? tf_alloc((size_t)g->num_nodes, sizeof(float), "local self coefficients", err)
                                : NULL;
    if (!out->self_coefficient) {
        ref_propagation_free(out);
        return TF_ERR_INPUT;
    }
    memcpy(out->edge_coefficient, (backward ? part->backward_coefficient : part->edge_coefficient)[t],
           (size_t)g->num_edges * sizeof(float));
    /* a walk's self coefficients are 0 on every row, in either form */
    memcpy(out->self_coefficient, part->self_coefficient[t], (size_t)g->num_nodes * sizeof(float));
    if (part->halos)
        out->halo = backward ? &part->transposed_halos[t] : &part->halos[t];
    return TF_OK;
}

/* input_aggregations::get for T-GCN in cache mode: out [owned][F] = A^ X_t of the owned rows, from
 * the owned and cached rows' features with the whole graph's coefficients. */
static int cached_aggregation(void *context, int64_t t, float *out, tf_error *err)
{
    (void)err;
    const partition_part *part = context;
    const int64_t f = part->local.feature_width, rows = part->owned + part->cached;
    propagation view;
    memset(&view, 0, sizeof view);
    view.graph = &part->graphs[t];
    view.edge_coefficient = part->edge_coefficient[t];
    view.self_coefficient = part->self_coefficient[t];
    opt_propagate_forward(&view, part->cached_features + t * rows * f, f, part->scratch);
    memcpy(out, part->scratch, (size_t)(part->owned * f) * sizeof(float));
    return TF_OK;
}

void partition_part_attach(const partition_part *part, model *m)
{
    m->operators = &part->operators;
    if (part->cached_features)
        m->inputs = &part->cached_inputs;
}

static int by_value(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Where copy_operator() writes: a local graph, its edge coefficients, its self coefficients (NULL:
 * not kept) and those of a second operator on the same edges (NULL: none). */
typedef struct local_operator {
    csr *graph;
    float **edge, **self, **alongside;
} local_operator;

/* A local operator (global_id [rows], source_row [N]) copied from @p whole (and @p alongside, an
 * operator of the same graph, or NULL): rows 0 .. rows-1, of which the first `destinations` keep
 * their global in-edges whose source has a local row (source_row[u] >= 0), in the global order,
 * with the global coefficients; the others are sources only (no edges, self coefficient 0). */
static int copy_operator(partition_part *part, local_operator out, const propagation *whole, const propagation *alongside,
                         const int32_t *global_id, int64_t rows, int64_t destinations, const int32_t *source_row,
                         tf_error *err)
{
    const csr *g = whole->graph;
    csr *local = out.graph;
    int64_t edges = 0;
    for (int64_t i = 0; i < destinations; i++)
        for (int64_t e = g->row_ptr[global_id[i]]; e < g->row_ptr[global_id[i] + 1]; e++)
            edges += source_row[g->col[e]] >= 0;
    local->num_nodes = rows;
    local->num_edges = edges;
    local->row_ptr = tf_alloc((size_t)rows + 1, sizeof *local->row_ptr, "local operator", err);
    local->col = local->row_ptr ? tf_alloc((size_t)edges, sizeof *local->col, "local operator", err) : NULL;
    local->weight = local->col ? tf_alloc((size_t)edges, sizeof *local->weight, "local operator", err) : NULL;
    if (!local->weight || !(*out.edge = tf_alloc((size_t)edges, sizeof(float), "local operator", err)) ||
        (out.self && !(*out.self = tf_alloc((size_t)rows, sizeof(float), "local operator", err))) ||
        (alongside && !(*out.alongside = tf_alloc((size_t)edges, sizeof(float), "local operator", err))))
        return TF_ERR_INPUT;
    int64_t at = 0;
    for (int64_t i = 0; i < rows; i++) {
        local->row_ptr[i] = at;
        if (i >= destinations)
            continue;
        const int32_t v = global_id[i];
        if (out.self)
            (*out.self)[i] = whole->self_coefficient[v];
        for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++)
            if (source_row[g->col[e]] >= 0) {
                local->col[at] = source_row[g->col[e]];
                local->weight[at] = g->weight[e];
                if (alongside)
                    (*out.alongside)[at] = alongside->edge_coefficient[e];
                (*out.edge)[at++] = whole->edge_coefficient[e];
            }
    }
    local->row_ptr[rows] = at;
    part->bytes_held += (int64_t)((rows + 1) * sizeof(int64_t) +
                                  edges * (sizeof(int32_t) + (alongside ? 3 : 2) * sizeof(float)) +
                                  (out.self ? rows * sizeof(float) : 0));
    return TF_OK;
}

/* Snapshot t's operators on the part: the model's (and, in exchange mode, DCRNN's backward walk's
 * in-edge coefficients alongside), and in cache mode DCRNN's backward walk on the reversed graph. */
static int copy_operators(partition_part *part, int64_t t, const partition_operators *ops, int64_t rows,
                          int64_t destinations, const int32_t *row_of, tf_error *err)
{
    const int exchange = part->mode == PARTITION_EXCHANGE;
    const local_operator mine = {&part->graphs[t], &part->edge_coefficient[t], &part->self_coefficient[t],
                                 &part->backward_coefficient[t]};
    int status = copy_operator(part, mine, &ops->whole[t], exchange && ops->transposed ? &ops->transposed[t] : NULL,
                               part->global_id, rows, destinations, row_of, err);
    if (status == TF_OK && part->reversed_graphs) {
        const local_operator reversed = {&part->reversed_graphs[t], &part->backward_coefficient[t], NULL, NULL};
        status = copy_operator(part, reversed, &ops->backward[t], NULL, part->global_id, rows, destinations, row_of, err);
    }
    return status;
}

/* Exchange mode: t's halo, ordered by (owner, id), appended after the owned rows of row_of [n]
 * (owner [n]; keys [n] scratch)
 * (which maps the owned vertices; the halo's entries are set here and cleared by the caller). */
static int build_halo(partition_part *part, int64_t t, const csr *g, const int32_t *owner, int64_t n, int32_t *row_of,
                      int64_t *keys, tf_error *err)
{
    int64_t count = 0;
    for (int64_t i = 0; i < part->owned; i++) {
        const int32_t v = part->global_id[i];
        for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++) {
            const int32_t u = g->col[e];
            if (owner[u] != part->rank && row_of[u] == -1) {
                row_of[u] = -2; /* seen */
                keys[count++] = (int64_t)owner[u] * n + u;
            }
        }
    }
    qsort(keys, (size_t)count, sizeof *keys, by_value);
    part->halo[t] = count;
    part->halo_vertices[t] = tf_alloc((size_t)count, sizeof(int32_t), "halo vertices", err);
    if (!part->halo_vertices[t])
        return TF_ERR_INPUT;
    for (int64_t i = 0; i < count; i++) {
        const int32_t u = (int32_t)(keys[i] % n);
        part->halo_vertices[t][i] = u;
        row_of[u] = (int32_t)(part->owned + i);
    }
    part->halos[t].owned = part->owned;
    part->bytes_held += count * (int64_t)sizeof(int32_t);
    return TF_OK;
}

/* The arguments a part is built from: operators of this model and sequence, a rank, owners in range. */
static int check_part(const partition_part *part, const snapshot_seq *seq, const partition_operators *ops,
                      const int32_t *owner, int ranks, int rank, tf_error *err)
{
    if (ops->kind != part->kind || ops->num_snapshots != seq->num_snapshots)
        return tf_error_set(err, TF_ERR_INPUT, "partition part: the whole-graph operators were built for another "
                                               "model or sequence");
    if (rank < 0 || rank >= ranks)
        return tf_error_set(err, TF_ERR_INPUT, "partition part: rank %d of %d", rank, ranks);
    for (int64_t v = 0; v < seq->num_nodes; v++)
        if (owner[v] < 0 || owner[v] >= ranks)
            return tf_error_set(err, TF_ERR_INPUT, "partition part: vertex %lld has owner %d, expected 0..%d",
                                (long long)v, owner[v], ranks - 1);
    return TF_OK;
}

/* Which vertices the part holds: the owned ones in id order, then (cache mode) the rest of their
 * closure in id order, into part->global_id [*held]; row_of [n] out: each held vertex's local row,
 * -1 elsewhere. Sets part->owned, rows and cached. */
static int choose_rows(partition_part *part, const snapshot_seq *seq, const int32_t *owner, model_kind model,
                       int tgcn_cache, int32_t *row_of, int64_t *held, tf_error *err)
{
    const int64_t n = seq->num_nodes;
    uint8_t *start = tf_alloc((size_t)n, 1, "part membership", err);
    uint8_t *member = start ? tf_alloc((size_t)n, 1, "part membership", err) : NULL;
    int32_t *order = member ? tf_alloc((size_t)n, sizeof *order, "part rows", err) : NULL;
    int status = order ? TF_OK : TF_ERR_INPUT;
    csr in_union;
    memset(&in_union, 0, sizeof in_union);
    for (int64_t v = 0; status == TF_OK && v < n; v++) {
        start[v] = owner[v] == part->rank;
        part->owned += start[v];
    }
    *held = part->owned; /* vertices with a local row in an operator: owned (+ cache) */
    if (status == TF_OK && part->mode == PARTITION_CACHE) {
        status = partition_cache_union(seq, model, &in_union, err);
        if (status == TF_OK)
            *held = partition_in_closure(&in_union, start, tgcn_cache ? 1 : part->depth, member, order);
    } else if (status == TF_OK)
        memcpy(member, start, (size_t)n);
    part->rows = tgcn_cache ? part->owned : *held;
    part->cached = tgcn_cache ? *held - part->owned : 0;
    if (status == TF_OK && !(part->global_id = tf_alloc((size_t)*held, sizeof *part->global_id, "part rows", err)))
        status = TF_ERR_INPUT;
    if (status == TF_OK) {
        int64_t next = 0;
        for (int64_t v = 0; v < n; v++)
            if (start[v])
                part->global_id[next++] = (int32_t)v;
        for (int64_t v = 0; v < n; v++)
            if (member[v] && !start[v])
                part->global_id[next++] = (int32_t)v;
        for (int64_t v = 0; v < n; v++)
            row_of[v] = -1;
        for (int64_t i = 0; i < *held; i++)
            row_of[part->global_id[i]] = (int32_t)i;
    }
    csr_free(&in_union);
    free(start);
    free(member);
    free(order);
    return status;
}

/* The per-snapshot arrays of a part of @p held vertices over @p steps snapshots of @p f features. */
static int allocate_snapshots(partition_part *part, int64_t steps, int64_t held, int64_t f, int tgcn_cache,
                              tf_error *err)
{
    if (!(part->graphs = tf_alloc((size_t)steps, sizeof *part->graphs, "part operators", err)) ||
        !(part->operator_rows = tf_alloc((size_t)steps, sizeof(int64_t), "part operators", err)) ||
        !(part->edge_coefficient = tf_alloc((size_t)steps, sizeof(float *), "part operators", err)) ||
        !(part->self_coefficient = tf_alloc((size_t)steps, sizeof(float *), "part operators", err)) ||
        (part->kind == OPERATOR_WALK_FORWARD &&
         !(part->backward_coefficient = tf_alloc((size_t)steps, sizeof(float *), "part operators", err))) ||
        (part->kind == OPERATOR_WALK_FORWARD && part->mode == PARTITION_CACHE &&
         !(part->reversed_graphs = tf_alloc((size_t)steps, sizeof *part->reversed_graphs, "part operators", err))) ||
        !(part->halo = tf_alloc((size_t)steps, sizeof(int64_t), "part halos", err)) ||
        !(part->present_total = tf_alloc((size_t)steps, sizeof(int64_t), "part denominators", err)))
        return TF_ERR_INPUT;
    if (part->mode == PARTITION_EXCHANGE &&
        (!(part->halo_vertices = tf_alloc((size_t)steps, sizeof(int32_t *), "part halos", err)) ||
         !(part->halos = tf_alloc((size_t)steps, sizeof *part->halos, "part halos", err)) ||
         (part->backward_coefficient &&
          !(part->transposed_halos = tf_alloc((size_t)steps, sizeof *part->transposed_halos, "part halos", err)))))
        return TF_ERR_INPUT;
    if (tgcn_cache &&
        (!(part->cached_features = tf_alloc((size_t)(steps * held * f), sizeof(float), "cached features", err)) ||
         !(part->scratch = tf_alloc((size_t)(held * f), sizeof(float), "cached product", err))))
        return TF_ERR_INPUT;
    return TF_OK;
}

/* Snapshot t on this part: its present count, the part's rows of features, targets and presence,
 * the cached features (T-GCN's cache), and its operator (exchange mode: over the owned rows and
 * t's halo; row_of [n] as choose_rows() left it, and left so; keys [n] scratch). */
static int localize_snapshot(partition_part *part, const snapshot_seq *seq, const partition_operators *ops,
                             const int32_t *owner, int64_t t, int64_t held, int tgcn_cache, int32_t *row_of,
                             int64_t *keys, tf_error *err)
{
    const int64_t n = seq->num_nodes, f = seq->feature_width, out = seq->target_width;
    const snapshot *s = &seq->snapshots[t];
    snapshot *mine = &part->local.snapshots[t];
    for (int64_t v = 0; v < n; v++)
        part->present_total[t] += s->present[v] != 0;
    for (int64_t i = 0; i < part->rows; i++) {
        const int32_t v = part->global_id[i];
        memcpy(mine->features.data + i * f, s->features.data + (int64_t)v * f, (size_t)f * sizeof(float));
        memcpy(mine->targets.data + i * out, s->targets.data + (int64_t)v * out, (size_t)out * sizeof(float));
        mine->present[i] = s->present[v];
    }
    if (tgcn_cache)
        for (int64_t i = 0; i < held; i++)
            memcpy(part->cached_features + (t * held + i) * f, s->features.data + (int64_t)part->global_id[i] * f,
                   (size_t)f * sizeof(float));
    if (part->mode != PARTITION_EXCHANGE) {
        part->operator_rows[t] = held;
        return copy_operators(part, t, ops, held, tgcn_cache ? part->owned : held, row_of, err);
    }
    int status = build_halo(part, t, &s->graph, owner, n, row_of, keys, err);
    if (status == TF_OK) {
        part->operator_rows[t] = part->owned + part->halo[t];
        status = copy_operators(part, t, ops, part->operator_rows[t], part->owned, row_of, err);
    }
    for (int64_t i = 0; status == TF_OK && i < part->halo[t]; i++) /* back to "no local row" */
        row_of[part->halo_vertices[t][i]] = -1;
    return status;
}

int partition_part_create(partition_part *part, const snapshot_seq *seq, const partition_operators *ops,
                          const int32_t *owner, int ranks, int rank, partition_mode mode, const model_config *config,
                          int64_t window_length, tf_error *err)
{
    memset(part, 0, sizeof *part);
    const int64_t n = seq->num_nodes, steps = seq->num_snapshots, f = seq->feature_width, out = seq->target_width;
    part->rank = rank;
    part->ranks = ranks;
    part->mode = mode;
    part->kind = operator_of(config->kind);
    if (check_part(part, seq, ops, owner, ranks, rank, err) != TF_OK)
        return TF_ERR_INPUT;
    const int tgcn_cache = mode == PARTITION_CACHE && model_has(config->kind, MODEL_ONE_HOP);
    part->depth = mode == PARTITION_CACHE ? partition_cache_depth(config, window_length) : 0;
    int32_t *row_of = tf_alloc((size_t)n, sizeof *row_of, "part rows", err);
    int64_t *keys = row_of ? tf_alloc((size_t)n, sizeof *keys, "part rows", err) : NULL;
    int64_t held = 0;
    int status = keys ? choose_rows(part, seq, owner, config->kind, tgcn_cache, row_of, &held, err) : TF_ERR_INPUT;
    if (status == TF_OK)
        status = snapshot_seq_alloc(&part->local, steps, part->rows, f, out, err);
    if (status == TF_OK)
        status = allocate_snapshots(part, steps, held, f, tgcn_cache, err);
    for (int64_t t = 0; status == TF_OK && t < steps; t++)
        status = localize_snapshot(part, seq, ops, owner, t, held, tgcn_cache, row_of, keys, err);
    if (status == TF_OK) {
        part->operators = (operator_source){build_operator, part};
        part->cached_inputs = (input_aggregations){cached_aggregation, part};
        part->bytes_held += part->rows * steps * (int64_t)((f + out) * sizeof(float) + 1) +
                            held * (int64_t)sizeof(int32_t) + part->cached * steps * f * (int64_t)sizeof(float);
    }
    free(row_of);
    free(keys);
    if (status != TF_OK)
        partition_part_free(part);
    return status;
}
