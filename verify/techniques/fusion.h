/**
 * @file verify/techniques/fusion.h
 * @brief What a caller of technique_fusion_temporal and technique_fusion_spatial (chapter 03) may
 *        set and read: the parameters a sweep passes to engine_run(), and the plans and byte
 *        counts an inspect callback reads.
 */
#ifndef TWOFOLD_VERIFY_TECHNIQUES_FUSION_H
#define TWOFOLD_VERIFY_TECHNIQUES_FUSION_H

#include <stdint.h>

#include "opt/fusion.h"
#include "verify/techniques/table.h"

#ifdef __cplusplus
extern "C" {
#endif

/** technique_context::params of technique_fusion_temporal; NULL: the dataset's lifetimes, hidden 16. */
typedef struct temporal_params {
    const sequence_set *set;   /**< the sequences (borrowed), instead of the dataset's */
    int64_t hidden;            /**< state width */
} temporal_params;

/** technique_context::params of technique_fusion_spatial; NULL: 16 chunks, a cap of 0.6 of the data. */
typedef struct spatial_params {
    int64_t chunks;        /**< contiguous chunks */
    double cap_fraction;   /**< the memory cap, as a fraction of the whole graph's feature bytes */
} spatial_params;

/** For engine_options::inspect: the two plans of a technique_fusion_temporal @p state, [2]:
 *  the zero-padded batch (twin 0), then the fused lanes (twin 1). Borrowed from the state. */
const fusion_plan *fusion_temporal_plans(const void *state);

/** For engine_options::inspect: the LSTMs a technique_fusion_temporal @p state ran stacked (1 unless
 *  its model stacks them, #model_info::vertex_lstm), and in @p sent_back the largest gradient the
 *  layers above handed to the outputs of the ones below in the last run (0 with one layer). */
int fusion_temporal_stack(const void *state, double *sent_back);

/** For engine_options::inspect: the groups' counts of a technique_fusion_spatial @p state (the
 *  arrays in the copy belong to the state, which frees them: read only its counts). */
fusion_groups fusion_spatial_groups(const void *state);

#ifdef __cplusplus
}
#endif

#endif
