/**
 * @file opt/partition_part.h
 * Twins: ref_propagation_gcn(), ref_propagation_walk() and more (ref/nn/propagate.h), on a rank's rows.
 * @brief One rank's share of a snapshot sequence in vertex-partitioned training (chapter 06): its
 *        rows, their data, and operators whose coefficients come from the whole graph.
 *
 * Its operators twin ref_propagation_chebyshev() and ref_propagation_transpose() too (DCRNN's
 * backward walk). Built in one process from the whole sequence and an owner array (no MPI here,
 * so a test can build every rank's part side by side). The part's rows start with the rank's own vertices
 * (`owned`, in increasing global id): the loss is taken over that prefix only.
 *
 *  - **exchange mode**: the rows are the owned vertices. Snapshot t's operator graph is square over
 *    the owned rows and t's *halo* H_r(t) = {u : owner[u] != r, u -> v in E_t, owner[v] = r},
 *    ordered by (owner, global id); only owned rows have in-edges. The halo rows' values are
 *    fetched from their owners before every product (opt/partition_exchange.h).
 *  - **cache mode** (DynaHB section 4.1): the rows are the owned vertices and their in-closure of
 *    the model's cache depth over the union of all snapshots (partition_cache_depth(), ref/partition.h),
 *    loaded once: each closure row keeps its in-edges from inside the closure. The owned rows'
 *    values are then exact without any exchange: a row at distance j from the owned ones is wrong
 *    only through in-edges cut at the closure's edge, at distance D + 1, and each product moves a
 *    wrong value one hop closer; a window reads at most D products in sequence (the depth table),
 *    so no wrong value reaches an owned row.
 *  - **DCRNN** walks the edges both ways: its forward walk is an in-edge operator like the others,
 *    its backward walk W_i the transpose of an in-edge operator (WALK_BACKWARD_TRANSPOSED), applied
 *    as an operator of the reversed graph whose row u gathers u's out-edges in the global order
 *    (ref_propagation_transpose()). In **cache mode** the part copies both, W_i's rows from the whole
 *    reversed graph as the others' from the whole graph, and the closure runs over in- and
 *    out-edges alike to the model's depth (partition_cache_depth()): every owned row adds the same
 *    terms in the same order as the whole graph's, on both walks, so its values are **bitwise**.
 *    In **exchange mode** W_i stays on the in-edge graph and its halo (`transposed_halos`): its
 *    product scatters each owned row's terms to the rows it reads, owned or halo, and the halo's
 *    give-back hands the halo rows' shares to their owners; its backward fetches the halo rows'
 *    gradients and gathers. Every edge u -> v sits in v's owner's part, so no out-edge halo is
 *    needed, but an owned row adds what other ranks give back after its own terms: fp, not bitwise.
 *  - **T-GCN (and WD-GCN) in cache mode** is DynaHB exactly: its only product is A^ X_t before the recurrence,
 *    so the rows are the owned vertices and the 1-hop in-neighbours' *features* are cached: the
 *    model's input source (#input_aggregations) serves A^ X_t of the owned rows from owned and
 *    cached rows, and no GRU (WD-GCN: LSTM) runs on a cached row.
 *
 * **Coefficients from the whole graph.** Each local operator copies, row by row, the global
 * operator's edges in the global CSR order (source ids mapped to local rows, edges from outside the
 * part dropped) and their coefficients: full-graph degrees, Chebyshev out-degrees and lambda_max.
 * Building a part's operator from its own graph would change every boundary row's normalization
 * (verify/test_partition_part.c counts the rows it spoils). With the order kept, an owned row of a
 * local product adds the same terms in the same order as the global row: **bitwise** the global
 * product when the halo values are exact.
 *
 * Ownership: the part owns everything it points to; the sequence is read only during create.
 */
#ifndef TWOFOLD_OPT_PARTITION_PART_H
#define TWOFOLD_OPT_PARTITION_PART_H

#include <stdint.h>

#include "ref/core/error.h"
#include "ref/models/model.h"
#include "ref/nn/propagate.h"
#include "ref/data/snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How a rank gets the rows its products read. */
typedef enum partition_mode {
    PARTITION_CACHE,     /**< DynaHB: cache the inputs of the receptive field once; no feature traffic */
    PARTITION_EXCHANGE,  /**< own rows only; every product fetches its halo rows from their owners */
} partition_mode;

/** "cache" or "exchange". */
const char *partition_mode_name(partition_mode m);

/** The operator of a model kind over every whole snapshot, built once (their coefficients are the
 *  ones every part copies). Owns its arrays; borrows the sequence's graphs. */
typedef struct partition_operators {
    operator_kind kind;         /**< GCN (T-GCN, EvolveGCN-O), Chebyshev (GConvGRU, GC-LSTM) or DCRNN's forward walk */
    int64_t num_snapshots;      /**< T */
    propagation *whole;         /**< [T] */
    propagation *transposed;    /**< [T] DCRNN: WALK_BACKWARD_TRANSPOSED, whose transpose is its backward walk; else NULL */
    propagation *backward;      /**< [T] DCRNN: its backward walk on `reversed` (ref_propagation_transpose()); else NULL */
    csr *reversed;              /**< [T] DCRNN: the snapshots' graphs with every edge turned round; else NULL */
} partition_operators;

/** Build the operators @p model needs for every snapshot of @p seq. */
int partition_operators_create(partition_operators *ops, const snapshot_seq *seq, model_kind model, tf_error *err);

/** Release them. */
void partition_operators_free(partition_operators *ops);

/** One rank's share. */
typedef struct partition_part {
    int rank;                  /**< r */
    int ranks;                 /**< R */
    partition_mode mode;       /**< cache or exchange */
    operator_kind kind;        /**< the operator the model reads */
    int depth;                 /**< cache mode: the closure's depth; 0 in exchange mode */
    int64_t owned;             /**< rows 0 .. owned-1 are this rank's vertices (increasing global id) */
    int64_t rows;              /**< rows of `local` */
    int32_t *global_id;        /**< [rows] the global vertex of each row (owned first, then the rest by id) */
    snapshot_seq local;        /**< [T] snapshots of `rows` rows: features, targets, presence; its graphs
                                    are empty (the model takes its operators from `operators`) */
    csr *graphs;               /**< [T] operator graphs, square over operator_rows[t] */
    int64_t *operator_rows;    /**< [T] rows of graphs[t]: rows, + halo[t] (exchange) or + cached (T-GCN cache) */
    float **edge_coefficient;  /**< [T][graphs[t].num_edges] copied from the whole operator */
    float **self_coefficient;  /**< [T][operator_rows[t]] (0 on rows that are sources only) */
    float **backward_coefficient; /**< [T][edges] DCRNN: its backward walk's, on reversed_graphs[t] (cache mode) or
                                       on graphs[t] as a transpose (exchange mode); else NULL */
    csr *reversed_graphs;      /**< [T] DCRNN in cache mode: its backward walk's graphs, square over operator_rows[t]
                                    (every row keeps its out-edges inside the part, in the global order); else NULL */
    int64_t *halo;             /**< [T] exchange mode: |H_r(t)|; 0 otherwise */
    int32_t **halo_vertices;   /**< [T][halo[t]] exchange mode: global ids by (owner, id); NULL otherwise */
    propagation_halo *halos;   /**< [T] exchange mode: the hooks of t's operator (`owned` set here; fetch,
                                    give_back and context by opt/partition_exchange.h); NULL otherwise */
    propagation_halo *transposed_halos; /**< [T] DCRNN in exchange mode: halos[t] marked `transposed`, the hooks
                                             of its backward walk; NULL otherwise */
    int64_t *present_total;    /**< [T] present vertices of the whole snapshot: the loss denominators */
    operator_source operators; /**< serves graphs[t] with its coefficients (and halos[t]) to the model */
    int64_t cached;            /**< T-GCN cache mode: cached 1-hop in-neighbour rows (features only) */
    float *cached_features;    /**< [T][owned + cached][F] T-GCN cache mode, else NULL */
    input_aggregations cached_inputs; /**< T-GCN cache mode: A^ X_t of the owned rows from the cache */
    float *scratch;            /**< [(owned + cached)][F] the cached product's output */
    int64_t bytes_held;        /**< memory of everything above */
} partition_part;

/**
 * Build rank @p rank's part.
 * @param part           out
 * @param seq            the whole sequence
 * @param ops            partition_operators_create() of @p seq for the model
 * @param owner          [N] the owner of every vertex, 0 .. ranks-1
 * @param ranks          R
 * @param rank           this part's rank
 * @param mode           cache or exchange
 * @param config         the model (its kind picks the operator, its K the cache depth)
 * @param window_length  the longest window training or evaluation runs (cache depth)
 * @param err            out: out of memory, owners out of range, a model whose operator @p ops lacks
 */
int partition_part_create(partition_part *part, const snapshot_seq *seq, const partition_operators *ops,
                          const int32_t *owner, int ranks, int rank, partition_mode mode, const model_config *config,
                          int64_t window_length, tf_error *err);

/** Release everything the part owns (safe on a zeroed or half-built part). */
void partition_part_free(partition_part *part);

/** Let @p m read its operators (and T-GCN in cache mode its inputs) from @p part. */
void partition_part_attach(const partition_part *part, model *m);

#ifdef __cplusplus
}
#endif

#endif
