/* GCRN-M1 (Seo et al., 2018, "GCRN" model 1), the stacked model ReInc evaluates: a Chebyshev graph
 * convolution of the snapshot's input, then an LSTM with peepholes per vertex whose matrices are
 * plain products, and --layers L such pairs stacked, the LSTM of pair l feeding pair l + 1's
 * convolution (ReInc stacks two):
 *
 *     U_0 = X_t
 *     Z_l = Cheb_l(U_{l-1})                                   (K terms, its own bias)
 *     i, f, o = sigmoid(Z_l W_q^T + H_l W'_q^T + b_q + b'_q + w_cq * C), g = tanh(...)   (o reads C')
 *     C'_l = f * C_l + i * g,   H'_l = o * tanh(C'_l),   U_l = H'_l
 *
 * and the cell's output is H'_L. Unlike GConvLSTM (model 2), whose convolutions sit inside the gates
 * and act on H as well, here the graph enters once per pair, on the pair's input only: the LSTM never
 * sees the graph. Each pair's convolution has no nonlinearity of its own, as in the paper (the LSTM's
 * gates follow it). PyTorch Geometric Temporal has no such model; the parameters of pair l are named
 * recurrent.layers.l.conv (a ChebConv) and recurrent.layers.l.lstm (torch.nn.LSTM's four, plus the
 * peepholes w_c_i, w_c_f, w_c_o). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ref/core/memory.h"
#include "ref/models/model.h"
#include "ref/nn/chebconv.h"
#include "ref/nn/layers.h"
#include "ref/nn/propagate.h"
#include "ref/nn/recurrent.h"

/* A pair's parameters after its convolution's K + 1: the LSTM's. */
enum { WEIGHT_IH, WEIGHT_HH, BIAS_IH, BIAS_HH, PEEP_I, PEEP_F, PEEP_O, LSTM_PARAMETERS };

/* The first parameter of pair @p l: its convolution's bias, then K weights, then the LSTM's. */
static parameter *pair(const model *m, int l)
{
    return &m->parameters.items[l * (m->config.chebyshev_k + 1 + LSTM_PARAMETERS)];
}
static parameter *lstm(const model *m, int l, int which) { return pair(m, l) + m->config.chebyshev_k + 1 + which; }

static lstm_peepholes peepholes_of(const model *m, int l)
{
    return (lstm_peepholes){lstm(m, l, PEEP_I)->value.data, lstm(m, l, PEEP_F)->value.data,
                            lstm(m, l, PEEP_O)->value.data};
}

/* One pair's record of a snapshot. */
typedef struct pair_record {
    float *basis;      /* [K][N][in] T_k(L^) U_{l-1} */
    float *convolved;  /* [N][H] Z_l */
    float *gates;      /* [N][4H] i, f, g, o after their nonlinearities */
    float *cell;       /* [N][H] C'_l */
    float *state;      /* [N][H] H'_l */
} pair_record;

typedef struct gcrnm1_step {
    propagation graph;     /* L^ of this snapshot, first (model_ops::step_size) */
    pair_record *pairs;    /* [L] */
} gcrnm1_step;

static int64_t input_width(const model *m, int l) { return l == 0 ? m->config.in_features : m->config.hidden; }

static int gcrnm1_create(model *m, rng *r, tf_error *err)
{
    const int64_t h = m->config.hidden;
    int64_t weights[2] = {4 * h, h}, biases[1] = {4 * h}, vector[2] = {1, h};
    static const char *names[LSTM_PARAMETERS] = {"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
                                                 "w_c_i",        "w_c_f",        "w_c_o"};
    for (int l = 0; l < m->config.layers; l++) {
        char name[96];
        snprintf(name, sizeof name, "recurrent.layers.%d.conv", l);
        if (chebconv_add(&m->parameters, name, m->config.chebyshev_k, input_width(m, l), h, r, err) < 0)
            return TF_ERR_INPUT;
        for (int which = 0; which < LSTM_PARAMETERS; which++) {
            snprintf(name, sizeof name, "recurrent.layers.%d.lstm.%s", l, names[which]);
            const int64_t *shape = which <= WEIGHT_HH ? weights : which <= BIAS_HH ? biases : vector;
            if (parameters_add(&m->parameters, name, which <= WEIGHT_HH || which >= PEEP_I ? 2 : 1, shape, err) < 0)
                return TF_ERR_INPUT;
        }
        /* torch.nn.LSTM: uniform(+-1/sqrt(H)); the peepholes as GConvLSTM's, Glorot */
        for (int which = 0; which < LSTM_PARAMETERS; which++)
            if (which < PEEP_I)
                parameter_init_uniform(lstm(m, l, which), 1.0 / sqrt((double)h), r);
            else
                parameter_init_glorot(lstm(m, l, which), r);
    }
    return TF_OK;
}

static int step_alloc(const model *m, gcrnm1_step *s, int64_t n, tf_error *err)
{
    const int64_t h = m->config.hidden, nh = n * h;
    const int k = m->config.chebyshev_k, layers = m->config.layers;
    if (!(s->pairs = model_scratch(m, (size_t)layers, sizeof *s->pairs, "GCRN-M1 tape", err)))
        return TF_ERR_INPUT;
    for (int l = 0; l < layers; l++) {
        pair_record *p = &s->pairs[l];
        if (!(p->basis = model_scratch(m, (size_t)(k * n * input_width(m, l)), sizeof(float), "GCRN-M1 tape", err)) ||
            !(p->convolved = model_scratch(m, (size_t)nh, sizeof(float), "GCRN-M1 tape", err)) ||
            !(p->gates = model_scratch(m, (size_t)(4 * nh), sizeof(float), "GCRN-M1 tape", err)) ||
            !(p->cell = model_scratch(m, (size_t)nh, sizeof(float), "GCRN-M1 tape", err)) ||
            !(p->state = model_scratch(m, (size_t)nh, sizeof(float), "GCRN-M1 tape", err)))
            return TF_ERR_INPUT;
    }
    return TF_OK;
}

static int gcrnm1_forward(const model *m, const snapshot_seq *seq, window_tape *tape, tf_error *err)
{
    const int64_t n = seq->num_nodes, h = m->config.hidden, nh = n * h;
    const int k = m->config.chebyshev_k, layers = m->config.layers;
    const kernels *kn = m->kernels;
    gcrnm1_step *steps = tape->steps;
    float *zeros = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GCRN-M1 state", err);
    float *preactivation = zeros ? model_scratch(m, (size_t)(4 * nh), sizeof(float), "GCRN-M1 scratch", err) : NULL;
    int status = preactivation ? TF_OK : TF_ERR_INPUT;
    for (int64_t t = 0; status == TF_OK && t < tape->count; t++) {
        gcrnm1_step *s = &steps[t];
        if ((status = step_alloc(m, s, n, err)) != TF_OK ||
            (status = model_chebyshev_operator(m, &s->graph, seq, tape->first + t, err)) != TF_OK)
            break;
        for (int l = 0; l < layers; l++) {
            pair_record *p = &s->pairs[l];
            const pair_record *before = t == 0 ? NULL : &steps[t - 1].pairs[l];
            const float *input = l == 0 ? seq->snapshots[tape->first + t].features.data : s->pairs[l - 1].state;
            const float *previous = before ? before->state : zeros, *previous_cell = before ? before->cell : zeros;
            const lstm_peepholes peepholes = peepholes_of(m, l);
            if (l == 0) /* X_t's basis depends on t only: served when the model has a source */
                status = model_chebyshev_inputs(m, &s->graph, seq, tape->first + t, p->basis, err);
            else /* the first pair's states: they depend on the parameters, so computed */
                chebyshev_basis_forward(kn, &s->graph, input, input_width(m, l), k, p->basis);
            if (status != TF_OK)
                break;
            memset(p->convolved, 0, (size_t)nh * sizeof(float));
            chebconv_accumulate(kn, pair(m, l), k, p->basis, n, input_width(m, l), h, p->convolved);
            kn->linear_forward(p->convolved, lstm(m, l, WEIGHT_IH)->value.data, lstm(m, l, BIAS_IH)->value.data, n, h,
                               4 * h, preactivation);
            kn->linear_accumulate(previous, lstm(m, l, WEIGHT_HH)->value.data, n, h, 4 * h, preactivation);
            kn->add_bias(preactivation, lstm(m, l, BIAS_HH)->value.data, n, 4 * h);
            ref_lstm_peephole_forward(preactivation, &peepholes, previous_cell, n, h, p->cell, p->state, p->gates);
        }
        memcpy(tape->states + t * nh, s->pairs[layers - 1].state, (size_t)nh * sizeof(float));
    }
    return status;
}

/* The backward's carriers: per pair, what reaches its H' and C' at this snapshot and at the one
 * before, and the scratch of one pair's step. */
typedef struct gcrnm1_gradients {
    float *dstate, *dcell, *dprevious, *dprevious_cell;   /* [L][N][H] */
    float *dpreactivation;                                /* [N][4H] */
    float *dconvolved;                                    /* [N][H] */
    float *dbasis;                                        /* [K][N][max(F, H)] */
    float *zeros;                                         /* [N][H] the state before the window */
} gcrnm1_gradients;

/* Pair l's backward at snapshot t (its dstate and dcell carried in), adding into its parameters'
 * gradients, its carriers to t - 1 and, for l > 0, the dstate of pair l - 1 (its input). */
static void pair_backward(model *m, const gcrnm1_step *steps, int64_t t, int l, int64_t n, gcrnm1_gradients *g)
{
    const int64_t h = m->config.hidden, nh = n * h, in = input_width(m, l);
    const int k = m->config.chebyshev_k;
    const kernels *kn = m->kernels;
    const pair_record *p = &steps[t].pairs[l], *before = t == 0 ? NULL : &steps[t - 1].pairs[l];
    const lstm_peepholes peepholes = peepholes_of(m, l);
    float *const dpeepholes[3] = {lstm(m, l, PEEP_I)->grad.data, lstm(m, l, PEEP_F)->grad.data,
                                  lstm(m, l, PEEP_O)->grad.data};
    const float *zeros = g->zeros;
    memset(g->dconvolved, 0, (size_t)nh * sizeof(float));
    ref_lstm_peephole_backward(p->gates, &peepholes, before ? before->cell : zeros, p->cell, g->dstate + l * nh,
                               g->dcell + l * nh, n, h, g->dpreactivation, g->dprevious_cell + l * nh, dpeepholes);
    kn->linear_backward(before ? before->state : zeros, lstm(m, l, WEIGHT_HH)->value.data, g->dpreactivation, n, h,
                        4 * h, g->dprevious + l * nh, lstm(m, l, WEIGHT_HH)->grad.data, lstm(m, l, BIAS_HH)->grad.data);
    kn->linear_backward(p->convolved, lstm(m, l, WEIGHT_IH)->value.data, g->dpreactivation, n, h, 4 * h,
                        g->dconvolved, lstm(m, l, WEIGHT_IH)->grad.data, lstm(m, l, BIAS_IH)->grad.data);
    memset(g->dbasis, 0, (size_t)(k * n * in) * sizeof(float));
    chebconv_backward(kn, pair(m, l), k, p->basis, g->dconvolved, n, in, h, l > 0 ? g->dbasis : NULL);
    if (l > 0) /* pair l's input is pair l - 1's H' */
        chebyshev_basis_backward(kn, &steps[t].graph, g->dbasis, h, k, g->dstate + (l - 1) * nh);
}

/* model_ops::backward (ref/models/model.h): dstates [tape->count][num_nodes][model_state_width(m)]. */
static int gcrnm1_backward(model *m, const snapshot_seq *seq, const window_tape *tape, const float *dstates,
                           tf_error *err)
{
    const int64_t n = seq->num_nodes, h = m->config.hidden, nh = n * h;
    const int64_t widest = m->config.in_features > h ? m->config.in_features : h;
    const int layers = m->config.layers;
    const gcrnm1_step *steps = tape->steps;
    gcrnm1_gradients g;
    float **carriers[] = {&g.dstate, &g.dcell, &g.dprevious, &g.dprevious_cell, &g.zeros};
    int status = TF_OK;
    for (size_t c = 0; status == TF_OK && c < sizeof carriers / sizeof *carriers; c++)
        if (!(*carriers[c] = model_scratch_zeroed(m, (size_t)(layers * nh), sizeof(float), "GCRN-M1 gradients", err)))
            status = TF_ERR_INPUT;
    if (status == TF_OK &&
        (!(g.dpreactivation = model_scratch(m, (size_t)(4 * nh), sizeof(float), "GCRN-M1 gradients", err)) ||
         !(g.dconvolved = model_scratch(m, (size_t)nh, sizeof(float), "GCRN-M1 gradients", err)) ||
         !(g.dbasis = model_scratch(m, (size_t)(m->config.chebyshev_k * n * widest), sizeof(float), "GCRN-M1 gradients",
                                    err))))
        status = TF_ERR_INPUT;
    for (int64_t t = tape->count - 1; status == TF_OK && t >= 0; t--) {
        /* The top pair's H' gets the head's gradient, the others theirs from the pair above (added as
         * that pair runs back); each gets what snapshot t + 1 sent it. */
        for (int l = 0; l < layers; l++)
            model_lstm_carry(l == layers - 1 ? dstates + t * nh : g.zeros, t, tape->count, nh,
                             g.dstate + l * nh, g.dcell + l * nh, g.dprevious + l * nh, g.dprevious_cell + l * nh);
        for (int l = layers - 1; l >= 0; l--)
            pair_backward(m, steps, t, l, n, &g);
    }
    return status;
}

const model_ops gcrnm1_ops = {gcrnm1_create, gcrnm1_forward, gcrnm1_backward, sizeof(gcrnm1_step), 1};
