#include "ref/nn/recurrent.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref/nn/activation.h"
#include "ref/nn/layers.h"

static float sigmoid(float x) { return tf_sigmoidf(x); }

void ref_gru_cell_forward(const float *x, const float *h, const float *weight_ih, const float *weight_hh,
                          const float *bias_ih, const float *bias_hh, int64_t n, int64_t in, int64_t hidden,
                          float *h_out, float *cache)
{
    const int64_t H = hidden;
    for (int64_t row = 0; row < n; row++) {
        const float *xr = x + row * in, *hr = h + row * H;
        float *r = cache + row * 4 * H, *z = r + H, *candidate = z + H, *hidden_part = candidate + H;
        for (int64_t j = 0; j < H; j++) {
            /* The three input and three hidden pre-activations of unit j. */
            float input[3], recurrent[3];
            for (int gate = 0; gate < 3; gate++) {
                int64_t unit = gate * H + j;
                input[gate] = bias_ih[unit];
                recurrent[gate] = bias_hh[unit];
                for (int64_t k = 0; k < in; k++)
                    input[gate] += xr[k] * weight_ih[unit * in + k];
                for (int64_t k = 0; k < H; k++)
                    recurrent[gate] += hr[k] * weight_hh[unit * H + k];
            }
            r[j] = sigmoid(input[0] + recurrent[0]);
            z[j] = sigmoid(input[1] + recurrent[1]);
            hidden_part[j] = recurrent[2];
            candidate[j] = tf_tanhf(input[2] + r[j] * recurrent[2]);
            h_out[row * H + j] = (1.0f - z[j]) * candidate[j] + z[j] * hr[j];
        }
    }
}

void ref_gru_cell_backward(const float *x, const float *h, const float *weight_ih, const float *weight_hh,
                           const float *cache, const float *dh_out, int64_t n, int64_t in, int64_t hidden,
                           float *dpreactivation, float *dx, float *dh, float *dweight_ih, float *dweight_hh,
                           float *dbias_ih, float *dbias_hh)
{
    const int64_t H = hidden;
    float *d_input_all = dpreactivation, *d_recurrent_all = dpreactivation + n * 3 * H;
    for (int64_t row = 0; row < n; row++) {
        const float *hr = h + row * H;
        const float *r = cache + row * 4 * H, *z = r + H, *candidate = z + H, *hidden_part = candidate + H;
        float *d_input = d_input_all + row * 3 * H, *d_recurrent = d_recurrent_all + row * 3 * H;
        for (int64_t j = 0; j < H; j++) {
            float g = dh_out[row * H + j];
            /* h' = (1 - z) n + z h */
            float d_candidate = g * (1.0f - z[j]);
            float d_z = g * (hr[j] - candidate[j]);
            if (dh)
                dh[row * H + j] += g * z[j];
            /* n = tanh(i_n + r * hn): gradients of the pre-activations of each gate */
            float d_n_pre = d_candidate * (1.0f - candidate[j] * candidate[j]);
            float d_r = d_n_pre * hidden_part[j];
            d_input[j] = d_r * r[j] * (1.0f - r[j]);
            d_input[H + j] = d_z * z[j] * (1.0f - z[j]);
            d_input[2 * H + j] = d_n_pre;
            d_recurrent[j] = d_input[j];
            d_recurrent[H + j] = d_input[H + j];
            d_recurrent[2 * H + j] = d_n_pre * r[j];
            /* dx and dh row by row, gate after gate: opt/fusion.c's fused step repeats this order */
            for (int gate = 0; gate < 3; gate++) {
                int64_t unit = gate * H + j;
                for (int64_t k = 0; k < in && dx; k++)
                    dx[row * in + k] += d_input[unit] * weight_ih[unit * in + k];
                for (int64_t k = 0; k < H && dh; k++)
                    dh[row * H + k] += d_recurrent[unit] * weight_hh[unit * H + k];
            }
        }
    }
    /* The parameter gradients sum over all n rows (TGN's updater: every entry of a batch,
     * thousands), so they go through ref_linear_backward(), which sums in double. */
    ref_linear_backward(x, weight_ih, d_input_all, n, in, 3 * H, NULL, dweight_ih, dbias_ih);
    ref_linear_backward(h, weight_hh, d_recurrent_all, n, H, 3 * H, NULL, dweight_hh, dbias_hh);
}

void ref_tgcn_cell_forward(const float *x, const float *h, const float *weight_ih, const float *weight_hh,
                           const float *bias, int64_t block, int64_t hidden, float *h_out, float *cache)
{
    const int64_t H = hidden;
    float *z = cache, *r = z + H, *candidate = r + H, *masked = candidate + H;
    /* gate g's sum over [C_g | state]: its bias, its input block, then the state's columns */
    for (int gate = 0; gate < 3; gate++)
        for (int64_t j = 0; j < H; j++) {
            const int64_t unit = gate * H + j;
            const float *state = gate == 2 ? masked : h;
            float sum = bias[unit];
            for (int64_t k = 0; k < block; k++)
                sum += x[gate * block + k] * weight_ih[unit * block + k];
            for (int64_t k = 0; k < H; k++)
                sum += state[k] * weight_hh[unit * H + k];
            cache[unit] = gate == 2 ? tf_tanhf(sum) : sigmoid(sum);
            if (gate == 1 && j == H - 1) /* R is complete: the candidate reads H * R */
                for (int64_t k = 0; k < H; k++)
                    masked[k] = h[k] * r[k];
        }
    for (int64_t j = 0; j < H; j++)
        h_out[j] = z[j] * h[j] + (1.0f - z[j]) * candidate[j];
}

void ref_tgcn_cell_backward(const float *x, const float *h, const float *weight_ih, const float *weight_hh,
                            const float *cache, const float *dh_out, int64_t block, int64_t hidden, float *scratch,
                            float *dx, float *dh, float *dweight_ih, float *dweight_hh, float *dbias)
{
    const int64_t H = hidden;
    const float *z = cache, *r = z + H, *candidate = r + H, *masked = candidate + H;
    float *d_pre = scratch, *d_masked = scratch + 3 * H; /* [3][H] z, r, h; [H] */
    for (int64_t j = 0; j < H; j++) {
        /* H' = Z H + (1 - Z) H~ */
        d_pre[j] = dh_out[j] * (h[j] - candidate[j]) * z[j] * (1.0f - z[j]);
        d_pre[2 * H + j] = dh_out[j] * (1.0f - z[j]) * (1.0f - candidate[j] * candidate[j]);
        d_masked[j] = 0.0f;
    }
    /* the candidate read H * R through its state columns */
    for (int64_t j = 0; j < H; j++)
        for (int64_t k = 0; k < H; k++)
            d_masked[k] += d_pre[2 * H + j] * weight_hh[(2 * H + j) * H + k];
    for (int64_t k = 0; k < H; k++)
        d_pre[H + k] = d_masked[k] * h[k] * r[k] * (1.0f - r[k]);
    if (dh) {
        for (int64_t k = 0; k < H; k++) {
            dh[k] += dh_out[k] * z[k];
            dh[k] += d_masked[k] * r[k];
        }
        for (int64_t unit = 0; unit < 2 * H; unit++) /* Z's and R's state columns */
            for (int64_t k = 0; k < H; k++)
                dh[k] += d_pre[unit] * weight_hh[unit * H + k];
    }
    for (int64_t unit = 0; unit < 3 * H; unit++) {
        const int64_t gate = unit / H;
        const float *state = gate == 2 ? masked : h;
        for (int64_t k = 0; k < block; k++) {
            if (dx)
                dx[gate * block + k] += d_pre[unit] * weight_ih[unit * block + k];
            if (dweight_ih)
                dweight_ih[unit * block + k] += d_pre[unit] * x[gate * block + k];
        }
        for (int64_t k = 0; k < H && dweight_hh; k++)
            dweight_hh[unit * H + k] += d_pre[unit] * state[k];
        if (dbias)
            dbias[unit] += d_pre[unit];
    }
}

void ref_lstm_pointwise_forward(const float *preactivation, const float *c, int64_t n, int64_t hidden, float *c_out,
                                float *h_out, float *gates)
{
    const int64_t H = hidden;
    for (int64_t row = 0; row < n; row++) {
        const float *a = preactivation + row * 4 * H;
        float *i = gates + row * 4 * H, *f = i + H, *g = f + H, *o = g + H;
        for (int64_t j = 0; j < H; j++) {
            i[j] = sigmoid(a[j]);
            f[j] = sigmoid(a[H + j]);
            g[j] = tf_tanhf(a[2 * H + j]);
            o[j] = sigmoid(a[3 * H + j]);
            float cell = f[j] * c[row * H + j] + i[j] * g[j];
            c_out[row * H + j] = cell;
            h_out[row * H + j] = o[j] * tf_tanhf(cell);
        }
    }
}

void ref_lstm_peephole_forward(const float *preactivation, const lstm_peepholes *peepholes, const float *c, int64_t n,
                               int64_t hidden, float *c_out, float *h_out, float *gates)
{
    const int64_t H = hidden;
    for (int64_t row = 0; row < n; row++) {
        const float *a = preactivation + row * 4 * H, *c_row = c + row * H;
        float *i = gates + row * 4 * H, *f = i + H, *g = f + H, *o = g + H;
        for (int64_t j = 0; j < H; j++) {
            i[j] = sigmoid(a[j] + peepholes->input[j] * c_row[j]);
            f[j] = sigmoid(a[H + j] + peepholes->forget[j] * c_row[j]);
            g[j] = tf_tanhf(a[2 * H + j]);
            const float cell = f[j] * c_row[j] + i[j] * g[j];
            o[j] = sigmoid(a[3 * H + j] + peepholes->output[j] * cell);
            c_out[row * H + j] = cell;
            h_out[row * H + j] = o[j] * tf_tanhf(cell);
        }
    }
}

void ref_lstm_peephole_backward(const float *gates, const lstm_peepholes *peepholes, const float *c,
                                const float *c_out, const float *dh_out, const float *dc_out, int64_t n,
                                int64_t hidden, float *dpreactivation, float *dc, float *const dpeepholes[3])
{
    const int64_t H = hidden;
    for (int64_t row = 0; row < n; row++) {
        const float *i = gates + row * 4 * H, *f = i + H, *g = f + H, *o = g + H;
        float *d = dpreactivation + row * 4 * H;
        for (int64_t j = 0; j < H; j++) {
            const int64_t at = row * H + j;
            const float squashed = tf_tanhf(c_out[at]);
            /* o reads c', so c' gets gradient through h' = o tanh(c') and through o */
            const float d_o = dh_out[at] * squashed * o[j] * (1.0f - o[j]);
            const float d_cell = (dc_out ? dc_out[at] : 0.0f) + dh_out[at] * o[j] * (1.0f - squashed * squashed) +
                                 d_o * peepholes->output[j];
            const float d_i = d_cell * g[j] * i[j] * (1.0f - i[j]);
            const float d_f = d_cell * c[at] * f[j] * (1.0f - f[j]);
            d[j] = d_i;
            d[H + j] = d_f;
            d[2 * H + j] = d_cell * i[j] * (1.0f - g[j] * g[j]);
            d[3 * H + j] = d_o;
            if (dc)
                dc[at] += d_cell * f[j] + d_i * peepholes->input[j] + d_f * peepholes->forget[j];
        }
    }
    /* The peepholes' gradients are sums over rows: in double, as every such sum in ref/ (layers.h). */
    for (int64_t j = 0; j < H; j++) {
        double input = 0, forget = 0, output = 0;
        for (int64_t row = 0; row < n; row++) {
            const float *d = dpreactivation + row * 4 * H;
            input += (double)d[j] * c[row * H + j];
            forget += (double)d[H + j] * c[row * H + j];
            output += (double)d[3 * H + j] * c_out[row * H + j];
        }
        dpeepholes[0][j] += (float)input;
        dpeepholes[1][j] += (float)forget;
        dpeepholes[2][j] += (float)output;
    }
}

void ref_lstm_pointwise_backward(const float *gates, const float *c, const float *c_out, const float *dh_out,
                                 const float *dc_out, int64_t n, int64_t hidden, float *dpreactivation, float *dc)
{
    const int64_t H = hidden;
    for (int64_t row = 0; row < n; row++) {
        const float *i = gates + row * 4 * H, *f = i + H, *g = f + H, *o = g + H;
        float *d = dpreactivation + row * 4 * H;
        for (int64_t j = 0; j < H; j++) {
            int64_t k = row * H + j;
            float tanh_cell = tf_tanhf(c_out[k]);
            /* h' = o tanh(c'): c' collects dh' through tanh plus what later steps send */
            float d_cell = dh_out[k] * o[j] * (1.0f - tanh_cell * tanh_cell) + (dc_out ? dc_out[k] : 0.0f);
            float d_o = dh_out[k] * tanh_cell;
            d[j] = d_cell * g[j] * i[j] * (1.0f - i[j]);
            d[H + j] = d_cell * c[k] * f[j] * (1.0f - f[j]);
            d[2 * H + j] = d_cell * i[j] * (1.0f - g[j] * g[j]);
            d[3 * H + j] = d_o * o[j] * (1.0f - o[j]);
            if (dc)
                dc[k] += d_cell * f[j];
        }
    }
}

void ref_lstm_cell_forward(const float *x, const float *h, const float *c, const float *weight_ih,
                           const float *weight_hh, const float *bias_ih, const float *bias_hh, int64_t n, int64_t in,
                           int64_t hidden, float *h_out, float *c_out, float *preactivation, float *gates)
{
    ref_linear_forward(x, weight_ih, bias_ih, n, in, 4 * hidden, preactivation);
    ref_linear_accumulate(h, weight_hh, n, hidden, 4 * hidden, preactivation);
    ref_add_bias(preactivation, bias_hh, n, 4 * hidden);
    ref_lstm_pointwise_forward(preactivation, c, n, hidden, c_out, h_out, gates);
}

void ref_lstm_cell_backward(const float *x, const float *h, const float *c, const float *weight_ih,
                            const float *weight_hh, const float *c_out, const float *gates, const float *dh_out,
                            const float *dc_out, int64_t n, int64_t in, int64_t hidden, float *dpreactivation,
                            float *dx, float *dh, float *dc, float *dweight_ih, float *dweight_hh, float *dbias_ih,
                            float *dbias_hh)
{
    ref_lstm_pointwise_backward(gates, c, c_out, dh_out, dc_out, n, hidden, dpreactivation, dc);
    ref_linear_backward(x, weight_ih, dpreactivation, n, in, 4 * hidden, dx, dweight_ih, dbias_ih);
    ref_linear_backward(h, weight_hh, dpreactivation, n, hidden, 4 * hidden, dh, dweight_hh, dbias_hh);
}

void ref_rnn_cell_forward(const float *x, const float *h, const float *weight_ih, const float *weight_hh,
                          const float *bias_ih, const float *bias_hh, int64_t n, int64_t in, int64_t hidden,
                          float *h_out)
{
    ref_linear_forward(x, weight_ih, bias_ih, n, in, hidden, h_out);
    ref_linear_accumulate(h, weight_hh, n, hidden, hidden, h_out);
    ref_add_bias(h_out, bias_hh, n, hidden);
    ref_tanh_forward(h_out, n * hidden, h_out);
}

void ref_rnn_cell_backward(const float *x, const float *h, const float *weight_ih, const float *weight_hh,
                           const float *h_out, const float *dh_out, int64_t n, int64_t in, int64_t hidden,
                           float *dpreactivation, float *dx, float *dh, float *dweight_ih, float *dweight_hh,
                           float *dbias_ih, float *dbias_hh)
{
    memset(dpreactivation, 0, (size_t)(n * hidden) * sizeof(float));
    ref_tanh_backward(h_out, dh_out, n * hidden, dpreactivation);
    ref_linear_backward(x, weight_ih, dpreactivation, n, in, hidden, dx, dweight_ih, dbias_ih);
    ref_linear_backward(h, weight_hh, dpreactivation, n, hidden, hidden, dh, dweight_hh, dbias_hh);
}
