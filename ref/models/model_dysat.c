/* DySAT (Sankar et al., 2020), the attention model DGC evaluates beside T-GCN and MPNN-LSTM: one
 * block of structural attention on every snapshot, then temporal self-attention of each vertex over
 * its own counterparts in the window's snapshots so far:
 *
 *     Z_t = ELU(GAT(X_t, G_t))                                         [N][H]
 *     H_t = TemporalAttention(Z_0 .. Z_t) (ref/nn/self_attention.h) [N][H]
 *
 * The structural layer is ref/nn/graph_attention.h (PyTorch Geometric's GATConv, DYSAT_HEADS heads
 * averaged, so the width is --hidden whatever H is; DySAT concatenates its heads), with DySAT's ELU;
 * the temporal layer is scaled dot-product attention with positions, a causal mask and a
 * residual of its input z_t (not of z_t + p_t: ref/nn/self_attention.h says why). Where a GRU or
 * LSTM reads only the previous snapshot's state, H_t reads every earlier snapshot of the window: a
 * vertex's temporal traffic grows with the window (DGC, Section 5.2). What twofold leaves out of
 * DySAT (several heads in time, the feed-forward layer, learned positions) is in chapters/01a-snapshot-models.md.
 * Parameters are named as a GATConv `structural` and the temporal layer's three raw matrices would be
 * (bench/peer/peer_dysat.py). Like GAT-LSTM, the layer takes its graph from model_attention_graph():
 * under a vertex split (chapter 06) a rank's rows and the halo whose rows of X_t it fetches. A
 * vertex's whole window stays on its owner there, so the temporal layer reads no other rank; under a
 * split of time (PSS) it would read every earlier snapshot's Z from the snapshots' owners
 * (ref/partition.h's temporal traffic counts those bytes). */
#include <math.h>
#include <string.h>

#include "ref/core/memory.h"
#include "ref/models/model.h"
#include "ref/nn/graph_attention.h"
#include "ref/nn/self_attention.h"

/** Heads of the structural attention, averaged. */
#define DYSAT_HEADS 2

/* Parameter order = PyTorch's state_dict order. */
enum { ATT_SRC, ATT_DST, CONV_BIAS, CONV_WEIGHT, QUERY, KEY, VALUE };

static parameter *param(const model *m, int which) { return &m->parameters.items[which]; }

/* What one snapshot's forward keeps; the window's temporal layer keeps its tape in the first record. */
typedef struct dysat_step {
    propagation graph;                 /* the snapshot's graph (and a twin's transpose), first (model_ops::step_size) */
    graph_attention_tape conv;         /* the structural layer's tape */
    float *structural;                 /* [N][H] Z_t, after the ELU (a row of the window's [count][N][H]) */
    self_attention_tape temporal;  /* the window's temporal tape (first record only) */
} dysat_step;

static graph_attention structural_of(const model *m)
{
    graph_attention a = {m->config.in_features, m->config.hidden, DYSAT_HEADS, 0, param(m, ATT_SRC),
                         param(m, ATT_DST), param(m, CONV_BIAS), param(m, CONV_WEIGHT)};
    return a;
}

static self_attention temporal_of(const model *m)
{
    self_attention a = {m->config.hidden, param(m, QUERY), param(m, KEY), param(m, VALUE)};
    return a;
}

static int dysat_create(model *m, rng *r, tf_error *err)
{
    const int64_t f = m->config.in_features, h = m->config.hidden;
    int64_t vectors[3] = {1, DYSAT_HEADS, h}, bias[1] = {h}, weight[2] = {DYSAT_HEADS * h, f}, square[2] = {h, h};
    if (parameters_add(&m->parameters, "structural.att_src", 3, vectors, err) < 0 ||
        parameters_add(&m->parameters, "structural.att_dst", 3, vectors, err) < 0 ||
        parameters_add(&m->parameters, "structural.bias", 1, bias, err) < 0 ||
        parameters_add(&m->parameters, "structural.lin.weight", 2, weight, err) < 0 ||
        parameters_add(&m->parameters, "temporal.query", 2, square, err) < 0 ||
        parameters_add(&m->parameters, "temporal.key", 2, square, err) < 0 ||
        parameters_add(&m->parameters, "temporal.value", 2, square, err) < 0)
        return TF_ERR_INPUT;
    /* GATConv: Glorot weight and attention vectors, zero bias; DySAT's temporal matrices: Glorot. */
    parameter_init_glorot(param(m, ATT_SRC), r);
    parameter_init_glorot(param(m, ATT_DST), r);
    parameter_init_glorot(param(m, CONV_WEIGHT), r);
    for (int which = QUERY; which <= VALUE; which++)
        parameter_init_glorot(param(m, which), r);
    return TF_OK;
}

/* ELU (alpha 1) in place, and its backward from the output y: dx = dy where y > 0, dy (y + 1) elsewhere. */
static void elu_forward(float *x, int64_t count)
{
    for (int64_t i = 0; i < count; i++)
        x[i] = x[i] > 0 ? x[i] : expm1f(x[i]);
}

static void elu_backward(const float *y, const float *dy, int64_t count, float *dx)
{
    for (int64_t i = 0; i < count; i++)
        dx[i] = y[i] > 0 ? dy[i] : dy[i] * (y[i] + 1.0f);
}

static int dysat_forward(const model *m, const snapshot_seq *seq, window_tape *tape, tf_error *err)
{
    const int64_t n = seq->num_nodes, h = m->config.hidden, nh = n * h;
    const kernels *k = m->kernels;
    const graph_attention structural = structural_of(m);
    const self_attention temporal = temporal_of(m);
    dysat_step *steps = tape->steps;
    float *embedded = model_scratch(m, (size_t)(tape->count * nh), sizeof(float), "DySAT tape", err); /* [count][N][H] */
    if (!embedded)
        return TF_ERR_INPUT;
    for (int64_t t = 0; t < tape->count; t++) {
        dysat_step *s = &steps[t];
        const snapshot *snap = &seq->snapshots[tape->first + t];
        s->structural = embedded + t * nh;
        int status = model_attention_graph(m, &s->graph, seq, tape->first + t, err);
        if (status == TF_OK)
            status = ref_graph_attention_forward(k, &structural, &s->graph, snap->features.data, m->scratch, &s->conv,
                                                 s->structural, err);
        if (status != TF_OK)
            return status;
        elu_forward(s->structural, nh);
    }
    return ref_self_attention_forward(k, &temporal, tape->count, n, embedded, NULL, m->scratch, &steps[0].temporal,
                                          tape->states, err);
}

/* model_ops::backward (ref/models/model.h): dstates [tape->count][num_nodes][hidden]. */
static int dysat_backward(model *m, const snapshot_seq *seq, const window_tape *tape, const float *dstates,
                          tf_error *err)
{
    const int64_t n = seq->num_nodes, h = m->config.hidden, nh = n * h;
    const graph_attention structural = structural_of(m);
    const self_attention temporal = temporal_of(m);
    const dysat_step *steps = tape->steps;
    float *dembedded = model_scratch(m, (size_t)(tape->count * nh), sizeof(float), "DySAT gradients", err);
    float *dlayer = dembedded ? model_scratch(m, (size_t)nh, sizeof(float), "DySAT gradients", err) : NULL;
    if (!dlayer || ref_self_attention_backward(m->kernels, &temporal, &steps[0].temporal, dstates, dembedded,
                                                   m->scratch, err) != TF_OK)
        return TF_ERR_INPUT;
    int status = TF_OK;
    for (int64_t t = tape->count - 1; status == TF_OK && t >= 0; t--) {
        const dysat_step *s = &steps[t];
        elu_backward(s->structural, dembedded + t * nh, nh, dlayer);
        status = ref_graph_attention_backward(m->kernels, &structural, &s->graph, &s->conv, dlayer, NULL, m->scratch, err);
    }
    return status;
}

const model_ops dysat_ops = {dysat_create, dysat_forward, dysat_backward, sizeof(dysat_step), 1};
