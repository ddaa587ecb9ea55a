/* The technique table's entry of chapter 07's DyGNeX schedules (the hybrid batches of the same
 * chapter: verify/techniques/schedule_hybrid.c).
 *
 * Variants:
 *  - "greedy": DyGNeX-G for 4 ranks on the windows (4 snapshots, stride 1) of the data, their
 *    times from the linear cost 1e-6 rows + 1e-7 edges + 1e-4 s: ref_schedule_greedy() against
 *    opt_schedule_greedy(), bitwise (the error is the count of differing iteration and rank
 *    entries). Work = groups scheduled.
 *  - "gradient": the epoch gradient at the initial parameters, sum_k grad L_k over every window,
 *    by one process (the reference) and under the round-robin, LPT, greedy and ILP (1 s) schedules
 *    on the group's ranks (opt_schedule_gradient(): each iteration's groups on their ranks, one
 *    all-reduce each): fp. A schedule that dropped or repeated a window would be off by a whole
 *    window's gradient. Work = windows.
 *  - "train": two epochs under the greedy schedule: ref_schedule_epoch() in one process with
 *    ref kernels against opt_schedule_epoch() on the ranks with opt kernels, parameters compared
 *    after each epoch: fp, both with SGD (verify/techniques/train.c says why). Work = snapshots
 *    trained.
 * The model is T-GCN with hidden 8, windows of 4 with stride 1 over the default split: small,
 * so the table's test runs under Valgrind. Where the ILP of the data's windows is too large for
 * opt_schedule_build(), the gradient row is skipped and says so (verify goes on with the others).
 * The sweeps of bench/schedule.c run the greedy variant with their own times
 * (verify/techniques/schedule.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt/kernels.h"
#include "opt/schedule.h"
#include "opt/train.h"
#include "ref/core/memory.h"
#include "ref/nn/compare.h"
#include "ref/schedule.h"
#include "ref/schedule_cost.h"
#include "verify/techniques/schedule.h"
#include "verify/techniques/logic.h"
#include "verify/techniques/spread.h"

static const char *const schedule_variants[] = {"greedy", "gradient", "train", NULL};

typedef struct schedule_state {
    int variant;
    int greedy_ranks;          /* greedy: the ranks scheduled for */
    const snapshot_seq *seq;   /* borrowed */
    comm *group;               /* the twin's ranks: the caller's, or `alone` */
    comm alone;                /* one rank without MPI (no collective is ever called on it) */
    int64_t groups;
    double *times;             /* [groups] linear-cost times */
    trainer ref, twin;
    int have_ref, have_twin;
    model_config config;       /* the trainers' */
    train_options options;
    schedule ref_schedule;     /* greedy: the reference's; train: the schedule both run */
    schedule twin_schedule[4]; /* greedy: the twin's; gradient: one per method */
    int64_t parameters;
    float *ref_gradient;       /* [parameters] */
    float *twin_gradient[4];   /* [parameters] */
    int twins;
    technique_twin twin_info[4];
} schedule_state;

int schedule_linear_times(const trainer *tr, const snapshot_seq *seq, double **times, int64_t *groups, tf_error *err)
{
    const train_schedule windows = trainer_schedule(tr);
    *groups = windows.windows;
    *times = NULL;
    int64_t *rows = tf_alloc((size_t)*groups, sizeof *rows, "group sizes", err);
    int64_t *edges = rows ? tf_alloc((size_t)*groups, sizeof *edges, "group sizes", err) : NULL;
    *times = edges ? tf_alloc((size_t)*groups, sizeof **times, "group times", err) : NULL;
    if (*times) {
        cost_model m;
        cost_model_parse(SCHEDULE_LINEAR_COST, &m, err);
        schedule_group_sizes(&windows, seq, rows, edges);
        for (int64_t k = 0; k < *groups; k++)
            (*times)[k] = cost_model_predict(&m, rows[k], edges[k]);
    }
    free(rows);
    free(edges);
    return *times ? TF_OK : TF_ERR_INPUT;
}

static int schedule_setup(const technique_context *context, const dataset *data, int variant, void **state, int *twins,
                          tf_error *err)
{
    if (data->kind != DATASET_SNAPSHOTS)
        return tf_error_set(err, TECHNIQUE_SKIP, "needs a snapshot sequence; %s is an event stream", data->name);
    schedule_state *s = tf_alloc(1, sizeof *s, "schedule technique", err);
    if (!(*state = s))
        return err->code;
    s->variant = variant;
    s->seq = &data->snapshots;
    s->alone = (comm){.rank = 0, .size = 1, .transport = COMM_MPI, .device = -1};
    s->group = context->group ? context->group : &s->alone;
    model_config config = {context->model ? *context->model : MODEL_TGCN, 0, SCHEDULE_HIDDEN, 0, 2, 0};
    train_options options;
    train_options_default(&options);
    options.window = SCHEDULE_WINDOW;
    options.stride = 1;
    options.epochs = SCHEDULE_EPOCHS;
    options.optimizer = OPTIMIZER_SGD; /* as verify/techniques/train.c, and for its reason */
    if (s->seq->num_snapshots < 3)
        return tf_error_set(err, TECHNIQUE_SKIP, "needs at least 3 snapshots to split; %s has %lld", data->name,
                            (long long)s->seq->num_snapshots);
    s->config = config;
    s->options = options;
    if (trainer_create(&s->ref, s->seq, &config, &options, err) != TF_OK)
        return err->code;
    s->have_ref = 1;
    if (schedule_linear_times(&s->ref, s->seq, &s->times, &s->groups, err) != TF_OK)
        return err->code;
    const int ranks = s->group->size;
    const train_schedule steps = trainer_schedule(&s->ref);
    if (variant == SCHEDULE_VARIANT_GREEDY) {
        const schedule_params *p = context->params;
        s->greedy_ranks = p ? p->ranks : GREEDY_RANKS;
        if (p) { /* the benchmark's times replace the data's windows */
            free(s->times);
            if (!(s->times = tf_alloc((size_t)p->groups, sizeof *s->times, "group times", err)))
                return err->code;
            memcpy(s->times, p->times, (size_t)p->groups * sizeof *s->times);
            s->groups = p->groups;
        }
        if (ref_schedule_greedy(&s->ref_schedule, s->times, s->groups, s->greedy_ranks, err) != TF_OK)
            return err->code;
        s->twin_info[0] = (technique_twin){"opt greedy", TECHNIQUE_BITWISE, 0};
        s->twins = 1;
    } else {
        if (trainer_create(&s->twin, s->seq, &config, &options, err) != TF_OK)
            return err->code;
        s->have_twin = 1;
        if (s->group == &s->alone)
            s->twin.model.kernels = &opt_kernels;
        else if (opt_trainer_parallel(&s->twin, s->group, err) != TF_OK)
            return err->code;
        ilp_options ilp = {1, 0.02};
        /* rank 0 decides every schedule and broadcasts it (opt_schedule_build) */
        train_schedule round_robin = steps;
        round_robin.batch = ranks;
        round_robin.steps = (round_robin.windows + ranks - 1) / ranks;
        if (variant == SCHEDULE_VARIANT_TRAIN) {
            if (opt_schedule_build(&s->ref_schedule, SCHEDULE_GREEDY, s->times, s->groups, s->group, 2, &round_robin, 0,
                                   &ilp, NULL, err) != TF_OK)
                return err->code;
            s->twin_info[0] = (technique_twin){"greedy on the ranks", TECHNIQUE_FP, TECHNIQUE_CPU_TOLERANCE};
            s->twins = 1;
        } else {
            s->parameters = parameters_size(&s->twin.model.parameters);
            if (!(s->ref_gradient = tf_alloc((size_t)s->parameters, sizeof(float), "gradient", err)))
                return err->code;
            static const char *const names[] = {"roundrobin", "lpt", "greedy", "ilp (1 s)"};
            /* the ILP first: on more windows than it takes the row is skipped, and the other three
             * schedules would be built for nothing (greedy's search on 1,440 windows is seconds) */
            for (int i = 0; i < 4; i++) {
                const int m = (SCHEDULE_ILP + i) % 4;
                const int built = opt_schedule_build(&s->twin_schedule[m], (schedule_method)m, s->times, s->groups,
                                                     s->group, 2, &round_robin, 0, &ilp, NULL, err);
                if (built == TF_ERR_INPUT && m == SCHEDULE_ILP) /* too large: the row says so, verify goes on */
                    return tf_error_set(err, TECHNIQUE_SKIP, "needs the ILP's schedule, and %lld windows on %d "
                                        "rank(s) are more than its size limit", (long long)s->groups, ranks);
                if (built != TF_OK || !(s->twin_gradient[m] = tf_alloc((size_t)s->parameters, sizeof(float),
                                                                       "gradient", err)))
                    return err->code;
                s->twin_info[m] = (technique_twin){names[m], TECHNIQUE_FP, TECHNIQUE_CPU_TOLERANCE};
            }
            s->twins = 4;
        }
    }
    *twins = s->twins;
    return TF_OK;
}

static const technique_twin *schedule_twin(const void *state, int index)
{
    return &((const schedule_state *)state)->twin_info[index];
}

static int64_t schedule_steps(const void *state)
{
    return ((const schedule_state *)state)->variant == SCHEDULE_VARIANT_TRAIN ? SCHEDULE_EPOCHS : 1;
}

/* The reference epoch gradient: every window in one process, loss scale 1, in id order, into
 * @p gradient [parameters] (a spread_step_fn too: the answer is the gradient). */
static int reference_gradient(const void *context, trainer *tr, const snapshot_seq *seq, int64_t step,
                              float *gradient, double *loss, tf_error *err)
{
    (void)context, (void)step;
    const train_schedule windows = trainer_schedule(tr);
    parameter_list *list = &tr->model.parameters;
    parameters_zero_grad(list);
    *loss = 0;
    for (int64_t k = 0; k < windows.windows; k++)
        if (trainer_train_window(tr, seq, &windows, k, 1.0f, loss, err) != TF_OK)
            return err->code;
    parameters_pack_gradients(list, gradient);
    parameters_zero_grad(list);
    return TF_OK;
}

/* logic_epoch_fn of the train variant: an epoch under the one schedule, of the reference (side 0)
 * or of the twin (side 1, on the ranks). */
static int logic_schedule_epoch(const void *context, trainer *tr, int side, tf_error *err)
{
    const schedule_state *s = context;
    epoch_report report;
    return side ? opt_schedule_epoch(tr, s->group, s->seq, &s->ref_schedule, NULL, &report, err)
                : ref_schedule_epoch(tr, s->seq, &s->ref_schedule, &report, err);
}

/* technique::logic: the gradient variant's twin computes its gradient again on the reference's
 * kernels (its parameters are the initial ones still); the train variant trains afresh. A schedule
 * sums its groups' windows on their ranks and then across them, another order than the
 * reference's, when there are several windows. */
static double schedule_logic(void *state, int twin, int corrupt, int *reordered, tf_error *err)
{
    schedule_state *s = state;
    *reordered = s->groups > 1;
    if (s->variant == SCHEDULE_VARIANT_TRAIN)
        return training_logic_differs(s->seq, &s->config, &s->options, s->group == &s->alone ? NULL : s->group,
                                      SCHEDULE_EPOCHS, corrupt, logic_schedule_epoch, s, err);
    float *gradient = tf_alloc((size_t)s->parameters, sizeof *gradient, "gradient", err);
    if (!gradient)
        return -1;
    s->twin.model.kernels = &ref_kernels;
    int status = opt_schedule_gradient(&s->twin, s->group, s->seq, &s->twin_schedule[twin], gradient, err);
    s->twin.model.kernels = &opt_kernels;
    if (corrupt)
        gradient[0] = technique_spoiled(gradient[0]);
    const double differing = s->group->rank == 0 ? (double)differing_values(gradient, s->ref_gradient, s->parameters)
                                                 : 0;
    free(gradient);
    return status == TF_OK ? differing : -1;
}

/* spread_step_fn of the train variant: an epoch under the schedule @p context, the parameters
 * the answer. */
static int reference_schedule_epoch(const void *context, trainer *tr, const snapshot_seq *seq, int64_t step,
                                    float *answer, double *loss, tf_error *err)
{
    (void)step;
    epoch_report report;
    if (ref_schedule_epoch(tr, seq, context, &report, err) != TF_OK)
        return err->code;
    *loss = report.train_loss;
    parameters_pack_values(&tr->model.parameters, answer);
    return TF_OK;
}

static double schedule_spread(void *state, int64_t steps, tf_error *err)
{
    const schedule_state *s = state;
    const int64_t size = parameters_size(&s->ref.model.parameters);
    if (s->variant == SCHEDULE_VARIANT_GRADIENT)
        return reference_spread(s->seq, &s->config, &s->options, steps, size, reference_gradient, NULL, err);
    return reference_spread(s->seq, &s->config, &s->options, steps, size, reference_schedule_epoch, &s->ref_schedule,
                            err);
}

static int schedule_run_ref(void *state, int64_t step, tf_error *err)
{
    schedule_state *s = state;
    epoch_report report;
    switch (s->variant) {
    case SCHEDULE_VARIANT_GREEDY:
        schedule_free(&s->ref_schedule);
        return ref_schedule_greedy(&s->ref_schedule, s->times, s->groups, s->greedy_ranks, err);
    case SCHEDULE_VARIANT_GRADIENT:
        if (reference_gradient(NULL, &s->ref, s->seq, 0, s->ref_gradient, &(double){0}, err) != TF_OK)
            return err->code;
        return technique_reference_finite(s->ref_gradient, s->parameters, "gradient", step, err);
    default:
        if (ref_schedule_epoch(&s->ref, s->seq, &s->ref_schedule, &report, err) != TF_OK)
            return err->code;
        return technique_reference_parameters_finite(&s->ref.model.parameters, step, err);
    }
}

static int schedule_run_twin(void *state, int twin, int64_t step, tf_error *err)
{
    (void)step;
    schedule_state *s = state;
    epoch_report report;
    switch (s->variant) {
    case SCHEDULE_VARIANT_GREEDY:
        schedule_free(&s->twin_schedule[0]);
        return opt_schedule_greedy(&s->twin_schedule[0], s->times, s->groups, s->greedy_ranks, err);
    case SCHEDULE_VARIANT_GRADIENT:
        return opt_schedule_gradient(&s->twin, s->group, s->seq, &s->twin_schedule[twin], s->twin_gradient[twin], err);
    default:
        return opt_schedule_epoch(&s->twin, s->group, s->seq, &s->ref_schedule, NULL, &report, err);
    }
}

static double schedule_compare(void *state, int twin, int64_t step)
{
    (void)step;
    const schedule_state *s = state;
    if (s->variant == SCHEDULE_VARIANT_GREEDY) {
        const schedule *a = &s->ref_schedule, *b = &s->twin_schedule[0];
        double differing = a->iterations != b->iterations;
        for (int64_t k = 0; k < a->groups; k++)
            differing += (a->iteration[k] != b->iteration[k]) + (a->rank[k] != b->rank[k]);
        return differing;
    }
    if (s->variant == SCHEDULE_VARIANT_GRADIENT)
        return relative_error(s->twin_gradient[twin], s->ref_gradient, s->parameters);
    return parameters_relative_error(&s->twin.model.parameters, &s->ref.model.parameters);
}

static void schedule_corrupt(void *state, int twin)
{
    schedule_state *s = state;
    if (s->variant == SCHEDULE_VARIANT_GREEDY)
        s->twin_schedule[0].rank[0] = (s->twin_schedule[0].rank[0] + 1) % s->greedy_ranks;
    else if (s->variant == SCHEDULE_VARIANT_GRADIENT)
        s->twin_gradient[twin][0] = technique_spoiled(s->twin_gradient[twin][0]);
    else
        s->twin.model.parameters.items[0].value.data[0] =
            technique_spoiled(s->twin.model.parameters.items[0].value.data[0]);
}

/* Ready to run again: a greedy or gradient run starts from nothing it changed; training starts
 * again from the initial parameters (the engine restarts only one-process runs). */
static int schedule_restart(void *state, int twin, tf_error *err)
{
    (void)twin;
    schedule_state *s = state;
    if (s->variant != SCHEDULE_VARIANT_TRAIN)
        return TF_OK;
    trainer_free(&s->twin);
    s->have_twin = 0;
    if (trainer_create(&s->twin, s->seq, &s->config, &s->options, err) != TF_OK)
        return err->code;
    s->have_twin = 1;
    s->twin.model.kernels = &opt_kernels;
    return TF_OK;
}

static double schedule_work(const void *state, const char **unit)
{
    const schedule_state *s = state;
    if (s->variant == SCHEDULE_VARIANT_TRAIN) {
        *unit = "snapshots trained";
        return (double)(s->ref.train_snapshots * SCHEDULE_EPOCHS);
    }
    *unit = s->variant == SCHEDULE_VARIANT_GREEDY ? "groups scheduled" : "windows";
    return (double)s->groups;
}

static void schedule_describe(const void *state, const double *seconds, char *text, size_t size)
{
    (void)seconds;
    const schedule_state *s = state;
    schedule_cost cost;
    if (s->variant == SCHEDULE_VARIANT_GREEDY) {
        schedule_evaluate(&s->twin_schedule[0], s->times, 0, &cost);
        snprintf(text, size, "%lld groups on %d ranks: %lld iterations, %.1f %% above the lower bound",
                 (long long)s->groups, s->greedy_ranks, (long long)s->twin_schedule[0].iterations,
                 100 * (cost.critical_path / cost.lower_bound - 1));
    } else if (s->variant == SCHEDULE_VARIANT_GRADIENT) {
        snprintf(text, size, "%lld windows on %d rank(s); iterations rr %lld, lpt %lld, greedy %lld, ilp %lld",
                 (long long)s->groups, s->group->size, (long long)s->twin_schedule[0].iterations,
                 (long long)s->twin_schedule[1].iterations, (long long)s->twin_schedule[2].iterations,
                 (long long)s->twin_schedule[3].iterations);
    } else {
        snprintf(text, size, "%d epochs, %lld greedy iterations on %d rank(s)", SCHEDULE_EPOCHS,
                 (long long)s->ref_schedule.iterations, s->group->size);
    }
}

static void schedule_teardown(void *state)
{
    schedule_state *s = state;
    if (!s)
        return;
    if (s->have_ref)
        trainer_free(&s->ref);
    if (s->have_twin)
        trainer_free(&s->twin);
    schedule_free(&s->ref_schedule);
    for (int m = 0; m < 4; m++) {
        schedule_free(&s->twin_schedule[m]);
        free(s->twin_gradient[m]);
    }
    free(s->ref_gradient);
    free(s->times);
    free(s);
}
static const technique_case schedule_demo[] = {
    {SCHEDULE_VARIANT_GREEDY, "twitter_tennis", "twitter_tennis"},
    {SCHEDULE_VARIANT_GRADIENT, "england_covid", "england_covid"},
    {SCHEDULE_VARIANT_TRAIN, "england_covid", "england_covid"},
    {0, NULL, NULL},
};

const technique technique_schedule = {
    .name = "schedule",
    .stem = "schedule",
    .chapter = "07",
    .title = "DyGNeX schedule",
    .needs = "a snapshot sequence",
    .variants = schedule_variants,
    .distributed = 1,
    .demo = schedule_demo,
    .models = TECHNIQUE_ON_MODEL,
    .setup = schedule_setup,
    .twin = schedule_twin,
    .steps = schedule_steps,
    .run_ref = schedule_run_ref,
    .run_twin = schedule_run_twin,
    .compare = schedule_compare,
    .corrupt = schedule_corrupt,
    .logic = schedule_logic,
    .spread = schedule_spread,
    .restart = schedule_restart,
    .work = schedule_work,
    .describe = schedule_describe,
    .teardown = schedule_teardown,
};
