/**
 * @file cuda/check.h
 * Twins: none — a macro that turns a failed CUDA runtime call into a tf_error.
 * @brief CUDA_CHECK: turn a failed CUDA runtime call into a tf_error naming file and line.
 *
 * Used inside functions that return a tf_error_code:
 * `CUDA_CHECK(cudaMalloc(&d_x, bytes), err);` returns TF_ERR_SYSTEM from the enclosing
 * function with "cuda/propagate.cu:42: cudaMalloc(&d_x, bytes): out of memory".
 */
#ifndef TWOFOLD_CUDA_CHECK_H
#define TWOFOLD_CUDA_CHECK_H

#include <cuda_runtime.h>

#include "ref/core/error.h"

/** Record @p result in @p err if it is an error; returns TF_OK or TF_ERR_SYSTEM. */
static inline int cuda_check(cudaError_t result, const char *file, int line, tf_error *err)
{
    if (result == cudaSuccess)
        return TF_OK;
    return tf_error_set(err, TF_ERR_SYSTEM, "%s:%d: CUDA error: %s", file, line, cudaGetErrorString(result));
}

/** Return TF_ERR_SYSTEM from the enclosing function when @p call fails. */
#define CUDA_CHECK(call, err)                                                                                      \
    do {                                                                                                           \
        if (cuda_check((call), __FILE__, __LINE__, (err)) != TF_OK)                                                \
            return TF_ERR_SYSTEM;                                                                                  \
    } while (0)

#endif
