/**
 * @file cuda/context.h
 * Twins: none — the owner of every device resource the cuda/ twins use.
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

#include "ref/core/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Number of reusable scratch buffers a context keeps (cuda_scratch()). */
#define CUDA_SCRATCH_SLOTS 16

/** The state of one GPU in use. Opaque to C callers except through the functions below. */
typedef struct cuda_context {
    int device;                 /**< CUDA device ordinal */
    char name[256];             /**< e.g. "NVIDIA H100 80GB HBM3" */
    int compute_major;          /**< compute capability, major (9 for H100/H200) */
    int compute_minor;          /**< compute capability, minor */
    size_t total_memory;        /**< bytes of device memory */
    void *stream;               /**< the cudaStream_t all of twofold's work goes to */
    void *blas;                 /**< the cublasHandle_t bound to that stream */
    void **allocations;         /**< every device buffer from cuda_alloc() not yet freed */
    int allocation_count;       /**< entries in use in `allocations` */
    int allocation_capacity;    /**< entries allocated */
    void *scratch[CUDA_SCRATCH_SLOTS];        /**< reusable device buffers, see cuda_scratch() */
    size_t scratch_bytes[CUDA_SCRATCH_SLOTS]; /**< their sizes */
} cuda_context;

/** Number of usable GPUs; 0 when there is no driver, no device or any other error. */
int cuda_device_count(void);

/**
 * Create a context on @p device: select it, query its properties, create its stream.
 * @return 0, or TF_ERR_SYSTEM with the CUDA error string when the device cannot be used.
 */
int cuda_context_create(cuda_context *context, int device, tf_error *err);

/** Free every device buffer still owned, the cuBLAS handle and the stream; zero @p context. */
void cuda_context_destroy(cuda_context *context);

/**
 * Allocate @p bytes of device memory owned by @p context (freed by cuda_free() or, at the
 * latest, by cuda_context_destroy()). @return the device pointer, or NULL with @p err set.
 */
void *cuda_alloc(cuda_context *context, size_t bytes, tf_error *err);

/** Free a buffer from cuda_alloc(). NULL is ignored. */
void cuda_free(cuda_context *context, void *device_pointer);

/** cuda_free() each of @p buffers [count]: the arrays of a struct of device arrays. */
void cuda_free_each(cuda_context *context, void *const *buffers, size_t count);

/**
 * A device buffer of at least @p bytes in scratch slot @p slot (0 .. CUDA_SCRATCH_SLOTS-1),
 * kept and grown across calls: for kernels that stage host data on the device. Its content is
 * undefined; a later call for the same slot may move it.
 */
void *cuda_scratch(cuda_context *context, int slot, size_t bytes, tf_error *err);

/** Copy @p bytes from host to device on the context's stream and wait. */
int cuda_upload(cuda_context *context, void *device_pointer, const void *host_pointer, size_t bytes, tf_error *err);

/** Copy @p bytes from device to host on the context's stream and wait. */
int cuda_download(cuda_context *context, void *host_pointer, const void *device_pointer, size_t bytes, tf_error *err);

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
