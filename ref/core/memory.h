/**
 * @file ref/core/memory.h
 * @brief Checked allocation: overflow-safe sizes and a clear error when data will not fit.
 *
 * Linux overcommits: a huge `malloc` succeeds and the process is killed later, when the
 * pages are touched. That is the worst way to learn a dataset is too large. So every
 * allocation whose size comes from data goes through tf_alloc(), which
 *  - refuses `count * size` overflow,
 *  - refuses a request larger than the memory the kernel reports available
 *    (`MemAvailable` in /proc/meminfo),
 *  - refuses a request that, added to the heap already in use, would pass the limit set by
 *    tf_set_memory_limit() (`--memory-limit`): the limit is a budget for the whole process
 *    (under mpiexec, the command line gives each of R processes 1/R of the run's budget:
 *    tf_set_memory_limit_shared()),
 *  - and says what it was for and how many bytes it wanted.
 * Memory is returned zeroed. Free it with free().
 *
 * **How the budget is kept.** Rather than count every allocation and every free() (hundreds of
 * call sites, and libraries allocate too), each check asks glibc how much heap is in use right
 * now (tf_heap_in_use(): `mallinfo2()`'s arena bytes in use plus its mmapped blocks). A free()
 * lowers that figure at once, so freed memory returns to the budget by itself, and memory
 * allocated outside tf_alloc() (small bookkeeping, library allocations, a few scratch buffers)
 * is counted against the next request even though it is never refused itself. The JSON
 * loader's cJSON tree is bounded by the same budget (ref/data/load_pygt_json.c installs cJSON
 * allocation hooks that ask tf_memory_fits()).
 *
 * **What the limit does not cover**, and so what a run's peak resident size may pass it by:
 *  - the program and its libraries from start to exit: code, OpenBLAS's buffers, MPI, and
 *    CUDA's libraries where they are built in (about 220 MiB resident on this project's
 *    machines, before any data): it is not data, so it is allowed on top of the limit;
 *  - malloc's freed pages that it keeps for reuse rather than returning to the kernel;
 *  - up to 1 MiB of cJSON nodes between two measurements (ref/data/load_pygt_json.c);
 *  - plain malloc() calls outside tf_alloc(), which are counted once allocated but never
 *    refused themselves: the optimized GRU cell's two [rows x 3 hidden] scratch buffers in
 *    opt/kernels.c (rows = EvolveGCN's feature width: parameter-sized, not vertex-sized),
 *    the `info` statistics' 1 and 8 bytes per vertex and event (ref/data/events.c), rank 0's
 *    gather of the event models' memory rows under MPI (opt/train_events.c), the micro-batch
 *    request table (opt/async_microbatch.c) and the staleness simulation's scratch
 *    (ref/async_embeddings.c).
 * The stated margin: a run's peak resident set is at most the footprint + the limit +
 * 16 MiB. verify/test_memory_budget.sh measures the footprint (the peak of `twofold --help`)
 * and the peak of runs under `--memory-limit` (wait4's ru_maxrss, verify/peak_rss.c), and
 * holds each to that bound.
 *
 * Where glibc's mallinfo2() is missing, or Valgrind or a sanitizer replaces malloc, the heap
 * in use reads 0 and the limit caps each request only.
 */
#ifndef TWOFOLD_REF_MEMORY_H
#define TWOFOLD_REF_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "ref/core/error.h"

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
 * Grow or shrink @p old to `count * size` bytes with the same checks as tf_alloc(). The old
 * block is still in use when the budget is checked, so old and new size count together, as
 * they may while realloc copies. New bytes are not zeroed. On failure @p old is untouched and
 * still owned by the caller.
 */
void *tf_realloc(void *old, size_t count, size_t size, const char *what, tf_error *err);

/**
 * Check that @p bytes (a whole plan, e.g. all snapshots a generator will make) fits in the
 * available memory and, added to the heap in use, under the limit. @return 0, or TF_ERR_INPUT
 * naming @p what.
 */
int tf_check_memory(double bytes, const char *what, tf_error *err);

/**
 * Set the process's memory budget to @p bytes (0 = none beyond available memory): every
 * tf_alloc(), tf_realloc() and tf_check_memory() afterwards fails when the heap in use plus the
 * request would pass it. The command line's `--memory-limit` sets it, so a run fails early
 * and clearly instead of swapping or being killed.
 */
void tf_set_memory_limit(uint64_t bytes);

/**
 * Set this process's budget to its share of a whole run's: @p total / @p ranks, for a run of
 * @p ranks processes (`--memory-limit` under `mpiexec -n R`, where the run's budget is shared
 * by its ranks). A refusal names the run's budget and the share.
 */
void tf_set_memory_limit_shared(uint64_t total, int ranks);

/** This process's budget: the one set by tf_set_memory_limit(), or its share (0 = none). */
uint64_t tf_memory_limit(void);

/** The whole run's budget that tf_set_memory_limit_shared() was given (0 = none). */
uint64_t tf_memory_limit_total(void);

/**
 * Bytes of heap this process has allocated and not freed (glibc `mallinfo2()`: `uordblks +
 * hblkhd`), all threads together; 0 where that cannot be measured (see the file comment).
 */
uint64_t tf_heap_in_use(void);

/**
 * 1 if @p bytes more fit in the budget (always, when no limit is set), else 0. The heap in
 * use it measured goes to @p in_use (0 when no limit is set), for the caller's message. For
 * allocators that cannot word an error themselves, such as cJSON's hooks.
 */
int tf_memory_fits(double bytes, uint64_t *in_use);

/** Bytes the kernel reports available right now (MemAvailable), or UINT64_MAX if unknown. */
uint64_t tf_available_memory(void);

/** Format @p bytes as "12.3 MiB" into @p out (at least 32 chars). Returns @p out. */
const char *tf_format_bytes(double bytes, char *out, size_t out_size);

#ifdef __cplusplus
}
#endif

#endif
