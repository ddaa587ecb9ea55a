/* The batch procedure of the event models (chapters/01b-event-models.md, "One batch, step by
 * step") against independent
 * oracles: the conflict rule on crafted batches (APAN's neighbour mail deliveries too), the pre-batch read, the neighbour sampler
 * against a brute-force scan of the stream, and the memory reset at every epoch. */
#include <math.h>

#include "datasets/generate.h"
#include "ref/models/event_model.h"
#include "ref/nn/recurrent.h"
#include "ref/core/rng.h"
#include "ref/train_events.h"
#include "verify/testing.h"

/* Which occurrence of vertex v in events [first, first + size) must win the write-back:
 * the largest event index, and in that event the destination over the source. Written as a
 * search over all occurrences, not as a replay of the writes, so it does not share the code
 * it checks. Returns the root row (j for a source, size + j for a destination), or -1 when v is
 * no endpoint of a batch event. */
static int64_t winning_row(const event_stream *es, int64_t first, int64_t size, int32_t v)
{
    int64_t best_event = -1, best_role = -1; /* role 0 source, 1 destination */
    for (int64_t j = 0; j < size; j++)
        for (int64_t role = 0; role < 2; role++) {
            int32_t endpoint = role == 0 ? es->src[first + j] : es->dst[first + j];
            if (endpoint == v && (j > best_event || (j == best_event && role > best_role))) {
                best_event = j;
                best_role = role;
            }
        }
    return best_event < 0 ? -1 : best_role * size + best_event;
}

/* The row and message the oracle expects for vertex v, checked bitwise against the memory. */
static void check_written(const event_model *m, const node_memory *memory, const event_stream *es,
                          const float *edge_features, int64_t first, int64_t size, const float *updated, int32_t v,
                          int64_t *checked)
{
    const int64_t dm = m->config.memory_width, de = m->config.edge_width, row = winning_row(es, first, size, v);
    ck_assert_int_ge(row, 0);
    const int64_t j = row % size, other = row < size ? size + j : j;
    const float *s = memory->memory + (int64_t)v * dm, *mail = memory->mail + (int64_t)v * memory->mail_width;
    ck_assert_msg(memcmp(s, updated + row * dm, (size_t)dm * sizeof(float)) == 0, "vertex %d: memory", v);
    ck_assert_msg(memcmp(mail, updated + row * dm, (size_t)dm * sizeof(float)) == 0, "vertex %d: mail self", v);
    ck_assert_msg(memcmp(mail + dm, updated + other * dm, (size_t)dm * sizeof(float)) == 0, "vertex %d: mail other", v);
    if (de > 0)
        ck_assert_msg(memcmp(mail + 2 * dm, edge_features + (first + j) * de, (size_t)de * sizeof(float)) == 0,
                      "vertex %d: mail edge feature", v);
    ck_assert(memory->memory_time[v] == es->time[first + j] && memory->mail_time[v] == es->time[first + j]);
    (*checked)++;
}

/* A crafted stream: event e is (src[e], dst[e]) at time e + 1 with the one edge feature 10 + e. */
static void crafted_stream(event_stream *es, int events, const int32_t *src, const int32_t *dst, int64_t num_nodes)
{
    tf_error err;
    ck_assert(event_stream_alloc(es, events, 1, 0, &err) == TF_OK);
    for (int e = 0; e < events; e++) {
        es->src[e] = src[e];
        es->dst[e] = dst[e];
        es->time[e] = e + 1;
        es->features[e] = 10.0f + (float)e;
    }
    es->num_nodes = num_nodes;
}

/* A crafted batch written through event_model_write_memory() with a hand-made tape whose rows
 * are all different, so every possible winner is distinguishable (in a real forward a self-loop's
 * source and destination rows are equal, which would hide the "dst after src" half of the rule). */
START_TEST(conflict_rule_on_a_crafted_batch)
{
    /*   event  src dst  time   what it tests
     *     0     1   2    1     vertex 1 first as a source...
     *     1     3   1    2     ...then as a destination...
     *     2     1   4    3     ...then as a source again: event 2 wins for vertex 1
     *     3     5   5    4     a self-loop: its destination write wins
     *     4     2   6    5     vertex 2: event 4 (source) beats event 0 (destination)
     * Negatives 7, 1, 8, 2, 9: vertices 7, 8, 9 occur only as negatives and must stay untouched. */
    event_stream es;
    tf_error err;
    const int32_t src[5] = {1, 3, 1, 5, 2}, dst[5] = {2, 1, 4, 5, 6};
    crafted_stream(&es, 5, src, dst, 10);
    event_model_config config;
    event_model_config_default(&config, EVENT_MODEL_JODIE);
    config.memory_width = 3;
    config.time_width = 2;
    config.edge_width = 1;
    event_model m;
    ck_assert(event_model_create(&m, &config, 1, &err) == TF_OK);
    node_memory memory;
    ck_assert(node_memory_create(&memory, es.num_nodes, 3, event_model_mail_width(&m), &err) == TF_OK);
    int32_t negatives[5] = {7, 1, 8, 2, 9};
    event_batch batch = {&es, es.features, 0, 5, negatives};
    event_tape tape;
    memset(&tape, 0, sizeof tape);
    tape.batch_size = 5;
    tape.roots = 15;
    float updated[15 * 3], message[7];
    for (int r = 0; r < 15; r++)
        for (int i = 0; i < 3; i++)
            updated[r * 3 + i] = 100.0f * (float)r + (float)i; /* row r is recognizable */
    double root_time[15]; /* a root's query time is its event's */
    for (int r = 0; r < 15; r++)
        root_time[r] = es.time[r % 5];
    tape.time = root_time;
    tape.updated = updated;
    tape.message = message;
    event_model_write_memory(&m, &tape, &batch, &memory);
    int64_t checked = 0;
    for (int32_t v = 1; v <= 6; v++)
        check_written(&m, &memory, &es, es.features, 0, 5, updated, v, &checked);
    /* Spelled out for the reader: vertex 1 holds row 2 (event 2, source), vertex 5 row 5 + 3
     * (event 3's destination), vertex 2 row 4 (event 4, source). */
    ck_assert(memory.memory[1 * 3] == 200.0f && memory.memory[5 * 3] == 800.0f && memory.memory[2 * 3] == 400.0f);
    for (int32_t v = 7; v <= 9; v++)
        ck_assert(memory.memory[v * 3] == 0.0f && memory.mail_time[v] == 0.0);
    printf("crafted batch: %lld written vertices match the oracle (largest event index, dst after src); "
           "negatives 7, 8, 9 untouched\n", (long long)checked);
    node_memory_free(&memory);
    event_model_free(&m);
    event_stream_free(&es);
}
END_TEST

/* JODIE's s' for one entry, in double from the model's parameters: tanh(W_ih x + b_ih + W_hh s + b_hh)
 * with x = [mail || cos(delta w + b)]: an oracle that shares no code with the updater. */
static void rnn_oracle(const event_model *m, const float *mail, const float *s, double delta, double *out)
{
    const int64_t dm = m->config.memory_width, dt = m->config.time_width, dmsg = event_model_mail_width(m);
    const float *w_ih = m->updater_weight_ih->value.data, *w_hh = m->updater_weight_hh->value.data;
    for (int64_t i = 0; i < dm; i++) {
        double sum = (double)m->updater_bias_ih->value.data[i] + (double)m->updater_bias_hh->value.data[i];
        for (int64_t c = 0; c < dmsg; c++)
            sum += (double)w_ih[i * (dmsg + dt) + c] * mail[c];
        for (int64_t c = 0; c < dt; c++)
            sum += (double)w_ih[i * (dmsg + dt) + dmsg + c] *
                   cos(delta * (double)m->memory_time_weight->value.data[c] + (double)m->memory_time_bias->value.data[c]);
        for (int64_t c = 0; c < dm; c++)
            sum += (double)w_hh[i * dm + c] * s[c];
        out[i] = tanh(sum);
    }
}

/* The per-vertex memory-update rule on a hand-made stream of two batches (JODIE, no neighbours):
 *   batch A: 1 -> 2 at t = 1, 3 -> 1 at t = 2           (from zero memory)
 *   batch B: 1 -> 2 at t = 5, 2 -> 4 at t = 6, negatives 1 and 3: roots [1 2 | 2 4 | 1 3] (sources,
 *            destinations, negatives; the times 5 6 | 5 6 | 5 6)
 * After A, vertex 1 holds mail_ts 2 (event 1's destination write wins), vertex 2 mail_ts 1, vertex 3
 * mail_ts 2, all mem_ts 0 (the messages A consumed were the empty ones, at time 0). In B, per
 * vertex, vertex 2's two entries (a source at t = 6, a destination at t = 5) both get s' from its
 * message at mail_ts 1, phi(1 - 0); per entry they differ (phi(6 - 1), phi(5 - 1)). Written after B:
 * vertex 1 mem_ts 2 mail_ts 5, vertex 2 mem_ts 1 mail_ts 6, vertex 4 mem_ts 0 mail_ts 6; vertex 3,
 * only a negative, keeps mem_ts 0 mail_ts 2. */
static void two_batches(event_memory_update rule, event_model *m, node_memory *memory, event_tape *tape,
                        event_stream *es)
{
    tf_error err;
    ck_assert(event_stream_alloc(es, 4, 0, 0, &err) == TF_OK);
    const int32_t src[4] = {1, 3, 1, 2}, dst[4] = {2, 1, 2, 4};
    const double time[4] = {1, 2, 5, 6};
    for (int j = 0; j < 4; j++)
        es->src[j] = src[j], es->dst[j] = dst[j], es->time[j] = time[j];
    es->num_nodes = 5;
    event_model_config config = event_model_config_with(EVENT_MODEL_JODIE, 3, 2, 3, 0);
    config.memory_update = rule;
    ck_assert(event_model_create(m, &config, 7, &err) == TF_OK);
    ck_assert(node_memory_create(memory, 5, 3, event_model_mail_width(m), &err) == TF_OK);
    int32_t negatives_a[2] = {4, 0}, negatives_b[2] = {1, 3};
    event_batch a = {es, NULL, 0, 2, negatives_a}, b = {es, NULL, 2, 2, negatives_b};
    float scores[4];
    ck_assert(event_model_forward(m, memory, NULL, &a, tape, scores, &err) == TF_OK);
    event_model_write_memory(m, tape, &a, memory);
    event_tape_free(tape);
    ck_assert(event_model_forward(m, memory, NULL, &b, tape, scores, &err) == TF_OK);
    event_model_write_memory(m, tape, &b, memory);
}

START_TEST(per_vertex_rule_by_hand)
{
    event_model m, me;
    node_memory memory, me_memory;
    event_tape tape, te;
    event_stream es, es2;
    two_batches(EVENT_MEMORY_PER_VERTEX, &m, &memory, &tape, &es);
    two_batches(EVENT_MEMORY_PER_ENTRY, &me, &me_memory, &te, &es2);
    const int64_t dm = 3;
    /* Batch B's tape: roots [1 2 | 2 4 | 1 3]; its pre-batch rows are what A wrote. */
    ck_assert(tape.vertex[0] == 1 && tape.vertex[4] == 1 && tape.vertex[1] == 2 && tape.vertex[2] == 2 &&
              tape.time[1] == 6.0 && tape.time[2] == 5.0);
    ck_assert(tape.mail_time[0] == 2.0 && tape.memory_time[0] == 0.0 && tape.mail_time[1] == 1.0);
    ck_assert_msg(memcmp(tape.updated, tape.updated + 4 * dm, dm * sizeof(float)) == 0, "vertex 1: one s'");
    ck_assert_msg(memcmp(tape.updated + dm, tape.updated + 2 * dm, dm * sizeof(float)) == 0, "vertex 2: one s'");
    ck_assert_msg(memcmp(te.updated + dm, te.updated + 2 * dm, dm * sizeof(float)) != 0,
                  "per entry, vertex 2's two entries (t = 6, 5) must differ");
    double worst = 0;
    for (int r = 0; r < 6; r++) { /* every root from its vertex's message: delta = mail_ts - mem_ts */
        double expected[3];
        rnn_oracle(&m, tape.mail + r * event_model_mail_width(&m), tape.memory + r * dm,
                   tape.mail_time[r] - tape.memory_time[r], expected);
        for (int i = 0; i < dm; i++)
            worst = fmax(worst, fabs(expected[i] - tape.updated[r * dm + i]));
    }
    ck_assert_msg(worst <= 1e-6, "s' against the oracle: %g", worst);
    /* Which rows were written, with which times. */
    const double mem_ts[5] = {0, 2, 1, 0, 0}, mail_ts[5] = {0, 5, 6, 2, 6};
    for (int v = 0; v < 5; v++)
        ck_assert_msg(memory.memory_time[v] == mem_ts[v] && memory.mail_time[v] == mail_ts[v],
                      "vertex %d: mem_ts %g mail_ts %g, expected %g %g", v, memory.memory_time[v],
                      memory.mail_time[v], mem_ts[v], mail_ts[v]);
    ck_assert(memcmp(memory.memory + 1 * dm, tape.updated + 0 * dm, dm * sizeof(float)) == 0); /* event 2, source */
    ck_assert(memcmp(memory.memory + 2 * dm, tape.updated + 1 * dm, dm * sizeof(float)) == 0); /* event 3, source */
    ck_assert(memcmp(memory.memory + 4 * dm, tape.updated + 3 * dm, dm * sizeof(float)) == 0); /* event 3, dest. */
    ck_assert(me_memory.memory_time[2] == 6.0 && me_memory.mail_time[2] == 6.0); /* per entry: both the event's */
    printf("per vertex, by hand: a vertex's entries share one s' (per entry they differ), s' within %.1e of the "
           "oracle from mail_ts - mem_ts, written mem_ts = the consumed message's time, mail_ts = the event's\n",
           worst);
    event_tape_free(&tape), event_tape_free(&te);
    node_memory_free(&memory), node_memory_free(&me_memory);
    event_model_free(&m), event_model_free(&me);
    event_stream_free(&es), event_stream_free(&es2);
}
END_TEST

/* The chapter's worked example (chapters/01b-event-models.md, "A worked example by hand"): JODIE with
 * a memory of width 1, three events on three vertices, one event a batch, weights set by hand so
 * that the updater is s' = tanh(0.5 mail_self + 0.25 mail_other + 1 phi + 0.5 s), phi = cos(0 dt) = 1:
 *   batch 1: 0 -> 1 at t = 1, negative 2     every row zero: s' = a = tanh(1)       = 0.7616
 *   batch 2: 1 -> 2 at t = 2, negative 0     vertex 1 reads s = a, mail [a a]: s' = b = tanh(1 + 1.25 a)
 *   batch 3: 0 -> 2 at t = 3, negative 1     vertex 2 reads s = a, mail [a b]: s' = c = tanh(1 + a + 0.25 b)
 * The expected values are those formulas in double (an oracle that shares no code with the updater);
 * the memory after each batch must match them, and a negative, read but never written, keeps its row. */
START_TEST(jodie_memory_by_hand)
{
    tf_error err;
    event_stream es;
    ck_assert(event_stream_alloc(&es, 3, 0, 0, &err) == TF_OK);
    const int32_t src[3] = {0, 1, 0}, dst[3] = {1, 2, 2}, negative[3] = {2, 0, 1};
    for (int j = 0; j < 3; j++)
        es.src[j] = src[j], es.dst[j] = dst[j], es.time[j] = j + 1;
    es.num_nodes = 3;
    event_model_config config = event_model_config_with(EVENT_MODEL_JODIE, 1, 1, 1, 0);
    event_model m;
    ck_assert(event_model_create(&m, &config, 1, &err) == TF_OK);
    const float w_ih[3] = {0.5f, 0.25f, 1.0f}; /* [1][d_msg + d_t]: mail self, mail other, phi */
    memcpy(m.updater_weight_ih->value.data, w_ih, sizeof w_ih);
    m.updater_weight_hh->value.data[0] = 0.5f;
    m.updater_bias_ih->value.data[0] = m.updater_bias_hh->value.data[0] = 0.0f;
    m.memory_time_weight->value.data[0] = m.memory_time_bias->value.data[0] = 0.0f;
    node_memory memory;
    ck_assert(node_memory_create(&memory, 3, 1, event_model_mail_width(&m), &err) == TF_OK);
    const double a = tanh(1.0), b = tanh(1.0 + 1.25 * a), c = tanh(1.0 + a + 0.25 * b);
    /* The memory s_v of vertices 0, 1, 2 and vertex 0's mail after each batch, by hand. */
    const double expected[3][5] = {{a, a, 0, a, a}, {a, b, a, a, a}, {b, b, c, b, c}};
    double worst = 0;
    float s_negative[3];
    for (int j = 0; j < 3; j++) {
        event_batch batch = {&es, NULL, j, 1, negative + j};
        event_tape tape;
        float scores[2];
        ck_assert(event_model_forward(&m, &memory, NULL, &batch, &tape, scores, &err) == TF_OK);
        s_negative[j] = tape.updated[2]; /* roots [src | dst | negative] */
        float before = memory.memory[negative[j]];
        event_model_write_memory(&m, &tape, &batch, &memory);
        ck_assert_msg(memory.memory[negative[j]] == before, "batch %d: negative %d written", j + 1, negative[j]);
        const float got[5] = {memory.memory[0], memory.memory[1], memory.memory[2], memory.mail[0], memory.mail[1]};
        for (int i = 0; i < 5; i++)
            worst = fmax(worst, fabs(got[i] - expected[j][i]));
        event_tape_free(&tape);
    }
    ck_assert_msg(worst <= 1e-6, "memory against the hand-worked values: %g", worst);
    ck_assert(fabs(s_negative[1] - b) <= 1e-6 && fabs(s_negative[2] - tanh(1.0 + b + 0.25 * a)) <= 1e-6);
    ck_assert(memory.memory_time[0] == 3.0 && memory.memory_time[1] == 2.0 && memory.mail_time[2] == 3.0);
    printf("jodie by hand: a = %.4f, b = %.4f, c = %.4f; after batch 3 memory [%.4f %.4f %.4f], vertex 0's mail "
           "[%.4f %.4f]; negatives read (s' %.4f %.4f %.4f), never written; worst error %.1e\n",
           a, b, c, memory.memory[0], memory.memory[1], memory.memory[2], memory.mail[0], memory.mail[1],
           s_negative[0], s_negative[1], s_negative[2], worst);
    node_memory_free(&memory);
    event_model_free(&m);
    event_stream_free(&es);
}
END_TEST

/* The mail APAN's write-back must have put in vertex v's ring slot `slot`: the message of
 * positive root entry `entry` of the batch (rows 100 r + i, as set below), mail_ts its event's. */
static void check_mail(const node_memory *memory, const event_stream *es, int64_t first, int64_t size, int32_t v,
                       int slot, int64_t entry)
{
    const int64_t dm = memory->memory_width, dmsg = memory->mail_width, j = entry % size;
    const int64_t other = entry < size ? size + j : j;
    const float *mail = memory->mail + ((int64_t)v * memory->mails + slot) * dmsg;
    for (int64_t i = 0; i < dm; i++) {
        ck_assert_msg(mail[i] == 100.0f * (float)entry + (float)i, "vertex %d slot %d: mail self", v, slot);
        ck_assert_msg(mail[dm + i] == 100.0f * (float)other + (float)i, "vertex %d slot %d: mail other", v, slot);
    }
    ck_assert_msg(mail[2 * dm] == es->features[first + j], "vertex %d slot %d: edge feature", v, slot);
    ck_assert_msg(memory->mail_time[(int64_t)v * memory->mails + slot] == es->time[first + j], "vertex %d: mail_ts", v);
}

/* APAN's neighbour deliveries and the delivery rule on a crafted batch, with the real sampler
 * and hand-made s' rows (row r is 100 r + i), checked against outcomes worked out by hand. */
START_TEST(apan_deliveries_on_a_crafted_batch)
{
    /*   event  src dst  time   sampled neighbours (k = 2 most recent strictly before t, oldest first)
     *     0     1   3    1     (history)
     *     1     2   3    2     (history)
     *     2     4   5    3     (history)
     *     3     1   2    4     batch j = 0: 1 -> {3}, 2 -> {3}
     *     4     3   4    5     batch j = 1: 3 -> {1, 2}, 4 -> {5}
     *     5     6   1    6     batch j = 2: 6 -> {}, 1 -> {3, 2}
     * Negatives 7, 7, 7: never mailed, never written. Roots: entries 0..2 the sources, 3..5 the
     * destinations. Deliveries in the rule's order (per event: src's neighbours, dst's
     * neighbours, src, dst):
     *   j=0: 3<-e0, 3<-e3, 1<-e0, 2<-e3   j=1: 1<-e1, 2<-e1, 5<-e4, 3<-e1, 4<-e4
     *   j=2: 3<-e5, 2<-e5, 6<-e2, 1<-e5
     * Last per vertex, in delivery order: 5<-e4 (a neighbour's only mail), 4<-e4, 3<-e5 (a
     * delivery of the latest event beats 3's own mail of event 4), 2<-e5 (beats its own of
     * event 3), 6<-e2, 1<-e5 (its own as a destination beats the delivery of event 4). */
    event_stream es;
    tf_error err;
    const int32_t src[6] = {1, 2, 4, 1, 3, 6}, dst[6] = {3, 3, 5, 2, 4, 1};
    crafted_stream(&es, 6, src, dst, 8);
    temporal_csr history;
    ck_assert(temporal_csr_build(&history, &es, &err) == TF_OK);
    event_model_config config = event_model_config_with(EVENT_MODEL_APAN, 2, 2, 2, 1);
    config.mails = 2;
    config.neighbours = 2;
    event_model m;
    ck_assert(event_model_create(&m, &config, 1, &err) == TF_OK);
    node_memory memory;
    ck_assert(node_memory_create_mailbox(&memory, es.num_nodes, 2, event_model_mail_width(&m), 2, &err) == TF_OK);
    /* Before the batch: vertex 3 holds one mail (its next slot is 1), vertex 2 two (its ring is
     * full and wraps: the batch's mail must overwrite slot 0, the oldest). */
    const float marker[5] = {-1, -1, -1, -1, -1};
    node_memory_deliver(&memory, 3, marker, 0.5);
    node_memory_deliver(&memory, 2, marker, 0.25);
    node_memory_deliver(&memory, 2, marker, 0.75);
    int32_t negatives[3] = {7, 7, 7};
    event_batch batch = {&es, es.features, 3, 3, negatives};
    event_tape tape;
    ck_assert_msg(event_model_collect(&m, &history, &batch, &tape, &err) == TF_OK, "%s", err.message);
    ck_assert_int_eq(tape.entries, 9); /* APAN reads and updates the roots only */
    const int32_t recipients[] = {3, 1, 2, 3, 5, 3, 2}; /* by root: 1, 3, 6 (sources), 2, 4, 1 */
    ck_assert_int_eq(tape.neighbour_offset[6], 7);
    ck_assert(memcmp(tape.recipient, recipients, sizeof recipients) == 0);
    const int32_t winners[] = {5, 4, 3, 2, 6, 1};
    const int64_t winning_entries[] = {4, 4, 5, 5, 2, 5};
    ck_assert_int_eq(tape.deliveries, 6);
    ck_assert(memcmp(tape.delivery_vertex, winners, sizeof winners) == 0);
    ck_assert(memcmp(tape.delivery_entry, winning_entries, sizeof winning_entries) == 0);
    for (int r = 0; r < 9; r++)
        for (int i = 0; i < 2; i++)
            tape.updated[r * 2 + i] = 100.0f * (float)r + (float)i;
    event_model_write_memory(&m, &tape, &batch, &memory);
    /* mails: (vertex, slot, entry) */
    check_mail(&memory, &es, 3, 3, 5, 0, 4);
    check_mail(&memory, &es, 3, 3, 4, 0, 4);
    check_mail(&memory, &es, 3, 3, 2, 0, 5); /* the wrapped ring's oldest slot */
    check_mail(&memory, &es, 3, 3, 3, 1, 5); /* after the mail it held */
    check_mail(&memory, &es, 3, 3, 6, 0, 2);
    check_mail(&memory, &es, 3, 3, 1, 0, 5);
    ck_assert(memory.mail[(2 * 2 + 1) * 5] == -1.0f && memory.mail_time[2 * 2 + 1] == 0.75); /* kept */
    ck_assert(memory.mail[(3 * 2 + 0) * 5] == -1.0f && memory.mail_time[3 * 2 + 0] == 0.5);
    const int32_t next[8] = {0, 1, 1, 0, 1, 1, 1, 0}; /* one mail per vertex reached, at most */
    ck_assert(memcmp(memory.mail_next, next, sizeof next) == 0);
    /* memories: TGN's rule over the endpoints (vertex 1: entry 5, 2: entry 3, 3: entry 1, 4: entry
     * 4, 6: entry 2); vertex 5 only got a mail, vertex 7 (a negative) nothing */
    const int64_t written[8] = {-1, 5, 3, 1, 4, -1, 2, -1};
    for (int32_t v = 0; v < 8; v++) {
        const float expected = written[v] < 0 ? 0.0f : 100.0f * (float)written[v];
        const double expected_time = written[v] < 0 ? 0.0 : es.time[3 + written[v] % 3];
        ck_assert_msg(memory.memory[v * 2] == expected && memory.memory_time[v] == expected_time, "vertex %d", v);
    }
    ck_assert(memory.mail_time[7 * 2] == 0.0 && memory.mail_time[7 * 2 + 1] == 0.0);
    printf("apan crafted batch: %lld recipients, %lld deliveries after the rule, each in its ring slot as "
           "worked out by hand; negative 7 untouched\n",
           (long long)tape.neighbour_offset[6], (long long)tape.deliveries);
    event_tape_free(&tape);
    node_memory_free(&memory);
    event_model_free(&m);
    temporal_csr_free(&history);
    event_stream_free(&es);
}
END_TEST

/* A small TGN on a generated stream whose memory has been filled by earlier batches. */
typedef struct fixture {
    event_stream es;
    temporal_csr history;
    event_model m;
    node_memory memory;
} fixture;

static void fixture_create(fixture *f, event_model_kind kind, int64_t edge_width)
{
    event_params p;
    event_params_default(&p);
    p.num_nodes = 30;
    p.num_events = 400;
    p.feature_width = edge_width;
    p.seed = 61;
    tf_error err;
    ck_assert(generate_events(&p, &f->es, &err) == TF_OK);
    ck_assert(temporal_csr_build(&f->history, &f->es, &err) == TF_OK);
    event_model_config config = event_model_config_with(kind, 5, 4, 6, edge_width);
    ck_assert(event_model_create(&f->m, &config, 62, &err) == TF_OK);
    ck_assert(node_memory_create(&f->memory, f->es.num_nodes, 5, event_model_mail_width(&f->m), &err) == TF_OK);
}

static void fixture_free(fixture *f)
{
    node_memory_free(&f->memory);
    event_model_free(&f->m);
    temporal_csr_free(&f->history);
    event_stream_free(&f->es);
}

/* Copy of the whole memory, to compare before and after. */
typedef struct memory_copy {
    float *memory, *mail;
    double *memory_time, *mail_time;
} memory_copy;

static memory_copy copy_memory(const node_memory *m)
{
    memory_copy c = {malloc((size_t)(m->num_nodes * m->memory_width) * sizeof(float)),
                     malloc((size_t)(m->num_nodes * m->mail_width) * sizeof(float)),
                     malloc((size_t)m->num_nodes * sizeof(double)), malloc((size_t)m->num_nodes * sizeof(double))};
    memcpy(c.memory, m->memory, (size_t)(m->num_nodes * m->memory_width) * sizeof(float));
    memcpy(c.mail, m->mail, (size_t)(m->num_nodes * m->mail_width) * sizeof(float));
    memcpy(c.memory_time, m->memory_time, (size_t)m->num_nodes * sizeof(double));
    memcpy(c.mail_time, m->mail_time, (size_t)m->num_nodes * sizeof(double));
    return c;
}

static void free_copy(memory_copy *c) { free(c->memory), free(c->mail), free(c->memory_time), free(c->mail_time); }

/* Several batches of a real forward: every entry read its vertex's *pre-batch* row; copies of
 * one vertex with different query times got different s'; the write-back matches the oracle for
 * every endpoint and leaves every other vertex bit for bit as it was. */
static void check_batches(event_model_kind kind, int64_t edge_width)
{
    fixture f;
    fixture_create(&f, kind, edge_width);
    const int64_t B = 50, dm = f.m.config.memory_width;
    rng r;
    rng_seed(&r, 63);
    int32_t negatives[50];
    float scores[100];
    int64_t entries = 0, duplicates_differing = 0, written = 0, untouched = 0;
    for (int64_t first = 0; first + B <= f.es.num_events; first += B) {
        for (int j = 0; j < B; j++)
            negatives[j] = (int32_t)rng_below(&r, (uint64_t)f.es.num_nodes);
        event_batch batch = {&f.es, f.es.features, first, B, negatives};
        memory_copy before = copy_memory(&f.memory);
        event_tape tape;
        tf_error err;
        ck_assert_msg(event_model_forward(&f.m, &f.memory, &f.history, &batch, &tape, scores, &err) == TF_OK, "%s",
                      err.message);
        for (int64_t k = 0; k < tape.entries; k++) {
            int32_t v = tape.vertex[k];
            ck_assert(memcmp(tape.memory + k * dm, before.memory + (int64_t)v * dm, (size_t)dm * sizeof(float)) == 0);
            ck_assert(tape.memory_time[k] == before.memory_time[v]);
            for (int64_t l = 0; l < k; l++) /* a later copy of the same vertex at another time */
                if (tape.vertex[l] == v && tape.time[l] != tape.time[k]) {
                    duplicates_differing +=
                        memcmp(tape.updated + k * dm, tape.updated + l * dm, (size_t)dm * sizeof(float)) != 0;
                    break;
                }
        }
        entries += tape.entries;
        event_model_write_memory(&f.m, &tape, &batch, &f.memory);
        for (int32_t v = 0; v < f.es.num_nodes; v++) {
            if (winning_row(&f.es, first, B, v) >= 0) {
                check_written(&f.m, &f.memory, &f.es, f.es.features, first, B, tape.updated, v, &written);
            } else {
                ck_assert(memcmp(f.memory.memory + (int64_t)v * dm, before.memory + (int64_t)v * dm,
                                 (size_t)dm * sizeof(float)) == 0);
                ck_assert(f.memory.memory_time[v] == before.memory_time[v]);
                untouched++;
            }
        }
        event_tape_free(&tape);
        free_copy(&before);
    }
    printf("%s%s: %lld entries read the pre-batch memory; %lld duplicate copies at another time gave another s'; "
           "%lld writes match the oracle, %lld rows untouched\n",
           event_model_kind_name(kind), edge_width ? " + edge features" : "", (long long)entries,
           (long long)duplicates_differing, (long long)written, (long long)untouched);
    ck_assert_int_gt(duplicates_differing, 0);
    fixture_free(&f);
}

START_TEST(pre_batch_reads_and_write_back_tgn) { check_batches(EVENT_MODEL_TGN, 0); }
END_TEST
START_TEST(pre_batch_reads_and_write_back_jodie_edge_features) { check_batches(EVENT_MODEL_JODIE, 2); }
END_TEST

/* TGN's neighbours: for every root, the k most recent events of its vertex strictly before the
 * root's time, oldest first, by a scan of the whole stream. */
START_TEST(neighbours_are_the_most_recent_strictly_before)
{
    fixture f;
    fixture_create(&f, EVENT_MODEL_TGN, 0);
    const int k = f.m.config.neighbours;
    int32_t negatives[40];
    float scores[80];
    for (int j = 0; j < 40; j++)
        negatives[j] = j % 30;
    event_batch batch = {&f.es, NULL, 300, 40, negatives};
    event_tape tape;
    tf_error err;
    ck_assert(event_model_forward(&f.m, &f.memory, &f.history, &batch, &tape, scores, &err) == TF_OK);
    int64_t compared = 0, ties_excluded = 0;
    for (int64_t r = 0; r < tape.roots; r++) {
        int32_t v = tape.vertex[r];
        double t = tape.time[r];
        int64_t expected[64], count = 0;
        for (int64_t i = 0; i < f.es.num_events; i++) {
            if (f.es.src[i] != v && f.es.dst[i] != v)
                continue;
            if (f.es.time[i] >= t) {
                ties_excluded += f.es.time[i] == t;
                continue;
            }
            if (count == k) /* keep the last k: shift out the oldest */
                memmove(expected, expected + 1, (size_t)(k - 1) * sizeof *expected), count--;
            expected[count++] = i;
        }
        int64_t first = tape.neighbour_offset[r], found = tape.neighbour_offset[r + 1] - first;
        ck_assert_int_eq(found, count);
        for (int64_t i = 0; i < count; i++) {
            int64_t e = expected[i], entry = tape.roots + first + i;
            ck_assert_int_eq(tape.neighbour_event[first + i], e);
            ck_assert_int_eq(tape.vertex[entry], f.es.src[e] == v ? f.es.dst[e] : f.es.src[e]);
            ck_assert(tape.time[entry] == f.es.time[e]);
            ck_assert(tape.neighbour_delta[first + i] == (float)(t - f.es.time[e]));
            compared++;
        }
    }
    printf("%lld sampled neighbours of %lld roots equal a scan of the stream; %lld events at exactly the root's "
           "time excluded\n", (long long)compared, (long long)tape.roots, (long long)ties_excluded);
    ck_assert_int_gt(ties_excluded, 0);
    event_tape_free(&tape);
    fixture_free(&f);
}
END_TEST

/* The memory is reset at every epoch: an epoch that starts from garbage in the memory ends
 * exactly where one that starts from a fresh trainer does. */
START_TEST(memory_reset_every_epoch)
{
    dataset d;
    load_or_fail("events:nodes=40,events=300", &d);
    tf_error err;
    event_model_config config = event_model_config_with(EVENT_MODEL_TGN, 4, 4, 4, 0);
    event_train_options options;
    event_train_options_default(&options);
    options.batch_size = 50;
    event_trainer clean, dirty;
    ck_assert(event_trainer_create(&clean, &d.events, NULL, &config, &options, &err) == TF_OK);
    ck_assert(event_trainer_create(&dirty, &d.events, NULL, &config, &options, &err) == TF_OK);
    node_memory *m = &dirty.memory;
    for (int64_t i = 0; i < m->num_nodes * m->memory_width; i++)
        m->memory[i] = 7.0f;
    for (int64_t i = 0; i < m->num_nodes * m->mail_width; i++)
        m->mail[i] = -3.0f;
    for (int64_t v = 0; v < m->num_nodes; v++)
        m->memory_time[v] = m->mail_time[v] = 1e6;
    event_epoch_report a, b;
    ck_assert(event_trainer_epoch(&clean, &a, NULL, NULL, &err) == TF_OK);
    ck_assert(event_trainer_epoch(&dirty, &b, NULL, NULL, &err) == TF_OK);
    printf("epoch from a fresh memory: loss %.9g, validation AP %.9g; from a garbage memory: %.9g, %.9g\n",
           a.train_loss, a.validation.average_precision, b.train_loss, b.validation.average_precision);
    ck_assert(memcmp(&a, &b, sizeof a) == 0);
    /* And node_memory_reset() zeroes everything. */
    node_memory_reset(m);
    for (int64_t i = 0; i < m->num_nodes * m->memory_width; i++)
        ck_assert(m->memory[i] == 0.0f);
    for (int64_t v = 0; v < m->num_nodes; v++)
        ck_assert(m->memory_time[v] == 0.0 && m->mail_time[v] == 0.0);
    event_trainer_free(&clean);
    event_trainer_free(&dirty);
    dataset_free(&d);
}
END_TEST

/* ---- the GRU's parameter sums over rows ------------------------------------------------------- */

/* Uniform floats in [-1, 1). */
static float *uniform_floats(int64_t n, rng *r)
{
    float *a = malloc((size_t)n * sizeof(float));
    ck_assert_ptr_nonnull(a);
    for (int64_t i = 0; i < n; i++)
        a[i] = (float)(2.0 * rng_uniform(r) - 1.0);
    return a;
}

/* The worst |ours - oracle| / max(1, |oracle|) of a float array against a long double one. */
static double error_against(const float *ours, const long double *oracle, int64_t n)
{
    double worst = 0;
    for (int64_t i = 0; i < n; i++)
        worst = fmax(worst, (double)(fabsl((long double)ours[i] - oracle[i]) / fmaxl(1.0L, fabsl(oracle[i]))));
    return worst;
}

/* The old loop, kept as a foil: d weight_ih of rows [first, end) summed row by row in float,
 * from the input gate gradients `gates` [rows][3H]. */
static void float_row_sums(const float *gates, const float *x, int64_t first, int64_t end, int64_t units, int64_t in,
                           float *dweight)
{
    for (int64_t row = first; row < end; row++)
        for (int64_t unit = 0; unit < units; unit++)
            for (int64_t k = 0; k < in; k++)
                dweight[unit * in + k] += gates[row * units + unit] * x[row * in + k];
}

/* TGN's memory updater sums its GRU parameter gradients over every entry of a batch (thousands
 * of rows). ref_gru_cell_backward() sums them in double (it used to sum row by row in float).
 * Measured on d weight_ih, 4096 rows, in 48, hidden 16: the error against a long double sum of
 * the same float terms, and split invariance: the two halves of the rows computed apart and
 * added in float (what two ranks do) against all rows at once. The old float loop's numbers are
 * printed beside, not asserted. */
START_TEST(gru_parameter_sums_in_double)
{
    enum { ROWS = 4096, IN = 48, H = 16, UNITS = 3 * H, SIZE = UNITS * IN };
    rng r;
    rng_seed(&r, 11);
    float *x = uniform_floats(ROWS * IN, &r), *h = uniform_floats(ROWS * H, &r);
    float *w_ih = uniform_floats(SIZE, &r), *w_hh = uniform_floats(UNITS * H, &r);
    float *b_ih = uniform_floats(UNITS, &r), *b_hh = uniform_floats(UNITS, &r), *dh_out = uniform_floats(ROWS * H, &r);
    float *h_out = malloc(ROWS * H * sizeof(float)), *cache = malloc(ROWS * GRU_CACHE_WIDTH(H) * sizeof(float));
    float *gates = malloc(2 * ROWS * UNITS * sizeof(float)), *scratch = malloc(2 * ROWS * UNITS * sizeof(float));
    float *whole = calloc(SIZE, sizeof(float)), *half[2] = {calloc(SIZE, sizeof(float)), calloc(SIZE, sizeof(float))};
    float *old_whole = calloc(SIZE, sizeof(float)), *old_half[2] = {calloc(SIZE, sizeof(float)),
                                                                    calloc(SIZE, sizeof(float))};
    long double *oracle = calloc(SIZE, sizeof(long double));
    ck_assert(h_out && cache && gates && scratch && whole && half[0] && half[1] && old_whole && old_half[0] &&
              old_half[1] && oracle);
    ref_gru_cell_forward(x, h, w_ih, w_hh, b_ih, b_hh, ROWS, IN, H, h_out, cache);
    ref_gru_cell_backward(x, h, w_ih, w_hh, cache, dh_out, ROWS, IN, H, gates, NULL, NULL, whole, NULL, NULL, NULL);
    /* gates [ROWS][3H] now holds the input part's gate gradients: the terms are gates * x. */
    for (int64_t row = 0; row < ROWS; row++)
        for (int64_t unit = 0; unit < UNITS; unit++)
            for (int64_t k = 0; k < IN; k++)
                oracle[unit * IN + k] += (long double)gates[row * UNITS + unit] * (long double)x[row * IN + k];
    const int64_t middle = ROWS / 2;
    for (int p = 0; p < 2; p++) {
        const int64_t first = p ? middle : 0, rows = p ? ROWS - middle : middle;
        ref_gru_cell_backward(x + first * IN, h + first * H, w_ih, w_hh, cache + first * GRU_CACHE_WIDTH(H),
                              dh_out + first * H, rows, IN, H, scratch, NULL, NULL, half[p], NULL, NULL, NULL);
        float_row_sums(gates, x, first, first + rows, UNITS, IN, old_half[p]);
    }
    float_row_sums(gates, x, 0, ROWS, UNITS, IN, old_whole);
    for (int64_t i = 0; i < SIZE; i++) {
        half[0][i] += half[1][i];
        old_half[0][i] += old_half[1][i];
    }
    const double against_oracle = error_against(whole, oracle, SIZE), split = relative_error(half[0], whole, SIZE);
    printf("GRU d weight_ih over %d rows: error against a long double sum %.2e (old float loop %.2e); two halves "
           "added against all rows %.2e (old %.2e)\n",
           ROWS, against_oracle, error_against(old_whole, oracle, SIZE), split,
           relative_error(old_half[0], old_whole, SIZE));
    ck_assert(against_oracle <= 1e-6);
    ck_assert(split <= 1e-6);
    float *all[] = {x, h, w_ih, w_hh, b_ih, b_hh, dh_out, h_out, cache, gates, scratch, whole, half[0], half[1],
                    old_whole, old_half[0], old_half[1]};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        free(all[i]);
    free(oracle);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("event_model");
    TCase *cases = tcase_create("batch");
    tcase_set_timeout(cases, 120);
    tcase_add_test(cases, conflict_rule_on_a_crafted_batch);
    tcase_add_test(cases, per_vertex_rule_by_hand);
    tcase_add_test(cases, jodie_memory_by_hand);
    tcase_add_test(cases, apan_deliveries_on_a_crafted_batch);
    tcase_add_test(cases, pre_batch_reads_and_write_back_tgn);
    tcase_add_test(cases, pre_batch_reads_and_write_back_jodie_edge_features);
    tcase_add_test(cases, neighbours_are_the_most_recent_strictly_before);
    tcase_add_test(cases, memory_reset_every_epoch);
    tcase_add_test(cases, gru_parameter_sums_in_double);
    suite_add_tcase(suite, cases);
    return run_suite(suite);
}
