/* DCRNN (Li et al., 2018, "Diffusion convolutional recurrent neural network"), the model DynaHB
 * evaluates, as PyTorch Geometric Temporal's DCRNN cell: a GRU whose three gates are diffusion
 * convolutions of the snapshot's input side by side with the state, the state carried from snapshot
 * to snapshot within the window:
 *
 *     DC(U) = sum over k < K of  T_k(W_o, U) Theta_o,k + T_k(W_i, U) Theta_i,k  + b
 *     T_0 = U,  T_1 = W U,  T_k = 2 W T_{k-1} - T_{k-2}          on each walk W
 *     W_o = (D_O^-1 A)^T   (the forward random walk: along the edges)
 *     W_i = (D_I^-1 A^T)^T (the backward random walk: against them)
 *     Z  = sigmoid(DC_z([X | H])),   R = sigmoid(DC_r([X | H]))
 *     H~ = tanh(DC_h([X | H * R])),  H' = Z * H + (1 - Z) * H~
 *
 * A[u][v] is the weight of the edge u -> v, d_out and d_in the weighted out- and in-degrees. The
 * polynomial in W is the recurrence of the authors' released code and of the library (the paper
 * writes powers W^k; both span the same K polynomials, so only the parametrization differs), and the
 * walks act on U transposed as in that code (ref/nn/propagate.h, ref_propagation_walk()). Each walk
 * is an operator whose rows gather, the backward one on the reversed graph (ref_propagation_transpose()),
 * so a vertex split restricts both to a rank's rows (chapter 06). Where the
 * library's DConv departs from this (edge weights, its backward walk's alignment, K >= 4) is in
 * chapters/01a-snapshot-models.md.
 *
 * A diffusion is linear and acts on every column alone, so DC([X | S]) = the X rows of each Theta
 * applied to the diffusion of X plus the S rows applied to that of S: the diffusion of X is computed
 * once for the three gates, that of H once for z and r (reuse across gates); the candidate diffuses
 * H * R. Parameters as the library names them: recurrent.conv_x_z.weight [2][K][F + H][H] (walk,
 * term, input row, output; rows 0 .. F-1 read X) and recurrent.conv_x_z.bias [H], then r, then h. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ref/models/model.h"
#include "ref/nn/propagate.h"

enum { GATE_Z, GATE_R, GATE_H, GATES };
enum { WALKS = 2 }; /* forward, backward */

static parameter *weight(const model *m, int gate) { return &m->parameters.items[2 * gate]; }
static parameter *bias(const model *m, int gate) { return &m->parameters.items[2 * gate + 1]; }

typedef struct dcrnn_step {
    propagation walks[WALKS]; /* W_o and W_i, first (model_ops::operators) */
    csr reversed;             /* the whole snapshot reversed, W_i's graph (the reference; arrays in scratch) */
    float *basis_x;           /* [2][K][N][F] T_k of X_t on each walk */
    float *basis_h;           /* [2][K][N][H] of H */
    float *basis_masked;      /* [2][K][N][H] of H * R */
    float *z, *r, *candidate; /* [N][H] */
} dcrnn_step;

static int dcrnn_create(model *m, rng *r, tf_error *err)
{
    static const char *names[GATES] = {"recurrent.conv_x_z", "recurrent.conv_x_r", "recurrent.conv_x_h"};
    const int64_t in = m->config.in_features + m->config.hidden, h = m->config.hidden, k = m->config.chebyshev_k;
    const int64_t weight_shape[4] = {WALKS, k, in, h}, bias_shape[1] = {h};
    for (int gate = 0; gate < GATES; gate++) {
        char name[96];
        snprintf(name, sizeof name, "%s.weight", names[gate]);
        if (parameters_add(&m->parameters, name, 4, weight_shape, err) < 0)
            return TF_ERR_INPUT;
        snprintf(name, sizeof name, "%s.bias", names[gate]);
        if (parameters_add(&m->parameters, name, 1, bias_shape, err) < 0)
            return TF_ERR_INPUT;
        /* DConv's xavier_uniform_ on the 4-D weight: PyTorch's fans are K in h and 2 in h; the bias zero */
        parameter_init_uniform(weight(m, gate), sqrt(6.0 / ((double)(k + WALKS) * (double)(in * h))), r);
    }
    return TF_OK;
}

/* Snapshot t's two walks: from the model's operator source (a vertex split's part), or from its
 * whole graph, W_i as the transpose of WALK_BACKWARD_TRANSPOSED on the reversed graph, whose arrays
 * the tape's scratch holds (@p reversed). */
static int dcrnn_walks(const model *m, const snapshot_seq *seq, int64_t t, propagation *walks, csr *reversed,
                       tf_error *err)
{
    const csr *g = &seq->snapshots[t].graph;
    int status = TF_OK;
    if (m->operators) {
        status = m->operators->build(m->operators->context, t, OPERATOR_WALK_FORWARD, &walks[0], err);
        if (status == TF_OK)
            status = m->operators->build(m->operators->context, t, OPERATOR_WALK_BACKWARD, &walks[1], err);
    } else {
        propagation transposed;
        reversed->row_ptr = model_scratch(m, (size_t)g->num_nodes + 1, sizeof *reversed->row_ptr, "reversed graph", err);
        reversed->col = reversed->row_ptr ? model_scratch(m, (size_t)g->num_edges + 1, sizeof *reversed->col,
                                                          "reversed graph", err) : NULL;
        reversed->weight = reversed->col ? model_scratch(m, (size_t)g->num_edges + 1, sizeof *reversed->weight,
                                                         "reversed graph", err) : NULL;
        status = reversed->weight ? ref_propagation_walk(&walks[0], g, WALK_FORWARD, err) : TF_ERR_INPUT;
        if (status == TF_OK && (status = ref_propagation_walk(&transposed, g, WALK_BACKWARD_TRANSPOSED, err)) == TF_OK) {
            status = ref_propagation_transpose(&walks[1], reversed, &transposed, err);
            ref_propagation_free(&transposed);
        }
    }
    for (int d = 0; status == TF_OK && d < WALKS; d++)
        if (m->kernels->prepare_propagation)
            status = m->kernels->prepare_propagation(&walks[d], err);
    return status;
}

/* basis [2][K][n][width]: T_0 .. T_{K-1} of x on each walk. */
static void diffusion_forward(const kernels *k, const propagation *walks, const float *x, int64_t n, int64_t width,
                              int order, float *basis)
{
    const int64_t size = n * width;
    for (int d = 0; d < WALKS; d++) {
        float *terms = basis + d * order * size;
        k->copy_rows(terms, size, x, size, 1, size);
        if (order > 1)
            k->propagate_forward(&walks[d], x, width, terms + size);
        for (int j = 2; j < order; j++) {
            float *current = terms + j * size;
            k->propagate_forward(&walks[d], terms + (j - 1) * size, width, current);
            for (int64_t i = 0; i < size; i++)
                current[i] = 2.0f * current[i] - terms[(j - 2) * size + i];
        }
    }
}

/* Backward of diffusion_forward(): dbasis [2][K][n][width] (destroyed) adds into dx [n][width]. */
static void diffusion_backward(const kernels *k, const propagation *walks, float *dbasis, int64_t n, int64_t width,
                               int order, float *dx)
{
    const int64_t size = n * width;
    for (int d = 0; d < WALKS; d++) {
        float *terms = dbasis + d * order * size;
        /* T_j = 2 W T_{j-1} - T_{j-2} sends 2 W^T dT_j to T_{j-1} and -dT_j to T_{j-2} */
        for (int j = order - 1; j >= 2; j--) {
            float *gradient = terms + j * size;
            for (int64_t i = 0; i < size; i++) {
                terms[(j - 2) * size + i] -= gradient[i];
                gradient[i] *= 2.0f;
            }
            k->propagate_backward(&walks[d], gradient, width, terms + (j - 1) * size);
        }
        if (order > 1)
            k->propagate_backward(&walks[d], terms + size, width, terms);
        for (int64_t i = 0; i < size; i++)
            dx[i] += terms[i];
    }
}

/* basis [2][K][N][F]: T_0 .. T_{K-1} of X_t on each walk. They depend on the snapshot only, so a
 * served model (#input_aggregations) takes T_1 .. T_{K-1} of both walks from its source
 * (opt/incremental_walks.h) and copies T_0 = X_t itself; the reference diffuses. */
static int diffusion_of_x(const model *m, const snapshot_seq *seq, int64_t t, const propagation *walks, float *basis,
                          tf_error *err)
{
    const int64_t size = seq->num_nodes * m->config.in_features;
    const int k = m->config.chebyshev_k;
    const float *x = seq->snapshots[t].features.data;
    if (!m->inputs || k < 2) {
        diffusion_forward(m->kernels, walks, x, seq->num_nodes, m->config.in_features, k, basis);
        return TF_OK;
    }
    float *served = model_scratch(m, (size_t)(WALKS * (k - 1) * size), sizeof(float), "DCRNN served terms", err);
    if (!served || m->inputs->get(m->inputs->context, t, served, err) != TF_OK)
        return TF_ERR_INPUT;
    for (int d = 0; d < WALKS; d++) {
        memcpy(basis + d * k * size, x, (size_t)size * sizeof(float));
        memcpy(basis + (d * k + 1) * size, served + d * (k - 1) * size, (size_t)((k - 1) * size) * sizeof(float));
    }
    return TF_OK;
}

/* y [n][H] = DC_gate([X | S]) before its nonlinearity, from the diffusions of X and of S. */
static void gate_forward(const model *m, int gate, const float *basis_x, const float *basis_s, int64_t n, float *y)
{
    const int64_t f = m->config.in_features, h = m->config.hidden, in = f + h;
    const float *w = weight(m, gate)->value.data;
    memset(y, 0, (size_t)(n * h) * sizeof *y);
    for (int64_t block = 0; block < WALKS * m->config.chebyshev_k; block++) { /* (walk, term) */
        m->kernels->matmul_accumulate(basis_x + block * n * f, w + block * in * h, n, f, h, y);
        m->kernels->matmul_accumulate(basis_s + block * n * h, w + block * in * h + f * h, n, h, h, y);
    }
    m->kernels->add_bias(y, bias(m, gate)->value.data, n, h);
}

/* Backward of gate_forward() given dy [n][H]: into the gate's gradients and dbasis_s [2][K][n][H]. */
static void gate_backward(model *m, int gate, const float *basis_x, const float *basis_s, const float *dy, int64_t n,
                          float *dbasis_s)
{
    const int64_t f = m->config.in_features, h = m->config.hidden, in = f + h;
    const float *w = weight(m, gate)->value.data;
    float *dw = weight(m, gate)->grad.data;
    for (int64_t block = 0; block < WALKS * m->config.chebyshev_k; block++) {
        m->kernels->matmul_backward(basis_x + block * n * f, w + block * in * h, dy, n, f, h, NULL, dw + block * in * h);
        m->kernels->matmul_backward(basis_s + block * n * h, w + block * in * h + f * h, dy, n, h, h,
                                    dbasis_s + block * n * h, dw + block * in * h + f * h);
    }
    m->kernels->add_bias_backward(dy, n, h, bias(m, gate)->grad.data);
}

static int dcrnn_forward(const model *m, const snapshot_seq *seq, window_tape *tape, tf_error *err)
{
    const int64_t n = seq->num_nodes, f = m->config.in_features, h = m->config.hidden, nh = n * h;
    const int k = m->config.chebyshev_k;
    const kernels *kern = m->kernels;
    dcrnn_step *steps = tape->steps;
    float *zeros = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "DCRNN state", err);
    float *masked = zeros ? model_scratch(m, (size_t)nh, sizeof(float), "DCRNN state", err) : NULL;
    int status = masked ? TF_OK : TF_ERR_INPUT;
    for (int64_t t = 0; status == TF_OK && t < tape->count; t++) {
        dcrnn_step *s = &steps[t];
        const float *previous = t == 0 ? zeros : tape->states + (t - 1) * nh;
        float *state = tape->states + t * nh;
        if ((status = dcrnn_walks(m, seq, tape->first + t, s->walks, &s->reversed, err)) != TF_OK)
            break;
        /* every buffer is written whole before it is read */
        if (!(s->basis_x = model_scratch(m, (size_t)(WALKS * k * n * f), sizeof(float), "DCRNN tape", err)) ||
            !(s->basis_h = model_scratch(m, (size_t)(WALKS * k * nh), sizeof(float), "DCRNN tape", err)) ||
            !(s->basis_masked = model_scratch(m, (size_t)(WALKS * k * nh), sizeof(float), "DCRNN tape", err)) ||
            !(s->z = model_scratch(m, (size_t)nh, sizeof(float), "DCRNN tape", err)) ||
            !(s->r = model_scratch(m, (size_t)nh, sizeof(float), "DCRNN tape", err)) ||
            !(s->candidate = model_scratch(m, (size_t)nh, sizeof(float), "DCRNN tape", err))) {
            status = TF_ERR_INPUT;
            break;
        }
        if ((status = diffusion_of_x(m, seq, tape->first + t, s->walks, s->basis_x, err)) != TF_OK)
            break;
        diffusion_forward(kern, s->walks, previous, n, h, k, s->basis_h);
        gate_forward(m, GATE_Z, s->basis_x, s->basis_h, n, s->z);
        kern->sigmoid_forward(s->z, nh, s->z);
        gate_forward(m, GATE_R, s->basis_x, s->basis_h, n, s->r);
        kern->sigmoid_forward(s->r, nh, s->r);
        for (int64_t i = 0; i < nh; i++)
            masked[i] = previous[i] * s->r[i];
        diffusion_forward(kern, s->walks, masked, n, h, k, s->basis_masked);
        gate_forward(m, GATE_H, s->basis_x, s->basis_masked, n, s->candidate);
        kern->tanh_forward(s->candidate, nh, s->candidate);
        for (int64_t i = 0; i < nh; i++)
            state[i] = s->z[i] * previous[i] + (1.0f - s->z[i]) * s->candidate[i];
    }
    return status;
}

/* model_ops::backward (ref/models/model.h): dstates [tape->count][num_nodes][hidden]. */
static int dcrnn_backward(model *m, const snapshot_seq *seq, const window_tape *tape, const float *dstates,
                          tf_error *err)
{
    const int64_t n = seq->num_nodes, h = m->config.hidden, nh = n * h;
    const int k = m->config.chebyshev_k;
    const kernels *kern = m->kernels;
    const dcrnn_step *steps = tape->steps;
    /* each buffer is written or cleared before it is read, except zeros */
    float *zeros = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "DCRNN gradients", err);
    float *dstate = model_scratch(m, (size_t)nh, sizeof(float), "DCRNN gradients", err);
    float *dprevious = model_scratch(m, (size_t)nh, sizeof(float), "DCRNN gradients", err);
    float *dgate = model_scratch(m, (size_t)nh, sizeof(float), "DCRNN gradients", err); /* dZ, dH~ or dR */
    float *dpreactivation = model_scratch(m, (size_t)nh, sizeof(float), "DCRNN gradients", err);
    float *dbasis = model_scratch(m, (size_t)(WALKS * k * nh), sizeof(float), "DCRNN gradients", err);
    float *dbasis_h = model_scratch(m, (size_t)(WALKS * k * nh), sizeof(float), "DCRNN gradients", err);
    float *dmasked = model_scratch(m, (size_t)nh, sizeof(float), "DCRNN gradients", err);
    int status = zeros && dstate && dprevious && dgate && dpreactivation && dbasis && dbasis_h && dmasked
                     ? TF_OK : TF_ERR_INPUT;
    for (int64_t t = tape->count - 1; status == TF_OK && t >= 0; t--) {
        const dcrnn_step *s = &steps[t];
        const float *previous = t == 0 ? zeros : tape->states + (t - 1) * nh;
        for (int64_t i = 0; i < nh; i++) {
            dstate[i] = dstates[t * nh + i] + (t + 1 < tape->count ? dprevious[i] : 0.0f);
            dprevious[i] = dstate[i] * s->z[i]; /* H' = Z H + (1 - Z) H~ */
            dgate[i] = dstate[i] * (1.0f - s->z[i]);
        }
        memset(dbasis_h, 0, (size_t)(WALKS * k * nh) * sizeof(float));
        memset(dbasis, 0, (size_t)(WALKS * k * nh) * sizeof(float));
        memset(dpreactivation, 0, (size_t)nh * sizeof(float));
        memset(dmasked, 0, (size_t)nh * sizeof(float));

        /* candidate: H~ = tanh(DC_h([X | H * R])) */
        kern->tanh_backward(s->candidate, dgate, nh, dpreactivation);
        gate_backward(m, GATE_H, s->basis_x, s->basis_masked, dpreactivation, n, dbasis);
        diffusion_backward(kern, s->walks, dbasis, n, h, k, dmasked);
        for (int64_t i = 0; i < nh; i++) {
            dprevious[i] += dmasked[i] * s->r[i];
            dgate[i] = dmasked[i] * previous[i]; /* dR */
        }
        /* r: R = sigmoid(DC_r([X | H])) */
        memset(dpreactivation, 0, (size_t)nh * sizeof(float));
        kern->sigmoid_backward(s->r, dgate, nh, dpreactivation);
        gate_backward(m, GATE_R, s->basis_x, s->basis_h, dpreactivation, n, dbasis_h);
        /* z: dZ = dH' (H - H~) */
        for (int64_t i = 0; i < nh; i++)
            dgate[i] = dstate[i] * (previous[i] - s->candidate[i]);
        memset(dpreactivation, 0, (size_t)nh * sizeof(float));
        kern->sigmoid_backward(s->z, dgate, nh, dpreactivation);
        gate_backward(m, GATE_Z, s->basis_x, s->basis_h, dpreactivation, n, dbasis_h);
        /* the diffusion of H, shared by z and r, sends its gradient to H once */
        diffusion_backward(kern, s->walks, dbasis_h, n, h, k, dprevious);
    }
    return status;
}

const model_ops dcrnn_ops = {dcrnn_create, dcrnn_forward, dcrnn_backward, sizeof(dcrnn_step), WALKS};
