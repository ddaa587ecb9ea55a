#include "ref/nn/time_encoding.h"

#include <math.h>

void ref_time_encoding_init(float *weight, float *bias, int64_t width)
{
    for (int64_t i = 0; i < width; i++) {
        /* TGL: 1 / 10 ** np.linspace(0, 9, width, dtype=np.float32): the exponents are rounded
         * to float32, the power and the reciprocal are float32 operations. */
        float exponent = width > 1 ? (float)(9.0 * (double)i / (double)(width - 1)) : 0.0f;
        weight[i] = 1.0f / powf(10.0f, exponent);
        if (bias)
            bias[i] = 0.0f;
    }
}

void ref_time_encoding_forward(const float *delta, int64_t n, const float *weight, const float *bias, int64_t width,
                               int64_t stride, float *out)
{
    for (int64_t k = 0; k < n; k++)
        for (int64_t i = 0; i < width; i++)
            out[k * stride + i] = cosf(delta[k] * weight[i] + bias[i]);
}

void ref_time_encoding_backward(const float *delta, int64_t n, const float *weight, const float *bias, int64_t width,
                                int64_t stride, const float *dout, double *dweight, double *dbias)
{
    for (int64_t i = 0; i < width; i++) {
        double sum_weight = 0, sum_bias = 0;
        for (int64_t k = 0; k < n; k++) {
            double g = (double)dout[k * stride + i] * -(double)sinf(delta[k] * weight[i] + bias[i]);
            sum_weight += g * (double)delta[k];
            sum_bias += g;
        }
        dweight[i] += sum_weight;
        dbias[i] += sum_bias;
    }
}
