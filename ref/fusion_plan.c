#include "ref/fusion_plan.h"

#include "ref/fusion_sequences.h"

#include <stdlib.h>
#include <string.h>

void fusion_plan_free(fusion_plan *plan)
{
    free(plan->active);
    free(plan->step_offset);
    free(plan->reset);
    free(plan->row_of_step);
    free(plan->lane_of_sequence);
    free(plan->start_of_sequence);
    memset(plan, 0, sizeof *plan);
}

double fusion_plan_computed_per_useful(const fusion_plan *plan)
{
    return plan->useful_rows ? (double)plan->computed_rows / (double)plan->useful_rows : 0.0;
}

double fusion_plan_occupancy(const fusion_plan *plan)
{
    double grid = (double)plan->num_lanes * (double)plan->num_steps;
    return grid > 0 ? (double)plan->useful_rows / grid : 0.0;
}

void fusion_plan_attention_starts(const fusion_plan *plan, const sequence_set *set, int32_t *starts)
{
    const int64_t lanes = plan->num_lanes;
    for (int64_t t = 0; t < plan->num_steps; t++)
        for (int64_t lane = 0; lane < lanes; lane++)
            starts[t * lanes + lane] = (int32_t)t; /* empty until a sequence fills it */
    for (int64_t s = 0; s < set->count; s++) {
        const int64_t start = plan->start_of_sequence[s], length = set->offsets[s + 1] - set->offsets[s];
        for (int64_t t = start; t < start + length; t++)
            starts[t * lanes + plan->lane_of_sequence[s]] = (int32_t)start;
    }
}
