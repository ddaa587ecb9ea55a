#include "ref/nn/adam.h"

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
    /* torch's beta1, beta2, lr and eps are Python floats, so every constant below is formed in
     * double and rounded to float only once, where torch hands it to a float kernel:
     *  - 1 - beta1 and 1 - beta2 are differences of doubles (0.09999999999999998 and
     *    0.0010000000000000009), which round to 0.1f and 0.001f; 1.0f - 0.999f would be
     *    9.9998713e-4, 1.3e-5 off, and the moments would drift from torch's step by step;
     *  - the bias corrections use pow() in double as Python's ** does (step is a float there:
     *    torch keeps it in a float tensor and reads it back with item()), and
     *    bias_correction2 ** 0.5 is pow(x, 0.5), not sqrt(x) (the two could differ by an ulp);
     *  - step_size = lr / bias_correction1 stays double and is negated before its one rounding,
     *    as addcdiv_(..., value=-step_size) converts it. */
    double correction1 = 1.0 - pow(optimizer->beta1, (double)step);
    double correction2 = 1.0 - pow(optimizer->beta2, (double)step);
    double step_size = optimizer->learning_rate / correction1;
    adam_constants c;
    c.moment1_weight = (float)(1.0 - optimizer->beta1);
    c.beta2 = (float)optimizer->beta2;
    c.moment2_weight = (float)(1.0 - optimizer->beta2);
    c.correction2_sqrt = (float)pow(correction2, 0.5);
    c.epsilon = (float)optimizer->epsilon;
    c.negative_step_size = (float)-step_size;
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
