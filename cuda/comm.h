/**
 * @file cuda/comm.h
 * Twins: none — the NCCL transport of opt/comm.h's collectives.
 * @brief The NCCL side of opt/comm.h: collectives on device buffers, one GPU per rank.
 *
 * Built only when CMake finds NCCL. opt/comm.c calls these when its transport is NCCL; every
 * call runs on the communicator's own stream and, except nccl_allreduce_sum_start(), waits
 * for it, so callers see the same completion semantics as with MPI.
 */
#ifndef TWOFOLD_CUDA_COMM_H
#define TWOFOLD_CUDA_COMM_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "ref/core/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Number of usable GPUs; 0 without a driver or device. */
int nccl_device_count(void);

/** Select @p device, create a stream and an NCCL communicator of @p size ranks (id shared over MPI). */
int cuda_comm_create(int rank, int size, MPI_Comm world, int device, void **handle, tf_error *err);

/** Destroy the communicator and its stream. */
void cuda_comm_destroy(void *handle);

/** Sum @p values [count] floats of device memory across ranks, in place, and wait. */
int nccl_allreduce_sum(void *handle, float *values, int64_t count, tf_error *err);

/** Start the same sum of @p values [count] without waiting; finish with nccl_wait(). */
int nccl_allreduce_sum_start(void *handle, float *values, int64_t count, tf_error *err);

/** Wait for everything started on the communicator's stream. */
int nccl_wait(void *handle, tf_error *err);

/**
 * All-to-all with counts, as grouped point-to-point sends and receives of bytes: the
 * contract of comm_alltoallv(). send_counts, send_offsets, receive_counts, receive_offsets
 * [size] elements per rank.
 */
int nccl_alltoallv(void *handle, int rank, int size, const void *send, const int64_t *send_counts,
                   const int64_t *send_offsets, void *receive, const int64_t *receive_counts,
                   const int64_t *receive_offsets, size_t element_size, tf_error *err);

/**
 * All-gather with counts, as grouped point-to-point sends and receives of bytes: the contract
 * of comm_allgatherv(). counts, offsets [size] elements per rank.
 */
int nccl_allgatherv(void *handle, int rank, int size, const void *send, int64_t count, void *receive,
                    const int64_t *counts, const int64_t *offsets, size_t element_size, tf_error *err);

/** Broadcast @p bytes bytes of device memory from @p root, in place. */
int nccl_broadcast(void *handle, void *buffer, int64_t bytes, int root, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
