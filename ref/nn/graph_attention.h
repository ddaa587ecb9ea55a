/**
 * @file ref/nn/graph_attention.h
 * @brief A graph attention layer (GAT, [GAT] in chapters/references.md) as PyTorch Geometric's
 *        `GATConv` computes it: attention over each vertex's in-neighbours and itself.
 *
 * For a snapshot with in-edges j -> i, input rows x_i [F], heads h = 1 .. H of C channels each:
 *
 *     p_i        = W x_i                                      [H][C]   (`lin.weight` [H*C][F], no bias)
 *     s_j,h      = <a_src,h, p_j,h>,   d_i,h = <a_dst,h, p_i,h>         (`att_src`, `att_dst` [1][H][C])
 *     e_ij,h     = LeakyReLU_0.2(s_j,h + d_i,h)
 *     alpha_ij,h = exp(e_ij,h) / sum over k in N(i) of exp(e_ik,h)
 *     o_i,h      = sum over j in N(i) of alpha_ij,h p_j,h
 *     y_i        = [o_i,1 || ... || o_i,H] + b   (concat, `bias` [H*C])
 *            or  (1/H) sum_h o_i,h + b           (mean,   `bias` [C])
 *
 * N(i) is i's in-neighbours with the self-loops rebuilt as GATConv does by default
 * (add_self_loops=True): every stored loop i -> i is removed, then exactly one i -> i is added,
 * so a vertex always attends to itself once and to each other in-edge once per stored copy
 * (duplicate edges count twice, as in PyG). Edge weights are ignored (GATConv without edge_dim).
 * The softmax subtracts each group's maximum first, as PyG's softmax does. Dropout on alpha is
 * left out (it would make the reference random).
 *
 * The layer's products (W x, and its backward) go through the model's #kernels table; the edge
 * work in between (scores, softmax, aggregation, and their backward) is one pair of kernels,
 * ref_graph_attention_edges_forward() and ref_graph_attention_edges_backward(), whose optimized
 * twin is opt/graph_attention.h.
 *
 * Edge arrays: alpha and the edge gradients have E + N rows, E = the graph's stored in-edges in
 * CSR order (a removed self-loop keeps its row, with alpha 0), then one row per vertex for its
 * added self-loop.
 *
 * **Over one rank's rows** (chapter 06's vertex split, an operator with a #propagation_halo): the
 * graph is square over owned + halo rows, only owned rows are targets, and x and y have the owned
 * rows. The layer fetches the halo's rows of **x** (F floats a row) through the halo and computes
 * W x for them itself, rather than fetching W x (H*C floats) from the owners: x is data, so no
 * gradient goes back (one transfer a snapshot, not two), the fetched rows do not change with the
 * parameters (what cache mode holds once is the same), and a halo row's share of dW, x_j^T dp_j,
 * is formed where its edges' gradients are, with no second product on the owner. The price is
 * W x computed again for every halo row. An owned target's row then adds the same terms in the
 * same order as on the whole graph. The input's gradient @p dx cannot be asked for then (it would
 * belong to other ranks' rows).
 */
#ifndef TWOFOLD_REF_GRAPH_ATTENTION_H
#define TWOFOLD_REF_GRAPH_ATTENTION_H

#include <stdint.h>

#include "ref/core/error.h"
#include "ref/core/workspace.h"
#include "ref/nn/parameters.h"
#include "ref/nn/propagate.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Slope of the LeakyReLU on the attention scores (GATConv's negative_slope default). */
#define GRAPH_ATTENTION_SLOPE 0.2f

struct kernels;

/**
 * The layer's shape and its parameters. The parameters belong to a model's parameter_list; this
 * struct only points at them (forward reads `value`, backward adds into `grad`).
 */
typedef struct graph_attention {
    int64_t in_width;             /**< F */
    int64_t channels;             /**< C, channels per head */
    int64_t heads;                /**< H */
    int concat;                   /**< 1: heads side by side (output H*C wide); 0: their mean (C wide) */
    parameter *attention_source;  /**< att_src [1][H][C] */
    parameter *attention_target;  /**< att_dst [1][H][C] */
    parameter *bias;              /**< bias [H*C] or [C] */
    parameter *weight;            /**< lin.weight [H*C][F] */
} graph_attention;

/** What the forward keeps for the backward; its arrays come from the caller's workspace. */
typedef struct graph_attention_tape {
    int64_t rows;          /**< N, the graph's rows (owned + halo over a rank's rows) */
    int64_t owned;         /**< rows of x and y: N, or the halo's owned rows */
    int64_t edges;         /**< E, the graph's stored in-edges */
    const float *input;    /**< [N][F] x (borrowed: must outlive the tape), with the halo's rows appended when
                                the operator has a halo (then from the workspace) */
    float *projected;      /**< [N][H*C] p = x W^T */
    float *score_source;   /**< [N][H] s */
    float *score_target;   /**< [N][H] d */
    float *alpha;          /**< [E + N][H] attention weights (see the file comment) */
    float *heads_output;   /**< [N][H*C] o, each head's aggregation (NULL with concat over a whole graph) */
} graph_attention_tape;

/** Output width: H*C with concat, C with mean. */
int64_t graph_attention_width(const graph_attention *a);

/**
 * Forward on the graph of @p p (only its structure is read; a twin's kernels may use the
 * transpose its prepare_propagation added). With a halo, the halo's rows of x are fetched first
 * (the file comment); the edge kernels always see the whole local graph (halo NULL).
 * @param k        the kernels its products and edge work run on
 * @param a        the layer
 * @param p        the graph, through its operator
 * @param x        [propagation_rows(p)][F] input rows (kept by pointer in the tape)
 * @param scratch  where the tape's arrays come from (released with the workspace's reset)
 * @param tape     out
 * @param out      [propagation_rows(p)][graph_attention_width(a)] y
 * @param err      out: no memory, a failed fetch
 * @return 0, or the error's code
 */
int ref_graph_attention_forward(const struct kernels *k, const graph_attention *a, const propagation *p, const float *x,
                                workspace *scratch, graph_attention_tape *tape, float *out, tf_error *err);

/**
 * Backward, given dout [propagation_rows(p)][graph_attention_width(a)]: adds into every
 * parameter's `grad` and into @p dx [N][F] (NULL: not wanted; must be NULL with a halo). Scratch
 * comes from @p scratch.
 * @return 0, or TF_ERR_INPUT (no memory, dx asked for over a halo)
 */
int ref_graph_attention_backward(const struct kernels *k, const graph_attention *a, const propagation *p,
                                 const graph_attention_tape *tape, const float *dout, float *dx, workspace *scratch,
                                 tf_error *err);

/**
 * The edge work of the forward: scores, softmax per target and head, aggregation.
 * @param p                 the graph (in-edges by destination row)
 * @param projected         [N][H*C] p
 * @param attention_source  [H][C] a_src
 * @param attention_target  [H][C] a_dst
 * @param heads             H
 * @param channels          C
 * @param score_source      [N][H] out: s
 * @param score_target      [N][H] out: d
 * @param alpha             [E + N][H] out
 * @param out               [N][H*C] out: o (overwritten)
 */
void ref_graph_attention_edges_forward(const propagation *p, const float *projected, const float *attention_source,
                                       const float *attention_target, int64_t heads, int64_t channels,
                                       float *score_source, float *score_target, float *alpha, float *out);

/**
 * Backward of ref_graph_attention_edges_forward(), given dout [N][H*C] = d loss / d o: adds
 * into dprojected [N][H*C], dattention_source and dattention_target [H][C] (their sums over
 * rows formed in double). @p scratch is [(E + 3N) * H] floats the caller owns (overwritten):
 * each edge's score gradient, then d loss / d s and d loss / d d.
 * Order of the additions into dprojected (what a twin must keep to stay bitwise equal): for
 * each target i in order, its stored in-edges in CSR order then its self-loop, each adds
 * alpha * dout_i into its source's row; then every row adds its own score terms.
 */
void ref_graph_attention_edges_backward(const propagation *p, const float *projected, const float *attention_source,
                                        const float *attention_target, const float *score_source,
                                        const float *score_target, const float *alpha, const float *dout,
                                        int64_t heads, int64_t channels, float *scratch, float *dprojected,
                                        float *dattention_source, float *dattention_target);

/* ---- one target's work, for a twin that splits targets across threads ---------------------- */

/** Row @p i of the scores: score_source[i][h] = <a_src,h, p_i,h>, score_target[i][h] = <a_dst,h, p_i,h>. */
void graph_attention_scores(const float *projected, const float *attention_source, const float *attention_target,
                            int64_t i, int64_t heads, int64_t channels, float *score_source, float *score_target);

/** Target @p i's softmax and aggregation, every head: its alpha slots [E + N][H] and out [N][H*C] row i. */
void graph_attention_row_forward(const csr *g, int64_t i, const float *projected, const float *score_source,
                                 const float *score_target, int64_t heads, int64_t channels, float *alpha, float *out);

/**
 * Target @p i's part of the backward through the softmax and the LeakyReLU: the score gradient of
 * each of its entries into edge_gradient [E + N][H] (alpha (dalpha - sum alpha dalpha) times the
 * LeakyReLU's slope, dalpha_ij = <dout_i,h, p_j,h>), and their sum over the row, d loss / d d_i,h,
 * into dtarget [N][H].
 */
void graph_attention_row_score_gradients(const csr *g, int64_t i, const float *projected, const float *score_source,
                                         const float *score_target, const float *alpha, const float *dout,
                                         int64_t heads, int64_t channels, float *edge_gradient, float *dtarget);

/**
 * The last step of the backward, once the score gradients dsource, dtarget [N][H] are summed:
 * every row of dprojected [N][H*C] adds dsource a_src + dtarget a_dst, and the attention vectors'
 * gradients [H][C] add sum over rows of dsource p and dtarget p (in double, rows in order).
 */
void graph_attention_own_terms(int64_t rows, const float *projected, const float *attention_source,
                               const float *attention_target, const float *dsource, const float *dtarget,
                               int64_t heads, int64_t channels, float *dprojected, float *dattention_source,
                               float *dattention_target);

#ifdef __cplusplus
}
#endif

#endif
