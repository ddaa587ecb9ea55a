/**
 * @file ref/nn/adam.h
 * @brief Adam (Kingma and Ba, 2015), bias-corrected exactly as torch.optim.Adam computes it.
 *
 * For each parameter p with gradient g, at step t = 1, 2, ...:
 *
 *     m = m + (1 - beta1) (g - m)                       (= beta1 m + (1 - beta1) g)
 *     v = beta2 v + (1 - beta2) g^2
 *     p = p - (lr / (1 - beta1^t)) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
 *
 * (torch's default on CPU tensors: _single_tensor_adam, non-amsgrad, no weight decay). Not
 * only the formula but its rounding follows torch 2.15's, so that parameters stay equal to
 * torch's over many steps, not just one: the constants are formed in double (torch's are
 * Python floats) and rounded to float once, where torch's kernels convert a Python scalar
 * to the tensor's type (adam_step_constants()), and each element is updated with the same
 * float operations in the same order (adam_update_element()). Forming 1 - beta2 in float,
 * as an earlier version did, gives 9.9998713e-4 instead of 0.001: every single step still
 * agrees with torch's within 1e-5, but the second moments are 1.3e-5 too small and the
 * parameters drift (chapter 01 measures how far).
 *
 * The moments are kept per parameter in the same order as the model's parameter_list, and
 * saved beside the parameters in a checkpoint so a resumed run continues exactly.
 */
#ifndef TWOFOLD_REF_ADAM_H
#define TWOFOLD_REF_ADAM_H

#include <math.h>
#include <stdint.h>

#include "ref/core/error.h"
#include "ref/nn/parameters.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The optimizer's settings and state. Owns its moment tensors; free with adam_free(). */
typedef struct adam {
    double learning_rate;   /**< lr (torch default 1e-3) */
    double beta1;           /**< first-moment decay (0.9) */
    double beta2;           /**< second-moment decay (0.999) */
    double epsilon;         /**< eps (1e-8) */
    int64_t step;           /**< number of steps taken */
    parameter_list moments; /**< for each parameter: value = m (exp_avg), grad = v (exp_avg_sq) */
} adam;

/**
 * One step's constants as torch.optim.Adam forms them: each is computed in double from the
 * double settings (torch's Python floats) and rounded to float once, as torch's CPU kernels
 * convert a Python scalar argument to a float tensor's type.
 */
typedef struct adam_constants {
    float moment1_weight;     /**< (float)(1 - beta1): exp_avg.lerp_(g, 1 - beta1) */
    float beta2;              /**< (float)beta2: exp_avg_sq.mul_(beta2) */
    float moment2_weight;     /**< (float)(1 - beta2): .addcmul_(g, g, value=1 - beta2) */
    float correction2_sqrt;   /**< (float)(1 - beta2^t)^0.5: exp_avg_sq.sqrt() / bias_correction2_sqrt */
    float epsilon;            /**< (float)eps: .add_(eps) */
    float negative_step_size; /**< (float)-(lr / (1 - beta1^t)): param.addcdiv_(m, denom, value=-step_size) */
} adam_constants;

/**
 * Adam's update of one element, the only place its arithmetic is written: ref_adam_step()
 * and any faster twin call it, so they round exactly alike. @p p, @p m and @p v are the
 * parameter and its two moments, updated in place; @p g its gradient.
 *
 * Each line is one of torch's in-place operations, rounded as its vectorized CPU kernel
 * (AVX2) rounds it, which for 2.15 was measured element by element against torch:
 *  - exp_avg.lerp_(g, w) is m + w (g - m) with one fused multiply-add (torch's lerp_vec
 *    calls fmadd);
 *  - exp_avg_sq.mul_(beta2) is one float product, and addcmul_(g, g, value=w) is
 *    (w g) g + v with the last product and the sum fused (torch's compiler contracts them);
 *  - the denominator is sqrt(v) / sqrt(1 - beta2^t) + eps in float, and addcdiv_ is
 *    p + (-step_size m) / denom.
 * fmaf() keeps a single rounding on any machine (a libm call where the compiler may not
 * assume FMA instructions). torch's sqrt of a large tensor is MKL's vsSqrt, which is within
 * one ulp rather than correctly rounded; sqrtf() is correctly rounded, so an element may
 * differ from torch's by an ulp there and nowhere else.
 */
static inline void adam_update_element(const adam_constants *c, float *p, float *m, float *v, float g)
{
    *m = fmaf(c->moment1_weight, g - *m, *m);
    *v = fmaf(c->moment2_weight * g, g, *v * c->beta2);
    float denominator = sqrtf(*v) / c->correction2_sqrt + c->epsilon;
    *p = *p + (c->negative_step_size * *m) / denominator;
}

/** The constants of step @p step (1-based) of @p optimizer; see adam_constants. */
adam_constants adam_step_constants(const adam *optimizer, int64_t step);

/** Create Adam for @p parameters with torch's defaults and the given learning rate. */
int adam_create(adam *optimizer, const parameter_list *parameters, double learning_rate, tf_error *err);

/** Release the moments. */
void adam_free(adam *optimizer);

/** One update of every parameter from its gradient (gradients are left unchanged). */
void ref_adam_step(adam *optimizer, parameter_list *parameters);

#ifdef __cplusplus
}
#endif

#endif
