/* Planning one rank's part of a global batch (opt/dispatch_batch.h). */
#include "opt/dispatch_batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/core/digest.h"
#include "ref/core/memory.h"

static const char *const mode_names[] = {"sven", "naive", "depcache", "depcomm"};

const char *dispatch_mode_name(dispatch_mode mode) { return mode_names[mode]; }

int dispatch_mode_parse(const char *name, dispatch_mode *mode, tf_error *err)
{
    for (int m = DISPATCH_SVEN; m <= DISPATCH_DEPCOMM; m++)
        if (strcmp(name, mode_names[m]) == 0) {
            *mode = (dispatch_mode)m;
            return TF_OK;
        }
    return tf_error_set(err, TF_ERR_INPUT, "dispatch \"%s\": expected sven, naive, depcache or depcomm", name);
}

void dispatch_counts_add(dispatch_counts *a, const dispatch_counts *b)
{
    int64_t *x = (int64_t *)a;
    const int64_t *y = (const int64_t *)b;
    for (size_t i = 0; i < sizeof *a / sizeof(int64_t); i++)
        x[i] += y[i];
}

void dispatch_slice(const event_batch_spec *global, int rank, int ranks, int64_t *first, int64_t *size)
{
    const int64_t lo = global->size * rank / ranks, hi = global->size * (rank + 1) / ranks;
    *first = global->first + lo;
    *size = hi - lo;
}

int64_t dispatch_batch_largest(const dispatch_setup *s)
{
    const int64_t B = s->base->options.batch_size, events = s->base->events->num_events;
    return B < events ? B : events;
}

int64_t dispatch_batch_capacity(const dispatch_setup *s)
{
    const event_model_config *c = &s->base->model.config;
    const int64_t k = c->kind == EVENT_MODEL_TGN ? c->neighbours : 0;
    return 3 * dispatch_batch_largest(s) * (1 + k);
}

/* APAN's recipients per positive root: its k sampled neighbours and itself. */
static int64_t apan_reach(const dispatch_setup *s)
{
    const event_model_config *c = &s->base->model.config;
    return c->kind == EVENT_MODEL_APAN ? 2 * dispatch_batch_largest(s) * (c->neighbours + 1) : 0;
}

int64_t dispatch_batch_write_capacity(const dispatch_setup *s)
{
    const int64_t entries = dispatch_batch_capacity(s), apan = apan_reach(s) + 2 * dispatch_batch_largest(s);
    return apan_reach(s) > 0 && apan > entries ? apan : entries;
}

int dispatch_batch_create(dispatch_batch *b, const dispatch_setup *s, tf_error *err)
{
    memset(b, 0, sizeof *b);
    const int64_t capacity = dispatch_batch_capacity(s);
    int status = (b->negatives = tf_alloc((size_t)dispatch_batch_largest(s), sizeof *b->negatives, "negatives", err))
                     ? TF_OK
                     : TF_ERR_INPUT;
    if (status == TF_OK)
        status = dispatch_plan_create(&b->plan, capacity, err);
    if (status == TF_OK)
        status = dispatch_plan_create(&b->occurrences, capacity, err);
    if (status == TF_OK)
        status = dispatch_requests_create(&b->requests, s->ranks, capacity, err);
    if (status == TF_OK && !(b->scratch = tf_alloc(1, sizeof *b->scratch, "batch workspace", err))) /* zeroed: empty */
        status = TF_ERR_INPUT;
    const size_t reach = (size_t)apan_reach(s), rows = reach + 2 * (size_t)dispatch_batch_largest(s);
    if (status == TF_OK && reach > 0 &&
        (!(b->delivery_wins = tf_alloc(reach, sizeof *b->delivery_wins, "mail deliveries", err)) ||
         !(b->reached = tf_alloc(reach, sizeof *b->reached, "mail deliveries", err)) ||
         !(b->write_vertex = tf_alloc(rows, sizeof *b->write_vertex, "write rows", err)) ||
         !(b->write_memory = tf_alloc(rows, sizeof *b->write_memory, "write rows", err)) ||
         !(b->write_mail = tf_alloc(rows, sizeof *b->write_mail, "write rows", err))))
        status = TF_ERR_INPUT;
    if (status != TF_OK)
        dispatch_batch_free(b);
    return status;
}

void dispatch_batch_free(dispatch_batch *b)
{
    free(b->negatives);
    event_tape_free(&b->tape);
    dispatch_plan_free(&b->plan);
    dispatch_plan_free(&b->occurrences);
    dispatch_requests_free(&b->requests);
    if (b->scratch)
        workspace_free(b->scratch);
    free(b->scratch);
    free(b->delivery_wins), free(b->reached), free(b->write_vertex), free(b->write_memory), free(b->write_mail);
    memset(b, 0, sizeof *b);
}

/* Writers of a plan, and those of them whose vertex another rank owns. */
static void count_writers(const dispatch_plan *plan, const dispatch_setup *s, int64_t *all, int64_t *remote)
{
    *all = *remote = 0;
    for (int64_t i = 0; i < plan->unique; i++)
        if (plan->writer[i] >= 0) {
            ++*all;
            *remote += s->placement && s->placement->owner[plan->vertex[i]] != s->rank;
        }
}

/* How many of the first n vertices another rank owns. */
static int64_t count_remote(const int32_t *vertices, int64_t n, const dispatch_setup *s)
{
    int64_t remote = 0;
    for (int64_t i = 0; s->placement && i < n; i++)
        remote += s->placement->owner[vertices[i]] != s->rank;
    return remote;
}

/* APAN: which of the slice's deliveries win in the global batch. The delivery rule orders deliveries
 * by event first, so a delivery of this slice wins unless an event of a later slice reaches the same
 * vertex: its endpoints and their sampled neighbours (a function of the stream, as in collection). */
static void keep_delivery_winners(dispatch_batch *b, const dispatch_setup *s, dispatch_table *scratch)
{
    const event_trainer *tr = s->base;
    const event_stream *es = tr->events;
    const int k = tr->model.config.neighbours;
    int64_t count = 0;
    for (int64_t e = b->first + b->size; e < b->global.first + b->global.size; e++)
        for (int side = 0; side < 2; side++) {
            const int32_t v = side ? es->dst[e] : es->src[e];
            b->reached[count] = v;
            count += 1 + temporal_csr_recent(&tr->history, v, es->time[e], k, b->reached + count + 1, NULL, NULL);
        }
    for (int64_t i = 0; i < count; i++)
        scratch->last_key[b->reached[i]] = 1;
    for (int64_t w = 0; w < b->tape.deliveries; w++)
        b->delivery_wins[w] = scratch->last_key[b->tape.delivery_vertex[w]] < 0;
    for (int64_t i = 0; i < count; i++)
        scratch->last_key[b->reached[i]] = -1;
}

/* APAN: the rows of the write-back, one per vertex this rank writes: the global memory winners in key
 * order, each with its vertex's mail when that delivery wins here too, then the winning deliveries to
 * vertices whose memory this rank does not write. Every positive endpoint is among the slice's
 * deliveries (its own mail), so its row always finds its delivery. */
static void list_apan_writes(dispatch_batch *b, const dispatch_setup *s, dispatch_table *scratch)
{
    const event_tape *t = &b->tape;
    int32_t *at = scratch->position; /* vertex -> its delivery; -2 once its row is listed */
    for (int64_t w = 0; w < t->deliveries; w++)
        at[t->delivery_vertex[w]] = (int32_t)w;
    b->write_count = 0;
    for (int64_t j = 0; j < b->size; j++)
        for (int64_t role = 0; role < 2; role++) {
            const int64_t entry = role * b->size + j;
            const int32_t v = t->vertex[entry];
            if (b->plan.writer[b->plan.position[entry]] != entry)
                continue;
            b->write_vertex[b->write_count] = v;
            b->write_memory[b->write_count] = entry;
            b->write_mail[b->write_count++] = b->delivery_wins[at[v]] ? at[v] : -1;
            at[v] = -2;
        }
    for (int64_t w = 0; w < t->deliveries; w++)
        if (b->delivery_wins[w] && at[t->delivery_vertex[w]] != -2) {
            b->write_vertex[b->write_count] = t->delivery_vertex[w];
            b->write_memory[b->write_count] = -1;
            b->write_mail[b->write_count++] = w;
        }
    for (int64_t w = 0; w < t->deliveries; w++)
        at[t->delivery_vertex[w]] = -1;
    dispatch_counts *c = &b->counts;
    c->writes = 2 * b->size + t->deliveries;
    c->writes_remote = count_remote(t->vertex, 2 * b->size, s) + count_remote(t->delivery_vertex, t->deliveries, s);
    c->written_per_trainer = t->deliveries;
    c->written_per_trainer_remote = count_remote(t->delivery_vertex, t->deliveries, s);
    c->written = b->write_count;
    c->written_remote = count_remote(b->write_vertex, b->write_count, s);
}

int dispatch_batch_build(dispatch_batch *b, const dispatch_setup *s, const event_batch_spec *global,
                         dispatch_table *scratch, tf_error *err)
{
    const event_trainer *tr = s->base;
    event_tape_free(&b->tape);
    memset(&b->counts, 0, sizeof b->counts);
    b->write_count = 0;
    b->global = *global;
    dispatch_slice(global, s->rank, s->ranks, &b->first, &b->size);
    for (int64_t j = 0; j < b->size; j++)
        b->negatives[j] = event_trainer_negative(tr, global->stream, b->first + j);
    b->batch = (event_batch){tr->events, tr->edge_features, b->first, b->size, b->negatives};
    if (b->size > 0 && event_model_collect_in(&tr->model, &tr->history, &b->batch, b->scratch, &b->tape, err) != TF_OK)
        return TF_ERR_INPUT;
    const int64_t N = b->tape.entries;
    if (opt_dispatch_plan(scratch, b->tape.vertex, N, b->first, b->size, &b->plan, err) != TF_OK)
        return TF_ERR_INPUT;
    dispatch_counts *c = &b->counts;
    count_writers(&b->plan, s, &c->written_per_trainer, &c->written_per_trainer_remote);
    opt_dispatch_plan_keep_winners(scratch, tr->events, global->first, global->size, b->first, b->size, &b->plan);
    count_writers(&b->plan, s, &c->written, &c->written_remote);
    b->fetch = &b->plan;
    if (s->mode == DISPATCH_NAIVE || s->mode == DISPATCH_DEPCOMM) {
        opt_dispatch_plan_identity(b->tape.vertex, N, b->size, &b->occurrences);
        b->fetch = &b->occurrences;
    }
    if (s->placement && s->mode != DISPATCH_DEPCACHE)
        dispatch_requests_build(b->fetch->vertex, b->fetch->unique, s->placement, &b->requests);
    else
        dispatch_requests_build(b->fetch->vertex, 0, s->placement, &b->requests);
    c->batches = s->rank == 0;
    c->entries = N;
    c->entries_remote = count_remote(b->tape.vertex, N, s);
    c->unique = b->plan.unique;
    c->unique_remote = count_remote(b->plan.vertex, b->plan.unique, s);
    c->writes = 2 * b->size;
    c->writes_remote = count_remote(b->tape.vertex, 2 * b->size, s);
    if (tr->model.config.kind == EVENT_MODEL_APAN && b->size > 0) {
        keep_delivery_winners(b, s, scratch);
        list_apan_writes(b, s, scratch);
    }
    return TF_OK;
}

uint64_t dispatch_batch_hash(const dispatch_batch *b)
{
    uint64_t h = TF_DIGEST_START;
    const int64_t N = b->tape.entries;
    h = tf_digest(h, &b->first, sizeof b->first);
    h = tf_digest(h, &b->size, sizeof b->size);
    h = tf_digest(h, b->negatives, (size_t)b->size * sizeof *b->negatives);
    if (N > 0) {
        h = tf_digest(h, b->tape.vertex, (size_t)N * sizeof *b->tape.vertex);
        h = tf_digest(h, b->tape.time, (size_t)N * sizeof *b->tape.time);
    }
    const dispatch_plan *plans[2] = {&b->plan, b->fetch == &b->occurrences ? &b->occurrences : NULL};
    for (int p = 0; p < 2 && plans[p]; p++) {
        h = tf_digest(h, plans[p]->vertex, (size_t)plans[p]->unique * sizeof(int32_t));
        h = tf_digest(h, plans[p]->writer, (size_t)plans[p]->unique * sizeof(int64_t));
        h = tf_digest(h, plans[p]->position, (size_t)plans[p]->entries * sizeof(int32_t));
    }
    h = tf_digest(h, b->requests.count, (size_t)b->requests.ranks * sizeof(int64_t));
    h = tf_digest(h, b->requests.vertex, (size_t)b->requests.total * sizeof(int32_t));
    return h;
}
