/**
 * @file opt/comm.h
 * Twins: none — the collectives every distributed twin goes through (MPI or NCCL), bytes counted.
 * @brief The few collectives the techniques need, over MPI on host buffers or over NCCL on
 *        device buffers, each counting the bytes it sends.
 *
 * One #comm per process. comm_init() starts MPI and picks the transport: NCCL when twofold
 * was built with it, a GPU was asked for, and every rank can own a distinct GPU (ranks on a
 * node <= GPUs on it); MPI otherwise. The choice is printed by rank 0. With NCCL, buffers
 * passed to the collectives are device pointers; with MPI, host pointers.
 *
 * Every call adds to `bytes_sent` the bytes this rank puts on the wire, so benchmarks report
 * traffic that was counted, not estimated. For a payload of S bytes on n ranks:
 *
 *  - all-reduce:     2 (n - 1) / n * S   (a ring all-reduce: reduce-scatter then all-gather;
 *                                          nccl-tests' "busbw" factor)
 *  - all-to-all-v:   the bytes this rank sends to the other ranks (exact)
 *  - all-gather-v:   (n - 1) * this rank's block (each block reaches every other rank)
 *  - broadcast:      (n - 1) * S on the root, 0 elsewhere
 *  - barrier:        0
 *
 * A self-send (data a rank keeps) is never counted. On one rank every count is 0.
 *
 * **Counting by purpose.** Every byte count goes through one place, which also charges it to the
 * counter a caller named with comm_charge(): a trainer splits its traffic by purpose (fetched
 * rows, write-backs, gradients ...) by naming the counter around the collectives of that purpose,
 * never by differences of bytes_sent. Bytes charged to comm::check_bytes are a check's (replicas
 * compared, caches compared), not traffic, and stay out of bytes_sent.
 */
#ifndef TWOFOLD_OPT_COMM_H
#define TWOFOLD_OPT_COMM_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "ref/core/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Which library moves the data. */
typedef enum comm_transport {
    COMM_MPI,    /**< MPI on host buffers */
    COMM_NCCL,   /**< NCCL on device buffers, one GPU per rank */
} comm_transport;

/** A communicator: who we are, how we talk, what we sent. */
typedef struct comm {
    MPI_Comm world;            /**< the ranks taking part */
    MPI_Comm control;          /**< a duplicate of world for the end-of-run status exchange
                                    (finish_ranks()): a rank that failed offers its status there, where
                                    it can never be matched with a collective the other ranks left in
                                    flight on world (a delayed gradient's all-reduce) */
    int rank;                  /**< this rank, 0 .. size-1 */
    int size;                  /**< number of ranks */
    int local_rank;            /**< rank among the ranks on this node */
    int local_size;            /**< ranks on this node */
    comm_transport transport;  /**< MPI or NCCL */
    int device;                /**< GPU ordinal owned by this rank, -1 for none */
    void *nccl;                /**< the ncclComm_t when transport is NCCL */
    uint64_t bytes_sent;       /**< bytes this rank has sent so far (see the formulas above) */
    uint64_t *charged;         /**< the counter the bytes are also charged to (comm_charge()), or NULL */
    uint64_t check_bytes;      /**< bytes sent by checks (charged here: not in bytes_sent) */
    uint64_t calls;            /**< collectives called so far */
    double allreduce_seconds;  /**< wall seconds spent in the blocking all-reduces (comm_allreduce_sum(),
                                    comm_allreduce_sum_double()) so far, waiting included:
                                    what `twofold train --profile` reports as communication */
    uint64_t allreduce_calls;  /**< how many of those all-reduces */
    int local;                 /**< 1: one process without MPI (comm_init_local()) */
} comm;

/**
 * Initialize MPI (if not yet) and the communicator over MPI_COMM_WORLD, passing main's argc [1]
 * and argv on to MPI_Init. @p want_gpu asks for
 * NCCL and one GPU per rank when possible; otherwise, or when impossible, MPI is used.
 * @p reason receives one line saying which transport was chosen and why.
 */
int comm_init(comm *c, int *argc, char ***argv, int want_gpu, char *reason, size_t reason_size, tf_error *err);

/**
 * A communicator of this process alone that needs no MPI (MPI need not be initialized): every
 * collective is the local copy MPI would make on one rank, and sends nothing. For running a
 * distributed twin inside a single-process program (the technique table's tests).
 */
void comm_init_local(comm *c);

/** Shut down NCCL (if used) and MPI (a local communicator: nothing). */
void comm_finalize(comm *c);

/**
 * Charge the bytes of the collectives called from now on to @p counter too, until the next call
 * (NULL: to bytes_sent alone; &c->check_bytes: to neither, a check's). Returns the counter charged
 * until now, so that a caller restores it when its collectives are done:
 *
 *     uint64_t *outer = comm_charge(c, &bytes.gradients);
 *     status = comm_allreduce_sum_double(c, sums, count, err);
 *     comm_charge(c, outer);
 */
uint64_t *comm_charge(comm *c, uint64_t *counter);

/** Sum @p values [count] floats across all ranks, in place. */
int comm_allreduce_sum(comm *c, float *values, int64_t count, tf_error *err);

/** Sum @p values [count] doubles across all ranks, in place (losses, counts; always over MPI, host memory). */
int comm_allreduce_sum_double(comm *c, double *values, int64_t count, tf_error *err);

/**
 * All-to-all with per-rank counts: send_counts[j] elements of @p element_size bytes starting at
 * send_offsets[j] go to rank j, which receives them at its receive_offsets[this rank].
 * send_counts, send_offsets, receive_counts, receive_offsets [size] elements per rank.
 */
int comm_alltoallv(comm *c, const void *send, const int64_t *send_counts, const int64_t *send_offsets, void *receive,
                   const int64_t *receive_counts, const int64_t *receive_offsets, size_t element_size, tf_error *err);

/**
 * All-gather with per-rank counts: this rank's @p count elements are placed at offsets[rank]
 * of @p receive on every rank; counts[j] and offsets[j] describe rank j's block.
 */
int comm_allgatherv(comm *c, const void *send, int64_t count, void *receive, const int64_t *counts,
                    const int64_t *offsets, size_t element_size, tf_error *err);

/**
 * The counts before an all-to-all-v: @p per_peer int64 values for each rank, send [size][per_peer]
 * (row j goes to rank j) and receive [size][per_peer] (row j came from rank j). Bytes as an
 * all-to-all's: 8 per_peer (size - 1). Collective.
 */
int comm_alltoall_counts(comm *c, const int64_t *send, int64_t *receive, int64_t per_peer, tf_error *err);

/**
 * Every rank's @p per_rank int64 values, @p mine [per_rank], gathered in rank order into
 * @p all [size][per_rank]. Bytes as an all-gather's: 8 per_rank (size - 1). Collective.
 */
int comm_allgather_counts(comm *c, const int64_t *mine, int64_t per_rank, int64_t *all, tf_error *err);

/** Broadcast @p bytes bytes from rank @p root to all ranks, in place. */
int comm_broadcast(comm *c, void *buffer, int64_t bytes, int root, tf_error *err);

/**
 * How many ranks of @p c hold another @p value than rank 0 (a checksum of what must agree):
 * rank 0's value broadcast, the mismatches all-reduced. Every rank calls it and receives the
 * count in @p differing. @return 0, or the error of a collective.
 */
int comm_ranks_differing(comm *c, double value, double *differing, tf_error *err);

/** Wait until every rank has arrived. */
int comm_barrier(comm *c, tf_error *err);

/** A non-blocking all-reduce in flight. */
typedef struct comm_request {
    MPI_Request request;   /**< the MPI request (MPI transport) */
    int active;            /**< 1 between start and wait */
    int *byte_counts;      /**< comm_ialltoallv(): its counts and displacements in bytes, alive until the wait */
} comm_request;

/** Start summing @p values [count] floats across ranks in place; finish with comm_wait(). */
int comm_iallreduce_sum(comm *c, float *values, int64_t count, comm_request *request, tf_error *err);

/** comm_iallreduce_sum() of doubles (MPI transport, as comm_allreduce_sum_double()). */
int comm_iallreduce_sum_double(comm *c, double *values, int64_t count, comm_request *request, tf_error *err);

/**
 * Start an all-to-all-v (as comm_alltoallv(), bytes counted at the start); finish with
 * comm_wait(). The buffers must stay untouched until then; the count arrays may go at once. MPI
 * transport only (one rank: the self block is copied at once).
 */
int comm_ialltoallv(comm *c, const void *send, const int64_t *send_counts, const int64_t *send_offsets, void *receive,
                    const int64_t *receive_counts, const int64_t *receive_offsets, size_t element_size,
                    comm_request *request, tf_error *err);

/** Wait for a request started by comm_iallreduce_sum() or comm_ialltoallv(). */
int comm_wait(comm *c, comm_request *request, tf_error *err);

/**
 * Let a request in flight advance, without waiting: *done = 1 when it has finished (it stays
 * to be completed by comm_wait(), which then returns at once). An MPI library without an
 * asynchronous progress thread moves a non-blocking collective only inside MPI calls, so a
 * computation that wants its all-reduce to overlap calls this now and then. On NCCL, or for a
 * request not in flight, *done = 1 without doing anything.
 */
int comm_test(comm *c, comm_request *request, int *done, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
