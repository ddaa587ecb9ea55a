#include "ref/data/temporal_csr.h"

#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"

int temporal_csr_build(temporal_csr *g, const event_stream *es, tf_error *err)
{
    memset(g, 0, sizeof *g);
    g->num_nodes = es->num_nodes;
    g->num_entries = 2 * es->num_events;
    size_t entries = (size_t)g->num_entries;
    int64_t *cursor = NULL;
    if (!(g->row_ptr = tf_alloc((size_t)g->num_nodes + 1, sizeof *g->row_ptr, "temporal CSR offsets", err)) ||
        !(g->neighbour = tf_alloc(entries, sizeof *g->neighbour, "temporal CSR neighbours", err)) ||
        !(g->event = tf_alloc(entries, sizeof *g->event, "temporal CSR events", err)) ||
        !(g->time = tf_alloc(entries, sizeof *g->time, "temporal CSR times", err)) ||
        !(cursor = tf_alloc((size_t)g->num_nodes + 1, sizeof *cursor, "temporal CSR cursors", err))) {
        temporal_csr_free(g);
        return TF_ERR_INPUT;
    }
    for (int64_t i = 0; i < es->num_events; i++) {
        g->row_ptr[es->src[i] + 1]++;
        g->row_ptr[es->dst[i] + 1]++;
    }
    for (int64_t v = 0; v < g->num_nodes; v++)
        g->row_ptr[v + 1] += g->row_ptr[v];
    memcpy(cursor, g->row_ptr, ((size_t)g->num_nodes + 1) * sizeof *cursor);
    /* Events arrive in time order, so appending keeps every row sorted by (time, index). */
    for (int64_t i = 0; i < es->num_events; i++) {
        int64_t slot = cursor[es->src[i]]++;
        g->neighbour[slot] = es->dst[i];
        g->event[slot] = i;
        g->time[slot] = es->time[i];
        slot = cursor[es->dst[i]]++;
        g->neighbour[slot] = es->src[i];
        g->event[slot] = i;
        g->time[slot] = es->time[i];
    }
    free(cursor);
    return TF_OK;
}

void temporal_csr_free(temporal_csr *g)
{
    free(g->row_ptr);
    free(g->neighbour);
    free(g->event);
    free(g->time);
    memset(g, 0, sizeof *g);
}

int temporal_csr_recent(const temporal_csr *g, int32_t node, double t, int k, int32_t *neighbours,
                        int64_t *events, double *times)
{
    if (node < 0 || node >= g->num_nodes || k <= 0)
        return 0;
    int64_t low = g->row_ptr[node], high = g->row_ptr[node + 1];
    int64_t row_start = low;
    /* Find the first entry with time >= t: everything before it is strictly earlier. */
    while (low < high) {
        int64_t middle = low + (high - low) / 2;
        if (g->time[middle] < t)
            low = middle + 1;
        else
            high = middle;
    }
    int64_t first = low - k > row_start ? low - k : row_start;
    int count = (int)(low - first);
    for (int i = 0; i < count; i++) {
        if (neighbours)
            neighbours[i] = g->neighbour[first + i];
        if (events)
            events[i] = g->event[first + i];
        if (times)
            times[i] = g->time[first + i];
    }
    return count;
}
