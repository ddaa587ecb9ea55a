/**
 * @file cuda/propagate.h
 * Twins: ref_propagate_forward() and ref_propagate_backward() (ref/nn/propagate.h).
 * @brief Graph propagation on the GPU: y = P x and dx += P^T dy for a sparse operator P
 *        (CSR SpMM and its transpose). The CUDA twins of ref_propagate_forward() and
 *        ref_propagate_backward() (ref/nn/propagate.h).
 *
 * What changes and why it is still equal: one thread per (vertex, column) forms the same sums
 * in the same order as the reference loop, and the kernels multiply and add with
 * __fmul_rn / __fadd_rn so nvcc cannot fuse them into an FMA (which rounds once instead of
 * twice): the results are the reference's bit for bit. The backward gathers over the
 * transpose built by propagation_add_transpose() (ref/nn/propagate.h), in the reference's scatter order, like the
 * CPU twin; no atomics, so it is deterministic.
 */
#ifndef TWOFOLD_CUDA_PROPAGATE_H
#define TWOFOLD_CUDA_PROPAGATE_H

#include <stdint.h>

#include "cuda/context.h"
#include "ref/core/error.h"
#include "ref/nn/propagate.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A propagation operator copied to the device (all arrays device pointers, owned by the context). */
typedef struct cuda_propagation {
    int64_t num_nodes;              /**< rows */
    int64_t num_edges;              /**< edges */
    int64_t *d_row_ptr;             /**< [num_nodes + 1] */
    int32_t *d_col;                 /**< [num_edges] */
    float *d_edge_coefficient;      /**< [num_edges] */
    float *d_self_coefficient;      /**< [num_nodes] */
    int64_t *d_transpose_offsets;   /**< [num_nodes + 1], see propagation */
    int64_t *d_transpose_edge;      /**< [num_edges] */
    int32_t *d_transpose_destination; /**< [num_edges] */
} cuda_propagation;

/**
 * Copy @p p (with its transpose: call propagation_add_transpose() (ref/nn/propagate.h) first) to the device.
 * Free with cuda_propagation_free().
 */
int cuda_propagation_upload(cuda_context *context, const propagation *p, cuda_propagation *out, tf_error *err);

/** Free the device arrays of @p p. */
void cuda_propagation_free(cuda_context *context, cuda_propagation *p);

/** y = P x on the device: d_x, d_y [num_nodes][width] (y overwritten, not aliasing x). */
int cuda_propagate_forward(cuda_context *context, const cuda_propagation *p, const float *d_x, int64_t width,
                           float *d_y, tf_error *err);

/** dx += P^T dy on the device: d_dy, d_dx [num_nodes][width]. */
int cuda_propagate_backward(cuda_context *context, const cuda_propagation *p, const float *d_dy, int64_t width,
                            float *d_dx, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
