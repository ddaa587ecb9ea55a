/**
 * @file ref/nn/self_attention.h
 * @brief DySAT's temporal self-attention ([DySAT] in chapters/references.md): each vertex attends
 *        to its own counterparts in the earlier snapshots of the window, scaled dot-product, with
 *        position embeddings and a causal mask.
 *
 * For one vertex (a *lane*), its inputs z_t [W] at positions t = 0 .. T-1 of the window:
 *
 *     u_t    = z_t + p_{t - start_t}                        position added
 *     q_t    = u_t Wq,  k_t = u_t Wk,  v_t = u_t Wv        (`query`, `key`, `value` [W][W], used as u @ W)
 *     e_ts   = <q_t, k_s> / sqrt(W)                          for start_t <= s <= t only (the mask)
 *     beta_ts = exp(e_ts) / sum over start_t <= s' <= t of exp(e_ts')
 *     y_t    = sum over s of beta_ts v_s + z_t                residual: the input, without the position
 *
 * start_t is the first position of the sub-sequence position t belongs to: 0 everywhere for a model's
 * window (the plain causal mask, s <= t), or, where several sequences of different lifetimes share a
 * lane (DGC's fusion, chapters/03-fusion.md), the position where t's own sequence begins. The mask is
 * then block-diagonal and causal, and positions restart at 0 in every sub-sequence: each sequence
 * computes what it would alone. A masked score is never formed (a select, not a multiply by zero,
 * so no 0 * inf).
 *
 * p_j is the Transformer's fixed sinusoidal position, p_j[2i] = sin(j / 10000^(2i/W)) and
 * p_j[2i+1] = cos(j / 10000^(2i/W)) (computed in double, rounded once): DySAT learns a table of
 * position embeddings as long as its longest window, but a twofold window runs from one snapshot
 * to the whole split (--window 0), so the positions here need no length and no parameter
 * (chapters/01a-snapshot-models.md). DySAT's multiple heads and feed-forward layer are left out.
 *
 * The residual adds z_t, not u_t (DySAT's code adds its inputs with their positions). A fixed
 * sinusoid has |p_j|^2 = W / 2 and is the same for every vertex at position j: carried into y_t
 * it puts one shared vector of that size into every vertex's embedding, which no parameter can
 * remove (DySAT's learned table can shrink). Link prediction scores <y_t[u], y_t[v]>, so every
 * pair's logit gained W / 2 plus cross terms, and DySAT ranked the test pairs at chance
 * (chapters/01a-snapshot-models.md measures it). The positions still enter q, k and v.
 *
 * Rows are laid out [T][N][W], position-major, as the models' states: the three projections are each
 * one product of T N rows on the kernels (a BLAS twin's), and the per-lane attention in between is a
 * plain loop shared by every twin. Lanes are independent: a lane's outputs depend on its own rows only.
 */
#ifndef TWOFOLD_REF_SELF_ATTENTION_H
#define TWOFOLD_REF_SELF_ATTENTION_H

#include <stdint.h>

#include "ref/core/error.h"
#include "ref/core/workspace.h"
#include "ref/nn/parameters.h"

#ifdef __cplusplus
extern "C" {
#endif

struct kernels;

/** The layer: its width and its three projections (a model's parameters, pointed at, not owned). */
typedef struct self_attention {
    int64_t width;       /**< W */
    parameter *query;    /**< Wq [W][W] */
    parameter *key;      /**< Wk [W][W] */
    parameter *value;    /**< Wv [W][W] */
} self_attention;

/** What the forward keeps for the backward; its arrays come from the caller's workspace. */
typedef struct self_attention_tape {
    int64_t count;          /**< T, positions per lane */
    int64_t lanes;          /**< N */
    const int32_t *starts;  /**< [T][N] each position's sub-sequence start, or NULL (0: one sequence); borrowed */
    float *inputs;          /**< [T][N][W] u, positions added */
    float *query;           /**< [T][N][W] q */
    float *key;             /**< [T][N][W] k */
    float *value;           /**< [T][N][W] v */
    float *weights;         /**< [N][T][T] beta_ts (row t, columns start_t .. t; the rest unwritten) */
} self_attention_tape;

/** Position embedding p_j[i] of width @p width (see the file comment). */
float self_attention_position(int64_t position, int64_t i, int64_t width);

/**
 * Check @p starts [count][lanes]: every start lies in 0 .. t, and a lane's start either stays what it
 * was at t - 1 or begins a sub-sequence at t. NULL passes. @return 0, or TF_ERR_INPUT naming the first bad entry.
 */
int self_attention_check_starts(const int32_t *starts, int64_t count, int64_t lanes, tf_error *err);

/**
 * Forward over @p count positions of @p lanes lanes.
 * @param k        the kernels the three projections run on
 * @param a        the layer
 * @param count    T >= 1
 * @param lanes    N
 * @param z        [T][N][W] inputs
 * @param starts   [T][N] sub-sequence starts (see the file comment), or NULL; kept by pointer in the tape
 * @param scratch  where the tape's arrays come from
 * @param tape     out
 * @param out      [T][N][W] y
 * @param err      out: bad starts, no memory
 */
int ref_self_attention_forward(const struct kernels *k, const self_attention *a, int64_t count, int64_t lanes,
                                   const float *z, const int32_t *starts, workspace *scratch,
                                   self_attention_tape *tape, float *out, tf_error *err);

/**
 * Backward, given dout [T][N][W]: adds into the three parameters' `grad` and writes dz [T][N][W]
 * (the positions are constants: dz = du). Scratch comes from @p scratch. @return 0, or TF_ERR_INPUT (no memory).
 */
int ref_self_attention_backward(const struct kernels *k, const self_attention *a,
                                    const self_attention_tape *tape, const float *dout, float *dz,
                                    workspace *scratch, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
