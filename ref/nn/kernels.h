/**
 * @file ref/nn/kernels.h
 * @brief The compute kernels a model calls, as a table, so one model code runs on the
 *        reference kernels or on their optimized twins.
 *
 * The four snapshot models (model.h) never call a heavy kernel directly: they go through the
 * #kernels table of their model. #ref_kernels holds the textbook loops of layers.h,
 * propagate.h and recurrent.h; opt/kernels.h provides opt_kernels (BLAS, OpenMP) with the
 * same signatures and the same results (bitwise where the arithmetic order is kept, within
 * the fp tolerance where BLAS reorders sums). The model's math, and so the chapter's
 * equations, exist once.
 *
 * Every function has the contract of the ref_ function of the same name.
 *
 * Besides the products and cells, the table holds the cheap elementwise work the models and the
 * trainer do around them (activations, bias, the loss, the optimizer step, copies): each costs
 * little alone, but called as ref_ functions outside the table they ran single-threaded under
 * --impl opt and could not be counted by `twofold train --profile` (opt/profile.h), which wraps
 * this table.
 */
#ifndef TWOFOLD_REF_KERNELS_H
#define TWOFOLD_REF_KERNELS_H

#include <stdint.h>

#include "ref/nn/adam.h"
#include "ref/core/error.h"
#include "ref/nn/graph_attention.h"
#include "ref/nn/layers.h"
#include "ref/nn/propagate.h"
#include "ref/nn/time_encoding.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The kernels a model uses; see the ref_ function of each name for its contract. */
typedef struct kernels {
    const char *name; /**< "ref", "opt", ... for messages */
    /** Called once on every operator a model builds, before it is used: lets a twin add the
     *  structure its kernels need (the transpose, a device copy). NULL: nothing to add. */
    int (*prepare_propagation)(propagation *p, tf_error *err);
    /** See ref_linear_forward(). */
    void (*linear_forward)(const float *x, const float *weight, const float *bias, int64_t n, int64_t in, int64_t out,
                           float *y);
    /** See ref_linear_accumulate(). */
    void (*linear_accumulate)(const float *x, const float *weight, int64_t n, int64_t in, int64_t out, float *y);
    /** See ref_linear_backward(). */
    void (*linear_backward)(const float *x, const float *weight, const float *dy, int64_t n, int64_t in, int64_t out,
                            float *dx, float *dweight, float *dbias);
    /** See ref_matmul_accumulate(). */
    void (*matmul_accumulate)(const float *x, const float *weight, int64_t n, int64_t in, int64_t out, float *y);
    /** See ref_matmul_backward(). */
    void (*matmul_backward)(const float *x, const float *weight, const float *dy, int64_t n, int64_t in, int64_t out,
                            float *dx, float *dweight);
    /** See ref_propagate_forward(). */
    void (*propagate_forward)(const propagation *p, const float *x, int64_t width, float *y);
    /** See ref_propagate_backward(). */
    void (*propagate_backward)(const propagation *p, const float *dy, int64_t width, float *dx);
    /** See ref_gru_cell_forward(). */
    void (*gru_cell_forward)(const float *x, const float *h, const float *weight_ih, const float *weight_hh,
                             const float *bias_ih, const float *bias_hh, int64_t n, int64_t in, int64_t hidden,
                             float *h_out, float *cache);
    /** See ref_gru_cell_backward(). */
    void (*gru_cell_backward)(const float *x, const float *h, const float *weight_ih, const float *weight_hh,
                              const float *cache, const float *dh_out, int64_t n, int64_t in, int64_t hidden,
                              float *dpreactivation, float *dx, float *dh, float *dweight_ih, float *dweight_hh,
                              float *dbias_ih, float *dbias_hh);
    /** See ref_lstm_pointwise_forward(). */
    void (*lstm_pointwise_forward)(const float *preactivation, const float *c, int64_t n, int64_t hidden, float *c_out,
                                   float *h_out, float *gates);
    /** See ref_lstm_pointwise_backward(). */
    void (*lstm_pointwise_backward)(const float *gates, const float *c, const float *c_out, const float *dh_out,
                                    const float *dc_out, int64_t n, int64_t hidden, float *dpreactivation, float *dc);
    /** The first failure since the last call, then cleared (0 if none): a device's kernels can
     *  fail (out of memory, a lost GPU) though the functions above return nothing; the model
     *  asks after every forward and backward. NULL: these kernels cannot fail. */
    int (*take_error)(tf_error *err);
    /** See ref_sigmoid_forward(). */
    void (*sigmoid_forward)(const float *x, int64_t count, float *y);
    /** See ref_sigmoid_backward(). */
    void (*sigmoid_backward)(const float *y, const float *dy, int64_t count, float *dx);
    /** See ref_tanh_forward(). */
    void (*tanh_forward)(const float *x, int64_t count, float *y);
    /** See ref_tanh_backward(). */
    void (*tanh_backward)(const float *y, const float *dy, int64_t count, float *dx);
    /** See ref_relu_forward(). */
    void (*relu_forward)(const float *x, int64_t count, float *y);
    /** See ref_relu_backward(). */
    void (*relu_backward)(const float *y, const float *dy, int64_t count, float *dx);
    /** See ref_add_bias(). */
    void (*add_bias)(float *y, const float *bias, int64_t n, int64_t width);
    /** See ref_add_bias_backward(). */
    void (*add_bias_backward)(const float *dy, int64_t n, int64_t width, float *dbias);
    /** See ref_mse_loss(). */
    double (*mse_loss)(const float *prediction, const float *target, const uint8_t *mask, int64_t n, int64_t width,
                       float scale, float *dprediction);
    /** See ref_adam_step(). */
    void (*adam_step)(adam *optimizer, parameter_list *parameters);
    /** See ref_copy_rows(): the copies the models and trainers make (tape, gradient packing). */
    void (*copy_rows)(float *to, int64_t to_stride, const float *from, int64_t from_stride, int64_t rows,
                      int64_t width);
    /** See ref_linear_backward_sums(): the event models' products, whose parameter gradients stay
     *  in double until every process's rows are summed (ref/models/event_model.h). */
    void (*linear_backward_sums)(const float *x, const float *weight, const float *dy, int64_t n, int64_t in,
                                 int64_t out, float *dx, double *dweight, double *dbias);
    /** See ref_time_encoding_forward(): the event models' cos(w dt + b), a cosine per value. */
    void (*time_encoding_forward)(const float *delta, int64_t n, const float *weight, const float *bias,
                                  int64_t width, int64_t stride, float *out);
    /** See ref_time_encoding_backward(). */
    void (*time_encoding_backward)(const float *delta, int64_t n, const float *weight, const float *bias,
                                   int64_t width, int64_t stride, const float *dout, double *dweight, double *dbias);
    /** See ref_graph_attention_edges_forward(): GAT's scores, softmax and aggregation over the edges. */
    void (*graph_attention_edges_forward)(const propagation *p, const float *projected, const float *attention_source,
                                          const float *attention_target, int64_t heads, int64_t channels,
                                          float *score_source, float *score_target, float *alpha, float *out);
    /** See ref_graph_attention_edges_backward(). */
    void (*graph_attention_edges_backward)(const propagation *p, const float *projected,
                                           const float *attention_source, const float *attention_target,
                                           const float *score_source, const float *score_target, const float *alpha,
                                           const float *dout, int64_t heads, int64_t channels, float *scratch,
                                           float *dprojected, float *dattention_source, float *dattention_target);
} kernels;

/** The reference kernels: layers.h, propagate.h and recurrent.h. */
extern const kernels ref_kernels;

/** The last entries of #ref_kernels, sigmoid_forward to graph_attention_edges_backward (the elementwise
 *  work, the loss, Adam, the copies, the event models' double-sum backward and time encodings, and GAT's
 *  edge work), in the table's order:
 *  written once for the reference table and for a twin that keeps this work on the host
 *  (cuda/kernels.cu: the event models do not run on a device). */
#define REF_KERNELS_HOST_ENTRIES                                                                                      \
    ref_sigmoid_forward, ref_sigmoid_backward, ref_tanh_forward, ref_tanh_backward, ref_relu_forward,                \
        ref_relu_backward, ref_add_bias, ref_add_bias_backward, ref_mse_loss, ref_adam_step, ref_copy_rows,          \
        ref_linear_backward_sums, ref_time_encoding_forward, ref_time_encoding_backward,                             \
        ref_graph_attention_edges_forward, ref_graph_attention_edges_backward

#ifdef __cplusplus
}
#endif

#endif
