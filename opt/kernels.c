#include "opt/kernels.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opt/graph_attention.h"
#include "ref/nn/activation.h"
#include "ref/nn/layers.h"
#include "ref/core/memory.h"
#include "ref/nn/recurrent.h"
#include "ref/nn/recurrent_gates.h"
#include "ref/nn/time_encoding.h"

#ifdef _OPENMP
#include <omp.h>
#endif

void opt_set_threads(int threads)
{
#ifdef _OPENMP
    omp_set_num_threads(threads);
    /* The trainer's threads each run whole windows (opt/train.c); a kernel's loop inside one runs
     * on that thread alone rather than starting a team per call. */
    omp_set_max_active_levels(1);
#endif
    /* OpenBLAS's own threads would compete with OpenMP's for the same cores (both spin while
     * waiting); our products are small (vertices x tens of columns), so BLAS runs in the
     * calling thread. */
    openblas_set_num_threads(1);
}

/* The scratch of one thread, grown to the largest size asked and kept for the run: the event
 * models call the products below thousands of times an epoch at the same few shapes, so after
 * the first batch no call allocates. NULL if even growing fails. */
static float *thread_scratch(size_t floats)
{
    static _Thread_local float *buffer;
    static _Thread_local size_t size;
    if (floats > size) {
        float *grown = realloc(buffer, floats * sizeof *grown);
        if (!grown)
            return NULL;
        buffer = grown;
        size = floats;
    }
    return buffer;
}

/* ---- dense products -------------------------------------------------------------------- */

void opt_linear_forward(const float *x, const float *weight, const float *bias, int64_t n, int64_t in, int64_t out,
                        float *y)
{
    if (bias) {
#pragma omp parallel for
        for (int64_t i = 0; i < n; i++)
            memcpy(y + i * out, bias, (size_t)out * sizeof(float));
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)out, (int)in, 1.0f, x, (int)in, weight, (int)in,
                bias ? 1.0f : 0.0f, y, (int)out);
}

void opt_linear_accumulate(const float *x, const float *weight, int64_t n, int64_t in, int64_t out, float *y)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)out, (int)in, 1.0f, x, (int)in, weight, (int)in,
                1.0f, y, (int)out);
}

/* The scratch of the two sums below for the shapes the models use (a gradient of up to 4096
 * entries, e.g. hidden 32 x 2 hidden 64) lives on the stack: no allocation per call. Larger
 * shapes allocate theirs. */
#define STACK_ENTRIES 4096

/* dbias[j] += sum over rows of dy[i][j], in double as ref does (a sum over every row). Rows
 * are read in memory order into a row of double accumulators. */
static void column_sums(const float *dy, int64_t n, int64_t width, float *dbias)
{
    double on_stack[STACK_ENTRIES];
    double *sums = width <= STACK_ENTRIES ? on_stack : malloc((size_t)width * sizeof *sums);
    if (!sums) {
        ref_add_bias_backward(dy, n, width, dbias);
        return;
    }
    memset(sums, 0, (size_t)width * sizeof *sums);
    /* simd: each column's sum still adds its rows in order, so vector lanes change nothing
     * (-O2 leaves these loops scalar). */
    for (int64_t i = 0; i < n; i++)
#pragma omp simd
        for (int64_t j = 0; j < width; j++)
            sums[j] += dy[i * width + j];
    for (int64_t j = 0; j < width; j++)
        dbias[j] += (float)sums[j];
    if (sums != on_stack)
        free(sums);
}

#define ROWS_PER_BLOCK 32

/* weight_gradient [rows_a][cols_b] += a^T b for a [n][rows_a], b [n][cols_b]: a sum over all n
 * rows (every vertex of a window). One sgemm would add thousands of terms in float; instead
 * each block of 32 rows is one sgemm and the blocks are summed in double. Against ref's double
 * sum, on random unit-size data over 8000 rows, one sgemm drifts to 1.2e-5, blocks of 256 rows
 * to 1.0e-5, blocks of 32 (ROWS_PER_BLOCK) stay below 2.7e-6 (verify/test_kernels.c). */
static void blocked_gram_accumulate(const float *a, int64_t rows_a, const float *b, int64_t cols_b, int64_t n,
                                    float *weight_gradient)
{
    const int64_t size = rows_a * cols_b;
    float block_on_stack[STACK_ENTRIES];
    double total_on_stack[STACK_ENTRIES];
    const int small = size <= STACK_ENTRIES;
    float *block = small ? block_on_stack : malloc((size_t)size * sizeof *block);
    double *total = small ? total_on_stack : malloc((size_t)size * sizeof *total);
    if (!block || !total) { /* if even these fail, one sgemm still gives a near result */
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)rows_a, (int)cols_b, (int)n, 1.0f, a, (int)rows_a, b,
                    (int)cols_b, 1.0f, weight_gradient, (int)cols_b);
        if (!small) {
            free(block);
            free(total);
        }
        return;
    }
    memset(total, 0, (size_t)size * sizeof *total);
    for (int64_t first = 0; first < n; first += ROWS_PER_BLOCK) {
        int64_t rows = n - first < ROWS_PER_BLOCK ? n - first : ROWS_PER_BLOCK;
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)rows_a, (int)cols_b, (int)rows, 1.0f,
                    a + first * rows_a, (int)rows_a, b + first * cols_b, (int)cols_b, 0.0f, block, (int)cols_b);
#pragma omp simd /* each entry its own sum: lanes change nothing */
        for (int64_t i = 0; i < size; i++)
            total[i] += block[i];
    }
    for (int64_t i = 0; i < size; i++)
        weight_gradient[i] += (float)total[i];
    if (!small) {
        free(block);
        free(total);
    }
}

void opt_linear_backward(const float *x, const float *weight, const float *dy, int64_t n, int64_t in, int64_t out,
                         float *dx, float *dweight, float *dbias)
{
    if (dx) /* dx [n][in] += dy [n][out] W [out][in] */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)in, (int)out, 1.0f, dy, (int)out, weight,
                    (int)in, 1.0f, dx, (int)in);
    if (dweight) /* dW [out][in] += dy^T x */
        blocked_gram_accumulate(dy, out, x, in, n, dweight);
    if (dbias)
        column_sums(dy, n, out, dbias);
}

void opt_linear_backward_sums(const float *x, const float *weight, const float *dy, int64_t n, int64_t in,
                              int64_t out, float *dx, double *dweight, double *dbias)
{
    float *block = dweight ? thread_scratch((size_t)(in * out)) : NULL;
    if (dweight && !block) { /* no scratch: the reference's loops give the same sums */
        ref_linear_backward_sums(x, weight, dy, n, in, out, dx, dweight, dbias);
        return;
    }
    if (dx) /* dx [n][in] += dy [n][out] W [out][in] */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)in, (int)out, 1.0f, dy, (int)out, weight,
                    (int)in, 1.0f, dx, (int)in);
    /* dW [out][in] += dy^T x: blocks of ROWS_PER_BLOCK rows by sgemm, added into the double sums
     * (as blocked_gram_accumulate(), without its rounding to float at the end). */
    for (int64_t first = 0; dweight && first < n; first += ROWS_PER_BLOCK) {
        const int64_t rows = n - first < ROWS_PER_BLOCK ? n - first : ROWS_PER_BLOCK, size = in * out;
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)out, (int)in, (int)rows, 1.0f, dy + first * out,
                    (int)out, x + first * in, (int)in, 0.0f, block, (int)in);
#pragma omp simd /* each entry its own sum: lanes change nothing */
        for (int64_t i = 0; i < size; i++)
            dweight[i] += block[i];
    }
    for (int64_t i = 0; dbias && i < n; i++) /* rows in order, as ref's column sums */
#pragma omp simd
        for (int64_t j = 0; j < out; j++)
            dbias[j] += dy[i * out + j];
}

void opt_matmul_accumulate(const float *x, const float *weight, int64_t n, int64_t in, int64_t out, float *y)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)out, (int)in, 1.0f, x, (int)in, weight,
                (int)out, 1.0f, y, (int)out);
}

void opt_matmul_backward(const float *x, const float *weight, const float *dy, int64_t n, int64_t in, int64_t out,
                         float *dx, float *dweight)
{
    if (dx) /* dx [n][in] += dy [n][out] W^T, W [in][out] */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)in, (int)out, 1.0f, dy, (int)out, weight,
                    (int)out, 1.0f, dx, (int)in);
    if (dweight) /* dW [in][out] += x^T dy */
        blocked_gram_accumulate(x, in, dy, out, n, dweight);
}

/* ---- graph propagation ----------------------------------------------------------------- */

void opt_propagate_forward(const propagation *p, const float *x, int64_t width, float *y)
{
    const int64_t n = p->graph->num_nodes;
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t v = 0; v < n; v++)
        ref_propagate_row(p, x, width, v, y + v * width);
}

void opt_propagate_backward(const propagation *p, const float *dy, int64_t width, float *dx)
{
    const csr *g = p->graph;
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t u = 0; u < g->num_nodes; u++) {
        float *target = dx + u * width;
        /* ref's scatter visits destinations v in increasing order and, at v = u, adds the
         * diagonal term before the edges of row u: insert it at the same place. */
        int diagonal_done = 0;
        for (int64_t entry = p->transpose_offsets[u]; entry < p->transpose_offsets[u + 1]; entry++) {
            int32_t v = p->transpose_destination[entry];
            if (!diagonal_done && v >= u) {
                for (int64_t j = 0; j < width; j++)
                    target[j] += p->self_coefficient[u] * dy[u * width + j];
                diagonal_done = 1;
            }
            const float coefficient = p->edge_coefficient[p->transpose_edge[entry]];
            for (int64_t j = 0; j < width; j++)
                target[j] += coefficient * dy[(int64_t)v * width + j];
        }
        if (!diagonal_done)
            for (int64_t j = 0; j < width; j++)
                target[j] += p->self_coefficient[u] * dy[u * width + j];
    }
}

/* ---- recurrent cells ------------------------------------------------------------------- */

void opt_gru_cell_forward(const float *x, const float *h, const float *weight_ih, const float *weight_hh,
                          const float *bias_ih, const float *bias_hh, int64_t n, int64_t in, int64_t hidden,
                          float *h_out, float *cache)
{
    const int64_t H = hidden;
    float *input = thread_scratch((size_t)(2 * n * 3 * H)); /* [n][3 H] of each map, kept for the run */
    if (!input) { /* too small to fail in practice; fall back to the reference */
        ref_gru_cell_forward(x, h, weight_ih, weight_hh, bias_ih, bias_hh, n, in, hidden, h_out, cache);
        return;
    }
    float *recurrent = input + n * 3 * H;
    opt_linear_forward(x, weight_ih, bias_ih, n, in, 3 * H, input);
    opt_linear_forward(h, weight_hh, bias_hh, n, H, 3 * H, recurrent);
#pragma omp parallel for
    for (int64_t row = 0; row < n; row++) {
        const float *a = input + row * 3 * H, *b = recurrent + row * 3 * H, *hr = h + row * H;
        /* simd: each unit is its own branch-free expression (ref/nn/activation.h), so lanes
         * compute ref's bits; without it -O2 leaves the exponentials scalar (29% of a TGN epoch) */
#pragma omp simd
        for (int64_t j = 0; j < H; j++)
            h_out[row * H + j] = gru_unit_forward(a[j], a[H + j], a[2 * H + j], b[j], b[H + j], b[2 * H + j], &hr[j], H,
                                                  cache + row * 4 * H + j);
    }
}

void opt_gru_cell_backward(const float *x, const float *h, const float *weight_ih, const float *weight_hh,
                           const float *cache, const float *dh_out, int64_t n, int64_t in, int64_t hidden,
                           float *dpreactivation, float *dx, float *dh, float *dweight_ih, float *dweight_hh,
                           float *dbias_ih, float *dbias_hh)
{
    const int64_t H = hidden;
    float *d_input = dpreactivation, *d_recurrent = dpreactivation + n * 3 * H;
    /* The gradients of the six pre-activations, row by row (the same formulas as ref). */
#pragma omp parallel for
    for (int64_t row = 0; row < n; row++)
#pragma omp simd
        for (int64_t j = 0; j < H; j++)
            gru_unit_backward(dh_out[row * H + j], h[row * H + j], cache + row * 4 * H + j, H,
                              d_input + row * 3 * H + j, d_recurrent + row * 3 * H + j, dh ? &dh[row * H + j] : NULL);
    opt_linear_backward(x, weight_ih, d_input, n, in, 3 * H, dx, dweight_ih, dbias_ih);
    opt_linear_backward(h, weight_hh, d_recurrent, n, H, 3 * H, dh, dweight_hh, dbias_hh);
}

/* Rows are independent in the LSTM's pointwise part: threads take rows, each unit is ref's
 * arithmetic (ref/nn/recurrent_gates.h), so the results are ref's bit for bit. */
void opt_lstm_pointwise_forward(const float *preactivation, const float *c, int64_t n, int64_t hidden, float *c_out,
                                float *h_out, float *gates)
{
    const int64_t H = hidden;
#pragma omp parallel for
    for (int64_t row = 0; row < n; row++) {
        const float *a = preactivation + row * 4 * H;
        for (int64_t j = 0; j < H; j++) {
            const int64_t k = row * H + j;
            h_out[k] = lstm_unit_forward(a[j], a[H + j], a[2 * H + j], a[3 * H + j], c[k], H, gates + row * 4 * H + j,
                                         &c_out[k]);
        }
    }
}

void opt_lstm_pointwise_backward(const float *gates, const float *c, const float *c_out, const float *dh_out,
                                 const float *dc_out, int64_t n, int64_t hidden, float *dpreactivation, float *dc)
{
    const int64_t H = hidden;
#pragma omp parallel for
    for (int64_t row = 0; row < n; row++)
        for (int64_t j = 0; j < H; j++) {
            const int64_t k = row * H + j;
            lstm_unit_backward(dh_out[k], dc_out ? dc_out[k] : 0.0f, c[k], c_out[k], gates + row * 4 * H + j, H,
                               dpreactivation + row * 4 * H + j, dc ? &dc[k] : NULL);
        }
}

/* ---- elementwise work, the loss and Adam -------------------------------------------------- */

/* Below this many elements a loop runs in the calling thread: waking the team costs more than
 * the loop (microseconds against nanoseconds per element). A plain branch, not OpenMP's if
 * clause: a parallel region with if(0) still builds a team of one, which cost 5-7 microseconds a
 * call (the activations of small graphs ran 5 times slower than ref's). */
#define PARALLEL_MIN 16384

/* for (i = 0; i < count; i++) body, across threads when count >= PARALLEL_MIN. */
#define ELEMENTWISE(count, body)                                                                                       \
    do {                                                                                                               \
        const int64_t count_ = (count);                                                                                \
        if (count_ < PARALLEL_MIN) {                                                                                   \
            for (int64_t i = 0; i < count_; i++)                                                                       \
                body;                                                                                                  \
        } else {                                                                                                       \
            _Pragma("omp parallel for") for (int64_t i = 0; i < count_; i++) body;                                    \
        }                                                                                                              \
    } while (0)

/* ELEMENTWISE with each thread's share vectorized: for the activations, whose branch-free
 * functions (ref/nn/activation.h) gcc -O2 vectorizes only under `omp simd`. */
#define ELEMENTWISE_SIMD(count, body)                                                                                  \
    do {                                                                                                               \
        const int64_t count_ = (count);                                                                                \
        if (count_ < PARALLEL_MIN) {                                                                                   \
            _Pragma("omp simd") for (int64_t i = 0; i < count_; i++) body;                                             \
        } else {                                                                                                       \
            _Pragma("omp parallel for simd") for (int64_t i = 0; i < count_; i++) body;                               \
        }                                                                                                              \
    } while (0)

/* Each element is ref's expression on the same operands (the project's own tf_sigmoidf() and
 * tf_tanhf(), ref/nn/activation.h, which every lane computes with the same IEEE operations), split
 * across threads and vectorized: bitwise equal. */
void opt_sigmoid_forward(const float *x, int64_t count, float *y)
{
    ELEMENTWISE_SIMD(count, y[i] = tf_sigmoidf(x[i]));
}

void opt_sigmoid_backward(const float *y, const float *dy, int64_t count, float *dx)
{
    ELEMENTWISE_SIMD(count, dx[i] += dy[i] * y[i] * (1.0f - y[i]));
}

void opt_tanh_forward(const float *x, int64_t count, float *y)
{
    ELEMENTWISE_SIMD(count, y[i] = tf_tanhf(x[i]));
}

void opt_tanh_backward(const float *y, const float *dy, int64_t count, float *dx)
{
    ELEMENTWISE_SIMD(count, dx[i] += dy[i] * (1.0f - y[i] * y[i]));
}

void opt_relu_forward(const float *x, int64_t count, float *y)
{
    ELEMENTWISE(count, y[i] = x[i] > 0.0f ? x[i] : 0.0f);
}

void opt_relu_backward(const float *y, const float *dy, int64_t count, float *dx)
{
    /* not dx += (y > 0 ? dy : 0): -0.0f + 0.0f is +0.0f, one bit from ref */
    ELEMENTWISE(count, if (y[i] > 0.0f) dx[i] += dy[i]);
}

void opt_add_bias(float *y, const float *bias, int64_t n, int64_t width)
{
    ELEMENTWISE(n, for (int64_t j = 0; j < width; j++) y[i * width + j] += bias[j]);
}

/* The same double sums as ref, each column's rows added in increasing order, but read row by
 * row (ref walks each column down with a stride of `width`): bitwise equal. */
void opt_add_bias_backward(const float *dy, int64_t n, int64_t width, float *dbias) { column_sums(dy, n, width, dbias); }

/* The gradient of every element is independent (threads split the rows); the loss is ref's own
 * double sum (ref_mse_loss_over() without a gradient), so it is ref's to the last bit. */
double opt_mse_loss(const float *prediction, const float *target, const uint8_t *mask, int64_t n, int64_t width,
                    float scale, float *dprediction)
{
    int64_t rows = 0;
    for (int64_t i = 0; i < n; i++)
        rows += !mask || mask[i];
    if (dprediction && rows > 0) {
        const double count = (double)rows * (double)width;
        ELEMENTWISE(n * width, dprediction[i] = !mask || mask[i / width]
                                                  ? (float)(scale * 2.0 * ((double)prediction[i] - (double)target[i]) / count)
                                                  : 0.0f);
    } else if (dprediction) { /* no counted row: ref writes the zero gradient */
        return ref_mse_loss_over(prediction, target, mask, n, width, rows, scale, dprediction);
    }
    return ref_mse_loss_over(prediction, target, mask, n, width, rows, scale, NULL);
}

/* Every element is adam_update_element() (ref/nn/adam.h), the function ref_adam_step() calls:
 * bitwise equal however the elements are split. */
void opt_adam_step(adam *optimizer, parameter_list *parameters)
{
    optimizer->step++;
    const adam_constants c = adam_step_constants(optimizer, optimizer->step);
    for (int64_t i = 0; i < parameters->count; i++) {
        parameter *p = &parameters->items[i];
        float *value = p->value.data, *gradient = p->grad.data;
        float *m = optimizer->moments.items[i].value.data, *v = optimizer->moments.items[i].grad.data;
        const int64_t size = p->value.size;
        ELEMENTWISE(size, adam_update_element(&c, &value[i], &m[i], &v[i], gradient[i]));
    }
}

/* ---- the event models' time encodings ------------------------------------------------------ */

/* cos and sin of a float argument, computed in double: reduced by 2 pi (split in two doubles) to
 * [-pi, pi], then their Taylor series to the 20th and 21st power, whose remainders there are below
 * 1e-10: within a float's rounding of the true value. Branch-free, so a loop of them vectorizes
 * under `omp simd`; glibc's cosf and sinf do not, and take their slow path for the arguments of
 * up to 1e6 radians these encodings get (w dt with dt in seconds): a quarter of an optimized
 * epoch went to them (perf: 23 % of TGN's on a Wikipedia prefix, 29 % of JODIE's). */
static inline double reduce_two_pi(double x)
{
    const double inverse = 0.15915494309189535, high = 6.283185307179586, low = 2.4492935982947064e-16;
    const double round = 6755399441055744.0; /* 1.5 2^52: adding it rounds to an integer */
    const double k = (x * inverse + round) - round;
    return (x - k * high) - k * low;
}

/* The series' coefficients, highest power first: (-1)^n / (2n)! for cos, (-1)^n / (2n + 1)! for sin,
 * n = 10 down to 0, summed by Horner's rule in r^2 (sin's then times r). */
static const double cos_terms[11] = {1.0 / 2432902008176640000.0, -1.0 / 6402373705728000.0, 1.0 / 20922789888000.0,
                                     -1.0 / 87178291200.0, 1.0 / 479001600.0, -1.0 / 3628800.0, 1.0 / 40320.0,
                                     -1.0 / 720.0, 1.0 / 24.0, -0.5, 1.0};
static const double sin_terms[11] = {1.0 / 51090942171709440000.0, -1.0 / 121645100408832000.0,
                                     1.0 / 355687428096000.0, -1.0 / 1307674368000.0, 1.0 / 6227020800.0,
                                     -1.0 / 39916800.0, 1.0 / 362880.0, -1.0 / 5040.0, 1.0 / 120.0, -1.0 / 6.0, 1.0};

static inline double series(const double *terms, double r2)
{
    double p = terms[0];
    for (int i = 1; i < 11; i++)
        p = p * r2 + terms[i];
    return p;
}

static inline double cos_reduced(double r) { return series(cos_terms, r * r); }

static inline double sin_reduced(double r) { return series(sin_terms, r * r) * r; }

void opt_time_encoding_forward(const float *delta, int64_t n, const float *weight, const float *bias, int64_t width,
                               int64_t stride, float *out)
{
    for (int64_t k = 0; k < n; k++) /* one thread: the event trainer runs one per rank */
#pragma omp simd
        for (int64_t i = 0; i < width; i++)
            out[k * stride + i] = (float)cos_reduced(reduce_two_pi((double)(delta[k] * weight[i] + bias[i])));
}

void opt_time_encoding_backward(const float *delta, int64_t n, const float *weight, const float *bias, int64_t width,
                                int64_t stride, const float *dout, double *dweight, double *dbias)
{
    double on_stack[2 * STACK_ENTRIES];
    if (width > STACK_ENTRIES) {
        ref_time_encoding_backward(delta, n, weight, bias, width, stride, dout, dweight, dbias);
        return;
    }
    double *sum_weight = on_stack, *sum_bias = on_stack + width;
    memset(on_stack, 0, 2 * (size_t)width * sizeof(double));
    /* Row by row, the columns in vector lanes: each column's sums still add the rows in order. */
    for (int64_t k = 0; k < n; k++)
#pragma omp simd
        for (int64_t i = 0; i < width; i++) {
            const double g = (double)dout[k * stride + i] *
                             -sin_reduced(reduce_two_pi((double)(delta[k] * weight[i] + bias[i])));
            sum_weight[i] += g * (double)delta[k];
            sum_bias[i] += g;
        }
    for (int64_t i = 0; i < width; i++) {
        dweight[i] += sum_weight[i];
        dbias[i] += sum_bias[i];
    }
}

const kernels opt_kernels = {
    "opt",
    propagation_add_transpose,
    opt_linear_forward,
    opt_linear_accumulate,
    opt_linear_backward,
    opt_matmul_accumulate,
    opt_matmul_backward,
    opt_propagate_forward,
    opt_propagate_backward,
    opt_gru_cell_forward,
    opt_gru_cell_backward,
    opt_lstm_pointwise_forward,
    opt_lstm_pointwise_backward,
    NULL, /* allocation failures fall back to the reference; nothing else can fail */
    opt_sigmoid_forward,
    opt_sigmoid_backward,
    opt_tanh_forward,
    opt_tanh_backward,
    opt_relu_forward,
    opt_relu_backward,
    opt_add_bias,
    opt_add_bias_backward,
    opt_mse_loss,
    opt_adam_step,
    ref_copy_rows, /* memcpy row by row: nothing to gain from a twin */
    opt_linear_backward_sums,
    opt_time_encoding_forward,
    opt_time_encoding_backward,
    opt_graph_attention_edges_forward,
    opt_graph_attention_edges_backward,
};
