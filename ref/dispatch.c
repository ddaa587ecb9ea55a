/* Algorithm 2 of Sven, plain (ref/dispatch.h has the definitions). */
#include "ref/dispatch.h"

#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"

int dispatch_plan_create(dispatch_plan *plan, int64_t capacity, tf_error *err)
{
    memset(plan, 0, sizeof *plan);
    const size_t n = (size_t)(capacity > 0 ? capacity : 1);
    if (!(plan->vertex = tf_alloc(n, sizeof *plan->vertex, "dispatch plan", err)) ||
        !(plan->position = tf_alloc(n, sizeof *plan->position, "dispatch plan", err)) ||
        !(plan->writer = tf_alloc(n, sizeof *plan->writer, "dispatch plan", err))) {
        dispatch_plan_free(plan);
        return TF_ERR_INPUT;
    }
    plan->capacity = (int64_t)n;
    return TF_OK;
}

void dispatch_plan_free(dispatch_plan *plan)
{
    free(plan->vertex), free(plan->position), free(plan->writer);
    memset(plan, 0, sizeof *plan);
}

int64_t dispatch_write_key(int64_t entry, int64_t first, int64_t batch_size)
{
    if (entry >= 2 * batch_size)
        return -1;
    return 2 * (first + entry % batch_size) + entry / batch_size;
}

int ref_dispatch_plan(const int32_t *entries, int64_t count, int64_t first, int64_t batch_size, dispatch_plan *plan,
                      tf_error *err)
{
    if (count > plan->capacity)
        return tf_error_set(err, TF_ERR_INPUT, "dispatch plan for %lld entries, capacity %lld", (long long)count,
                            (long long)plan->capacity);
    plan->entries = count;
    plan->unique = 0;
    for (int64_t k = 0; k < count; k++) {
        const int32_t v = entries[k];
        if (v < 0)
            return tf_error_set(err, TF_ERR_INPUT, "entry %lld has vertex %d, expected >= 0", (long long)k, v);
        const int64_t key = dispatch_write_key(k, first, batch_size);
        int64_t i = 0;
        while (i < plan->unique && plan->vertex[i] != v) /* the paper's linear search of V_u */
            i++;
        if (i == plan->unique) { /* first appearance: a new row of V_u */
            plan->vertex[i] = v;
            plan->writer[i] = key >= 0 ? k : -1;
            plan->unique++;
        } else if (key >= 0 &&
                   (plan->writer[i] < 0 || key > dispatch_write_key(plan->writer[i], first, batch_size))) {
            plan->writer[i] = k; /* a later write replaces an earlier one */
        }
        plan->position[k] = (int32_t)i;
    }
    return TF_OK;
}

void ref_dispatch_expand(const void *rows_u, const int32_t *position, int64_t count, size_t row_bytes, void *rows_o)
{
    const unsigned char *from = rows_u;
    unsigned char *to = rows_o;
    for (int64_t k = 0; k < count; k++)
        memcpy(to + (size_t)k * row_bytes, from + (size_t)position[k] * row_bytes, row_bytes);
}

void ref_dispatch_write_memory(const event_model *m, const event_tape *tape, const event_batch *batch,
                               const dispatch_plan *plan, node_memory *memory)
{
    const int64_t B = tape->batch_size, dm = m->config.memory_width;
    for (int64_t i = 0; i < plan->unique; i++) {
        const int64_t k = plan->writer[i];
        if (k < 0)
            continue;
        event_model_entry_message(m, tape, batch, k, tape->message);
        node_memory_write(memory, plan->vertex[i], tape->updated + k * dm, event_model_update_time(m, tape, k),
                          tape->message, batch->events->time[batch->first + k % B]);
    }
}

double dispatch_eta(int64_t total, int64_t unique)
{
    return total > 0 ? 1.0 - (double)unique / (double)total : 0.0;
}
