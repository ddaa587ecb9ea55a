/* The main of a CUDA test, written once: exit 77 (CTest's "skipped") without a GPU, otherwise
 * create the context the tests share, run the suite, destroy the context. Separate from
 * verify/testing.h so that the CPU-only tests need no CUDA headers. Header-only, test-only.
 *
 * A test's main is then:
 *     ...build the suite...
 *     return run_suite_cuda(suite, &gpu);
 */
#ifndef TWOFOLD_VERIFY_TESTING_CUDA_H
#define TWOFOLD_VERIFY_TESTING_CUDA_H

#include "cuda/context.h"
#include "verify/testing.h"

/* The exit status CTest reports as skipped (SKIP_RETURN_CODE in verify/CMakeLists.txt). */
#define TEST_SKIPPED 77

/* 1 after printing why, when this machine has no usable GPU (or no driver); 0 otherwise. */
static inline int gpu_missing(void)
{
    if (cuda_device_count() > 0)
        return 0;
    printf("no GPU (or no driver): skipping\n");
    return 1;
}

/* Run @p suite on device 0 and free it. @p gpu receives the context the tests share (created
 * here, destroyed after the run); NULL for a suite whose tests create their own. Returns the
 * exit status: 0 when every test passed, 1 otherwise, TEST_SKIPPED without a GPU. */
static inline int run_suite_cuda(Suite *suite, cuda_context *gpu)
{
    if (gpu_missing()) {
        srunner_free(srunner_create(suite)); /* a suite is freed by its runner */
        return TEST_SKIPPED;
    }
    if (!gpu) {
        printf("%d GPU(s)\n", cuda_device_count());
        return run_suite(suite);
    }
    tf_error err;
    if (cuda_context_create(gpu, 0, &err) != TF_OK) {
        fprintf(stderr, "%s\n", err.message);
        srunner_free(srunner_create(suite));
        return 1;
    }
    printf("GPU: %s\n", gpu->name);
    int status = run_suite(suite);
    cuda_context_destroy(gpu);
    return status;
}

#endif
