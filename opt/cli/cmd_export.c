/* twofold export: a snapshot dataset as .npy files, exactly the arrays `twofold train` trains on,
 * so another framework (bench/peer/) can train on the same data: bundled names, files and
 * generator specs alike.
 *
 * The files go to DIR.partial, which is renamed to DIR at the end: DIR either holds a whole export
 * or does not exist (an empty DIR is replaced). DIR.partial is created before the data is loaded,
 * and creating it is the lock: a second export to the same DIR is refused while the first runs,
 * and so is every export after one that was killed, until the user removes what it left. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "datasets/dataset.h"
#include "opt/cli/cli.h"
#include "opt/cli/commands.h"
#include "ref/core/io.h"
#include "ref/core/memory.h"
#include "ref/data/npy.h"

/* What the command was asked. */
typedef struct export_command {
    const char *data, *out;
    int lags;
} export_command;

static const option_spec export_options[] = {
    {"--data", OPTION_TEXT, OPTION_FIELD(export_command, data), .required = 1, .value_name = "D",
     .help = "bundled name, file or generator spec (see twofold info --help)"},
    {"--out", OPTION_TEXT, OPTION_FIELD(export_command, out), .required = 1, .value_name = "DIR",
     .help = "the directory to create (it must not exist, or be empty); the files are\n"
             "written to DIR.partial and renamed to DIR when all are written"},
    {"--lags", OPTION_WHOLE, OPTION_FIELD(export_command, lags), .min = 1, .max = 100000, .value_name = "L",
     .help = "lagged features for lagged formats (default: the format's own)"},
    {.name = NULL},
};

static const option_page export_pages[] = {
    {0, 14,
     "usage: twofold export --data DATASET --out DIR [--lags L]\n"
     "\n"
     "Write a snapshot dataset as NumPy files, exactly the arrays `twofold train --data DATASET`\n"
     "trains on (the same --lags), for other frameworks: bench/peer/ reads them.\n"
     "\n",
     "\n"
     "DIR/manifest.json holds the name, source, snapshot count, N, F and T; snapshot t (from 0) is\n"
     "in DIR/ttttt/ (t in five or more digits: 00000, 00001, ...):\n"
     "  edge_index.npy   int64 [2][E]: row 0 the sources, row 1 the destinations, in twofold's\n"
     "                   order (by destination, then source)\n"
     "  edge_weight.npy  float32 [E]\n"
     "  x.npy            float32 [N][F] node features\n"
     "  y.npy            float32 [N][T] targets\n"
     "  present.npy      int64 [N], 1 for a present vertex, 0 for an absent one (no edges, zero\n"
     "                   features; not in the loss); only where some vertex is absent\n"
     "\n"
     "Event streams (wikipedia, JODIE-style CSVs, events: specs) are not exported: they are one\n"
     "table already, the file itself, and the peer scripts race snapshot models only.\n"
     "\n" EXIT_STATUS_HELP},
    {0, 0, NULL, NULL},
};

static const option_table export_table = {.command = "export", .options = export_options, .pages = export_pages};

/* ---- the directories ------------------------------------------------------------------------------ */

/* DIR without trailing slashes and its .partial name. */
typedef struct export_names {
    char directory[4000], partial[4096];
} export_names;

static int make_names(const char *out, export_names *n, tf_error *err)
{
    size_t length = strlen(out);
    while (length > 1 && out[length - 1] == '/')
        length--; /* "DIR/" is DIR, not DIR/.partial */
    if (length == 0 || strcmp(out, "/") == 0 || strcmp(out, ".") == 0 || strcmp(out, "..") == 0)
        return tf_error_set(err, TF_ERR_INPUT, "export: --out \"%s\": expected a new directory's name", out);
    if (length + 16 > sizeof n->directory)
        return tf_error_set(err, TF_ERR_INPUT, "export: --out %s: path too long", out);
    memcpy(n->directory, out, length);
    n->directory[length] = '\0';
    snprintf(n->partial, sizeof n->partial, "%s.partial", n->directory);
    return TF_OK;
}

/* TF_OK when DIR does not exist or is an empty directory (the rename replaces it), else why not.
 * Checked before loading, so a user does not wait for a generator to hear it. */
static int check_target(const export_names *n, tf_error *err)
{
    struct stat s;
    if (lstat(n->directory, &s) != 0) {
        if (errno == ENOENT)
            return TF_OK;
        return tf_error_set(err, TF_ERR_INPUT, "export: --out %s: %s", n->directory, strerror(errno));
    }
    if (S_ISLNK(s.st_mode))
        return tf_error_set(err, TF_ERR_INPUT, "export: --out %s is a symbolic link, which the export would replace; "
                                               "give the real directory or a new name",
                            n->directory);
    if (!S_ISDIR(s.st_mode))
        return tf_error_set(err, TF_ERR_INPUT, "export: --out %s exists and is not a directory; choose a new name",
                            n->directory);
    DIR *listing = opendir(n->directory);
    if (!listing)
        return tf_error_set(err, TF_ERR_INPUT, "export: --out %s: %s", n->directory, strerror(errno));
    int empty = 1;
    for (struct dirent *entry; empty && (entry = readdir(listing));)
        empty = strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0;
    closedir(listing);
    if (!empty)
        return tf_error_set(err, TF_ERR_INPUT,
                            "export: --out %s exists and is not empty; choose a new directory or remove it first",
                            n->directory);
    return TF_OK;
}

/* The files of one snapshot directory, in the order written. */
static const char *const snapshot_files[] = {"edge_index.npy", "edge_weight.npy", "x.npy", "y.npy", "present.npy"};

/* Remove what this export wrote to DIR.partial (snapshots 0..count-1 and the manifest), then the
 * directory itself. Only our own names: nothing else can be in a directory we created. */
static void remove_partial(const export_names *n, int64_t count)
{
    char path[4200];
    for (int64_t t = 0; t < count; t++) {
        for (size_t f = 0; f < sizeof snapshot_files / sizeof *snapshot_files; f++) {
            snprintf(path, sizeof path, "%s/%05lld/%s", n->partial, (long long)t, snapshot_files[f]);
            unlink(path);
        }
        snprintf(path, sizeof path, "%s/%05lld", n->partial, (long long)t);
        rmdir(path);
    }
    snprintf(path, sizeof path, "%s/manifest.json", n->partial);
    unlink(path);
    rmdir(n->partial);
}

/* ---- the files ------------------------------------------------------------------------------------ */

/* @p s as a JSON string: quotes, backslashes and control characters escaped. */
static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

static int write_manifest(const export_names *n, const dataset *d, int64_t masks, tf_error *err)
{
    const snapshot_seq *seq = &d->snapshots;
    char path[4200];
    if (format_path(path, sizeof path, err, "%s/manifest.json", n->partial) != TF_OK)
        return err->code;
    output_file file;
    if (output_open(&file, NULL, path, err) != TF_OK)
        return err->code;
    FILE *out = file.stream;
    const snapshot_edge_stats edges = snapshot_seq_edge_stats(seq);
    fputs("{\n  \"format\": \"twofold export 1\",\n  \"name\": ", out);
    json_string(out, d->name);
    fputs(",\n  \"source\": ", out);
    json_string(out, d->source);
    fputs(",\n  \"read_as\": ", out);
    json_string(out, d->format);
    fprintf(out,
            ",\n  \"snapshots\": %lld,\n  \"nodes\": %lld,\n  \"features\": %lld,\n  \"targets\": %lld,\n"
            "  \"edges\": %lld,\n  \"snapshots_with_absent_vertices\": %lld,\n"
            "  \"layout\": \"snapshot t in %%05d/: edge_index.npy int64 [2,E] (sources, destinations), "
            "edge_weight.npy float32 [E], x.npy float32 [N,F], y.npy float32 [N,T], present.npy int64 [N] "
            "where some vertex is absent\"\n}\n",
            (long long)seq->num_snapshots, (long long)seq->num_nodes, (long long)seq->feature_width,
            (long long)seq->target_width, (long long)edges.total_edges, (long long)masks);
    return output_commit(&file, err);
}

/* @p directory/@p name as a .npy file. */
static int write_array(const char *directory, const char *name, npy_dtype dtype, int ndim, const int64_t *shape,
                       const void *data, tf_error *err)
{
    char path[4200];
    if (format_path(path, sizeof path, err, "%s/%s", directory, name) != TF_OK)
        return err->code;
    return npy_write(path, dtype, ndim, shape, data, err);
}

/* Snapshot @p t into DIR.partial/ttttt/; *masked is set when it needed present.npy. */
static int write_snapshot(const export_names *n, const snapshot_seq *seq, int64_t t, int *masked, tf_error *err)
{
    const snapshot *s = &seq->snapshots[t];
    const csr *g = &s->graph;
    const int64_t nodes = seq->num_nodes, edges = g->num_edges;
    char directory[4100];
    if (format_path(directory, sizeof directory, err, "%s/%05lld", n->partial, (long long)t) != TF_OK)
        return err->code;
    if (mkdir(directory, 0755) != 0)
        return tf_error_set(err, TF_ERR_SYSTEM, "%s: cannot create: %s", directory, strerror(errno));
    /* edge_index [2][E] from the CSR's in-edges: row v's edges go col[e] -> v. */
    int64_t *index = tf_alloc((size_t)(2 * edges > 0 ? 2 * edges : 1), sizeof *index, "exported edge index", err);
    int64_t *present = index ? tf_alloc((size_t)(nodes > 0 ? nodes : 1), sizeof *present, "exported presence", err)
                             : NULL;
    int status = present ? TF_OK : err->code;
    *masked = 0;
    if (status == TF_OK) {
        for (int64_t v = 0; v < nodes; v++) {
            for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++) {
                index[e] = g->col[e];
                index[edges + e] = v;
            }
            present[v] = s->present[v] != 0;
            *masked |= !s->present[v];
        }
    }
    const int64_t index_shape[2] = {2, edges}, weight_shape[1] = {edges};
    const int64_t x_shape[2] = {nodes, seq->feature_width}, y_shape[2] = {nodes, seq->target_width};
    if (status == TF_OK)
        status = write_array(directory, "edge_index.npy", NPY_INT64, 2, index_shape, index, err);
    if (status == TF_OK)
        status = write_array(directory, "edge_weight.npy", NPY_FLOAT32, 1, weight_shape, g->weight, err);
    if (status == TF_OK)
        status = write_array(directory, "x.npy", NPY_FLOAT32, 2, x_shape, s->features.data, err);
    if (status == TF_OK)
        status = write_array(directory, "y.npy", NPY_FLOAT32, 2, y_shape, s->targets.data, err);
    if (status == TF_OK && *masked)
        status = write_array(directory, "present.npy", NPY_INT64, 1, &nodes, present, err);
    free(index);
    free(present);
    return status;
}

int command_export(int argc, char **argv, tf_error *err)
{
    export_command c = {NULL, NULL, 0};
    option_parse parsed;
    if (options_parse(&export_table, argc, argv, &c, &parsed, err) != TF_OK)
        return err->code;
    if (parsed.help) {
        options_help(&export_table, -1, stdout);
        return TF_OK;
    }
    /* One process writes; R copies under mpiexec would race for DIR.partial. */
    if (ranks_launched() > 1)
        return tf_error_set(err, TF_ERR_INPUT, "export: run it as one process, not under mpiexec -n %d",
                            ranks_launched());
    export_names n;
    if (make_names(c.out, &n, err) != TF_OK || check_target(&n, err) != TF_OK)
        return err->code;

    /* DIR.partial first: a bad parent or a concurrent export is said before a long load. */
    if (mkdir(n.partial, 0755) != 0) {
        if (errno == EEXIST)
            return tf_error_set(err, TF_ERR_INPUT,
                                "export: %s exists: another export to %s is running, or one was interrupted; "
                                "remove it and export again",
                                n.partial, n.directory);
        return tf_error_set(err, TF_ERR_INPUT, "export: cannot create %s: %s", n.partial, strerror(errno));
    }
    cli_progress_state progress = {0, ""};
    dataset_options options = {c.lags, cli_progress, &progress, NULL, NULL};
    dataset d;
    if (dataset_load(c.data, &options, &d, err) != TF_OK) {
        remove_partial(&n, 0);
        return err->code;
    }
    if (d.kind != DATASET_SNAPSHOTS) {
        dataset_free(&d);
        remove_partial(&n, 0);
        return tf_error_set(err, TF_ERR_INPUT,
                            "export: %s is an event stream; export writes snapshot datasets (the event file is "
                            "already its own export)",
                            c.data);
    }
    const snapshot_seq *seq = &d.snapshots;
    int64_t written = 0, masks = 0;
    int status = TF_OK;
    for (; status == TF_OK && written < seq->num_snapshots; written++) {
        int masked = 0;
        status = write_snapshot(&n, seq, written, &masked, err);
        masks += masked;
    }
    if (status == TF_OK)
        status = write_manifest(&n, &d, masks, err);
    if (status == TF_OK && rename(n.partial, n.directory) != 0)
        status = tf_error_set(err, TF_ERR_INPUT, "export: cannot rename %s to %s: %s", n.partial, n.directory,
                              errno == ENOTEMPTY || errno == EEXIST ? "it was filled meanwhile" : strerror(errno));
    if (status != TF_OK)
        remove_partial(&n, written);
    else
        printf("exported %s: %lld snapshots x %lld vertices, %lld features, %lld target column(s), %lld edges in all, "
               "to %s\n",
               d.name, (long long)seq->num_snapshots, (long long)seq->num_nodes, (long long)seq->feature_width,
               (long long)seq->target_width, (long long)snapshot_seq_edge_stats(seq).total_edges, n.directory);
    dataset_free(&d);
    return status;
}
