#include "ref/minibatch.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"
#include "ref/core/rng.h"

int minibatch_fanout_parse(const char *text, minibatch_options *o, tf_error *err)
{
    const char *p = text;
    int hops = 0;
    for (;;) {
        char *end = NULL;
        errno = 0;
        long value = *p >= '0' && *p <= '9' ? strtol(p, &end, 10) : -1;
        if (value < 1 || errno || value > INT_MAX || hops == MINIBATCH_MAX_HOPS || (*end != ',' && *end != '\0'))
            return tf_error_set(err, TF_ERR_INPUT, "--fanout '%s': expected 1 to %d positive integers separated by "
                                                   "commas, one per hop (e.g. 25,10)", text, MINIBATCH_MAX_HOPS);
        o->fanout[hops++] = (int)value;
        if (*end == '\0')
            break;
        p = end + 1;
    }
    o->hops = hops;
    return TF_OK;
}

void sampled_graph_free(sampled_graph *s)
{
    free(s->vertex);
    free(s->hop);
    snapshot_seq_free(&s->view);
    memset(s, 0, sizeof *s);
}

static int compare_ids(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Scratch of sampled_graph_build(), freed in one place. */
typedef struct sample_scratch {
    int32_t *position;     /* [num_nodes] view position of a vertex, -1 outside */
    uint8_t *hop_of;       /* [num_nodes] hop a vertex joined at */
    int64_t *draw;         /* [largest in-degree] edge indices of the row being drawn */
    uint8_t *previous;     /* [most edges] membership of t-1's edges */
    uint8_t *current;      /* [most edges] membership of t's edges */
    uint8_t *used;         /* [most edges] t-1's edges already paired */
    int32_t *src, *dst;    /* [most edges] the view's edge list */
    float *weight;         /* [most edges] */
} sample_scratch;

static void scratch_free(sample_scratch *x)
{
    free(x->position);
    free(x->hop_of);
    free(x->draw);
    free(x->previous);
    free(x->current);
    free(x->used);
    free(x->src);
    free(x->dst);
    free(x->weight);
}

/* Snapshot 0's draw: hop by hop, fanout[h-1] in-edges of every vertex of hop h-1 (all when it has no
 * more), uniformly without replacement (a partial Fisher-Yates over the row's edge indices);
 * new sources join at hop h. Marks x->current[e] for the drawn edges of g and fills s->vertex and
 * x->position, x->hop_of in joining order. */
static void draw_first(sampled_graph *s, const csr *g, const minibatch_options *o, rng *r, sample_scratch *x)
{
    int64_t count = s->num_targets, begin = 0;
    for (int h = 1; h <= o->hops; h++) {
        const int64_t end = count;
        for (int64_t i = begin; i < end; i++) {
            const int32_t v = s->vertex[i];
            const int64_t first = g->row_ptr[v], degree = g->row_ptr[v + 1] - first;
            const int64_t take = degree < o->fanout[h - 1] ? degree : o->fanout[h - 1];
            for (int64_t k = 0; k < degree; k++)
                x->draw[k] = first + k;
            for (int64_t k = 0; k < take; k++) {
                int64_t pick = k + (int64_t)rng_below(r, (uint64_t)(degree - k)), e = x->draw[pick];
                x->draw[pick] = x->draw[k];
                x->current[e] = 1;
                s->sampled_edges++;
                const int32_t u = g->col[e];
                if (x->position[u] < 0) {
                    x->position[u] = (int32_t)count;
                    x->hop_of[u] = (uint8_t)h;
                    s->vertex[count++] = u;
                }
            }
        }
        begin = end;
    }
    s->num_vertices = count;
}

/* Row v of t-1 (`before`) and t (`after`): every edge of t takes its membership from its partner
 * of t-1 (same source and weight bits, as edge_difference() pairs them; then a reweighted edge, the
 * unpaired ones of a source in CSR order); an edge without a partner is inserted and joins when
 * `expand` (v's hop < k) and its source is in the sample. x->previous [before's edges] in,
 * x->current [after's edges] out. */
static void follow_row(sampled_graph *s, const csr *before, const csr *after, int64_t v, int expand,
                       sample_scratch *x)
{
    int64_t a = before->row_ptr[v], a_end = before->row_ptr[v + 1];
    int64_t b = after->row_ptr[v], b_end = after->row_ptr[v + 1];
    for (int64_t i = a; i < a_end; i++)
        x->used[i] = 0;
    while (b < b_end) {
        const int32_t source = after->col[b];
        int64_t b_group = b, i0 = a;
        while (b_group < b_end && after->col[b_group] == source)
            b_group++;
        while (i0 < a_end && before->col[i0] < source)
            i0++;
        int64_t i_end = i0;
        while (i_end < a_end && before->col[i_end] == source)
            i_end++;
        for (int pass = 0; pass < 2; pass++) /* 0: same weight; 1: a reweighted edge */
            for (int64_t j = b; j < b_group; j++) {
                if (pass == 1 && x->current[j] != 2)
                    continue;
                x->current[j] = 2; /* unpaired so far */
                for (int64_t i = i0; i < i_end; i++)
                    if (!x->used[i] && (pass == 1 || memcmp(&before->weight[i], &after->weight[j], sizeof(float)) == 0)) {
                        x->used[i] = 1;
                        x->current[j] = x->previous[i];
                        break;
                    }
            }
        for (int64_t j = b; j < b_group; j++)
            if (x->current[j] == 2) {
                x->current[j] = expand && x->position[source] >= 0;
                s->joined_edges += x->current[j];
                s->refused_edges += !x->current[j];
            }
        b = b_group;
    }
    for (int64_t i = a; i < a_end; i++)
        s->left_edges += !x->used[i] && x->previous[i];
}

/* Snapshot t of the view: the member edges of full snapshot t (x->current), the vertices' rows. */
static int write_view(sampled_graph *s, const snapshot_seq *seq, int64_t t, sample_scratch *x, tf_error *err)
{
    const snapshot *full = &seq->snapshots[t];
    const csr *g = &full->graph;
    int64_t edges = 0;
    for (int64_t i = 0; i < s->num_vertices; i++) {
        const int32_t v = s->vertex[i];
        for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++)
            if (x->current[e]) {
                x->src[edges] = x->position[g->col[e]];
                x->dst[edges] = (int32_t)i;
                x->weight[edges++] = g->weight[e];
            }
    }
    snapshot *mine = &s->view.snapshots[t];
    const int64_t f = seq->feature_width, out = seq->target_width;
    for (int64_t i = 0; i < s->num_vertices; i++) {
        const int64_t v = s->vertex[i];
        memcpy(mine->features.data + i * f, full->features.data + v * f, (size_t)f * sizeof(float));
        memcpy(mine->targets.data + i * out, full->targets.data + v * out, (size_t)out * sizeof(float));
        mine->present[i] = full->present[v];
    }
    return snapshot_seq_set_edges(&s->view, t, edges, x->src, x->dst, x->weight, err);
}

/* The scratch for a sequence whose snapshots hold at most `most` edges and rows of at most `widest`. */
static int scratch_alloc(sample_scratch *x, int64_t n, int64_t most, int64_t widest, tf_error *err)
{
    if (!(x->position = tf_alloc((size_t)n, sizeof *x->position, "sample positions", err)) ||
        !(x->hop_of = tf_alloc((size_t)n, 1, "sample hops", err)) ||
        !(x->draw = tf_alloc((size_t)widest + 1, sizeof *x->draw, "sample draws", err)) ||
        !(x->previous = tf_alloc((size_t)most + 1, 1, "sample membership", err)) ||
        !(x->current = tf_alloc((size_t)most + 1, 1, "sample membership", err)) ||
        !(x->used = tf_alloc((size_t)most + 1, 1, "sample membership", err)) ||
        !(x->src = tf_alloc((size_t)most + 1, sizeof *x->src, "sample edges", err)) ||
        !(x->dst = tf_alloc((size_t)most + 1, sizeof *x->dst, "sample edges", err)) ||
        !(x->weight = tf_alloc((size_t)most + 1, sizeof *x->weight, "sample edges", err)))
        return TF_ERR_INPUT;
    for (int64_t v = 0; v < n; v++)
        x->position[v] = -1;
    return TF_OK;
}

int sampled_graph_build(sampled_graph *s, const snapshot_seq *seq, const int32_t *targets, int64_t num_targets,
                        const minibatch_options *o, uint64_t seed, uint64_t index, tf_error *err)
{
    memset(s, 0, sizeof *s);
    const int64_t n = seq->num_nodes;
    int64_t most = 0, widest = 0;
    for (int64_t t = 0; t < seq->num_snapshots; t++) {
        const csr *g = &seq->snapshots[t].graph;
        most = g->num_edges > most ? g->num_edges : most;
        for (int64_t v = 0; t == 0 && v < n; v++)
            widest = g->row_ptr[v + 1] - g->row_ptr[v] > widest ? g->row_ptr[v + 1] - g->row_ptr[v] : widest;
    }
    sample_scratch x = {0};
    int status = scratch_alloc(&x, n, most, widest, err);
    if (status == TF_OK && (!(s->vertex = tf_alloc((size_t)n, sizeof *s->vertex, "sampled vertices", err)) ||
                            !(s->hop = tf_alloc((size_t)n, 1, "sampled hops", err))))
        status = TF_ERR_INPUT;
    for (int64_t i = 0; status == TF_OK && i < num_targets; i++) {
        if (targets[i] < 0 || targets[i] >= n || x.position[targets[i]] >= 0)
            status = tf_error_set(err, TF_ERR_INPUT, "mini-batch: target %lld is %s", (long long)targets[i],
                                  targets[i] < 0 || targets[i] >= n ? "not a vertex" : "repeated");
        else {
            x.position[targets[i]] = (int32_t)i;
            x.hop_of[targets[i]] = 0;
            s->vertex[i] = targets[i];
        }
    }
    if (status != TF_OK) {
        scratch_free(&x);
        sampled_graph_free(s);
        return status;
    }
    s->num_targets = num_targets;
    rng r;
    rng_seed_keyed(&r, seed, MINIBATCH_SAMPLE_STREAM, index);
    memset(x.current, 0, (size_t)most + 1);
    draw_first(s, &seq->snapshots[0].graph, o, &r, &x);
    /* The rest ascending by id, so that the view's rows keep the full graph's order among them. */
    qsort(s->vertex + num_targets, (size_t)(s->num_vertices - num_targets), sizeof *s->vertex, compare_ids);
    for (int64_t i = 0; i < s->num_vertices; i++) {
        x.position[s->vertex[i]] = (int32_t)i;
        s->hop[i] = x.hop_of[s->vertex[i]];
    }
    status = snapshot_seq_alloc(&s->view, seq->num_snapshots, s->num_vertices, seq->feature_width, seq->target_width,
                                err);
    for (int64_t t = 0; status == TF_OK && t < seq->num_snapshots; t++) {
        if (t > 0) {
            uint8_t *swap = x.previous;
            x.previous = x.current;
            x.current = swap;
            memset(x.current, 0, (size_t)most + 1);
            for (int64_t i = 0; i < s->num_vertices; i++)
                follow_row(s, &seq->snapshots[t - 1].graph, &seq->snapshots[t].graph, s->vertex[i],
                           s->hop[i] < o->hops, &x);
        }
        status = write_view(s, seq, t, &x, err);
    }
    scratch_free(&x);
    if (status != TF_OK)
        sampled_graph_free(s);
    return status;
}

void minibatch_record(trainer *tr, const minibatch_options *o)
{
    memset(tr->sampling, 0, sizeof tr->sampling);
    tr->sampling[0] = o->size;
    for (int h = 0; h < o->hops; h++)
        tr->sampling[1 + h] = o->fanout[h];
}

int64_t minibatch_count(const minibatch_options *o, int64_t num_nodes) { return (num_nodes + o->size - 1) / o->size; }

int64_t minibatch_targets(const minibatch_options *o, int64_t num_nodes, uint64_t seed, int64_t epoch, int64_t batch,
                          int32_t *targets)
{
    /* The epoch's permutation, drawn afresh (a Fisher-Yates walk needs no more than its prefix up
     * to this batch's end, but the whole walk keeps the code short: O(N) per batch). */
    rng r;
    rng_seed_keyed(&r, seed, MINIBATCH_STREAM, (uint64_t)epoch);
    const int64_t begin = batch * o->size, end = begin + o->size < num_nodes ? begin + o->size : num_nodes;
    int32_t *order = malloc((size_t)num_nodes * sizeof *order + 1);
    if (!order)
        return 0;
    for (int64_t v = 0; v < num_nodes; v++)
        order[v] = (int32_t)v;
    for (int64_t k = 0; k < end; k++) {
        int64_t pick = k + (int64_t)rng_below(&r, (uint64_t)(num_nodes - k));
        int32_t swap = order[pick];
        order[pick] = order[k];
        order[k] = swap;
    }
    memcpy(targets, order + begin, (size_t)(end - begin) * sizeof *targets);
    free(order);
    qsort(targets, (size_t)(end - begin), sizeof *targets, compare_ids);
    return end - begin;
}

int minibatch_window_gradient(model *m, const sampled_graph *s, int64_t first, int64_t count, float scale,
                              double *loss_sum, tf_error *err)
{
    double loss = 0;
    const int status = model_window_gradient_over(m, &s->view, first, count, NULL, s->num_targets, scale, &loss, err);
    *loss_sum += status == TF_OK ? loss : 0;
    return status;
}

int minibatch_train_step(model *m, const sampled_graph *s, const train_schedule *plan, int64_t step,
                         double *loss_sum, tf_error *err)
{
    int status = TF_OK;
    parameters_zero_grad(&m->parameters);
    const float scale = 1.0f / (float)train_schedule_windows_in_step(plan, step);
    for (int64_t slot = 0; status == TF_OK && slot < plan->batch; slot++) {
        const int64_t window = train_schedule_window(plan, step, slot);
        int64_t first, count;
        if (window < 0)
            continue;
        train_schedule_span(plan, window, &first, &count);
        status = minibatch_window_gradient(m, s, first, count, scale, loss_sum, err);
    }
    return status;
}

/* Every optimizer step of the trainer's schedule over one mini-batch's view. */
static int train_batch(trainer *tr, const sampled_graph *s, const train_schedule *plan, double *loss_sum,
                       epoch_report *report, tf_error *err)
{
    int status = TF_OK;
    for (int64_t step = 0; status == TF_OK && step < plan->steps; step++) {
        status = minibatch_train_step(&tr->model, s, plan, step, loss_sum, err);
        if (status == TF_OK) {
            trainer_apply_gradient(tr);
            report->steps++;
        }
    }
    return status;
}

int minibatch_sample(sampled_graph *s, const trainer *tr, const snapshot_seq *seq, const minibatch_options *o,
                     int64_t batch, int32_t *targets, tf_error *err)
{
    memset(s, 0, sizeof *s);
    const int64_t batches = minibatch_count(o, seq->num_nodes);
    const int64_t count = minibatch_targets(o, seq->num_nodes, tr->options.seed, tr->epoch, batch, targets);
    if (!count)
        return tf_error_set(err, TF_ERR_INPUT, "mini-batch: no memory for the permutation");
    return sampled_graph_build(s, seq, targets, count, o, tr->options.seed, (uint64_t)(tr->epoch * batches + batch),
                               err);
}

void minibatch_close_epoch(trainer *tr, const minibatch_options *o, int64_t num_nodes, double loss_sum,
                           epoch_report *report)
{
    train_schedule plan = trainer_schedule(tr);
    const int64_t steps = report->steps;
    plan.windows *= minibatch_count(o, num_nodes);
    trainer_close_epoch(tr, &plan, loss_sum, report);
    report->steps = steps;
}

int minibatch_epoch(trainer *tr, const snapshot_seq *seq, const minibatch_options *o, epoch_report *report,
                    tf_error *err)
{
    memset(report, 0, sizeof *report);
    minibatch_record(tr, o);
    train_schedule plan = trainer_schedule(tr);
    const int64_t batches = minibatch_count(o, seq->num_nodes);
    int32_t *targets = tf_alloc((size_t)o->size, sizeof *targets, "mini-batch targets", err);
    if (!targets)
        return TF_ERR_INPUT;
    double loss_sum = 0;
    int status = TF_OK;
    for (int64_t b = 0; status == TF_OK && b < batches; b++) {
        sampled_graph s;
        status = minibatch_sample(&s, tr, seq, o, b, targets, err);
        if (status == TF_OK)
            status = train_batch(tr, &s, &plan, &loss_sum, report, err);
        sampled_graph_free(&s);
    }
    free(targets);
    if (status != TF_OK)
        return status;
    minibatch_close_epoch(tr, o, seq->num_nodes, loss_sum, report);
    return trainer_evaluate(tr, seq, tr->train_snapshots, seq->num_snapshots - tr->train_snapshots, &report->test_mse,
                            NULL, err);
}
