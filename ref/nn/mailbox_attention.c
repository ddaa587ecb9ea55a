/* APAN's memory updater: attention over a mailbox (mailbox_attention.h has the math). */
#include "ref/nn/mailbox_attention.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"
#include "ref/nn/attention.h"
#include "ref/nn/layers.h"

void mailbox_attention_tape_free(mailbox_attention_tape *tape)
{
    float *arrays[] = {tape->query,      tape->key,         tape->value,  tape->score,    tape->alpha,
                       tape->normalized, tape->inverse_std, tape->normed, tape->activated};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++)
        free(arrays[i]);
    memset(tape, 0, sizeof *tape);
}

/* One row, one head: alpha = softmax over the M mails of LeakyReLU(<q, K_i>), and
 * aggregate += sum_i alpha_i V_i (head slices of width w, rows of K and V d apart). */
static void attend_head(const float *q, const float *key, const float *value, int64_t mails, int64_t d, int64_t w,
                        int64_t heads, float *score, float *alpha, float *aggregate)
{
    float largest = -INFINITY;
    for (int64_t i = 0; i < mails; i++) {
        float dot = 0.0f;
        for (int64_t j = 0; j < w; j++)
            dot += q[j] * key[i * d + j];
        ref_leaky_relu_forward(&dot, 1, ATTENTION_LEAKY_SLOPE, &score[i * heads]);
        largest = fmaxf(largest, score[i * heads]);
    }
    float total = 0.0f;
    for (int64_t i = 0; i < mails; i++) {
        alpha[i * heads] = expf(score[i * heads] - largest);
        total += alpha[i * heads];
    }
    for (int64_t i = 0; i < mails; i++) {
        alpha[i * heads] /= total;
        for (int64_t j = 0; j < w; j++)
            aggregate[j] += alpha[i * heads] * value[i * d + j];
    }
}

int mailbox_attention_tape_alloc(const mailbox_attention *a, int64_t rows, mailbox_attention_tape *tape,
                                 tf_error *err)
{
    memset(tape, 0, sizeof *tape);
    const int64_t N = rows, M = a->mails, d = a->width, heads = a->heads;
    tape->rows = N;
    if (!(tape->query = tf_alloc((size_t)(N * d), sizeof(float), "mailbox queries", err)) ||
        !(tape->key = tf_alloc((size_t)(N * M * d), sizeof(float), "mailbox keys", err)) ||
        !(tape->value = tf_alloc((size_t)(N * M * d), sizeof(float), "mailbox values", err)) ||
        !(tape->score = tf_alloc((size_t)(N * M * heads), sizeof(float), "mailbox scores", err)) ||
        !(tape->alpha = tf_alloc((size_t)(N * M * heads), sizeof(float), "mailbox weights", err)) ||
        !(tape->normalized = tf_alloc((size_t)(N * d), sizeof(float), "mailbox outputs", err)) ||
        !(tape->inverse_std = tf_alloc((size_t)N, sizeof(float), "mailbox outputs", err)) ||
        !(tape->normed = tf_alloc((size_t)(N * d), sizeof(float), "mailbox outputs", err)) ||
        !(tape->activated = tf_alloc((size_t)(N * d), sizeof(float), "mailbox outputs", err))) {
        mailbox_attention_tape_free(tape);
        return TF_ERR_INPUT;
    }
    return TF_OK;
}

void ref_mailbox_attention_forward(const kernels *k, const mailbox_attention *a, const float *node,
                                   const float *mail_input, mailbox_attention_tape *tape, float *out)
{
    const int64_t N = tape->rows, M = a->mails, d = a->width, din = a->mail_width, heads = a->heads, w = d / heads;
    tape->node = node;
    tape->mail_input = mail_input;
    k->linear_forward(node, a->query_weight->value.data, a->query_bias->value.data, N, d, d, tape->query);
    k->linear_forward(mail_input, a->key_weight->value.data, a->key_bias->value.data, N * M, din, d, tape->key);
    k->linear_forward(mail_input, a->value_weight->value.data, a->value_bias->value.data, N * M, din, d, tape->value);
    /* r = attention + s, built in `out` before the LayerNorm reads it */
    for (int64_t n = 0; n < N; n++) {
        float *residual = out + n * d, *aggregate = tape->normed + n * d; /* normed: scratch until the LayerNorm */
        memset(aggregate, 0, (size_t)d * sizeof(float));
        for (int64_t h = 0; h < heads; h++)
            attend_head(tape->query + n * d + h * w, tape->key + n * M * d + h * w, tape->value + n * M * d + h * w,
                        M, d, w, heads, tape->score + n * M * heads + h, tape->alpha + n * M * heads + h,
                        aggregate + h * w);
        for (int64_t j = 0; j < d; j++)
            residual[j] = aggregate[j] + node[n * d + j];
    }
    ref_layer_norm_forward(out, a->norm_weight->value.data, a->norm_bias->value.data, N, d, ATTENTION_NORM_EPSILON,
                           tape->normed, tape->normalized, tape->inverse_std);
    k->linear_forward(tape->normed, a->mlp_weight->value.data, a->mlp_bias->value.data, N, d, d, out);
    k->relu_forward(out, N * d, out);
    memcpy(tape->activated, out, (size_t)(N * d) * sizeof(float));
}

/* One row, one head, backward: from daggregate (the head's slice of dr) into dvalue, dkey
 * and dquery (added into), through the softmax and the LeakyReLU; dalpha [M] is scratch. */
static void attend_head_backward(const float *q, const float *key, const float *value, const float *score,
                                 const float *alpha, const float *daggregate, int64_t mails, int64_t d, int64_t w,
                                 int64_t heads, float *dalpha, float *dquery, float *dkey, float *dvalue)
{
    float weighted = 0.0f; /* sum_i alpha_i dalpha_i, the softmax's correction */
    for (int64_t i = 0; i < mails; i++) {
        float sum = 0.0f;
        for (int64_t j = 0; j < w; j++) {
            sum += daggregate[j] * value[i * d + j];
            dvalue[i * d + j] += alpha[i * heads] * daggregate[j];
        }
        dalpha[i] = sum;
        weighted += alpha[i * heads] * sum;
    }
    for (int64_t i = 0; i < mails; i++) {
        float dscore = alpha[i * heads] * (dalpha[i] - weighted), ddot = 0.0f;
        ref_leaky_relu_backward(&score[i * heads], &dscore, 1, ATTENTION_LEAKY_SLOPE, &ddot);
        for (int64_t j = 0; j < w; j++) {
            dquery[j] += ddot * key[i * d + j];
            dkey[i * d + j] += ddot * q[j];
        }
    }
}

int ref_mailbox_attention_backward(const kernels *k, const mailbox_attention *a, const mailbox_attention_tape *tape,
                                   const float *dout, float *dmail_input, tf_error *err)
{
    const int64_t N = tape->rows, M = a->mails, d = a->width, din = a->mail_width, heads = a->heads, w = d / heads;
    float *dpreactivation = tf_alloc((size_t)(N * d), sizeof(float), "mailbox gradients", err);
    float *dnormed = dpreactivation ? tf_alloc((size_t)(N * d), sizeof(float), "mailbox gradients", err) : NULL;
    float *dresidual = dnormed ? tf_alloc((size_t)(N * d), sizeof(float), "mailbox gradients", err) : NULL;
    float *dquery = dresidual ? tf_alloc((size_t)(N * d), sizeof(float), "mailbox gradients", err) : NULL;
    float *dkey = dquery ? tf_alloc((size_t)(N * M * d), sizeof(float), "mailbox gradients", err) : NULL;
    float *dvalue = dkey ? tf_alloc((size_t)(N * M * d), sizeof(float), "mailbox gradients", err) : NULL;
    float *dalpha = dvalue ? tf_alloc((size_t)M, sizeof(float), "mailbox gradients", err) : NULL;
    int status = dalpha ? TF_OK : TF_ERR_INPUT;
    if (status == TF_OK) {
        /* s' = ReLU(W_mlp LayerNorm(r) + b): the output block, back to dr */
        k->relu_backward(tape->activated, dout, N * d, dpreactivation);
        k->linear_backward_sums(tape->normed, a->mlp_weight->value.data, dpreactivation, N, d, d, dnormed,
                                a->mlp_weight->sums, a->mlp_bias->sums);
        ref_layer_norm_backward(tape->normalized, tape->inverse_std, a->norm_weight->value.data, dnormed, N, d,
                                dresidual, a->norm_weight->sums, a->norm_bias->sums);
        /* r = attention + s: the attention gets dr (s is data and gets nothing) */
        for (int64_t n = 0; n < N; n++)
            for (int64_t h = 0; h < heads; h++) {
                const int64_t row = n * d + h * w, rows = n * M * d + h * w, weights = n * M * heads + h;
                attend_head_backward(tape->query + row, tape->key + rows, tape->value + rows, tape->score + weights,
                                     tape->alpha + weights, dresidual + row, M, d, w, heads, dalpha, dquery + row,
                                     dkey + rows, dvalue + rows);
            }
        k->linear_backward_sums(tape->node, a->query_weight->value.data, dquery, N, d, d, NULL,
                                a->query_weight->sums, a->query_bias->sums);
        k->linear_backward_sums(tape->mail_input, a->key_weight->value.data, dkey, N * M, din, d, dmail_input,
                                a->key_weight->sums, a->key_bias->sums);
        k->linear_backward_sums(tape->mail_input, a->value_weight->value.data, dvalue, N * M, din, d, dmail_input,
                                a->value_weight->sums, a->value_bias->sums);
    }
    free(dpreactivation);
    free(dnormed);
    free(dresidual);
    free(dquery);
    free(dkey);
    free(dvalue);
    free(dalpha);
    return status;
}
