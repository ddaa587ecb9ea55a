#include "ref/nn/layers.h"

#include <math.h>
#include <string.h>

#include "ref/nn/activation.h"

void ref_linear_forward(const float *x, const float *weight, const float *bias, int64_t n, int64_t in, int64_t out,
                        float *y)
{
    for (int64_t i = 0; i < n; i++)
        for (int64_t o = 0; o < out; o++) {
            float sum = bias ? bias[o] : 0.0f;
            for (int64_t k = 0; k < in; k++)
                sum += x[i * in + k] * weight[o * in + k];
            y[i * out + o] = sum;
        }
}

void ref_linear_accumulate(const float *x, const float *weight, int64_t n, int64_t in, int64_t out, float *y)
{
    for (int64_t i = 0; i < n; i++)
        for (int64_t o = 0; o < out; o++) {
            float sum = 0.0f;
            for (int64_t k = 0; k < in; k++)
                sum += x[i * in + k] * weight[o * in + k];
            y[i * out + o] += sum;
        }
}

/* sum over rows i < n of a[i * a_stride] * b[i * b_stride] (b NULL: of a alone), in double: the
 * parameter gradients of a linear map. */
static double column_product(const float *a, int64_t a_stride, const float *b, int64_t b_stride, int64_t n)
{
    double sum = 0;
    for (int64_t i = 0; i < n; i++)
        sum += b ? (double)a[i * a_stride] * (double)b[i * b_stride] : (double)a[i * a_stride];
    return sum;
}

void ref_linear_backward(const float *x, const float *weight, const float *dy, int64_t n, int64_t in, int64_t out,
                         float *dx, float *dweight, float *dbias)
{
    if (dx)
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = 0; k < in; k++) {
                float sum = 0.0f;
                for (int64_t o = 0; o < out; o++)
                    sum += dy[i * out + o] * weight[o * in + k];
                dx[i * in + k] += sum;
            }
    /* Parameter gradients sum over all n rows (every vertex of every snapshot of a window:
     * thousands of terms), so they are accumulated in double; a float running sum would drift
     * by more than the 1e-5 the twins are held to. */
    for (int64_t o = 0; o < out; o++) {
        if (dweight)
            for (int64_t k = 0; k < in; k++)
                dweight[o * in + k] += (float)column_product(dy + o, out, x + k, in, n);
        if (dbias)
            dbias[o] += (float)column_product(dy + o, out, NULL, 0, n);
    }
}

void ref_linear_backward_sums(const float *x, const float *weight, const float *dy, int64_t n, int64_t in, int64_t out,
                              float *dx, double *dweight, double *dbias)
{
    ref_linear_backward(x, weight, dy, n, in, out, dx, NULL, NULL);
    for (int64_t o = 0; o < out; o++) {
        if (dweight)
            for (int64_t k = 0; k < in; k++)
                dweight[o * in + k] += column_product(dy + o, out, x + k, in, n);
        if (dbias)
            dbias[o] += column_product(dy + o, out, NULL, 0, n);
    }
}

void ref_matmul_accumulate(const float *x, const float *weight, int64_t n, int64_t in, int64_t out, float *y)
{
    for (int64_t i = 0; i < n; i++)
        for (int64_t o = 0; o < out; o++) {
            float sum = 0.0f;
            for (int64_t k = 0; k < in; k++)
                sum += x[i * in + k] * weight[k * out + o];
            y[i * out + o] += sum;
        }
}

void ref_matmul_backward(const float *x, const float *weight, const float *dy, int64_t n, int64_t in, int64_t out,
                         float *dx, float *dweight)
{
    if (dx)
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = 0; k < in; k++) {
                float sum = 0.0f;
                for (int64_t o = 0; o < out; o++)
                    sum += dy[i * out + o] * weight[k * out + o];
                dx[i * in + k] += sum;
            }
    if (dweight) /* a sum over all rows: accumulated in double, as in ref_linear_backward() */
        for (int64_t k = 0; k < in; k++)
            for (int64_t o = 0; o < out; o++) {
                double sum = 0;
                for (int64_t i = 0; i < n; i++)
                    sum += (double)x[i * in + k] * (double)dy[i * out + o];
                dweight[k * out + o] += (float)sum;
            }
}

void ref_add_bias(float *y, const float *bias, int64_t n, int64_t width)
{
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < width; j++)
            y[i * width + j] += bias[j];
}

void ref_add_bias_backward(const float *dy, int64_t n, int64_t width, float *dbias)
{
    for (int64_t j = 0; j < width; j++) {
        double sum = 0; /* over all rows, in double as in ref_linear_backward() */
        for (int64_t i = 0; i < n; i++)
            sum += dy[i * width + j];
        dbias[j] += (float)sum;
    }
}

void ref_copy_rows(float *to, int64_t to_stride, const float *from, int64_t from_stride, int64_t rows, int64_t width)
{
    for (int64_t i = 0; i < rows; i++)
        memcpy(to + i * to_stride, from + i * from_stride, (size_t)width * sizeof(float));
}

void ref_sigmoid_forward(const float *x, int64_t count, float *y)
{
    /* the project's own sigmoid (ref/nn/activation.h): branch-free, so the loop vectorizes */
#pragma omp simd
    for (int64_t i = 0; i < count; i++)
        y[i] = tf_sigmoidf(x[i]);
}

void ref_sigmoid_backward(const float *y, const float *dy, int64_t count, float *dx)
{
    for (int64_t i = 0; i < count; i++)
        dx[i] += dy[i] * y[i] * (1.0f - y[i]);
}

void ref_tanh_forward(const float *x, int64_t count, float *y)
{
#pragma omp simd
    for (int64_t i = 0; i < count; i++)
        y[i] = tf_tanhf(x[i]);
}

void ref_tanh_backward(const float *y, const float *dy, int64_t count, float *dx)
{
    for (int64_t i = 0; i < count; i++)
        dx[i] += dy[i] * (1.0f - y[i] * y[i]);
}

void ref_relu_forward(const float *x, int64_t count, float *y)
{
    for (int64_t i = 0; i < count; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void ref_relu_backward(const float *y, const float *dy, int64_t count, float *dx)
{
    for (int64_t i = 0; i < count; i++)
        if (y[i] > 0.0f)
            dx[i] += dy[i];
}

double ref_mse_loss(const float *prediction, const float *target, const uint8_t *mask, int64_t n, int64_t width,
                    float scale, float *dprediction)
{
    int64_t rows = 0;
    for (int64_t i = 0; i < n; i++)
        rows += !mask || mask[i];
    return ref_mse_loss_over(prediction, target, mask, n, width, rows, scale, dprediction);
}

double ref_mse_loss_over(const float *prediction, const float *target, const uint8_t *mask, int64_t n, int64_t width,
                         int64_t total_rows, float scale, float *dprediction)
{
    const int64_t rows = total_rows;
    double sum = 0;
    double count = (double)rows * (double)width;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < width; j++) {
            int64_t k = i * width + j;
            int counted = (!mask || mask[i]) && rows > 0;
            double difference = (double)prediction[k] - (double)target[k];
            if (counted)
                sum += difference * difference;
            if (dprediction)
                dprediction[k] = counted ? (float)(scale * 2.0 * difference / count) : 0.0f;
        }
    return rows > 0 ? sum / count : 0.0;
}

double ref_cross_entropy_loss(const float *logits, const int32_t *labels, const uint8_t *mask, int64_t n,
                              int64_t classes, float scale, float *dlogits)
{
    int64_t rows = 0;
    for (int64_t i = 0; i < n; i++)
        rows += !mask || mask[i];
    double sum = 0;
    for (int64_t i = 0; i < n; i++) {
        const float *row = logits + i * classes;
        int counted = (!mask || mask[i]) && rows > 0;
        /* log-sum-exp around the largest logit, so exp() never overflows */
        double largest = row[0];
        for (int64_t c = 1; c < classes; c++)
            largest = row[c] > largest ? row[c] : largest;
        double total = 0;
        for (int64_t c = 0; c < classes; c++)
            total += exp((double)row[c] - largest);
        double log_normalizer = largest + log(total);
        if (counted)
            sum += log_normalizer - row[labels[i]];
        if (dlogits)
            for (int64_t c = 0; c < classes; c++) {
                double probability = exp((double)row[c] - log_normalizer);
                double g = probability - (c == labels[i] ? 1.0 : 0.0);
                dlogits[i * classes + c] = counted ? (float)(scale * g / (double)rows) : 0.0f;
            }
    }
    return rows > 0 ? sum / (double)rows : 0.0;
}

void ref_leaky_relu_forward(const float *x, int64_t count, float slope, float *y)
{
    for (int64_t i = 0; i < count; i++)
        y[i] = x[i] > 0.0f ? x[i] : slope * x[i];
}

void ref_leaky_relu_backward(const float *y, const float *dy, int64_t count, float slope, float *dx)
{
    for (int64_t i = 0; i < count; i++)
        dx[i] += y[i] > 0.0f ? dy[i] : slope * dy[i];
}

void ref_layer_norm_forward(const float *x, const float *weight, const float *bias, int64_t n, int64_t width,
                            float epsilon, float *y, float *normalized, float *inverse_std)
{
    for (int64_t i = 0; i < n; i++) {
        const float *row = x + i * width;
        double mean = 0, variance = 0;
        for (int64_t j = 0; j < width; j++)
            mean += row[j];
        mean /= (double)width;
        for (int64_t j = 0; j < width; j++)
            variance += ((double)row[j] - mean) * ((double)row[j] - mean);
        variance /= (double)width;
        float inverse = (float)(1.0 / sqrt(variance + (double)epsilon));
        inverse_std[i] = inverse;
        for (int64_t j = 0; j < width; j++) {
            float hat = (float)((double)row[j] - mean) * inverse;
            normalized[i * width + j] = hat;
            y[i * width + j] = hat * weight[j] + bias[j];
        }
    }
}

void ref_layer_norm_backward(const float *normalized, const float *inverse_std, const float *weight, const float *dy,
                             int64_t n, int64_t width, float *dx, double *dweight, double *dbias)
{
    if (dx)
        for (int64_t i = 0; i < n; i++) {
            const float *hat = normalized + i * width, *g = dy + i * width;
            double mean_g = 0, mean_g_hat = 0;
            for (int64_t j = 0; j < width; j++) {
                double gj = (double)g[j] * (double)weight[j];
                mean_g += gj;
                mean_g_hat += gj * (double)hat[j];
            }
            mean_g /= (double)width;
            mean_g_hat /= (double)width;
            for (int64_t j = 0; j < width; j++) {
                double gj = (double)g[j] * (double)weight[j];
                dx[i * width + j] += (float)((double)inverse_std[i] * (gj - mean_g - (double)hat[j] * mean_g_hat));
            }
        }
    for (int64_t j = 0; j < width; j++) { /* sums over all rows, in double as in ref_linear_backward() */
        if (dweight)
            dweight[j] += column_product(dy + j, width, normalized + j, width, n);
        if (dbias)
            dbias[j] += column_product(dy + j, width, NULL, 0, n);
    }
}

double ref_bce_with_logits_sum(const float *logits, int64_t n, float target, int64_t denominator, float *dlogits)
{
    double sum = 0;
    for (int64_t i = 0; i < n; i++) {
        double x = logits[i];
        sum += fmax(x, 0.0) - x * (double)target + log1p(exp(-fabs(x)));
        if (dlogits) {
            double probability = 1.0 / (1.0 + exp(-x));
            dlogits[i] = (float)((probability - (double)target) / (double)denominator);
        }
    }
    return sum;
}
