/* What the snapshot models share: the model table, creation, the linear head, the window loss. */
#include "ref/models/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/nn/layers.h"
#include "ref/core/memory.h"

/* The model table (fields left out are 0: MODEL_INPUTS_NONE, no, none). A line says which shape options a model takes, which operator it propagates
 * with, what --incremental can serve it, whether it reads X_t one hop only, whether --split vertex
 * trains it and which PyTorch Geometric Temporal cell it is. */
const char *const model_names[MODEL_COUNT + 1] = {"tgcn", "gconvgru", "gclstm", "evolvegcn", "tgcn2", "wdgcn", "gconvlstm", "mpnnlstm", "gcrnm1", "gatlstm", NULL};

#define NOT_SERVED_GCLSTM                                                                                           \
    "GC-LSTM's input term is X_t W, a plain product with a parameter (its Chebyshev convolutions act on H only): " \
    "nothing to aggregate"
#define NOT_SERVED_EVOLVEGCN "EvolveGCN-O convolves with a weight that evolves inside the window: nothing to aggregate ahead"
#define NOT_YET_SERVED "its gates read A^ X_t and then a second hop of their own: not served yet"
#define NOT_YET_SERVED_STACKED "its GCN reads A^ X_t, but the engine does not serve it yet"
#define NOT_SERVED_ATTENTION "its attention weights are computed from W X_t, a product with a parameter: nothing to aggregate ahead"
#define NOT_YET_SERVED_CHEBYSHEV "its x-convolutions read the Chebyshev terms of X_t, but the engine does not serve them yet"

const model_info model_table[MODEL_COUNT] = {
    [MODEL_TGCN] = {.title = "T-GCN", .summary = "GCN on X_t in every GRU gate (PyG Temporal's TGCN)", .ops = &tgcn_ops,
                    .takes = MODEL_TAKES_HIDDEN, .graph_operator = OPERATOR_GCN, .inputs = MODEL_INPUTS_GCN,
                    .one_hop = 1, .vertex_split = 1, .peer = "TGCN"},
    [MODEL_GCONVGRU] = {.title = "GConvGRU", .summary = "GRU with Chebyshev convolutions in its gates (GCRN)",
                        .ops = &gconvgru_ops, .takes = MODEL_TAKES_HIDDEN | MODEL_TAKES_K,
                        .graph_operator = OPERATOR_CHEBYSHEV, .inputs = MODEL_INPUTS_CHEBYSHEV, .vertex_split = 1,
                        .peer = "GConvGRU"},
    [MODEL_GCLSTM] = {.title = "GC-LSTM", .summary = "LSTM with a Chebyshev convolution of H", .ops = &gclstm_ops,
                      .takes = MODEL_TAKES_HIDDEN | MODEL_TAKES_K, .graph_operator = OPERATOR_CHEBYSHEV,
                      .no_inputs = NOT_SERVED_GCLSTM, .vertex_split = 1, .peer = "GCLSTM"},
    [MODEL_EVOLVEGCN] = {.title = "EvolveGCN-O", .summary = "a GRU evolves the GCN weight", .ops = &evolvegcn_ops,
                         .graph_operator = OPERATOR_GCN, .no_inputs = NOT_SERVED_EVOLVEGCN, .vertex_split = 1,
                         .peer = "EvolveGCNO"},
    [MODEL_TGCN2] = {.title = "two-layer T-GCN", .summary = "the T-GCN paper's two-layer GCN in every GRU gate",
                     .ops = &tgcn2_ops, .takes = MODEL_TAKES_HIDDEN, .graph_operator = OPERATOR_GCN,
                     .no_inputs = NOT_YET_SERVED},
    [MODEL_WDGCN] = {.title = "WD-GCN", .summary = "a GCN layer, then an LSTM per vertex (stacked)", .ops = &wdgcn_ops,
                     .takes = MODEL_TAKES_HIDDEN, .graph_operator = OPERATOR_GCN, .no_inputs = NOT_YET_SERVED_STACKED},
    [MODEL_GCONVLSTM] = {.title = "GConvLSTM", .summary = "LSTM with Chebyshev convolutions in its gates (GCRN-M2)",
                         .ops = &gconvlstm_ops, .takes = MODEL_TAKES_HIDDEN | MODEL_TAKES_K,
                         .graph_operator = OPERATOR_CHEBYSHEV, .no_inputs = NOT_YET_SERVED_CHEBYSHEV,
                         .peer = "GConvLSTM"},
    [MODEL_MPNNLSTM] = {.title = "MPNN-LSTM", .summary = "a two-layer GCN, then a two-layer LSTM per vertex (stacked)",
                        .ops = &mpnnlstm_ops, .takes = MODEL_TAKES_HIDDEN, .graph_operator = OPERATOR_GCN,
                        .no_inputs = NOT_YET_SERVED_STACKED, .peer = "MPNNLSTM", .output_blocks = 2},
    [MODEL_GCRNM1] = {.title = "GCRN-M1", .summary = "pairs of a Chebyshev convolution then an LSTM, stacked",
                      .ops = &gcrnm1_ops, .takes = MODEL_TAKES_HIDDEN | MODEL_TAKES_K | MODEL_TAKES_LAYERS,
                      .layers = 2, .graph_operator = OPERATOR_CHEBYSHEV, .no_inputs = NOT_YET_SERVED_CHEBYSHEV},
    [MODEL_GATLSTM] = {.title = "GAT-LSTM", .summary = "a graph attention layer (2 heads), then an LSTM per vertex (stacked)",
                       .ops = &gatlstm_ops, .takes = MODEL_TAKES_HIDDEN, .no_inputs = NOT_SERVED_ATTENTION},
};

const model_info *model_info_of(model_kind kind) { return &model_table[kind]; }

const char *model_kind_name(model_kind kind)
{
    return kind >= 0 && kind < MODEL_COUNT ? model_names[kind] : "unknown";
}

int model_kind_parse(const char *name, model_kind *kind, tf_error *err)
{
    char known[256] = "";
    for (int k = 0; k < MODEL_COUNT; k++) {
        if (strcmp(model_names[k], name) == 0) {
            *kind = (model_kind)k;
            return TF_OK;
        }
        snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", k ? ", " : "", model_names[k]);
    }
    return tf_error_set(err, TF_ERR_INPUT, "model \"%s\" is not one of %s", name, known);
}

int64_t model_state_width(const model *m)
{
    const model_info *info = &model_table[m->config.kind];
    if (!(info->takes & MODEL_TAKES_HIDDEN))
        return m->config.in_features;
    return info->output_blocks > 1 ? info->output_blocks * m->config.hidden : m->config.hidden;
}

/* Operator `kind` of snapshot t: from the model's source, or built from the snapshot's graph. */
static int model_operator(const model *m, propagation *p, const snapshot_seq *seq, int64_t t, operator_kind kind,
                          tf_error *err)
{
    const csr *g = &seq->snapshots[t].graph;
    int status = m->operators                ? m->operators->build(m->operators->context, t, kind, p, err)
                 : kind == OPERATOR_CHEBYSHEV ? ref_propagation_chebyshev(p, g, err)
                                              : ref_propagation_gcn(p, g, EDGE_NORM_SYMMETRIC, 1, err);
    if (status != TF_OK)
        return status;
    return m->kernels->prepare_propagation ? m->kernels->prepare_propagation(p, err) : TF_OK;
}

int model_gcn_operator(const model *m, propagation *p, const snapshot_seq *seq, int64_t t, tf_error *err)
{
    return model_operator(m, p, seq, t, OPERATOR_GCN, err);
}

int model_chebyshev_operator(const model *m, propagation *p, const snapshot_seq *seq, int64_t t, tf_error *err)
{
    return model_operator(m, p, seq, t, OPERATOR_CHEBYSHEV, err);
}

/* The head's parameters are the last two: linear.weight [out][width], linear.bias [out]. */
static parameter *head_weight(const model *m) { return &m->parameters.items[m->parameters.count - 2]; }
static parameter *head_bias(const model *m) { return &m->parameters.items[m->parameters.count - 1]; }

int model_create(model *m, const model_config *config, uint64_t seed, tf_error *err)
{
    memset(m, 0, sizeof *m);
    m->config = *config;
    m->kernels = &ref_kernels;
    if (config->kind < 0 || config->kind >= MODEL_COUNT)
        return tf_error_set(err, TF_ERR_INPUT, "unknown model kind %d", (int)config->kind);
    const model_info *info = &model_table[config->kind];
    m->ops = info->ops;
    if (config->in_features < 1 || config->out_features < 1 || ((info->takes & MODEL_TAKES_HIDDEN) && config->hidden < 1))
        return tf_error_set(err, TF_ERR_INPUT, "model %s: features %lld, hidden %lld, outputs %lld; expected >= 1",
                            model_kind_name(config->kind), (long long)config->in_features, (long long)config->hidden,
                            (long long)config->out_features);
    if ((info->takes & MODEL_TAKES_K) && (config->chebyshev_k < 1 || config->chebyshev_k > 16))
        return tf_error_set(err, TF_ERR_INPUT, "model %s: Chebyshev order K = %d, expected 1..16",
                            model_kind_name(config->kind), config->chebyshev_k);
    if (info->takes & MODEL_TAKES_LAYERS) {
        if (m->config.layers == 0)
            m->config.layers = info->layers;
        if (m->config.layers < 1 || m->config.layers > 16)
            return tf_error_set(err, TF_ERR_INPUT, "model %s: %d layers, expected 1..16", model_kind_name(config->kind),
                                m->config.layers);
    }
    if (!(m->scratch = tf_alloc(1, sizeof *m->scratch, "model workspace", err)))
        return TF_ERR_INPUT;
    workspace_init(m->scratch);
    rng r;
    rng_seed(&r, seed);
    int64_t width = model_state_width(m);
    int64_t weight_shape[2] = {config->out_features, width}, bias_shape[1] = {config->out_features};
    int status = m->ops->create(m, &r, err);
    if (status == TF_OK && (parameters_add(&m->parameters, "linear.weight", 2, weight_shape, err) < 0 ||
                            parameters_add(&m->parameters, "linear.bias", 1, bias_shape, err) < 0))
        status = TF_ERR_INPUT;
    if (status != TF_OK) {
        model_free(m);
        return status;
    }
    /* torch.nn.Linear's default: uniform(+-1/sqrt(fan_in)) for weight and bias. */
    parameter_init_uniform(head_weight(m), 1.0 / sqrt((double)width), &r);
    parameter_init_uniform(head_bias(m), 1.0 / sqrt((double)width), &r);
    return TF_OK;
}

void model_lstm_carry(const float *dstates_t, int64_t t, int64_t count, int64_t nh, float *dstate, float *dcell,
                      float *dprevious, float *dprevious_cell)
{
    const int last = t + 1 == count;
    for (int64_t i = 0; i < nh; i++) {
        dstate[i] = dstates_t[i] + (last ? 0.0f : dprevious[i]);
        dcell[i] = last ? 0.0f : dprevious_cell[i];
    }
    memset(dprevious, 0, (size_t)nh * sizeof(float));
    memset(dprevious_cell, 0, (size_t)nh * sizeof(float));
}

void model_lstm_forward_step(const model *m, const parameter *lstm, const float *input, const float *previous,
                             const float *previous_cell, int64_t n, int64_t h, float *preactivation, float *cell,
                             float *state, float *gates)
{
    const kernels *k = m->kernels;
    k->linear_forward(input, lstm[0].value.data, lstm[2].value.data, n, h, 4 * h, preactivation);
    k->linear_accumulate(previous, lstm[1].value.data, n, h, 4 * h, preactivation);
    k->add_bias(preactivation, lstm[3].value.data, n, 4 * h);
    k->lstm_pointwise_forward(preactivation, previous_cell, n, h, cell, state, gates);
}

void model_lstm_backward_step(const model *m, parameter *lstm, const float *input, const float *previous,
                              const float *previous_cell, const float *gates, const float *cell, const float *dstate,
                              const float *dcell, int64_t n, int64_t h, float *dpreactivation, float *dinput,
                              float *dprevious, float *dprevious_cell)
{
    const kernels *k = m->kernels;
    k->lstm_pointwise_backward(gates, previous_cell, cell, dstate, dcell, n, h, dpreactivation, dprevious_cell);
    k->linear_backward(input, lstm[0].value.data, dpreactivation, n, h, 4 * h, dinput, lstm[0].grad.data,
                       lstm[2].grad.data);
    k->linear_backward(previous, lstm[1].value.data, dpreactivation, n, h, 4 * h, dprevious, lstm[1].grad.data,
                       lstm[3].grad.data);
}

void model_free(model *m)
{
    parameters_free(&m->parameters);
    if (m->scratch)
        workspace_free(m->scratch);
    free(m->scratch);
    memset(m, 0, sizeof *m);
}

int model_forward(const model *m, const snapshot_seq *seq, int64_t first, int64_t count, window_tape *tape,
                  float *predictions, tf_error *err)
{
    memset(tape, 0, sizeof *tape);
    if (first < 0 || count < 1 || first + count > seq->num_snapshots)
        return tf_error_set(err, TF_ERR_INPUT, "window of %lld snapshots from %lld is outside 0..%lld",
                            (long long)count, (long long)first, (long long)seq->num_snapshots - 1);
    if (seq->feature_width != m->config.in_features || seq->target_width != m->config.out_features)
        return tf_error_set(err, TF_ERR_INPUT, "model expects %lld features and %lld targets, the data has %lld and %lld",
                            (long long)m->config.in_features, (long long)m->config.out_features,
                            (long long)seq->feature_width, (long long)seq->target_width);
    const int64_t n = seq->num_nodes, width = model_state_width(m), out = m->config.out_features;
    tape->first = first;
    tape->count = count;
    tape->states = model_scratch(m, (size_t)(count * n * width), sizeof(float), "hidden states", err);
    tape->activated = tape->states ? model_scratch(m, (size_t)(count * n * width), sizeof(float), "hidden states", err)
                                   : NULL;
    /* Zeroed, so that window_tape_free() can free every record's operator, even after a failure. */
    tape->steps = tape->activated ? model_scratch_zeroed(m, (size_t)count, m->ops->step_size, "the cell's tape", err)
                                  : NULL;
    if (!tape->steps || m->ops->forward(m, seq, tape, err) != TF_OK) {
        window_tape_free(m, tape);
        return TF_ERR_INPUT;
    }
    /* The head of PyTorch Geometric Temporal's examples: y^ = Linear(ReLU(H)). */
    m->kernels->relu_forward(tape->states, count * n * width, tape->activated);
    m->kernels->linear_forward(tape->activated, head_weight(m)->value.data, head_bias(m)->value.data, count * n, width,
                               out, predictions);
    if (m->kernels->take_error && m->kernels->take_error(err) != TF_OK) {
        window_tape_free(m, tape);
        return err->code;
    }
    return TF_OK;
}

int model_backward(model *m, const snapshot_seq *seq, const window_tape *tape, const float *dpredictions,
                   tf_error *err)
{
    const int64_t n = seq->num_nodes, width = model_state_width(m), out = m->config.out_features;
    const int64_t size = tape->count * n * width;
    float *dactivated = model_scratch_zeroed(m, (size_t)size, sizeof *dactivated, "head gradients", err);
    float *dstates = dactivated ? model_scratch_zeroed(m, (size_t)size, sizeof *dstates, "state gradients", err) : NULL;
    int status = dstates ? TF_OK : TF_ERR_INPUT;
    if (status == TF_OK) {
        m->kernels->linear_backward(tape->activated, head_weight(m)->value.data, dpredictions, tape->count * n, width, out,
                            dactivated, head_weight(m)->grad.data, head_bias(m)->grad.data);
        m->kernels->relu_backward(tape->activated, dactivated, size, dstates);
        status = model_backward_states(m, seq, tape, dstates, err);
    }
    return status;
}

int model_backward_states(model *m, const snapshot_seq *seq, const window_tape *tape, const float *dstates,
                          tf_error *err)
{
    int status = m->ops->backward(m, seq, tape, dstates, err);
    if (status == TF_OK && m->kernels->take_error)
        status = m->kernels->take_error(err);
    return status;
}

void window_tape_free(const model *m, window_tape *tape)
{
    /* Each step record begins with its snapshot's operator (model_ops::step_size). */
    for (int64_t t = 0; tape->steps && t < tape->count; t++)
        ref_propagation_free((propagation *)((char *)tape->steps + (size_t)t * m->ops->step_size));
    workspace_reset(m->scratch); /* the tape's buffers and the window's scratch */
    memset(tape, 0, sizeof *tape);
}

void *model_scratch(const model *m, size_t count, size_t size, const char *what, tf_error *err)
{
    return workspace_alloc(m->scratch, count, size, what, err);
}

void *model_scratch_zeroed(const model *m, size_t count, size_t size, const char *what, tf_error *err)
{
    return workspace_zeroed(m->scratch, count, size, what, err);
}

double model_window_loss_of(const model *m, const snapshot_seq *seq, int64_t first, int64_t count,
                            const float *predictions, float scale, float *dpredictions)
{
    const int64_t n = seq->num_nodes, out = seq->target_width;
    double total = 0;
    for (int64_t t = 0; t < count; t++) {
        const snapshot *s = &seq->snapshots[first + t];
        total += m->kernels->mse_loss(predictions + t * n * out, s->targets.data, s->present, n, out,
                                      scale / (float)count, dpredictions ? dpredictions + t * n * out : NULL);
    }
    return total / (double)count;
}

double model_window_loss(const snapshot_seq *seq, int64_t first, int64_t count, const float *predictions,
                         float scale, float *dpredictions)
{
    model reference; /* only its kernels are read */
    memset(&reference, 0, sizeof reference);
    reference.kernels = &ref_kernels;
    return model_window_loss_of(&reference, seq, first, count, predictions, scale, dpredictions);
}
