#include "opt/profile.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "ref/core/clock.h"
#include "ref/core/memory.h"
#include "ref/nn/parameters.h"

static const kernels *inner;      /* the table being profiled */
static profile_counters counters; /* what its calls did */

static const char *const family_names[PROFILE_FAMILIES] = {"dense", "sparse",    "cells", "activations",
                                                           "loss",  "adam", "copies", "communication"};

const char *profile_family_name(profile_family family) { return family_names[family]; }

profile_counters *profile_counters_now(void) { return &counters; }

void profile_add(profile_family family, int64_t calls, double seconds, double bytes)
{
    counters.calls[family] += calls;
    counters.seconds[family] += seconds;
    counters.bytes[family] += bytes;
}

/* One call of `family` that started at `started` and did `flops` and moved `bytes`. */
static void count(profile_family family, double started, double flops, double bytes)
{
    counters.calls[family]++;
    counters.seconds[family] += wall_seconds() - started;
    counters.flops[family] += flops;
    counters.bytes[family] += bytes;
}

/* `products` dense products of shape (n, in, out): 2 n in out FLOPs each, every operand read or
 * written once; the shape is recorded for the SGEMM peak. */
static void count_dense(double started, int products, int64_t n, int64_t in, int64_t out, double extra_flops)
{
    const double flops = 2.0 * (double)n * (double)in * (double)out * products;
    count(PROFILE_DENSE, started, flops + extra_flops,
          4.0 * products * ((double)n * (double)in + (double)in * (double)out + (double)n * (double)out));
    for (int s = 0; s < counters.shape_count; s++)
        if (counters.shapes[s].n == n && counters.shapes[s].in == in && counters.shapes[s].out == out) {
            counters.shapes[s].flops += flops;
            return;
        }
    if (counters.shape_count == PROFILE_MAX_SHAPES) {
        counters.unshaped_flops += flops;
        return;
    }
    counters.shapes[counters.shape_count++] = (profile_shape){n, in, out, flops};
}

/* ---- the wrapped kernels ------------------------------------------------------------------ */

static void linear_forward(const float *x, const float *weight, const float *bias, int64_t n, int64_t in, int64_t out,
                           float *y)
{
    const double started = wall_seconds();
    inner->linear_forward(x, weight, bias, n, in, out, y);
    count_dense(started, 1, n, in, out, 0);
}

static void linear_accumulate(const float *x, const float *weight, int64_t n, int64_t in, int64_t out, float *y)
{
    const double started = wall_seconds();
    inner->linear_accumulate(x, weight, n, in, out, y);
    count_dense(started, 1, n, in, out, 0);
}

static void linear_backward(const float *x, const float *weight, const float *dy, int64_t n, int64_t in, int64_t out,
                            float *dx, float *dweight, float *dbias)
{
    const double started = wall_seconds();
    inner->linear_backward(x, weight, dy, n, in, out, dx, dweight, dbias);
    count_dense(started, (dx != NULL) + (dweight != NULL), n, in, out, dbias ? (double)n * (double)out : 0);
}

static void linear_backward_sums(const float *x, const float *weight, const float *dy, int64_t n, int64_t in,
                                 int64_t out, float *dx, double *dweight, double *dbias)
{
    const double started = wall_seconds();
    inner->linear_backward_sums(x, weight, dy, n, in, out, dx, dweight, dbias);
    count_dense(started, (dx != NULL) + (dweight != NULL), n, in, out, dbias ? (double)n * (double)out : 0);
}

/* The time encodings count as activations: a cosine (backward: a sine) per value; the deltas and
 * the values once (backward: the gradients read, the weight and bias sums in double). */
static void time_encoding_forward(const float *delta, int64_t n, const float *weight, const float *bias, int64_t width,
                                  int64_t stride, float *out)
{
    const double started = wall_seconds();
    inner->time_encoding_forward(delta, n, weight, bias, width, stride, out);
    count(PROFILE_ACTIVATIONS, started, 0, 4.0 * (double)n * (1.0 + (double)width));
}

static void time_encoding_backward(const float *delta, int64_t n, const float *weight, const float *bias,
                                   int64_t width, int64_t stride, const float *dout, double *dweight, double *dbias)
{
    const double started = wall_seconds();
    inner->time_encoding_backward(delta, n, weight, bias, width, stride, dout, dweight, dbias);
    count(PROFILE_ACTIVATIONS, started, 0, 4.0 * (double)n * (1.0 + (double)width) + 32.0 * (double)width);
}

static void matmul_accumulate(const float *x, const float *weight, int64_t n, int64_t in, int64_t out, float *y)
{
    const double started = wall_seconds();
    inner->matmul_accumulate(x, weight, n, in, out, y);
    count_dense(started, 1, n, in, out, 0);
}

static void matmul_backward(const float *x, const float *weight, const float *dy, int64_t n, int64_t in, int64_t out,
                            float *dx, float *dweight)
{
    const double started = wall_seconds();
    inner->matmul_backward(x, weight, dy, n, in, out, dx, dweight);
    count_dense(started, (dx != NULL) + (dweight != NULL), n, in, out, 0);
}

/* 2 (nnz + n) w FLOPs (every edge and the diagonal: a multiply and an add per column);
 * 8 nnz + 4 n + 8 n w bytes (each edge's index and coefficient, each diagonal coefficient, x and
 * y once). */
static void count_sparse(double started, const propagation *p, int64_t width)
{
    const double nnz = (double)p->graph->num_edges, n = (double)propagation_rows(p), w = (double)width;
    count(PROFILE_SPARSE, started, 2.0 * (nnz + n) * w, 8.0 * nnz + 4.0 * n + 8.0 * n * w);
}

static void propagate_forward(const propagation *p, const float *x, int64_t width, float *y)
{
    const double started = wall_seconds();
    inner->propagate_forward(p, x, width, y);
    count_sparse(started, p, width);
}

static void propagate_backward(const propagation *p, const float *dy, int64_t width, float *dx)
{
    const double started = wall_seconds();
    inner->propagate_backward(p, dy, width, dx);
    count_sparse(started, p, width);
}

/* GAT's edge work counts as sparse: per edge and head (the E stored edges and N self-loops) a
 * C-wide product forward (the aggregation), two backward (the score gradient and the scatter),
 * plus the scores' 4 N H C; bytes: each edge's index and alpha, p and o once. */
static void count_graph_attention(double started, const propagation *p, int64_t heads, int64_t channels, int passes)
{
    const double edges = (double)(p->graph->num_edges + p->graph->num_nodes), n = (double)p->graph->num_nodes;
    const double hc = (double)heads * (double)channels;
    count(PROFILE_SPARSE, started, passes * 2.0 * edges * hc + 4.0 * n * hc,
          8.0 * edges + 4.0 * edges * (double)heads + 8.0 * n * hc);
}

static void graph_attention_edges_forward(const propagation *p, const float *projected, const float *attention_source,
                                          const float *attention_target, int64_t heads, int64_t channels,
                                          float *score_source, float *score_target, float *alpha, float *out)
{
    const double started = wall_seconds();
    inner->graph_attention_edges_forward(p, projected, attention_source, attention_target, heads, channels,
                                         score_source, score_target, alpha, out);
    count_graph_attention(started, p, heads, channels, 1);
}

static void graph_attention_edges_backward(const propagation *p, const float *projected, const float *attention_source,
                                           const float *attention_target, const float *score_source,
                                           const float *score_target, const float *alpha, const float *dout,
                                           int64_t heads, int64_t channels, float *scratch, float *dprojected,
                                           float *dattention_source, float *dattention_target)
{
    const double started = wall_seconds();
    inner->graph_attention_edges_backward(p, projected, attention_source, attention_target, score_source,
                                          score_target, alpha, dout, heads, channels, scratch, dprojected,
                                          dattention_source, dattention_target);
    count_graph_attention(started, p, heads, channels, 2);
}

/* A GRU cell: its products with the input side (2 n in 3H FLOPs each) and with the hidden side
 * (2 n H 3H each): forward one of each; backward one per gradient asked (dx and dweight_ih on the
 * input side, dh and dweight_hh on the hidden side: the event models ask only dx, their weight
 * gradients go through linear_backward_sums); x, h, the weights, h_out and the cache [n][4H] once. */
static void count_gru(double started, int64_t n, int64_t in, int64_t hidden, int input_products,
                      int hidden_products)
{
    const double rows = (double)n, width = (double)in + (double)hidden, h = (double)hidden; /* (in + H) */
    count(PROFILE_CELLS, started, 6.0 * rows * h * (input_products * (double)in + hidden_products * h),
          4.0 * (rows * width + 3.0 * h * width + 5.0 * rows * h));
}

static void gru_cell_forward(const float *x, const float *h, const float *weight_ih, const float *weight_hh,
                             const float *bias_ih, const float *bias_hh, int64_t n, int64_t in, int64_t hidden,
                             float *h_out, float *cache)
{
    const double started = wall_seconds();
    inner->gru_cell_forward(x, h, weight_ih, weight_hh, bias_ih, bias_hh, n, in, hidden, h_out, cache);
    count_gru(started, n, in, hidden, 1, 1);
}

static void gru_cell_backward(const float *x, const float *h, const float *weight_ih, const float *weight_hh,
                              const float *cache, const float *dh_out, int64_t n, int64_t in, int64_t hidden,
                              float *dpreactivation, float *dx, float *dh, float *dweight_ih, float *dweight_hh,
                              float *dbias_ih, float *dbias_hh)
{
    const double started = wall_seconds();
    inner->gru_cell_backward(x, h, weight_ih, weight_hh, cache, dh_out, n, in, hidden, dpreactivation, dx, dh,
                             dweight_ih, dweight_hh, dbias_ih, dbias_hh);
    count_gru(started, n, in, hidden, (dx != NULL) + (dweight_ih != NULL), (dh != NULL) + (dweight_hh != NULL));
}

/* LSTM pointwise forward: reads the pre-activations [n][4H] and c, writes c_out, h_out and the
 * gates [n][4H]: 11 n H floats. */
static void lstm_pointwise_forward(const float *preactivation, const float *c, int64_t n, int64_t hidden, float *c_out,
                                   float *h_out, float *gates)
{
    const double started = wall_seconds();
    inner->lstm_pointwise_forward(preactivation, c, n, hidden, c_out, h_out, gates);
    count(PROFILE_CELLS, started, 0, 44.0 * (double)n * (double)hidden);
}

/* Backward: reads the gates [n][4H], c, c_out, dh_out, dc_out, writes dpreactivation [n][4H] and
 * dc, reading it first: 14 n H floats. */
static void lstm_pointwise_backward(const float *gates, const float *c, const float *c_out, const float *dh_out,
                                    const float *dc_out, int64_t n, int64_t hidden, float *dpreactivation, float *dc)
{
    const double started = wall_seconds();
    inner->lstm_pointwise_backward(gates, c, c_out, dh_out, dc_out, n, hidden, dpreactivation, dc);
    count(PROFILE_CELLS, started, 0, 56.0 * (double)n * (double)hidden);
}

/* Forward activations read x and write y (8 bytes an element); backwards read y, dy and dx and
 * write dx (16). */
#define ACTIVATION(name)                                                                                              \
    static void name##_forward(const float *x, int64_t count_, float *y)                                               \
    {                                                                                                                  \
        const double started = wall_seconds();                                                                         \
        inner->name##_forward(x, count_, y);                                                                           \
        count(PROFILE_ACTIVATIONS, started, 0, 8.0 * (double)count_);                                                  \
    }                                                                                                                  \
    static void name##_backward(const float *y, const float *dy, int64_t count_, float *dx)                            \
    {                                                                                                                  \
        const double started = wall_seconds();                                                                         \
        inner->name##_backward(y, dy, count_, dx);                                                                     \
        count(PROFILE_ACTIVATIONS, started, 0, 16.0 * (double)count_);                                                 \
    }
ACTIVATION(sigmoid)
ACTIVATION(tanh)
ACTIVATION(relu)

/* y += bias: y read and written, the bias read. */
static void add_bias(float *y, const float *bias, int64_t n, int64_t width)
{
    const double started = wall_seconds();
    inner->add_bias(y, bias, n, width);
    count(PROFILE_ACTIVATIONS, started, 0, 8.0 * (double)n * (double)width + 4.0 * (double)width);
}

/* Column sums of dy: dy read once. */
static void add_bias_backward(const float *dy, int64_t n, int64_t width, float *dbias)
{
    const double started = wall_seconds();
    inner->add_bias_backward(dy, n, width, dbias);
    count(PROFILE_ACTIVATIONS, started, 0, 4.0 * (double)n * (double)width);
}

/* Prediction and target read, the gradient written, a mask byte per row. */
static double mse_loss(const float *prediction, const float *target, const uint8_t *mask, int64_t n, int64_t width,
                       float scale, float *dprediction)
{
    const double started = wall_seconds();
    double loss = inner->mse_loss(prediction, target, mask, n, width, scale, dprediction);
    count(PROFILE_LOSS, started, 0, 12.0 * (double)n * (double)width + (double)n);
    return loss;
}

/* Each parameter element: value, gradient, m and v read, value, m and v written: 28 bytes. */
static void adam_step(adam *optimizer, parameter_list *parameters)
{
    const double started = wall_seconds();
    inner->adam_step(optimizer, parameters);
    count(PROFILE_ADAM, started, 0, 28.0 * (double)parameters_size(parameters));
}

/* Every float read once and written once. */
static void copy_rows(float *to, int64_t to_stride, const float *from, int64_t from_stride, int64_t rows, int64_t width)
{
    const double started = wall_seconds();
    inner->copy_rows(to, to_stride, from, from_stride, rows, width);
    count(PROFILE_COPIES, started, 0, 8.0 * (double)rows * (double)width);
}

static int prepare_propagation(propagation *p, tf_error *err)
{
    return inner->prepare_propagation ? inner->prepare_propagation(p, err) : TF_OK;
}

static int take_error(tf_error *err) { return inner->take_error ? inner->take_error(err) : TF_OK; }

static const kernels profiled = {
    "profile",
    prepare_propagation,
    linear_forward,
    linear_accumulate,
    linear_backward,
    matmul_accumulate,
    matmul_backward,
    propagate_forward,
    propagate_backward,
    gru_cell_forward,
    gru_cell_backward,
    lstm_pointwise_forward,
    lstm_pointwise_backward,
    take_error,
    sigmoid_forward,
    sigmoid_backward,
    tanh_forward,
    tanh_backward,
    relu_forward,
    relu_backward,
    add_bias,
    add_bias_backward,
    mse_loss,
    adam_step,
    copy_rows,
    linear_backward_sums,
    time_encoding_forward,
    time_encoding_backward,
    graph_attention_edges_forward,
    graph_attention_edges_backward,
};

const kernels *profile_wrap(const kernels *table)
{
    inner = table;
    memset(&counters, 0, sizeof counters);
    return &profiled;
}

/* ---- the peaks ------------------------------------------------------------------------------ */

/* Best seconds of one call of `run` over repeats: at least 3, until 20 ms have passed (at most
 * 200). The first call also warms caches and pages. */
#define BEST_OF(best, statement)                                                                                       \
    do {                                                                                                               \
        double spent_ = 0;                                                                                             \
        (best) = 1e300;                                                                                                \
        for (int r_ = 0; r_ < 200 && (r_ < 3 || spent_ < 0.02); r_++) {                                                \
            const double started_ = wall_seconds();                                                                    \
            statement;                                                                                                 \
            const double took_ = wall_seconds() - started_;                                                            \
            spent_ += took_;                                                                                           \
            if (took_ < (best))                                                                                        \
                (best) = took_;                                                                                        \
        }                                                                                                              \
    } while (0)

/* STREAM's arrays: 2^25 floats (128 MiB) each, four times a 32 MiB last-level cache. */
#define STREAM_FLOATS ((int64_t)1 << 25)

int profile_measure_peaks(const profile_counters *c, profile_peaks *peaks, tf_error *err)
{
    memset(peaks, 0, sizeof *peaks);
    openblas_set_num_threads(1); /* one core */
    /* SGEMM at each shape as the forward of a linear: y [n][out] = x [n][in] W^T, W [out][in]. */
    double shaped_flops = 0, shaped_seconds = 0;
    for (int s = 0; s < c->shape_count; s++) {
        const profile_shape *shape = &c->shapes[s];
        float *x = tf_alloc((size_t)(shape->n * shape->in), sizeof(float), "profile SGEMM", err);
        float *w = x ? tf_alloc((size_t)(shape->out * shape->in), sizeof(float), "profile SGEMM", err) : NULL;
        float *y = w ? tf_alloc((size_t)(shape->n * shape->out), sizeof(float), "profile SGEMM", err) : NULL;
        if (!y) {
            free(x);
            free(w);
            return TF_ERR_INPUT;
        }
        for (int64_t i = 0; i < shape->n * shape->in; i++)
            x[i] = (float)(i % 7) * 0.125f;
        for (int64_t i = 0; i < shape->out * shape->in; i++)
            w[i] = (float)(i % 5) * 0.25f;
        double best;
        BEST_OF(best, cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)shape->n, (int)shape->out,
                                  (int)shape->in, 1.0f, x, (int)shape->in, w, (int)shape->in, 0.0f, y,
                                  (int)shape->out));
        peaks->shape_seconds[s] = best;
        /* the run's FLOPs at this shape, at this shape's rate */
        shaped_flops += shape->flops;
        shaped_seconds += shape->flops / (2.0 * (double)shape->n * (double)shape->in * (double)shape->out) * best;
        free(x);
        free(w);
        free(y);
    }
    peaks->sgemm_rate = shaped_seconds > 0 ? shaped_flops / shaped_seconds : 0;
    /* STREAM copy b = a and triad a = b + s c, one core. */
    float *a = tf_alloc((size_t)STREAM_FLOATS, sizeof(float), "profile STREAM", err);
    float *b = a ? tf_alloc((size_t)STREAM_FLOATS, sizeof(float), "profile STREAM", err) : NULL;
    float *cc = b ? tf_alloc((size_t)STREAM_FLOATS, sizeof(float), "profile STREAM", err) : NULL;
    if (!cc) {
        free(a);
        free(b);
        return TF_ERR_INPUT;
    }
    for (int64_t i = 0; i < STREAM_FLOATS; i++) {
        a[i] = 1.0f;
        b[i] = 2.0f;
        cc[i] = 0.5f;
    }
    double copy, triad;
    BEST_OF(copy, for (int64_t i = 0; i < STREAM_FLOATS; i++) b[i] = a[i]);
    BEST_OF(triad, for (int64_t i = 0; i < STREAM_FLOATS; i++) a[i] = b[i] + 3.0f * cc[i]);
    volatile float sink = a[STREAM_FLOATS / 2] + b[STREAM_FLOATS - 1]; /* the stores are used: kept */
    (void)sink;
    peaks->copy_rate = 8.0 * (double)STREAM_FLOATS / copy;
    peaks->triad_rate = 12.0 * (double)STREAM_FLOATS / triad;
    free(a);
    free(b);
    free(cc);
    return TF_OK;
}

double profile_bound(const profile_counters *c, const profile_peaks *peaks, profile_family family)
{
    if (family == PROFILE_COMMUNICATION)
        return 0;
    const double bandwidth = peaks->copy_rate > peaks->triad_rate ? peaks->copy_rate : peaks->triad_rate;
    double compute = 0;
    if (family == PROFILE_DENSE) { /* each shape at its own SGEMM rate; the rest at the mix's */
        for (int s = 0; s < c->shape_count; s++)
            compute += c->shapes[s].flops /
                       (2.0 * (double)c->shapes[s].n * (double)c->shapes[s].in * (double)c->shapes[s].out) *
                       peaks->shape_seconds[s];
        double shaped = 0;
        for (int s = 0; s < c->shape_count; s++)
            shaped += c->shapes[s].flops;
        if (peaks->sgemm_rate > 0) /* dbias sums and shapes past the table */
            compute += (c->flops[family] - shaped) / peaks->sgemm_rate;
    } else if (peaks->sgemm_rate > 0) {
        compute = c->flops[family] / peaks->sgemm_rate;
    }
    const double memory = bandwidth > 0 ? c->bytes[family] / bandwidth : 0;
    return compute > memory ? compute : memory;
}

void profile_print(FILE *out, const profile_counters *c, const profile_peaks *peaks, double epoch_seconds,
                   int64_t epochs, const char *whose)
{
    fprintf(out, "\nprofile: %lld epoch(s), %.4f s in the epochs (%s counters)\n", (long long)epochs, epoch_seconds,
            whose);
    fprintf(out, "  %-14s %9s %9s %7s %10s %10s %9s %8s %9s %8s\n", "family", "calls", "seconds", "epoch%", "GFLOP",
            "GB", "GFLOP/s", "GB/s", "bound s", "x bound");
    double counted = 0, bound = 0;
    for (int f = 0; f < PROFILE_FAMILIES; f++) {
        const double s = c->seconds[f], b = profile_bound(c, peaks, (profile_family)f);
        char flop_rate[32] = "-", byte_rate[32] = "-", bound_text[32] = "-", over[32] = "-";
        if (s > 0 && c->flops[f] > 0)
            snprintf(flop_rate, sizeof flop_rate, "%.2f", c->flops[f] / s * 1e-9);
        if (s > 0 && c->bytes[f] > 0)
            snprintf(byte_rate, sizeof byte_rate, "%.2f", c->bytes[f] / s * 1e-9);
        if (f != PROFILE_COMMUNICATION)
            snprintf(bound_text, sizeof bound_text, "%.4f", b);
        if (f != PROFILE_COMMUNICATION && b > 0)
            snprintf(over, sizeof over, "%.2f", s / b);
        fprintf(out, "  %-14s %9lld %9.4f %6.1f%% %10.4f %10.4f %9s %8s %9s %8s\n", family_names[f],
                (long long)c->calls[f], s, epoch_seconds > 0 ? 100.0 * s / epoch_seconds : 0.0, c->flops[f] * 1e-9,
                c->bytes[f] * 1e-9, flop_rate, byte_rate, bound_text, over);
        counted += s;
        bound += b;
    }
    fprintf(out, "  %-14s %9s %9.4f %6.1f%%   (the models' inline loops, allocations, the trainer)\n",
            "other", "-", epoch_seconds - counted, epoch_seconds > 0 ? 100.0 * (epoch_seconds - counted) / epoch_seconds : 0.0);
    fprintf(out, "peaks measured now on one core: SGEMM %.2f GFLOP/s at the run's %d dense shape(s)%s; STREAM copy "
                 "%.2f GB/s, triad %.2f GB/s\n",
            peaks->sgemm_rate * 1e-9, c->shape_count,
            c->unshaped_flops > 0 ? " (more shapes at the same rate)" : "", peaks->copy_rate * 1e-9,
            peaks->triad_rate * 1e-9);
    fprintf(out, "roofline bound: sum over families of max(FLOP / peak, bytes / bandwidth) = %.4f s (%.4f s an "
                 "epoch); the epochs took %.4f s = %.2f x the bound\n",
            bound, epochs > 0 ? bound / (double)epochs : 0.0, epoch_seconds, bound > 0 ? epoch_seconds / bound : 0.0);
}
