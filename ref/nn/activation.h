/**
 * @file ref/nn/activation.h
 * @brief The project's own float exp, logistic sigmoid and tanh: branch-free, so that a loop
 *        over them vectorizes, and written once, so that ref and opt call the same bits.
 *
 * Why not libm. expf() and tanhf() are opaque calls: without -ffast-math the compiler cannot
 * swap in a vector libm, so every element of every gate paid a scalar call, and the
 * activations were a third of an optimized epoch (`twofold train --profile`). These functions
 * are plain arithmetic, compares and selects on float and int32 lanes, so gcc -O2 vectorizes a
 * loop over them (under `#pragma omp simd`, see below). Both the reference
 * (ref/nn/layers.c, ref/nn/recurrent.c) and the optimized twins (opt/kernels.c, and opt/fusion.c
 * through ref/nn/recurrent_gates.h) call them, and ISO C mode neither contracts a * b + c nor
 * reassociates, so the twins stay bitwise equal. The GPU keeps CUDA's own expf()/tanhf().
 *
 * How. exp(x) = 2^n exp(r) with n = round(x / ln 2) and r = x - n ln 2 (Cody-Waite: ln 2 split
 * into a high part with few significant bits, whose product with n is exact, and a low part),
 * |r| <= ln 2 / 2. exp(r) = 1 + r + r^2 P(r), P a degree-4 polynomial fitted to minimize the
 * relative error on that interval (0.07 ulp before rounding). 2^n is built from exponent bits
 * in two halves, so that n from -150 to 150 needs no branch: the first product is exact and
 * the second rounds once, also into the subnormal range. The input is clamped to
 * [-104, 104] (outside it exp rounds to 0 or overflows to inf anyway); NaN passes through.
 *
 * sigmoid(x) = 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0, with e = exp(-|x|), so
 * exp never overflows and tiny results (down to the subnormals) keep their relative accuracy;
 * the rounding of 1 + e is recovered exactly and corrects the quotient (without it the
 * negative side reached 2.1 ulp).
 *
 * tanh(|x|) = 1 - 2 / (exp(2|x|) + 1) for |x| >= 0.5625 (the result is above 1/2, so the
 * subtraction is exact and cancels nothing), and x + x^3 Q(x^2) below, Q a fitted degree-4
 * polynomial (0.04 ulp relative before rounding), so tanh of small x is accurate relative to
 * x; the sign is copied back, so tanh is exactly odd.
 *
 * Measured (verify/test_activation.c, every float in [-100, 100] at steps of 2^-12 plus
 * subnormals, +-0, +-large, +-inf, NaN, in float ulps against double exp/tanh):
 * exp 0.95 ulp, sigmoid 1.75 ulp, tanh 1.34 ulp at most; the test prints the figures and
 * fails above 1, 2 and 2 ulp. Limits are exact: sigmoid(-inf) = 0, sigmoid(inf) = 1,
 * tanh(+-inf) = +-1, tanh(+-0) = +-0; NaN in gives NaN out.
 */
#ifndef TWOFOLD_REF_ACTIVATION_H
#define TWOFOLD_REF_ACTIVATION_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/**
 * Loops over these functions vectorize under `#pragma omp simd` (ref/ is built with
 * -fopenmp-simd, which honours the simd pragmas and adds no threads; opt/ with OpenMP). The
 * pragma is needed: gcc's default -O2 cost model ("very cheap") declines these loops, and a
 * loop in place (y = f(x) with y == x, which the models do) would need an aliasing check it
 * does not add. It changes no rounding: every operation is the same IEEE one in every lane.
 */

/** 2^k as a float, from the exponent bits; -126 <= k <= 127. */
static inline float tf_exp2i(int32_t k)
{
    const uint32_t bits = (uint32_t)(k + 127) << 23;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/** e^x in float, within 1 ulp; branch-free (see the file comment). */
static inline float tf_expf(float x)
{
    /* Clamp |x| to 104 on its bits (an integer min, which is no branch: a compare and select
     * on floats lets gcc fold the clamped path to a constant and then keeps the rest of the
     * computation conditional, which stops if-conversion and so vectorization under the
     * default -ftrapping-math). e^104 overflows and e^-104 rounds to 0 as they should. */
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    const uint32_t magnitude = bits & 0x7fffffffu;
    const uint32_t clamped = magnitude < 0x42d00000u ? magnitude : 0x42d00000u; /* 104.0f */
    const uint32_t clamped_bits = clamped | (bits & 0x80000000u);
    float xc;
    memcpy(&xc, &clamped_bits, sizeof xc);
    /* n = round(x / ln 2): adding 1.5 * 2^23 rounds to an integer in round-to-nearest */
    const float shifter = 0x1.8p23f;
    const float n = (xc * 0x1.715476p+0f + shifter) - shifter;
    /* ln 2 = 0x1.62e4p-1 + 0x1.7f7d1cp-20: n * the high part is exact for |n| <= 256 */
    const float r = (xc - n * 0x1.62e4p-1f) - n * 0x1.7f7d1cp-20f;
    float p = 0x1.6a2416p-10f;
    p = p * r + 0x1.1239dcp-7f;
    p = p * r + 0x1.5558f2p-5f;
    p = p * r + 0x1.555492p-3f;
    p = p * r + 0x1.fffffcp-2f;
    const float er = 1.0f + (r + (r * r) * p);
    /* |n| <= 151: 2^n as two factors in the normal range; the first product is exact */
    const int32_t k = (int32_t)n;
    const int32_t half = k / 2;
    const float y = (er * tf_exp2i(half)) * tf_exp2i(k - half);
    /* a NaN in gives itself back: blended on the bits, for the same reason as the clamp */
    uint32_t y_bits;
    memcpy(&y_bits, &y, sizeof y_bits);
    const uint32_t nan_mask = 0u - (uint32_t)(magnitude > 0x7f800000u);
    y_bits = (y_bits & ~nan_mask) | (bits & nan_mask);
    float out;
    memcpy(&out, &y_bits, sizeof out);
    return out;
}

/** The logistic function 1 / (1 + e^-x), within 2 ulp; branch-free. */
static inline float tf_sigmoidf(float x)
{
    const float e = tf_expf(-fabsf(x));
    const float numerator = x >= 0.0f ? 1.0f : e;
    /* 1 + e rounds; its error (1 - d) + e is exact (e <= 1) and corrects the quotient, which
     * keeps the negative side, where the result is about e, within 2 ulp */
    const float d = 1.0f + e;
    const float d_error = (1.0f - d) + e;
    const float q = numerator / d;
    /* the correction q * d_error / d is below half an ulp of q, so 1/d needs no accuracy:
     * 1.457 - d/2 is within 6 % of it on [1, 2] (saves a second division) */
    return q - q * (d_error * (1.4571f - 0.5f * d));
}

/** The hyperbolic tangent, within 2 ulp; branch-free and exactly odd. */
static inline float tf_tanhf(float x)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    const uint32_t magnitude = bits & 0x7fffffffu;
    float a;
    memcpy(&a, &magnitude, sizeof a);
    /* large branch: the result is >= 1/2, so 1 - q (q <= 1/2) is exact */
    const float large = 1.0f - 2.0f / (tf_expf(2.0f * a) + 1.0f);
    /* small branch: odd polynomial, relative accuracy down to the subnormals */
    const float s = a * a;
    float q = -0x1.94b8bap-8f;
    q = q * s + 0x1.582344p-6f;
    q = q * s - 0x1.b907cep-5f;
    q = q * s + 0x1.110c6ap-3f;
    q = q * s - 0x1.555548p-2f;
    const float small = a + a * (s * q);
    /* pick one on the bits and put the sign back (a float select would let gcc make the
     * branches conditional again, see tf_expf); a NaN takes the large branch and stays NaN */
    uint32_t large_bits, small_bits;
    memcpy(&large_bits, &large, sizeof large_bits);
    memcpy(&small_bits, &small, sizeof small_bits);
    const uint32_t small_mask = 0u - (uint32_t)(magnitude < 0x3f100000u); /* 0.5625f */
    const uint32_t out_bits = ((small_bits & small_mask) | (large_bits & ~small_mask)) | (bits & 0x80000000u);
    float out;
    memcpy(&out, &out_bits, sizeof out);
    return out;
}

#endif /* TWOFOLD_REF_ACTIVATION_H */
