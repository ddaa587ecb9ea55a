/* WD-GCN (Manessi et al., 2020, "waterfall dynamic GCN"), the stacked model DyGNeX evaluates: one
 * GCN layer on every snapshot, its weight shared by all snapshots (the "waterfall"), then an LSTM
 * per vertex over the sequence of GCN outputs, its weights shared by all vertices:
 *
 *     Z_t = ReLU(A^_t X_t Theta^T + b)                                  [N][H]
 *     I   = sigmoid(Z_t W_i^T + H W'_i^T + b_i)      (W, W' and b in torch.nn.LSTM's
 *     F   = sigmoid(Z_t W_f^T + H W'_f^T + b_f)       weight_ih, weight_hh, bias_ih + bias_hh,
 *     G   = tanh   (Z_t W_g^T + H W'_g^T + b_g)       gates in its i, f, g, o order)
 *     O   = sigmoid(Z_t W_o^T + H W'_o^T + b_o)
 *     C'  = F * C + I * G,   H' = O * tanh(C')
 *
 * with A^ the symmetric GCN normalization with self loops. Unlike T-GCN, whose graph convolutions
 * sit inside the recurrent gates (an integrated model), here the convolution and the recurrence are
 * two layers one after the other (a stacked model): the LSTM never sees the graph, and the GCN never
 * sees the state. PyTorch Geometric Temporal has no WD-GCN; its parameters are named as a GCNConv
 * `conv` and a torch.nn.LSTM `lstm` would be. */
#include <math.h>
#include <string.h>

#include "ref/core/memory.h"
#include "ref/models/model.h"
#include "ref/nn/layers.h"
#include "ref/nn/propagate.h"

/* Parameter order = PyTorch's state_dict order. */
enum { CONV_BIAS, CONV_WEIGHT, WEIGHT_IH, WEIGHT_HH, BIAS_IH, BIAS_HH };

static parameter *param(const model *m, int which) { return &m->parameters.items[which]; }

/* What one snapshot's forward keeps. */
typedef struct wdgcn_step {
    propagation graph;   /* A^ of this snapshot, first (model_ops::step_size) */
    float *aggregated;   /* [N][F] A^ X_t */
    float *convolved;    /* [N][H] Z_t */
    float *gates;        /* [N][4H] i, f, g, o after their nonlinearities */
    float *cell;         /* [N][H] C' */
} wdgcn_step;

static int wdgcn_create(model *m, rng *r, tf_error *err)
{
    const int64_t f = m->config.in_features, h = m->config.hidden;
    int64_t vector[1] = {h}, conv[2] = {h, f}, gate_weights[2] = {4 * h, h}, gate_biases[1] = {4 * h};
    if (parameters_add(&m->parameters, "recurrent.conv.bias", 1, vector, err) < 0 ||
        parameters_add(&m->parameters, "recurrent.conv.lin.weight", 2, conv, err) < 0 ||
        parameters_add(&m->parameters, "recurrent.lstm.weight_ih_l0", 2, gate_weights, err) < 0 ||
        parameters_add(&m->parameters, "recurrent.lstm.weight_hh_l0", 2, gate_weights, err) < 0 ||
        parameters_add(&m->parameters, "recurrent.lstm.bias_ih_l0", 1, gate_biases, err) < 0 ||
        parameters_add(&m->parameters, "recurrent.lstm.bias_hh_l0", 1, gate_biases, err) < 0)
        return TF_ERR_INPUT;
    /* GCNConv: Glorot weight, zero bias; torch.nn.LSTM: everything uniform(+-1/sqrt(H)). */
    parameter_init_glorot(param(m, CONV_WEIGHT), r);
    for (int which = WEIGHT_IH; which <= BIAS_HH; which++)
        parameter_init_uniform(param(m, which), 1.0 / sqrt((double)h), r);
    return TF_OK;
}

static int wdgcn_forward(const model *m, const snapshot_seq *seq, window_tape *tape, tf_error *err)
{
    const int64_t n = seq->num_nodes, f = m->config.in_features, h = m->config.hidden, nh = n * h;
    const kernels *k = m->kernels;
    wdgcn_step *steps = tape->steps;
    float *zeros = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "WD-GCN state", err);
    float *preactivation = zeros ? model_scratch(m, (size_t)(4 * nh), sizeof(float), "WD-GCN scratch", err) : NULL;
    int status = preactivation ? TF_OK : TF_ERR_INPUT;
    for (int64_t t = 0; status == TF_OK && t < tape->count; t++) {
        wdgcn_step *s = &steps[t];
        const snapshot *snap = &seq->snapshots[tape->first + t];
        const float *previous = t == 0 ? zeros : tape->states + (t - 1) * nh;
        const float *previous_cell = t == 0 ? zeros : steps[t - 1].cell;
        if (!(s->aggregated = model_scratch(m, (size_t)(n * f), sizeof(float), "WD-GCN tape", err)) ||
            !(s->convolved = model_scratch(m, (size_t)nh, sizeof(float), "WD-GCN tape", err)) ||
            !(s->gates = model_scratch(m, (size_t)(4 * nh), sizeof(float), "WD-GCN tape", err)) ||
            !(s->cell = model_scratch(m, (size_t)nh, sizeof(float), "WD-GCN tape", err)))
            status = TF_ERR_INPUT;
        else if (m->inputs) /* A^ X_t depends on t only: served (ref/models/model.h) */
            status = m->inputs->get(m->inputs->context, tape->first + t, s->aggregated, err);
        else if ((status = model_gcn_operator(m, &s->graph, seq, tape->first + t, err)) == TF_OK)
            k->propagate_forward(&s->graph, snap->features.data, f, s->aggregated);
        if (status != TF_OK)
            break;
        /* the GCN layer: aggregate the F-wide X_t first, then transform (A^ X Theta^T = (A^ X) Theta^T) */
        k->linear_forward(s->aggregated, param(m, CONV_WEIGHT)->value.data, param(m, CONV_BIAS)->value.data, n, f, h,
                          s->convolved);
        k->relu_forward(s->convolved, nh, s->convolved);
        /* the LSTM over the vertex's own sequence */
        model_lstm_forward_step(m, param(m, WEIGHT_IH), s->convolved, previous, previous_cell, n, h, preactivation,
                                s->cell, tape->states + t * nh, s->gates);
    }
    return status;
}

/* model_ops::backward (ref/models/model.h): dstates [tape->count][num_nodes][model_state_width(m)]. */
static int wdgcn_backward(model *m, const snapshot_seq *seq, const window_tape *tape, const float *dstates,
                          tf_error *err)
{
    const int64_t n = seq->num_nodes, f = m->config.in_features, h = m->config.hidden, nh = n * h;
    const kernels *k = m->kernels;
    const wdgcn_step *steps = tape->steps;
    float *zeros = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "WD-GCN gradients", err);
    float *dstate = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "WD-GCN gradients", err);     /* dL/dH_t */
    float *dprevious = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "WD-GCN gradients", err);  /* dL/dH_{t-1} */
    float *dcell = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "WD-GCN gradients", err);      /* dL/dC_t */
    float *dprevious_cell = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "WD-GCN gradients", err);
    float *dpreactivation = model_scratch_zeroed(m, (size_t)(4 * nh), sizeof(float), "WD-GCN gradients", err);
    float *dconvolved = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "WD-GCN gradients", err);
    float *dlayer = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "WD-GCN gradients", err);
    int status = zeros && dstate && dprevious && dcell && dprevious_cell && dpreactivation && dconvolved && dlayer
                     ? TF_OK : TF_ERR_INPUT;
    for (int64_t t = tape->count - 1; status == TF_OK && t >= 0; t--) {
        const wdgcn_step *s = &steps[t];
        const float *previous = t == 0 ? zeros : tape->states + (t - 1) * nh;
        const float *previous_cell = t == 0 ? zeros : steps[t - 1].cell;
        /* This snapshot's state gets the head's gradient plus what the next snapshot sent. */
        model_lstm_carry(dstates + t * nh, t, tape->count, nh, dstate, dcell, dprevious, dprevious_cell);
        memset(dconvolved, 0, (size_t)nh * sizeof(float));
        memset(dlayer, 0, (size_t)nh * sizeof(float));
        model_lstm_backward_step(m, param(m, WEIGHT_IH), s->convolved, previous, previous_cell, s->gates, s->cell, dstate,
                                 dcell, n, h, dpreactivation, dconvolved, dprevious, dprevious_cell);
        k->relu_backward(s->convolved, dconvolved, nh, dlayer);
        k->linear_backward(s->aggregated, param(m, CONV_WEIGHT)->value.data, dlayer, n, f, h, NULL,
                           param(m, CONV_WEIGHT)->grad.data, param(m, CONV_BIAS)->grad.data);
    }
    return status;
}

const model_ops wdgcn_ops = {wdgcn_create, wdgcn_forward, wdgcn_backward, sizeof(wdgcn_step), 1};
