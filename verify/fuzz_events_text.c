/* libFuzzer target for load_events_text(), the whitespace-separated event reader
 * (src dst time [label]). See fuzz_common.h for what is checked and how to run it. */
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
    int status = load_events_text(&content, "fuzz.txt", &events, &err);
    if (status == TF_OK) {
        fuzz_check_success("fuzz_events_text", event_stream_validate(&events, "fuzz", &err), &err);
        event_stream_free(&events);
    } else {
        fuzz_check_failure("fuzz_events_text", status, &err);
    }
    text_free(&content);
    return 0;
}
