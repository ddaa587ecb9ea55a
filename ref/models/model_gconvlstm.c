/* GConvLSTM (Seo et al., 2018, "GCRN" model 2; ReInc's GCRN-M2) as PyTorch Geometric Temporal's
 * GConvLSTM: an LSTM whose every linear map is a Chebyshev graph convolution (chebconv.h), on X and
 * on H, with peephole weights on the cell state:
 *
 *     I  = sigmoid(Cheb_xi(X) + Cheb_hi(H) + w_ci * C  + b_i)
 *     F  = sigmoid(Cheb_xf(X) + Cheb_hf(H) + w_cf * C  + b_f)
 *     T  = tanh   (Cheb_xc(X) + Cheb_hc(H)             + b_c)
 *     C' = F * C + I * T
 *     O  = sigmoid(Cheb_xo(X) + Cheb_ho(H) + w_co * C' + b_o)
 *     H' = O * tanh(C')
 *
 * (every ChebConv has its own bias besides b_q, as in the library). It is the integrated form of
 * ReInc's distinction: the graph convolutions sit inside the gates, eight per snapshot. Reuse across
 * gates: the Chebyshev basis of X is computed once for the four x-convolutions, the basis of H once
 * for the four h-convolutions. The output gate's peephole reads the new cell C': the pointwise part
 * is the LSTM with peepholes of recurrent.h (ref_lstm_peephole_forward()), gates in i, f, g, o order. */
#include <stdio.h>
#include <string.h>

#include "ref/core/memory.h"
#include "ref/models/model.h"
#include "ref/nn/chebconv.h"
#include "ref/nn/layers.h"
#include "ref/nn/propagate.h"
#include "ref/nn/recurrent.h"

enum { GATE_I, GATE_F, GATE_C, GATE_O, GATES };

/* The seven vectors [1][H], registered before the convolutions as PyTorch lists them. */
enum { PEEP_I, BIAS_I, PEEP_F, BIAS_F, BIAS_C, PEEP_O, BIAS_O, VECTORS };

static parameter *vector(const model *m, int which) { return &m->parameters.items[which]; }

/* Parameters of gate q's convolution of X (on = 0) or of H (on = 1): its bias, then its K weights. */
static parameter *conv(const model *m, int q, int on)
{
    return &m->parameters.items[VECTORS + (2 * q + on) * (m->config.chebyshev_k + 1)];
}

/* Each gate's bias among the vectors. */
static const int bias_of[GATES] = {BIAS_I, BIAS_F, BIAS_C, BIAS_O};

static lstm_peepholes peepholes_of(const model *m)
{
    return (lstm_peepholes){vector(m, PEEP_I)->value.data, vector(m, PEEP_F)->value.data,
                            vector(m, PEEP_O)->value.data};
}

typedef struct gconvlstm_step {
    propagation graph;     /* L^ of this snapshot, first (model_ops::step_size) */
    float *basis_x;        /* [K][N][F] T_k(L^) X */
    float *basis_h;        /* [K][N][H] T_k(L^) H */
    float *gates;          /* [N][4H] I, F, T, O after their nonlinearities */
    float *cell;           /* [N][H] C' */
} gconvlstm_step;

static int gconvlstm_create(model *m, rng *r, tf_error *err)
{
    static const char *vectors[VECTORS] = {"w_c_i", "b_i", "w_c_f", "b_f", "b_c", "w_c_o", "b_o"};
    static const char letters[GATES] = {'i', 'f', 'c', 'o'};
    const int64_t f = m->config.in_features, h = m->config.hidden;
    int64_t shape[2] = {1, h};
    for (int v = 0; v < VECTORS; v++) {
        char name[64];
        snprintf(name, sizeof name, "recurrent.%s", vectors[v]);
        if (parameters_add(&m->parameters, name, 2, shape, err) < 0)
            return TF_ERR_INPUT;
    }
    for (int q = 0; q < GATES; q++)
        for (int on = 0; on < 2; on++) {
            char prefix[64];
            snprintf(prefix, sizeof prefix, "recurrent.conv_%c_%c", on ? 'h' : 'x', letters[q]);
            if (chebconv_add(&m->parameters, prefix, m->config.chebyshev_k, on ? h : f, h, r, err) < 0)
                return TF_ERR_INPUT;
        }
    /* The library: Glorot peepholes, zero biases (left as added). */
    parameter_init_glorot(vector(m, PEEP_I), r);
    parameter_init_glorot(vector(m, PEEP_F), r);
    parameter_init_glorot(vector(m, PEEP_O), r);
    return TF_OK;
}

static int gconvlstm_forward(const model *m, const snapshot_seq *seq, window_tape *tape, tf_error *err)
{
    const int64_t n = seq->num_nodes, f = m->config.in_features, h = m->config.hidden, nh = n * h;
    const int k = m->config.chebyshev_k;
    const kernels *kn = m->kernels;
    const lstm_peepholes peepholes = peepholes_of(m);
    gconvlstm_step *steps = tape->steps;
    float *zeros = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GConvLSTM state", err);
    float *preactivation = zeros ? model_scratch(m, (size_t)(4 * nh), sizeof(float), "GConvLSTM scratch", err) : NULL;
    float *gate = preactivation ? model_scratch(m, (size_t)nh, sizeof(float), "GConvLSTM scratch", err) : NULL;
    int status = gate ? TF_OK : TF_ERR_INPUT;
    for (int64_t t = 0; status == TF_OK && t < tape->count; t++) {
        gconvlstm_step *s = &steps[t];
        const float *previous = t == 0 ? zeros : tape->states + (t - 1) * nh;
        const float *previous_cell = t == 0 ? zeros : steps[t - 1].cell;
        status = model_chebyshev_operator(m, &s->graph, seq, tape->first + t, err);
        if (status == TF_OK && (!(s->basis_x = model_scratch(m, (size_t)(k * n * f), sizeof(float), "GConvLSTM tape", err)) ||
                                !(s->basis_h = model_scratch(m, (size_t)(k * nh), sizeof(float), "GConvLSTM tape", err)) ||
                                !(s->gates = model_scratch(m, (size_t)(4 * nh), sizeof(float), "GConvLSTM tape", err)) ||
                                !(s->cell = model_scratch(m, (size_t)nh, sizeof(float), "GConvLSTM tape", err))))
            status = TF_ERR_INPUT;
        if (status != TF_OK)
            break;
        /* T_0 = X_t; T_1 .. T_{K-1} depend on t only: served when the model has a source, and shared by the four
         * gates (ReInc's reuse across gates: one basis of X_t per snapshot, not one per gate) */
        if ((status = model_chebyshev_inputs(m, &s->graph, seq, tape->first + t, s->basis_x, err)) != TF_OK)
            break;
        chebyshev_basis_forward(kn, &s->graph, previous, h, k, s->basis_h);
        for (int q = 0; q < GATES; q++) { /* Ch_xq(X) + Ch_hq(H) + b_q into block q of [N][4H] */
            memset(gate, 0, (size_t)nh * sizeof(float));
            chebconv_accumulate(kn, conv(m, q, 0), k, s->basis_x, n, f, h, gate);
            chebconv_accumulate(kn, conv(m, q, 1), k, s->basis_h, n, h, h, gate);
            kn->add_bias(gate, vector(m, bias_of[q])->value.data, n, h);
            kn->copy_rows(preactivation + q * h, 4 * h, gate, h, n, h);
        }
        ref_lstm_peephole_forward(preactivation, &peepholes, previous_cell, n, h, s->cell, tape->states + t * nh,
                                  s->gates);
    }
    return status;
}

/* model_ops::backward (ref/models/model.h): dstates [tape->count][num_nodes][model_state_width(m)]. */
static int gconvlstm_backward(model *m, const snapshot_seq *seq, const window_tape *tape, const float *dstates,
                              tf_error *err)
{
    const int64_t n = seq->num_nodes, f = m->config.in_features, h = m->config.hidden, nh = n * h;
    const int k = m->config.chebyshev_k;
    const lstm_peepholes peepholes = peepholes_of(m);
    float *const dpeepholes[3] = {vector(m, PEEP_I)->grad.data, vector(m, PEEP_F)->grad.data,
                                  vector(m, PEEP_O)->grad.data};
    const gconvlstm_step *steps = tape->steps;
    float *zeros = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GConvLSTM gradients", err);
    float *dstate = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GConvLSTM gradients", err);
    float *dprevious = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GConvLSTM gradients", err);
    float *dcell = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GConvLSTM gradients", err); /* dL/dC' */
    float *dprevious_cell = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GConvLSTM gradients", err);
    float *dpreactivation = model_scratch_zeroed(m, (size_t)(4 * nh), sizeof(float), "GConvLSTM gradients", err);
    float *dgate = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GConvLSTM gradients", err);
    float *dbasis_h = model_scratch_zeroed(m, (size_t)(k * nh), sizeof(float), "GConvLSTM gradients", err);
    int status = zeros && dstate && dprevious && dcell && dprevious_cell && dpreactivation && dgate && dbasis_h
                     ? TF_OK : TF_ERR_INPUT;
    for (int64_t t = tape->count - 1; status == TF_OK && t >= 0; t--) {
        const gconvlstm_step *s = &steps[t];
        const float *previous_cell = t == 0 ? zeros : steps[t - 1].cell;
        model_lstm_carry(dstates + t * nh, t, tape->count, nh, dstate, dcell, dprevious, dprevious_cell);
        ref_lstm_peephole_backward(s->gates, &peepholes, previous_cell, s->cell, dstate, dcell, n, h, dpreactivation,
                                   dprevious_cell, dpeepholes);
        memset(dbasis_h, 0, (size_t)(k * nh) * sizeof(float));
        for (int q = 0; q < GATES; q++) {
            m->kernels->copy_rows(dgate, h, dpreactivation + q * h, 4 * h, n, h); /* block q */
            chebconv_backward(m->kernels, conv(m, q, 0), k, s->basis_x, dgate, n, f, h, NULL);
            chebconv_backward(m->kernels, conv(m, q, 1), k, s->basis_h, dgate, n, h, h, dbasis_h);
            m->kernels->add_bias_backward(dgate, n, h, vector(m, bias_of[q])->grad.data);
        }
        chebyshev_basis_backward(m->kernels, &s->graph, dbasis_h, h, k, dprevious);
    }
    return status;
}

const model_ops gconvlstm_ops = {gconvlstm_create, gconvlstm_forward, gconvlstm_backward, sizeof(gconvlstm_step), 1};
