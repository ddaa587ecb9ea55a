#include "chebconv.h"

#include <stdio.h>

#include "layers.h"

int64_t ref_chebconv_add(parameter_list *list, const char *prefix, int k, int64_t in, int64_t out, rng *r,
                         tf_error *err)
{
    char name[96];
    int64_t bias_shape[1] = {out}, weight_shape[2] = {out, in};
    snprintf(name, sizeof name, "%s.bias", prefix);
    int64_t first = parameters_add(list, name, 1, bias_shape, err);
    for (int j = 0; first >= 0 && j < k; j++) {
        snprintf(name, sizeof name, "%s.lins.%d.weight", prefix, j);
        int64_t index = parameters_add(list, name, 2, weight_shape, err);
        if (index < 0)
            return -1;
        parameter_init_glorot(&list->items[index], r);
    }
    return first;
}

void ref_chebconv_accumulate(const parameter *conv, int k, const float *basis, int64_t n, int64_t in, int64_t out,
                             float *y)
{
    for (int j = 0; j < k; j++)
        ref_linear_accumulate(basis + j * n * in, conv[1 + j].value.data, n, in, out, y);
    ref_add_bias(y, conv[0].value.data, n, out);
}

void ref_chebconv_backward(parameter *conv, int k, const float *basis, const float *dy, int64_t n, int64_t in,
                           int64_t out, float *d_basis)
{
    for (int j = 0; j < k; j++)
        ref_linear_backward(basis + j * n * in, conv[1 + j].value.data, dy, n, in, out,
                            d_basis ? d_basis + j * n * in : NULL, conv[1 + j].grad.data, NULL);
    ref_add_bias_backward(dy, n, out, conv[0].grad.data);
}
