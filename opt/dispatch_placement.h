/**
 * @file opt/dispatch_placement.h
 * Twins: none — where node memory lives on R ranks (the reference holds all of it in one process).
 * @brief Where each vertex's node memory lives when it is partitioned over ranks: Sven's dual
 *        hash (owner and local row), the placement methods, the demand they may read, and the
 *        --placement values that name them.
 *
 * Twins nothing: the placements are chapter 06's formulas (ref/partition.h, ref/partition_bicut.h)
 * applied to the distributed event trainer's memory, which gives the same bits under any of them.
 *
 * **Dual hash** ([Sven] TPDS §4.1, Fig. 10). lambda_1 = owner[v], global id -> rank, is on every
 * rank (anyone can tell whom to ask for a row); lambda_2 = local_row[v], global id -> row of the
 * owner's shard, numbers the ids a rank owns 0, 1, 2, ... in increasing id ("accumulating the
 * global ids that map to the same trainer"). Ids are dense (0 .. num_nodes - 1), so both are
 * plain arrays. A placement only decides where rows live: training gives the same bits under any
 * placement (verify/test_dispatch_mpi.c runs every method).
 *
 * **Methods** (all deterministic; the formulas are ref/partition.h's, so `--placement hash` and
 * `twofold partition --method hash` place every vertex alike):
 *  - `range`: owner = floor(v R / num_nodes), contiguous id ranges (DGL's; the TPDS default;
 *    partition_range());
 *  - `interval[:G]`: owner = floor(v / G) mod R, block-cyclic with blocks of G ids (default
 *    #PARTITION_INTERVAL_BLOCK; the HPDC paper's "interval-based" partitioning, whose granularity
 *    it does not give), so hot and cold ids alternate over the ranks (partition_interval());
 *  - `hash`: owner = v mod R (DynaHB's round-robin baseline, partition_hash());
 *  - `random`: a seeded permutation of the ids dealt round-robin (rank sizes differ by <= 1);
 *  - `reflexbicut`: Sven's Re-FlexBiCut (ref/partition_bicut.h, chapter 06) on the demand the
 *    trainer measures first with its own plans, so it keeps the largest cut capacity low;
 *  - `file:PATH`: an int64 .npy of shape [num_nodes] with values 0 .. R-1 (what a partitioner
 *    writes, e.g. `twofold partition --save`).
 *
 * **The partitioner interface.** A method is a #placement_method: a name, a function filling
 * owner[] from a #placement_request, and whether it needs the measured *demand*, chapter 06's
 * #bicut_demand: ω(r, v) = the batches of an epoch in which rank r's plan reads v (v in its V_u)
 * plus those in which it holds v's winning write (dispatch_demand_measure(), with the plans the
 * trainer will build). Re-FlexBiCut ([Sven] TPDS §4.2) minimizes the largest per-rank
 * communication of a placement, the cut capacity cap(r) = recv_r + serve_r of bicut_costs():
 * rows r fetches and sends for vertices it does not own, plus rows it serves and receives for the
 * vertices it owns. A partitioner plugs in by adding one line to placement_methods[]
 * (opt/dispatch_placement.c), with needs_demand = 1 if it reads the demand.
 *
 * Ownership: dispatch_placement_create() copies the owner array and allocates the maps,
 * dispatch_placement_free() releases them; a demand is allocated by its measurement and released
 * by bicut_demand_free().
 */
#ifndef TWOFOLD_OPT_DISPATCH_PLACEMENT_H
#define TWOFOLD_OPT_DISPATCH_PLACEMENT_H

#include <stdint.h>

#include "ref/core/error.h"
#include "ref/data/events.h"
#include "ref/partition_bicut.h"
#include "ref/train_events.h"

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

/** What a placement method may look at. */
typedef struct placement_request {
    const event_stream *events;     /**< the stream */
    int64_t num_nodes;              /**< the id space */
    int ranks;                      /**< R */
    uint64_t seed;                  /**< for seeded methods */
    int64_t interval;               /**< G of `interval` (>= 1) */
    const bicut_demand *demand;     /**< the measured demand when the method needs it, else NULL */
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
 * @param interval  out: G (#PARTITION_INTERVAL_BLOCK unless `interval:G` gives it)
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

/**
 * Measure the demand of the next epoch's training batches on @p ranks ranks: ω(r, v) = the
 * batches in which rank r's plan reads v plus those in which it holds v's winning write (the
 * plans the trainer builds, opt/dispatch_batch.h). No MPI: every rank measures the same.
 * @return 0, or TF_ERR_INPUT (no memory)
 */
int dispatch_demand_measure(const event_trainer *tr, int ranks, bicut_demand *out, tf_error *err);

/**
 * The owners a --placement value asks for: parse it, measure the demand if the method needs it,
 * run the method or read the file.
 * @param spec   the --placement text
 * @param tr     the trainer (stream, and what the demand needs)
 * @param ranks  R
 * @param owner  [num_nodes] out
 * @param err    out: a bad spec, a bad file
 * @return 0, or TF_ERR_INPUT
 */
int dispatch_place(const char *spec, const event_trainer *tr, int ranks, int32_t *owner, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
