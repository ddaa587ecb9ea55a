#include "ref/memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t memory_limit;  /* 0 = none; set once by the command line */

void tf_set_memory_limit(uint64_t bytes) { memory_limit = bytes; }

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

int tf_check_memory(double bytes, const char *what, tf_error *err)
{
    uint64_t cap = tf_available_memory();
    const char *cap_name = "available";
    if (memory_limit != 0 && memory_limit < cap) {
        cap = memory_limit;
        cap_name = "the --memory-limit of";
    }
    if (bytes > (double)cap) {
        char need[32], have[32];
        return tf_error_set(err, TF_ERR_INPUT, "too large for memory: %s needs %s, %s %s", what,
                            tf_format_bytes(bytes, need, sizeof need), cap_name,
                            tf_format_bytes((double)cap, have, sizeof have));
    }
    return TF_OK;
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
    /* Small requests cannot be "too large"; skip the /proc read for them. */
    if (bytes < ((size_t)64 << 20) && (memory_limit == 0 || bytes <= memory_limit))
        return bytes ? bytes : 1;
    return tf_check_memory((double)bytes, what, err) == TF_OK ? bytes : 0;
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
