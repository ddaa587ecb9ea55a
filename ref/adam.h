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

/** What every element's update in one step shares, formed once per step by adam_step_begin(). */
typedef struct adam_step_constants {
    float beta1;            /**< the first-moment decay, in float */
    float beta2;            /**< the second-moment decay, in float */
    float one_minus_beta1;  /**< 1 - beta1 */
    float one_minus_beta2;  /**< 1 - beta2 */
    float step_size;        /**< lr / (1 - beta1^t) */
    float correction2_sqrt; /**< sqrt(1 - beta2^t) */
    float epsilon;          /**< eps */
} adam_step_constants;

/** Count one more step in @p optimizer and form that step's constants. */
adam_step_constants adam_step_begin(adam *optimizer);

/**
 * One element's update: its moments m, v and its value from its gradient g. The one place the
 * arithmetic is written: ref_adam_step() and its optimized twin (opt/kernels.h) both loop over
 * elements calling it, so they are equal bit for bit.
 */
static inline void adam_update_element(const adam_step_constants *k, float g, float *value, float *m, float *v)
{
    *m = k->beta1 * *m + k->one_minus_beta1 * g;
    *v = k->beta2 * *v + k->one_minus_beta2 * g * g;
    float denominator = sqrtf(*v) / k->correction2_sqrt + k->epsilon;
    *value -= k->step_size * *m / denominator;
}

#ifdef __cplusplus
}
#endif

#endif
