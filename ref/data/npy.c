#include "ref/data/npy.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

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

/* The fixed prefix of raw [size] (the first 10 bytes, 12 from version 2): magic and version
 * checked, *header_start and *header_length set. A prefix cut short is "truncated". */
static int parse_prefix(const unsigned char *raw, size_t size, const char *source, size_t *header_start,
                        size_t *header_length, tf_error *err)
{
    if (size == 0)
        return tf_error_set(err, TF_ERR_INPUT, "%s: file is empty, expected a .npy array", source);
    if (size < 10 || memcmp(raw, npy_magic, sizeof npy_magic) != 0)
        return tf_error_set(err, TF_ERR_INPUT, "%s: not a .npy file (no \\x93NUMPY magic at the start)", source);
    int major = raw[6];
    if (major == 1) {
        *header_length = raw[8] | (size_t)raw[9] << 8;
        *header_start = 10;
    } else if (major == 2 || major == 3) {
        if (size < 12)
            return tf_error_set(err, TF_ERR_INPUT, "%s: truncated .npy header", source);
        *header_length = raw[8] | (size_t)raw[9] << 8 | (size_t)raw[10] << 16 | (size_t)raw[11] << 24;
        *header_start = 12;
    } else {
        return tf_error_set(err, TF_ERR_INPUT, "%s: .npy format version %d, expected 1, 2 or 3", source, major);
    }
    return TF_OK;
}

/* The header dict raw [header_length] (not '\0'-terminated): out's dtype, ndim, shape and size,
 * *fortran_order and *item_size set. */
static int parse_header(const unsigned char *raw, size_t header_length, const char *source, npy_array *out,
                        int *fortran_order, size_t *item_size, tf_error *err)
{
    char *header = malloc(header_length + 1);
    if (!header)
        return tf_error_set(err, TF_ERR_SYSTEM, "%s: out of memory reading the header", source);
    memcpy(header, raw, header_length);
    header[header_length] = '\0';

    int status = TF_OK;
    const char *descr = header_value(header, "descr");
    const char *order = header_value(header, "fortran_order");
    const char *shape_text = header_value(header, "shape");
    if (!descr || !order || !shape_text) {
        status = tf_error_set(err, TF_ERR_INPUT, "%s: .npy header lacks 'descr', 'fortran_order' or 'shape'", source);
    } else if (strncmp(descr, "'<f4'", 5) == 0) {
        out->dtype = NPY_FLOAT32;
        *item_size = 4;
    } else if (strncmp(descr, "'<i8'", 5) == 0) {
        out->dtype = NPY_INT64;
        *item_size = 8;
    } else {
        char found[16];
        const char *end = strchr(descr, ',');
        quote_field(descr, end ? end : descr + strlen(descr), found, sizeof found);
        status = tf_error_set(err, TF_ERR_INPUT, "%s: .npy dtype %s, expected '<f4' (float32) or '<i8' (int64)",
                              source, found);
    }
    *fortran_order = status == TF_OK && strncmp(order, "True", 4) == 0;
    if (status == TF_OK && !*fortran_order && strncmp(order, "False", 5) != 0)
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
    return TF_OK;
}

/* The array's memory, checked against memory and the budget before a byte of data is read: a
 * header that announces terabytes is "too large", whatever follows it. */
static void *alloc_data(const npy_array *a, size_t item_size, const char *source, tf_error *err)
{
    void *data = tf_alloc((size_t)a->size, item_size, "the .npy array", err);
    if (!data)
        tf_error_prefix(err, "%s", source);
    return data;
}

/* The data as C order into out->data (taking ownership of data [size][item_size]). */
static void store_data(npy_array *out, void *data, const unsigned char *raw, int fortran_order, size_t item_size)
{
    if (fortran_order)
        fortran_to_c_order(raw, data, out->ndim, out->shape, item_size);
    else
        memcpy(data, raw, (size_t)out->size * item_size);
    out->data = data;
}

int npy_parse(const void *bytes, size_t size, const char *source, npy_array *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    const unsigned char *raw = bytes;
    size_t header_start, header_length, item_size = 0;
    int fortran_order = 0;
    if (parse_prefix(raw, size, source, &header_start, &header_length, err) != TF_OK)
        return err->code;
    if (header_length > size - header_start)
        return tf_error_set(err, TF_ERR_INPUT, "%s: truncated .npy header (%zu bytes announced, %zu present)",
                            source, header_length, size - header_start);
    if (parse_header(raw + header_start, header_length, source, out, &fortran_order, &item_size, err) != TF_OK)
        return err->code;
    void *data = alloc_data(out, item_size, source, err);
    if (!data)
        return TF_ERR_INPUT;
    size_t data_bytes = (size_t)out->size * item_size;
    size_t present = size - header_start - header_length;
    if (present != data_bytes) {
        free(data);
        return tf_error_set(err, TF_ERR_INPUT, "%s: .npy data is %zu bytes, the shape needs %zu (%s)", source,
                            present, data_bytes, present < data_bytes ? "truncated" : "trailing bytes");
    }
    store_data(out, data, raw + header_start + header_length, fortran_order, item_size);
    return TF_OK;
}

/* Read up to @p size bytes (gzread takes at most INT_MAX at a time); the count read, or -1. */
static int64_t read_fully(gzFile file, void *into, size_t size)
{
    size_t done = 0;
    while (done < size) {
        const size_t chunk = size - done > (1u << 30) ? (1u << 30) : size - done;
        const int got = gzread(file, (char *)into + done, (unsigned)chunk);
        int zerr = Z_OK;
        if (got == 0) /* the end, or a gzip stream cut short (zlib then reports an error) */
            gzerror(file, &zerr);
        if (got < 0 || (zerr != Z_OK && zerr != Z_STREAM_END))
            return -1;
        if (got == 0)
            break;
        done += (size_t)got;
    }
    return (int64_t)done;
}

/* The longest header read: numpy writes about a hundred bytes (a shape of 32 dimensions fits
 * in a few hundred) and np.load itself refuses headers over 10,000 bytes. */
#define NPY_HEADER_LIMIT 65536

/* read_open()'s status when gzread() failed: npy_read() asks zlib why. */
#define READ_FAILED (-1)

/* npy_read() on an open file: the prefix, then the header, then the body, each checked before
 * the next is read, so a wrong file is refused after its first bytes and a body is read only
 * into memory the budget has granted (a .npy.gz whose body inflates past its shape stops one
 * byte past it). raw [12 + header] holds the prefix and header. */
static int read_open(gzFile file, const char *path, npy_array *out, tf_error *err)
{
    unsigned char prefix[12];
    int64_t got = read_fully(file, prefix, 10);
    size_t header_start = 0, header_length = 0, item_size = 0;
    int fortran_order = 0;
    if (got >= 10 && prefix[6] >= 2 && prefix[6] <= 3 && memcmp(prefix, npy_magic, sizeof npy_magic) == 0) {
        int64_t more = read_fully(file, prefix + 10, 2);
        got = more < 0 ? -1 : got + more;
    }
    if (got < 0)
        return READ_FAILED;
    if (parse_prefix(prefix, (size_t)got, path, &header_start, &header_length, err) != TF_OK)
        return err->code;
    if (header_length > NPY_HEADER_LIMIT) /* before allocating it: version 2 announces up to 4 GiB */
        return tf_error_set(err, TF_ERR_INPUT, "%s: .npy header of %zu bytes announced, expected at most %d",
                            path, header_length, NPY_HEADER_LIMIT);
    unsigned char *header = tf_alloc(header_length + 1, 1, "the .npy header", err);
    if (!header) {
        tf_error_prefix(err, "%s", path);
        return TF_ERR_INPUT;
    }
    got = read_fully(file, header, header_length);
    int status = got < 0 ? READ_FAILED : TF_OK;
    if (status == TF_OK && (size_t)got < header_length)
        status = tf_error_set(err, TF_ERR_INPUT, "%s: truncated .npy header (%zu bytes announced, %lld present)",
                              path, header_length, (long long)got);
    if (status == TF_OK)
        status = parse_header(header, header_length, path, out, &fortran_order, &item_size, err);
    free(header);
    void *data = status == TF_OK ? alloc_data(out, item_size, path, err) : NULL;
    if (status != TF_OK || !data)
        return status != TF_OK ? status : TF_ERR_INPUT;
    const size_t data_bytes = (size_t)out->size * item_size;
    /* Fortran order needs the bytes as stored, then reordered; C order reads into place. */
    unsigned char *stored = fortran_order ? tf_alloc(data_bytes, 1, "the .npy array as stored", err) : data;
    unsigned char extra;
    got = stored ? read_fully(file, stored, data_bytes) : 0;
    const int64_t after = got >= 0 ? read_fully(file, &extra, 1) : 0;
    if (!stored) {
        tf_error_prefix(err, "%s", path);
        status = TF_ERR_INPUT;
    } else if (got < 0 || after < 0) {
        status = READ_FAILED;
    } else if ((size_t)got < data_bytes) {
        status = tf_error_set(err, TF_ERR_INPUT, "%s: .npy data is %lld bytes, the shape needs %zu (truncated)", path,
                              (long long)got, data_bytes);
    } else if (after > 0) {
        status = tf_error_set(err, TF_ERR_INPUT, "%s: .npy data is more than the %zu bytes the shape needs "
                              "(trailing bytes)", path, data_bytes);
    }
    if (status == TF_OK && fortran_order)
        store_data(out, data, stored, 1, item_size);
    else if (status == TF_OK)
        out->data = data;
    if (fortran_order)
        free(stored);
    if (status != TF_OK)
        free(data);
    return status;
}

int npy_read(const char *path, npy_array *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    if (input_check(path, err) != TF_OK)
        return TF_ERR_INPUT;
    gzFile file = gzopen(path, "rb");
    if (!file)
        return tf_error_set(err, TF_ERR_INPUT, "%s: cannot open: %s", path,
                            errno ? strerror(errno) : "out of memory in zlib");
    int status = read_open(file, path, out, err);
    if (status == READ_FAILED) {
        int zerr;
        const char *why = gzerror(file, &zerr);
        if (zerr == Z_ERRNO)
            status = tf_error_set(err, TF_ERR_SYSTEM, "%s: read failed: %s", path, strerror(errno));
        else
            status = tf_error_set(err, TF_ERR_INPUT, "%s: gzip data truncated or corrupt (zlib: %s)", path, why);
    }
    gzclose(file);
    if (status != TF_OK)
        memset(out, 0, sizeof *out);
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
        return err->code;
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

    output_file out;
    if (output_open(&out, NULL, path, err) != TF_OK)
        return err->code;
    output_write(&out, header, 10 + header_length);
    if (count > 0)
        output_write(&out, data, (size_t)count * (dtype == NPY_FLOAT32 ? 4 : 8));
    return output_commit(&out, err);
}

int npy_write_tensor(const char *path, const tensor *t, tf_error *err)
{
    return npy_write(path, NPY_FLOAT32, t->ndim, t->shape, t->data, err);
}
