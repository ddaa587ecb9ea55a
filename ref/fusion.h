/**
 * @file ref/fusion.h
 * @brief Vertex sequences of different lengths, the time encoder run over each one alone, and
 *        per-chunk loading: the references of DGC's temporal and spatial fusion (chapter 03).
 *
 * A dynamic graph's time encoder (a GRU or an LSTM) runs over each vertex's own sequence of
 * embeddings, one per snapshot in which the vertex exists. Vertices arrive and depart, so the
 * sequences have different lengths. The reference here does the obvious thing: each sequence
 * separately, step by step, from a zero state, with the torch-exact cells of recurrent.h. The
 * optimized twins (opt/fusion.h: zero-padded batches and DGC's fused lanes) must give the same
 * outputs and gradients.
 *
 * Layout: every per-step array is in **sequence order**: sequence 0's steps first, then
 * sequence 1's, and so on (#sequence_set's offsets say where each starts). x is [total][in],
 * h [total][hidden], with total = sequence_set::total_steps.
 *
 * Spatial fusion (DGC, Section 5.1, Fig. 8): a chunk of vertices is trained on one GPU and
 * needs the features of its own vertices and of their in-neighbours (its halo) in every
 * snapshot. ref_fusion_load_chunk() loads one chunk's data alone; opt/fusion.h loads a group
 * of chunks as one union, and must hand each chunk the very same bytes.
 *
 * Ownership: every struct here owns its arrays; free with its _free function (safe on a zeroed
 * struct). Functions that can fail return a #tf_error_code and leave a message in @p err.
 */
#ifndef TWOFOLD_REF_FUSION_H
#define TWOFOLD_REF_FUSION_H

#include <stdint.h>

#include "ref/error.h"
#include "ref/events.h"
#include "ref/snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A set of sequences laid end to end in sequence order. Owns its arrays. */
typedef struct sequence_set {
    int64_t count;            /**< number of sequences */
    int64_t total_steps;      /**< sum of their lengths (= offsets[count]) */
    int64_t max_length;       /**< the longest length, T_max */
    int64_t *offsets;         /**< [count + 1] sequence s is steps offsets[s] .. offsets[s+1]-1 */
    int32_t *vertex;          /**< [count] the vertex it follows, or NULL (generated lengths) */
    int32_t *first_snapshot;  /**< [count] the snapshot of its first step, or NULL */
} sequence_set;

/**
 * Build a set from @p count lengths (each >= 1). vertex and first_snapshot stay NULL.
 * @return 0, or TF_ERR_INPUT naming the first bad length.
 */
int sequence_set_from_lengths(const int64_t *lengths, int64_t count, sequence_set *out, tf_error *err);

/**
 * The vertex lifetimes of a snapshot sequence: a vertex is alive at t when `present[v]` and,
 * if @p require_edge, it has at least one in- or out-edge at t. Each maximal run of
 * consecutive snapshots in which a vertex is alive is one sequence (a vertex that leaves and
 * comes back starts again from a zero state, as a new vertex would). Sequences are ordered by
 * first snapshot, then vertex.
 * @return 0, or TF_ERR_INPUT when no vertex is ever alive.
 */
int sequence_set_from_snapshots(const snapshot_seq *seq, int require_edge, sequence_set *out, tf_error *err);

/**
 * The vertex lifetimes of an event stream grouped into @p num_snapshots snapshots of equal
 * time span (the last one closed at the last timestamp): a vertex is alive in a snapshot when
 * it takes part in an event there; maximal runs are sequences, as for snapshots.
 * @return 0, or TF_ERR_INPUT for an empty stream or @p num_snapshots < 1.
 */
int sequence_set_from_events(const event_stream *events, int64_t num_snapshots, sequence_set *out, tf_error *err);

/** Generated length distributions (sequence_set_generate()). */
typedef enum length_distribution {
    LENGTHS_UNIFORM,       /**< uniform in 1 .. T */
    LENGTHS_HEAVY_TAILED,  /**< discrete Pareto: floor(u^(-1/1.2)) capped at T, most are short */
    LENGTHS_EQUAL,         /**< all exactly T */
    LENGTHS_ONE,           /**< all 1 */
} length_distribution;

/** The distribution's name, e.g. "heavy-tailed". */
const char *length_distribution_name(length_distribution kind);

/**
 * @p count sequences with lengths drawn from @p kind with cap @p max_length, seeded by @p seed.
 * @return 0, or TF_ERR_INPUT for count < 1 or max_length < 1.
 */
int sequence_set_generate(length_distribution kind, int64_t count, int64_t max_length, uint64_t seed,
                          sequence_set *out, tf_error *err);

/** Release @p set's arrays and zero it. */
void sequence_set_free(sequence_set *set);

/** Which recurrent cell the time encoder uses (recurrent.h gives their equations). */
typedef enum time_encoder_kind {
    TIME_ENCODER_GRU,    /**< torch.nn.GRU: gate blocks r, z, n */
    TIME_ENCODER_LSTM,   /**< torch.nn.LSTM: gate blocks i, f, g, o */
} time_encoder_kind;

/** Gate blocks of a kind: 3 for the GRU, 4 for the LSTM. */
int64_t time_encoder_gates(time_encoder_kind kind);

/** A time encoder's shape and weights (borrowed, not owned), in torch's layout. */
typedef struct time_encoder {
    time_encoder_kind kind;   /**< GRU or LSTM */
    int64_t in;               /**< input width */
    int64_t hidden;           /**< state width H */
    const float *weight_ih;   /**< [G H][in], G = time_encoder_gates(kind) */
    const float *weight_hh;   /**< [G H][H] */
    const float *bias_ih;     /**< [G H] */
    const float *bias_hh;     /**< [G H] */
} time_encoder;

/** Where a backward adds the parameter gradients (same shapes as #time_encoder; any may be NULL). */
typedef struct time_encoder_gradients {
    float *weight_ih;   /**< [G H][in] */
    float *weight_hh;   /**< [G H][H] */
    float *bias_ih;     /**< [G H] */
    float *bias_hh;     /**< [G H] */
} time_encoder_gradients;

/** Check an encoder's shape (in, hidden >= 1, weights given). @return 0 or TF_ERR_INPUT. */
int time_encoder_check(const time_encoder *encoder, tf_error *err);

/**
 * The time encoder over each sequence of @p set separately, in order, from h = 0 (and c = 0):
 * h_out at step p of a sequence is the cell applied to x at p and h_out at p - 1.
 * @param encoder  the cell and its weights
 * @param set      the sequences
 * @param x        [total_steps][in] inputs in sequence order
 * @param h_out    [total_steps][hidden] the state after every step
 * @param err      the failure, if any
 * @return 0, or TF_ERR_INPUT for a bad encoder, or when scratch memory is refused.
 */
int ref_fusion_forward(const time_encoder *encoder, const sequence_set *set, const float *x, float *h_out,
                       tf_error *err);

/**
 * Backward of ref_fusion_forward(), given the loss gradient @p dh_out [total_steps][hidden]
 * with respect to every step's output. Adds into @p dx [total_steps][in] (may be NULL) and the
 * parameter gradients. Each sequence's forward is recomputed, so no tape is kept between the
 * calls. A parameter's gradient is summed over all steps in double (as ref_linear_backward()
 * sums over rows), so the reference does not drift over thousands of steps.
 */
int ref_fusion_backward(const time_encoder *encoder, const sequence_set *set, const float *x, const float *dh_out,
                        float *dx, const time_encoder_gradients *gradients, tf_error *err);

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
 * snapshot (its halo), sorted, each once. @p out_vertices is allocated (caller frees).
 */
int ref_fusion_chunk_vertices(const snapshot_seq *seq, const chunk_set *chunks, int64_t chunk,
                              int32_t **out_vertices, int64_t *out_count, tf_error *err);

/** Load chunk @p chunk alone: the features of ref_fusion_chunk_vertices() in every snapshot. */
int ref_fusion_load_chunk(const snapshot_seq *seq, const chunk_set *chunks, int64_t chunk, chunk_load *out,
                          tf_error *err);

/** Release @p load's arrays and zero it. */
void chunk_load_free(chunk_load *load);

#ifdef __cplusplus
}
#endif

#endif
