/**
 * @file opt/dispatch_exchange.h
 * Twins: none — the two-step all-to-all that chapter 04's trainer moves rows with.
 * @brief The two-step all-to-all of chapter 04's trainer: first one count per pair of ranks,
 *        then the packed rows, each step's bytes added to a named counter.
 *
 * A rank fills send_count[r] (rows for rank r, packed in rank order); dispatch_exchange_counts()
 * tells every rank what it will receive from whom; dispatch_exchange_data() moves the rows. An
 * answer travels back with dispatch_exchange_reply(): whoever received n rows from rank r sends
 * n rows back to r, and r receives them in the order it sent the questions. Every rank calls
 * every step, with zero counts when it has nothing to send: they are collectives.
 *
 * Bytes are counted by the comm layer (opt/comm.h: exact, self-sends excluded); each call charges
 * them to the counter it is given (comm_charge()), so a trainer can split its traffic by purpose.
 */
#ifndef TWOFOLD_OPT_DISPATCH_EXCHANGE_H
#define TWOFOLD_OPT_DISPATCH_EXCHANGE_H

#include <stddef.h>
#include <stdint.h>

#include "opt/comm.h"
#include "ref/core/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The block layout of one all-to-all, seen from this rank. */
typedef struct dispatch_exchange {
    int ranks;                 /**< R */
    int64_t *send_count;       /**< [R] rows to each rank (the caller fills it) */
    int64_t *send_offset;      /**< [R] where each block starts in the send buffer */
    int64_t *receive_count;    /**< [R] rows from each rank */
    int64_t *receive_offset;   /**< [R] where each block lands in the receive buffer */
    int64_t sent;              /**< rows sent in all */
    int64_t received;          /**< rows received in all */
} dispatch_exchange;

/** Allocate the layout arrays for @p ranks ranks. @return 0, or TF_ERR_INPUT (no memory). */
int dispatch_exchange_create(dispatch_exchange *x, int ranks, tf_error *err);

/** Release the arrays and zero @p x. Safe on a zeroed exchange. */
void dispatch_exchange_free(dispatch_exchange *x);

/**
 * From send_count: the send offsets, and (one all-to-all of one int64 per pair) the receive
 * counts and offsets. Collective.
 * @param c        the ranks
 * @param x        the layout: send_count in, the rest out
 * @param limit    the most rows the receive buffer holds: more is an error (on the rank that sees it)
 * @param counter  the bytes sent are added here
 * @param err      out: a failed collective, too many rows
 * @return 0, or an error code
 */
int dispatch_exchange_counts(comm *c, dispatch_exchange *x, int64_t limit, uint64_t *counter, tf_error *err);

/** Move the rows: send [sent][element_size] -> receive [received][element_size]. Collective. */
int dispatch_exchange_data(comm *c, const dispatch_exchange *x, const void *send, void *receive, size_t element_size,
                           uint64_t *counter, tf_error *err);

/** The way back: @p send [received][element_size] (one answer per row received, in that order) ->
 *  @p receive [sent][element_size] (in the order the questions were sent). Collective. */
int dispatch_exchange_reply(comm *c, const dispatch_exchange *x, const void *send, void *receive,
                            size_t element_size, uint64_t *counter, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
