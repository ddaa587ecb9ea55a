/**
 * @file ref/incremental.h
 * @brief First-layer neighbourhood aggregation y = A_t x_t of every snapshot (the reference:
 *        full recompute), and the snapshot delta that the incremental twin (opt/incremental.h,
 *        ReInc, Guan et al.) applies instead.
 *
 * The aggregation of snapshot t, for the message m_e = w_e x_u of each in-edge e = (u -> v):
 *  - sum:        y[v] = sum of m_e
 *  - mean:       y[v] = sum of m_e / (number of in-edges of v), 0 without in-edges
 *  - symmetric:  GCN: y[v] = sum of w_e x_u / sqrt(d_u d_v) over the edges and one self loop
 *                (propagate.h: PyTorch Geometric's gcn_norm with add_remaining_self_loops,
 *                d = weighted in-degree), the operator T-GCN's convolution uses
 *  - chebyshev:  y[v] = -sum of w_e x_u / sqrt(d_u d_v) over the edges that are not loops,
 *                d = weighted **out**-degree without loops: ChebConv's scaled Laplacian
 *                L^ = -D^-1/2 A D^-1/2 for lambda_max = 2 (propagate.h; 2 whenever no weight
 *                is negative), the T_1 term of GConvGRU's Chebyshev basis of X_t
 *  - max, min:   the largest (smallest) m_e per column, 0 without in-edges; -0 counts as +0
 * Layer 1 aggregates *before* its weight multiply, relu((A x) W), so y holds no parameter:
 * it can be cached across optimizer steps and updated from one snapshot to the next.
 *
 * ReInc's Eq. 2 ([ReInc] §3.2, chapters/references.md): Agg_t = Agg_{t-1} - F_{t-1} * G-_t + F_t * G+_t,
 * where G-_t holds the deleted edges and every out-edge of a vertex whose features changed,
 * taken at t-1, and G+_t the inserted edges and those out-edges taken at t. A #snapshot_delta
 * is that pair for one aggregator, each entry with the coefficient it carries, grouped by
 * destination row so the twin can update rows in parallel without atomics. The symmetric and
 * Chebyshev aggregators also treat a vertex whose degree changed as changed (its 1/sqrt(d_u)
 * scales every out-edge), which is why their deltas are larger (chapters/02-incremental.md).
 */
#ifndef TWOFOLD_REF_INCREMENTAL_H
#define TWOFOLD_REF_INCREMENTAL_H

#include <stdint.h>

#include "ref/data/csr.h"
#include "ref/core/error.h"
#include "ref/data/snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How the messages of a row are combined (the list above). */
typedef enum aggregator {
    AGGREGATOR_SUM,
    AGGREGATOR_MEAN,
    AGGREGATOR_SYMMETRIC,
    AGGREGATOR_CHEBYSHEV,
    AGGREGATOR_MAX,
    AGGREGATOR_MIN,
    AGGREGATOR_COUNT /**< number of aggregators */
} aggregator;

/** "sum", "mean", "symmetric", "chebyshev", "max", "min". */
const char *aggregator_name(aggregator kind);

/** Parse an aggregator name. @return 0, or TF_ERR_INPUT listing the names. */
int aggregator_parse(const char *name, aggregator *kind, tf_error *err);

/**
 * The reference: y = A x from scratch for graph @p g, one thread, the textbook order (sum,
 * mean, symmetric and chebyshev through propagate.h's operator; max and min row by row in CSR
 * order).
 * @param g      the snapshot's graph (rows = destinations)
 * @param x      [num_nodes][width] features
 * @param width  feature columns
 * @param kind   the aggregator
 * @param y      [num_nodes][width] out (overwritten; must not alias x)
 * @param err    out: no memory for the operator
 */
int ref_aggregate(const csr *g, const float *x, int64_t width, aggregator kind, float *y, tf_error *err);

/**
 * How far ours [num_nodes][width] is from reference [num_nodes][width] (aggregations of
 * x [num_nodes][width] over @p g by @p kind), measured as the error bound of a float sum: the
 * largest |ours - reference| / max(1, sum of |coefficient x_u| over the terms of that value). A sum
 * of large terms that cancel is only as accurate as its terms are large, so this, not the
 * error relative to the result, is what the fp tolerance (chapters/00-overview.md, "What equal
 * means") bounds for
 * the linear aggregators (for max and min the scale is the largest |message|; they are
 * checked bitwise anyway). @return the error, or a negative value when out of memory.
 */
double aggregation_error(const csr *g, const float *x, int64_t width, aggregator kind, const float *ours,
                         const float *reference);

/**
 * The structural difference of two graphs on the same vertices, as multisets of (source,
 * destination, weight bits): marks @p removed[e] = 1 for each edge of @p previous (CSR order)
 * with no partner in @p current, and @p added[e] = 1 for each edge of @p current without one
 * in @p previous. An edge whose weight changed is removed and added. @p removed [previous
 * edges] and @p added [current edges] are caller-owned. @return the number of marked edges.
 */
int64_t edge_difference(const csr *previous, const csr *current, uint8_t *removed, uint8_t *added);

/**
 * The change from one snapshot to the next, for one aggregator: ReInc's G-_t and G+_t with
 * their coefficients, grouped by destination row. Owns its arrays; free with
 * snapshot_delta_free(). Rows not listed keep their value exactly.
 *
 * For row rows[i], the entries minus[minus_offsets[i] .. minus_offsets[i+1]) are taken away
 * with the previous snapshot's features (value coefficient * x_{t-1}[source]) and the plus
 * entries added with the current one's. For sum, mean, symmetric and chebyshev the row's output
 * is then its accumulated sum times row_scale[i] (1; 1 / in-edges; 1 / sqrt(d_v)); for symmetric
 * the self loop is an entry with source = destination; chebyshev's coefficients carry its minus
 * sign (-w / sqrt(d_u)). For max and min the coefficient is the edge
 * weight w (m = w * x in float, exactly as the reference forms it).
 */
typedef struct snapshot_delta {
    aggregator kind;           /**< the aggregator the coefficients are for */
    int64_t previous_edges;    /**< |E_{t-1}| */
    int64_t current_edges;     /**< |E_t| */
    int64_t removed_edges;     /**< structural deletions */
    int64_t added_edges;       /**< structural insertions */
    int64_t changed_vertices;  /**< vertices whose feature row changed (bit for bit) */
    int64_t num_rows;          /**< rows whose output may change */
    int32_t *rows;             /**< [num_rows] those rows, ascending */
    double *row_scale;         /**< [num_rows] the row's output scale at t (the linear aggregators) */
    int64_t *minus_offsets;    /**< [num_rows + 1] */
    int32_t *minus_source;     /**< [minus entries] source vertex */
    double *minus_coefficient; /**< [minus entries] */
    int64_t *plus_offsets;     /**< [num_rows + 1] */
    int32_t *plus_source;      /**< [plus entries] */
    double *plus_coefficient;  /**< [plus entries] */
} snapshot_delta;

/**
 * Build the delta from @p previous to @p current (same vertices and feature width) for
 * @p kind. Cost O(edges + vertices x width): a preprocessing pass, done once per pair of
 * snapshots and reused every epoch, as ReInc's delta-mode loader does.
 * @return 0, or TF_ERR_INPUT for snapshots of different shapes, or no memory.
 */
int snapshot_delta_build(snapshot_delta *delta, const snapshot *previous, const snapshot *current,
                         aggregator kind, tf_error *err);

/**
 * The chebyshev aggregator's per-vertex scale 1 / sqrt(d_u), d_u = u's weighted out-degree
 * without loops (0 where d_u <= 0), summed in CSR order in double: the delta and the
 * incremental twin both call this, so their scales agree bit for bit. scale [num_nodes] out.
 */
void chebyshev_scales(const csr *g, double *scale);

/** Entries in G- plus G+: the work of applying the delta. */
int64_t snapshot_delta_entries(const snapshot_delta *delta);

/** Release @p delta's arrays and zero it. Safe on a zeroed delta. */
void snapshot_delta_free(snapshot_delta *delta);

#ifdef __cplusplus
}
#endif

#endif
