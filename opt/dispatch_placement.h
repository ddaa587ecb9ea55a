/**
 * @file opt/dispatch_placement.h
 * Twins: none — where node memory lives on R ranks (the reference holds all of it in one process).
 * @brief Where each vertex's node memory lives when it is partitioned over ranks: Sven's dual
 *        hash (owner and local row), the placement methods, and the partitioner interface.
 *
 * **Dual hash** ([Sven] TPDS §4.1, Fig. 10). lambda_1 = owner[v], global id -> rank, is on every
 * rank (anyone can tell whom to ask for a row); lambda_2 = local_row[v], global id -> row of the
 * owner's shard, numbers the ids a rank owns 0, 1, 2, ... in increasing id ("accumulating the
 * global ids that map to the same trainer"). Ids are dense (0 .. num_nodes - 1), so both are
 * plain arrays. A placement only decides where rows live: training gives the same bits under any
 * placement (verify/test_dispatch_mpi.c runs every method).
 *
 * **Methods** (all deterministic):
 *  - `range`: owner = floor(v R / num_nodes), contiguous id ranges (DGL's; the TPDS default);
 *  - `interval[:G]`: owner = floor(v / G) mod R, block-cyclic with blocks of G ids (default 16;
 *    the HPDC paper's "interval-based" partitioning, whose granularity it does not give), so hot
 *    and cold ids alternate over the ranks;
 *  - `hash`: owner = mix(v) mod R with a fixed 64-bit mixer (no seed);
 *  - `random`: a seeded permutation of the ids dealt round-robin (rank sizes differ by <= 1);
 *  - `reflexbicut`: Sven's Re-FlexBiCut (ref/partition_bicut.h, chapter 06) on the demand the
 *    trainer measures first, w = reads + writes below, so it keeps the largest cut capacity low;
 *  - `file:PATH`: an int64 .npy of shape [num_nodes] with values 0 .. R-1 (what a partitioner
 *    writes, e.g. `twofold partition --save`).
 *
 * **The partitioner interface.** A method is a #placement_method: a name, a function filling
 * owner[] from a #placement_request, and whether it needs the measured *demand*: for every rank
 * r and vertex v, reads[r][v] = batches of an epoch in which rank r's plan reads v (v in its
 * V_u) and writes[r][v] = batches in which rank r holds v's winning write (opt/dispatch_batch.h
 * measures it with the plans the trainer will build). Sven's Re-FlexBiCut ([Sven] TPDS §4.2)
 * minimizes the largest per-rank communication of a placement, the cut capacity
 *
 *     cap(r) = sum_{v: owner(v) != r} w(r, v)  +  sum_{v: owner(v) = r} sum_{k != r} w(k, v),
 *     w(r, v) = reads[r][v] + writes[r][v]
 *
 * (rows r fetches and sends for vertices it does not own, plus rows it serves and receives for
 * the vertices it owns; dispatch_demand_cost()). A partitioner plugs in by adding one line to
 * placement_methods[] (opt/dispatch_placement.c), with needs_demand = 1 if it reads the demand.
 *
 * Ownership: dispatch_placement_create() copies the owner array and allocates the maps,
 * dispatch_placement_free() releases them; a demand is allocated by its measurement and released
 * by dispatch_demand_free().
 */
#ifndef TWOFOLD_OPT_DISPATCH_PLACEMENT_H
#define TWOFOLD_OPT_DISPATCH_PLACEMENT_H

#include <stdint.h>

#include "ref/core/error.h"
#include "ref/data/events.h"

#ifdef __cplusplus
extern "C" {
#endif

/** lambda_1 and lambda_2 of a placement over R ranks. */
typedef struct dispatch_placement {
    int ranks;              /**< R */
    int64_t num_nodes;      /**< the id space */
    int32_t *owner;         /**< [num_nodes] lambda_1: the rank holding v's row */
    int32_t *local_row;     /**< [num_nodes] lambda_2: v's row in its owner's shard */
    int64_t *shard_rows;    /**< [R] rows each rank holds (may be 0) */
} dispatch_placement;

/**
 * Build the maps from an owner array.
 * @param p          out: the placement; free with dispatch_placement_free()
 * @param owner      [num_nodes] values in 0 .. ranks-1 (copied)
 * @param num_nodes  the id space (>= 1)
 * @param ranks      R (>= 1)
 * @param err        out: an owner out of range (the first is named), no memory
 * @return 0, or TF_ERR_INPUT
 */
int dispatch_placement_create(dispatch_placement *p, const int32_t *owner, int64_t num_nodes, int ranks,
                              tf_error *err);

/** Release the maps and zero @p p. Safe on a zeroed placement. */
void dispatch_placement_free(dispatch_placement *p);

/** How often each rank reads and writes each vertex in an epoch's batches. */
typedef struct dispatch_demand {
    int ranks;            /**< R */
    int64_t num_nodes;    /**< the id space */
    int64_t batches;      /**< global batches measured */
    int64_t *reads;       /**< [R][num_nodes] batches in which rank r's plan reads v */
    int64_t *writes;      /**< [R][num_nodes] batches in which rank r holds v's winning write */
} dispatch_demand;

/** Allocate a zeroed demand for @p ranks ranks and @p num_nodes ids. @return 0 or TF_ERR_INPUT. */
int dispatch_demand_create(dispatch_demand *d, int ranks, int64_t num_nodes, tf_error *err);

/** Release a demand and zero it. Safe on a zeroed demand. */
void dispatch_demand_free(dispatch_demand *d);

/**
 * cap(r) of the placement @p owner (the formula above) for every rank.
 * @param d      the demand
 * @param owner  [num_nodes] lambda_1
 * @param cost   [R] out: rows rank r exchanges per epoch as requester and as owner
 */
void dispatch_demand_cost(const dispatch_demand *d, const int32_t *owner, int64_t *cost);

/** What a placement method may look at. */
typedef struct placement_request {
    const event_stream *events;     /**< the stream */
    int64_t num_nodes;              /**< the id space */
    int ranks;                      /**< R */
    uint64_t seed;                  /**< for seeded methods */
    int64_t interval;               /**< G of `interval` (>= 1) */
    const dispatch_demand *demand;  /**< the measured demand when the method needs it, else NULL */
} placement_request;

/** A placement method: fill owner [num_nodes] with ranks 0 .. R-1. */
typedef int (*placement_function)(const placement_request *request, int32_t *owner, tf_error *err);

/** One line of the method table. */
typedef struct placement_method {
    const char *name;            /**< what --placement takes */
    placement_function place;    /**< the method */
    int needs_demand;            /**< 1: the trainer measures the demand first */
    const char *summary;         /**< one line for usage texts */
} placement_method;

/** The methods, terminated by an entry with name NULL (`file:` is parsed apart). */
extern const placement_method placement_methods[];

/**
 * Parse a --placement value: a method name, `interval:G`, or `file:PATH`.
 * @param spec      the text
 * @param method    out: the method, or NULL for `file:`
 * @param interval  out: G (16 unless `interval:G` gives it)
 * @param file      out: PATH for `file:`, else NULL (points into @p spec)
 * @param err       out: an unknown name (the known ones are listed), a G that is not >= 1
 * @return 0, or TF_ERR_INPUT
 */
int placement_parse(const char *spec, const placement_method **method, int64_t *interval, const char **file,
                    tf_error *err);

/**
 * Read a placement written as an int64 .npy of shape [num_nodes], values 0 .. ranks-1.
 * @return 0, or TF_ERR_INPUT naming the file and what is wrong (dtype, shape, an owner >= ranks)
 */
int placement_read_file(const char *path, int64_t num_nodes, int ranks, int32_t *owner, tf_error *err);

/** Write @p owner [num_nodes] as an int64 .npy (what placement_read_file() reads). */
int placement_write_file(const char *path, const int32_t *owner, int64_t num_nodes, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
