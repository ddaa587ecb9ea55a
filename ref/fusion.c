#include "ref/fusion.h"

#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"
#include "ref/nn/recurrent.h"

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
 * into s->cache, outputs also into h_out when given. x [length][in], h_out [length][H] or NULL. */
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
