#include "ref/core/tensor.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"

int tensor_alloc(tensor *t, int ndim, const int64_t *shape, tf_error *err)
{
    memset(t, 0, sizeof *t);
    if (ndim < 1 || ndim > TENSOR_MAX_DIMS)
        return tf_error_set(err, TF_ERR_INPUT, "tensor: %d dimensions, expected 1..%d", ndim,
                            TENSOR_MAX_DIMS);
    int64_t size = 1;
    for (int d = 0; d < TENSOR_MAX_DIMS; d++) {
        int64_t extent = d < ndim ? shape[d] : 1;
        if (extent < 0)
            return tf_error_set(err, TF_ERR_INPUT, "tensor: dimension %d is %lld, expected >= 0", d,
                                (long long)extent);
        if (extent != 0 && size > INT64_MAX / extent)
            return tf_error_set(err, TF_ERR_INPUT, "too large for memory: tensor size overflows");
        size *= extent;
        t->shape[d] = extent;
    }
    t->data = tf_alloc((size_t)size, sizeof(float), "a tensor", err);
    if (!t->data)
        return TF_ERR_INPUT;
    t->ndim = ndim;
    t->size = size;
    return TF_OK;
}

int tensor_alloc_2d(tensor *t, int64_t rows, int64_t cols, tf_error *err)
{
    int64_t shape[2] = {rows, cols};
    return tensor_alloc(t, 2, shape, err);
}

void tensor_free(tensor *t)
{
    free(t->data);
    memset(t, 0, sizeof *t);
}

int tensor_copy(tensor *dst, const tensor *src, tf_error *err)
{
    int status = tensor_alloc(dst, src->ndim, src->shape, err);
    if (status == TF_OK && src->size > 0)
        memcpy(dst->data, src->data, (size_t)src->size * sizeof(float));
    return status;
}

int tensor_same_shape(const tensor *a, const tensor *b)
{
    if (a->ndim != b->ndim)
        return 0;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d])
            return 0;
    return 1;
}

double tensor_max_abs_diff(const tensor *a, const tensor *b)
{
    double worst = 0;
    for (int64_t i = 0; i < a->size; i++) {
        double diff = fabs((double)a->data[i] - (double)b->data[i]);
        if (diff > worst || isnan(diff))
            worst = isnan(diff) ? INFINITY : diff;
    }
    return worst;
}

double tensor_max_rel_diff(const tensor *a, const tensor *b)
{
    double worst = 0;
    for (int64_t i = 0; i < a->size; i++) {
        double reference = fabs((double)b->data[i]);
        double diff = fabs((double)a->data[i] - (double)b->data[i]) / (reference > 1 ? reference : 1);
        if (isnan(diff))
            return INFINITY;
        if (diff > worst)
            worst = diff;
    }
    return worst;
}
