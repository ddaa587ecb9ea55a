#include "ref/core/workspace.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"

/* Buffers are padded to whole cache lines, so two never share one. */
#define ALIGNMENT 64

void workspace_init(workspace *w) { memset(w, 0, sizeof *w); }

static size_t rounded(size_t bytes) { return (bytes + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT; }

void *workspace_alloc(workspace *w, size_t count, size_t size, const char *what, tf_error *err)
{
    if (size && count > SIZE_MAX / size - ALIGNMENT) /* tf_alloc() words the error */
        return tf_alloc(count, size, what, err);
    const size_t bytes = rounded(count * size > 0 ? count * size : 1);
    w->wanted += bytes;
    if (w->used + bytes <= w->capacity) {
        void *p = w->block + w->used;
        w->used += bytes;
        return p;
    }
    /* Beside the block until the next reset. */
    if (w->extra_count == w->extra_capacity) {
        size_t capacity = w->extra_capacity ? 2 * w->extra_capacity : 8;
        void **grown = tf_realloc(w->extra, capacity, sizeof *grown, what, err);
        if (!grown)
            return NULL;
        w->extra = grown;
        w->extra_capacity = capacity;
    }
    void *p = tf_alloc(bytes / ALIGNMENT, ALIGNMENT, what, err);
    if (p)
        w->extra[w->extra_count++] = p;
    return p;
}

void *workspace_zeroed(workspace *w, size_t count, size_t size, const char *what, tf_error *err)
{
    void *p = workspace_alloc(w, count, size, what, err);
    if (p)
        memset(p, 0, count * size);
    return p;
}

void workspace_reset(workspace *w)
{
    for (size_t i = 0; i < w->extra_count; i++)
        free(w->extra[i]);
    if (w->extra_count && w->wanted > w->capacity) {
        /* One block for everything the last round wanted. If even that fails, the next round
         * works as this one did, beside the block. */
        tf_error ignored;
        char *block = tf_alloc(w->wanted / ALIGNMENT, ALIGNMENT, "scratch", &ignored);
        if (block) {
            free(w->block);
            w->block = block;
            w->capacity = w->wanted;
        }
    }
    w->extra_count = 0;
    w->used = 0;
    w->wanted = 0;
}

void workspace_free(workspace *w)
{
    workspace_reset(w);
    free(w->block);
    free(w->extra);
    workspace_init(w);
}
