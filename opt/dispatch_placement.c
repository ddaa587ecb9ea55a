/* Placements of the partitioned node memory (opt/dispatch_placement.h). */
#include "opt/dispatch_placement.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"
#include "ref/data/npy.h"
#include "ref/partition_bicut.h"
#include "ref/core/rng.h"

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
    free(p->owner);
    free(p->local_row);
    free(p->shard_rows);
    memset(p, 0, sizeof *p);
}

int dispatch_demand_create(dispatch_demand *d, int ranks, int64_t num_nodes, tf_error *err)
{
    memset(d, 0, sizeof *d);
    const size_t n = (size_t)ranks * (size_t)num_nodes;
    if (!(d->reads = tf_alloc(n, sizeof *d->reads, "placement demand", err)) ||
        !(d->writes = tf_alloc(n, sizeof *d->writes, "placement demand", err))) {
        dispatch_demand_free(d);
        return TF_ERR_INPUT;
    }
    d->ranks = ranks;
    d->num_nodes = num_nodes;
    return TF_OK;
}

void dispatch_demand_free(dispatch_demand *d)
{
    free(d->reads);
    free(d->writes);
    memset(d, 0, sizeof *d);
}

void dispatch_demand_cost(const dispatch_demand *d, const int32_t *owner, int64_t *cost)
{
    const int R = d->ranks;
    memset(cost, 0, (size_t)R * sizeof *cost);
    for (int r = 0; r < R; r++)
        for (int64_t v = 0; v < d->num_nodes; v++) {
            const int64_t w = d->reads[r * d->num_nodes + v] + d->writes[r * d->num_nodes + v];
            if (owner[v] != r) { /* r fetches and sends these rows, and their owner serves them */
                cost[r] += w;
                cost[owner[v]] += w;
            }
        }
}

/* ---- the methods ------------------------------------------------------------------------------- */

static int place_range(const placement_request *q, int32_t *owner, tf_error *err)
{
    (void)err;
    for (int64_t v = 0; v < q->num_nodes; v++)
        owner[v] = (int32_t)(v * q->ranks / q->num_nodes);
    return TF_OK;
}

static int place_interval(const placement_request *q, int32_t *owner, tf_error *err)
{
    (void)err;
    for (int64_t v = 0; v < q->num_nodes; v++)
        owner[v] = (int32_t)((v / q->interval) % q->ranks);
    return TF_OK;
}

/* splitmix64's finalizer: every input bit reaches every output bit. */
static uint64_t mix(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static int place_hash(const placement_request *q, int32_t *owner, tf_error *err)
{
    (void)err;
    for (int64_t v = 0; v < q->num_nodes; v++)
        owner[v] = (int32_t)(mix((uint64_t)v + 0x9e3779b97f4a7c15ull) % (uint64_t)q->ranks);
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
 * its own plans: w(r, v) = reads + writes, so the cut capacity it minimizes is exactly
 * dispatch_demand_cost()'s. Every rank measures and places alike: the result is deterministic. */
static int place_reflexbicut(const placement_request *q, int32_t *owner, tf_error *err)
{
    bicut_demand demand;
    if (bicut_demand_alloc(&demand, q->ranks, q->num_nodes, err) != TF_OK)
        return TF_ERR_INPUT;
    const int64_t cells = (int64_t)q->ranks * q->num_nodes;
    for (int64_t i = 0; i < cells; i++)
        demand.weight[i] = q->demand->reads[i] + q->demand->writes[i];
    int status = ref_reflexbicut(&demand, owner, NULL, err);
    bicut_demand_free(&demand);
    return status;
}

const placement_method placement_methods[] = {
    {"range", place_range, 0, "contiguous id ranges, owner = v R / num_nodes (DGL's, Sven's default)"},
    {"interval", place_interval, 0, "blocks of G ids dealt round-robin, owner = (v / G) mod R (interval:G, G = 16)"},
    {"hash", place_hash, 0, "owner = mix(v) mod R, a fixed 64-bit mixer"},
    {"random", place_random, 0, "a seeded permutation of the ids dealt round-robin"},
    {"reflexbicut", place_reflexbicut, 1, "Sven's Re-FlexBiCut on the measured demand: the largest cut capacity kept low"},
    {NULL, NULL, 0, NULL},
};

int placement_parse(const char *spec, const placement_method **method, int64_t *interval, const char **file,
                    tf_error *err)
{
    *method = NULL;
    *interval = 16;
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
