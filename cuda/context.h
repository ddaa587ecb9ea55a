/**
 * @file context.h
 * @brief The GPU side's one owner of device state: which device, its stream, its memory.
 *
 * Every CUDA resource twofold creates (device buffers, streams, library handles) belongs to
 * a #cuda_context, created once and destroyed once, so a reader can find where device
 * memory comes from and where it goes. Functions here are callable from C; the kernels in
 * cuda/ take a context as their first argument.
 *
 * A machine without a GPU is normal (CI, laptops): cuda_device_count() then returns 0 rather
 * than failing. Without a driver `cudaGetDeviceCount` reports an error ("driver version is
 * insufficient", "no CUDA-capable device"), not zero devices, so any error counts as none.
 */
#ifndef TWOFOLD_CUDA_CONTEXT_H
#define TWOFOLD_CUDA_CONTEXT_H

#include <stddef.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The state of one GPU in use. Opaque to C callers except through the functions below. */
typedef struct cuda_context {
    int device;                 /**< CUDA device ordinal */
    char name[256];             /**< e.g. "NVIDIA H100 80GB HBM3" */
    int compute_major;          /**< compute capability, major (9 for H100/H200) */
    int compute_minor;          /**< compute capability, minor */
    size_t total_memory;        /**< bytes of device memory */
    void *stream;               /**< the cudaStream_t all of twofold's work goes to */
} cuda_context;

/** Number of usable GPUs; 0 when there is no driver, no device or any other error. */
int cuda_device_count(void);

/**
 * Create a context on @p device: select it, query its properties, create its stream.
 * @return 0, or TF_ERR_SYSTEM with the CUDA error string when the device cannot be used.
 */
int cuda_context_create(cuda_context *context, int device, tf_error *err);

/** Release the stream and zero @p context. */
void cuda_context_destroy(cuda_context *context);

/**
 * Check that kernels compiled into this binary run on the context's device: a kernel
 * writes i into element i of a device buffer of @p count ints, which is copied back and
 * checked. Catches "no kernel image is available for execution on the device" (a binary
 * built for the wrong architecture) before any real work depends on it.
 * @return 0, or TF_ERR_SYSTEM naming the failure or the first wrong element.
 */
int cuda_context_selftest(cuda_context *context, int count, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
