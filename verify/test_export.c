/* `twofold export` end to end (what bench/train.sh gives the peer to train on): the files it
 * writes, read back with npy_read(), are bit for bit the arrays dataset_load() gives `twofold
 * train`, for a bundled dataset and for a generator spec with absent vertices (present.npy); bad
 * options, event data and an existing directory exit with status 2 and one line, leaving no
 * DIR.partial behind.
 *
 * Usage: test_export TWOFOLD (the program, from ctest). */
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "datasets/dataset.h"
#include "ref/data/npy.h"
#include "verify/testing.h"

static const char *twofold;

/* Run twofold with @p args (NULL-terminated, without the program); its stderr in @p message
 * (first line kept, trailing newline cut, *lines set to its line count); returns the exit status. */
static int run_twofold(const char *const *args, char *message, size_t size, int *lines)
{
    char log[4200];
    snprintf(log, sizeof log, "%s/stderr.txt", temporary_directory());
    fflush(stdout); /* else the child's freopen() writes our buffered lines a second time */
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        const char *argv[32] = {twofold};
        for (int i = 0; args[i] && i < 30; i++)
            argv[i + 1] = args[i];
        if (!freopen(log, "w", stderr) || !freopen("/dev/null", "w", stdout))
            _exit(126);
        execv(twofold, (char *const *)argv);
        _exit(127);
    }
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    FILE *in = fopen(log, "r");
    ck_assert_ptr_nonnull(in);
    size_t length = fread(message, 1, size - 1, in);
    fclose(in);
    message[length] = '\0';
    *lines = 0;
    for (size_t i = 0; i < length; i++)
        *lines += message[i] == '\n';
    if (length && message[length - 1] == '\n')
        message[length - 1] = '\0';
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int exists(const char *path)
{
    struct stat s;
    return stat(path, &s) == 0;
}

/* A fresh path under the test's temporary directory (not created). */
static const char *fresh_path(const char *name)
{
    static char path[4][4200];
    static int next;
    char *out = path[next++ % 4];
    snprintf(out, sizeof path[0], "%s/%s", temporary_directory(), name);
    return out;
}

/* npy_read @p directory/@p name, asserting its dtype and shape [ndim]. */
static void read_array(const char *directory, const char *name, npy_dtype dtype, int ndim, const int64_t *shape,
                       npy_array *out)
{
    char path[8704]; /* room for any directory this test builds (fresh_path's) and a name */
    ck_assert_int_lt(snprintf(path, sizeof path, "%s/%s", directory, name), (int)sizeof path);
    tf_error err;
    ck_assert_msg(npy_read(path, out, &err) == TF_OK, "%s", err.message);
    ck_assert_int_eq(out->dtype, dtype);
    ck_assert_int_eq(out->ndim, ndim);
    for (int i = 0; i < ndim; i++)
        ck_assert_msg(out->shape[i] == shape[i], "%s: extent %d is %lld, expected %lld", path, i,
                      (long long)out->shape[i], (long long)shape[i]);
}

/* Bytes of @p a and @p b [count] that differ, in units of @p width bytes. */
static int64_t differing_words(const void *a, const void *b, int64_t count, size_t width)
{
    int64_t differing = 0;
    for (int64_t i = 0; i < count; i++)
        differing += memcmp((const char *)a + i * width, (const char *)b + i * width, width) != 0;
    return differing;
}

/* Export @p spec with twofold, read every file back and compare it with dataset_load()'s arrays;
 * prints how many values were compared. Returns the snapshots that had a present.npy. */
static int64_t export_and_compare(const char *spec, const char *name)
{
    const char *out = fresh_path(name);
    char message[4096];
    int lines;
    const char *args[] = {"export", "--data", spec, "--out", out, NULL};
    ck_assert_msg(run_twofold(args, message, sizeof message, &lines) == 0, "twofold export %s: %s", spec, message);

    dataset d;
    tf_error err;
    ck_assert_msg(dataset_load(spec, NULL, &d, &err) == TF_OK, "%s", err.message);
    ck_assert_int_eq(d.kind, DATASET_SNAPSHOTS);
    const snapshot_seq *seq = &d.snapshots;
    const int64_t n = seq->num_nodes;
    int64_t compared = 0, differing = 0, masks = 0;
    for (int64_t t = 0; t < seq->num_snapshots; t++) {
        const snapshot *s = &seq->snapshots[t];
        const int64_t edges = s->graph.num_edges;
        char directory[4300];
        snprintf(directory, sizeof directory, "%s/%05lld", out, (long long)t);
        npy_array index, weight, x, y;
        read_array(directory, "edge_index.npy", NPY_INT64, 2, (int64_t[]){2, edges}, &index);
        read_array(directory, "edge_weight.npy", NPY_FLOAT32, 1, (int64_t[]){edges}, &weight);
        read_array(directory, "x.npy", NPY_FLOAT32, 2, (int64_t[]){n, seq->feature_width}, &x);
        read_array(directory, "y.npy", NPY_FLOAT32, 2, (int64_t[]){n, seq->target_width}, &y);
        const int64_t *sources = index.data, *destinations = sources + edges;
        for (int64_t v = 0; v < n; v++)
            for (int64_t e = s->graph.row_ptr[v]; e < s->graph.row_ptr[v + 1]; e++)
                differing += (sources[e] != s->graph.col[e]) + (destinations[e] != v);
        differing += differing_words(weight.data, s->graph.weight, edges, sizeof(float)) +
                     differing_words(x.data, s->features.data, s->features.size, sizeof(float)) +
                     differing_words(y.data, s->targets.data, s->targets.size, sizeof(float));
        compared += 3 * edges + s->features.size + s->targets.size;
        int absent = 0;
        for (int64_t v = 0; v < n; v++)
            absent |= !s->present[v];
        char mask_path[4400];
        snprintf(mask_path, sizeof mask_path, "%s/present.npy", directory);
        ck_assert_msg(exists(mask_path) == absent, "%s: present.npy %s, yet %s vertex is absent", directory,
                      absent ? "missing" : "written", absent ? "a" : "no");
        if (absent) {
            npy_array present;
            read_array(directory, "present.npy", NPY_INT64, 1, (int64_t[]){n}, &present);
            for (int64_t v = 0; v < n; v++)
                differing += ((const int64_t *)present.data)[v] != (s->present[v] != 0);
            compared += n;
            masks++;
            npy_free(&present);
        }
        npy_free(&index);
        npy_free(&weight);
        npy_free(&x);
        npy_free(&y);
    }
    char manifest[4300];
    snprintf(manifest, sizeof manifest, "%s/manifest.json", out);
    ck_assert_msg(exists(manifest), "no %s", manifest);
    char partial[4300];
    snprintf(partial, sizeof partial, "%s.partial", out);
    ck_assert_msg(!exists(partial), "%s left behind", partial);
    printf("%s: %lld snapshots x %lld vertices: %lld values compared (edge index, weights, x, y, present), %lld "
           "differ; %lld snapshots with present.npy\n",
           spec, (long long)seq->num_snapshots, (long long)n, (long long)compared, (long long)differing,
           (long long)masks);
    ck_assert_int_eq(differing, 0);
    ck_assert_int_gt(compared, 0);
    dataset_free(&d);
    return masks;
}

START_TEST(bundled_dataset_bit_for_bit)
{
    ck_assert_int_eq(export_and_compare("pedalme", "pedalme"), 0);
}
END_TEST

START_TEST(generator_spec_bit_for_bit)
{
    /* vertex churn: vertices depart and arrive, so some snapshots need present.npy */
    ck_assert_int_gt(export_and_compare("powerlaw:nodes=300,edges=1500,snapshots=6,arrival=0.1,seed=7", "powerlaw"),
                     0);
}
END_TEST

/* twofold ARGS... exits 2 with one stderr line containing @p expected, leaving @p out (when not
 * NULL) without a .partial. */
static void expect_refusal(const char *expected, const char *out, const char *const *args)
{
    char message[4096];
    int lines;
    const int status = run_twofold(args, message, sizeof message, &lines);
    ck_assert_msg(status == 2, "exit status %d, expected 2: %s", status, message);
    ck_assert_msg(lines == 1, "%d stderr lines, expected one: %s", lines, message);
    ck_assert_msg(strstr(message, expected), "\"%s\" lacks \"%s\"", message, expected);
    if (out) {
        char partial[4300];
        snprintf(partial, sizeof partial, "%s.partial", out);
        ck_assert_msg(!exists(partial), "%s left behind after: %s", partial, message);
    }
    printf("  refused as expected: %s\n", message);
}

#define REFUSED(expected, out, ...)                                                                            \
    do {                                                                                                       \
        const char *const refusal_args_[] = {"export", __VA_ARGS__, NULL};                                     \
        expect_refusal((expected), (out), refusal_args_);                                                      \
    } while (0)

START_TEST(bad_options_refused)
{
    const char *out = fresh_path("refused");
    REFUSED("--data and --out are required", NULL, "--data", "chickenpox");
    REFUSED("--data and --out are required", NULL, "--out", out);
    REFUSED("unknown option --colour", NULL, "--data", "chickenpox", "--out", out, "--colour");
    REFUSED("needs a value", NULL, "--data", "chickenpox", "--out");
    REFUSED("expected a whole number in 1..100000", NULL, "--data", "chickenpox", "--out", out, "--lags", "0");
    REFUSED("no such file or bundled dataset", out, "--data", "no_such_data", "--out", out);
    REFUSED("unknown parameter", out, "--data", "powerlaw:nodes=10,colour=red", "--out", out);
    REFUSED("is an event stream", out, "--data", "events:nodes=20,events=50", "--out", out);
    REFUSED("cannot create", NULL, "--data", "chickenpox", "--out", fresh_path("no/such/parent"));
    REFUSED("expected a new directory's name", NULL, "--data", "chickenpox", "--out", ".");
    ck_assert_msg(!exists(out), "%s was created by a refused export", out);
}
END_TEST

START_TEST(existing_directory_refused)
{
    /* non-empty: refused, and its file untouched */
    const char *full = fresh_path("full");
    ck_assert_int_eq(mkdir(full, 0755), 0);
    char file[4300];
    snprintf(file, sizeof file, "%s/mine.txt", full);
    FILE *f = fopen(file, "w");
    ck_assert_ptr_nonnull(f);
    fputs("the user's\n", f);
    fclose(f);
    REFUSED("exists and is not empty", full, "--data", "chickenpox", "--out", full);
    ck_assert(exists(file));
    /* a file by that name */
    REFUSED("exists and is not a directory", NULL, "--data", "chickenpox", "--out", file);
    /* a symbolic link to a directory: refused (the rename would replace the link), target kept */
    char link[4300];
    snprintf(link, sizeof link, "%s.link", full);
    ck_assert_int_eq(symlink(full, link), 0);
    REFUSED("is a symbolic link, which the export would replace", NULL, "--data", "chickenpox", "--out", link);
    ck_assert(exists(file));
    /* a DIR.partial left by an interrupted export: refused until removed, and kept */
    const char *out = fresh_path("interrupted");
    char partial[4300];
    snprintf(partial, sizeof partial, "%s.partial", out);
    ck_assert_int_eq(mkdir(partial, 0755), 0);
    REFUSED("one was interrupted; remove it", NULL, "--data", "chickenpox", "--out", out);
    ck_assert(exists(partial));
    ck_assert(!exists(out));
    /* an empty directory is replaced by the export */
    const char *empty = fresh_path("empty");
    ck_assert_int_eq(mkdir(empty, 0755), 0);
    char message[4096];
    int lines;
    const char *args[] = {"export", "--data", "pedalme", "--out", empty, NULL};
    ck_assert_msg(run_twofold(args, message, sizeof message, &lines) == 0, "%s", message);
    char manifest[4300];
    snprintf(manifest, sizeof manifest, "%s/manifest.json", empty);
    ck_assert(exists(manifest));
    printf("  an empty --out directory was filled\n");
}
END_TEST

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s TWOFOLD\n", argv[0]);
        return 2;
    }
    twofold = argv[1];
    const named_test tests[] = {
        {"bundled_dataset_bit_for_bit", bundled_dataset_bit_for_bit},
        {"generator_spec_bit_for_bit", generator_spec_bit_for_bit},
        {"bad_options_refused", bad_options_refused},
        {"existing_directory_refused", existing_directory_refused},
    };
    return run_suite(suite_of("export", tests, sizeof tests / sizeof *tests, 120));
}
