#include "ref/fusion_plan.h"

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
