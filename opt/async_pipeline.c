#include "opt/async_pipeline.h"

#include <string.h>

/* The producer: build batch `built` whenever its slot is free (the batch `slots` before it has
 * been given back), until every batch is built, a build fails, or the queue stops. */
static void *produce(void *argument)
{
    batch_queue *q = argument;
    pthread_mutex_lock(&q->lock);
    for (;;) {
        while (!q->stopping && q->built < q->count && q->built - q->recycled >= q->slots)
            pthread_cond_wait(&q->changed, &q->lock);
        if (q->stopping || q->built >= q->count)
            break;
        const int64_t index = q->built;
        void *item = q->items[index % q->slots];
        pthread_mutex_unlock(&q->lock); /* build without the lock: the consumer keeps working */
        tf_error err;
        tf_error_clear(&err);
        const int status = q->build(q->context, index, item, &err);
        pthread_mutex_lock(&q->lock);
        if (status != TF_OK) {
            q->failed_at = index;
            q->failure = err;
            pthread_cond_broadcast(&q->changed);
            break;
        }
        q->built++;
        pthread_cond_broadcast(&q->changed);
    }
    pthread_mutex_unlock(&q->lock);
    return NULL;
}

int batch_queue_start(batch_queue *q, int depth, int64_t count, void **items, batch_build_fn build, void *context,
                      tf_error *err)
{
    memset(q, 0, sizeof *q);
    q->failed_at = -1;
    if (depth < 0 || depth > BATCH_QUEUE_MAX_DEPTH)
        return tf_error_set(err, TF_ERR_INPUT, "prefetch queue depth %d: expected a queue depth in [0, %d]", depth,
                            BATCH_QUEUE_MAX_DEPTH);
    q->depth = depth;
    q->slots = depth + 1;
    q->count = count;
    q->items = items;
    q->build = build;
    q->context = context;
    if (depth == 0)
        return TF_OK; /* pop() builds each batch itself */
    if (pthread_mutex_init(&q->lock, NULL) != 0)
        return tf_error_set(err, TF_ERR_SYSTEM, "prefetch queue: cannot create its lock");
    if (pthread_cond_init(&q->changed, NULL) != 0) {
        pthread_mutex_destroy(&q->lock);
        return tf_error_set(err, TF_ERR_SYSTEM, "prefetch queue: cannot create its condition variable");
    }
    if (pthread_create(&q->producer, NULL, produce, q) != 0) {
        pthread_cond_destroy(&q->changed);
        pthread_mutex_destroy(&q->lock);
        return tf_error_set(err, TF_ERR_SYSTEM, "prefetch queue: cannot start the producer thread");
    }
    q->running = 1;
    return TF_OK;
}

int batch_queue_pop(batch_queue *q, void **item, tf_error *err)
{
    *item = NULL;
    if (q->taken >= q->count)
        return tf_error_set(err, TF_ERR_INPUT, "prefetch queue: no batch left after %lld", (long long)q->count);
    const int64_t index = q->taken;
    if (q->depth == 0) {
        if (q->build(q->context, index, q->items[0], err) != TF_OK)
            return err->code;
        q->taken++;
        *item = q->items[0];
        return TF_OK;
    }
    pthread_mutex_lock(&q->lock);
    while (q->built <= index && q->failed_at < 0)
        pthread_cond_wait(&q->changed, &q->lock);
    int status = TF_OK;
    if (q->built > index) {
        *item = q->items[index % q->slots];
        q->taken++;
    } else {
        *err = q->failure;
        status = err->code;
    }
    pthread_mutex_unlock(&q->lock);
    return status;
}

void batch_queue_recycle(batch_queue *q)
{
    if (q->depth == 0)
        return;
    pthread_mutex_lock(&q->lock);
    if (q->recycled < q->taken)
        q->recycled++;
    pthread_cond_broadcast(&q->changed);
    pthread_mutex_unlock(&q->lock);
}

void batch_queue_stop(batch_queue *q)
{
    if (!q->running)
        return;
    pthread_mutex_lock(&q->lock);
    q->stopping = 1;
    pthread_cond_broadcast(&q->changed);
    pthread_mutex_unlock(&q->lock);
    pthread_join(q->producer, NULL);
    pthread_cond_destroy(&q->changed);
    pthread_mutex_destroy(&q->lock);
    q->running = 0;
}
