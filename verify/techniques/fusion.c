/* The technique table's entries of chapter 03, DGC's temporal and spatial fusion
 * (chapters/03-fusion.md).
 *
 * Temporal fusion (technique_fusion_temporal): one forward and one backward of a random time
 * encoder (input 16, hidden 16 unless a benchmark asks otherwise; weights, inputs and output
 * gradients seeded) over every sequence of a set: the per-sequence reference
 * (ref_fusion_forward/backward) against two twins, the zero-padded batch and DGC's fused lanes
 * (opt_fusion_forward/backward on each plan). The sequences are the vertices' activity runs of a
 * snapshot sequence (sequence_set_from_snapshots) or, for an event stream, of its events grouped
 * into 64 snapshots. Equal means fp (1e-5 relative, CPU) over the outputs h, the input gradients
 * and the four parameter gradients; the twins add the reference's float terms in its order, so h
 * and dx come out bitwise in practice (verify/test_fusion.c asserts that). Work = the useful
 * steps (the set's total length): padding computes more than that, fused lanes exactly that.
 *
 * Spatial fusion (technique_fusion_spatial): 16 contiguous chunks, grouped by the paper's rule
 * under a cap of 0.6 of the whole graph's feature bytes. The reference loads every chunk alone
 * (ref_fusion_load_chunk); the twin loads each group's union once (opt_fusion_load_group).
 * Equal means bitwise: every chunk's rows out of its group's load have the bits of its own load
 * (a merged group over the cap counts as a wrong value too). Work = the bytes the twin loads.
 *
 * The sweeps of bench/fusion.c run both with their own parameters (verify/techniques/fusion.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/dataset.h"
#include "opt/fusion.h"
#include "ref/core/memory.h"
#include "ref/core/rng.h"
#include "ref/fusion.h"
#include "ref/nn/compare.h"
#include "verify/techniques/fusion.h"

/* ---- temporal fusion ------------------------------------------------------------------------ */

/* One variant per cell, in the order of time_encoder_kind. */
static const char *const cell_variants[] = {"GRU", "LSTM", "T-GCN GRU", "peephole LSTM", NULL};
/* Run on a model, the lanes need its recurrence to be a cell per vertex (#model_info::lane_cell). */
#define LANES (1u << MODEL_VERTEX_CELL)
static const unsigned cell_needs[] = {LANES, LANES, LANES, LANES};

/* Outputs, input gradients and the four parameter gradients of one run of one layer. */
typedef struct run_buffers {
    float *h;            /* [total_steps][hidden] */
    float *dx;           /* [total_steps][in] */
    float *gradient[TIME_ENCODER_TENSORS];  /* as time_encoder_sizes() lists them (NULL: none) */
} run_buffers;

/* The most LSTMs a model stacks per vertex (--layers' bound). */
enum { MAX_LANE_LAYERS = 16 };

/* One recurrent layer: a model's stacked LSTMs run one after the other, layer l's sequence reading
 * the one below's outputs in its columns [below, below + H) (#model_info::vertex_lstm). */
typedef struct lane_layer {
    time_encoder encoder;      /* its weights point into `weights` */
    float *weights[TIME_ENCODER_TENSORS]; /* same shapes as run_buffers::gradient */
    int64_t sizes[TIME_ENCODER_TENSORS];  /* their lengths (0: the cell has no such tensor) */
    int64_t below;             /* the column of x where the layer below's h goes; -1: none */
    float *x;                  /* [total_steps][in] inputs (the `below` columns rewritten by each run) */
    float *dh_out;             /* [total_steps][hidden] the gradient of the layer's own outputs (the head's) */
    float *dh;                 /* [total_steps][hidden] scratch: dh_out + what the layer above sends back */
    run_buffers ref, twin;     /* the reference's answer; the last twin run's */
} lane_layer;

typedef struct temporal_state {
    sequence_set own;          /* the dataset's sequences (when no set was given) */
    const sequence_set *set;   /* the sequences run */
    lane_layer layer[MAX_LANE_LAYERS];
    int layers;                /* 1, or a stacked model's LSTMs */
    fusion_plan plan[2];       /* twin 0: padded, twin 1: fused lanes */
    technique_twin twins[2];
} temporal_state;

static void buffers_free(run_buffers *b)
{
    free(b->h), free(b->dx);
    for (int k = 0; k < TIME_ENCODER_TENSORS; k++)
        free(b->gradient[k]);
}

static int buffers_alloc(run_buffers *b, const lane_layer *l, int64_t total, tf_error *err)
{
    if (!(b->h = tf_alloc((size_t)(total * l->encoder.hidden), sizeof(float), "fusion outputs", err)) ||
        !(b->dx = tf_alloc((size_t)(total * l->encoder.in), sizeof(float), "fusion input gradients", err)))
        return err->code;
    for (int k = 0; k < TIME_ENCODER_TENSORS; k++)
        if (l->sizes[k] &&
            !(b->gradient[k] = tf_alloc((size_t)l->sizes[k], sizeof(float), "fusion parameter gradients", err)))
            return err->code;
    return TF_OK;
}

/* Backward adds into dx and the gradients: zero them before every run. */
static time_encoder_gradients zeroed_gradients(run_buffers *b, const lane_layer *l, int64_t total)
{
    memset(b->dx, 0, (size_t)(total * l->encoder.in) * sizeof(float));
    for (int k = 0; k < TIME_ENCODER_TENSORS; k++)
        if (l->sizes[k])
            memset(b->gradient[k], 0, (size_t)l->sizes[k] * sizeof(float));
    return (time_encoder_gradients){b->gradient[0], b->gradient[1], b->gradient[2], b->gradient[3],
                                    {b->gradient[4], b->gradient[5], b->gradient[6]}};
}

/* Uniform in [-a, a) for n values. */
static void fill_uniform(rng *r, float *values, int64_t n, double a)
{
    for (int64_t i = 0; i < n; i++)
        values[i] = (float)((2.0 * rng_uniform(r) - 1.0) * a);
}

/* The layers' input widths: a model's stacked LSTMs (#model_info::vertex_lstm), or one cell reading
 * its graph layer's H-wide output (T-GCN's: three of them, one per gate), or 16 (T-GCN's: 3 x 16)
 * without a model. */
static int lane_widths(const technique_context *context, const dataset *data, time_encoder_kind kind, int64_t hidden,
                       int64_t *in, int64_t *below, tf_error *err)
{
    below[0] = -1;
    in[0] = (context->model ? hidden : 16) * (kind == TIME_ENCODER_TGCN ? 3 : 1);
    const model_info *info = context->model ? model_info_of(*context->model) : NULL;
    if (!info || !info->vertex_lstm)
        return 1;
    const model_config config = {*context->model, data->kind == DATASET_SNAPSHOTS ? data->snapshots.feature_width : 1,
                                 hidden, 1, 2, 0};
    int layers = 0;
    while (layers < MAX_LANE_LAYERS && (in[layers] = info->vertex_lstm(&config, layers, &below[layers])) > 0)
        layers++;
    return layers > 0 ? layers : tf_error_set(err, TF_ERR_INPUT, "%s stacks no LSTM", model_kind_name(*context->model));
}

/* Layer @p l's weights, inputs and output gradients, seeded by @p r; its buffers. */
static int lane_layer_setup(lane_layer *l, time_encoder_kind kind, int64_t in, int64_t below, int64_t hidden,
                            int64_t total, rng *r, tf_error *err)
{
    l->encoder = (time_encoder){.kind = kind, .in = in, .hidden = hidden};
    time_encoder_sizes(&l->encoder, l->sizes);
    l->below = below;
    for (int k = 0; k < TIME_ENCODER_TENSORS; k++) {
        if (!l->sizes[k])
            continue;
        if (!(l->weights[k] = tf_alloc((size_t)l->sizes[k], sizeof(float), "time encoder weights", err)))
            return err->code;
        fill_uniform(r, l->weights[k], l->sizes[k], 2.0 / sqrt((double)hidden)); /* torch's range, doubled */
    }
    l->encoder = (time_encoder){kind, in, hidden, l->weights[0], l->weights[1], l->weights[2], l->weights[3],
                                {l->weights[4], l->weights[5], l->weights[6]}};
    if (!(l->x = tf_alloc((size_t)(total * in), sizeof(float), "fusion inputs", err)) ||
        !(l->dh_out = tf_alloc((size_t)(total * hidden), sizeof(float), "fusion output gradients", err)) ||
        !(l->dh = tf_alloc((size_t)(total * hidden), sizeof(float), "fusion output gradients", err)))
        return err->code;
    fill_uniform(r, l->x, total * in, 1.0);
    fill_uniform(r, l->dh_out, total * hidden, 1.0);
    if (buffers_alloc(&l->ref, l, total, err) != TF_OK || buffers_alloc(&l->twin, l, total, err) != TF_OK)
        return err->code;
    return TF_OK;
}

/* The sequences: the given set, or the dataset's vertex activity runs (events: in 64 snapshots). */
static int temporal_sequences(temporal_state *s, const temporal_params *params, const dataset *data, tf_error *err)
{
    if (params && params->set) {
        s->set = params->set;
        return TF_OK;
    }
    /* A snapshot vertex's sequence runs while it has an edge: edge-less data has none to encode. */
    int64_t edges = 0;
    for (int64_t t = 0; data->kind == DATASET_SNAPSHOTS && t < data->snapshots.num_snapshots; t++)
        edges += data->snapshots.snapshots[t].graph.row_ptr[data->snapshots.num_nodes];
    if (data->kind == DATASET_SNAPSHOTS && edges == 0)
        return tf_error_set(err, TECHNIQUE_SKIP, "needs edges (a vertex's sequence runs while it has one); %s has "
                            "none in any snapshot", data->name);
    int status = data->kind == DATASET_SNAPSHOTS ? sequence_set_from_snapshots(&data->snapshots, 1, &s->own, err)
                                                 : sequence_set_from_events(&data->events, 64, &s->own, err);
    if (status != TF_OK)
        return status;
    s->set = &s->own;
    return TF_OK;
}

static int temporal_setup(const technique_context *context, const dataset *data, int variant, void **state,
                          int *twins, tf_error *err)
{
    const temporal_params *params = context->params;
    temporal_state *s = tf_alloc(1, sizeof *s, "fusion technique", err);
    if (!(*state = s))
        return err->code;
    /* A model of the table (the matrix): the lanes run its vertex recurrence, the cell its table line
     * names (#model_info::lane_cell), reading its graph layer's output, or its stack of them. */
    if (context->model && variant != (int)model_info_of(*context->model)->lane_cell)
        return tf_error_set(err, TECHNIQUE_SKIP, "its vertex recurrence is the %s cell: the other cells' lanes have none "
                            "of it to run", cell_variants[model_info_of(*context->model)->lane_cell]);
    if (temporal_sequences(s, params, data, err) != TF_OK)
        return err->code;
    if (s->set->count == 0)
        return tf_error_set(err, TECHNIQUE_SKIP, "no vertex is ever active: no sequence to encode");
    const int64_t hidden = params && params->hidden ? params->hidden : 16, total = s->set->total_steps;
    int64_t in[MAX_LANE_LAYERS], below[MAX_LANE_LAYERS];
    if ((s->layers = lane_widths(context, data, (time_encoder_kind)variant, hidden, in, below, err)) < 1)
        return err->code;
    rng r;
    rng_seed(&r, 7);
    for (int l = 0; l < s->layers; l++)
        if (lane_layer_setup(&s->layer[l], (time_encoder_kind)variant, in[l], below[l], hidden, total, &r, err) != TF_OK)
            return err->code;
    if (opt_fusion_plan_padded(s->set, &s->plan[0], err) != TF_OK ||
        opt_fusion_plan_lanes(s->set, &s->plan[1], err) != TF_OK)
        return err->code;
    s->twins[0] = (technique_twin){"padded", TECHNIQUE_FP, TECHNIQUE_CPU_TOLERANCE};
    s->twins[1] = (technique_twin){"fused lanes", TECHNIQUE_FP, TECHNIQUE_CPU_TOLERANCE};
    *twins = 2;
    return TF_OK;
}

static const technique_twin *temporal_twin(const void *state, int index)
{
    return &((const temporal_state *)state)->twins[index];
}

static int64_t one_step(const void *state)
{
    (void)state;
    return 1;
}

/* Layer l's input: the layer below's outputs (this run's: @p twin's, or the reference's when
 * @p twin is -1) copied into its `below` columns. */
static void lane_input(temporal_state *s, int l, int twin)
{
    lane_layer *layer = &s->layer[l];
    if (layer->below < 0)
        return;
    const lane_layer *under = &s->layer[l - 1];
    const float *h = twin < 0 ? under->ref.h : under->twin.h;
    for (int64_t i = 0; i < s->set->total_steps; i++)
        memcpy(layer->x + i * layer->encoder.in + layer->below, h + i * under->encoder.hidden,
               (size_t)under->encoder.hidden * sizeof(float));
}

/* Layer l's output gradient: its own plus, from the layer above, the `below` columns of its dx. */
static const float *lane_output_gradient(temporal_state *s, int l, int twin)
{
    lane_layer *layer = &s->layer[l];
    if (l + 1 == s->layers || s->layer[l + 1].below < 0) /* GCRN-M1: a graph convolution in between */
        return layer->dh_out;
    const lane_layer *above = &s->layer[l + 1];
    const float *dx = twin < 0 ? above->ref.dx : above->twin.dx;
    const int64_t hidden = layer->encoder.hidden;
    for (int64_t i = 0; i < s->set->total_steps * hidden; i++)
        layer->dh[i] = layer->dh_out[i] + dx[(i / hidden) * above->encoder.in + above->below + i % hidden];
    return layer->dh;
}

/* Forward up the layers, then backward down them: on the reference (@p twin -1) or a twin's plan. */
static int temporal_run(temporal_state *s, int twin, tf_error *err)
{
    fusion_tape tapes[MAX_LANE_LAYERS];
    memset(tapes, 0, sizeof tapes);
    int status = TF_OK;
    for (int l = 0; status == TF_OK && l < s->layers; l++) {
        lane_layer *layer = &s->layer[l];
        lane_input(s, l, twin);
        status = twin < 0 ? ref_fusion_forward(&layer->encoder, s->set, layer->x, layer->ref.h, err)
                          : opt_fusion_forward(&layer->encoder, s->set, &s->plan[twin], layer->x, layer->twin.h,
                                               &tapes[l], err);
    }
    for (int l = s->layers - 1; status == TF_OK && l >= 0; l--) {
        lane_layer *layer = &s->layer[l];
        run_buffers *b = twin < 0 ? &layer->ref : &layer->twin;
        time_encoder_gradients g = zeroed_gradients(b, layer, s->set->total_steps);
        const float *dh = lane_output_gradient(s, l, twin);
        status = twin < 0 ? ref_fusion_backward(&layer->encoder, s->set, layer->x, dh, b->dx, &g, err)
                          : opt_fusion_backward(&layer->encoder, s->set, &s->plan[twin], &tapes[l], dh, b->dx, &g, err);
    }
    for (int l = 0; l < s->layers; l++)
        fusion_tape_free(&tapes[l]);
    return status;
}

static int temporal_run_ref(void *state, int64_t step, tf_error *err)
{
    (void)step;
    return temporal_run(state, -1, err);
}

static int temporal_run_twin(void *state, int twin, int64_t step, tf_error *err)
{
    (void)step;
    return temporal_run(state, twin, err);
}

static double temporal_compare(void *state, int twin, int64_t step)
{
    (void)twin, (void)step;
    const temporal_state *s = state;
    const int64_t total = s->set->total_steps;
    double worst = 0;
    for (int l = 0; l < s->layers; l++) {
        const lane_layer *layer = &s->layer[l];
        worst = fmax(worst, fmax(relative_error(layer->twin.h, layer->ref.h, total * layer->encoder.hidden),
                                 relative_error(layer->twin.dx, layer->ref.dx, total * layer->encoder.in)));
        for (int k = 0; k < TIME_ENCODER_TENSORS; k++)
            if (layer->sizes[k])
                worst = fmax(worst, relative_error(layer->twin.gradient[k], layer->ref.gradient[k], layer->sizes[k]));
    }
    return worst;
}

static void temporal_corrupt(void *state, int twin)
{
    (void)twin;
    temporal_state *s = state;
    s->layer[s->layers - 1].twin.h[0] = technique_spoiled(s->layer[s->layers - 1].twin.h[0]);
}

/* Every run starts from the same inputs and zeroed gradients: nothing to reset. */
static int nothing_to_restart(void *state, int twin, tf_error *err)
{
    (void)state, (void)twin, (void)err;
    return TF_OK;
}

/* Work of a run: the useful steps of every layer, forward and backward. */
static double temporal_work(const void *state, const char **unit)
{
    const temporal_state *s = state;
    *unit = "sequence steps";
    return (double)(s->set->total_steps * s->layers);
}

static void temporal_describe(const void *state, const double *seconds, char *text, size_t size)
{
    const temporal_state *s = state;
    const double padded = fusion_plan_computed_per_useful(&s->plan[0]), fused = fusion_plan_computed_per_useful(&s->plan[1]);
    if (seconds[0] > 0)
        snprintf(text, size, "fused %.1fx faster than padded, %.1fx than ref; computed/useful steps %.2f fused, %.2f padded",
                 seconds[1] / seconds[2], seconds[0] / seconds[2], fused, padded);
    else
        snprintf(text, size, "computed/useful steps %.2f fused, %.2f padded", fused, padded);
}

static void temporal_teardown(void *state)
{
    temporal_state *s = state;
    if (!s)
        return;
    sequence_set_free(&s->own);
    for (int l = 0; l < MAX_LANE_LAYERS; l++) {
        lane_layer *layer = &s->layer[l];
        for (int k = 0; k < TIME_ENCODER_TENSORS; k++)
            free(layer->weights[k]);
        free(layer->x), free(layer->dh_out), free(layer->dh);
        buffers_free(&layer->ref);
        buffers_free(&layer->twin);
    }
    fusion_plan_free(&s->plan[0]);
    fusion_plan_free(&s->plan[1]);
    free(s);
}

const fusion_plan *fusion_temporal_plans(const void *state)
{
    return ((const temporal_state *)state)->plan;
}

int fusion_temporal_stack(const void *state, double *sent_back)
{
    const temporal_state *s = state;
    *sent_back = 0;
    for (int l = 0; l + 1 < s->layers && s->layer[l + 1].below >= 0; l++) /* dh = dh_out + what the layer above sent */
        for (int64_t i = 0; i < s->set->total_steps * s->layer[l].encoder.hidden; i++)
            *sent_back = fmax(*sent_back, fabs((double)s->layer[l].dh[i] - (double)s->layer[l].dh_out[i]));
    return s->layers;
}

static const technique_case temporal_demo[] = {
    {TIME_ENCODER_GRU, "twitter_tennis", "twitter_tennis lifetimes"},
    {0, NULL, NULL},
};

const technique technique_fusion_temporal = {
    .name = "fusion_temporal",
    .stem = "fusion",
    .chapter = "03",
    .title = "temporal fusion (DGC)",
    .needs = "any dataset (vertex activity runs)",
    .variants = cell_variants,
    .demo = temporal_demo,
    .models = TECHNIQUE_ON_MODEL,
    .model_needs = cell_needs,
    .setup = temporal_setup,
    .twin = temporal_twin,
    .steps = one_step,
    .run_ref = temporal_run_ref,
    .run_twin = temporal_run_twin,
    .compare = temporal_compare,
    .corrupt = temporal_corrupt,
    .restart = nothing_to_restart,
    .work = temporal_work,
    .describe = temporal_describe,
    .teardown = temporal_teardown,
};

/* ---- spatial fusion ------------------------------------------------------------------------- */

static const char *const one_variant[] = {"", NULL};

typedef struct spatial_state {
    const snapshot_seq *seq;   /* borrowed */
    chunk_set chunks;
    fusion_groups groups;
    int64_t cap_bytes;
    chunk_load *alone;         /* [chunks.count] the reference: each chunk's own load */
    chunk_load *fused;         /* [groups.count] the twin: each group's load */
    technique_twin twins[1];
} spatial_state;

static int spatial_setup(const technique_context *context, const dataset *data, int variant, void **state,
                         int *twins, tf_error *err)
{
    (void)variant;
    if (data->kind != DATASET_SNAPSHOTS)
        return tf_error_set(err, TECHNIQUE_SKIP, "needs a snapshot sequence; %s is an event stream", data->name);
    const spatial_params *params = context->params;
    spatial_state *s = tf_alloc(1, sizeof *s, "spatial fusion technique", err);
    if (!(*state = s))
        return err->code;
    s->seq = &data->snapshots;
    const int64_t count = params ? params->chunks : 16;
    if (s->seq->num_nodes < count)
        return tf_error_set(err, TECHNIQUE_SKIP, "needs at least %lld vertices for %lld chunks", (long long)count,
                            (long long)count);
    const double whole = (double)(s->seq->num_snapshots * s->seq->num_nodes * s->seq->feature_width) * sizeof(float);
    s->cap_bytes = (int64_t)((params ? params->cap_fraction : 0.6) * whole);
    if (chunk_set_contiguous(s->seq->num_nodes, count, &s->chunks, err) != TF_OK ||
        opt_fusion_spatial_groups(s->seq, &s->chunks, s->cap_bytes, &s->groups, err) != TF_OK ||
        !(s->alone = tf_alloc((size_t)s->chunks.count, sizeof *s->alone, "chunk loads", err)) ||
        !(s->fused = tf_alloc((size_t)s->groups.count, sizeof *s->fused, "group loads", err)))
        return err->code;
    s->twins[0] = (technique_twin){"group loads", TECHNIQUE_BITWISE, 0};
    *twins = 1;
    return TF_OK;
}

static const technique_twin *spatial_twin(const void *state, int index)
{
    return &((const spatial_state *)state)->twins[index];
}

static void free_loads(chunk_load *loads, int64_t count)
{
    for (int64_t i = 0; loads && i < count; i++)
        chunk_load_free(&loads[i]);
}

static int spatial_run_ref(void *state, int64_t step, tf_error *err)
{
    (void)step;
    spatial_state *s = state;
    free_loads(s->alone, s->chunks.count);
    for (int64_t c = 0; c < s->chunks.count; c++)
        if (ref_fusion_load_chunk(s->seq, &s->chunks, c, &s->alone[c], err) != TF_OK)
            return err->code;
    return TF_OK;
}

static int spatial_run_twin(void *state, int twin, int64_t step, tf_error *err)
{
    (void)twin, (void)step;
    spatial_state *s = state;
    free_loads(s->fused, s->groups.count);
    for (int64_t g = 0; g < s->groups.count; g++)
        if (opt_fusion_load_group(s->seq, &s->chunks, &s->groups, g, &s->fused[g], err) != TF_OK)
            return err->code;
    return TF_OK;
}

/* Values of every chunk's rows, out of its group's load, whose bits differ from the chunk's own
 * load; plus one for every merged group over the cap. */
static double spatial_compare(void *state, int twin, int64_t step)
{
    (void)twin, (void)step;
    const spatial_state *s = state;
    const int64_t F = s->seq->feature_width;
    double differing = 0;
    for (int64_t g = 0; g < s->groups.count; g++) {
        const chunk_load *group = &s->fused[g];
        differing += s->groups.offsets[g + 1] - s->groups.offsets[g] > 1 && group->bytes > s->cap_bytes;
        for (int64_t k = s->groups.offsets[g]; k < s->groups.offsets[g + 1]; k++) {
            const chunk_load *alone = &s->alone[s->groups.chunks[k]];
            int64_t *rows = NULL, count = 0;
            tf_error err;
            if (opt_fusion_chunk_rows(s->seq, &s->chunks, s->groups.chunks[k], group, &rows, &count, &err) != TF_OK)
                return INFINITY; /* the group lacks a vertex of the chunk */
            for (int64_t t = 0; t < s->seq->num_snapshots; t++)
                for (int64_t i = 0; i < count; i++)
                    differing += (double)differing_values(group->features + (t * group->num_vertices + rows[i]) * F,
                                                          alone->features + (t * count + i) * F, F);
            free(rows);
        }
    }
    return differing;
}

/* The first value of the first group's load: the union holds only rows some chunk loads too. */
static void spatial_corrupt(void *state, int twin)
{
    (void)twin;
    spatial_state *s = state;
    s->fused[0].features[0] = technique_spoiled(s->fused[0].features[0]);
}

static double spatial_work(const void *state, const char **unit)
{
    *unit = "bytes";
    return (double)((const spatial_state *)state)->groups.fused_bytes;
}

static void spatial_describe(const void *state, const double *seconds, char *text, size_t size)
{
    (void)seconds;
    const spatial_state *s = state;
    const double whole = (double)(s->seq->num_snapshots * s->seq->num_nodes * s->seq->feature_width) * sizeof(float);
    snprintf(text, size, "%.1f%% fewer bytes loaded (%lld groups under a cap of %.1f of the data)",
             100.0 * (1.0 - (double)s->groups.fused_bytes / (double)s->groups.unfused_bytes),
             (long long)s->groups.count, (double)s->cap_bytes / whole);
}

static void spatial_teardown(void *state)
{
    spatial_state *s = state;
    if (!s)
        return;
    free_loads(s->alone, s->chunks.count);
    free_loads(s->fused, s->groups.count);
    free(s->alone), free(s->fused);
    fusion_groups_free(&s->groups);
    chunk_set_free(&s->chunks);
    free(s);
}

fusion_groups fusion_spatial_groups(const void *state)
{
    return ((const spatial_state *)state)->groups;
}

static const technique_case spatial_demo[] = {
    {0, "twitter_tennis", "twitter_tennis, 16 chunks"},
    {0, NULL, NULL},
};

const technique technique_fusion_spatial = {
    .name = "fusion_spatial",
    .stem = "fusion",
    .chapter = "03",
    .title = "spatial fusion (DGC)",
    .needs = "a snapshot sequence",
    .variants = one_variant,
    .demo = spatial_demo,
    .setup = spatial_setup,
    .twin = spatial_twin,
    .steps = one_step,
    .run_ref = spatial_run_ref,
    .run_twin = spatial_run_twin,
    .compare = spatial_compare,
    .corrupt = spatial_corrupt,
    .restart = nothing_to_restart,
    .work = spatial_work,
    .describe = spatial_describe,
    .teardown = spatial_teardown,
};
