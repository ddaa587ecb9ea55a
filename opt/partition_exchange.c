/* Exchange mode: halo plans, the all-to-all-v transfers and the kernels that run them
 * (opt/partition_exchange.h). */
#include "opt/partition_exchange.h"

#include <stdlib.h>
#include <string.h>

#include "opt/kernels.h"
#include "ref/core/clock.h"
#include "ref/core/memory.h"

/* The first failure inside a kernel (they return nothing); take_error hands it over. */
static tf_error first_failure;
static int (*dense_take_error)(tf_error *err);

static void record_failure(const tf_error *err)
{
    if (first_failure.code == TF_OK)
        first_failure = *err;
}

/* Grows *buffer to hold `count` elements of `size` bytes (at least one, so a rank with nothing to
 * hold still gets a buffer and goes on to the collective every rank must join). */
static int grow(void **buffer, int64_t *capacity, int64_t count, size_t size, const char *what, tf_error *err)
{
    if (count < 1)
        count = 1;
    if (*buffer && count <= *capacity)
        return TF_OK;
    void *grown = tf_realloc(*buffer, (size_t)count, size, what, err);
    if (!grown)
        return TF_ERR_INPUT;
    *buffer = grown;
    *capacity = count;
    return TF_OK;
}

static int by_value(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* One all-to-all-v of rows: out [sum send][width] goes to the peers by send_counts/send_offsets [R]
 * (in rows; send_vertices [sum send] their global ids), in [sum receive][width] receives by
 * receive_counts/receive_offsets [R] (receive_vertices [sum receive]); through the policy's
 * pack/unpack when it has them. */
static int transfer(partition_exchange *ex, exchange_key key, const int64_t *send_counts, const int64_t *send_offsets,
                    const int32_t *send_vertices, const float *out, const int64_t *receive_counts,
                    const int64_t *receive_offsets, const int32_t *receive_vertices, float *in, int64_t width,
                    tf_error *err)
{
    const int ranks = ex->group->size;
    const double cpu_before = thread_cpu_seconds(), wall_before = wall_seconds();
    int64_t counts[4][64], *sc = counts[0], *so = counts[1], *rc = counts[2], *ro = counts[3];
    int64_t *heap = NULL;
    if (ranks > 64) { /* more ranks than the stack arrays hold */
        if (!(heap = tf_alloc((size_t)(4 * ranks), sizeof *heap, "exchange counts", err)))
            return TF_ERR_INPUT;
        sc = heap, so = heap + ranks, rc = heap + 2 * ranks, ro = heap + 3 * ranks;
    }
    uint64_t *outer = comm_charge(ex->group, &ex->bytes);
    int status = TF_OK;
    const exchange_policy *policy = &ex->policy;
    if (!policy->pack) {
        for (int p = 0; p < ranks; p++) {
            sc[p] = send_counts[p] * width, so[p] = send_offsets[p] * width;
            rc[p] = receive_counts[p] * width, ro[p] = receive_offsets[p] * width;
        }
        status = comm_alltoallv(ex->group, out, sc, so, in, rc, ro, sizeof(float), err);
    } else {
        /* Room per peer: count * (width + 1) floats, so a policy may send an index beside each row. */
        int64_t send_room = 0, receive_room = 0;
        for (int p = 0; p < ranks; p++) {
            send_room += send_counts[p] * (width + 1) * 4;
            receive_room += receive_counts[p] * (width + 1) * 4;
        }
        status = grow((void **)&ex->message_out, &ex->message_capacity, send_room + receive_room, 1, "exchange messages",
                      err);
        unsigned char *message_in = ex->message_out + send_room;
        int64_t at = 0;
        for (int p = 0; status == TF_OK && p < ranks; p++) {
            so[p] = at;
            sc[p] = 0;
            if (send_counts[p] > 0)
                status = policy->pack(policy->context, key, p, send_vertices + send_offsets[p], out + send_offsets[p] * width,
                                      send_counts[p], width, ex->message_out + at, send_counts[p] * (width + 1) * 4, &sc[p],
                                      err);
            at += send_counts[p] * (width + 1) * 4;
        }
        for (int p = 0; status == TF_OK && p < ranks; p++)
            rc[p] = receive_counts[p] * width * 4;
        if (status == TF_OK && !policy->fixed_size) /* the sizes first, one int64 per peer */
            status = comm_alltoall_counts(ex->group, sc, rc, 1, err);
        at = 0;
        for (int p = 0; p < ranks; p++) {
            ro[p] = at;
            at += receive_counts[p] * (width + 1) * 4;
        }
        if (status == TF_OK)
            status = comm_alltoallv(ex->group, ex->message_out, sc, so, message_in, rc, ro, 1, err);
        for (int p = 0; status == TF_OK && p < ranks; p++)
            if (receive_counts[p] > 0)
                status = policy->unpack(policy->context, key, p, receive_vertices + receive_offsets[p], message_in + ro[p],
                                        rc[p], in + receive_offsets[p] * width, receive_counts[p], width, err);
    }
    free(heap);
    comm_charge(ex->group, outer);
    ex->transfers++;
    ex->cpu_seconds += thread_cpu_seconds() - cpu_before;
    ex->wall_seconds += wall_seconds() - wall_before;
    return status;
}

/* propagation_halo::fetch: halo_rows [halo][width] of x [owned][width] from their owners. */
static int fetch_halo(void *context, const float *x, int64_t width, float *halo_rows, tf_error *err)
{
    halo_plan *plan = context;
    partition_exchange *ex = plan->exchange;
    const exchange_key key = {plan->snapshot, plan->forward_calls++, EXCHANGE_FORWARD};
    if (!ex->anyone[plan->snapshot])
        return TF_OK;
    const int ranks = ex->group->size;
    const int64_t sending = plan->send_offsets[ranks - 1] + plan->send_counts[ranks - 1];
    if (grow((void **)&ex->send, &ex->send_capacity, sending * width, sizeof(float), "exchange rows", err) != TF_OK)
        return TF_ERR_INPUT;
    for (int64_t i = 0; i < sending; i++)
        memcpy(ex->send + i * width, x + (int64_t)plan->send_rows[i] * width, (size_t)width * sizeof(float));
    return transfer(ex, key, plan->send_counts, plan->send_offsets, plan->send_vertices, ex->send, plan->receive_counts,
                    plan->receive_offsets, ex->part->halo_vertices[plan->snapshot], halo_rows, width, err);
}

/* propagation_halo::give_back: halo_gradients [halo][width] to their owners; theirs into dx [owned][width]. */
static int give_back_halo(void *context, const float *halo_gradients, int64_t width, float *dx, tf_error *err)
{
    halo_plan *plan = context;
    partition_exchange *ex = plan->exchange;
    const exchange_key key = {plan->snapshot, plan->backward_calls++, EXCHANGE_BACKWARD};
    if (!ex->anyone[plan->snapshot])
        return TF_OK;
    const int ranks = ex->group->size;
    const int64_t owed = plan->send_offsets[ranks - 1] + plan->send_counts[ranks - 1];
    if (grow((void **)&ex->receive, &ex->receive_capacity, owed * width, sizeof(float), "exchange rows", err) != TF_OK)
        return TF_ERR_INPUT;
    int status = transfer(ex, key, plan->receive_counts, plan->receive_offsets, ex->part->halo_vertices[plan->snapshot],
                          halo_gradients, plan->send_counts, plan->send_offsets, plan->send_vertices, ex->receive, width,
                          err);
    for (int64_t i = 0; status == TF_OK && i < owed; i++) { /* peer by peer in rank order, each by id */
        float *row = dx + (int64_t)plan->send_rows[i] * width;
        const float *in = ex->receive + i * width;
        for (int64_t j = 0; j < width; j++)
            row[j] += in[j];
    }
    return status;
}

/* The part's operator source, with t's product counters reset when its operator is built. */
static int build_counted(void *context, int64_t t, operator_kind kind, propagation *out, tf_error *err)
{
    partition_exchange *ex = context;
    ex->plans[t].forward_calls = ex->plans[t].backward_calls = 0;
    return ex->part->operators.build(ex->part->operators.context, t, kind, out, err);
}

void partition_exchange_free(partition_exchange *ex)
{
    for (int64_t t = 0; ex->plans && t < ex->num_snapshots; t++) {
        free(ex->plans[t].send_counts);
        free(ex->plans[t].send_rows);
        free(ex->plans[t].send_vertices);
    }
    free(ex->plans);
    free(ex->anyone);
    free(ex->send);
    free(ex->receive);
    free(ex->message_out);
    free(ex->extended);
    memset(ex, 0, sizeof *ex);
}

int partition_exchange_create(partition_exchange *ex, comm *group, partition_part *part, const snapshot_seq *seq,
                              const int32_t *owner, const kernels *dense, tf_error *err)
{
    memset(ex, 0, sizeof *ex);
    const int64_t n = seq->num_nodes, steps = seq->num_snapshots;
    const int ranks = group->size, me = group->rank;
    if (part->mode != PARTITION_EXCHANGE || part->rank != me || part->ranks != ranks)
        return tf_error_set(err, TF_ERR_INPUT, "exchange mode on rank %d of %d needs this rank's exchange-mode part "
                                               "(got rank %d of %d, %s mode)",
                            me, ranks, part->rank, part->ranks, partition_mode_name(part->mode));
    ex->group = group;
    ex->part = part;
    ex->dense = dense;
    ex->num_snapshots = steps;
    ex->plans = tf_alloc((size_t)steps, sizeof *ex->plans, "halo plans", err);
    ex->anyone = ex->plans ? tf_alloc((size_t)steps, 1, "halo plans", err) : NULL;
    int32_t *owned_row = ex->anyone ? tf_alloc((size_t)n, sizeof *owned_row, "halo plans", err) : NULL;
    int64_t largest = 0;
    for (int64_t t = 0; t < steps; t++)
        largest = seq->snapshots[t].graph.num_edges > largest ? seq->snapshots[t].graph.num_edges : largest;
    int64_t *keys = owned_row ? tf_alloc((size_t)largest, sizeof *keys, "halo plans", err) : NULL;
    int status = keys ? TF_OK : TF_ERR_INPUT;
    for (int64_t i = 0; status == TF_OK && i < part->owned; i++)
        owned_row[part->global_id[i]] = (int32_t)i;
    for (int64_t t = 0; status == TF_OK && t < steps; t++) {
        const csr *g = &seq->snapshots[t].graph;
        halo_plan *plan = &ex->plans[t];
        plan->exchange = ex;
        plan->snapshot = t;
        /* (peer, row) pairs this rank owes: u mine, read by an edge into a vertex of peer. */
        int64_t count = 0;
        for (int64_t v = 0; v < n; v++)
            for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++) {
                const int32_t u = g->col[e];
                ex->anyone[t] |= owner[u] != owner[v];
                if (owner[u] == me && owner[v] != me)
                    keys[count++] = (int64_t)owner[v] * n + u;
            }
        qsort(keys, (size_t)count, sizeof *keys, by_value);
        int64_t unique = 0;
        for (int64_t i = 0; i < count; i++)
            if (i == 0 || keys[i] != keys[i - 1])
                keys[unique++] = keys[i];
        plan->send_counts = tf_alloc((size_t)(4 * ranks), sizeof(int64_t), "halo plan", err);
        plan->send_rows = plan->send_counts ? tf_alloc((size_t)unique, sizeof(int32_t), "halo plan", err) : NULL;
        plan->send_vertices = plan->send_rows ? tf_alloc((size_t)unique, sizeof(int32_t), "halo plan", err) : NULL;
        if (!plan->send_vertices) {
            status = TF_ERR_INPUT;
            break;
        }
        plan->send_offsets = plan->send_counts + ranks;
        plan->receive_counts = plan->send_counts + 2 * ranks;
        plan->receive_offsets = plan->send_counts + 3 * ranks;
        for (int64_t i = 0; i < unique; i++) {
            const int32_t u = (int32_t)(keys[i] % n);
            plan->send_counts[keys[i] / n]++;
            plan->send_vertices[i] = u;
            plan->send_rows[i] = owned_row[u];
        }
        for (int64_t i = 0; i < part->halo[t]; i++)
            plan->receive_counts[owner[part->halo_vertices[t][i]]]++;
        for (int p = 1; p < ranks; p++) {
            plan->send_offsets[p] = plan->send_offsets[p - 1] + plan->send_counts[p - 1];
            plan->receive_offsets[p] = plan->receive_offsets[p - 1] + plan->receive_counts[p - 1];
        }
        part->halos[t] = (propagation_halo){part->owned, fetch_halo, give_back_halo, plan, 0};
        if (part->transposed_halos) /* DCRNN's backward walk: the same rows, applied as a transpose */
            part->transposed_halos[t] = (propagation_halo){part->owned, fetch_halo, give_back_halo, plan, 1};
    }
    free(owned_row);
    free(keys);
    ex->operators = (operator_source){build_counted, ex};
    if (status != TF_OK)
        partition_exchange_free(ex);
    return status;
}

/* ---- the kernels ---------------------------------------------------------------------------- */

/* The local operator without its halo: a whole operator over owned + halo rows. */
static propagation whole_view(const propagation *p)
{
    propagation view = *p;
    view.halo = NULL;
    return view;
}

/* The operand and result buffers of a local product of `rows` rows, or NULL (failure recorded). */
static float *extended_buffers(partition_exchange *ex, int64_t rows, int64_t width)
{
    tf_error err;
    if (grow((void **)&ex->extended, &ex->extended_capacity, 2 * rows * width, sizeof(float), "exchange operands",
             &err) != TF_OK) {
        record_failure(&err);
        return NULL;
    }
    return ex->extended;
}

/* y [owned][width] = (P x) on the owned rows (+= with @p accumulate), x [owned][width]: the halo
 * rows of x fetched, the product run on the whole local operator. */
static void fetch_and_gather(const propagation *p, const float *x, int64_t width, float *y, int accumulate)
{
    const halo_plan *plan = p->halo->context;
    partition_exchange *ex = plan->exchange;
    const int64_t owned = p->halo->owned, rows = p->graph->num_nodes;
    float *extended_x = extended_buffers(ex, rows, width), *extended_y = extended_x + rows * width;
    tf_error err;
    if (!extended_x) {
        if (!accumulate)
            memset(y, 0, (size_t)(owned * width) * sizeof(float));
        return;
    }
    memcpy(extended_x, x, (size_t)(owned * width) * sizeof(float));
    if (p->halo->fetch(p->halo->context, x, width, extended_x + owned * width, &err) != TF_OK) {
        record_failure(&err);
        memset(extended_x + owned * width, 0, (size_t)((rows - owned) * width) * sizeof(float));
    }
    const propagation view = whole_view(p);
    ex->dense->propagate_forward(&view, extended_x, width, extended_y);
    for (int64_t i = 0; i < owned * width; i++)
        y[i] = accumulate ? y[i] + extended_y[i] : extended_y[i];
}

/* dx [owned][width] += (P^T dy) on the owned rows, dy [owned][width]: the transpose product on the
 * whole local operator, the halo rows' shares given back to their owners. */
static void scatter_and_give_back(const propagation *p, const float *dy, int64_t width, float *dx)
{
    const halo_plan *plan = p->halo->context;
    partition_exchange *ex = plan->exchange;
    const int64_t owned = p->halo->owned, rows = p->graph->num_nodes;
    float *extended_dy = extended_buffers(ex, rows, width), *extended_dx = extended_dy + rows * width;
    tf_error err;
    if (!extended_dy)
        return;
    memcpy(extended_dy, dy, (size_t)(owned * width) * sizeof(float));
    memset(extended_dy + owned * width, 0, (size_t)((rows - owned) * width) * sizeof(float));
    memcpy(extended_dx, dx, (size_t)(owned * width) * sizeof(float));
    memset(extended_dx + owned * width, 0, (size_t)((rows - owned) * width) * sizeof(float));
    const propagation view = whole_view(p);
    ex->dense->propagate_backward(&view, extended_dy, width, extended_dx);
    memcpy(dx, extended_dx, (size_t)(owned * width) * sizeof(float));
    if (p->halo->give_back(p->halo->context, extended_dx + owned * width, width, dx, &err) != TF_OK)
        record_failure(&err);
}

/* kernels::propagate_forward: y [owned][width] = P x, x [owned][width] (a whole operator: [N][width]);
 * an operator held as its transpose (propagation_halo::transposed) scatters instead. */
static void exchange_forward(const propagation *p, const float *x, int64_t width, float *y)
{
    if (!p->halo) {
        opt_propagate_forward(p, x, width, y);
        return;
    }
    if (!p->halo->transposed) {
        fetch_and_gather(p, x, width, y, 0);
        return;
    }
    memset(y, 0, (size_t)(p->halo->owned * width) * sizeof(float));
    scatter_and_give_back(p, x, width, y);
}

/* kernels::propagate_backward: dx [owned][width] += P^T dy, dy [owned][width] (whole operator: [N][width]);
 * an operator held as its transpose gathers instead. */
static void exchange_backward(const propagation *p, const float *dy, int64_t width, float *dx)
{
    if (!p->halo)
        opt_propagate_backward(p, dy, width, dx);
    else if (p->halo->transposed)
        fetch_and_gather(p, dy, width, dx, 1);
    else
        scatter_and_give_back(p, dy, width, dx);
}

static int exchange_take_error(tf_error *err)
{
    if (first_failure.code != TF_OK) {
        *err = first_failure;
        tf_error_clear(&first_failure);
        return err->code;
    }
    return dense_take_error ? dense_take_error(err) : TF_OK;
}

kernels partition_kernels(const kernels *dense)
{
    kernels table = *dense;
    table.name = "partition exchange";
    table.propagate_forward = exchange_forward;
    table.propagate_backward = exchange_backward;
    dense_take_error = dense->take_error;
    table.take_error = exchange_take_error;
    return table;
}
