/* The comm layer on 1..4 MPI ranks (ctest runs it under mpiexec): every collective on inputs
 * crafted so the exact result is known (nccl-tests' habit), a count of wrong values summed over
 * ranks, and the byte counts against their formulas in opt/comm.h. */
#include <math.h>

#include "verify/testing_mpi.h"

static comm world;

/* Sum of an integer over all ranks (for the #wrong column). */
static int64_t total_over_ranks(int64_t value)
{
    double v = (double)value;
    tf_error err;
    ck_assert(comm_allreduce_sum_double(&world, &v, 1, &err) == TF_OK);
    return (int64_t)v;
}

START_TEST(allreduce_sums_exactly)
{
    const int64_t count = 1000;
    float *values = malloc((size_t)count * sizeof *values);
    for (int64_t i = 0; i < count; i++)
        values[i] = (float)(world.rank + 1) * (float)(i % 7 + 1); /* small integers: sums are exact */
    uint64_t before = world.bytes_sent;
    tf_error err;
    ck_assert(comm_allreduce_sum(&world, values, count, &err) == TF_OK);
    uint64_t sent = world.bytes_sent - before;
    const float ranks_sum = (float)(world.size * (world.size + 1) / 2);
    int64_t wrong = 0;
    for (int64_t i = 0; i < count; i++)
        wrong += values[i] != ranks_sum * (float)(i % 7 + 1);
    int64_t all_wrong = total_over_ranks(wrong);
    uint64_t expected = world.size > 1 ? 2 * (uint64_t)(world.size - 1) * 4000 / (uint64_t)world.size : 0;
    if (world.rank == 0)
        printf("all-reduce of 1000 floats on %d rank(s): #wrong %lld, bytes sent by rank 0 %llu (2(n-1)/n x 4000 = "
               "%llu)\n",
               world.size, (long long)all_wrong, (unsigned long long)sent, (unsigned long long)expected);
    ck_assert_int_eq(all_wrong, 0);
    ck_assert_uint_eq(sent, expected);
    free(values);
}
END_TEST

START_TEST(nonblocking_allreduce)
{
    float values[64];
    for (int i = 0; i < 64; i++)
        values[i] = (float)(world.rank * 64 + i);
    comm_request request;
    tf_error err;
    ck_assert(comm_iallreduce_sum(&world, values, 64, &request, &err) == TF_OK);
    ck_assert(comm_wait(&world, &request, &err) == TF_OK);
    int64_t wrong = 0;
    for (int i = 0; i < 64; i++) /* sum over r of (64 r + i) = 64 n(n-1)/2 + n i */
        wrong += values[i] != (float)(64 * world.size * (world.size - 1) / 2 + world.size * i);
    int64_t all_wrong = total_over_ranks(wrong);
    if (world.rank == 0)
        printf("non-blocking all-reduce: #wrong %lld\n", (long long)all_wrong);
    ck_assert_int_eq(all_wrong, 0);
}
END_TEST

/* comm_test() drives a non-blocking all-reduce to completion without comm_wait() blocking; the
 * wait afterwards returns the same sums. */
START_TEST(nonblocking_allreduce_tested_to_completion)
{
    float values[64];
    for (int i = 0; i < 64; i++)
        values[i] = (float)(world.rank + i);
    comm_request request;
    tf_error err;
    ck_assert(comm_iallreduce_sum(&world, values, 64, &request, &err) == TF_OK);
    int done = 0;
    int64_t tests = 0;
    while (!done) {
        ck_assert(comm_test(&world, &request, &done, &err) == TF_OK);
        tests++;
    }
    ck_assert(comm_test(&world, &request, &done, &err) == TF_OK && done); /* a finished request stays finished */
    ck_assert(comm_wait(&world, &request, &err) == TF_OK);
    ck_assert(comm_test(&world, &request, &done, &err) == TF_OK && done); /* and one not in flight too */
    int64_t wrong = 0;
    for (int i = 0; i < 64; i++) /* sum over r of (r + i) = n(n-1)/2 + n i */
        wrong += values[i] != (float)(world.size * (world.size - 1) / 2 + world.size * i);
    int64_t all_wrong = total_over_ranks(wrong);
    if (world.rank == 0)
        printf("non-blocking all-reduce finished by comm_test (rank 0: %lld test(s)): #wrong %lld\n", (long long)tests,
               (long long)all_wrong);
    ck_assert_int_eq(all_wrong, 0);
}
END_TEST

/* Rank r sends to rank j the (r + j) % 3 + 1 integers 1000 r + 10 j + k. */
static int64_t pair_count(int from, int to) { return (from + to) % 3 + 1; }

/* Blocking (_i = 0) and non-blocking (_i = 1: comm_ialltoallv(), driven by comm_test(), then
 * comm_wait(), with the count arrays gone before the wait): the same blocks, the same bytes. */
START_TEST(alltoallv_delivers_every_block)
{
    const int n = world.size;
    int64_t send_counts[4] = {0}, send_offsets[4] = {0}, receive_counts[4] = {0}, receive_offsets[4] = {0};
    int64_t sent_total = 0, received_total = 0;
    for (int j = 0; j < n; j++) {
        send_counts[j] = pair_count(world.rank, j);
        send_offsets[j] = sent_total;
        sent_total += send_counts[j];
        receive_counts[j] = pair_count(j, world.rank);
        receive_offsets[j] = received_total;
        received_total += receive_counts[j];
    }
    int32_t *send = calloc((size_t)sent_total, sizeof *send), *receive = calloc((size_t)received_total, sizeof *receive);
    for (int j = 0; j < n; j++)
        for (int64_t k = 0; k < send_counts[j]; k++)
            send[send_offsets[j] + k] = 1000 * world.rank + 10 * j + (int32_t)k;
    uint64_t before = world.bytes_sent;
    tf_error err;
    if (_i == 0) {
        ck_assert_msg(comm_alltoallv(&world, send, send_counts, send_offsets, receive, receive_counts,
                                     receive_offsets, sizeof(int32_t), &err) == TF_OK,
                      "%s", err.message);
    } else {
        int64_t *layout = malloc(16 * sizeof *layout); /* freed before the wait: MPI must not need it */
        memcpy(layout, send_counts, sizeof send_counts), memcpy(layout + 4, send_offsets, sizeof send_offsets);
        memcpy(layout + 8, receive_counts, sizeof receive_counts);
        memcpy(layout + 12, receive_offsets, sizeof receive_offsets);
        comm_request request;
        ck_assert_msg(comm_ialltoallv(&world, send, layout, layout + 4, receive, layout + 8, layout + 12,
                                      sizeof(int32_t), &request, &err) == TF_OK,
                      "%s", err.message);
        free(layout);
        int done;
        ck_assert(comm_test(&world, &request, &done, &err) == TF_OK);
        ck_assert(comm_wait(&world, &request, &err) == TF_OK);
    }
    uint64_t sent = world.bytes_sent - before, expected = 0;
    for (int j = 0; j < n; j++)
        if (j != world.rank)
            expected += (uint64_t)send_counts[j] * sizeof(int32_t);
    int64_t wrong = 0;
    for (int j = 0; j < n; j++)
        for (int64_t k = 0; k < receive_counts[j]; k++)
            wrong += receive[receive_offsets[j] + k] != 1000 * j + 10 * world.rank + (int32_t)k;
    int64_t all_wrong = total_over_ranks(wrong), bytes_wrong = total_over_ranks(sent != expected);
    if (world.rank == 0)
        printf("%sall-to-all-v on %d rank(s): #wrong %lld; rank 0 sent %llu bytes (expected %llu, self excluded)\n",
               _i ? "non-blocking " : "", n,
               (long long)all_wrong, (unsigned long long)sent, (unsigned long long)expected);
    ck_assert_int_eq(all_wrong, 0);
    ck_assert_int_eq(bytes_wrong, 0);
    free(send);
    free(receive);
}
END_TEST

START_TEST(allgatherv_and_broadcast)
{
    const int n = world.size;
    int64_t counts[4] = {0}, offsets[4] = {0}, total = 0;
    for (int j = 0; j < n; j++) {
        counts[j] = j + 1;
        offsets[j] = total;
        total += counts[j];
    }
    double own[4] = {0};
    for (int k = 0; k <= world.rank; k++)
        own[k] = world.rank + 0.25 * k;
    double *gathered = malloc((size_t)total * sizeof *gathered);
    uint64_t before = world.bytes_sent;
    tf_error err;
    ck_assert(comm_allgatherv(&world, own, world.rank + 1, gathered, counts, offsets, sizeof(double), &err) == TF_OK);
    uint64_t sent = world.bytes_sent - before;
    int64_t wrong = 0;
    for (int j = 0; j < n; j++)
        for (int64_t k = 0; k < counts[j]; k++)
            wrong += gathered[offsets[j] + k] != j + 0.25 * (double)k;
    wrong += sent != (uint64_t)(n - 1) * (uint64_t)(world.rank + 1) * sizeof(double);
    /* Broadcast from the last rank. */
    char message[32];
    snprintf(message, sizeof message, "from rank %d", world.rank);
    before = world.bytes_sent;
    ck_assert(comm_broadcast(&world, message, sizeof message, n - 1, &err) == TF_OK);
    char expected[32];
    snprintf(expected, sizeof expected, "from rank %d", n - 1);
    wrong += strcmp(message, expected) != 0;
    wrong += world.bytes_sent - before != (world.rank == n - 1 ? (uint64_t)(n - 1) * sizeof message : 0);
    ck_assert(comm_barrier(&world, &err) == TF_OK);
    int64_t all_wrong = total_over_ranks(wrong);
    if (world.rank == 0)
        printf("all-gather-v, broadcast, barrier on %d rank(s): #wrong %lld (values and byte counts)\n", n,
               (long long)all_wrong);
    ck_assert_int_eq(all_wrong, 0);
    free(gathered);
}
END_TEST

/* The counts before an all-to-all-v and an all-gather of counts, each charged to its own counter:
 * the values arrive where they belong, every byte of bytes_sent is charged to the counter named
 * around it (nested: the inner one only), and a check's bytes stay out of bytes_sent. */
START_TEST(counts_charged_by_purpose)
{
    const int n = world.size;
    enum { PER_PEER = 3 };
    int64_t send[4 * PER_PEER], receive[4 * PER_PEER], gathered[4 * PER_PEER];
    for (int j = 0; j < n; j++) /* value k for rank j: 100 from + 10 to + k */
        for (int k = 0; k < PER_PEER; k++)
            send[j * PER_PEER + k] = 100 * world.rank + 10 * j + k;
    uint64_t counts_bytes = 0, gather_bytes = 0;
    const uint64_t before = world.bytes_sent, checks_before = world.check_bytes;
    tf_error err;
    uint64_t *outer = comm_charge(&world, &counts_bytes);
    ck_assert(comm_alltoall_counts(&world, send, receive, PER_PEER, &err) == TF_OK);
    uint64_t *inner_outer = comm_charge(&world, &gather_bytes);
    ck_assert(comm_allgather_counts(&world, send, PER_PEER, gathered, &err) == TF_OK);
    comm_charge(&world, inner_outer);
    comm_charge(&world, &world.check_bytes);
    double differing;
    ck_assert(comm_ranks_differing(&world, 1.0, &differing, &err) == TF_OK);
    comm_charge(&world, outer);
    const uint64_t sent = world.bytes_sent - before, checks = world.check_bytes - checks_before;
    int64_t wrong = 0;
    for (int j = 0; j < n; j++)
        for (int k = 0; k < PER_PEER; k++) {
            wrong += receive[j * PER_PEER + k] != 100 * j + 10 * world.rank + k;
            wrong += gathered[j * PER_PEER + k] != 100 * j + k;
        }
    const int64_t all_wrong = total_over_ranks(wrong);
    const uint64_t expected = 8 * PER_PEER * (uint64_t)(n - 1);
    if (world.rank == 0)
        printf("counts by purpose on %d rank(s): #wrong %lld; rank 0 charged %llu to the all-to-all and %llu to the "
               "all-gather (8 x 3 x (n-1) = %llu each), bytes_sent grew by %llu, checks %llu (kept out)\n",
               n, (long long)all_wrong, (unsigned long long)counts_bytes, (unsigned long long)gather_bytes,
               (unsigned long long)expected, (unsigned long long)sent, (unsigned long long)checks);
    ck_assert_int_eq(all_wrong, 0);
    ck_assert_uint_eq(counts_bytes, expected);
    ck_assert_uint_eq(gather_bytes, expected);
    ck_assert_uint_eq(sent, counts_bytes + gather_bytes);
    ck_assert(world.charged == NULL);
    ck_assert(n == 1 ? checks == 0 : checks > 0);
}
END_TEST

int main(int argc, char **argv)
{
    if (start_mpi(&world, &argc, &argv, 0) != 0)
        return 1;
    if (world.size > 4)
        return stop_mpi(&world, "test_comm_mpi: crafted for 1 to 4 ranks");
    Suite *suite = suite_create("comm");
    TCase *cases = tcase_create("collectives");
    tcase_add_test(cases, allreduce_sums_exactly);
    tcase_add_test(cases, nonblocking_allreduce);
    tcase_add_test(cases, nonblocking_allreduce_tested_to_completion);
    tcase_add_loop_test(cases, alltoallv_delivers_every_block, 0, 2);
    tcase_add_test(cases, allgatherv_and_broadcast);
    tcase_add_test(cases, counts_charged_by_purpose);
    suite_add_tcase(suite, cases);
    return run_suite_mpi(suite, &world);
}
