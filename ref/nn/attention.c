#include "ref/nn/attention.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref/nn/layers.h"
#include "ref/core/memory.h"

void attention_tape_free(attention_tape *tape)
{
    if (tape->scratch) { /* the workspace's: its reset takes them back */
        memset(tape, 0, sizeof *tape);
        return;
    }
    float *arrays[] = {tape->query_input, tape->key_input,    tape->query,     tape->key,
                       tape->value,       tape->score,        tape->alpha,     tape->output_input,
                       tape->activated,   tape->normalized,   tape->inverse_std};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++)
        free(arrays[i]);
    memset(tape, 0, sizeof *tape);
}

/* A zeroed array of the tape (or the backward's scratch): from the workspace, or its own. */
static float *tape_floats(const attention_tape *tape, int64_t count, const char *what, tf_error *err)
{
    return tape->scratch ? workspace_zeroed(tape->scratch, (size_t)count, sizeof(float), what, err)
                         : tf_alloc((size_t)count, sizeof(float), what, err);
}

/* Copy in [rows][width] into columns [column, column + width) of out [rows][out_width]. */
static void copy_columns(const float *in, int64_t rows, int64_t width, float *out, int64_t out_width, int64_t column)
{
    for (int64_t i = 0; i < rows; i++)
        memcpy(out + i * out_width + column, in + i * width, (size_t)width * sizeof(float));
}

/* The inverse: add columns [column, column + width) of in [rows][in_width] into out [rows][width]. */
static void add_columns(const float *in, int64_t in_width, int64_t column, int64_t rows, int64_t width, float *out)
{
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < width; j++)
            out[i * width + j] += in[i * in_width + column + j];
}

int ref_temporal_attention_forward(const kernels *k, const temporal_attention *a, int64_t roots,
                                   const int64_t *neighbour_offset, const float *root_node, const float *root_time,
                                   const float *neighbour_node, const float *neighbour_edge,
                                   const float *neighbour_time, workspace *scratch, attention_tape *tape, float *out,
                                   tf_error *err)
{
    memset(tape, 0, sizeof *tape);
    tape->scratch = scratch;
    const int64_t R = roots, E = neighbour_offset[roots], dh = a->node_width, de = a->edge_width,
                  dt = a->time_width, d = a->out_width, heads = a->heads, head_width = d / heads;
    const int64_t query_width = dh + dt, key_width = dh + de + dt;
    tape->roots = R;
    tape->neighbours = E;
    tape->neighbour_offset = neighbour_offset;
    if (!(tape->query_input = tape_floats(tape, R * query_width, "attention queries", err)) ||
        !(tape->key_input = tape_floats(tape, E * key_width, "attention keys", err)) ||
        !(tape->query = tape_floats(tape, R * d, "attention queries", err)) ||
        !(tape->key = tape_floats(tape, E * d, "attention keys", err)) ||
        !(tape->value = tape_floats(tape, E * d, "attention values", err)) ||
        !(tape->score = tape_floats(tape, E * heads, "attention scores", err)) ||
        !(tape->alpha = tape_floats(tape, E * heads, "attention weights", err)) ||
        !(tape->output_input = tape_floats(tape, R * (d + dh), "attention outputs", err)) ||
        !(tape->activated = tape_floats(tape, R * d, "attention outputs", err)) ||
        !(tape->normalized = tape_floats(tape, R * d, "attention outputs", err)) ||
        !(tape->inverse_std = tape_floats(tape, R, "attention outputs", err))) {
        attention_tape_free(tape);
        return TF_ERR_INPUT;
    }
    /* Q from [h_u || phi(0)]; K and V from [h_w || e || phi(t - t_e)]. */
    copy_columns(root_node, R, dh, tape->query_input, query_width, 0);
    copy_columns(root_time, R, dt, tape->query_input, query_width, dh);
    copy_columns(neighbour_node, E, dh, tape->key_input, key_width, 0);
    if (de > 0)
        copy_columns(neighbour_edge, E, de, tape->key_input, key_width, dh);
    copy_columns(neighbour_time, E, dt, tape->key_input, key_width, dh + de);
    k->linear_forward(tape->query_input, a->query_weight->value.data, a->query_bias->value.data, R, query_width, d,
                       tape->query);
    k->linear_forward(tape->key_input, a->key_weight->value.data, a->key_bias->value.data, E, key_width, d,
                       tape->key);
    k->linear_forward(tape->key_input, a->value_weight->value.data, a->value_bias->value.data, E, key_width, d,
                       tape->value);
    /* Per root and head: scores, softmax over the root's neighbours, weighted sum of values. */
    for (int64_t r = 0; r < R; r++) {
        const int64_t first = neighbour_offset[r], last = neighbour_offset[r + 1];
        float *aggregate = tape->output_input + r * (d + dh);
        memset(aggregate, 0, (size_t)d * sizeof(float));
        for (int64_t h = 0; h < heads; h++) {
            const float *q = tape->query + r * d + h * head_width;
            float largest = -INFINITY;
            for (int64_t e = first; e < last; e++) {
                const float *key = tape->key + e * d + h * head_width;
                float dot = 0.0f;
                for (int64_t j = 0; j < head_width; j++)
                    dot += q[j] * key[j];
                ref_leaky_relu_forward(&dot, 1, ATTENTION_LEAKY_SLOPE, &tape->score[e * heads + h]);
                largest = fmaxf(largest, tape->score[e * heads + h]);
            }
            float total = 0.0f;
            for (int64_t e = first; e < last; e++) {
                tape->alpha[e * heads + h] = expf(tape->score[e * heads + h] - largest);
                total += tape->alpha[e * heads + h];
            }
            for (int64_t e = first; e < last; e++) {
                tape->alpha[e * heads + h] /= total;
                const float *v = tape->value + e * d + h * head_width;
                for (int64_t j = 0; j < head_width; j++)
                    aggregate[h * head_width + j] += tape->alpha[e * heads + h] * v[j];
            }
        }
        memcpy(aggregate + d, root_node + r * dh, (size_t)dh * sizeof(float));
    }
    /* z = LayerNorm(ReLU(W_o [agg || h_u] + b_o)) */
    k->linear_forward(tape->output_input, a->output_weight->value.data, a->output_bias->value.data, R, d + dh, d,
                       tape->activated);
    k->relu_forward(tape->activated, R * d, tape->activated);
    ref_layer_norm_forward(tape->activated, a->norm_weight->value.data, a->norm_bias->value.data, R, d,
                           ATTENTION_NORM_EPSILON, out, tape->normalized, tape->inverse_std);
    return TF_OK;
}

int ref_temporal_attention_backward(const kernels *k, const temporal_attention *a, const attention_tape *tape,
                                    const float *dout, float *droot_node, float *droot_time, float *dneighbour_node,
                                    float *dneighbour_time, tf_error *err)
{
    const int64_t R = tape->roots, E = tape->neighbours, dh = a->node_width, de = a->edge_width, dt = a->time_width,
                  d = a->out_width, heads = a->heads, head_width = d / heads;
    const int64_t query_width = dh + dt, key_width = dh + de + dt;
    const int64_t *offset = tape->neighbour_offset;
    float *dactivated = tape_floats(tape, R * d, "attention gradients", err);
    float *dpreactivation = dactivated ? tape_floats(tape, R * d, "attention gradients", err) : NULL;
    float *doutput_input =
        dpreactivation ? tape_floats(tape, R * (d + dh), "attention gradients", err) : NULL;
    float *dquery = doutput_input ? tape_floats(tape, R * d, "attention gradients", err) : NULL;
    float *dkey = dquery ? tape_floats(tape, E * d, "attention gradients", err) : NULL;
    float *dvalue = dkey ? tape_floats(tape, E * d, "attention gradients", err) : NULL;
    float *dalpha = dvalue ? tape_floats(tape, E, "attention gradients", err) : NULL;
    float *dquery_input =
        dalpha ? tape_floats(tape, R * query_width, "attention gradients", err) : NULL;
    float *dkey_input =
        dquery_input ? tape_floats(tape, E * key_width, "attention gradients", err) : NULL;
    int status = dkey_input ? TF_OK : TF_ERR_INPUT;
    if (status == TF_OK) {
        /* Output block: LayerNorm, ReLU, W_o. */
        ref_layer_norm_backward(tape->normalized, tape->inverse_std, a->norm_weight->value.data, dout, R, d, dactivated,
                                a->norm_weight->sums, a->norm_bias->sums);
        k->relu_backward(tape->activated, dactivated, R * d, dpreactivation);
        k->linear_backward_sums(tape->output_input, a->output_weight->value.data, dpreactivation, R, d + dh, d,
                                 doutput_input, a->output_weight->sums, a->output_bias->sums);
        if (droot_node)
            add_columns(doutput_input, d + dh, d, R, dh, droot_node);
        /* Attention core, per root and head: agg = sum alpha V, alpha = softmax(LeakyReLU(<Q, K>)). */
        for (int64_t r = 0; r < R; r++) {
            const float *daggregate = doutput_input + r * (d + dh);
            for (int64_t h = 0; h < heads; h++) {
                const float *q = tape->query + r * d + h * head_width, *dagg = daggregate + h * head_width;
                float weighted = 0.0f; /* sum over neighbours of alpha * dalpha, the softmax's correction */
                for (int64_t e = offset[r]; e < offset[r + 1]; e++) {
                    const float *v = tape->value + e * d + h * head_width;
                    float alpha = tape->alpha[e * heads + h], sum = 0.0f;
                    for (int64_t j = 0; j < head_width; j++) {
                        sum += dagg[j] * v[j];
                        dvalue[e * d + h * head_width + j] += alpha * dagg[j];
                    }
                    dalpha[e] = sum;
                    weighted += alpha * sum;
                }
                for (int64_t e = offset[r]; e < offset[r + 1]; e++) {
                    float dscore = tape->alpha[e * heads + h] * (dalpha[e] - weighted), ddot = 0.0f;
                    ref_leaky_relu_backward(&tape->score[e * heads + h], &dscore, 1, ATTENTION_LEAKY_SLOPE, &ddot);
                    const float *key = tape->key + e * d + h * head_width;
                    for (int64_t j = 0; j < head_width; j++) {
                        dquery[r * d + h * head_width + j] += ddot * key[j];
                        dkey[e * d + h * head_width + j] += ddot * q[j];
                    }
                }
            }
        }
        /* The three projections, then the input slices. */
        k->linear_backward_sums(tape->query_input, a->query_weight->value.data, dquery, R, query_width, d,
                                 dquery_input, a->query_weight->sums, a->query_bias->sums);
        k->linear_backward_sums(tape->key_input, a->key_weight->value.data, dkey, E, key_width, d, dkey_input,
                                 a->key_weight->sums, a->key_bias->sums);
        k->linear_backward_sums(tape->key_input, a->value_weight->value.data, dvalue, E, key_width, d, dkey_input,
                                 a->value_weight->sums, a->value_bias->sums);
        if (droot_node)
            add_columns(dquery_input, query_width, 0, R, dh, droot_node);
        if (droot_time)
            add_columns(dquery_input, query_width, dh, R, dt, droot_time);
        if (dneighbour_node)
            add_columns(dkey_input, key_width, 0, E, dh, dneighbour_node);
        if (dneighbour_time)
            add_columns(dkey_input, key_width, dh + de, E, dt, dneighbour_time);
    }
    float *scratch[] = {dactivated, dpreactivation, doutput_input, dquery, dkey, dvalue, dalpha, dquery_input, dkey_input};
    for (size_t i = 0; i < sizeof scratch / sizeof *scratch && !tape->scratch; i++)
        free(scratch[i]);
    return status;
}
