/**
 * @file cuda/kernels.h
 * Twins: the ref_ functions of the table ref_kernels (ref/nn/kernels.h), on the GPU.
 * @brief A #kernels table (ref/nn/kernels.h) whose heavy kernels run on the GPU: what
 *        `twofold train --device cuda` uses.
 *
 * The models keep their tensors in host memory; each call of a table function copies its
 * inputs into the bound context's scratch buffers, runs the CUDA twin (propagate.h, layers.h,
 * recurrent.h) and copies the results back. Correct and simple, and honest about its cost: the
 * copies dominate for small graphs; it is the device path of this engine, not a device-resident
 * one. Results equal the reference within the GPU fp tolerance (1e-4), propagation bitwise.
 *
 * Failures (a lost device, out of memory) are recorded and reported by the table's
 * take_error, which the model calls after every forward and backward; after a failure the
 * remaining calls do nothing until the error is taken.
 */
#ifndef TWOFOLD_CUDA_KERNELS_H
#define TWOFOLD_CUDA_KERNELS_H

#include "cuda/context.h"
#include "ref/nn/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The GPU kernels table; bind a context with cuda_kernels_bind() before using it. */
extern const kernels cuda_kernels;

/** Run #cuda_kernels on @p context (which must outlive its use). */
void cuda_kernels_bind(cuda_context *context);

#ifdef __cplusplus
}
#endif

#endif
