#include "ref/nn/self_attention.h"

#include <math.h>
#include <string.h>

#include "ref/nn/kernels.h"

float self_attention_position(int64_t position, int64_t i, int64_t width)
{
    const double angle = (double)position / pow(10000.0, (double)(i - i % 2) / (double)width);
    return (float)(i % 2 == 0 ? sin(angle) : cos(angle));
}

int self_attention_check_starts(const int32_t *starts, int64_t count, int64_t lanes, tf_error *err)
{
    for (int64_t t = 0; starts && t < count; t++)
        for (int64_t v = 0; v < lanes; v++) {
            const int32_t start = starts[t * lanes + v];
            const int continues = t > 0 && start == starts[(t - 1) * lanes + v];
            if (start < 0 || start > t || (start != t && !continues))
                return tf_error_set(err, TF_ERR_INPUT,
                                    "self-attention: lane %lld, position %lld starts its sequence at %d; expected "
                                    "%lld (a new one) or the start of position %lld",
                                    (long long)v, (long long)t, (int)start, (long long)t, (long long)t - 1);
        }
    return TF_OK;
}

static int64_t start_of(const int32_t *starts, int64_t t, int64_t lanes, int64_t v)
{
    return starts ? starts[t * lanes + v] : 0;
}

/* One lane's attention at position t: beta_t. over start .. t (into weights, a row of [T]) and
 * y = sum beta v_s (into out [W], which holds the residual u_t already). */
static void attend(const self_attention_tape *tape, int64_t width, int64_t v, int64_t t, float *weights,
                   float *out)
{
    const int64_t lanes = tape->lanes, start = start_of(tape->starts, t, lanes, v);
    const float scale = (float)(1.0 / sqrt((double)width));
    const float *q = tape->query + (t * lanes + v) * width;
    float largest = -INFINITY;
    for (int64_t s = start; s <= t; s++) {
        const float *key = tape->key + (s * lanes + v) * width;
        float dot = 0;
        for (int64_t c = 0; c < width; c++)
            dot += q[c] * key[c];
        weights[s] = dot * scale;
        largest = fmaxf(largest, weights[s]);
    }
    double total = 0;
    for (int64_t s = start; s <= t; s++) {
        weights[s] = expf(weights[s] - largest);
        total += weights[s];
    }
    for (int64_t s = start; s <= t; s++) {
        weights[s] = (float)(weights[s] / total);
        const float *value = tape->value + (s * lanes + v) * width;
        for (int64_t c = 0; c < width; c++)
            out[c] += weights[s] * value[c];
    }
}

int ref_self_attention_forward(const kernels *k, const self_attention *a, int64_t count, int64_t lanes,
                                   const float *z, const int32_t *starts, workspace *scratch,
                                   self_attention_tape *tape, float *out, tf_error *err)
{
    const int64_t w = a->width, rows = count * lanes;
    memset(tape, 0, sizeof *tape);
    if (self_attention_check_starts(starts, count, lanes, err) != TF_OK)
        return TF_ERR_INPUT;
    tape->count = count;
    tape->lanes = lanes;
    tape->starts = starts;
    if (!(tape->inputs = workspace_alloc(scratch, (size_t)(rows * w), sizeof(float), "temporal attention tape", err)) ||
        !(tape->query = workspace_zeroed(scratch, (size_t)(rows * w), sizeof(float), "temporal attention tape", err)) ||
        !(tape->key = workspace_zeroed(scratch, (size_t)(rows * w), sizeof(float), "temporal attention tape", err)) ||
        !(tape->value = workspace_zeroed(scratch, (size_t)(rows * w), sizeof(float), "temporal attention tape", err)) ||
        !(tape->weights =
              workspace_zeroed(scratch, (size_t)(lanes * count * count), sizeof(float), "temporal attention tape", err)))
        return TF_ERR_INPUT;
    for (int64_t t = 0; t < count; t++)
        for (int64_t v = 0; v < lanes; v++)
            for (int64_t c = 0; c < w; c++)
                tape->inputs[(t * lanes + v) * w + c] =
                    z[(t * lanes + v) * w + c] + self_attention_position(t - start_of(starts, t, lanes, v), c, w);
    k->matmul_accumulate(tape->inputs, a->query->value.data, rows, w, w, tape->query);
    k->matmul_accumulate(tape->inputs, a->key->value.data, rows, w, w, tape->key);
    k->matmul_accumulate(tape->inputs, a->value->value.data, rows, w, w, tape->value);
    /* The residual is z, not u: a position is the same vector for every vertex at a step, and carried
     * into the output it would sit in every vertex's embedding (see the header). */
    memcpy(out, z, (size_t)(rows * w) * sizeof(float));
    for (int64_t v = 0; v < lanes; v++)
        for (int64_t t = 0; t < count; t++)
            attend(tape, w, v, t, tape->weights + (v * count + t) * count, out + (t * lanes + v) * w);
    return TF_OK;
}

/* Backward of attend() at lane v, position t, given dy [W]: adds into dquery, dkey, dvalue [T][N][W]. */
static void attend_backward(const self_attention_tape *tape, int64_t width, int64_t v, int64_t t, const float *dy,
                            float *dweights, float *dquery, float *dkey, float *dvalue)
{
    const int64_t lanes = tape->lanes, count = tape->count, start = start_of(tape->starts, t, lanes, v);
    const float scale = (float)(1.0 / sqrt((double)width));
    const float *weights = tape->weights + (v * count + t) * count;
    const float *q = tape->query + (t * lanes + v) * width;
    double weighted = 0; /* sum over s of beta_ts dbeta_ts, the softmax's backward */
    for (int64_t s = start; s <= t; s++) {
        const int64_t row = (s * lanes + v) * width;
        float dot = 0;
        for (int64_t c = 0; c < width; c++) {
            dot += dy[c] * tape->value[row + c];
            dvalue[row + c] += weights[s] * dy[c];
        }
        dweights[s] = dot;
        weighted += (double)weights[s] * dot;
    }
    for (int64_t s = start; s <= t; s++) {
        const int64_t row = (s * lanes + v) * width;
        const float dscore = weights[s] * (dweights[s] - (float)weighted) * scale;
        for (int64_t c = 0; c < width; c++) {
            dquery[(t * lanes + v) * width + c] += dscore * tape->key[row + c];
            dkey[row + c] += dscore * q[c];
        }
    }
}

int ref_self_attention_backward(const kernels *k, const self_attention *a, const self_attention_tape *tape,
                                    const float *dout, float *dz, workspace *scratch, tf_error *err)
{
    const int64_t w = a->width, count = tape->count, lanes = tape->lanes, rows = count * lanes;
    float *dquery = workspace_zeroed(scratch, (size_t)(rows * w), sizeof(float), "temporal attention gradients", err);
    float *dkey = dquery ? workspace_zeroed(scratch, (size_t)(rows * w), sizeof(float), "temporal attention gradients",
                                            err) : NULL;
    float *dvalue = dkey ? workspace_zeroed(scratch, (size_t)(rows * w), sizeof(float), "temporal attention gradients",
                                            err) : NULL;
    float *dweights = dvalue ? workspace_zeroed(scratch, (size_t)count, sizeof(float), "temporal attention gradients",
                                                err) : NULL;
    if (!dweights)
        return TF_ERR_INPUT;
    for (int64_t v = 0; v < lanes; v++)
        for (int64_t t = 0; t < count; t++)
            attend_backward(tape, w, v, t, dout + (t * lanes + v) * w, dweights, dquery, dkey, dvalue);
    memcpy(dz, dout, (size_t)(rows * w) * sizeof(float)); /* the residual's share */
    k->matmul_backward(tape->inputs, a->query->value.data, dquery, rows, w, w, dz, a->query->grad.data);
    k->matmul_backward(tape->inputs, a->key->value.data, dkey, rows, w, w, dz, a->key->grad.data);
    k->matmul_backward(tape->inputs, a->value->value.data, dvalue, rows, w, w, dz, a->value->grad.data);
    return TF_OK;
}
