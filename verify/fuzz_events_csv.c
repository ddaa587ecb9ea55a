/* libFuzzer target for load_events_csv(), the event CSV reader whose header names the
 * columns. See fuzz_common.h for what is checked and how to run it. */
#include "ref/data/loaders.h"
#include "verify/fuzz_common.h"

static int load(const text *content, int *validation, tf_error *err)
{
    return fuzz_load_events(load_events_csv, "fuzz.csv", content, validation, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_text_target("fuzz_events_csv", data, size, load);
}
