#include "ref/core/io.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "ref/core/memory.h"

int text_read_file(const char *path, text *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    struct stat info;
    if (stat(path, &info) != 0)
        return tf_error_set(err, TF_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    if (S_ISDIR(info.st_mode))
        return tf_error_set(err, TF_ERR_INPUT, "%s: is a directory, expected a data file", path);
    gzFile file = gzopen(path, "rb");
    if (!file)
        return tf_error_set(err, TF_ERR_INPUT, "%s: cannot open: %s", path,
                            errno ? strerror(errno) : "out of memory in zlib");

    /* Start from the on-disk size (exact for plain files) and grow for gzip. */
    size_t capacity = (size_t)info.st_size + 1 < 4096 ? 4096 : (size_t)info.st_size + 1;
    char *data = tf_alloc(capacity, 1, "the file's content", err);
    size_t size = 0;
    int status = TF_OK;
    if (!data) {
        tf_error_prefix(err, "%s", path);
        status = TF_ERR_INPUT;
    }
    while (status == TF_OK) {
        if (capacity - size < 2) {
            char *grown = tf_realloc(data, capacity * 2, 1, "the decompressed file", err);
            if (!grown) {
                tf_error_prefix(err, "%s", path);
                status = TF_ERR_INPUT;
                break;
            }
            data = grown;
            capacity *= 2;
        }
        size_t room = capacity - size - 1;
        unsigned chunk = room > (1u << 30) ? (1u << 30) : (unsigned)room;
        int got = gzread(file, data + size, chunk);
        if (got < 0) {
            int zerr;
            const char *why = gzerror(file, &zerr);
            status = tf_error_set(err, TF_ERR_INPUT, "%s: gzip data truncated or corrupt (zlib: %s)",
                                  path, zerr == Z_ERRNO ? strerror(errno) : why);
            break;
        }
        size += (size_t)got;
        if (got == 0) {
            /* gzread returns 0 both at a clean end and at a truncated gzip end. */
            int zerr;
            const char *why = gzerror(file, &zerr);
            if (zerr != Z_OK && zerr != Z_STREAM_END)
                status = tf_error_set(err, TF_ERR_INPUT, "%s: gzip data truncated or corrupt (zlib: %s)",
                                      path, why);
            break;
        }
    }
    gzclose(file);
    if (status != TF_OK) {
        free(data);
        return status;
    }
    data[size] = '\0';
    out->data = data;
    out->size = size;
    return TF_OK;
}

int text_from_bytes(const void *bytes, size_t size, text *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    char *data = tf_alloc(size + 1, 1, "a copy of the input", err);
    if (!data)
        return TF_ERR_INPUT;
    if (size)
        memcpy(data, bytes, size);
    data[size] = '\0';
    out->data = data;
    out->size = size;
    return TF_OK;
}

void text_free(text *t)
{
    free(t->data);
    t->data = NULL;
    t->size = 0;
}

line_cursor line_cursor_start(const text *t)
{
    line_cursor cursor = {t->data, t->data + t->size, 0};
    /* Editors on Windows start UTF-8 files with a byte order mark (EF BB BF). It is not part
     * of the first line: left in, it would glue itself to the first header name or number. */
    if (t->size >= 3 && memcmp(t->data, "\xEF\xBB\xBF", 3) == 0)
        cursor.next += 3;
    return cursor;
}

int line_cursor_next(line_cursor *cursor, const char **begin, const char **end)
{
    if (cursor->next >= cursor->end)
        return 0;
    const char *start = cursor->next;
    const char *newline = memchr(start, '\n', (size_t)(cursor->end - start));
    const char *stop = newline ? newline : cursor->end;
    cursor->next = newline ? newline + 1 : cursor->end;
    if (stop > start && stop[-1] == '\r')
        stop--;
    cursor->number++;
    *begin = start;
    *end = stop;
    return 1;
}

long text_line_of(const text *t, const char *position)
{
    long line = 1;
    for (const char *p = t->data; p < position && p < t->data + t->size; p++)
        line += *p == '\n';
    return line;
}

int next_field(const char **position, const char *end, char delimiter, const char **begin, const char **stop)
{
    const char *p = *position;
    if (delimiter == ' ') {
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        if (p >= end)
            return 0;
        *begin = p;
        while (p < end && *p != ' ' && *p != '\t')
            p++;
        *stop = p;
        *position = p;
        return 1;
    }
    if (p > end) /* past the end: the previous field ended the line */
        return 0;
    *begin = p;
    while (p < end && *p != delimiter)
        p++;
    *stop = p;
    *position = p + 1; /* skip the delimiter; one past `end` after the last field */
    return 1;
}

long count_fields(const char *begin, const char *end, char delimiter)
{
    long count = 0;
    const char *position = begin, *field_begin, *field_end;
    while (next_field(&position, end, delimiter, &field_begin, &field_end))
        count++;
    return count;
}

int parse_int64(const char *begin, const char *end, int64_t *value)
{
    if (begin >= end)
        return -1;
    char buffer[32];
    size_t length = (size_t)(end - begin);
    if (length >= sizeof buffer)
        return -1;
    memcpy(buffer, begin, length);
    buffer[length] = '\0';
    /* strtoll would skip leading spaces and accept "+"; be stricter: digits, optional '-'. */
    const char *digits = buffer[0] == '-' ? buffer + 1 : buffer;
    if (*digits == '\0')
        return -1;
    for (const char *p = digits; *p; p++)
        if (*p < '0' || *p > '9')
            return -1;
    errno = 0;
    long long parsed = strtoll(buffer, NULL, 10);
    if (errno == ERANGE)
        return -1;
    *value = parsed;
    return 0;
}

int parse_double(const char *begin, const char *end, double *value)
{
    if (begin >= end)
        return -1;
    char buffer[64];
    size_t length = (size_t)(end - begin);
    if (length >= sizeof buffer)
        return -1;
    memcpy(buffer, begin, length);
    buffer[length] = '\0';
    if (buffer[0] == ' ' || buffer[0] == '\t')
        return -1;
    /* strtod also reads C's hexadecimal ("0x10" as 16): no data file writes numbers so, and a field
     * that does is garbage to refuse, not a time or a weight to read. */
    const char *digits = buffer + (buffer[0] == '-' || buffer[0] == '+');
    if (digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X'))
        return -1;
    char *stop;
    double parsed = strtod(buffer, &stop);
    if (stop == buffer || *stop != '\0')
        return -1;
    if (!isfinite(parsed))
        return -2;
    *value = parsed;
    return 0;
}

const char *quote_field(const char *begin, const char *end, char *out, size_t max)
{
    size_t length = (size_t)(end - begin);
    if (length >= max)
        length = max - 1;
    for (size_t i = 0; i < length; i++)
        out[i] = (begin[i] >= 32 && begin[i] < 127) ? begin[i] : '?';
    out[length] = '\0';
    return out;
}

int format_path(char *out, size_t size, tf_error *err, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    int length = vsnprintf(out, size, format, args);
    va_end(args);
    if (length < 0 || (size_t)length >= size)
        return tf_error_set(err, TF_ERR_INPUT, "path too long (over %zu bytes): %.80s...", size - 1, out);
    return TF_OK;
}
