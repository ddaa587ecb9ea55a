/* Sven's Algorithm 2 and the placements (chapter 04) against independent oracles: a worked
 * 10-event example checked against hand-written arrays (the chapter's picture is drawn from its
 * printout), the plan's invariants on every batch of generated streams with heavy repeats (the
 * reference's O(N U) plan, the O(N) twin, brute-force scans for Phi and the global winners), the
 * exact restore of every occurrence's row, the write-back through Phi (and a broken earliest-
 * writer rule caught), the placement methods and files, and the demand a partitioner reads.
 *
 * Suite dispatch (unit): generated data only. Suite dispatch_real_data (slow): Wikipedia. */
#include <math.h>
#include <stdlib.h>

#include "datasets/dataset.h"
#include "datasets/generate.h"
#include "opt/dispatch_batch.h"
#include "opt/dispatch_placement.h"
#include "opt/dispatch.h"
#include "ref/dispatch.h"
#include "ref/data/npy.h"
#include "ref/partition_bicut.h"
#include "ref/core/rng.h"
#include "ref/train_events.h"
#include "verify/testing.h"

/* ---- the worked example ---------------------------------------------------------------------- */

/* Ten events (src -> dst at time 1..10) and a fixed negative per event: the example of
 * chapters/04-dispatch.md. Two ranks: events 0-4 and 5-9. */
enum { EXAMPLE_EVENTS = 10, EXAMPLE_NODES = 8 };
static const int32_t example_src[EXAMPLE_EVENTS] = {1, 3, 1, 5, 2, 1, 4, 2, 4, 1};
static const int32_t example_dst[EXAMPLE_EVENTS] = {2, 4, 2, 1, 6, 4, 5, 1, 2, 5};
static const int32_t example_negative[EXAMPLE_EVENTS] = {4, 7, 5, 3, 1, 6, 3, 7, 2, 4};

static void example_stream(event_stream *es)
{
    tf_error err;
    ck_assert(event_stream_alloc(es, EXAMPLE_EVENTS, 0, 0, &err) == TF_OK);
    es->num_nodes = EXAMPLE_NODES;
    for (int e = 0; e < EXAMPLE_EVENTS; e++) {
        es->src[e] = example_src[e];
        es->dst[e] = example_dst[e];
        es->time[e] = e + 1;
    }
}

/* JODIE's entries of events [first, first + size): [src; dst; neg]. */
static int64_t example_entries(int64_t first, int64_t size, int32_t *entries)
{
    for (int64_t j = 0; j < size; j++) {
        entries[j] = example_src[first + j];
        entries[size + j] = example_dst[first + j];
        entries[2 * size + j] = example_negative[first + j];
    }
    return 3 * size;
}

static void print_ints(const char *name, const int32_t *values, int64_t n)
{
    printf("    %-34s", name);
    for (int64_t i = 0; i < n; i++)
        printf(" %2d", values[i]);
    printf("\n");
}

static void print_longs(const char *name, const int64_t *values, int64_t n)
{
    printf("    %-34s", name);
    for (int64_t i = 0; i < n; i++)
        printf(" %2lld", (long long)values[i]);
    printf("\n");
}

START_TEST(worked_example)
{
    /* What Algorithm 2 must give, worked by hand (chapters/04-dispatch.md). */
    static const int32_t expected_unique[2][7] = {{1, 3, 5, 2, 4, 6, 7}, {1, 4, 2, 5, 6, 3, 7}};
    static const int32_t expected_position[2][15] = {{0, 1, 0, 2, 3, 3, 4, 3, 0, 5, 4, 6, 2, 1, 0},
                                                 {0, 1, 2, 1, 0, 1, 3, 0, 2, 3, 4, 5, 6, 2, 1}};
    static const int64_t expected_trainer_writer[2][7] = {{8, 1, 3, 4, 6, 9, -1}, {4, 3, 8, 9, -1, -1, -1}};
    static const int64_t expected_winner[2][7] = {{-1, 1, -1, -1, -1, 9, -1}, {4, 3, 8, 9, -1, -1, -1}};
    /* interval:1 on 2 ranks: even ids on rank 0, odd on rank 1 */
    static const int32_t expected_asked[2][2][4] = {{{2, 4, 6}, {1, 3, 5, 7}}, {{4, 2, 6}, {1, 5, 3, 7}}};
    static const int64_t expected_asked_count[2][2] = {{3, 4}, {3, 4}};
    event_stream es;
    example_stream(&es);
    int32_t owner[EXAMPLE_NODES];
    placement_request q = {&es, EXAMPLE_NODES, 2, 1, 1, NULL};
    tf_error err;
    ck_assert(placement_methods[1].place(&q, owner, &err) == TF_OK); /* interval, G = 1 */
    dispatch_placement placement;
    ck_assert(dispatch_placement_create(&placement, owner, EXAMPLE_NODES, 2, &err) == TF_OK);
    dispatch_table table;
    ck_assert(dispatch_table_create(&table, EXAMPLE_NODES, &err) == TF_OK);
    int64_t unique_remote = 0, entries_remote = 0, written_remote = 0;
    printf("worked example: 10 events, 2 ranks (events 0-4 | 5-9), JODIE roots [src; dst; neg], interval:1\n");
    for (int rank = 0; rank < 2; rank++) {
        const int64_t first = 5 * rank, size = 5;
        int32_t entries[15];
        const int64_t N = example_entries(first, size, entries);
        dispatch_plan plan, twin;
        ck_assert(dispatch_plan_create(&plan, N, &err) == TF_OK && dispatch_plan_create(&twin, N, &err) == TF_OK);
        ck_assert(ref_dispatch_plan(entries, N, first, size, &plan, &err) == TF_OK);
        ck_assert(opt_dispatch_plan(&table, entries, N, first, size, &twin, &err) == TF_OK);
        printf("  rank %d, events %lld-%lld:\n", rank, (long long)first, (long long)(first + size - 1));
        print_ints("V_o (entries)", entries, N);
        print_ints("V_u (unique, first appearance)", plan.vertex, plan.unique);
        print_ints("Psi (V_o[k] = V_u[Psi[k]])", plan.position, N);
        print_longs("Phi of this rank's events", plan.writer, plan.unique);
        ck_assert_int_eq(plan.unique, 7);
        ck_assert(memcmp(plan.vertex, expected_unique[rank], sizeof expected_unique[rank]) == 0);
        ck_assert(memcmp(plan.position, expected_position[rank], sizeof expected_position[rank]) == 0);
        ck_assert(memcmp(plan.writer, expected_trainer_writer[rank], sizeof expected_trainer_writer[rank]) == 0);
        ck_assert(twin.unique == plan.unique && memcmp(twin.vertex, plan.vertex, 7 * sizeof(int32_t)) == 0 &&
                  memcmp(twin.position, plan.position, 15 * sizeof(int32_t)) == 0 &&
                  memcmp(twin.writer, plan.writer, 7 * sizeof(int64_t)) == 0);
        opt_dispatch_plan_keep_winners(&table, &es, 0, EXAMPLE_EVENTS, first, size, &plan);
        print_longs("Phi, global winners only", plan.writer, plan.unique);
        ck_assert(memcmp(plan.writer, expected_winner[rank], sizeof expected_winner[rank]) == 0);
        int32_t owners[7];
        for (int i = 0; i < 7; i++)
            owners[i] = owner[plan.vertex[i]];
        print_ints("owner of V_u", owners, 7);
        dispatch_requests requests;
        ck_assert(dispatch_requests_create(&requests, 2, N, &err) == TF_OK);
        dispatch_requests_build(plan.vertex, plan.unique, &placement, &requests);
        for (int r = 0; r < 2; r++) {
            char name[64];
            snprintf(name, sizeof name, "ids asked of rank %d", r);
            print_ints(name, requests.vertex + requests.offset[r], requests.count[r]);
            ck_assert_int_eq(requests.count[r], expected_asked_count[rank][r]);
            ck_assert(memcmp(requests.vertex + requests.offset[r], expected_asked[rank][r],
                             (size_t)requests.count[r] * sizeof(int32_t)) == 0);
        }
        unique_remote += requests.count[1 - rank];
        for (int64_t k = 0; k < N; k++)
            entries_remote += owner[entries[k]] != rank;
        for (int i = 0; i < 7; i++)
            written_remote += plan.writer[i] >= 0 && owner[plan.vertex[i]] != rank;
        dispatch_requests_free(&requests);
        dispatch_plan_free(&plan);
        dispatch_plan_free(&twin);
    }
    printf("  remote rows: naive fetch %lld (one per occurrence), Sven fetch %lld, Sven write-back %lld; "
           "eta_1 = 1 - 14/30 = %.3f\n",
           (long long)entries_remote, (long long)unique_remote, (long long)written_remote, dispatch_eta(30, 14));
    ck_assert_int_eq(entries_remote, 17);
    ck_assert_int_eq(unique_remote, 7);
    ck_assert_int_eq(written_remote, 3);
    dispatch_table_free(&table);
    dispatch_placement_free(&placement);
    event_stream_free(&es);
}
END_TEST

/* ---- invariants on generated batches ----------------------------------------------------------- */

static void load(const char *spec, dataset *d)
{
    tf_error err;
    ck_assert_msg(dataset_load(spec, NULL, d, &err) == TF_OK, "%s", err.message);
    ck_assert(d->kind == DATASET_EVENTS);
}

static void make_trainer(event_trainer *tr, const event_stream *es, event_model_kind kind, int64_t batch,
                         int64_t width)
{
    event_model_config config;
    event_model_config_default(&config, kind);
    config.memory_width = config.time_width = config.embedding_width = width;
    config.edge_width = es->feature_width;
    event_train_options options;
    event_train_options_default(&options);
    options.batch_size = batch;
    tf_error err;
    ck_assert_msg(event_trainer_create(tr, es, es->features, &config, &options, &err) == TF_OK, "%s", err.message);
}

/* The largest write key of vertex v over the positive endpoints of events [first, first + size),
 * by a scan of the stream (not of a plan): 2 e + role, -1 when v is no endpoint. */
static int64_t last_key(const event_stream *es, int64_t first, int64_t size, int32_t v)
{
    int64_t best = -1;
    for (int64_t e = first; e < first + size; e++) {
        if (es->src[e] == v && 2 * e > best)
            best = 2 * e;
        if (es->dst[e] == v && 2 * e + 1 > best)
            best = 2 * e + 1;
    }
    return best;
}

/* Every invariant of one rank's planned part of a global batch. Returns the entries checked. */
static int64_t check_plan(const dispatch_batch *b, const event_stream *es)
{
    const dispatch_plan *p = &b->plan;
    const int64_t N = b->tape.entries;
    tf_error err;
    /* Psi restores every entry's vertex; V_u has no duplicates. */
    for (int64_t k = 0; k < N; k++)
        ck_assert_int_eq(b->tape.vertex[k], p->vertex[p->position[k]]);
    for (int64_t i = 0; i < p->unique; i++)
        for (int64_t j = i + 1; j < p->unique; j++)
            ck_assert_int_ne(p->vertex[i], p->vertex[j]);
    /* The reference plan, before the global filter, matches the per-trainer writers; after it, a
     * writer survives iff its key is the vertex's largest in the whole global batch. */
    dispatch_plan reference;
    ck_assert(dispatch_plan_create(&reference, N, &err) == TF_OK);
    ck_assert(ref_dispatch_plan(b->tape.vertex, N, b->first, b->size, &reference, &err) == TF_OK);
    ck_assert_int_eq(reference.unique, p->unique);
    ck_assert(memcmp(reference.vertex, p->vertex, (size_t)p->unique * sizeof(int32_t)) == 0);
    ck_assert(memcmp(reference.position, p->position, (size_t)N * sizeof(int32_t)) == 0);
    for (int64_t i = 0; i < p->unique; i++) {
        const int32_t v = p->vertex[i];
        int64_t own_best = -1, own_writer = -1; /* Phi by brute force over this rank's positive entries */
        for (int64_t k = 0; k < 2 * b->size; k++)
            if (b->tape.vertex[k] == v && dispatch_write_key(k, b->first, b->size) > own_best) {
                own_best = dispatch_write_key(k, b->first, b->size);
                own_writer = k;
            }
        ck_assert_int_eq(reference.writer[i], own_writer);
        const int64_t global = last_key(es, b->global.first, b->global.size, v);
        ck_assert_int_eq(p->writer[i], own_best >= 0 && own_best == global ? own_writer : -1);
    }
    dispatch_plan_free(&reference);
    return N;
}

/* Plans of every batch of a generated stream with heavy repeats, on 1 and 3 ranks, both models. */
static void plans_on(const char *spec, event_model_kind kind, int64_t batch, int max_batches, int ranks)
{
    dataset d;
    load(spec, &d);
    event_trainer tr;
    make_trainer(&tr, &d.events, kind, batch, 4);
    const int64_t count = event_trainer_epoch_batches(&tr, NULL);
    event_batch_spec *specs = malloc((size_t)count * sizeof *specs);
    event_trainer_epoch_batches(&tr, specs);
    tf_error err;
    dispatch_table table;
    ck_assert(dispatch_table_create(&table, d.events.num_nodes, &err) == TF_OK);
    dispatch_counts sum;
    memset(&sum, 0, sizeof sum);
    int64_t checked = 0, batches = 0, winners = 0;
    for (int64_t s = 0; s < count && batches < max_batches; s++, batches++) {
        int64_t written_in_batch = 0;
        for (int rank = 0; rank < ranks; rank++) {
            dispatch_setup setup = {&tr, NULL, DISPATCH_SVEN, ranks, rank};
            dispatch_batch b;
            ck_assert(dispatch_batch_create(&b, &setup, &err) == TF_OK);
            ck_assert_msg(dispatch_batch_build(&b, &setup, &specs[s], &table, &err) == TF_OK, "%s", err.message);
            checked += check_plan(&b, &d.events);
            written_in_batch += b.counts.written;
            dispatch_counts_add(&sum, &b.counts);
            dispatch_batch_free(&b);
        }
        /* Global winners: every endpoint vertex of the global batch is written exactly once. */
        int64_t endpoints = 0;
        for (int32_t v = 0; v < d.events.num_nodes; v++)
            endpoints += last_key(&d.events, specs[s].first, specs[s].size, v) >= 0;
        ck_assert_int_eq(written_in_batch, endpoints);
        winners += written_in_batch;
    }
    for (int64_t v = 0; v < table.num_nodes; v++) /* the scratch is left all -1 */
        ck_assert(table.position[v] == -1 && table.last_key[v] == -1);
    printf("%-5s %-40s batch %4lld on %d rank(s): %lld batches, %lld entries checked; eta_1 %.3f, eta_2 %.3f "
           "(per rank); %lld vertices written once each\n",
           event_model_kind_name(kind), spec, (long long)batch, ranks, (long long)batches, (long long)checked,
           dispatch_eta(sum.entries, sum.unique), dispatch_eta(sum.writes, sum.written_per_trainer),
           (long long)winners);
    dispatch_table_free(&table);
    free(specs);
    event_trainer_free(&tr);
    dataset_free(&d);
}

#define REPEATS "events:nodes=60,events=1000,repeat=0.9,features=2"

START_TEST(plan_invariants_generated)
{
    plans_on(REPEATS, EVENT_MODEL_TGN, 100, 1000, 1);
    plans_on(REPEATS, EVENT_MODEL_TGN, 100, 6, 3);
    plans_on(REPEATS, EVENT_MODEL_JODIE, 100, 1000, 1);
    plans_on(REPEATS, EVENT_MODEL_JODIE, 100, 1000, 4);
    plans_on(REPEATS, EVENT_MODEL_JODIE, 2, 50, 3); /* slices of 0 and 1 events */
}
END_TEST

/* The restore is an exact copy: rows of V_u expanded by Psi equal the per-occurrence gather,
 * bit for bit, on rows holding every kind of value (memory, mail, timestamps). */
START_TEST(expand_restores_every_occurrence)
{
    dataset d;
    load(REPEATS, &d);
    event_trainer tr;
    make_trainer(&tr, &d.events, EVENT_MODEL_TGN, 100, 4);
    node_memory *m = &tr.memory;
    rng r;
    rng_seed(&r, 3);
    for (int64_t i = 0; i < m->num_nodes * m->memory_width; i++)
        m->memory[i] = (float)rng_normal(&r);
    for (int64_t i = 0; i < m->num_nodes * m->mail_width; i++)
        m->mail[i] = (float)rng_normal(&r);
    for (int64_t v = 0; v < m->num_nodes; v++)
        m->memory_time[v] = rng_uniform(&r) * 1e6;
    event_batch_spec spec = {300, 100, 9, 1, EVENT_SPLIT_TRAIN};
    dispatch_setup setup = {&tr, NULL, DISPATCH_SVEN, 1, 0};
    dispatch_batch b;
    dispatch_table table;
    tf_error err;
    ck_assert(dispatch_table_create(&table, d.events.num_nodes, &err) == TF_OK);
    ck_assert(dispatch_batch_create(&b, &setup, &err) == TF_OK);
    ck_assert(dispatch_batch_build(&b, &setup, &spec, &table, &err) == TF_OK);
    /* Packed rows [memory][mail][mem_ts], as the trainer moves them. */
    const int64_t N = b.tape.entries, U = b.plan.unique, dm = m->memory_width, dmsg = m->mail_width;
    const size_t row = (size_t)(dm + dmsg) * sizeof(float) + sizeof(double);
    unsigned char *unique = malloc((size_t)U * row), *expanded = malloc((size_t)N * row);
    unsigned char *naive = malloc((size_t)N * row);
    for (int64_t i = 0; i < U; i++) {
        const int32_t v = b.plan.vertex[i];
        memcpy(unique + i * row, m->memory + v * dm, (size_t)dm * sizeof(float));
        memcpy(unique + i * row + dm * sizeof(float), m->mail + v * dmsg, (size_t)dmsg * sizeof(float));
        memcpy(unique + i * row + (dm + dmsg) * sizeof(float), &m->memory_time[v], sizeof(double));
    }
    ref_dispatch_expand(unique, b.plan.position, N, row, expanded);
    ck_assert(event_model_read_memory(&tr.model, m, &b.tape, &err) == TF_OK); /* the naive read */
    for (int64_t k = 0; k < N; k++) {
        memcpy(naive + k * row, b.tape.memory + k * dm, (size_t)dm * sizeof(float));
        memcpy(naive + k * row + dm * sizeof(float), b.tape.mail + k * dmsg, (size_t)dmsg * sizeof(float));
        memcpy(naive + k * row + (dm + dmsg) * sizeof(float), &b.tape.memory_time[k], sizeof(double));
    }
    int64_t differing = 0;
    for (size_t i = 0; i < (size_t)N * row; i++)
        differing += expanded[i] != naive[i];
    printf("restore: %lld unique rows expanded to %lld entries (%zu bytes each); %lld bytes differ from the "
           "per-occurrence read (must be 0)\n",
           (long long)U, (long long)N, row, (long long)differing);
    ck_assert_int_eq(differing, 0);
    free(unique), free(expanded), free(naive);
    dispatch_batch_free(&b);
    dispatch_table_free(&table);
    event_trainer_free(&tr);
    dataset_free(&d);
}
END_TEST

/* ---- the write-back through Phi ------------------------------------------------------------------ */

/* Values of two memories whose bits differ (memory, mail, both timestamps). */
static int64_t memory_differences(const node_memory *a, const node_memory *b)
{
    int64_t differing = differing_values(a->memory, b->memory, a->num_nodes * a->memory_width) +
                        differing_values(a->mail, b->mail, a->num_nodes * a->mail_width);
    return differing + differing_doubles(a->memory_time, b->memory_time, a->num_nodes) +
           differing_doubles(a->mail_time, b->mail_time, a->num_nodes);
}

/* The same plan with Phi replaced by the *earliest* writer of each vertex: a broken rule. */
static void earliest_writers(const event_tape *tape, int64_t first, int64_t batch_size, dispatch_plan *plan)
{
    for (int64_t i = 0; i < plan->unique; i++) {
        plan->writer[i] = -1;
        for (int64_t k = 0; k < 2 * batch_size; k++)
            if (tape->vertex[k] == plan->vertex[i] &&
                (plan->writer[i] < 0 ||
                 dispatch_write_key(k, first, batch_size) < dispatch_write_key(plan->writer[i], first, batch_size)))
                plan->writer[i] = k;
    }
}

START_TEST(broken_rule_is_caught)
{
    dataset d;
    load(REPEATS, &d);
    for (int kind = EVENT_MODEL_TGN; kind <= EVENT_MODEL_JODIE; kind++) {
        event_trainer tr;
        make_trainer(&tr, &d.events, (event_model_kind)kind, 100, 4);
        tf_error err;
        node_memory through_phi, earliest;
        ck_assert(node_memory_create(&through_phi, d.events.num_nodes, 4, tr.memory.mail_width, &err) == TF_OK);
        ck_assert(node_memory_create(&earliest, d.events.num_nodes, 4, tr.memory.mail_width, &err) == TF_OK);
        int32_t negatives[100];
        int64_t batches = 0, right = 0, wrong = 0;
        for (int64_t first = 0; first + 100 <= tr.train_end; first += 100, batches++) {
            for (int j = 0; j < 100; j++)
                negatives[j] = event_trainer_negative(&tr, 5, first + j);
            event_batch batch = {tr.events, tr.edge_features, first, 100, negatives};
            event_tape tape;
            float scores[200];
            ck_assert(event_model_forward(&tr.model, &tr.memory, &tr.history, &batch, &tape, scores, &err) == TF_OK);
            dispatch_plan plan;
            ck_assert(dispatch_plan_create(&plan, tape.entries, &err) == TF_OK);
            ck_assert(ref_dispatch_plan(tape.vertex, tape.entries, first, 100, &plan, &err) == TF_OK);
            ref_dispatch_write_memory(&tr.model, &tape, &batch, &plan, &through_phi);
            earliest_writers(&tape, first, 100, &plan);
            ref_dispatch_write_memory(&tr.model, &tape, &batch, &plan, &earliest);
            event_model_write_memory(&tr.model, &tape, &batch, &tr.memory); /* the reference: every write in order */
            right += memory_differences(&through_phi, &tr.memory);
            wrong += memory_differences(&earliest, &tr.memory);
            memcpy(earliest.memory, tr.memory.memory, (size_t)(d.events.num_nodes * 4) * sizeof(float)); /* resync */
            memcpy(earliest.mail, tr.memory.mail, (size_t)(d.events.num_nodes * tr.memory.mail_width) * sizeof(float));
            memcpy(earliest.memory_time, tr.memory.memory_time, (size_t)d.events.num_nodes * sizeof(double));
            memcpy(earliest.mail_time, tr.memory.mail_time, (size_t)d.events.num_nodes * sizeof(double));
            dispatch_plan_free(&plan);
            event_tape_free(&tape);
        }
        printf("%-5s write-back through Phi over %lld batches: %lld values differ from the reference (must be 0); "
               "with the earliest writer instead: %lld differ (must be > 0)\n",
               event_model_kind_name((event_model_kind)kind), (long long)batches, (long long)right, (long long)wrong);
        ck_assert_int_eq(right, 0);
        ck_assert_int_gt(wrong, 0);
        node_memory_free(&through_phi);
        node_memory_free(&earliest);
        event_trainer_free(&tr);
    }
    dataset_free(&d);
}
END_TEST

/* ---- placements ------------------------------------------------------------------------------------ */

static void place(const char *spec, const event_trainer *tr, int ranks, int32_t *owner)
{
    tf_error err;
    ck_assert_msg(dispatch_place(spec, tr, ranks, owner, &err) == TF_OK, "%s: %s", spec, err.message);
}

START_TEST(placements_valid)
{
    dataset d;
    load("events:nodes=300,events=600,seed=4", &d);
    event_trainer tr;
    make_trainer(&tr, &d.events, EVENT_MODEL_JODIE, 50, 4);
    const int64_t n = d.events.num_nodes;
    int32_t *owner = malloc((size_t)n * sizeof *owner), *again = malloc((size_t)n * sizeof *again);
    const int rank_counts[] = {1, 2, 3, 4, 5, 64};
    const char *const specs[] = {"range", "interval", "interval:7", "hash", "random", "reflexbicut"};
    tf_error err;
    int64_t checked = 0;
    for (size_t c = 0; c < sizeof rank_counts / sizeof *rank_counts; c++) {
        const int R = rank_counts[c];
        for (size_t m = 0; m < sizeof specs / sizeof *specs; m++) {
            place(specs[m], &tr, R, owner);
            dispatch_placement p;
            ck_assert(dispatch_placement_create(&p, owner, n, R, &err) == TF_OK);
            /* lambda_2 is a bijection of each owner's ids onto 0 .. shard_rows - 1, in id order */
            int64_t total = 0;
            for (int r = 0; r < R; r++) {
                int64_t next = 0;
                for (int64_t v = 0; v < n; v++)
                    if (owner[v] == r)
                        ck_assert_int_eq(p.local_row[v], next++);
                ck_assert_int_eq(next, p.shard_rows[r]);
                total += next;
            }
            ck_assert_int_eq(total, n);
            for (int64_t v = 0; v < n; v++) {
                if (strcmp(specs[m], "range") == 0)
                    ck_assert(owner[v] == v * R / n && (v == 0 || owner[v] >= owner[v - 1]));
                else if (strcmp(specs[m], "interval") == 0)
                    ck_assert_int_eq(owner[v], (v / 16) % R);
                else if (strcmp(specs[m], "interval:7") == 0)
                    ck_assert_int_eq(owner[v], (v / 7) % R);
            }
            if (strcmp(specs[m], "random") == 0) {
                int64_t lowest = n, highest = 0;
                for (int r = 0; r < R; r++) {
                    lowest = p.shard_rows[r] < lowest ? p.shard_rows[r] : lowest;
                    highest = p.shard_rows[r] > highest ? p.shard_rows[r] : highest;
                }
                ck_assert_int_le(highest - lowest, 1);
                place("random", &tr, R, again); /* seeded: the same seed, the same placement */
                ck_assert(memcmp(owner, again, (size_t)n * sizeof *owner) == 0);
            }
            if (strcmp(specs[m], "hash") == 0) { /* no seed: another training seed, the same placement */
                event_trainer other = tr;
                other.options.seed = 99;
                place("hash", &other, R, again);
                ck_assert(memcmp(owner, again, (size_t)n * sizeof *owner) == 0);
            }
            dispatch_placement_free(&p);
            checked++;
        }
    }
    /* A file round trip: file:PATH reads back what a partitioner wrote. */
    place("random", &tr, 3, owner);
    char path[512];
    snprintf(path, sizeof path, "%s/placement.npy", temporary_directory());
    ck_assert(placement_write_file(path, owner, n, &err) == TF_OK);
    char spec[600];
    snprintf(spec, sizeof spec, "file:%s", path);
    place(spec, &tr, 3, again);
    ck_assert(memcmp(owner, again, (size_t)n * sizeof *owner) == 0);
    printf("placements: %lld (method, ranks) pairs valid; file:%s read back equal\n", (long long)checked, path);
    /* Bad specs and bad files: one-line errors naming what is wrong. */
    EXPECT_INPUT_ERROR(dispatch_place("diagonal", &tr, 3, owner, &err), &err, "diagonal", "range", "hash");
    EXPECT_INPUT_ERROR(dispatch_place("interval:0", &tr, 3, owner, &err), &err, "interval:G");
    EXPECT_INPUT_ERROR(dispatch_place("interval:x", &tr, 3, owner, &err), &err, "interval:G");
    EXPECT_INPUT_ERROR(dispatch_place("hash:3", &tr, 3, owner, &err), &err, "hash:3");
    EXPECT_INPUT_ERROR(dispatch_place(spec, &tr, 2, owner, &err), &err, path, "rank 2", "2 rank(s)");
    int64_t short_shape = n - 1, *short_owner = calloc((size_t)n, sizeof *short_owner);
    ck_assert(npy_write(path, NPY_INT64, 1, &short_shape, short_owner, &err) == TF_OK);
    free(short_owner);
    EXPECT_INPUT_ERROR(dispatch_place(spec, &tr, 3, owner, &err), &err, path, "shape", "int64");
    float *floats = calloc((size_t)n, sizeof *floats);
    ck_assert(npy_write(path, NPY_FLOAT32, 1, &n, floats, &err) == TF_OK);
    EXPECT_INPUT_ERROR(dispatch_place(spec, &tr, 3, owner, &err), &err, path, "float32");
    EXPECT_INPUT_ERROR(dispatch_place("file:/nonexistent/placement.npy", &tr, 3, owner, &err), &err,
                       "/nonexistent/placement.npy");
    free(floats);
    free(owner);
    free(again);
    event_trainer_free(&tr);
    dataset_free(&d);
}
END_TEST

/* The demand a partitioner reads, against the plans it summarizes, and the cost of a placement
 * against a brute-force count of the rows each rank exchanges. */
START_TEST(demand_and_cost)
{
    dataset d;
    load("events:nodes=40,events=400,repeat=0.5,seed=8", &d);
    event_trainer tr;
    make_trainer(&tr, &d.events, EVENT_MODEL_TGN, 30, 4);
    const int R = 3;
    const int64_t n = d.events.num_nodes;
    tf_error err;
    bicut_demand demand;
    ck_assert(dispatch_demand_measure(&tr, R, &demand, &err) == TF_OK);
    int32_t *owner = malloc((size_t)n * sizeof *owner);
    place("hash", &tr, R, owner);
    int64_t cost[3], brute[3] = {0, 0, 0}, rows[3] = {0, 0, 0}, sums[3] = {0, 0, 0};
    bicut_costs(&demand, owner, cost, cost);
    /* Brute force: replay the plans; every remote read or winning write is one row r exchanges
     * and one row its owner serves. */
    const int64_t count = event_trainer_epoch_batches(&tr, NULL);
    event_batch_spec *listing = malloc((size_t)count * sizeof *listing);
    event_trainer_epoch_batches(&tr, listing);
    dispatch_table table;
    ck_assert(dispatch_table_create(&table, n, &err) == TF_OK);
    int64_t batches = 0;
    for (int64_t s = 0; s < count && listing[s].train; s++, batches++)
        for (int r = 0; r < R; r++) {
            dispatch_setup setup = {&tr, NULL, DISPATCH_SVEN, R, r};
            dispatch_batch b;
            ck_assert(dispatch_batch_create(&b, &setup, &err) == TF_OK);
            ck_assert(dispatch_batch_build(&b, &setup, &listing[s], &table, &err) == TF_OK);
            for (int64_t i = 0; i < b.plan.unique; i++) {
                const int32_t v = b.plan.vertex[i];
                const int64_t moved = 1 + (b.plan.writer[i] >= 0);
                rows[r] += moved;
                if (owner[v] != r) {
                    brute[r] += moved;
                    brute[owner[v]] += moved;
                }
            }
            dispatch_batch_free(&b);
        }
    for (int r = 0; r < R; r++)
        for (int64_t v = 0; v < n; v++)
            sums[r] += demand.weight[r * n + v];
    printf("demand over %lld batches on %d ranks: reads and winning writes per rank %lld %lld %lld (plans: %lld %lld "
           "%lld); cost cap(r) %lld %lld %lld (brute force: %lld %lld %lld)\n",
           (long long)demand.batches, R, (long long)sums[0], (long long)sums[1], (long long)sums[2],
           (long long)rows[0], (long long)rows[1], (long long)rows[2], (long long)cost[0], (long long)cost[1],
           (long long)cost[2], (long long)brute[0], (long long)brute[1], (long long)brute[2]);
    ck_assert_int_eq(demand.batches, batches);
    for (int r = 0; r < R; r++) {
        ck_assert_int_eq(sums[r], rows[r]);
        ck_assert_int_eq(cost[r], brute[r]);
    }
    /* Re-FlexBiCut as a placement: it minimizes exactly this cost (bicut_balance_cost(), chapter
     * 06's objective, is the largest cap(r)), and its largest capacity is below every simple
     * method's on this skewed stream. */
    const char *const specs[] = {"reflexbicut", "range", "interval", "hash", "random"};
    int64_t largest[5];
    for (int m = 0; m < 5; m++) {
        place(specs[m], &tr, R, owner);
        bicut_costs(&demand, owner, cost, cost);
        largest[m] = cost[0] > cost[1] ? cost[0] : cost[1];
        largest[m] = cost[2] > largest[m] ? cost[2] : largest[m];
        ck_assert_int_eq(largest[m], bicut_balance_cost(&demand, owner));
        printf("placement %-11s: largest cut capacity %lld rows\n", specs[m], (long long)largest[m]);
        ck_assert_int_le(largest[0], largest[m]);
    }
    free(listing);
    free(owner);
    dispatch_table_free(&table);
    bicut_demand_free(&demand);
    event_trainer_free(&tr);
    dataset_free(&d);
}
END_TEST

/* ---- real data ------------------------------------------------------------------------------------ */

/* Wikipedia, TGN at batch 600: the first 20 training batches' plans (the reference's O(N U) plan
 * costs seconds per batch at this size), and the redundancy of the whole epoch's batches. */
START_TEST(wikipedia_plans)
{
    plans_on("wikipedia", EVENT_MODEL_TGN, 600, 20, 1);
    plans_on("wikipedia", EVENT_MODEL_JODIE, 600, 20, 1);
}
END_TEST

int main(void)
{
    Suite *unit = suite_create("dispatch");
    TCase *cases = tcase_create("plans");
    tcase_set_timeout(cases, 300);
    tcase_add_test(cases, worked_example);
    tcase_add_test(cases, plan_invariants_generated);
    tcase_add_test(cases, expand_restores_every_occurrence);
    tcase_add_test(cases, broken_rule_is_caught);
    tcase_add_test(cases, placements_valid);
    tcase_add_test(cases, demand_and_cost);
    suite_add_tcase(unit, cases);
    Suite *real = suite_create("dispatch_real_data");
    TCase *real_cases = tcase_create("wikipedia");
    tcase_set_timeout(real_cases, 600);
    tcase_add_test(real_cases, wikipedia_plans);
    suite_add_tcase(real, real_cases);
    return run_suites(unit,
                      real);
}
