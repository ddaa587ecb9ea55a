/* The technique table's entry of chapter 01 (the optimized engine): snapshot-model training by the
 * reference trainer (ref kernels, one process) and by the data-parallel twin (opt kernels, the
 * step's windows shared among the ranks of the group, one gradient all-reduce per step;
 * opt/train.h). Both start from the same seed and data; after every epoch (a step of the engine)
 * the twin's parameters are compared with the reference's: fp, the worst
 * |twin - ref| / max(1, |ref|) over every parameter (BLAS products and a different float
 * addition order in the all-reduce are the only differences; chapter 01 measures them). Both
 * train with SGD, whose parameters move by lr times the gradient, so a rounding difference stays
 * the size it was (Adam is one function both call: test_kernels checks it bitwise). Work =
 * the snapshots trained per epoch times the epochs. Under `mpiexec -n R` the twin runs on R
 * ranks; the reference runs on rank 0. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt/kernels.h"
#include "opt/train.h"
#include "ref/nn/compare.h"
#include "ref/core/memory.h"
#include "ref/train.h"
#include "verify/techniques/logic.h"
#include "verify/techniques/spread.h"
#include "verify/techniques/table.h"


/* The training every run uses (small, so `twofold verify` stays quick on the user's data). */
enum { TRAIN_EPOCHS = 3, TRAIN_HIDDEN = 32, TRAIN_WINDOW = 8, TRAIN_BATCH = 4 };

typedef struct train_state {
    const snapshot_seq *seq;   /* borrowed */
    comm *group;               /* the twin's ranks, or NULL: the opt kernels in one process */
    trainer ref, twin;
    model_config config;       /* both trainers' */
    train_options options;
    int ranks;                 /* the twin's ranks */
    technique_twin twins[1];
} train_state;

static int train_setup(const technique_context *context, const dataset *data, int variant, void **state, int *twins,
                       tf_error *err)
{
    if (data->kind != DATASET_SNAPSHOTS)
        return tf_error_set(err, TECHNIQUE_SKIP, "needs a snapshot sequence; %s is an event stream", data->name);
    train_state *s = tf_alloc(1, sizeof *s, "training technique", err);
    if (!(*state = s))
        return err->code;
    s->seq = &data->snapshots;
    /* model (kind, in, hidden, out, Chebyshev K): in and out come from the data */
    model_config config = {(model_kind)variant, 0, TRAIN_HIDDEN, 0, 2, 0};
    train_options options;
    train_options_default(&options);
    options.epochs = TRAIN_EPOCHS;
    options.window = TRAIN_WINDOW;
    options.batch = TRAIN_BATCH;
    /* SGD, not Adam: the twin's parameters are compared, and Adam's division by sqrt(v) + eps
     * turns the last-bit rounding of a gradient element that is zero to float precision into a
     * step of up to lr (chapter 01, "What verify compares"); SGD's step is lr times the gradient,
     * so the parameters differ by what the gradients differ. */
    options.optimizer = OPTIMIZER_SGD;
    s->config = config;
    s->options = options;
    if (trainer_create(&s->ref, s->seq, &config, &options, err) != TF_OK) { /* the data's shape, not a failure */
        char why[TF_ERROR_MESSAGE_SIZE];
        snprintf(why, sizeof why, "%s", err->message);
        return tf_error_set(err, TECHNIQUE_SKIP, "cannot train on this data: %.900s", why);
    }
    if (trainer_create(&s->twin, s->seq, &config, &options, err) != TF_OK)
        return err->code;
    s->group = context->group;
    if (s->group) {
        if (opt_trainer_parallel(&s->twin, s->group, err) != TF_OK)
            return err->code;
        s->ranks = s->group->size;
    } else {
        s->twin.model.kernels = &opt_kernels;
        s->ranks = 1;
    }
    s->twins[0] = (technique_twin){"data-parallel opt", TECHNIQUE_FP, TECHNIQUE_CPU_TOLERANCE};
    *twins = 1;
    return TF_OK;
}

static const technique_twin *train_twin(const void *state, int index)
{
    return &((const train_state *)state)->twins[index];
}

static int64_t train_steps(const void *state)
{
    (void)state;
    return TRAIN_EPOCHS;
}

static int train_run_ref(void *state, int64_t step, tf_error *err)
{
    train_state *s = state;
    epoch_report report;
    if (trainer_epoch(&s->ref, s->seq, &report, err) != TF_OK)
        return err->code;
    return technique_reference_parameters_finite(&s->ref.model.parameters, step, err);
}

static int train_run_twin(void *state, int twin, int64_t step, tf_error *err)
{
    (void)twin, (void)step;
    train_state *s = state;
    epoch_report report;
    return s->group ? opt_trainer_epoch(&s->twin, s->group, s->seq, &report, err)
                    : trainer_epoch(&s->twin, s->seq, &report, err);
}

static double train_compare(void *state, int twin, int64_t step)
{
    (void)twin, (void)step;
    const train_state *s = state;
    return parameters_relative_error(&s->twin.model.parameters, &s->ref.model.parameters);
}

/* logic_epoch_fn: an epoch of the reference (side 0) or of the twin (side 1, on the ranks). */
static int logic_epoch(const void *context, trainer *tr, int side, tf_error *err)
{
    const train_state *s = context;
    epoch_report report;
    return side && s->group ? opt_trainer_epoch(tr, s->group, s->seq, &report, err)
                            : trainer_epoch(tr, s->seq, &report, err);
}

/* technique::logic. On several ranks a step's windows are summed on their ranks and then across
 * them, another order than the reference's, unless each step holds one window. */
static double train_logic(void *state, int twin, int corrupt, int *reordered, tf_error *err)
{
    (void)twin;
    const train_state *s = state;
    const int64_t windows = trainer_schedule(&s->ref).windows;
    *reordered = s->ranks > 1 && (windows < TRAIN_BATCH ? windows : TRAIN_BATCH) > 1;
    return training_logic_differs(s->seq, &s->config, &s->options, s->group, TRAIN_EPOCHS, corrupt, logic_epoch, s,
                                  err);
}

static double train_spread(void *state, int64_t steps, tf_error *err)
{
    static const spread_epoch_fn epoch = trainer_epoch; /* the reference's epoch; its parameters the answer */
    const train_state *s = state;
    return reference_spread(s->seq, &s->config, &s->options, steps, parameters_size(&s->ref.model.parameters),
                            spread_epoch_step, &epoch, err);
}

static void train_corrupt(void *state, int twin)
{
    (void)twin;
    train_state *s = state;
    float *first = s->twin.model.parameters.items[0].value.data;
    first[0] = technique_spoiled(first[0]);
}

static double train_work(const void *state, const char **unit)
{
    const train_state *s = state;
    *unit = "snapshots trained";
    return (double)(s->ref.train_snapshots * TRAIN_EPOCHS);
}

/* technique::describe: the ranks and the speed; a twin slower than the reference says why (the
 * data is too small for what the twin adds: an all-reduce per step between ranks, BLAS calls on
 * small matrices in one process). */
static void train_describe(const void *state, const double *seconds, char *text, size_t size)
{
    const train_state *s = state;
    if (seconds[0] <= 0) {
        snprintf(text, size, "%d epochs on %d rank(s)", TRAIN_EPOCHS, s->ranks);
        return;
    }
    const double speed = seconds[0] / seconds[1];
    const char *why = s->ranks > 1 ? ": slower, as steps this small cost less than their all-reduce between ranks"
                                   : ": slower, as on matrices this small BLAS calls cost more than they save";
    snprintf(text, size, "%d epochs, %d rank(s): ref %.2f s, opt %.2f s (%.1fx)%s", TRAIN_EPOCHS, s->ranks, seconds[0],
             seconds[1], speed, speed < 0.95 ? why : "");
}

static void train_teardown(void *state)
{
    train_state *s = state;
    if (!s)
        return;
    trainer_free(&s->ref);
    trainer_free(&s->twin);
    free(s);
}

static const technique_case train_demo[] = {
    {2, "chickenpox", "chickenpox"},
    {2, "twitter_tennis", "twitter_tennis"},
    {0, NULL, NULL},
};

const technique technique_train = {
    .name = "train",
    .stem = "train",
    .chapter = "01",
    .title = "data-parallel train",
    .needs = "a snapshot sequence",
    .variants = model_names, /* every model of the table */
    .distributed = 1,
    .demo = train_demo,
    .models = TECHNIQUE_VARIANT_MODEL,
    .setup = train_setup,
    .twin = train_twin,
    .steps = train_steps,
    .run_ref = train_run_ref,
    .run_twin = train_run_twin,
    .compare = train_compare,
    .logic = train_logic,
    .spread = train_spread,
    .corrupt = train_corrupt,
    .work = train_work,
    .describe = train_describe,
    .teardown = train_teardown,
};
