#include "ref/adam.h"

#include <math.h>
#include <string.h>

int adam_create(adam *optimizer, const parameter_list *parameters, double learning_rate, tf_error *err)
{
    memset(optimizer, 0, sizeof *optimizer);
    optimizer->learning_rate = learning_rate;
    optimizer->beta1 = 0.9;
    optimizer->beta2 = 0.999;
    optimizer->epsilon = 1e-8;
    for (int64_t i = 0; i < parameters->count; i++) {
        const parameter *p = &parameters->items[i];
        if (parameters_add(&optimizer->moments, p->name, p->value.ndim, p->value.shape, err) < 0) {
            adam_free(optimizer);
            return TF_ERR_INPUT;
        }
    }
    return TF_OK;
}

void adam_free(adam *optimizer) { parameters_free(&optimizer->moments); }

void ref_adam_step(adam *optimizer, parameter_list *parameters)
{
    optimizer->step++;
    /* torch computes the bias corrections in double (Python floats) and the update in the
     * parameter's type; so does this. */
    double correction1 = 1.0 - pow(optimizer->beta1, (double)optimizer->step);
    double correction2 = 1.0 - pow(optimizer->beta2, (double)optimizer->step);
    float step_size = (float)(optimizer->learning_rate / correction1);
    float correction2_sqrt = (float)sqrt(correction2);
    float beta1 = (float)optimizer->beta1, beta2 = (float)optimizer->beta2, epsilon = (float)optimizer->epsilon;
    for (int64_t i = 0; i < parameters->count; i++) {
        parameter *p = &parameters->items[i];
        float *m = optimizer->moments.items[i].value.data, *v = optimizer->moments.items[i].grad.data;
        for (int64_t k = 0; k < p->value.size; k++) {
            float g = p->grad.data[k];
            m[k] = beta1 * m[k] + (1.0f - beta1) * g;
            v[k] = beta2 * v[k] + (1.0f - beta2) * g * g;
            float denominator = sqrtf(v[k]) / correction2_sqrt + epsilon;
            p->value.data[k] -= step_size * m[k] / denominator;
        }
    }
}
