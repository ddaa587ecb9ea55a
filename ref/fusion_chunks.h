/**
 * @file ref/fusion_chunks.h
 * @brief Chunks of vertices and the data one chunk loads: the reference of DGC's spatial
 *        fusion (chapter 03).
 *
 * Spatial fusion (DGC, Section 5.1, Fig. 8): a chunk of vertices is trained on one GPU and
 * needs the features of its own vertices and of their in-neighbours (its halo) in every
 * snapshot. ref_fusion_load_chunk() loads one chunk's data alone; opt/fusion.h loads a group
 * of chunks as one union, and must hand each chunk the very same bytes.
 *
 * Ownership: every struct here owns its arrays; free with its _free function (safe on a zeroed
 * struct). Functions that can fail return a #tf_error_code and leave a message in @p err.
 */
#ifndef TWOFOLD_REF_FUSION_CHUNKS_H
#define TWOFOLD_REF_FUSION_CHUNKS_H

#include <stdint.h>

#include "ref/core/error.h"
#include "ref/data/snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A partition of the vertex ids into chunks (DGC's units of placement). Owns its arrays. */
typedef struct chunk_set {
    int64_t count;        /**< number of chunks */
    int64_t num_nodes;    /**< size of the vertex id space covered */
    int64_t *offsets;     /**< [count + 1] chunk c owns vertices[offsets[c] .. offsets[c+1]) */
    int32_t *vertices;    /**< [num_nodes] vertex ids, increasing within a chunk */
} chunk_set;

/**
 * @p count chunks of consecutive vertex ids, sizes differing by at most one (a stand-in for
 * DGC's label-propagation chunks, which chapter 06 builds; fusion only needs some chunks).
 * @return 0, or TF_ERR_INPUT when count < 1 or count > num_nodes.
 */
int chunk_set_contiguous(int64_t num_nodes, int64_t count, chunk_set *out, tf_error *err);

/** Release @p chunks's arrays and zero it. */
void chunk_set_free(chunk_set *chunks);

/** The data one load brings in: features of some vertices in every snapshot. Owns its arrays. */
typedef struct chunk_load {
    int64_t num_vertices;   /**< vertices loaded */
    int32_t *vertices;      /**< [num_vertices] their ids, increasing */
    int64_t num_snapshots;  /**< snapshots covered */
    int64_t feature_width;  /**< F */
    float *features;        /**< [num_snapshots][num_vertices][F] copied from the snapshots */
    int64_t bytes;          /**< bytes loaded: num_snapshots * num_vertices * F * 4 */
} chunk_load;

/**
 * The vertices chunk @p chunk needs: its own and every in-neighbour of one of them in any
 * snapshot (its halo), sorted, each once: out_vertices [1] gets an allocated [count] array
 * (caller frees), out_count [1] its length.
 */
int ref_fusion_chunk_vertices(const snapshot_seq *seq, const chunk_set *chunks, int64_t chunk,
                              int32_t **out_vertices, int64_t *out_count, tf_error *err);

/** The vertices with @p marked [num_nodes] set, in id order: @p out_vertices (caller frees) and
 *  @p out_count. Fails (@p err) only without memory. */
int fusion_marked_vertices(const uint8_t *marked, int64_t num_nodes, int32_t **out_vertices, int64_t *out_count,
                           tf_error *err);

/**
 * The features of out->vertices [out->num_vertices] (chosen by the caller) in every snapshot of
 * @p seq into out->features [T][num_vertices][F], with its sizes: the one copy a load makes,
 * whoever chose the vertices (a chunk here, a group of chunks in opt/fusion.h). On failure @p out
 * is freed.
 */
int fusion_load_features(const snapshot_seq *seq, chunk_load *out, tf_error *err);

/** Load chunk @p chunk alone: the features of ref_fusion_chunk_vertices() in every snapshot. */
int ref_fusion_load_chunk(const snapshot_seq *seq, const chunk_set *chunks, int64_t chunk, chunk_load *out,
                          tf_error *err);

/** Release @p load's arrays and zero it. */
void chunk_load_free(chunk_load *load);

#ifdef __cplusplus
}
#endif

#endif
