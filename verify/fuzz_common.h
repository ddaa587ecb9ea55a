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
#include "ref/data/loaders.h"

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

/* How a target whose loader reads one text loads it: on success it validates what was loaded
 * (the validator's status into *validation) and frees it. Returns the loader's status. */
typedef int (*fuzz_text_load)(const text *content, int *validation, tf_error *err);

/* The whole of such a target: the memory cap, the input copied into a text, the load, and the
 * checks above on its outcome. Always returns 0, as libFuzzer wants. */
static inline int fuzz_text_target(const char *target, const uint8_t *data, size_t size, fuzz_text_load load)
{
    tf_set_memory_limit(FUZZ_MEMORY_LIMIT);
    tf_error err = {0};
    text content;
    if (text_from_bytes(data, size, &content, &err) != TF_OK)
        return 0; /* no memory for the copy: nothing of the loader was exercised */
    int validation = TF_OK;
    int status = load(&content, &validation, &err);
    if (status == TF_OK)
        fuzz_check_success(target, validation, &err);
    else
        fuzz_check_failure(target, status, &err);
    text_free(&content);
    return 0;
}

/* The load of the two event readers, load_events_csv() and load_events_text(), which share a
 * signature; `source` names the input in messages. */
static inline int fuzz_load_events(int (*reader)(const text *, const char *, event_stream *, tf_error *),
                                   const char *source, const text *content, int *validation, tf_error *err)
{
    event_stream events;
    int status = reader(content, source, &events, err);
    if (status == TF_OK) {
        *validation = event_stream_validate(&events, "fuzz", err);
        event_stream_free(&events);
    }
    return status;
}

#endif
