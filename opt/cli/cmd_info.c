/* twofold info: what a dataset holds. */
#include <stdio.h>
#include <string.h>

#include "datasets/dataset.h"
#include "opt/cli/cli.h"
#include "opt/cli/commands.h"
#include "ref/core/clock.h"

static const char info_usage[] =
    "usage: twofold info [--lags N] [--edge-columns LIST] [--markdown] DATASET\n"
    "       twofold info --list\n"
    "\n"
    "Print a dataset's statistics: vertices, snapshots or events, edges per snapshot\n"
    "(min / mean / max), feature width.\n"
    "\n"
    "DATASET is a bundled name (see --list), a file (.json, .csv, .txt, optionally .gz)\n"
    "or a generator spec such as powerlaw:nodes=100000,edges=1e6,snapshots=10,churn=0.01\n"
    "or events:nodes=1000,events=1e5,repeat=0.5.\n"
    "\n"
    "  --lags N     lagged features for lagged formats (default: the format's own)\n"
    "  --edge-columns LIST\n"
    "               for an event CSV, the header columns to take as edge features, comma-\n"
    "               separated, or none (default: those named feat... or f<digits>, and JODIE's\n"
    "               feature list); a line before the statistics says which were taken\n"
    "  --markdown   print one row of the statistics table in datasets/README.md\n"
    "  --list       list the bundled datasets\n";

static void print_list(void)
{
    printf("bundled datasets (in %s):\n", dataset_directory());
    for (const bundled_dataset *b = bundled_datasets; b->name; b++)
        printf("  %-15s %-28s %s\n", b->name, b->file, b->description);
}

static void print_markdown(const dataset *d, const dataset_summary *s)
{
    if (d->kind == DATASET_SNAPSHOTS)
        printf("| %s | snapshots | %lld | %lld snapshots | %lld / %.1f / %lld | %lld | %lld |\n", d->name,
               (long long)s->vertices, (long long)s->steps, (long long)s->edges.min_edges, s->edges.mean_edges,
               (long long)s->edges.max_edges, (long long)s->feature_width, (long long)s->target_width);
    else
        printf("| %s | events | %lld | %lld events | %lld distinct pairs | %lld | - |\n", d->name,
               (long long)s->vertices, (long long)s->steps, (long long)s->distinct_pairs, (long long)s->feature_width);
}

static void print_summary(const dataset *d, const dataset_summary *s, double seconds)
{
    printf("dataset         %s\n", d->name);
    printf("source          %s\n", d->source);
    printf("format          %s\n", d->format);
    if (d->kind == DATASET_SNAPSHOTS) {
        printf("kind            snapshots (discrete time)\n");
        printf("vertices        %lld\n", (long long)s->vertices);
        if (s->present_min != s->vertices || s->present_max != s->vertices)
            printf("present         %lld .. %lld vertices per snapshot\n", (long long)s->present_min,
                   (long long)s->present_max);
        printf("snapshots       %lld\n", (long long)s->steps);
        printf("edges/snapshot  min %lld, mean %.1f, max %lld (total %lld)\n", (long long)s->edges.min_edges,
               s->edges.mean_edges, (long long)s->edges.max_edges, (long long)s->edges.total_edges);
        printf("feature width   %lld\n", (long long)s->feature_width);
        printf("target width    %lld\n", (long long)s->target_width);
    } else {
        printf("kind            events (continuous time)\n");
        printf("vertices        %lld active, ids 0..%lld\n", (long long)s->vertices, (long long)s->id_space - 1);
        printf("events          %lld\n", (long long)s->steps);
        printf("distinct pairs  %lld\n", (long long)s->distinct_pairs);
        printf("time            %.17g .. %.17g\n", s->first_time, s->last_time);
        printf("feature width   %lld (edge features)\n", (long long)s->feature_width);
        printf("labels          %s\n", s->has_labels ? "yes" : "no");
    }
    printf("loaded in       %.3f s\n", seconds);
}

int command_info(int argc, char **argv, tf_error *err)
{
    const char *spec = NULL, *value;
    int markdown = 0;
    dataset_options options = {0, cli_progress, NULL, NULL, stdout};
    cli_progress_state progress = {0, ""};
    options.progress_context = &progress;
    for (int i = 0; i < argc; i++) {
        int matched;
        if (cli_is_help(argv[i])) {
            fputs(info_usage, stdout);
            return TF_OK;
        } else if (strcmp(argv[i], "--list") == 0) {
            print_list();
            return TF_OK;
        } else if (strcmp(argv[i], "--markdown") == 0) {
            markdown = 1;
            options.notes = NULL; /* the table row alone */
        } else if ((matched = cli_option(argc, argv, &i, "--edge-columns", &value, err)) != 0) {
            if (matched < 0)
                return TF_ERR_INPUT;
            options.edge_columns = value;
        } else if ((matched = cli_option(argc, argv, &i, "--lags", &value, err)) != 0) {
            int64_t lags;
            if (matched < 0 || cli_parse_int("--lags", value, 1, 100000, &lags, err) != TF_OK)
                return TF_ERR_INPUT;
            options.lags = (int)lags;
        } else if (argv[i][0] == '-' && argv[i][1] == '-') {
            return tf_error_set(err, TF_ERR_INPUT, "info: unknown option %s (see twofold info --help)", argv[i]);
        } else if (spec) {
            return tf_error_set(err, TF_ERR_INPUT, "info: one dataset at a time, got %s and %s", spec, argv[i]);
        } else {
            spec = argv[i];
        }
    }
    if (!spec)
        return tf_error_set(err, TF_ERR_INPUT, "info: which dataset? (twofold info --list shows the bundled ones)");
    dataset d;
    double started = wall_seconds();
    if (dataset_load(spec, &options, &d, err) != TF_OK)
        return err->code;
    double seconds = wall_seconds() - started;
    dataset_summary summary;
    int status = dataset_summarize(&d, &summary, err);
    if (status == TF_OK) {
        if (markdown)
            print_markdown(&d, &summary);
        else
            print_summary(&d, &summary, seconds);
    }
    dataset_free(&d);
    return status;
}
