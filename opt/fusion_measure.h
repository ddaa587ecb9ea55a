/**
 * @file opt/fusion_measure.h
 * @brief Measurements of temporal and spatial fusion, shared by bench/fusion.c and
 *        `twofold demo`: validate the twins against the reference, then time them.
 *
 * The order is the project's rule for every benchmark (llm.c's dev/cuda habit): compute the
 * reference, compare each twin with it, and time a twin only when it was equal. A measurement
 * whose twin was wrong carries no time, so no caller can print a speed for a wrong answer.
 *
 * Work measured: one forward and one backward of the time encoder over every sequence of the
 * set (random inputs and random output gradients, seeded), parameter gradients included.
 */
#ifndef TWOFOLD_OPT_FUSION_MEASURE_H
#define TWOFOLD_OPT_FUSION_MEASURE_H

#include <stdint.h>

#include "opt/fusion.h"
#include "ref/fusion.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The tolerance of "fp" equality on the CPU, max |a - b| / max(1, |ref|) (chapters/00-overview.md,
 *  "What equal means"). */
#define FUSION_TOLERANCE 1e-5

/** What fusion_measure() found for one set and one cell. */
typedef struct fusion_measurement {
    int64_t sequences;               /**< sequences in the set */
    int64_t useful_steps;            /**< their total length */
    int64_t max_length;              /**< T_max */
    int64_t lanes;                   /**< lanes of the fused plan */
    double padded_computed_per_useful; /**< padded plan: computed steps / useful steps */
    double fused_computed_per_useful;  /**< fused plan: the same ratio (1.00 by construction) */
    double padded_occupancy;         /**< useful / grid cells, padded */
    double fused_occupancy;          /**< useful / grid cells, fused lanes */
    double padded_error;             /**< worst relative error vs ref over h, dx, parameter gradients */
    double fused_error;              /**< the same for fused lanes */
    int valid;                       /**< 1 when both errors are within FUSION_TOLERANCE */
    double ref_seconds;              /**< per-sequence reference, forward + backward (0 if not valid) */
    double padded_seconds;           /**< padded, best of the repeats (0 if not valid) */
    double fused_seconds;            /**< fused lanes, best of the repeats (0 if not valid) */
} fusion_measurement;

/**
 * Validate, then time: the reference once (its run is the oracle); each twin's validating run
 * is its first timed run, repeated up to @p repeats runs in all (best kept) while a run takes
 * under a second. @p in and @p hidden shape a random time encoder of @p kind
 * seeded by @p seed. @return 0 (with out->valid telling whether the twins were equal), or a
 * #tf_error_code when something failed to run.
 */
int fusion_measure(const sequence_set *set, time_encoder_kind kind, int64_t in, int64_t hidden, int repeats,
                   uint64_t seed, fusion_measurement *out, tf_error *err);

/** What fusion_measure_spatial() found for one graph, chunking and cap. */
typedef struct spatial_measurement {
    int64_t chunks;            /**< chunks (contiguous id ranges) */
    int64_t cap_bytes;         /**< the memory cap */
    int64_t groups;            /**< groups after spatial fusion */
    int64_t unfused_bytes;     /**< bytes loaded chunk by chunk */
    int64_t fused_bytes;       /**< bytes loaded group by group */
    int64_t differing_rows;    /**< chunk feature rows whose bytes differ from loading the chunk alone */
    int64_t groups_over_cap;   /**< merged groups whose load exceeds the cap */
    int valid;                 /**< 1 when both counts are 0 */
    double alone_seconds;      /**< time of all per-chunk loads (0 if not valid) */
    double fused_seconds;      /**< time of all group loads (0 if not valid) */
} spatial_measurement;

/**
 * Spatial fusion of @p seq cut into @p num_chunks contiguous chunks, under a cap of
 * @p cap_fraction of the whole graph's feature bytes: group, load every group once, and
 * compare each chunk's rows in its group's load with loading the chunk alone (memcmp).
 * @return 0 (out->valid tells whether everything matched), or a #tf_error_code.
 */
int fusion_measure_spatial(const snapshot_seq *seq, int64_t num_chunks, double cap_fraction, spatial_measurement *out,
                           tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
