/* GAT-LSTM, the stacked model DyGNeX evaluates beside WD-GCN: a graph attention layer on every
 * snapshot (ref/nn/graph_attention.h, PyTorch Geometric's GATConv with GATLSTM_HEADS heads
 * averaged), its parameters shared by all snapshots, then an LSTM per vertex over the sequence of
 * its outputs:
 *
 *     Z_t = ReLU(GAT(X_t, G_t))                                        [N][H]
 *     I, F, G, O, C', H' as WD-GCN's LSTM (ref/models/model_wdgcn.c), on Z_t
 *
 * GAT replaces WD-GCN's fixed GCN coefficients with attention weights computed from the features:
 * alpha_ij = softmax over i's in-neighbours and itself of LeakyReLU(a_src . W x_j + a_dst . W x_i).
 * DyGNeX names the model without its configuration; the heads, their mean and the ReLU are this
 * project's choice (chapters/01-models.md). Parameters are named as a GATConv `conv` and a
 * torch.nn.LSTM `lstm` would be. The layer reads the snapshot's graph itself (the operator source of
 * a vertex split does not serve attention: the table says the model does not take --split vertex). */
#include <math.h>
#include <string.h>

#include "ref/core/memory.h"
#include "ref/models/model.h"
#include "ref/nn/graph_attention.h"
#include "ref/nn/layers.h"

/** Heads of the attention layer, averaged (so the output is --hidden wide whatever H is). */
#define GATLSTM_HEADS 2

/* Parameter order = PyTorch's state_dict order. */
enum { ATT_SRC, ATT_DST, CONV_BIAS, CONV_WEIGHT, WEIGHT_IH, WEIGHT_HH, BIAS_IH, BIAS_HH };

static parameter *param(const model *m, int which) { return &m->parameters.items[which]; }

/* What one snapshot's forward keeps. */
typedef struct gatlstm_step {
    propagation graph;          /* the snapshot's graph (and a twin's transpose), first (model_ops::step_size) */
    graph_attention_tape conv;  /* the attention layer's tape */
    float *convolved;           /* [N][H] Z_t */
    float *gates;               /* [N][4H] i, f, g, o after their nonlinearities */
    float *cell;                /* [N][H] C' */
} gatlstm_step;

static graph_attention layer_of(const model *m)
{
    graph_attention a = {m->config.in_features, m->config.hidden, GATLSTM_HEADS, 0, param(m, ATT_SRC),
                         param(m, ATT_DST), param(m, CONV_BIAS), param(m, CONV_WEIGHT)};
    return a;
}

static int gatlstm_create(model *m, rng *r, tf_error *err)
{
    const int64_t f = m->config.in_features, h = m->config.hidden;
    int64_t vectors[3] = {1, GATLSTM_HEADS, h}, bias[1] = {h}, weight[2] = {GATLSTM_HEADS * h, f};
    int64_t gate_weights[2] = {4 * h, h}, gate_biases[1] = {4 * h};
    if (parameters_add(&m->parameters, "recurrent.conv.att_src", 3, vectors, err) < 0 ||
        parameters_add(&m->parameters, "recurrent.conv.att_dst", 3, vectors, err) < 0 ||
        parameters_add(&m->parameters, "recurrent.conv.bias", 1, bias, err) < 0 ||
        parameters_add(&m->parameters, "recurrent.conv.lin.weight", 2, weight, err) < 0 ||
        parameters_add(&m->parameters, "recurrent.lstm.weight_ih_l0", 2, gate_weights, err) < 0 ||
        parameters_add(&m->parameters, "recurrent.lstm.weight_hh_l0", 2, gate_weights, err) < 0 ||
        parameters_add(&m->parameters, "recurrent.lstm.bias_ih_l0", 1, gate_biases, err) < 0 ||
        parameters_add(&m->parameters, "recurrent.lstm.bias_hh_l0", 1, gate_biases, err) < 0)
        return TF_ERR_INPUT;
    /* GATConv: Glorot weight and attention vectors, zero bias; torch.nn.LSTM: uniform(+-1/sqrt(H)). */
    parameter_init_glorot(param(m, ATT_SRC), r);
    parameter_init_glorot(param(m, ATT_DST), r);
    parameter_init_glorot(param(m, CONV_WEIGHT), r);
    for (int which = WEIGHT_IH; which <= BIAS_HH; which++)
        parameter_init_uniform(param(m, which), 1.0 / sqrt((double)h), r);
    return TF_OK;
}

static int gatlstm_forward(const model *m, const snapshot_seq *seq, window_tape *tape, tf_error *err)
{
    const int64_t n = seq->num_nodes, h = m->config.hidden, nh = n * h;
    const kernels *k = m->kernels;
    const graph_attention layer = layer_of(m);
    gatlstm_step *steps = tape->steps;
    float *zeros = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GAT-LSTM state", err);
    float *preactivation = zeros ? model_scratch(m, (size_t)(4 * nh), sizeof(float), "GAT-LSTM scratch", err) : NULL;
    int status = preactivation ? TF_OK : TF_ERR_INPUT;
    for (int64_t t = 0; status == TF_OK && t < tape->count; t++) {
        gatlstm_step *s = &steps[t];
        const snapshot *snap = &seq->snapshots[tape->first + t];
        const float *previous = t == 0 ? zeros : tape->states + (t - 1) * nh;
        const float *previous_cell = t == 0 ? zeros : steps[t - 1].cell;
        s->graph.graph = &snap->graph;
        if (!(s->convolved = model_scratch(m, (size_t)nh, sizeof(float), "GAT-LSTM tape", err)) ||
            !(s->gates = model_scratch(m, (size_t)(4 * nh), sizeof(float), "GAT-LSTM tape", err)) ||
            !(s->cell = model_scratch(m, (size_t)nh, sizeof(float), "GAT-LSTM tape", err)) ||
            (k->prepare_propagation && k->prepare_propagation(&s->graph, err) != TF_OK) ||
            ref_graph_attention_forward(k, &layer, &s->graph, snap->features.data, m->scratch, &s->conv, s->convolved,
                                        err) != TF_OK) {
            status = TF_ERR_INPUT;
            break;
        }
        k->relu_forward(s->convolved, nh, s->convolved);
        /* the LSTM over the vertex's own sequence */
        model_lstm_forward_step(m, param(m, WEIGHT_IH), s->convolved, previous, previous_cell, n, h, preactivation,
                                s->cell, tape->states + t * nh, s->gates);
    }
    return status;
}

/* model_ops::backward (ref/models/model.h): dstates [tape->count][num_nodes][hidden]. */
static int gatlstm_backward(model *m, const snapshot_seq *seq, const window_tape *tape, const float *dstates,
                            tf_error *err)
{
    const int64_t n = seq->num_nodes, h = m->config.hidden, nh = n * h;
    const kernels *k = m->kernels;
    const graph_attention layer = layer_of(m);
    const gatlstm_step *steps = tape->steps;
    float *zeros = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GAT-LSTM gradients", err);
    float *dstate = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GAT-LSTM gradients", err);     /* dL/dH_t */
    float *dprevious = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GAT-LSTM gradients", err);  /* dL/dH_{t-1} */
    float *dcell = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GAT-LSTM gradients", err);      /* dL/dC_t */
    float *dprevious_cell = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GAT-LSTM gradients", err);
    float *dpreactivation = model_scratch_zeroed(m, (size_t)(4 * nh), sizeof(float), "GAT-LSTM gradients", err);
    float *dconvolved = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GAT-LSTM gradients", err);
    float *dlayer = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GAT-LSTM gradients", err);
    int status = zeros && dstate && dprevious && dcell && dprevious_cell && dpreactivation && dconvolved && dlayer
                     ? TF_OK : TF_ERR_INPUT;
    for (int64_t t = tape->count - 1; status == TF_OK && t >= 0; t--) {
        const gatlstm_step *s = &steps[t];
        const float *previous = t == 0 ? zeros : tape->states + (t - 1) * nh;
        const float *previous_cell = t == 0 ? zeros : steps[t - 1].cell;
        /* This snapshot's state gets the head's gradient plus what the next snapshot sent. */
        model_lstm_carry(dstates + t * nh, t, tape->count, nh, dstate, dcell, dprevious, dprevious_cell);
        memset(dconvolved, 0, (size_t)nh * sizeof(float));
        memset(dlayer, 0, (size_t)nh * sizeof(float));
        model_lstm_backward_step(m, param(m, WEIGHT_IH), s->convolved, previous, previous_cell, s->gates, s->cell, dstate,
                                 dcell, n, h, dpreactivation, dconvolved, dprevious, dprevious_cell);
        k->relu_backward(s->convolved, dconvolved, nh, dlayer);
        status = ref_graph_attention_backward(k, &layer, &s->graph, &s->conv, dlayer, NULL, m->scratch, err);
    }
    return status;
}

const model_ops gatlstm_ops = {gatlstm_create, gatlstm_forward, gatlstm_backward, sizeof(gatlstm_step), 1};
