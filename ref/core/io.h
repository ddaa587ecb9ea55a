/**
 * @file ref/core/io.h
 * @brief Reading data files: whole file into memory (gzip or plain), lines, numbers.
 *
 * The loaders parse from memory, never from a FILE*, for two reasons: the same parser then
 * serves files and fuzzers (which hand over bytes), and gzip becomes invisible — zlib's
 * gzread() returns plain files unchanged and decompresses gzip ones.
 */
#ifndef TWOFOLD_REF_IO_H
#define TWOFOLD_REF_IO_H

#include <stddef.h>
#include <stdint.h>

#include "ref/core/error.h"

/** A file's whole (decompressed) content. Owns `data`; free with text_free(). */
typedef struct text {
    char *data;    /**< the bytes, followed by one extra '\0' so parsers may use C string calls */
    size_t size;   /**< number of bytes, not counting the terminating '\0' */
} text;

/**
 * Read all of @p path into @p out, decompressing if it is gzip.
 * Errors (TF_ERR_INPUT): missing or unreadable file, a directory, a truncated or corrupt
 * gzip stream, content larger than available memory. The message starts with the path.
 */
int text_read_file(const char *path, text *out, tf_error *err);

/** Copy @p size bytes into a new text (used by fuzzers and tests). */
int text_from_bytes(const void *bytes, size_t size, text *out, tf_error *err);

/** Release the memory held by @p t and zero it. Safe on a zeroed text. */
void text_free(text *t);

/**
 * Walks a text line by line, knowing the line number for error messages.
 * Line endings "\n" and "\r\n" are accepted; the returned line excludes them.
 */
typedef struct line_cursor {
    const char *next;   /**< start of the next line */
    const char *end;    /**< end of the text */
    long number;        /**< 1-based number of the line last returned (0 before the first) */
} line_cursor;

/** Start a cursor at the beginning of @p t, after a UTF-8 byte order mark if it starts with one. */
line_cursor line_cursor_start(const text *t);

/**
 * Advance to the next line. @return 1 with [*begin, *end) set to the line, or 0 at the end
 * of the text. A final line without newline is returned; an empty last line is not.
 */
int line_cursor_next(line_cursor *cursor, const char **begin, const char **end);

/** 1-based line number of @p position inside @p t (for parsers that report an offset). */
long text_line_of(const text *t, const char *position);

/**
 * Take the next field of a line. @p delimiter is a character such as ',' (every delimiter
 * separates two fields, so "a,,b" has an empty middle field) or ' ' for "runs of spaces and
 * tabs" (leading and trailing blanks ignored). @p position walks along [*, @p end).
 * @return 1 with [*begin, *stop) set to the field, or 0 when the line has no more fields.
 */
int next_field(const char **position, const char *end, char delimiter, const char **begin, const char **stop);

/** Number of fields next_field() would return for [begin, end). */
long count_fields(const char *begin, const char *end, char delimiter);

/**
 * Parse a decimal integer occupying exactly [begin, end) (no spaces, no fraction) into
 * value [1].
 * @return 0 on success, -1 if the field is empty, not an integer or out of int64 range.
 */
int parse_int64(const char *begin, const char *end, int64_t *value);

/**
 * Parse a finite floating-point number written in decimal (not C's hexadecimal "0x10") occupying
 * exactly [begin, end) into value [1].
 * @return 0 on success, -1 if not a number, -2 if NaN or infinite (callers word the error).
 */
int parse_double(const char *begin, const char *end, double *value);

/**
 * Format a file path into @p out (like snprintf). @return 0, or TF_ERR_INPUT "path too long"
 * when it does not fit, so a long directory name never silently names another file.
 */
int format_path(char *out, size_t size, tf_error *err, const char *format, ...) __attribute__((format(printf, 4, 5)));

/** Copy at most @p max bytes of [begin, end) into @p out for quoting in an error message. */
const char *quote_field(const char *begin, const char *end, char *out, size_t max);

#endif
