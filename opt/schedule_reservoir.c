#include "opt/schedule_reservoir.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"

/* One generator thread and its scratch. */
typedef struct generator {
    opt_reservoir *owner;
    int first;          /* its actions: first, first + stride, ... */
    pthread_t thread;
    int started;
    int32_t *scratch;   /* [num_nodes] all -1 */
} generator;

struct opt_reservoir {
    reservoir_ledger ledger;      /* the consumer's decisions (only the consumer touches it) */
    const hybrid_source *source;
    hybrid_sizes *sizes;          /* [actions] */
    hybrid_batch **store;         /* [actions][max_a]: entry b is written by its producer before built[a] > b */
    int64_t *built;               /* [actions] fresh batches ready (under the lock) */
    int64_t *taken;               /* [actions] fresh batches handed out (under the lock) */
    int threads;
    generator *generators;        /* [threads] */
    pthread_mutex_t lock;
    pthread_cond_t space;         /* a generator may go on: something was taken, or stop */
    pthread_cond_t filled;        /* a batch was built, or a generator failed */
    int stop;
    int failed;
    tf_error failure;
};

/* The next action of generator g that may be built now, or -1; *done = 1 when all of g's actions
 * have built their max. Under the lock. */
static int next_action(const generator *g, int *done)
{
    const opt_reservoir *r = g->owner;
    *done = 1;
    for (int a = g->first; a < r->ledger.actions; a += r->threads) {
        if (r->built[a] >= r->ledger.max_batches[a])
            continue;
        *done = 0;
        if (r->built[a] - r->taken[a] < RESERVOIR_AHEAD)
            return a;
    }
    return -1;
}

static void *generate(void *argument)
{
    generator *g = argument;
    opt_reservoir *r = g->owner;
    pthread_mutex_lock(&r->lock);
    while (!r->stop && !r->failed) {
        int done;
        const int a = next_action(g, &done);
        if (done)
            break;
        if (a < 0) {
            pthread_cond_wait(&r->space, &r->lock);
            continue;
        }
        const int64_t b = r->built[a];
        pthread_mutex_unlock(&r->lock);
        tf_error err;
        tf_error_clear(&err);
        const int status = hybrid_batch_build(&r->store[a][b], r->source, r->sizes[a], r->ledger.seed,
                                              RESERVOIR_BATCH_STREAM + (uint64_t)a, (uint64_t)b, g->scratch, &err);
        pthread_mutex_lock(&r->lock);
        if (status == TF_OK) {
            r->built[a]++;
        } else if (!r->failed) {
            r->failed = 1;
            r->failure = err;
        }
        pthread_cond_broadcast(&r->filled);
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

void opt_reservoir_free(opt_reservoir *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&r->lock);
    r->stop = 1;
    pthread_cond_broadcast(&r->space);
    pthread_cond_broadcast(&r->filled);
    pthread_mutex_unlock(&r->lock);
    for (int t = 0; r->generators && t < r->threads; t++) {
        if (r->generators[t].started)
            pthread_join(r->generators[t].thread, NULL);
        free(r->generators[t].scratch);
    }
    for (int a = 0; r->store && a < r->ledger.actions; a++) {
        for (int64_t b = 0; r->store[a] && b < r->built[a]; b++)
            hybrid_batch_free(&r->store[a][b]);
        free(r->store[a]);
    }
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->space);
    pthread_cond_destroy(&r->filled);
    free(r->store);
    free(r->built);
    free(r->taken);
    free(r->sizes);
    free(r->generators);
    reservoir_ledger_free(&r->ledger);
    free(r);
}

int opt_reservoir_create(opt_reservoir **out, const hybrid_source *source, int actions, const hybrid_sizes *sizes,
                         int threads, uint64_t seed, tf_error *err)
{
    *out = NULL;
    if (threads < 1 || threads > actions)
        return tf_error_set(err, TF_ERR_INPUT, "a reservoir of %d action(s) with %d generator thread(s): expected 1..%d",
                            actions, threads, actions);
    opt_reservoir *r = tf_alloc(1, sizeof *r, "reservoir", err);
    if (!r)
        return TF_ERR_INPUT;
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->space, NULL);
    pthread_cond_init(&r->filled, NULL);
    r->source = source;
    r->threads = threads;
    const int64_t n = source->seq->num_nodes;
    int status = reservoir_ledger_create(&r->ledger, actions, sizes, n, source->train_snapshots, seed, err);
    if (status == TF_OK && (!(r->sizes = tf_alloc((size_t)actions, sizeof *r->sizes, "reservoir sizes", err)) ||
                            !(r->store = tf_alloc((size_t)actions, sizeof *r->store, "reservoir store", err)) ||
                            !(r->built = tf_alloc((size_t)actions, sizeof *r->built, "reservoir counts", err)) ||
                            !(r->taken = tf_alloc((size_t)actions, sizeof *r->taken, "reservoir counts", err)) ||
                            !(r->generators = tf_alloc((size_t)threads, sizeof *r->generators, "generators", err))))
        status = TF_ERR_INPUT;
    for (int a = 0; status == TF_OK && a < actions; a++) {
        r->sizes[a] = sizes[a];
        if (!(r->store[a] = tf_alloc((size_t)r->ledger.max_batches[a], sizeof **r->store, "reservoir store", err)))
            status = TF_ERR_INPUT;
    }
    for (int t = 0; status == TF_OK && t < threads; t++) {
        generator *g = &r->generators[t];
        g->owner = r;
        g->first = t;
        if (!(g->scratch = tf_alloc((size_t)n, sizeof *g->scratch, "generator scratch", err)))
            status = TF_ERR_INPUT;
        else
            memset(g->scratch, 0xff, (size_t)n * sizeof *g->scratch); /* all -1 */
    }
    for (int t = 0; status == TF_OK && t < threads; t++) {
        if (pthread_create(&r->generators[t].thread, NULL, generate, &r->generators[t]) != 0)
            status = tf_error_set(err, TF_ERR_SYSTEM, "reservoir: cannot start generator thread %d", t);
        else
            r->generators[t].started = 1;
    }
    if (status != TF_OK) {
        opt_reservoir_free(r);
        return status;
    }
    *out = r;
    return TF_OK;
}

int opt_reservoir_get(opt_reservoir *r, int action, const hybrid_batch **batch, tf_error *err)
{
    int fresh;
    int64_t index;
    reservoir_ledger_next(&r->ledger, action, &fresh, &index);
    if (fresh) {
        pthread_mutex_lock(&r->lock);
        r->taken[action] = index + 1;
        pthread_cond_broadcast(&r->space);
        while (r->built[action] <= index && !r->failed)
            pthread_cond_wait(&r->filled, &r->lock);
        const int failed = r->built[action] <= index;
        if (failed && err)
            *err = r->failure;
        pthread_mutex_unlock(&r->lock);
        if (failed)
            return r->failure.code ? r->failure.code : TF_ERR_SYSTEM;
    }
    *batch = &r->store[action][index];
    return TF_OK;
}
