/* Counts first, then rows (opt/dispatch_exchange.h). */
#include "opt/dispatch_exchange.h"

#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"

int dispatch_exchange_create(dispatch_exchange *x, int ranks, tf_error *err)
{
    memset(x, 0, sizeof *x);
    const size_t R = (size_t)ranks;
    if (!(x->send_count = tf_alloc(R, sizeof(int64_t), "exchange layout", err)) ||
        !(x->send_offset = tf_alloc(R, sizeof(int64_t), "exchange layout", err)) ||
        !(x->receive_count = tf_alloc(R, sizeof(int64_t), "exchange layout", err)) ||
        !(x->receive_offset = tf_alloc(R, sizeof(int64_t), "exchange layout", err))) {
        dispatch_exchange_free(x);
        return TF_ERR_INPUT;
    }
    x->ranks = ranks;
    return TF_OK;
}

void dispatch_exchange_free(dispatch_exchange *x)
{
    free(x->send_count);
    free(x->send_offset);
    free(x->receive_count);
    free(x->receive_offset);
    memset(x, 0, sizeof *x);
}

/* Offsets of consecutive blocks; returns their total. */
static int64_t prefix(const int64_t *count, int64_t *offset, int ranks)
{
    int64_t total = 0;
    for (int r = 0; r < ranks; r++) {
        offset[r] = total;
        total += count[r];
    }
    return total;
}

int dispatch_exchange_counts(comm *c, dispatch_exchange *x, int64_t limit, uint64_t *counter, tf_error *err)
{
    x->sent = prefix(x->send_count, x->send_offset, x->ranks);
    uint64_t *outer = comm_charge(c, counter);
    int status = comm_alltoall_counts(c, x->send_count, x->receive_count, 1, err);
    comm_charge(c, outer);
    if (status != TF_OK)
        return status;
    x->received = prefix(x->receive_count, x->receive_offset, x->ranks);
    if (x->received > limit)
        return tf_error_set(err, TF_ERR_SYSTEM, "exchange: rank %d would receive %lld rows, its buffer holds %lld",
                            c->rank, (long long)x->received, (long long)limit);
    return TF_OK;
}

int dispatch_exchange_data(comm *c, const dispatch_exchange *x, const void *send, void *receive, size_t element_size,
                           uint64_t *counter, tf_error *err)
{
    uint64_t *outer = comm_charge(c, counter);
    int status = comm_alltoallv(c, send, x->send_count, x->send_offset, receive, x->receive_count, x->receive_offset,
                                element_size, err);
    comm_charge(c, outer);
    return status;
}

int dispatch_exchange_reply(comm *c, const dispatch_exchange *x, const void *send, void *receive,
                            size_t element_size, uint64_t *counter, tf_error *err)
{
    uint64_t *outer = comm_charge(c, counter);
    int status = comm_alltoallv(c, send, x->receive_count, x->receive_offset, receive, x->send_count, x->send_offset,
                                element_size, err);
    comm_charge(c, outer);
    return status;
}
