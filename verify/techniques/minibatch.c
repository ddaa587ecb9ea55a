/* The technique table's entry of chapter 02's sampled mini-batches, ReInc's training setting
 * (ref/minibatch.h, opt/minibatch.h; chapters/02-incremental.md, "Sampled mini-batches").
 *
 * technique_minibatch: a model of the table trained sequence-first over node mini-batches, each on
 * its seeded sampled computational graph followed through the snapshots by the delta rule. The
 * reference is minibatch_epoch(): one process, every aggregation recomputed on the sampled graphs.
 * The twin is opt_minibatch_epoch() on the ranks of the group (one process: a group of one), which
 * samples every mini-batch itself, runs each step's windows on their ranks and sums the gradients
 * in one all-reduce, and, for a model with an aggregation of X_t to serve (#MODEL_SERVED_INPUTS),
 * takes it from ReInc's engine and cache built over each mini-batch's sampled graphs (incremental
 * aggregation and reuse across windows on the same sampled graphs the reference recomputes on).
 * Both sides run the reference's kernels, as `incremental_train` does, so what differs is where the
 * aggregations come from and the ranks' order of addition; the opt kernels are the `train` entry's.
 * SGD (chapter 01, "What verify compares"); a step is an epoch; equal means fp on the parameters
 * after it; past the tolerance, the reference's own one-ulp spread decides (minibatch_logic()). Three mini-batches per epoch whatever the data (N = ceil(vertices / 3)), ReInc's
 * two hops with a fan-out of 5,3 (small data samples most of its rows either way). */
#include <stdio.h>
#include <stdlib.h>

#include "opt/minibatch.h"
#include "opt/train.h"
#include "ref/core/memory.h"
#include "ref/nn/compare.h"
#include "verify/techniques/spread.h"
#include "verify/techniques/table.h"

enum { MINIBATCH_EPOCHS = 2, MINIBATCH_BATCHES = 3, MINIBATCH_HIDDEN = 8, MINIBATCH_WINDOW = 6, MINIBATCH_STRIDE = 3 };

static const char *const one_variant[] = {"", NULL};

typedef struct minibatch_state {
    technique_context context;    /* as setup was given it, and the data: a fresh pair for logic */
    const dataset *data;          /* borrowed */
    const snapshot_seq *seq;      /* borrowed */
    comm local, *group;           /* the twin's ranks: the context's, or `local` (one rank) */
    int have_local;
    trainer ref, twin;
    minibatch_options sample;
    incremental_inputs_options served;
    int serves;                   /* the model has an aggregation of X_t to serve */
    minibatch_stats stats;        /* the twin's, over its epochs */
    technique_twin twins[1];
} minibatch_state;

static int minibatch_setup(const technique_context *context, const dataset *data, int variant, void **state,
                           int *twins, tf_error *err)
{
    (void)variant;
    if (data->kind != DATASET_SNAPSHOTS)
        return tf_error_set(err, TECHNIQUE_SKIP, "needs a snapshot sequence; %s is an event stream", data->name);
    minibatch_state *s = tf_alloc(1, sizeof *s, "mini-batch technique", err);
    if (!(*state = s))
        return err->code;
    s->context = *context;
    s->data = data;
    s->seq = &data->snapshots;
    const int made = technique_sgd_trainers(context, s->seq, MINIBATCH_HIDDEN, MINIBATCH_WINDOW, MINIBATCH_STRIDE,
                                            MINIBATCH_EPOCHS, &s->ref, &s->twin, err);
    if (made != TF_OK)
        return made;
    s->group = context->group;
    if (s->group && opt_trainer_parallel(&s->twin, s->group, err) != TF_OK)
        return err->code;
    if (!s->group) {
        comm_init_local(&s->local);
        s->have_local = 1;
        s->group = &s->local;
    }
    s->twin.model.kernels = s->ref.model.kernels; /* opt_trainer_parallel() gave it the opt kernels */
    s->sample.size = (s->seq->num_nodes + MINIBATCH_BATCHES - 1) / MINIBATCH_BATCHES;
    s->sample.hops = 2;
    s->sample.fanout[0] = 5;
    s->sample.fanout[1] = 3;
    incremental_inputs_options_default(&s->served);
    s->serves = model_has(s->ref.model.config.kind, MODEL_SERVED_INPUTS);
    s->twins[0] = (technique_twin){s->serves ? "ranks, served by the cache and deltas" : "ranks, recomputed",
                                   TECHNIQUE_FP, TECHNIQUE_CPU_TOLERANCE};
    *twins = 1;
    return TF_OK;
}

static const technique_twin *minibatch_twin(const void *state, int index)
{
    return &((const minibatch_state *)state)->twins[index];
}

static int64_t minibatch_steps(const void *state)
{
    (void)state;
    return MINIBATCH_EPOCHS;
}

static int minibatch_run_ref(void *state, int64_t step, tf_error *err)
{
    minibatch_state *s = state;
    epoch_report report;
    if (minibatch_epoch(&s->ref, s->seq, &s->sample, &report, err) != TF_OK)
        return err->code;
    return technique_reference_parameters_finite(&s->ref.model.parameters, step, err);
}

static int minibatch_run_twin(void *state, int twin, int64_t step, tf_error *err)
{
    (void)twin, (void)step;
    minibatch_state *s = state;
    epoch_report report;
    return opt_minibatch_epoch(&s->twin, s->group, s->seq, &s->sample, s->serves ? &s->served : NULL, &s->stats,
                               &report, err);
}

static double minibatch_compare(void *state, int twin, int64_t step)
{
    (void)twin, (void)step;
    const minibatch_state *s = state;
    return parameters_relative_error(&s->twin.model.parameters, &s->ref.model.parameters);
}

static void minibatch_corrupt(void *state, int twin)
{
    (void)twin;
    minibatch_state *s = state;
    float *first = s->twin.model.parameters.items[0].value.data;
    first[0] = technique_spoiled(first[0]);
}

static void minibatch_teardown(void *state);

/* technique::logic. Both sides already run the reference's kernels: what is left of the twin is its
 * ranks' order of addition and, when served, the engine's deltas, another order than the reference's
 * by design. A fresh pair is trained again on every rank (the reference on rank 0), spoiled as the
 * validating run was, and its differing values counted; the reference's spread then decides. */
static double minibatch_logic(void *state, int twin, int corrupt, int *reordered, tf_error *err)
{
    (void)twin;
    const minibatch_state *s = state;
    const int root = s->group->rank == 0;
    *reordered = 1;
    void *again = NULL;
    int twins = 0;
    int status = minibatch_setup(&s->context, s->data, 0, &again, &twins, err);
    double differing = 0;
    const minibatch_state *a = again;
    for (int64_t epoch = 0; status == TF_OK && epoch < MINIBATCH_EPOCHS; epoch++) {
        if (root)
            status = minibatch_run_ref(again, epoch, err);
        if (status == TF_OK)
            status = minibatch_run_twin(again, 0, epoch, err);
        if (status != TF_OK)
            break;
        if (corrupt) /* on every rank, as the engine spoils the validating run's twin */
            minibatch_corrupt(again, 0);
        if (root)
            differing += (double)parameters_differing_values(&a->twin.model.parameters, &a->ref.model.parameters);
    }
    minibatch_teardown(again);
    return status == TF_OK ? differing : -1;
}

/* spread_step_fn: one epoch of the reference, minibatch_epoch() on the state's sample; its parameters
 * the answer. */
static int reference_epoch_step(const void *context, trainer *tr, const snapshot_seq *seq, int64_t step,
                                float *answer, double *loss, tf_error *err)
{
    (void)step;
    const minibatch_state *s = context;
    epoch_report report;
    if (minibatch_epoch(tr, seq, &s->sample, &report, err) != TF_OK)
        return err->code;
    *loss = report.train_loss;
    parameters_pack_values(&tr->model.parameters, answer);
    return TF_OK;
}

/* technique::spread (rank 0): the reference's parameters after each epoch under one-ulp changes. */
static double minibatch_spread(void *state, int64_t steps, tf_error *err)
{
    const minibatch_state *s = state;
    return reference_spread(s->seq, &s->ref.model.config, &s->ref.options, steps,
                            parameters_size(&s->ref.model.parameters), reference_epoch_step, s, err);
}

/* technique::describe: the mini-batches and, when served, what the cache and the engine did. */
static void minibatch_describe(const void *state, const double *seconds, char *text, size_t size)
{
    (void)seconds;
    const minibatch_state *s = state;
    const minibatch_stats *m = &s->stats;
    const double batches = m->batches ? (double)m->batches : 1.0, lookups = (double)(m->hits + m->misses);
    int at = snprintf(text, size, "%s, %lld mini-batches of <= %lld, fan-out 5,3, %d rank(s): %.0f vertices sampled "
                      "on average", model_kind_name(s->twin.model.config.kind), (long long)m->batches,
                      (long long)s->sample.size, s->group->size, (double)m->vertices / batches);
    if (s->serves && at > 0 && (size_t)at < size)
        snprintf(text + at, size - (size_t)at, "; cache hit rate %.3f, engine %lld deltas, %lld full",
                 lookups ? (double)m->hits / lookups : 0.0, (long long)m->engine_deltas, (long long)m->engine_full);
}

static void minibatch_teardown(void *state)
{
    minibatch_state *s = state;
    if (!s)
        return;
    trainer_free(&s->twin);
    trainer_free(&s->ref);
    if (s->have_local)
        comm_finalize(&s->local);
    free(s);
}

static const technique_case minibatch_demo[] = {{0, NULL, NULL}};

const technique technique_minibatch = {
    .name = "minibatch",
    .stem = "minibatch",
    .chapter = "02",
    .title = "ReInc mini-batches",
    .needs = "a snapshot sequence",
    .variants = one_variant,
    .distributed = 1,
    .demo = minibatch_demo,
    .models = TECHNIQUE_ON_MODEL,
    .setup = minibatch_setup,
    .twin = minibatch_twin,
    .steps = minibatch_steps,
    .run_ref = minibatch_run_ref,
    .run_twin = minibatch_run_twin,
    .compare = minibatch_compare,
    .corrupt = minibatch_corrupt,
    .logic = minibatch_logic,
    .spread = minibatch_spread,
    .describe = minibatch_describe,
    .teardown = minibatch_teardown,
};
