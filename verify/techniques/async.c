/* The technique table's entry of chapter 05: asynchronous and stale updates of snapshot training, each
 * twin (opt/async.h, on the ranks of the group) against its serial reference (ref/async.h, on
 * rank 0). Variants:
 *  - average: DynaHB's local updates, parameters averaged every 2 steps. Reference: R replicas
 *    stepped serially on the twin's kernels (R = the group's ranks). Bitwise: after every epoch
 *    (which ends with an average, so every replica holds one model) rank 0's parameters against
 *    the simulation's; the error is the count of values that differ.
 *  - delayed: Sven's stale gradients (the delayed gradient), staleness 1. Reference: the serial
 *    delayed recurrence, on the twin's kernels too, so that what differs is the all-reduce's
 *    addition order alone (against the reference kernels: verify/test_async_mpi.c). fp: the
 *    worst |twin - ref| / max(1, |ref|) over every parameter; 0 on one rank, where the
 *    all-reduce is the identity.
 *  - dgc-zero: DGC's stale aggregation with theta = 0 on R = 4 simulated ranks (owner v mod R,
 *    ref/async_embeddings.h) against plain training, GConvGRU hidden 12, one window of 8 per step:
 *    bitwise (only rows whose bits the receiver already holds are reused). Serial: rank 0 alone.
 * average, stale: T-GCN, hidden 12, windows of 8, 2R windows per step, 2 epochs. Work = snapshots
 * trained.
 * Without a group (one process without MPI, as verify/test_technique.c runs the table) the
 * twin runs as one rank, where it calls no collective at all (opt/async.h).
 * The sweep of bench/async.c runs dgc-zero with its own parameters (verify/techniques/async.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt/async.h"
#include "opt/kernels.h"
#include "ref/async.h"
#include "ref/async_embeddings.h"
#include "ref/core/memory.h"
#include "ref/nn/compare.h"
#include "ref/partition.h"
#include "verify/techniques/async.h"
#include "verify/techniques/logic.h"
#include "verify/techniques/spread.h"

/* Indexed by the ASYNC_VARIANT_ values (verify/techniques/async.h). */
static const char *const async_variants[] = {"average", "delayed", "dgc-zero", NULL};

/* What each variant needs of a model: DGC's stale rows are a vertex split's, operands of its graph products. */
static const unsigned async_needs[] = {0, 0, 1u << MODEL_VERTEX_ROWS | 1u << MODEL_STALE_PRODUCTS};

static const dgc_params dgc_defaults = {MODEL_GCONVGRU, 12, 4, ASYNC_EPOCHS};

typedef struct async_state {
    const snapshot_seq *seq;  /* borrowed */
    int variant;
    comm alone;               /* the twin's one rank when there is no group */
    comm *group;              /* the twin's ranks */
    int root;                 /* 1 on the rank that runs the reference and compares */
    replica_set simulation;   /* ASYNC_VARIANT_AVERAGE's reference (root only) */
    trainer reference;        /* ASYNC_VARIANT_DELAYED's reference (root only) */
    trainer mine;             /* this rank's trainer of the twin */
    async_trainer twin;
    int64_t averages;         /* in the twin's last epoch */
    uint64_t sent;            /* bytes this rank sent in the twin's epochs (the comm's count) */
    int64_t epochs_run;       /* the twin's epochs since setup */
    dgc_params dgc;           /* ASYNC_VARIANT_DGC_ZERO's settings */
    int32_t *owner;           /* [num_nodes] ASYNC_VARIANT_DGC_ZERO's simulated owners */
    stale_simulation simulated; /* ASYNC_VARIANT_DGC_ZERO's twin: the model `mine` runs on its kernels */
    model_config config;      /* the trainers' model, options and protocol, for logic and spread */
    train_options options;
    async_options async;
    technique_twin twins[1];
} async_state;

/* dgc-zero: plain training (the reference) against DGC's stale aggregation with theta = 0 on R
 * simulated ranks, one process. Reusing only rows whose bits the receiver already holds changes
 * nothing: bitwise. */
static int dgc_setup(async_state *s, const technique_context *context, tf_error *err)
{
    s->dgc = context->params ? *(const dgc_params *)context->params : dgc_defaults;
    if (context->model)
        s->dgc.kind = *context->model;
    s->root = !context->group || context->group->rank == 0;
    s->twins[0] = (technique_twin){"stale aggregation theta 0 (DGC)", TECHNIQUE_BITWISE, 0};
    if (!s->root)
        return TF_OK; /* a serial simulation: the other ranks of a group only wait */
    model_config config = {s->dgc.kind, 0, s->dgc.hidden, 0, 2, 0};
    train_options options;
    train_options_default(&options);
    options.window = ASYNC_WINDOW;
    options.batch = 1;
    if (trainer_create(&s->reference, s->seq, &config, &options, err) != TF_OK ||
        trainer_create(&s->mine, s->seq, &config, &options, err) != TF_OK)
        return err->code;
    if (!(s->owner = tf_alloc((size_t)s->seq->num_nodes, sizeof(int32_t), "owners", err)))
        return err->code;
    partition_hash(s->seq->num_nodes, s->dgc.ranks, s->owner); /* vertex v on rank v mod R */
    stale_schedule zero = {STALE_ZERO, 0};
    if (stale_simulation_create(&s->simulated, s->seq, s->owner, s->dgc.ranks, &zero, &ref_kernels, err) != TF_OK)
        return err->code;
    s->mine.model.kernels = &s->simulated.table;
    return TF_OK;
}

static int async_setup(const technique_context *context, const dataset *data, int variant, void **state, int *twins,
                       tf_error *err)
{
    if (data->kind != DATASET_SNAPSHOTS)
        return tf_error_set(err, TECHNIQUE_SKIP, "needs a snapshot sequence; %s is an event stream", data->name);
    async_state *s = tf_alloc(1, sizeof *s, "async technique", err);
    if (!(*state = s))
        return err->code;
    s->seq = &data->snapshots;
    s->variant = variant;
    *twins = 1;
    if (variant == ASYNC_VARIANT_DGC_ZERO) /* serial: no ranks involved */
        return dgc_setup(s, context, err);
    s->alone = (comm){.world = MPI_COMM_NULL, .control = MPI_COMM_NULL, .rank = 0, .size = 1, .local_size = 1,
                      .device = -1};
    s->group = context->group ? context->group : &s->alone;
    s->root = s->group->rank == 0;
    const int ranks = s->group->size;
    model_config config = {context->model ? *context->model : MODEL_TGCN, 0, ASYNC_HIDDEN, 0, 2, 0};
    train_options options;
    train_options_default(&options);
    options.epochs = ASYNC_EPOCHS;
    options.window = ASYNC_WINDOW;
    options.batch = 2 * ranks;
    async_options async;
    async_options_default(&async);
    if (variant == ASYNC_VARIANT_AVERAGE) {
        async.mode = SYNC_AVERAGE;
        async.every = ASYNC_EVERY;
    } else {
        async.staleness = 1;
    }
    s->config = config, s->options = options, s->async = async;
    if (trainer_create(&s->mine, s->seq, &config, &options, err) != TF_OK ||
        opt_async_create(&s->twin, &s->mine, s->group, &async, err) != TF_OK)
        return err->code;
    if (s->root && variant == ASYNC_VARIANT_AVERAGE) {
        if (replica_set_create(&s->simulation, s->seq, &config, &options, ranks, ASYNC_EVERY, err) != TF_OK)
            return err->code;
        for (int i = 0; i < ranks; i++) /* the twin's arithmetic: bitwise comparable */
            s->simulation.replicas[i].model.kernels = &opt_kernels;
    }
    if (s->root && variant == ASYNC_VARIANT_DELAYED) {
        if (trainer_create(&s->reference, s->seq, &config, &options, err) != TF_OK)
            return err->code;
        s->reference.model.kernels = &opt_kernels; /* what differs is then the protocol's all-reduce alone */
    }
    s->twins[0] = variant == ASYNC_VARIANT_AVERAGE
                      ? (technique_twin){"average every 2 (DynaHB)", TECHNIQUE_BITWISE, 0}
                      : (technique_twin){"staleness 1 (Sven)", TECHNIQUE_FP, TECHNIQUE_CPU_TOLERANCE};
    *twins = 1;
    return TF_OK;
}

static const technique_twin *async_twin(const void *state, int index)
{
    return &((const async_state *)state)->twins[index];
}

static int64_t async_steps(const void *state)
{
    const async_state *s = state;
    return s->variant == ASYNC_VARIANT_DGC_ZERO ? s->dgc.epochs : ASYNC_EPOCHS;
}

/* The reference's answer: replica 0 of the simulation (average), else the reference trainer's. */
static const parameter_list *reference_parameters(const async_state *s)
{
    return s->variant == ASYNC_VARIANT_AVERAGE ? &s->simulation.replicas[0].model.parameters
                                               : &s->reference.model.parameters;
}

static int async_run_ref(void *state, int64_t step, tf_error *err)
{
    async_state *s = state;
    epoch_report report;
    int status;
    if (s->variant == ASYNC_VARIANT_DGC_ZERO)
        status = trainer_epoch(&s->reference, s->seq, &report, err);
    else if (s->variant == ASYNC_VARIANT_AVERAGE)
        status = ref_local_average_epoch(&s->simulation, s->seq, &report, err);
    else
        status = ref_delayed_epoch(&s->reference, s->seq, &report, err);
    return status != TF_OK ? status : technique_reference_parameters_finite(reference_parameters(s), step, err);
}

static int async_run_twin(void *state, int twin, int64_t step, tf_error *err)
{
    (void)twin, (void)step;
    async_state *s = state;
    epoch_report report;
    if (s->variant == ASYNC_VARIANT_DGC_ZERO)
        return s->root ? ref_stale_embeddings_epoch(&s->simulated, &s->mine, s->seq, &report, err) : TF_OK;
    uint64_t *outer = comm_charge(s->group, &s->sent);
    int status = opt_async_epoch(&s->twin, s->seq, &report, err);
    comm_charge(s->group, outer);
    s->averages = s->twin.averages;
    s->epochs_run++;
    return status;
}

static double async_compare(void *state, int twin, int64_t step)
{
    (void)twin, (void)step;
    const async_state *s = state;
    const parameter_list *ours = &s->mine.model.parameters;
    const parameter_list *ref = reference_parameters(s);
    return s->variant == ASYNC_VARIANT_DELAYED ? parameters_relative_error(ours, ref)
                                       : (double)parameters_differing_values(ours, ref);
}

/* logic_epoch_fn of the delayed variant: the serial delayed recurrence (side 0) or the protocol on the
 * ranks (side 1), on the trainer logic.h made with the reference's kernels. The protocol flushes its
 * delayed gradient at the end of every epoch, so a fresh protocol per epoch is the same run;
 * opt_async_create() puts the optimized kernels in, so the reference's go back in after it. */
static int delayed_logic_epoch(const void *context, trainer *tr, int side, tf_error *err)
{
    const async_state *s = context;
    epoch_report report;
    if (!side)
        return ref_delayed_epoch(tr, s->seq, &report, err);
    async_trainer protocol;
    if (opt_async_create(&protocol, tr, s->group, &s->async, err) != TF_OK)
        return err->code;
    tr->model.kernels = &ref_kernels;
    const int status = opt_async_epoch(&protocol, s->seq, &report, err);
    opt_async_free(&protocol);
    return status;
}

/* technique::logic, for the delayed variant (the averaging one is bitwise): on several ranks the
 * all-reduce adds the ranks' gradients in another order than the serial reference. */
static double async_logic(void *state, int twin, int corrupt, int *reordered, tf_error *err)
{
    (void)twin;
    const async_state *s = state;
    *reordered = s->group->size > 1;
    return training_logic_differs(s->seq, &s->config, &s->options, s->group, ASYNC_EPOCHS, corrupt,
                                  delayed_logic_epoch, s, err);
}

/* technique::spread: the serial delayed reference, its parameters after each epoch the answer. */
static double async_spread(void *state, int64_t steps, tf_error *err)
{
    static const spread_epoch_fn epoch = ref_delayed_epoch;
    const async_state *s = state;
    return reference_spread(s->seq, &s->config, &s->options, steps, parameters_size(&s->mine.model.parameters),
                            spread_epoch_step, &epoch, err);
}

static void async_corrupt(void *state, int twin)
{
    (void)twin;
    async_state *s = state;
    if (s->mine.model.parameters.count == 0)
        return; /* a rank that holds no twin (dgc-zero runs on rank 0) */
    float *first = s->mine.model.parameters.items[0].value.data;
    first[0] = technique_spoiled(first[0]);
}

static double async_work(const void *state, const char **unit)
{
    const async_state *s = state;
    *unit = "snapshots trained";
    return (double)(s->mine.train_snapshots * async_steps(state));
}

static void async_describe(const void *state, const double *seconds, char *text, size_t size)
{
    const async_state *s = state;
    if (s->variant == ASYNC_VARIANT_DGC_ZERO) {
        const stale_stats *st = &s->simulated.stats;
        snprintf(text, size, "%lld epochs, %d simulated ranks: %llu of %llu exchange bytes sent (%.1f%% saved, all by "
                 "exact reuse)",
                 (long long)s->dgc.epochs, s->dgc.ranks, (unsigned long long)st->bytes_sent,
                 (unsigned long long)st->bytes_fresh,
                 st->bytes_fresh ? 100.0 * (1.0 - (double)st->bytes_sent / (double)st->bytes_fresh) : 0.0);
        return;
    }
    const train_schedule sc = trainer_schedule(&s->mine);
    int used = snprintf(text, size, "%d epochs of %lld steps on %d rank(s)", ASYNC_EPOCHS, (long long)sc.steps,
                        s->group->size);
    if (s->variant == ASYNC_VARIANT_AVERAGE)
        used += snprintf(text + used, size - (size_t)used, ", %lld averages per epoch", (long long)s->averages);
    const int R = s->group->size;
    if (s->variant == ASYNC_VARIANT_AVERAGE && R > 1) {
        /* what one gradient all-reduce per step would have sent (opt/async.h's traffic formula:
         * 2 (R - 1) / R * 4P bytes a step, plus the two doubles of an epoch's loss and MSE) */
        const double P = (double)parameters_size(&s->mine.model.parameters);
        const double synchronous = (double)s->epochs_run * ((double)sc.steps * 2.0 * (R - 1) / R * 4.0 * P +
                                                            2.0 * 2.0 * (R - 1) / R * 8.0);
        const double saved = 1.0 - (double)s->sent / synchronous; /* negative: averaging sends more */
        used += snprintf(text + used, size - (size_t)used, "; rank 0 sent %llu bytes, %.1f%% %s than an all-reduce a "
                         "step", (unsigned long long)s->sent, 100.0 * fabs(saved), saved >= 0 ? "less" : "more");
    }
    if (seconds[0] <= 0)
        return;
    /* a twin slower than its reference says why: on one rank it is the reference plus the
     * protocol's bookkeeping; between ranks, steps this small cost less than a collective */
    const char *why = s->group->size > 1 ? ", slower, as steps this small cost less than a collective between ranks"
                                         : ", slower, as on 1 rank it is the reference plus the protocol's bookkeeping";
    snprintf(text + used, size - (size_t)used, ": ref %.2f s, opt %.2f s%s", seconds[0], seconds[1],
             seconds[0] / seconds[1] < 0.95 ? why : "");
}

static void async_teardown(void *state)
{
    async_state *s = state;
    if (!s)
        return;
    opt_async_free(&s->twin);
    stale_simulation_free(&s->simulated);
    free(s->owner);
    trainer_free(&s->mine);
    trainer_free(&s->reference);
    replica_set_free(&s->simulation);
    free(s);
}
static const technique_case async_demo[] = {
    {ASYNC_VARIANT_AVERAGE, "chickenpox", "chickenpox"},
    {ASYNC_VARIANT_DELAYED, "chickenpox", "chickenpox"},
    {ASYNC_VARIANT_DGC_ZERO, "twitter_tennis", "twitter_tennis"},
    {0, NULL, NULL},
};

const technique technique_async = {
    .name = "async",
    .stem = "async",
    .chapter = "05",
    .title = "async updates",
    .needs = "a snapshot sequence",
    .variants = async_variants,
    .distributed = 1,
    .demo = async_demo,
    .models = TECHNIQUE_ON_MODEL,
    .model_needs = async_needs,
    .setup = async_setup,
    .twin = async_twin,
    .steps = async_steps,
    .run_ref = async_run_ref,
    .run_twin = async_run_twin,
    .compare = async_compare,
    .logic = async_logic,
    .spread = async_spread,
    .corrupt = async_corrupt,
    .work = async_work,
    .describe = async_describe,
    .teardown = async_teardown,
};
