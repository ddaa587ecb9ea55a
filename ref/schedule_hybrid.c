#include "ref/schedule_hybrid.h"

#include <stdlib.h>
#include <string.h>

#include "ref/nn/layers.h"
#include "ref/core/memory.h"
#include "ref/core/rng.h"

int hybrid_vertex_load(const snapshot_seq *seq, int64_t first, int64_t count, int hops, int64_t *load, tf_error *err)
{
    const int64_t n = seq->num_nodes;
    if (hops < 1 || first < 0 || count < 1 || first + count > seq->num_snapshots)
        return tf_error_set(err, TF_ERR_INPUT, "vertex load over snapshots %lld..%lld with %d hop(s): expected a range "
                                               "inside 0..%lld and at least one hop", (long long)first,
                            (long long)(first + count - 1), hops, (long long)seq->num_snapshots - 1);
    int64_t *walks = tf_alloc((size_t)n, sizeof *walks, "walk counts", err);
    int64_t *next = walks ? tf_alloc((size_t)n, sizeof *next, "walk counts", err) : NULL;
    if (!next) {
        free(walks);
        return TF_ERR_INPUT;
    }
    memset(load, 0, (size_t)n * sizeof *load);
    for (int64_t t = first; t < first + count; t++) {
        const csr *g = &seq->snapshots[t].graph;
        for (int64_t v = 0; v < n; v++) /* a_1: in-edges */
            walks[v] = g->row_ptr[v + 1] - g->row_ptr[v];
        for (int l = 1; l <= hops; l++) {
            for (int64_t v = 0; v < n; v++)
                load[v] += (int64_t)(hops - l + 1) * walks[v];
            if (l == hops)
                break;
            for (int64_t v = 0; v < n; v++) { /* a_{l+1}(v) = sum over in-edges (u -> v) of a_l(u) */
                next[v] = 0;
                for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++)
                    next[v] += walks[g->col[e]];
            }
            memcpy(walks, next, (size_t)n * sizeof *walks);
        }
    }
    free(walks);
    free(next);
    return TF_OK;
}

/* (load descending, id ascending) */
typedef struct loaded_vertex {
    int64_t load;
    int32_t id;
} loaded_vertex;

static int heavier_first(const void *a, const void *b)
{
    const loaded_vertex *x = a, *y = b;
    if (x->load != y->load)
        return x->load > y->load ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

void hybrid_source_free(hybrid_source *h)
{
    for (int64_t t = 0; h->operators && t < h->train_snapshots; t++)
        ref_propagation_free(&h->operators[t]);
    free(h->operators);
    free(h->order);
    free(h->group_offsets);
    memset(h, 0, sizeof *h);
}

int hybrid_source_create(hybrid_source *h, const snapshot_seq *seq, int64_t train_snapshots, int balanced_groups,
                         tf_error *err)
{
    memset(h, 0, sizeof *h);
    const int64_t n = seq->num_nodes;
    if (balanced_groups < 1 || n < balanced_groups)
        return tf_error_set(err, TF_ERR_INPUT, "%lld vertices cannot form %d balanced groups: expected 1..%lld groups",
                            (long long)n, balanced_groups, (long long)n);
    if (train_snapshots < 1 || train_snapshots > seq->num_snapshots)
        return tf_error_set(err, TF_ERR_INPUT, "%lld training snapshots of %lld", (long long)train_snapshots,
                            (long long)seq->num_snapshots);
    h->seq = seq;
    h->groups = balanced_groups;
    int64_t *load = tf_alloc((size_t)n, sizeof *load, "vertex loads", err);
    loaded_vertex *sorted = load ? tf_alloc((size_t)n, sizeof *sorted, "vertex order", err) : NULL;
    int status = sorted && (h->operators = tf_alloc((size_t)train_snapshots, sizeof *h->operators, "operators", err)) &&
                         (h->order = tf_alloc((size_t)n, sizeof *h->order, "vertex order", err)) &&
                         (h->group_offsets = tf_alloc((size_t)balanced_groups + 1, sizeof *h->group_offsets,
                                                      "balanced groups", err))
                     ? TF_OK
                     : TF_ERR_INPUT;
    for (int64_t t = 0; status == TF_OK && t < train_snapshots; t++) {
        status = ref_propagation_gcn(&h->operators[t], &seq->snapshots[t].graph, EDGE_NORM_SYMMETRIC, 1, err);
        h->train_snapshots = t + (status == TF_OK); /* what hybrid_source_free() must release */
    }
    if (status == TF_OK)
        status = hybrid_vertex_load(seq, 0, train_snapshots, 1, load, err);
    if (status == TF_OK) {
        for (int64_t v = 0; v < n; v++)
            sorted[v] = (loaded_vertex){load[v], (int32_t)v};
        qsort(sorted, (size_t)n, sizeof *sorted, heavier_first);
        for (int64_t v = 0; v < n; v++)
            h->order[v] = sorted[v].id;
        const int64_t per_group = n / balanced_groups;
        for (int g = 0; g < balanced_groups; g++)
            h->group_offsets[g] = g * per_group;
        h->group_offsets[balanced_groups] = n;
    }
    free(load);
    free(sorted);
    if (status != TF_OK)
        hybrid_source_free(h);
    return status;
}

void hybrid_action_sizes(int action, int64_t train_snapshots, int64_t vertices, int balanced_groups,
                         hybrid_sizes *out)
{
    static const double snapshot_share[3] = {0.1, 0.2, 0.3}, vertex_share[3] = {0.01, 0.05, 0.1};
    int64_t snapshots = (int64_t)(snapshot_share[action / 3] * (double)train_snapshots);
    int64_t targets = (int64_t)(vertex_share[action % 3] * (double)vertices);
    out->snapshots = snapshots < 1 ? 1 : snapshots;
    out->targets = targets < balanced_groups ? balanced_groups : targets > vertices ? vertices : targets;
}

void hybrid_batch_free(hybrid_batch *b)
{
    for (int64_t t = 0; b->blocks && t < b->count; t++) {
        free(b->blocks[t].row_ptr);
        free(b->blocks[t].col);
        free(b->blocks[t].edge_coefficient);
        free(b->blocks[t].self_coefficient);
    }
    free(b->blocks);
    free(b->frontier);
    free(b->features);
    snapshot_seq_free(&b->view);
    memset(b, 0, sizeof *b);
}

static int compare_ids(const void *a, const void *b)
{
    const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The targets: floor(N_V / groups) distinct vertices uniformly from every group (a partial
 * Fisher-Yates shuffle of a copy of the group), then sorted ascending. targets [groups x per]. */
static int draw_targets(const hybrid_source *h, int64_t per_group, rng *r, int32_t *targets, int64_t *count,
                        tf_error *err)
{
    int64_t largest = 0;
    for (int g = 0; g < h->groups; g++)
        if (h->group_offsets[g + 1] - h->group_offsets[g] > largest)
            largest = h->group_offsets[g + 1] - h->group_offsets[g];
    int32_t *pool = tf_alloc((size_t)largest, sizeof *pool, "target pool", err);
    if (!pool)
        return TF_ERR_INPUT;
    *count = 0;
    for (int g = 0; g < h->groups; g++) {
        const int64_t size = h->group_offsets[g + 1] - h->group_offsets[g];
        const int64_t take = per_group < size ? per_group : size;
        memcpy(pool, h->order + h->group_offsets[g], (size_t)size * sizeof *pool);
        for (int64_t k = 0; k < take; k++) {
            const int64_t pick = k + (int64_t)rng_below(r, (uint64_t)(size - k));
            const int32_t swap = pool[k];
            pool[k] = pool[pick];
            pool[pick] = swap;
            targets[(*count)++] = pool[k];
        }
    }
    free(pool);
    qsort(targets, (size_t)*count, sizeof *targets, compare_ids);
    return TF_OK;
}

int hybrid_batch_build(hybrid_batch *b, const hybrid_source *h, hybrid_sizes sizes, uint64_t seed, uint64_t stream,
                       uint64_t index, int32_t *scratch, tf_error *err)
{
    memset(b, 0, sizeof *b);
    const snapshot_seq *seq = h->seq;
    const int64_t n = seq->num_nodes, f = seq->feature_width, out = seq->target_width;
    if (sizes.snapshots < 1 || sizes.snapshots > h->train_snapshots)
        return tf_error_set(err, TF_ERR_INPUT, "a hybrid batch of %lld snapshots: expected 1..%lld (the training "
                                               "snapshots)", (long long)sizes.snapshots, (long long)h->train_snapshots);
    if (sizes.targets < h->groups || sizes.targets > n)
        return tf_error_set(err, TF_ERR_INPUT, "a hybrid batch of %lld targets: expected %d..%lld (at least one per "
                                               "balanced group)", (long long)sizes.targets, h->groups, (long long)n);
    rng r;
    rng_seed_keyed(&r, seed, stream, index);
    b->count = sizes.snapshots;
    b->first = (int64_t)rng_below(&r, (uint64_t)(h->train_snapshots - sizes.snapshots + 1));
    const int64_t per_group = sizes.targets / h->groups;
    int32_t *targets = tf_alloc((size_t)(per_group * h->groups), sizeof *targets, "targets", err);
    int status = targets ? draw_targets(h, per_group, &r, targets, &b->num_targets, err) : TF_ERR_INPUT;
    /* the frontier: the targets (positions 0..N_V'-1), then their in-neighbours over the batch's
     * snapshots, ascending; scratch maps a vertex to its position (-2 while being collected) */
    int64_t rest = 0, capacity = 0;
    for (int64_t t = b->first; status == TF_OK && t < b->first + b->count; t++)
        for (int64_t i = 0; i < b->num_targets; i++) {
            const csr *g = &seq->snapshots[t].graph;
            capacity += g->row_ptr[targets[i] + 1] - g->row_ptr[targets[i]];
        }
    if (status == TF_OK &&
        !(b->frontier = tf_alloc((size_t)(b->num_targets + capacity), sizeof *b->frontier, "frontier", err)))
        status = TF_ERR_INPUT;
    if (status == TF_OK) {
        for (int64_t i = 0; i < b->num_targets; i++) {
            b->frontier[i] = targets[i];
            scratch[targets[i]] = (int32_t)i;
        }
        for (int64_t t = b->first; t < b->first + b->count; t++) {
            const csr *g = &seq->snapshots[t].graph;
            for (int64_t i = 0; i < b->num_targets; i++)
                for (int64_t e = g->row_ptr[targets[i]]; e < g->row_ptr[targets[i] + 1]; e++)
                    if (scratch[g->col[e]] == -1) {
                        scratch[g->col[e]] = -2;
                        b->frontier[b->num_targets + rest++] = g->col[e];
                    }
        }
        qsort(b->frontier + b->num_targets, (size_t)rest, sizeof *b->frontier, compare_ids);
        b->num_frontier = b->num_targets + rest;
        for (int64_t p = b->num_targets; p < b->num_frontier; p++)
            scratch[b->frontier[p]] = (int32_t)p;
    }
    if (status == TF_OK && (!(b->blocks = tf_alloc((size_t)b->count, sizeof *b->blocks, "batch blocks", err)) ||
                            !(b->features = tf_alloc((size_t)(b->count * b->num_frontier * f), sizeof(float),
                                                     "batch features", err))))
        status = TF_ERR_INPUT;
    if (status == TF_OK)
        status = snapshot_seq_alloc(&b->view, b->count, b->num_targets, f, out, err);
    for (int64_t k = 0; status == TF_OK && k < b->count; k++) {
        const int64_t t = b->first + k;
        const snapshot *full = &seq->snapshots[t];
        const csr *g = &full->graph;
        const propagation *op = &h->operators[t];
        hybrid_block *block = &b->blocks[k];
        int64_t edges = 0;
        for (int64_t i = 0; i < b->num_targets; i++)
            edges += g->row_ptr[targets[i] + 1] - g->row_ptr[targets[i]];
        if (!(block->row_ptr = tf_alloc((size_t)b->num_targets + 1, sizeof *block->row_ptr, "batch block", err)) ||
            !(block->col = tf_alloc((size_t)edges, sizeof *block->col, "batch block", err)) ||
            !(block->edge_coefficient = tf_alloc((size_t)edges, sizeof(float), "batch block", err)) ||
            !(block->self_coefficient = tf_alloc((size_t)b->num_targets, sizeof(float), "batch block", err))) {
            status = TF_ERR_INPUT;
            break;
        }
        int64_t at = 0;
        for (int64_t i = 0; i < b->num_targets; i++) {
            const int32_t v = targets[i];
            block->row_ptr[i] = at;
            block->self_coefficient[i] = op->self_coefficient[v];
            for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++, at++) {
                block->col[at] = scratch[g->col[e]];
                block->edge_coefficient[at] = op->edge_coefficient[e];
            }
            memcpy(b->view.snapshots[k].targets.data + i * out, full->targets.data + (int64_t)v * out,
                   (size_t)out * sizeof(float));
            memcpy(b->view.snapshots[k].features.data + i * f, full->features.data + (int64_t)v * f,
                   (size_t)f * sizeof(float));
            b->view.snapshots[k].present[i] = full->present[v];
        }
        block->row_ptr[b->num_targets] = at;
        for (int64_t p = 0; p < b->num_frontier; p++)
            memcpy(b->features + (k * b->num_frontier + p) * f, full->features.data + (int64_t)b->frontier[p] * f,
                   (size_t)f * sizeof(float));
        b->work += b->num_targets + edges;
    }
    for (int64_t p = 0; b->frontier && p < b->num_targets + rest; p++) /* scratch back to all -1 */
        scratch[b->frontier[p]] = -1;
    free(targets);
    if (status != TF_OK)
        hybrid_batch_free(b);
    return status;
}

static int64_t differing_ints(const void *a, const void *b, int64_t n, size_t size)
{
    int64_t differing = 0;
    for (int64_t i = 0; i < n; i++)
        differing += memcmp((const char *)a + (size_t)i * size, (const char *)b + (size_t)i * size, size) != 0;
    return differing;
}

int64_t hybrid_batch_differing(const hybrid_batch *a, const hybrid_batch *b)
{
    if (a->first != b->first || a->count != b->count || a->num_targets != b->num_targets ||
        a->num_frontier != b->num_frontier)
        return 1 + a->num_frontier + b->num_frontier;
    const int64_t f = a->view.feature_width, out = a->view.target_width;
    int64_t differing = differing_ints(a->frontier, b->frontier, a->num_frontier, sizeof(int32_t));
    differing += differing_ints(a->features, b->features, a->count * a->num_frontier * f, sizeof(float));
    for (int64_t k = 0; k < a->count; k++) {
        const hybrid_block *x = &a->blocks[k], *y = &b->blocks[k];
        differing += differing_ints(x->row_ptr, y->row_ptr, a->num_targets + 1, sizeof(int64_t));
        if (x->row_ptr[a->num_targets] != y->row_ptr[a->num_targets])
            continue; /* counted; the edge arrays differ in length */
        const int64_t edges = x->row_ptr[a->num_targets];
        differing += differing_ints(x->col, y->col, edges, sizeof(int32_t));
        differing += differing_ints(x->edge_coefficient, y->edge_coefficient, edges, sizeof(float));
        differing += differing_ints(x->self_coefficient, y->self_coefficient, a->num_targets, sizeof(float));
        differing += differing_ints(a->view.snapshots[k].targets.data, b->view.snapshots[k].targets.data,
                                    a->num_targets * out, sizeof(float));
        differing += differing_ints(a->view.snapshots[k].present, b->view.snapshots[k].present, a->num_targets, 1);
    }
    return differing;
}

/* T-GCN's A^ X_t rows for the targets of view snapshot t: ref_propagate_forward()'s sum for each
 * target's row of the full snapshot, the self term first, then the in-edges in CSR order. */
static int aggregate_targets(void *context, int64_t t, float *out, tf_error *err)
{
    (void)err;
    const hybrid_batch *b = context;
    const hybrid_block *block = &b->blocks[t];
    const int64_t f = b->view.feature_width;
    const float *x = b->features + t * b->num_frontier * f;
    for (int64_t i = 0; i < b->num_targets; i++) {
        float *row = out + i * f;
        for (int64_t j = 0; j < f; j++)
            row[j] = block->self_coefficient[i] * x[i * f + j];
        for (int64_t e = block->row_ptr[i]; e < block->row_ptr[i + 1]; e++) {
            const float *in = x + (int64_t)block->col[e] * f;
            for (int64_t j = 0; j < f; j++)
                row[j] += block->edge_coefficient[e] * in[j];
        }
    }
    return TF_OK;
}

int hybrid_batch_gradient(model *m, const hybrid_batch *b, float scale, double *loss, tf_error *err)
{
    if (!model_has(m->config.kind, MODEL_ONE_HOP))
        return tf_error_set(err, TF_ERR_INPUT, "hybrid batches need a model whose graph convolution reads the inputs "
                                               "only (one hop): use --model tgcn or wdgcn, not %s", model_kind_name(m->config.kind));
    const int64_t size = b->count * b->num_targets * b->view.target_width;
    float *predictions = tf_alloc((size_t)size, sizeof(float), "batch predictions", err);
    float *dpredictions = predictions ? tf_alloc((size_t)size, sizeof(float), "batch predictions", err) : NULL;
    if (!dpredictions) {
        free(predictions);
        return TF_ERR_INPUT;
    }
    const input_aggregations hook = {aggregate_targets, (void *)b};
    const input_aggregations *saved = m->inputs;
    m->inputs = &hook;
    window_tape tape;
    memset(&tape, 0, sizeof tape);
    int status = model_forward(m, &b->view, 0, b->count, &tape, predictions, err);
    if (status == TF_OK) {
        *loss = model_window_loss(&b->view, 0, b->count, predictions, scale, dpredictions);
        status = model_backward(m, &b->view, &tape, dpredictions, err);
    }
    window_tape_free(m, &tape);
    m->inputs = saved;
    free(predictions);
    free(dpredictions);
    return status;
}

int hybrid_window_gradient(model *m, const snapshot_seq *seq, const hybrid_batch *b, float scale, double *loss,
                           tf_error *err)
{
    return model_window_gradient_over(m, seq, b->first, b->count, b->frontier, b->num_targets, scale, loss, err);
}
