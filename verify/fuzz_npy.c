/* libFuzzer target for npy_parse(), the NumPy .npy reader (header dict, versions 1-3, C and
 * Fortran order). See fuzz_common.h for what is checked and how to run it. */
#include "ref/data/npy.h"
#include "verify/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tf_set_memory_limit(FUZZ_MEMORY_LIMIT);
    tf_error err = {0};
    npy_array array;
    int status = npy_parse(data, size, "fuzz.npy", &array, &err);
    if (status == TF_OK) {
        int64_t elements = 1;
        for (int d = 0; d < array.ndim; d++)
            elements *= array.shape[d];
        if (elements != array.size || array.ndim < 0 || array.ndim > NPY_MAX_DIMS)
            fuzz_check_success("fuzz_npy", TF_ERR_INPUT, &err); /* shape and size disagree */
        npy_free(&array);
    } else {
        fuzz_check_failure("fuzz_npy", status, &err);
    }
    return 0;
}
