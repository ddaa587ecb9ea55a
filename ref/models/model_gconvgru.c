/* GConvGRU (Seo et al., 2018, "GCRN" model 2) as PyTorch Geometric Temporal's GConvGRU:
 * a GRU whose every linear map is a Chebyshev graph convolution (chebconv.h), on X and on H:
 *
 *     Z  = sigmoid(Cheb_xz(X) + Cheb_hz(H))
 *     R  = sigmoid(Cheb_xr(X) + Cheb_hr(H))
 *     H~ = tanh(Cheb_xh(X) + Cheb_hh(H * R))
 *     H' = Z * H + (1 - Z) * H~
 *
 * Reuse across gates: the Chebyshev basis of X is computed once for the three x-gates, the
 * basis of H once for z and r; the candidate needs the basis of H * R, which differs. The basis
 * of X depends on t only, so a model with inputs (ref/models/model.h) takes its terms T_1 .. T_{K-1}
 * from there instead (opt/incremental_inputs.h: reused across windows, T_1 by deltas). */
#include <stdlib.h>
#include <string.h>

#include "ref/nn/chebconv.h"
#include "ref/nn/layers.h"
#include "ref/core/memory.h"
#include "ref/models/model.h"
#include "ref/nn/propagate.h"

/* The six convolutions, in PyTorch's state_dict order. */
enum { CONV_X_Z, CONV_H_Z, CONV_X_R, CONV_H_R, CONV_X_H, CONV_H_H, CONVS };

/* Parameters of convolution c: its bias, then its K weights. */
static parameter *conv(const model *m, int c) { return &m->parameters.items[c * (m->config.chebyshev_k + 1)]; }

typedef struct gconvgru_step {
    propagation graph;     /* L^ of this snapshot, first (model_ops::step_size) */
    float *basis_x;        /* [K][N][F] T_k(L^) X */
    float *basis_h;        /* [K][N][H] T_k(L^) H */
    float *basis_masked;   /* [K][N][H] T_k(L^) (H * R) */
    float *z, *r, *candidate;   /* [N][H] */
} gconvgru_step;

static int gconvgru_create(model *m, rng *r, tf_error *err)
{
    static const char *names[CONVS] = {"recurrent.conv_x_z", "recurrent.conv_h_z", "recurrent.conv_x_r",
                                       "recurrent.conv_h_r", "recurrent.conv_x_h", "recurrent.conv_h_h"};
    const int64_t f = m->config.in_features, h = m->config.hidden;
    for (int c = 0; c < CONVS; c++)
        if (chebconv_add(&m->parameters, names[c], m->config.chebyshev_k, c % 2 == 0 ? f : h, h, r, err) < 0)
            return TF_ERR_INPUT;
    return TF_OK;
}

static int gconvgru_forward(const model *m, const snapshot_seq *seq, window_tape *tape, tf_error *err)
{
    const int64_t n = seq->num_nodes, f = m->config.in_features, h = m->config.hidden;
    const int k = m->config.chebyshev_k;
    gconvgru_step *steps = tape->steps;
    float *zeros = model_scratch_zeroed(m, (size_t)(n * h), sizeof(float), "GConvGRU state", err);
    float *masked = zeros ? model_scratch(m, (size_t)(n * h), sizeof(float), "GConvGRU state", err) : NULL;
    int status = masked ? TF_OK : TF_ERR_INPUT;
    for (int64_t t = 0; status == TF_OK && t < tape->count; t++) {
        gconvgru_step *s = &steps[t];
        const float *previous = t == 0 ? zeros : tape->states + (t - 1) * n * h;
        float *state = tape->states + t * n * h;
        status = model_chebyshev_operator(m, &s->graph, seq, tape->first + t, err);
        if (status == TF_OK &&
            /* the bases are written whole; the gates' pre-activations are sums from zero */
            (!(s->basis_x = model_scratch(m, (size_t)(k * n * f), sizeof(float), "GConvGRU tape", err)) ||
             !(s->basis_h = model_scratch(m, (size_t)(k * n * h), sizeof(float), "GConvGRU tape", err)) ||
             !(s->basis_masked = model_scratch(m, (size_t)(k * n * h), sizeof(float), "GConvGRU tape", err)) ||
             !(s->z = model_scratch_zeroed(m, (size_t)(n * h), sizeof(float), "GConvGRU tape", err)) ||
             !(s->r = model_scratch_zeroed(m, (size_t)(n * h), sizeof(float), "GConvGRU tape", err)) ||
             !(s->candidate = model_scratch_zeroed(m, (size_t)(n * h), sizeof(float), "GConvGRU tape", err))))
            status = TF_ERR_INPUT;
        if (status != TF_OK)
            break;

        /* T_0 = X_t; T_1 .. T_{K-1} depend on t only: served when the model has a source (ref/models/model.h) */
        if ((status = model_chebyshev_inputs(m, &s->graph, seq, tape->first + t, s->basis_x, err)) != TF_OK)
            break;
        chebyshev_basis_forward(m->kernels, &s->graph, previous, h, k, s->basis_h);
        /* Gates z and r: pre-activations start from zero (the convs add their biases). */
        chebconv_accumulate(m->kernels, conv(m, CONV_X_Z), k, s->basis_x, n, f, h, s->z);
        chebconv_accumulate(m->kernels, conv(m, CONV_H_Z), k, s->basis_h, n, h, h, s->z);
        m->kernels->sigmoid_forward(s->z, n * h, s->z);
        chebconv_accumulate(m->kernels, conv(m, CONV_X_R), k, s->basis_x, n, f, h, s->r);
        chebconv_accumulate(m->kernels, conv(m, CONV_H_R), k, s->basis_h, n, h, h, s->r);
        m->kernels->sigmoid_forward(s->r, n * h, s->r);
        for (int64_t i = 0; i < n * h; i++)
            masked[i] = previous[i] * s->r[i];
        chebyshev_basis_forward(m->kernels, &s->graph, masked, h, k, s->basis_masked);
        chebconv_accumulate(m->kernels, conv(m, CONV_X_H), k, s->basis_x, n, f, h, s->candidate);
        chebconv_accumulate(m->kernels, conv(m, CONV_H_H), k, s->basis_masked, n, h, h, s->candidate);
        m->kernels->tanh_forward(s->candidate, n * h, s->candidate);
        for (int64_t i = 0; i < n * h; i++)
            state[i] = s->z[i] * previous[i] + (1.0f - s->z[i]) * s->candidate[i];
    }
    return status;
}

/* model_ops::backward (ref/models/model.h): dstates [tape->count][num_nodes][model_state_width(m)]. */
static int gconvgru_backward(model *m, const snapshot_seq *seq, const window_tape *tape, const float *dstates,
                             tf_error *err)
{
    const int64_t n = seq->num_nodes, f = m->config.in_features, h = m->config.hidden, nh = n * h;
    const int k = m->config.chebyshev_k;
    const gconvgru_step *steps = tape->steps;
    /* Each buffer is written or cleared before it is read, except zeros. */
    float *zeros = model_scratch_zeroed(m, (size_t)nh, sizeof(float), "GConvGRU gradients", err);
    float *dstate = model_scratch(m, (size_t)nh, sizeof(float), "GConvGRU gradients", err);
    float *dprevious = model_scratch(m, (size_t)nh, sizeof(float), "GConvGRU gradients", err);
    float *dgate = model_scratch(m, (size_t)nh, sizeof(float), "GConvGRU gradients", err);        /* dZ, dH~ or dR */
    float *dpreactivation = model_scratch(m, (size_t)nh, sizeof(float), "GConvGRU gradients", err);
    float *dbasis = model_scratch(m, (size_t)(k * nh), sizeof(float), "GConvGRU gradients", err);
    float *dbasis_h = model_scratch(m, (size_t)(k * nh), sizeof(float), "GConvGRU gradients", err);
    float *dmasked = model_scratch(m, (size_t)nh, sizeof(float), "GConvGRU gradients", err);
    int status = zeros && dstate && dprevious && dgate && dpreactivation && dbasis && dbasis_h && dmasked
                     ? TF_OK : TF_ERR_INPUT;
    for (int64_t t = tape->count - 1; status == TF_OK && t >= 0; t--) {
        const gconvgru_step *s = &steps[t];
        const float *previous = t == 0 ? zeros : tape->states + (t - 1) * nh;
        for (int64_t i = 0; i < nh; i++)
            dstate[i] = dstates[t * nh + i] + (t + 1 < tape->count ? dprevious[i] : 0.0f);
        /* H' = Z H + (1 - Z) H~ */
        for (int64_t i = 0; i < nh; i++)
            dprevious[i] = dstate[i] * s->z[i];
        memset(dbasis_h, 0, (size_t)(k * nh) * sizeof(float));

        /* Candidate: H~ = tanh(Cheb_xh(X) + Cheb_hh(H * R)) */
        for (int64_t i = 0; i < nh; i++)
            dgate[i] = dstate[i] * (1.0f - s->z[i]);
        memset(dpreactivation, 0, (size_t)nh * sizeof(float));
        m->kernels->tanh_backward(s->candidate, dgate, nh, dpreactivation);
        chebconv_backward(m->kernels, conv(m, CONV_X_H), k, s->basis_x, dpreactivation, n, f, h, NULL);
        memset(dbasis, 0, (size_t)(k * nh) * sizeof(float));
        chebconv_backward(m->kernels, conv(m, CONV_H_H), k, s->basis_masked, dpreactivation, n, h, h, dbasis);
        memset(dmasked, 0, (size_t)nh * sizeof(float));
        chebyshev_basis_backward(m->kernels, &s->graph, dbasis, h, k, dmasked);
        for (int64_t i = 0; i < nh; i++) {
            dprevious[i] += dmasked[i] * s->r[i];
            dgate[i] = dmasked[i] * previous[i]; /* dR */
        }

        /* Gate r: R = sigmoid(Cheb_xr(X) + Cheb_hr(H)) */
        memset(dpreactivation, 0, (size_t)nh * sizeof(float));
        m->kernels->sigmoid_backward(s->r, dgate, nh, dpreactivation);
        chebconv_backward(m->kernels, conv(m, CONV_X_R), k, s->basis_x, dpreactivation, n, f, h, NULL);
        chebconv_backward(m->kernels, conv(m, CONV_H_R), k, s->basis_h, dpreactivation, n, h, h, dbasis_h);

        /* Gate z: Z = sigmoid(Cheb_xz(X) + Cheb_hz(H)), dZ = dH' (H - H~) */
        for (int64_t i = 0; i < nh; i++)
            dgate[i] = dstate[i] * (previous[i] - s->candidate[i]);
        memset(dpreactivation, 0, (size_t)nh * sizeof(float));
        m->kernels->sigmoid_backward(s->z, dgate, nh, dpreactivation);
        chebconv_backward(m->kernels, conv(m, CONV_X_Z), k, s->basis_x, dpreactivation, n, f, h, NULL);
        chebconv_backward(m->kernels, conv(m, CONV_H_Z), k, s->basis_h, dpreactivation, n, h, h, dbasis_h);

        /* The basis of H, shared by the gates z and r, sends its gradient to H once. */
        chebyshev_basis_backward(m->kernels, &s->graph, dbasis_h, h, k, dprevious);
    }
    return status;
}

const model_ops gconvgru_ops = {gconvgru_create, gconvgru_forward, gconvgru_backward, sizeof(gconvgru_step), 1};
