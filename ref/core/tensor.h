/**
 * @file ref/core/tensor.h
 * @brief Dense float32 tensor, row-major, up to four dimensions.
 *
 * No strides: every tensor is contiguous in row-major (C) order, so element
 * (i, j) of a 2-D tensor is `data[i * shape[1] + j]`. Views and broadcasting are left out on
 * purpose; the models are written with explicit loops over these flat arrays.
 */
#ifndef TWOFOLD_REF_TENSOR_H
#define TWOFOLD_REF_TENSOR_H

#include <stdint.h>

#include "ref/core/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest supported number of dimensions. */
#define TENSOR_MAX_DIMS 4

/** A contiguous row-major float32 array with its shape. Owns `data`. */
typedef struct tensor {
    float *data;                       /**< `size` floats (a valid allocation even when size is 0) */
    int ndim;                          /**< number of dimensions, 0..TENSOR_MAX_DIMS */
    int64_t shape[TENSOR_MAX_DIMS];    /**< extent of each dimension; unused ones are 1 */
    int64_t size;                      /**< product of the shape */
} tensor;

/**
 * Allocate a zero-filled tensor of the given shape [ndim]. @p ndim is 1..TENSOR_MAX_DIMS.
 * @return 0, or TF_ERR_INPUT for a negative extent or a size too large for memory.
 */
int tensor_alloc(tensor *t, int ndim, const int64_t *shape, tf_error *err);

/** Convenience for 2-D: a zero-filled rows x cols tensor. */
int tensor_alloc_2d(tensor *t, int64_t rows, int64_t cols, tf_error *err);

/** Release @p t's data and zero the struct. Safe on a zeroed tensor. */
void tensor_free(tensor *t);

/** Deep copy of @p src into a new tensor @p dst. */
int tensor_copy(tensor *dst, const tensor *src, tf_error *err);

/** 1 if @p a and @p b have the same ndim and shape, else 0. */
int tensor_same_shape(const tensor *a, const tensor *b);

/** Largest |a - b| over all elements (shapes must match). */
double tensor_max_abs_diff(const tensor *a, const tensor *b);

/**
 * The project's "fp" comparison (chapters/00-overview.md, "What equal means"): the largest
 * |a - b| / max(1, |b|) over all elements, @p b being the reference.
 */
double tensor_max_rel_diff(const tensor *a, const tensor *b);

#ifdef __cplusplus
}
#endif

#endif
