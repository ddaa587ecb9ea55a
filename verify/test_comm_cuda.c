/* The NCCL transport of the comm layer, where a GPU exists: comm_init must choose NCCL when
 * asked for a GPU and every rank has one, and the collectives must give on device buffers what
 * test_comm_mpi.c checks on host ones (crafted inputs, exact results). Run on one rank by ctest (a
 * machine with one GPU can give NCCL one rank); exits 77 without a GPU, which CTest reports as
 * skipped. Built only with NCCL. */
#include <cuda_runtime.h>

#include "verify/testing_cuda.h"
#include "verify/testing_mpi.h"

static comm world;

static float *device_copy(const float *host, int64_t count)
{
    float *device = NULL;
    ck_assert_int_eq(cudaMalloc((void **)&device, (size_t)count * sizeof(float)), cudaSuccess);
    ck_assert_int_eq(cudaMemcpy(device, host, (size_t)count * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
    return device;
}

START_TEST(collectives_on_device_buffers)
{
    const int64_t count = 4096;
    float *host = malloc((size_t)count * sizeof(float)), *back = malloc((size_t)count * sizeof(float));
    for (int64_t i = 0; i < count; i++)
        host[i] = (float)(i % 13);
    float *device = device_copy(host, count);
    tf_error err;
    int64_t wrong = 0;
    /* All-reduce over n ranks multiplies each (integer) value by n. */
    ck_assert_msg(comm_allreduce_sum(&world, device, count, &err) == TF_OK, "%s", err.message);
    cudaMemcpy(back, device, (size_t)count * sizeof(float), cudaMemcpyDeviceToHost);
    for (int64_t i = 0; i < count; i++)
        wrong += back[i] != host[i] * (float)world.size;
    /* Non-blocking all-reduce, then wait. */
    comm_request request;
    ck_assert(comm_iallreduce_sum(&world, device, count, &request, &err) == TF_OK);
    ck_assert(comm_wait(&world, &request, &err) == TF_OK);
    cudaMemcpy(back, device, (size_t)count * sizeof(float), cudaMemcpyDeviceToHost);
    for (int64_t i = 0; i < count; i++)
        wrong += back[i] != host[i] * (float)(world.size * world.size);
    /* All-to-all and all-gather of one block per rank (one rank: the block comes back). */
    int64_t counts[1] = {count}, offsets[1] = {0};
    float *source = device_copy(host, count), *target = NULL;
    cudaMalloc((void **)&target, (size_t)count * sizeof(float));
    if (world.size == 1) {
        ck_assert(comm_alltoallv(&world, source, counts, offsets, target, counts, offsets, sizeof(float), &err) == TF_OK);
        cudaMemcpy(back, target, (size_t)count * sizeof(float), cudaMemcpyDeviceToHost);
        wrong += memcmp(back, host, (size_t)count * sizeof(float)) != 0;
        cudaMemset(target, 0, (size_t)count * sizeof(float));
        ck_assert(comm_allgatherv(&world, source, count, target, counts, offsets, sizeof(float), &err) == TF_OK);
        cudaMemcpy(back, target, (size_t)count * sizeof(float), cudaMemcpyDeviceToHost);
        wrong += memcmp(back, host, (size_t)count * sizeof(float)) != 0;
    }
    ck_assert(comm_broadcast(&world, source, count * (int64_t)sizeof(float), 0, &err) == TF_OK);
    printf("NCCL on %d rank(s): all-reduce, non-blocking all-reduce, all-to-all-v, all-gather-v, broadcast: "
           "#wrong %lld\n",
           world.size, (long long)wrong);
    ck_assert_int_eq(wrong, 0);
    cudaFree(device);
    cudaFree(source);
    cudaFree(target);
    free(host);
    free(back);
}
END_TEST

int main(int argc, char **argv)
{
    if (gpu_missing())
        return TEST_SKIPPED;
    if (start_mpi(&world, &argc, &argv, 1) != 0)
        return 1;
    if (world.transport != COMM_NCCL)
        return stop_mpi(&world, "test_comm_cuda: a GPU per rank is present but comm_init chose MPI");
    Suite *suite = suite_create("comm_nccl");
    TCase *cases = tcase_create("nccl");
    tcase_add_test(cases, collectives_on_device_buffers);
    suite_add_tcase(suite, cases);
    return run_suite_mpi(suite, &world);
}
