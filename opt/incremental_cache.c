#include "opt/incremental_cache.h"

#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"

const char *cache_policy_name(cache_policy policy) { return policy == CACHE_LRU ? "lru" : "reinc"; }

int cache_policy_parse(const char *name, cache_policy *policy, tf_error *err)
{
    if (strcmp(name, "reinc") == 0)
        *policy = CACHE_REINC;
    else if (strcmp(name, "lru") == 0)
        *policy = CACHE_LRU;
    else
        return tf_error_set(err, TF_ERR_INPUT, "unknown cache policy '%s': expected reinc or lru", name);
    return TF_OK;
}

void incremental_cache_init(incremental_cache *c, cache_policy policy, int64_t capacity_bytes, int store_data)
{
    memset(c, 0, sizeof *c);
    c->policy = policy;
    c->capacity_bytes = capacity_bytes;
    c->store_data = store_data;
}

void incremental_cache_free(incremental_cache *c)
{
    for (int64_t i = 0; i < c->count; i++)
        free(c->entries[i].data);
    free(c->entries);
    memset(c, 0, sizeof *c);
}

static int64_t entry_bytes(const cache_entry *e) { return e->count * (int64_t)sizeof(float); }

/* Drop entry i (order does not matter: the last one takes its place). */
static void drop(incremental_cache *c, int64_t i)
{
    c->used_bytes -= entry_bytes(&c->entries[i]);
    free(c->entries[i].data);
    c->entries[i] = c->entries[--c->count];
}

/* ReInc Eq. 3, with S relative to the largest entry seen. */
static double priority(const incremental_cache *c, const cache_entry *e)
{
    double size = c->largest_bytes > 0 ? (double)entry_bytes(e) / (double)c->largest_bytes : 1.0;
    return (double)e->future / size - e->imminence;
}

/* The entry the policy evicts first. */
static int64_t victim(const incremental_cache *c)
{
    int64_t best = 0;
    for (int64_t i = 1; i < c->count; i++) {
        const cache_entry *a = &c->entries[i], *b = &c->entries[best];
        if (c->policy == CACHE_LRU ? a->last_use < b->last_use : priority(c, a) < priority(c, b))
            best = i;
    }
    return best;
}

int incremental_cache_get(incremental_cache *c, int64_t key, float *out)
{
    c->clock++;
    for (int64_t i = 0; i < c->count; i++) {
        cache_entry *e = &c->entries[i];
        if (e->key != key)
            continue;
        if (out && e->data)
            memcpy(out, e->data, (size_t)e->count * sizeof(float));
        e->last_use = c->clock;
        c->stats.hits++;
        if (--e->future <= 0) {
            drop(c, i);
            c->stats.expired++;
        }
        return 1;
    }
    c->stats.misses++;
    return 0;
}

int incremental_cache_put(incremental_cache *c, int64_t key, const float *data, int64_t count,
                          int64_t future, double imminence, tf_error *err)
{
    c->clock++;
    const int64_t bytes = count * (int64_t)sizeof(float);
    if (bytes > c->largest_bytes)
        c->largest_bytes = bytes;
    if (future <= 0)
        return TF_OK;
    if (bytes > c->capacity_bytes) {
        c->stats.rejected++;
        return TF_OK;
    }
    cache_entry fresh = {key, NULL, count, future, imminence, c->clock};
    /* Which entries would have to go; ReInc refuses when the newcomer ranks below all of them. */
    if (c->used_bytes + bytes > c->capacity_bytes && c->policy == CACHE_REINC) {
        double newcomer = priority(c, &fresh);
        int64_t freed = 0, needed = c->used_bytes + bytes - c->capacity_bytes;
        uint8_t *taken = calloc((size_t)c->count + 1, 1);
        if (!taken)
            return tf_error_set(err, TF_ERR_SYSTEM, "aggregation cache: out of memory");
        int lower_than_all = 1;
        while (freed < needed) {
            int64_t best = -1;
            for (int64_t i = 0; i < c->count; i++)
                if (!taken[i] && (best < 0 || priority(c, &c->entries[i]) < priority(c, &c->entries[best])))
                    best = i;
            taken[best] = 1;
            freed += entry_bytes(&c->entries[best]);
            if (priority(c, &c->entries[best]) <= newcomer)
                lower_than_all = 0;
        }
        free(taken);
        if (lower_than_all) {
            c->stats.rejected++;
            return TF_OK;
        }
    }
    while (c->used_bytes + bytes > c->capacity_bytes) {
        drop(c, victim(c));
        c->stats.evicted++;
    }
    if (c->store_data) {
        fresh.data = tf_alloc((size_t)count, sizeof(float), "aggregation cache entry", err);
        if (!fresh.data)
            return TF_ERR_INPUT;
        memcpy(fresh.data, data, (size_t)count * sizeof(float));
    }
    if (c->count == c->allocated) {
        int64_t allocated = c->allocated ? 2 * c->allocated : 16;
        cache_entry *grown = tf_realloc(c->entries, (size_t)allocated, sizeof *grown, "aggregation cache", err);
        if (!grown) {
            free(fresh.data);
            return TF_ERR_INPUT;
        }
        c->entries = grown;
        c->allocated = allocated;
    }
    c->entries[c->count++] = fresh;
    c->used_bytes += bytes;
    if (c->used_bytes > c->stats.peak_bytes)
        c->stats.peak_bytes = c->used_bytes;
    c->stats.inserted++;
    return TF_OK;
}

double incremental_cache_hit_rate(const incremental_cache *c)
{
    int64_t asked = c->stats.hits + c->stats.misses;
    return asked ? (double)c->stats.hits / (double)asked : 0.0;
}
