#include "ref/nn/parameters.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/core/io.h"
#include "ref/core/memory.h"
#include "ref/data/npy.h"

int64_t parameters_add(parameter_list *list, const char *name, int ndim, const int64_t *shape, tf_error *err)
{
    if (strlen(name) >= sizeof list->items[0].name) {
        tf_error_set(err, TF_ERR_INPUT, "parameter name too long: %s", name);
        return -1;
    }
    if (parameters_find(list, name)) {
        tf_error_set(err, TF_ERR_INPUT, "parameter %s defined twice", name);
        return -1;
    }
    if (list->count == list->capacity) {
        int64_t capacity = list->capacity ? 2 * list->capacity : 16;
        parameter *grown = tf_realloc(list->items, (size_t)capacity, sizeof *grown, "parameters", err);
        if (!grown)
            return -1;
        list->items = grown;
        list->capacity = capacity;
    }
    parameter *p = &list->items[list->count];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    if (tensor_alloc(&p->value, ndim, shape, err) != TF_OK)
        return -1;
    if (tensor_alloc(&p->grad, ndim, shape, err) != TF_OK) {
        tensor_free(&p->value);
        return -1;
    }
    if (!(p->sums = tf_alloc((size_t)p->value.size, sizeof(double), "gradient sums", err))) {
        tensor_free(&p->value);
        tensor_free(&p->grad);
        return -1;
    }
    return list->count++;
}

parameter *parameters_find(const parameter_list *list, const char *name)
{
    for (int64_t i = 0; i < list->count; i++)
        if (strcmp(list->items[i].name, name) == 0)
            return &list->items[i];
    return NULL;
}

void parameters_free(parameter_list *list)
{
    for (int64_t i = 0; i < list->count; i++) {
        tensor_free(&list->items[i].value);
        tensor_free(&list->items[i].grad);
        free(list->items[i].sums);
    }
    free(list->items);
    memset(list, 0, sizeof *list);
}

void parameters_zero_grad(parameter_list *list)
{
    for (int64_t i = 0; i < list->count; i++) {
        memset(list->items[i].grad.data, 0, (size_t)list->items[i].grad.size * sizeof(float));
        memset(list->items[i].sums, 0, (size_t)list->items[i].grad.size * sizeof(double));
    }
}

void parameters_round_sums(parameter_list *list)
{
    for (int64_t i = 0; i < list->count; i++)
        for (int64_t k = 0; k < list->items[i].grad.size; k++)
            list->items[i].grad.data[k] = (float)list->items[i].sums[k];
}

void parameters_pack_sums(const parameter_list *list, double *packed)
{
    for (int64_t i = 0; i < list->count; i++) {
        memcpy(packed, list->items[i].sums, (size_t)list->items[i].grad.size * sizeof(double));
        packed += list->items[i].grad.size;
    }
}

void parameters_unpack_sums(parameter_list *list, const double *packed)
{
    for (int64_t i = 0; i < list->count; i++) {
        memcpy(list->items[i].sums, packed, (size_t)list->items[i].grad.size * sizeof(double));
        packed += list->items[i].grad.size;
    }
}

int64_t parameters_size(const parameter_list *list)
{
    int64_t size = 0;
    for (int64_t i = 0; i < list->count; i++)
        size += list->items[i].value.size;
    return size;
}

void parameter_init_uniform(parameter *p, double bound, rng *r)
{
    for (int64_t i = 0; i < p->value.size; i++)
        p->value.data[i] = (float)((2.0 * rng_uniform(r) - 1.0) * bound);
}

void parameter_init_glorot(parameter *p, rng *r)
{
    int nd = p->value.ndim;
    double rows = nd >= 2 ? (double)p->value.shape[nd - 2] : 1.0, cols = (double)p->value.shape[nd - 1];
    parameter_init_uniform(p, sqrt(6.0 / (rows + cols)), r);
}

int parameters_save(const parameter_list *list, const char *directory, tf_error *err)
{
    for (int64_t i = 0; i < list->count; i++) {
        char path[4096];
        if (format_path(path, sizeof path, err, "%s/%s.npy", directory, list->items[i].name) != TF_OK ||
            npy_write_tensor(path, &list->items[i].value, err) != TF_OK)
            return err->code;
    }
    return TF_OK;
}

int parameters_load(parameter_list *list, const char *directory, tf_error *err)
{
    for (int64_t i = 0; i < list->count; i++) {
        parameter *p = &list->items[i];
        char path[4096];
        if (format_path(path, sizeof path, err, "%s/%s.npy", directory, p->name) != TF_OK)
            return TF_ERR_INPUT;
        tensor loaded;
        if (npy_read_tensor(path, &loaded, err) != TF_OK)
            return TF_ERR_INPUT;
        if (!tensor_same_shape(&loaded, &p->value)) {
            char expected[128] = "", found[128] = "";
            for (int d = 0; d < p->value.ndim; d++)
                snprintf(expected + strlen(expected), sizeof expected - strlen(expected), "%s%lld", d ? " x " : "",
                         (long long)p->value.shape[d]);
            for (int d = 0; d < loaded.ndim; d++)
                snprintf(found + strlen(found), sizeof found - strlen(found), "%s%lld", d ? " x " : "",
                         (long long)loaded.shape[d]);
            tensor_free(&loaded);
            return tf_error_set(err, TF_ERR_INPUT, "%s: shape %s, expected %s for this model", path, found, expected);
        }
        memcpy(p->value.data, loaded.data, (size_t)loaded.size * sizeof(float));
        tensor_free(&loaded);
    }
    return TF_OK;
}

void parameters_copy_values(parameter_list *to, const parameter_list *from)
{
    for (int64_t i = 0; i < from->count; i++)
        memcpy(to->items[i].value.data, from->items[i].value.data, (size_t)from->items[i].value.size * sizeof(float));
}

/* Copies between a list's tensors (`grad` or `value`) and one flat buffer, in list order. */
static void pack(const parameter_list *list, int gradients, float *packed)
{
    for (int64_t i = 0; i < list->count; i++) {
        const tensor *t = gradients ? &list->items[i].grad : &list->items[i].value;
        memcpy(packed, t->data, (size_t)t->size * sizeof(float));
        packed += t->size;
    }
}

static void unpack(parameter_list *list, int gradients, const float *packed)
{
    for (int64_t i = 0; i < list->count; i++) {
        tensor *t = gradients ? &list->items[i].grad : &list->items[i].value;
        memcpy(t->data, packed, (size_t)t->size * sizeof(float));
        packed += t->size;
    }
}

void parameters_pack_gradients(const parameter_list *list, float *packed) { pack(list, 1, packed); }
void parameters_unpack_gradients(parameter_list *list, const float *packed) { unpack(list, 1, packed); }
void parameters_pack_values(const parameter_list *list, float *packed) { pack(list, 0, packed); }
void parameters_unpack_values(parameter_list *list, const float *packed) { unpack(list, 0, packed); }

const char *parameters_first_non_finite(const parameter_list *list, int grads)
{
    for (int64_t i = 0; i < list->count; i++) {
        const tensor *t = grads ? &list->items[i].grad : &list->items[i].value;
        for (int64_t k = 0; k < t->size; k++)
            if (!isfinite(t->data[k]))
                return list->items[i].name;
    }
    return NULL;
}
