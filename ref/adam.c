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

adam_constants adam_step_constants(const adam *optimizer, int64_t step)
{
    /* torch computes the bias corrections in double (Python floats) and the update in the
     * parameter's type; so does this. */
    double correction1 = 1.0 - pow(optimizer->beta1, (double)step);
    double correction2 = 1.0 - pow(optimizer->beta2, (double)step);
    adam_constants c;
    c.beta1 = (float)optimizer->beta1;
    c.moment1_weight = 1.0f - c.beta1;
    c.beta2 = (float)optimizer->beta2;
    c.moment2_weight = 1.0f - c.beta2;
    c.correction2_sqrt = (float)sqrt(correction2);
    c.epsilon = (float)optimizer->epsilon;
    c.negative_step_size = -(float)(optimizer->learning_rate / correction1); /* negation is exact */
    return c;
}

void ref_adam_step(adam *optimizer, parameter_list *parameters)
{
    optimizer->step++;
    const adam_constants c = adam_step_constants(optimizer, optimizer->step);
    for (int64_t i = 0; i < parameters->count; i++) {
        parameter *p = &parameters->items[i];
        float *m = optimizer->moments.items[i].value.data, *v = optimizer->moments.items[i].grad.data;
        for (int64_t k = 0; k < p->value.size; k++)
            adam_update_element(&c, &p->value.data[k], &m[k], &v[k], p->grad.data[k]);
    }
}
