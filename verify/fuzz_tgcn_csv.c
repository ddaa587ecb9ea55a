/* libFuzzer target for load_tgcn_csv(), the T-GCN speed + adjacency CSV pair. The input is
 * split at its first 0x00 byte: before it the speed file, after it the adjacency file (empty
 * if there is no 0x00). See fuzz_common.h for what is checked and how to run it. */
#include "ref/data/loaders.h"
#include "verify/fuzz_common.h"

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
    if (status == TF_OK) {
        fuzz_check_success("fuzz_tgcn_csv", snapshot_seq_validate(&snapshots, "speed.csv", &err), &err);
        snapshot_seq_free(&snapshots);
    } else {
        fuzz_check_failure("fuzz_tgcn_csv", status, &err);
    }
    text_free(&speed);
    text_free(&adjacency);
    return 0;
}
