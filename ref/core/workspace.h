/**
 * @file ref/core/workspace.h
 * @brief Scratch memory reused from one window to the next: a bump allocator whose block
 *        grows to the largest window it has served and is then kept.
 *
 * A training step allocates the same buffers for every window: the predictions and their
 * gradients, the tape of every snapshot, the backward's scratch. Taking them from the heap
 * each time costs a malloc, a free and, for blocks of hundreds of KiB, fresh zeroed pages
 * from the kernel. A workspace hands them out of one block instead and takes them all back
 * at once (workspace_reset()), so after the first window a step allocates nothing.
 *
 * A request the block cannot hold gets a block of its own (tf_alloc()); the next reset frees
 * those and grows the main block to everything the last round used. The blocks come from
 * tf_alloc(), so they count against `--memory-limit` like every other data buffer.
 *
 * Usage:
 *
 *     workspace w;  workspace_init(&w);
 *     float *a = workspace_alloc(&w, n, sizeof *a, "what", &err);   // uninitialized
 *     float *b = workspace_zeroed(&w, n, sizeof *b, "what", &err);  // zeroed
 *     workspace_reset(&w);   // a and b are free again
 *     workspace_free(&w);
 */
#ifndef TWOFOLD_REF_WORKSPACE_H
#define TWOFOLD_REF_WORKSPACE_H

#include <stddef.h>

#include "ref/core/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Scratch memory handed out in order and taken back all at once. */
typedef struct workspace {
    char *block;        /**< the main block */
    size_t capacity;    /**< its bytes */
    size_t used;        /**< bytes handed out from it since the last reset */
    size_t wanted;      /**< bytes requested since the last reset, in or beside the block */
    void **extra;       /**< [extra_count] blocks of requests the main block could not hold */
    size_t extra_count;     /**< blocks in extra */
    size_t extra_capacity;  /**< room in extra */
} workspace;

/** An empty workspace (it allocates at its first request). */
void workspace_init(workspace *w);

/**
 * `count * size` bytes (as aligned as malloc's, each buffer padded to 64 bytes), valid until
 * the next workspace_reset() or workspace_free(); **not initialized**. @return NULL with TF_ERR_INPUT in @p err as
 * tf_alloc() (overflow, no memory, over the limit).
 */
void *workspace_alloc(workspace *w, size_t count, size_t size, const char *what, tf_error *err);

/** workspace_alloc(), zeroed. */
void *workspace_zeroed(workspace *w, size_t count, size_t size, const char *what, tf_error *err);

/** Take back everything handed out; grow the main block to the bytes the last round used. */
void workspace_reset(workspace *w);

/** Release all memory. */
void workspace_free(workspace *w);

#ifdef __cplusplus
}
#endif

#endif
