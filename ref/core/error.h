/**
 * @file ref/core/error.h
 * @brief How every twofold function reports failure: a code and a one-line message.
 *
 * Library functions never print and never exit. A function that can fail takes a
 * `tf_error *err` as its last argument, returns 0 on success and a nonzero #tf_error_code
 * on failure, and leaves a one-line message in `err->message` that already names the
 * file, the line (or JSON path) and what was expected. Only `main` prints it and exits,
 * with the code as exit status. This is the redis/nccl-tests habit: errors travel as
 * values, so a caller can clean up, and a test can assert on the message.
 */
#ifndef TWOFOLD_REF_ERROR_H
#define TWOFOLD_REF_ERROR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Error codes; they double as the process exit status. 1 is left to `twofold verify` and
 * `twofold demo`, which exit with 1 when a twin differs from its reference: a script can tell
 * "the code is wrong" (1) from "the input is wrong" (2) from "the machine failed" (3).
 */
enum tf_error_code {
    TF_OK = 0,           /**< success */
    TF_ERR_INPUT = 2,    /**< bad input: malformed or missing data, bad option or path, too large for memory */
    TF_ERR_SYSTEM = 3,   /**< the machine failed us: disk full, I/O error, MPI or CUDA failure */
};

/** Room for one line of message (long file paths included). */
#define TF_ERROR_MESSAGE_SIZE 1024

/** A failure: its code and a human-readable line without trailing newline. */
typedef struct tf_error {
    int code;                              /**< a #tf_error_code; TF_OK when nothing failed */
    char message[TF_ERROR_MESSAGE_SIZE];   /**< e.g. "data.csv:12: expected 4 fields, found 3" */
} tf_error;

/**
 * Record a failure in @p err (which may be NULL) and return @p code, so a caller can write
 * `return tf_error_set(err, TF_ERR_INPUT, "%s:%ld: ...", path, line);`.
 */
int tf_error_set(tf_error *err, int code, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/**
 * Put "prefix: " in front of the message already in @p err (keeps its code). Used when a
 * lower layer knows the detail and the caller knows the file it was reading.
 */
void tf_error_prefix(tf_error *err, const char *format, ...) __attribute__((format(printf, 2, 3)));

/** Clear @p err to TF_OK and an empty message. */
void tf_error_clear(tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
