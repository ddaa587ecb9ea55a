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

#ifdef __cplusplus
}
#endif

#endif
