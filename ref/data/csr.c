#include "ref/data/csr.h"

#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"

/* Allocates the three arrays of a csr with num_nodes rows and num_edges edges. */
static int csr_alloc(csr *g, int64_t num_nodes, int64_t num_edges, tf_error *err)
{
    memset(g, 0, sizeof *g);
    g->num_nodes = num_nodes;
    g->num_edges = num_edges;
    g->row_ptr = tf_alloc((size_t)num_nodes + 1, sizeof *g->row_ptr, "graph row offsets", err);
    g->col = g->row_ptr ? tf_alloc((size_t)num_edges, sizeof *g->col, "graph edge sources", err) : NULL;
    g->weight = g->col ? tf_alloc((size_t)num_edges, sizeof *g->weight, "graph edge weights", err) : NULL;
    if (!g->weight) {
        csr_free(g);
        return TF_ERR_INPUT;
    }
    return TF_OK;
}

int csr_from_edges(csr *g, int64_t num_nodes, int64_t num_edges, const int32_t *src,
                   const int32_t *dst, const float *weight, tf_error *err)
{
    memset(g, 0, sizeof *g);
    if (num_nodes < 0 || num_nodes > INT32_MAX)
        return tf_error_set(err, TF_ERR_INPUT, "graph: %lld vertices, expected 0..%d",
                            (long long)num_nodes, INT32_MAX);
    if (num_edges < 0)
        return tf_error_set(err, TF_ERR_INPUT, "graph: %lld edges, expected at least 0", (long long)num_edges);
    for (int64_t e = 0; e < num_edges; e++)
        if (src[e] < 0 || src[e] >= num_nodes || dst[e] < 0 || dst[e] >= num_nodes)
            return tf_error_set(err, TF_ERR_INPUT,
                                "graph: edge %lld (%d -> %d) has a vertex outside 0..%lld",
                                (long long)e, src[e], dst[e], (long long)num_nodes - 1);
    if (csr_alloc(g, num_nodes, num_edges, err) != TF_OK)
        return TF_ERR_INPUT;

    /* Two stable counting sorts (a radix sort): first by source, then by destination.
     * The second pass keeps the first pass's order inside each row, so rows come out
     * sorted by source and duplicate edges keep their input order. */
    int64_t *by_source = tf_alloc((size_t)num_edges, sizeof *by_source, "edge order", err);
    int64_t *cursor = by_source ? tf_alloc((size_t)num_nodes + 1, sizeof *cursor, "edge counts", err) : NULL;
    if (!cursor) {
        free(by_source);
        csr_free(g);
        return TF_ERR_INPUT;
    }
    for (int64_t e = 0; e < num_edges; e++)
        cursor[src[e] + 1]++;
    for (int64_t v = 0; v < num_nodes; v++)
        cursor[v + 1] += cursor[v];
    for (int64_t e = 0; e < num_edges; e++)
        by_source[cursor[src[e]]++] = e;

    for (int64_t e = 0; e < num_edges; e++)
        g->row_ptr[dst[e] + 1]++;
    for (int64_t v = 0; v < num_nodes; v++)
        g->row_ptr[v + 1] += g->row_ptr[v];
    memcpy(cursor, g->row_ptr, ((size_t)num_nodes + 1) * sizeof *cursor);
    for (int64_t i = 0; i < num_edges; i++) {
        int64_t e = by_source[i];
        int64_t slot = cursor[dst[e]]++;
        g->col[slot] = src[e];
        g->weight[slot] = weight ? weight[e] : 1.0f;
    }
    free(cursor);
    free(by_source);
    return TF_OK;
}

int csr_copy(csr *dst, const csr *src, tf_error *err)
{
    if (csr_alloc(dst, src->num_nodes, src->num_edges, err) != TF_OK)
        return TF_ERR_INPUT;
    memcpy(dst->row_ptr, src->row_ptr, ((size_t)src->num_nodes + 1) * sizeof *src->row_ptr);
    if (src->num_edges) {
        memcpy(dst->col, src->col, (size_t)src->num_edges * sizeof *src->col);
        memcpy(dst->weight, src->weight, (size_t)src->num_edges * sizeof *src->weight);
    }
    return TF_OK;
}

void csr_free(csr *g)
{
    free(g->row_ptr);
    free(g->col);
    free(g->weight);
    memset(g, 0, sizeof *g);
}

int csr_equal(const csr *a, const csr *b)
{
    if (a->num_nodes != b->num_nodes || a->num_edges != b->num_edges)
        return 0;
    if (memcmp(a->row_ptr, b->row_ptr, ((size_t)a->num_nodes + 1) * sizeof *a->row_ptr) != 0)
        return 0;
    if (a->num_edges == 0)
        return 1;
    return memcmp(a->col, b->col, (size_t)a->num_edges * sizeof *a->col) == 0 &&
           memcmp(a->weight, b->weight, (size_t)a->num_edges * sizeof *a->weight) == 0;
}
