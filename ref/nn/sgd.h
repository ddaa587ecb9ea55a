/**
 * @file ref/nn/sgd.h
 * @brief Plain stochastic gradient descent: p = p - lr g (torch.optim.SGD without momentum,
 *        dampening or weight decay).
 *
 * Adam is the trainers' default (ref/nn/adam.h). SGD is here because it is linear in the
 * gradient: one SGD step on the mean of R replicas' gradients equals the weighted mean of R
 * replicas that each took their own step, up to float rounding. Chapter 05 uses that to check
 * DynaHB's model averaging against synchronous training (with Adam the two differ by design).
 */
#ifndef TWOFOLD_REF_SGD_H
#define TWOFOLD_REF_SGD_H

#include "ref/nn/parameters.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One update of every parameter from its gradient: p = p - (float)lr * g, in float. Gradients
 *  are left unchanged. */
void ref_sgd_step(parameter_list *parameters, double learning_rate);

#ifdef __cplusplus
}
#endif

#endif
