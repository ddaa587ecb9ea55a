/**
 * @file ref/fusion_plan.h
 * @brief The batched layout of a #sequence_set that DGC's temporal fusion runs: a grid of lanes
 *        by steps. The reference never uses it (it runs each sequence alone); the two twins do:
 *        opt/fusion.h builds plans and runs them on the CPU, cuda/fusion.h runs them on a GPU.
 *        The type lives here so that neither twin depends on the other.
 *
 * Ownership: a plan owns its arrays; fusion_plan_free() releases them (safe on a zeroed plan).
 */
#ifndef TWOFOLD_REF_FUSION_PLAN_H
#define TWOFOLD_REF_FUSION_PLAN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sequence_set;

/** How a plan places sequences. */
typedef enum fusion_layout {
    FUSION_PADDED,   /**< one sequence per lane, zero-padded to T_max: the usual baseline */
    FUSION_LANES,    /**< DGC's temporal fusion: sequences end to end in shared lanes */
} fusion_layout;

/** Which terms the reset mask reaches (only the first is correct; the others show why). */
typedef enum fusion_mask_rule {
    FUSION_MASK_EVERY_GATE,        /**< the state itself is reset: every gate and the interpolation */
    FUSION_MASK_UPDATE_GATE_ONLY,  /**< DGC's Eq. 4 read literally (GRU only, forward only): wrong */
    FUSION_MASK_NONE,              /**< no mask at all (forward only): wrong */
} fusion_mask_rule;

/** A batched layout of a #sequence_set. Owns its arrays. */
typedef struct fusion_plan {
    fusion_layout layout;         /**< padded or lanes */
    fusion_mask_rule mask_rule;   /**< FUSION_MASK_EVERY_GATE unless a test changes it */
    int64_t num_lanes;            /**< batch rows */
    int64_t num_steps;            /**< lane length: T_max */
    int64_t *active;              /**< [num_steps] lanes 0 .. active[t]-1 are computed at step t */
    int64_t *step_offset;         /**< [num_steps + 1] row of (t, lane 0) in the step-major row arrays */
    int64_t computed_rows;        /**< rows the recurrence computes: step_offset[num_steps] */
    int64_t useful_rows;          /**< the sequence steps: sequence_set::total_steps */
    uint8_t *reset;               /**< [computed_rows] 1 where the carried state is replaced by zero */
    int64_t *row_of_step;         /**< [total_steps] the row of each sequence step (sequence order) */
    int64_t *lane_of_sequence;    /**< [count] the lane each sequence runs in */
    int64_t *start_of_sequence;   /**< [count] the step at which it starts in its lane */
} fusion_plan;

/**
 * The sub-sequence starts of self-attention over @p plan's lanes (ref/nn/self_attention.h): into
 * @p starts [num_steps][num_lanes], for each grid slot (t, lane) the step at which the sequence in that
 * slot starts (start_of_sequence), so that the attention's mask is block-diagonal and causal and
 * its positions restart with every sequence; a slot no sequence fills starts at itself (a sequence of
 * one, its output unused). A recurrence needs only the reset bit at each start (#fusion_plan::reset);
 * attention reads every earlier step, so every step must know where its own sequence began.
 * @p set is the set the plan was made for.
 */
void fusion_plan_attention_starts(const fusion_plan *plan, const struct sequence_set *set, int32_t *starts);

/** Release @p plan's arrays and zero it. */
void fusion_plan_free(fusion_plan *plan);

/** computed_rows / useful_rows: 1.00 means no step is wasted. */
double fusion_plan_computed_per_useful(const fusion_plan *plan);

/** useful_rows / (num_lanes * num_steps): how full the lane grid is. */
double fusion_plan_occupancy(const fusion_plan *plan);

#ifdef __cplusplus
}
#endif

#endif
