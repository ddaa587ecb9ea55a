#include "ref/data/npy.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ref/core/io.h"
#include "ref/core/memory.h"

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/* ---- reading ----------------------------------------------------------------------- */

/* Finds the value that follows 'key': in the header dict, or NULL. */
static const char *header_value(const char *header, const char *key)
{
    char quoted[32];
    snprintf(quoted, sizeof quoted, "'%s'", key);
    const char *at = strstr(header, quoted);
    if (!at)
        return NULL;
    at += strlen(quoted);
    while (*at == ' ')
        at++;
    if (*at != ':')
        return NULL;
    at++;
    while (*at == ' ')
        at++;
    return at;
}

/* Parses "(3, 4)" / "(3,)" / "()" into shape [NPY_MAX_DIMS]; returns ndim or -1. */
static int parse_shape(const char *at, int64_t *shape)
{
    if (*at != '(')
        return -1;
    at++;
    int ndim = 0;
    for (;;) {
        while (*at == ' ')
            at++;
        if (*at == ')')
            return ndim;
        if (!isdigit((unsigned char)*at) || ndim == NPY_MAX_DIMS)
            return -1;
        int64_t value = 0;
        while (isdigit((unsigned char)*at)) {
            if (value > (INT64_MAX - 9) / 10)
                return -1;
            value = value * 10 + (*at++ - '0');
        }
        shape[ndim++] = value;
        while (*at == ' ')
            at++;
        if (*at == ',')
            at++;
        else if (*at != ')')
            return -1;
    }
}

/* numpy saves a transposed view (x.T) in Fortran (column-major) order; twofold's arrays are
 * row-major, so such data is reordered on reading: C-order element (i0, ..., iK) comes from
 * Fortran offset i0 + shape0 * (i1 + shape1 * (...)). shape [ndim]; from, to [count][item_size]. */
static void fortran_to_c_order(const unsigned char *from, unsigned char *to, int ndim, const int64_t *shape,
                               size_t item_size)
{
    int64_t index[NPY_MAX_DIMS] = {0}, count = 1;
    for (int d = 0; d < ndim; d++)
        count *= shape[d];
    for (int64_t c = 0; c < count; c++) {
        int64_t offset = 0, stride = 1;
        for (int d = 0; d < ndim; d++) {
            offset += index[d] * stride;
            stride *= shape[d];
        }
        memcpy(to + (size_t)c * item_size, from + (size_t)offset * item_size, item_size);
        for (int d = ndim - 1; d >= 0 && ++index[d] == shape[d]; d--) /* next C-order index */
            index[d] = 0;
    }
}

int npy_parse(const void *bytes, size_t size, const char *source, npy_array *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    const unsigned char *raw = bytes;
    if (size == 0)
        return tf_error_set(err, TF_ERR_INPUT, "%s: file is empty, expected a .npy array", source);
    if (size < 10 || memcmp(raw, npy_magic, sizeof npy_magic) != 0)
        return tf_error_set(err, TF_ERR_INPUT, "%s: not a .npy file (no \\x93NUMPY magic at the start)", source);
    int major = raw[6];
    size_t header_length, header_start;
    if (major == 1) {
        header_length = raw[8] | (size_t)raw[9] << 8;
        header_start = 10;
    } else if (major == 2 || major == 3) {
        if (size < 12)
            return tf_error_set(err, TF_ERR_INPUT, "%s: truncated .npy header", source);
        header_length = raw[8] | (size_t)raw[9] << 8 | (size_t)raw[10] << 16 | (size_t)raw[11] << 24;
        header_start = 12;
    } else {
        return tf_error_set(err, TF_ERR_INPUT, "%s: .npy format version %d, expected 1, 2 or 3", source, major);
    }
    if (header_length > size - header_start)
        return tf_error_set(err, TF_ERR_INPUT, "%s: truncated .npy header (%zu bytes announced, %zu present)",
                            source, header_length, size - header_start);
    char *header = malloc(header_length + 1);
    if (!header)
        return tf_error_set(err, TF_ERR_SYSTEM, "%s: out of memory reading the header", source);
    memcpy(header, raw + header_start, header_length);
    header[header_length] = '\0';

    int status = TF_OK;
    const char *descr = header_value(header, "descr");
    const char *order = header_value(header, "fortran_order");
    const char *shape_text = header_value(header, "shape");
    size_t item_size = 0;
    if (!descr || !order || !shape_text) {
        status = tf_error_set(err, TF_ERR_INPUT, "%s: .npy header lacks 'descr', 'fortran_order' or 'shape'", source);
    } else if (strncmp(descr, "'<f4'", 5) == 0) {
        out->dtype = NPY_FLOAT32;
        item_size = 4;
    } else if (strncmp(descr, "'<i8'", 5) == 0) {
        out->dtype = NPY_INT64;
        item_size = 8;
    } else {
        char found[16];
        const char *end = strchr(descr, ',');
        quote_field(descr, end ? end : descr + strlen(descr), found, sizeof found);
        status = tf_error_set(err, TF_ERR_INPUT, "%s: .npy dtype %s, expected '<f4' (float32) or '<i8' (int64)",
                              source, found);
    }
    int fortran_order = status == TF_OK && strncmp(order, "True", 4) == 0;
    if (status == TF_OK && !fortran_order && strncmp(order, "False", 5) != 0)
        status = tf_error_set(err, TF_ERR_INPUT, "%s: .npy 'fortran_order' is neither True nor False", source);
    if (status == TF_OK && (out->ndim = parse_shape(shape_text, out->shape)) < 0)
        status = tf_error_set(err, TF_ERR_INPUT, "%s: .npy shape is not a tuple of at most %d integers", source,
                              NPY_MAX_DIMS);
    free(header);
    if (status != TF_OK)
        return status;

    int64_t count = 1;
    for (int d = 0; d < out->ndim; d++) {
        if (out->shape[d] != 0 && count > INT64_MAX / 8 / out->shape[d])
            return tf_error_set(err, TF_ERR_INPUT, "%s: too large for memory: .npy shape overflows", source);
        count *= out->shape[d];
    }
    out->size = count;
    /* Check the size against memory before checking it against the file: a header that
     * announces terabytes is "too large", whatever follows it. */
    void *data = tf_alloc((size_t)count, item_size, "the .npy array", err);
    if (!data) {
        tf_error_prefix(err, "%s", source);
        return TF_ERR_INPUT;
    }
    size_t data_bytes = (size_t)count * item_size;
    size_t present = size - header_start - header_length;
    if (present != data_bytes) {
        free(data);
        return tf_error_set(err, TF_ERR_INPUT, "%s: .npy data is %zu bytes, the shape needs %zu (%s)", source,
                            present, data_bytes, present < data_bytes ? "truncated" : "trailing bytes");
    }
    if (fortran_order)
        fortran_to_c_order(raw + header_start + header_length, data, out->ndim, out->shape, item_size);
    else
        memcpy(data, raw + header_start + header_length, data_bytes);
    out->data = data;
    return TF_OK;
}

int npy_read(const char *path, npy_array *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    text content;
    if (text_read_file(path, &content, err) != TF_OK)
        return TF_ERR_INPUT;
    int status = npy_parse(content.data, content.size, path, out, err);
    text_free(&content);
    return status;
}

void npy_free(npy_array *a)
{
    free(a->data);
    memset(a, 0, sizeof *a);
}

int npy_read_tensor(const char *path, tensor *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    npy_array array;
    if (npy_read(path, &array, err) != TF_OK)
        return TF_ERR_INPUT;
    int status = TF_OK;
    if (array.dtype != NPY_FLOAT32)
        status = tf_error_set(err, TF_ERR_INPUT, "%s: .npy dtype is int64, expected float32", path);
    else if (array.ndim > TENSOR_MAX_DIMS)
        status = tf_error_set(err, TF_ERR_INPUT, "%s: .npy array has %d dimensions, expected at most %d", path,
                              array.ndim, TENSOR_MAX_DIMS);
    for (int64_t i = 0; status == TF_OK && i < array.size; i++)
        if (!isfinite(((float *)array.data)[i]))
            status = tf_error_set(err, TF_ERR_INPUT, "%s: element %lld is NaN or infinite", path, (long long)i);
    if (status == TF_OK) {
        int64_t scalar_shape[1] = {1};
        int ndim = array.ndim == 0 ? 1 : array.ndim;
        status = tensor_alloc(out, ndim, array.ndim == 0 ? scalar_shape : array.shape, err);
        if (status == TF_OK && array.size > 0)
            memcpy(out->data, array.data, (size_t)array.size * sizeof(float));
    }
    npy_free(&array);
    return status;
}

/* ---- writing ----------------------------------------------------------------------- */

int npy_write(const char *path, npy_dtype dtype, int ndim, const int64_t *shape, const void *data,
              tf_error *err)
{
    if (ndim < 0 || ndim > NPY_MAX_DIMS)
        return tf_error_set(err, TF_ERR_INPUT, "%s: cannot write a %d-dimensional array", path, ndim);
    char dict[256];
    int length = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                          dtype == NPY_FLOAT32 ? "<f4" : "<i8");
    int64_t count = 1;
    for (int d = 0; d < ndim; d++) {
        length += snprintf(dict + length, sizeof dict - (size_t)length, "%lld,%s", (long long)shape[d],
                           d + 1 < ndim ? " " : "");
        count *= shape[d];
    }
    if (ndim > 1) /* numpy writes (3,) for one dimension and (3, 4) for more */
        length--;
    length += snprintf(dict + length, sizeof dict - (size_t)length, "), }");

    /* Pad with spaces so magic + version + length + header is a multiple of 64, end in '\n'. */
    size_t header_length = (size_t)length + 1;
    header_length += (64 - (10 + header_length) % 64) % 64;
    char header[10 + 320];
    memcpy(header, npy_magic, sizeof npy_magic);
    header[6] = 1;
    header[7] = 0;
    header[8] = (char)(header_length & 0xff);
    header[9] = (char)(header_length >> 8);
    memcpy(header + 10, dict, (size_t)length);
    memset(header + 10 + length, ' ', header_length - (size_t)length - 1);
    header[10 + header_length - 1] = '\n';

    size_t temporary_size = strlen(path) + 16;
    char *temporary = malloc(temporary_size);
    if (!temporary)
        return tf_error_set(err, TF_ERR_SYSTEM, "%s: out of memory", path);
    snprintf(temporary, temporary_size, "%s.tmpXXXXXX", path);
    int fd = mkstemp(temporary);
    if (fd < 0) {
        int status = tf_error_set(err, TF_ERR_INPUT, "%s: cannot create: %s", path, strerror(errno));
        free(temporary);
        return status;
    }
    FILE *file = fdopen(fd, "wb");
    size_t item_size = dtype == NPY_FLOAT32 ? 4 : 8;
    int ok = file && fwrite(header, 1, 10 + header_length, file) == 10 + header_length &&
             (count == 0 || fwrite(data, item_size, (size_t)count, file) == (size_t)count) &&
             fflush(file) == 0 && fsync(fd) == 0;
    int saved_errno = errno;
    if (file)
        ok = (fclose(file) == 0) && ok;
    else
        close(fd);
    if (ok && rename(temporary, path) != 0) {
        saved_errno = errno;
        ok = 0;
    }
    if (!ok) {
        unlink(temporary);
        free(temporary);
        return tf_error_set(err, TF_ERR_SYSTEM, "%s: write failed: %s", path, strerror(saved_errno));
    }
    free(temporary);
    return TF_OK;
}

int npy_write_tensor(const char *path, const tensor *t, tf_error *err)
{
    return npy_write(path, NPY_FLOAT32, t->ndim, t->shape, t->data, err);
}
