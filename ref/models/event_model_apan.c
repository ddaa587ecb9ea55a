/* APAN's stages of the batch procedure (event_model.h has the math and the delivery rule). */
#include "ref/models/event_model_apan.h"

#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"

/* A delivery: who receives, and its place in the batch's delivery order (the rule's tiebreak). */
typedef struct delivery {
    int32_t vertex;
    int64_t position;
} delivery;

static int by_vertex_then_position(const void *a, const void *b)
{
    const delivery *x = a, *y = b;
    if (x->vertex != y->vertex)
        return x->vertex < y->vertex ? -1 : 1;
    return x->position < y->position ? -1 : x->position > y->position;
}

/* The delivery rule: list every delivery in the rule's order (per event j: src's mail to src's
 * neighbours, dst's mail to dst's neighbours, src's own, dst's own), then keep, for each vertex,
 * its last one; the winners stay in delivery order. */
static int choose_deliveries(event_tape *tape, tf_error *err)
{
    const int64_t B = tape->batch_size, *offset = tape->neighbour_offset, D = 2 * B + offset[2 * B];
    int64_t *entry_of = tf_alloc((size_t)D, sizeof *entry_of, "mail deliveries", err);
    delivery *listed = entry_of ? tf_alloc((size_t)D, sizeof *listed, "mail deliveries", err) : NULL;
    delivery *sorted = listed ? tf_alloc((size_t)D, sizeof *sorted, "mail deliveries", err) : NULL;
    uint8_t *wins = sorted ? tf_alloc((size_t)D, sizeof *wins, "mail deliveries", err) : NULL;
    int status = wins && (tape->delivery_vertex = tf_alloc((size_t)D, sizeof(int32_t), "mail deliveries", err)) &&
                         (tape->delivery_entry = tf_alloc((size_t)D, sizeof(int64_t), "mail deliveries", err))
                     ? TF_OK
                     : TF_ERR_INPUT;
    if (status == TF_OK) {
        int64_t d = 0;
        for (int64_t j = 0; j < B; j++) {
            const int64_t roots[2] = {j, B + j};
            for (int side = 0; side < 2; side++)
                for (int64_t e = offset[roots[side]]; e < offset[roots[side] + 1]; e++, d++)
                    listed[d] = (delivery){tape->recipient[e], d}, entry_of[d] = roots[side];
            for (int side = 0; side < 2; side++, d++)
                listed[d] = (delivery){tape->vertex[roots[side]], d}, entry_of[d] = roots[side];
        }
        memcpy(sorted, listed, (size_t)D * sizeof *sorted);
        qsort(sorted, (size_t)D, sizeof *sorted, by_vertex_then_position);
        for (int64_t i = 0; i < D; i++) /* the last of each vertex's run is its last delivery */
            if (i + 1 == D || sorted[i + 1].vertex != sorted[i].vertex)
                wins[sorted[i].position] = 1;
        tape->deliveries = 0;
        for (int64_t p = 0; p < D; p++)
            if (wins[p]) {
                tape->delivery_vertex[tape->deliveries] = listed[p].vertex;
                tape->delivery_entry[tape->deliveries++] = entry_of[p];
            }
    }
    free(entry_of);
    free(listed);
    free(sorted);
    free(wins);
    return status;
}

int event_model_apan_collect(const event_model *m, const temporal_csr *history, const event_batch *batch,
                             event_tape *tape, tf_error *err)
{
    const event_stream *es = batch->events;
    const int64_t B = batch->size, R = 3 * B, k = m->config.neighbours;
    tape->batch_size = B;
    tape->roots = R;
    tape->entries = R;
    double *times = tf_alloc((size_t)k, sizeof *times, "batch entries", err); /* the sampler's, unused */
    if (!times || !(tape->vertex = tf_alloc((size_t)R, sizeof *tape->vertex, "batch entries", err)) ||
        !(tape->time = tf_alloc((size_t)R, sizeof *tape->time, "batch entries", err)) ||
        !(tape->neighbour_offset = tf_alloc((size_t)R + 1, sizeof *tape->neighbour_offset, "batch entries", err)) ||
        !(tape->neighbour_event = tf_alloc((size_t)(2 * B * k), sizeof *tape->neighbour_event, "batch entries", err)) ||
        !(tape->recipient = tf_alloc((size_t)(2 * B * k), sizeof *tape->recipient, "batch entries", err))) {
        free(times);
        return TF_ERR_INPUT;
    }
    for (int64_t j = 0; j < B; j++) {
        const int64_t event = batch->first + j;
        tape->vertex[j] = es->src[event];
        tape->vertex[B + j] = es->dst[event];
        tape->vertex[2 * B + j] = batch->negatives[j];
        tape->time[j] = tape->time[B + j] = tape->time[2 * B + j] = es->time[event];
    }
    int64_t E = 0;
    for (int64_t r = 0; r < R; r++) { /* positive roots only: a negative's mail is never sent */
        tape->neighbour_offset[r] = E;
        if (r < 2 * B)
            E += temporal_csr_recent(history, tape->vertex[r], tape->time[r], (int)k, tape->recipient + E,
                                     tape->neighbour_event + E, times);
    }
    tape->neighbour_offset[R] = E;
    free(times);
    return choose_deliveries(tape, err);
}

int event_model_apan_alloc_entries(const event_model *m, event_tape *tape, int64_t entries, tf_error *err)
{
    const size_t NM = (size_t)(entries * m->config.mails);
    const size_t din = (size_t)(event_model_mail_width(m) + m->config.time_width);
    if (!(tape->mail_delta = tf_alloc(NM, sizeof(float), "batch mail rows", err)) ||
        !(tape->mail_input = tf_alloc(NM * din, sizeof(float), "mailbox inputs", err)))
        return TF_ERR_INPUT;
    return mailbox_attention_tape_alloc(&m->mailbox, entries, &tape->mailbox, err);
}

void event_model_apan_update(const event_model *m, event_tape *tape)
{
    const int64_t N = tape->entries, M = m->config.mails, dmsg = event_model_mail_width(m), dt = m->config.time_width,
                  din = dmsg + dt;
    for (int64_t k = 0; k < N; k++)
        for (int64_t i = 0; i < M; i++) {
            const int64_t slot = k * M + i;
            tape->mail_delta[slot] = (float)(tape->time[k] - tape->mail_time[slot]);
            memcpy(tape->mail_input + slot * din, tape->mail + slot * dmsg, (size_t)dmsg * sizeof(float));
        }
    m->kernels->time_encoding_forward(tape->mail_delta, N * M, m->memory_time_weight->value.data,
                                      m->memory_time_bias->value.data, dt, din, tape->mail_input + dmsg);
    tape->mailbox.rows = N; /* a tape sized once (a twin's) may hold fewer entries than it has room for */
    ref_mailbox_attention_forward(m->kernels, &m->mailbox, tape->memory, tape->mail_input, &tape->mailbox,
                                  tape->updated);
}

int event_model_apan_backward_updater(event_model *m, const event_tape *tape, const float *dupdated, tf_error *err)
{
    const int64_t N = tape->entries, M = m->config.mails, dmsg = event_model_mail_width(m), dt = m->config.time_width,
                  din = dmsg + dt;
    float *dmail_input = tf_alloc((size_t)(N * M * din), sizeof(float), "mailbox gradients", err);
    int status = dmail_input ? ref_mailbox_attention_backward(m->kernels, &m->mailbox, &tape->mailbox, dupdated,
                                                              dmail_input, err)
                             : TF_ERR_INPUT;
    if (status == TF_OK)
        m->kernels->time_encoding_backward(tape->mail_delta, N * M, m->memory_time_weight->value.data,
                                           m->memory_time_bias->value.data, dt, din, dmail_input + dmsg,
                                           m->memory_time_weight->sums, m->memory_time_bias->sums);
    free(dmail_input);
    return status;
}

void event_model_apan_write_memory(const event_model *m, const event_tape *tape, const event_batch *batch,
                                   node_memory *memory)
{
    const event_stream *es = batch->events;
    const int64_t B = tape->batch_size, dm = m->config.memory_width;
    /* Memories as TGN's: events in order, src then dst, a later write overwriting an earlier one. */
    for (int64_t j = 0; j < B; j++) {
        const int64_t event = batch->first + j;
        node_memory_store(memory, es->src[event], tape->updated + j * dm, es->time[event]);
        node_memory_store(memory, es->dst[event], tape->updated + (B + j) * dm, es->time[event]);
    }
    /* Mails: the rule already chose one per vertex reached; each goes into its next ring slot. */
    for (int64_t w = 0; w < tape->deliveries; w++) {
        const int64_t entry = tape->delivery_entry[w];
        event_model_entry_message(m, tape, batch, entry, tape->message);
        node_memory_deliver(memory, tape->delivery_vertex[w], tape->message, tape->time[entry]);
    }
}
