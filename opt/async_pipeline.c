#include "opt/async_pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/core/clock.h"
#include "ref/core/memory.h"

/* The producer: build batch `built` whenever its place in the ring is free (the batch ring_size
 * places before it has been given back), until every batch is built, a build fails, or the queue
 * stops. */
static void *produce(void *argument)
{
    batch_queue *q = argument;
    pthread_mutex_lock(&q->lock);
    for (;;) {
        while (!q->stopping && q->built < q->count && q->built - q->recycled >= q->ring_size)
            pthread_cond_wait(&q->changed, &q->lock);
        if (q->stopping || q->built >= q->count)
            break;
        const int64_t index = q->built;
        void *item = q->items[index % q->ring_size];
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
    q->ring_size = depth + 1;
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
        *item = q->items[index % q->ring_size];
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

/* ---- Sven's pipeline on the distributed event trainer ----------------------------------------- */

void event_pipeline_free(event_pipeline *p)
{
    for (int i = 0; i <= BATCH_QUEUE_MAX_DEPTH; i++) {
        dispatch_batch_free(&p->items[i].batch);
        microbatch_split_free(&p->items[i].split);
    }
    microbatch_split_free(&p->held);
    dispatch_table_free(&p->table);
    opt_delayed_gradient_free(&p->reducer);
    memset(p, 0, sizeof *p);
}

int event_pipeline_create(event_pipeline *p, opt_event_trainer *tr, int prefetch, int staleness, int micro_batches,
                          tf_error *err)
{
    memset(p, 0, sizeof *p);
    if (prefetch < 0 || prefetch > BATCH_QUEUE_MAX_DEPTH)
        return tf_error_set(err, TF_ERR_INPUT, "prefetch %d: expected a queue depth in [0, %d]", prefetch,
                            BATCH_QUEUE_MAX_DEPTH);
    if (micro_batches < 0 || micro_batches > MICROBATCH_MAX)
        return tf_error_set(err, TF_ERR_INPUT, "%d micro-batches: expected 1..%d", micro_batches, MICROBATCH_MAX);
    if (micro_batches > 0 && tr->mode != DISPATCH_SVEN)
        return tf_error_set(err, TF_ERR_INPUT, "micro-batches split Sven's fetch: use --dispatch sven, not %s",
                            dispatch_mode_name(tr->mode));
    p->tr = tr;
    p->prefetch = prefetch;
    p->staleness = staleness;
    p->micro_batches = micro_batches;
    int status = opt_delayed_gradient_create(&p->reducer, tr->group, parameters_size(&tr->base.model.parameters), staleness,
                                      1, err);
    if (status == TF_OK)
        status = dispatch_table_create(&p->table, tr->base.events->num_nodes, err);
    if (status == TF_OK && micro_batches > 0)
        status = microbatch_split_create(&p->held, &tr->setup, err);
    for (int i = 0; status == TF_OK && i <= prefetch; i++) {
        status = dispatch_batch_create(&p->items[i].batch, &tr->setup, err);
        if (status == TF_OK && micro_batches > 0)
            status = microbatch_split_create(&p->items[i].split, &tr->setup, err);
        p->item_pointers[i] = &p->items[i];
    }
    if (status != TF_OK)
        event_pipeline_free(p);
    return status;
}

/* The queue's builder: batch `index` of the listing, with the pipeline's own scratch. Runs on the
 * producer thread: it reads only the trainer's read-only setup. */
static int build_item(const event_pipeline *p, pipeline_item *item, const event_batch_spec *global,
                      dispatch_table *table, tf_error *err)
{
    item->split.count = 0;
    if (dispatch_batch_build(&item->batch, &p->tr->setup, global, table, err) != TF_OK)
        return TF_ERR_INPUT;
    if (p->micro_batches > 0 && global->train)
        return microbatch_split_build(&item->split, &item->batch, &p->tr->setup, p->micro_batches, table, err);
    return TF_OK;
}

static int build_batch(void *context, int64_t index, void *item, tf_error *err)
{
    event_pipeline *p = context;
    return build_item(p, item, &p->batches[index], &p->table, err);
}

/* Swap a built item into tr->batch (its buffers move, nothing is copied); the item takes the
 * batch just run, to be rebuilt. `fetch` points into its own batch: re-aim both. */
static void take_batch(dispatch_batch *held, dispatch_batch *item)
{
    const int held_occurrences = held->fetch == &held->occurrences;
    const int item_occurrences = item->fetch == &item->occurrences;
    const dispatch_batch swap = *held;
    *held = *item;
    *item = swap;
    held->fetch = item_occurrences ? &held->occurrences : &held->plan;
    item->fetch = held_occurrences ? &item->occurrences : &item->plan;
}

/* The item's batch and split become the trainer's; the item takes the ones just run. */
static void take_item(event_pipeline *p, pipeline_item *item)
{
    take_batch(&p->tr->batch, &item->batch);
    const microbatch_split swap = p->held;
    p->held = item->split;
    item->split = swap;
}

int event_pipeline_plan(event_pipeline *p, const event_batch_spec *global, tf_error *err)
{
    if (opt_dispatch_plan_batch(p->tr, global, err) != TF_OK) /* checks the batch */
        return TF_ERR_INPUT;
    p->held.count = 0;
    if (p->micro_batches > 0 && global->train)
        return microbatch_split_build(&p->held, &p->tr->batch, &p->tr->setup, p->micro_batches, &p->tr->table, err);
    return TF_OK;
}

/* The gradient through the reducer; its bytes are the trainer's gradient bytes. */
static int reduce_and_update(event_pipeline *p, int flush, tf_error *err)
{
    opt_event_trainer *tr = p->tr;
    parameter_list *parameters = &tr->base.model.parameters;
    uint64_t *outer = comm_charge(tr->group, &tr->bytes.gradients);
    int apply;
    int status = flush ? opt_delayed_gradient_flush(&p->reducer, parameters, &apply, err)
                       : opt_delayed_gradient_push(&p->reducer, parameters, &apply, err);
    comm_charge(tr->group, outer);
    if (status == TF_OK && apply)
        opt_dispatch_apply_update(tr);
    return status;
}

int event_pipeline_run_planned(event_pipeline *p, double *loss, float *scores, tf_error *err)
{
    opt_event_trainer *tr = p->tr;
    const int train = tr->batch.global.train;
    int status;
    if (p->held.count > 0) { /* steps 2-5 through the micro-batches */
        status = opt_microbatch_forward_backward(tr, &p->held, &p->reducer, loss, err);
        if (status == TF_OK)
            status = reduce_and_update(p, 0, err);
    } else {
        /* The previous batch's all-reduce (staleness 1) advances between the steps of this one. */
        status = opt_dispatch_exchange_requests(tr, err);
        if (status == TF_OK)
            status = opt_delayed_gradient_progress(&p->reducer, err);
        if (status == TF_OK)
            status = opt_dispatch_fetch_rows(tr, err);
        if (status == TF_OK)
            status = opt_delayed_gradient_progress(&p->reducer, err);
        if (status == TF_OK)
            status = opt_dispatch_forward(tr, loss, scores, err);
        if (status == TF_OK && train) {
            status = opt_dispatch_backward(tr, err);
            if (status == TF_OK)
                status = reduce_and_update(p, 0, err);
        }
    }
    /* The memory is written with the s' of this batch's forward: never stale. */
    return status == TF_OK ? opt_dispatch_write_back(tr, err) : status;
}

int event_pipeline_flush(event_pipeline *p, tf_error *err) { return reduce_and_update(p, 1, err); }

/* ---- the reference's loop with the batches from the queue ---------------------------------------- */

static int runner_start(void *context, const event_batch_spec *batches, int64_t count, tf_error *err)
{
    event_pipeline *p = context;
    opt_event_trainer_reset_memory(p->tr);
    p->batches = batches;
    return batch_queue_start(&p->queue, p->prefetch, count, p->item_pointers, build_batch, p, err);
}

/* The next built batch (the queue hands them out in listing order) swapped into the trainer, run. */
static int runner_run(void *context, const event_batch_spec *global, double *loss, const float **scores,
                      tf_error *err)
{
    event_pipeline *p = context;
    void *item;
    const double start = wall_seconds();
    int status = batch_queue_pop(&p->queue, &item, err);
    p->wait_seconds += wall_seconds() - start;
    if (status != TF_OK)
        return status;
    take_item(p, item);
    batch_queue_recycle(&p->queue);
    *scores = p->tr->global_scores;
    return event_pipeline_run_planned(p, loss, global->train ? NULL : p->tr->global_scores, err);
}

/* Where the training batches end: the delayed gradient's last step, before evaluation. */
static int runner_end_training(void *context, tf_error *err) { return event_pipeline_flush(context, err); }

static void runner_stop(void *context)
{
    event_pipeline *p = context;
    batch_queue_stop(&p->queue);
    p->batches = NULL;
}

int opt_event_pipeline_epoch(event_pipeline *p, event_epoch_report *report, progress_fn progress,
                             void *progress_context, tf_error *err)
{
    const event_batch_runner runner = {runner_start, runner_run, runner_end_training, runner_stop, p};
    return event_trainer_epoch_with(&p->tr->base, &runner, report, progress, progress_context, err);
}

int opt_event_pipeline_evaluate(event_pipeline *p, event_metrics *validation, event_metrics *test,
                                progress_fn progress, void *progress_context, tf_error *err)
{
    const event_batch_runner runner = {runner_start, runner_run, runner_end_training, runner_stop, p};
    return event_trainer_evaluate_with(&p->tr->base, &runner, validation, test, progress, progress_context, err);
}
