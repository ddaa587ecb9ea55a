/**
 * @file ref/nn/propagate.h
 * @brief Graph propagation: y = P x for a sparse operator P built from one snapshot's graph,
 *        with P's coefficients fixed by that whole snapshot (GCN normalization, Chebyshev).
 *
 * A #propagation holds, for a CSR graph (rows = destinations), one coefficient per edge and
 * one per vertex for the diagonal, so
 *
 *     y[v] = self_coefficient[v] * x[v] + sum over in-edges e = (u -> v) of edge_coefficient[e] * x[u]
 *
 * and its backward is the transpose, dx[u] += edge_coefficient[e] * dy[v]. The coefficients
 * come from the **full snapshot's** degrees, never from a batch's: that is what makes a
 * partitioned or incremental twin give the same numbers (DynaHB's released code does the same:
 * [DynaHB], chapters/references.md).
 *
 * GCN (Kipf and Welling, 2017; PyTorch Geometric's gcn_norm), for an edge u -> v of weight w:
 *  - sum:        w
 *  - mean:       w / (number of in-edges of v)
 *  - symmetric:  w / sqrt(d_u d_v), d = weighted in-degree (a vertex with d = 0 gets 0)
 * With self loops, PyTorch Geometric's add_remaining_self_loops rule: each vertex gets exactly
 * one loop, of the weight of its (last) existing loop, else 1; existing loop edges are not
 * counted twice. Without, loop edges in the graph stay ordinary edges.
 *
 * Chebyshev (Defferrard et al., 2016; PyTorch Geometric's ChebConv with "sym"): the scaled
 * Laplacian L^ = 2 L / lambda_max - I with L = I - D^-1/2 A D^-1/2, where A is the graph
 * without its loops, D its weighted **out**-degrees (get_laplacian sums over edge sources),
 * and lambda_max = 2 * (largest entry of L), the library's default (2 for non-negative
 * weights, making the diagonal of L^ zero).
 */
#ifndef TWOFOLD_REF_PROPAGATE_H
#define TWOFOLD_REF_PROPAGATE_H

#include <stdint.h>

#include "ref/data/csr.h"
#include "ref/core/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How a GCN operator scales each edge weight (the coefficients of a #propagation). Not to be
 *  confused with ref/incremental.h's #aggregator, which also has max and min. */
typedef enum edge_normalization {
    EDGE_NORM_NONE,        /**< w: a plain sum of w x_u */
    EDGE_NORM_MEAN,        /**< w over the number of in-edges: a mean */
    EDGE_NORM_SYMMETRIC,   /**< GCN: w / sqrt(d_u d_v) */
} edge_normalization;

/**
 * The halo of an operator over one rank's share of a graph (chapter 06, opt/partition_exchange.h).
 * The operator's graph is square over owned + halo rows: rows 0 .. owned-1 are this rank's
 * vertices, the rows of x and y and the only destinations; the rows after them are other ranks'
 * vertices, read as sources only. Their values are fetched before every product and their gradients
 * given back after every backward. The ref_ and opt_ propagation kernels only ever see whole
 * operators (halo NULL): the partitioned kernels (opt/partition_exchange.h) hand them one. A graph
 * attention layer calls fetch itself, for its input's rows (ref/nn/graph_attention.h).
 */
typedef struct propagation_halo {
    int64_t owned; /**< rows of x and y */
    /** Fill @p halo_rows [graph rows - owned][width] with the halo's values of the quantity whose
     *  owned rows are @p x [owned][width]. */
    int (*fetch)(void *context, const float *x, int64_t width, float *halo_rows, tf_error *err);
    /** Hand @p halo_gradients [graph rows - owned][width] to the halo rows' owners, which add them
     *  into their @p dx [owned][width]; what other ranks hand this one is added into @p dx here. */
    int (*give_back)(void *context, const float *halo_gradients, int64_t width, float *dx, tf_error *err);
    void *context; /**< passed to fetch and give_back */
    /** 1: the operator's coefficients are those of its transpose, on the same graph and halo, and it
     *  is applied transposed: a product scatters and gives the halo's shares back, a backward
     *  fetches and gathers (DCRNN's backward walk in exchange mode, opt/partition_part.h). */
    int transposed;
} propagation_halo;

/** A sparse operator on one graph. Owns its coefficient arrays; the graph is borrowed. */
typedef struct propagation {
    const csr *graph;           /**< the snapshot's graph (not owned; must outlive this) */
    float *edge_coefficient;    /**< [num_edges] coefficient of each in-edge, CSR order */
    float *self_coefficient;    /**< [num_nodes] diagonal coefficient */
    /** The transpose, for a backward that gathers instead of scattering (built by
     *  propagation_add_transpose() for the optimized twins, NULL otherwise): the edges leaving
     *  vertex u are transpose_edge[transpose_offsets[u] .. transpose_offsets[u+1]), in CSR order. */
    int64_t *transpose_offsets;
    int64_t *transpose_edge;    /**< [num_edges] index of the edge in CSR order (see transpose_offsets) */
    int32_t *transpose_destination; /**< [num_edges] the destination (CSR row) of that edge */
    /** NULL for an operator over a whole graph (x, y have the graph's rows); an operator over one
     *  rank's rows in vertex-partitioned training sets it (borrowed). */
    const propagation_halo *halo;
} propagation;

/** The rows of x and y for @p p: the halo's owned rows, or every vertex of the graph. */
int64_t propagation_rows(const propagation *p);

/** Build the GCN operator of @p g for @p kind, with or without self loops. */
int ref_propagation_gcn(propagation *p, const csr *g, edge_normalization kind, int self_loops, tf_error *err);

/** Build the scaled Laplacian L^ of @p g, as PyTorch Geometric's ChebConv uses it. */
int ref_propagation_chebyshev(propagation *p, const csr *g, tf_error *err);

/** Which of DCRNN's random-walk operators ref_propagation_walk() builds. */
typedef enum walk_kind {
    /** The forward walk: y[v] = sum over in-edges (u -> v) of w / d_out(u) x_u, i.e. A^T D_O^-1 x, a
     *  walker at u steps along one of u's out-edges with probability w / d_out(u). */
    WALK_FORWARD,
    /** The operator D_I^-1 A^T, coefficient w / d_in(v) on the in-edge (u -> v) of v, whose
     *  **transpose** A D_I^-1 is the backward walk (a walker steps against an edge):
     *  ref_propagate_backward() applies it. */
    WALK_BACKWARD_TRANSPOSED,
} walk_kind;

/**
 * Build a random-walk operator of DCRNN's diffusion convolution (Li et al., 2018) on @p g: no self
 * coefficient (a loop in the graph is an ordinary edge), d_out and d_in the weighted out- and
 * in-degrees; an edge whose degree is 0 gets 0. As the authors' released code, the walks act on x as
 * (D_O^-1 A)^T and (D_I^-1 A^T)^T, A[u][v] the weight of u -> v (chapters/01a-snapshot-models.md).
 */
int ref_propagation_walk(propagation *p, const csr *g, walk_kind kind, tf_error *err);

/**
 * The transpose of @p p as an operator of its own, whose rows gather: @p reversed gets p's graph
 * with every edge turned round (row u lists the edges that leave u, by destination then CSR
 * position, weights kept) and @p q their coefficients (self coefficients p's). Row u of q x adds
 * its terms in the order in which ref_propagate_backward(p, x) scatters them into u, so the two
 * give the same bits where p's self coefficients are 0, as a random walk's are (a gather starts
 * from 0 x_u, the scatter adds it at u's turn), but for the sign of a row with no terms: 0 x_u is
 * -0 where x_u < 0, the scatter's +0 (verify/test_kernels.c counts them). DCRNN's backward walk
 * is the transpose of WALK_BACKWARD_TRANSPOSED taken so: a gather can be restricted to a part's
 * rows with its terms in the global order (opt/partition_part.h). @p reversed's arrays are the caller's, allocated to
 * p's sizes (row_ptr [N + 1], col and weight [E]: tf_alloc() or a model's scratch) and filled
 * here; @p q borrows it.
 */
int ref_propagation_transpose(propagation *q, csr *reversed, const propagation *p, tf_error *err);

/** Release the coefficients and zero @p p. */
void ref_propagation_free(propagation *p);

/**
 * Add the transpose of @p p's graph: per source vertex, its out-edges ordered by destination
 * then CSR position, the order in which ref_propagate_backward()'s scatter adds into that
 * source's gradient, so a gathering backward can form the same sums. Idempotent.
 */
int propagation_add_transpose(propagation *p, tf_error *err);

/** Row @p v of P x: out [width] = self_coefficient[v] x_v + the edge coefficients times x_u over
 *  v's in-edges, in edge order; x [num_nodes][width]. A row depends on no other, so a twin may
 *  run the rows on any threads and get these very sums. */
void ref_propagate_row(const propagation *p, const float *x, int64_t width, int64_t v, float *out);

/** y = P x for @p width feature columns: x, y [num_nodes][width] (y overwritten, not aliasing x). */
void ref_propagate_forward(const propagation *p, const float *x, int64_t width, float *y);

/** dx += P^T dy: the backward of ref_propagate_forward(). dy, dx [num_nodes][width]. */
void ref_propagate_backward(const propagation *p, const float *dy, int64_t width, float *dx);

#ifdef __cplusplus
}
#endif

#endif
