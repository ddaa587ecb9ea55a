/* libFuzzer target for load_tgcn_csv(), the T-GCN speed + adjacency CSV pair.
 * Any byte string must give either a result (freed here) or TF_ERR_INPUT with a one-line
 * message; a crash, a leak, a sanitizer report or a bad message is a finding.
 *
 * The loader reads two files from one input: the bytes before the first 0x00 are the speed
 * CSV, the bytes after it the adjacency CSV (a real CSV never holds a NUL byte, so the split
 * costs no coverage). Without a 0x00 the adjacency is empty, which the loader must reject.
 *
 * Run by hand after `cmake --build build --target fuzz_tgcn_csv_build`. New inputs go to the
 * first directory, so give it a scratch one and the seeds second (read only):
 *     mkdir -p /tmp/fuzz_tgcn_csv && build/verify/fuzz_tgcn_csv /tmp/fuzz_tgcn_csv verify/fuzz_corpus/tgcn_csv -max_total_time=60
 * Replay a finding: build/verify/fuzz_tgcn_csv crash-<hash>
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loaders.h"
#include "memory.h"

#define FUZZ_NAME "fuzz_tgcn_csv"

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
    const uint8_t *separator = memchr(data, 0, size);
    size_t speed_size = separator ? (size_t)(separator - data) : size;
    const uint8_t *adjacency_bytes = separator ? separator + 1 : data + size;
    size_t adjacency_size = size - speed_size - (separator ? 1 : 0);

    tf_error err = {0};
    text speed = {0}, adjacency = {0};
    if (text_from_bytes(data, speed_size, &speed, &err) != TF_OK ||
        text_from_bytes(adjacency_bytes, adjacency_size, &adjacency, &err) != TF_OK) {
        text_free(&speed); /* no memory for the copies: nothing of the loader was exercised */
        return 0;
    }
    snapshot_seq snapshots;
    /* lags 0 = T-GCN's default of 12, the path the command line takes. */
    int status = load_tgcn_csv(&speed, "speed.csv", &adjacency, "adjacency.csv", 0, &snapshots, &err);
    if (status == TF_OK)
        snapshot_seq_free(&snapshots);
    else
        check_failure(status, &err);
    text_free(&speed);
    text_free(&adjacency);
    return 0;
}
