/* DyGNeX schedules (chapter 07) in the technique table, and their benchmark.
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
 *    after each epoch: fp. Work = snapshots trained.
 * The model is T-GCN with hidden 8, windows of 4 with stride 1 over the default split: small,
 * so the table's test runs under Valgrind. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/technique.h"
#include "opt/kernels.h"
#include "opt/schedule.h"
#include "opt/schedule_simulate.h"
#include "opt/train.h"
#include "ref/core/clock.h"
#include "ref/nn/compare.h"
#include "ref/core/memory.h"
#include "ref/schedule.h"
#include "ref/schedule_cost.h"

static const char *const schedule_variants[] = {"greedy", "gradient", "train", NULL};
enum { VARIANT_GREEDY, VARIANT_GRADIENT, VARIANT_TRAIN };

enum { SCHEDULE_WINDOW = 4, SCHEDULE_HIDDEN = 8, SCHEDULE_EPOCHS = 2, GREEDY_RANKS = 4 };
static const char *const linear_cost = "linear:1e-6,1e-7,1e-4";

/* What a benchmark may set (technique_context::params) for the greedy variant: its own times and
 * rank count instead of the data's windows on 4 ranks. NULL: the defaults. */
typedef struct schedule_params {
    const double *times;  /* [groups] */
    int64_t groups;
    int ranks;
} schedule_params;

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

/* The windows' linear-cost times of a trainer. */
static int window_times(schedule_state *s, const trainer *tr, tf_error *err)
{
    const train_schedule windows = trainer_schedule(tr);
    s->groups = windows.windows;
    int64_t *rows = tf_alloc((size_t)s->groups, sizeof *rows, "group sizes", err);
    int64_t *edges = rows ? tf_alloc((size_t)s->groups, sizeof *edges, "group sizes", err) : NULL;
    s->times = edges ? tf_alloc((size_t)s->groups, sizeof *s->times, "group times", err) : NULL;
    if (s->times) {
        cost_model m;
        cost_model_parse(linear_cost, &m, err);
        schedule_group_sizes(&windows, s->seq, rows, edges);
        for (int64_t k = 0; k < s->groups; k++)
            s->times[k] = cost_model_predict(&m, rows[k], edges[k]);
    }
    free(rows);
    free(edges);
    return s->times ? TF_OK : TF_ERR_INPUT;
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
    model_config config = {MODEL_TGCN, 0, SCHEDULE_HIDDEN, 0, 2};
    train_options options;
    train_options_default(&options);
    options.window = SCHEDULE_WINDOW;
    options.stride = 1;
    options.epochs = SCHEDULE_EPOCHS;
    if (s->seq->num_snapshots < 3)
        return tf_error_set(err, TECHNIQUE_SKIP, "needs at least 3 snapshots to split; %s has %lld", data->name,
                            (long long)s->seq->num_snapshots);
    s->config = config;
    s->options = options;
    if (trainer_create(&s->ref, s->seq, &config, &options, err) != TF_OK)
        return err->code;
    s->have_ref = 1;
    if (window_times(s, &s->ref, err) != TF_OK)
        return err->code;
    const int ranks = s->group->size;
    const train_schedule steps = trainer_schedule(&s->ref);
    if (variant == VARIANT_GREEDY) {
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
        if (variant == VARIANT_TRAIN) {
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
            for (int m = 0; m < 4; m++) {
                if (opt_schedule_build(&s->twin_schedule[m], (schedule_method)m, s->times, s->groups, s->group, 2,
                                       &round_robin, 0, &ilp, NULL, err) != TF_OK ||
                    !(s->twin_gradient[m] = tf_alloc((size_t)s->parameters, sizeof(float), "gradient", err)))
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
    return ((const schedule_state *)state)->variant == VARIANT_TRAIN ? SCHEDULE_EPOCHS : 1;
}

/* The reference epoch gradient: every window in one process, loss scale 1, in id order. */
static int reference_gradient(schedule_state *s, tf_error *err)
{
    const train_schedule windows = trainer_schedule(&s->ref);
    parameter_list *list = &s->ref.model.parameters;
    parameters_zero_grad(list);
    double loss = 0;
    for (int64_t k = 0; k < windows.windows; k++)
        if (trainer_train_window(&s->ref, s->seq, &windows, k, 1.0f, &loss, err) != TF_OK)
            return err->code;
    for (int64_t p = 0, at = 0; p < list->count; p++)
        for (int64_t v = 0; v < list->items[p].grad.size; v++)
            s->ref_gradient[at++] = list->items[p].grad.data[v];
    parameters_zero_grad(list);
    return TF_OK;
}

static int schedule_run_ref(void *state, int64_t step, tf_error *err)
{
    (void)step;
    schedule_state *s = state;
    epoch_report report;
    switch (s->variant) {
    case VARIANT_GREEDY:
        schedule_free(&s->ref_schedule);
        return ref_schedule_greedy(&s->ref_schedule, s->times, s->groups, s->greedy_ranks, err);
    case VARIANT_GRADIENT:
        return reference_gradient(s, err);
    default:
        return ref_schedule_epoch(&s->ref, s->seq, &s->ref_schedule, &report, err);
    }
}

static int schedule_run_twin(void *state, int twin, int64_t step, tf_error *err)
{
    (void)step;
    schedule_state *s = state;
    epoch_report report;
    switch (s->variant) {
    case VARIANT_GREEDY:
        schedule_free(&s->twin_schedule[0]);
        return opt_schedule_greedy(&s->twin_schedule[0], s->times, s->groups, s->greedy_ranks, err);
    case VARIANT_GRADIENT:
        return opt_schedule_gradient(&s->twin, s->group, s->seq, &s->twin_schedule[twin], s->twin_gradient[twin], err);
    default:
        return opt_schedule_epoch(&s->twin, s->group, s->seq, &s->ref_schedule, NULL, &report, err);
    }
}

static double schedule_compare(void *state, int twin, int64_t step)
{
    (void)step;
    const schedule_state *s = state;
    if (s->variant == VARIANT_GREEDY) {
        const schedule *a = &s->ref_schedule, *b = &s->twin_schedule[0];
        double differing = a->iterations != b->iterations;
        for (int64_t k = 0; k < a->groups; k++)
            differing += (a->iteration[k] != b->iteration[k]) + (a->rank[k] != b->rank[k]);
        return differing;
    }
    if (s->variant == VARIANT_GRADIENT)
        return relative_error(s->twin_gradient[twin], s->ref_gradient, s->parameters);
    const parameter_list *ref = &s->ref.model.parameters, *ours = &s->twin.model.parameters;
    double worst = 0;
    for (int64_t i = 0; i < ref->count; i++)
        worst = fmax(worst, relative_error(ours->items[i].value.data, ref->items[i].value.data,
                                           ref->items[i].value.size));
    return worst;
}

static void schedule_corrupt(void *state, int twin)
{
    schedule_state *s = state;
    if (s->variant == VARIANT_GREEDY)
        s->twin_schedule[0].rank[0] = (s->twin_schedule[0].rank[0] + 1) % s->greedy_ranks;
    else if (s->variant == VARIANT_GRADIENT)
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
    if (s->variant != VARIANT_TRAIN)
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
    if (s->variant == VARIANT_TRAIN) {
        *unit = "snapshots trained";
        return (double)(s->ref.train_snapshots * SCHEDULE_EPOCHS);
    }
    *unit = s->variant == VARIANT_GREEDY ? "groups scheduled" : "windows";
    return (double)s->groups;
}

static void schedule_describe(const void *state, const double *seconds, char *text, size_t size)
{
    (void)seconds;
    const schedule_state *s = state;
    schedule_cost cost;
    if (s->variant == VARIANT_GREEDY) {
        schedule_evaluate(&s->twin_schedule[0], s->times, 0, &cost);
        snprintf(text, size, "%lld groups on %d ranks: %lld iterations, %.1f %% above the lower bound",
                 (long long)s->groups, s->greedy_ranks, (long long)s->twin_schedule[0].iterations,
                 100 * (cost.critical_path / cost.lower_bound - 1));
    } else if (s->variant == VARIANT_GRADIENT) {
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

/* ---- the benchmark ------------------------------------------------------------------------------- */

extern const technique technique_schedule;

/* The linear cost every predicted number of the benchmark uses (seconds per row, edge, group). */
static const cost_model bench_cost = {1e-6, 1e-7, 1e-4, 0, 0, 1};

/* Window times (window 4, stride 1) of a dataset's snapshot sizes cycled to `snapshots`. */
static int cycled_times(const dataset *d, int64_t snapshots, double **times, int64_t *groups, tf_error *err)
{
    int64_t *nodes, *edges;
    if (schedule_sizes_cycle(&d->snapshots, snapshots, &nodes, &edges, err) != TF_OK)
        return TF_ERR_INPUT;
    int status = schedule_window_times(nodes, edges, snapshots, SCHEDULE_WINDOW, 1, &bench_cost, times, groups, err);
    free(nodes);
    free(edges);
    return status;
}

static FILE *open_csv(const benchmark_options *o, const char *name, const char *header, tf_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", o->out, name);
    FILE *f = fopen(path, "w");
    if (!f)
        tf_error_set(err, TF_ERR_INPUT, "bench schedule: cannot write %s", path);
    else
        fprintf(f, "%s\n", header);
    return f;
}

/* 1. DyGNeX-G's solve time against the number of groups, ref and opt, validated bitwise first by the
 * engine (greedy variant with the benchmark's times). Table 5 beside it. */
static int greedy_times(const benchmark_options *o, const dataset *tennis, FILE *csv, tf_error *err)
{
    static const int64_t sizes[] = {50, 100, 300, 1000, 3000};
    static const char *const table5[] = {"< 0.001", "0.0041", "0.0183", "0.162", "1.297"};
    const int count = o->quick ? 3 : 5;
    int wrong = 0;
    printf("\n1. DyGNeX-G solve time, G = 4; times: twitter_tennis's snapshot sizes cycled, windows of 4, the linear "
           "cost (ref one thread, opt %d thread(s), best of %d)\n", o->threads, o->repeats);
    printf("%8s %12s %12s %8s %10s  %s\n", "groups", "ref s", "opt s", "ref/opt", "Table 5 s", "check");
    for (int k = 0; k < count; k++) {
        double *times;
        int64_t groups;
        if (cycled_times(tennis, sizes[k], &times, &groups, err) != TF_OK)
            return -1;
        schedule_params params = {times, groups, 4};
        engine_options engine = {.timed = 1, .repeats = o->repeats, .threads = o->threads};
        engine_result r;
        int status = engine_run(&technique_schedule, tennis, &params, VARIANT_GREEDY, &engine, &r, err);
        free(times);
        if (status != TF_OK)
            return -1;
        wrong += r.wrong != 0;
        printf("%8lld %12.4g %12.4g %8.2f %10s  %s\n", (long long)groups, r.seconds[0], r.seconds[1],
               r.seconds[1] > 0 ? r.seconds[0] / r.seconds[1] : NAN, table5[k], r.wrong ? "WRONG" : "bitwise equal");
        fprintf(csv, "%lld,%g,%g,%s,%d\n", (long long)groups, r.seconds[0], r.seconds[1], table5[k], r.wrong != 0);
    }
    return wrong;
}

/* 2. DyGNeX-L's solve time against the number of groups (gap 2 %, Table 6's row), validated. */
static int ilp_times(const benchmark_options *o, const dataset *tennis, FILE *csv, tf_error *err)
{
    static const int64_t sizes[] = {10, 20, 30, 40, 50, 60, 80, 100};
    static const char *const table6[] = {"0.51", "0.60", "1.93", "2.63", "3.47", "5.36", "11.16", "23.02"};
    const int count = o->quick ? 3 : 8;
    const double limit = o->quick ? 5 : 30;
    printf("\n2. DyGNeX-L (GLPK) solve time, G = 4, gap 2 %%, limit %g s; the same times\n", limit);
    printf("%8s %10s %-12s %9s %14s %12s %10s\n", "groups", "seconds", "status", "gap", "below greedy", "columns",
           "Table 6 s");
    for (int k = 0; k < count; k++) {
        double *times;
        int64_t groups;
        if (cycled_times(tennis, sizes[k], &times, &groups, err) != TF_OK)
            return -1;
        schedule s;
        ilp_options ilp = {limit, 0.02};
        ilp_report report;
        int status = opt_schedule_ilp(&s, times, groups, 4, 2, 0, &ilp, &report, err);
        free(times);
        if (status != TF_OK)
            return -1;
        status = schedule_validate(&s, err);
        schedule_free(&s);
        if (status != TF_OK)
            return -1;
        const double gain = 1 - report.objective / report.start_objective;
        printf("%8lld %10.3f %-12s %8.2f%% %13.2f%% %12lld %10s\n", (long long)groups, report.seconds, report.status,
               100 * report.gap, 100 * gain, (long long)report.columns, table6[k]);
        fprintf(csv, "%lld,%g,%s,%g,%g,%lld,%s\n", (long long)groups, report.seconds, report.status, report.gap, gain,
                (long long)report.columns, table6[k]);
    }
    return 0;
}

/* 3. Every method's gap to the lower bound on real and generated data, predicted. */
static int bound_gaps(const benchmark_options *o, FILE *csv, tf_error *err)
{
    static const char *const data[] = {"twitter_tennis", "england_covid",
                                       "powerlaw:nodes=2000,edges=20000,snapshots=64,growth=8"};
    static const char *const labels[] = {"twitter_tennis", "england_covid", "powerlaw growth=8"};
    const double limit = o->quick ? 2 : 10;
    printf("\n3. gap to the lower bound max(t_max, sum t / G), predicted with the linear cost; windows of 4, stride 1 "
           "over 80 %% of the snapshots; ILP %g s, gap 2 %%\n", limit);
    printf("%-18s %6s %3s %-11s %10s %12s %10s %10s\n", "data", "groups", "G", "method", "iterations", "gap to LB",
           "imbalance", "efficiency");
    for (int d = 0; d < 3; d++) {
        dataset set;
        if (dataset_load(data[d], NULL, &set, err) != TF_OK)
            return -1;
        train_options options;
        train_options_default(&options);
        options.window = SCHEDULE_WINDOW;
        options.stride = 1;
        model_config config = {MODEL_TGCN, 0, SCHEDULE_HIDDEN, 0, 2};
        trainer tr;
        schedule_state windows = {.seq = &set.snapshots};
        int status = trainer_create(&tr, &set.snapshots, &config, &options, err);
        if (status == TF_OK) {
            status = window_times(&windows, &tr, err);
            const train_schedule steps = trainer_schedule(&tr);
            for (int ranks = 2; status == TF_OK && ranks <= 4; ranks++)
                for (int m = SCHEDULE_ROUNDROBIN; status == TF_OK && m <= SCHEDULE_ILP; m++) {
                    train_schedule round_robin = steps;
                    round_robin.batch = ranks;
                    round_robin.steps = (steps.windows + ranks - 1) / ranks;
                    ilp_options ilp = {limit, 0.02};
                    schedule s;
                    status = opt_schedule_compute(&s, (schedule_method)m, windows.times, windows.groups, ranks, 2,
                                                  &round_robin, 0, &ilp, NULL, err);
                    if (status != TF_OK)
                        break;
                    status = schedule_validate(&s, err);
                    schedule_cost cost;
                    schedule_evaluate(&s, windows.times, 0, &cost);
                    const double gap = cost.critical_path / cost.lower_bound - 1;
                    printf("%-18s %6lld %3d %-11s %10lld %11.2f%% %10.4f %10.4f\n", labels[d], (long long)windows.groups,
                           ranks, schedule_method_name((schedule_method)m), (long long)s.iterations, 100 * gap,
                           cost.imbalance, cost.efficiency);
                    fprintf(csv, "%s,%lld,%d,%s,%lld,%g,%g,%g\n", labels[d], (long long)windows.groups, ranks,
                            schedule_method_name((schedule_method)m), (long long)s.iterations, gap, cost.imbalance,
                            cost.efficiency);
                    schedule_free(&s);
                }
            trainer_free(&tr);
        }
        free(windows.times);
        dataset_free(&set);
        if (status != TF_OK)
            return -1;
    }
    return 0;
}

/* 4. The simulator at 4 .. 1024 ranks. */
static int simulation(const benchmark_options *o, const dataset *tennis, FILE *csv, tf_error *err)
{
    static const int ranks[] = {4, 16, 64, 128, 256, 512, 1024};
    const int64_t snapshots = o->quick ? 512 : 4096;
    double *times;
    int64_t groups;
    if (cycled_times(tennis, snapshots, &times, &groups, err) != TF_OK)
        return -1;
    printf("\n4. simulation: twitter_tennis's snapshot sizes cycled to %lld snapshots, windows of 4: %lld groups, the "
           "linear cost, alpha 0 (opt greedy on %d thread(s))\n", (long long)snapshots, (long long)groups, o->threads);
    printf("%6s %12s %-11s %10s %10s %10s %9s\n", "ranks", "groups/rank", "method", "iterations", "efficiency",
           "imbalance", "solve s");
    int status = TF_OK;
    for (int k = 0; status == TF_OK && k < 7; k++) {
        simulation_row *rows;
        status = opt_schedule_simulate(times, groups, &ranks[k], 1, &rows, err);
        for (int m = 0; status == TF_OK && m < 3; m++) {
            const simulation_row *r = &rows[m];
            printf("%6d %12.2f %-11s %10lld %10.4f %10.4f %9.3f\n", r->ranks, (double)groups / r->ranks,
                   schedule_method_name(r->method), (long long)r->iterations, r->efficiency, r->imbalance,
                   r->solve_seconds);
            fprintf(csv, "%d,%s,%lld,%lld,%g,%g,%g\n", r->ranks, schedule_method_name(r->method), (long long)groups,
                    (long long)r->iterations, r->efficiency, r->imbalance, r->solve_seconds);
            fflush(stdout);
        }
        if (status == TF_OK)
            free(rows);
    }
    free(times);
    return status == TF_OK ? 0 : -1;
}

static int schedule_benchmark(const benchmark_options *o, tf_error *err)
{
    opt_set_threads(o->threads);
    dataset tennis;
    if (dataset_load("twitter_tennis", NULL, &tennis, err) != TF_OK)
        return -1;
    static const char *const names[4] = {"greedy_time.csv", "ilp_time.csv", "lower_bound.csv", "simulate.csv"};
    static const char *const headers[4] = {
        "groups,ref_seconds,opt_seconds,table5_seconds,wrong",
        "groups,seconds,status,gap,below_greedy,columns,table6_seconds",
        "data,groups,ranks,method,iterations,gap_to_bound,imbalance,efficiency",
        "ranks,method,groups,iterations,efficiency,imbalance,solve_seconds"};
    FILE *csv[4] = {NULL, NULL, NULL, NULL};
    int outcome = 0;
    for (int k = 0; k < 4 && outcome == 0; k++)
        if (!(csv[k] = open_csv(o, names[k], headers[k], err)))
            outcome = -1;
    int wrong = 0;
    if (outcome == 0)
        outcome = wrong = greedy_times(o, &tennis, csv[0], err);
    if (outcome >= 0)
        outcome = ilp_times(o, &tennis, csv[1], err);
    if (outcome >= 0)
        outcome = bound_gaps(o, csv[2], err);
    if (outcome >= 0)
        outcome = simulation(o, &tennis, csv[3], err);
    for (int k = 0; k < 4; k++)
        if (csv[k])
            fclose(csv[k]);
    dataset_free(&tennis);
    if (outcome >= 0)
        printf("\nCSV in %s: %s, %s, %s, %s\n", o->out, names[0], names[1], names[2], names[3]);
    return outcome < 0 ? -1 : wrong;
}

static const technique_case schedule_demo[] = {
    {VARIANT_GREEDY, "twitter_tennis", "twitter_tennis"},
    {VARIANT_GRADIENT, "england_covid", "england_covid"},
    {VARIANT_TRAIN, "england_covid", "england_covid"},
    {0, NULL, NULL},
};

const technique technique_schedule = {
    .name = "schedule",
    .chapter = "07",
    .title = "DyGNeX schedule",
    .needs = "a snapshot sequence",
    .variants = schedule_variants,
    .distributed = 1,
    .demo = schedule_demo,
    .setup = schedule_setup,
    .twin = schedule_twin,
    .steps = schedule_steps,
    .run_ref = schedule_run_ref,
    .run_twin = schedule_run_twin,
    .compare = schedule_compare,
    .corrupt = schedule_corrupt,
    .restart = schedule_restart,
    .work = schedule_work,
    .describe = schedule_describe,
    .teardown = schedule_teardown,
    .benchmark = schedule_benchmark,
};
