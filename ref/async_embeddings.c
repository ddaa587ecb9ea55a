#include "ref/async_embeddings.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"

/* ---- the rule -------------------------------------------------------------------------------- */

int stale_schedule_parse(const char *text, stale_schedule *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    if (strcmp(text, "off") == 0) {
        out->kind = STALE_OFF;
    } else if (strcmp(text, "zero") == 0) {
        out->kind = STALE_ZERO;
    } else if (strcmp(text, "adaptive") == 0) {
        out->kind = STALE_ADAPTIVE;
    } else if (strcmp(text, "adaptive-printed") == 0) {
        out->kind = STALE_ADAPTIVE_PRINTED;
    } else if (strncmp(text, "static:", 7) == 0) {
        char *end;
        out->kind = STALE_STATIC;
        out->fraction = strtod(text + 7, &end);
        if (end == text + 7 || *end || !(out->fraction >= 0 && out->fraction <= 1))
            return tf_error_set(err, TF_ERR_INPUT, "stale embeddings \"%s\": static:C takes a fraction C of D_r in "
                                                   "[0, 1]",
                                text);
    } else {
        return tf_error_set(err, TF_ERR_INPUT, "stale embeddings \"%s\": expected off, zero, static:C, adaptive or "
                                               "adaptive-printed",
                            text);
    }
    return TF_OK;
}

const char *stale_schedule_name(const stale_schedule *s, char *buffer, size_t size)
{
    static const char *const names[] = {"off", "zero", "static", "adaptive", "adaptive-printed"};
    if (s->kind == STALE_STATIC)
        snprintf(buffer, size, "static:%g", s->fraction);
    else
        snprintf(buffer, size, "%s", names[s->kind]);
    return buffer;
}

double stale_threshold_fraction(const stale_schedule *s, double first_loss, double previous_loss)
{
    /* Eq. 7: how far the loss has come down since epoch 1, relative to it. */
    const double norm = first_loss != 0 ? (first_loss - previous_loss) / first_loss : 0;
    switch (s->kind) {
    case STALE_STATIC:
        return s->fraction;
    case STALE_ADAPTIVE: /* the text's: grows from 1/2 as the loss falls */
        return 1.0 / (1.0 + exp(-norm));
    case STALE_ADAPTIVE_PRINTED: /* Eq. 6 as printed: shrinks from 1/2 */
        return 1.0 / (1.0 + exp(norm));
    default:
        return 0;
    }
}

double stale_distance(const float *a, const float *b, int64_t width)
{
    double sum = 0;
    for (int64_t k = 0; k < width; k++) {
        double d = (double)a[k] - (double)b[k];
        sum += d * d;
    }
    return sqrt(sum);
}

int stale_reuse(const float *fresh, const float *cached, int64_t width, double theta, double *distance)
{
    *distance = stale_distance(fresh, cached, width);
    if (memcmp(fresh, cached, (size_t)width * sizeof(float)) == 0)
        return 1; /* the receiver already holds these very bits */
    return theta > 0 && *distance <= theta; /* a NaN distance compares false: sent */
}

/* ---- the simulation ------------------------------------------------------------------------- */

/* The simulation whose kernels are running (the table passes no context; see the header). */
static stale_simulation *active;

/* The snapshot whose graph an operator reads, or -1 for an operator over another graph. */
static int64_t snapshot_of(const stale_simulation *s, const propagation *p)
{
    const uintptr_t first = (uintptr_t)&s->seq->snapshots[0].graph, at = (uintptr_t)p->graph;
    if (at < first || (at - first) % sizeof(snapshot) != 0)
        return -1;
    const int64_t t = (int64_t)((at - first) / sizeof(snapshot));
    return t < s->seq->num_snapshots ? t : -1;
}

static void fail(stale_simulation *s, tf_error *err)
{
    if (s->failure.code == TF_OK)
        s->failure = *err;
}

/* The pairs' row lists of a product on graph g: vertex u goes to pair (owner u, r) when an edge
 * u -> v with owner v = r != owner u exists. */
static int build_transfer(stale_simulation *s, const csr *g, int64_t width, stale_transfer *out, tf_error *err)
{
    const int ranks = s->ranks;
    const int64_t n = s->seq->num_nodes, pairs = (int64_t)ranks * ranks;
    memset(out, 0, sizeof *out);
    out->width = width;
    uint8_t *needed = tf_alloc((size_t)(ranks * n), 1, "stale transfer", err); /* [R][N] r reads u */
    out->pair_offsets = needed ? tf_alloc((size_t)(pairs + 1), sizeof(int64_t), "stale transfer", err) : NULL;
    if (!out->pair_offsets) {
        free(needed);
        return TF_ERR_INPUT;
    }
    for (int64_t v = 0; v < n; v++)
        for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++) {
            const int32_t u = g->col[e];
            if (s->owner[u] != s->owner[v])
                needed[(int64_t)s->owner[v] * n + u] = 1;
        }
    for (int64_t u = 0; u < n; u++)
        for (int r = 0; r < ranks; r++)
            out->pair_offsets[(int64_t)s->owner[u] * ranks + r + 1] += needed[(int64_t)r * n + u];
    for (int64_t k = 0; k < pairs; k++)
        out->pair_offsets[k + 1] += out->pair_offsets[k];
    const int64_t rows = out->pair_offsets[pairs];
    out->vertices = tf_alloc((size_t)(rows > 0 ? rows : 1), sizeof(int32_t), "stale transfer", err);
    out->cache = out->vertices ? tf_alloc((size_t)(rows > 0 ? rows * width : 1), sizeof(float), "stale cache", err)
                               : NULL;
    int64_t *fill = out->cache ? tf_alloc((size_t)pairs, sizeof(int64_t), "stale transfer", err) : NULL;
    if (fill) {
        memcpy(fill, out->pair_offsets, (size_t)pairs * sizeof(int64_t));
        for (int64_t u = 0; u < n; u++) /* increasing id within each pair */
            for (int r = 0; r < ranks; r++)
                if (needed[(int64_t)r * n + u])
                    out->vertices[fill[(int64_t)s->owner[u] * ranks + r]++] = (int32_t)u;
    }
    free(fill);
    free(needed);
    return fill ? TF_OK : TF_ERR_INPUT;
}

static void free_transfer(stale_transfer *t)
{
    free(t->pair_offsets);
    free(t->vertices);
    free(t->cache);
}

/* The transfer of product `call` of snapshot t, created on its first occurrence. */
static stale_transfer *transfer_for(stale_simulation *s, int64_t t, int64_t call, const propagation *p, int64_t width)
{
    tf_error err;
    if (call < s->transfer_count[t]) {
        stale_transfer *found = &s->transfers[t][call];
        if (found->width != width) {
            tf_error_set(&err, TF_ERR_INPUT, "stale simulation: product %lld of snapshot %lld has width %lld, %lld when "
                                             "first seen: the model's products changed between epochs",
                         (long long)call, (long long)t, (long long)width, (long long)found->width);
            fail(s, &err);
            return NULL;
        }
        return found;
    }
    stale_transfer *grown = realloc(s->transfers[t], (size_t)(call + 1) * sizeof *grown);
    if (!grown) {
        tf_error_set(&err, TF_ERR_SYSTEM, "stale simulation: out of memory");
        fail(s, &err);
        return NULL;
    }
    s->transfers[t] = grown;
    memset(&grown[s->transfer_count[t]], 0, (size_t)(call + 1 - s->transfer_count[t]) * sizeof *grown);
    s->transfer_count[t] = call + 1;
    if (build_transfer(s, p->graph, width, &grown[call], &err) != TF_OK) {
        fail(s, &err);
        return NULL;
    }
    return &grown[call];
}

int64_t stale_decide_rows(const float *rows, const int32_t *index, float *cache, int64_t count, int64_t width,
                          double fraction, int send_all, uint8_t *fresh_bits, stale_stats *stats)
{
    if (count == 0)
        return 0;
    const uint64_t row_bytes = (uint64_t)width * sizeof(float), bitmap = (uint64_t)(count + 7) / 8;
    stats->transfers++;
    stats->bytes_fresh += (uint64_t)count * row_bytes;
    if (fresh_bits)
        memset(fresh_bits, send_all ? 0xff : 0, (size_t)bitmap);
    if (send_all) {
        for (int64_t i = 0; i < count; i++)
            memcpy(cache + i * width, rows + (index ? (int64_t)index[i] : i) * width, (size_t)row_bytes);
        stats->rows_sent += count;
        stats->bytes_sent += (uint64_t)count * row_bytes;
        return 0;
    }
    double largest = 0;
    for (int64_t i = 0; i < count; i++) {
        double d = stale_distance(rows + (index ? (int64_t)index[i] : i) * width, cache + i * width, width);
        largest = isnan(d) || isnan(largest) ? NAN : fmax(largest, d);
    }
    const double theta = fraction * largest;
    int64_t sent = 0, stale = 0;
    for (int64_t i = 0; i < count; i++) {
        const float *fresh = rows + (index ? (int64_t)index[i] : i) * width;
        float *cached = cache + i * width;
        double d;
        if (!stale_reuse(fresh, cached, width, theta, &d)) {
            memcpy(cached, fresh, (size_t)row_bytes);
            sent++;
            if (fresh_bits)
                fresh_bits[i / 8] |= (uint8_t)(1u << (i % 8));
        } else if (memcmp(fresh, cached, (size_t)row_bytes) == 0) {
            stats->rows_reused_exact++;
            stats->bytes_exact += row_bytes;
        } else {
            stale++;
            stats->bytes_stale += row_bytes;
            stats->worst_ratio = fmax(stats->worst_ratio, d / theta);
        }
    }
    stats->rows_sent += sent;
    stats->rows_reused_stale += stale;
    stats->bytes_bitmap += bitmap;
    stats->bytes_sent += bitmap + (uint64_t)sent * row_bytes;
    return stale;
}

/* Decide pair (q, r)'s rows of one product; the cache ends holding what the receiver reads. */
static int64_t decide_pair(stale_simulation *s, stale_transfer *tr, int64_t pair, const float *x, int send_all)
{
    const int64_t first = tr->pair_offsets[pair], count = tr->pair_offsets[pair + 1] - first;
    return stale_decide_rows(x, tr->vertices + first, tr->cache + first * tr->width, count, tr->width, s->fraction,
                             send_all, NULL, &s->stats);
}

/* At least @p floats of scratch (NULL, with the failure recorded, when memory runs out). */
static float *scratch_of(stale_simulation *s, int64_t floats)
{
    if (s->scratch_size < floats) {
        float *grown = realloc(s->scratch, (size_t)floats * sizeof(float));
        if (!grown) {
            tf_error err;
            tf_error_set(&err, TF_ERR_SYSTEM, "stale simulation: out of memory");
            fail(s, &err);
            return NULL;
        }
        s->scratch = grown;
        s->scratch_size = floats;
    }
    return s->scratch;
}

/* Receiver r's view of x [N][width]: x with every row r fetches replaced by the copy it holds. */
static void receiver_view(const stale_simulation *s, const stale_transfer *tr, int r, const float *x, float *view)
{
    const int ranks = s->ranks;
    const int64_t width = tr->width;
    memcpy(view, x, (size_t)(s->seq->num_nodes * width) * sizeof(float));
    for (int q = 0; q < ranks; q++)
        for (int64_t i = tr->pair_offsets[q * ranks + r]; i < tr->pair_offsets[q * ranks + r + 1]; i++)
            memcpy(view + (int64_t)tr->vertices[i] * width, tr->cache + i * width, (size_t)width * sizeof(float));
}

/* The training product of snapshot `t` on p whose rows are x [N][width], with every pair decided; NULL
 * when the product is fresh by rule (evaluation, one rank, a test snapshot, a failure). */
static stale_transfer *decide_product(stale_simulation *s, const propagation *p, const float *x, int64_t width)
{
    const int64_t t = snapshot_of(s, p);
    if (!s->training || t < 0 || t >= s->train_snapshots || s->ranks == 1 || s->failure.code != TF_OK)
        return NULL;
    stale_transfer *tr = transfer_for(s, t, s->calls[t]++, p, width);
    if (!tr)
        return NULL;
    const int send_all = !tr->sent_once || s->epoch <= 1 || s->schedule.kind == STALE_OFF;
    int64_t stale = 0;
    for (int64_t pair = 0; pair < (int64_t)s->ranks * s->ranks; pair++)
        stale += decide_pair(s, tr, pair, x, send_all);
    tr->sent_once = 1;
    tr->last_stale = stale;
    return tr;
}

/* y = P x with every cut edge reading the copy its destination's owner holds. */
static void simulated_forward(const propagation *p, const float *x, int64_t width, float *y)
{
    stale_simulation *s = active;
    const stale_transfer *tr = decide_product(s, p, x, width);
    const int64_t n = s->seq->num_nodes, size = n * width;
    float *view = tr && tr->last_stale ? scratch_of(s, 2 * size) : NULL;
    if (!view) { /* fresh, or every receiver reads x's own bits */
        s->base->propagate_forward(p, x, width, y);
        return;
    }
    float *product = view + size;
    for (int r = 0; r < s->ranks; r++) { /* receiver r's view of x, its product, its rows */
        receiver_view(s, tr, r, x, view);
        s->base->propagate_forward(p, view, width, product);
        for (int64_t v = 0; v < n; v++)
            if (s->owner[v] == r)
                memcpy(y + v * width, product + v * width, (size_t)width * sizeof(float));
    }
}

/* GAT's edge kernel with every in-neighbour row p_j read from the copy its target's owner holds: each
 * receiver runs the kernel on its view and keeps its own targets' outputs and attention weights. */
static void simulated_attention_forward(const propagation *p, const float *projected, const float *attention_source,
                                        const float *attention_target, int64_t heads, int64_t channels,
                                        float *score_source, float *score_target, float *alpha, float *out)
{
    stale_simulation *s = active;
    const int64_t n = s->seq->num_nodes, width = heads * channels, edges = p->graph->num_edges;
    const stale_transfer *tr = decide_product(s, p, projected, width);
    const int64_t t = tr ? snapshot_of(s, p) : -1;
    if (tr && s->attention_depth[t] == STALE_ATTENTION_LAYERS) {
        tf_error err;
        tf_error_set(&err, TF_ERR_INPUT, "stale simulation: more than %d graph attention layers on snapshot %lld",
                     STALE_ATTENTION_LAYERS, (long long)t);
        fail(s, &err);
    } else if (tr) { /* the backward finds its transfer here */
        s->attention_calls[t * STALE_ATTENTION_LAYERS + s->attention_depth[t]++] = s->calls[t] - 1;
    }
    float *view = tr && tr->last_stale && s->failure.code == TF_OK
                      ? scratch_of(s, 2 * n * width + 2 * n * heads + (edges + n) * heads)
                      : NULL;
    if (!view) {
        s->base->graph_attention_edges_forward(p, projected, attention_source, attention_target, heads, channels,
                                               score_source, score_target, alpha, out);
        return;
    }
    float *view_out = view + n * width, *view_source = view_out + n * width, *view_target = view_source + n * heads;
    float *view_alpha = view_target + n * heads; /* [E + N][H] */
    const csr *g = p->graph;
    for (int r = 0; r < s->ranks; r++) {
        receiver_view(s, tr, r, projected, view);
        s->base->graph_attention_edges_forward(p, view, attention_source, attention_target, heads, channels,
                                               view_source, view_target, view_alpha, view_out);
        for (int64_t v = 0; v < n; v++) {
            if (s->owner[v] != r)
                continue;
            memcpy(out + v * width, view_out + v * width, (size_t)width * sizeof(float));
            memcpy(score_source + v * heads, view_source + v * heads, (size_t)heads * sizeof(float));
            memcpy(score_target + v * heads, view_target + v * heads, (size_t)heads * sizeof(float));
            memcpy(alpha + g->row_ptr[v] * heads, view_alpha + g->row_ptr[v] * heads,
                   (size_t)((g->row_ptr[v + 1] - g->row_ptr[v]) * heads) * sizeof(float));
            memcpy(alpha + (edges + v) * heads, view_alpha + (edges + v) * heads, (size_t)heads * sizeof(float));
        }
    }
}

/* Its backward: per receiver, on the view its forward read, with the gradient of the targets it owns. */
static void simulated_attention_backward(const propagation *p, const float *projected, const float *attention_source,
                                         const float *attention_target, const float *score_source,
                                         const float *score_target, const float *alpha, const float *dout,
                                         int64_t heads, int64_t channels, float *scratch, float *dprojected,
                                         float *dattention_source, float *dattention_target)
{
    stale_simulation *s = active;
    const int64_t n = s->seq->num_nodes, width = heads * channels, t = snapshot_of(s, p);
    const stale_transfer *tr = NULL;
    if (s->training && t >= 0 && t < s->train_snapshots && s->attention_depth[t] > 0)
        tr = &s->transfers[t][s->attention_calls[t * STALE_ATTENTION_LAYERS + --s->attention_depth[t]]];
    float *view = tr && tr->last_stale && s->failure.code == TF_OK ? scratch_of(s, 2 * n * width + 2 * n * heads)
                                                                   : NULL;
    if (!view) { /* no row was stale: the tape is every receiver's */
        s->base->graph_attention_edges_backward(p, projected, attention_source, attention_target, score_source,
                                                score_target, alpha, dout, heads, channels, scratch, dprojected,
                                                dattention_source, dattention_target);
        return;
    }
    float *mine = view + n * width, *view_source = mine + n * width, *view_target = view_source + n * heads;
    for (int r = 0; r < s->ranks; r++) {
        receiver_view(s, tr, r, projected, view);
        for (int64_t v = 0; v < n; v++) {
            graph_attention_scores(view, attention_source, attention_target, v, heads, channels, view_source,
                                   view_target);
            if (s->owner[v] == r)
                memcpy(mine + v * width, dout + v * width, (size_t)width * sizeof(float));
            else
                memset(mine + v * width, 0, (size_t)width * sizeof(float));
        }
        s->base->graph_attention_edges_backward(p, view, attention_source, attention_target, view_source, view_target,
                                                alpha, mine, heads, channels, scratch, dprojected, dattention_source,
                                                dattention_target);
    }
}

static int simulated_prepare(propagation *p, tf_error *err)
{
    stale_simulation *s = active;
    if (s->base->prepare_propagation && s->base->prepare_propagation(p, err) != TF_OK)
        return err->code;
    const int64_t t = snapshot_of(s, p);
    if (t >= 0) /* a new window's operator: its products count from 0 again */
        s->calls[t] = s->attention_depth[t] = 0;
    return TF_OK;
}

static int simulated_take_error(tf_error *err)
{
    stale_simulation *s = active;
    if (s->failure.code != TF_OK) {
        *err = s->failure;
        tf_error_clear(&s->failure);
        return err->code;
    }
    return s->base->take_error ? s->base->take_error(err) : TF_OK;
}

int stale_simulation_create(stale_simulation *s, const snapshot_seq *seq, const int32_t *owner, int ranks,
                            const stale_schedule *schedule, const kernels *base, tf_error *err)
{
    memset(s, 0, sizeof *s);
    if (ranks < 1)
        return tf_error_set(err, TF_ERR_INPUT, "stale simulation over %d ranks: expected at least 1", ranks);
    for (int64_t v = 0; v < seq->num_nodes; v++)
        if (owner[v] < 0 || owner[v] >= ranks)
            return tf_error_set(err, TF_ERR_INPUT, "stale simulation: vertex %lld has owner %d, expected 0..%d",
                                (long long)v, owner[v], ranks - 1);
    s->seq = seq;
    s->owner = owner;
    s->ranks = ranks;
    s->schedule = *schedule;
    s->base = base;
    s->table = *base;
    s->table.name = "stale simulation";
    s->table.prepare_propagation = simulated_prepare;
    s->table.propagate_forward = simulated_forward;
    s->table.take_error = simulated_take_error;
    s->table.graph_attention_edges_forward = simulated_attention_forward;
    s->table.graph_attention_edges_backward = simulated_attention_backward;
    const size_t t = (size_t)seq->num_snapshots;
    s->calls = tf_alloc(t, sizeof(int64_t), "stale simulation", err);
    s->transfer_count = s->calls ? tf_alloc(t, sizeof(int64_t), "stale simulation", err) : NULL;
    s->transfers = s->transfer_count ? tf_alloc(t, sizeof(stale_transfer *), "stale simulation", err) : NULL;
    s->attention_calls = s->transfers ? tf_alloc(t * STALE_ATTENTION_LAYERS, sizeof(int64_t), "stale simulation", err)
                                      : NULL;
    s->attention_depth = s->attention_calls ? tf_alloc(t, sizeof(int64_t), "stale simulation", err) : NULL;
    active = s; /* a model on s->table may run before the first epoch (an evaluation) */
    return s->attention_depth ? TF_OK : TF_ERR_INPUT;
}

void stale_simulation_free(stale_simulation *s)
{
    for (int64_t t = 0; s->transfers && t < s->seq->num_snapshots; t++) {
        for (int64_t k = 0; k < s->transfer_count[t]; k++)
            free_transfer(&s->transfers[t][k]);
        free(s->transfers[t]);
    }
    free(s->transfers);
    free(s->transfer_count);
    free(s->calls);
    free(s->attention_calls);
    free(s->attention_depth);
    free(s->scratch);
    if (active == s)
        active = NULL;
    memset(s, 0, sizeof *s);
}

int ref_stale_embeddings_epoch(stale_simulation *s, trainer *tr, const snapshot_seq *seq, epoch_report *report,
                               tf_error *err)
{
    if (tr->model.kernels != &s->table)
        return tf_error_set(err, TF_ERR_INPUT, "stale simulation: the model runs on %s kernels, not the simulation's",
                            tr->model.kernels->name);
    active = s;
    s->epoch++;
    s->fraction = s->epoch >= 2 ? stale_threshold_fraction(&s->schedule, s->first_loss, s->previous_loss) : 0;
    /* Evaluation runs the test snapshots, all at or after train_snapshots: fresh by that alone. */
    s->train_snapshots = tr->train_snapshots;
    s->training = 1;
    int status = trainer_epoch(tr, seq, report, err);
    s->training = 0;
    if (status == TF_OK) {
        if (s->epoch == 1)
            s->first_loss = report->train_loss;
        s->previous_loss = report->train_loss;
    }
    return status;
}
