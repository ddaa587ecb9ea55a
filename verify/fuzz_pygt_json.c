/* libFuzzer target for load_pygt_json(), the PyTorch Geometric Temporal JSON reader (all five
 * layouts, told apart by their keys). See fuzz_common.h for what is checked and how to run it. */
#include "ref/data/loaders.h"
#include "verify/fuzz_common.h"

static int load(const text *content, int *validation, tf_error *err)
{
    snapshot_seq snapshots;
    /* lags 0 = each layout's default, the path the command line takes. */
    int status = load_pygt_json(content, "fuzz.json", 0, &snapshots, NULL, err);
    if (status == TF_OK) {
        *validation = snapshot_seq_validate(&snapshots, "fuzz.json", err);
        snapshot_seq_free(&snapshots);
    }
    return status;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_text_target("fuzz_pygt_json", data, size, load);
}
