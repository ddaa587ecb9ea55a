/* twofold demo: the main job on bundled data. It grows with the project: each technique
 * adds its line (equivalence error of opt against ref, and speedup) to the table. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "dataset.h"

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
    double started = cli_seconds();
    if (dataset_load(spec, &options, &d, err) != TF_OK)
        return err->code;
    double seconds = cli_seconds() - started;
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
    printf("\ntechniques (ref vs opt): none yet; chapters 01-07 add them here.\n");
    return TF_OK;
}
