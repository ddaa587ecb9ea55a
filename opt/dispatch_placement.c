/* Placements of the partitioned node memory (opt/dispatch_placement.h). */
#include "opt/dispatch_placement.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt/dispatch_batch.h"
#include "ref/core/memory.h"
#include "ref/core/rng.h"
#include "ref/data/npy.h"
#include "ref/partition.h"

int dispatch_placement_create(dispatch_placement *p, const int32_t *owner, int64_t num_nodes, int ranks,
                              tf_error *err)
{
    memset(p, 0, sizeof *p);
    if (num_nodes < 1 || ranks < 1)
        return tf_error_set(err, TF_ERR_INPUT, "placement of %lld vertices on %d ranks: expected >= 1 of each",
                            (long long)num_nodes, ranks);
    for (int64_t v = 0; v < num_nodes; v++)
        if (owner[v] < 0 || owner[v] >= ranks)
            return tf_error_set(err, TF_ERR_INPUT, "placement: vertex %lld is owned by rank %d, expected 0..%d",
                                (long long)v, owner[v], ranks - 1);
    if (!(p->owner = tf_alloc((size_t)num_nodes, sizeof *p->owner, "placement", err)) ||
        !(p->local_row = tf_alloc((size_t)num_nodes, sizeof *p->local_row, "placement", err)) ||
        !(p->shard_rows = tf_alloc((size_t)ranks, sizeof *p->shard_rows, "placement", err))) {
        dispatch_placement_free(p);
        return TF_ERR_INPUT;
    }
    p->ranks = ranks;
    p->num_nodes = num_nodes;
    memcpy(p->owner, owner, (size_t)num_nodes * sizeof *owner);
    for (int64_t v = 0; v < num_nodes; v++) /* lambda_2: each owner numbers its ids in increasing order */
        p->local_row[v] = (int32_t)p->shard_rows[owner[v]]++;
    return TF_OK;
}

void dispatch_placement_free(dispatch_placement *p)
{
    free(p->owner), free(p->local_row), free(p->shard_rows);
    memset(p, 0, sizeof *p);
}

/* ---- the methods ------------------------------------------------------------------------------- */

/* The formulas are chapter 06's (ref/partition.h): one function per placement, whoever asks. */
static int place_range(const placement_request *q, int32_t *owner, tf_error *err)
{
    (void)err;
    partition_range(q->num_nodes, q->ranks, owner);
    return TF_OK;
}

static int place_interval(const placement_request *q, int32_t *owner, tf_error *err)
{
    (void)err;
    partition_interval(q->num_nodes, q->ranks, q->interval, owner);
    return TF_OK;
}

static int place_hash(const placement_request *q, int32_t *owner, tf_error *err)
{
    (void)err;
    partition_hash(q->num_nodes, q->ranks, owner);
    return TF_OK;
}

static int place_random(const placement_request *q, int32_t *owner, tf_error *err)
{
    int32_t *order = tf_alloc((size_t)q->num_nodes, sizeof *order, "random placement", err);
    if (!order)
        return TF_ERR_INPUT;
    rng r;
    rng_seed(&r, q->seed);
    for (int64_t v = 0; v < q->num_nodes; v++)
        order[v] = (int32_t)v;
    for (int64_t i = q->num_nodes - 1; i > 0; i--) { /* Fisher-Yates */
        int64_t j = (int64_t)rng_below(&r, (uint64_t)i + 1);
        int32_t swap = order[i];
        order[i] = order[j];
        order[j] = swap;
    }
    for (int64_t i = 0; i < q->num_nodes; i++)
        owner[order[i]] = (int32_t)(i % q->ranks);
    free(order);
    return TF_OK;
}

/* Sven's Re-FlexBiCut (chapter 06, ref/partition_bicut.h) on the demand the trainer measured with
 * its own plans, so the cut capacity it minimizes is that of the rows the trainer moves. Every
 * rank measures and places alike: the result is deterministic. */
static int place_reflexbicut(const placement_request *q, int32_t *owner, tf_error *err)
{
    return ref_reflexbicut(q->demand, owner, NULL, err);
}

const placement_method placement_methods[] = {
    {"range", place_range, 0, "contiguous id ranges, owner = v R / num_nodes (DGL's, Sven's default)"},
    {"interval", place_interval, 0, "blocks of G ids dealt round-robin, owner = (v / G) mod R (interval:G, G = 16)"},
    {"hash", place_hash, 0, "owner = v mod R (ids dealt round-robin, as partition --method hash)"},
    {"random", place_random, 0, "a seeded permutation of the ids dealt round-robin"},
    {"reflexbicut", place_reflexbicut, 1, "Sven's Re-FlexBiCut on the measured demand: the largest cut capacity kept low"},
    {NULL, NULL, 0, NULL},
};

int placement_parse(const char *spec, const placement_method **method, int64_t *interval, const char **file,
                    tf_error *err)
{
    *method = NULL;
    *interval = PARTITION_INTERVAL_BLOCK;
    *file = NULL;
    if (strncmp(spec, "file:", 5) == 0) {
        if (!spec[5])
            return tf_error_set(err, TF_ERR_INPUT, "placement \"%s\": expected file:PATH with a path", spec);
        *file = spec + 5;
        return TF_OK;
    }
    const char *colon = strchr(spec, ':');
    size_t length = colon ? (size_t)(colon - spec) : strlen(spec);
    for (const placement_method *m = placement_methods; m->name; m++)
        if (strlen(m->name) == length && strncmp(spec, m->name, length) == 0)
            *method = m;
    if (*method && colon && strcmp((*method)->name, "interval") == 0) {
        char *end;
        long long g = strtoll(colon + 1, &end, 10);
        if (end == colon + 1 || *end || g < 1 || g > INT32_MAX)
            return tf_error_set(err, TF_ERR_INPUT, "placement \"%s\": expected interval:G with a whole G >= 1", spec);
        *interval = g;
        return TF_OK;
    }
    if (*method && !colon)
        return TF_OK;
    char known[256] = "";
    for (const placement_method *m = placement_methods; m->name; m++)
        snprintf(known + strlen(known), sizeof known - strlen(known), "%s, ", m->name);
    *method = NULL;
    return tf_error_set(err, TF_ERR_INPUT, "placement \"%s\": expected %sinterval:G or file:PATH", spec, known);
}

int placement_read_file(const char *path, int64_t num_nodes, int ranks, int32_t *owner, tf_error *err)
{
    npy_array a;
    if (npy_read(path, &a, err) != TF_OK)
        return TF_ERR_INPUT;
    int status = TF_OK;
    if (a.dtype != NPY_INT64 || a.ndim != 1 || a.shape[0] != num_nodes)
        status = tf_error_set(err, TF_ERR_INPUT, "%s: a placement is an int64 array of shape [%lld] (one owner per "
                              "vertex id); this file has %s of %lld values in %d dimension(s)",
                              path, (long long)num_nodes, a.dtype == NPY_INT64 ? "int64" : "float32",
                              (long long)a.size, a.ndim);
    const int64_t *values = a.data;
    for (int64_t v = 0; status == TF_OK && v < num_nodes; v++) {
        if (values[v] < 0 || values[v] >= ranks)
            status = tf_error_set(err, TF_ERR_INPUT, "%s: vertex %lld is placed on rank %lld, but the run has %d "
                                  "rank(s)", path, (long long)v, (long long)values[v], ranks);
        else
            owner[v] = (int32_t)values[v];
    }
    npy_free(&a);
    return status;
}

int placement_write_file(const char *path, const int32_t *owner, int64_t num_nodes, tf_error *err)
{
    int64_t *values = tf_alloc((size_t)num_nodes, sizeof *values, "placement file", err);
    if (!values)
        return TF_ERR_INPUT;
    for (int64_t v = 0; v < num_nodes; v++)
        values[v] = owner[v];
    int status = npy_write(path, NPY_INT64, 1, &num_nodes, values, err);
    free(values);
    return status;
}

/* ---- the demand and the --placement values ---------------------------------------------------- */

int dispatch_demand_measure(const event_trainer *tr, int ranks, bicut_demand *out, tf_error *err)
{
    if (bicut_demand_alloc(out, ranks, tr->events->num_nodes, err) != TF_OK)
        return TF_ERR_INPUT;
    const int64_t count = event_trainer_epoch_batches(tr, NULL);
    event_batch_spec *batches = tf_alloc((size_t)count, sizeof *batches, "batch list", err);
    dispatch_setup s = {tr, NULL, DISPATCH_SVEN, ranks, 0};
    dispatch_batch b;
    dispatch_table table;
    memset(&table, 0, sizeof table);
    int status = batches ? dispatch_batch_create(&b, &s, err) : TF_ERR_INPUT;
    if (status == TF_OK && (status = dispatch_table_create(&table, tr->events->num_nodes, err)) == TF_OK) {
        event_trainer_epoch_batches(tr, batches);
        for (int64_t i = 0; status == TF_OK && i < count && batches[i].train; i++) {
            for (s.rank = 0; status == TF_OK && s.rank < ranks; s.rank++) {
                status = dispatch_batch_build(&b, &s, &batches[i], &table, err);
                int64_t *weight = out->weight + s.rank * out->num_nodes; /* a read, and the write if it wins */
                for (int64_t u = 0; status == TF_OK && u < b.plan.unique; u++)
                    weight[b.plan.vertex[u]] += 1 + (b.plan.writer[u] >= 0);
            }
            out->batches++;
        }
        dispatch_batch_free(&b);
    }
    dispatch_table_free(&table);
    free(batches);
    if (status != TF_OK)
        bicut_demand_free(out);
    return status;
}

int dispatch_place(const char *spec, const event_trainer *tr, int ranks, int32_t *owner, tf_error *err)
{
    const placement_method *method;
    int64_t interval;
    const char *file;
    const int64_t num_nodes = tr->events->num_nodes;
    if (placement_parse(spec, &method, &interval, &file, err) != TF_OK)
        return TF_ERR_INPUT;
    if (file)
        return placement_read_file(file, num_nodes, ranks, owner, err);
    placement_request q = {tr->events, num_nodes, ranks, tr->options.seed, interval, NULL};
    bicut_demand demand;
    memset(&demand, 0, sizeof demand);
    if (method->needs_demand && dispatch_demand_measure(tr, ranks, &demand, err) != TF_OK)
        return TF_ERR_INPUT;
    q.demand = method->needs_demand ? &demand : NULL;
    int status = method->place(&q, owner, err);
    bicut_demand_free(&demand);
    return status;
}
