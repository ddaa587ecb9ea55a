/* MPNN-LSTM (Panagopoulos et al., 2021), the stacked model DGC evaluates, with the layers of PyTorch
 * Geometric Temporal's MPNNLSTM: a two-layer GCN on every snapshot, the two layers' outputs side by
 * side as the input of a two-layer LSTM per vertex, its states carried from snapshot to snapshot:
 *
 *     G1 = ReLU(A^ X_t Theta1^T + b1),   G2 = ReLU(A^ G1 Theta2^T + b2)         [N][H] each
 *     (H1, C1) = LSTM_1([G1 | G2], (H1, C1))                                    [N][H]
 *     (H2, C2) = LSTM_2(H1, (H2, C2))                                           [N][H]
 *
 * and the cell's output is [H1 | H2] ([N][2H]), which the head reads as the library's MPNNLSTM
 * concatenates H1 and H2 for its own. Three differences from that class, each stated:
 *  - no batch norm and no dropout after the GCN layers: batch norm's statistics are a mean over the
 *    vertices of the batch, so a vertex's output would depend on which vertices share its rank (vertex
 *    partitioning, hybrid batches and mini-batches would all change the model), and dropout draws a
 *    mask per vertex that no two partitions of the graph would draw alike; without them every
 *    technique has one model to be equal to;
 *  - a prediction for every snapshot from the states there (the library's forward predicts once per
 *    window, from the last states);
 *  - no skip of the raw features (the library appends X's columns of the window's snapshots laid out
 *    for lagged data to the head's input).
 * Each LSTM is torch.nn.LSTM (gates i, f, g, o; bias_ih and bias_hh both), named as the library's
 * _recurrent_1 and _recurrent_2, the GCN layers as its _convolution_1 and _convolution_2. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ref/core/memory.h"
#include "ref/models/model.h"
#include "ref/nn/layers.h"
#include "ref/nn/propagate.h"

/* Parameter order = PyTorch's state_dict order. */
enum { CONV1_BIAS, CONV1_WEIGHT, CONV2_BIAS, CONV2_WEIGHT, LSTM1, LSTM2 = LSTM1 + 4 };
/* Within an LSTM's four. */
enum { WEIGHT_IH, WEIGHT_HH, BIAS_IH, BIAS_HH };

static parameter *param(const model *m, int which) { return &m->parameters.items[which]; }

/* One LSTM layer's record of a snapshot. */
typedef struct lstm_record {
    float *state;   /* [N][H] its H' */
    float *cell;    /* [N][H] its C' */
    float *gates;   /* [N][4H] i, f, g, o after their nonlinearities */
} lstm_record;

typedef struct mpnnlstm_step {
    propagation graph;    /* A^ of this snapshot, first (model_ops::step_size) */
    float *aggregated;    /* [N][F] A^ X_t */
    float *first;         /* [N][H] G1 */
    float *spread;        /* [N][H] A^ G1 */
    float *second;        /* [N][H] G2 */
    float *joined;        /* [N][2H] [G1 | G2] */
    lstm_record lstm[2];  /* the two LSTM layers */
} mpnnlstm_step;

static int mpnnlstm_create(model *m, rng *r, tf_error *err)
{
    const int64_t f = m->config.in_features, h = m->config.hidden;
    int64_t vector[1] = {h}, conv1[2] = {h, f}, conv2[2] = {h, h}, gate_biases[1] = {4 * h};
    int64_t input1[2] = {4 * h, 2 * h}, square[2] = {4 * h, h};
    if (parameters_add(&m->parameters, "recurrent._convolution_1.bias", 1, vector, err) < 0 ||
        parameters_add(&m->parameters, "recurrent._convolution_1.lin.weight", 2, conv1, err) < 0 ||
        parameters_add(&m->parameters, "recurrent._convolution_2.bias", 1, vector, err) < 0 ||
        parameters_add(&m->parameters, "recurrent._convolution_2.lin.weight", 2, conv2, err) < 0)
        return TF_ERR_INPUT;
    for (int layer = 1; layer <= 2; layer++) {
        char names[4][64];
        snprintf(names[WEIGHT_IH], 64, "recurrent._recurrent_%d.weight_ih_l0", layer);
        snprintf(names[WEIGHT_HH], 64, "recurrent._recurrent_%d.weight_hh_l0", layer);
        snprintf(names[BIAS_IH], 64, "recurrent._recurrent_%d.bias_ih_l0", layer);
        snprintf(names[BIAS_HH], 64, "recurrent._recurrent_%d.bias_hh_l0", layer);
        if (parameters_add(&m->parameters, names[WEIGHT_IH], 2, layer == 1 ? input1 : square, err) < 0 ||
            parameters_add(&m->parameters, names[WEIGHT_HH], 2, square, err) < 0 ||
            parameters_add(&m->parameters, names[BIAS_IH], 1, gate_biases, err) < 0 ||
            parameters_add(&m->parameters, names[BIAS_HH], 1, gate_biases, err) < 0)
            return TF_ERR_INPUT;
    }
    /* GCNConv: Glorot weight, zero bias; torch.nn.LSTM: everything uniform(+-1/sqrt(H)). */
    parameter_init_glorot(param(m, CONV1_WEIGHT), r);
    parameter_init_glorot(param(m, CONV2_WEIGHT), r);
    for (int which = LSTM1; which < LSTM2 + 4; which++)
        parameter_init_uniform(param(m, which), 1.0 / sqrt((double)h), r);
    return TF_OK;
}

/* One LSTM layer (its parameters from @p first) on input [n][in] from (previous, previous_cell), into
 * @p out; preactivation [n][4h] scratch. */
static void lstm_forward(const model *m, int first, const float *input, int64_t in, const float *previous,
                         const float *previous_cell, int64_t n, lstm_record *out, float *preactivation)
{
    const int64_t h = m->config.hidden;
    const kernels *k = m->kernels;
    k->linear_forward(input, param(m, first + WEIGHT_IH)->value.data, param(m, first + BIAS_IH)->value.data, n, in,
                      4 * h, preactivation);
    k->linear_accumulate(previous, param(m, first + WEIGHT_HH)->value.data, n, h, 4 * h, preactivation);
    k->add_bias(preactivation, param(m, first + BIAS_HH)->value.data, n, 4 * h);
    k->lstm_pointwise_forward(preactivation, previous_cell, n, h, out->cell, out->state, out->gates);
}

/* The snapshot's records, from the model's workspace. */
static int step_alloc(const model *m, mpnnlstm_step *s, int64_t n, tf_error *err)
{
    const int64_t f = m->config.in_features, h = m->config.hidden, nh = n * h;
    float **buffers[] = {&s->first, &s->spread, &s->second, &s->lstm[0].state, &s->lstm[0].cell,
                         &s->lstm[1].state, &s->lstm[1].cell};
    if (!(s->aggregated = model_scratch(m, (size_t)(n * f), sizeof(float), "MPNN-LSTM tape", err)) ||
        !(s->joined = model_scratch(m, (size_t)(2 * nh), sizeof(float), "MPNN-LSTM tape", err)) ||
        !(s->lstm[0].gates = model_scratch(m, (size_t)(4 * nh), sizeof(float), "MPNN-LSTM tape", err)) ||
        !(s->lstm[1].gates = model_scratch(m, (size_t)(4 * nh), sizeof(float), "MPNN-LSTM tape", err)))
        return TF_ERR_INPUT;
    for (size_t b = 0; b < sizeof buffers / sizeof *buffers; b++)
        if (!(*buffers[b] = model_scratch(m, (size_t)nh, sizeof(float), "MPNN-LSTM tape", err)))
            return TF_ERR_INPUT;
    return TF_OK;
}

static int mpnnlstm_forward(const model *m, const snapshot_seq *seq, window_tape *tape, tf_error *err)
{
    const int64_t n = seq->num_nodes, f = m->config.in_features, h = m->config.hidden, nh = n * h;
    const kernels *k = m->kernels;
    mpnnlstm_step *steps = tape->steps;
    float *zeros = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "MPNN-LSTM state", err);
    float *preactivation = zeros ? model_scratch(m, (size_t)(4 * nh), sizeof(float), "MPNN-LSTM scratch", err) : NULL;
    int status = preactivation ? TF_OK : TF_ERR_INPUT;
    for (int64_t t = 0; status == TF_OK && t < tape->count; t++) {
        mpnnlstm_step *s = &steps[t];
        if ((status = step_alloc(m, s, n, err)) != TF_OK ||
            (status = model_gcn_operator(m, &s->graph, seq, tape->first + t, err)) != TF_OK)
            break;
        /* the two GCN layers, each aggregating before it transforms */
        if (m->inputs) /* A^ X_t depends on t only: served (ref/models/model.h); the second layer's is not */
            status = m->inputs->get(m->inputs->context, tape->first + t, s->aggregated, err);
        else
            k->propagate_forward(&s->graph, seq->snapshots[tape->first + t].features.data, f, s->aggregated);
        if (status != TF_OK)
            break;
        k->linear_forward(s->aggregated, param(m, CONV1_WEIGHT)->value.data, param(m, CONV1_BIAS)->value.data, n, f, h,
                          s->first);
        k->relu_forward(s->first, nh, s->first);
        k->propagate_forward(&s->graph, s->first, h, s->spread);
        k->linear_forward(s->spread, param(m, CONV2_WEIGHT)->value.data, param(m, CONV2_BIAS)->value.data, n, h, h,
                          s->second);
        k->relu_forward(s->second, nh, s->second);
        k->copy_rows(s->joined, 2 * h, s->first, h, n, h);
        k->copy_rows(s->joined + h, 2 * h, s->second, h, n, h);
        /* the two LSTM layers, each from its own state at the previous snapshot */
        for (int layer = 0; layer < 2; layer++) {
            const lstm_record *before = t == 0 ? NULL : &steps[t - 1].lstm[layer];
            lstm_forward(m, layer == 0 ? LSTM1 : LSTM2, layer == 0 ? s->joined : s->lstm[0].state,
                         layer == 0 ? 2 * h : h, before ? before->state : zeros, before ? before->cell : zeros, n,
                         &s->lstm[layer], preactivation);
        }
        float *output = tape->states + t * 2 * nh; /* [N][2H] [H1 | H2] */
        k->copy_rows(output, 2 * h, s->lstm[0].state, h, n, h);
        k->copy_rows(output + h, 2 * h, s->lstm[1].state, h, n, h);
    }
    return status;
}

/* Gradients carried from one snapshot to the one before, and the scratch of a step's backward. */
typedef struct mpnnlstm_gradients {
    float *dstate[2], *dcell[2];          /* [N][H] into H'_l and C'_l of this snapshot */
    float *dprevious[2], *dprevious_cell[2]; /* [N][H] into the previous snapshot's */
    float *dpreactivation;                /* [N][4H] */
    float *djoined;                       /* [N][2H] */
    float *dlayer, *dspread, *dfirst;     /* [N][H] */
} mpnnlstm_gradients;

/* One LSTM layer's backward at a snapshot: from g->dstate[layer], g->dcell[layer], adds into its
 * parameters' gradients, g->dprevious[layer], g->dprevious_cell[layer] and @p dinput [n][in]. */
static void lstm_backward(model *m, int layer, const lstm_record *now, const float *previous,
                          const float *previous_cell, const float *input, int64_t in, int64_t n, mpnnlstm_gradients *g,
                          float *dinput)
{
    const int64_t h = m->config.hidden;
    const int first = layer == 0 ? LSTM1 : LSTM2;
    const kernels *k = m->kernels;
    k->lstm_pointwise_backward(now->gates, previous_cell, now->cell, g->dstate[layer], g->dcell[layer], n, h,
                               g->dpreactivation, g->dprevious_cell[layer]);
    k->linear_backward(input, param(m, first + WEIGHT_IH)->value.data, g->dpreactivation, n, in, 4 * h, dinput,
                       param(m, first + WEIGHT_IH)->grad.data, param(m, first + BIAS_IH)->grad.data);
    k->linear_backward(previous, param(m, first + WEIGHT_HH)->value.data, g->dpreactivation, n, h, 4 * h,
                       g->dprevious[layer], param(m, first + WEIGHT_HH)->grad.data,
                       param(m, first + BIAS_HH)->grad.data);
}

/* The two GCN layers' backward at a snapshot from g->djoined = d[G1 | G2]. */
static void convolutions_backward(model *m, const mpnnlstm_step *s, int64_t n, mpnnlstm_gradients *g)
{
    const int64_t f = m->config.in_features, h = m->config.hidden, nh = n * h;
    const kernels *k = m->kernels;
    memset(g->dlayer, 0, (size_t)nh * sizeof(float));
    memset(g->dspread, 0, (size_t)nh * sizeof(float));
    k->copy_rows(g->dfirst, h, g->djoined, 2 * h, n, h);              /* d G1 from the LSTM */
    k->copy_rows(g->dpreactivation, h, g->djoined + h, 2 * h, n, h);  /* d G2 (scratch) */
    k->relu_backward(s->second, g->dpreactivation, nh, g->dlayer);
    k->linear_backward(s->spread, param(m, CONV2_WEIGHT)->value.data, g->dlayer, n, h, h, g->dspread,
                       param(m, CONV2_WEIGHT)->grad.data, param(m, CONV2_BIAS)->grad.data);
    k->propagate_backward(&s->graph, g->dspread, h, g->dfirst); /* G1 also reaches G2 */
    memset(g->dlayer, 0, (size_t)nh * sizeof(float));
    k->relu_backward(s->first, g->dfirst, nh, g->dlayer);
    k->linear_backward(s->aggregated, param(m, CONV1_WEIGHT)->value.data, g->dlayer, n, f, h, NULL,
                       param(m, CONV1_WEIGHT)->grad.data, param(m, CONV1_BIAS)->grad.data);
}

static int gradients_alloc(const model *m, int64_t n, mpnnlstm_gradients *g, tf_error *err)
{
    const int64_t nh = n * m->config.hidden;
    float **buffers[] = {&g->dstate[0],         &g->dstate[1],         &g->dcell[0],   &g->dcell[1],
                         &g->dprevious[0],      &g->dprevious[1],      &g->dprevious_cell[0],
                         &g->dprevious_cell[1], &g->dlayer,            &g->dspread,    &g->dfirst};
    for (size_t b = 0; b < sizeof buffers / sizeof *buffers; b++)
        if (!(*buffers[b] = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "MPNN-LSTM gradients", err)))
            return TF_ERR_INPUT;
    return (g->dpreactivation = model_scratch_zeroed(m, (size_t)(4 * nh), sizeof(float), "MPNN-LSTM gradients", err)) &&
                   (g->djoined = model_scratch_zeroed(m, (size_t)(2 * nh), sizeof(float), "MPNN-LSTM gradients", err))
               ? TF_OK : TF_ERR_INPUT;
}

/* model_ops::backward (ref/models/model.h): dstates [tape->count][num_nodes][model_state_width(m)]. */
static int mpnnlstm_backward(model *m, const snapshot_seq *seq, const window_tape *tape, const float *dstates,
                             tf_error *err)
{
    const int64_t n = seq->num_nodes, h = m->config.hidden, nh = n * h;
    const mpnnlstm_step *steps = tape->steps;
    mpnnlstm_gradients g;
    float *zeros = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "MPNN-LSTM gradients", err);
    int status = zeros ? gradients_alloc(m, n, &g, err) : TF_ERR_INPUT;
    for (int64_t t = tape->count - 1; status == TF_OK && t >= 0; t--) {
        const mpnnlstm_step *s = &steps[t];
        const int last = t + 1 == tape->count;
        /* The head's gradient of [H1 | H2], plus what the next snapshot sent each layer. */
        for (int layer = 0; layer < 2; layer++) {
            m->kernels->copy_rows(g.dstate[layer], h, dstates + t * 2 * nh + layer * h, 2 * h, n, h);
            for (int64_t i = 0; i < nh; i++) {
                g.dstate[layer][i] += last ? 0.0f : g.dprevious[layer][i];
                g.dcell[layer][i] = last ? 0.0f : g.dprevious_cell[layer][i];
            }
            memset(g.dprevious[layer], 0, (size_t)nh * sizeof(float));
            memset(g.dprevious_cell[layer], 0, (size_t)nh * sizeof(float));
        }
        memset(g.djoined, 0, (size_t)(2 * nh) * sizeof(float));
        /* LSTM 2 first: its input H1 gets gradient from it before LSTM 1 runs back */
        for (int layer = 1; layer >= 0; layer--) {
            const lstm_record *before = t == 0 ? NULL : &steps[t - 1].lstm[layer];
            lstm_backward(m, layer, &s->lstm[layer], before ? before->state : zeros, before ? before->cell : zeros,
                          layer == 0 ? s->joined : s->lstm[0].state, layer == 0 ? 2 * h : h, n, &g,
                          layer == 0 ? g.djoined : g.dstate[0]);
        }
        convolutions_backward(m, s, n, &g);
    }
    return status;
}

const model_ops mpnnlstm_ops = {mpnnlstm_create, mpnnlstm_forward, mpnnlstm_backward, sizeof(mpnnlstm_step), 1};
