/**
 * @file ref/nn/attention.h
 * @brief TGN's embedding module: one layer of multi-head temporal attention over a
 *        vertex's most recent neighbours, then ReLU and LayerNorm.
 *
 * For a root vertex u queried at time t, with node input h_u, and each sampled neighbour event
 * (u, w, t_e) with neighbour input h_w and edge feature e ([TGAT] Eqs. 7-9 as TGL's
 * `TransfomerAttentionLayer` implements them, [TGL]; citations: chapters/references.md):
 *
 *     Q   = W_q [h_u || phi(0)] + b_q                              [d_out]
 *     K_w = W_k [h_w || e || phi(t - t_e)] + b_k                   [d_out]
 *     V_w = W_v [h_w || e || phi(t - t_e)] + b_v                   [d_out]
 *     alpha_w,h = softmax over u's neighbours of LeakyReLU_0.2(<Q_h, K_w,h>)   per head h
 *     agg_h     = sum_w alpha_w,h V_w,h                            (heads concatenated)
 *     z_u = LayerNorm(ReLU(W_o [agg || h_u] + b_o))
 *
 * Q_h is head h's slice of d_out / heads consecutive columns. There is **no 1/sqrt(d)
 * scaling** of the scores (TGL has none). A root without neighbours gets agg = 0. The time
 * encodings phi (the caller computes them with this layer's own time encoder, see
 * time_encoding.h) arrive as inputs, and their gradients leave as outputs, so the layer does one
 * thing. TGL's dropout (0.2 on the output, 0.2 on alpha for TGN) is left out: it would make the
 * reference random; see chapters/01b-event-models.md.
 *
 * Parameter names (TGL's, under the prefix `layers.l0h0.`): `w_q.weight` [d_out][d_h + d_t],
 * `w_q.bias`, `w_k.weight` [d_out][d_h + d_e + d_t], `w_k.bias`, `w_v.weight`, `w_v.bias`,
 * `w_out.weight` [d_out][d_out + d_h], `w_out.bias`, `layer_norm.weight`, `layer_norm.bias`.
 *
 * Neighbours are given as one flat list: root r's neighbours are entries
 * neighbour_offset[r] .. neighbour_offset[r + 1] - 1 (E = neighbour_offset[roots] in all).
 */
#ifndef TWOFOLD_REF_ATTENTION_H
#define TWOFOLD_REF_ATTENTION_H

#include <stdint.h>

#include "ref/core/error.h"
#include "ref/core/workspace.h"
#include "ref/nn/kernels.h"
#include "ref/nn/parameters.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Slope of the LeakyReLU applied to the attention scores (TGL: torch.nn.LeakyReLU(0.2)). */
#define ATTENTION_LEAKY_SLOPE 0.2f

/** LayerNorm's epsilon (torch default). */
#define ATTENTION_NORM_EPSILON 1e-5f

/**
 * The layer's widths and its parameters. The parameters belong to a model's parameter_list;
 * this struct only points at them (forward reads `value`, backward adds into `grad`).
 */
typedef struct temporal_attention {
    int64_t node_width;        /**< d_h: width of h_u and h_w (the memory width in TGN) */
    int64_t edge_width;        /**< d_e: edge feature width, 0 when there are none */
    int64_t time_width;        /**< d_t: width of the time encodings */
    int64_t out_width;         /**< d_out: output width, a multiple of heads */
    int64_t heads;             /**< number of heads (TGN: 2) */
    parameter *query_weight;   /**< w_q.weight [d_out][d_h + d_t] */
    parameter *query_bias;     /**< w_q.bias [d_out] */
    parameter *key_weight;     /**< w_k.weight [d_out][d_h + d_e + d_t] */
    parameter *key_bias;       /**< w_k.bias [d_out] */
    parameter *value_weight;   /**< w_v.weight [d_out][d_h + d_e + d_t] */
    parameter *value_bias;     /**< w_v.bias [d_out] */
    parameter *output_weight;  /**< w_out.weight [d_out][d_out + d_h] */
    parameter *output_bias;    /**< w_out.bias [d_out] */
    parameter *norm_weight;    /**< layer_norm.weight [d_out] */
    parameter *norm_bias;      /**< layer_norm.bias [d_out] */
} temporal_attention;

/** What the forward keeps for the backward. Its arrays are its own (free with attention_tape_free()),
 * or, when the forward was given a workspace, the workspace's (attention_tape_free() then leaves
 * them to the workspace's reset). */
typedef struct attention_tape {
    workspace *scratch;              /**< where its arrays and the backward's scratch come from, or NULL (not owned) */
    int64_t roots;                   /**< R */
    int64_t neighbours;               /**< E, all neighbour entries */
    const int64_t *neighbour_offset;  /**< [R + 1] the caller's offsets (not owned; must outlive the tape) */
    float *query_input;              /**< [R][d_h + d_t] [h_u || phi(0)] */
    float *key_input;                /**< [E][d_h + d_e + d_t] [h_w || e || phi(t - t_e)] */
    float *query;                    /**< [R][d_out] Q */
    float *key;                      /**< [E][d_out] K */
    float *value;                    /**< [E][d_out] V */
    float *score;                    /**< [E][heads] LeakyReLU(<Q_h, K_h>) */
    float *alpha;                    /**< [E][heads] attention weights */
    float *output_input;             /**< [R][d_out + d_h] [agg || h_u] */
    float *activated;                /**< [R][d_out] ReLU(W_o [agg || h_u] + b_o) */
    float *normalized;               /**< [R][d_out] LayerNorm's x^ */
    float *inverse_std;              /**< [R] LayerNorm's 1 / sqrt(var + eps) */
} attention_tape;

/**
 * Forward for @p roots roots.
 * @param k                the kernels its products run on (ref_kernels or a twin)
 * @param a                the layer
 * @param roots            R, number of roots
 * @param neighbour_offset  [R + 1] offsets into the neighbour arrays (neighbour_offset[0] = 0)
 * @param root_node        [R][d_h] h_u
 * @param root_time        [R][d_t] the roots' query time encodings, phi(0) in TGN
 * @param neighbour_node    [E][d_h] h_w
 * @param neighbour_edge    [E][d_e] edge features of the neighbour events (NULL when d_e = 0)
 * @param neighbour_time    [E][d_t] phi(t - t_e)
 * @param scratch          where the tape's arrays (and the backward's scratch) come from, zeroed:
 *                         a workspace the caller resets after the backward (one allocation per run
 *                         instead of a dozen per batch), or NULL for allocations of their own
 * @param tape             out: what the backward needs; free with attention_tape_free()
 * @param out              [R][d_out] z_u
 * @param err              out: no memory for the tape
 * @return 0, or TF_ERR_INPUT (the tape is then empty)
 */
int ref_temporal_attention_forward(const kernels *k, const temporal_attention *a, int64_t roots,
                                   const int64_t *neighbour_offset, const float *root_node, const float *root_time,
                                   const float *neighbour_node, const float *neighbour_edge,
                                   const float *neighbour_time, workspace *scratch, attention_tape *tape, float *out,
                                   tf_error *err);

/**
 * Backward, given dout [R][d_out]. Adds into the parameters' double gradient sums
 * (parameter.sums, ref/nn/parameters.h) and into the input
 * gradients below (each may be NULL; edge features are data and get none).
 * @param k               the kernels its products run on (the forward's)
 * @param a               the layer
 * @param tape            the forward's tape
 * @param dout            [R][d_out] gradient of the loss with respect to z
 * @param droot_node      [R][d_h] added into
 * @param droot_time      [R][d_t] added into
 * @param dneighbour_node  [E][d_h] added into
 * @param dneighbour_time  [E][d_t] added into
 * @param err             out: no memory for scratch
 * @return 0, or TF_ERR_INPUT
 */
int ref_temporal_attention_backward(const kernels *k, const temporal_attention *a, const attention_tape *tape,
                                    const float *dout, float *droot_node, float *droot_time, float *dneighbour_node,
                                    float *dneighbour_time, tf_error *err);

/** Release a tape's arrays (unless a workspace holds them) and zero it. Safe on a zeroed tape. */
void attention_tape_free(attention_tape *tape);

#ifdef __cplusplus
}
#endif

#endif
