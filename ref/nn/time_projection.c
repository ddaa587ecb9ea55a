#include "ref/nn/time_projection.h"

void ref_time_projection_forward(const float *y, const float *delta, int64_t n, int64_t width, const float *weight,
                                 const float *bias, float *z)
{
    for (int64_t k = 0; k < n; k++)
        for (int64_t i = 0; i < width; i++)
            z[k * width + i] = y[k * width + i] * (1.0f + (weight[i] * delta[k] + bias[i]));
}

void ref_time_projection_backward(const float *y, const float *delta, int64_t n, int64_t width, const float *weight,
                                  const float *bias, const float *dz, float *dy, double *dweight, double *dbias)
{
    for (int64_t i = 0; i < width; i++) {
        double sum_weight = 0, sum_bias = 0;
        for (int64_t k = 0; k < n; k++) {
            float g = dz[k * width + i];
            if (dy)
                dy[k * width + i] += g * (1.0f + (weight[i] * delta[k] + bias[i]));
            double gy = (double)g * (double)y[k * width + i];
            sum_weight += gy * (double)delta[k];
            sum_bias += gy;
        }
        if (dweight)
            dweight[i] += sum_weight;
        if (dbias)
            dbias[i] += sum_bias;
    }
}
