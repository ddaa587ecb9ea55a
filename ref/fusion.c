#include "ref/fusion.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref/memory.h"
#include "ref/recurrent.h"
#include "ref/rng.h"

/* ---- sequence sets ------------------------------------------------------------------------- */

void sequence_set_free(sequence_set *set)
{
    free(set->offsets);
    free(set->vertex);
    free(set->first_snapshot);
    memset(set, 0, sizeof *set);
}

static int sequence_set_alloc(sequence_set *set, int64_t count, int with_origin, tf_error *err)
{
    memset(set, 0, sizeof *set);
    set->count = count;
    set->offsets = tf_alloc((size_t)count + 1, sizeof *set->offsets, "sequence offsets", err);
    if (set->offsets && with_origin) {
        set->vertex = tf_alloc((size_t)count, sizeof *set->vertex, "sequence vertices", err);
        set->first_snapshot =
            set->vertex ? tf_alloc((size_t)count, sizeof *set->first_snapshot, "sequence first snapshots", err) : NULL;
    }
    if (!set->offsets || (with_origin && !set->first_snapshot)) {
        sequence_set_free(set);
        return err->code;
    }
    return TF_OK;
}

int sequence_set_from_lengths(const int64_t *lengths, int64_t count, sequence_set *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    if (count < 1)
        return tf_error_set(err, TF_ERR_INPUT, "sequence set: need at least one sequence, got %lld", (long long)count);
    for (int64_t s = 0; s < count; s++)
        if (lengths[s] < 1)
            return tf_error_set(err, TF_ERR_INPUT, "sequence set: sequence %lld has length %lld, must be >= 1",
                                (long long)s, (long long)lengths[s]);
    if (sequence_set_alloc(out, count, 0, err) != TF_OK)
        return err->code;
    for (int64_t s = 0; s < count; s++) {
        out->offsets[s + 1] = out->offsets[s] + lengths[s];
        if (lengths[s] > out->max_length)
            out->max_length = lengths[s];
    }
    out->total_steps = out->offsets[count];
    return TF_OK;
}

/* Sequences from an [num_snapshots][num_nodes] alive map: each maximal run of alive snapshots
 * of one vertex, ordered by first snapshot, then vertex. */
static int sequences_from_alive(const uint8_t *alive, int64_t num_snapshots, int64_t num_nodes, const char *what,
                                sequence_set *out, tf_error *err)
{
    int64_t count = 0;
    for (int64_t t = 0; t < num_snapshots; t++)
        for (int64_t v = 0; v < num_nodes; v++)
            count += alive[t * num_nodes + v] && (t == 0 || !alive[(t - 1) * num_nodes + v]);
    if (count == 0)
        return tf_error_set(err, TF_ERR_INPUT, "%s: no vertex is alive in any snapshot, so there is no sequence", what);
    if (sequence_set_alloc(out, count, 1, err) != TF_OK)
        return err->code;
    int64_t s = 0;
    for (int64_t t = 0; t < num_snapshots; t++)
        for (int64_t v = 0; v < num_nodes; v++) {
            if (!alive[t * num_nodes + v] || (t > 0 && alive[(t - 1) * num_nodes + v]))
                continue;
            int64_t length = 0;
            while (t + length < num_snapshots && alive[(t + length) * num_nodes + v])
                length++;
            out->vertex[s] = (int32_t)v;
            out->first_snapshot[s] = (int32_t)t;
            out->offsets[s + 1] = out->offsets[s] + length;
            if (length > out->max_length)
                out->max_length = length;
            s++;
        }
    out->total_steps = out->offsets[count];
    return TF_OK;
}

int sequence_set_from_snapshots(const snapshot_seq *seq, int require_edge, sequence_set *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    const int64_t T = seq->num_snapshots, N = seq->num_nodes;
    uint8_t *alive = tf_alloc((size_t)(T * N), 1, "vertex lifetimes", err);
    if (!alive)
        return err->code;
    for (int64_t t = 0; t < T; t++) {
        const snapshot *snap = &seq->snapshots[t];
        uint8_t *row = alive + t * N;
        if (require_edge) {
            /* in-edges by destination: a vertex with a row of edges, or appearing as a source */
            for (int64_t v = 0; v < N; v++) {
                if (snap->graph.row_ptr[v + 1] > snap->graph.row_ptr[v])
                    row[v] = 1;
                for (int64_t e = snap->graph.row_ptr[v]; e < snap->graph.row_ptr[v + 1]; e++)
                    row[snap->graph.col[e]] = 1;
            }
            for (int64_t v = 0; v < N; v++)
                row[v] = row[v] && snap->present[v];
        } else {
            memcpy(row, snap->present, (size_t)N);
        }
    }
    int status = sequences_from_alive(alive, T, N, "snapshot lifetimes", out, err);
    free(alive);
    return status;
}

int sequence_set_from_events(const event_stream *events, int64_t num_snapshots, sequence_set *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    if (num_snapshots < 1)
        return tf_error_set(err, TF_ERR_INPUT, "event lifetimes: need at least one snapshot, got %lld",
                            (long long)num_snapshots);
    if (events->num_events < 1)
        return tf_error_set(err, TF_ERR_INPUT, "event lifetimes: the event stream is empty");
    const int64_t N = events->num_nodes;
    uint8_t *alive = tf_alloc((size_t)(num_snapshots * N), 1, "vertex lifetimes", err);
    if (!alive)
        return err->code;
    const double first = events->time[0], span = events->time[events->num_events - 1] - first;
    for (int64_t i = 0; i < events->num_events; i++) {
        /* equal time spans; the last timestamp closes the last snapshot */
        int64_t t = span > 0 ? (int64_t)((events->time[i] - first) / span * (double)num_snapshots) : 0;
        if (t >= num_snapshots)
            t = num_snapshots - 1;
        alive[t * N + events->src[i]] = 1;
        alive[t * N + events->dst[i]] = 1;
    }
    int status = sequences_from_alive(alive, num_snapshots, N, "event lifetimes", out, err);
    free(alive);
    return status;
}

const char *length_distribution_name(length_distribution kind)
{
    switch (kind) {
    case LENGTHS_UNIFORM: return "uniform";
    case LENGTHS_HEAVY_TAILED: return "heavy-tailed";
    case LENGTHS_EQUAL: return "all equal";
    case LENGTHS_ONE: return "all length 1";
    }
    return "unknown";
}

int sequence_set_generate(length_distribution kind, int64_t count, int64_t max_length, uint64_t seed,
                          sequence_set *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    if (count < 1 || max_length < 1)
        return tf_error_set(err, TF_ERR_INPUT, "generated lengths: count %lld and max length %lld must be >= 1",
                            (long long)count, (long long)max_length);
    int64_t *lengths = tf_alloc((size_t)count, sizeof *lengths, "sequence lengths", err);
    if (!lengths)
        return err->code;
    rng r;
    rng_seed(&r, seed);
    for (int64_t s = 0; s < count; s++) {
        switch (kind) {
        case LENGTHS_UNIFORM: lengths[s] = 1 + (int64_t)rng_below(&r, (uint64_t)max_length); break;
        case LENGTHS_HEAVY_TAILED: {
            /* P(length >= k) = k^-1.2: two thirds are 1 or 2, a few reach the cap */
            double u = 1.0 - rng_uniform(&r); /* in (0, 1] */
            double length = floor(pow(u, -1.0 / 1.2));
            lengths[s] = length >= (double)max_length ? max_length : (int64_t)length;
            break;
        }
        case LENGTHS_EQUAL: lengths[s] = max_length; break;
        case LENGTHS_ONE: lengths[s] = 1; break;
        default:
            free(lengths);
            return tf_error_set(err, TF_ERR_INPUT, "generated lengths: unknown distribution %d", kind);
        }
    }
    int status = sequence_set_from_lengths(lengths, count, out, err);
    free(lengths);
    return status;
}

/* ---- the time encoder, one sequence at a time ----------------------------------------------- */

int64_t time_encoder_gates(time_encoder_kind kind) { return kind == TIME_ENCODER_LSTM ? 4 : 3; }

int time_encoder_check(const time_encoder *encoder, tf_error *err)
{
    if (encoder->kind != TIME_ENCODER_GRU && encoder->kind != TIME_ENCODER_LSTM)
        return tf_error_set(err, TF_ERR_INPUT, "time encoder: unknown kind %d", (int)encoder->kind);
    if (encoder->in < 1 || encoder->hidden < 1)
        return tf_error_set(err, TF_ERR_INPUT, "time encoder: input width %lld and hidden width %lld must be >= 1",
                            (long long)encoder->in, (long long)encoder->hidden);
    if (!encoder->weight_ih || !encoder->weight_hh || !encoder->bias_ih || !encoder->bias_hh)
        return tf_error_set(err, TF_ERR_INPUT, "time encoder: a weight or bias is missing");
    return TF_OK;
}

/* Scratch for one sequence: its states, cell caches, and one step's gradients. */
typedef struct sequence_scratch {
    float *zero;       /* [H] the initial state (h and c) */
    float *h;          /* [T_max][H] */
    float *c;          /* [T_max][H] LSTM cell states */
    float *cache;      /* [T_max][4H] GRU cache or LSTM gates */
    float *work;       /* [6H] LSTM pre-activations [4H] (forward and backward), GRU gate gradients [2][3H] */
    float *carry_h;    /* [H] dL/dh arriving from the next step */
    float *carry_c;    /* [H] dL/dc arriving from the next step */
    float *step_h;     /* [H] dL/dh for the current step, and then for the previous state */
    float *step_c;     /* [H] dL/dc for the previous cell state */
    float *step_grad;  /* one step's parameter gradients, laid out as weight_ih, weight_hh, bias_ih, bias_hh */
    double *sum_grad;  /* their sum over all steps */
    int64_t grad_size; /* floats in step_grad */
} sequence_scratch;

static void scratch_free(sequence_scratch *s)
{
    void *all[] = {s->zero, s->h, s->c, s->cache, s->work, s->carry_h, s->carry_c, s->step_h, s->step_c,
                   s->step_grad, s->sum_grad};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        free(all[i]);
    memset(s, 0, sizeof *s);
}

static int scratch_alloc(sequence_scratch *s, const time_encoder *e, int64_t max_length, int backward, tf_error *err)
{
    memset(s, 0, sizeof *s);
    const int64_t H = e->hidden, G = time_encoder_gates(e->kind);
    s->grad_size = G * H * (e->in + H) + 2 * G * H;
    s->zero = tf_alloc((size_t)H, sizeof(float), "time encoder state", err);
    s->h = tf_alloc((size_t)(max_length * H), sizeof(float), "time encoder states", err);
    s->c = tf_alloc((size_t)(max_length * H), sizeof(float), "time encoder cell states", err);
    s->cache = tf_alloc((size_t)(max_length * 4 * H), sizeof(float), "time encoder cache", err);
    s->work = tf_alloc((size_t)(6 * H), sizeof(float), "time encoder gates", err);
    s->carry_h = tf_alloc((size_t)H, sizeof(float), "time encoder gradient", err);
    s->carry_c = tf_alloc((size_t)H, sizeof(float), "time encoder gradient", err);
    s->step_h = tf_alloc((size_t)H, sizeof(float), "time encoder gradient", err);
    s->step_c = tf_alloc((size_t)H, sizeof(float), "time encoder gradient", err);
    if (backward) {
        s->step_grad = tf_alloc((size_t)s->grad_size, sizeof(float), "time encoder step gradient", err);
        s->sum_grad = tf_alloc((size_t)s->grad_size, sizeof(double), "time encoder gradient sums", err);
    }
    if (!s->zero || !s->h || !s->c || !s->cache || !s->work || !s->carry_h || !s->carry_c || !s->step_h ||
        !s->step_c || (backward && (!s->step_grad || !s->sum_grad))) {
        scratch_free(s);
        return err->code ? err->code : tf_error_set(err, TF_ERR_INPUT, "time encoder: out of memory");
    }
    return TF_OK;
}

/* Run sequence of `length` steps from the zero state: states into s->h (and s->c), caches
 * into s->cache, outputs also into h_out when given. */
static void sequence_forward(const time_encoder *e, const float *x, int64_t length, sequence_scratch *s, float *h_out)
{
    const int64_t H = e->hidden, in = e->in;
    for (int64_t p = 0; p < length; p++) {
        const float *h_prev = p == 0 ? s->zero : s->h + (p - 1) * H;
        if (e->kind == TIME_ENCODER_GRU) {
            ref_gru_cell_forward(x + p * in, h_prev, e->weight_ih, e->weight_hh, e->bias_ih, e->bias_hh, 1, in, H,
                                 s->h + p * H, s->cache + p * 4 * H);
        } else {
            const float *c_prev = p == 0 ? s->zero : s->c + (p - 1) * H;
            ref_lstm_cell_forward(x + p * in, h_prev, c_prev, e->weight_ih, e->weight_hh, e->bias_ih, e->bias_hh, 1,
                                  in, H, s->h + p * H, s->c + p * H, s->work, s->cache + p * 4 * H);
        }
        if (h_out)
            memcpy(h_out + p * H, s->h + p * H, (size_t)H * sizeof(float));
    }
}

int ref_fusion_forward(const time_encoder *encoder, const sequence_set *set, const float *x, float *h_out,
                       tf_error *err)
{
    if (time_encoder_check(encoder, err) != TF_OK)
        return err->code;
    sequence_scratch s;
    if (scratch_alloc(&s, encoder, set->max_length, 0, err) != TF_OK)
        return err->code;
    for (int64_t q = 0; q < set->count; q++) {
        int64_t first = set->offsets[q], length = set->offsets[q + 1] - first;
        sequence_forward(encoder, x + first * encoder->in, length, &s, h_out + first * encoder->hidden);
    }
    scratch_free(&s);
    return TF_OK;
}

int ref_fusion_backward(const time_encoder *encoder, const sequence_set *set, const float *x, const float *dh_out,
                        float *dx, const time_encoder_gradients *gradients, tf_error *err)
{
    if (time_encoder_check(encoder, err) != TF_OK)
        return err->code;
    sequence_scratch s;
    if (scratch_alloc(&s, encoder, set->max_length, 1, err) != TF_OK)
        return err->code;
    const int64_t H = encoder->hidden, in = encoder->in, G = time_encoder_gates(encoder->kind);
    float *g_weight_ih = s.step_grad, *g_weight_hh = g_weight_ih + G * H * in, *g_bias_ih = g_weight_hh + G * H * H,
          *g_bias_hh = g_bias_ih + G * H;
    for (int64_t q = 0; q < set->count; q++) {
        const int64_t first = set->offsets[q], length = set->offsets[q + 1] - first;
        const float *xq = x + first * in;
        sequence_forward(encoder, xq, length, &s, NULL);
        memset(s.carry_h, 0, (size_t)H * sizeof(float));
        memset(s.carry_c, 0, (size_t)H * sizeof(float));
        for (int64_t p = length - 1; p >= 0; p--) {
            /* dL/dh at p: the loss's own term plus what step p + 1 sent back */
            for (int64_t j = 0; j < H; j++)
                s.step_h[j] = dh_out[(first + p) * H + j] + s.carry_h[j];
            const float *h_prev = p == 0 ? s.zero : s.h + (p - 1) * H;
            float *dxp = dx ? dx + (first + p) * in : NULL;
            memset(s.step_grad, 0, (size_t)s.grad_size * sizeof(float));
            memset(s.carry_h, 0, (size_t)H * sizeof(float)); /* becomes dL/dh_prev */
            if (encoder->kind == TIME_ENCODER_GRU) {
                ref_gru_cell_backward(xq + p * in, h_prev, encoder->weight_ih, encoder->weight_hh, s.cache + p * 4 * H,
                                      s.step_h, 1, in, H, s.work, dxp, s.carry_h, g_weight_ih, g_weight_hh, g_bias_ih,
                                      g_bias_hh);
            } else {
                const float *c_prev = p == 0 ? s.zero : s.c + (p - 1) * H;
                memset(s.step_c, 0, (size_t)H * sizeof(float));
                ref_lstm_cell_backward(xq + p * in, h_prev, c_prev, encoder->weight_ih, encoder->weight_hh,
                                       s.c + p * H, s.cache + p * 4 * H, s.step_h, s.carry_c, 1, in, H, s.work, dxp,
                                       s.carry_h, s.step_c, g_weight_ih, g_weight_hh, g_bias_ih, g_bias_hh);
                memcpy(s.carry_c, s.step_c, (size_t)H * sizeof(float));
            }
            for (int64_t i = 0; i < s.grad_size; i++)
                s.sum_grad[i] += s.step_grad[i];
            /* at p == 0 the carry is the gradient of the zero initial state: dropped */
        }
    }
    float *targets[4] = {gradients ? gradients->weight_ih : NULL, gradients ? gradients->weight_hh : NULL,
                         gradients ? gradients->bias_ih : NULL, gradients ? gradients->bias_hh : NULL};
    const int64_t sizes[4] = {G * H * in, G * H * H, G * H, G * H};
    const double *sum = s.sum_grad;
    for (int k = 0; k < 4; k++) {
        if (targets[k])
            for (int64_t i = 0; i < sizes[k]; i++)
                targets[k][i] += (float)sum[i];
        sum += sizes[k];
    }
    scratch_free(&s);
    return TF_OK;
}

/* ---- chunks and per-chunk loading ----------------------------------------------------------- */

int chunk_set_contiguous(int64_t num_nodes, int64_t count, chunk_set *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    if (count < 1 || count > num_nodes)
        return tf_error_set(err, TF_ERR_INPUT, "chunks: %lld chunks of %lld vertices; need 1 <= chunks <= vertices",
                            (long long)count, (long long)num_nodes);
    out->offsets = tf_alloc((size_t)count + 1, sizeof *out->offsets, "chunk offsets", err);
    out->vertices = out->offsets ? tf_alloc((size_t)num_nodes, sizeof *out->vertices, "chunk vertices", err) : NULL;
    if (!out->vertices) {
        chunk_set_free(out);
        return err->code;
    }
    out->count = count;
    out->num_nodes = num_nodes;
    for (int64_t c = 0; c <= count; c++)
        out->offsets[c] = c * num_nodes / count;
    for (int64_t v = 0; v < num_nodes; v++)
        out->vertices[v] = (int32_t)v;
    return TF_OK;
}

void chunk_set_free(chunk_set *chunks)
{
    free(chunks->offsets);
    free(chunks->vertices);
    memset(chunks, 0, sizeof *chunks);
}

void chunk_load_free(chunk_load *load)
{
    free(load->vertices);
    free(load->features);
    memset(load, 0, sizeof *load);
}

int ref_fusion_chunk_vertices(const snapshot_seq *seq, const chunk_set *chunks, int64_t chunk,
                              int32_t **out_vertices, int64_t *out_count, tf_error *err)
{
    *out_vertices = NULL;
    *out_count = 0;
    if (chunk < 0 || chunk >= chunks->count)
        return tf_error_set(err, TF_ERR_INPUT, "chunk %lld does not exist (there are %lld)", (long long)chunk,
                            (long long)chunks->count);
    if (chunks->num_nodes != seq->num_nodes)
        return tf_error_set(err, TF_ERR_INPUT, "chunks cover %lld vertices but the snapshots have %lld",
                            (long long)chunks->num_nodes, (long long)seq->num_nodes);
    uint8_t *needed = tf_alloc((size_t)seq->num_nodes, 1, "chunk membership", err);
    if (!needed)
        return err->code;
    for (int64_t i = chunks->offsets[chunk]; i < chunks->offsets[chunk + 1]; i++) {
        int32_t v = chunks->vertices[i];
        needed[v] = 1;
        for (int64_t t = 0; t < seq->num_snapshots; t++) {
            const csr *g = &seq->snapshots[t].graph;
            for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++)
                needed[g->col[e]] = 1;
        }
    }
    int64_t count = 0;
    for (int64_t v = 0; v < seq->num_nodes; v++)
        count += needed[v];
    int32_t *vertices = tf_alloc((size_t)count, sizeof *vertices, "chunk vertices", err);
    if (vertices) {
        int64_t k = 0;
        for (int64_t v = 0; v < seq->num_nodes; v++)
            if (needed[v])
                vertices[k++] = (int32_t)v;
        *out_vertices = vertices;
        *out_count = count;
    }
    free(needed);
    return vertices ? TF_OK : err->code;
}

int ref_fusion_load_chunk(const snapshot_seq *seq, const chunk_set *chunks, int64_t chunk, chunk_load *out,
                          tf_error *err)
{
    memset(out, 0, sizeof *out);
    if (ref_fusion_chunk_vertices(seq, chunks, chunk, &out->vertices, &out->num_vertices, err) != TF_OK)
        return err->code;
    const int64_t T = seq->num_snapshots, F = seq->feature_width, n = out->num_vertices;
    out->features = tf_alloc((size_t)(T * n * F), sizeof(float), "chunk features", err);
    if (!out->features) {
        chunk_load_free(out);
        return err->code;
    }
    for (int64_t t = 0; t < T; t++)
        for (int64_t k = 0; k < n; k++)
            memcpy(out->features + (t * n + k) * F, seq->snapshots[t].features.data + (int64_t)out->vertices[k] * F,
                   (size_t)F * sizeof(float));
    out->num_snapshots = T;
    out->feature_width = F;
    out->bytes = T * n * F * (int64_t)sizeof(float);
    return TF_OK;
}
