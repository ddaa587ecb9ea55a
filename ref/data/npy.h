/**
 * @file ref/data/npy.h
 * @brief NumPy .npy files: read and write float32 and int64 arrays.
 *
 * The .npy format (numpy.lib.format, versions 1.0-3.0): the magic string "\x93NUMPY", a
 * version, a little-endian header length, then a Python dict literal such as
 * `{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }` padded with spaces and a
 * newline so the data starts on a 64-byte boundary, then the raw C-order data.
 *
 * twofold writes parameters, outputs and golden files this way so they load with
 * `numpy.load` and `torch.from_numpy` on the other side. Writes go through ref/core/io.h's
 * output_open() and output_commit(): the array goes to a temporary file in the same directory,
 * which is renamed over the target once every byte is written, so a crash or a full disk never
 * leaves a half-written file under the real name, and a symbolic link, FIFO, device or directory
 * at the path is refused, never replaced. Reads take regular files only, check the magic, then
 * the header, then the size the shape needs against the memory budget, before reading the body.
 * They accept gzip-compressed files, and Fortran-order files (numpy's way of saving a transposed
 * array), which are reordered to row-major on reading.
 */
#ifndef TWOFOLD_REF_NPY_H
#define TWOFOLD_REF_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "ref/core/error.h"
#include "ref/core/tensor.h"

/** Element types twofold reads and writes. */
typedef enum npy_dtype {
    NPY_FLOAT32,   /**< '<f4' */
    NPY_INT64,     /**< '<i8' */
} npy_dtype;

/** Most dimensions a .npy array may have here. */
#define NPY_MAX_DIMS 8

/** An array read from a .npy file. Owns `data`; free with npy_free(). */
typedef struct npy_array {
    npy_dtype dtype;                /**< element type */
    int ndim;                       /**< 0 (a scalar) .. NPY_MAX_DIMS */
    int64_t shape[NPY_MAX_DIMS];    /**< extents */
    int64_t size;                   /**< number of elements (1 for a scalar) */
    void *data;                     /**< float* or int64_t*, C order */
} npy_array;

/** Read a .npy (or .npy.gz) file. Errors name the file and what was wrong with it. */
int npy_read(const char *path, npy_array *out, tf_error *err);

/** Parse .npy bytes already in memory; @p source names them in error messages. */
int npy_parse(const void *bytes, size_t size, const char *source, npy_array *out, tf_error *err);

/** Release an array's data and zero it. */
void npy_free(npy_array *a);

/**
 * Atomically write @p data (C order) with the given dtype and shape [ndim] to @p path.
 * TF_ERR_INPUT for a path that output_check() refuses; TF_ERR_SYSTEM when the disk is full or
 * fails, with @p path left as it was.
 */
int npy_write(const char *path, npy_dtype dtype, int ndim, const int64_t *shape, const void *data,
              tf_error *err);

/** Write a tensor as a float32 .npy file (atomically). */
int npy_write_tensor(const char *path, const tensor *t, tf_error *err);

/**
 * Read a float32 .npy file into a tensor. A scalar becomes shape [1]. Fails with a clear
 * message for another dtype, more than TENSOR_MAX_DIMS dimensions or non-finite values.
 */
int npy_read_tensor(const char *path, tensor *out, tf_error *err);

#endif
