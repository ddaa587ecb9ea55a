/* twofold schedule: DyGNeX schedules of a dataset's training windows (or of given times) for R
 * ranks: every method's predicted cost beside the lower bound; with --run, measured on the
 * ranks; with --simulate, replayed at 4 .. 1024 ranks with the cost model. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/dataset.h"
#include "opt/cli/cli.h"
#include "opt/cli/commands.h"
#include "opt/schedule.h"
#include "opt/schedule_simulate.h"
#include "opt/train.h"
#include "ref/core/clock.h"
#include "ref/core/io.h"
#include "ref/core/memory.h"
#include "ref/schedule_cost.h"

/* Parsed command line. */
typedef struct schedule_command {
    const char *data, *times_text, *cost_text, *gantt, *sim_ranks_text;
    int64_t ranks, per_rank, batch, repeats, epochs, snapshots;
    int method;                /* a schedule_method, or -1: all */
    int methods[4], method_count;
    int run, simulate, print_schedule;
    double alpha;
    ilp_options ilp;
    model_config config;
    train_options options;
} schedule_command;

static const option_choice methods[] = {{"roundrobin", SCHEDULE_ROUNDROBIN}, {"lpt", SCHEDULE_LPT},
                                        {"greedy", SCHEDULE_GREEDY},         {"ilp", SCHEDULE_ILP},
                                        {"all", -1},                         {NULL, 0}};

#define AT(member) OPTION_FIELD(schedule_command, member)


/* The most seconds the groups' times may sum to: 1e9 s is 31 years of training windows. Beyond it
 * the sums of a schedule's cost (imbalance, critical path) lose meaning, and past 1.8e308 they
 * are infinite. */
#define TIMES_TOTAL_MAX 1e9

static const option_spec schedule_options[] = {
    {"--data", OPTION_TEXT, AT(data), .value_name = "D",
     .help = "a snapshot sequence whose training windows are the groups"},
    {"--times", OPTION_TEXT, AT(times_text), .value_name = "T1,T2,...", .help = "the groups' times instead"},
    {"--ranks", OPTION_WHOLE, AT(ranks), .min = 1, .max = 1 << 20, .required = 1, .value_name = "R",
     .help = "ranks to schedule on"},
    {"--method", OPTION_CHOICE, AT(method), .choices = methods, .value_name = "M",
     .help = "roundrobin, lpt, greedy, ilp or all (default all; greedy takes at most\n"
             "4096 groups: its time grows with their cube)"},
    {"--per-rank", OPTION_WHOLE, AT(per_rank), .min = 1, .max = 64, .value_name = "L",
     .help = "groups per rank and iteration (default 2; greedy needs 2)"},
    {"--batch", OPTION_WHOLE, AT(batch), .min = 1, .max = INT32_MAX, .value_name = "B",
     .help = "roundrobin's windows per step (default R: one per rank)"},
    {"--alpha", OPTION_NUMBER, AT(alpha), .low = 0, .high = 1e6, .ends = OPTION_HIGH_OPEN, .value_name = "S",
     .help = "seconds per gradient all-reduce in the objective (default 0;\n--run measures it)"},
    {"--ilp-seconds", OPTION_NUMBER, AT(ilp.seconds), .low = 1e-3, .high = 86400, .value_name = "S",
     .help = "ILP time limit (default 10)"},
    {"--ilp-gap", OPTION_NUMBER, AT(ilp.gap), .low = 0, .high = 1, .ends = OPTION_HIGH_OPEN, .value_name = "G",
     .help = "ILP relative gap at which to stop, in [0, 1) (default 0.02)"},
    {"--print-schedule", OPTION_FLAG, AT(print_schedule), .help = "print each schedule: iteration by rank, the groups"},
    {"--gantt", OPTION_TEXT, AT(gantt), .value_name = "FILE",
     .help = "write method,iteration,rank,group,start,end (predicted) as CSV"},
    {"", OPTION_SECTION, .help = "\nWith --data (a snapshot sequence):"},
    {"--model", OPTION_CHOICE, AT(config.kind), .choices = snapshot_model_choices, .configures = "--data",
     .value_name = "M",
     .help = "the model whose training windows are the groups (default tgcn)"},
    {"--hidden", OPTION_WHOLE, AT(config.hidden), .min = 1, .max = 65536, .configures = "--data", .value_name = "H",
     .help = "its state width (default 32)"},
    {"--window", OPTION_WHOLE, AT(options.window), .min = 1, .max = INT32_MAX, .configures = "--data",
     .value_name = "W",
     .help = "snapshots per window (default 4)"},
    {"--stride", OPTION_WHOLE, AT(options.stride), .min = 1, .max = INT32_MAX, .configures = "--data",
     .value_name = "S",
     .help = "snapshots between window starts (default 1)"},
    {"--train-ratio", OPTION_NUMBER, AT(options.train_ratio), .low = 0, .high = 1,
     .ends = OPTION_LOW_OPEN | OPTION_HIGH_OPEN, .configures = "--data", .value_name = "X",
     .help = "fraction of snapshots for training (default 0.8)"},
    {"--seed", OPTION_WHOLE, AT(options.seed), .min = 0, .max = INT64_MAX, .configures = "--data", .value_name = "N",
     .help = "initial parameters (default 1)"},
    {"--cost", OPTION_PARSED, AT(cost_text), .parse = cli_parse_cost, .expected = CLI_COST_EXPECTED,
     .value_name = "C",
     .help = "measured (default: each window timed by thread CPU time, median of\n"
             "--repeats K runs on the ranks of this run) or\n"
             "linear:A,B,C (t = A rows + B edges + C, deterministic)"},
    {"--repeats", OPTION_WHOLE, AT(repeats), .min = 1, .max = 1000, .configures = "--data", .value_name = "K",
     .help = "measured runs per window (default 3)"},
    {"--run", OPTION_FLAG, AT(run),
     .help = "train --epochs E under each schedule on the ranks (start\n"
             "with mpiexec -n R) and print measured busy imbalance, critical path\n"
             "and efficiency beside the predicted"},
    {"--epochs", OPTION_WHOLE, AT(epochs), .min = 1, .max = 1000000, .configures = "--run", .value_name = "E",
     .help = "with --run: epochs under each schedule (default 3)"},
    {"--simulate", OPTION_FLAG, AT(simulate),
     .help = "replay round-robin, LPT and greedy with the cost model on the data's\n"
             "snapshot sizes cycled to --snapshots T at --sim-ranks LIST"},
    {"--snapshots", OPTION_WHOLE, AT(snapshots), .min = 1, .max = 100000000, .configures = "--simulate",
     .value_name = "T",
     .help = "with --simulate: snapshots to cycle to (default 4096; their windows\n"
             "at most 4096 groups, as greedy's time grows with their cube)"},
    {"--sim-ranks", OPTION_TEXT, AT(sim_ranks_text), .configures = "--simulate", .value_name = "LIST",
     .help = "with --simulate: rank counts (default 4,16,64,128,256,512,1024)"},
    {.name = NULL},
};

static const option_page schedule_pages[] = {
    {0, 21,
     "usage: twofold schedule (--data D | --times T1,T2,...) --ranks R [options]\n"
     "\n"
     "Schedule the training windows of D (or groups of the given times) on R ranks, at most L\n"
     "per rank and iteration, minimizing sum_i (max_j load_ij + alpha) (DyGNeX, Eq. 4-5). Prints\n"
     "the group times' cost model, then one row per method: iterations, critical path\n"
     "sum_i max_j load_ij, objective, gap to the lower bound max(t_max, sum t / R), the predicted\n"
     "imbalance (busiest rank's total / idlest's) and efficiency sum t / (R x critical path).\n"
     "\n",
     "\n" EXIT_STATUS_HELP},
    {0, 0, NULL, NULL},
};

static const option_table schedule_table = {.command = "schedule", .options = schedule_options, .pages = schedule_pages};

static void schedule_command_default(schedule_command *c)
{
    memset(c, 0, sizeof *c);
    c->method = -1;
    c->per_rank = 2;
    c->repeats = 3;
    c->epochs = 3;
    c->snapshots = 4096;
    c->cost_text = "measured";
    c->sim_ranks_text = "4,16,64,128,256,512,1024";
    ilp_options_default(&c->ilp);
    train_options_default(&c->options);
    c->options.window = 4;
    c->options.stride = 1;
    c->config.kind = MODEL_TGCN;
    c->config.hidden = 32;
    c->config.chebyshev_k = 2;
}

/* The rules between options the table cannot state. */
static int check_command(const schedule_command *c, const option_parse *parsed, tf_error *err)
{
    if (!c->data == !c->times_text)
        return tf_error_set(err, TF_ERR_INPUT, c->data ? "schedule: --data and --times exclude each other"
                                                       : "schedule: --data or --times is required (see twofold "
                                                         "schedule --help)");
    if (c->times_text && options_given(&schedule_table, parsed, "--cost"))
        return tf_error_set(err, TF_ERR_INPUT, "schedule: --cost sets the times of --data's windows; --times gives them");
    if (c->times_text && (c->run || c->simulate))
        return tf_error_set(err, TF_ERR_INPUT, "schedule: %s: give --data", c->run ? "--run trains on data"
                                                                                   : "--simulate cycles a dataset's "
                                                                                     "snapshot sizes");
    if (c->batch && !(c->method < 0 || c->method == SCHEDULE_ROUNDROBIN))
        return tf_error_set(err, TF_ERR_INPUT, "schedule: --batch sets round-robin's steps; --method %s decides its own",
                            schedule_method_name((schedule_method)c->method));
    const int ilp_given = options_given(&schedule_table, parsed, "--ilp-seconds") ||
                          options_given(&schedule_table, parsed, "--ilp-gap");
    if (ilp_given && c->method >= 0 && c->method != SCHEDULE_ILP)
        return tf_error_set(err, TF_ERR_INPUT, "schedule: --ilp-seconds and --ilp-gap configure --method ilp (or "
                                               "all); --method %s runs no ILP",
                            schedule_method_name((schedule_method)c->method));
    if (c->method == SCHEDULE_GREEDY && c->per_rank != 2)
        return tf_error_set(err, TF_ERR_INPUT, "schedule: greedy pairs at most 2 groups per rank and iteration "
                                               "(--per-rank %lld): use --method ilp", (long long)c->per_rank);
    if (c->simulate && c->snapshots < c->options.window)
        return tf_error_set(err, TF_ERR_INPUT, "schedule: --snapshots %lld is shorter than one window of %lld",
                            (long long)c->snapshots, (long long)c->options.window);
    const int64_t simulated = (c->snapshots - c->options.window) / c->options.stride + 1;
    if (c->simulate && simulated > GREEDY_GROUPS_MAX)
        return tf_error_set(err, TF_ERR_INPUT, "schedule: --simulate --snapshots %lld makes %lld groups, more than the "
                                               "simulator's limit of %d (greedy's time grows with about the cube of the "
                                               "groups: %d took 20 to 70 s per rank count on a shared 2-core machine); give --snapshots %lld or "
                                               "fewer",
                            (long long)c->snapshots, (long long)simulated, GREEDY_GROUPS_MAX, GREEDY_GROUPS_MAX,
                            (long long)(GREEDY_GROUPS_MAX - 1) * c->options.stride + c->options.window);
    return TF_OK;
}

static int parse_times(const char *text, double **times, int64_t *count, tf_error *err);
static int check_total(const char *given, const double *times, int64_t count, tf_error *err);
static int parse_rank_list(const char *text, int **ranks, int *count, tf_error *err);

/* The lists --times and --sim-ranks give, read once here so that a bad one is refused before the
 * data is loaded and its windows timed (seconds on a large dataset). */
static int check_lists(const schedule_command *c, tf_error *err)
{
    double *times = NULL;
    int *ranks = NULL, count = 0;
    int64_t groups = 0;
    int status = c->times_text ? parse_times(c->times_text, &times, &groups, err) : TF_OK;
    if (status == TF_OK && c->simulate)
        status = parse_rank_list(c->sim_ranks_text, &ranks, &count, err);
    free(times);
    free(ranks);
    return status;
}

static int parse_arguments(int argc, char **argv, schedule_command *c, int *help, tf_error *err)
{
    schedule_command_default(c);
    option_parse parsed;
    if (options_parse(&schedule_table, argc, argv, c, &parsed, err) != TF_OK)
        return TF_ERR_INPUT;
    *help = parsed.help;
    if (*help || check_command(c, &parsed, err) != TF_OK || check_lists(c, err) != TF_OK)
        return err->code;
    c->method_count = c->method < 0 ? 4 : 1;
    for (int m = 0; m < c->method_count; m++)
        c->methods[m] = c->method < 0 ? m : c->method;
    if (!c->batch)
        c->batch = c->ranks;
    return TF_OK;
}

/* 1 if the field [@p at, @p end) of a list is a number written in decimal (options_plain_number():
 * strtod and strtol would take " 1", 0x10 and inf besides). */
static int plain_field(const char *at, const char *end)
{
    char field[64];
    snprintf(field, sizeof field, "%.*s", (int)(end - at < 63 ? end - at : 63), at);
    return options_plain_number(field);
}

/* "8,7,7.5" into a new array. */
static int parse_times(const char *text, double **times, int64_t *count, tf_error *err)
{
    int64_t n = 1;
    for (const char *p = text; *p; p++)
        n += *p == ',';
    if (!(*times = tf_alloc((size_t)n, sizeof **times, "group times", err)))
        return TF_ERR_INPUT;
    const char *at = text;
    for (int64_t k = 0; k < n; k++) {
        char *end;
        (*times)[k] = strtod(at, &end);
        if (end == at || (*end != ',' && *end) || !isfinite((*times)[k]) || !((*times)[k] > 0) ||
            !plain_field(at, end)) {
            free(*times);
            *times = NULL;
            return tf_error_set(err, TF_ERR_INPUT, "option --times: \"%s\", expected a positive number at position %lld",
                                text, (long long)k + 1);
        }
        at = end + 1;
    }
    *count = n;
    if (check_total("--times", *times, n, err) != TF_OK) {
        free(*times);
        *times = NULL;
        return err->code;
    }
    return TF_OK;
}

/* The groups' times, from @p given: their total must be positive (a schedule of nothing has no
 * imbalance: 0 / 0) and at most TIMES_TOTAL_MAX seconds. */
static int check_total(const char *given, const double *times, int64_t count, tf_error *err)
{
    double total = 0;
    for (int64_t k = 0; k < count; k++)
        total += times[k];
    if (!(total > 0))
        return tf_error_set(err, TF_ERR_INPUT, "schedule: %s gives every group a time of 0 s: nothing to balance "
                                               "(expected a positive time somewhere)", given);
    if (!(total <= TIMES_TOTAL_MAX))
        return tf_error_set(err, TF_ERR_INPUT, "schedule: %s gives the groups %.10g s in all, more than %g s (31 years): "
                                               "expected seconds of training windows", given, total, TIMES_TOTAL_MAX);
    return TF_OK;
}

/* "4,16,64" into rank counts (each 1..1048576). */
static int parse_rank_list(const char *text, int **ranks, int *count, tf_error *err)
{
    int n = 1;
    for (const char *p = text; *p; p++)
        n += *p == ',';
    if (!(*ranks = tf_alloc((size_t)n, sizeof **ranks, "rank counts", err)))
        return TF_ERR_INPUT;
    const char *at = text;
    for (int k = 0; k < n; k++) {
        char *end;
        long value = strtol(at, &end, 10);
        if (end == at || (*end != ',' && *end) || value < 1 || value > (1 << 20) || !plain_field(at, end)) {
            free(*ranks);
            *ranks = NULL;
            return tf_error_set(err, TF_ERR_INPUT, "option --sim-ranks: \"%s\", expected rank counts 1..1048576 "
                                                   "separated by commas", text);
        }
        (*ranks)[k] = (int)value;
        at = end + 1;
    }
    *count = n;
    return TF_OK;
}

/* Everything the run works on. */
typedef struct schedule_run {
    schedule_command c;
    comm *group;
    dataset data;
    int have_data;
    trainer tr;
    int have_trainer;
    train_schedule windows;
    double *times;            /* [groups] */
    int64_t groups;
    int64_t *rows, *edges;    /* [groups], with --data */
    cost_model model;         /* the fit (measured) or the given model */
    int have_model;
    output_file gantt;        /* --gantt's temporary, renamed over FILE at the end (gantt.stream NULL without) */
} schedule_run;

static int speaks(const schedule_run *r) { return r->group->rank == 0; }

/* The group times, and the cost model with its fit. */
static int group_times(schedule_run *r, tf_error *err)
{
    if (r->c.times_text) {
        int status = err->code != TF_OK ? err->code : parse_times(r->c.times_text, &r->times, &r->groups, err);
        if (status == TF_OK && speaks(r))
            printf("twofold schedule: %lld groups of the given times on %lld ranks, at most %lld per rank and "
                   "iteration\n", (long long)r->groups, (long long)r->c.ranks, (long long)r->c.per_rank);
        return status;
    }
    cli_progress_state progress = {0, ""};
    dataset_options options = {0, cli_progress, &progress, NULL, NULL};
    /* Every rank loads its own and they compare it, as train's ranks do (ranks_agree_on_data()); an
     * error this rank already has (rank 0's --gantt) is compared instead. */
    const int loaded = err->code != TF_OK ? err->code : dataset_load(r->c.data, &options, &r->data, err);
    if (ranks_agree_on_data(r->group->size > 1 ? r->group : NULL, 0, NULL, loaded, &r->data, err) != TF_OK)
        return err->code;
    r->have_data = 1;
    if (r->data.kind != DATASET_SNAPSHOTS)
        return tf_error_set(err, TF_ERR_INPUT, "schedule: %s is an event stream; scheduling windows needs a snapshot "
                                               "sequence", r->c.data);
    const snapshot_seq *seq = &r->data.snapshots;
    if (trainer_create(&r->tr, seq, &r->c.config, &r->c.options, err) != TF_OK)
        return TF_ERR_INPUT;
    r->have_trainer = 1;
    r->windows = trainer_schedule(&r->tr);
    r->groups = r->windows.windows;
    if (!(r->times = tf_alloc((size_t)r->groups, sizeof *r->times, "group times", err)) ||
        !(r->rows = tf_alloc((size_t)r->groups, sizeof *r->rows, "group sizes", err)) ||
        !(r->edges = tf_alloc((size_t)r->groups, sizeof *r->edges, "group sizes", err)))
        return TF_ERR_INPUT;
    schedule_group_sizes(&r->windows, seq, r->rows, r->edges);
    if (speaks(r))
        printf("twofold schedule: %s, %lld groups (windows of %lld, stride %lld over training snapshots 0..%lld; "
               "model %s, hidden %lld) on %lld ranks, at most %lld per rank and iteration\n",
               r->data.name, (long long)r->groups, (long long)r->windows.length, (long long)r->windows.stride,
               (long long)r->tr.train_snapshots - 1, model_kind_name(r->c.config.kind), (long long)r->c.config.hidden,
               (long long)r->c.ranks, (long long)r->c.per_rank);
    if (strcmp(r->c.cost_text, "measured") != 0) {
        cost_model_parse(r->c.cost_text, &r->model, err);
        for (int64_t k = 0; k < r->groups; k++)
            r->times[k] = cost_model_predict(&r->model, r->rows[k], r->edges[k]);
        char given[160];
        snprintf(given, sizeof given, "--cost %s", r->c.cost_text);
        if (schedule_check_times(r->times, r->groups, err) != TF_OK || check_total(given, r->times, r->groups, err) != TF_OK)
            return TF_ERR_INPUT;
        if (speaks(r))
            printf("group times from the cost model: t = %g rows + %g edges + %g s\n", r->model.per_row,
                   r->model.per_edge, r->model.per_group);
    } else {
        if (opt_trainer_parallel(&r->tr, r->group, err) != TF_OK ||
            opt_schedule_profile(&r->tr, seq, r->group, (int)r->c.repeats, r->times, err) != TF_OK)
            return err->code;
        if (cost_model_fit(r->rows, r->edges, r->times, r->groups, &r->model, err) != TF_OK)
            return TF_ERR_INPUT;
        if (speaks(r)) {
            printf("group times measured: thread CPU time, median of %lld runs each, on %d rank(s)\n",
                   (long long)r->c.repeats, r->group->size);
            printf("cost model fit: t = %.4g rows + %.4g edges + %.4g s%s%s; residual r.m.s. %.2f %% of the mean; "
                   "R^2 %.4f\n",
                   r->model.per_row, r->model.per_edge, r->model.per_group,
                   r->model.dropped & 1 ? " (rows dropped: collinear with the constant)" : "",
                   r->model.dropped & 2 ? " (edges dropped: collinear)" : "", 100 * r->model.residual,
                   r->model.r_squared);
            if (r->model.per_row < 0 || r->model.per_edge < 0 || r->model.per_group < 0)
                printf("warning: a negative coefficient: the sizes explain the measured times poorly\n");
        }
    }
    r->have_model = 1;
    if (speaks(r)) {
        double edge_time = 0, total = 0;
        for (int64_t k = 0; k < r->groups; k++) {
            edge_time += r->model.per_edge * (double)r->edges[k];
            total += cost_model_predict(&r->model, r->rows[k], r->edges[k]);
        }
        printf("edges' share of the predicted time: %.1f %%\n", total > 0 ? 100 * edge_time / total : 0);
    }
    return TF_OK;
}

/* The iteration x rank table of a schedule. */
static void print_schedule(const schedule *s, schedule_method method)
{
    printf("schedule %s (iteration: rank {groups}):\n", schedule_method_name(method));
    for (int64_t i = 0; i < s->iterations; i++) {
        printf("  %4lld:", (long long)i);
        for (int j = 0; j < s->ranks; j++) {
            printf(" %d {", j);
            int first = 1;
            for (int64_t k = 0; k < s->groups; k++)
                if (s->iteration[k] == i && s->rank[k] == j) {
                    printf(first ? "%lld" : ",%lld", (long long)k);
                    first = 0;
                }
            printf("}");
        }
        printf("\n");
    }
}

/* One CSV line per group: its predicted start and end; iteration i starts after the
 * earlier iterations' maxima and alphas. */
static void write_gantt(FILE *out, const schedule *s, const double *times, double alpha, schedule_method method)
{
    double start = 0;
    for (int64_t i = 0; i < s->iterations; i++) {
        double longest = 0;
        for (int j = 0; j < s->ranks; j++) {
            double at = start;
            for (int64_t k = 0; k < s->groups; k++)
                if (s->iteration[k] == i && s->rank[k] == j) {
                    fprintf(out, "%s,%lld,%d,%lld,%.9g,%.9g\n", schedule_method_name(method), (long long)i, j,
                            (long long)k, at, at + times[k]);
                    at += times[k];
                }
            longest = fmax(longest, at - start);
        }
        start += longest + alpha;
    }
}

/* The median of @p column [count] (sorted in place: a few epochs, insertion sort). */
static double median(double *column, int64_t count)
{
    for (int64_t a = 1; a < count; a++)
        for (int64_t b = a; b > 0 && column[b - 1] > column[b]; b--) {
            const double swap = column[b];
            column[b] = column[b - 1];
            column[b - 1] = swap;
        }
    return count % 2 ? column[count / 2] : 0.5 * (column[count / 2 - 1] + column[count / 2]);
}

/* --run: train under schedule @p s from the same start on the ranks; per group the median over the
 * epochs, and rank 0 prints the measured cost beside the predicted. */
static int measure(schedule_run *r, const schedule *s, double alpha, tf_error *err)
{
    trainer tr;
    const snapshot_seq *seq = &r->data.snapshots;
    const int64_t n = r->groups, epochs = r->c.epochs;
    double *samples = tf_alloc((size_t)(n * epochs), sizeof *samples, "measured times", err);
    double *measured = samples ? tf_alloc((size_t)n, sizeof *measured, "measured times", err) : NULL;
    double *column = measured ? tf_alloc((size_t)epochs, sizeof *column, "measured times", err) : NULL;
    double wall = 0;
    int status = column ? trainer_create(&tr, seq, &r->c.config, &r->c.options, err) : TF_ERR_INPUT;
    if (status == TF_OK) {
        status = opt_trainer_parallel(&tr, r->group, err);
        for (int64_t e = 0; status == TF_OK && e < epochs; e++) {
            epoch_report report_epoch;
            const double epoch_started = wall_seconds();
            status = opt_schedule_epoch(&tr, r->group, seq, s, samples + e * n, &report_epoch, err);
            wall += wall_seconds() - epoch_started;
            if (status == TF_OK && r->group->size > 1)
                status = comm_allreduce_sum_double(r->group, samples + e * n, n, err);
        }
        trainer_free(&tr);
    }
    if (status == TF_OK && speaks(r)) {
        for (int64_t k = 0; k < n; k++) {
            for (int64_t e = 0; e < epochs; e++)
                column[e] = samples[e * n + k];
            measured[k] = median(column, epochs);
        }
        schedule_cost predicted, got;
        schedule_evaluate(s, r->times, alpha, &predicted);
        schedule_evaluate(s, measured, alpha, &got);
        printf("  measured   busy imbalance %.4f (predicted %.4f), critical path %.6g s (predicted %.6g), "
               "efficiency %.4f (predicted %.4f), epoch wall %.4f s\n",
               got.imbalance, predicted.imbalance, got.critical_path, predicted.critical_path, got.efficiency,
               predicted.efficiency, wall / (double)epochs);
    }
    free(samples);
    free(measured);
    free(column);
    return status;
}

/* One method: schedule, print, and with --run measure. */
static int one_method(schedule_run *r, schedule_method method, double alpha, tf_error *err)
{
    const int ranks = (int)r->c.ranks;
    train_schedule steps = r->windows;
    if (!r->have_trainer) { /* --times: round-robin's steps over the given groups in order */
        steps = (train_schedule){r->groups, 1, 1, r->groups, 1, r->groups, BATCH_CONSECUTIVE};
    }
    steps.batch = r->c.batch;
    steps.steps = (steps.windows + steps.batch - 1) / steps.batch;
    schedule s;
    ilp_report report;
    memset(&report, 0, sizeof report);
    const double started = wall_seconds();
    int status;
    if (r->c.run)
        status = opt_schedule_build(&s, method, r->times, r->groups, r->group, (int)r->c.per_rank, &steps, alpha,
                                    &r->c.ilp, &report, err);
    else if (speaks(r))
        status = opt_schedule_compute(&s, method, r->times, r->groups, ranks, (int)r->c.per_rank, &steps, alpha,
                                      &r->c.ilp, &report, err);
    else
        return TF_OK;
    if (status != TF_OK)
        return status;
    const double solve = wall_seconds() - started;
    if (speaks(r)) {
        schedule_cost cost;
        schedule_evaluate(&s, r->times, alpha, &cost);
        printf("%-11s %10lld %13.6g %12.6g %+9.2f %% %10.4f %10.4f %9.3f", schedule_method_name(method),
               (long long)s.iterations, cost.critical_path, cost.objective,
               100 * (cost.critical_path / cost.lower_bound - 1), cost.imbalance, cost.efficiency, solve);
        if (method == SCHEDULE_ILP)
            printf("  %s, GLPK gap %.2f %%, %.2f %% below the start", report.status, 100 * report.gap,
                   100 * (1 - report.objective / report.start_objective));
        if (method == SCHEDULE_ROUNDROBIN)
            printf("  batch %lld", (long long)r->c.batch);
        printf("\n");
        if (r->c.print_schedule)
            print_schedule(&s, method);
        if (r->gantt.stream)
            write_gantt(r->gantt.stream, &s, r->times, alpha, method);
    }
    if (status == TF_OK && r->c.run)
        status = measure(r, &s, alpha, err);
    schedule_free(&s);
    return status;
}

/* The baselines that only a cost model can give (never trained): ESDG and BLAD. */
static void print_baselines(schedule_run *r)
{
    if (!r->have_data || !speaks(r))
        return;
    int64_t *nodes, *edges;
    tf_error err;
    const snapshot_seq *seq = &r->data.snapshots;
    if (schedule_sizes_cycle(seq, r->tr.train_snapshots, &nodes, &edges, &err) != TF_OK)
        return;
    double imbalance;
    if (schedule_predict_esdg(nodes, edges, r->tr.train_snapshots, r->windows.length, r->windows.stride, &r->model,
                              (int)r->c.ranks, &imbalance, &err) == TF_OK)
        printf("ESDG       predicted imbalance %.4f (each window's snapshots spread over the ranks by time; the "
               "hidden state would travel between ranks)\n", imbalance);
    else
        printf("ESDG       not defined: %s\n", err.message);
    printf("BLAD       predicted imbalance = roundrobin's (whole groups in order; its two-stage pipeline is not "
           "modelled)\n");
    free(nodes);
    free(edges);
}

static int simulate(schedule_run *r, tf_error *err)
{
    if (!speaks(r))
        return TF_OK;
    int *ranks = NULL, count = 0;
    int64_t *nodes = NULL, *edges = NULL, groups = 0;
    double *times = NULL;
    simulation_row *rows = NULL;
    int status = parse_rank_list(r->c.sim_ranks_text, &ranks, &count, err);
    if (status == TF_OK)
        status = schedule_sizes_cycle(&r->data.snapshots, r->c.snapshots, &nodes, &edges, err);
    if (status == TF_OK)
        status = schedule_window_times(nodes, edges, r->c.snapshots, r->windows.length, r->windows.stride, &r->model,
                                       &times, &groups, err);
    if (status == TF_OK) {
        printf("\nsimulation: %s's %lld snapshot sizes cycled to %lld snapshots, windows of %lld every %lld: %lld "
               "groups, times from the cost model, alpha 0\n",
               r->data.name, (long long)r->data.snapshots.num_snapshots, (long long)r->c.snapshots,
               (long long)r->windows.length, (long long)r->windows.stride, (long long)groups);
        printf("%6s %12s %-11s %10s %10s %10s %9s\n", "ranks", "groups/rank", "method", "iterations", "efficiency",
               "imbalance", "solve s");
        fflush(stdout);
    }
    /* A rank count at a time, its rows printed as they come: greedy on thousands of groups takes
     * seconds per rank count, and the lines show how far the run is. */
    for (int j = 0; status == TF_OK && j < count; j++) {
        status = opt_schedule_simulate(times, groups, &ranks[j], 1, &rows, err);
        for (int k = 0; status == TF_OK && k < 3; k++)
            printf("%6d %12.2f %-11s %10lld %10.4f %10.4f %9.3f\n", rows[k].ranks, (double)groups / rows[k].ranks,
                   schedule_method_name(rows[k].method), (long long)rows[k].iterations, rows[k].efficiency,
                   rows[k].imbalance, rows[k].solve_seconds);
        fflush(stdout);
        free(rows);
        rows = NULL;
    }
    free(ranks);
    free(nodes);
    free(edges);
    free(times);
    free(rows);
    return status;
}

static int run_schedule(schedule_run *r, tf_error *err)
{
    if (r->c.gantt && speaks(r)) { /* before any work: a bad path fails at once */
        if (output_open(&r->gantt, "schedule: --gantt", r->c.gantt, err) == TF_OK)
            fprintf(r->gantt.stream, "method,iteration,rank,group,start,end\n");
    }
    /* Rank 0's error (a --gantt it cannot write) goes on to group_times(), where the ranks compare
     * their data and errors: the others must not wait there for it. */
    if (group_times(r, err) != TF_OK)
        return err->code;
    const int greedy = r->c.method < 0 || r->c.method == SCHEDULE_GREEDY;
    if (greedy && greedy_groups_within_limit("schedule", "--method", r->groups, err) != TF_OK)
        return err->code; /* every rank has the groups: they refuse together */
    double alpha = r->c.alpha;
    if (r->c.run) {
        const int64_t floats = parameters_size(&r->tr.model.parameters);
        if (opt_schedule_alpha(r->group, floats, 20, &alpha, err) != TF_OK)
            return err->code;
        if (speaks(r))
            printf("alpha measured: median of 20 all-reduces of %lld floats after a barrier: %.3g s\n",
                   (long long)floats, alpha);
    }
    if (speaks(r)) {
        double total = 0, longest = 0;
        for (int64_t k = 0; k < r->groups; k++)
            total += r->times[k], longest = fmax(longest, r->times[k]);
        printf("lower bound max(t_max, sum t / G) = max(%.6g, %.6g) = %.6g; alpha %.3g s per iteration\n\n", longest,
               total / (double)r->c.ranks, fmax(longest, total / (double)r->c.ranks), alpha);
        printf("%-11s %10s %13s %12s %11s %10s %10s %9s\n", "method", "iterations", "critical path", "objective",
               "gap to LB", "imbalance", "efficiency", "solve s");
    }
    int status = TF_OK;
    for (int m = 0; status == TF_OK && m < r->c.method_count; m++) {
        const schedule_method method = (schedule_method)r->c.methods[m];
        if (r->c.method_count == 4 && method == SCHEDULE_GREEDY && r->c.per_rank != 2) {
            if (speaks(r))
                printf("%-11s (pairs at most 2 groups per rank: --per-rank %lld needs --method ilp)\n", "greedy",
                       (long long)r->c.per_rank);
            continue;
        }
        status = one_method(r, method, alpha, err);
        fflush(stdout);
    }
    if (status == TF_OK)
        print_baselines(r);
    if (status == TF_OK && r->c.simulate)
        status = simulate(r, err);
    if (status == TF_OK && r->gantt.stream) {
        status = output_commit(&r->gantt, err); /* a full disk is said here, never "wrote" */
        if (status == TF_OK)
            printf("wrote %s\n", r->c.gantt);
    }
    return status;
}

int command_schedule(int argc, char **argv, tf_error *err)
{
    schedule_run r;
    memset(&r, 0, sizeof r);
    int help = 0;
    if (parse_arguments(argc, argv, &r.c, &help, err) == TF_OK && help) {
        options_help(&schedule_table, -1, stdout);
        return TF_OK;
    }
    comm group;
    const int started = start_agreed_ranks(&group, argc, argv, err);
    if (started != TF_OK)
        return started;
    r.group = &group;
    if (r.c.run && group.size != r.c.ranks) { /* every rank sees it: they finish together, one reports */
        tf_error_set(err, TF_ERR_INPUT, "schedule: --run with --ranks %lld, but this run has %d rank(s): start it as "
                                        "mpiexec -n %lld", (long long)r.c.ranks, group.size, (long long)r.c.ranks);
        return finish_ranks(&group, err->code, err);
    }
    int status = run_schedule(&r, err);
    output_discard(&r.gantt); /* after a failure: FILE is left as it was */
    if (r.have_trainer)
        trainer_free(&r.tr);
    if (r.have_data)
        dataset_free(&r.data);
    free(r.times);
    free(r.rows);
    free(r.edges);
    return finish_ranks(&group, status, err);
}

int greedy_groups_within_limit(const char *command, const char *option, int64_t groups, tf_error *err)
{
    if (groups <= GREEDY_GROUPS_MAX)
        return TF_OK;
    return tf_error_set(err, TF_ERR_INPUT, "%s: greedy on %lld groups is more than its limit of %d (its time grows with "
                        "about the cube of the groups: %d took 20 to 70 s on a shared 2-core machine); give %s "
                        "roundrobin, lpt or ilp, or fewer groups", command, (long long)groups, GREEDY_GROUPS_MAX,
                        GREEDY_GROUPS_MAX, option);
}
