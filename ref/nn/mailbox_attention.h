/**
 * @file ref/nn/mailbox_attention.h
 * @brief APAN's memory updater: multi-head attention of a vertex's memory over the M mails of
 *        its mailbox, then a residual, LayerNorm, a linear layer and ReLU.
 *
 * For one vertex with memory s [d] and mailbox rows x_1 .. x_M, each x_i = [mail_i ||
 * phi(t - mail_ts_i)] [d_in] (the caller builds them with the model's time encoder, as TGN's
 * attention gets its phi from its caller), TGL's `TransformerMemoryUpdater` ([TGL], the form
 * of APAN's "attention over the mailbox", [APAN]; citations: chapters/references.md) computes
 *
 *     Q   = W_q s + b_q                                            [d]
 *     K_i = W_k x_i + b_k,   V_i = W_v x_i + b_v                   [d]
 *     alpha_i,h = softmax over the M mails of LeakyReLU_0.2(<Q_h, K_i,h>)   per head h
 *     r   = (sum_i alpha_i,h V_i,h, heads concatenated) + s        the residual
 *     s'  = ReLU(W_mlp LayerNorm(r) + b_mlp)
 *
 * Q_h is head h's slice of d / heads consecutive columns; no 1/sqrt(d) scaling (TGL has
 * none). Every one of the M slots takes part, an empty slot (a zero mail at mail_ts 0) too,
 * as in TGL. TGL's dropout (on alpha and on the output) is left out, as for TGN's attention
 * (attention.h): it would make the reference random.
 *
 * The memory s is data (it was read from the node memory, which carries no gradient), so the
 * backward gives gradients to the parameters and to the mailbox rows x (for the time encoder)
 * only.
 *
 * Parameter names (TGL's, under the prefix `memory_updater.`): `w_q.weight` [d][d], `w_q.bias`,
 * `w_k.weight` [d][d_in], `w_k.bias`, `w_v.weight` [d][d_in], `w_v.bias`, `layer_norm.weight`
 * [d], `layer_norm.bias`, `mlp.weight` [d][d], `mlp.bias`.
 */
#ifndef TWOFOLD_REF_MAILBOX_ATTENTION_H
#define TWOFOLD_REF_MAILBOX_ATTENTION_H

#include <stdint.h>

#include "ref/core/error.h"
#include "ref/nn/kernels.h"
#include "ref/nn/parameters.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The layer's widths and its parameters (they belong to a model's parameter_list; this points at them). */
typedef struct mailbox_attention {
    int64_t width;             /**< d: width of s, of Q, K, V and of the output */
    int64_t mail_width;        /**< d_in: width of a mailbox row, d_msg + d_t */
    int64_t mails;             /**< M: mails per mailbox */
    int64_t heads;             /**< heads, dividing d */
    parameter *query_weight;   /**< w_q.weight [d][d] */
    parameter *query_bias;     /**< w_q.bias [d] */
    parameter *key_weight;     /**< w_k.weight [d][d_in] */
    parameter *key_bias;       /**< w_k.bias [d] */
    parameter *value_weight;   /**< w_v.weight [d][d_in] */
    parameter *value_bias;     /**< w_v.bias [d] */
    parameter *norm_weight;    /**< layer_norm.weight [d] */
    parameter *norm_bias;      /**< layer_norm.bias [d] */
    parameter *mlp_weight;     /**< mlp.weight [d][d] */
    parameter *mlp_bias;       /**< mlp.bias [d] */
} mailbox_attention;

/** What the forward keeps for the backward. Owns its arrays; free with mailbox_attention_tape_free(). */
typedef struct mailbox_attention_tape {
    int64_t rows;               /**< N, vertices (rows) updated */
    const float *node;          /**< [N][d] the caller's s (not owned; must outlive the tape) */
    const float *mail_input;    /**< [N][M][d_in] the caller's mailbox rows (not owned; must outlive the tape) */
    float *query;               /**< [N][d] Q */
    float *key;                 /**< [N][M][d] K */
    float *value;               /**< [N][M][d] V */
    float *score;               /**< [N][M][heads] LeakyReLU(<Q_h, K_i,h>) */
    float *alpha;               /**< [N][M][heads] attention weights */
    float *normalized;          /**< [N][d] LayerNorm's x^ */
    float *inverse_std;         /**< [N] LayerNorm's 1 / sqrt(var + eps) */
    float *normed;              /**< [N][d] LayerNorm(r), the linear layer's input */
    float *activated;           /**< [N][d] s', kept for ReLU's backward */
} mailbox_attention_tape;

/**
 * Allocate a tape for @p rows rows (the forward then allocates nothing, so a caller can size
 * everything before it computes).
 * @return 0, or TF_ERR_INPUT (the tape is then empty)
 */
int mailbox_attention_tape_alloc(const mailbox_attention *a, int64_t rows, mailbox_attention_tape *tape,
                                 tf_error *err);

/**
 * Forward for the tape's rows.
 * @param k           the kernels its products run on (ref_kernels or a twin)
 * @param a           the layer
 * @param node        [N][d] s, each row's memory; kept by pointer
 * @param mail_input  [N][M][d_in] each row's mailbox rows [mail || phi(t - mail_ts)]; kept by pointer
 * @param tape        a tape from mailbox_attention_tape_alloc() for N rows: filled for the backward
 * @param out         [N][d] s'
 */
void ref_mailbox_attention_forward(const kernels *k, const mailbox_attention *a, const float *node,
                                   const float *mail_input, mailbox_attention_tape *tape, float *out);

/**
 * Backward, given dout [N][d]: adds into the parameters' double gradient sums (parameter.sums)
 * and into @p dmail_input [N][M][d_in] unless it is NULL.
 * @return 0, or TF_ERR_INPUT (no memory for scratch)
 */
int ref_mailbox_attention_backward(const kernels *k, const mailbox_attention *a, const mailbox_attention_tape *tape,
                                   const float *dout, float *dmail_input, tf_error *err);

/** Release a tape's arrays and zero it. Safe on a zeroed tape. */
void mailbox_attention_tape_free(mailbox_attention_tape *tape);

#ifdef __cplusplus
}
#endif

#endif
