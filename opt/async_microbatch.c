/* Sven's micro-batches on the distributed event trainer (opt/async_microbatch.h has why the
 * memory stays bitwise and the gradients fp). */
#include "opt/async_microbatch.h"

#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"

int microbatch_split_create(microbatch_split *split, const dispatch_setup *s, tf_error *err)
{
    memset(split, 0, sizeof *split);
    split->capacity = dispatch_batch_capacity(s);
    split->ranks = s->ranks;
    const size_t C = (size_t)split->capacity;
    if (!(split->position = tf_alloc(C, sizeof(int32_t), "micro-batches", err)) ||
        !(split->first = tf_alloc(C, sizeof(int32_t), "micro-batches", err)) ||
        !(split->asked = tf_alloc((size_t)MICROBATCH_MAX * (size_t)s->ranks, sizeof(int64_t), "micro-batches", err)) ||
        !(split->vertex = tf_alloc(C, sizeof(int32_t), "micro-batches", err)) ||
        !(split->row = tf_alloc(C, sizeof(int32_t), "micro-batches", err))) {
        microbatch_split_free(split);
        return TF_ERR_INPUT;
    }
    return TF_OK;
}

void microbatch_split_free(microbatch_split *split)
{
    for (int i = 0; i < MICROBATCH_MAX; i++)
        event_tape_free(&split->tape[i]);
    free(split->position), free(split->first), free(split->asked), free(split->vertex), free(split->row);
    memset(split, 0, sizeof *split);
}

/* Within every owner's block of @p q, the requests in order of their row's first reader (stable),
 * and split->asked[i][r]: how many of rank r's rows micro-batch i reads first. */
static void order_requests(microbatch_split *split, dispatch_requests *q)
{
    const int n = split->count, R = q->ranks;
    memset(split->asked, 0, (size_t)n * (size_t)R * sizeof *split->asked);
    for (int r = 0; r < R; r++) {
        const int64_t begin = q->offset[r], end = begin + q->count[r];
        for (int64_t at = begin; at < end; at++)
            split->asked[split->first[q->row[at]] * R + r]++;
        int64_t next[MICROBATCH_MAX];
        for (int i = 0, start = 0; i < n; start += (int)split->asked[i * R + r], i++)
            next[i] = begin + start;
        for (int64_t at = begin; at < end; at++) {
            const int64_t to = next[split->first[q->row[at]]]++;
            split->vertex[to] = q->vertex[at];
            split->row[to] = q->row[at];
        }
    }
    memcpy(q->vertex, split->vertex, (size_t)q->total * sizeof *q->vertex);
    memcpy(q->row, split->row, (size_t)q->total * sizeof *q->row);
}

int microbatch_split_build(microbatch_split *split, dispatch_batch *b, const dispatch_setup *s, int n,
                           dispatch_table *scratch, tf_error *err)
{
    if (n < 1 || n > MICROBATCH_MAX)
        return tf_error_set(err, TF_ERR_INPUT, "%d micro-batches: expected 1..%d", n, MICROBATCH_MAX);
    if (s->mode != DISPATCH_SVEN)
        return tf_error_set(err, TF_ERR_INPUT, "micro-batches split Sven's fetch: use --dispatch sven");
    const event_trainer *tr = s->base;
    const dispatch_plan *plan = b->fetch;
    split->count = n;
    for (int64_t p = 0; p < plan->unique; p++) {
        scratch->position[plan->vertex[p]] = (int32_t)p;
        split->first[p] = n;
    }
    int status = TF_OK;
    int64_t offset = 0;
    for (int i = 0; i < n; i++) {
        split->begin[i] = b->size * i / n;
        split->begin[i + 1] = b->size * (i + 1) / n;
        const int64_t size = split->begin[i + 1] - split->begin[i];
        split->batch[i] = (event_batch){b->batch.events, b->batch.edge_features, b->first + split->begin[i], size,
                                        b->negatives + split->begin[i]};
        event_tape_free(&split->tape[i]);
        split->entry_offset[i] = offset;
        if (status != TF_OK || size == 0)
            continue;
        status = event_model_collect(&tr->model, &tr->history, &split->batch[i], &split->tape[i], err);
        const event_tape *t = &split->tape[i];
        if (status == TF_OK && offset + t->entries > split->capacity)
            status = tf_error_set(err, TF_ERR_INPUT, "micro-batches: %lld entries, the slice holds %lld",
                                  (long long)(offset + t->entries), (long long)split->capacity);
        for (int64_t k = 0; status == TF_OK && k < t->entries; k++) {
            const int32_t p = scratch->position[t->vertex[k]];
            split->position[offset + k] = p;
            if (split->first[p] > i)
                split->first[p] = i;
        }
        if (status == TF_OK)
            offset += t->entries;
    }
    split->entry_offset[n] = offset;
    for (int64_t p = 0; p < plan->unique; p++)
        scratch->position[plan->vertex[p]] = -1;
    if (status == TF_OK)
        order_requests(split, &b->requests);
    return status;
}

/* Rows of micro-batch i: owners answer their asked rows whose first reader is i, requesters
 * receive them where the whole fetch would put them. Non-blocking; bytes are rows. */
static int post_rows(opt_event_trainer *tr, const microbatch_split *split, const int64_t *answering, int i,
                     int64_t *layout, comm_request *request, tf_error *err)
{
    const int R = split->ranks, n = split->count;
    const dispatch_exchange *x = &tr->fetch;
    int64_t *send_count = layout, *send_offset = layout + R, *receive_count = layout + 2 * R,
            *receive_offset = layout + 3 * R;
    for (int r = 0; r < R; r++) {
        int64_t answered = 0, asked = 0;
        for (int j = 0; j < i; j++) {
            answered += answering[r * n + j];
            asked += split->asked[j * R + r];
        }
        send_count[r] = answering[r * n + i];
        send_offset[r] = x->receive_offset[r] + answered;
        receive_count[r] = split->asked[i * R + r];
        receive_offset[r] = x->send_offset[r] + asked;
    }
    const event_model *m = &tr->base.model;
    const size_t row = dispatch_read_row_bytes(m);
    uint64_t *outer = comm_charge(tr->group, &tr->bytes.dispatch_rows);
    const int status = comm_ialltoallv(tr->group, tr->send_rows, send_count, send_offset, tr->receive_rows,
                                       receive_count, receive_offset, row, request, err);
    comm_charge(tr->group, outer);
    return status;
}

/* The other all-reduce and this fetch advance while a micro-batch computes. */
static int progress(opt_event_trainer *tr, opt_delayed_gradient *reducer, comm_request *request, tf_error *err)
{
    int done;
    if (opt_delayed_gradient_progress(reducer, err) != TF_OK)
        return err->code;
    return comm_test(tr->group, request, &done, err);
}

/* Micro-batch i's update, embedding, loss terms and backward; its roots' s' into the slice's tape. */
static int compute(opt_event_trainer *tr, microbatch_split *split, int i, opt_delayed_gradient *reducer,
                   comm_request *request, tf_error *err)
{
    dispatch_batch *b = &tr->batch;
    event_model *m = &tr->base.model;
    const int64_t size = split->batch[i].size, dm = m->config.memory_width;
    if (size == 0)
        return TF_OK;
    event_tape *t = &split->tape[i];
    const int32_t *position = split->position + split->entry_offset[i];
    for (int64_t k = 0; k < t->entries; k++)
        opt_dispatch_unpack_answer(tr, tr->arrival[position[k]], t, k);
    event_model_update(m, t);
    if (progress(tr, reducer, request, err) != TF_OK ||
        event_model_embed(m, &split->batch[i], t, tr->scores, err) != TF_OK)
        return err->code;
    double part[2];
    event_model_loss_sums(tr->scores, size, b->global.size, tr->dscores, part);
    tr->loss_sums[0] += part[0];
    tr->loss_sums[1] += part[1];
    if (progress(tr, reducer, request, err) != TF_OK || event_model_backward(m, t, tr->dscores, err) != TF_OK)
        return err->code;
    for (int64_t role = 0; role < 2; role++)
        memcpy(b->tape.updated + (size_t)((role * b->size + split->begin[i]) * dm),
               t->updated + (size_t)(role * size * dm), (size_t)(size * dm) * sizeof(float));
    return TF_OK;
}

int opt_microbatch_forward_backward(opt_event_trainer *tr, const microbatch_split *split_in,
                                    opt_delayed_gradient *reducer, double *loss, tf_error *err)
{
    microbatch_split *split = (microbatch_split *)split_in; /* its tapes take the rows */
    comm *c = tr->group;
    const int R = c->size, n = split->count;
    const dispatch_requests *q = &tr->batch.requests;
    dispatch_exchange *x = &tr->fetch;
    int64_t *asking = calloc((size_t)(2 * R * n + 4 * R), sizeof(int64_t));
    if (!asking)
        return tf_error_set(err, TF_ERR_SYSTEM, "micro-batches: out of memory");
    int64_t *answering = asking + R * n, *layout = answering + R * n;
    /* Counts: n per pair, the rows each micro-batch asks of each owner. */
    for (int r = 0; r < R; r++)
        for (int i = 0; i < n; i++)
            asking[r * n + i] = split->asked[i * R + r];
    uint64_t *outer = comm_charge(c, &tr->bytes.counts);
    int status = comm_alltoall_counts(c, asking, answering, n, err);
    comm_charge(c, outer);
    if (status == TF_OK) {
        x->sent = x->received = 0;
        for (int r = 0; r < R; r++) {
            x->send_count[r] = q->count[r];
            x->send_offset[r] = x->sent;
            x->sent += q->count[r];
            x->receive_count[r] = 0;
            for (int i = 0; i < n; i++)
                x->receive_count[r] += answering[r * n + i];
            x->receive_offset[r] = x->received;
            x->received += x->receive_count[r];
        }
        if (x->received > tr->capacity)
            status = tf_error_set(err, TF_ERR_SYSTEM, "micro-batches: rank %d would answer %lld rows, its buffer "
                                                      "holds %lld",
                                  c->rank, (long long)x->received, (long long)tr->capacity);
    }
    /* The ids once; every asked row packed from the pre-batch memory before anything is written. */
    if (status == TF_OK)
        status = dispatch_exchange_data(c, x, q->vertex, tr->asked, sizeof *q->vertex, &tr->bytes.requests, err);
    if (status == TF_OK) {
        opt_dispatch_pack_answers(tr);
        for (int64_t at = 0; at < q->total; at++)
            tr->arrival[q->row[at]] = (int32_t)at;
        parameters_zero_grad(&tr->base.model.parameters);
        tr->loss_sums[0] = tr->loss_sums[1] = 0;
    }
    comm_request request;
    memset(&request, 0, sizeof request);
    if (status == TF_OK)
        status = post_rows(tr, split, answering, 0, layout, &request, err);
    for (int i = 0; status == TF_OK && i < n; i++) {
        status = comm_wait(c, &request, err);
        if (status == TF_OK && i + 1 < n) /* micro-batch i + 1's rows travel while i computes */
            status = post_rows(tr, split, answering, i + 1, layout, &request, err);
        if (status == TF_OK)
            status = compute(tr, split, i, reducer, &request, err);
    }
    if (status != TF_OK)
        comm_wait(c, &request, &(tf_error){0});
    free(asking);
    if (status != TF_OK)
        return status;
    outer = comm_charge(c, &tr->bytes.other);
    status = comm_allreduce_sum_double(c, tr->loss_sums, 2, err);
    comm_charge(c, outer);
    const double B = (double)tr->batch.global.size;
    *loss = tr->loss_sums[0] / B + tr->loss_sums[1] / B;
    return status;
}
