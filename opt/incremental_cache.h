/**
 * @file opt/incremental_cache.h
 * Twins: none — ReInc's cache of aggregations: a hit stands in for a recompute, changing no value.
 * @brief ReInc's cache of aggregations, with ReInc's eviction score and an LRU baseline,
 *        under one byte capacity.
 *
 * ReInc has two levels ([ReInc] §3.3.1-3.3.2; citations: chapters/references.md): the global
 * cache holds input-feature aggregations A_t X_t (reused across gates, overlapping windows and
 * as Agg_{t-1}); local caches hold one cell's hidden-state aggregations, reused across its
 * gates. The score tells
 * them apart only through I (global: L - S, or L - 1 for the decoder; local: 0) and F (a local
 * entry expires after its cell's gates, F = K - g), so one cache object serves either level.
 * In twofold the local level is the cell's own step record (ref/models/model_*.c), so this object
 * holds the global level.
 *
 * ReInc's priority ([ReInc] §3.3.3, Eq. 3): priority = F / S - I, the lowest evicted
 * first, where F is the entry's remaining future accesses, S its size and I its imminence.
 * The paper gives no unit for S; here S is the entry's bytes over the largest entry's bytes,
 * in (0, 1], so F / S counts future accesses per unit of the biggest tensor. An entry whose F
 * reaches 0 is evicted at once. A new entry whose priority is below every victim it would
 * need is not inserted. The LRU baseline evicts the least recently used entry and always
 * inserts.
 *
 * The cache stores copies and never changes a value: a miss means the caller recomputes,
 * and the incremental engine gives the same bits for a snapshot however it is reached
 * (opt/incremental.h), so results are bitwise the same for every policy and capacity.
 *
 * Ownership: the cache owns its entries' copies; get() copies out, put() copies in.
 */
#ifndef TWOFOLD_OPT_INCREMENTAL_CACHE_H
#define TWOFOLD_OPT_INCREMENTAL_CACHE_H

#include <stdint.h>

#include "ref/core/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Which entry leaves first when the cache is full. */
typedef enum cache_policy {
    CACHE_REINC, /**< lowest F / S - I first (ReInc Eq. 3) */
    CACHE_LRU,   /**< least recently used first */
} cache_policy;

/** "reinc" or "lru". */
const char *cache_policy_name(cache_policy policy);

/** Parse a policy name. @return 0, or TF_ERR_INPUT naming the choices. */
int cache_policy_parse(const char *name, cache_policy *policy, tf_error *err);

/** One cached aggregation. */
typedef struct cache_entry {
    int64_t key;         /**< caller's key */
    float *data;         /**< [count] the copy, or NULL when only accounting (simulation) */
    int64_t count;       /**< floats */
    int64_t future;      /**< F: accesses still to come */
    double imminence;    /**< I */
    uint64_t last_use;   /**< clock of the last get or put (LRU) */
} cache_entry;

/** What the cache did. */
typedef struct cache_stats {
    int64_t hits;        /**< gets answered */
    int64_t misses;      /**< gets not answered */
    int64_t inserted;    /**< puts kept */
    int64_t rejected;    /**< puts refused (ReInc: lower priority than every victim; or larger than the cache) */
    int64_t evicted;     /**< entries evicted for space */
    int64_t expired;     /**< entries dropped because F reached 0 */
    int64_t peak_bytes;  /**< most bytes held at once */
} cache_stats;

/** A cache. Zero-initialize, then incremental_cache_init(). */
typedef struct incremental_cache {
    cache_policy policy;     /**< eviction policy */
    int64_t capacity_bytes;  /**< bytes it may hold */
    int64_t used_bytes;      /**< bytes it holds */
    int64_t largest_bytes;   /**< largest entry seen (the unit of S) */
    int store_data;          /**< 0: account only (for replaying traces), 1: keep copies */
    cache_entry *entries;    /**< [count] */
    int64_t count;           /**< entries held */
    int64_t allocated;       /**< room in entries */
    uint64_t clock;          /**< advances on every get and put */
    cache_stats stats;       /**< counts */
} incremental_cache;

/** Set up an empty cache. @p store_data 0 keeps only sizes and scores (trace replay). */
void incremental_cache_init(incremental_cache *c, cache_policy policy, int64_t capacity_bytes, int store_data);

/** Release every entry. */
void incremental_cache_free(incremental_cache *c);

/**
 * Look up @p key. On a hit copy its count floats into out [count] (when data is stored and
 * @p out is not NULL), count one access (F decreases; at 0 the entry is dropped) and return 1;
 * on a miss return 0.
 */
int incremental_cache_get(incremental_cache *c, int64_t key, float *out);

/**
 * Offer a freshly computed aggregation: data [count] floats (may be NULL when not
 * storing), with @p future accesses still to come and imminence @p imminence. Makes room as
 * the policy says, or refuses. An entry with no future access is not kept.
 * @return 0, or TF_ERR_INPUT when the copy cannot be allocated.
 */
int incremental_cache_put(incremental_cache *c, int64_t key, const float *data, int64_t count,
                          int64_t future, double imminence, tf_error *err);

/** Hits / (hits + misses), 0 when nothing was asked. */
double incremental_cache_hit_rate(const incremental_cache *c);

#ifdef __cplusplus
}
#endif

#endif
