/**
 * @file ref/nn/recurrent.h
 * @brief Recurrent cells: the GRU cell and the LSTM cell, as PyTorch defines them.
 *
 * GRU (torch.nn.GRUCell / torch.nn.GRU; Cho et al., 2014), gate rows ordered r, z, n:
 *
 *     r  = sigmoid(x W_ir^T + b_ir + h W_hr^T + b_hr)
 *     z  = sigmoid(x W_iz^T + b_iz + h W_hz^T + b_hz)
 *     n  = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn))
 *     h' = (1 - z) * n + z * h
 *
 * with weight_ih [3H][in], weight_hh [3H][H], bias_ih [3H], bias_hh [3H] (torch's names).
 * Note r multiplies the hidden part *after* its linear map; T-GCN and GConvGRU instead apply
 * r before their graph convolution, so they compose their own gates (see ref/models/model_*.c).
 *
 * LSTM (torch.nn.LSTMCell; Hochreiter and Schmidhuber, 1997), gate blocks ordered i, f, g, o
 * in a [n][4H] array of pre-activations a:
 *
 *     i = sigmoid(a_i), f = sigmoid(a_f), g = tanh(a_g), o = sigmoid(a_o)
 *     c' = f * c + i * g,  h' = o * tanh(c')
 *
 * The pointwise part is its own function so GC-LSTM, whose pre-activations come from graph
 * convolutions, shares it with the plain cell.
 *
 * The optimized twins (opt/, cuda/) compute these pointwise equations with the functions of
 * ref/nn/recurrent_gates.h; the loops here deliberately do not, so that they stay an independent
 * oracle for the twins.
 *
 * Elman RNN (torch.nn.RNNCell with nonlinearity 'tanh'), JODIE's memory updater in TGL:
 *
 *     h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)
 *
 * with weight_ih [H][in], weight_hh [H][H], bias_ih [H], bias_hh [H].
 */
#ifndef TWOFOLD_REF_RECURRENT_H
#define TWOFOLD_REF_RECURRENT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Which recurrent cell runs one vertex's sequence (a time encoder, ref/fusion.h; the cell a model of
 * ref/models/model.h runs per vertex, #model_info::lane_cell).
 */
typedef enum time_encoder_kind {
    TIME_ENCODER_GRU,       /**< torch.nn.GRU: gate blocks r, z, n */
    TIME_ENCODER_LSTM,      /**< torch.nn.LSTM: gate blocks i, f, g, o */
    TIME_ENCODER_TGCN,      /**< T-GCN's GRU (ref_tgcn_cell_forward()): gate blocks z, r, h */
    TIME_ENCODER_PEEPHOLE,  /**< the LSTM with peepholes of GCRN (ref_lstm_peephole_forward()): i, f, g, o */
} time_encoder_kind;

/** Floats of GRU cache per row: r, z, n and the hidden part h W_hn^T + b_hn. */
#define GRU_CACHE_WIDTH(hidden) (4 * (hidden))

/**
 * GRU cell forward for @p n rows.
 * @param x          [n][in]
 * @param h          [n][hidden] previous state
 * @param weight_ih  [3 hidden][in]
 * @param weight_hh  [3 hidden][hidden]
 * @param bias_ih    [3 hidden]
 * @param bias_hh    [3 hidden]
 * @param n          rows
 * @param in         input width
 * @param hidden     state width
 * @param h_out      [n][hidden] new state (must not alias @p h)
 * @param cache      [n][GRU_CACHE_WIDTH(hidden)] saved for the backward
 */
void ref_gru_cell_forward(const float *x, const float *h, const float *weight_ih, const float *weight_hh,
                          const float *bias_ih, const float *bias_hh, int64_t n, int64_t in, int64_t hidden,
                          float *h_out, float *cache);

/**
 * GRU cell backward, given dh_out [n][hidden]. Adds into dx [n][in], dh [n][hidden] and the
 * four parameter gradients dweight_ih [3 hidden][in], dweight_hh [3 hidden][hidden], dbias_ih
 * and dbias_hh [3 hidden] (any may be NULL). x [n][in], h [n][hidden], weight_ih
 * [3 hidden][in], weight_hh [3 hidden][hidden] and cache [n][GRU_CACHE_WIDTH(hidden)] are the
 * forward's.
 * @p dpreactivation [2 n][3 hidden] is scratch (overwritten): the gate gradients of the input
 * part, then of the recurrent part. The parameter sums over rows are accumulated in double (as
 * ref_linear_backward(), which computes them from that scratch); dx and dh row by row in float.
 */
void ref_gru_cell_backward(const float *x, const float *h, const float *weight_ih, const float *weight_hh,
                           const float *cache, const float *dh_out, int64_t n, int64_t in, int64_t hidden,
                           float *dpreactivation, float *dx, float *dh, float *dweight_ih, float *dweight_hh,
                           float *dbias_ih, float *dbias_hh);

/**
 * T-GCN's GRU (PyTorch Geometric Temporal's TGCN cell after its graph convolutions), one row: each
 * gate g = z, r, h reads its own input block C_g of x = [C_z | C_r | C_h] (each @p block wide) and
 * the state through one linear map L_g of the concatenation, and R multiplies H **before** the
 * candidate's product (torch's GRU applies r after it):
 *
 *     Z = sigmoid([C_z | H] L_z^T + c_z),  R = sigmoid([C_r | H] L_r^T + c_r)
 *     H~ = tanh([C_h | H * R] L_h^T + c_h),  H' = Z * H + (1 - Z) * H~
 *
 * L_g is split into its input columns, @p weight_ih [3 hidden][block] (gate g's rows g H .. g H + H - 1),
 * and its state columns, @p weight_hh [3 hidden][hidden]; @p bias [3 hidden] holds c_z, c_r, c_h (one
 * bias per gate: a Linear has one). Each sum is the bias, then the input terms k = 0, 1, ..., then
 * the state terms, in one float accumulator (a Linear on the concatenation, in its column order).
 * @param x          [3 block] the row's input
 * @param h          [hidden] previous state
 * @param weight_ih  [3 hidden][block] L_z, L_r, L_h's input columns
 * @param weight_hh  [3 hidden][hidden] their state columns
 * @param bias       [3 hidden] c_z, c_r, c_h
 * @param block      the width of each gate's input block C_g
 * @param hidden     state width H
 * @param h_out      [hidden] new state (must not alias @p h)
 * @param cache      [GRU_CACHE_WIDTH(hidden)] gets Z, R, H~ and H * R for the backward
 */
void ref_tgcn_cell_forward(const float *x, const float *h, const float *weight_ih, const float *weight_hh,
                           const float *bias, int64_t block, int64_t hidden, float *h_out, float *cache);

/**
 * Backward of ref_tgcn_cell_forward() for its row, given dh_out [hidden]: adds into dx [3 block], dh
 * [hidden] and the gradients dweight_ih [3 hidden][block], dweight_hh [3 hidden][hidden], dbias
 * [3 hidden] (any may be NULL), each the row's own float terms. @p scratch [4 hidden]: the gates'
 * pre-activation gradients (z, r, h), then the gradient of H * R.
 */
void ref_tgcn_cell_backward(const float *x, const float *h, const float *weight_ih, const float *weight_hh,
                            const float *cache, const float *dh_out, int64_t block, int64_t hidden, float *scratch,
                            float *dx, float *dh, float *dweight_ih, float *dweight_hh, float *dbias);

/**
 * LSTM pointwise forward: from pre-activations @p preactivation [n][4 hidden] (i, f, g, o) and
 * the previous cell state @p c [n][hidden], the new c_out and h_out [n][hidden], and the
 * activated gates @p gates [n][4 hidden] (i, f, g, o after their nonlinearities) for backward.
 */
void ref_lstm_pointwise_forward(const float *preactivation, const float *c, int64_t n, int64_t hidden, float *c_out,
                                float *h_out, float *gates);

/**
 * LSTM pointwise backward from the forward's gates [n][4 hidden], c and c_out [n][hidden].
 * Given dh_out and dc_out [n][hidden] (dc_out: the gradient that reaches c' from later steps,
 * may be NULL), write dpreactivation [n][4 hidden] (overwritten) and add the gradient for the
 * previous cell state into dc [n][hidden] (may be NULL).
 */
void ref_lstm_pointwise_backward(const float *gates, const float *c, const float *c_out, const float *dh_out,
                                 const float *dc_out, int64_t n, int64_t hidden, float *dpreactivation, float *dc);

/** The three peephole weights of an LSTM with peepholes, each [hidden] (their gradients alike). */
typedef struct lstm_peepholes {
    const float *input;    /**< w_ci: the input gate reads c */
    const float *forget;   /**< w_cf: the forget gate reads c */
    const float *output;   /**< w_co: the output gate reads the new c' */
} lstm_peepholes;

/**
 * LSTM pointwise forward with peepholes (the LSTM of GCRN, Seo et al., and of PyTorch Geometric
 * Temporal's GConvLSTM): from the sums @p preactivation [n][4 hidden] (i, f, g, o, each without its
 * peephole term) and the previous cell @p c [n][hidden],
 *     i = sigmoid(a_i + w_ci c), f = sigmoid(a_f + w_cf c), g = tanh(a_g),
 *     c' = f c + i g,  o = sigmoid(a_o + w_co c'),  h' = o tanh(c');
 * writes c_out, h_out [n][hidden] and the activated gates [n][4 hidden] for the backward.
 */
void ref_lstm_peephole_forward(const float *preactivation, const lstm_peepholes *peepholes, const float *c, int64_t n,
                               int64_t hidden, float *c_out, float *h_out, float *gates);

/**
 * Backward of ref_lstm_peephole_forward() from its gates, c and c_out: given dh_out and dc_out
 * [n][hidden] (dc_out: what reaches c' from later steps, may be NULL), writes dpreactivation
 * [n][4 hidden] (overwritten) and adds into dc [n][hidden] (the previous cell's gradient) and into
 * the peepholes' gradients @p dpeepholes (each [hidden], written through its const-cast pointers).
 */
void ref_lstm_peephole_backward(const float *gates, const lstm_peepholes *peepholes, const float *c,
                                const float *c_out, const float *dh_out, const float *dc_out, int64_t n,
                                int64_t hidden, float *dpreactivation, float *dc, float *const dpeepholes[3]);

/**
 * LSTM cell forward (torch.nn.LSTMCell): a = x W_ih^T + b_ih + h W_hh^T + b_hh, then the
 * pointwise part. x [n][in]; h, c [n][hidden]; weight_ih [4H][in], weight_hh [4H][H], bias_ih
 * and bias_hh [4H]; h_out, c_out [n][hidden] out. preactivation [n][4H] and gates [n][4H] are
 * scratch kept for the backward.
 */
void ref_lstm_cell_forward(const float *x, const float *h, const float *c, const float *weight_ih,
                           const float *weight_hh, const float *bias_ih, const float *bias_hh, int64_t n, int64_t in,
                           int64_t hidden, float *h_out, float *c_out, float *preactivation, float *gates);

/**
 * LSTM cell backward from the forward's x [n][in], h and c [n][hidden], weight_ih [4H][in],
 * weight_hh [4H][H], c_out [n][hidden] and gates [n][4H], given dh_out and dc_out [n][hidden]
 * (dc_out may be NULL): adds into dx [n][in], dh and dc [n][hidden] and the four parameter
 * gradients dweight_ih [4H][in], dweight_hh [4H][H], dbias_ih and dbias_hh [4H] (any may be
 * NULL). dpreactivation [n][4H] is scratch.
 */
void ref_lstm_cell_backward(const float *x, const float *h, const float *c, const float *weight_ih,
                            const float *weight_hh, const float *c_out, const float *gates, const float *dh_out,
                            const float *dc_out, int64_t n, int64_t in, int64_t hidden, float *dpreactivation,
                            float *dx, float *dh, float *dc, float *dweight_ih, float *dweight_hh, float *dbias_ih,
                            float *dbias_hh);

/**
 * Elman RNN cell forward (torch.nn.RNNCell, tanh) for @p n rows.
 * @param x          [n][in]
 * @param h          [n][hidden] previous state
 * @param weight_ih  [hidden][in]
 * @param weight_hh  [hidden][hidden]
 * @param bias_ih    [hidden]
 * @param bias_hh    [hidden]
 * @param n          rows
 * @param in         input width
 * @param hidden     state width
 * @param h_out      [n][hidden] new state (must not alias @p h); the backward needs it
 */
void ref_rnn_cell_forward(const float *x, const float *h, const float *weight_ih, const float *weight_hh,
                          const float *bias_ih, const float *bias_hh, int64_t n, int64_t in, int64_t hidden,
                          float *h_out);

/**
 * Elman RNN cell backward from the forward's x [n][in], h and h_out [n][hidden], weight_ih
 * [hidden][in] and weight_hh [hidden][hidden], given dh_out [n][hidden]. dpreactivation
 * [n][hidden] is scratch (overwritten). Adds into dx [n][in], dh [n][hidden] and the four
 * parameter gradients dweight_ih [hidden][in], dweight_hh [hidden][hidden], dbias_ih and
 * dbias_hh [hidden] (any may be NULL; parameter sums over rows in double, as
 * ref_linear_backward()).
 */
void ref_rnn_cell_backward(const float *x, const float *h, const float *weight_ih, const float *weight_hh,
                           const float *h_out, const float *dh_out, int64_t n, int64_t in, int64_t hidden,
                           float *dpreactivation, float *dx, float *dh, float *dweight_ih, float *dweight_hh,
                           float *dbias_ih, float *dbias_hh);

#ifdef __cplusplus
}
#endif

#endif
