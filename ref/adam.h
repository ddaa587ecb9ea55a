/**
 * @file ref/adam.h
 * @brief Adam (Kingma and Ba, 2015), bias-corrected exactly as torch.optim.Adam computes it.
 *
 * For each parameter p with gradient g, at step t = 1, 2, ...:
 *
 *     m = beta1 m + (1 - beta1) g
 *     v = beta2 v + (1 - beta2) g^2
 *     p = p - (lr / (1 - beta1^t)) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
 *
 * (torch's default, non-fused, non-amsgrad, no weight decay). The moments are kept per
 * parameter in the same order as the model's parameter_list, and saved beside the
 * parameters in a checkpoint so a resumed run continues exactly.
 */
#ifndef TWOFOLD_REF_ADAM_H
#define TWOFOLD_REF_ADAM_H

#include <math.h>
#include <stdint.h>

#include "ref/error.h"
#include "ref/parameters.h"

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

/** Create Adam for @p parameters with torch's defaults and the given learning rate. */
int adam_create(adam *optimizer, const parameter_list *parameters, double learning_rate, tf_error *err);

/** Release the moments. */
void adam_free(adam *optimizer);

/** One update of every parameter from its gradient (gradients are left unchanged). */
void ref_adam_step(adam *optimizer, parameter_list *parameters);

/**
 * What every element's update in one step shares, formed once per step by adam_step_constants().
 * (The names follow the branch that forms them as torch does, issue 17 point 5; this one keeps
 * today's arithmetic.)
 */
typedef struct adam_constants {
    float beta1;              /**< (float)beta1 */
    float moment1_weight;     /**< 1.0f - (float)beta1 */
    float beta2;              /**< (float)beta2 */
    float moment2_weight;     /**< 1.0f - (float)beta2 */
    float correction2_sqrt;   /**< (float)sqrt(1 - beta2^t) */
    float epsilon;            /**< (float)eps */
    float negative_step_size; /**< -(float)(lr / (1 - beta1^t)) */
} adam_constants;

/**
 * Adam's update of one element, the only place its arithmetic is written: ref_adam_step() and its
 * optimized twin (opt/kernels.h) both loop over elements calling it, so they round exactly alike.
 * @p p, @p m and @p v are the parameter and its two moments, updated in place; @p g its gradient.
 */
static inline void adam_update_element(const adam_constants *c, float *p, float *m, float *v, float g)
{
    *m = c->beta1 * *m + c->moment1_weight * g;
    *v = c->beta2 * *v + c->moment2_weight * g * g;
    float denominator = sqrtf(*v) / c->correction2_sqrt + c->epsilon;
    *p = *p + (c->negative_step_size * *m) / denominator;
}

/** The constants of step @p step (1-based) of @p optimizer; see adam_constants. */
adam_constants adam_step_constants(const adam *optimizer, int64_t step);

#ifdef __cplusplus
}
#endif

#endif
