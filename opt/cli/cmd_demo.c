/* twofold demo: the main job on bundled data: the data and the reference models, then every
 * demo row of the technique table (verify/techniques/table.h), each validated against its
 * reference before it is timed. A technique joins by adding its line to the table, not by
 * editing this.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/dataset.h"
#include "opt/cli/cli.h"
#include "opt/cli/commands.h"
#include "ref/core/clock.h"
#include "ref/train.h"
#include "verify/techniques/table.h"

static const char demo_usage[] =
    "usage: twofold demo [TECHNIQUE...]\n"
    "\n"
    "Load every bundled dataset and a generated graph, train the reference models briefly,\n"
    "then run the demo rows of every technique: reference against optimized twin, the\n"
    "equivalence error, and the speed (only for a twin that was equal). With TECHNIQUE names\n"
    "or stems (as twofold verify --help lists them), only those techniques' rows.\n"
    "\n"
    "Under mpiexec -n R the distributed twins run on R ranks.\n"
    "\n"
    "Exit status 1 when a twin was not equal; TWOFOLD_BREAK_TWIN=NAME spoils the twins of NAME\n"
    "on purpose, as for twofold verify.\n";

/* Parsed arguments. */
typedef struct demo_command {
    unsigned char chosen[TECHNIQUE_TABLE_MAX]; /* the entries named (all when none is) */
    int any;                                   /* 1: some were named */
    int help;
} demo_command;

static int parse_arguments(int argc, char **argv, demo_command *c, tf_error *err)
{
    memset(c, 0, sizeof *c);
    for (int i = 0; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            c->help = 1;
            return TF_OK;
        }
        if (argv[i][0] == '-')
            return tf_error_set(err, TF_ERR_INPUT, "demo: unexpected argument %s (see twofold demo --help)", argv[i]);
        if (!technique_choose(argv[i], c->chosen))
            return tf_error_set(err, TF_ERR_INPUT, "demo: no technique called \"%s\" (see twofold verify --help)",
                                argv[i]);
        c->any = 1;
    }
    return TF_OK;
}

/* Loads one dataset spec and prints its row; returns a tf_error_code. */
static int demo_dataset(const char *spec, const char *label, tf_error *err)
{
    cli_progress_state progress = {0, ""};
    dataset_options options = {0, cli_progress, &progress, NULL, NULL};
    dataset d;
    double started = wall_seconds();
    if (dataset_load(spec, &options, &d, err) != TF_OK)
        return err->code;
    double seconds = wall_seconds() - started;
    dataset_summary s;
    int status = dataset_summarize(&d, &s, err);
    if (status == TF_OK) {
        char shape[64];
        if (d.kind == DATASET_SNAPSHOTS)
            snprintf(shape, sizeof shape, "%lld snapshots, %.0f edges each", (long long)s.steps, s.edges.mean_edges);
        else
            snprintf(shape, sizeof shape, "%lld events", (long long)s.steps);
        printf("  %-16s %-9s %9lld vertices  %-34s %8.3f s\n", label, d.kind == DATASET_SNAPSHOTS ? "snapshots" : "events",
               (long long)s.vertices, shape, seconds);
    }
    dataset_free(&d);
    return status;
}

/* Trains one model briefly on a bundled dataset and prints its row. */
static int demo_model(model_kind kind, const char *data, tf_error *err)
{
    dataset d;
    if (dataset_load(data, NULL, &d, err) != TF_OK)
        return err->code;
    model_config config = {kind, 0, 32, 0, 2};
    train_options options;
    train_options_default(&options);
    options.epochs = 20;
    options.train_ratio = 0.2;
    trainer tr;
    int status = trainer_create(&tr, &d.snapshots, &config, &options, err);
    double started = wall_seconds(), first_mse = 0;
    epoch_report report = {0, 0, 0, 0, 0};
    while (status == TF_OK && tr.epoch < options.epochs) {
        status = trainer_epoch(&tr, &d.snapshots, &report, err);
        if (report.epoch == 1)
            first_mse = report.test_mse;
    }
    if (status == TF_OK)
        printf("  %-10s on %-12s 20 epochs: test MSE %.4f (after epoch 1: %.4f)  %6.2f s\n", model_kind_name(kind),
               d.name, report.test_mse, first_mse, wall_seconds() - started);
    trainer_free(&tr); /* trainer_create leaves a freeable trainer even when it fails */
    dataset_free(&d);
    return status;
}

/* The data and the reference models: rank 0 alone. */
static int demo_data_and_models(tf_error *err)
{
    int status = TF_OK;
    printf("\ndata (loaded by ref/, timed on this machine):\n");
    for (const bundled_dataset *b = bundled_datasets; status == TF_OK && b->name; b++)
        status = demo_dataset(b->name, b->name, err);
    if (status == TF_OK)
        status = demo_dataset("powerlaw:nodes=100000,edges=1000000,snapshots=5,churn=0.01,seed=1", "powerlaw 1M edges",
                              err);
    if (status == TF_OK)
        status = demo_dataset("events:nodes=10000,events=1000000,repeat=0.5,seed=1", "events 1M", err);
    if (status == TF_OK)
        printf("\nmodels (ref/, chapter 01; train ratio 0.2, lr 0.01, hidden 32):\n");
    for (int kind = MODEL_TGCN; status == TF_OK && kind <= MODEL_EVOLVEGCN; kind++)
        status = demo_model((model_kind)kind, "chickenpox", err);
    return status;
}

/* The demo rows of the chosen techniques, validated, then timed, through the table's loop. */
static int demo_techniques(const demo_command *c, comm *group, engine_tally *tally, tf_error *err)
{
    if (group->rank == 0)
        printf("\ntechniques (ref vs twin, validated before timed; the distributed twins on %d rank(s)):\n",
               group->size);
    engine_row rows[128];
    const int count = technique_demo_rows(c->any ? c->chosen : NULL, getenv("TWOFOLD_BREAK_TWIN"), rows, 128);
    engine_options options = {.timed = 1, .repeats = 3, .threads = 1, .group = group};
    return engine_run_rows(rows, count, &options, tally, err);
}

int command_demo(int argc, char **argv, tf_error *err)
{
    demo_command c;
    if (parse_arguments(argc, argv, &c, err) == TF_OK && c.help) {
        fputs(demo_usage, stdout);
        return TF_OK;
    }
    comm group;
    const int started = start_agreed_ranks(&group, argc, argv, err);
    if (started != TF_OK)
        return started;
    int status = TF_OK;
    if (group.rank == 0) {
        printf("twofold demo\n");
        if (!c.any)
            status = demo_data_and_models(err);
    }
    engine_tally tally = {0, 0, 0};
    if (status == TF_OK)
        status = demo_techniques(&c, &group, &tally, err);
    finish_ranks(&group, status, err);
    if (status == TF_OK && tally.wrong > 0)
        return tf_error_set(err, EXIT_WRONG, "demo: %d technique row(s) not equal to the reference", tally.wrong);
    return status;
}
