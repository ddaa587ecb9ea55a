/**
 * @file ref/propagate.h
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

#include "ref/csr.h"
#include "ref/error.h"

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
} propagation;

/** Build the GCN operator of @p g for @p kind, with or without self loops. */
int ref_propagation_gcn(propagation *p, const csr *g, edge_normalization kind, int self_loops, tf_error *err);

/** Build the scaled Laplacian L^ of @p g, as PyTorch Geometric's ChebConv uses it. */
int ref_propagation_chebyshev(propagation *p, const csr *g, tf_error *err);

/** Release the coefficients and zero @p p. */
void ref_propagation_free(propagation *p);

/**
 * Add the transpose of @p p's graph: per source vertex, its out-edges ordered by destination
 * then CSR position, the order in which ref_propagate_backward()'s scatter adds into that
 * source's gradient, so a gathering backward can form the same sums. Idempotent.
 */
int propagation_add_transpose(propagation *p, tf_error *err);

/** y = P x for @p width feature columns: x, y [num_nodes][width] (y overwritten, not aliasing x). */
void ref_propagate_forward(const propagation *p, const float *x, int64_t width, float *y);

/** dx += P^T dy: the backward of ref_propagate_forward(). dy, dx [num_nodes][width]. */
void ref_propagate_backward(const propagation *p, const float *dy, int64_t width, float *dx);

#ifdef __cplusplus
}
#endif

#endif
