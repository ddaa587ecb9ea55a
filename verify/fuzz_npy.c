/* libFuzzer target for npy_parse(), the reader behind every parameter, output and
 * golden .npy file.
 * Any byte string must give either a result (freed here) or TF_ERR_INPUT with a one-line
 * message; a crash, a leak, a sanitizer report or a bad message is a finding.
 *
 * Run by hand after `cmake --build build --target fuzz_npy_build`. New inputs go to the
 * first directory, so give it a scratch one and the seeds second (read only):
 *     mkdir -p /tmp/fuzz_npy && build/verify/fuzz_npy /tmp/fuzz_npy verify/fuzz_corpus/npy -max_total_time=60
 * Replay a finding: build/verify/fuzz_npy crash-<hash>
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory.h"
#include "npy.h"

#define FUZZ_NAME "fuzz_npy"

/* libFuzzer gives up at 2 GiB (-rss_limit_mb=2048). An input that announces a huge size
 * must end in the loader's own "too large for memory" error, not in the fuzzer's
 * out-of-memory report, so cap each allocation far below that, as --memory-limit does.
 * 64 MiB is where tf_alloc() starts checking anyway; a lower cap also keeps the fuzzer
 * fast, since under ASan every huge (then rejected) allocation costs milliseconds. */
#define FUZZ_MEMORY_LIMIT ((uint64_t)64 << 20)

/* A failed load must say so properly: code TF_ERR_INPUT both returned and in the error, and
 * a non-empty message on one line (it is printed as is by the command line). Anything else
 * aborts, so libFuzzer records the input as a crash: a bad message is a finding too. */
static void check_failure(int status, const tf_error *err)
{
    const char *problem = NULL;
    if (status != TF_ERR_INPUT)
        problem = "the returned code is not TF_ERR_INPUT";
    else if (err->code != status)
        problem = "err.code differs from the returned code";
    else if (err->message[0] == '\0')
        problem = "the error message is empty";
    else if (strchr(err->message, '\n'))
        problem = "the error message spans several lines";
    if (problem) {
        fprintf(stderr, "%s: %s (returned %d, err.code %d, message \"%s\")\n", FUZZ_NAME, problem, status,
                err->code, err->message);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tf_set_memory_limit(FUZZ_MEMORY_LIMIT);
    tf_error err = {0};
    npy_array array;
    int status = npy_parse(data, size, "fuzz.npy", &array, &err);
    if (status == TF_OK)
        npy_free(&array);
    else
        check_failure(status, &err);
    return 0;
}
