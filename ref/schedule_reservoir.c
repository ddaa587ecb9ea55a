#include "ref/schedule_reservoir.h"

#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"
#include "ref/core/rng.h"

void reservoir_ledger_free(reservoir_ledger *l)
{
    free(l->max_batches);
    free(l->stored);
    memset(l, 0, sizeof *l);
}

int reservoir_ledger_create(reservoir_ledger *l, int actions, const hybrid_sizes *sizes, int64_t vertices,
                            int64_t train_snapshots, uint64_t seed, tf_error *err)
{
    memset(l, 0, sizeof *l);
    if (actions < 1)
        return tf_error_set(err, TF_ERR_INPUT, "a reservoir of %d actions", actions);
    l->actions = actions;
    l->seed = seed;
    if (!(l->max_batches = tf_alloc((size_t)actions, sizeof *l->max_batches, "reservoir ledger", err)) ||
        !(l->stored = tf_alloc((size_t)actions, sizeof *l->stored, "reservoir ledger", err))) {
        reservoir_ledger_free(l);
        return TF_ERR_INPUT;
    }
    for (int a = 0; a < actions; a++) { /* Eq. 5 */
        const double pairs = (double)vertices * (double)train_snapshots;
        const int64_t most = (int64_t)(pairs / ((double)sizes[a].snapshots * (double)sizes[a].targets) / actions);
        l->max_batches[a] = most < 1 ? 1 : most;
    }
    return TF_OK;
}

void reservoir_ledger_next(reservoir_ledger *l, int action, int *fresh, int64_t *index)
{
    rng r;
    rng_seed_keyed(&r, l->seed, RESERVOIR_STREAM, (uint64_t)l->calls++);
    const double u = rng_uniform(&r);
    const int64_t stored = l->stored[action];
    const double reuse = (double)stored / (double)l->max_batches[action]; /* Eq. 4 */
    if (stored > 0 && u < reuse) {
        *fresh = 0;
        *index = (int64_t)rng_below(&r, (uint64_t)stored);
    } else {
        *fresh = 1;
        *index = l->stored[action]++;
    }
}

void ref_reservoir_free(ref_reservoir *r)
{
    for (int a = 0; r->store && a < r->ledger.actions; a++) {
        for (int64_t b = 0; r->store[a] && b < r->ledger.stored[a]; b++)
            hybrid_batch_free(&r->store[a][b]);
        free(r->store[a]);
    }
    free(r->store);
    free(r->sizes);
    free(r->scratch);
    reservoir_ledger_free(&r->ledger);
    memset(r, 0, sizeof *r);
}

int ref_reservoir_create(ref_reservoir *r, const hybrid_source *source, int actions, const hybrid_sizes *sizes,
                         uint64_t seed, tf_error *err)
{
    memset(r, 0, sizeof *r);
    r->source = source;
    const int64_t n = source->seq->num_nodes;
    int status = reservoir_ledger_create(&r->ledger, actions, sizes, n, source->train_snapshots, seed, err);
    if (status == TF_OK && (!(r->sizes = tf_alloc((size_t)actions, sizeof *r->sizes, "reservoir sizes", err)) ||
                            !(r->store = tf_alloc((size_t)actions, sizeof *r->store, "reservoir store", err)) ||
                            !(r->scratch = tf_alloc((size_t)n, sizeof *r->scratch, "reservoir scratch", err))))
        status = TF_ERR_INPUT;
    for (int a = 0; status == TF_OK && a < actions; a++) {
        r->sizes[a] = sizes[a];
        if (!(r->store[a] = tf_alloc((size_t)r->ledger.max_batches[a], sizeof **r->store, "reservoir store", err)))
            status = TF_ERR_INPUT;
    }
    if (status == TF_OK)
        memset(r->scratch, 0xff, (size_t)n * sizeof *r->scratch); /* all -1 */
    if (status != TF_OK)
        ref_reservoir_free(r);
    return status;
}

int ref_reservoir_get(ref_reservoir *r, int action, const hybrid_batch **batch, tf_error *err)
{
    int fresh;
    int64_t index;
    reservoir_ledger_next(&r->ledger, action, &fresh, &index);
    if (fresh &&
        hybrid_batch_build(&r->store[action][index], r->source, r->sizes[action], r->ledger.seed,
                           RESERVOIR_BATCH_STREAM + (uint64_t)action, (uint64_t)index, r->scratch, err) != TF_OK) {
        r->ledger.stored[action]--; /* not built: nothing to free later */
        return TF_ERR_INPUT;
    }
    *batch = &r->store[action][index];
    return TF_OK;
}
