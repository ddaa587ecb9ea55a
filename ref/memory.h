/**
 * @file ref/memory.h
 * @brief Checked allocation: overflow-safe sizes and a clear error when data will not fit.
 *
 * Linux overcommits: a huge `malloc` succeeds and the process is killed later, when the
 * pages are touched. That is the worst way to learn a dataset is too large. So every
 * allocation whose size comes from data goes through tf_alloc(), which
 *  - refuses `count * size` overflow,
 *  - refuses a request larger than the memory the kernel reports available
 *    (`MemAvailable` in /proc/meminfo) or than the limit set by tf_set_memory_limit(),
 *  - and says what it was for and how many bytes it wanted.
 * Memory is returned zeroed. Free it with free().
 */
#ifndef TWOFOLD_REF_MEMORY_H
#define TWOFOLD_REF_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "ref/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Allocate `count * size` zeroed bytes for @p what (a phrase such as "event timestamps").
 * @return the memory (caller frees with free()), or NULL with TF_ERR_INPUT in @p err when
 *         the size overflows or exceeds the available memory or the limit. A request of
 *         0 bytes returns a valid 1-byte allocation so callers need no special case.
 */
void *tf_alloc(size_t count, size_t size, const char *what, tf_error *err);

/**
 * Grow or shrink @p old to `count * size` bytes with the same checks as tf_alloc().
 * New bytes are not zeroed. On failure @p old is untouched and still owned by the caller.
 */
void *tf_realloc(void *old, size_t count, size_t size, const char *what, tf_error *err);

/**
 * Check that @p bytes (a whole plan, e.g. all snapshots a generator will make) fits in the
 * available memory and under the limit. @return 0, or TF_ERR_INPUT naming @p what.
 */
int tf_check_memory(double bytes, const char *what, tf_error *err);

/**
 * Cap any single allocation at @p bytes (0 = no cap beyond available memory). The command
 * line's `--memory-limit` sets it, so a run fails early and clearly instead of swapping.
 */
void tf_set_memory_limit(uint64_t bytes);

/** Bytes the kernel reports available right now (MemAvailable), or UINT64_MAX if unknown. */
uint64_t tf_available_memory(void);

/** Format @p bytes as "12.3 MiB" into @p out (at least 32 chars). Returns @p out. */
const char *tf_format_bytes(double bytes, char *out, size_t out_size);

#ifdef __cplusplus
}
#endif

#endif
