/**
 * @file opt/profile.h
 * Twins: none — a wrapper around any #kernels table that times its calls and counts their work.
 * @brief `twofold train --profile`: where an epoch's time goes, kernel family by kernel family,
 *        against this machine's measured peaks and the roofline bound they give.
 *
 * profile_wrap() returns a #kernels table (ref/nn/kernels.h) that calls the model's own table and
 * times every call with the monotonic clock (ref/core/clock.h), so the models and trainers are not
 * touched: whatever runs through the table is counted. Each call adds to its family's counters
 * the work a formula gives from the call's arguments (floats are 4 bytes; n rows, in and out
 * widths, nnz the operator's edges, w the width it propagates (GAT: heads x channels), H the hidden width):
 *
 * | family        | kernels                                 | FLOPs                     | bytes (each operand once)         |
 * |---------------|-----------------------------------------|---------------------------|-----------------------------------|
 * | dense         | linear_*, matmul_* (per product)        | 2 n in out                | 4 (n in + in out + n out)         |
 * | sparse        | propagate_forward, propagate_backward   | 2 (nnz + n) w             | 8 nnz + 4 n + 8 n w               |
 * |               | graph_attention_edges_forward (backward) | 2 (nnz + n) w + 4 n w (x2 for the scatter and the score gradient) | 8 (nnz + n) + 4 (nnz + n) heads + 8 n w |
 * | cells         | gru_cell_forward (backward: per gradient asked) | 6 n H (in + H)    | 4 (n (in + H) + 3 H (in + H) + 5 n H) |
 * |               | lstm_pointwise_forward / _backward      | -                         | 44 n H / 56 n H                   |
 * | activations   | sigmoid, tanh, relu, add_bias (+ backward) | -                      | 8 count (backward 16 count); bias 8 n w + 4 w, its backward 4 n w |
 * | loss          | mse_loss                                | -                         | 12 n w + n                        |
 * | adam          | adam_step                               | -                         | 28 per parameter element          |
 * | copies        | copy_rows (tape, gradient packing, evaluation output) | -           | 8 rows width                      |
 * | communication | the blocking all-reduces (opt/comm.h)   | -                         | the bytes comm counts as sent     |
 *
 * A linear_backward is one product for dx and one for dweight (each present), plus n out FLOPs
 * for dbias. The dense products also record their distinct (n, in, out) shapes, with the FLOPs
 * run at each, so the SGEMM peak is measured at the shapes the run used.
 *
 * The roofline bound of the run: the sum over the computing families (all but communication) of
 * max(FLOPs / peak FLOP rate, bytes / peak bandwidth); dense FLOPs at each shape's own SGEMM
 * rate. The peaks are measured by profile_measure_peaks() on one core, in the same run:
 * cblas_sgemm at each recorded shape, and STREAM's copy (8 bytes per element) and triad
 * (12 bytes per element) over arrays of 128 MiB, well past the last-level cache.
 *
 * The table's functions take no context, so one profile runs at a time in a process (the
 * counters are this file's).
 */
#ifndef TWOFOLD_OPT_PROFILE_H
#define TWOFOLD_OPT_PROFILE_H

#include <stdint.h>
#include <stdio.h>

#include "ref/core/error.h"
#include "ref/nn/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The kernel families a profile counts. */
typedef enum profile_family {
    PROFILE_DENSE,         /**< linear_*, matmul_* */
    PROFILE_SPARSE,        /**< propagate_*, graph_attention_edges_* */
    PROFILE_CELLS,         /**< gru_cell_*, lstm_pointwise_* */
    PROFILE_ACTIVATIONS,   /**< sigmoid, tanh, relu, add_bias and their backwards */
    PROFILE_LOSS,          /**< mse_loss */
    PROFILE_ADAM,          /**< adam_step */
    PROFILE_COPIES,        /**< copy_rows: the data the models and trainers move */
    PROFILE_COMMUNICATION, /**< the blocking all-reduces, added by the caller (profile_add()) */
    PROFILE_FAMILIES
} profile_family;

/** Most distinct dense shapes recorded; FLOPs at further shapes are measured at the mix's rate. */
#define PROFILE_MAX_SHAPES 64

/** One distinct dense product shape and the FLOPs the run did at it. */
typedef struct profile_shape {
    int64_t n;    /**< rows */
    int64_t in;   /**< input width */
    int64_t out;  /**< output width */
    double flops; /**< FLOPs the run did at this shape */
} profile_shape;

/** What a profile counted. */
typedef struct profile_counters {
    int64_t calls[PROFILE_FAMILIES];          /**< calls of each family's kernels */
    double seconds[PROFILE_FAMILIES];         /**< wall seconds inside them */
    double flops[PROFILE_FAMILIES];           /**< FLOPs by the formulas above */
    double bytes[PROFILE_FAMILIES];           /**< bytes by the formulas above */
    profile_shape shapes[PROFILE_MAX_SHAPES]; /**< distinct dense shapes, in first-seen order */
    int shape_count;                          /**< shapes recorded */
    double unshaped_flops; /**< dense FLOPs at shapes past PROFILE_MAX_SHAPES */
} profile_counters;

/** The machine's peaks, measured on one core. */
typedef struct profile_peaks {
    double shape_seconds[PROFILE_MAX_SHAPES]; /**< one SGEMM at each recorded shape, best of its repeats */
    double sgemm_rate;  /**< FLOP/s of the dense FLOPs at their shapes: their FLOPs / their SGEMM time */
    double copy_rate;   /**< bytes/s of STREAM's copy */
    double triad_rate;  /**< bytes/s of STREAM's triad */
} profile_peaks;

/** The family's name in the table ("dense", "sparse", ...). */
const char *profile_family_name(profile_family family);

/**
 * A table that runs @p inner's kernels and counts each call. Zeroes the counters. @p inner must
 * outlive the table's use.
 */
const kernels *profile_wrap(const kernels *inner);

/** The counters of the table profile_wrap() returned. */
profile_counters *profile_counters_now(void);

/** Add @p calls calls, @p seconds and @p bytes to @p family (the caller's own measurements: communication). */
void profile_add(profile_family family, int64_t calls, double seconds, double bytes);

/** Measure the peaks on one core: cblas_sgemm at @p counters' shapes, STREAM copy and triad. */
int profile_measure_peaks(const profile_counters *counters, profile_peaks *peaks, tf_error *err);

/**
 * Seconds the roofline allows @p family's work: max(FLOPs / peak, bytes / bandwidth), the dense
 * FLOPs at their shapes' SGEMM rates; 0 for communication (not bounded by this core).
 */
double profile_bound(const profile_counters *counters, const profile_peaks *peaks, profile_family family);

/**
 * Print the table: per family calls, seconds, % of @p epoch_seconds, GFLOP, GB, the achieved rates,
 * the roofline bound and seconds / bound; then the peaks and the bound of the run against
 * @p epoch_seconds.
 * @p whose says whose counters these are (e.g. "rank 0's own").
 */
void profile_print(FILE *out, const profile_counters *counters, const profile_peaks *peaks, double epoch_seconds,
                   int64_t epochs, const char *whose);

#ifdef __cplusplus
}
#endif

#endif
