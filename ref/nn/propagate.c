#include "ref/nn/propagate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"

static int propagation_alloc(propagation *p, const csr *g, tf_error *err)
{
    memset(p, 0, sizeof *p);
    p->graph = g;
    p->edge_coefficient = tf_alloc((size_t)g->num_edges, sizeof *p->edge_coefficient, "edge coefficients", err);
    p->self_coefficient = p->edge_coefficient
                              ? tf_alloc((size_t)g->num_nodes, sizeof *p->self_coefficient, "self coefficients", err)
                              : NULL;
    if (!p->self_coefficient) {
        ref_propagation_free(p);
        return TF_ERR_INPUT;
    }
    return TF_OK;
}

void ref_propagation_free(propagation *p)
{
    free(p->edge_coefficient);
    free(p->self_coefficient);
    free(p->transpose_offsets);
    free(p->transpose_edge);
    free(p->transpose_destination);
    memset(p, 0, sizeof *p);
}

int64_t propagation_rows(const propagation *p) { return p->halo ? p->halo->owned : p->graph->num_nodes; }

/* 1 / sqrt(d), or 0 where d = 0 (PyTorch Geometric masks the infinity to 0). */
static double inverse_sqrt(double degree) { return degree > 0 ? 1.0 / sqrt(degree) : 0.0; }

int ref_propagation_gcn(propagation *p, const csr *g, edge_normalization kind, int self_loops, tf_error *err)
{
    if (propagation_alloc(p, g, err) != TF_OK)
        return TF_ERR_INPUT;
    const int64_t n = g->num_nodes;
    /* Vertex-sized, so under the memory budget like the data (ref/core/memory.h). */
    double *degree = tf_alloc((size_t)n + 1, sizeof *degree, "weighted in-degrees", err);
    double *loop_weight = degree ? tf_alloc((size_t)n + 1, sizeof *loop_weight, "self-loop weights", err) : NULL;
    int64_t *in_edges = loop_weight ? tf_alloc((size_t)n + 1, sizeof *in_edges, "in-edge counts", err) : NULL;
    if (!in_edges) {
        free(degree);
        free(loop_weight);
        ref_propagation_free(p);
        return err->code;
    }
    for (int64_t v = 0; v < n; v++) {
        loop_weight[v] = 1.0; /* the fill value for vertices without a loop */
        for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++) {
            if (self_loops && g->col[e] == v) {
                loop_weight[v] = g->weight[e]; /* the last existing loop wins, as in PyG */
                continue;
            }
            degree[v] += g->weight[e];
            in_edges[v]++;
        }
        if (self_loops) {
            degree[v] += loop_weight[v];
            in_edges[v]++;
        }
    }
    for (int64_t v = 0; v < n; v++) {
        for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++) {
            int32_t u = g->col[e];
            double w = g->weight[e];
            double coefficient = kind == EDGE_NORM_NONE   ? w
                                 : kind == EDGE_NORM_MEAN ? w / (double)in_edges[v]
                                                          : w * inverse_sqrt(degree[u]) * inverse_sqrt(degree[v]);
            p->edge_coefficient[e] = (self_loops && u == v) ? 0.0f : (float)coefficient;
        }
        double w = self_loops ? loop_weight[v] : 0.0;
        p->self_coefficient[v] = (float)(kind == EDGE_NORM_NONE   ? w
                                         : kind == EDGE_NORM_MEAN ? (in_edges[v] ? w / (double)in_edges[v] : 0.0)
                                                                  : w * inverse_sqrt(degree[v]) * inverse_sqrt(degree[v]));
    }
    free(degree);
    free(loop_weight);
    free(in_edges);
    return TF_OK;
}

int ref_propagation_chebyshev(propagation *p, const csr *g, tf_error *err)
{
    if (propagation_alloc(p, g, err) != TF_OK)
        return TF_ERR_INPUT;
    const int64_t n = g->num_nodes;
    double *out_degree = tf_alloc((size_t)n + 1, sizeof *out_degree, "weighted out-degrees", err);
    if (!out_degree) {
        ref_propagation_free(p);
        return err->code;
    }
    for (int64_t v = 0; v < n; v++)
        for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++)
            if (g->col[e] != v)
                out_degree[g->col[e]] += g->weight[e];
    /* L = I - D^-1/2 A D^-1/2 off the diagonal is -w / sqrt(d_u d_v); its diagonal is 1. */
    double largest = n > 0 ? 1.0 : 0.0;
    for (int64_t v = 0; v < n; v++)
        for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++)
            if (g->col[e] != v) {
                double entry = -g->weight[e] * inverse_sqrt(out_degree[g->col[e]]) * inverse_sqrt(out_degree[v]);
                largest = entry > largest ? entry : largest;
            }
    double lambda_max = 2.0 * largest;
    for (int64_t v = 0; v < n; v++) {
        for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++) {
            int32_t u = g->col[e];
            double entry = u == v ? 0.0 : -g->weight[e] * inverse_sqrt(out_degree[u]) * inverse_sqrt(out_degree[v]);
            p->edge_coefficient[e] = (float)(2.0 * entry / lambda_max);
        }
        p->self_coefficient[v] = (float)(2.0 / lambda_max - 1.0);
    }
    free(out_degree);
    return TF_OK;
}

int ref_propagation_walk(propagation *p, const csr *g, walk_kind kind, tf_error *err)
{
    if (propagation_alloc(p, g, err) != TF_OK)
        return TF_ERR_INPUT;
    const int64_t n = g->num_nodes;
    double *degree = tf_alloc((size_t)n + 1, sizeof *degree, "weighted degrees", err);
    if (!degree) {
        ref_propagation_free(p);
        return err->code;
    }
    /* the forward walk divides by the source's out-degree, the backward one by the destination's in-degree */
    for (int64_t v = 0; v < n; v++)
        for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++)
            degree[kind == WALK_FORWARD ? g->col[e] : v] += g->weight[e];
    for (int64_t v = 0; v < n; v++) {
        for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++) {
            const double d = degree[kind == WALK_FORWARD ? g->col[e] : v];
            p->edge_coefficient[e] = d != 0.0 ? (float)(g->weight[e] / d) : 0.0f;
        }
        p->self_coefficient[v] = 0.0f;
    }
    free(degree);
    return TF_OK;
}

int ref_propagation_transpose(propagation *q, csr *reversed, const propagation *p, tf_error *err)
{
    const csr *g = p->graph;
    const int64_t n = g->num_nodes, edges = g->num_edges;
    reversed->num_nodes = n;
    reversed->num_edges = edges;
    memset(reversed->row_ptr, 0, (size_t)(n + 1) * sizeof *reversed->row_ptr);
    int64_t *cursor = tf_alloc((size_t)n + 1, sizeof *cursor, "reversed graph", err);
    if (!cursor || propagation_alloc(q, reversed, err) != TF_OK) {
        free(cursor);
        return TF_ERR_INPUT;
    }
    for (int64_t e = 0; e < edges; e++) /* a counting sort by source, stable: destinations ascend */
        reversed->row_ptr[g->col[e] + 1]++;
    for (int64_t u = 0; u < n; u++) {
        reversed->row_ptr[u + 1] += reversed->row_ptr[u];
        cursor[u] = reversed->row_ptr[u];
        q->self_coefficient[u] = p->self_coefficient[u];
    }
    for (int64_t v = 0; v < n; v++)
        for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++) {
            const int64_t at = cursor[g->col[e]]++;
            reversed->col[at] = (int32_t)v;
            reversed->weight[at] = g->weight[e];
            q->edge_coefficient[at] = p->edge_coefficient[e];
        }
    free(cursor);
    return TF_OK;
}

void ref_propagate_row(const propagation *p, const float *x, int64_t width, int64_t v, float *out)
{
    const csr *g = p->graph;
    for (int64_t j = 0; j < width; j++)
        out[j] = p->self_coefficient[v] * x[v * width + j];
    for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++) {
        const float *in = x + (int64_t)g->col[e] * width;
        const float coefficient = p->edge_coefficient[e];
        for (int64_t j = 0; j < width; j++)
            out[j] += coefficient * in[j];
    }
}

void ref_propagate_forward(const propagation *p, const float *x, int64_t width, float *y)
{
    for (int64_t v = 0; v < p->graph->num_nodes; v++)
        ref_propagate_row(p, x, width, v, y + v * width);
}

void ref_propagate_backward(const propagation *p, const float *dy, int64_t width, float *dx)
{
    const csr *g = p->graph;
    for (int64_t v = 0; v < g->num_nodes; v++) {
        const float *gradient = dy + v * width;
        for (int64_t j = 0; j < width; j++)
            dx[v * width + j] += p->self_coefficient[v] * gradient[j];
        for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++) {
            float *target = dx + (int64_t)g->col[e] * width;
            for (int64_t j = 0; j < width; j++)
                target[j] += p->edge_coefficient[e] * gradient[j];
        }
    }
}

int propagation_add_transpose(propagation *p, tf_error *err)
{
    if (p->transpose_offsets)
        return TF_OK;
    const csr *g = p->graph;
    const int64_t n = g->num_nodes, edges = g->num_edges;
    p->transpose_offsets = tf_alloc((size_t)n + 1, sizeof *p->transpose_offsets, "transpose offsets", err);
    p->transpose_edge = p->transpose_offsets ? tf_alloc((size_t)edges, sizeof *p->transpose_edge, "transpose", err) : NULL;
    p->transpose_destination =
        p->transpose_edge ? tf_alloc((size_t)edges, sizeof *p->transpose_destination, "transpose", err) : NULL;
    int64_t *cursor = p->transpose_destination ? tf_alloc((size_t)n + 1, sizeof *cursor, "transpose", err) : NULL;
    if (!cursor) {
        free(p->transpose_offsets);
        free(p->transpose_edge);
        free(p->transpose_destination);
        p->transpose_offsets = NULL;
        p->transpose_edge = NULL;
        p->transpose_destination = NULL;
        return TF_ERR_INPUT;
    }
    for (int64_t e = 0; e < edges; e++)
        p->transpose_offsets[g->col[e] + 1]++;
    for (int64_t u = 0; u < n; u++)
        p->transpose_offsets[u + 1] += p->transpose_offsets[u];
    memcpy(cursor, p->transpose_offsets, ((size_t)n + 1) * sizeof *cursor);
    /* Visiting rows in order fills each source's list sorted by (destination, CSR position):
     * the order in which ref's scatter adds into that source's gradient. */
    for (int64_t v = 0; v < n; v++)
        for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++) {
            int64_t slot = cursor[g->col[e]]++;
            p->transpose_edge[slot] = e;
            p->transpose_destination[slot] = (int32_t)v;
        }
    free(cursor);
    return TF_OK;
}
