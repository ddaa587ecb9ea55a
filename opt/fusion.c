#include "opt/fusion.h"

#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"
#include "ref/nn/recurrent_gates.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* A step of a few lanes is a few hundred floats: waking threads for it costs more than the
 * work (and under Valgrind, far more). Loops smaller than this run in the calling thread. */
#define PARALLEL_MIN_FLOATS 16384

/* ---- plans ------------------------------------------------------------------------------------ */

/* Everything but the layout is derived from lane_of_sequence, start_of_sequence and the lane
 * fills (active counts), which the two planners set: step offsets, resets, rows of steps. */
static int plan_finish(const sequence_set *set, fusion_plan *plan, tf_error *err)
{
    const int64_t T = plan->num_steps;
    plan->step_offset[0] = 0;
    for (int64_t t = 0; t < T; t++)
        plan->step_offset[t + 1] = plan->step_offset[t] + plan->active[t];
    plan->computed_rows = plan->step_offset[T];
    plan->useful_rows = set->total_steps;
    plan->reset = tf_alloc((size_t)plan->computed_rows, 1, "fusion reset mask", err);
    plan->row_of_step = plan->reset ? tf_alloc((size_t)set->total_steps, sizeof(int64_t), "fusion rows", err) : NULL;
    if (!plan->row_of_step)
        return err->code;
    /* t = 0 starts every lane from the zero state; padding never resets after that */
    for (int64_t l = 0; l < plan->active[0]; l++)
        plan->reset[l] = 1;
    for (int64_t s = 0; s < set->count; s++) {
        const int64_t lane = plan->lane_of_sequence[s], start = plan->start_of_sequence[s];
        plan->reset[plan->step_offset[start] + lane] = 1;
        for (int64_t p = 0; p < set->offsets[s + 1] - set->offsets[s]; p++)
            plan->row_of_step[set->offsets[s] + p] = plan->step_offset[start + p] + lane;
    }
    return TF_OK;
}

static int plan_alloc(const sequence_set *set, fusion_layout layout, int64_t num_steps, fusion_plan *plan,
                      tf_error *err)
{
    memset(plan, 0, sizeof *plan);
    if (set->count < 1 || set->max_length < 1)
        return tf_error_set(err, TF_ERR_INPUT, "fusion plan: the sequence set is empty");
    plan->layout = layout;
    plan->mask_rule = FUSION_MASK_EVERY_GATE;
    plan->num_steps = num_steps;
    plan->active = tf_alloc((size_t)num_steps, sizeof(int64_t), "fusion active lanes", err);
    plan->step_offset = plan->active ? tf_alloc((size_t)num_steps + 1, sizeof(int64_t), "fusion steps", err) : NULL;
    plan->lane_of_sequence =
        plan->step_offset ? tf_alloc((size_t)set->count, sizeof(int64_t), "fusion lanes", err) : NULL;
    plan->start_of_sequence =
        plan->lane_of_sequence ? tf_alloc((size_t)set->count, sizeof(int64_t), "fusion starts", err) : NULL;
    if (!plan->start_of_sequence) {
        fusion_plan_free(plan);
        return err->code;
    }
    return TF_OK;
}

int opt_fusion_plan_padded(const sequence_set *set, fusion_plan *plan, tf_error *err)
{
    if (plan_alloc(set, FUSION_PADDED, set->max_length, plan, err) != TF_OK)
        return err->code;
    plan->num_lanes = set->count;
    for (int64_t t = 0; t < plan->num_steps; t++)
        plan->active[t] = set->count;
    for (int64_t s = 0; s < set->count; s++)
        plan->lane_of_sequence[s] = s; /* start_of_sequence stays 0 */
    int status = plan_finish(set, plan, err);
    if (status != TF_OK)
        fusion_plan_free(plan);
    return status;
}

typedef struct sequence_by_length {
    int64_t length, index;
} sequence_by_length;

static int longest_first(const void *a, const void *b)
{
    const sequence_by_length *x = a, *y = b;
    if (x->length != y->length)
        return x->length > y->length ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static const int64_t *lane_fill_for_sort; /* qsort has no context argument */
static int fullest_first(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    if (lane_fill_for_sort[x] != lane_fill_for_sort[y])
        return lane_fill_for_sort[x] > lane_fill_for_sort[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

int opt_fusion_plan_lanes(const sequence_set *set, fusion_plan *plan, tf_error *err)
{
    const int64_t T = set->max_length, S = set->count;
    if (plan_alloc(set, FUSION_LANES, T, plan, err) != TF_OK)
        return err->code;
    sequence_by_length *order = tf_alloc((size_t)S, sizeof *order, "fusion packing order", err);
    int64_t *fill = order ? tf_alloc((size_t)S, sizeof *fill, "fusion lane fills", err) : NULL;
    int64_t *new_id = fill ? tf_alloc((size_t)S, sizeof *new_id, "fusion lane order", err) : NULL;
    int64_t *by_fill = new_id ? tf_alloc((size_t)S, sizeof *by_fill, "fusion lane order", err) : NULL;
    if (!by_fill)
        goto fail;
    for (int64_t s = 0; s < S; s++)
        order[s] = (sequence_by_length){set->offsets[s + 1] - set->offsets[s], s};
    qsort(order, (size_t)S, sizeof *order, longest_first);
    /* First-fit decreasing into lanes of length T. Lanes before first_open are full, so the
     * search starts there; sequences come longest first, so a lane that cannot take this one
     * may still take a later, shorter one. */
    int64_t lanes = 0, first_open = 0;
    for (int64_t k = 0; k < S; k++) {
        const int64_t length = order[k].length;
        int64_t lane = first_open;
        while (lane < lanes && fill[lane] + length > T)
            lane++;
        if (lane == lanes)
            fill[lanes++] = 0;
        plan->lane_of_sequence[order[k].index] = lane;
        plan->start_of_sequence[order[k].index] = fill[lane];
        fill[lane] += length;
        while (first_open < lanes && fill[first_open] == T)
            first_open++;
    }
    /* Renumber lanes fullest first, so the lanes running at step t are a prefix. */
    for (int64_t l = 0; l < lanes; l++)
        by_fill[l] = l;
    lane_fill_for_sort = fill;
    qsort(by_fill, (size_t)lanes, sizeof *by_fill, fullest_first);
    for (int64_t k = 0; k < lanes; k++)
        new_id[by_fill[k]] = k;
    for (int64_t s = 0; s < S; s++)
        plan->lane_of_sequence[s] = new_id[plan->lane_of_sequence[s]];
    plan->num_lanes = lanes;
    for (int64_t t = 0; t < T; t++) {
        int64_t running = 0;
        while (running < lanes && fill[by_fill[running]] > t)
            running++;
        plan->active[t] = running;
    }
    if (plan_finish(set, plan, err) != TF_OK)
        goto fail;
    free(order), free(fill), free(new_id), free(by_fill);
    return TF_OK;
fail:
    free(order), free(fill), free(new_id), free(by_fill);
    fusion_plan_free(plan);
    return err->code ? err->code : tf_error_set(err, TF_ERR_INPUT, "fusion plan: out of memory");
}

/* ---- the batched recurrence ------------------------------------------------------------------ */

void fusion_tape_free(fusion_tape *tape)
{
    free(tape->x);
    free(tape->h_prev);
    free(tape->h);
    free(tape->c_prev);
    free(tape->c);
    free(tape->cache);
    memset(tape, 0, sizeof *tape);
}

static int plan_matches(const sequence_set *set, const fusion_plan *plan, tf_error *err)
{
    if (plan->useful_rows != set->total_steps || !plan->row_of_step || plan->num_steps < 1)
        return tf_error_set(err, TF_ERR_INPUT, "fusion: the plan (%lld steps) was made for another sequence set "
                            "(%lld steps)", (long long)plan->useful_rows, (long long)set->total_steps);
    return TF_OK;
}

/* weight [out][in] as [in][out], so a product can run across outputs. */
static float *transposed(const float *weight, int64_t out, int64_t in, tf_error *err)
{
    float *t = tf_alloc((size_t)(out * in), sizeof(float), "fusion transposed weights", err);
    if (t)
        for (int64_t o = 0; o < out; o++)
            for (int64_t k = 0; k < in; k++)
                t[k * out + o] = weight[o * in + k];
    return t;
}

/* y[o] = start[o] + v[0] w[0][o] + v[1] w[1][o] + ... (start NULL: 0), added left to right in
 * float: the order of ref_linear_forward() and of the reference cells' gate sums, so every y[o] is
 * bit for bit the reference's. The loop runs across o, which vectorizes without reordering any one
 * sum. v [in], transposed_weight [in][stride] (columns 0 .. out-1 read), start [out] (or NULL), y [out]. */
static void products_in_reference_order(const float *v, const float *transposed_weight, int64_t in, int64_t stride,
                                        int64_t out, const float *start, float *y)
{
    if (start)
        memcpy(y, start, (size_t)out * sizeof(float));
    else
        memset(y, 0, (size_t)out * sizeof(float));
    for (int64_t k = 0; k < in; k++) {
        const float vk = v[k], *w = transposed_weight + k * stride;
        for (int64_t o = 0; o < out; o++)
            y[o] += vk * w[o];
    }
}

/* The carried state of the rows of step t, after the mask rule: into prev [computed_rows][H]
 * (what the cell reads; rows of step t written) and, for the update-gate-only rule, the masked
 * one into masked [lanes][H]. state [computed_rows][H] holds every row's new state; rows of
 * step t - 1 start at step_offset[t - 1] and include lane l, because lanes stop running only
 * at the end, so active[t - 1] >= active[t]. */
static void carried_state(const fusion_plan *plan, int64_t t, const float *state, int64_t H, fusion_mask_rule rule,
                          float *prev, float *masked)
{
    const int64_t n = plan->active[t], base = plan->step_offset[t];
#pragma omp parallel for if (n * H >= PARALLEL_MIN_FLOATS)
    for (int64_t l = 0; l < n; l++) {
        const float *raw = t > 0 ? state + (plan->step_offset[t - 1] + l) * H : NULL;
        const int reset = plan->reset[base + l];
        float *out = prev + (base + l) * H;
        /* a select, not a multiply by 0: 0 * Inf would be NaN */
        if (raw && (rule != FUSION_MASK_EVERY_GATE || !reset))
            memcpy(out, raw, (size_t)H * sizeof(float));
        else
            memset(out, 0, (size_t)H * sizeof(float));
        if (masked) {
            if (raw && !reset)
                memcpy(masked + l * H, raw, (size_t)H * sizeof(float));
            else
                memset(masked + l * H, 0, (size_t)H * sizeof(float));
        }
    }
}

/* Scratch of one forward: transposed weights, input sums, per-row recurrent sums. */
typedef struct forward_scratch {
    float *weight_ih_t, *weight_hh_t; /* [in][G H], [H][G H] */
    float *input_part;                /* [rows][G H]: b_ih + x W_ih^T in reference order */
    float *recurrent;                 /* [lanes][G H]: b_hh + h_prev W_hh^T (GRU), pre-activations (LSTM) */
    float *masked;                    /* [lanes][H] update-gate-only rule: the masked state */
    float *masked_recurrent;          /* [lanes][G H] its products */
} forward_scratch;

static void forward_scratch_free(forward_scratch *s)
{
    free(s->weight_ih_t), free(s->weight_hh_t), free(s->input_part), free(s->recurrent), free(s->masked);
    free(s->masked_recurrent);
}

/* Whether the kind carries a cell state c besides h. */
static int has_cell_state(time_encoder_kind kind) { return kind == TIME_ENCODER_LSTM || kind == TIME_ENCODER_PEEPHOLE; }

/* A row's input sums b_ih + x W_ih^T [G H] from x [in]; T-GCN's gate g reads its own block of x. */
static void input_sums(const time_encoder *e, const float *x, const float *weight_ih_t, float *out)
{
    const int64_t GH = time_encoder_gates(e->kind) * e->hidden, H = e->hidden;
    if (e->kind != TIME_ENCODER_TGCN) {
        products_in_reference_order(x, weight_ih_t, e->in, GH, GH, e->bias_ih, out);
        return;
    }
    const int64_t block = e->in / 3;
    for (int gate = 0; gate < 3; gate++)
        products_in_reference_order(x + gate * block, weight_ih_t + gate * H, block, GH, H, e->bias_ih + gate * H,
                                    out + gate * H);
}

/* One lane's step of the GRU (ref_gru_cell_forward()); masked: the update-gate-only rule's state. */
static void gru_row_forward(const time_encoder *e, const forward_scratch *s, const float *a, const float *hp,
                            const float *masked, float *b, float *masked_b, float *h, float *cache)
{
    const int64_t H = e->hidden, GH = 3 * H;
    /* input and hidden sums each start from their bias */
    products_in_reference_order(hp, s->weight_hh_t, H, GH, GH, e->bias_hh, b);
    const float *bz = b; /* the update gate's hidden sum */
    if (masked) {        /* the paper's literal rule: only z reads the masked state */
        products_in_reference_order(masked, s->weight_hh_t, H, GH, GH, e->bias_hh, masked_b);
        bz = masked_b;
    }
    for (int64_t j = 0; j < H; j++)
        h[j] = gru_unit_forward(a[j], a[H + j], a[2 * H + j], b[j], bz[H + j], b[2 * H + j], &hp[j], H, cache + j);
}

/* One lane's step of T-GCN's GRU (ref_tgcn_cell_forward()): each gate's sum goes on from its input
 * part a (bias, then its block of x) through the state's columns; the candidate's through H * R. */
static void tgcn_row_forward(const time_encoder *e, const forward_scratch *s, const float *a, const float *hp,
                             float *b, float *h, float *cache)
{
    const int64_t H = e->hidden, GH = 3 * H;
    float *z = cache, *r = cache + H, *candidate = cache + 2 * H, *masked = cache + 3 * H;
    products_in_reference_order(hp, s->weight_hh_t, H, GH, 2 * H, a, b);
    for (int64_t j = 0; j < 2 * H; j++)
        cache[j] = gate_sigmoid(b[j]);
    for (int64_t k = 0; k < H; k++)
        masked[k] = hp[k] * r[k];
    products_in_reference_order(masked, s->weight_hh_t + 2 * H, H, GH, H, a + 2 * H, b + 2 * H);
    for (int64_t j = 0; j < H; j++) {
        candidate[j] = gate_tanh(b[2 * H + j]);
        h[j] = z[j] * hp[j] + (1.0f - z[j]) * candidate[j];
    }
}

/* One lane's step of the LSTM, with or without peepholes (ref_lstm_cell_forward(): (b_ih + x W_ih^T)
 * += h W_hh^T, then += b_hh; then the pointwise part). */
static void lstm_row_forward(const time_encoder *e, const forward_scratch *s, const float *a, const float *hp,
                             const float *cp, float *b, float *h, float *c, float *cache)
{
    const int64_t H = e->hidden, GH = 4 * H;
    products_in_reference_order(hp, s->weight_hh_t, H, GH, GH, NULL, b);
    for (int64_t o = 0; o < GH; o++) {
        b[o] = a[o] + b[o];
        b[o] += e->bias_hh[o];
    }
    if (e->kind == TIME_ENCODER_PEEPHOLE)
        for (int64_t j = 0; j < H; j++)
            h[j] = lstm_peephole_unit_forward(b[j], b[H + j], b[2 * H + j], b[3 * H + j], cp[j], e->peephole[0][j],
                                              e->peephole[1][j], e->peephole[2][j], H, cache + j, &c[j]);
    else
        for (int64_t j = 0; j < H; j++)
            h[j] = lstm_unit_forward(b[j], b[H + j], b[2 * H + j], b[3 * H + j], cp[j], H, cache + j, &c[j]);
}

int opt_fusion_forward(const time_encoder *encoder, const sequence_set *set, const fusion_plan *plan, const float *x,
                       float *h_out, fusion_tape *tape, tf_error *err)
{
    memset(tape, 0, sizeof *tape);
    if (time_encoder_check(encoder, err) != TF_OK || plan_matches(set, plan, err) != TF_OK)
        return err->code;
    const time_encoder_kind kind = encoder->kind;
    const int lstm = has_cell_state(kind);
    const fusion_mask_rule rule = plan->mask_rule;
    if (kind != TIME_ENCODER_GRU && rule == FUSION_MASK_UPDATE_GATE_ONLY)
        return tf_error_set(err, TF_ERR_INPUT, "fusion: the update-gate-only mask is defined for the GRU only");
    const int64_t H = encoder->hidden, in = encoder->in, G = time_encoder_gates(kind), GH = G * H;
    const int64_t rows = plan->computed_rows, lanes = plan->active[0];
    const int64_t in_columns = kind == TIME_ENCODER_TGCN ? in / 3 : in; /* weight_ih's columns */
    forward_scratch s = {0};
    tape->rows = rows;
    tape->x = tf_alloc((size_t)(rows * in), sizeof(float), "fusion inputs", err);
    tape->h_prev = tape->x ? tf_alloc((size_t)(rows * H), sizeof(float), "fusion carried states", err) : NULL;
    tape->h = tape->h_prev ? tf_alloc((size_t)(rows * H), sizeof(float), "fusion states", err) : NULL;
    tape->cache = tape->h ? tf_alloc((size_t)(rows * 4 * H), sizeof(float), "fusion gate cache", err) : NULL;
    int ok = tape->cache != NULL;
    if (ok && lstm) {
        tape->c_prev = tf_alloc((size_t)(rows * H), sizeof(float), "fusion carried cell states", err);
        tape->c = tape->c_prev ? tf_alloc((size_t)(rows * H), sizeof(float), "fusion cell states", err) : NULL;
        ok = tape->c != NULL;
    }
    ok = ok && (s.weight_ih_t = transposed(encoder->weight_ih, GH, in_columns, err)) &&
         (s.weight_hh_t = transposed(encoder->weight_hh, GH, H, err)) &&
         (s.input_part = tf_alloc((size_t)(rows * GH), sizeof(float), "fusion input sums", err)) &&
         (s.recurrent = tf_alloc((size_t)(lanes * GH), sizeof(float), "fusion recurrent sums", err));
    if (ok && rule == FUSION_MASK_UPDATE_GATE_ONLY)
        ok = (s.masked = tf_alloc((size_t)(lanes * H), sizeof(float), "fusion masked states", err)) &&
             (s.masked_recurrent = tf_alloc((size_t)(lanes * GH), sizeof(float), "fusion masked sums", err));
    if (!ok) {
        forward_scratch_free(&s);
        fusion_tape_free(tape);
        return err->code;
    }
    for (int64_t i = 0; i < set->total_steps; i++) /* padding rows keep x = 0 */
        memcpy(tape->x + plan->row_of_step[i] * in, x + i * in, (size_t)in * sizeof(float));
    /* Inputs do not depend on the state: every row's b_ih + x W_ih^T before the recurrence. */
#pragma omp parallel for if (rows * GH >= PARALLEL_MIN_FLOATS)
    for (int64_t row = 0; row < rows; row++)
        input_sums(encoder, tape->x + row * in, s.weight_ih_t, s.input_part + row * GH);

    for (int64_t t = 0; t < plan->num_steps; t++) {
        const int64_t n = plan->active[t], base = plan->step_offset[t];
        carried_state(plan, t, tape->h, H, rule, tape->h_prev, s.masked);
        if (lstm)
            carried_state(plan, t, tape->c, H, rule, tape->c_prev, NULL);
#pragma omp parallel for if (n * GH >= PARALLEL_MIN_FLOATS)
        for (int64_t l = 0; l < n; l++) {
            const int64_t row = base + l;
            const float *a = s.input_part + row * GH, *hp = tape->h_prev + row * H;
            float *b = s.recurrent + l * GH, *h = tape->h + row * H, *cache = tape->cache + row * 4 * H;
            if (kind == TIME_ENCODER_GRU)
                gru_row_forward(encoder, &s, a, hp, s.masked ? s.masked + l * H : NULL, b,
                                s.masked ? s.masked_recurrent + l * GH : NULL, h, cache);
            else if (kind == TIME_ENCODER_TGCN)
                tgcn_row_forward(encoder, &s, a, hp, b, h, cache);
            else
                lstm_row_forward(encoder, &s, a, hp, tape->c_prev + row * H, b, h, tape->c + row * H, cache);
        }
    }
    for (int64_t i = 0; i < set->total_steps; i++)
        memcpy(h_out + i * H, tape->h + plan->row_of_step[i] * H, (size_t)H * sizeof(float));
    forward_scratch_free(&s);
    return TF_OK;
}

/* Parameter gradients of all rows: each row's terms are the float products ref forms for one
 * step (d * x, d * h_prev, d; a peephole's d * c), summed in double as ref sums its steps; only the
 * order of the double sum differs (rows in plan order, threads' partial sums added at the end).
 * d_input, d_recurrent [computed_rows][G H]; step_of_row [computed_rows] (-1: padding). */
static int parameter_gradients(const time_encoder *encoder, const fusion_plan *plan, const fusion_tape *tape,
                               const float *d_input, const float *d_recurrent, const int64_t *step_of_row,
                               const time_encoder_gradients *gradients, tf_error *err)
{
    if (!gradients)
        return TF_OK;
    const int tgcn = encoder->kind == TIME_ENCODER_TGCN, peephole = encoder->kind == TIME_ENCODER_PEEPHOLE;
    const int64_t H = encoder->hidden, in = encoder->in, GH = time_encoder_gates(encoder->kind) * H;
    const int64_t columns = tgcn ? in / 3 : in, rows = plan->computed_rows;
    int64_t sizes[TIME_ENCODER_TENSORS], size = 0;
    time_encoder_sizes(encoder, sizes);
    for (int k = 0; k < TIME_ENCODER_TENSORS; k++)
        size += sizes[k];
    int threads = 1;
#ifdef _OPENMP
    threads = rows * GH >= PARALLEL_MIN_FLOATS ? omp_get_max_threads() : 1;
#endif
    double *sums = tf_alloc((size_t)(threads * size), sizeof(double), "fusion gradient sums", err);
    if (!sums)
        return err->code;
#pragma omp parallel num_threads(threads)
    {
        int thread = 0;
#ifdef _OPENMP
        thread = omp_get_thread_num();
#endif
        double *w_ih = sums + thread * size, *w_hh = w_ih + sizes[0], *b_ih = w_hh + sizes[1], *b_hh = b_ih + sizes[2];
        double *peep = b_hh + sizes[3]; /* [3][H] */
#pragma omp for schedule(static)
        for (int64_t row = 0; row < rows; row++) {
            if (step_of_row[row] < 0)
                continue; /* padding: its gradients are exact zeros */
            const float *x = tape->x + row * in, *hp = tape->h_prev + row * H;
            const float *di = d_input + row * GH, *dr = d_recurrent + row * GH;
            for (int64_t o = 0; o < GH; o++) {
                const float a = di[o], b = dr[o];
                /* T-GCN: gate o / H reads its own block of x, and its candidate reads H * R (cached) */
                const float *xo = tgcn ? x + (o / H) * columns : x;
                const float *state = tgcn && o >= 2 * H ? tape->cache + row * 4 * H + 3 * H : hp;
                for (int64_t k = 0; k < columns; k++)
                    w_ih[o * columns + k] += (double)(a * xo[k]);
                for (int64_t k = 0; k < H; k++)
                    w_hh[o * H + k] += (double)(b * state[k]);
                b_ih[o] += (double)a;
                if (sizes[3])
                    b_hh[o] += (double)b;
            }
            for (int64_t j = 0; peephole && j < H; j++) { /* i and f read c, o reads c' */
                const float cp = tape->c_prev[row * H + j], c = tape->c[row * H + j];
                peep[j] += (double)(float)((double)di[j] * cp);
                peep[H + j] += (double)(float)((double)di[H + j] * cp);
                peep[2 * H + j] += (double)(float)((double)di[3 * H + j] * c);
            }
        }
    }
    for (int thread = 1; thread < threads; thread++)
        for (int64_t i = 0; i < size; i++)
            sums[i] += sums[thread * size + i];
    float *targets[TIME_ENCODER_TENSORS] = {gradients->weight_ih,   gradients->weight_hh,   gradients->bias_ih,
                                            gradients->bias_hh,     gradients->peephole[0], gradients->peephole[1],
                                            gradients->peephole[2]};
    const double *sum = sums;
    for (int k = 0; k < TIME_ENCODER_TENSORS; k++) {
        if (targets[k])
            for (int64_t i = 0; i < sizes[k]; i++)
                targets[k][i] += (float)sum[i];
        sum += sizes[k];
    }
    free(sums);
    return TF_OK;
}

/* One row's GRU backward (ref_gru_cell_backward()): per unit j, the direct term g z into dh[j], then
 * every gate's row of W_hh into all of dh, in that order. g [H] dL/dh'; acc [H] gets dL/dh_prev. */
static void gru_row_backward(const time_encoder *e, const float *g, const float *hp, const float *cache, float *di,
                             float *dr, float *acc)
{
    const int64_t H = e->hidden;
    for (int64_t j = 0; j < H; j++) {
        gru_unit_backward(g[j], hp[j], cache + j, H, di + j, dr + j, &acc[j]);
        for (int gate = 0; gate < 3; gate++) {
            const float d = dr[gate * H + j], *w = e->weight_hh + (gate * H + j) * H;
            for (int64_t k = 0; k < H; k++)
                acc[k] += d * w[k];
        }
    }
}

/* One row's backward of T-GCN's GRU (ref_tgcn_cell_backward(), term for term): Z's and H~'s
 * pre-activation gradients, then what H * R received through the candidate's state columns
 * (into masked_grad [H]), then R's; dh: the direct term g Z, the path through H * R, then Z's and
 * R's state columns. di [3 H] gets the pre-activation gradients, acc [H] dL/dh_prev. */
static void tgcn_row_backward(const time_encoder *e, const float *g, const float *hp, const float *cache, float *di,
                              float *masked_grad, float *acc)
{
    const int64_t H = e->hidden;
    const float *z = cache, *r = cache + H, *candidate = cache + 2 * H;
    for (int64_t j = 0; j < H; j++) {
        di[j] = g[j] * (hp[j] - candidate[j]) * z[j] * (1.0f - z[j]);
        di[2 * H + j] = g[j] * (1.0f - z[j]) * (1.0f - candidate[j] * candidate[j]);
        masked_grad[j] = 0.0f;
    }
    for (int64_t j = 0; j < H; j++) {
        const float d = di[2 * H + j], *w = e->weight_hh + (2 * H + j) * H;
        for (int64_t k = 0; k < H; k++)
            masked_grad[k] += d * w[k];
    }
    for (int64_t k = 0; k < H; k++) {
        di[H + k] = masked_grad[k] * hp[k] * r[k] * (1.0f - r[k]);
        acc[k] += g[k] * z[k];
        acc[k] += masked_grad[k] * r[k];
    }
    for (int64_t unit = 0; unit < 2 * H; unit++) {
        const float d = di[unit], *w = e->weight_hh + unit * H;
        for (int64_t k = 0; k < H; k++)
            acc[k] += d * w[k];
    }
}

/* One row's LSTM backward, with or without peepholes (ref_lstm_cell_backward(): the pointwise part,
 * then dh = sum over o of dpre[o] W_hh[o], ref_linear_backward()'s order). carry_c [H] what c'
 * received from the next step; dc [H] gets dL/dc_prev. */
static void lstm_row_backward(const time_encoder *e, const float *g, const float *carry_c, const float *cp,
                              const float *c, const float *gates, float *dpre, float *dc, float *acc)
{
    const int64_t H = e->hidden, GH = 4 * H;
    memset(dc, 0, (size_t)H * sizeof(float));
    if (e->kind == TIME_ENCODER_PEEPHOLE)
        for (int64_t j = 0; j < H; j++)
            lstm_peephole_unit_backward(g[j], carry_c[j], cp[j], c[j], e->peephole[0][j], e->peephole[1][j],
                                        e->peephole[2][j], gates + j, H, dpre + j, &dc[j]);
    else
        for (int64_t j = 0; j < H; j++)
            lstm_unit_backward(g[j], carry_c[j], cp[j], c[j], gates + j, H, dpre + j, &dc[j]);
    for (int64_t o = 0; o < GH; o++) {
        const float d = dpre[o], *w = e->weight_hh + o * H;
        for (int64_t k = 0; k < H; k++)
            acc[k] += d * w[k];
    }
}

/* dx, row by row in the reference's order: the GRU adds every gate's term straight into dx (per unit,
 * gate after gate), T-GCN each unit's into its gate's block; the LSTMs form the sum over the gates
 * first (in sums [total_steps][in]) and add it once. d_input [computed_rows][G H]. */
static void input_gradients(const time_encoder *e, const sequence_set *set, const fusion_plan *plan,
                            const float *d_input, float *sums, float *dx)
{
    const int lstm = has_cell_state(e->kind), tgcn = e->kind == TIME_ENCODER_TGCN;
    const int64_t H = e->hidden, in = e->in, GH = time_encoder_gates(e->kind) * H, columns = tgcn ? in / 3 : in;
#pragma omp parallel for if (set->total_steps * in >= PARALLEL_MIN_FLOATS)
    for (int64_t i = 0; i < set->total_steps; i++) {
        const float *di = d_input + plan->row_of_step[i] * GH;
        float *acc = lstm ? sums + i * in : dx + i * in;
        for (int64_t j = 0; j < (lstm || tgcn ? GH : H); j++)
            for (int gate = 0; gate < (lstm || tgcn ? 1 : 3); gate++) {
                const int64_t unit = lstm || tgcn ? j : gate * H + j;
                const float d = di[unit], *w = e->weight_ih + unit * columns;
                float *target = tgcn ? acc + (unit / H) * columns : acc;
                for (int64_t k = 0; k < columns; k++)
                    target[k] += d * w[k];
            }
        if (lstm)
            for (int64_t k = 0; k < in; k++)
                dx[i * in + k] += acc[k];
    }
}

int opt_fusion_backward(const time_encoder *encoder, const sequence_set *set, const fusion_plan *plan,
                        const fusion_tape *tape, const float *dh_out, float *dx,
                        const time_encoder_gradients *gradients, tf_error *err)
{
    if (time_encoder_check(encoder, err) != TF_OK || plan_matches(set, plan, err) != TF_OK)
        return err->code;
    if (plan->mask_rule != FUSION_MASK_EVERY_GATE)
        return tf_error_set(err, TF_ERR_INPUT, "fusion: the backward exists only for the every-gate mask");
    if (tape->rows != plan->computed_rows || !tape->h)
        return tf_error_set(err, TF_ERR_INPUT, "fusion: the tape (%lld rows) is not this plan's (%lld rows)",
                            (long long)tape->rows, (long long)plan->computed_rows);
    const time_encoder_kind kind = encoder->kind;
    const int lstm = has_cell_state(kind);
    const int64_t H = encoder->hidden, in = encoder->in, GH = time_encoder_gates(kind) * H;
    const int64_t rows = plan->computed_rows, lanes = plan->active[0];
    float *dh_rows = tf_alloc((size_t)(rows * H), sizeof(float), "fusion output gradients", err);
    float *d_input = dh_rows ? tf_alloc((size_t)(rows * GH), sizeof(float), "fusion gate gradients", err) : NULL;
    /* the GRU: the hidden sums' gradients differ from the input ones in the candidate gate; the
     * others: both are the pre-activation gradient */
    float *d_recurrent = d_input && kind == TIME_ENCODER_GRU
                             ? tf_alloc((size_t)(rows * GH), sizeof(float), "fusion gate gradients", err)
                             : d_input;
    float *carry_h = d_recurrent ? tf_alloc((size_t)(lanes * H), sizeof(float), "fusion carried gradients", err) : NULL;
    float *carry_c = carry_h ? tf_alloc((size_t)(lanes * H), sizeof(float), "fusion carried gradients", err) : NULL;
    float *step = carry_c ? tf_alloc((size_t)(lanes * H), sizeof(float), "fusion step gradients", err) : NULL;
    float *dh_prev = step ? tf_alloc((size_t)(lanes * H), sizeof(float), "fusion step gradients", err) : NULL;
    /* dL/dc_prev of the LSTMs; T-GCN's scratch for the gradient of H * R */
    float *dc_prev = dh_prev ? tf_alloc((size_t)(lanes * H), sizeof(float), "fusion step gradients", err) : NULL;
    int64_t *step_of_row = dc_prev ? tf_alloc((size_t)rows, sizeof(int64_t), "fusion row steps", err) : NULL;
    int status = step_of_row ? TF_OK : err->code;
    if (status == TF_OK) {
        for (int64_t row = 0; row < rows; row++)
            step_of_row[row] = -1;
        for (int64_t i = 0; i < set->total_steps; i++) { /* padding rows get no loss gradient */
            step_of_row[plan->row_of_step[i]] = i;
            memcpy(dh_rows + plan->row_of_step[i] * H, dh_out + i * H, (size_t)H * sizeof(float));
        }
    }
    for (int64_t t = plan->num_steps - 1; t >= 0 && status == TF_OK; t--) {
        const int64_t n = plan->active[t], base = plan->step_offset[t];
#pragma omp parallel for if (n * GH >= PARALLEL_MIN_FLOATS)
        for (int64_t l = 0; l < n; l++) {
            const int64_t row = base + l;
            /* dL/dh of step t: the loss's term plus what step t + 1 sent back (lanes that were
             * not running at t + 1 have carried nothing yet: zero) */
            float *g = step + l * H, *acc = dh_prev + l * H;
            for (int64_t j = 0; j < H; j++)
                g[j] = dh_rows[row * H + j] + carry_h[l * H + j];
            memset(acc, 0, (size_t)H * sizeof(float));
            const float *hp = tape->h_prev + row * H, *cache = tape->cache + row * 4 * H;
            float *di = d_input + row * GH;
            if (kind == TIME_ENCODER_GRU)
                gru_row_backward(encoder, g, hp, cache, di, d_recurrent + row * GH, acc);
            else if (kind == TIME_ENCODER_TGCN)
                tgcn_row_backward(encoder, g, hp, cache, di, dc_prev + l * H, acc);
            else
                lstm_row_backward(encoder, g, carry_c + l * H, tape->c_prev + row * H, tape->c + row * H, cache, di,
                                  dc_prev + l * H, acc);
        }
        /* Through the mask: where the state was reset, the gradient belongs to the zero
         * initial state and stops, exactly as in the reference. */
        for (int64_t l = 0; l < n; l++) {
            const int reset = plan->reset[base + l];
            for (int64_t j = 0; j < H; j++) {
                carry_h[l * H + j] = reset ? 0.0f : dh_prev[l * H + j];
                carry_c[l * H + j] = reset || !lstm ? 0.0f : dc_prev[l * H + j];
            }
        }
    }
    float *sums = NULL;
    if (status == TF_OK && dx && lstm) {
        sums = tf_alloc((size_t)(set->total_steps * in), sizeof(float), "fusion input gradient sums", err);
        status = sums ? TF_OK : err->code;
    }
    if (status == TF_OK && dx)
        input_gradients(encoder, set, plan, d_input, sums, dx);
    free(sums);
    if (status == TF_OK)
        status = parameter_gradients(encoder, plan, tape, d_input, d_recurrent, step_of_row, gradients, err);
    if (d_recurrent != d_input)
        free(d_recurrent);
    free(dh_rows), free(d_input), free(carry_h), free(carry_c), free(step), free(dh_prev), free(dc_prev);
    free(step_of_row);
    return status;
}

/* ---- spatial fusion ---------------------------------------------------------------------------- */

void fusion_groups_free(fusion_groups *groups)
{
    free(groups->offsets), free(groups->chunks), free(groups->load_bytes);
    memset(groups, 0, sizeof *groups);
}

/* |a ∩ b| for two increasing id lists a [na] and b [nb]. */
static int64_t shared_count(const int32_t *a, int64_t na, const int32_t *b, int64_t nb)
{
    int64_t i = 0, j = 0, shared = 0;
    while (i < na && j < nb) {
        if (a[i] < b[j])
            i++;
        else if (a[i] > b[j])
            j++;
        else
            shared++, i++, j++;
    }
    return shared;
}

/* a ∪ b for two increasing id lists a [na] and b [nb], into out [na + nb]; returns its length. */
static int64_t union_of(const int32_t *a, int64_t na, const int32_t *b, int64_t nb, int32_t *out)
{
    int64_t i = 0, j = 0, k = 0;
    while (i < na || j < nb) {
        if (j == nb || (i < na && a[i] < b[j]))
            out[k++] = a[i++];
        else if (i == na || b[j] < a[i])
            out[k++] = b[j++];
        else
            out[k++] = a[i++], j++;
    }
    return k;
}

int opt_fusion_spatial_groups(const snapshot_seq *seq, const chunk_set *chunks, int64_t memory_cap_bytes,
                              fusion_groups *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    if (memory_cap_bytes <= 0)
        return tf_error_set(err, TF_ERR_INPUT, "spatial fusion: the memory cap must be positive, got %lld bytes",
                            (long long)memory_cap_bytes);
    const int64_t C = chunks->count;
    const int64_t row_bytes = seq->num_snapshots * seq->feature_width * (int64_t)sizeof(float);
    int32_t **members = tf_alloc((size_t)C, sizeof *members, "fusion group vertices", err);
    int64_t *size = members ? tf_alloc((size_t)C, sizeof *size, "fusion group sizes", err) : NULL;
    int64_t *group_of = size ? tf_alloc((size_t)C, sizeof *group_of, "fusion chunk groups", err) : NULL;
    int64_t *shared = group_of ? tf_alloc((size_t)(C * C), sizeof *shared, "fusion shared loads", err) : NULL;
    uint8_t *alive = shared ? tf_alloc((size_t)C, 1, "fusion groups", err) : NULL;
    int status = alive ? TF_OK : (err->code ? err->code : TF_ERR_INPUT);
    for (int64_t c = 0; c < C && status == TF_OK; c++) {
        status = ref_fusion_chunk_vertices(seq, chunks, c, &members[c], &size[c], err);
        group_of[c] = c;
        alive[c] = 1;
        out->unfused_bytes += size[c] * row_bytes;
    }
    /* R(a, b): vertices both groups load (each costs row_bytes twice unfused) */
    for (int64_t a = 0; a < C && status == TF_OK; a++)
        for (int64_t b = a + 1; b < C; b++)
            shared[a * C + b] = shared_count(members[a], size[a], members[b], size[b]);
    while (status == TF_OK) {
        int64_t best_a = -1, best_b = -1, best = 0;
        for (int64_t a = 0; a < C; a++)
            for (int64_t b = a + 1; alive[a] && b < C; b++) {
                if (!alive[b] || shared[a * C + b] <= best)
                    continue;
                if ((size[a] + size[b] - shared[a * C + b]) * row_bytes > memory_cap_bytes)
                    continue;
                best = shared[a * C + b], best_a = a, best_b = b;
            }
        if (best_a < 0)
            break;
        int32_t *merged = tf_alloc((size_t)(size[best_a] + size[best_b]), sizeof *merged, "fusion group", err);
        if (!merged) {
            status = err->code;
            break;
        }
        int64_t merged_size = union_of(members[best_a], size[best_a], members[best_b], size[best_b], merged);
        free(members[best_a]), free(members[best_b]);
        members[best_a] = merged, members[best_b] = NULL;
        size[best_a] = merged_size, size[best_b] = 0;
        alive[best_b] = 0;
        for (int64_t c = 0; c < C; c++)
            if (group_of[c] == best_b)
                group_of[c] = best_a;
        for (int64_t other = 0; other < C; other++) {
            if (!alive[other] || other == best_a)
                continue;
            int64_t lo = other < best_a ? other : best_a, hi = other < best_a ? best_a : other;
            shared[lo * C + hi] = shared_count(members[lo], size[lo], members[hi], size[hi]);
        }
    }
    if (status == TF_OK) {
        int64_t groups = 0;
        for (int64_t g = 0; g < C; g++)
            groups += alive[g];
        out->offsets = tf_alloc((size_t)groups + 1, sizeof *out->offsets, "fusion group offsets", err);
        out->chunks = out->offsets ? tf_alloc((size_t)C, sizeof *out->chunks, "fusion group chunks", err) : NULL;
        out->load_bytes = out->chunks ? tf_alloc((size_t)groups, sizeof *out->load_bytes, "fusion loads", err) : NULL;
        status = out->load_bytes ? TF_OK : err->code;
        if (status == TF_OK) {
            out->count = groups;
            int64_t g = 0, k = 0;
            for (int64_t leader = 0; leader < C; leader++) {
                if (!alive[leader])
                    continue;
                for (int64_t c = 0; c < C; c++)
                    if (group_of[c] == leader)
                        out->chunks[k++] = c;
                out->load_bytes[g] = size[leader] * row_bytes;
                out->fused_bytes += out->load_bytes[g];
                out->offsets[++g] = k;
            }
        }
    }
    for (int64_t c = 0; members && c < C; c++)
        free(members[c]);
    free(members), free(size), free(group_of), free(shared), free(alive);
    if (status != TF_OK)
        fusion_groups_free(out);
    return status;
}

int opt_fusion_load_group(const snapshot_seq *seq, const chunk_set *chunks, const fusion_groups *groups,
                          int64_t group, chunk_load *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    if (group < 0 || group >= groups->count)
        return tf_error_set(err, TF_ERR_INPUT, "spatial fusion: group %lld does not exist (there are %lld)",
                            (long long)group, (long long)groups->count);
    uint8_t *needed = tf_alloc((size_t)seq->num_nodes, 1, "fusion group membership", err);
    if (!needed)
        return err->code;
    int status = TF_OK;
    for (int64_t k = groups->offsets[group]; k < groups->offsets[group + 1] && status == TF_OK; k++) {
        int32_t *vertices;
        int64_t count;
        status = ref_fusion_chunk_vertices(seq, chunks, groups->chunks[k], &vertices, &count, err);
        for (int64_t i = 0; status == TF_OK && i < count; i++)
            needed[vertices[i]] = 1;
        if (status == TF_OK)
            free(vertices);
    }
    if (status == TF_OK)
        status = fusion_marked_vertices(needed, seq->num_nodes, &out->vertices, &out->num_vertices, err);
    free(needed);
    /* the same copy as ref_fusion_load_chunk(), once per vertex of the union */
    return status == TF_OK ? fusion_load_features(seq, out, err) : status;
}

int opt_fusion_chunk_rows(const snapshot_seq *seq, const chunk_set *chunks, int64_t chunk,
                          const chunk_load *group_load, int64_t **out_rows, int64_t *out_count, tf_error *err)
{
    *out_rows = NULL;
    *out_count = 0;
    int32_t *vertices;
    int64_t count;
    if (ref_fusion_chunk_vertices(seq, chunks, chunk, &vertices, &count, err) != TF_OK)
        return err->code;
    int64_t *rows = tf_alloc((size_t)count, sizeof *rows, "fusion chunk rows", err);
    int status = rows ? TF_OK : err->code;
    for (int64_t i = 0; status == TF_OK && i < count; i++) {
        /* binary search: the group's vertices are increasing */
        int64_t lo = 0, hi = group_load->num_vertices;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (group_load->vertices[mid] < vertices[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == group_load->num_vertices || group_load->vertices[lo] != vertices[i])
            status = tf_error_set(err, TF_ERR_INPUT, "spatial fusion: chunk %lld needs vertex %d, which its group's "
                                  "load lacks", (long long)chunk, vertices[i]);
        else
            rows[i] = lo;
    }
    free(vertices);
    if (status != TF_OK) {
        free(rows);
        return status;
    }
    *out_rows = rows;
    *out_count = count;
    return TF_OK;
}
