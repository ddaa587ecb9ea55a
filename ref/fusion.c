#include "ref/fusion.h"

#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"
#include "ref/nn/layers.h"
#include "ref/nn/recurrent.h"

int64_t time_encoder_gates(time_encoder_kind kind)
{
    return kind == TIME_ENCODER_LSTM || kind == TIME_ENCODER_PEEPHOLE ? 4 : 3;
}

void time_encoder_sizes(const time_encoder *e, int64_t *sizes)
{
    const int64_t H = e->hidden, GH = time_encoder_gates(e->kind) * H;
    const int tgcn = e->kind == TIME_ENCODER_TGCN, peephole = e->kind == TIME_ENCODER_PEEPHOLE;
    const int64_t all[TIME_ENCODER_TENSORS] = {GH * (tgcn ? e->in / 3 : e->in), GH * H, GH, tgcn ? 0 : GH,
                                               peephole ? H : 0, peephole ? H : 0, peephole ? H : 0};
    memcpy(sizes, all, sizeof all);
}

int time_encoder_check(const time_encoder *encoder, tf_error *err)
{
    if (encoder->kind < TIME_ENCODER_GRU || encoder->kind > TIME_ENCODER_PEEPHOLE)
        return tf_error_set(err, TF_ERR_INPUT, "time encoder: unknown kind %d", (int)encoder->kind);
    if (encoder->in < 1 || encoder->hidden < 1)
        return tf_error_set(err, TF_ERR_INPUT, "time encoder: input width %lld and hidden width %lld must be >= 1",
                            (long long)encoder->in, (long long)encoder->hidden);
    if (encoder->kind == TIME_ENCODER_TGCN && encoder->in % 3 != 0)
        return tf_error_set(err, TF_ERR_INPUT, "time encoder: T-GCN's input is three gate blocks, but its width "
                            "%lld is not a multiple of 3", (long long)encoder->in);
    int64_t sizes[TIME_ENCODER_TENSORS];
    time_encoder_sizes(encoder, sizes);
    const float *tensors[TIME_ENCODER_TENSORS] = {encoder->weight_ih,   encoder->weight_hh,   encoder->bias_ih,
                                                  encoder->bias_hh,     encoder->peephole[0], encoder->peephole[1],
                                                  encoder->peephole[2]};
    for (int k = 0; k < TIME_ENCODER_TENSORS; k++)
        if (sizes[k] > 0 && !tensors[k])
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
    const int64_t H = e->hidden;
    int64_t sizes[TIME_ENCODER_TENSORS];
    time_encoder_sizes(e, sizes);
    s->grad_size = 0;
    for (int k = 0; k < TIME_ENCODER_TENSORS; k++)
        s->grad_size += sizes[k];
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
 * into s->cache, outputs also into h_out when given. x [length][in], h_out [length][H] or NULL. */
static void sequence_forward(const time_encoder *e, const float *x, int64_t length, sequence_scratch *s, float *h_out)
{
    const int64_t H = e->hidden, in = e->in;
    for (int64_t p = 0; p < length; p++) {
        const float *h_prev = p == 0 ? s->zero : s->h + (p - 1) * H;
        const float *c_prev = p == 0 ? s->zero : s->c + (p - 1) * H;
        float *cache = s->cache + p * 4 * H;
        switch (e->kind) {
        case TIME_ENCODER_GRU:
            ref_gru_cell_forward(x + p * in, h_prev, e->weight_ih, e->weight_hh, e->bias_ih, e->bias_hh, 1, in, H,
                                 s->h + p * H, cache);
            break;
        case TIME_ENCODER_TGCN:
            ref_tgcn_cell_forward(x + p * in, h_prev, e->weight_ih, e->weight_hh, e->bias_ih, in / 3, H, s->h + p * H,
                                  cache);
            break;
        case TIME_ENCODER_LSTM:
            ref_lstm_cell_forward(x + p * in, h_prev, c_prev, e->weight_ih, e->weight_hh, e->bias_ih, e->bias_hh, 1,
                                  in, H, s->h + p * H, s->c + p * H, s->work, cache);
            break;
        case TIME_ENCODER_PEEPHOLE: {
            /* torch's four tensors make the sums; the peepholes enter the pointwise part */
            const lstm_peepholes peepholes = {e->peephole[0], e->peephole[1], e->peephole[2]};
            ref_linear_forward(x + p * in, e->weight_ih, e->bias_ih, 1, in, 4 * H, s->work);
            ref_linear_accumulate(h_prev, e->weight_hh, 1, H, 4 * H, s->work);
            ref_add_bias(s->work, e->bias_hh, 1, 4 * H);
            ref_lstm_peephole_forward(s->work, &peepholes, c_prev, 1, H, s->c + p * H, s->h + p * H, cache);
            break;
        }
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

/* Step p's backward of one sequence (forward states in s): from s->step_h (dL/dh at p) and s->carry_c
 * (dL/dc from p + 1), dL/dh_prev into s->carry_h (zeroed by the caller) and dL/dc_prev into s->carry_c;
 * adds into dx [in] (may be NULL) and the step's gradients `step` [TIME_ENCODER_TENSORS] (zeroed). */
static void step_backward(const time_encoder *e, const float *x, int64_t p, sequence_scratch *s, float *dx,
                          float *const *step)
{
    const int64_t H = e->hidden, in = e->in;
    const float *h_prev = p == 0 ? s->zero : s->h + (p - 1) * H, *c_prev = p == 0 ? s->zero : s->c + (p - 1) * H;
    const float *cache = s->cache + p * 4 * H;
    switch (e->kind) {
    case TIME_ENCODER_GRU:
        ref_gru_cell_backward(x, h_prev, e->weight_ih, e->weight_hh, cache, s->step_h, 1, in, H, s->work, dx,
                              s->carry_h, step[0], step[1], step[2], step[3]);
        break;
    case TIME_ENCODER_TGCN:
        ref_tgcn_cell_backward(x, h_prev, e->weight_ih, e->weight_hh, cache, s->step_h, in / 3, H, s->work, dx,
                               s->carry_h, step[0], step[1], step[2]);
        break;
    case TIME_ENCODER_LSTM:
        memset(s->step_c, 0, (size_t)H * sizeof(float));
        ref_lstm_cell_backward(x, h_prev, c_prev, e->weight_ih, e->weight_hh, s->c + p * H, cache, s->step_h,
                               s->carry_c, 1, in, H, s->work, dx, s->carry_h, s->step_c, step[0], step[1], step[2],
                               step[3]);
        memcpy(s->carry_c, s->step_c, (size_t)H * sizeof(float));
        break;
    case TIME_ENCODER_PEEPHOLE: {
        const lstm_peepholes peepholes = {e->peephole[0], e->peephole[1], e->peephole[2]};
        memset(s->step_c, 0, (size_t)H * sizeof(float));
        ref_lstm_peephole_backward(cache, &peepholes, c_prev, s->c + p * H, s->step_h, s->carry_c, 1, H, s->work,
                                   s->step_c, step + 4);
        ref_linear_backward(x, e->weight_ih, s->work, 1, in, 4 * H, dx, step[0], step[2]);
        ref_linear_backward(h_prev, e->weight_hh, s->work, 1, H, 4 * H, s->carry_h, step[1], step[3]);
        memcpy(s->carry_c, s->step_c, (size_t)H * sizeof(float));
        break;
    }
    }
}

int ref_fusion_backward(const time_encoder *encoder, const sequence_set *set, const float *x, const float *dh_out,
                        float *dx, const time_encoder_gradients *gradients, tf_error *err)
{
    if (time_encoder_check(encoder, err) != TF_OK)
        return err->code;
    sequence_scratch s;
    if (scratch_alloc(&s, encoder, set->max_length, 1, err) != TF_OK)
        return err->code;
    const int64_t H = encoder->hidden, in = encoder->in;
    int64_t sizes[TIME_ENCODER_TENSORS];
    time_encoder_sizes(encoder, sizes);
    float *step[TIME_ENCODER_TENSORS]; /* one step's gradient of each tensor, laid end to end in step_grad */
    step[0] = s.step_grad;
    for (int k = 1; k < TIME_ENCODER_TENSORS; k++)
        step[k] = step[k - 1] + sizes[k - 1];
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
            memset(s.step_grad, 0, (size_t)s.grad_size * sizeof(float));
            memset(s.carry_h, 0, (size_t)H * sizeof(float)); /* becomes dL/dh_prev */
            step_backward(encoder, xq + p * in, p, &s, dx ? dx + (first + p) * in : NULL, step);
            for (int64_t i = 0; i < s.grad_size; i++)
                s.sum_grad[i] += s.step_grad[i];
            /* at p == 0 the carry is the gradient of the zero initial state: dropped */
        }
    }
    float *targets[TIME_ENCODER_TENSORS] = {NULL};
    if (gradients) {
        float *given[TIME_ENCODER_TENSORS] = {gradients->weight_ih,   gradients->weight_hh,   gradients->bias_ih,
                                              gradients->bias_hh,     gradients->peephole[0], gradients->peephole[1],
                                              gradients->peephole[2]};
        memcpy(targets, given, sizeof given);
    }
    const double *sum = s.sum_grad;
    for (int k = 0; k < TIME_ENCODER_TENSORS; k++) {
        if (targets[k])
            for (int64_t i = 0; i < sizes[k]; i++)
                targets[k][i] += (float)sum[i];
        sum += sizes[k];
    }
    scratch_free(&s);
    return TF_OK;
}
