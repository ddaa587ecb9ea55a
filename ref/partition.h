/**
 * @file ref/partition.h
 * @brief Splitting a dynamic graph among R ranks: which rank owns each vertex (or snapshot, or
 *        vertex at a time step), and what that split costs (edge cut, load, halo, cache).
 *
 * The partitioners of chapter 06, as plain single-process functions, each deterministic for its
 * inputs and seed. An **owner array** gives every vertex id 0..N-1 a rank 0..R-1, absent
 * vertices included (they have no edges and are masked out of the loss, so they cost nothing).
 *
 *  - **hash** (DynaHB's baseline, "round-robin"): owner[v] = v mod R.
 *  - **pts** (DGC section 2.1, partitioning by temporal sequences; Sven's *range*): contiguous id
 *    ranges of equal size, owner[v] = floor(v R / N).
 *  - **interval** (Sven's constant-interval baseline): blocks of 16 ids dealt round-robin,
 *    owner[v] = floor(v / 16) mod R (the paper gives no block size; 1 would be hash).
 *  - **pss** (by snapshot): snapshot t goes to rank floor(t R / T), contiguous blocks so that a
 *    recurrence crosses ranks only R - 1 times. A split of *time*, not of vertices:
 *    `twofold train --split window --blocks` is PSS at window granularity.
 *  - **pss-ts** (the hybrid): the structure encoder under PSS, its output shuffled to PTS owners
 *    (vertex_owner = pts and snapshot_owner = pss).
 *  - **metis** (ref/partition_metis.c): METIS on the union graph weighted by snapshot count.
 *  - **dynahb** (DynaHB section 4.2, Definition 2, Algorithm 1): the walk-count load below,
 *    sorted, dealt serpentine.
 *  - **dgc**, **dgc-st** (ref/partition_chunks.h): DGC's label-propagation chunks and Algorithm 1.
 *  - **reflexbicut** (ref/partition_bicut.h): Sven's communication-balanced placement of an
 *    event model's memory.
 *
 * **DynaHB's load.** Definition 2 prints L_i^t = sum_{l=1..L} sum_{l'=1..l} |N^{l'}(v_i,t)|, set
 * sizes; the paper's Algorithm 1 (and its code) propagates *walk counts*, and so does this file:
 *
 *     a_0^t(v) = 1,   a_l^t(v) = sum over in-edges (u -> v) of E_t of a_{l-1}^t(u)   (parallel edges count)
 *     raw_l(v) = sum_t a_l^t(v)
 *     load(v)  = sum_{l=1..L} sum_{l'=1..l} raw_{l'}(v) = sum_{l'=1..L} (L - l' + 1) raw_{l'}(v)
 *
 * in int64 with checked additions (walks grow like d^L; float stops being exact at 2^24). In a
 * diamond a->b, a->c, b->d, c->d vertex d has two 2-walks but one 2-hop neighbour. The paper's
 * Algorithm 1 indexes `vertex_load_raw` (L x N) up to L and scatters vertex values by edge
 * destination: printed errata; the semantics above are what it computes. Dealing is
 * *serpentine* (the code's div_array_by_mod: rank i mod R on even rounds, R - 1 - i mod R on odd
 * ones); the paper says "round-robin"; both give 12/12 on its Example 3.
 *
 * Ownership: every function writes into arrays the caller allocates, except the structs with a
 * _free function, which own what they point to.
 */
#ifndef TWOFOLD_REF_PARTITION_H
#define TWOFOLD_REF_PARTITION_H

#include <stdint.h>

#include "ref/data/csr.h"
#include "ref/core/error.h"
#include "ref/models/model.h"
#include "ref/data/snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The partitioners. */
typedef enum partition_method {
    PARTITION_HASH,        /**< v mod R */
    PARTITION_PTS,         /**< contiguous vertex ranges (Sven's "range" on event streams) */
    PARTITION_PSS,         /**< contiguous snapshot blocks */
    PARTITION_PSS_TS,      /**< PSS for the structure encoder, PTS for the time encoder */
    PARTITION_METIS,       /**< METIS k-way on the union graph */
    PARTITION_DYNAHB,      /**< DynaHB's walk-count load, dealt serpentine */
    PARTITION_DGC,         /**< DGC chunks of whole vertex sequences */
    PARTITION_DGC_ST,      /**< DGC spatio-temporal chunks: an owner per (snapshot, vertex) */
    PARTITION_REFLEXBICUT, /**< Sven's Re-FlexBiCut (event streams) */
    PARTITION_INTERVAL,    /**< blocks of 16 ids round-robin (event streams) */
    PARTITION_METHODS      /**< how many there are */
} partition_method;

/** The command-line name of @p m ("hash", "pss-ts", ...). */
const char *partition_method_name(partition_method m);

/** Parse a method name. @return 0, or TF_ERR_INPUT with a message listing every name. */
int partition_method_parse(const char *name, partition_method *out, tf_error *err);

/** 1 if @p m places an event model's memory (reflexbicut, interval, hash, pts), for event streams. */
int partition_method_for_events(partition_method m);

/** 1 if @p m partitions a snapshot sequence (every method but reflexbicut and interval). */
int partition_method_for_snapshots(partition_method m);

/** Settings shared by the partitioners. */
typedef struct partition_options {
    int ranks;            /**< R >= 1 */
    uint64_t seed;        /**< METIS's seed (the others are deterministic without one) */
    int layers;           /**< DynaHB's L; 0 = from the model (partition_model_layers()) */
    int64_t chunk_cap;    /**< DGC's label size cap in units; 0 = ceil(units / (4 R)) */
    model_config model;   /**< the model whose traffic weighs DGC's super graph and cost model */
} partition_options;

/** Defaults: 1 rank, seed 1, layers from the model, automatic cap, T-GCN with H = 32, K = 2. */
void partition_options_default(partition_options *o);

/** DynaHB's L for a model: its graph products in sequence per snapshot (T-GCN, EvolveGCN 1; GC-LSTM and GConvGRU K - 1, at least 1). */
int partition_model_layers(const model_config *c);

/**
 * A partitioner's result. Owns its arrays. vertex_owner is set for every vertex method;
 * snapshot_owner for pss (and pss-ts, beside its vertex_owner); step_owner for dgc-st.
 */
typedef struct partition {
    partition_method method;  /**< which partitioner made it */
    int ranks;                /**< R */
    int64_t num_nodes;        /**< N */
    int64_t num_snapshots;    /**< T */
    int32_t *vertex_owner;    /**< [N] or NULL */
    int32_t *snapshot_owner;  /**< [T] or NULL */
    int32_t *step_owner;      /**< [T][N], -1 where the vertex is absent, or NULL */
} partition;

/**
 * Partition @p seq with method @p m (any but reflexbicut and interval). Errors: R < 1, R > N for
 * a vertex method, R > T for pss, an overflowing load. @p out is freed with partition_free().
 */
int ref_partition_snapshots(const snapshot_seq *seq, partition_method m, const partition_options *o, partition *out,
                            tf_error *err);

/** Release @p p's arrays and zero it (safe on a zeroed partition). */
void partition_free(partition *p);

/** owner[v] = v mod R for @p n ids on @p ranks ranks; @p owner [n] out. */
void partition_hash(int64_t n, int ranks, int32_t *owner);

/** owner[v] = floor(v R / n) for @p n ids on @p ranks ranks: contiguous ranges whose sizes differ by at most 1;
 *  @p owner [n] out. */
void partition_range(int64_t n, int ranks, int32_t *owner);

/** owner[v] = floor(v / @p block) mod R for @p n ids on @p ranks ranks; @p owner [n] out. */
void partition_interval(int64_t n, int ranks, int64_t block, int32_t *owner);

/** The block size of Sven's interval baseline. */
#define PARTITION_INTERVAL_BLOCK 16

/**
 * DynaHB's load of every vertex of @p seq (the file comment's walk counts) for @p layers >= 1 into
 * @p load [N]. @return 0, or TF_ERR_INPUT in @p err naming the vertex and layer where int64 overflows.
 */
int partition_dynahb_load(const snapshot_seq *seq, int layers, int64_t *load, tf_error *err);

/**
 * Deal @p n items serpentine among @p ranks by decreasing @p load [n] (ties by id): sorted position
 * i goes to rank i mod R in even rounds (round = floor(i / R)) and R - 1 - i mod R in odd ones;
 * @p owner [n] out. Fails (@p err) only without memory.
 */
int partition_serpentine(const int64_t *load, int64_t n, int ranks, int32_t *owner, tf_error *err);

/* ---- graphs the partitioners read -------------------------------------------------------- */

/** An undirected weighted graph in CSR: symmetric, without self loops, neighbours sorted. Owns its arrays. */
typedef struct partition_graph {
    int64_t num_vertices;   /**< V */
    int64_t num_edges;      /**< stored entries (each undirected edge twice) */
    int64_t *offsets;       /**< [V + 1] */
    int32_t *neighbours;    /**< [num_edges] sorted within each row */
    int64_t *edge_weight;   /**< [num_edges] */
    int64_t *vertex_weight; /**< [V] */
} partition_graph;

/**
 * The union graph of @p seq: vertex v weighs max(1, snapshots where v is present); the edge
 * {u, v} weighs @p spatial_weight times the occurrences of u -> v and v -> u over all snapshots.
 */
int partition_union_graph(const snapshot_seq *seq, int64_t spatial_weight, partition_graph *out, tf_error *err);

/**
 * DGC's super graph of @p seq (section 4.1) into @p out: a vertex per present (t, v), numbered in
 * order of (t, v); spatial edges {(u,t), (v,t)} for each u -> v of E_t (u != v, occurrences add up)
 * weighing @p spatial_weight each; virtual temporal edges {(v,t-1), (v,t)} between consecutive
 * present counterparts weighing @p temporal_weight (none when it is 0). Every vertex weighs 1.
 * @p step_index [T][N] out: the super vertex of (t, v), or -1 where v is absent. Fails (@p err)
 * without memory or beyond int32 vertex ids.
 */
int partition_super_graph(const snapshot_seq *seq, int64_t spatial_weight, int64_t temporal_weight,
                          partition_graph *out, int64_t *step_index, tf_error *err);

/**
 * Build @p g over @p vertices vertices from @p count undirected contributions {a[i], b[i]} (a != b)
 * of weight w[i] (@p a, @p b, @p w: [count]): each is stored in both rows, rows sorted, equal
 * neighbours merged by adding their weights. Vertex weights are zero. Fails (@p err) without memory.
 */
int partition_graph_from_pairs(partition_graph *g, int64_t vertices, int64_t count, const int32_t *a, const int32_t *b,
                               const int64_t *w, tf_error *err);

/** Release @p g's arrays and zero it. */
void partition_graph_free(partition_graph *g);

/**
 * The directed union of the in-edges of every snapshot: row v lists each u with u -> v in some
 * snapshot once (sorted), its weight the number of occurrences. What the closure walks.
 */
int partition_in_union(const snapshot_seq *seq, csr *out, tf_error *err);

/**
 * The graph a cache of @p model closes over (partition_in_closure()): partition_in_union(), and for
 * a model whose products also read a vertex's out-neighbours (DCRNN's backward walk: its
 * graph_operator is the forward walk, and the backward one comes with it) every edge turned round
 * too, so that the closure runs along in- and out-edges alike.
 */
int partition_cache_union(const snapshot_seq *seq, model_kind model, csr *out, tf_error *err);

/**
 * DynaHB's cache (section 4.1): the vertices whose values can reach @p start within @p depth
 * hops along in-edges of any snapshot. member = start, then level j + 1 = the sources of in-edges
 * into level j. @p start and @p member may not alias.
 * @param in_union  partition_in_union() of the sequence
 * @param start     [N] 1 for the owned vertices
 * @param depth     hops (0: the owned vertices alone)
 * @param member    [N] out: 1 for start and its closure C
 * @param queue     [N] scratch: the vertices in the order they were reached
 * @return |start ∪ C|
 */
int64_t partition_in_closure(const csr *in_union, const uint8_t *start, int depth, uint8_t *member, int32_t *queue);

/**
 * The graph depth a rank's cache must cover so that its owned rows are exact in a window of
 * @p window_length snapshots (chapter 06): T-GCN, EvolveGCN, WD-GCN, GAT-LSTM and DySAT 1; the two-layer T-GCN and
 * MPNN-LSTM 2 (the halo's halo); GC-LSTM (K-1)(W-1); GConvGRU and DCRNN (K-1)(2W-1) (DCRNN's along and
 * against the edges); GConvLSTM (K-1)W; GCRN-M1
 * (K-1)L and CD-GCN L for L pairs; at least 1.
 */
int partition_cache_depth(const model_config *c, int64_t window_length);

/**
 * The floats one halo row costs per snapshot in exchange mode, from the models' equations:
 * @p forward floats fetched, @p backward floats of gradient given back; and @p temporal, the
 * floats a state crossing ranks between consecutive snapshots would move (state width x
 * (1 GRU, 2 LSTM) x 2 ways). T-GCN: F forward (A^ X_t), none backward (its product reads X only);
 * GC-LSTM: (K-1)H each way; GConvGRU: (K-1)(F + 2H) forward (bases of X, H and H*R), 2(K-1)H
 * backward (of H*R and H); EvolveGCN-O: F each way (X W_t) and no per-vertex state (temporal 0);
 * WD-GCN: F forward (A^ X_t, read by its GCN only), none backward, and its LSTM's H and C.
 * DGC's spatial super-edge weight is forward + backward.
 */
void partition_model_traffic(const model_config *c, int64_t *forward, int64_t *backward, int64_t *temporal);

/* ---- what a split costs ------------------------------------------------------------------ */

/** Metrics of a vertex owner array. Owns its per-rank arrays. */
typedef struct partition_metrics {
    int ranks;                  /**< R */
    int64_t cut_edges;          /**< directed edge occurrences over all snapshots with endpoints on two ranks (loops never) */
    int64_t total_edges;        /**< all edge occurrences */
    int64_t vertices_min;       /**< fewest vertices on a rank */
    int64_t vertices_max;       /**< most vertices on a rank */
    double load_max_over_mean;  /**< DynaHB load: max / mean over ranks (chapter 06's imbalance) */
    double load_max_over_min;   /**< DynaHB load: max / min (DGC's lambda; infinity when a rank has none) */
    int64_t halo_rows;          /**< sum over t and r of |H_r(t)|: rows one exchange-mode product moves */
    int cache_depth;            /**< the depth the cache figures are for */
    double replication;         /**< sum_r |P_r ∪ C_r| / N */
    int64_t cache_rows_max;     /**< largest |P_r ∪ C_r| */
    int64_t *rank_vertices;     /**< [R] */
    int64_t *rank_load;         /**< [R] DynaHB load */
    int64_t *rank_halo;         /**< [R] sum over t of |H_r(t)| */
    int64_t *rank_cache;        /**< [R] |P_r ∪ C_r| */
} partition_metrics;

/**
 * Measure @p owner [N]: cut, vertices, the DynaHB load for @p layers, halo rows, and the cache of
 * @p cache_model at @p cache_depth (0: the cache is the owned rows, replication 1), closed over the
 * edges that model reads (partition_cache_union(): DCRNN's along and against the edges, the others'
 * along in-edges). The halo rows are the in-edge halos H_r(t), the rows every exchange-mode product
 * of the model moves: DCRNN's backward walk moves the same rows (its shares are given back through
 * them, opt/partition_part.h), so they count for both walks.
 */
int partition_measure(const snapshot_seq *seq, const int32_t *owner, int ranks, int layers, int cache_depth,
                      model_kind cache_model, partition_metrics *out, tf_error *err);

/** Release @p m's arrays. */
void partition_metrics_free(partition_metrics *m);

/**
 * |H_r| of the graph @p g summed over the @p ranks ranks r, where
 * H_r = {u : owner[u] != r and u -> v with owner[v] = r}. @p owner [num_nodes]; @p per_rank [R]
 * added into, or NULL; @p mark [num_nodes] scratch, zero on entry and on return.
 */
int64_t partition_halo_rows(const csr *g, const int32_t *owner, int ranks, int64_t *per_rank, int32_t *mark);

/**
 * Exchange mode's @p bytes in one epoch of training plus its evaluation of @p seq under @p owner [N]
 * on @p ranks ranks for model @p c, counted from the graph: the windows of ref/train.h (snapshots
 * 0 .. @p train_snapshots - 1 in windows of @p window, starting every @p stride, 0 = as
 * train_options), each snapshot's halo rows times the forward and backward floats of
 * partition_model_traffic(), and every test snapshot forward once; 4 bytes a float. Fails (@p err)
 * for a split out of range or without memory.
 */
int partition_exchange_bytes(const snapshot_seq *seq, const int32_t *owner, int ranks, const model_config *c,
                             int64_t train_snapshots, int64_t window, int64_t stride, int64_t *bytes, tf_error *err);

/** The rank of every (snapshot, vertex) of @p p into @p step_owner [T][N]: dgc-st's own (-1 where absent),
 *  pss's snapshot owner, else the vertex owner (pss-ts: its vertex owner, the time encoder's). */
void partition_step_owners(const partition *p, int32_t *step_owner);

/**
 * The bytes one pass of model @p c over @p seq moves under a split of (snapshot, vertex) pairs
 * @p step_owner [T][N] on @p ranks ranks (partition_step_owners(): PSS, PTS, DGC's chunks and every
 * vertex split alike), forward and backward, 4 bytes a float, in consecutive windows of @p window
 * snapshots (the last may be shorter; 0: one window), as each window starts from a fresh state:
 *  - @p spatial_bytes: the structure encoder's halo: a row u read by an edge u -> v of E_t with
 *    owner(t, u) != owner(t, v), once per (t, u, reading rank), times the forward + backward floats of
 *    partition_model_traffic();
 *  - @p temporal_bytes: the time encoder's reads of a vertex's own rows held by another rank. A
 *    recurrence at t reads (t - 1, v); DySAT's temporal attention (model_cost::reads_window) reads
 *    every (tau, v) from the window's first snapshot to t - 1. Each row once per (tau, v, reading rank)
 *    in a window, v present at both ends, times the model's temporal floats.
 * Under a vertex split temporal_bytes is 0 (a vertex's window stays on its owner); under PSS spatial
 * is 0. Fails (@p err) without memory or for an owner out of range.
 */
int partition_split_traffic(const snapshot_seq *seq, const int32_t *step_owner, int ranks, const model_config *c,
                            int64_t window, int64_t *spatial_bytes, int64_t *temporal_bytes, tf_error *err);

/** PSS's costs of @p seq under @p snapshot_owner [T] on @p ranks ranks: @p rank_load [R], each rank's
 *  sum over its snapshots of (present + edges), and @p boundary_rows, the state rows crossing block
 *  boundaries in a full-sequence pass (present at t-1 and t). */
void partition_pss_costs(const snapshot_seq *seq, const int32_t *snapshot_owner, int ranks, int64_t *rank_load,
                         int64_t *boundary_rows);

/** METIS on @p g into @p ranks parts with @p seed (ref/partition_metis.c): @p owner [V] out,
 *  @p edge_cut METIS's own edge cut (may be NULL). R = 1 gives all zeros without calling METIS
 *  (5.1.0 divides by zero there); R > V is an error in @p err (METIS puts every vertex on the last
 *  part), and so are weights beyond its 32-bit idx_t. */
int partition_metis(const partition_graph *g, int ranks, uint64_t seed, int32_t *owner, int64_t *edge_cut,
                    tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
