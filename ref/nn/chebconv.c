#include "ref/nn/chebconv.h"

#include <stdio.h>
#include <string.h>

#include "ref/nn/layers.h"

int64_t chebconv_add(parameter_list *list, const char *prefix, int k, int64_t in, int64_t out, rng *r,
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

void chebconv_accumulate(const kernels *kernels, const parameter *conv, int k, const float *basis, int64_t n,
                         int64_t in, int64_t out, float *y)
{
    for (int j = 0; j < k; j++)
        kernels->linear_accumulate(basis + j * n * in, conv[1 + j].value.data, n, in, out, y);
    kernels->add_bias(y, conv[0].value.data, n, out);
}

void chebconv_backward(const kernels *kernels, parameter *conv, int k, const float *basis, const float *dy,
                       int64_t n, int64_t in, int64_t out, float *d_basis)
{
    for (int j = 0; j < k; j++)
        kernels->linear_backward(basis + j * n * in, conv[1 + j].value.data, dy, n, in, out,
                            d_basis ? d_basis + j * n * in : NULL, conv[1 + j].grad.data, NULL);
    kernels->add_bias_backward(dy, n, out, conv[0].grad.data);
}

void chebyshev_basis_forward(const kernels *kernels, const propagation *p, const float *x, int64_t width, int k,
                             float *basis)
{
    const int64_t size = propagation_rows(p) * width; /* [rows][width] blocks */
    kernels->copy_rows(basis, size, x, size, 1, size);
    if (k > 1)
        kernels->propagate_forward(p, x, width, basis + size);
    for (int j = 2; j < k; j++) {
        float *current = basis + j * size;
        kernels->propagate_forward(p, basis + (j - 1) * size, width, current);
        const float *before = basis + (j - 2) * size;
        for (int64_t i = 0; i < size; i++)
            current[i] = 2.0f * current[i] - before[i];
    }
}

void chebyshev_basis_backward(const kernels *kernels, const propagation *p, float *d_basis, int64_t width, int k,
                              float *dx)
{
    const int64_t size = propagation_rows(p) * width; /* [rows][width] blocks */
    /* Walk the recurrence backwards: T_j = 2 L^ T_{j-1} - T_{j-2} sends 2 L^T dT_j to
     * T_{j-1} and -dT_j to T_{j-2}; T_1 = L^ T_0 sends L^T dT_1 to T_0 = x. */
    for (int j = k - 1; j >= 2; j--) {
        float *gradient = d_basis + j * size;
        for (int64_t i = 0; i < size; i++) {
            d_basis[(j - 2) * size + i] -= gradient[i];
            gradient[i] *= 2.0f;
        }
        kernels->propagate_backward(p, gradient, width, d_basis + (j - 1) * size);
    }
    if (k > 1)
        kernels->propagate_backward(p, d_basis + size, width, d_basis);
    for (int64_t i = 0; i < size; i++)
        dx[i] += d_basis[i];
}
