/* libFuzzer target for load_events_csv(), the event CSV reader whose header names the
 * columns. See fuzz_common.h for what is checked and how to run it. */
#include "ref/data/loaders.h"
#include "verify/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tf_set_memory_limit(FUZZ_MEMORY_LIMIT);
    tf_error err = {0};
    text content;
    if (text_from_bytes(data, size, &content, &err) != TF_OK)
        return 0; /* no memory for the copy: nothing of the loader was exercised */
    event_stream events;
    int status = load_events_csv(&content, "fuzz.csv", &events, &err);
    if (status == TF_OK) {
        fuzz_check_success("fuzz_events_csv", event_stream_validate(&events, "fuzz", &err), &err);
        event_stream_free(&events);
    } else {
        fuzz_check_failure("fuzz_events_csv", status, &err);
    }
    text_free(&content);
    return 0;
}
