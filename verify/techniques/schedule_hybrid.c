/* The technique table's entry of DynaHB's hybrid batches, chapter 07 (stem schedule: the DyGNeX
 * schedules of the same chapter are verify/techniques/schedule.c).
 *
 * Variants:
 *  - "batch": four hybrid batches (5 % of the vertices, at least 10, x 4 snapshots) of a T-GCN (in
 *    the matrix, of the cell's model: WD-GCN reads one hop of X_t too) with hidden 8: the reference is the full snapshot batch over the batch's snapshots with the
 *    loss over its targets only (hybrid_window_gradient(), ref kernels); the twins are the hybrid
 *    batch itself on the ref kernels and on the opt kernels (hybrid_batch_gradient()): fp, the
 *    worst over the loss and every gradient (the row's note counts the ref-kernel twin's
 *    differing values: 0 expected). Work = rows + edges of the hybrid batches.
 *  - "reservoir": 60 requests over the nine sizes (each request's size drawn from the step
 *    number): the serial reservoir against the threaded one with 2 generator threads, bitwise
 *    (every array of every batch handed out). Work = batches handed out.
 * Skipped for event streams and for fewer vertices than the 10 balanced groups. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt/kernels.h"
#include "opt/schedule_hybrid_train.h"
#include "ref/core/memory.h"
#include "ref/core/rng.h"
#include "ref/nn/compare.h"
#include "ref/schedule_hybrid.h"
#include "ref/schedule_hybrid_train.h"
#include "verify/techniques/table.h"

static const char *const hybrid_variants[] = {"batch", "reservoir", NULL};
enum { VARIANT_BATCH, VARIANT_RESERVOIR };
/* Both variants train (batch) or sample (reservoir) a target's one-hop neighbourhood. */
static const unsigned hybrid_needs[] = {1u << MODEL_ONE_HOP, 1u << MODEL_ONE_HOP};
enum { HYBRID_HIDDEN = 8, HYBRID_STEPS = 4, RESERVOIR_GETS = 60, HYBRID_SNAPSHOTS = 4 };

typedef struct hybrid_state {
    int variant;
    const snapshot_seq *seq;
    hybrid_source source;
    int have_source;
    int32_t *scratch;
    hybrid_sizes sizes[HYBRID_ACTIONS];
    /* batch */
    model ref_model, twin_model[2];
    int models;
    hybrid_batch batch;          /* the step's batch, built in run_ref */
    float *ref_gradient, *twin_gradient[2];  /* [parameters + 1]: the loss last */
    int64_t parameters;
    int64_t differing;           /* ref-kernel twin's differing values over the steps */
    double work;
    /* reservoir */
    ref_reservoir serial;
    opt_reservoir *threaded;
    int have_serial;
    const hybrid_batch *served[2];
    technique_twin twin_info[2];
    int twins;
} hybrid_state;

static int hybrid_setup(const technique_context *context, const dataset *data, int variant, void **state, int *twins,
                        tf_error *err)
{
    if (data->kind != DATASET_SNAPSHOTS)
        return tf_error_set(err, TECHNIQUE_SKIP, "needs a snapshot sequence; %s is an event stream", data->name);
    if (data->snapshots.num_nodes < HYBRID_BALANCED_GROUPS)
        return tf_error_set(err, TECHNIQUE_SKIP, "needs at least %d vertices (the balanced groups); %s has %lld",
                            HYBRID_BALANCED_GROUPS, data->name, (long long)data->snapshots.num_nodes);
    hybrid_state *s = tf_alloc(1, sizeof *s, "hybrid technique", err);
    if (!(*state = s))
        return err->code;
    s->variant = variant;
    s->seq = &data->snapshots;
    const int64_t n = s->seq->num_nodes, train = (int64_t)(0.8 * (double)s->seq->num_snapshots);
    if (train < HYBRID_SNAPSHOTS)
        return tf_error_set(err, TECHNIQUE_SKIP, "needs at least %d training snapshots; %s has %lld", HYBRID_SNAPSHOTS,
                            data->name, (long long)train);
    if (hybrid_source_create(&s->source, s->seq, train, HYBRID_BALANCED_GROUPS, err) != TF_OK)
        return err->code;
    s->have_source = 1;
    if (!(s->scratch = tf_alloc((size_t)n, sizeof *s->scratch, "scratch", err)))
        return err->code;
    memset(s->scratch, 0xff, (size_t)n * sizeof *s->scratch);
    if (variant == VARIANT_BATCH) {
        model_config config = {context->model ? *context->model : MODEL_TGCN, s->seq->feature_width, HYBRID_HIDDEN,
                               s->seq->target_width, 2, 0};
        if (model_create(&s->ref_model, &config, 3, err) != TF_OK)
            return err->code;
        s->models = 1;
        for (int k = 0; k < 2; k++) {
            if (model_create(&s->twin_model[k], &config, 3, err) != TF_OK)
                return err->code;
            s->models++;
        }
        s->twin_model[1].kernels = &opt_kernels;
        s->parameters = parameters_size(&s->ref_model.parameters);
        if (!(s->ref_gradient = tf_alloc((size_t)s->parameters + 1, sizeof(float), "gradient", err)) ||
            !(s->twin_gradient[0] = tf_alloc((size_t)s->parameters + 1, sizeof(float), "gradient", err)) ||
            !(s->twin_gradient[1] = tf_alloc((size_t)s->parameters + 1, sizeof(float), "gradient", err)))
            return err->code;
        s->sizes[0] = (hybrid_sizes){HYBRID_SNAPSHOTS, n / 20 > HYBRID_BALANCED_GROUPS ? n / 20 : HYBRID_BALANCED_GROUPS};
        s->twin_info[0] = (technique_twin){"hybrid, ref kernels", TECHNIQUE_FP, TECHNIQUE_CPU_TOLERANCE};
        s->twin_info[1] = (technique_twin){"hybrid, opt kernels", TECHNIQUE_FP, TECHNIQUE_CPU_TOLERANCE};
        s->twins = 2;
    } else {
        for (int a = 0; a < HYBRID_ACTIONS; a++)
            hybrid_action_sizes(a, train, n, HYBRID_BALANCED_GROUPS, &s->sizes[a]);
        if (ref_reservoir_create(&s->serial, &s->source, HYBRID_ACTIONS, s->sizes, 7, err) != TF_OK)
            return err->code;
        s->have_serial = 1;
        if (opt_reservoir_create(&s->threaded, &s->source, HYBRID_ACTIONS, s->sizes, 2, 7, err) != TF_OK)
            return err->code;
        s->twin_info[0] = (technique_twin){"2 generator threads", TECHNIQUE_BITWISE, 0};
        s->twins = 1;
    }
    *twins = s->twins;
    return TF_OK;
}

static const technique_twin *hybrid_twin(const void *state, int index)
{
    return &((const hybrid_state *)state)->twin_info[index];
}

static int64_t hybrid_steps(const void *state)
{
    return ((const hybrid_state *)state)->variant == VARIANT_BATCH ? HYBRID_STEPS : RESERVOIR_GETS;
}

/* Every gradient of a model, then the loss, into out [parameters + 1]. */
static void collect(const model *m, double loss, float *out)
{
    parameters_pack_gradients(&m->parameters, out);
    out[parameters_size(&m->parameters)] = (float)loss;
}

/* The request's action in the reservoir variant: drawn from the step number. */
static int request_action(int64_t step)
{
    rng r;
    rng_seed_keyed(&r, 13, 0, (uint64_t)step);
    return (int)rng_below(&r, HYBRID_ACTIONS);
}

static int hybrid_run_ref(void *state, int64_t step, tf_error *err)
{
    hybrid_state *s = state;
    if (s->variant == VARIANT_RESERVOIR)
        return ref_reservoir_get(&s->serial, request_action(step), &s->served[0], err);
    hybrid_batch_free(&s->batch);
    if (hybrid_batch_build(&s->batch, &s->source, s->sizes[0], 5, HYBRID_STREAM, (uint64_t)step, s->scratch, err) !=
        TF_OK)
        return err->code;
    double loss;
    parameters_zero_grad(&s->ref_model.parameters);
    if (hybrid_window_gradient(&s->ref_model, s->seq, &s->batch, 1.0f, &loss, err) != TF_OK)
        return err->code;
    collect(&s->ref_model, loss, s->ref_gradient);
    return technique_reference_finite(s->ref_gradient, s->parameters + 1, "gradient and loss", step, err);
}

static int hybrid_run_twin(void *state, int twin, int64_t step, tf_error *err)
{
    hybrid_state *s = state;
    if (s->variant == VARIANT_RESERVOIR)
        return opt_reservoir_get(s->threaded, request_action(step), &s->served[1], err);
    /* the batch of this step: the reference built it (the engine runs the reference first) */
    double loss;
    model *m = &s->twin_model[twin];
    parameters_zero_grad(&m->parameters);
    if (hybrid_batch_gradient(m, &s->batch, 1.0f, &loss, err) != TF_OK)
        return err->code;
    collect(m, loss, s->twin_gradient[twin]);
    if (twin == 0) {
        s->differing += differing_values(s->twin_gradient[0], s->ref_gradient, s->parameters + 1);
        s->work += (double)s->batch.work;
    }
    return TF_OK;
}

static double hybrid_compare(void *state, int twin, int64_t step)
{
    (void)step;
    const hybrid_state *s = state;
    if (s->variant == VARIANT_RESERVOIR)
        return (double)hybrid_batch_differing(s->served[0], s->served[1]);
    return relative_error(s->twin_gradient[twin], s->ref_gradient, s->parameters + 1);
}

static void hybrid_corrupt(void *state, int twin)
{
    hybrid_state *s = state;
    if (s->variant == VARIANT_BATCH) {
        s->twin_gradient[twin][0] = technique_spoiled(s->twin_gradient[twin][0]);
        return;
    }
    /* spoil one feature of the served batch in place (the reservoir owns it: it is not reused
     * after a spoiled run, which is a test run) */
    float *value = ((hybrid_batch *)s->served[1])->features;
    *value = technique_spoiled(*value);
}

static double hybrid_work(const void *state, const char **unit)
{
    const hybrid_state *s = state;
    if (s->variant == VARIANT_RESERVOIR) {
        *unit = "batches handed out";
        return RESERVOIR_GETS;
    }
    *unit = "rows + edges";
    return s->work;
}

static void hybrid_describe(const void *state, const double *seconds, char *text, size_t size)
{
    (void)seconds;
    const hybrid_state *s = state;
    if (s->variant == VARIANT_BATCH) {
        snprintf(text, size, "%d batches of %lld targets x %d snapshots; ref-kernel twin: %lld values differ",
                 HYBRID_STEPS, (long long)s->batch.num_targets, HYBRID_SNAPSHOTS, (long long)s->differing);
        return;
    }
    int64_t built = 0;
    for (int a = 0; a < HYBRID_ACTIONS; a++)
        built += s->serial.ledger.stored[a];
    snprintf(text, size, "%d requests, %lld fresh batches, %lld reused", RESERVOIR_GETS, (long long)built,
             (long long)(RESERVOIR_GETS - built));
}

static void hybrid_teardown(void *state)
{
    hybrid_state *s = state;
    if (!s)
        return;
    if (s->models > 0)
        model_free(&s->ref_model);
    for (int k = 0; k + 1 < s->models; k++)
        model_free(&s->twin_model[k]);
    hybrid_batch_free(&s->batch);
    opt_reservoir_free(s->threaded);
    if (s->have_serial)
        ref_reservoir_free(&s->serial);
    if (s->have_source)
        hybrid_source_free(&s->source);
    free(s->ref_gradient);
    free(s->twin_gradient[0]);
    free(s->twin_gradient[1]);
    free(s->scratch);
    free(s);
}

static const technique_case hybrid_demo[] = {
    {VARIANT_BATCH, "twitter_tennis", "twitter_tennis"},
    {VARIANT_RESERVOIR, "twitter_tennis", "twitter_tennis"},
    {0, NULL, NULL},
};

const technique technique_schedule_hybrid = {
    .name = "schedule_hybrid",
    .stem = "schedule",
    .chapter = "07",
    .title = "DynaHB hybrid",
    .needs = "a snapshot sequence of at least 10 vertices",
    .variants = hybrid_variants,
    .distributed = 0,
    .demo = hybrid_demo,
    .models = TECHNIQUE_ON_MODEL,
    .model_needs = hybrid_needs,
    .setup = hybrid_setup,
    .twin = hybrid_twin,
    .steps = hybrid_steps,
    .run_ref = hybrid_run_ref,
    .run_twin = hybrid_run_twin,
    .compare = hybrid_compare,
    .corrupt = hybrid_corrupt,
    .work = hybrid_work,
    .describe = hybrid_describe,
    .teardown = hybrid_teardown,
};
