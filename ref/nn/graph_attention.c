#include "ref/nn/graph_attention.h"

#include <math.h>
#include <string.h>

#include "ref/nn/kernels.h"

int64_t graph_attention_width(const graph_attention *a) { return a->concat ? a->heads * a->channels : a->channels; }

static float leaky(float v) { return v > 0.0f ? v : GRAPH_ATTENTION_SLOPE * v; }

/* <a, b> over n floats, in order. */
static float dot(const float *a, const float *b, int64_t n)
{
    float sum = 0.0f;
    for (int64_t c = 0; c < n; c++)
        sum += a[c] * b[c];
    return sum;
}

void graph_attention_scores(const float *projected, const float *attention_source, const float *attention_target,
                            int64_t i, int64_t heads, int64_t channels, float *score_source, float *score_target)
{
    const float *row = projected + i * heads * channels;
    for (int64_t h = 0; h < heads; h++) {
        score_source[i * heads + h] = dot(row + h * channels, attention_source + h * channels, channels);
        score_target[i * heads + h] = dot(row + h * channels, attention_target + h * channels, channels);
    }
}

/* The alpha slot of target i's entry e (e = row_ptr[i + 1] is its added self-loop) for head h. */
static int64_t slot_of(const csr *g, int64_t i, int64_t e, int64_t h, int64_t heads)
{
    return (e < g->row_ptr[i + 1] ? e : g->num_edges + i) * heads + h;
}

/* The source of that entry, or -1 for a stored loop (removed). */
static int64_t source_of(const csr *g, int64_t i, int64_t e)
{
    if (e == g->row_ptr[i + 1])
        return i;
    return g->col[e] == i ? -1 : g->col[e];
}

void graph_attention_row_forward(const csr *g, int64_t i, const float *projected, const float *score_source,
                                 const float *score_target, int64_t heads, int64_t channels, float *alpha, float *out)
{
    const int64_t width = heads * channels, begin = g->row_ptr[i], end = g->row_ptr[i + 1];
    for (int64_t h = 0; h < heads; h++) {
        const float target = score_target[i * heads + h];
        float largest = -INFINITY, sum = 0.0f;
        for (int64_t e = begin; e <= end; e++)
            if (source_of(g, i, e) >= 0)
                largest = fmaxf(largest, leaky(score_source[source_of(g, i, e) * heads + h] + target));
        for (int64_t e = begin; e <= end; e++) {
            const int64_t j = source_of(g, i, e), slot = slot_of(g, i, e, h, heads);
            alpha[slot] = j < 0 ? 0.0f : expf(leaky(score_source[j * heads + h] + target) - largest);
            sum += alpha[slot];
        }
        float *o = out + i * width + h * channels;
        memset(o, 0, (size_t)channels * sizeof *o);
        for (int64_t e = begin; e <= end; e++) {
            const int64_t j = source_of(g, i, e), slot = slot_of(g, i, e, h, heads);
            if (j < 0)
                continue;
            alpha[slot] /= sum;
            for (int64_t c = 0; c < channels; c++)
                o[c] += alpha[slot] * projected[j * width + h * channels + c];
        }
    }
}

void ref_graph_attention_edges_forward(const propagation *p, const float *projected, const float *attention_source,
                                       const float *attention_target, int64_t heads, int64_t channels,
                                       float *score_source, float *score_target, float *alpha, float *out)
{
    const csr *g = p->graph;
    for (int64_t i = 0; i < g->num_nodes; i++)
        graph_attention_scores(projected, attention_source, attention_target, i, heads, channels, score_source,
                               score_target);
    for (int64_t i = 0; i < g->num_nodes; i++)
        graph_attention_row_forward(g, i, projected, score_source, score_target, heads, channels, alpha, out);
}

void graph_attention_row_score_gradients(const csr *g, int64_t i, const float *projected, const float *score_source,
                                         const float *score_target, const float *alpha, const float *dout,
                                         int64_t heads, int64_t channels, float *edge_gradient, float *dtarget)
{
    const int64_t width = heads * channels, begin = g->row_ptr[i], end = g->row_ptr[i + 1];
    for (int64_t h = 0; h < heads; h++) {
        const float *d = dout + i * width + h * channels;
        float weighted = 0.0f; /* sum over the row of alpha * dalpha */
        for (int64_t e = begin; e <= end; e++) {
            const int64_t j = source_of(g, i, e), slot = slot_of(g, i, e, h, heads);
            edge_gradient[slot] = j < 0 ? 0.0f : dot(d, projected + j * width + h * channels, channels);
            weighted += alpha[slot] * edge_gradient[slot];
        }
        float target = 0.0f;
        for (int64_t e = begin; e <= end; e++) {
            const int64_t j = source_of(g, i, e), slot = slot_of(g, i, e, h, heads);
            const float score = j < 0 ? 0.0f : score_source[j * heads + h] + score_target[i * heads + h];
            edge_gradient[slot] =
                alpha[slot] * (edge_gradient[slot] - weighted) * (score > 0.0f ? 1.0f : GRAPH_ATTENTION_SLOPE);
            target += edge_gradient[slot];
        }
        dtarget[i * heads + h] = target;
    }
}

void graph_attention_own_terms(int64_t rows, const float *projected, const float *attention_source,
                               const float *attention_target, const float *dsource, const float *dtarget,
                               int64_t heads, int64_t channels, float *dprojected, float *dattention_source,
                               float *dattention_target)
{
    const int64_t width = heads * channels;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t hc = 0; hc < width; hc++)
            dprojected[i * width + hc] += dsource[i * heads + hc / channels] * attention_source[hc] +
                                          dtarget[i * heads + hc / channels] * attention_target[hc];
    for (int64_t hc = 0; hc < width; hc++) {
        double source_sum = 0.0, target_sum = 0.0;
        for (int64_t i = 0; i < rows; i++) {
            source_sum += (double)dsource[i * heads + hc / channels] * projected[i * width + hc];
            target_sum += (double)dtarget[i * heads + hc / channels] * projected[i * width + hc];
        }
        dattention_source[hc] += (float)source_sum;
        dattention_target[hc] += (float)target_sum;
    }
}

void ref_graph_attention_edges_backward(const propagation *p, const float *projected, const float *attention_source,
                                        const float *attention_target, const float *score_source,
                                        const float *score_target, const float *alpha, const float *dout,
                                        int64_t heads, int64_t channels, float *scratch, float *dprojected,
                                        float *dattention_source, float *dattention_target)
{
    const csr *g = p->graph;
    const int64_t n = g->num_nodes, width = heads * channels;
    float *edge_gradient = scratch, *dsource = scratch + (g->num_edges + n) * heads, *dtarget = dsource + n * heads;
    memset(dsource, 0, (size_t)(n * heads) * sizeof *dsource);
    for (int64_t i = 0; i < n; i++)
        graph_attention_row_score_gradients(g, i, projected, score_source, score_target, alpha, dout, heads, channels,
                                            edge_gradient, dtarget);
    /* Scatter to the sources: o_i,h = sum alpha_ij,h p_j,h, and s_j,h sits in every score j sends. */
    for (int64_t i = 0; i < n; i++)
        for (int64_t e = g->row_ptr[i]; e <= g->row_ptr[i + 1]; e++) {
            const int64_t j = source_of(g, i, e);
            for (int64_t h = 0; j >= 0 && h < heads; h++) {
                const int64_t slot = slot_of(g, i, e, h, heads);
                for (int64_t c = 0; c < channels; c++)
                    dprojected[j * width + h * channels + c] += alpha[slot] * dout[i * width + h * channels + c];
                dsource[j * heads + h] += edge_gradient[slot];
            }
        }
    graph_attention_own_terms(n, projected, attention_source, attention_target, dsource, dtarget, heads, channels,
                              dprojected, dattention_source, dattention_target);
}

/* The edge kernels' view of @p p: the local graph over owned + halo rows as a whole graph. */
static propagation whole_graph(const propagation *p)
{
    propagation view = *p;
    view.halo = NULL;
    return view;
}

/* x with the halo's rows appended, [N][F], from @p scratch; x itself when @p p has no halo. */
static const float *input_rows(const graph_attention *a, const propagation *p, const float *x, workspace *scratch,
                               tf_error *err)
{
    if (!p->halo)
        return x;
    const int64_t owned = p->halo->owned, rows = p->graph->num_nodes, f = a->in_width;
    float *extended = workspace_alloc(scratch, (size_t)(rows * f), sizeof(float), "GAT halo rows", err);
    if (!extended)
        return NULL;
    memcpy(extended, x, (size_t)(owned * f) * sizeof(float));
    return p->halo->fetch(p->halo->context, x, f, extended + owned * f, err) == TF_OK ? extended : NULL;
}

int ref_graph_attention_forward(const kernels *k, const graph_attention *a, const propagation *p, const float *x,
                                workspace *scratch, graph_attention_tape *tape, float *out, tf_error *err)
{
    const int64_t n = p->graph->num_nodes, edges = p->graph->num_edges, width = a->heads * a->channels;
    const int64_t owned = propagation_rows(p);
    memset(tape, 0, sizeof *tape);
    tape->rows = n;
    tape->owned = owned;
    tape->edges = edges;
    /* the heads' outputs go to `out` directly only when they are y's rows as they are */
    const int direct = a->concat && owned == n;
    if (!(tape->input = input_rows(a, p, x, scratch, err)) ||
        !(tape->projected = workspace_alloc(scratch, (size_t)(n * width), sizeof(float), "GAT tape", err)) ||
        !(tape->score_source = workspace_alloc(scratch, (size_t)(n * a->heads), sizeof(float), "GAT tape", err)) ||
        !(tape->score_target = workspace_alloc(scratch, (size_t)(n * a->heads), sizeof(float), "GAT tape", err)) ||
        !(tape->alpha = workspace_alloc(scratch, (size_t)((edges + n) * a->heads), sizeof(float), "GAT tape", err)) ||
        (!direct &&
         !(tape->heads_output = workspace_alloc(scratch, (size_t)(n * width), sizeof(float), "GAT tape", err))))
        return err->code ? err->code : TF_ERR_INPUT;
    const propagation graph = whole_graph(p);
    k->linear_forward(tape->input, a->weight->value.data, NULL, n, a->in_width, width, tape->projected);
    k->graph_attention_edges_forward(&graph, tape->projected, a->attention_source->value.data,
                                     a->attention_target->value.data, a->heads, a->channels, tape->score_source,
                                     tape->score_target, tape->alpha, direct ? out : tape->heads_output);
    if (a->concat && !direct) /* the owned rows are the first */
        memcpy(out, tape->heads_output, (size_t)(owned * width) * sizeof(float));
    if (!a->concat) /* GATConv's out.mean(dim=1): the heads summed, then divided by H */
        for (int64_t i = 0; i < owned; i++)
            for (int64_t c = 0; c < a->channels; c++) {
                float sum = 0.0f;
                for (int64_t h = 0; h < a->heads; h++)
                    sum += tape->heads_output[i * width + h * a->channels + c];
                out[i * a->channels + c] = sum / (float)a->heads;
            }
    k->add_bias(out, a->bias->value.data, owned, graph_attention_width(a));
    return TF_OK;
}

int ref_graph_attention_backward(const kernels *k, const graph_attention *a, const propagation *p,
                                 const graph_attention_tape *tape, const float *dout, float *dx, workspace *scratch,
                                 tf_error *err)
{
    const int64_t n = tape->rows, owned = tape->owned, width = a->heads * a->channels;
    if (dx && owned != n)
        return tf_error_set(err, TF_ERR_INPUT, "graph attention over a rank's rows: the input's gradient would "
                                               "belong to the halo's owners; only a data input (dx NULL) is supported");
    const int direct = a->concat && owned == n;
    float *dprojected = workspace_zeroed(scratch, (size_t)(n * width), sizeof(float), "GAT gradients", err);
    float *edge_scratch = dprojected ? workspace_alloc(scratch, (size_t)((tape->edges + 3 * n) * a->heads),
                                                       sizeof(float), "GAT gradients", err)
                                     : NULL;
    float *dheads = edge_scratch && !direct
                        ? workspace_zeroed(scratch, (size_t)(n * width), sizeof(float), "GAT gradients", err)
                        : (float *)dout;
    if (!edge_scratch || !dheads)
        return TF_ERR_INPUT;
    k->add_bias_backward(dout, owned, graph_attention_width(a), a->bias->grad.data);
    if (a->concat && !direct) /* the halo's rows have no output, so no gradient */
        memcpy(dheads, dout, (size_t)(owned * width) * sizeof(float));
    if (!a->concat) /* each head gets 1/H of the mean's gradient */
        for (int64_t i = 0; i < owned; i++)
            for (int64_t hc = 0; hc < width; hc++)
                dheads[i * width + hc] = dout[i * a->channels + hc % a->channels] / (float)a->heads;
    const propagation graph = whole_graph(p);
    k->graph_attention_edges_backward(&graph, tape->projected, a->attention_source->value.data,
                                      a->attention_target->value.data, tape->score_source, tape->score_target,
                                      tape->alpha, dheads, a->heads, a->channels, edge_scratch, dprojected,
                                      a->attention_source->grad.data, a->attention_target->grad.data);
    k->linear_backward(tape->input, a->weight->value.data, dprojected, n, a->in_width, width, dx, a->weight->grad.data,
                       NULL);
    return TF_OK;
}
