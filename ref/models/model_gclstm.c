/* GC-LSTM (Chen et al., 2022) as PyTorch Geometric Temporal's GCLSTM: an LSTM whose input
 * term is a plain matrix product and whose hidden-state term is a Chebyshev convolution:
 *
 *     I  = sigmoid(X W_i + Cheb_i(H) + b_i)
 *     F  = sigmoid(X W_f + Cheb_f(H) + b_f)
 *     T  = tanh   (X W_c + Cheb_c(H) + b_c)
 *     C' = F * C + I * T
 *     O  = sigmoid(X W_o + Cheb_o(H) + b_o)
 *     H' = O * tanh(C')
 *
 * (no peephole: that library passes C to the gates but does not use it). The four gates read
 * the same Chebyshev basis of H, computed once; the pointwise part is the LSTM's
 * (recurrent.h), with the gates in its i, f, g, o order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/nn/chebconv.h"
#include "ref/nn/layers.h"
#include "ref/core/memory.h"
#include "ref/models/model.h"
#include "ref/nn/propagate.h"
#include "ref/nn/recurrent.h"

enum { GATE_I, GATE_F, GATE_C, GATE_O, GATES };

/* Parameter layout: W_q, b_q for the four gates, then the four convolutions. */
static parameter *input_weight(const model *m, int q) { return &m->parameters.items[2 * q]; }
static parameter *gate_bias(const model *m, int q) { return &m->parameters.items[2 * q + 1]; }
static parameter *conv(const model *m, int q)
{
    return &m->parameters.items[2 * GATES + q * (m->config.chebyshev_k + 1)];
}

typedef struct gclstm_step {
    propagation graph;     /* L^ of this snapshot, first (model_ops::step_size) */
    float *basis_h;        /* [K][N][H] T_k(L^) H */
    float *gates;          /* [N][4H] i, f, g, o after their nonlinearities */
    float *cell;           /* [N][H] C' */
} gclstm_step;

static int gclstm_create(model *m, rng *r, tf_error *err)
{
    static const char *letters[GATES] = {"i", "f", "c", "o"};
    const int64_t f = m->config.in_features, h = m->config.hidden;
    int64_t weight_shape[2] = {f, h}, bias_shape[2] = {1, h};
    for (int q = 0; q < GATES; q++) {
        char name[96];
        snprintf(name, sizeof name, "recurrent.W_%s", letters[q]);
        int64_t index = parameters_add(&m->parameters, name, 2, weight_shape, err);
        snprintf(name, sizeof name, "recurrent.b_%s", letters[q]);
        if (index < 0 || parameters_add(&m->parameters, name, 2, bias_shape, err) < 0)
            return TF_ERR_INPUT;
        parameter_init_glorot(&m->parameters.items[index], r); /* biases stay zero, as in the library */
    }
    for (int q = 0; q < GATES; q++) {
        char prefix[64];
        snprintf(prefix, sizeof prefix, "recurrent.conv_%s", letters[q]);
        if (chebconv_add(&m->parameters, prefix, m->config.chebyshev_k, h, h, r, err) < 0)
            return TF_ERR_INPUT;
    }
    return TF_OK;
}

static int gclstm_forward(const model *m, const snapshot_seq *seq, window_tape *tape, tf_error *err)
{
    const int64_t n = seq->num_nodes, f = m->config.in_features, h = m->config.hidden, nh = n * h;
    const int k = m->config.chebyshev_k;
    gclstm_step *steps = tape->steps;
    float *zeros = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GC-LSTM state", err);
    float *preactivation = zeros ? model_scratch(m, (size_t)(4 * nh), sizeof(float), "GC-LSTM scratch", err) : NULL;
    float *gate = preactivation ? model_scratch(m, (size_t)nh, sizeof(float), "GC-LSTM scratch", err) : NULL;
    int status = gate ? TF_OK : TF_ERR_INPUT;
    for (int64_t t = 0; status == TF_OK && t < tape->count; t++) {
        gclstm_step *s = &steps[t];
        const snapshot *snap = &seq->snapshots[tape->first + t];
        const float *previous = t == 0 ? zeros : tape->states + (t - 1) * nh;
        const float *previous_cell = t == 0 ? zeros : steps[t - 1].cell;
        status = model_chebyshev_operator(m, &s->graph, seq, tape->first + t, err);
        if (status == TF_OK &&
            (!(s->basis_h = model_scratch(m, (size_t)(k * nh), sizeof(float), "GC-LSTM tape", err)) ||
             !(s->gates = model_scratch(m, (size_t)(4 * nh), sizeof(float), "GC-LSTM tape", err)) ||
             !(s->cell = model_scratch(m, (size_t)nh, sizeof(float), "GC-LSTM tape", err))))
            status = TF_ERR_INPUT;
        if (status != TF_OK)
            break;

        chebyshev_basis_forward(m->kernels, &s->graph, previous, h, k, s->basis_h);
        for (int q = 0; q < GATES; q++) {
            memset(gate, 0, (size_t)nh * sizeof(float));
            m->kernels->matmul_accumulate(snap->features.data, input_weight(m, q)->value.data, n, f, h, gate);
            chebconv_accumulate(m->kernels, conv(m, q), k, s->basis_h, n, h, h, gate);
            m->kernels->add_bias(gate, gate_bias(m, q)->value.data, n, h);
            /* into block q of the [N][4H] pre-activations */
            m->kernels->copy_rows(preactivation + q * h, 4 * h, gate, h, n, h);
        }
        m->kernels->lstm_pointwise_forward(preactivation, previous_cell, n, h, s->cell, tape->states + t * nh, s->gates);
    }
    return status;
}

/* model_ops::backward (ref/models/model.h): dstates [tape->count][num_nodes][model_state_width(m)]. */
static int gclstm_backward(model *m, const snapshot_seq *seq, const window_tape *tape, const float *dstates,
                           tf_error *err)
{
    const int64_t n = seq->num_nodes, f = m->config.in_features, h = m->config.hidden, nh = n * h;
    const int k = m->config.chebyshev_k;
    const gclstm_step *steps = tape->steps;
    float *zeros = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GC-LSTM gradients", err);
    float *dstate = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GC-LSTM gradients", err);
    float *dprevious = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GC-LSTM gradients", err);
    /* dL/dC_t from later */
    float *dcell = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GC-LSTM gradients", err);
    float *dprevious_cell = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GC-LSTM gradients", err);
    float *dpreactivation = model_scratch_zeroed(m, (size_t)(4 * nh), sizeof(float), "GC-LSTM gradients", err);
    float *dgate = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GC-LSTM gradients", err);
    float *dbasis_h = model_scratch_zeroed(m, (size_t)(k * nh), sizeof(float), "GC-LSTM gradients", err);
    int status = zeros && dstate && dprevious && dcell && dprevious_cell && dpreactivation && dgate && dbasis_h
                     ? TF_OK : TF_ERR_INPUT;
    for (int64_t t = tape->count - 1; status == TF_OK && t >= 0; t--) {
        const gclstm_step *s = &steps[t];
        const snapshot *snap = &seq->snapshots[tape->first + t];
        const float *previous_cell = t == 0 ? zeros : steps[t - 1].cell;
        model_lstm_carry(dstates + t * nh, t, tape->count, nh, dstate, dcell, dprevious, dprevious_cell);
        m->kernels->lstm_pointwise_backward(s->gates, previous_cell, s->cell, dstate, dcell, n, h, dpreactivation,
                                    dprevious_cell);
        memset(dbasis_h, 0, (size_t)(k * nh) * sizeof(float));
        for (int q = 0; q < GATES; q++) {
            /* block q of the [N][4H] gradients */
            m->kernels->copy_rows(dgate, h, dpreactivation + q * h, 4 * h, n, h);
            m->kernels->matmul_backward(snap->features.data, input_weight(m, q)->value.data, dgate, n, f, h, NULL,
                                input_weight(m, q)->grad.data);
            m->kernels->add_bias_backward(dgate, n, h, gate_bias(m, q)->grad.data);
            chebconv_backward(m->kernels, conv(m, q), k, s->basis_h, dgate, n, h, h, dbasis_h);
        }
        chebyshev_basis_backward(m->kernels, &s->graph, dbasis_h, h, k, dprevious);
    }
    return status;
}

const model_ops gclstm_ops = {gclstm_create, gclstm_forward, gclstm_backward, sizeof(gclstm_step), 1};
