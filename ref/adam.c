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

adam_step_constants adam_step_begin(adam *optimizer)
{
    optimizer->step++;
    /* torch computes the bias corrections in double (Python floats) and the update in the
     * parameter's type; so does this. */
    double correction1 = 1.0 - pow(optimizer->beta1, (double)optimizer->step);
    double correction2 = 1.0 - pow(optimizer->beta2, (double)optimizer->step);
    adam_step_constants k;
    k.beta1 = (float)optimizer->beta1;
    k.beta2 = (float)optimizer->beta2;
    k.one_minus_beta1 = 1.0f - k.beta1;
    k.one_minus_beta2 = 1.0f - k.beta2;
    k.step_size = (float)(optimizer->learning_rate / correction1);
    k.correction2_sqrt = (float)sqrt(correction2);
    k.epsilon = (float)optimizer->epsilon;
    return k;
}

void ref_adam_step(adam *optimizer, parameter_list *parameters)
{
    const adam_step_constants k = adam_step_begin(optimizer);
    for (int64_t i = 0; i < parameters->count; i++) {
        parameter *p = &parameters->items[i];
        float *m = optimizer->moments.items[i].value.data, *v = optimizer->moments.items[i].grad.data;
        for (int64_t e = 0; e < p->value.size; e++)
            adam_update_element(&k, p->grad.data[e], &p->value.data[e], &m[e], &v[e]);
    }
}
