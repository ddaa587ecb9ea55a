#include "cuda/comm.h"

#include <cuda_runtime.h>
#include <nccl.h>
#include <stdlib.h>
#include <string.h>

typedef struct nccl_state {
    ncclComm_t comm;
    cudaStream_t stream;
    int device;
} nccl_state;

static int cuda_fail(cudaError_t result, const char *what, tf_error *err)
{
    return result == cudaSuccess ? TF_OK
                                 : tf_error_set(err, TF_ERR_SYSTEM, "CUDA: %s failed: %s", what, cudaGetErrorString(result));
}

static int nccl_fail(ncclResult_t result, const char *what, tf_error *err)
{
    return result == ncclSuccess ? TF_OK
                                 : tf_error_set(err, TF_ERR_SYSTEM, "NCCL: %s failed: %s", what, ncclGetErrorString(result));
}

int nccl_device_count(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError(); /* no driver or no device: not an error, just no GPU */
        return 0;
    }
    return count;
}

int cuda_comm_create(int rank, int size, MPI_Comm world, int device, void **handle, tf_error *err)
{
    *handle = NULL;
    nccl_state *state = calloc(1, sizeof *state);
    if (!state)
        return tf_error_set(err, TF_ERR_SYSTEM, "NCCL: out of memory");
    state->device = device;
    ncclUniqueId id;
    if (rank == 0 && nccl_fail(ncclGetUniqueId(&id), "ncclGetUniqueId", err) != TF_OK) {
        free(state);
        return TF_ERR_SYSTEM;
    }
    if (MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, world) != MPI_SUCCESS) {
        free(state);
        return tf_error_set(err, TF_ERR_SYSTEM, "NCCL: broadcasting the unique id over MPI failed");
    }
    if (cuda_fail(cudaSetDevice(device), "cudaSetDevice", err) != TF_OK ||
        cuda_fail(cudaStreamCreateWithFlags(&state->stream, cudaStreamNonBlocking), "cudaStreamCreate", err) != TF_OK ||
        nccl_fail(ncclCommInitRank(&state->comm, size, id, rank), "ncclCommInitRank", err) != TF_OK) {
        free(state);
        return TF_ERR_SYSTEM;
    }
    *handle = state;
    return TF_OK;
}

void cuda_comm_destroy(void *handle)
{
    nccl_state *state = handle;
    ncclCommDestroy(state->comm);
    cudaStreamDestroy(state->stream);
    free(state);
}

int nccl_wait(void *handle, tf_error *err)
{
    nccl_state *state = handle;
    return cuda_fail(cudaStreamSynchronize(state->stream), "cudaStreamSynchronize", err);
}

int nccl_allreduce_sum_start(void *handle, float *values, int64_t count, tf_error *err)
{
    nccl_state *state = handle;
    return nccl_fail(ncclAllReduce(values, values, (size_t)count, ncclFloat, ncclSum, state->comm, state->stream),
                     "ncclAllReduce", err);
}

int nccl_allreduce_sum(void *handle, float *values, int64_t count, tf_error *err)
{
    if (nccl_allreduce_sum_start(handle, values, count, err) != TF_OK)
        return TF_ERR_SYSTEM;
    return nccl_wait(handle, err);
}

int nccl_alltoallv(void *handle, int rank, int size, const void *send, const int64_t *send_counts,
                   const int64_t *send_offsets, void *receive, const int64_t *receive_counts,
                   const int64_t *receive_offsets, size_t element_size, tf_error *err)
{
    (void)rank;
    nccl_state *state = handle;
    int status = nccl_fail(ncclGroupStart(), "ncclGroupStart", err);
    for (int j = 0; status == TF_OK && j < size; j++) {
        if (send_counts[j] > 0)
            status = nccl_fail(ncclSend((const char *)send + send_offsets[j] * element_size,
                                        (size_t)send_counts[j] * element_size, ncclChar, j, state->comm, state->stream),
                               "ncclSend", err);
        if (status == TF_OK && receive_counts[j] > 0)
            status = nccl_fail(ncclRecv((char *)receive + receive_offsets[j] * element_size,
                                        (size_t)receive_counts[j] * element_size, ncclChar, j, state->comm,
                                        state->stream),
                               "ncclRecv", err);
    }
    int ended = nccl_fail(ncclGroupEnd(), "ncclGroupEnd", status == TF_OK ? err : NULL);
    if (status == TF_OK)
        status = ended;
    return status == TF_OK ? nccl_wait(handle, err) : status;
}

int nccl_allgatherv(void *handle, int rank, int size, const void *send, int64_t count, void *receive,
                    const int64_t *counts, const int64_t *offsets, size_t element_size, tf_error *err)
{
    nccl_state *state = handle;
    int status = nccl_fail(ncclGroupStart(), "ncclGroupStart", err);
    for (int j = 0; status == TF_OK && j < size; j++) {
        if (j == rank) {
            if (count > 0)
                status = cuda_fail(cudaMemcpyAsync((char *)receive + offsets[rank] * element_size, send,
                                                   (size_t)count * element_size, cudaMemcpyDeviceToDevice,
                                                   state->stream),
                                   "cudaMemcpyAsync", err);
            continue;
        }
        if (count > 0)
            status = nccl_fail(ncclSend(send, (size_t)count * element_size, ncclChar, j, state->comm, state->stream),
                               "ncclSend", err);
        if (status == TF_OK && counts[j] > 0)
            status = nccl_fail(ncclRecv((char *)receive + offsets[j] * element_size, (size_t)counts[j] * element_size,
                                        ncclChar, j, state->comm, state->stream),
                               "ncclRecv", err);
    }
    int ended = nccl_fail(ncclGroupEnd(), "ncclGroupEnd", status == TF_OK ? err : NULL);
    if (status == TF_OK)
        status = ended;
    return status == TF_OK ? nccl_wait(handle, err) : status;
}

int nccl_broadcast(void *handle, void *buffer, int64_t bytes, int root, tf_error *err)
{
    nccl_state *state = handle;
    if (nccl_fail(ncclBroadcast(buffer, buffer, (size_t)bytes, ncclChar, root, state->comm, state->stream),
                  "ncclBroadcast", err) != TF_OK)
        return TF_ERR_SYSTEM;
    return nccl_wait(handle, err);
}
