#include "datasets/dataset.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ref/core/io.h"
#include "ref/data/loaders.h"

#ifndef TWOFOLD_DATASETS_DIR
#define TWOFOLD_DATASETS_DIR "datasets"
#endif

const bundled_dataset bundled_datasets[] = {
    {"chickenpox", "chickenpox.json.gz", "Hungarian chickenpox cases, 20 counties, weekly"},
    {"pedalme", "pedalme_london.json.gz", "PedalMe bicycle deliveries, 15 London zones, weekly"},
    {"england_covid", "england_covid.json.gz", "COVID-19 cases and mobility, 129 English regions, daily"},
    {"twitter_tennis", "twitter_tennis_rg17.json.gz", "Roland-Garros 2017 Twitter mentions, 1000 accounts, hourly"},
    {"montevideo_bus", "montevideo_bus.json.gz", "Montevideo bus stop inflow, 675 stops, hourly"},
    {"los", "los_speed.csv.gz", "Los Angeles loop detector speeds, 207 sensors, 5-minute (T-GCN)"},
    {"wikipedia", "wikipedia.txt.gz", "Wikipedia edits (JODIE), users and pages"},
    {"collegemsg", "collegemsg.txt.gz", "UC Irvine college messages (SNAP CollegeMsg)"},
    {"enron", "enron.txt.gz", "Enron e-mails"},
    {"bitcoin_otc", "bitcoin_otc.csv.gz", "Bitcoin-OTC trust ratings (SNAP), rating as edge feature"},
    {"bitcoin_alpha", "bitcoin_alpha.csv.gz", "Bitcoin-Alpha trust ratings (SNAP), rating as edge feature"},
    {NULL, NULL, NULL},
};

const char *dataset_directory(void)
{
    const char *directory = getenv("TWOFOLD_DATASETS");
    return directory && *directory ? directory : TWOFOLD_DATASETS_DIR;
}

void dataset_free(dataset *d)
{
    snapshot_seq_free(&d->snapshots);
    event_stream_free(&d->events);
}

/* ---- generator specs ------------------------------------------------------------------ */

/* Parses "key=value,key=value" after the generator name. Each key is looked up in `keys`
 * and its value stored as a double in values [number of keys]. */
static int parse_spec_values(const char *spec, const char *list, const char *const *keys, double *values,
                             tf_error *err)
{
    const char *position = list, *end = list + strlen(list), *begin, *stop;
    unsigned given = 0; /* bit k: keys[k] seen (a spec has fewer than 32 keys) */
    while (*list && next_field(&position, end, ',', &begin, &stop)) {
        const char *equals = memchr(begin, '=', (size_t)(stop - begin));
        char field[64];
        quote_field(begin, stop, field, sizeof field);
        if (!equals)
            return tf_error_set(err, TF_ERR_INPUT, "%s: \"%s\" is not key=value", spec, field);
        int k = 0;
        while (keys[k] && (strlen(keys[k]) != (size_t)(equals - begin) || memcmp(keys[k], begin, (size_t)(equals - begin))))
            k++;
        if (!keys[k]) {
            char known[256] = "";
            for (int j = 0; keys[j]; j++)
                snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", j ? ", " : "", keys[j]);
            return tf_error_set(err, TF_ERR_INPUT, "%s: unknown parameter in \"%s\", expected one of %s", spec, field, known);
        }
        if (given & (1u << k)) /* the second would silently replace the first */
            return tf_error_set(err, TF_ERR_INPUT, "%s: %s given twice, expected each parameter once", spec, keys[k]);
        given |= 1u << k;
        if (parse_double(equals + 1, stop, &values[k]) != 0)
            return tf_error_set(err, TF_ERR_INPUT, "%s: \"%s\": expected a finite number after '='", spec, field);
    }
    return TF_OK;
}

/* A double that must be a whole number in range to become an int64 parameter, into out [1]. */
static int whole(const char *spec, const char *key, double value, int64_t *out, tf_error *err)
{
    if (value != floor(value) || fabs(value) > 9.0e15)
        return tf_error_set(err, TF_ERR_INPUT, "%s: %s=%g, expected a whole number", spec, key, value);
    *out = (int64_t)value;
    return TF_OK;
}

/* The edges= value into out [1], or per_node x nodes when it was not given (NAN). */
static int edges_or_default(const char *spec, double value, int64_t nodes, int64_t per_node, int64_t *out,
                            tf_error *err)
{
    if (!isnan(value))
        return whole(spec, "edges", value, out, err);
    *out = per_node * nodes;
    return TF_OK;
}

/* communities:KEY=VALUE,... (datasets/generate.h: generate_communities()). */
static int load_communities(const char *spec, dataset *out, tf_error *err)
{
    static const char *const keys[] = {"nodes", "edges", "snapshots", "classes", "change", "homophily",
                                       "features", "noise", "labelled", "seed", NULL};
    community_params p;
    community_params_default(&p);
    /* edges defaults to 8 x nodes, so it stays NAN unless given */
    double v[10] = {(double)p.num_nodes, NAN, (double)p.num_snapshots, (double)p.num_classes, p.change, p.homophily,
                    (double)p.feature_width, p.noise, p.labelled, (double)p.seed};
    int64_t seed = 0;
    if (parse_spec_values(spec, spec + 12, keys, v, err) != TF_OK || whole(spec, "nodes", v[0], &p.num_nodes, err) ||
        whole(spec, "snapshots", v[2], &p.num_snapshots, err) || whole(spec, "classes", v[3], &p.num_classes, err) ||
        whole(spec, "features", v[6], &p.feature_width, err) || whole(spec, "seed", v[9], &seed, err) ||
        edges_or_default(spec, v[1], p.num_nodes, 8, &p.num_edges, err))
        return TF_ERR_INPUT;
    p.change = v[4];
    p.homophily = v[5];
    p.noise = v[7];
    p.labelled = v[8];
    p.seed = (uint64_t)seed;
    out->kind = DATASET_SNAPSHOTS;
    snprintf(out->name, sizeof out->name, "communities");
    snprintf(out->format, sizeof out->format, "generated evolving communities (seed %lld)", (long long)seed);
    return generate_communities(&p, &out->snapshots, err);
}

static int load_generated(const char *spec, const dataset_options *options, dataset *out, tf_error *err)
{
    if (strncmp(spec, "communities:", 12) == 0)
        return load_communities(spec, out, err);
    if (strncmp(spec, "powerlaw:", 9) == 0) {
        static const char *const keys[] = {"nodes", "edges", "snapshots", "churn", "arrival", "exponent",
                                           "features", "seed", "degrees", "growth", NULL};
        powerlaw_params p;
        powerlaw_params_default(&p);
        /* edges defaults to 10 x nodes, so it stays NAN unless given */
        double v[10] = {(double)p.num_nodes, NAN, (double)p.num_snapshots, p.churn, p.vertex_churn, p.exponent,
                        (double)p.feature_width, (double)p.seed, (double)p.degree_features, p.growth};
        int64_t seed = 0;
        if (parse_spec_values(spec, spec + 9, keys, v, err) != TF_OK || whole(spec, "nodes", v[0], &p.num_nodes, err) ||
            whole(spec, "snapshots", v[2], &p.num_snapshots, err) || whole(spec, "features", v[6], &p.feature_width, err) ||
            whole(spec, "seed", v[7], &seed, err) || edges_or_default(spec, v[1], p.num_nodes, 10, &p.num_edges, err))
            return TF_ERR_INPUT;
        p.churn = v[3];
        p.vertex_churn = v[4];
        p.exponent = v[5];
        p.growth = v[9];
        p.seed = (uint64_t)seed;
        if (v[8] != 0 && v[8] != 1)
            return tf_error_set(err, TF_ERR_INPUT, "%s: degrees=%g, expected 0 or 1", spec, v[8]);
        p.degree_features = (int)v[8];
        p.progress = options->progress;
        p.progress_context = options->progress_context;
        out->kind = DATASET_SNAPSHOTS;
        snprintf(out->name, sizeof out->name, "powerlaw");
        snprintf(out->format, sizeof out->format, "generated evolving power-law graph (seed %lld)", (long long)seed);
        return generate_powerlaw(&p, &out->snapshots, err);
    }
    static const char *const keys[] = {"nodes", "events", "repeat", "exponent", "features", "seed", NULL};
    event_params p;
    event_params_default(&p);
    double v[6] = {(double)p.num_nodes, (double)p.num_events, p.repeat, p.exponent, (double)p.feature_width,
                   (double)p.seed};
    int64_t seed = 0;
    if (parse_spec_values(spec, spec + 7, keys, v, err) != TF_OK || whole(spec, "nodes", v[0], &p.num_nodes, err) ||
        whole(spec, "events", v[1], &p.num_events, err) || whole(spec, "features", v[4], &p.feature_width, err) ||
        whole(spec, "seed", v[5], &seed, err))
        return TF_ERR_INPUT;
    p.repeat = v[2];
    p.exponent = v[3];
    p.seed = (uint64_t)seed;
    out->kind = DATASET_EVENTS;
    snprintf(out->name, sizeof out->name, "events");
    snprintf(out->format, sizeof out->format, "generated event stream (seed %lld)", (long long)seed);
    return generate_events(&p, &out->events, err);
}

/* ---- files ---------------------------------------------------------------------------- */

/* 1 if `path` (minus a trailing ".gz") ends in `suffix`. */
static int has_suffix(const char *path, const char *suffix)
{
    size_t length = strlen(path), suffix_length = strlen(suffix);
    if (length > 3 && strcmp(path + length - 3, ".gz") == 0)
        length -= 3;
    return length >= suffix_length && memcmp(path + length - suffix_length, suffix, suffix_length) == 0;
}

/* The dataset's short name: the file name without directories and extensions. */
static void name_from_path(const char *path, char *name, size_t size)
{
    const char *slash = strrchr(path, '/');
    snprintf(name, size, "%s", slash ? slash + 1 : path);
    char *dot = strchr(name, '.');
    if (dot)
        *dot = '\0';
}

static int load_tgcn_pair(const char *speed_path, int lags, dataset *out, tf_error *err)
{
    /* NAME_speed.csv[.gz] pairs with NAME_adj.csv[.gz] in the same directory. */
    char adjacency_path[4096];
    const char *marker = strstr(speed_path, "_speed.csv");
    while (marker && strstr(marker + 1, "_speed.csv"))
        marker = strstr(marker + 1, "_speed.csv");
    snprintf(adjacency_path, sizeof adjacency_path, "%.*s_adj.csv%s", (int)(marker - speed_path), speed_path,
             marker + strlen("_speed.csv"));
    text speed, adjacency;
    if (text_read_file(speed_path, &speed, err) != TF_OK)
        return TF_ERR_INPUT;
    if (text_read_file(adjacency_path, &adjacency, err) != TF_OK) {
        text_free(&speed);
        return TF_ERR_INPUT;
    }
    out->kind = DATASET_SNAPSHOTS;
    int status = load_tgcn_csv(&speed, speed_path, &adjacency, adjacency_path, lags, &out->snapshots, err);
    snprintf(out->format, sizeof out->format, "T-GCN CSV pair (speed + adjacency), lags %lld",
             (long long)out->snapshots.feature_width);
    text_free(&speed);
    text_free(&adjacency);
    return status;
}

/* The end of the message refusing --lags for data without lags. */
#define LAGS_APPLY_TO                                                                                      \
    "--lags applies to lagged formats (chickenpox, pedalme, england_covid, montevideo_bus, T-GCN CSV pairs)"

static int load_file(const char *path, const dataset_options *options, dataset *out, tf_error *err)
{
    name_from_path(path, out->name, sizeof out->name);
    if (options->edge_columns && (!has_suffix(path, ".csv") || has_suffix(path, "_speed.csv")))
        return tf_error_set(err, TF_ERR_INPUT,
                            "option --edge-columns: %s is not an event CSV with a header to name columns in", path);
    if (has_suffix(path, "_speed.csv"))
        return load_tgcn_pair(path, options->lags, out, err);
    int is_json = has_suffix(path, ".json"), is_csv = has_suffix(path, ".csv"), is_text = has_suffix(path, ".txt");
    if (!is_json && !is_csv && !is_text)
        return tf_error_set(err, TF_ERR_INPUT,
                            "%s: unknown format, expected a .json, .csv or .txt file (optionally gzipped as .gz)", path);
    text content;
    if (text_read_file(path, &content, err) != TF_OK)
        return TF_ERR_INPUT;
    int status;
    if (is_json) {
        pygt_layout layout = PYGT_CHICKENPOX;
        out->kind = DATASET_SNAPSHOTS;
        status = load_pygt_json(&content, path, options->lags, &out->snapshots, &layout, err);
        if (layout == PYGT_TWITTER_TENNIS)
            snprintf(out->format, sizeof out->format, "PyTorch Geometric Temporal JSON (%s)", pygt_layout_name(layout));
        else
            snprintf(out->format, sizeof out->format, "PyTorch Geometric Temporal JSON (%s), lags %lld",
                     pygt_layout_name(layout), (long long)out->snapshots.feature_width);
    } else if (options->lags) {
        status = tf_error_set(err, TF_ERR_INPUT,
                              "option --lags: %s is an event stream, it has no lagged features; " LAGS_APPLY_TO,
                              path);
    } else {
        out->kind = DATASET_EVENTS;
        if (is_csv) {
            event_csv_columns columns = {options->edge_columns, 0, ""};
            status = load_events_csv_columns(&content, path, &columns, &out->events, err);
            if (columns.users)
                snprintf(out->format, sizeof out->format, "event CSV with header, users and items (items from id %lld)",
                         (long long)columns.users);
            else
                snprintf(out->format, sizeof out->format, "event CSV with header");
            if (status == TF_OK && options->notes)
                fprintf(options->notes, "%s\n", columns.report);
        } else {
            status = load_events_text(&content, path, &out->events, err);
            snprintf(out->format, sizeof out->format, "whitespace-separated events");
        }
    }
    text_free(&content);
    return status;
}

int dataset_attach_labels(dataset *out, const char *path, tf_error *err)
{
    if (out->kind != DATASET_SNAPSHOTS)
        return tf_error_set(err, TF_ERR_INPUT, "option --labels: %s is an event stream; labels per snapshot apply to "
                            "snapshot data", out->source);
    text content;
    if (text_read_file(path, &content, err) != TF_OK)
        return TF_ERR_INPUT;
    int status = load_snapshot_labels(&content, path, &out->snapshots, err);
    text_free(&content);
    return status;
}

int dataset_load(const char *spec, const dataset_options *options, dataset *out, tf_error *err)
{
    static const dataset_options defaults = {0, NULL, NULL, NULL, NULL};
    memset(out, 0, sizeof *out);
    if (!options)
        options = &defaults;
    snprintf(out->source, sizeof out->source, "%s", spec);
    int status;
    struct stat info;
    if (strncmp(spec, "powerlaw:", 9) == 0 || strncmp(spec, "events:", 7) == 0 || strncmp(spec, "communities:", 12) == 0) {
        if (options->edge_columns)
            return tf_error_set(err, TF_ERR_INPUT,
                                "option --edge-columns: %s is generated, it has no columns; it applies to .csv "
                                "event files", spec);
        if (options->lags)
            return tf_error_set(err, TF_ERR_INPUT,
                                "option --lags: %s is generated, its features are not a series' lags; " LAGS_APPLY_TO,
                                spec);
        status = load_generated(spec, options, out, err);
    } else if (stat(spec, &info) == 0 || strchr(spec, '/') || strchr(spec, '.')) {
        status = load_file(spec, options, out, err);
    } else {
        const bundled_dataset *b = bundled_datasets;
        while (b->name && strcmp(b->name, spec) != 0)
            b++;
        if (!b->name) {
            char names[512] = "";
            for (b = bundled_datasets; b->name; b++)
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", b == bundled_datasets ? "" : ", ",
                         b->name);
            return tf_error_set(err, TF_ERR_INPUT,
                                "%s: no such file or bundled dataset; bundled: %s; or a generator spec powerlaw:... / communities:... / events:...",
                                spec, names);
        }
        snprintf(out->source, sizeof out->source, "%s/%s", dataset_directory(), b->file);
        status = load_file(out->source, options, out, err);
        snprintf(out->name, sizeof out->name, "%s", b->name);
    }
    if (status != TF_OK)
        dataset_free(out);
    return status;
}

int dataset_summarize(const dataset *d, dataset_summary *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    if (d->kind == DATASET_SNAPSHOTS) {
        const snapshot_seq *s = &d->snapshots;
        out->vertices = out->id_space = s->num_nodes;
        out->steps = s->num_snapshots;
        out->edges = snapshot_seq_edge_stats(s);
        out->feature_width = s->feature_width;
        out->target_width = s->target_width;
        for (int64_t t = 0; t < s->num_snapshots; t++) {
            int64_t present = 0;
            for (int64_t v = 0; v < s->num_nodes; v++)
                present += s->snapshots[t].present[v];
            if (t == 0 || present < out->present_min)
                out->present_min = present;
            if (present > out->present_max)
                out->present_max = present;
        }
        return TF_OK;
    }
    const event_stream *e = &d->events;
    out->vertices = event_stream_active_nodes(e);
    out->distinct_pairs = event_stream_distinct_pairs(e);
    if (out->vertices < 0 || out->distinct_pairs < 0)
        return tf_error_set(err, TF_ERR_SYSTEM, "%s: out of memory while counting vertices", d->source);
    out->id_space = e->num_nodes;
    out->steps = e->num_events;
    out->first_time = e->num_events ? e->time[0] : 0;
    out->last_time = e->num_events ? e->time[e->num_events - 1] : 0;
    out->feature_width = e->feature_width;
    out->has_labels = e->label != NULL;
    return TF_OK;
}
