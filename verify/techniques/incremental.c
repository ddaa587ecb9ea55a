/* The technique table's entry of chapter 02, ReInc's incremental aggregation
 * (chapters/02-incremental.md).
 *
 * technique_incremental: the aggregation of every snapshot of a sequence, by the
 * reference's full recompute (ref_aggregate) and by the incremental engine with its defaults
 * (opt_incremental_seek: deltas, a full recompute above the threshold and at every refresh). The
 * deltas are built in setup, once per dataset like a delta-mode loader, and not timed; snapshot 0
 * is a full recompute on both sides and is not timed either, so a speed is that of snapshots 1
 * onwards. Equal means: sum, mean and symmetric within 1e-5 of the summed terms
 * (aggregation_error(), ref/incremental.h: the reference's own float sum is that far from the
 * exact value); max and min bitwise. Work = the edges of every timed snapshot (an edge rate says
 * how fast aggregations are brought up to date). The sweeps of bench/incremental.c run it with
 * their own parameters (verify/techniques/incremental.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt/incremental.h"
#include "opt/incremental_inputs.h"
#include "ref/core/memory.h"
#include "ref/incremental.h"
#include "ref/nn/compare.h"
#include "verify/techniques/incremental.h"
#include "verify/techniques/spread.h"

static const char *const aggregator_variants[] = {"sum", "mean", "symmetric", "chebyshev", "max", "min", NULL};

typedef struct incremental_state {
    const snapshot_seq *seq;            /* borrowed from the dataset */
    aggregator kind;
    snapshot_delta *deltas;             /* [num_snapshots] deltas[t]: t-1 -> t */
    float *reference;                   /* [num_nodes][width] ref_aggregate() of the current step */
    incremental_aggregation delta;      /* twin 0: the engine, deltas and fallbacks */
    incremental_aggregation full;       /* twin 1: the engine's full recompute at every step */
    technique_twin twins[2];
} incremental_state;

static int incremental_setup(const technique_context *context, const dataset *data, int variant, void **state,
                             int *twins, tf_error *err)
{
    if (data->kind != DATASET_SNAPSHOTS)
        return tf_error_set(err, TECHNIQUE_SKIP, "needs a snapshot sequence; %s is an event stream", data->name);
    const incremental_params *params = context->params;
    incremental_state *s = tf_alloc(1, sizeof *s, "incremental technique", err);
    if (!(*state = s))
        return err->code;
    s->seq = &data->snapshots;
    s->kind = (aggregator)variant;
    const int bitwise = s->kind == AGGREGATOR_MAX || s->kind == AGGREGATOR_MIN;
    technique_twin twin = {"incremental", bitwise ? TECHNIQUE_BITWISE : TECHNIQUE_FP,
                           bitwise ? 0 : TECHNIQUE_CPU_TOLERANCE};
    s->twins[0] = twin;
    twin.name = "opt full recompute";
    s->twins[1] = twin;
    *twins = params && params->full_twin ? 2 : 1;
    const int64_t n = s->seq->num_nodes, width = s->seq->feature_width;
    if (!(s->reference = tf_alloc((size_t)(n * width), sizeof(float), "reference aggregation", err)))
        return err->code;
    if (snapshot_delta_chain_build(&s->deltas, s->seq, s->kind, err) != TF_OK)
        return err->code;
    const incremental_options *options = params ? &params->engine : NULL;
    if (opt_incremental_create(&s->delta, s->kind, n, width, options, err) != TF_OK)
        return err->code;
    return *twins == 2 ? opt_incremental_create(&s->full, s->kind, n, width, options, err) : TF_OK;
}

static const technique_twin *incremental_twin(const void *state, int index)
{
    return &((const incremental_state *)state)->twins[index];
}

static int64_t incremental_steps(const void *state)
{
    return ((const incremental_state *)state)->seq->num_snapshots;
}

static int incremental_run_ref(void *state, int64_t step, tf_error *err)
{
    incremental_state *s = state;
    const snapshot *snap = &s->seq->snapshots[step];
    return ref_aggregate(&snap->graph, snap->features.data, s->seq->feature_width, s->kind, s->reference, err);
}

static int incremental_run_twin(void *state, int twin, int64_t step, tf_error *err)
{
    (void)err;
    incremental_state *s = state;
    if (twin == 0)
        opt_incremental_seek(&s->delta, s->seq, s->deltas, step);
    else
        opt_incremental_reset(&s->full, &s->seq->snapshots[step], step);
    return TF_OK;
}

static double incremental_compare(void *state, int twin, int64_t step)
{
    incremental_state *s = state;
    const snapshot *snap = &s->seq->snapshots[step];
    const float *value = twin == 0 ? s->delta.value : s->full.value;
    const int64_t width = s->seq->feature_width;
    if (s->twins[twin].equality == TECHNIQUE_BITWISE)
        return (double)differing_values(value, s->reference, s->seq->num_nodes * width);
    double e = aggregation_error(&snap->graph, snap->features.data, width, s->kind, value, s->reference);
    return e < 0 ? NAN : e; /* out of memory while measuring: never a pass */
}

static void incremental_corrupt(void *state, int twin)
{
    incremental_state *s = state;
    float *value = twin == 0 ? s->delta.value : s->full.value;
    value[0] = technique_spoiled(value[0]);
}

/* A rerun starts from the same place (seek() gives snapshot t's value whatever came before);
 * only the counts are reset, so they describe one run. */
static int incremental_restart(void *state, int twin, tf_error *err)
{
    (void)err;
    incremental_state *s = state;
    memset(twin == 0 ? &s->delta.stats : &s->full.stats, 0, sizeof s->delta.stats);
    return TF_OK;
}

/* Work of a run: the edges of every timed snapshot (1 .. T-1). */
static double incremental_work(const void *state, const char **unit)
{
    const incremental_state *s = state;
    double edges = 0;
    for (int64_t t = 1; t < s->seq->num_snapshots; t++)
        edges += (double)s->seq->snapshots[t].graph.num_edges;
    *unit = "edges";
    return edges;
}

/* technique::describe: the speed against the reference's full recompute and how the twin got there.
 * A twin slower than the reference says why: it took few or no deltas (a snapshot whose delta is
 * over the churn threshold is a full recompute), and its full recompute costs more than the
 * reference's, as it also keeps what later deltas need (each row's double sum; for max and min,
 * each cell's winning source: opt/incremental.h). */
static void incremental_describe(const void *state, const double *seconds, char *text, size_t size)
{
    const incremental_state *s = state;
    const incremental_stats *c = &s->delta.stats;
    const double speed = seconds[0] > 0 ? seconds[0] / seconds[1] : 0;
    size_t used = 0;
    if (speed > 0)
        used = (size_t)snprintf(text, size, "%.1fx ref's full recompute; ", speed);
    if (used < size)
        used += (size_t)snprintf(text + used, size - used, "%lld deltas, %lld full (%lld above the threshold)",
                                 (long long)c->incremental, (long long)c->full, (long long)c->fallbacks);
    if (speed > 0 && speed < 0.95 && used < size && c->incremental == 0)
        snprintf(text + used, size - used, ": slower, as no delta was taken and a full recompute also keeps what "
                                           "deltas need");
    else if (speed > 0 && speed < 0.95 && used < size)
        snprintf(text + used, size - used, ": slower, as only %lld of %lld snapshots took a delta and a full "
                 "recompute also keeps what deltas need", (long long)c->incremental, (long long)s->seq->num_snapshots);
}

static void incremental_teardown(void *state)
{
    incremental_state *s = state;
    if (!s)
        return;
    free(s->reference);
    if (s->deltas)
        snapshot_delta_chain_free(s->deltas, s->seq->num_snapshots);
    opt_incremental_free(&s->delta);
    opt_incremental_free(&s->full);
    free(s);
}

double incremental_entries_per_edge(const void *state)
{
    const incremental_state *s = state;
    double entries = 0, edges = 0;
    for (int64_t t = 1; t < s->seq->num_snapshots; t++) {
        entries += (double)snapshot_delta_entries(&s->deltas[t]);
        edges += (double)s->seq->snapshots[t].graph.num_edges;
    }
    return entries / edges;
}

#define INCREMENTAL_GENERATED "powerlaw:nodes=100000,edges=1000000,snapshots=5,churn=0.01,features=16,degrees=0,seed=1"

static const technique_case incremental_demo[] = {
    {AGGREGATOR_SUM, "twitter_tennis", "twitter_tennis, 120 snapshots"},
    {AGGREGATOR_MAX, "twitter_tennis", "twitter_tennis, 120 snapshots"},
    {AGGREGATOR_SUM, INCREMENTAL_GENERATED, "powerlaw 10^6 edges, 1% churn"},
    {AGGREGATOR_SYMMETRIC, INCREMENTAL_GENERATED, "powerlaw 10^6 edges, 1% churn"},
    {0, NULL, NULL},
};

const technique technique_incremental = {
    .name = "incremental",
    .stem = "incremental",
    .chapter = "02",
    .title = "ReInc incremental",
    .needs = "a snapshot sequence",
    .variants = aggregator_variants,
    .distributed = 0,
    .demo = incremental_demo,
    .setup = incremental_setup,
    .twin = incremental_twin,
    .steps = incremental_steps,
    .untimed_steps = 1,
    .run_ref = incremental_run_ref,
    .run_twin = incremental_run_twin,
    .compare = incremental_compare,
    .corrupt = incremental_corrupt,
    .restart = incremental_restart,
    .work = incremental_work,
    .describe = incremental_describe,
    .teardown = incremental_teardown,
};

/* ---- the inputs served in training ------------------------------------------------------------- */

/* technique_incremental_train: a model of the table trained with ReInc's machinery serving its input
 * aggregations (opt/incremental_inputs.h: the engine's deltas behind the global cache) against the same
 * training that recomputes them in every window (the reference). Both sides run the reference's
 * kernels, so what differs is only where the aggregations come from. Overlapping windows (8, stride
 * 4), so the cache is hit; SGD, as the `train` entry compares parameters (chapter 01, "What verify
 * compares"). A step is an epoch; equal means fp on the parameters after it; past the tolerance, the
 * reference's own one-ulp spread decides (served_logic()). Runs on the model a
 * matrix cell names (#MODEL_SERVED_INPUTS), T-GCN by default; Chebyshev models with K = 2, DCRNN with K = 3. */

enum { SERVED_EPOCHS = 3, SERVED_WINDOW = 8, SERVED_STRIDE = 4, SERVED_HIDDEN = 8 };

static const char *const one_variant[] = {"", NULL};
static const unsigned served_needs[] = {1u << MODEL_SERVED_INPUTS};

typedef struct served_state {
    technique_context context;   /* as setup was given it, and the data: a fresh pair for logic */
    const dataset *data;         /* borrowed */
    const snapshot_seq *seq;     /* borrowed */
    trainer ref, twin;           /* both on ref kernels; the twin's model reads `inputs` */
    incremental_inputs inputs;
    int have_inputs;
    technique_twin twins[1];
} served_state;

static int served_setup(const technique_context *context, const dataset *data, int variant, void **state,
                        int *twins, tf_error *err)
{
    (void)variant;
    if (data->kind != DATASET_SNAPSHOTS)
        return tf_error_set(err, TECHNIQUE_SKIP, "needs a snapshot sequence; %s is an event stream", data->name);
    served_state *s = tf_alloc(1, sizeof *s, "served inputs technique", err);
    if (!(*state = s))
        return err->code;
    s->context = *context;
    s->data = data;
    s->seq = &data->snapshots;
    const int made = technique_sgd_trainers(context, s->seq, SERVED_HIDDEN, SERVED_WINDOW, SERVED_STRIDE,
                                            SERVED_EPOCHS, &s->ref, &s->twin, err);
    if (made != TF_OK)
        return made;
    incremental_inputs_options served;
    incremental_inputs_options_default(&served);
    if (incremental_inputs_create(&s->inputs, s->seq, &s->twin, NULL, &served, err) != TF_OK)
        return err->code;
    s->have_inputs = 1;
    s->twin.model.inputs = &s->inputs.source;
    s->twins[0] = (technique_twin){"served by the cache and deltas", TECHNIQUE_FP, TECHNIQUE_CPU_TOLERANCE};
    *twins = 1;
    return TF_OK;
}

static const technique_twin *served_twin(const void *state, int index)
{
    return &((const served_state *)state)->twins[index];
}

static int64_t served_steps(const void *state)
{
    (void)state;
    return SERVED_EPOCHS;
}

static int served_run_ref(void *state, int64_t step, tf_error *err)
{
    served_state *s = state;
    epoch_report report;
    if (trainer_epoch(&s->ref, s->seq, &report, err) != TF_OK)
        return err->code;
    return technique_reference_parameters_finite(&s->ref.model.parameters, step, err);
}

static int served_run_twin(void *state, int twin, int64_t step, tf_error *err)
{
    (void)twin, (void)step;
    served_state *s = state;
    epoch_report report;
    return trainer_epoch(&s->twin, s->seq, &report, err);
}

static double served_compare(void *state, int twin, int64_t step)
{
    (void)twin, (void)step;
    const served_state *s = state;
    return parameters_relative_error(&s->twin.model.parameters, &s->ref.model.parameters);
}

static void served_corrupt(void *state, int twin)
{
    (void)twin;
    served_state *s = state;
    float *first = s->twin.model.parameters.items[0].value.data;
    first[0] = technique_spoiled(first[0]);
}

static void served_teardown(void *state);

/* technique::logic. Both sides already run the reference's kernels: what is left of the twin is where
 * its inputs come from, the engine's deltas, which add in another order than a full recompute by
 * design (chapter 02), so its bits cannot be the reference's. A fresh pair is trained again, spoiled
 * as the validating run was, and its differing values counted; the reference's spread then decides. */
static double served_logic(void *state, int twin, int corrupt, int *reordered, tf_error *err)
{
    (void)twin;
    const served_state *s = state;
    *reordered = 1;
    void *again = NULL;
    int twins = 0;
    int status = served_setup(&s->context, s->data, 0, &again, &twins, err);
    double differing = 0;
    const served_state *a = again;
    for (int64_t epoch = 0; status == TF_OK && epoch < SERVED_EPOCHS; epoch++) {
        status = served_run_ref(again, epoch, err);
        if (status == TF_OK)
            status = served_run_twin(again, 0, epoch, err);
        if (status != TF_OK)
            break;
        if (corrupt)
            served_corrupt(again, 0);
        differing += (double)parameters_differing_values(&a->twin.model.parameters, &a->ref.model.parameters);
    }
    served_teardown(again);
    return status == TF_OK ? differing : -1;
}

/* technique::spread: the reference's parameters after each epoch under one-ulp changes. */
static double served_spread(void *state, int64_t steps, tf_error *err)
{
    static const spread_epoch_fn epoch = trainer_epoch;
    const served_state *s = state;
    return reference_spread(s->seq, &s->ref.model.config, &s->ref.options, steps,
                            parameters_size(&s->ref.model.parameters), spread_epoch_step, &epoch, err);
}

/* technique::describe: what the cache and the engine did. */
static void served_describe(const void *state, const double *seconds, char *text, size_t size)
{
    (void)seconds;
    const served_state *s = state;
    const incremental_inputs *in = &s->inputs;
    const incremental_stats engine = incremental_inputs_engine_stats(in);
    int used = snprintf(text, size, "%s, %d epochs: cache hit rate %.3f, engine %lld deltas, %lld full",
                        model_kind_name(s->twin.model.config.kind), SERVED_EPOCHS,
                        incremental_cache_hit_rate(&in->cache), (long long)engine.incremental, (long long)engine.full);
    if (in->diffusion && used > 0 && (size_t)used < size) /* both walks' T_2 .. T_{K-1}: the closure's rows */
        snprintf(text + used, size - (size_t)used, "; closure formed %lld of %lld rows",
                 (long long)in->walks.stats.rows_recomputed, (long long)in->walks.stats.rows_full);
}

static void served_teardown(void *state)
{
    served_state *s = state;
    if (!s)
        return;
    if (s->have_inputs)
        incremental_inputs_free(&s->inputs);
    trainer_free(&s->twin);
    trainer_free(&s->ref);
    free(s);
}

static const technique_case served_demo[] = {{0, NULL, NULL}};

const technique technique_incremental_train = {
    .name = "incremental_train",
    .stem = "incremental",
    .chapter = "02",
    .title = "ReInc inputs served",
    .needs = "a snapshot sequence",
    .variants = one_variant,
    .distributed = 0,
    .demo = served_demo,
    .models = TECHNIQUE_ON_MODEL,
    .model_needs = served_needs,
    .setup = served_setup,
    .twin = served_twin,
    .steps = served_steps,
    .run_ref = served_run_ref,
    .run_twin = served_run_twin,
    .compare = served_compare,
    .corrupt = served_corrupt,
    .logic = served_logic,
    .spread = served_spread,
    .describe = served_describe,
    .teardown = served_teardown,
};
