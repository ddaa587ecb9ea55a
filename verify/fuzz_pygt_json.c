/* libFuzzer target for load_pygt_json(), the PyTorch Geometric Temporal JSON reader (all five
 * layouts, told apart by their keys). See fuzz_common.h for what is checked and how to run it. */
#include "ref/data/loaders.h"
#include "verify/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tf_set_memory_limit(FUZZ_MEMORY_LIMIT);
    tf_error err = {0};
    text content;
    if (text_from_bytes(data, size, &content, &err) != TF_OK)
        return 0; /* no memory for the copy: nothing of the loader was exercised */
    snapshot_seq snapshots;
    /* lags 0 = each layout's default, the path the command line takes. */
    int status = load_pygt_json(&content, "fuzz.json", 0, &snapshots, NULL, &err);
    if (status == TF_OK) {
        fuzz_check_success("fuzz_pygt_json", snapshot_seq_validate(&snapshots, "fuzz.json", &err), &err);
        snapshot_seq_free(&snapshots);
    } else {
        fuzz_check_failure("fuzz_pygt_json", status, &err);
    }
    text_free(&content);
    return 0;
}
