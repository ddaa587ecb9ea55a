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
 * for the four h-convolutions. The output gate's peephole reads the new cell C', so the gates cannot
 * go through the plain LSTM pointwise kernel (recurrent.h); their pointwise part is written here. */
#include <stdio.h>
#include <string.h>

#include "ref/core/memory.h"
#include "ref/models/model.h"
#include "ref/nn/chebconv.h"
#include "ref/nn/layers.h"
#include "ref/nn/propagate.h"

enum { GATE_I, GATE_F, GATE_C, GATE_O, GATES };

/* The seven vectors [1][H], registered before the convolutions as PyTorch lists them. */
enum { PEEP_I, BIAS_I, PEEP_F, BIAS_F, BIAS_C, PEEP_O, BIAS_O, VECTORS };

static parameter *vector(const model *m, int which) { return &m->parameters.items[which]; }

/* Parameters of gate q's convolution of X (on = 0) or of H (on = 1): its bias, then its K weights. */
static parameter *conv(const model *m, int q, int on)
{
    return &m->parameters.items[VECTORS + (2 * q + on) * (m->config.chebyshev_k + 1)];
}

/* Each gate's peephole (-1: none) and bias among the vectors. */
static const int peephole_of[GATES] = {PEEP_I, PEEP_F, -1, PEEP_O};
static const int bias_of[GATES] = {BIAS_I, BIAS_F, BIAS_C, BIAS_O};

typedef struct gconvlstm_step {
    propagation graph;     /* L^ of this snapshot, first (model_ops::step_size) */
    float *basis_x;        /* [K][N][F] T_k(L^) X */
    float *basis_h;        /* [K][N][H] T_k(L^) H */
    float *gate[GATES];    /* [N][H] I, F, T, O after their nonlinearities */
    float *cell;           /* [N][H] C' */
    float *squashed;       /* [N][H] tanh(C') */
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
    for (int q = 0; q < GATES; q++)
        if (peephole_of[q] >= 0)
            parameter_init_glorot(vector(m, peephole_of[q]), r);
    return TF_OK;
}

/* Gate q's pre-activation into @p out [n][h] (zeroed here): both convolutions, the bias and, given a
 * cell, the peephole. */
static void gate_preactivation(const model *m, const gconvlstm_step *s, int q, const float *cell, int64_t n,
                               float *out)
{
    const int64_t f = m->config.in_features, h = m->config.hidden;
    const int k = m->config.chebyshev_k;
    memset(out, 0, (size_t)(n * h) * sizeof(float));
    chebconv_accumulate(m->kernels, conv(m, q, 0), k, s->basis_x, n, f, h, out);
    chebconv_accumulate(m->kernels, conv(m, q, 1), k, s->basis_h, n, h, h, out);
    const float *peephole = peephole_of[q] >= 0 ? vector(m, peephole_of[q])->value.data : NULL;
    const float *bias = vector(m, bias_of[q])->value.data;
    for (int64_t v = 0; v < n; v++)
        for (int64_t j = 0; j < h; j++)
            out[v * h + j] += (peephole ? peephole[j] * cell[v * h + j] : 0.0f) + bias[j];
}

static int gconvlstm_forward(const model *m, const snapshot_seq *seq, window_tape *tape, tf_error *err)
{
    const int64_t n = seq->num_nodes, f = m->config.in_features, h = m->config.hidden, nh = n * h;
    const int k = m->config.chebyshev_k;
    const kernels *kn = m->kernels;
    gconvlstm_step *steps = tape->steps;
    float *zeros = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GConvLSTM state", err);
    int status = zeros ? TF_OK : TF_ERR_INPUT;
    for (int64_t t = 0; status == TF_OK && t < tape->count; t++) {
        gconvlstm_step *s = &steps[t];
        const snapshot *snap = &seq->snapshots[tape->first + t];
        const float *previous = t == 0 ? zeros : tape->states + (t - 1) * nh;
        const float *previous_cell = t == 0 ? zeros : steps[t - 1].cell;
        float *state = tape->states + t * nh;
        status = model_chebyshev_operator(m, &s->graph, seq, tape->first + t, err);
        if (status == TF_OK && (!(s->basis_x = model_scratch(m, (size_t)(k * n * f), sizeof(float), "GConvLSTM tape", err)) ||
                                !(s->basis_h = model_scratch(m, (size_t)(k * nh), sizeof(float), "GConvLSTM tape", err)) ||
                                !(s->cell = model_scratch(m, (size_t)nh, sizeof(float), "GConvLSTM tape", err)) ||
                                !(s->squashed = model_scratch(m, (size_t)nh, sizeof(float), "GConvLSTM tape", err))))
            status = TF_ERR_INPUT;
        for (int q = 0; status == TF_OK && q < GATES; q++)
            if (!(s->gate[q] = model_scratch(m, (size_t)nh, sizeof(float), "GConvLSTM tape", err)))
                status = TF_ERR_INPUT;
        if (status != TF_OK)
            break;
        chebyshev_basis_forward(kn, &s->graph, snap->features.data, f, k, s->basis_x);
        chebyshev_basis_forward(kn, &s->graph, previous, h, k, s->basis_h);
        gate_preactivation(m, s, GATE_I, previous_cell, n, s->gate[GATE_I]);
        kn->sigmoid_forward(s->gate[GATE_I], nh, s->gate[GATE_I]);
        gate_preactivation(m, s, GATE_F, previous_cell, n, s->gate[GATE_F]);
        kn->sigmoid_forward(s->gate[GATE_F], nh, s->gate[GATE_F]);
        gate_preactivation(m, s, GATE_C, NULL, n, s->gate[GATE_C]);
        kn->tanh_forward(s->gate[GATE_C], nh, s->gate[GATE_C]);
        for (int64_t i = 0; i < nh; i++)
            s->cell[i] = s->gate[GATE_F][i] * previous_cell[i] + s->gate[GATE_I][i] * s->gate[GATE_C][i];
        gate_preactivation(m, s, GATE_O, s->cell, n, s->gate[GATE_O]); /* its peephole reads C' */
        kn->sigmoid_forward(s->gate[GATE_O], nh, s->gate[GATE_O]);
        kn->tanh_forward(s->cell, nh, s->squashed);
        for (int64_t i = 0; i < nh; i++)
            state[i] = s->gate[GATE_O][i] * s->squashed[i];
    }
    return status;
}

/* Backward of gate q from the gradient of its pre-activation dpre [n][h]: the convolutions' and the
 * vectors' gradients, dbasis_h [K][n][h] += through the h-convolution, and dcell [n][h] += through the
 * peephole from the cell it read. */
static void gate_backward(model *m, const gconvlstm_step *s, int q, const float *cell, const float *dpre, int64_t n,
                          float *dbasis_h, float *dcell)
{
    const int64_t f = m->config.in_features, h = m->config.hidden;
    const int k = m->config.chebyshev_k;
    chebconv_backward(m->kernels, conv(m, q, 0), k, s->basis_x, dpre, n, f, h, NULL);
    chebconv_backward(m->kernels, conv(m, q, 1), k, s->basis_h, dpre, n, h, h, dbasis_h);
    parameter *peephole = peephole_of[q] >= 0 ? vector(m, peephole_of[q]) : NULL;
    float *dbias = vector(m, bias_of[q])->grad.data;
    for (int64_t v = 0; v < n; v++)
        for (int64_t j = 0; j < h; j++) {
            const float d = dpre[v * h + j];
            dbias[j] += d;
            if (peephole) {
                peephole->grad.data[j] += d * cell[v * h + j];
                dcell[v * h + j] += d * peephole->value.data[j];
            }
        }
}

/* model_ops::backward (ref/models/model.h): dstates [tape->count][num_nodes][model_state_width(m)]. */
static int gconvlstm_backward(model *m, const snapshot_seq *seq, const window_tape *tape, const float *dstates,
                              tf_error *err)
{
    const int64_t n = seq->num_nodes, h = m->config.hidden, nh = n * h;
    const int k = m->config.chebyshev_k;
    const gconvlstm_step *steps = tape->steps;
    float *zeros = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GConvLSTM gradients", err);
    float *dstate = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GConvLSTM gradients", err);
    float *dprevious = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GConvLSTM gradients", err);
    float *dcell = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GConvLSTM gradients", err); /* dL/dC' */
    float *dprevious_cell = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GConvLSTM gradients", err);
    float *dpre = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GConvLSTM gradients", err);
    float *dbasis_h = model_scratch_zeroed(m, (size_t)(k * nh), sizeof(float), "GConvLSTM gradients", err);
    int status = zeros && dstate && dprevious && dcell && dprevious_cell && dpre && dbasis_h ? TF_OK : TF_ERR_INPUT;
    for (int64_t t = tape->count - 1; status == TF_OK && t >= 0; t--) {
        const gconvlstm_step *s = &steps[t];
        const float *previous_cell = t == 0 ? zeros : steps[t - 1].cell;
        const float *in = s->gate[GATE_I], *forget = s->gate[GATE_F], *candidate = s->gate[GATE_C],
                    *out = s->gate[GATE_O];
        model_lstm_carry(dstates + t * nh, t, tape->count, nh, dstate, dcell, dprevious, dprevious_cell);
        memset(dbasis_h, 0, (size_t)(k * nh) * sizeof(float));
        /* H' = O tanh(C'): to O, and to C' (which also reaches it through O's peephole) */
        for (int64_t i = 0; i < nh; i++) {
            const float squashed = s->squashed[i];
            dcell[i] += dstate[i] * out[i] * (1.0f - squashed * squashed);
            dpre[i] = dstate[i] * squashed * out[i] * (1.0f - out[i]);
        }
        gate_backward(m, s, GATE_O, s->cell, dpre, n, dbasis_h, dcell);
        /* C' = F C + I T */
        for (int64_t i = 0; i < nh; i++) {
            dprevious_cell[i] = dcell[i] * forget[i];
            dpre[i] = dcell[i] * in[i] * (1.0f - candidate[i] * candidate[i]);
        }
        gate_backward(m, s, GATE_C, NULL, dpre, n, dbasis_h, NULL);
        for (int64_t i = 0; i < nh; i++)
            dpre[i] = dcell[i] * previous_cell[i] * forget[i] * (1.0f - forget[i]);
        gate_backward(m, s, GATE_F, previous_cell, dpre, n, dbasis_h, dprevious_cell);
        for (int64_t i = 0; i < nh; i++)
            dpre[i] = dcell[i] * candidate[i] * in[i] * (1.0f - in[i]);
        gate_backward(m, s, GATE_I, previous_cell, dpre, n, dbasis_h, dprevious_cell);
        chebyshev_basis_backward(m->kernels, &s->graph, dbasis_h, h, k, dprevious);
    }
    return status;
}

const model_ops gconvlstm_ops = {gconvlstm_create, gconvlstm_forward, gconvlstm_backward, sizeof(gconvlstm_step)};
