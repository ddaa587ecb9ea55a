/* EvolveGCN-O (Pareja et al., 2020) as PyTorch Geometric Temporal's EvolveGCNO: a GRU
 * evolves the GCN weight from snapshot to snapshot, the rows of the F x F weight being the
 * GRU's batch and the weight serving as both its input and its state:
 *
 *     W_t = GRU(W_{t-1}, W_{t-1}),  W_0 = initial_weight
 *     H_t = A^_t X_t W_t
 *
 * with A^ the symmetric GCN normalization with self loops (no bias). The weight evolves
 * within a window from initial_weight; gradients flow through the whole evolution in the
 * window (the library does not detach it either). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref/nn/layers.h"
#include "ref/core/memory.h"
#include "ref/models/model.h"
#include "ref/nn/propagate.h"
#include "ref/nn/recurrent.h"

enum { INITIAL_WEIGHT, WEIGHT_IH, WEIGHT_HH, BIAS_IH, BIAS_HH };

static parameter *param(const model *m, int which) { return &m->parameters.items[which]; }

typedef struct evolvegcn_step {
    propagation graph;   /* A^ of this snapshot, first (model_ops::step_size) */
    float *weight;       /* [F][F] W_t */
    float *gru_cache;    /* [F][GRU_CACHE_WIDTH(F)] */
    float *transformed;  /* [N][F] X W_t */
} evolvegcn_step;

static int evolvegcn_create(model *m, rng *r, tf_error *err)
{
    const int64_t f = m->config.in_features;
    int64_t initial[3] = {1, f, f}, gate_weights[2] = {3 * f, f}, gate_biases[1] = {3 * f};
    if (parameters_add(&m->parameters, "recurrent.initial_weight", 3, initial, err) < 0 ||
        parameters_add(&m->parameters, "recurrent.recurrent_layer.weight_ih_l0", 2, gate_weights, err) < 0 ||
        parameters_add(&m->parameters, "recurrent.recurrent_layer.weight_hh_l0", 2, gate_weights, err) < 0 ||
        parameters_add(&m->parameters, "recurrent.recurrent_layer.bias_ih_l0", 1, gate_biases, err) < 0 ||
        parameters_add(&m->parameters, "recurrent.recurrent_layer.bias_hh_l0", 1, gate_biases, err) < 0)
        return TF_ERR_INPUT;
    parameter_init_glorot(param(m, INITIAL_WEIGHT), r);
    for (int which = WEIGHT_IH; which <= BIAS_HH; which++) /* torch.nn.GRU: uniform(+-1/sqrt(hidden)) */
        parameter_init_uniform(param(m, which), 1.0 / sqrt((double)f), r);
    return TF_OK;
}

static int evolvegcn_forward(const model *m, const snapshot_seq *seq, window_tape *tape, tf_error *err)
{
    const int64_t n = seq->num_nodes, f = m->config.in_features;
    evolvegcn_step *steps = tape->steps;
    int status = TF_OK;
    for (int64_t t = 0; status == TF_OK && t < tape->count; t++) {
        evolvegcn_step *s = &steps[t];
        const snapshot *snap = &seq->snapshots[tape->first + t];
        const float *previous = t == 0 ? param(m, INITIAL_WEIGHT)->value.data : steps[t - 1].weight;
        status = model_gcn_operator(m, &s->graph, seq, tape->first + t, err);
        if (status == TF_OK &&
            (!(s->weight = model_scratch_zeroed(m, (size_t)(f * f), sizeof(float), "EvolveGCN-O tape", err)) ||
             !(s->gru_cache =
                   model_scratch_zeroed(m, (size_t)(f * GRU_CACHE_WIDTH(f)), sizeof(float), "EvolveGCN-O tape", err)) ||
             !(s->transformed = model_scratch_zeroed(m, (size_t)(n * f), sizeof(float), "EvolveGCN-O tape", err))))
            status = TF_ERR_INPUT;
        if (status != TF_OK)
            break;
        m->kernels->gru_cell_forward(previous, previous, param(m, WEIGHT_IH)->value.data, param(m, WEIGHT_HH)->value.data,
                             param(m, BIAS_IH)->value.data, param(m, BIAS_HH)->value.data, f, f, f, s->weight,
                             s->gru_cache);
        m->kernels->matmul_accumulate(snap->features.data, s->weight, n, f, f, s->transformed);
        m->kernels->propagate_forward(&s->graph, s->transformed, f, tape->states + t * n * f);
    }
    return status;
}

/* model_ops::backward (ref/models/model.h): dstates [tape->count][num_nodes][model_state_width(m)]. */
static int evolvegcn_backward(model *m, const snapshot_seq *seq, const window_tape *tape, const float *dstates,
                              tf_error *err)
{
    const int64_t n = seq->num_nodes, f = m->config.in_features;
    const evolvegcn_step *steps = tape->steps;
    const char *what = "EvolveGCN-O gradients";
    float *dweight = model_scratch_zeroed(m, (size_t)(f * f), sizeof(float), what, err);          /* dL/dW_t */
    float *dprevious = model_scratch_zeroed(m, (size_t)(f * f), sizeof(float), what, err);        /* dL/dW_{t-1} */
    float *dtransformed = model_scratch_zeroed(m, (size_t)(n * f), sizeof(float), what, err);
    float *dgates = model_scratch_zeroed(m, (size_t)(2 * f * 3 * f), sizeof(float), what, err); /* GRU scratch */
    int status = dweight && dprevious && dtransformed && dgates ? TF_OK : TF_ERR_INPUT;
    for (int64_t t = tape->count - 1; status == TF_OK && t >= 0; t--) {
        const evolvegcn_step *s = &steps[t];
        const snapshot *snap = &seq->snapshots[tape->first + t];
        const float *previous = t == 0 ? param(m, INITIAL_WEIGHT)->value.data : steps[t - 1].weight;
        /* W_t is used by this snapshot's convolution and by the next snapshot's GRU. */
        if (t + 1 < tape->count)
            memcpy(dweight, dprevious, (size_t)(f * f) * sizeof(float));
        else
            memset(dweight, 0, (size_t)(f * f) * sizeof(float));
        memset(dtransformed, 0, (size_t)(n * f) * sizeof(float));
        m->kernels->propagate_backward(&s->graph, dstates + t * n * f, f, dtransformed);
        m->kernels->matmul_backward(snap->features.data, s->weight, dtransformed, n, f, f, NULL, dweight);
        /* W_t = GRU(W_{t-1}, W_{t-1}): both arguments send their gradient to W_{t-1}. */
        memset(dprevious, 0, (size_t)(f * f) * sizeof(float));
        m->kernels->gru_cell_backward(previous, previous, param(m, WEIGHT_IH)->value.data,
                                      param(m, WEIGHT_HH)->value.data, s->gru_cache, dweight, f, f, f, dgates,
                                      dprevious, dprevious, param(m, WEIGHT_IH)->grad.data,
                                      param(m, WEIGHT_HH)->grad.data, param(m, BIAS_IH)->grad.data,
                                      param(m, BIAS_HH)->grad.data);
    }
    if (status == TF_OK) /* what reaches W_0 is the gradient of initial_weight */
        for (int64_t i = 0; i < f * f; i++)
            param(m, INITIAL_WEIGHT)->grad.data[i] += dprevious[i];
    return status;
}

const model_ops evolvegcn_ops = {evolvegcn_create, evolvegcn_forward, evolvegcn_backward, sizeof(evolvegcn_step), 1};
