/**
 * @file opt/kernels.h
 * Twins: the ref_ functions of the table ref_kernels (ref/nn/kernels.h), each named below.
 * @brief The optimized CPU twins of the reference kernels: OpenBLAS GEMM, OpenMP SpMM and its
 *        transpose, fused recurrent cells. Collected in #opt_kernels (ref/nn/kernels.h).
 *
 * Each function has the signature and the contract of its ref_ twin (named in its comment),
 * and verify/test_kernels.c compares them on real and generated data. What changes and why
 * the result is still equal:
 *
 *  - Dense products (opt_linear_*, opt_matmul_*) call cblas_sgemm. BLAS blocks and vectorizes
 *    the sums, so the order of additions differs from ref's loops: equal within the fp
 *    tolerance (relative 1e-5), not bitwise. Parameter gradients sum over every row; ref
 *    accumulates them in double, opt sums blocks of 32 rows with sgemm and the blocks in
 *    double.
 *  - Graph propagation (opt_propagate_*) splits rows across OpenMP threads but adds the same
 *    terms in the same order as ref: **bitwise equal**. The backward gathers over a transpose
 *    (propagation_add_transpose(), ref/nn/propagate.h) instead of scattering, ordered so each sum is
 *    formed exactly as ref's scatter forms it.
 *  - The LSTM pointwise part is ref's arithmetic (ref/nn/recurrent_gates.h) split across threads:
 *    bitwise equal. The GRU cell computes its six products with sgemm, then the gates pointwise
 *    with the same functions: fp.
 *  - Activations, bias, the loss's gradient and Adam are ref's per-element expressions split
 *    across threads (only for arrays of 16384 elements or more), and the sums (bias gradient,
 *    loss) are added in ref's order in double: **bitwise equal**.
 *
 * Threads: OpenBLAS runs single-threaded in the calling thread, because its spinning threads
 * and OpenMP's fought over the cores (a T-GCN epoch on twitter_tennis took 13 s with both at 2
 * threads on the 2-core development machine, 0.29 s with one thread). The trainer's threads
 * run whole windows each (opt/train.h), and nested regions are off, so inside a training step
 * every kernel runs on its calling thread; the OpenMP loops here split rows across threads
 * only when a kernel is called outside such a region (the benches, the tests).
 */
#ifndef TWOFOLD_OPT_KERNELS_H
#define TWOFOLD_OPT_KERNELS_H

#include <stdint.h>

#include "ref/nn/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The optimized CPU kernels, a drop-in #kernels table. */
extern const kernels opt_kernels;

/** Use @p threads OpenMP threads (>= 1), one level of parallel regions; OpenBLAS stays single-threaded. */
void opt_set_threads(int threads);

/**
 * Twin of ref_linear_forward(): y = x W^T + b with cblas_sgemm.
 * Shapes: x [n][in], weight [out][in], bias [out] (or NULL), y [n][out].
 */
void opt_linear_forward(const float *x, const float *weight, const float *bias, int64_t n, int64_t in, int64_t out,
                        float *y);

/**
 * Twin of ref_linear_accumulate(): y += x W^T with cblas_sgemm.
 * Shapes: x [n][in], weight [out][in], y [n][out].
 */
void opt_linear_accumulate(const float *x, const float *weight, int64_t n, int64_t in, int64_t out, float *y);

/**
 * Twin of ref_linear_backward(): dx += dy W by sgemm, dweight += dy^T x by blocked sgemm, dbias in
 * double.
 * Shapes: x [n][in], weight [out][in], dy [n][out]; dx [n][in], dweight [out][in], dbias [out] (any
 * may be NULL).
 */
void opt_linear_backward(const float *x, const float *weight, const float *dy, int64_t n, int64_t in, int64_t out,
                         float *dx, float *dweight, float *dbias);

/**
 * Twin of ref_linear_backward_sums(): dx += dy W by sgemm; dweight += dy^T x by sgemm over blocks
 * of 32 rows, each block added into the double sums; dbias in double, rows in order. Its
 * scratch is one buffer per thread, grown to the largest shape and kept (no allocation per call).
 * Shapes: x [n][in], weight [out][in], dy [n][out]; dx [n][in], dweight [out][in], dbias [out] (any
 * may be NULL).
 */
void opt_linear_backward_sums(const float *x, const float *weight, const float *dy, int64_t n, int64_t in,
                              int64_t out, float *dx, double *dweight, double *dbias);

/**
 * Twin of ref_time_encoding_forward(): cos(delta w + b) by a branch-free double-precision
 * reduction and series, vectorized (glibc's cosf is not, and slow for large arguments): within a
 * float's rounding of cosf's value, not bitwise. delta [n], weight, bias [width]; out rows of
 * @p stride floats, the first @p width written.
 */
void opt_time_encoding_forward(const float *delta, int64_t n, const float *weight, const float *bias, int64_t width,
                               int64_t stride, float *out);

/**
 * Twin of ref_time_encoding_backward(): the same sine series, the columns in vector lanes, each
 * column's double sums adding the rows in ref's order. dout rows of @p stride floats; dweight,
 * dbias [width] added into.
 */
void opt_time_encoding_backward(const float *delta, int64_t n, const float *weight, const float *bias, int64_t width,
                                int64_t stride, const float *dout, double *dweight, double *dbias);

/**
 * Twin of ref_matmul_accumulate(): y += x W with cblas_sgemm.
 * Shapes: x [n][in], weight [in][out], y [n][out].
 */
void opt_matmul_accumulate(const float *x, const float *weight, int64_t n, int64_t in, int64_t out, float *y);

/**
 * Twin of ref_matmul_backward(): dx += dy W^T, dweight += x^T dy with cblas_sgemm.
 * Shapes: x [n][in], weight [in][out], dy [n][out]; dx [n][in], dweight [in][out] (either may be
 * NULL).
 */
void opt_matmul_backward(const float *x, const float *weight, const float *dy, int64_t n, int64_t in, int64_t out,
                         float *dx, float *dweight);

/** Twin of ref_propagate_forward(): ref_propagate_row() for every row, the rows split across threads:
 *  the same sums, bitwise equal. x, y [num_nodes][width]. */
void opt_propagate_forward(const propagation *p, const float *x, int64_t width, float *y);

/**
 * Twin of ref_propagate_backward(): each dx row gathered from the transpose by one thread, its
 * terms added in ref's scatter order: bitwise equal. Needs propagation_add_transpose().
 * dy, dx [num_nodes][width].
 */
void opt_propagate_backward(const propagation *p, const float *dy, int64_t width, float *dx);

/**
 * Twin of ref_gru_cell_forward(): the six gate products by sgemm, the gates fused in one loop.
 * Shapes: x [n][in], h [n][hidden], weight_ih [3 hidden][in], weight_hh [3 hidden][hidden],
 * bias_ih, bias_hh [3 hidden]; h_out [n][hidden], cache [n][4 hidden].
 */
void opt_gru_cell_forward(const float *x, const float *h, const float *weight_ih, const float *weight_hh,
                          const float *bias_ih, const float *bias_hh, int64_t n, int64_t in, int64_t hidden,
                          float *h_out, float *cache);

/**
 * Twin of ref_gru_cell_backward(): gate gradients in one fused loop into @p dpreactivation
 * [2 n][3 hidden] (scratch), then four sgemm.
 * Shapes: x [n][in], h [n][hidden], weight_ih [3 hidden][in], weight_hh [3 hidden][hidden],
 * cache [n][4 hidden], dh_out [n][hidden]; dx [n][in], dh [n][hidden], dweight_ih [3 hidden][in],
 * dweight_hh [3 hidden][hidden], dbias_ih, dbias_hh [3 hidden].
 */
void opt_gru_cell_backward(const float *x, const float *h, const float *weight_ih, const float *weight_hh,
                           const float *cache, const float *dh_out, int64_t n, int64_t in, int64_t hidden,
                           float *dpreactivation, float *dx, float *dh, float *dweight_ih, float *dweight_hh,
                           float *dbias_ih, float *dbias_hh);

/**
 * Twin of ref_lstm_pointwise_forward(): rows across threads, bitwise equal.
 * Shapes: preactivation [n][4 hidden], c [n][hidden]; c_out, h_out [n][hidden],
 * gates [n][4 hidden].
 */
void opt_lstm_pointwise_forward(const float *preactivation, const float *c, int64_t n, int64_t hidden, float *c_out,
                                float *h_out, float *gates);

/**
 * Twin of ref_lstm_pointwise_backward(): rows across threads, bitwise equal.
 * Shapes: gates [n][4 hidden], c, c_out, dh_out, dc_out [n][hidden]; dpreactivation [n][4 hidden],
 * dc [n][hidden].
 */
void opt_lstm_pointwise_backward(const float *gates, const float *c, const float *c_out, const float *dh_out,
                                 const float *dc_out, int64_t n, int64_t hidden, float *dpreactivation, float *dc);

/** Twins of ref_sigmoid_forward() ... ref_relu_backward(): ref's expression per element, elements
 *  split across threads (large arrays only): bitwise equal. x, y, dy, dx [count]. */
void opt_sigmoid_forward(const float *x, int64_t count, float *y);
/** See opt_sigmoid_forward(). */
void opt_sigmoid_backward(const float *y, const float *dy, int64_t count, float *dx);
/** See opt_sigmoid_forward(). */
void opt_tanh_forward(const float *x, int64_t count, float *y);
/** See opt_sigmoid_forward(). */
void opt_tanh_backward(const float *y, const float *dy, int64_t count, float *dx);
/** See opt_sigmoid_forward(). */
void opt_relu_forward(const float *x, int64_t count, float *y);
/** See opt_sigmoid_forward(). */
void opt_relu_backward(const float *y, const float *dy, int64_t count, float *dx);

/** Twin of ref_add_bias(): rows across threads, bitwise equal. y [n][width], bias [width]. */
void opt_add_bias(float *y, const float *bias, int64_t n, int64_t width);

/** Twin of ref_add_bias_backward(): the same double column sums read row by row: bitwise equal.
 *  dy [n][width], dbias [width]. */
void opt_add_bias_backward(const float *dy, int64_t n, int64_t width, float *dbias);

/** Twin of ref_mse_loss(): the gradient across threads, the loss summed in ref's order: bitwise
 *  equal. prediction, target, dprediction [n][width], mask [n]. */
double opt_mse_loss(const float *prediction, const float *target, const uint8_t *mask, int64_t n, int64_t width,
                    float scale, float *dprediction);

/** Twin of ref_adam_step(): adam_update_element() (ref/nn/adam.h) on elements split across threads:
 *  bitwise equal. */
void opt_adam_step(adam *optimizer, parameter_list *parameters);

#ifdef __cplusplus
}
#endif

#endif
