/**
 * @file ref/data/csr.h
 * @brief Weighted graph in compressed sparse row form, rows = destination vertices.
 *
 * Row v lists the in-edges of v: sources `col[row_ptr[v] .. row_ptr[v+1])` with weights
 * `weight[...]`. Messages flow source -> destination (PyTorch Geometric's convention), so
 * a GCN aggregation `out[v] = sum_u w_uv x[u]` is a row-wise gather, the natural SpMM.
 * Within a row, edges are sorted by source id (duplicates keep their input order), so the
 * same edge set always gives the same arrays: summation order, and thus rounding, is fixed.
 *
 * Vertex ids are int32 (up to 2,147,483,647 vertices); edge counts are int64.
 */
#ifndef TWOFOLD_REF_CSR_H
#define TWOFOLD_REF_CSR_H

#include <stdint.h>

#include "ref/core/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A directed weighted graph, in-edges grouped by destination. Owns its arrays. */
typedef struct csr {
    int64_t num_nodes;   /**< vertices 0 .. num_nodes-1 (at most INT32_MAX) */
    int64_t num_edges;   /**< number of stored edges (duplicates count) */
    int64_t *row_ptr;    /**< [num_nodes + 1] offsets into col/weight */
    int32_t *col;        /**< [num_edges] source vertex of each in-edge */
    float *weight;       /**< [num_edges] edge weight */
} csr;

/**
 * Build a CSR from an edge list (COO): edge e goes src[e] -> dst[e].
 * @param g          out: the graph; free it with csr_free()
 * @param num_nodes  vertices 0..num_nodes-1
 * @param num_edges  length of the edge arrays
 * @param src        [num_edges] source of each edge
 * @param dst        [num_edges] destination of each edge
 * @param weight     [num_edges] weights, or NULL for all ones
 * @param err        out: what went wrong
 * @return 0, or TF_ERR_INPUT when an endpoint is outside 0..num_nodes-1 (message names
 *         the edge index), when num_nodes exceeds INT32_MAX, or when it does not fit.
 * The caller keeps ownership of the input arrays.
 */
int csr_from_edges(csr *g, int64_t num_nodes, int64_t num_edges, const int32_t *src,
                   const int32_t *dst, const float *weight, tf_error *err);

/** Deep copy @p src into @p dst. */
int csr_copy(csr *dst, const csr *src, tf_error *err);

/** Release @p g's arrays and zero it. Safe on a zeroed csr. */
void csr_free(csr *g);

/** 1 if @p a and @p b hold the same vertices, edges and weights bit for bit, else 0. */
int csr_equal(const csr *a, const csr *b);

#ifdef __cplusplus
}
#endif

#endif
