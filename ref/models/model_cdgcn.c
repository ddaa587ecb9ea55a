/* CD-GCN (Manessi et al., 2020, "concatenate dynamic GCN"), the second stacked model ReInc evaluates:
 * WD-GCN's GCN layer then LSTM per vertex, each with a concatenation skip, so that what a layer read
 * travels beside what it computed; --layers L such pairs stacked (ReInc stacks two):
 *
 *     U_0 = X_t                                                     [N][F]
 *     G_l = ReLU(A^_t U_{l-1} Theta_l^T + b_l)                      [N][H]
 *     V_l = [U_{l-1} | G_l]                                          (the convolution's skip)
 *     (H_l, C_l) = LSTM_l(V_l; H_l and C_l at t - 1)                 (per vertex, torch.nn.LSTM's gates)
 *     U_l = [V_l | H_l]                                              (the LSTM's skip)
 *
 * and the cell's output is U_L, F + 2 L H wide, X_t itself among its columns (the head reads it).
 * A^ is the symmetric GCN normalization with self loops, as WD-GCN's. The form is ReInc's description of
 * the model ([x_t | A^ x_t W], then a vertex-wise LSTM with a concatenation skip) with the pairs
 * stacked as ReInc stacks GCRN-M1's (chapters/01a-snapshot-models.md). PyTorch Geometric Temporal has no
 * CD-GCN; pair l's parameters are named recurrent.layers.l.conv (a GCNConv) and
 * recurrent.layers.l.lstm (torch.nn.LSTM's four). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ref/models/model.h"
#include "ref/nn/propagate.h"

/* A pair's parameters, in PyTorch's state_dict order. */
enum { CONV_BIAS, CONV_WEIGHT, WEIGHT_IH, WEIGHT_HH, BIAS_IH, BIAS_HH, PAIR_PARAMETERS };

static parameter *param(const model *m, int l, int which) { return &m->parameters.items[l * PAIR_PARAMETERS + which]; }

/* Width of U_{l-1}, pair l's input (0-based l): F, then 2 H more after every pair. */
static int64_t input_width(const model *m, int l) { return m->config.in_features + 2 * l * m->config.hidden; }

/* One pair's record of a snapshot. */
typedef struct cdgcn_pair {
    float *aggregated; /* [N][w] A^ U_{l-1}, w = input_width */
    float *convolved;  /* [N][H] G_l */
    float *joined;     /* [N][w + H] V_l */
    float *gates;      /* [N][4H] i, f, g, o after their nonlinearities */
    float *cell;       /* [N][H] C_l */
    float *state;      /* [N][H] H_l */
    float *output;     /* [N][w + 2H] U_l (the last pair's: the window's states at t) */
} cdgcn_pair;

typedef struct cdgcn_step {
    propagation graph; /* A^ of this snapshot, first (model_ops::step_size) */
    cdgcn_pair *pairs; /* [L] */
} cdgcn_step;

static int cdgcn_create(model *m, rng *r, tf_error *err)
{
    static const char *names[PAIR_PARAMETERS] = {"conv.bias", "conv.lin.weight", "lstm.weight_ih_l0",
                                                 "lstm.weight_hh_l0", "lstm.bias_ih_l0", "lstm.bias_hh_l0"};
    const int64_t h = m->config.hidden;
    for (int l = 0; l < m->config.layers; l++) {
        const int64_t w = input_width(m, l);
        const int64_t shapes[PAIR_PARAMETERS][2] = {{h, 0}, {h, w}, {4 * h, w + h}, {4 * h, h}, {4 * h, 0}, {4 * h, 0}};
        for (int which = 0; which < PAIR_PARAMETERS; which++) {
            char name[96];
            snprintf(name, sizeof name, "recurrent.layers.%d.%s", l, names[which]);
            if (parameters_add(&m->parameters, name, shapes[which][1] ? 2 : 1, shapes[which], err) < 0)
                return TF_ERR_INPUT;
        }
        /* GCNConv: Glorot weight, zero bias; torch.nn.LSTM: everything uniform(+-1/sqrt(H)) */
        parameter_init_glorot(param(m, l, CONV_WEIGHT), r);
        for (int which = WEIGHT_IH; which <= BIAS_HH; which++)
            parameter_init_uniform(param(m, l, which), 1.0 / sqrt((double)h), r);
    }
    return TF_OK;
}

/* p->aggregated [N][w] = A^ U_{l-1} of snapshot t, from pair l's input U_{l-1} [N][w] (the GCN layer
 * aggregates first, then transforms: A^ U Theta^T = (A^ U) Theta^T). The reference propagates all w
 * columns. A served model (#input_aggregations) takes A^ X_t from its source: it is pair 0's whole
 * aggregation, and every later pair's first F columns, since U_{l-1} = [X_t | ...] and A^ acts on each
 * column alone; only the columns after X_t are propagated, through the scratch pair @p columns
 * [2][N][w - F]. @p first is pair 0's record (its aggregation, served, for the later pairs). */
static int pair_aggregate(const model *m, const propagation *graph, int l, int64_t t, const float *input,
                          const cdgcn_pair *first, cdgcn_pair *p, float *columns, int64_t n, tf_error *err)
{
    const kernels *k = m->kernels;
    const int64_t w = input_width(m, l), f = m->config.in_features, rest = w - f;
    if (!m->inputs) {
        k->propagate_forward(graph, input, w, p->aggregated);
        return TF_OK;
    }
    if (l == 0) /* A^ X_t depends on t only: served (ref/models/model.h) */
        return m->inputs->get(m->inputs->context, t, p->aggregated, err);
    k->copy_rows(p->aggregated, w, first->aggregated, f, n, f);
    k->copy_rows(columns, rest, input + f, w, n, rest);
    k->propagate_forward(graph, columns, rest, columns + n * rest);
    k->copy_rows(p->aggregated + f, w, columns + n * rest, rest, n, rest);
    return TF_OK;
}

/* Pair l of one snapshot after pair_aggregate(), from its input U_{l-1} [N][w] and its own record at
 * t - 1 (NULL at the window's first snapshot: H = C = 0); @p preactivation [N][4H] is scratch. */
static void pair_forward(const model *m, int l, const float *input, const cdgcn_pair *before, cdgcn_pair *p,
                         const float *zeros, float *preactivation, int64_t n)
{
    const kernels *k = m->kernels;
    const int64_t w = input_width(m, l), h = m->config.hidden;
    k->linear_forward(p->aggregated, param(m, l, CONV_WEIGHT)->value.data, param(m, l, CONV_BIAS)->value.data, n, w,
                      h, p->convolved);
    k->relu_forward(p->convolved, n * h, p->convolved);
    k->copy_rows(p->joined, w + h, input, w, n, w);
    k->copy_rows(p->joined + w, w + h, p->convolved, h, n, h);
    /* the LSTM over the vertex's own sequence of V_l */
    k->linear_forward(p->joined, param(m, l, WEIGHT_IH)->value.data, param(m, l, BIAS_IH)->value.data, n, w + h,
                      4 * h, preactivation);
    k->linear_accumulate(before ? before->state : zeros, param(m, l, WEIGHT_HH)->value.data, n, h, 4 * h,
                         preactivation);
    k->add_bias(preactivation, param(m, l, BIAS_HH)->value.data, n, 4 * h);
    k->lstm_pointwise_forward(preactivation, before ? before->cell : zeros, n, h, p->cell, p->state, p->gates);
    k->copy_rows(p->output, w + 2 * h, p->joined, w + h, n, w + h);
    k->copy_rows(p->output + w + h, w + 2 * h, p->state, h, n, h);
}

static int cdgcn_forward(const model *m, const snapshot_seq *seq, window_tape *tape, tf_error *err)
{
    const int64_t n = seq->num_nodes, h = m->config.hidden, nh = n * h, width = model_state_width(m);
    const int layers = m->config.layers;
    cdgcn_step *steps = tape->steps;
    float *zeros = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "CD-GCN state", err);
    float *preactivation = zeros ? model_scratch(m, (size_t)(4 * nh), sizeof(float), "CD-GCN scratch", err) : NULL;
    /* [2][N][2 (L - 1) H]: a served pair's columns after X_t, before and after A^ */
    float *columns = preactivation && m->inputs && layers > 1
                         ? model_scratch(m, (size_t)(2 * n * (width - m->config.in_features - 2 * h)), sizeof(float),
                                         "CD-GCN scratch", err)
                         : preactivation;
    int status = columns ? TF_OK : TF_ERR_INPUT;
    for (int64_t t = 0; status == TF_OK && t < tape->count; t++) {
        cdgcn_step *s = &steps[t];
        if ((status = model_gcn_operator(m, &s->graph, seq, tape->first + t, err)) != TF_OK ||
            !(s->pairs = model_scratch(m, (size_t)layers, sizeof *s->pairs, "CD-GCN tape", err))) {
            status = TF_ERR_INPUT;
            break;
        }
        const float *input = seq->snapshots[tape->first + t].features.data;
        for (int l = 0; status == TF_OK && l < layers; l++) {
            cdgcn_pair *p = &s->pairs[l];
            const int64_t w = input_width(m, l);
            /* every buffer is written whole before it is read */
            if (!(p->aggregated = model_scratch(m, (size_t)(n * w), sizeof(float), "CD-GCN tape", err)) ||
                !(p->convolved = model_scratch(m, (size_t)nh, sizeof(float), "CD-GCN tape", err)) ||
                !(p->joined = model_scratch(m, (size_t)(n * (w + h)), sizeof(float), "CD-GCN tape", err)) ||
                !(p->gates = model_scratch(m, (size_t)(4 * nh), sizeof(float), "CD-GCN tape", err)) ||
                !(p->cell = model_scratch(m, (size_t)nh, sizeof(float), "CD-GCN tape", err)) ||
                !(p->state = model_scratch(m, (size_t)nh, sizeof(float), "CD-GCN tape", err)) ||
                !(p->output = l + 1 == layers ? tape->states + t * n * width
                                              : model_scratch(m, (size_t)(n * (w + 2 * h)), sizeof(float),
                                                              "CD-GCN tape", err))) {
                status = TF_ERR_INPUT;
                break;
            }
            if ((status = pair_aggregate(m, &s->graph, l, tape->first + t, input, &s->pairs[0], p, columns, n,
                                         err)) != TF_OK)
                break;
            pair_forward(m, l, input, t > 0 ? &steps[t - 1].pairs[l] : NULL, p, zeros, preactivation, n);
            input = p->output;
        }
    }
    return status;
}

/* The gradients a backward carries: per pair, what snapshot t sends t - 1 (H and C), and scratch. */
typedef struct cdgcn_gradients {
    float *zeros, *dprevious, *dprevious_cell; /* [N][H]; [L][N][H]; [L][N][H] */
    float *dhead, *dstate, *dcell, *dconvolved, *dlayer; /* [N][H] */
    float *dpreactivation;                                /* [N][4H] */
    float *djoined, *daggregated, *dinput[2];             /* [N][width] each, width = the cell's output's */
} cdgcn_gradients;

/* Backward of pair_forward() at snapshot t given doutput [N][w + 2H] = dL/dU_l; for l > 0 returns
 * dL/dU_{l-1} [N][w] (one of g->dinput, not @p doutput), for l = 0 NULL. */
static const float *pair_backward(model *m, const propagation *graph, int l, int64_t t, int64_t count,
                                  const cdgcn_pair *before, const cdgcn_pair *p, const float *doutput,
                                  cdgcn_gradients *g, int64_t n)
{
    const kernels *k = m->kernels;
    const int64_t w = input_width(m, l), h = m->config.hidden, nh = n * h;
    float *dprevious = g->dprevious + l * nh, *dprevious_cell = g->dprevious_cell + l * nh;
    /* the LSTM's skip: H_l's share of dU_l, plus what snapshot t + 1 sent */
    k->copy_rows(g->dhead, h, doutput + w + h, w + 2 * h, n, h);
    model_lstm_carry(g->dhead, t, count, nh, g->dstate, g->dcell, dprevious, dprevious_cell);
    k->lstm_pointwise_backward(p->gates, before ? before->cell : g->zeros, p->cell, g->dstate, g->dcell, n, h,
                               g->dpreactivation, dprevious_cell);
    /* dV_l: V_l's share of dU_l, plus what the LSTM's input sends */
    k->copy_rows(g->djoined, w + h, doutput, w + 2 * h, n, w + h);
    k->linear_backward(p->joined, param(m, l, WEIGHT_IH)->value.data, g->dpreactivation, n, w + h, 4 * h, g->djoined,
                       param(m, l, WEIGHT_IH)->grad.data, param(m, l, BIAS_IH)->grad.data);
    k->linear_backward(before ? before->state : g->zeros, param(m, l, WEIGHT_HH)->value.data, g->dpreactivation, n,
                       h, 4 * h, dprevious, param(m, l, WEIGHT_HH)->grad.data, param(m, l, BIAS_HH)->grad.data);
    /* the convolution's skip: G_l's columns of dV_l into the GCN layer */
    k->copy_rows(g->dconvolved, h, g->djoined + w, w + h, n, h);
    memset(g->dlayer, 0, (size_t)nh * sizeof(float));
    k->relu_backward(p->convolved, g->dconvolved, nh, g->dlayer);
    if (l > 0)
        memset(g->daggregated, 0, (size_t)(n * w) * sizeof(float));
    k->linear_backward(p->aggregated, param(m, l, CONV_WEIGHT)->value.data, g->dlayer, n, w, h,
                       l > 0 ? g->daggregated : NULL, param(m, l, CONV_WEIGHT)->grad.data,
                       param(m, l, CONV_BIAS)->grad.data);
    if (l == 0)
        return NULL; /* X_t needs no gradient */
    /* dU_{l-1}: its columns of dV_l, plus A^T of the aggregation's gradient */
    float *dinput = doutput == g->dinput[0] ? g->dinput[1] : g->dinput[0];
    k->copy_rows(dinput, w, g->djoined, w + h, n, w);
    k->propagate_backward(graph, g->daggregated, w, dinput);
    return dinput;
}

/* model_ops::backward (ref/models/model.h): dstates [tape->count][num_nodes][model_state_width(m)]. */
static int cdgcn_backward(model *m, const snapshot_seq *seq, const window_tape *tape, const float *dstates,
                          tf_error *err)
{
    const int64_t n = seq->num_nodes, h = m->config.hidden, nh = n * h, width = model_state_width(m);
    const int layers = m->config.layers;
    const cdgcn_step *steps = tape->steps;
    cdgcn_gradients g;
    /* each buffer is written or cleared before it is read, except those zeroed here */
    struct { float **buffer; int64_t size; int zeroed; } buffers[] = {
        {&g.zeros, nh, 1},       {&g.dprevious, layers * nh, 1}, {&g.dprevious_cell, layers * nh, 1},
        {&g.dhead, nh, 0},       {&g.dstate, nh, 0},             {&g.dcell, nh, 0},
        {&g.dconvolved, nh, 0},  {&g.dlayer, nh, 0},             {&g.dpreactivation, 4 * nh, 0},
        {&g.djoined, n * width, 0}, {&g.daggregated, n * width, 0}, {&g.dinput[0], n * width, 0},
        {&g.dinput[1], n * width, 0}};
    int status = TF_OK;
    for (size_t i = 0; status == TF_OK && i < sizeof buffers / sizeof *buffers; i++)
        if (!(*buffers[i].buffer = buffers[i].zeroed
                                       ? model_scratch_zeroed(m, (size_t)buffers[i].size, sizeof(float), "CD-GCN gradients", err)
                                       : model_scratch(m, (size_t)buffers[i].size, sizeof(float), "CD-GCN gradients", err)))
            status = TF_ERR_INPUT;
    for (int64_t t = tape->count - 1; status == TF_OK && t >= 0; t--) {
        const float *doutput = dstates + t * n * width; /* dU_L */
        for (int l = layers - 1; l >= 0; l--)
            doutput = pair_backward(m, &steps[t].graph, l, t, tape->count, t > 0 ? &steps[t - 1].pairs[l] : NULL,
                                    &steps[t].pairs[l], doutput, &g, n);
    }
    return status;
}

const model_ops cdgcn_ops = {cdgcn_create, cdgcn_forward, cdgcn_backward, sizeof(cdgcn_step), 1};
