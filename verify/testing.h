/* Shared helpers for the Check suites in verify/: paths into the source tree, a suite
 * runner, asserting that a call failed the way it should, and the two comparisons every
 * twin check prints (the fp error and the count of values that differ in bits).
 * Header-only, test-only. */
#ifndef TWOFOLD_VERIFY_TESTING_H
#define TWOFOLD_VERIFY_TESTING_H

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/error.h"

#ifndef TWOFOLD_SOURCE_DIR
#error "verify/CMakeLists.txt defines TWOFOLD_SOURCE_DIR"
#endif

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

/* Run one suite; returns the process exit status (0 when every test passed). */
/* The fp error (chapters/00-overview.md, "What equal means"): the largest
 * |ours - reference| / max(1, |reference|) over n values; infinity if any is NaN. */
static inline double relative_error(const float *ours, const float *reference, int64_t n)
{
    double worst = 0;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs((double)ours[i] - (double)reference[i]) / fmax(1.0, fabs((double)reference[i]));
        worst = isnan(e) ? INFINITY : fmax(worst, e);
    }
    return worst;
}

/* How many of n values differ bit for bit (0 = bitwise equal). */
static inline int64_t differing_bits(const float *a, const float *b, int64_t n)
{
    int64_t differing = 0;
    for (int64_t i = 0; i < n; i++)
        differing += memcmp(&a[i], &b[i], sizeof(float)) != 0;
    return differing;
}

static inline int run_suite(Suite *suite)
{
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? 0 : 1;
}

#endif
