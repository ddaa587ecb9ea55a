/* twofold info: what a dataset holds. */
#include <stdio.h>
#include <string.h>

#include "datasets/dataset.h"
#include "opt/cli/cli.h"
#include "opt/cli/commands.h"
#include "ref/core/clock.h"

/* What the command was asked. */
typedef struct info_command {
    const char *spec;          /* DATASET */
    const char *edge_columns;  /* --edge-columns */
    int lags;                  /* --lags */
    int markdown;              /* --markdown */
    int list;                  /* --list */
} info_command;

/* DATASET, the one word info takes. */
static int take_dataset(void *command, const char *word, tf_error *err)
{
    info_command *c = command;
    if (c->spec)
        return tf_error_set(err, TF_ERR_INPUT, "info: one dataset at a time, got %s and %s", c->spec, word);
    c->spec = word;
    return TF_OK;
}

#define AT(member) OPTION_FIELD(info_command, member)

static const option_spec info_options[] = {
    {"--lags", OPTION_WHOLE, AT(lags), .min = 1, .max = 100000, .value_name = "N",
     .help = "lagged features for lagged formats (default: the format's own)"},
    {"--edge-columns", OPTION_TEXT, AT(edge_columns), .value_name = "LIST",
     .help = "for an event CSV, the header columns to take as edge features, comma-\n"
             "separated, or none (default: those named feat... or f<digits>, and JODIE's\n"
             "feature list); a line before the statistics says which were taken"},
    {"--markdown", OPTION_FLAG, AT(markdown), .help = "print one row of the statistics table in datasets/README.md"},
    {"--list", OPTION_FLAG, AT(list), .help = "list the bundled datasets"},
    {.name = NULL},
};

static const option_page info_pages[] = {
    {0, 15,
     "usage: twofold info [--lags N] [--edge-columns LIST] [--markdown] DATASET\n"
     "       twofold info --list\n"
     "\n"
     "Print a dataset's statistics: vertices, snapshots or events, edges per snapshot\n"
     "(min / mean / max), feature width.\n"
     "\n"
     "DATASET is a bundled name (see --list), a file (.json, .csv, .txt, optionally .gz)\n"
     "or a generator spec such as powerlaw:nodes=100000,edges=1e6,snapshots=10,churn=0.01,\n"
     "communities:nodes=200,classes=4,change=0.05 (labelled: --task classify)\n"
     "or events:nodes=1000,events=1e5,repeat=0.5.\n"
     "\n",
     "\n" EXIT_STATUS_HELP},
    {0, 0, NULL, NULL},
};

static const option_table info_table = {
    .command = "info", .options = info_options, .pages = info_pages, .word = take_dataset};

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
        if (d->snapshots.num_classes) /* --task classify */
            printf("labels          %lld classes per vertex and snapshot\n", (long long)d->snapshots.num_classes);
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
    info_command c;
    memset(&c, 0, sizeof c);
    option_parse parsed;
    if (options_parse(&info_table, argc, argv, &c, &parsed, err) != TF_OK)
        return err->code;
    if (parsed.help) {
        options_help(&info_table, -1, stdout);
        return TF_OK;
    }
    if (c.list && (c.spec || c.markdown || c.lags || c.edge_columns)) /* taken and ignored otherwise */
        return tf_error_set(err, TF_ERR_INPUT, "info: --list lists the bundled datasets and takes nothing else; "
                                               "drop %s", c.spec ? c.spec : "the other options");
    if (c.list) {
        print_list();
        return TF_OK;
    }
    if (!c.spec)
        return tf_error_set(err, TF_ERR_INPUT, "info: which dataset? (twofold info --list shows the bundled ones)");
    cli_progress_state progress = {0, ""};
    /* With --markdown, the table row alone: no notes from the loader. */
    dataset_options options = {c.lags, cli_progress, &progress, c.edge_columns, c.markdown ? NULL : stdout};
    dataset d;
    double started = wall_seconds();
    if (dataset_load(c.spec, &options, &d, err) != TF_OK)
        return err->code;
    double seconds = wall_seconds() - started;
    dataset_summary summary;
    int status = dataset_summarize(&d, &summary, err);
    if (status == TF_OK) {
        if (c.markdown)
            print_markdown(&d, &summary);
        else
            print_summary(&d, &summary, seconds);
    }
    dataset_free(&d);
    return status;
}
