#include "opt/comm.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/core/clock.h"
#include "ref/core/memory.h"

#ifdef TWOFOLD_HAVE_NCCL
#include "cuda/comm.h"
#endif

/* MPI calls return an error code; turn one into a tf_error naming the call. */
static int mpi_check(int result, const char *call, tf_error *err)
{
    if (result == MPI_SUCCESS)
        return TF_OK;
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(result, text, &length);
    return tf_error_set(err, TF_ERR_SYSTEM, "MPI: %s failed: %s", call, text);
}
#define MPI_CHECK(call, err)                                                                                       \
    do {                                                                                                           \
        if (mpi_check((call), #call, (err)) != TF_OK)                                                              \
            return TF_ERR_SYSTEM;                                                                                  \
    } while (0)

int comm_init(comm *c, int *argc, char ***argv, int want_gpu, char *reason, size_t reason_size, tf_error *err)
{
    memset(c, 0, sizeof *c);
    c->device = -1;
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
        int provided;
        MPI_CHECK(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), err);
    }
    c->world = MPI_COMM_WORLD;
    MPI_CHECK(MPI_Comm_rank(c->world, &c->rank), err);
    MPI_CHECK(MPI_Comm_size(c->world, &c->size), err);
    MPI_Comm node;
    MPI_CHECK(MPI_Comm_split_type(c->world, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &node), err);
    MPI_Comm_rank(node, &c->local_rank);
    MPI_Comm_size(node, &c->local_size);
    MPI_Comm_free(&node);
    MPI_CHECK(MPI_Comm_dup(c->world, &c->control), err);
    c->transport = COMM_MPI;
    snprintf(reason, reason_size, "MPI on host buffers (%s)", want_gpu ? "GPU transport not available" : "CPU run");
#ifdef TWOFOLD_HAVE_NCCL
    if (want_gpu) {
        int devices = nccl_device_count();
        /* Every rank on a node needs its own GPU, on every node: agree on it collectively. */
        int enough = devices >= c->local_size, all_enough = 0;
        MPI_CHECK(MPI_Allreduce(&enough, &all_enough, 1, MPI_INT, MPI_MIN, c->world), err);
        if (all_enough) {
            c->device = c->local_rank;
            if (cuda_comm_create(c->rank, c->size, c->world, c->device, &c->nccl, err) != TF_OK)
                return TF_ERR_SYSTEM;
            c->transport = COMM_NCCL;
            snprintf(reason, reason_size, "NCCL on device buffers, one GPU per rank (%d GPU(s) on this node)", devices);
        } else {
            snprintf(reason, reason_size,
                     "MPI on host buffers: NCCL needs a GPU per rank and this node has %d GPU(s) for %d rank(s)",
                     devices, c->local_size);
        }
    }
#endif
    return TF_OK;
}

void comm_init_local(comm *c)
{
    memset(c, 0, sizeof *c);
    c->world = c->control = MPI_COMM_NULL;
    c->size = c->local_size = 1;
    c->transport = COMM_MPI;
    c->device = -1;
    c->local = 1;
}

void comm_finalize(comm *c)
{
    if (c->local)
        return;
#ifdef TWOFOLD_HAVE_NCCL
    if (c->nccl)
        cuda_comm_destroy(c->nccl);
#endif
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && c->control != MPI_COMM_NULL)
        MPI_Comm_free(&c->control);
    if (!finalized)
        MPI_Finalize();
    c->nccl = NULL;
}

/* Every byte count of every collective: the total, and the counter being charged (a check's
 * bytes only to check_bytes). */
static void count_sent(comm *c, uint64_t bytes)
{
    if (c->charged == &c->check_bytes) {
        c->check_bytes += bytes;
        return;
    }
    c->bytes_sent += bytes;
    if (c->charged)
        *c->charged += bytes;
}

uint64_t *comm_charge(comm *c, uint64_t *counter)
{
    uint64_t *previous = c->charged;
    c->charged = counter;
    return previous;
}

/* The ring all-reduce's traffic per rank: 2 (n - 1) / n of the payload. */
static uint64_t allreduce_bytes(const comm *c, uint64_t bytes)
{
    return c->size > 1 ? 2 * (uint64_t)(c->size - 1) * bytes / (uint64_t)c->size : 0;
}

/* MPI counts are int: large payloads go in pieces. */
#define MPI_PIECE ((int64_t)1 << 30)

static int allreduce_sum(comm *c, float *values, int64_t count, tf_error *err)
{
    count_sent(c, allreduce_bytes(c, (uint64_t)count * sizeof(float)));
    if (c->local) /* the sum over one rank */
        return TF_OK;
#ifdef TWOFOLD_HAVE_NCCL
    if (c->transport == COMM_NCCL)
        return nccl_allreduce_sum(c->nccl, values, count, err);
#endif
    for (int64_t first = 0; first < count; first += MPI_PIECE) {
        int piece = (int)(count - first < MPI_PIECE ? count - first : MPI_PIECE);
        MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, values + first, piece, MPI_FLOAT, MPI_SUM, c->world), err);
    }
    return TF_OK;
}

static int allreduce_sum_double(comm *c, double *values, int64_t count, tf_error *err)
{
    count_sent(c, allreduce_bytes(c, (uint64_t)count * sizeof(double)));
    if (c->local)
        return TF_OK;
    for (int64_t first = 0; first < count; first += MPI_PIECE) {
        int piece = (int)(count - first < MPI_PIECE ? count - first : MPI_PIECE);
        MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, values + first, piece, MPI_DOUBLE, MPI_SUM, c->world), err);
    }
    return TF_OK;
}

/* The blocking all-reduces are timed: the synchronous trainers' communication. */
int comm_allreduce_sum(comm *c, float *values, int64_t count, tf_error *err)
{
    const double started = wall_seconds();
    c->calls++;
    c->allreduce_calls++;
    const int status = allreduce_sum(c, values, count, err);
    c->allreduce_seconds += wall_seconds() - started;
    return status;
}

int comm_allreduce_sum_double(comm *c, double *values, int64_t count, tf_error *err)
{
    const double started = wall_seconds();
    c->calls++;
    c->allreduce_calls++;
    const int status = allreduce_sum_double(c, values, count, err);
    c->allreduce_seconds += wall_seconds() - started;
    return status;
}

/* Converts counts and offsets [size] (elements) to out_counts and out_offsets [size], the int
 * arrays of MPI's v-collectives, in bytes, or fails clearly when a rank's data exceeds what an
 * int can address. */
static int byte_counts(const comm *c, const int64_t *counts, const int64_t *offsets, size_t element_size, int *out_counts,
                       int *out_offsets, tf_error *err)
{
    for (int j = 0; j < c->size; j++) {
        int64_t bytes = counts[j] * (int64_t)element_size, offset = offsets[j] * (int64_t)element_size;
        if (counts[j] < 0 || bytes > INT_MAX || offset > INT_MAX)
            return tf_error_set(err, TF_ERR_INPUT,
                                "collective: rank %d's block is %lld bytes at offset %lld; MPI-3 counts stop at %d",
                                j, (long long)bytes, (long long)offset, INT_MAX);
        out_counts[j] = (int)bytes;
        out_offsets[j] = (int)offset;
    }
    return TF_OK;
}

/* An all-to-all's traffic on this rank: what it sends the others. */
static uint64_t alltoall_bytes(const comm *c, const int64_t *send_counts, size_t element_size)
{
    uint64_t bytes = 0;
    for (int j = 0; j < c->size; j++)
        if (j != c->rank)
            bytes += (uint64_t)send_counts[j] * element_size;
    return bytes;
}

int comm_alltoallv(comm *c, const void *send, const int64_t *send_counts, const int64_t *send_offsets, void *receive,
                   const int64_t *receive_counts, const int64_t *receive_offsets, size_t element_size, tf_error *err)
{
    c->calls++;
    count_sent(c, alltoall_bytes(c, send_counts, element_size));
    if (c->local) { /* the block a rank sends itself */
        if (send_counts[0] != receive_counts[0])
            return tf_error_set(err, TF_ERR_INPUT, "all-to-all on one rank: sends %lld elements, receives %lld",
                                (long long)send_counts[0], (long long)receive_counts[0]);
        memmove((char *)receive + receive_offsets[0] * (int64_t)element_size,
                (const char *)send + send_offsets[0] * (int64_t)element_size, (size_t)send_counts[0] * element_size);
        return TF_OK;
    }
#ifdef TWOFOLD_HAVE_NCCL
    if (c->transport == COMM_NCCL)
        return nccl_alltoallv(c->nccl, c->rank, c->size, send, send_counts, send_offsets, receive, receive_counts,
                              receive_offsets, element_size, err);
#endif
    int *counts = malloc(4 * sizeof(int) * (size_t)c->size);
    if (!counts)
        return tf_error_set(err, TF_ERR_SYSTEM, "all-to-all: out of memory");
    int *displs = counts + c->size, *rcounts = displs + c->size, *rdispls = rcounts + c->size;
    int status = byte_counts(c, send_counts, send_offsets, element_size, counts, displs, err);
    if (status == TF_OK)
        status = byte_counts(c, receive_counts, receive_offsets, element_size, rcounts, rdispls, err);
    if (status == TF_OK)
        status = mpi_check(MPI_Alltoallv(send, counts, displs, MPI_BYTE, receive, rcounts, rdispls, MPI_BYTE, c->world),
                           "MPI_Alltoallv", err);
    free(counts);
    return status;
}

int comm_allgatherv(comm *c, const void *send, int64_t count, void *receive, const int64_t *counts,
                    const int64_t *offsets, size_t element_size, tf_error *err)
{
    c->calls++;
    count_sent(c, (uint64_t)(c->size - 1) * (uint64_t)count * element_size);
    if (c->local) {
        if (counts[0] != count)
            return tf_error_set(err, TF_ERR_INPUT, "all-gather: this rank sends %lld elements but counts[0] is %lld",
                                (long long)count, (long long)counts[0]);
        memmove((char *)receive + offsets[0] * (int64_t)element_size, send, (size_t)count * element_size);
        return TF_OK;
    }
#ifdef TWOFOLD_HAVE_NCCL
    if (c->transport == COMM_NCCL)
        return nccl_allgatherv(c->nccl, c->rank, c->size, send, count, receive, counts, offsets, element_size, err);
#endif
    int *byte_count = malloc(2 * sizeof(int) * (size_t)c->size);
    if (!byte_count)
        return tf_error_set(err, TF_ERR_SYSTEM, "all-gather: out of memory");
    int *byte_offset = byte_count + c->size;
    int status = byte_counts(c, counts, offsets, element_size, byte_count, byte_offset, err);
    if (status == TF_OK && counts[c->rank] != count)
        status = tf_error_set(err, TF_ERR_INPUT, "all-gather: this rank sends %lld elements but counts[%d] is %lld",
                              (long long)count, c->rank, (long long)counts[c->rank]);
    if (status == TF_OK)
        status = mpi_check(MPI_Allgatherv(send, byte_count[c->rank], MPI_BYTE, receive, byte_count, byte_offset,
                                          MPI_BYTE, c->world),
                           "MPI_Allgatherv", err);
    free(byte_count);
    return status;
}

/* The layout of equal blocks of `per_rank` values, one per rank: counts [size], offsets [size]. */
static int64_t *equal_blocks(const comm *c, int64_t per_rank, tf_error *err)
{
    int64_t *layout = malloc(2 * sizeof(int64_t) * (size_t)c->size);
    if (!layout) {
        tf_error_set(err, TF_ERR_SYSTEM, "exchange of counts: out of memory");
        return NULL;
    }
    for (int r = 0; r < c->size; r++) {
        layout[r] = per_rank;
        layout[c->size + r] = r * per_rank;
    }
    return layout;
}

int comm_alltoall_counts(comm *c, const int64_t *send, int64_t *receive, int64_t per_peer, tf_error *err)
{
    int64_t *layout = equal_blocks(c, per_peer, err);
    if (!layout)
        return TF_ERR_SYSTEM;
    const int64_t *counts = layout, *offsets = layout + c->size;
    int status = comm_alltoallv(c, send, counts, offsets, receive, counts, offsets, sizeof(int64_t), err);
    free(layout);
    return status;
}

int comm_allgather_counts(comm *c, const int64_t *mine, int64_t per_rank, int64_t *all, tf_error *err)
{
    int64_t *layout = equal_blocks(c, per_rank, err);
    if (!layout)
        return TF_ERR_SYSTEM;
    int status = comm_allgatherv(c, mine, per_rank, all, layout, layout + c->size, sizeof(int64_t), err);
    free(layout);
    return status;
}

int comm_broadcast(comm *c, void *buffer, int64_t bytes, int root, tf_error *err)
{
    c->calls++;
    if (c->rank == root)
        count_sent(c, (uint64_t)(c->size - 1) * (uint64_t)bytes);
    if (c->local)
        return TF_OK;
#ifdef TWOFOLD_HAVE_NCCL
    if (c->transport == COMM_NCCL)
        return nccl_broadcast(c->nccl, buffer, bytes, root, err);
#endif
    for (int64_t first = 0; first < bytes; first += MPI_PIECE) {
        int piece = (int)(bytes - first < MPI_PIECE ? bytes - first : MPI_PIECE);
        MPI_CHECK(MPI_Bcast((char *)buffer + first, piece, MPI_BYTE, root, c->world), err);
    }
    return TF_OK;
}

int comm_ranks_differing(comm *c, double value, double *differing, tf_error *err)
{
    double reference = value;
    if (comm_broadcast(c, &reference, sizeof reference, 0, err) != TF_OK)
        return err->code;
    *differing = value != reference;
    return comm_allreduce_sum_double(c, differing, 1, err);
}

int comm_barrier(comm *c, tf_error *err)
{
    c->calls++;
    if (c->local)
        return TF_OK;
    MPI_CHECK(MPI_Barrier(c->world), err);
    return TF_OK;
}

/* MPI_Iallreduce of @p count values of @p type, in place. */
static int start_iallreduce(comm *c, void *values, int64_t count, MPI_Datatype type, comm_request *request,
                            tf_error *err)
{
    if (count > INT_MAX)
        return tf_error_set(err, TF_ERR_INPUT, "non-blocking all-reduce of %lld values: MPI-3 counts stop at %d",
                            (long long)count, INT_MAX);
    MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, values, (int)count, type, MPI_SUM, c->world, &request->request), err);
    return TF_OK;
}

int comm_iallreduce_sum(comm *c, float *values, int64_t count, comm_request *request, tf_error *err)
{
    c->calls++;
    count_sent(c, allreduce_bytes(c, (uint64_t)count * sizeof(float)));
    request->active = !c->local;
    request->byte_counts = NULL;
    if (c->local)
        return TF_OK;
#ifdef TWOFOLD_HAVE_NCCL
    if (c->transport == COMM_NCCL) /* NCCL is asynchronous on its stream; comm_wait synchronizes */
        return nccl_allreduce_sum_start(c->nccl, values, count, err);
#endif
    return start_iallreduce(c, values, count, MPI_FLOAT, request, err);
}

int comm_iallreduce_sum_double(comm *c, double *values, int64_t count, comm_request *request, tf_error *err)
{
    c->calls++;
    count_sent(c, allreduce_bytes(c, (uint64_t)count * sizeof(double)));
    request->active = !c->local;
    request->byte_counts = NULL;
    return c->local ? TF_OK : start_iallreduce(c, values, count, MPI_DOUBLE, request, err);
}

int comm_ialltoallv(comm *c, const void *send, const int64_t *send_counts, const int64_t *send_offsets, void *receive,
                    const int64_t *receive_counts, const int64_t *receive_offsets, size_t element_size,
                    comm_request *request, tf_error *err)
{
    request->active = 0;
    request->byte_counts = NULL;
    if (c->local || c->transport != COMM_MPI) {
        if (!c->local)
            return tf_error_set(err, TF_ERR_INPUT, "a non-blocking all-to-all runs on the MPI transport");
        return comm_alltoallv(c, send, send_counts, send_offsets, receive, receive_counts, receive_offsets,
                              element_size, err);
    }
    c->calls++;
    count_sent(c, alltoall_bytes(c, send_counts, element_size));
    int *counts = malloc(4 * sizeof(int) * (size_t)c->size);
    if (!counts)
        return tf_error_set(err, TF_ERR_SYSTEM, "non-blocking all-to-all: out of memory");
    int *displs = counts + c->size, *rcounts = displs + c->size, *rdispls = rcounts + c->size;
    int status = byte_counts(c, send_counts, send_offsets, element_size, counts, displs, err);
    if (status == TF_OK)
        status = byte_counts(c, receive_counts, receive_offsets, element_size, rcounts, rdispls, err);
    if (status == TF_OK)
        status = mpi_check(MPI_Ialltoallv(send, counts, displs, MPI_BYTE, receive, rcounts, rdispls, MPI_BYTE,
                                          c->world, &request->request),
                           "MPI_Ialltoallv", err);
    if (status != TF_OK) {
        free(counts);
        return status;
    }
    request->active = 1;
    request->byte_counts = counts;
    return TF_OK;
}

int comm_wait(comm *c, comm_request *request, tf_error *err)
{
    if (!request->active)
        return TF_OK;
    request->active = 0;
    if (request->byte_counts) { /* an all-to-all: MPI needs its arrays until it completes */
        const int status = mpi_check(MPI_Wait(&request->request, MPI_STATUS_IGNORE), "MPI_Wait", err);
        free(request->byte_counts);
        request->byte_counts = NULL;
        return status;
    }
#ifdef TWOFOLD_HAVE_NCCL
    if (c->transport == COMM_NCCL)
        return nccl_wait(c->nccl, err);
#endif
    (void)c;
    MPI_CHECK(MPI_Wait(&request->request, MPI_STATUS_IGNORE), err);
    return TF_OK;
}

int comm_test(comm *c, comm_request *request, int *done, tf_error *err)
{
    *done = 1;
    if (!request->active || c->transport != COMM_MPI)
        return TF_OK;
    /* A request MPI_Test() completed becomes MPI_REQUEST_NULL: later tests and the wait return at once. */
    int flag = 0;
    MPI_CHECK(MPI_Test(&request->request, &flag, MPI_STATUS_IGNORE), err);
    *done = flag;
    return TF_OK;
}
