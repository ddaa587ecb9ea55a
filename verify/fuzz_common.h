/* What every libFuzzer target in verify/ checks, in one place. Each fuzz_*.c feeds the input
 * to one loader; whatever the bytes, the loader must either
 *   - succeed with data that passes the validator (the invariants consumers rely on), or
 *   - fail with TF_ERR_INPUT (returned and in err.code) and a non-empty one-line message.
 * Anything else aborts, so libFuzzer records the input as a finding, as it does for a crash,
 * a leak or a sanitizer report.
 *
 * Run a target by hand after `cmake --build build --target fuzz_NAME_build`; new inputs go to
 * the first directory, so give it a scratch one and the seeds second:
 *     mkdir -p /tmp/fuzz_npy && build/verify/fuzz_npy /tmp/fuzz_npy verify/fuzz_corpus/npy -max_total_time=60
 * and replay a finding (ctest leaves it in build/verify/fuzz_work/NAME/) with
 *     build/verify/fuzz_npy build/verify/fuzz_work/npy/crash-<hash>
 */
#ifndef TWOFOLD_VERIFY_FUZZ_COMMON_H
#define TWOFOLD_VERIFY_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/core/error.h"
#include "ref/core/memory.h"

/* libFuzzer gives up at 2 GiB (-rss_limit_mb=2048). An input announcing a huge size must end
 * in the loader's own "too large for memory" error, not in libFuzzer's out-of-memory report,
 * so each target caps allocations far below that, as --memory-limit does. A low cap also
 * keeps the fuzzers fast: under ASan every huge (then rejected) allocation costs time. */
#define FUZZ_MEMORY_LIMIT ((uint64_t)64 << 20)

static void fuzz_fail(const char *target, const char *problem, int status, const tf_error *err)
{
    fprintf(stderr, "%s: %s (returned %d, err.code %d, message \"%s\")\n", target, problem, status, err->code,
            err->message);
    abort();
}

/* A failed load must say so properly: the message is printed as is by the command line. */
static void fuzz_check_failure(const char *target, int status, const tf_error *err)
{
    if (status != TF_ERR_INPUT)
        fuzz_fail(target, "the returned code is not TF_ERR_INPUT", status, err);
    if (err->code != status)
        fuzz_fail(target, "err.code differs from the returned code", status, err);
    if (err->message[0] == '\0')
        fuzz_fail(target, "the error message is empty", status, err);
    if (strchr(err->message, '\n'))
        fuzz_fail(target, "the error message spans several lines", status, err);
}

/* A successful load must produce valid data: `validation` is the validator's status. */
static void fuzz_check_success(const char *target, int validation, const tf_error *err)
{
    if (validation != TF_OK)
        fuzz_fail(target, "the loader accepted data its validator rejects", validation, err);
}

#endif
