/**
 * @file ref/core/io.h
 * @brief Reading data files (whole file into memory, gzip or plain; lines, numbers) and writing
 *        output files so that a failure never destroys what was at the path.
 *
 * The loaders parse from memory, never from a FILE*, for two reasons: the same parser then
 * serves files and fuzzers (which hand over bytes), and gzip becomes invisible — zlib's
 * gzread() returns plain files unchanged and decompresses gzip ones.
 *
 * Every read starts with stat(): only a regular file is read. A FIFO would block the open until
 * some other process writes to it (a hang), and a device such as /dev/zero never ends; both are
 * refused in one line before anything is opened.
 *
 * Every write goes through output_open() and output_commit(): the bytes go to a temporary file
 * PATH.tmpXXXXXX in the target's directory, every write, the flush, the fsync and the close are
 * checked, and only then is the temporary renamed over PATH. So a full disk or an I/O error
 * leaves PATH as it was (and no temporary behind), and a kill leaves at most the temporary. The
 * rename replaces only a regular file or nothing: a symbolic link, directory, FIFO, device or
 * socket at PATH is refused (output_check(), which callers also run before their work, so that
 * a bad output path never costs a training run). Failures of the machine (disk full, I/O error)
 * are TF_ERR_SYSTEM, bad paths TF_ERR_INPUT.
 */
#ifndef TWOFOLD_REF_IO_H
#define TWOFOLD_REF_IO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ref/core/error.h"

/** A file's whole (decompressed) content. Owns `data`; free with text_free(). */
typedef struct text {
    char *data;    /**< the bytes, followed by one extra '\0' so parsers may use C string calls */
    size_t size;   /**< number of bytes, not counting the terminating '\0' */
} text;

/**
 * Read all of @p path into @p out, decompressing if it is gzip.
 * Errors (TF_ERR_INPUT): missing or unreadable file, anything but a regular file (a directory,
 * FIFO, device or socket, refused before it is opened), a truncated or corrupt gzip stream,
 * content larger than available memory or the --memory-limit (a plain file's size is checked
 * before any byte is read). TF_ERR_SYSTEM: an I/O error while reading. The message starts with
 * the path.
 */
int text_read_file(const char *path, text *out, tf_error *err);

/**
 * TF_OK if @p path is a regular file (symbolic links followed), else TF_ERR_INPUT "PATH: is a
 * FIFO, expected a regular file" (or a directory, a device, a socket; "cannot open" when missing).
 */
int input_check(const char *path, tf_error *err);

/** What a file of mode @p mode is, for messages: "a regular file", "a FIFO", "a directory", ... */
const char *file_kind(unsigned mode);

/**
 * TF_OK if @p directory exists and is a directory; else TF_ERR_INPUT "NAME: the directory D does
 * not exist; create it first", or "NAME: D is a regular file, not a directory" (advice to create
 * what is already there would be advice the user cannot follow). @p name heads the message.
 */
int directory_check(const char *name, const char *directory, tf_error *err);

/**
 * Check an output path before any work: @p path must be absent or a regular file (not a symbolic
 * link, directory, FIFO, device or socket, which writing would replace) that this process may
 * write, and its directory must exist and be writable. @p option names the path in messages ("--gantt"; NULL: the path alone).
 * @return TF_OK, or TF_ERR_INPUT with one line naming the path and what is there.
 */
int output_check(const char *option, const char *path, tf_error *err);

/** An output file being written: a temporary beside the target, renamed over it when whole. */
typedef struct output_file {
    FILE *stream;          /**< write here (fprintf, fwrite, output_write()); owned until commit or discard */
    int error;             /**< the errno of the first write that failed (output_write()), 0 if none */
    char path[4096];       /**< the target */
    char temporary[4128];  /**< PATH.tmpXXXXXX, in the target's directory */
} output_file;

/**
 * Check @p path with output_check() and create its temporary. @return TF_OK with @p out open, or
 * TF_ERR_INPUT (a bad path) / TF_ERR_SYSTEM (the temporary could not be created for lack of
 * space) with nothing created.
 */
int output_open(output_file *out, const char *option, const char *path, tf_error *err);

/** fwrite() that remembers the first failure for output_commit(). */
void output_write(output_file *out, const void *bytes, size_t size);

/**
 * Finish @p out: flush, fsync and close the temporary, checking each, and rename it over the path
 * (refused if something other than a regular file appeared there meanwhile). On any failure the
 * temporary is removed and the path left as it was: TF_ERR_SYSTEM "PATH: write failed: No space
 * left on device; PATH is left as it was". @p out is closed either way.
 */
int output_commit(output_file *out, tf_error *err);

/** Abandon @p out: close and remove the temporary; the path is left as it was. */
void output_discard(output_file *out);

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

/** 1 if the line [begin, end) is blank or a comment (its first non-blank character is `#`). */
int line_is_blank_or_comment(const char *begin, const char *end);

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
