/* GAT-LSTM, the stacked model DyGNeX evaluates beside WD-GCN: a graph attention layer on every
 * snapshot (ref/nn/graph_attention.h, PyTorch Geometric's GATConv with GATLSTM_HEADS heads
 * averaged), its parameters shared by all snapshots, then an LSTM per vertex over the sequence of
 * its outputs:
 *
 *     Z_t = ReLU(GAT(X_t, G_t))                                        [N][H]
 *     I, F, G, O, C', H' as WD-GCN's LSTM (ref/models/model_wdgcn.c), on Z_t
 *
 * The model is WD-GCN's skeleton (graph_lstm_layer in ref/models/model.h) with this layer in the
 * GCN's place.
 *
 * GAT replaces WD-GCN's fixed GCN coefficients with attention weights computed from the features:
 * alpha_ij = softmax over i's in-neighbours and itself of LeakyReLU(a_src . W x_j + a_dst . W x_i).
 * DyGNeX names the model without its configuration; the heads, their mean and the ReLU are this
 * project's choice (chapters/01a-snapshot-models.md). Parameters are named as a GATConv `conv` and a
 * torch.nn.LSTM `lstm` would be. The layer takes its graph from model_attention_graph(), so a vertex
 * split (chapter 06) serves it a rank's rows and the halo whose rows of X_t it fetches. */
#include "ref/models/model.h"
#include "ref/nn/graph_attention.h"

/** Heads of the attention layer, averaged (so the output is --hidden wide whatever H is). */
#define GATLSTM_HEADS 2

/* Parameter order = PyTorch's state_dict order. */
enum { ATT_SRC, ATT_DST, CONV_BIAS, CONV_WEIGHT, WEIGHT_IH };

static parameter *param(const model *m, int which) { return &m->parameters.items[which]; }

static graph_attention layer_of(const model *m)
{
    graph_attention a = {m->config.in_features, m->config.hidden, GATLSTM_HEADS, 0, param(m, ATT_SRC),
                         param(m, ATT_DST), param(m, CONV_BIAS), param(m, CONV_WEIGHT)};
    return a;
}

static int attention_create(model *m, rng *r, tf_error *err)
{
    const int64_t f = m->config.in_features, h = m->config.hidden;
    int64_t vectors[3] = {1, GATLSTM_HEADS, h}, bias[1] = {h}, weight[2] = {GATLSTM_HEADS * h, f};
    if (parameters_add(&m->parameters, "recurrent.conv.att_src", 3, vectors, err) < 0 ||
        parameters_add(&m->parameters, "recurrent.conv.att_dst", 3, vectors, err) < 0 ||
        parameters_add(&m->parameters, "recurrent.conv.bias", 1, bias, err) < 0 ||
        parameters_add(&m->parameters, "recurrent.conv.lin.weight", 2, weight, err) < 0)
        return TF_ERR_INPUT;
    /* GATConv: Glorot weight and attention vectors, zero bias. */
    parameter_init_glorot(param(m, ATT_SRC), r);
    parameter_init_glorot(param(m, ATT_DST), r);
    parameter_init_glorot(param(m, CONV_WEIGHT), r);
    return TF_OK;
}

static int attention_forward(const model *m, const snapshot_seq *seq, int64_t t, propagation *graph, void *tape,
                             float *convolved, tf_error *err)
{
    const graph_attention layer = layer_of(m);
    const int status = model_attention_graph(m, graph, seq, t, err);
    return status != TF_OK ? status
                           : ref_graph_attention_forward(m->kernels, &layer, graph, seq->snapshots[t].features.data,
                                                         m->scratch, tape, convolved, err);
}

static int attention_backward(model *m, const snapshot_seq *seq, const propagation *graph, const void *tape,
                              const float *dlayer, tf_error *err)
{
    const graph_attention layer = layer_of(m);
    (void)seq; /* X_t is data: no gradient for it */
    return ref_graph_attention_backward(m->kernels, &layer, graph, tape, dlayer, NULL, m->scratch, err);
}

static const graph_lstm_layer attention_layer = {"GAT-LSTM", WEIGHT_IH, sizeof(graph_attention_tape),
                                                 attention_create, attention_forward, attention_backward};

static int gatlstm_create(model *m, rng *r, tf_error *err) { return graph_lstm_create(&attention_layer, m, r, err); }

static int gatlstm_forward(const model *m, const snapshot_seq *seq, window_tape *tape, tf_error *err)
{
    return graph_lstm_forward(&attention_layer, m, seq, tape, err);
}

static int gatlstm_backward(model *m, const snapshot_seq *seq, const window_tape *tape, const float *dstates,
                            tf_error *err)
{
    return graph_lstm_backward(&attention_layer, m, seq, tape, dstates, err);
}

const model_ops gatlstm_ops = {gatlstm_create, gatlstm_forward, gatlstm_backward, sizeof(graph_lstm_step), 1};
