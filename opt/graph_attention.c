#include "opt/graph_attention.h"

#include <string.h>

void opt_graph_attention_edges_forward(const propagation *p, const float *projected, const float *attention_source,
                                       const float *attention_target, int64_t heads, int64_t channels,
                                       float *score_source, float *score_target, float *alpha, float *out)
{
    const csr *g = p->graph;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < g->num_nodes; i++)
        graph_attention_scores(projected, attention_source, attention_target, i, heads, channels, score_source,
                               score_target);
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t i = 0; i < g->num_nodes; i++)
        graph_attention_row_forward(g, i, projected, score_source, score_target, heads, channels, alpha, out);
}

/* What entry @p slot (destination i) adds into its source u: alpha dout_i into dprojected [N][H*C]
 * row u, and its score gradient (edge_gradient [E + N][H]) into dsource [N][H] row u. */
static void add_entry(int64_t u, int64_t i, int64_t slot, const float *alpha, const float *dout,
                      const float *edge_gradient, int64_t heads, int64_t channels, float *dprojected, float *dsource)
{
    const int64_t width = heads * channels;
    for (int64_t h = 0; h < heads; h++) {
        for (int64_t c = 0; c < channels; c++)
            dprojected[u * width + h * channels + c] += alpha[slot * heads + h] * dout[i * width + h * channels + c];
        dsource[u * heads + h] += edge_gradient[slot * heads + h];
    }
}

/* Source u's share of the scatter, in the reference's order of destinations. */
static void gather_source(const propagation *p, int64_t u, const float *alpha, const float *dout,
                          const float *edge_gradient, int64_t heads, int64_t channels, float *dprojected,
                          float *dsource)
{
    const int64_t self_slot = p->graph->num_edges + u;
    int self_done = 0;
    for (int64_t entry = p->transpose_offsets[u]; entry < p->transpose_offsets[u + 1]; entry++) {
        const int64_t v = p->transpose_destination[entry];
        /* The reference adds u's own self-loop while it visits row u, after u's stored in-edges. */
        if (!self_done && v > u) {
            add_entry(u, u, self_slot, alpha, dout, edge_gradient, heads, channels, dprojected, dsource);
            self_done = 1;
        }
        if (v != u) /* a stored loop is removed */
            add_entry(u, v, p->transpose_edge[entry], alpha, dout, edge_gradient, heads, channels, dprojected,
                      dsource);
    }
    if (!self_done)
        add_entry(u, u, self_slot, alpha, dout, edge_gradient, heads, channels, dprojected, dsource);
}

void opt_graph_attention_edges_backward(const propagation *p, const float *projected, const float *attention_source,
                                        const float *attention_target, const float *score_source,
                                        const float *score_target, const float *alpha, const float *dout,
                                        int64_t heads, int64_t channels, float *scratch, float *dprojected,
                                        float *dattention_source, float *dattention_target)
{
    if (!p->transpose_offsets) {
        ref_graph_attention_edges_backward(p, projected, attention_source, attention_target, score_source,
                                           score_target, alpha, dout, heads, channels, scratch, dprojected,
                                           dattention_source, dattention_target);
        return;
    }
    const csr *g = p->graph;
    const int64_t n = g->num_nodes;
    float *edge_gradient = scratch, *dsource = scratch + (g->num_edges + n) * heads, *dtarget = dsource + n * heads;
    memset(dsource, 0, (size_t)(n * heads) * sizeof *dsource);
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t i = 0; i < n; i++)
        graph_attention_row_score_gradients(g, i, projected, score_source, score_target, alpha, dout, heads, channels,
                                            edge_gradient, dtarget);
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t u = 0; u < n; u++)
        gather_source(p, u, alpha, dout, edge_gradient, heads, channels, dprojected, dsource);
    graph_attention_own_terms(n, projected, attention_source, attention_target, dsource, dtarget, heads, channels,
                              dprojected, dattention_source, dattention_target);
}
