/* The distributed event-model trainer: partitioned node memory moved by Sven's dispatch or a
 * baseline (opt/train_events.h has the steps and why they give the reference's bits). */
#include "opt/train_events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt/train.h"
#include "ref/core/digest.h"
#include "ref/core/memory.h"

/* ---- packed rows ----------------------------------------------------------------------------- */

/* The per-vertex rule needs mail_ts beside mem_ts wherever a row moves; the per-entry rule writes
 * both from the event's time, so there mail_ts = mem_ts and one of them travels. */
static size_t row_times(event_memory_update rule) { return rule == EVENT_MEMORY_PER_VERTEX ? 2 : 1; }

/* Whether a read row carries the mail_ts of every mailbox slot beside mem_ts: under the per-vertex
 * rule (the updater reads mail_ts), and for APAN, whose neighbours receive mails without a memory
 * write, so a slot's mail_ts is not its vertex's mem_ts. */
static int carries_mail_times(const event_model *m)
{
    return m->config.kind == EVENT_MODEL_APAN || m->config.memory_update == EVENT_MEMORY_PER_VERTEX;
}

size_t dispatch_read_row_bytes(const event_model *m)
{
    const int64_t M = m->config.mails, box = M * event_model_mail_width(m);
    return (size_t)(m->config.memory_width + box) * sizeof(float) +
           (size_t)(1 + (carries_mail_times(m) ? M : 0)) * sizeof(double);
}

size_t dispatch_write_row_bytes(const event_model *m)
{
    const size_t floats = (size_t)(m->config.memory_width + event_model_mail_width(m)) * sizeof(float);
    if (m->config.kind == EVENT_MODEL_APAN) /* [vertex][parts][s'][mail][mem_ts][mail_ts] */
        return 2 * sizeof(int32_t) + floats + 2 * sizeof(double);
    return sizeof(int32_t) + floats + row_times(m->config.memory_update) * sizeof(double);
}

/* A read row [memory][mailbox: M mails][mem_ts] (with mail_times: [mail_ts of every slot] after it)
 * of vertex row `row` of a node memory. The doubles may sit at any byte: memcpy in and out. */
static void pack_read_row(unsigned char *out, const node_memory *m, int64_t row, int mail_times)
{
    const size_t dm = (size_t)m->memory_width, box = (size_t)(m->mails * m->mail_width), M = (size_t)m->mails;
    memcpy(out, m->memory + (size_t)row * dm, dm * sizeof(float));
    memcpy(out + dm * sizeof(float), m->mail + (size_t)row * box, box * sizeof(float));
    memcpy(out + (dm + box) * sizeof(float), &m->memory_time[row], sizeof(double));
    if (mail_times)
        memcpy(out + (dm + box) * sizeof(float) + sizeof(double), &m->mail_time[(size_t)row * M], M * sizeof(double));
}

/* Entry k of a tape takes a read row: its own copy of memory, mailbox, mem_ts and mail_ts. */
static void unpack_read_row(const unsigned char *in, event_tape *tape, int64_t k, const event_model *m)
{
    const size_t dm = (size_t)m->config.memory_width, M = (size_t)m->config.mails;
    const size_t box = M * (size_t)event_model_mail_width(m);
    memcpy(tape->memory + (size_t)k * dm, in, dm * sizeof(float));
    memcpy(tape->mail + (size_t)k * box, in + dm * sizeof(float), box * sizeof(float));
    memcpy(&tape->memory_time[k], in + (dm + box) * sizeof(float), sizeof(double));
    if (carries_mail_times(m))
        memcpy(&tape->mail_time[(size_t)k * M], in + (dm + box) * sizeof(float) + sizeof(double), M * sizeof(double));
    else
        tape->mail_time[k] = tape->memory_time[k]; /* M = 1, and equal in every row under this rule */
}

/* ---- creating ---------------------------------------------------------------------------------- */

void opt_event_trainer_free(opt_event_trainer *tr)
{
    event_trainer_free(&tr->base);
    dispatch_placement_free(&tr->placement);
    node_memory_free(&tr->shard);
    dispatch_table_free(&tr->table);
    dispatch_batch_free(&tr->batch);
    dispatch_exchange_free(&tr->fetch);
    dispatch_exchange_free(&tr->write);
    event_tape_free(&tr->serving);
    event_tape_free(&tr->unique);
    void *arrays[] = {tr->send_rows, tr->receive_rows, tr->asked, tr->asked_time, tr->arrival, tr->scores,
                      tr->dscores, tr->global_scores, tr->dupdated, tr->gradients, tr->unique_of, tr->slots};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++)
        free(arrays[i]);
    memset(tr, 0, sizeof *tr);
}

/* Whether the memory updater runs once per distinct (vertex, time), decided when the trainer is
 * made: off the reference's kernels (their checks are bitwise, and adding duplicates' gradients
 * first reorders a sum), and not in DepComm (its owners update per request). */
static int deduplicating(const opt_event_trainer *tr) { return tr->unique_of != NULL; }

/* The buffers of the exchanges, sized once: no exchange of a batch of this size holds more rows
 * than the entries of a whole global batch, 3 B (1 + k), nor (APAN's write-back) 2 B (k + 2) write
 * rows; only entries are read, so read rows (APAN's hold M mails) need only the entries' room. */
static int allocate_buffers(opt_event_trainer *tr, tf_error *err)
{
    const event_model *m = &tr->base.model;
    const int64_t B = dispatch_batch_largest(&tr->setup), dm = m->config.memory_width;
    const int64_t entries = dispatch_batch_capacity(&tr->setup);
    const size_t C = (size_t)tr->capacity;
    size_t bytes = C * dispatch_write_row_bytes(m), reads = (size_t)entries * dispatch_read_row_bytes(m);
    bytes = bytes > reads ? bytes : reads;
    bytes = bytes > 12 * C ? bytes : 12 * C; /* DepComm's requests */
    tr->row_bytes = bytes / C;
    if (!(tr->send_rows = tf_alloc(bytes, 1, "exchange buffers", err)) ||
        !(tr->receive_rows = tf_alloc(bytes, 1, "exchange buffers", err)) ||
        !(tr->asked = tf_alloc(C, sizeof *tr->asked, "exchange buffers", err)) ||
        !(tr->asked_time = tf_alloc(C, sizeof *tr->asked_time, "exchange buffers", err)) ||
        !(tr->arrival = tf_alloc(C, sizeof *tr->arrival, "exchange buffers", err)) ||
        !(tr->scores = tf_alloc((size_t)(2 * B), sizeof(float), "scores", err)) ||
        !(tr->dscores = tf_alloc((size_t)(2 * B), sizeof(float), "scores", err)) ||
        !(tr->global_scores = tf_alloc((size_t)(2 * B), sizeof(float), "scores", err)) ||
        !(tr->gradients = tf_alloc((size_t)parameters_size(&m->parameters), sizeof(double), "gradients", err)) ||
        !(tr->dupdated = tf_alloc(2 * C * (size_t)dm, sizeof(float), "memory gradients", err))) /* entries, rows */
        return TF_ERR_INPUT;
    if (m->kernels == &ref_kernels || tr->mode == DISPATCH_DEPCOMM)
        return TF_OK;
    for (tr->slot_count = 1; tr->slot_count < 2 * entries;)
        tr->slot_count *= 2;
    if (!(tr->unique_of = tf_alloc(C, sizeof *tr->unique_of, "distinct entries", err)) ||
        !(tr->slots = tf_alloc((size_t)tr->slot_count, sizeof *tr->slots, "distinct entries", err)))
        return TF_ERR_INPUT;
    return event_tape_alloc_entries(m, &tr->unique, entries, err);
}

/* Every rank must run the same stream, mode, batch size and placement, or their collectives
 * would not match (a hang, or garbage): compare a checksum of them with rank 0's. */
static int ranks_agree(const opt_event_trainer *tr, tf_error *err)
{
    const event_stream *es = tr->base.events;
    uint64_t h = TF_DIGEST_START;
    h = tf_digest(h, es->src, (size_t)es->num_events * sizeof *es->src);
    h = tf_digest(h, es->dst, (size_t)es->num_events * sizeof *es->dst);
    h = tf_digest(h, es->time, (size_t)es->num_events * sizeof *es->time);
    h = tf_digest(h, &tr->mode, sizeof tr->mode);
    h = tf_digest(h, &tr->base.options.batch_size, sizeof tr->base.options.batch_size);
    h = tf_digest(h, tr->placement.owner, (size_t)tr->placement.num_nodes * sizeof *tr->placement.owner);
    double differ;
    if (comm_ranks_differing(tr->group, (double)(h >> 11), &differ, err) != TF_OK)
        return err->code;
    if (differ != 0)
        return tf_error_set(err, TF_ERR_INPUT, "%.0f rank(s) have another event stream, dispatch mode, batch size or "
                                               "placement than rank 0: start every rank with the same arguments",
                            differ);
    return TF_OK;
}

int opt_event_trainer_create(opt_event_trainer *tr, const event_stream *events, const float *edge_features,
                             const event_model_config *config, const event_train_options *options,
                             dispatch_mode mode, const char *placement, comm *group, tf_error *err)
{
    memset(tr, 0, sizeof *tr);
    if (group->transport != COMM_MPI)
        return tf_error_set(err, TF_ERR_INPUT, "the dispatch trainer keeps node memory in host memory: it needs the "
                                               "MPI transport");
    if (options->staleness != 0)
        return tf_error_set(err, TF_ERR_INPUT, "staleness %d: the distributed event trainer delays its gradients in "
                                               "its pipeline (opt/async_pipeline.h)",
                            options->staleness);
    tr->group = group;
    tr->mode = mode;
    event_train_options base = *options;
    base.without_memory = mode != DISPATCH_DEPCACHE; /* the partitioned modes keep only their own rows */
    int status = event_trainer_create(&tr->base, events, edge_features, config, &base, err);
    if (status == TF_OK)
        status = opt_state_agree(group, &tr->base.model.parameters, &tr->base.optimizer, tr->base.epoch, err);
    int32_t *owner = NULL;
    if (status == TF_OK && !(owner = tf_alloc((size_t)events->num_nodes, sizeof *owner, "placement", err)))
        status = TF_ERR_INPUT;
    if (status == TF_OK)
        status = dispatch_place(placement, &tr->base, group->size, owner, err);
    if (status == TF_OK)
        status = dispatch_placement_create(&tr->placement, owner, events->num_nodes, group->size, err);
    free(owner);
    if (status == TF_OK && mode != DISPATCH_DEPCACHE) {
        const event_model *m = &tr->base.model;
        const int64_t rows = tr->placement.shard_rows[group->rank];
        status = node_memory_create_mailbox(&tr->shard, rows > 0 ? rows : 1, m->config.memory_width,
                                            event_model_mail_width(m), m->config.mails, err);
    }
    if (status == TF_OK)
        status = ranks_agree(tr, err);
    tr->setup = (dispatch_setup){&tr->base, &tr->placement, mode, group->size, group->rank};
    if (status == TF_OK)
        status = dispatch_table_create(&tr->table, events->num_nodes, err);
    if (status == TF_OK)
        status = dispatch_batch_create(&tr->batch, &tr->setup, err);
    if (status == TF_OK)
        status = dispatch_exchange_create(&tr->fetch, group->size, err);
    if (status == TF_OK)
        status = dispatch_exchange_create(&tr->write, group->size, err);
    if (status == TF_OK) { /* the capacity reads the events, which a failed set-up may not hold */
        tr->capacity = dispatch_batch_write_capacity(&tr->setup);
        status = allocate_buffers(tr, err);
    }
    if (status != TF_OK)
        opt_event_trainer_free(tr);
    return status;
}

void opt_event_trainer_reset_memory(opt_event_trainer *tr)
{
    node_memory_reset(tr->mode == DISPATCH_DEPCACHE ? &tr->base.memory : &tr->shard);
}

/* ---- DepComm's own steps (NeutronStar's dependency communication, [Sven] §2.3, Fig. 4b): the owner
 * of a vertex runs the memory updater for every occurrence another rank asks about and sends back
 * s'; in backward the asker sends d loss / d s' back to the owner, which runs the updater's
 * backward. The owner's updater sees exactly the row and query time the reference's entry sees, so
 * s' has the reference's bits; the updater's parameter gradient is summed on the owners: fp. */

enum { REQUEST_BYTES = sizeof(int32_t) + sizeof(double) };

/* Step 2: every entry's (vertex, query time) to the vertex's owner, 12 bytes each. */
static int depcomm_send_requests(opt_event_trainer *tr, tf_error *err)
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

/* Step 3: as owner, read the asked rows and run the updater on them (tr->serving, kept for
 * backward); send back s' and mem_ts; as asker, store them in the batch's tape. */
static int depcomm_serve_updates(opt_event_trainer *tr, tf_error *err)
{
    const event_model *m = &tr->base.model;
    const node_memory *shard = &tr->shard;
    const size_t dm = (size_t)m->config.memory_width, M = (size_t)m->config.mails;
    const size_t box = M * (size_t)event_model_mail_width(m);
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
        memcpy(serving->mail + i * box, shard->mail + row * box, box * sizeof(float));
        serving->memory_time[i] = shard->memory_time[row];
        memcpy(serving->mail_time + i * M, shard->mail_time + row * M, M * sizeof(double));
    }
    event_model_update(m, serving);
    tr->updater_rows += n;
    const event_memory_update rule = m->config.memory_update;
    const size_t reply = dm * sizeof(float) + row_times(rule) * sizeof(double); /* [s'][mem_ts] (+ [mail_ts]) */
    for (int64_t i = 0; i < n; i++) {
        unsigned char *out = tr->send_rows + (size_t)i * reply + dm * sizeof(float);
        memcpy(out - dm * sizeof(float), serving->updated + i * dm, dm * sizeof(float));
        memcpy(out, &serving->memory_time[i], sizeof(double));
        if (rule == EVENT_MEMORY_PER_VERTEX)
            memcpy(out + sizeof(double), &serving->mail_time[i], sizeof(double));
    }
    if (dispatch_exchange_reply(tr->group, &tr->fetch, tr->send_rows, tr->receive_rows, reply, &tr->bytes.updates,
                                err) != TF_OK)
        return TF_ERR_SYSTEM;
    const dispatch_requests *q = &tr->batch.requests;
    event_tape *tape = &tr->batch.tape;
    for (int64_t at = 0; at < q->total; at++) {
        const unsigned char *in = tr->receive_rows + (size_t)at * reply;
        const int64_t k = q->row[at];
        memcpy(tape->updated + (size_t)k * dm, in, dm * sizeof(float));
        memcpy(&tape->memory_time[k], in + dm * sizeof(float), sizeof(double));
        if (rule == EVENT_MEMORY_PER_VERTEX)
            memcpy(&tape->mail_time[k], in + dm * sizeof(float) + sizeof(double), sizeof(double));
        else if (m->config.mails == 1) /* APAN's requester reads no mail_ts: the owner ran its updater */
            tape->mail_time[k] = tape->memory_time[k];
    }
    return TF_OK;
}

/* Step 5 (gradients zeroed by the caller): decoder and embedding backward here, d loss / d s' of
 * every entry to its owner, the updater's backward there. */
static int depcomm_backward(opt_event_trainer *tr, tf_error *err)
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

/* ---- the steps of a batch ------------------------------------------------------------------------ */

int opt_dispatch_plan_batch(opt_event_trainer *tr, const event_batch_spec *global, tf_error *err)
{
    if (event_trainer_check_batch(&tr->base, global, err) != TF_OK)
        return TF_ERR_INPUT;
    return dispatch_batch_build(&tr->batch, &tr->setup, global, &tr->table, err);
}

int opt_dispatch_exchange_requests(opt_event_trainer *tr, tf_error *err)
{
    if (tr->mode == DISPATCH_DEPCACHE)
        return TF_OK; /* every rank reads its replica */
    if (tr->mode == DISPATCH_DEPCOMM)
        return depcomm_send_requests(tr, err);
    const dispatch_requests *q = &tr->batch.requests;
    memcpy(tr->fetch.send_count, q->count, (size_t)q->ranks * sizeof *q->count);
    if (dispatch_exchange_counts(tr->group, &tr->fetch, tr->capacity, &tr->bytes.counts, err) != TF_OK)
        return TF_ERR_SYSTEM;
    return dispatch_exchange_data(tr->group, &tr->fetch, q->vertex, tr->asked, sizeof *q->vertex, &tr->bytes.requests,
                                  err);
}

int opt_dispatch_fetch_rows(opt_event_trainer *tr, tf_error *err)
{
    dispatch_batch *b = &tr->batch;
    const event_model *m = &tr->base.model;
    if (tr->mode == DISPATCH_DEPCACHE)
        return b->size > 0 ? event_model_read_memory(m, &tr->base.memory, &b->tape, err) : TF_OK;
    if (tr->mode == DISPATCH_DEPCOMM)
        return depcomm_serve_updates(tr, err);
    const size_t row = dispatch_read_row_bytes(m);
    opt_dispatch_pack_answers(tr);
    if (dispatch_exchange_reply(tr->group, &tr->fetch, tr->send_rows, tr->receive_rows, row, &tr->bytes.dispatch_rows,
                                err) != TF_OK)
        return TF_ERR_SYSTEM;
    /* Requester: the answers arrive in request order; expand them by Psi, one copy per entry. */
    const dispatch_requests *q = &b->requests;
    for (int64_t at = 0; at < q->total; at++)
        tr->arrival[q->row[at]] = (int32_t)at;
    for (int64_t k = 0; k < b->tape.entries; k++)
        opt_dispatch_unpack_answer(tr, tr->arrival[b->fetch->position[k]], &b->tape, k);
    return TF_OK;
}

void opt_dispatch_pack_answers(opt_event_trainer *tr)
{
    const event_model *m = &tr->base.model;
    const size_t row = dispatch_read_row_bytes(m);
    /* Owner: one row per id asked, in the order asked. */
    for (int64_t i = 0; i < tr->fetch.received; i++)
        pack_read_row(tr->send_rows + (size_t)i * row, &tr->shard, tr->placement.local_row[tr->asked[i]],
                      carries_mail_times(m));
}

void opt_dispatch_unpack_answer(const opt_event_trainer *tr, int64_t answer, event_tape *tape, int64_t k)
{
    const event_model *m = &tr->base.model;
    unpack_read_row(tr->receive_rows + (size_t)answer * dispatch_read_row_bytes(m), tape, k, m);
}

/* Every rank's slice size and start within the global batch: the layout of a score gather. */
static void slice_layout(const opt_event_trainer *tr, int64_t *counts, int64_t *offsets)
{
    for (int r = 0; r < tr->group->size; r++) {
        int64_t first;
        dispatch_slice(&tr->batch.global, r, tr->group->size, &first, &counts[r]);
        offsets[r] = first - tr->batch.global.first;
    }
}

/* The global batch's scores [pos B; neg B] from every rank's slice, in rank (= event) order. */
static int gather_scores(opt_event_trainer *tr, float *scores, tf_error *err)
{
    const int R = tr->group->size;
    const int64_t B = tr->batch.global.size, b = tr->batch.size;
    int64_t *layout = malloc(2 * sizeof(int64_t) * (size_t)R);
    if (!layout)
        return tf_error_set(err, TF_ERR_SYSTEM, "score gather: out of memory");
    slice_layout(tr, layout, layout + R);
    uint64_t *outer = comm_charge(tr->group, &tr->bytes.other);
    int status = comm_allgatherv(tr->group, tr->scores, b, scores, layout, layout + R, sizeof(float), err);
    if (status == TF_OK)
        status = comm_allgatherv(tr->group, tr->scores + b, b, scores + B, layout, layout + R, sizeof(float), err);
    comm_charge(tr->group, outer);
    free(layout);
    return status;
}

/* The updater once per distinct (vertex, tau) of the batch's tape, tau its update time (the query
 * time per entry, the pre-batch mail_ts per vertex: then once per vertex): those rows into
 * tr->unique (row, mail, both times and query time of the first entry that has them), the updater
 * on them, and every entry's s' copied from its row. */
static void update_distinct(opt_event_trainer *tr)
{
    const event_model *m = &tr->base.model;
    event_tape *tape = &tr->batch.tape, *u = &tr->unique;
    const size_t dm = (size_t)m->config.memory_width, M = (size_t)m->config.mails;
    const size_t box = M * (size_t)event_model_mail_width(m);
    const uint64_t mask = (uint64_t)tr->slot_count - 1;
    memset(tr->slots, 0xff, (size_t)tr->slot_count * sizeof *tr->slots);
    int64_t count = 0;
    for (int64_t k = 0; k < tape->entries; k++) {
        const double tau = event_model_update_time(m, tape, k);
        uint64_t bits;
        memcpy(&bits, &tau, sizeof bits);
        uint64_t slot =
            (((uint64_t)(uint32_t)tape->vertex[k] * 0x9e3779b97f4a7c15ull ^ bits * 0xc2b2ae3d27d4eb4full) >> 17) & mask;
        while (tr->slots[slot] >= 0 &&
               !(u->vertex[tr->slots[slot]] == tape->vertex[k] && event_model_update_time(m, u, tr->slots[slot]) == tau))
            slot = (slot + 1) & mask;
        if (tr->slots[slot] < 0) { /* a new (vertex, time): its row joins the distinct ones */
            tr->slots[slot] = (int32_t)count;
            u->vertex[count] = tape->vertex[k];
            u->time[count] = tape->time[k];
            u->memory_time[count] = tape->memory_time[k];
            memcpy(u->mail_time + count * M, tape->mail_time + k * M, M * sizeof(double));
            memcpy(u->memory + count * dm, tape->memory + k * dm, dm * sizeof(float));
            memcpy(u->mail + count * box, tape->mail + k * box, box * sizeof(float));
            count++;
        }
        tr->unique_of[k] = tr->slots[slot];
    }
    u->entries = count;
    event_model_update(m, u);
    for (int64_t k = 0; k < tape->entries; k++)
        memcpy(tape->updated + k * dm, u->updated + (size_t)tr->unique_of[k] * dm, dm * sizeof(float));
    tr->updates_saved += tape->entries - count;
    tr->updater_rows += count;
}

/* Backward with the updater on the distinct rows: each row's d loss / d s' is the sum of its
 * entries' (in entry order), then one backward per row. */
static int backward_distinct(opt_event_trainer *tr, tf_error *err)
{
    event_model *m = &tr->base.model;
    const event_tape *tape = &tr->batch.tape;
    const size_t dm = (size_t)m->config.memory_width;
    float *dupdated = tr->dupdated, *dunique = tr->dupdated + tape->entries * dm; /* [2 capacity][d_mem] */
    memset(tr->dupdated, 0, (size_t)(tape->entries + tr->unique.entries) * dm * sizeof(float));
    if (event_model_backward_embedding(m, tape, tr->dscores, dupdated, err) != TF_OK)
        return TF_ERR_INPUT;
    for (int64_t k = 0; k < tape->entries; k++)
        for (size_t j = 0; j < dm; j++)
            dunique[(size_t)tr->unique_of[k] * dm + j] += dupdated[k * dm + j];
    if (event_model_backward_updater(m, &tr->unique, dunique, err) != TF_OK)
        return TF_ERR_INPUT;
    parameters_round_sums(&m->parameters);
    return TF_OK;
}

int opt_dispatch_forward(opt_event_trainer *tr, double *loss, float *scores, tf_error *err)
{
    dispatch_batch *b = &tr->batch;
    const event_model *m = &tr->base.model;
    if (b->size > 0) {
        tr->updater_batches++;
        tr->updater_entries += b->tape.entries;
        if (deduplicating(tr))
            update_distinct(tr);
        else if (tr->mode != DISPATCH_DEPCOMM) { /* DepComm's owners ran the updater */
            event_model_update(m, &b->tape);
            tr->updater_rows += b->tape.entries;
        }
        if (event_model_embed(m, &b->batch, &b->tape, tr->scores, err) != TF_OK)
            return TF_ERR_INPUT;
    }
    /* This rank's terms of the global batch's loss, each gradient already divided by its B. */
    event_model_loss_sums(tr->scores, b->size, b->global.size, b->global.train ? tr->dscores : NULL, tr->loss_sums);
    uint64_t *outer = comm_charge(tr->group, &tr->bytes.other);
    int status = comm_allreduce_sum_double(tr->group, tr->loss_sums, 2, err);
    comm_charge(tr->group, outer);
    if (status != TF_OK)
        return status;
    *loss = tr->loss_sums[0] / (double)b->global.size + tr->loss_sums[1] / (double)b->global.size;
    return scores ? gather_scores(tr, scores, err) : TF_OK;
}

int opt_dispatch_backward(opt_event_trainer *tr, tf_error *err)
{
    parameters_zero_grad(&tr->base.model.parameters);
    if (tr->mode == DISPATCH_DEPCOMM)
        return depcomm_backward(tr, err);
    dispatch_batch *b = &tr->batch;
    if (b->size > 0 && deduplicating(tr))
        return backward_distinct(tr, err);
    return b->size > 0 ? event_model_backward(&tr->base.model, &b->tape, tr->dscores, err) : TF_OK;
}

int opt_dispatch_reduce_gradients(opt_event_trainer *tr, tf_error *err)
{
    parameter_list *list = &tr->base.model.parameters;
    if (tr->group->size == 1) /* the backward rounded this rank's sums, which are the batch's */
        return TF_OK;
    /* The double sums of every rank, added up before the one rounding to float: the gradients
     * are then the reference's whatever the split (a float per rank would be rounded twice). */
    parameters_pack_sums(list, tr->gradients);
    uint64_t *outer = comm_charge(tr->group, &tr->bytes.gradients);
    int status = comm_allreduce_sum_double(tr->group, tr->gradients, parameters_size(list), err);
    comm_charge(tr->group, outer);
    if (status != TF_OK)
        return status;
    parameters_unpack_sums(list, tr->gradients);
    parameters_round_sums(list);
    return TF_OK;
}

void opt_dispatch_apply_update(opt_event_trainer *tr)
{
    ref_adam_step(&tr->base.optimizer, &tr->base.model.parameters);
}

/* A write row [vertex][s'][mail][time] for positive root entry k: the event's time, stored as both
 * mem_ts and mail_ts; per vertex [time][tau], tau the time s' stands for, stored as mem_ts. */
static void pack_write_row(const opt_event_trainer *tr, int64_t k, unsigned char *out)
{
    const dispatch_batch *b = &tr->batch;
    const event_model *m = &tr->base.model;
    const size_t dm = (size_t)m->config.memory_width, dmsg = (size_t)event_model_mail_width(m);
    const int32_t v = b->tape.vertex[k];
    const double time = tr->base.events->time[b->first + k % b->size];
    memcpy(out, &v, sizeof v);
    memcpy(out + sizeof v, b->tape.updated + (size_t)k * dm, dm * sizeof(float));
    event_model_entry_message(m, &b->tape, &b->batch, k, b->tape.message);
    memcpy(out + sizeof v + dm * sizeof(float), b->tape.message, dmsg * sizeof(float));
    memcpy(out + sizeof v + (dm + dmsg) * sizeof(float), &time, sizeof time);
    if (m->config.memory_update == EVENT_MEMORY_PER_VERTEX) {
        const double tau = event_model_update_time(m, &b->tape, k);
        memcpy(out + sizeof v + (dm + dmsg) * sizeof(float) + sizeof time, &tau, sizeof tau);
    }
}

/* TGN's and JODIE's write rows, in the order given, into a node memory. */
static void apply_endpoint_rows(opt_event_trainer *tr, const unsigned char *rows, int64_t count, node_memory *memory,
                             int by_local_row)
{
    const event_model *m = &tr->base.model;
    const size_t dm = (size_t)m->config.memory_width, dmsg = (size_t)event_model_mail_width(m);
    const event_memory_update rule = m->config.memory_update;
    const size_t row = dispatch_write_row_bytes(m);
    for (int64_t i = 0; i < count; i++) {
        const unsigned char *in = rows + (size_t)i * row;
        int32_t v;
        double time, tau;
        memcpy(&v, in, sizeof v);
        memcpy(&time, in + sizeof v + (dm + dmsg) * sizeof(float), sizeof time);
        tau = time;
        if (rule == EVENT_MEMORY_PER_VERTEX)
            memcpy(&tau, in + sizeof v + (dm + dmsg) * sizeof(float) + sizeof time, sizeof tau);
        node_memory_write(memory, by_local_row ? tr->placement.local_row[v] : v, (const float *)(in + sizeof v), tau,
                          (const float *)(in + sizeof v + dm * sizeof(float)), time);
    }
}

/* APAN's write rows [vertex][parts][s'][mail][mem_ts][mail_ts]: parts says which halves the owner
 * stores (WRITE_MEMORY: s' with mem_ts; WRITE_MAIL: the mail, delivered into the vertex's next ring
 * slot with mail_ts); an absent half travels as zeros. */
enum { WRITE_MEMORY = 1, WRITE_MAIL = 2 };

/* APAN: row i of this rank's write-back as (vertex, the positive root entry whose s' it stores or -1,
 * the tape's delivery it delivers or -1): the plan's rows of global winners (opt/dispatch_batch.h), or
 * (naive) every positive endpoint's memory in key order, then every delivery of the slice. */
static int64_t apan_row(const opt_event_trainer *tr, int64_t i, int64_t *memory_entry, int64_t *delivery)
{
    const dispatch_batch *b = &tr->batch;
    if (tr->mode != DISPATCH_NAIVE) {
        *memory_entry = b->write_memory[i];
        *delivery = b->write_mail[i];
        return b->write_vertex[i];
    }
    *memory_entry = i < 2 * b->size ? (i % 2) * b->size + i / 2 : -1;
    *delivery = i < 2 * b->size ? -1 : i - 2 * b->size;
    return *memory_entry >= 0 ? b->tape.vertex[*memory_entry] : b->tape.delivery_vertex[*delivery];
}

static void pack_apan_row(const opt_event_trainer *tr, int64_t i, unsigned char *out)
{
    const dispatch_batch *b = &tr->batch;
    const event_model *m = &tr->base.model;
    const size_t dm = (size_t)m->config.memory_width, dmsg = (size_t)event_model_mail_width(m);
    int64_t entry, delivery;
    const int32_t v = (int32_t)apan_row(tr, i, &entry, &delivery);
    const int32_t parts = (entry >= 0 ? WRITE_MEMORY : 0) | (delivery >= 0 ? WRITE_MAIL : 0);
    double times[2] = {0, 0};
    unsigned char *floats = out + 2 * sizeof(int32_t);
    memset(out, 0, dispatch_write_row_bytes(m));
    memcpy(out, &v, sizeof v);
    memcpy(out + sizeof v, &parts, sizeof parts);
    if (entry >= 0) {
        memcpy(floats, b->tape.updated + (size_t)entry * dm, dm * sizeof(float));
        times[0] = b->tape.time[entry];
    }
    if (delivery >= 0) {
        const int64_t sender = b->tape.delivery_entry[delivery];
        event_model_entry_message(m, &b->tape, &b->batch, sender, b->tape.message);
        memcpy(floats + dm * sizeof(float), b->tape.message, dmsg * sizeof(float));
        times[1] = b->tape.time[sender];
    }
    memcpy(floats + (dm + dmsg) * sizeof(float), times, sizeof times);
}

/* APAN: store write rows in the order given; of several mails to one vertex (the naive write-back's
 * rows from several ranks, in event order) only the last is delivered: the delivery rule's one mail
 * per vertex per batch. */
static void apply_apan_rows(opt_event_trainer *tr, const unsigned char *rows, int64_t count, node_memory *memory,
                            int by_local_row)
{
    const event_model *m = &tr->base.model;
    const size_t dm = (size_t)m->config.memory_width, dmsg = (size_t)event_model_mail_width(m);
    const size_t row = dispatch_write_row_bytes(m);
    int32_t *last = tr->table.position; /* vertex -> its last mail row (all -1 between plans) */
    for (int pass = 0; pass < 3; pass++)
        for (int64_t i = 0; i < count; i++) {
            const unsigned char *in = rows + (size_t)i * row, *floats = in + 2 * sizeof(int32_t);
            int32_t v, parts;
            double times[2];
            memcpy(&v, in, sizeof v);
            memcpy(&parts, in + sizeof v, sizeof parts);
            memcpy(times, floats + (dm + dmsg) * sizeof(float), sizeof times);
            const int32_t at = by_local_row ? tr->placement.local_row[v] : v;
            if (pass == 0 && (parts & WRITE_MAIL))
                last[v] = (int32_t)i;
            else if (pass == 1 && (parts & WRITE_MEMORY))
                node_memory_store(memory, at, (const float *)floats, times[0]);
            if (pass == 1 && (parts & WRITE_MAIL) && last[v] == i)
                node_memory_deliver(memory, at, (const float *)(floats + dm * sizeof(float)), times[1]);
            if (pass == 2)
                last[v] = -1;
        }
}

/* Store write rows, in the order given, into a node memory: at the owner's local row (partitioned
 * modes) or at the vertex id (a replica). */
static void apply_write_rows(opt_event_trainer *tr, const unsigned char *rows, int64_t count, node_memory *memory,
                             int by_local_row)
{
    if (tr->base.model.config.kind == EVENT_MODEL_APAN)
        apply_apan_rows(tr, rows, count, memory, by_local_row);
    else
        apply_endpoint_rows(tr, rows, count, memory, by_local_row);
}

/* The entries that write, in key order (event, then source before destination): the global
 * winners, or (naive) every positive endpoint. Returns how many, listed in `order` [2 b]. APAN:
 * its rows (apan_row()), `order` unused. */
static int64_t writing_entries(const opt_event_trainer *tr, int32_t *order)
{
    const dispatch_batch *b = &tr->batch;
    if (tr->base.model.config.kind == EVENT_MODEL_APAN)
        return tr->mode == DISPATCH_NAIVE ? 2 * b->size + b->tape.deliveries : b->write_count;
    int64_t count = 0;
    for (int64_t j = 0; j < b->size; j++)
        for (int64_t role = 0; role < 2; role++) {
            const int64_t k = role * b->size + j;
            if (tr->mode == DISPATCH_NAIVE || b->plan.writer[b->plan.position[k]] == k)
                order[count++] = (int32_t)k;
        }
    return count;
}

/* Row i of the write-back (`order` as writing_entries() left it): its vertex, and its bytes. */
static int32_t write_row_vertex(const opt_event_trainer *tr, const int32_t *order, int64_t i)
{
    int64_t entry, delivery;
    if (tr->base.model.config.kind == EVENT_MODEL_APAN)
        return (int32_t)apan_row(tr, i, &entry, &delivery);
    return tr->batch.tape.vertex[order[i]];
}

static void pack_row(const opt_event_trainer *tr, const int32_t *order, int64_t i, unsigned char *out)
{
    if (tr->base.model.config.kind == EVENT_MODEL_APAN)
        pack_apan_row(tr, i, out);
    else
        pack_write_row(tr, order[i], out);
}

/* DepCache: every rank's winning writes to every replica, applied in rank (= event) order. */
static int write_back_replicas(opt_event_trainer *tr, int64_t count, tf_error *err)
{
    const int R = tr->group->size;
    const event_model *m = &tr->base.model;
    const size_t row = dispatch_write_row_bytes(m);
    int64_t *counts = tr->write.receive_count, *offsets = tr->write.receive_offset; /* scratch: no exchange here */
    uint64_t *outer = comm_charge(tr->group, &tr->bytes.counts);
    int status = comm_allgather_counts(tr->group, &count, 1, counts, err);
    comm_charge(tr->group, &tr->bytes.aggregation);
    int64_t total = 0;
    for (int r = 0; status == TF_OK && r < R; r++) {
        offsets[r] = total;
        total += counts[r];
    }
    if (status == TF_OK && total > tr->capacity)
        status = tf_error_set(err, TF_ERR_SYSTEM, "write-back: %lld rows, buffers hold %lld", (long long)total,
                              (long long)tr->capacity);
    if (status == TF_OK)
        status = comm_allgatherv(tr->group, tr->send_rows, count, tr->receive_rows, counts, offsets, row, err);
    comm_charge(tr->group, outer);
    if (status == TF_OK)
        apply_write_rows(tr, tr->receive_rows, total, &tr->base.memory, 0);
    return status;
}

/* The batch is done: its counts join the trainer's. Passes `status` on. */
static int finish_batch(opt_event_trainer *tr, int status)
{
    if (status == TF_OK) {
        dispatch_counts_add(&tr->counts, &tr->batch.counts);
        if (tr->batch.global.train)
            tr->trained_entries_remote += tr->batch.counts.entries_remote;
    }
    return status;
}

int opt_dispatch_write_back(opt_event_trainer *tr, tf_error *err)
{
    const size_t row = dispatch_write_row_bytes(&tr->base.model);
    int32_t *order = tr->arrival; /* free again: the fetch is done */
    const int64_t count = writing_entries(tr, order);
    if (tr->mode == DISPATCH_DEPCACHE) {
        for (int64_t i = 0; i < count; i++)
            pack_row(tr, order, i, tr->send_rows + (size_t)i * row);
        return finish_batch(tr, write_back_replicas(tr, count, err));
    }
    /* Group by owner, keeping key order within each owner's block (a stable counting sort), so an
     * owner that receives several writes of one vertex (naive) applies them in key order too. */
    dispatch_exchange *x = &tr->write;
    memset(x->send_count, 0, (size_t)x->ranks * sizeof *x->send_count);
    for (int64_t i = 0; i < count; i++)
        x->send_count[tr->placement.owner[write_row_vertex(tr, order, i)]]++;
    int64_t *next = tr->fetch.send_offset; /* scratch: the fetch exchange is done */
    for (int64_t r = 0, offset = 0; r < x->ranks; offset += x->send_count[r], r++)
        next[r] = offset;
    for (int64_t i = 0; i < count; i++) {
        const int owner = tr->placement.owner[write_row_vertex(tr, order, i)];
        pack_row(tr, order, i, tr->send_rows + (size_t)next[owner]++ * row);
    }
    if (dispatch_exchange_counts(tr->group, x, tr->capacity, &tr->bytes.counts, err) != TF_OK ||
        dispatch_exchange_data(tr->group, x, tr->send_rows, tr->receive_rows, row, &tr->bytes.aggregation, err) !=
            TF_OK)
        return TF_ERR_SYSTEM;
    /* Owner: in rank order, and within a rank in key order, which is the global key order. */
    apply_write_rows(tr, tr->receive_rows, x->received, &tr->shard, 1);
    return finish_batch(tr, TF_OK);
}

int opt_event_trainer_run_batch(opt_event_trainer *tr, const event_batch_spec *global, double *loss, float *scores,
                                tf_error *err)
{
    int status = opt_dispatch_plan_batch(tr, global, err);
    if (status == TF_OK)
        status = opt_dispatch_exchange_requests(tr, err);
    if (status == TF_OK)
        status = opt_dispatch_fetch_rows(tr, err);
    if (status == TF_OK)
        status = opt_dispatch_forward(tr, loss, scores, err);
    if (status == TF_OK && global->train) {
        status = opt_dispatch_backward(tr, err);
        if (status == TF_OK)
            status = opt_dispatch_reduce_gradients(tr, err);
        if (status == TF_OK)
            opt_dispatch_apply_update(tr);
    }
    /* The memory is written with the s' of this batch's forward, computed before the step. */
    return status == TF_OK ? opt_dispatch_write_back(tr, err) : status;
}

/* ---- epochs: the reference's loop with this trainer's runner --------------------------------------- */

static int runner_start(void *context, const event_batch_spec *batches, int64_t count, tf_error *err)
{
    (void)batches, (void)count, (void)err;
    opt_event_trainer_reset_memory(context);
    return TF_OK;
}

/* A training batch's scores are not gathered: only the evaluated splits are tallied. */
static int runner_run(void *context, const event_batch_spec *global, double *loss, const float **scores,
                      tf_error *err)
{
    opt_event_trainer *tr = context;
    *scores = tr->global_scores;
    return opt_event_trainer_run_batch(tr, global, loss, global->train ? NULL : tr->global_scores, err);
}

int opt_event_trainer_epoch(opt_event_trainer *tr, event_epoch_report *report, progress_fn progress,
                            void *progress_context, tf_error *err)
{
    const event_batch_runner runner = {runner_start, runner_run, NULL, NULL, tr};
    return event_trainer_epoch_with(&tr->base, &runner, report, progress, progress_context, err);
}

int opt_event_trainer_evaluate(opt_event_trainer *tr, event_metrics *validation, event_metrics *test,
                               progress_fn progress, void *progress_context, tf_error *err)
{
    const event_batch_runner runner = {runner_start, runner_run, NULL, NULL, tr};
    return event_trainer_evaluate_with(&tr->base, &runner, validation, test, progress, progress_context, err);
}

/* ---- checks, checkpoints, traffic ---------------------------------------------------------------------- */

/* FNV-1a of a node memory's five arrays (53 bits: exact in a double). */
static double memory_checksum(const node_memory *m)
{
    uint64_t h = TF_DIGEST_START;
    h = tf_digest(h, m->memory, (size_t)(m->num_nodes * m->memory_width) * sizeof(float));
    h = tf_digest(h, m->mail, (size_t)(m->num_nodes * m->mails * m->mail_width) * sizeof(float));
    h = tf_digest(h, m->memory_time, (size_t)m->num_nodes * sizeof(double));
    h = tf_digest(h, m->mail_time, (size_t)(m->num_nodes * m->mails) * sizeof(double));
    h = tf_digest(h, m->mail_next, (size_t)m->num_nodes * sizeof(int32_t));
    return (double)(h >> 11);
}

/* DepCache: every replica must hold rank 0's bits. */
static int replicas_agree(const opt_event_trainer *tr, tf_error *err)
{
    double differ;
    if (comm_ranks_differing(tr->group, memory_checksum(&tr->base.memory), &differ, err) != TF_OK)
        return err->code;
    if (differ != 0)
        return tf_error_set(err, TF_ERR_INPUT,
                            "depcache: the node memory replicas of %.0f rank(s) differ from rank 0's", differ);
    return TF_OK;
}

int opt_event_trainer_gather_memory(const opt_event_trainer *tr, node_memory *full, tf_error *err)
{
    comm *c = tr->group;
    if (tr->mode == DISPATCH_DEPCACHE) {
        int status = replicas_agree(tr, err);
        const node_memory *m = &tr->base.memory;
        if (status == TF_OK && c->rank == 0) {
            memcpy(full->memory, m->memory, (size_t)(m->num_nodes * m->memory_width) * sizeof(float));
            memcpy(full->mail, m->mail, (size_t)(m->num_nodes * m->mails * m->mail_width) * sizeof(float));
            memcpy(full->memory_time, m->memory_time, (size_t)m->num_nodes * sizeof(double));
            memcpy(full->mail_time, m->mail_time, (size_t)(m->num_nodes * m->mails) * sizeof(double));
            memcpy(full->mail_next, m->mail_next, (size_t)m->num_nodes * sizeof(int32_t));
        }
        return status;
    }
    /* Each rank's rows [memory][mailbox][mem_ts][mail_ts of every slot][ring position] in local-row
     * order, gathered on rank 0. */
    const node_memory *s = &tr->shard;
    const size_t dm = (size_t)s->memory_width, box = (size_t)(s->mails * s->mail_width), M = (size_t)s->mails;
    const size_t times = (dm + box) * sizeof(float), ring = times + (1 + M) * sizeof(double);
    const size_t row = ring + sizeof(int32_t);
    const int64_t own = tr->placement.shard_rows[c->rank], n = tr->placement.num_nodes;
    unsigned char *mine = malloc((size_t)(own > 0 ? own : 1) * row);
    unsigned char *all = c->rank == 0 ? malloc((size_t)n * row) : NULL;
    int *counts = malloc(2 * sizeof(int) * (size_t)c->size);
    if (!mine || (c->rank == 0 && !all) || !counts) {
        free(mine), free(all), free(counts);
        return tf_error_set(err, TF_ERR_SYSTEM, "gathering the node memory: out of memory");
    }
    for (int64_t i = 0; i < own; i++) {
        pack_read_row(mine + (size_t)i * row, s, i, 1);
        memcpy(mine + (size_t)i * row + ring, &s->mail_next[i], sizeof(int32_t));
    }
    int *offsets = counts + c->size;
    for (int r = 0, offset = 0; r < c->size; offset += counts[r], r++) {
        counts[r] = (int)(tr->placement.shard_rows[r] * (int64_t)row);
        offsets[r] = offset;
    }
    int status = TF_OK;
    if (c->local) /* one process without MPI: its rows are all the rows */
        memcpy(all, mine, (size_t)(own * (int64_t)row));
    else if (MPI_Gatherv(mine, (int)(own * (int64_t)row), MPI_BYTE, all, counts, offsets, MPI_BYTE, 0, c->world) !=
             MPI_SUCCESS)
        status = tf_error_set(err, TF_ERR_SYSTEM, "gathering the node memory: MPI_Gatherv failed");
    if (status == TF_OK && c->rank == 0)
        for (int64_t v = 0; v < n; v++) {
            const unsigned char *in = all + (size_t)offsets[tr->placement.owner[v]] +
                                      (size_t)tr->placement.local_row[v] * row;
            memcpy(full->memory + (size_t)v * dm, in, dm * sizeof(float));
            memcpy(full->mail + (size_t)v * box, in + dm * sizeof(float), box * sizeof(float));
            memcpy(&full->memory_time[v], in + times, sizeof(double));
            memcpy(full->mail_time + (size_t)v * M, in + times + sizeof(double), M * sizeof(double));
            memcpy(&full->mail_next[v], in + ring, sizeof(int32_t));
        }
    free(mine), free(all), free(counts);
    return status;
}

int opt_event_trainer_adopt_parameters(opt_event_trainer *tr, int root, tf_error *err)
{
    parameter_list *list = &tr->base.model.parameters;
    float *values = (float *)tr->gradients; /* a free [parameter count] buffer between steps, twice as large */
    parameters_pack_values(list, values);
    if (comm_broadcast(tr->group, values, parameters_size(list) * (int64_t)sizeof(float), root, err) != TF_OK)
        return err->code;
    parameters_unpack_values(list, values);
    return TF_OK;
}

int opt_event_trainer_save(const opt_event_trainer *tr, const char *directory, tf_error *err)
{
    return tr->group->rank == 0 ? event_trainer_save(&tr->base, directory, err) : TF_OK;
}

int opt_event_trainer_load(opt_event_trainer *tr, const char *directory, tf_error *err)
{
    if (event_trainer_load(&tr->base, directory, err) != TF_OK)
        return TF_ERR_INPUT;
    return opt_state_agree(tr->group, &tr->base.model.parameters, &tr->base.optimizer, tr->base.epoch, err);
}

int opt_event_trainer_traffic(opt_event_trainer *tr, dispatch_traffic *out, int reset, tf_error *err)
{
    enum { BYTES = sizeof(dispatch_bytes) / sizeof(uint64_t), COUNTS = sizeof(dispatch_counts) / sizeof(int64_t) };
    double values[BYTES + COUNTS + 1];
    const uint64_t *bytes = (const uint64_t *)&tr->bytes;
    const int64_t *counts = (const int64_t *)&tr->counts;
    for (int i = 0; i < BYTES; i++)
        values[i] = (double)bytes[i];
    for (int i = 0; i < COUNTS; i++)
        values[BYTES + i] = (double)counts[i];
    values[BYTES + COUNTS] = (double)tr->trained_entries_remote;
    if (comm_allreduce_sum_double(tr->group, values, BYTES + COUNTS + 1, err) != TF_OK) /* exact below 2^53 */
        return err->code;
    memset(out, 0, sizeof *out);
    out->ranks = tr->group->size;
    uint64_t *out_bytes = (uint64_t *)&out->bytes;
    int64_t *out_counts = (int64_t *)&out->counts;
    for (int i = 0; i < BYTES; i++)
        out_bytes[i] = (uint64_t)values[i];
    for (int i = 0; i < COUNTS; i++)
        out_counts[i] = (int64_t)values[BYTES + i];
    out->trained_entries_remote = (int64_t)values[BYTES + COUNTS];
    if (reset) {
        memset(&tr->bytes, 0, sizeof tr->bytes);
        memset(&tr->counts, 0, sizeof tr->counts);
        tr->trained_entries_remote = 0;
    }
    return TF_OK;
}

void dispatch_traffic_predict(const dispatch_traffic *t, dispatch_mode mode, const event_model *m,
                              dispatch_bytes *predicted)
{
    const uint64_t R = (uint64_t)t->ranks, batches = (uint64_t)t->counts.batches;
    const uint64_t read = dispatch_read_row_bytes(m), write = dispatch_write_row_bytes(m);
    const uint64_t memory_width = (uint64_t)m->config.memory_width;
    const event_memory_update rule = m->config.memory_update;
    const dispatch_counts *c = &t->counts;
    memset(predicted, 0, sizeof *predicted);
    const uint64_t count_exchange = 8 * R * (R - 1); /* one int64 from every rank to every other */
    predicted->counts = batches * count_exchange * (mode == DISPATCH_DEPCACHE ? 1 : 2);
    switch (mode) {
    case DISPATCH_SVEN:
        predicted->requests = 4 * (uint64_t)c->unique_remote;
        predicted->dispatch_rows = read * (uint64_t)c->unique_remote;
        predicted->aggregation = write * (uint64_t)c->written_remote;
        break;
    case DISPATCH_NAIVE:
        predicted->requests = 4 * (uint64_t)c->entries_remote;
        predicted->dispatch_rows = read * (uint64_t)c->entries_remote;
        predicted->aggregation = write * (uint64_t)c->writes_remote;
        break;
    case DISPATCH_DEPCACHE:
        predicted->aggregation = (R - 1) * write * (uint64_t)c->written;
        break;
    case DISPATCH_DEPCOMM:
        predicted->requests = 12 * (uint64_t)c->entries_remote;
        predicted->updates = (4 * memory_width + 8 * row_times(rule)) * (uint64_t)c->entries_remote;
        predicted->update_gradients = 4 * memory_width * (uint64_t)t->trained_entries_remote;
        predicted->aggregation = write * (uint64_t)c->written_remote;
        break;
    }
}

uint64_t dispatch_traffic_lower_bound(const dispatch_traffic *t, const event_model *m)
{
    return dispatch_read_row_bytes(m) * (uint64_t)t->counts.unique_remote +
           dispatch_write_row_bytes(m) * (uint64_t)t->counts.written_remote;
}
