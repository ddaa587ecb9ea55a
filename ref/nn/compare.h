/**
 * @file ref/nn/compare.h
 * @brief The two comparisons every twin check uses: the fp error and the count of values whose
 *        bits differ (chapters/00-overview.md, "What equal means").
 */
#ifndef TWOFOLD_REF_COMPARE_H
#define TWOFOLD_REF_COMPARE_H

#include <stdint.h>

#include "ref/nn/parameters.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The fp error: the largest |ours - reference| / max(1, |reference|) over @p n values; infinity
 * if any is NaN, so a NaN can never pass a tolerance.
 * @param ours       [n] the twin's values
 * @param reference  [n] the reference's values
 * @param n          how many values
 */
double relative_error(const float *ours, const float *reference, int64_t n);

/**
 * How many of @p n values differ bit for bit (0 = bitwise equal).
 * @param a  [n] values
 * @param b  [n] values
 * @param n  how many values
 */
int64_t differing_values(const float *a, const float *b, int64_t n);

/**
 * How many of @p n doubles differ bit for bit (timestamps; 0 = bitwise equal).
 * @param a  [n] values
 * @param b  [n] values
 * @param n  how many
 */
int64_t differing_doubles(const double *a, const double *b, int64_t n);

/** relative_error() over the values of every parameter of two lists of the same layout. */
double parameters_relative_error(const parameter_list *ours, const parameter_list *reference);

/** differing_values() summed over the values of every parameter of two lists of the same layout. */
int64_t parameters_differing_values(const parameter_list *a, const parameter_list *b);

#ifdef __cplusplus
}
#endif

#endif
