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
 * `conv` and a torch.nn.LSTM `lstm` would be.
 *
 * The skeleton around the GCN (graph_lstm_layer in ref/models/model.h) is GAT-LSTM's too: that
 * model (ref/models/model_gatlstm.c) gives its attention layer in the GCN's place. */
#include <math.h>
#include <string.h>

#include "ref/core/memory.h"
#include "ref/models/model.h"
#include "ref/nn/layers.h"
#include "ref/nn/propagate.h"

/* Parameter order = PyTorch's state_dict order. */
enum { CONV_BIAS, CONV_WEIGHT, WEIGHT_IH };

static parameter *param(const model *m, int which) { return &m->parameters.items[which]; }

int graph_lstm_create(const graph_lstm_layer *layer, model *m, rng *r, tf_error *err)
{
    const int64_t h = m->config.hidden;
    int64_t gate_weights[2] = {4 * h, h}, gate_biases[1] = {4 * h};
    if (layer->create(m, r, err) != TF_OK ||
        parameters_add(&m->parameters, "recurrent.lstm.weight_ih_l0", 2, gate_weights, err) < 0 ||
        parameters_add(&m->parameters, "recurrent.lstm.weight_hh_l0", 2, gate_weights, err) < 0 ||
        parameters_add(&m->parameters, "recurrent.lstm.bias_ih_l0", 1, gate_biases, err) < 0 ||
        parameters_add(&m->parameters, "recurrent.lstm.bias_hh_l0", 1, gate_biases, err) < 0)
        return TF_ERR_INPUT;
    /* torch.nn.LSTM: everything uniform(+-1/sqrt(H)), after the layer's own initialization. */
    for (int which = layer->lstm; which < layer->lstm + 4; which++)
        parameter_init_uniform(param(m, which), 1.0 / sqrt((double)h), r);
    return TF_OK;
}

/* The LSTM's four parameters, from the first (graph_lstm_layer::lstm). */
static parameter *lstm_of(const graph_lstm_layer *layer, const model *m) { return param(m, layer->lstm); }

int graph_lstm_forward(const graph_lstm_layer *layer, const model *m, const snapshot_seq *seq, window_tape *tape,
                       tf_error *err)
{
    const int64_t n = seq->num_nodes, h = m->config.hidden, nh = n * h;
    graph_lstm_step *steps = tape->steps;
    float *zeros = model_scratch_zeroed(m, (size_t)nh, sizeof(float), layer->title, err);
    float *preactivation = zeros ? model_scratch(m, (size_t)(4 * nh), sizeof(float), layer->title, err) : NULL;
    int status = preactivation ? TF_OK : TF_ERR_INPUT;
    for (int64_t t = 0; status == TF_OK && t < tape->count; t++) {
        graph_lstm_step *s = &steps[t];
        const float *previous = t == 0 ? zeros : tape->states + (t - 1) * nh;
        const float *previous_cell = t == 0 ? zeros : steps[t - 1].cell;
        if (!(s->layer = model_scratch_zeroed(m, 1, layer->tape_size, layer->title, err)) ||
            !(s->convolved = model_scratch(m, (size_t)nh, sizeof(float), layer->title, err)) ||
            !(s->gates = model_scratch(m, (size_t)(4 * nh), sizeof(float), layer->title, err)) ||
            !(s->cell = model_scratch(m, (size_t)nh, sizeof(float), layer->title, err)))
            status = TF_ERR_INPUT;
        else
            status = layer->forward(m, seq, tape->first + t, &s->graph, s->layer, s->convolved, err);
        if (status != TF_OK)
            break;
        m->kernels->relu_forward(s->convolved, nh, s->convolved);
        /* the LSTM over the vertex's own sequence */
        model_lstm_forward_step(m, lstm_of(layer, m), s->convolved, previous, previous_cell, n, h, preactivation,
                                s->cell, tape->states + t * nh, s->gates);
    }
    return status;
}

/* model_ops::backward (ref/models/model.h): dstates [tape->count][num_nodes][hidden]. */
int graph_lstm_backward(const graph_lstm_layer *layer, model *m, const snapshot_seq *seq, const window_tape *tape,
                        const float *dstates, tf_error *err)
{
    const int64_t n = seq->num_nodes, h = m->config.hidden, nh = n * h;
    const graph_lstm_step *steps = tape->steps;
    float *zeros = model_scratch_zeroed(m, (size_t)nh, sizeof(float), layer->title, err);
    float *dstate = model_scratch_zeroed(m, (size_t)nh, sizeof(float), layer->title, err);     /* dL/dH_t */
    float *dprevious = model_scratch_zeroed(m, (size_t)nh, sizeof(float), layer->title, err);  /* dL/dH_{t-1} */
    float *dcell = model_scratch_zeroed(m, (size_t)nh, sizeof(float), layer->title, err);      /* dL/dC_t */
    float *dprevious_cell = model_scratch_zeroed(m, (size_t)nh, sizeof(float), layer->title, err);
    float *dpreactivation = model_scratch_zeroed(m, (size_t)(4 * nh), sizeof(float), layer->title, err);
    float *dconvolved = model_scratch_zeroed(m, (size_t)nh, sizeof(float), layer->title, err);
    float *dlayer = model_scratch_zeroed(m, (size_t)nh, sizeof(float), layer->title, err);
    int status = zeros && dstate && dprevious && dcell && dprevious_cell && dpreactivation && dconvolved && dlayer
                     ? TF_OK : TF_ERR_INPUT;
    for (int64_t t = tape->count - 1; status == TF_OK && t >= 0; t--) {
        const graph_lstm_step *s = &steps[t];
        const float *previous = t == 0 ? zeros : tape->states + (t - 1) * nh;
        const float *previous_cell = t == 0 ? zeros : steps[t - 1].cell;
        /* This snapshot's state gets the head's gradient plus what the next snapshot sent. */
        model_lstm_carry(dstates + t * nh, t, tape->count, nh, dstate, dcell, dprevious, dprevious_cell);
        memset(dconvolved, 0, (size_t)nh * sizeof(float));
        memset(dlayer, 0, (size_t)nh * sizeof(float));
        model_lstm_backward_step(m, lstm_of(layer, m), s->convolved, previous, previous_cell, s->gates, s->cell,
                                 dstate, dcell, n, h, dpreactivation, dconvolved, dprevious, dprevious_cell);
        m->kernels->relu_backward(s->convolved, dconvolved, nh, dlayer);
        status = layer->backward(m, seq, &s->graph, s->layer, dlayer, err);
    }
    return status;
}

/* WD-GCN's graph layer: a GCN, Z_t = A^ X_t Theta^T + b. */
typedef struct gcn_tape {
    float *aggregated; /* [N][F] A^ X_t */
} gcn_tape;

static int gcn_create(model *m, rng *r, tf_error *err)
{
    int64_t vector[1] = {m->config.hidden}, conv[2] = {m->config.hidden, m->config.in_features};
    if (parameters_add(&m->parameters, "recurrent.conv.bias", 1, vector, err) < 0 ||
        parameters_add(&m->parameters, "recurrent.conv.lin.weight", 2, conv, err) < 0)
        return TF_ERR_INPUT;
    parameter_init_glorot(param(m, CONV_WEIGHT), r); /* GCNConv: Glorot weight, zero bias */
    return TF_OK;
}

static int gcn_forward(const model *m, const snapshot_seq *seq, int64_t t, propagation *graph, void *tape,
                       float *convolved, tf_error *err)
{
    const int64_t n = seq->num_nodes, f = m->config.in_features;
    gcn_tape *kept = tape;
    int status = TF_OK;
    if (!(kept->aggregated = model_scratch(m, (size_t)(n * f), sizeof(float), "WD-GCN tape", err)))
        status = TF_ERR_INPUT;
    else if (m->inputs) /* A^ X_t depends on t only: served (ref/models/model.h) */
        status = m->inputs->get(m->inputs->context, t, kept->aggregated, err);
    else if ((status = model_gcn_operator(m, graph, seq, t, err)) == TF_OK)
        m->kernels->propagate_forward(graph, seq->snapshots[t].features.data, f, kept->aggregated);
    if (status == TF_OK) /* aggregate the F-wide X_t first, then transform (A^ X Theta^T = (A^ X) Theta^T) */
        m->kernels->linear_forward(kept->aggregated, param(m, CONV_WEIGHT)->value.data,
                                   param(m, CONV_BIAS)->value.data, n, f, m->config.hidden, convolved);
    return status;
}

static int gcn_backward(model *m, const snapshot_seq *seq, const propagation *graph, const void *tape,
                        const float *dlayer, tf_error *err)
{
    const gcn_tape *kept = tape;
    (void)graph, (void)err; /* X_t is data: the gradient stops at the weight */
    m->kernels->linear_backward(kept->aggregated, param(m, CONV_WEIGHT)->value.data, dlayer, seq->num_nodes,
                                m->config.in_features, m->config.hidden, NULL, param(m, CONV_WEIGHT)->grad.data,
                                param(m, CONV_BIAS)->grad.data);
    return TF_OK;
}

static const graph_lstm_layer gcn_layer = {"WD-GCN", WEIGHT_IH, sizeof(gcn_tape), gcn_create, gcn_forward,
                                           gcn_backward};

static int wdgcn_create(model *m, rng *r, tf_error *err) { return graph_lstm_create(&gcn_layer, m, r, err); }

static int wdgcn_forward(const model *m, const snapshot_seq *seq, window_tape *tape, tf_error *err)
{
    return graph_lstm_forward(&gcn_layer, m, seq, tape, err);
}

static int wdgcn_backward(model *m, const snapshot_seq *seq, const window_tape *tape, const float *dstates,
                          tf_error *err)
{
    return graph_lstm_backward(&gcn_layer, m, seq, tape, dstates, err);
}

const model_ops wdgcn_ops = {wdgcn_create, wdgcn_forward, wdgcn_backward, sizeof(graph_lstm_step), 1};
