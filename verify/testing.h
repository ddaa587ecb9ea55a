/* Shared helpers for the Check suites in verify/: paths into the source tree, a suite
 * runner, random inputs, data and small models, asserting that a call failed the way it should,
 * and the two comparisons every twin check prints (the fp error and the count of values that
 * differ in bits).
 * Header-only, test-only. The mains of the MPI and CUDA tests are in verify/testing_mpi.h and
 * verify/testing_cuda.h. */
#ifndef TWOFOLD_VERIFY_TESTING_H
#define TWOFOLD_VERIFY_TESTING_H

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/nn/adam.h"
#include "ref/nn/compare.h"
#include "ref/core/error.h"
#include "ref/core/rng.h"
#include "ref/models/event_model.h"
#include "ref/models/model.h"
#include "ref/train.h"
#include "datasets/dataset.h"

#ifndef TWOFOLD_SOURCE_DIR
#error "verify/CMakeLists.txt defines TWOFOLD_SOURCE_DIR"
#endif

/* Valgrind's client request; without its header a test never thinks it is under Valgrind. */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

/* How many times a test repeats one code path: `native` in a plain run, `memcheck` under
 * Valgrind (`ctest -T memcheck`, 20-50 times slower). The two runs look for different things:
 * long chains of snapshots, many Adam steps and every model of the table catch numerical drift,
 * and the plain ctest run keeps them; a memory error shows on the first pass through a path, so
 * memcheck needs every path once, not the chain. The test prints the length it used. */
static inline int64_t test_repeats(int64_t native, int64_t memcheck)
{
    return RUNNING_ON_VALGRIND ? memcheck : native;
}

/* The data a test runs on: the dataset spec @p native in a plain run, @p memcheck under Valgrind,
 * for the same reason as test_repeats(): loops over every model of the table keep the real data
 * natively and see every path on a small generated graph under memcheck. */
static inline const char *test_data(const char *native, const char *memcheck)
{
    return RUNNING_ON_VALGRIND ? memcheck : native;
}

/* A path under the source tree, in a static buffer (use before the next call). */
static inline const char *source_path(const char *relative)
{
    static char buffer[4][4096];
    static int next;
    char *out = buffer[next++ % 4];
    snprintf(out, 4096, "%s/%s", TWOFOLD_SOURCE_DIR, relative);
    return out;
}

/* A fresh temporary directory for files a test writes (removed by the OS, not by us). */
static inline const char *temporary_directory(void)
{
    static char directory[64];
    if (!directory[0]) {
        snprintf(directory, sizeof directory, "/tmp/twofold-test-XXXXXX");
        if (!mkdtemp(directory)) {
            perror("mkdtemp");
            abort();
        }
    }
    return directory;
}

/* Write `content` to a file in the temporary directory; returns its path (static buffer). */
static inline const char *write_temporary(const char *name, const void *content, size_t size)
{
    static char path[4][256];
    static int next;
    char *out = path[next++ % 4];
    snprintf(out, 256, "%s/%s", temporary_directory(), name);
    FILE *file = fopen(out, "wb");
    ck_assert_ptr_nonnull(file);
    ck_assert_uint_eq(fwrite(content, 1, size, file), size);
    fclose(file);
    return out;
}

/* [count] floats from @p r, uniform in [-scale, scale): scale * (float)(2u - 1) (scale 1 leaves the
 * unit draws as they are). malloc'd, room for one at least; the caller frees. gradcheck.h's
 * random_array() scales in double, as its checks' inputs were drawn. */
static inline float *random_floats(int64_t count, float scale, rng *r)
{
    float *values = malloc((size_t)(count ? count : 1) * sizeof *values);
    ck_assert_ptr_nonnull(values);
    for (int64_t i = 0; i < count; i++)
        values[i] = scale * (float)(2.0 * rng_uniform(r) - 1.0);
    return values;
}

/* random_floats() with scale 1: [count] floats uniform in [-1, 1). */
static inline float *random_units(int64_t count, rng *r) { return random_floats(count, 1.0f, r); }

/* dataset_load() of @p spec: a bundled dataset's name, a file, or a generator spec such as
 * "events:nodes=40,events=300,seed=7" (its keys are the generator's parameters, datasets/dataset.h);
 * the test fails with the loader's message if it cannot. Free with dataset_free(). */
static inline void load_or_fail(const char *spec, dataset *out)
{
    tf_error err;
    ck_assert_msg(dataset_load(spec, NULL, out, &err) == TF_OK, "%s: %s", spec, err.message);
}

/* The default training options but for the windows: @p window snapshots long, one starting every
 * @p stride (0: every @p window), @p batch of them per step, over the first @p train_ratio of the
 * snapshots. */
static inline train_options train_options_windows(int64_t window, int64_t stride, int64_t batch, double train_ratio)
{
    train_options o;
    train_options_default(&o);
    o.window = window;
    o.stride = stride;
    o.batch = batch;
    o.train_ratio = train_ratio;
    return o;
}

/* load_or_fail() of a dataset of snapshots; returns them (owned by @p out). */
static inline const snapshot_seq *load_snapshots(const char *spec, dataset *out)
{
    load_or_fail(spec, out);
    ck_assert_msg(out->kind == DATASET_SNAPSHOTS, "%s: expected snapshots, got an event stream", spec);
    return &out->snapshots;
}

/* Datasets a program loads once for every test that reads them: load_snapshots() of a spec on its
 * first use, kept until shared_snapshots_free() at the end of main. For real data several tests only
 * read (twitter_tennis takes a second to parse natively, 13 s under Valgrind). At most 4 specs. */
typedef struct shared_dataset {
    const char *spec; /* NULL: a free slot */
    dataset data;
} shared_dataset;

static inline shared_dataset *shared_datasets(void)
{
    static shared_dataset table[4];
    return table;
}

/* The snapshots of @p spec (a string that lives as long as the table: a literal), loaded on the
 * first call; owned by the table (the caller must not change or free them). */
static inline const snapshot_seq *shared_snapshots(const char *spec)
{
    shared_dataset *table = shared_datasets();
    int i = 0;
    while (i < 4 && table[i].spec && strcmp(table[i].spec, spec) != 0)
        i++;
    ck_assert_msg(i < 4, "more than 4 shared datasets");
    if (!table[i].spec) {
        load_snapshots(spec, &table[i].data);
        table[i].spec = spec;
    }
    return &table[i].data.snapshots;
}

static inline void shared_snapshots_free(void)
{
    shared_dataset *table = shared_datasets();
    for (int i = 0; i < 4 && table[i].spec; i++) {
        dataset_free(&table[i].data);
        table[i].spec = NULL;
    }
}

/* The spec of the tests that run on twitter_tennis: natively twitter_tennis itself; under Valgrind,
 * which looks for paths rather than data (the loader is memory-checked by test_loaders), a generated
 * directed, weighted graph of 200 vertices whose edges change every snapshot, for the 13 s that
 * parsing twitter_tennis takes there. */
static inline const char *tennis_or_generated(void)
{
    return test_data("twitter_tennis", "powerlaw:nodes=200,edges=1600,snapshots=40,churn=0.05,features=4,seed=8");
}

/* @p kind's default configuration with these widths: memory, time encoding, embedding and edge
 * features (the small models of the event tests). */
static inline event_model_config event_model_config_with(event_model_kind kind, int64_t memory_width,
                                                         int64_t time_width, int64_t embedding_width,
                                                         int64_t edge_width)
{
    event_model_config config;
    event_model_config_default(&config, kind);
    config.memory_width = memory_width;
    config.time_width = time_width;
    config.embedding_width = embedding_width;
    config.edge_width = edge_width;
    return config;
}

/* Assert that `err` holds an input error (exit code 2) whose one-line message contains
 * every string in the NULL-terminated list `parts`, and print it so the log shows it. */
static inline void assert_input_error(int status, const tf_error *err, const char *const *parts)
{
    ck_assert_int_eq(status, TF_ERR_INPUT);
    ck_assert_int_eq(err->code, TF_ERR_INPUT);
    ck_assert_msg(strchr(err->message, '\n') == NULL, "message is not one line: %s", err->message);
    for (; *parts; parts++)
        ck_assert_msg(strstr(err->message, *parts) != NULL, "message \"%s\" lacks \"%s\"", err->message, *parts);
    printf("  error as expected: %s\n", err->message);
}

#define EXPECT_INPUT_ERROR(status, err, ...)                                                                   \
    do {                                                                                                       \
        const char *const expect_parts_[] = {__VA_ARGS__, NULL};                                               \
        assert_input_error((status), (err), expect_parts_);                                                    \
    } while (0)

/* The two comparisons every twin check prints, relative_error() (the fp error) and
 * differing_values() (how many values differ in bits), are ref/nn/compare.h's. */

/* Values that differ bit for bit between two training states: every parameter and both of
 * Adam's moments (0 = a resumed or repeated run is the same run). */
static inline int64_t differing_training_state(const parameter_list *pa, const adam *oa, const parameter_list *pb,
                                               const adam *ob)
{
    int64_t differing = 0;
    for (int64_t i = 0; i < pa->count; i++) {
        const int64_t n = pa->items[i].value.size;
        differing += differing_values(pa->items[i].value.data, pb->items[i].value.data, n) +
                     differing_values(oa->moments.items[i].value.data, ob->moments.items[i].value.data, n) +
                     differing_values(oa->moments.items[i].grad.data, ob->moments.items[i].grad.data, n);
    }
    return differing;
}

/* A model of @p kind (hidden 16, K 2, seed 5) on the reference kernels and its copy on the
 * kernels @p twin, through one window (snapshots first .. first + count - 1 of @p seq): forward,
 * loss, backward. Sets @p output to the relative error of the twin's predictions and
 * @p gradient to the worst relative error of its parameter gradients. */
static inline void compare_model_on_kernels(const snapshot_seq *seq, model_kind kind, const kernels *twin,
                                            int64_t first, int64_t count, double *output, double *gradient)
{
    tf_error err;
    model_config config = {kind, seq->feature_width, 16, seq->target_width, 2, 0};
    model a, b;
    ck_assert(model_create(&a, &config, 5, &err) == TF_OK);
    ck_assert(model_create(&b, &config, 5, &err) == TF_OK);
    b.kernels = twin;
    const int64_t size = count * seq->num_nodes;
    float *pa = calloc((size_t)size, sizeof(float)), *pb = calloc((size_t)size, sizeof(float));
    float *da = calloc((size_t)size, sizeof(float)), *db = calloc((size_t)size, sizeof(float));
    window_tape ta, tb;
    ck_assert(model_forward(&a, seq, first, count, &ta, pa, &err) == TF_OK);
    ck_assert_msg(model_forward(&b, seq, first, count, &tb, pb, &err) == TF_OK, "%s", err.message);
    model_window_loss(seq, first, count, pa, 1.0f, da);
    model_window_loss(seq, first, count, pb, 1.0f, db);
    ck_assert(model_backward(&a, seq, &ta, da, &err) == TF_OK);
    ck_assert_msg(model_backward(&b, seq, &tb, db, &err) == TF_OK, "%s", err.message);
    *output = relative_error(pb, pa, size);
    *gradient = 0;
    for (int64_t i = 0; i < a.parameters.count; i++)
        *gradient = fmax(*gradient, relative_error(b.parameters.items[i].grad.data, a.parameters.items[i].grad.data,
                                                   a.parameters.items[i].grad.size));
    window_tape_free(&a, &ta);
    window_tape_free(&b, &tb);
    free(pa), free(pb), free(da), free(db);
    model_free(&a);
    model_free(&b);
}

/* One test of a suite, with the name CK_RUN_CASE selects it by. */
typedef struct named_test {
    const char *name;
    const TTest *test;
} named_test;

/* A suite of one case per test, so CK_RUN_CASE=NAME runs one alone, each allowed
 * `timeout_seconds`; tests [count]. The runner the suite is added to frees it. */
static inline Suite *suite_of(const char *name, const named_test *tests, size_t count, double timeout_seconds)
{
    Suite *suite = suite_create(name);
    for (size_t i = 0; i < count; i++) {
        TCase *single = tcase_create(tests[i].name);
        tcase_set_timeout(single, timeout_seconds);
        tcase_add_test(single, tests[i].test);
        suite_add_tcase(suite, single);
    }
    return suite;
}

/* Run two suites (@p second may be NULL) and free them; returns the process exit status (0 when
 * every test passed). CK_RUN_SUITE=NAME runs one: verify/CMakeLists.txt labels a program's
 * generated-data suite unit (under Valgrind in CI) and its real-data or large suite slow. */
static inline int run_suites(Suite *first, Suite *second)
{
    SRunner *runner = srunner_create(first);
    if (second)
        srunner_add_suite(runner, second);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner), ran = srunner_ntests_run(runner);
    srunner_free(runner);
    /* A CK_RUN_SUITE or CK_RUN_CASE that names nothing here would pass without checking anything. */
    if (ran == 0)
        fprintf(stderr, "no test ran: CK_RUN_SUITE=%s CK_RUN_CASE=%s names none of this program's suites or cases\n",
                getenv("CK_RUN_SUITE") ? getenv("CK_RUN_SUITE") : "(unset)",
                getenv("CK_RUN_CASE") ? getenv("CK_RUN_CASE") : "(unset)");
    return failed == 0 && ran > 0 ? 0 : 1;
}

/* Run one suite and free it; returns the process exit status (0 when every test passed). */
static inline int run_suite(Suite *suite) { return run_suites(suite, NULL); }

#endif
