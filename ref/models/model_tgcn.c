/* T-GCN (Zhao et al., 2019) as PyTorch Geometric Temporal's TGCN cell:
 *
 *     C_g = GCN_g(X_t) = A^ X_t Theta_g^T + b_g                 for the gates g = z, r, h
 *     Z   = sigmoid([C_z | H] L_z^T + c_z)
 *     R   = sigmoid([C_r | H] L_r^T + c_r)
 *     H~  = tanh([C_h | H * R] L_h^T + c_h)
 *     H'  = Z * H + (1 - Z) * H~
 *
 * A^ is the symmetric GCN normalization with self loops of the whole snapshot (propagate.h).
 * The graph convolution acts on X only, never on H. The three gates share one aggregation
 * A^ X: GCN is linear, so A^ (X Theta^T) = (A^ X) Theta^T, and aggregating the F-wide X
 * once is cheaper than three H-wide products (aggregate-then-transform, as ReInc does).
 *
 * The two-layer T-GCN (tgcn2) is the T-GCN paper's own form: the GCN of every gate is its two-layer
 * f(X, A) = sigmoid(A^ ReLU(A^ X W0 + b0) W1 + b1),
 *
 *     C_g = sigmoid(A^ ReLU(A^ X_t Theta0_g^T + b0_g) Theta1_g^T + b1_g)     for g = z, r, h
 *
 * with the GRU above unchanged. Its gates read two hops of X_t; the second layer aggregates the
 * H-wide ReLU output of each gate (A^ (R Theta1^T) = (A^ R) Theta1^T, aggregate-then-transform
 * again). PyTorch Geometric Temporal has no such cell: its parameters are named as that library
 * would name a two-layer ModuleList per gate (recurrent.conv_z.0.lin.weight, ...). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/nn/layers.h"
#include "ref/core/memory.h"
#include "ref/models/model.h"
#include "ref/nn/propagate.h"

/* Parameter order = PyTorch's state_dict order: per gate conv bias, conv weight, (the two-layer
 * form: the second conv's bias and weight,) linear weight, linear bias. */
enum { CONV_BIAS, CONV_WEIGHT, LINEAR_WEIGHT, LINEAR_BIAS, SECOND_BIAS, SECOND_WEIGHT, ROLES };
enum { GATE_Z, GATE_R, GATE_H, GATES };

/* GCN layers in a gate: 1 (T-GCN) or 2 (the two-layer T-GCN). */
static int depth(const model *m) { return m->config.kind == MODEL_TGCN2 ? 2 : 1; }

static parameter *param(const model *m, int gate, int which)
{
    /* where each role sits in a gate's block, for one and for two GCN layers */
    static const int place[2][ROLES] = {{0, 1, 2, 3, -1, -1}, {0, 1, 4, 5, 2, 3}};
    const int layers = depth(m);
    return &m->parameters.items[gate * (4 + 2 * (layers - 1)) + place[layers - 1][which]];
}

/* What one snapshot's forward keeps. */
typedef struct tgcn_step {
    propagation graph;          /* A^ of this snapshot, first (model_ops::step_size) */
    float *aggregated;          /* [N][F] A^ X */
    float *gate_input[GATES];   /* [N][2H] [C_g | H] (for h: [C_h | H * R]) */
    float *gate[GATES];         /* [N][H] Z, R, H~ */
    float *first[GATES];        /* two layers: [N][H] ReLU(A^ X Theta0_g^T + b0_g) */
    float *second[GATES];       /* two layers: [N][H] A^ first_g */
    float *convolved[GATES];    /* two layers: [N][H] C_g (after its sigmoid) */
} tgcn_step;

static int tgcn_create(model *m, rng *r, tf_error *err)
{
    static const char *gate_names[GATES] = {"z", "r", "h"};
    const int64_t f = m->config.in_features, h = m->config.hidden;
    const int layers = depth(m);
    int64_t vector[1] = {h}, conv[2] = {h, f}, second[2] = {h, h}, linear[2] = {h, 2 * h};
    for (int g = 0; g < GATES; g++) {
        char names[ROLES][96];
        /* PyG Temporal's one conv per gate is conv_z; the two-layer form's are conv_z.0 and conv_z.1 */
        const char *first = layers == 1 ? "" : ".0";
        snprintf(names[CONV_BIAS], 96, "recurrent.conv_%s%s.bias", gate_names[g], first);
        snprintf(names[CONV_WEIGHT], 96, "recurrent.conv_%s%s.lin.weight", gate_names[g], first);
        snprintf(names[SECOND_BIAS], 96, "recurrent.conv_%s.1.bias", gate_names[g]);
        snprintf(names[SECOND_WEIGHT], 96, "recurrent.conv_%s.1.lin.weight", gate_names[g]);
        snprintf(names[LINEAR_WEIGHT], 96, "recurrent.linear_%s.weight", gate_names[g]);
        snprintf(names[LINEAR_BIAS], 96, "recurrent.linear_%s.bias", gate_names[g]);
        if (parameters_add(&m->parameters, names[CONV_BIAS], 1, vector, err) < 0 ||
            parameters_add(&m->parameters, names[CONV_WEIGHT], 2, conv, err) < 0 ||
            (layers == 2 && (parameters_add(&m->parameters, names[SECOND_BIAS], 1, vector, err) < 0 ||
                             parameters_add(&m->parameters, names[SECOND_WEIGHT], 2, second, err) < 0)) ||
            parameters_add(&m->parameters, names[LINEAR_WEIGHT], 2, linear, err) < 0 ||
            parameters_add(&m->parameters, names[LINEAR_BIAS], 1, vector, err) < 0)
            return TF_ERR_INPUT;
    }
    /* GCNConv: Glorot weight, zero bias; torch.nn.Linear: uniform(+-1/sqrt(fan_in = 2H)). */
    for (int g = 0; g < GATES; g++) {
        parameter_init_glorot(param(m, g, CONV_WEIGHT), r);
        if (layers == 2)
            parameter_init_glorot(param(m, g, SECOND_WEIGHT), r);
        parameter_init_uniform(param(m, g, LINEAR_WEIGHT), 1.0 / sqrt(2.0 * (double)h), r);
        parameter_init_uniform(param(m, g, LINEAR_BIAS), 1.0 / sqrt(2.0 * (double)h), r);
    }
    return TF_OK;
}

/* Copies source [n][width] into columns [offset, offset + width) of target [n][target_width]. */
static void copy_columns(const model *m, float *target, int64_t target_width, int64_t offset, const float *source,
                         int64_t width, int64_t n)
{
    m->kernels->copy_rows(target + offset, target_width, source, width, n, width);
}

/* C_g of gate g into convolved [n][h]: A^ X Theta_g^T + b_g, or with two layers
 * sigmoid(A^ ReLU(A^ X Theta0_g^T + b0_g) Theta1_g^T + b1_g), keeping the layers in the step. */
static void gate_convolution(const model *m, tgcn_step *s, int g, int64_t n, int64_t f, int64_t h, float *convolved)
{
    const kernels *k = m->kernels;
    if (depth(m) == 1) {
        k->linear_forward(s->aggregated, param(m, g, CONV_WEIGHT)->value.data, param(m, g, CONV_BIAS)->value.data, n, f,
                          h, convolved);
        return;
    }
    k->linear_forward(s->aggregated, param(m, g, CONV_WEIGHT)->value.data, param(m, g, CONV_BIAS)->value.data, n, f, h,
                      s->first[g]);
    k->relu_forward(s->first[g], n * h, s->first[g]);
    k->propagate_forward(&s->graph, s->first[g], h, s->second[g]);
    k->linear_forward(s->second[g], param(m, g, SECOND_WEIGHT)->value.data, param(m, g, SECOND_BIAS)->value.data, n, h,
                      h, s->convolved[g]);
    k->sigmoid_forward(s->convolved[g], n * h, s->convolved[g]);
    memcpy(convolved, s->convolved[g], (size_t)(n * h) * sizeof(float));
}

static int tgcn_forward(const model *m, const snapshot_seq *seq, window_tape *tape, tf_error *err)
{
    const int64_t n = seq->num_nodes, f = m->config.in_features, h = m->config.hidden;
    tgcn_step *steps = tape->steps;
    float *zeros = model_scratch_zeroed(m, (size_t)(n * h), sizeof *zeros, "T-GCN state", err);
    float *masked = zeros ? model_scratch(m, (size_t)(n * h), sizeof *masked, "T-GCN state", err) : NULL;
    int status = masked ? TF_OK : TF_ERR_INPUT;
    for (int64_t t = 0; status == TF_OK && t < tape->count; t++) {
        tgcn_step *s = &steps[t];
        const snapshot *snap = &seq->snapshots[tape->first + t];
        const float *previous = t == 0 ? zeros : tape->states + (t - 1) * n * h;
        float *state = tape->states + t * n * h;
        if (!(s->aggregated = model_scratch(m, (size_t)(n * f), sizeof(float), "T-GCN tape", err)))
            status = TF_ERR_INPUT;
        else if (m->inputs)
            status = m->inputs->get(m->inputs->context, tape->first + t, s->aggregated, err);
        else if ((status = model_gcn_operator(m, &s->graph, seq, tape->first + t, err)) == TF_OK)
            m->kernels->propagate_forward(&s->graph, snap->features.data, f, s->aggregated);
        if (status == TF_OK && m->inputs && depth(m) == 2) /* the second layer needs A^ itself */
            status = model_gcn_operator(m, &s->graph, seq, tape->first + t, err);
        for (int g = 0; status == TF_OK && g < GATES; g++)
            if (!(s->gate_input[g] = model_scratch(m, (size_t)(n * 2 * h), sizeof(float), "T-GCN tape", err)) ||
                !(s->gate[g] = model_scratch(m, (size_t)(n * h), sizeof(float), "T-GCN tape", err)) ||
                (depth(m) == 2 &&
                 (!(s->first[g] = model_scratch(m, (size_t)(n * h), sizeof(float), "T-GCN tape", err)) ||
                  !(s->second[g] = model_scratch(m, (size_t)(n * h), sizeof(float), "T-GCN tape", err)) ||
                  !(s->convolved[g] = model_scratch(m, (size_t)(n * h), sizeof(float), "T-GCN tape", err)))))
                status = TF_ERR_INPUT;
        if (status != TF_OK)
            break;

        float *convolved = masked; /* scratch: C_g, n x h */
        for (int g = 0; g < GATES; g++) {
            gate_convolution(m, s, g, n, f, h, convolved);
            copy_columns(m, s->gate_input[g], 2 * h, 0, convolved, h, n);
        }
        copy_columns(m, s->gate_input[GATE_Z], 2 * h, h, previous, h, n);
        copy_columns(m, s->gate_input[GATE_R], 2 * h, h, previous, h, n);
        for (int g = GATE_Z; g <= GATE_R; g++) {
            m->kernels->linear_forward(s->gate_input[g], param(m, g, LINEAR_WEIGHT)->value.data,
                               param(m, g, LINEAR_BIAS)->value.data, n, 2 * h, h, s->gate[g]);
            m->kernels->sigmoid_forward(s->gate[g], n * h, s->gate[g]);
        }
        for (int64_t i = 0; i < n * h; i++)
            masked[i] = previous[i] * s->gate[GATE_R][i];
        copy_columns(m, s->gate_input[GATE_H], 2 * h, h, masked, h, n);
        m->kernels->linear_forward(s->gate_input[GATE_H], param(m, GATE_H, LINEAR_WEIGHT)->value.data,
                           param(m, GATE_H, LINEAR_BIAS)->value.data, n, 2 * h, h, s->gate[GATE_H]);
        m->kernels->tanh_forward(s->gate[GATE_H], n * h, s->gate[GATE_H]);
        const float *z = s->gate[GATE_Z], *candidate = s->gate[GATE_H];
        for (int64_t i = 0; i < n * h; i++)
            state[i] = z[i] * previous[i] + (1.0f - z[i]) * candidate[i];
    }
    return status;
}

/* Backward of one gate g = act([C_g | second] L_g^T + c_g), C_g = A^ X Theta_g^T + b_g, given
 * the gradient of its activated output dgate [n][h]. Adds into the gate's four parameter
 * gradients and returns, in dsecond [n][h] (overwritten), the gradient of the second half of
 * its input (H, or H * R for the candidate). scratch [n][3h], with two GCN layers [n][6h]. */
static void gate_backward(model *m, const tgcn_step *s, int g, const float *dgate, int64_t n, int64_t f, int64_t h,
                          float *dsecond, float *scratch)
{
    float *dpreactivation = scratch, *dgate_input = scratch + n * h, *dconvolved = dpreactivation; /* reused */
    memset(scratch, 0, (size_t)(3 * n * h) * sizeof(float));
    if (g == GATE_H)
        m->kernels->tanh_backward(s->gate[g], dgate, n * h, dpreactivation);
    else
        m->kernels->sigmoid_backward(s->gate[g], dgate, n * h, dpreactivation);
    m->kernels->linear_backward(s->gate_input[g], param(m, g, LINEAR_WEIGHT)->value.data, dpreactivation, n, 2 * h, h,
                        dgate_input, param(m, g, LINEAR_WEIGHT)->grad.data, param(m, g, LINEAR_BIAS)->grad.data);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < h; j++) {
            dconvolved[i * h + j] = dgate_input[i * 2 * h + j];
            dsecond[i * h + j] = dgate_input[i * 2 * h + h + j];
        }
    if (depth(m) == 1) {
        m->kernels->linear_backward(s->aggregated, param(m, g, CONV_WEIGHT)->value.data, dconvolved, n, f, h, NULL,
                            param(m, g, CONV_WEIGHT)->grad.data, param(m, g, CONV_BIAS)->grad.data);
        return;
    }
    /* The two layers, back from C_g: scratch [n][3h] onwards holds three more [n][h]. */
    const kernels *k = m->kernels;
    float *dlayer = scratch + 3 * n * h, *dsecond_input = dlayer + n * h, *dfirst = dsecond_input + n * h;
    memset(dlayer, 0, (size_t)(3 * n * h) * sizeof(float));
    k->sigmoid_backward(s->convolved[g], dconvolved, n * h, dlayer);
    k->linear_backward(s->second[g], param(m, g, SECOND_WEIGHT)->value.data, dlayer, n, h, h, dsecond_input,
                       param(m, g, SECOND_WEIGHT)->grad.data, param(m, g, SECOND_BIAS)->grad.data);
    k->propagate_backward(&s->graph, dsecond_input, h, dfirst);
    memset(dlayer, 0, (size_t)(n * h) * sizeof(float));
    k->relu_backward(s->first[g], dfirst, n * h, dlayer);
    k->linear_backward(s->aggregated, param(m, g, CONV_WEIGHT)->value.data, dlayer, n, f, h, NULL,
                       param(m, g, CONV_WEIGHT)->grad.data, param(m, g, CONV_BIAS)->grad.data);
}

/* model_ops::backward (ref/models/model.h): dstates [tape->count][num_nodes][model_state_width(m)]. */
static int tgcn_backward(model *m, const snapshot_seq *seq, const window_tape *tape, const float *dstates,
                         tf_error *err)
{
    const int64_t n = seq->num_nodes, f = m->config.in_features, h = m->config.hidden, nh = n * h;
    const tgcn_step *steps = tape->steps;
    /* Each buffer is written before it is read (scratch by gate_backward()), except zeros. */
    float *zeros = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "T-GCN gradients", err);
    float *dstate = model_scratch(m, (size_t)nh, sizeof(float), "T-GCN gradients", err);     /* dL/dH_t, all paths */
    float *dprevious = model_scratch(m, (size_t)nh, sizeof(float), "T-GCN gradients", err);  /* dL/dH_{t-1} */
    float *dgate = model_scratch(m, (size_t)nh, sizeof(float), "T-GCN gradients", err);      /* dZ, dH~ or dR */
    float *dsecond = model_scratch(m, (size_t)nh, sizeof(float), "T-GCN gradients", err);
    float *scratch = model_scratch(m, (size_t)((depth(m) == 2 ? 6 : 3) * nh), sizeof(float), "T-GCN gradients", err);
    int status = zeros && dstate && dprevious && dgate && dsecond && scratch ? TF_OK : TF_ERR_INPUT;
    for (int64_t t = tape->count - 1; status == TF_OK && t >= 0; t--) {
        const tgcn_step *s = &steps[t];
        const float *previous = t == 0 ? zeros : tape->states + (t - 1) * nh;
        const float *z = s->gate[GATE_Z], *r = s->gate[GATE_R], *candidate = s->gate[GATE_H];
        /* This snapshot's state gets the head's gradient plus what the next snapshot sent. */
        for (int64_t i = 0; i < nh; i++)
            dstate[i] = dstates[t * nh + i] + (t + 1 < tape->count ? dprevious[i] : 0.0f);
        /* H' = Z H + (1 - Z) H~ */
        for (int64_t i = 0; i < nh; i++)
            dprevious[i] = dstate[i] * z[i];
        /* Gate z, whose input's second half is H. */
        for (int64_t i = 0; i < nh; i++)
            dgate[i] = dstate[i] * (previous[i] - candidate[i]);
        gate_backward(m, s, GATE_Z, dgate, n, f, h, dsecond, scratch);
        for (int64_t i = 0; i < nh; i++)
            dprevious[i] += dsecond[i];
        /* Candidate, whose input's second half is H * R: it sends gradient to H and to R. */
        for (int64_t i = 0; i < nh; i++)
            dgate[i] = dstate[i] * (1.0f - z[i]);
        gate_backward(m, s, GATE_H, dgate, n, f, h, dsecond, scratch);
        for (int64_t i = 0; i < nh; i++) {
            dprevious[i] += dsecond[i] * r[i];
            dgate[i] = dsecond[i] * previous[i]; /* dR */
        }
        /* Gate r, whose input's second half is H. */
        gate_backward(m, s, GATE_R, dgate, n, f, h, dsecond, scratch);
        for (int64_t i = 0; i < nh; i++)
            dprevious[i] += dsecond[i];
    }
    return status;
}

const model_ops tgcn_ops = {tgcn_create, tgcn_forward, tgcn_backward, sizeof(tgcn_step), 1};
/* The same cell; depth() tells the two apart by the model's kind. */
const model_ops tgcn2_ops = {tgcn_create, tgcn_forward, tgcn_backward, sizeof(tgcn_step), 1};
