#include "ref/nn/sgd.h"

void ref_sgd_step(parameter_list *parameters, double learning_rate)
{
    /* torch multiplies the gradient by lr in the parameter's type: so does this. */
    const float lr = (float)learning_rate;
    for (int64_t i = 0; i < parameters->count; i++) {
        parameter *p = &parameters->items[i];
        for (int64_t k = 0; k < p->value.size; k++)
            p->value.data[k] -= lr * p->grad.data[k];
    }
}
