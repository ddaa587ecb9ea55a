/* Finite-difference gradient checks: the machinery shared by verify/test_gradcheck.c (whose
 * opening comment derives the step and the tolerance) and verify/test_event_gradcheck.c.
 * A check builds a scalar L (usually sum(r * y) with a fixed random r), runs the backward with
 * dy = r, and compares each analytic gradient element with (L(v + h) - L(v - h)) / 2h.
 * Header-only, test-only. */
#ifndef TWOFOLD_VERIFY_GRADCHECK_H
#define TWOFOLD_VERIFY_GRADCHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ref/core/rng.h"
#include "verify/testing.h"

#define STEP 1e-3f
#define TOLERANCE 1e-3

typedef double (*scalar_fn)(void *context);

/* Worst error of `analytic` against central differences of `loss` over `values`. */
static inline double finite_difference_error(scalar_fn loss, void *context, float *values, const float *analytic,
                                             int64_t count)
{
    double worst = 0;
    for (int64_t i = 0; i < count; i++) {
        float saved = values[i];
        values[i] = saved + STEP;
        double plus = loss(context);
        values[i] = saved - STEP;
        double minus = loss(context);
        values[i] = saved;
        double numeric = (plus - minus) / (2.0 * (double)STEP);
        double error = fabs(analytic[i] - numeric) / fmax(1.0, fabs(numeric));
        worst = fmax(worst, error);
    }
    return worst;
}

static inline void fill_random(float *values, int64_t count, double scale, rng *r)
{
    for (int64_t i = 0; i < count; i++)
        values[i] = (float)(scale * (2.0 * rng_uniform(r) - 1.0));
}

static inline float *random_array(int64_t count, double scale, rng *r)
{
    float *values = calloc((size_t)count, sizeof *values);
    ck_assert_ptr_nonnull(values);
    fill_random(values, count, scale, r);
    return values;
}

static inline float *zero_array(int64_t count)
{
    float *values = calloc((size_t)(count ? count : 1), sizeof *values);
    ck_assert_ptr_nonnull(values);
    return values;
}

/* sum(r * y) in double. */
static inline double projected(const float *r, const float *y, int64_t count)
{
    double sum = 0;
    for (int64_t i = 0; i < count; i++)
        sum += (double)r[i] * (double)y[i];
    return sum;
}

static inline void report(const char *what, double error)
{
    printf("gradcheck %-46s max error %.2e\n", what, error);
    ck_assert_msg(error <= TOLERANCE, "%s: finite differences disagree by %g", what, error);
}

#endif
