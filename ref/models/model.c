/* What the snapshot models share: the model table, creation, the linear head, the window loss. */
#include "ref/models/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/nn/chebconv.h"
#include "ref/nn/layers.h"
#include "ref/core/memory.h"

/* The model table (fields left out are 0: MODEL_INPUTS_NONE, none, NULL). A line says which shape options a
 * model takes, which operator it propagates with, what --incremental can serve it, which PyTorch
 * Geometric Temporal cell it is, which properties the techniques rely on it has (model_property), and
 * for the others why not: `lacks`, the technique does not apply to such a model; `not_yet`, it would
 * and is not built for it. */
#define SERVED (1u << MODEL_SERVED_INPUTS)
#define ROWS (1u << MODEL_VERTEX_ROWS)
#define ONE_HOP (1u << MODEL_ONE_HOP)
#define LANES (1u << MODEL_VERTEX_CELL)
#define STALE (1u << MODEL_STALE_PRODUCTS)
const char *const model_names[MODEL_COUNT + 1] = {"tgcn", "gconvgru", "gclstm", "evolvegcn", "tgcn2", "wdgcn", "gconvlstm", "mpnnlstm", "gcrnm1", "dcrnn", "cdgcn", "gatlstm", "dysat", NULL};

/* #model_info::state_width of the models whose output is not one --hidden-wide block. */
static int64_t two_blocks(const model_config *c) { return 2 * c->hidden; }
static int64_t input_and_two_blocks_per_pair(const model_config *c) { return c->in_features + 2 * c->layers * c->hidden; }

/* #model_info::cost: each model's work per vertex and snapshot in multiply-adds (a product of an
 * [n][a] by an [a][b] weight counts a b per row; a backward costs about twice its forward, hence the
 * factor 3)
 * and the floats its aggregations move per halo row, from the equations in chapters/01a-snapshot-models.md.
 * f features, h hidden, k = K - 1 Chebyshev or diffusion steps beyond T_0, o targets. */
#define SHAPE                                                                                                         \
    const double f = (double)(c->in_features > 0 ? c->in_features : 1), h = (double)c->hidden,                    \
                 o = (double)(c->out_features > 0 ? c->out_features : 1);                                           \
    const int64_t F = c->in_features > 0 ? c->in_features : 1, H = c->hidden,                                      \
                  k = c->chebyshev_k > 1 ? c->chebyshev_k - 1 : 0,                                                  \
                  L = c->layers > 0 ? c->layers : model_table[c->kind].layers > 0 ? model_table[c->kind].layers : 1; \
    (void)f, (void)h, (void)o, (void)F, (void)H, (void)k, (void)L

static void cost_tgcn(const model_config *c, model_cost *out)
{ /* A^ X_t once, three gates of [A^ X W | H] */
    SHAPE;
    *out = (model_cost){3 * (3 * (f * h + 2 * h * h) + h * o), F, 0, 2 * H, 0};
}
static void cost_gconvgru(const model_config *c, model_cost *out)
{ /* bases of X, H and H * R; six convolutions of K terms */
    SHAPE;
    *out = (model_cost){3 * (3 * (k + 1) * f * h + 3 * (k + 1) * h * h + h * o), k * (F + 2 * H), 2 * k * H, 2 * H, 0};
}
static void cost_gclstm(const model_config *c, model_cost *out)
{ /* four gates of X W and a Chebyshev convolution of H */
    SHAPE;
    *out = (model_cost){3 * (4 * (f * h + (k + 1) * h * h) + h * o), k * H, k * H, 2 * 2 * H, 0};
}
static void cost_evolvegcn(const model_config *c, model_cost *out)
{ /* X W_t with the evolved F x F weight; no per-vertex state */
    SHAPE;
    *out = (model_cost){3 * f * f, F, F, 0, 0};
}
static void cost_tgcn2(const model_config *c, model_cost *out)
{ /* A^ X_t once, then per gate a second hop of its H-wide ReLU output */
    SHAPE;
    *out = (model_cost){3 * (3 * (f * h + h * h + 2 * h * h) + h * o), F + 3 * H, 3 * H, 2 * H, 0};
}
static void cost_wdgcn(const model_config *c, model_cost *out)
{ /* one GCN layer, then an LSTM of [Z | H] */
    SHAPE;
    *out = (model_cost){3 * (f * h + 4 * h * 2 * h + h * o), F, 0, 2 * 2 * H, 0};
}
static void cost_gconvlstm(const model_config *c, model_cost *out)
{ /* bases of X and H, eight convolutions of K terms */
    SHAPE;
    *out = (model_cost){3 * (4 * (k + 1) * (f + h) * h + h * o), k * (F + H), k * H, 2 * 2 * H, 0};
}
static void cost_mpnnlstm(const model_config *c, model_cost *out)
{ /* two GCN layers, an LSTM of [G1 | G2 | H1], one of [H1 | H2], the head on [H1 | H2] */
    SHAPE;
    *out = (model_cost){3 * (f * h + h * h + 4 * h * 3 * h + 4 * h * 2 * h + 2 * h * o), F + H, H, 2 * 2 * 2 * H, 0};
}
static void cost_gcrnm1(const model_config *c, model_cost *out)
{ /* per pair a Chebyshev convolution of its input (X, then H), an LSTM of [Z | H] */
    SHAPE;
    const double pairs = (double)L;
    *out = (model_cost){3 * ((k + 1) * (f + (pairs - 1) * h) * h + pairs * 4 * h * 2 * h + h * o),
                        k * (F + (L - 1) * H), k * (L - 1) * H, L * 2 * 2 * H, 0};
}
static void cost_dcrnn(const model_config *c, model_cost *out)
{ /* diffusions of X, H and H * R on two walks, three gates of 2K terms */
    SHAPE;
    *out = (model_cost){3 * (3 * 2 * (k + 1) * (f + h) * h + h * o), 2 * k * (F + 2 * H), 2 * k * 2 * H, 2 * H, 0};
}
static void cost_cdgcn(const model_config *c, model_cost *out)
{ /* per pair l a GCN layer of U_{l-1} (F + 2 l H wide), an LSTM of [U_{l-1} | G | H] */
    SHAPE;
    double flops = (f + 2 * (double)L * h) * o;
    int64_t aggregated = 0;
    for (int64_t l = 0; l < L; l++) {
        const double w = f + 2 * (double)l * h;
        flops += w * h + 4 * h * (w + 2 * h);
        aggregated += F + 2 * l * H;
    }
    *out = (model_cost){3 * flops, aggregated, aggregated - F, L * 2 * 2 * H, 0};
}
static void cost_gatlstm(const model_config *c, model_cost *out)
{ /* two heads of W X_t (attention's per-edge terms left out), an LSTM of [Z | H]; a halo row is its X_t */
    SHAPE;
    *out = (model_cost){3 * (2 * f * h + 4 * h * 2 * h + h * o), F, 0, 2 * 2 * H, 0};
}

/* #model_info::vertex_lstm of the models whose per-vertex LSTMs are stacked. */
static int64_t lstms_mpnnlstm(const model_config *c, int layer, int64_t *below)
{ /* LSTM_1 reads [G1 | G2], LSTM_2 reads H1 alone */
    *below = layer == 1 ? 0 : -1;
    return layer == 0 ? 2 * c->hidden : layer == 1 ? c->hidden : 0;
}
static int64_t lstms_cdgcn(const model_config *c, int layer, int64_t *below)
{ /* pair l's LSTM reads V_l = [U_{l-1} | G_l], F + 2 l H + H wide; U_{l-1} ends with H_{l-1} */
    const int64_t pairs = c->layers > 0 ? c->layers : model_table[c->kind].layers, f = c->in_features, h = c->hidden;
    *below = layer > 0 ? f + 2 * layer * h - h : -1;
    return layer < pairs ? f + 2 * layer * h + h : 0;
}

static int64_t lstms_gcrnm1(const model_config *c, int layer, int64_t *below)
{ /* pair l's LSTM reads its own ChebNet's H-wide output Z_l: a graph convolution of the pair below's states
   * comes in between, so no layer reads the one below's columns directly */
    const int64_t pairs = c->layers > 0 ? c->layers : model_table[c->kind].layers;
    *below = -1;
    return layer < pairs ? c->hidden : 0;
}

static void cost_dysat(const model_config *c, model_cost *out)
{ /* two heads of W X_t, the three temporal projections (the per-pair attention, which grows with the window,
   * left out); a halo row is its X_t; between snapshots Z_t goes forward and its gradient back (H each way),
   * read by every later snapshot of the window, not only the next (reads_window) */
    SHAPE;
    *out = (model_cost){3 * (2 * f * h + 3 * h * h + h * o), F, 0, 2 * H, 1};
}

/* MODEL_SERVED_INPUTS */
#define NOT_SERVED_GCLSTM                                                                                           \
    "GC-LSTM's input term is X_t W, a plain product with a parameter (its Chebyshev convolutions act on H only): " \
    "nothing to aggregate"
#define NOT_SERVED_EVOLVEGCN "EvolveGCN-O convolves with a weight that evolves inside the window: nothing to aggregate ahead"
#define NOT_SERVED_ATTENTION "its attention weights are computed from W X_t, a product with a parameter: nothing to aggregate ahead"
#define NOT_SERVED_DYSAT "attention is not a fixed linear operator: its weights are computed from W X_t, a " \
                         "product with a parameter, so there is no aggregation of X_t to serve ahead"
/* MODEL_VERTEX_ROWS */
/* MODEL_ONE_HOP */
#define HOPS_OF_H "its gates convolve H over the graph: a target reads its neighbours' states, not one hop of X_t"
#define HOPS_TWO "its GCN has two layers: a target reads two hops of X_t"
#define HOPS_EVOLVEGCN "its weight evolves inside the window: hybrid batches serve A^ X_t to a fixed GCN"
#define HOPS_PAIRS "its second pair convolves the first pair's states: a target reads K - 1 hops per pair"
#define HOPS_ATTENTION "its aggregation is attention over W X_t, not the A^ X_t that hybrid batches and pss-ts serve"
#define HOPS_GCN_PAIRS "each pair's GCN reads the pair below's output: a target reads one hop of X_t per pair"
/* MODEL_VERTEX_CELL */
#define LANES_GRAPH "its gates convolve H over the graph: a vertex's step reads its neighbours' states, so vertices " \
                    "are not independent lanes"
#define LANES_EVOLVEGCN "its GRU evolves one weight matrix for the whole graph, not a sequence per vertex"
#define LANES_ATTENTION "its time encoder is self-attention over the window, not an LSTM cell: chapter 03's " \
                        "attention fusion masks it block-diagonally instead"
/* MODEL_STALE_PRODUCTS */
#define STALE_ATTENTION "its split exchanges X_t for the attention layer, outside the graph products y = P x whose " \
                        "rows DGC's stale aggregation decides and its serial simulation replays"
#define STALE_WALKS "its backward walk crosses ranks as partial sums given back through the in-edge halo (the " \
                    "transpose of an in-edge product), not as the operand rows DGC's stale aggregation decides and " \
                    "its serial simulation replays"

const model_info model_table[MODEL_COUNT] = {
    [MODEL_TGCN] = {.cost = cost_tgcn, .title = "T-GCN", .summary = "GCN on X_t in every GRU gate (PyG Temporal's TGCN)", .ops = &tgcn_ops,
                    .takes = MODEL_TAKES_HIDDEN, .graph_operator = OPERATOR_GCN, .inputs = MODEL_INPUTS_GCN,
                    .has = SERVED | ROWS | STALE | ONE_HOP | LANES, .lane_cell = TIME_ENCODER_TGCN, .peer = "TGCN"},
    [MODEL_GCONVGRU] = {.cost = cost_gconvgru, .title = "GConvGRU", .summary = "GRU with Chebyshev convolutions in its gates (GCRN)",
                        .ops = &gconvgru_ops, .takes = MODEL_TAKES_HIDDEN | MODEL_TAKES_K,
                        .graph_operator = OPERATOR_CHEBYSHEV, .inputs = MODEL_INPUTS_CHEBYSHEV, .has = SERVED | ROWS | STALE,
                        .lacks = {[MODEL_ONE_HOP] = HOPS_OF_H, [MODEL_VERTEX_CELL] = LANES_GRAPH}, .peer = "GConvGRU"},
    [MODEL_GCLSTM] = {.cost = cost_gclstm, .title = "GC-LSTM", .summary = "LSTM with a Chebyshev convolution of H", .ops = &gclstm_ops,
                      .takes = MODEL_TAKES_HIDDEN | MODEL_TAKES_K, .graph_operator = OPERATOR_CHEBYSHEV, .has = ROWS | STALE,
                      .lacks = {[MODEL_SERVED_INPUTS] = NOT_SERVED_GCLSTM, [MODEL_ONE_HOP] = HOPS_OF_H,
                                [MODEL_VERTEX_CELL] = LANES_GRAPH},
                      .peer = "GCLSTM"},
    [MODEL_EVOLVEGCN] = {.cost = cost_evolvegcn, .title = "EvolveGCN-O", .summary = "a GRU evolves the GCN weight", .ops = &evolvegcn_ops,
                         .graph_operator = OPERATOR_GCN, .has = ROWS | STALE,
                         .lacks = {[MODEL_SERVED_INPUTS] = NOT_SERVED_EVOLVEGCN, [MODEL_ONE_HOP] = HOPS_EVOLVEGCN,
                                   [MODEL_VERTEX_CELL] = LANES_EVOLVEGCN},
                         .peer = "EvolveGCNO"},
    [MODEL_TGCN2] = {.cost = cost_tgcn2, .title = "two-layer T-GCN", .summary = "the T-GCN paper's two-layer GCN in every GRU gate",
                     .ops = &tgcn2_ops, .takes = MODEL_TAKES_HIDDEN, .graph_operator = OPERATOR_GCN,
                     .inputs = MODEL_INPUTS_GCN, .has = SERVED | ROWS | STALE | LANES, .lane_cell = TIME_ENCODER_TGCN,
                     .lacks = {[MODEL_ONE_HOP] = HOPS_TWO}},
    [MODEL_WDGCN] = {.cost = cost_wdgcn, .title = "WD-GCN", .summary = "a GCN layer, then an LSTM per vertex (stacked)", .ops = &wdgcn_ops,
                     .takes = MODEL_TAKES_HIDDEN, .graph_operator = OPERATOR_GCN, .inputs = MODEL_INPUTS_GCN,
                     .has = SERVED | ROWS | STALE | ONE_HOP | LANES, .lane_cell = TIME_ENCODER_LSTM},
    [MODEL_GCONVLSTM] = {.cost = cost_gconvlstm, .title = "GConvLSTM", .summary = "LSTM with Chebyshev convolutions in its gates (GCRN-M2)",
                         .ops = &gconvlstm_ops, .takes = MODEL_TAKES_HIDDEN | MODEL_TAKES_K,
                         .graph_operator = OPERATOR_CHEBYSHEV, .inputs = MODEL_INPUTS_CHEBYSHEV, .has = SERVED | ROWS | STALE,
                         .lacks = {[MODEL_ONE_HOP] = HOPS_OF_H, [MODEL_VERTEX_CELL] = LANES_GRAPH},
                         .peer = "GConvLSTM"},
    [MODEL_MPNNLSTM] = {.cost = cost_mpnnlstm, .title = "MPNN-LSTM", .summary = "a two-layer GCN, then a two-layer LSTM per vertex (stacked)",
                        .ops = &mpnnlstm_ops, .takes = MODEL_TAKES_HIDDEN, .graph_operator = OPERATOR_GCN,
                        .inputs = MODEL_INPUTS_GCN, .has = SERVED | ROWS | STALE | LANES, .lacks = {[MODEL_ONE_HOP] = HOPS_TWO},
                        .lane_cell = TIME_ENCODER_LSTM, .peer = "MPNNLSTM", .state_width = two_blocks, .vertex_lstm = lstms_mpnnlstm},
    [MODEL_GCRNM1] = {.cost = cost_gcrnm1, .title = "GCRN-M1", .summary = "pairs of a Chebyshev convolution then an LSTM, stacked",
                      .ops = &gcrnm1_ops, .takes = MODEL_TAKES_HIDDEN | MODEL_TAKES_K | MODEL_TAKES_LAYERS,
                      .layers = 2, .graph_operator = OPERATOR_CHEBYSHEV, .inputs = MODEL_INPUTS_CHEBYSHEV,
                      .has = SERVED | ROWS | STALE | LANES, .lacks = {[MODEL_ONE_HOP] = HOPS_PAIRS},
                      .lane_cell = TIME_ENCODER_PEEPHOLE, .vertex_lstm = lstms_gcrnm1},
    [MODEL_DCRNN] = {.cost = cost_dcrnn, .title = "DCRNN", .summary = "GRU with diffusion convolutions on both random walks in its gates",
                     .ops = &dcrnn_ops, .takes = MODEL_TAKES_HIDDEN | MODEL_TAKES_K, .inputs = MODEL_INPUTS_DIFFUSION,
                     .graph_operator = OPERATOR_WALK_FORWARD, .has = SERVED | ROWS,
                     .lacks = {[MODEL_ONE_HOP] = HOPS_OF_H, [MODEL_VERTEX_CELL] = LANES_GRAPH},
                     .not_yet = {[MODEL_STALE_PRODUCTS] = STALE_WALKS}, .peer = "DCRNN"},
    [MODEL_CDGCN] = {.cost = cost_cdgcn, .title = "CD-GCN", .summary = "GCN then per-vertex LSTM pairs, concatenation skips (stacked)",
                     .ops = &cdgcn_ops, .takes = MODEL_TAKES_HIDDEN | MODEL_TAKES_LAYERS, .layers = 2,
                     .graph_operator = OPERATOR_GCN, .inputs = MODEL_INPUTS_GCN, .has = SERVED | ROWS | STALE | LANES,
                     .lane_cell = TIME_ENCODER_LSTM, .lacks = {[MODEL_ONE_HOP] = HOPS_GCN_PAIRS},
                     .state_width = input_and_two_blocks_per_pair, .vertex_lstm = lstms_cdgcn},
    [MODEL_GATLSTM] = {.cost = cost_gatlstm, .title = "GAT-LSTM", .summary = "a graph attention layer (2 heads), then an LSTM per vertex (stacked)",
                       .ops = &gatlstm_ops, .takes = MODEL_TAKES_HIDDEN, .has = ROWS | LANES, .lane_cell = TIME_ENCODER_LSTM,
                       .lacks = {[MODEL_SERVED_INPUTS] = NOT_SERVED_ATTENTION, [MODEL_ONE_HOP] = HOPS_ATTENTION},
                       .not_yet = {[MODEL_STALE_PRODUCTS] = STALE_ATTENTION}},
    [MODEL_DYSAT] = {.cost = cost_dysat, .title = "DySAT", .summary = "graph attention per snapshot, then causal self-attention over time",
                     .ops = &dysat_ops, .takes = MODEL_TAKES_HIDDEN, .has = ROWS,
                     .lacks = {[MODEL_SERVED_INPUTS] = NOT_SERVED_DYSAT, [MODEL_ONE_HOP] = HOPS_ATTENTION,
                               [MODEL_VERTEX_CELL] = LANES_ATTENTION},
                     .not_yet = {[MODEL_STALE_PRODUCTS] = STALE_ATTENTION}},
};

const model_info *model_info_of(model_kind kind) { return &model_table[kind]; }

const char *model_lacks(model_kind kind, model_property property, int *applies)
{
    const model_info *info = &model_table[kind];
    if (applies)
        *applies = !(info->has & 1u << property) && !info->lacks[property] && info->not_yet[property];
    if (info->has & 1u << property)
        return NULL;
    return info->lacks[property]     ? info->lacks[property]
           : info->not_yet[property] ? info->not_yet[property]
                                     : "the model table records neither this property nor why it lacks it";
}

int model_has(model_kind kind, model_property property) { return !model_lacks(kind, property, NULL); }

const char *model_kind_name(model_kind kind)
{
    return kind >= 0 && kind < MODEL_COUNT ? model_names[kind] : "unknown";
}

const char *train_task_name(int64_t task)
{
    static const char *const names[] = {"regression", "link", "classify"};
    return task >= 0 && task < (int64_t)(sizeof names / sizeof *names) ? names[task] : "unknown";
}

int model_kind_parse(const char *name, model_kind *kind, tf_error *err)
{
    char known[256] = "";
    for (int k = 0; k < MODEL_COUNT; k++) {
        if (strcmp(model_names[k], name) == 0) {
            *kind = (model_kind)k;
            return TF_OK;
        }
        snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", k ? ", " : "", model_names[k]);
    }
    return tf_error_set(err, TF_ERR_INPUT, "model \"%s\" is not one of %s", name, known);
}

int64_t model_state_width(const model *m)
{
    const model_info *info = &model_table[m->config.kind];
    if (!(info->takes & MODEL_TAKES_HIDDEN))
        return m->config.in_features;
    return info->state_width ? info->state_width(&m->config) : m->config.hidden;
}

/* Operator `kind` of snapshot t: from the model's source, or built from the snapshot's graph. */
static int model_operator(const model *m, propagation *p, const snapshot_seq *seq, int64_t t, operator_kind kind,
                          tf_error *err)
{
    const csr *g = &seq->snapshots[t].graph;
    int status = m->operators                ? m->operators->build(m->operators->context, t, kind, p, err)
                 : kind == OPERATOR_CHEBYSHEV ? ref_propagation_chebyshev(p, g, err)
                                              : ref_propagation_gcn(p, g, EDGE_NORM_SYMMETRIC, 1, err);
    if (status != TF_OK)
        return status;
    return m->kernels->prepare_propagation ? m->kernels->prepare_propagation(p, err) : TF_OK;
}

int model_gcn_operator(const model *m, propagation *p, const snapshot_seq *seq, int64_t t, tf_error *err)
{
    return model_operator(m, p, seq, t, OPERATOR_GCN, err);
}

int model_chebyshev_operator(const model *m, propagation *p, const snapshot_seq *seq, int64_t t, tf_error *err)
{
    return model_operator(m, p, seq, t, OPERATOR_CHEBYSHEV, err);
}

int model_attention_graph(const model *m, propagation *p, const snapshot_seq *seq, int64_t t, tf_error *err)
{
    if (m->operators) /* a part's operator: its coefficients ride along unread */
        return model_operator(m, p, seq, t, model_table[m->config.kind].graph_operator, err);
    memset(p, 0, sizeof *p);
    p->graph = &seq->snapshots[t].graph;
    return m->kernels->prepare_propagation ? m->kernels->prepare_propagation(p, err) : TF_OK;
}

int model_chebyshev_inputs(const model *m, const propagation *p, const snapshot_seq *seq, int64_t t, float *basis,
                           tf_error *err)
{
    const int64_t size = seq->num_nodes * seq->feature_width;
    const int k = m->config.chebyshev_k;
    if (!m->inputs) {
        chebyshev_basis_forward(m->kernels, p, seq->snapshots[t].features.data, seq->feature_width, k, basis);
        return TF_OK;
    }
    memcpy(basis, seq->snapshots[t].features.data, (size_t)size * sizeof(float)); /* T_0 = X_t */
    return k > 1 ? m->inputs->get(m->inputs->context, t, basis + size, err) : TF_OK;
}

/* The head's parameters are the last two: linear.weight [out][width], linear.bias [out]. */
static parameter *head_weight(const model *m) { return &m->parameters.items[m->parameters.count - 2]; }
static parameter *head_bias(const model *m) { return &m->parameters.items[m->parameters.count - 1]; }

int model_create(model *m, const model_config *config, uint64_t seed, tf_error *err)
{
    memset(m, 0, sizeof *m);
    m->config = *config;
    m->kernels = &ref_kernels;
    if (config->kind < 0 || config->kind >= MODEL_COUNT)
        return tf_error_set(err, TF_ERR_INPUT, "unknown model kind %d", (int)config->kind);
    const model_info *info = &model_table[config->kind];
    m->ops = info->ops;
    if (config->in_features < 1 || config->out_features < 1 || ((info->takes & MODEL_TAKES_HIDDEN) && config->hidden < 1))
        return tf_error_set(err, TF_ERR_INPUT, "model %s: features %lld, hidden %lld, outputs %lld; expected >= 1",
                            model_kind_name(config->kind), (long long)config->in_features, (long long)config->hidden,
                            (long long)config->out_features);
    if ((info->takes & MODEL_TAKES_K) && (config->chebyshev_k < 1 || config->chebyshev_k > 16))
        return tf_error_set(err, TF_ERR_INPUT, "model %s: Chebyshev order K = %d, expected 1..16",
                            model_kind_name(config->kind), config->chebyshev_k);
    if (info->takes & MODEL_TAKES_LAYERS) {
        if (m->config.layers == 0)
            m->config.layers = info->layers;
        if (m->config.layers < 1 || m->config.layers > 16)
            return tf_error_set(err, TF_ERR_INPUT, "model %s: %d layers, expected 1..16", model_kind_name(config->kind),
                                m->config.layers);
    }
    if (!(m->scratch = tf_alloc(1, sizeof *m->scratch, "model workspace", err)))
        return TF_ERR_INPUT;
    workspace_init(m->scratch);
    rng r;
    rng_seed(&r, seed);
    int64_t width = model_state_width(m);
    int64_t weight_shape[2] = {config->out_features, width}, bias_shape[1] = {config->out_features};
    int status = m->ops->create(m, &r, err);
    if (status == TF_OK && (parameters_add(&m->parameters, "linear.weight", 2, weight_shape, err) < 0 ||
                            parameters_add(&m->parameters, "linear.bias", 1, bias_shape, err) < 0))
        status = TF_ERR_INPUT;
    if (status != TF_OK) {
        model_free(m);
        return status;
    }
    /* torch.nn.Linear's default: uniform(+-1/sqrt(fan_in)) for weight and bias. */
    parameter_init_uniform(head_weight(m), 1.0 / sqrt((double)width), &r);
    parameter_init_uniform(head_bias(m), 1.0 / sqrt((double)width), &r);
    return TF_OK;
}

void model_lstm_carry(const float *dstates_t, int64_t t, int64_t count, int64_t nh, float *dstate, float *dcell,
                      float *dprevious, float *dprevious_cell)
{
    const int last = t + 1 == count;
    for (int64_t i = 0; i < nh; i++) {
        dstate[i] = dstates_t[i] + (last ? 0.0f : dprevious[i]);
        dcell[i] = last ? 0.0f : dprevious_cell[i];
    }
    memset(dprevious, 0, (size_t)nh * sizeof(float));
    memset(dprevious_cell, 0, (size_t)nh * sizeof(float));
}

void model_lstm_forward_step(const model *m, const parameter *lstm, const float *input, const float *previous,
                             const float *previous_cell, int64_t n, int64_t h, float *preactivation, float *cell,
                             float *state, float *gates)
{
    const kernels *k = m->kernels;
    k->linear_forward(input, lstm[0].value.data, lstm[2].value.data, n, h, 4 * h, preactivation);
    k->linear_accumulate(previous, lstm[1].value.data, n, h, 4 * h, preactivation);
    k->add_bias(preactivation, lstm[3].value.data, n, 4 * h);
    k->lstm_pointwise_forward(preactivation, previous_cell, n, h, cell, state, gates);
}

void model_lstm_backward_step(const model *m, parameter *lstm, const float *input, const float *previous,
                              const float *previous_cell, const float *gates, const float *cell, const float *dstate,
                              const float *dcell, int64_t n, int64_t h, float *dpreactivation, float *dinput,
                              float *dprevious, float *dprevious_cell)
{
    const kernels *k = m->kernels;
    k->lstm_pointwise_backward(gates, previous_cell, cell, dstate, dcell, n, h, dpreactivation, dprevious_cell);
    k->linear_backward(input, lstm[0].value.data, dpreactivation, n, h, 4 * h, dinput, lstm[0].grad.data,
                       lstm[2].grad.data);
    k->linear_backward(previous, lstm[1].value.data, dpreactivation, n, h, 4 * h, dprevious, lstm[1].grad.data,
                       lstm[3].grad.data);
}

void model_free(model *m)
{
    parameters_free(&m->parameters);
    if (m->scratch)
        workspace_free(m->scratch);
    free(m->scratch);
    memset(m, 0, sizeof *m);
}

int model_forward(const model *m, const snapshot_seq *seq, int64_t first, int64_t count, window_tape *tape,
                  float *predictions, tf_error *err)
{
    memset(tape, 0, sizeof *tape);
    if (first < 0 || count < 1 || first + count > seq->num_snapshots)
        return tf_error_set(err, TF_ERR_INPUT, "window of %lld snapshots from %lld is outside 0..%lld",
                            (long long)count, (long long)first, (long long)seq->num_snapshots - 1);
    /* the head gives the targets' columns, or one logit per class (ref/models/classify_task.h) */
    if (seq->feature_width != m->config.in_features ||
        (seq->target_width != m->config.out_features && seq->num_classes != m->config.out_features))
        return tf_error_set(err, TF_ERR_INPUT, "model expects %lld features and %lld targets, the data has %lld and %lld",
                            (long long)m->config.in_features, (long long)m->config.out_features,
                            (long long)seq->feature_width, (long long)seq->target_width);
    const int64_t n = seq->num_nodes, width = model_state_width(m), out = m->config.out_features;
    tape->first = first;
    tape->count = count;
    tape->states = model_scratch(m, (size_t)(count * n * width), sizeof(float), "hidden states", err);
    tape->activated = tape->states ? model_scratch(m, (size_t)(count * n * width), sizeof(float), "hidden states", err)
                                   : NULL;
    /* Zeroed, so that window_tape_free() can free every record's operator, even after a failure. */
    tape->steps = tape->activated ? model_scratch_zeroed(m, (size_t)count, m->ops->step_size, "the cell's tape", err)
                                  : NULL;
    if (!tape->steps || m->ops->forward(m, seq, tape, err) != TF_OK) {
        window_tape_free(m, tape);
        return TF_ERR_INPUT;
    }
    /* The head of PyTorch Geometric Temporal's examples: y^ = Linear(ReLU(H)). */
    m->kernels->relu_forward(tape->states, count * n * width, tape->activated);
    m->kernels->linear_forward(tape->activated, head_weight(m)->value.data, head_bias(m)->value.data, count * n, width,
                               out, predictions);
    if (m->kernels->take_error && m->kernels->take_error(err) != TF_OK) {
        window_tape_free(m, tape);
        return err->code;
    }
    return TF_OK;
}

int model_backward(model *m, const snapshot_seq *seq, const window_tape *tape, const float *dpredictions,
                   tf_error *err)
{
    const int64_t n = seq->num_nodes, width = model_state_width(m), out = m->config.out_features;
    const int64_t size = tape->count * n * width;
    float *dactivated = model_scratch_zeroed(m, (size_t)size, sizeof *dactivated, "head gradients", err);
    float *dstates = dactivated ? model_scratch_zeroed(m, (size_t)size, sizeof *dstates, "state gradients", err) : NULL;
    int status = dstates ? TF_OK : TF_ERR_INPUT;
    if (status == TF_OK) {
        m->kernels->linear_backward(tape->activated, head_weight(m)->value.data, dpredictions, tape->count * n, width, out,
                            dactivated, head_weight(m)->grad.data, head_bias(m)->grad.data);
        m->kernels->relu_backward(tape->activated, dactivated, size, dstates);
        status = model_backward_states(m, seq, tape, dstates, err);
    }
    return status;
}

int model_backward_states(model *m, const snapshot_seq *seq, const window_tape *tape, const float *dstates,
                          tf_error *err)
{
    int status = m->ops->backward(m, seq, tape, dstates, err);
    if (status == TF_OK && m->kernels->take_error)
        status = m->kernels->take_error(err);
    return status;
}

void window_tape_free(const model *m, window_tape *tape)
{
    /* Each step record begins with its snapshot's operators (model_ops::step_size, model_ops::operators). */
    for (int64_t t = 0; tape->steps && t < tape->count; t++)
        for (int o = 0; o < m->ops->operators; o++)
            ref_propagation_free((propagation *)((char *)tape->steps + (size_t)t * m->ops->step_size) + o);
    workspace_reset(m->scratch); /* the tape's buffers and the window's scratch */
    memset(tape, 0, sizeof *tape);
}

void *model_scratch(const model *m, size_t count, size_t size, const char *what, tf_error *err)
{
    return workspace_alloc(m->scratch, count, size, what, err);
}

void *model_scratch_zeroed(const model *m, size_t count, size_t size, const char *what, tf_error *err)
{
    return workspace_zeroed(m->scratch, count, size, what, err);
}

double model_window_loss_of(const model *m, const snapshot_seq *seq, int64_t first, int64_t count,
                            const float *predictions, float scale, float *dpredictions)
{
    const int64_t n = seq->num_nodes, out = seq->target_width;
    double total = 0;
    for (int64_t t = 0; t < count; t++) {
        const snapshot *s = &seq->snapshots[first + t];
        total += m->kernels->mse_loss(predictions + t * n * out, s->targets.data, s->present, n, out,
                                      scale / (float)count, dpredictions ? dpredictions + t * n * out : NULL);
    }
    return total / (double)count;
}

int model_window_gradient_over(model *m, const snapshot_seq *seq, int64_t first, int64_t count,
                               const int32_t *vertices, int64_t num_chosen, float scale, double *loss,
                               tf_error *err)
{
    const int64_t n = seq->num_nodes, out = seq->target_width, size = count * n * out;
    float *predictions = tf_alloc((size_t)size + 1, sizeof(float), "window predictions", err);
    float *dpredictions = predictions ? tf_alloc((size_t)size + 1, sizeof(float), "window predictions", err) : NULL;
    uint8_t *mask = dpredictions ? tf_alloc((size_t)n + 1, 1, "target mask", err) : NULL; /* [n] */
    if (!mask) {
        free(predictions);
        free(dpredictions);
        return TF_ERR_INPUT;
    }
    window_tape tape;
    memset(&tape, 0, sizeof tape);
    int status = model_forward(m, seq, first, count, &tape, predictions, err);
    if (status == TF_OK) {
        double total = 0;
        for (int64_t t = 0; t < count; t++) {
            const snapshot *s = &seq->snapshots[first + t];
            memset(mask, 0, (size_t)n);
            for (int64_t i = 0; i < num_chosen; i++) {
                const int64_t v = vertices ? vertices[i] : i;
                mask[v] = s->present[v];
            }
            total += m->kernels->mse_loss(predictions + t * n * out, s->targets.data, mask, n, out,
                                          scale / (float)count, dpredictions + t * n * out);
        }
        *loss = total / (double)count;
        status = model_backward(m, seq, &tape, dpredictions, err);
    }
    window_tape_free(m, &tape);
    free(predictions);
    free(dpredictions);
    free(mask);
    return status;
}

double model_window_loss(const snapshot_seq *seq, int64_t first, int64_t count, const float *predictions,
                         float scale, float *dpredictions)
{
    model reference; /* only its kernels are read */
    memset(&reference, 0, sizeof reference);
    reference.kernels = &ref_kernels;
    return model_window_loss_of(&reference, seq, first, count, predictions, scale, dpredictions);
}
