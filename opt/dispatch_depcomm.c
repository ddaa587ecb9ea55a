/* DepComm: the owners update the memory of the occurrences others ask about (opt/dispatch_depcomm.h). */
#include "opt/dispatch_depcomm.h"

#include <string.h>

enum { REQUEST_BYTES = sizeof(int32_t) + sizeof(double) };

int dispatch_depcomm_send_requests(opt_event_trainer *tr, tf_error *err)
{
    const dispatch_requests *q = &tr->batch.requests; /* one row per entry, grouped by owner */
    memcpy(tr->fetch.send_count, q->count, (size_t)q->ranks * sizeof *q->count);
    if (dispatch_exchange_counts(tr->group, &tr->fetch, tr->capacity, &tr->bytes.counts, err) != TF_OK)
        return TF_ERR_SYSTEM;
    for (int64_t at = 0; at < q->total; at++) {
        unsigned char *out = tr->send_rows + (size_t)at * REQUEST_BYTES;
        memcpy(out, &q->vertex[at], sizeof(int32_t));
        memcpy(out + sizeof(int32_t), &tr->batch.tape.time[q->row[at]], sizeof(double));
    }
    if (dispatch_exchange_data(tr->group, &tr->fetch, tr->send_rows, tr->receive_rows, REQUEST_BYTES,
                               &tr->bytes.requests, err) != TF_OK)
        return TF_ERR_SYSTEM;
    for (int64_t i = 0; i < tr->fetch.received; i++) {
        const unsigned char *in = tr->receive_rows + (size_t)i * REQUEST_BYTES;
        memcpy(&tr->asked[i], in, sizeof(int32_t));
        memcpy(&tr->asked_time[i], in + sizeof(int32_t), sizeof(double));
    }
    return TF_OK;
}

int dispatch_depcomm_serve_updates(opt_event_trainer *tr, tf_error *err)
{
    const event_model *m = &tr->base.model;
    const node_memory *shard = &tr->shard;
    const size_t dm = (size_t)m->config.memory_width, dmsg = (size_t)event_model_mail_width(m);
    const int64_t n = tr->fetch.received;
    event_tape *serving = &tr->serving; /* entries only: no roots, no batch */
    event_tape_free(serving);
    if (event_tape_alloc_entries(m, serving, n, err) != TF_OK)
        return TF_ERR_INPUT;
    for (int64_t i = 0; i < n; i++) {
        const int64_t row = tr->placement.local_row[tr->asked[i]];
        serving->vertex[i] = tr->asked[i];
        serving->time[i] = tr->asked_time[i];
        memcpy(serving->memory + i * dm, shard->memory + row * dm, dm * sizeof(float));
        memcpy(serving->mail + i * dmsg, shard->mail + row * dmsg, dmsg * sizeof(float));
        serving->memory_time[i] = shard->memory_time[row];
    }
    event_model_update(m, serving);
    const size_t reply = dm * sizeof(float) + sizeof(double);
    for (int64_t i = 0; i < n; i++) {
        memcpy(tr->send_rows + (size_t)i * reply, serving->updated + i * dm, dm * sizeof(float));
        memcpy(tr->send_rows + (size_t)i * reply + dm * sizeof(float), &serving->memory_time[i], sizeof(double));
    }
    if (dispatch_exchange_reply(tr->group, &tr->fetch, tr->send_rows, tr->receive_rows, reply, &tr->bytes.updates,
                                err) != TF_OK)
        return TF_ERR_SYSTEM;
    const dispatch_requests *q = &tr->batch.requests;
    event_tape *tape = &tr->batch.tape;
    for (int64_t at = 0; at < q->total; at++) {
        const unsigned char *in = tr->receive_rows + (size_t)at * reply;
        memcpy(tape->updated + (size_t)q->row[at] * dm, in, dm * sizeof(float));
        memcpy(&tape->memory_time[q->row[at]], in + dm * sizeof(float), sizeof(double));
    }
    return TF_OK;
}

int dispatch_depcomm_backward(opt_event_trainer *tr, tf_error *err)
{
    event_model *m = &tr->base.model;
    const size_t dm = (size_t)m->config.memory_width;
    dispatch_batch *b = &tr->batch;
    const dispatch_requests *q = &b->requests;
    memset(tr->dupdated, 0, (size_t)b->tape.entries * dm * sizeof(float));
    if (b->size > 0 && event_model_backward_embedding(m, &b->tape, tr->dscores, tr->dupdated, err) != TF_OK)
        return TF_ERR_INPUT;
    const size_t row = dm * sizeof(float);
    for (int64_t at = 0; at < q->total; at++)
        memcpy(tr->send_rows + (size_t)at * row, tr->dupdated + (size_t)q->row[at] * dm, row);
    if (dispatch_exchange_data(tr->group, &tr->fetch, tr->send_rows, tr->receive_rows, row,
                               &tr->bytes.update_gradients, err) != TF_OK)
        return TF_ERR_SYSTEM;
    /* As owner: the gradients of the occurrences served, in the order they were asked. */
    memcpy(tr->dupdated, tr->receive_rows, (size_t)tr->fetch.received * row);
    if (tr->fetch.received > 0 && event_model_backward_updater(m, &tr->serving, tr->dupdated, err) != TF_OK)
        return TF_ERR_INPUT;
    parameters_round_sums(&m->parameters); /* this rank's sums; on R > 1 the reduce rounds their total */
    return TF_OK;
}
