/**
 * @file opt/partition_exchange.h
 * Twins: ref_propagate_forward(), ref_propagate_backward() (ref/nn/propagate.h), on a rank's rows.
 * @brief Exchange mode of vertex-partitioned training (chapter 06): every graph product fetches
 *        the halo rows it reads from their owners (one all-to-all-v) and every backward returns
 *        their gradients (another), through a kernel table that wraps the dense one.
 *
 * Twin of a product of the whole graph, ref_propagate_forward()/_backward() (ref/nn/propagate.h),
 * restricted to one rank's rows. What changes and why it is still equal:
 *  - **forward**, y = P x on the owned rows: the halo rows of x are fetched from their owners, the
 *    product runs on the part's whole local operator (owned + halo rows: opt/partition_part.h),
 *    and the owned rows of the result are kept. Each owned row adds the global row's terms in the
 *    global order with the global coefficients: **bitwise** the reference's rows.
 *  - **backward**, dx += P^T dy: the local transpose product gives the owned rows their
 *    contributions from owned destinations, and the halo rows the contributions this rank owes
 *    their owners; those are sent back and added at the owner, peer by peer in rank order. The
 *    same terms in another order: fp.
 *  - an operator held as its **transpose** (propagation_halo::transposed: DCRNN's backward walk,
 *    whose graph is the in-edge graph of its transpose, opt/partition_part.h) swaps the two: its
 *    product scatters the owned rows' terms and gives the halo rows' shares back (fp: an owned row
 *    adds other ranks' shares after its own terms), its backward fetches the halo rows and gathers.
 *  - every rank runs the same windows and the same model calls (a rank with no vertices too: its
 *    products have 0 rows), so the collectives line up; a snapshot where no edge crosses ranks
 *    skips them on every rank (decided from the whole graph, never from a local halo).
 *
 * **Send lists need no request round.** Rank r owes peer p the rows u with owner[u] = r that some
 * edge u -> v of E_t with owner[v] = p reads, in increasing id; p's halo from r is the same set in
 * the same order (halos are ordered by (owner, id)). Both sides derive them from the whole graph.
 *
 * **What is sent is a hook** (#exchange_policy): by default every owed row, exactly. Chapter 05's
 * stale embeddings (DGC's adaptive stale aggregation, §5.2) replace pack/unpack: a sender sends
 * only the rows that moved more than θ since it last sent them, and the receiver fills the rest from
 * its copy of the same cache. Every transfer is named by an #exchange_key that is the same on every
 * rank and whenever the transfer recurs (overlapping windows, every epoch), so sender and receiver
 * can key identical caches by it. A policy reaches its state through its `context`; the
 * propagation kernels reach the exchange through the operator's halo (propagation::halo->context
 * is the snapshot's #halo_plan, whose `exchange` points here). A graph attention layer
 * (ref/nn/graph_attention.h: GAT-LSTM, DySAT) fetches the halo's rows of X_t through the same hook,
 * once a snapshot, and gives nothing back.
 *
 * Bytes are the comm layer's count (opt/comm.h: all-to-all-v counts exactly the bytes to other
 * ranks), accumulated in `bytes`. Ownership: the exchange owns its plans and buffers; the part and
 * the communicator are borrowed and must outlive it.
 */
#ifndef TWOFOLD_OPT_PARTITION_EXCHANGE_H
#define TWOFOLD_OPT_PARTITION_EXCHANGE_H

#include <stdint.h>

#include "opt/comm.h"
#include "opt/partition_part.h"
#include "ref/nn/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Which way a transfer goes. */
typedef enum exchange_direction {
    EXCHANGE_FORWARD,   /**< owned rows' values to the ranks whose products read them */
    EXCHANGE_BACKWARD,  /**< halo rows' gradient contributions back to their owners */
} exchange_direction;

/** Which transfer this is: the same on every rank, in every epoch, and each time it recurs. */
typedef struct exchange_key {
    int64_t snapshot;             /**< t */
    int32_t call;                 /**< the ordinal of the product among t's products in this direction, from 0
                                       (reset when the model builds t's operator, once per window) */
    exchange_direction direction; /**< forward or backward */
} exchange_key;

/**
 * What is sent: the hook for asynchronous and compressed exchanges (chapter 05). NULL pack and
 * unpack send every owed row as it is.
 */
typedef struct exchange_policy {
    /** Sender: turn the @p count rows [count][width] owed to @p peer (global ids @p vertices, in the
     *  plan's order) into a message of *bytes <= @p capacity = count * (width + 1) * 4 bytes. */
    int (*pack)(void *context, exchange_key key, int peer, const int32_t *vertices, const float *rows, int64_t count,
                int64_t width, void *message, int64_t capacity, int64_t *bytes, tf_error *err);
    /** Receiver: turn the @p bytes of @p message from @p peer back into @p rows [count][width], in
     *  the plan's order (global ids @p vertices). */
    int (*unpack)(void *context, exchange_key key, int peer, const int32_t *vertices, const void *message,
                  int64_t bytes, float *rows, int64_t count, int64_t width, tf_error *err);
    /** 1: messages are always count * width * 4 bytes, so no sizes are exchanged; 0: an all-to-all
     *  of message sizes precedes each transfer (its bytes are counted too). */
    int fixed_size;
    void *context; /**< passed to pack and unpack */
} exchange_policy;

struct partition_exchange;

/** The transfers of one snapshot's products, from this rank's point of view. */
typedef struct halo_plan {
    struct partition_exchange *exchange; /**< the exchange this plan belongs to */
    int64_t snapshot;          /**< t */
    int64_t *send_counts;      /**< [R] owned rows owed to each peer */
    int64_t *send_offsets;     /**< [R] where each peer's rows start in send_rows */
    int64_t *receive_counts;   /**< [R] halo rows owned by each peer */
    int64_t *receive_offsets;  /**< [R] where they start among the halo rows */
    int32_t *send_rows;        /**< [sum send_counts] local row of each owed row, by peer, then id */
    int32_t *send_vertices;    /**< [sum send_counts] their global ids */
    int32_t forward_calls;     /**< products run forward since t's operator was built */
    int32_t backward_calls;    /**< and backward */
} halo_plan;

/** Exchange mode on one rank. */
typedef struct partition_exchange {
    comm *group;               /**< the ranks (borrowed) */
    partition_part *part;      /**< this rank's part (borrowed; its halos' hooks are set here) */
    const kernels *dense;      /**< the kernels the local products run on */
    int64_t num_snapshots;     /**< T */
    halo_plan *plans;          /**< [T] */
    uint8_t *anyone;           /**< [T] 1 if some edge of E_t crosses ranks: else every rank skips t's collectives */
    exchange_policy policy;    /**< what is sent (default: every row) */
    operator_source operators; /**< the part's operators, counting each snapshot's products from 0 */
    uint64_t bytes;            /**< bytes this rank sent in exchanges (other ranks only) */
    int64_t transfers;         /**< all-to-all-v calls made */
    double cpu_seconds;        /**< this thread's CPU time inside exchanges */
    double wall_seconds;       /**< wall time inside exchanges */
    float *send;               /**< grown scratch: rows gathered for the peers */
    float *receive;            /**< grown scratch: rows received from the peers */
    unsigned char *message_out; /**< grown scratch for a packing policy's messages, out then in */
    float *extended;           /**< grown scratch: [2][owned + halo][width] a local product's operand and result */
    int64_t send_capacity;     /**< floats `send` holds */
    int64_t receive_capacity;  /**< floats `receive` holds */
    int64_t message_capacity;  /**< bytes `message_out` holds */
    int64_t extended_capacity; /**< floats `extended` holds */
} partition_exchange;

/**
 * Set up exchange mode for @p part (created with PARTITION_EXCHANGE from @p seq and @p owner) on
 * the ranks of @p group, products on @p dense (opt_kernels; ref_kernels for a bitwise check).
 * Attaches the hooks to the part's halos. Every rank calls it with its own part; no communication.
 */
int partition_exchange_create(partition_exchange *ex, comm *group, partition_part *part, const snapshot_seq *seq,
                              const int32_t *owner, const kernels *dense, tf_error *err);

/** Release the plans and buffers (safe on a zeroed exchange). */
void partition_exchange_free(partition_exchange *ex);

/**
 * The kernel table of exchange mode: @p dense's, with propagate_forward/_backward running an
 * operator that has a halo as the file comment says (a whole operator goes to the optimized
 * product), and take_error reporting the first failure of an exchange inside them (the kernels
 * return nothing, so the model asks afterwards, as with the CUDA kernels).
 */
kernels partition_kernels(const kernels *dense);

#ifdef __cplusplus
}
#endif

#endif
