/**
 * @file opt/async_pipeline.h
 * Twins: event_trainer_epoch() and event_trainer_evaluate() (ref/train_events.h), pipelined.
 * @brief Sven's pipelining ([Sven] §3.3): a producer thread builds the structures of the
 *        next batches (for the event trainer: negatives, entries, Algorithm 2's plan, request
 *        lists) into a bounded queue while the trainer computes the current one; the event
 *        trainer's gradient all-reduce delayed by one step (Eq. 13).
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

#include "opt/async.h"
#include "opt/async_microbatch.h"
#include "opt/train_events.h"
#include "ref/core/error.h"

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
    int ring_size;              /**< items in the ring: depth + 1 (the one the consumer holds) */
    int64_t count;              /**< batches 0 .. count-1 are built, in order */
    void **items;               /**< [ring_size] the caller's items (borrowed); batch i lives in items[i % ring_size] */
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


/* ---- Sven's pipeline on the distributed event trainer (opt/train_events.h) ------------------------ */

/** A pipeline's batch: planned, and (with micro-batches, a training batch) split. */
typedef struct pipeline_item {
    dispatch_batch batch;       /**< step 1's plan */
    microbatch_split split;     /**< its micro-batches (count 0: run whole) */
} pipeline_item;

/**
 * The distributed event trainer with prefetching, micro-batches and stale gradients ([Sven]
 * §3.3.1-3.3.3, Eq. 13).
 *
 * Twin of opt_event_trainer_epoch() / opt_event_trainer_evaluate() and, for staleness 1,
 * of the reference event trainer with event_train_options.staleness = 1.
 *
 * **Prefetch** (depth D in 1..4): a producer thread runs dispatch_batch_build() for the listed
 * batches into D + 1 dispatch_batch items with its own scratch table; the trainer takes them in
 * order (the item's buffers are swapped into tr->batch, so steps 2-8 of opt/train_events.h run
 * unchanged). D = 0 builds each batch on the main thread with the same function. A plan reads
 * only read-only data, so the batch stream, the parameters and the memory are bitwise those of
 * the plain trainer for every depth.
 *
 * **Micro-batches** (n in 1..MICROBATCH_MAX, Sven's mode, training batches): the builder also
 * cuts each batch into n micro-batches (opt/async_microbatch.h) and steps 2-5 run through them,
 * each micro-batch's row fetch overlapping the compute of the one before. Memory bitwise, the
 * gradients fp (n = 1: bitwise); row and id bytes unchanged, n counts per pair instead of one.
 *
 * **Stale gradients** (staleness 1): step 6's blocking all-reduce is replaced by a
 * opt_delayed_gradient (opt/async.h): batch k's gradient starts a non-blocking all-reduce and batch
 * k - 1's sum is applied; the all-reduce is driven (comm_test()) between the steps of the next
 * batch, and the last one is waited for where the training split ends, before evaluation. Node
 * memory is never stale: batch k writes the s' of its own forward before batch k + 1 reads it.
 * Staleness 0 uses the blocking all-reduce of the plain trainer: bitwise that trainer. Staleness
 * 1 on one rank is bitwise the reference's recurrence; on R ranks its gradients are fp-equal
 * (the all-reduce adds in another order) and the memory bitwise, given the same parameters.
 *
 * **Bytes** are those of the plain trainer (the same exchanges; the non-blocking all-reduce is
 * counted like the blocking one).
 *
 * Ownership: event_pipeline_create() borrows the trainer (created with staleness 0) and owns the
 * items, the scratch table and the reducer; event_pipeline_free() releases them.
 */
typedef struct event_pipeline {
    opt_event_trainer *tr;                               /**< the trainer (borrowed) */
    int prefetch;                                       /**< queue depth 0..BATCH_QUEUE_MAX_DEPTH */
    int staleness;                                      /**< 0 or 1 */
    int micro_batches;                                  /**< n, or 0: batches run whole */
    pipeline_item items[BATCH_QUEUE_MAX_DEPTH + 1];     /**< [prefetch + 1] batches built ahead */
    microbatch_split held;                              /**< the split of the batch in tr->batch */
    void *item_pointers[BATCH_QUEUE_MAX_DEPTH + 1];     /**< their addresses, for the queue */
    dispatch_table table;                               /**< the builder's scratch (one builder at a time) */
    const event_batch_spec *batches;                    /**< the listing being built (during an epoch) */
    batch_queue queue;                                  /**< builds it ahead (during an epoch) */
    opt_delayed_gradient reducer;                       /**< the gradient all-reduce, delayed or not */
    double wait_seconds;                                /**< main thread: waiting for (or building) plans */
} event_pipeline;

/**
 * Put a pipeline around @p tr. Collective (nothing is exchanged; every rank must call it).
 * @param p          out
 * @param tr         a created trainer (staleness 0 in its options; borrowed)
 * @param prefetch   queue depth 0..BATCH_QUEUE_MAX_DEPTH
 * @param staleness  0 or 1
 * @param micro_batches  n in 1..MICROBATCH_MAX (Sven's mode only), or 0: batches run whole
 * @param err        out: a bad depth, staleness or n, micro-batches outside Sven's mode, no memory
 * @return 0, or TF_ERR_INPUT (nothing is left allocated)
 */
int event_pipeline_create(event_pipeline *p, opt_event_trainer *tr, int prefetch, int staleness, int micro_batches,
                          tf_error *err);

/** Release what the pipeline owns (not the trainer). Safe on a zeroed pipeline. */
void event_pipeline_free(event_pipeline *p);

/** Step 1 on the main thread: plan @p global into p->tr->batch and split it (as the builder does). */
int event_pipeline_plan(event_pipeline *p, const event_batch_spec *global, tf_error *err);

/** Steps 2-8 of the batch planned in p->tr->batch (through its micro-batches when split), the
 *  gradient through the reducer. Collective. */
int event_pipeline_run_planned(event_pipeline *p, double *loss, float *scores, tf_error *err);

/** The end of the training split: the delayed gradient's Adam step (staleness 1). Collective. */
int event_pipeline_flush(event_pipeline *p, tf_error *err);

/** Twin of event_trainer_epoch(): opt_event_trainer_epoch() with the pipeline (the reference's loop,
 *  event_trainer_epoch_with(), taking the batches from the queue). Collective. */
int opt_event_pipeline_epoch(event_pipeline *p, event_epoch_report *report, progress_fn progress,
                             void *progress_context, tf_error *err);

/** Twin of event_trainer_evaluate(): opt_event_trainer_evaluate() with the pipeline. Collective. */
int opt_event_pipeline_evaluate(event_pipeline *p, event_metrics *validation, event_metrics *test,
                                progress_fn progress, void *progress_context, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
