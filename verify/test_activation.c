/* ref/nn/activation.h: the project's own exp, sigmoid and tanh against double-precision exp and
 * tanh, over every float in [-100, 100] at steps of 2^-12 and over all 2^32 bit patterns at a
 * stride (subnormals, huge values, infinities, NaNs included). Prints the largest error in
 * ulps of the correctly rounded result and fails above the bounds ref/nn/activation.h states. */
#include <float.h>
#include <math.h>

#include "ref/nn/activation.h"
#include "verify/testing.h"

/* The bounds ref/nn/activation.h documents. */
#define EXP_ULP 1.0
#define SIGMOID_ULP 2.0
#define TANH_ULP 2.0

/* The spacing of floats at the (exact) value @p exact, subnormals included. */
static double ulp_at(double exact)
{
    double magnitude = fabs(exact);
    if (magnitude < FLT_MIN)
        return ldexp(1.0, -149);
    return ldexp(1.0, ilogb(magnitude) - 23);
}

/* Error of @p got in ulps of @p exact; infinite if only one of them overflows float. */
static double ulp_error(float got, double exact)
{
    float rounded = (float)exact;
    if (isinf(rounded) || isinf(got))
        return got == rounded ? 0.0 : INFINITY;
    return fabs((double)got - exact) / ulp_at(exact);
}

typedef struct {
    double exp, sigmoid, tanh;     /* largest errors seen, in ulps */
    float exp_at, sigmoid_at, tanh_at;
    int64_t count;
} errors;

static void check_one(float x, errors *e)
{
    double exact_exp = exp((double)x);
    double err = ulp_error(tf_expf(x), exact_exp);
    if (err > e->exp) {
        e->exp = err;
        e->exp_at = x;
    }
    err = ulp_error(tf_sigmoidf(x), 1.0 / (1.0 + exp(-(double)x)));
    if (err > e->sigmoid) {
        e->sigmoid = err;
        e->sigmoid_at = x;
    }
    float t = tf_tanhf(x);
    err = ulp_error(t, tanh((double)x));
    if (err > e->tanh) {
        e->tanh = err;
        e->tanh_at = x;
    }
    /* exactly odd, bit for bit */
    float negative = tf_tanhf(-x);
    ck_assert_msg(memcmp(&negative, &(float){-t}, sizeof t) == 0, "tanh(-%a) != -tanh(%a)", (double)x, (double)x);
    e->count++;
}

static void report(const char *what, const errors *e)
{
    printf("%s: %lld inputs; max error exp %.3f ulp (at %a), sigmoid %.3f ulp (at %a), tanh %.3f ulp (at %a)\n", what,
           (long long)e->count, e->exp, (double)e->exp_at, e->sigmoid, (double)e->sigmoid_at, e->tanh,
           (double)e->tanh_at);
    ck_assert_msg(e->exp <= EXP_ULP, "exp error %.3f ulp above %.1f", e->exp, EXP_ULP);
    ck_assert_msg(e->sigmoid <= SIGMOID_ULP, "sigmoid error %.3f ulp above %.1f", e->sigmoid, SIGMOID_ULP);
    ck_assert_msg(e->tanh <= TANH_ULP, "tanh error %.3f ulp above %.1f", e->tanh, TANH_ULP);
}

START_TEST(dense_sweep)
{
    errors e = {0};
    for (int64_t i = -100 * 4096; i <= 100 * 4096; i++)
        check_one(ldexpf((float)i, -12), &e);
    report("[-100, 100] at 2^-12", &e);
}
END_TEST

START_TEST(bit_pattern_sweep)
{
    errors e = {0};
    for (uint64_t bits = 0; bits <= UINT32_MAX; bits += 4093) {
        uint32_t b = (uint32_t)bits;
        float x;
        memcpy(&x, &b, sizeof x);
        if (isnan(x))
            continue;
        check_one(x, &e);
    }
    /* small magnitudes, where tanh must be accurate relative to x: every 2^-20 binade step */
    for (int exponent = -149; exponent <= 0; exponent++)
        for (int step = 0; step < 64; step++) {
            float x = ldexpf(1.0f + step / 64.0f, exponent);
            check_one(x, &e);
            check_one(-x, &e);
        }
    report("all bit patterns at stride 4093, small magnitudes", &e);
}
END_TEST

START_TEST(limits_and_nan)
{
    ck_assert(tf_sigmoidf(-INFINITY) == 0.0f);
    ck_assert(tf_sigmoidf(INFINITY) == 1.0f);
    ck_assert(tf_sigmoidf(0.0f) == 0.5f && tf_sigmoidf(-0.0f) == 0.5f);
    ck_assert(tf_tanhf(INFINITY) == 1.0f);
    ck_assert(tf_tanhf(-INFINITY) == -1.0f);
    ck_assert(tf_tanhf(0.0f) == 0.0f && !signbit(tf_tanhf(0.0f)));
    ck_assert(tf_tanhf(-0.0f) == 0.0f && signbit(tf_tanhf(-0.0f)));
    ck_assert(tf_expf(INFINITY) == INFINITY);
    ck_assert(tf_expf(-INFINITY) == 0.0f);
    ck_assert(tf_expf(0.0f) == 1.0f);
    ck_assert(tf_expf(100.0f) == INFINITY);
    ck_assert(tf_expf(-200.0f) == 0.0f);
    ck_assert(tf_tanhf(FLT_MAX) == 1.0f && tf_tanhf(-FLT_MAX) == -1.0f);
    ck_assert(tf_sigmoidf(FLT_MAX) == 1.0f && tf_sigmoidf(-FLT_MAX) == 0.0f);
    /* the smallest subnormal: tanh(x) = x, sigmoid 1/2 */
    float tiny = ldexpf(1.0f, -149);
    ck_assert(tf_tanhf(tiny) == tiny && tf_tanhf(-tiny) == -tiny);
    ck_assert(tf_sigmoidf(tiny) == 0.5f);
    float nans[2] = {NAN, -NAN};
    for (int i = 0; i < 2; i++) {
        ck_assert(isnan(tf_expf(nans[i])));
        ck_assert(isnan(tf_sigmoidf(nans[i])));
        ck_assert(isnan(tf_tanhf(nans[i])));
    }
    printf("limits: sigmoid(-inf) = 0, sigmoid(inf) = 1, tanh(+-inf) = +-1, tanh(+-0) = +-0, NaN propagates\n");
}
END_TEST

/* Two suites; verify/CMakeLists.txt runs each as its own test (CK_RUN_SUITE): "activation" (the
 * limits, label unit, under Valgrind in CI) and "activation_sweeps" (a million inputs each, label
 * slow: pure arithmetic with nothing for Valgrind to check, and minutes under it). */
int main(void)
{
    const named_test limits[] = {{"limits_and_nan", limits_and_nan}};
    const named_test sweeps[] = {{"dense_sweep", dense_sweep}, {"bit_pattern_sweep", bit_pattern_sweep}};
    return run_suites(suite_of("activation", limits, sizeof limits / sizeof *limits, 120),
                      suite_of("activation_sweeps", sweeps, sizeof sweeps / sizeof *sweeps, 120));
}
