/**
 * @file ref/core/progress.h
 * @brief The progress callback that long operations (generators, training epochs) call now and
 *        then, so a program can show how far they are; the library itself never prints.
 */
#ifndef TWOFOLD_REF_PROGRESS_H
#define TWOFOLD_REF_PROGRESS_H

#include <stdint.h>

/** Called now and then by long operations: @p done of @p total units of @p stage finished. */
typedef void (*progress_fn)(void *context, const char *stage, int64_t done, int64_t total);

#endif
