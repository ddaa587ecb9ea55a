/**
 * @file ref/schedule_cost.h
 * @brief What a group (training window) costs: its size in rows and edges, and the linear
 *        model t = a rows + b edges + c fitted to measured times.
 *
 * DyGNeX measures every group's time with a profiler and uses a linear model of snapshot
 * sizes only to simulate large machines ([DyGNeX] §5.4, App. H, Eq. 31). Here the model does
 * both jobs when asked: `--cost linear:A,B,C` gives deterministic times (tests, resumable
 * runs), and a fit of measured times says how well sizes explain them (its residual).
 *
 * A group's rows are the sum over its snapshots of the vertex count (every model computes every
 * row, present or not); its edges the sum of the snapshots' edge counts.
 */
#ifndef TWOFOLD_REF_SCHEDULE_COST_H
#define TWOFOLD_REF_SCHEDULE_COST_H

#include <stdint.h>

#include "ref/core/error.h"
#include "ref/data/snapshot.h"
#include "ref/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The rows and edges of every window of @p windows (the trainer's, so they cannot drift from
 * what it trains) on @p seq.
 * (@p rows: out [windows->windows].)
 * (@p edges: out [windows->windows].)
 */
void schedule_group_sizes(const train_schedule *windows, const snapshot_seq *seq, int64_t *rows, int64_t *edges);

/** t = per_row rows + per_edge edges + per_group: a fitted or given linear cost. */
typedef struct cost_model {
    double per_row;      /**< a: seconds per row */
    double per_edge;     /**< b: seconds per edge */
    double per_group;    /**< c: seconds per group */
    int dropped;         /**< columns left out of a fit as collinear: bit 0 rows, bit 1 edges */
    double residual;     /**< root mean square of the fit's residuals over the mean time (0 for a given model) */
    double r_squared;    /**< 1 - residual sum of squares / total sum of squares (1 when the times are constant) */
} cost_model;

/**
 * Least squares of @p seconds on [rows, edges, 1]: columns scaled to a largest |value| of 1,
 * modified Gram-Schmidt, and a column whose part orthogonal to the earlier ones is below 1e-9
 * of its norm is dropped (coefficient 0, its bit set in `dropped`): with full windows on a
 * fixed vertex set the rows are constant, the same column as the intercept. Needs n >= 2.
 * (@p rows: [n].)
 * (@p edges: [n].)
 * (@p seconds: [n] measured times.)
 */
int cost_model_fit(const int64_t *rows, const int64_t *edges, const double *seconds, int64_t n, cost_model *out,
                   tf_error *err);

/** The model's time for a group of @p rows rows and @p edges edges. */
double cost_model_predict(const cost_model *m, int64_t rows, int64_t edges);

/** Parse "linear:A,B,C" (three finite numbers: seconds per row, per edge, per group); an input
 *  error names the expected form. The times it predicts are checked where they are used. */
int cost_model_parse(const char *text, cost_model *out, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
