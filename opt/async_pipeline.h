/**
 * @file opt/async_pipeline.h
 * @brief Sven's prefetching ([Sven] §3.3.1): a producer thread builds the structures of the
 *        next batches (for the event trainer: negatives, entries, Algorithm 2's plan, request
 *        lists) into a bounded queue while the trainer computes the current one.
 *
 * Twin of building each batch when it is needed. Exact: a batch's structure depends only on
 * read-only data (the stream, the temporal CSR, the seed, the placement), never on node memory
 * or weights, so building it earlier, on another thread, gives the same bits. The queue hands
 * items out strictly in index order, whatever the depth, so the stream the trainer sees is the
 * one it would build itself (verify/test_async.c: depths 0..4, the same hashes).
 *
 * The queue is generic: items are the caller's objects, built by the caller's function. The
 * producer thread calls only that function: it must be reentrant, touch only its item and its
 * context, and make no MPI call (MPI is initialized with MPI_THREAD_FUNNELED) and no OpenMP
 * region. Depth 0 starts no thread: batch_queue_pop() builds the item itself, with the same
 * function, which is the plain trainer's behaviour.
 *
 * Ownership: the caller creates the items (depth + 1 of them, one for depth 0) and frees them
 * after batch_queue_stop(); the queue owns its thread and its lock.
 */
#ifndef TWOFOLD_OPT_ASYNC_PIPELINE_H
#define TWOFOLD_OPT_ASYNC_PIPELINE_H

#include <pthread.h>
#include <stdint.h>

#include "ref/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The deepest queue: Sven's pipeline overlaps one batch; a few more absorb jitter. */
#define BATCH_QUEUE_MAX_DEPTH 4

/** Fill @p item with batch @p index. Reentrant; on failure a one-line message in @p err. */
typedef int (*batch_build_fn)(void *context, int64_t index, void *item, tf_error *err);

/** A bounded queue of built batches with its producer thread. */
typedef struct batch_queue {
    int depth;                  /**< batches built ahead (0: no thread) */
    int slots;                  /**< items in the ring: depth + 1 (the one the consumer holds) */
    int64_t count;              /**< batches 0 .. count-1 are built, in order */
    void **items;               /**< [slots] the caller's items (borrowed); batch i lives in items[i % slots] */
    batch_build_fn build;       /**< the builder */
    void *context;              /**< its context */
    pthread_t producer;         /**< the thread (when depth > 0) */
    int running;                /**< 1 while the thread exists (join pending) */
    pthread_mutex_t lock;       /**< guards the counters below */
    pthread_cond_t changed;     /**< signalled whenever a counter or `stopping` changes */
    int64_t built;              /**< batches built so far */
    int64_t taken;              /**< batches handed out by batch_queue_pop() */
    int64_t recycled;           /**< batches given back by batch_queue_recycle() */
    int stopping;               /**< 1: the producer must finish */
    int64_t failed_at;          /**< the index whose build failed, or -1 */
    tf_error failure;           /**< its message */
} batch_queue;

/**
 * Start building batches 0 .. @p count-1 into @p items [depth + 1] (for depth 0: [1]) with
 * @p build. @p depth in 0 .. BATCH_QUEUE_MAX_DEPTH.
 */
int batch_queue_start(batch_queue *q, int depth, int64_t count, void **items, batch_build_fn build, void *context,
                      tf_error *err);

/**
 * The next batch in index order: waits until it is built. Hands out @p *item until
 * batch_queue_recycle(); at most one item is out at a time. Fails with the builder's own message
 * when that batch's build failed, and with "no batch left" after the last one.
 */
int batch_queue_pop(batch_queue *q, void **item, tf_error *err);

/** Give back the item the last pop handed out, so the producer may build into it. */
void batch_queue_recycle(batch_queue *q);

/** Stop the producer (it finishes the build it is in), join it, release the lock. Safe at any
 *  time, also twice, also after a failed start. */
void batch_queue_stop(batch_queue *q);

#ifdef __cplusplus
}
#endif

#endif
