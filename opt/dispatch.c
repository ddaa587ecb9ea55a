/* Algorithm 2 with a direct-address table, the identity plan, global winners, requests by owner
 * (opt/dispatch.h). */
#include "opt/dispatch.h"

#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"

int dispatch_table_create(dispatch_table *t, int64_t num_nodes, tf_error *err)
{
    memset(t, 0, sizeof *t);
    const size_t n = (size_t)(num_nodes > 0 ? num_nodes : 1);
    if (!(t->position = tf_alloc(n, sizeof *t->position, "dispatch table", err)) ||
        !(t->last_key = tf_alloc(n, sizeof *t->last_key, "dispatch table", err))) {
        dispatch_table_free(t);
        return TF_ERR_INPUT;
    }
    t->num_nodes = (int64_t)n;
    for (size_t v = 0; v < n; v++) {
        t->position[v] = -1;
        t->last_key[v] = -1;
    }
    return TF_OK;
}

void dispatch_table_free(dispatch_table *t)
{
    free(t->position);
    free(t->last_key);
    memset(t, 0, sizeof *t);
}

int opt_dispatch_plan(dispatch_table *t, const int32_t *entries, int64_t count, int64_t first, int64_t batch_size,
                      dispatch_plan *plan, tf_error *err)
{
    if (count > plan->capacity)
        return tf_error_set(err, TF_ERR_INPUT, "dispatch plan for %lld entries, capacity %lld", (long long)count,
                            (long long)plan->capacity);
    for (int64_t k = 0; k < count; k++)
        if (entries[k] < 0 || entries[k] >= t->num_nodes)
            return tf_error_set(err, TF_ERR_INPUT, "entry %lld has vertex %d, outside 0..%lld", (long long)k,
                                entries[k], (long long)t->num_nodes - 1);
    plan->entries = count;
    plan->unique = 0;
    for (int64_t k = 0; k < count; k++) {
        const int32_t v = entries[k];
        const int64_t key = dispatch_write_key(k, first, batch_size);
        int32_t i = t->position[v]; /* the table replaces the search of V_u */
        if (i < 0) {
            i = t->position[v] = (int32_t)plan->unique++;
            plan->vertex[i] = v;
            plan->writer[i] = key >= 0 ? k : -1;
        } else if (key >= 0 &&
                   (plan->writer[i] < 0 || key > dispatch_write_key(plan->writer[i], first, batch_size))) {
            plan->writer[i] = k;
        }
        plan->position[k] = i;
    }
    for (int64_t i = 0; i < plan->unique; i++) /* back to all -1, in O(U) */
        t->position[plan->vertex[i]] = -1;
    return TF_OK;
}

void opt_dispatch_plan_identity(const int32_t *entries, int64_t count, int64_t batch_size, dispatch_plan *plan)
{
    plan->entries = plan->unique = count;
    for (int64_t k = 0; k < count; k++) {
        plan->vertex[k] = entries[k];
        plan->position[k] = (int32_t)k;
        plan->writer[k] = k < 2 * batch_size ? k : -1;
    }
}

void opt_dispatch_plan_keep_winners(dispatch_table *t, const event_stream *es, int64_t global_first,
                                    int64_t global_size, int64_t first, int64_t batch_size, dispatch_plan *plan)
{
    const int64_t end = global_first + global_size;
    for (int64_t e = global_first; e < end; e++) { /* in key order: the last store is the largest key */
        t->last_key[es->src[e]] = 2 * e;
        t->last_key[es->dst[e]] = 2 * e + 1;
    }
    for (int64_t i = 0; i < plan->unique; i++)
        if (plan->writer[i] >= 0 &&
            dispatch_write_key(plan->writer[i], first, batch_size) != t->last_key[plan->vertex[i]])
            plan->writer[i] = -1;
    for (int64_t e = global_first; e < end; e++)
        t->last_key[es->src[e]] = t->last_key[es->dst[e]] = -1;
}

int dispatch_requests_create(dispatch_requests *r, int ranks, int64_t capacity, tf_error *err)
{
    memset(r, 0, sizeof *r);
    const size_t n = (size_t)(capacity > 0 ? capacity : 1);
    if (!(r->count = tf_alloc((size_t)ranks, sizeof *r->count, "dispatch requests", err)) ||
        !(r->offset = tf_alloc((size_t)ranks, sizeof *r->offset, "dispatch requests", err)) ||
        !(r->vertex = tf_alloc(n, sizeof *r->vertex, "dispatch requests", err)) ||
        !(r->row = tf_alloc(n, sizeof *r->row, "dispatch requests", err))) {
        dispatch_requests_free(r);
        return TF_ERR_INPUT;
    }
    r->ranks = ranks;
    r->capacity = (int64_t)n;
    return TF_OK;
}

void dispatch_requests_free(dispatch_requests *r)
{
    free(r->count);
    free(r->offset);
    free(r->vertex);
    free(r->row);
    memset(r, 0, sizeof *r);
}

void dispatch_requests_build(const int32_t *vertices, int64_t count, const dispatch_placement *placement,
                             dispatch_requests *out)
{
    const int R = out->ranks;
    memset(out->count, 0, (size_t)R * sizeof *out->count);
    for (int64_t i = 0; i < count; i++)
        out->count[placement->owner[vertices[i]]]++;
    int64_t offset = 0;
    for (int r = 0; r < R; r++) {
        out->offset[r] = offset;
        offset += out->count[r];
    }
    out->total = offset;
    memset(out->count, 0, (size_t)R * sizeof *out->count); /* refilled as the rows are placed */
    for (int64_t i = 0; i < count; i++) {
        const int owner = placement->owner[vertices[i]];
        const int64_t at = out->offset[owner] + out->count[owner]++;
        out->vertex[at] = vertices[i];
        out->row[at] = (int32_t)i;
    }
}
