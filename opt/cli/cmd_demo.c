/* twofold demo: the main job on bundled data. It grows with the project: each technique
 * adds its line (equivalence error of opt against ref, and speedup) to the table. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "datasets/dataset.h"
#include "opt/cli/cli.h"
#include "opt/cli/commands.h"
#include "opt/kernels.h"
#include "ref/clock.h"
#include "ref/train.h"

static const char demo_usage[] =
    "usage: twofold demo\n"
    "\n"
    "Load every bundled dataset and a generated graph, then run every technique that\n"
    "exists, reference against optimized twin, and print the equivalence error and speed.\n";

/* Loads one dataset spec and prints its row; returns a tf_error_code. */
static int demo_dataset(const char *spec, const char *label, tf_error *err)
{
    cli_progress_state progress = {0, ""};
    dataset_options options = {0, cli_progress, &progress};
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

/* The same training on the reference kernels and on the optimized ones: the largest parameter
 * difference after training, and the speed ratio (one process; mpiexec adds ranks). */
static int demo_engine(const char *data, tf_error *err)
{
    dataset d;
    if (dataset_load(data, NULL, &d, err) != TF_OK)
        return err->code;
    model_config config = {MODEL_GCLSTM, 0, 32, 0, 2};
    train_options options;
    train_options_default(&options);
    options.epochs = 3;
    options.window = 8;
    options.batch = 4;
    trainer runs[2];
    double seconds[2] = {0, 0};
    int status = TF_OK;
    for (int r = 0; r < 2; r++) {
        status = trainer_create(&runs[r], &d.snapshots, &config, &options, err);
        if (status != TF_OK) {
            if (r == 1)
                trainer_free(&runs[0]);
            dataset_free(&d);
            return status;
        }
    }
    runs[1].model.kernels = &opt_kernels;
    opt_set_threads(1);
    for (int r = 0; r < 2 && status == TF_OK; r++) {
        double started = wall_seconds();
        epoch_report report;
        while (status == TF_OK && runs[r].epoch < options.epochs)
            status = trainer_epoch(&runs[r], &d.snapshots, &report, err);
        seconds[r] = wall_seconds() - started;
    }
    if (status == TF_OK) {
        double worst = 0;
        for (int64_t i = 0; i < runs[0].model.parameters.count; i++) {
            const tensor *a = &runs[0].model.parameters.items[i].value, *b = &runs[1].model.parameters.items[i].value;
            for (int64_t k = 0; k < a->size; k++) {
                double scale = fabs(a->data[k]) > 1 ? fabs(a->data[k]) : 1;
                double e = fabs((double)a->data[k] - (double)b->data[k]) / scale;
                worst = e > worst ? e : worst;
            }
        }
        printf("  opt kernels, gclstm on %-14s 3 epochs: parameters vs ref max relative difference %.1e; "
               "ref %.2f s, opt %.2f s (%.1fx)\n",
               d.name, worst, seconds[0], seconds[1], seconds[0] / seconds[1]);
    }
    trainer_free(&runs[0]);
    trainer_free(&runs[1]);
    dataset_free(&d);
    return status;
}

int command_demo(int argc, char **argv, tf_error *err)
{
    for (int i = 0; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            fputs(demo_usage, stdout);
            return TF_OK;
        }
        return tf_error_set(err, TF_ERR_INPUT, "demo: unexpected argument %s (see twofold demo --help)", argv[i]);
    }
    printf("twofold demo\n\ndata (loaded by ref/, timed on this machine):\n");
    for (const bundled_dataset *b = bundled_datasets; b->name; b++)
        if (demo_dataset(b->name, b->name, err) != TF_OK)
            return err->code;
    if (demo_dataset("powerlaw:nodes=100000,edges=1000000,snapshots=5,churn=0.01,seed=1", "powerlaw 1M edges", err) !=
            TF_OK ||
        demo_dataset("events:nodes=10000,events=1000000,repeat=0.5,seed=1", "events 1M", err) != TF_OK)
        return err->code;
    printf("\nmodels (ref/, chapter 01; train ratio 0.2, lr 0.01, hidden 32):\n");
    for (int kind = MODEL_TGCN; kind <= MODEL_EVOLVEGCN; kind++)
        if (demo_model((model_kind)kind, "chickenpox", err) != TF_OK)
            return err->code;
    printf("\nengine (opt/ vs ref/, chapter 01; mpiexec -n R twofold train --impl opt shares windows among ranks):\n");
    if (demo_engine("chickenpox", err) != TF_OK || demo_engine("twitter_tennis", err) != TF_OK)
        return err->code;
    /* One row per technique (chapters 02-07), each from its own demo_technique_* function. */
    printf("\ntechniques (ref vs opt, validated before timed):\n  %-3s %-27s %-34s %-9s %s\n", "ch", "technique",
           "data", "max error", "speed");
    if (demo_technique_incremental(err) != TF_OK || demo_technique_fusion(err) != TF_OK)
        return err->code;
    return TF_OK;
}
