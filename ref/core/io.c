#include "ref/core/io.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "ref/core/memory.h"

const char *file_kind(unsigned mode)
{
    return S_ISREG(mode)    ? "a regular file"
           : S_ISDIR(mode)  ? "a directory"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISLNK(mode)  ? "a symbolic link"
           : S_ISSOCK(mode) ? "a socket"
                            : "not a regular file";
}

int input_check(const char *path, tf_error *err)
{
    struct stat info;
    if (stat(path, &info) != 0)
        return tf_error_set(err, TF_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    if (S_ISDIR(info.st_mode))
        return tf_error_set(err, TF_ERR_INPUT, "%s: is a directory, expected a data file", path);
    /* Opening a FIFO blocks until a writer comes; a device such as /dev/zero never ends. */
    if (!S_ISREG(info.st_mode))
        return tf_error_set(err, TF_ERR_INPUT, "%s: is %s, expected a regular file", path, file_kind(info.st_mode));
    return TF_OK;
}

/* gzread()'s failure as a message: an I/O error is the machine's, anything else the data's. */
static int read_failed(gzFile file, const char *path, tf_error *err)
{
    int zerr;
    const char *why = gzerror(file, &zerr);
    if (zerr == Z_ERRNO)
        return tf_error_set(err, TF_ERR_SYSTEM, "%s: read failed: %s", path, strerror(errno));
    return tf_error_set(err, TF_ERR_INPUT, "%s: gzip data truncated or corrupt (zlib: %s)", path, why);
}

int text_read_file(const char *path, text *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    struct stat info;
    if (input_check(path, err) != TF_OK || stat(path, &info) != 0)
        return err->code;
    gzFile file = gzopen(path, "rb");
    if (!file)
        return tf_error_set(err, TF_ERR_INPUT, "%s: cannot open: %s", path,
                            errno ? strerror(errno) : "out of memory in zlib");

    /* Start from the on-disk size (exact for plain files, checked against the budget before any
     * byte is read) and grow for gzip. The '\0' and one byte more: room for the read that finds
     * the end, so that a plain file is never copied into a buffer twice its size. */
    size_t capacity = (size_t)info.st_size + 2 < 4096 ? 4096 : (size_t)info.st_size + 2;
    char *data = tf_alloc(capacity, 1, "the file's content", err);
    size_t size = 0;
    int status = TF_OK;
    if (!data) {
        tf_error_prefix(err, "%s", path);
        status = TF_ERR_INPUT;
    }
    while (status == TF_OK) {
        if (capacity - size < 2) {
            char *grown = tf_realloc(data, capacity * 2, 1,
                                     gzdirect(file) ? "the file, which grew while read" : "the decompressed file", err);
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
            status = read_failed(file, path, err);
            break;
        }
        size += (size_t)got;
        if (got == 0) {
            /* gzread returns 0 both at a clean end and at a truncated gzip end. */
            int zerr;
            gzerror(file, &zerr);
            if (zerr != Z_OK && zerr != Z_STREAM_END)
                status = read_failed(file, path, err);
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

int line_is_blank_or_comment(const char *begin, const char *end)
{
    while (begin < end && (*begin == ' ' || *begin == '\t'))
        begin++;
    return begin == end || *begin == '#';
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

/* ---- writing -------------------------------------------------------------------------------- */

/* The directory part of @p path into @p out [size]: "." for "x", "/" for "/x". */
static void directory_of(const char *path, char *out, size_t size)
{
    snprintf(out, size, "%s", path);
    char *slash = strrchr(out, '/');
    if (!slash)
        snprintf(out, size, ".");
    else
        slash[slash == out] = '\0';
}

int directory_check(const char *name, const char *directory, tf_error *err)
{
    struct stat info;
    if (stat(directory, &info) != 0)
        return tf_error_set(err, TF_ERR_INPUT, "%s: the directory %s does not exist; create it first", name,
                            directory);
    if (!S_ISDIR(info.st_mode))
        return tf_error_set(err, TF_ERR_INPUT, "%s: %s is %s, not a directory", name, directory,
                            file_kind(info.st_mode));
    return TF_OK;
}

int output_check(const char *option, const char *path, tf_error *err)
{
    char name[4200];
    snprintf(name, sizeof name, "%s%s%s", option ? option : "", option ? " " : "", path);
    const size_t length = strlen(path);
    if (length == 0 || path[length - 1] == '/')
        return tf_error_set(err, TF_ERR_INPUT, "%s%s\"%s\": expected a file name", option ? option : "",
                            option ? " " : "", path);
    if (length + 16 > sizeof ((output_file *)0)->path)
        return tf_error_set(err, TF_ERR_INPUT, "%.80s...: path too long", name);
    struct stat info;
    const int exists = lstat(path, &info) == 0;
    if (exists && !S_ISREG(info.st_mode))
        return tf_error_set(err, TF_ERR_INPUT, "%s: is %s, which writing would replace; give a new name or a "
                            "regular file", name, file_kind(info.st_mode));
    /* The rename would replace a file we may not write (its directory allows it): refuse as open() would. */
    if (exists && access(path, W_OK) != 0)
        return tf_error_set(err, TF_ERR_INPUT, "%s: cannot write it: %s", name, strerror(errno));
    char directory[4096];
    directory_of(path, directory, sizeof directory);
    if (directory_check(name, directory, err) != TF_OK)
        return TF_ERR_INPUT;
    if (access(directory, W_OK | X_OK) != 0)
        return tf_error_set(err, TF_ERR_INPUT, "%s: cannot write in %s: %s", name, directory, strerror(errno));
    return TF_OK;
}

/* Lack of room is the machine's failure; anything else about creating a file is the path's. */
static int create_failure(int error)
{
    return error == ENOSPC || error == EDQUOT || error == EIO || error == EFBIG || error == ENOMEM ? TF_ERR_SYSTEM
                                                                                                 : TF_ERR_INPUT;
}

int output_open(output_file *out, const char *option, const char *path, tf_error *err)
{
    memset(out, 0, sizeof *out);
    if (output_check(option, path, err) != TF_OK)
        return TF_ERR_INPUT;
    snprintf(out->path, sizeof out->path, "%s", path);
    /* PATH.tmpXXXXXX, its name cut to 245 bytes first where needed: a name of up to 255 bytes (the
     * longest Linux file systems take) must not be refused because its temporary's is longer. */
    const char *slash = strrchr(path, '/');
    const size_t directory_length = slash ? (size_t)(slash + 1 - path) : 0;
    size_t name_length = strlen(path) - directory_length;
    name_length = name_length > 245 ? 245 : name_length;
    snprintf(out->temporary, sizeof out->temporary, "%.*s%.*s.tmpXXXXXX", (int)directory_length, path,
             (int)name_length, path + directory_length);
    int fd = mkstemp(out->temporary);
    if (fd < 0)
        return tf_error_set(err, create_failure(errno), "%s: cannot create a file beside it: %s", path,
                            strerror(errno));
    /* mkstemp makes the file private (0600); the output gets the mode a plain create would give. */
    const mode_t mask = umask(0);
    umask(mask);
    out->stream = fchmod(fd, 0666 & ~mask) == 0 ? fdopen(fd, "wb") : NULL;
    if (!out->stream) {
        const int error = errno;
        close(fd);
        unlink(out->temporary);
        return tf_error_set(err, TF_ERR_SYSTEM, "%s: cannot create a file beside it: %s", path, strerror(error));
    }
    return TF_OK;
}

void output_write(output_file *out, const void *bytes, size_t size)
{
    if (!out->error && size > 0 && fwrite(bytes, 1, size, out->stream) != size)
        out->error = errno ? errno : EIO;
}

int output_commit(output_file *out, tf_error *err)
{
    int error = out->error;
    if (!error && fflush(out->stream) != 0)
        error = errno;
    const int dropped = !error && ferror(out->stream); /* a fprintf failed earlier, its errno is gone */
    if (dropped)
        error = EIO;
    if (!error && fsync(fileno(out->stream)) != 0)
        error = errno;
    if (fclose(out->stream) != 0 && !error)
        error = errno;
    out->stream = NULL;
    struct stat info;
    if (!error && lstat(out->path, &info) == 0 && !S_ISREG(info.st_mode)) {
        unlink(out->temporary);
        out->temporary[0] = '\0';
        return tf_error_set(err, TF_ERR_INPUT, "%s: became %s while it was written; left as it is", out->path,
                            file_kind(info.st_mode));
    }
    if (!error && rename(out->temporary, out->path) != 0)
        error = errno;
    if (error)
        unlink(out->temporary);
    out->temporary[0] = '\0'; /* renamed or removed: output_discard() has nothing left to do */
    if (error)
        return tf_error_set(err, TF_ERR_SYSTEM, "%s: write failed: %s; %s is left as it was", out->path,
                            dropped ? "a write to it failed (disk full or I/O error)" : strerror(error), out->path);
    return TF_OK;
}

void output_discard(output_file *out)
{
    if (out->stream)
        fclose(out->stream);
    out->stream = NULL;
    if (out->temporary[0])
        unlink(out->temporary);
    out->temporary[0] = '\0';
}
