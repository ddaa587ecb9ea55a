/**
 * @file verify/techniques/schedule.h
 * @brief What a caller of technique_schedule (chapter 07) may set and reuse: its variants, the
 *        training its rows use, the parameters a sweep passes to engine_run() for the greedy
 *        variant, and the window times every row predicts with.
 */
#ifndef TWOFOLD_VERIFY_TECHNIQUES_SCHEDULE_H
#define TWOFOLD_VERIFY_TECHNIQUES_SCHEDULE_H

#include <stdint.h>

#include "ref/train.h"
#include "verify/techniques/table.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The variants of technique_schedule, in technique::variants order. */
enum { SCHEDULE_VARIANT_GREEDY, SCHEDULE_VARIANT_GRADIENT, SCHEDULE_VARIANT_TRAIN };

/** The rows' training: windows of 4 (stride 1), T-GCN hidden 8, 2 epochs; greedy schedules for 4 ranks. */
enum { SCHEDULE_WINDOW = 4, SCHEDULE_HIDDEN = 8, SCHEDULE_EPOCHS = 2, GREEDY_RANKS = 4 };

/** The cost model every row predicts a window's time with (seconds per row, per edge, per group). */
#define SCHEDULE_LINEAR_COST "linear:1e-6,1e-7,1e-4"

/** technique_context::params of the greedy variant: its own times and rank count instead of the
 *  data's windows on 4 ranks. NULL: the defaults. */
typedef struct schedule_params {
    const double *times;  /**< [groups] */
    int64_t groups;       /**< how many */
    int ranks;            /**< the ranks scheduled for */
} schedule_params;

/**
 * The times of the windows of @p tr's schedule on @p seq under #SCHEDULE_LINEAR_COST, into
 * *times [*groups] (allocated here, freed by the caller; NULL on failure).
 */
int schedule_linear_times(const trainer *tr, const snapshot_seq *seq, double **times, int64_t *groups, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
