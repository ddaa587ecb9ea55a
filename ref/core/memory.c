#include "ref/core/memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* glibc reports the heap in use (mallinfo2, glibc 2.33 and later); elsewhere, or when a tool
 * such as Valgrind or a sanitizer replaces malloc, tf_heap_in_use() reads 0 and the limit
 * only caps each request. */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>
#define TWOFOLD_HAVE_MALLINFO2 1
#endif

static uint64_t memory_limit;  /* this process's share (0 = none); set once by the command line */
static uint64_t memory_limit_total; /* the budget of the whole run the share comes from */
static int memory_limit_ranks = 1;  /* the processes that share it */

void tf_set_memory_limit(uint64_t bytes) { tf_set_memory_limit_shared(bytes, 1); }

void tf_set_memory_limit_shared(uint64_t total, int ranks)
{
    memory_limit_ranks = ranks > 1 ? ranks : 1;
    memory_limit_total = total;
    memory_limit = total / (uint64_t)memory_limit_ranks;
}

uint64_t tf_memory_limit(void) { return memory_limit; }

uint64_t tf_memory_limit_total(void) { return memory_limit_total; }

uint64_t tf_heap_in_use(void)
{
#ifdef TWOFOLD_HAVE_MALLINFO2
    /* uordblks: bytes of live chunks in malloc's arenas (all threads' arenas summed);
     * hblkhd: bytes of large blocks malloc took straight from mmap. A free() lowers one of
     * them at once, so freed memory is back in the budget without this file seeing it. */
    struct mallinfo2 info = mallinfo2();
    return (uint64_t)info.uordblks + (uint64_t)info.hblkhd;
#else
    return 0;
#endif
}

int tf_memory_fits(double bytes, uint64_t *in_use)
{
    *in_use = 0;
    if (memory_limit == 0)
        return 1;
    *in_use = tf_heap_in_use();
    return (double)*in_use + bytes <= (double)memory_limit;
}

uint64_t tf_available_memory(void)
{
    FILE *meminfo = fopen("/proc/meminfo", "r");
    if (!meminfo)
        return UINT64_MAX;
    char line[256];
    unsigned long long kib = 0;
    int found = 0;
    while (fgets(line, sizeof line, meminfo))
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
            found = 1;
            break;
        }
    fclose(meminfo);
    return found ? (uint64_t)kib * 1024u : UINT64_MAX;
}

const char *tf_format_bytes(double bytes, char *out, size_t out_size)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int unit = 0;
    while (bytes >= 1024.0 && unit < 6) {
        bytes /= 1024.0;
        unit++;
    }
    snprintf(out, out_size, unit == 0 ? "%.0f %s" : "%.1f %s", bytes, units[unit]);
    return out;
}

/* The budget: what is in use plus the request must fit under --memory-limit. */
static int check_limit(double bytes, const char *what, tf_error *err)
{
    uint64_t in_use;
    if (tf_memory_fits(bytes, &in_use))
        return TF_OK;
    char need[32], used[32], limit[32], share[96] = "";
    if (memory_limit_ranks > 1) { /* the share is what was passed: say it */
        char each[32];
        snprintf(share, sizeof share, " (%s for each of %d ranks)",
                 tf_format_bytes((double)memory_limit, each, sizeof each), memory_limit_ranks);
    }
    return tf_error_set(err, TF_ERR_INPUT, "too large for memory: %s needs %s with %s in use, over the --memory-limit of %s%s",
                        what, tf_format_bytes(bytes, need, sizeof need),
                        tf_format_bytes((double)in_use, used, sizeof used),
                        tf_format_bytes((double)memory_limit_total, limit, sizeof limit), share);
}

/* What the kernel can still give: MemAvailable already leaves out the pages this process
 * holds, so the request alone is compared with it. */
static int check_available(double bytes, const char *what, tf_error *err)
{
    uint64_t available = tf_available_memory();
    if (bytes <= (double)available)
        return TF_OK;
    char need[32], have[32];
    return tf_error_set(err, TF_ERR_INPUT, "too large for memory: %s needs %s, available %s", what,
                        tf_format_bytes(bytes, need, sizeof need),
                        tf_format_bytes((double)available, have, sizeof have));
}

int tf_check_memory(double bytes, const char *what, tf_error *err)
{
    if (check_limit(bytes, what, err) != TF_OK)
        return err->code;
    return check_available(bytes, what, err);
}

/* Checks a request of count*size bytes; returns the byte count or 0 with err set. */
static size_t checked_size(size_t count, size_t size, const char *what, tf_error *err)
{
    if (size != 0 && count > SIZE_MAX / size) {
        tf_error_set(err, TF_ERR_INPUT, "too large for memory: %s would need %zu x %zu bytes (overflows)",
                     what, count, size);
        return 0;
    }
    size_t bytes = count * size;
    if (check_limit((double)bytes, what, err) != TF_OK)
        return 0;
    /* A request under 64 MiB cannot be too large for the machine by itself; skip the /proc
     * read for it (a whole plan is checked with tf_check_memory() before it starts). */
    if (bytes >= ((size_t)64 << 20) && check_available((double)bytes, what, err) != TF_OK)
        return 0;
    return bytes ? bytes : 1;
}

void *tf_alloc(size_t count, size_t size, const char *what, tf_error *err)
{
    size_t bytes = checked_size(count, size, what, err);
    if (bytes == 0)
        return NULL;
    void *memory = calloc(1, bytes);
    if (!memory) {
        char need[32];
        tf_error_set(err, TF_ERR_INPUT, "too large for memory: allocating %s for %s failed",
                     tf_format_bytes((double)bytes, need, sizeof need), what);
    }
    return memory;
}

void *tf_realloc(void *old, size_t count, size_t size, const char *what, tf_error *err)
{
    size_t bytes = checked_size(count, size, what, err);
    if (bytes == 0)
        return NULL;
    void *memory = realloc(old, bytes);
    if (!memory) {
        char need[32];
        tf_error_set(err, TF_ERR_INPUT, "too large for memory: growing %s to %s failed", what,
                     tf_format_bytes((double)bytes, need, sizeof need));
    }
    return memory;
}
