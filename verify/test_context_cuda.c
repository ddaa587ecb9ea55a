/* The GPU context: device detection, creation, and a kernel that must really run.
 * Without a GPU (or driver) the test exits 77, which CTest reports as skipped. */
#include "verify/testing_cuda.h"

START_TEST(context_runs_kernels)
{
    cuda_context context;
    tf_error err;
    ck_assert_msg(cuda_context_create(&context, 0, &err) == TF_OK, "%s", err.message);
    printf("device 0: %s, compute capability %d.%d, %.1f GiB\n", context.name, context.compute_major,
           context.compute_minor, (double)context.total_memory / (1 << 30));
    ck_assert(context.name[0] != '\0');
    ck_assert_int_ge(context.compute_major, 8); /* built for sm_80 and sm_90 only */
    int status = cuda_context_selftest(&context, 1 << 20, &err);
    ck_assert_msg(status == TF_OK, "%s", err.message);
    printf("self-test: a kernel wrote 1048576 indices, all read back correct\n");
    cuda_context_destroy(&context);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("cuda_context");
    TCase *cases = tcase_create("context");
    tcase_add_test(cases, context_runs_kernels);
    suite_add_tcase(suite, cases);
    return run_suite_cuda(suite, NULL); /* the test creates its own context */
}
