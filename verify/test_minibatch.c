/* ReInc's sampled mini-batches (ref/minibatch.h, opt/minibatch.h):
 *  - the delta rule on a crafted case worked out by hand: which edges the first snapshot's draw
 *    takes, and which edges of the next snapshot stay, leave, keep their membership with a new
 *    weight, join, or are refused;
 *  - the draw on a generated graph: every expanded row holds min(in-degree, fan-out) edges at
 *    snapshot 0, every later sampled edge is an edge of its snapshot, the same seed gives the same
 *    graphs;
 *  - full batch with a fan-out no row exceeds: the sampled graphs are the full ones and the
 *    mini-batch epoch is trainer_epoch() bit for bit (the loss over every present vertex);
 *  - incremental aggregation on the sampled graphs (sum, symmetric, chebyshev) chained through
 *    every snapshot equals ref_aggregate() on the same sampled graph (chapter 02's bound);
 *  - a mini-batch epoch with the inputs served by the engine and the cache (opt, 1 rank) equals
 *    the reference's recompute on the same sampled graphs (1e-5); 1 to 4 ranks:
 *    verify/test_minibatch_mpi.c. */
#include <math.h>

#include "datasets/dataset.h"
#include "opt/kernels.h"
#include "opt/minibatch.h"
#include "verify/testing.h"

#define TOLERANCE 1e-5

/* The edges (full-graph ids) of view snapshot t, as "src>dst:w" sorted, joined by spaces. */
static void edges_of(const sampled_graph *s, int64_t t, char *out, size_t size)
{
    const csr *g = &s->view.snapshots[t].graph;
    char items[32][24];
    int count = 0;
    for (int64_t v = 0; v < g->num_nodes; v++)
        for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++) {
            ck_assert(count < 32);
            snprintf(items[count++], sizeof items[0], "%d>%d:%g", s->vertex[g->col[e]], s->vertex[v], g->weight[e]);
        }
    qsort(items, (size_t)count, sizeof items[0], (int (*)(const void *, const void *))strcmp);
    out[0] = '\0';
    for (int i = 0; i < count; i++)
        snprintf(out + strlen(out), size - strlen(out), "%s%s", i ? " " : "", items[i]);
}

/* Seven vertices, two snapshots, target 0, fan-out 3,1 (k = 2). Snapshot 0: 1>0 2>0 3>1 4>1 5>4 6>2.
 * Hop 1 takes both in-edges of 0 (2 <= 3): 1 and 2 join. Hop 2 draws one of 3>1 and 4>1 (call its
 * source x) and takes 6>2: x and 6 join at hop 2, not expanded. Snapshot 1: 1>0 reweighted to 2,
 * 2>0 deleted, 5>0 inserted (5 is outside: refused), 2>1 and 0>2 inserted (both endpoints inside,
 * destinations of hop 1: they join), 1>x inserted (x is of hop k: refused), the rest unchanged. */
START_TEST(crafted_rule)
{
    tf_error err;
    snapshot_seq seq;
    ck_assert(snapshot_seq_alloc(&seq, 2, 7, 1, 1, &err) == TF_OK);
    const int32_t src0[] = {1, 2, 3, 4, 5, 6}, dst0[] = {0, 0, 1, 1, 4, 2};
    ck_assert(snapshot_seq_set_edges(&seq, 0, 6, src0, dst0, NULL, &err) == TF_OK);
    minibatch_options o = {1, 0, {0}};
    ck_assert(minibatch_fanout_parse("3,1", &o, &err) == TF_OK && o.hops == 2);
    const int32_t target = 0;
    int seen[2] = {0, 0};
    for (uint64_t seed = 1; seed <= 16; seed++) {
        sampled_graph s;
        ck_assert(sampled_graph_build(&s, &seq, &target, 1, &o, seed, 0, &err) == TF_OK);
        const int x = s.vertex[3]; /* 3 or 4: the hop-2 draw (the vertices: 0, then 1 2 x 6 ascending) */
        ck_assert(x == 3 || x == 4);
        seen[x - 3]++;
        const int32_t src1[] = {1, 3, 4, 5, 6, 5, 2, 0, 1}, dst1[] = {0, 1, 1, 4, 2, 0, 1, 2, x};
        const float w1[] = {2, 1, 1, 1, 1, 1, 1, 1, 1};
        ck_assert(snapshot_seq_set_edges(&seq, 1, 9, src1, dst1, w1, &err) == TF_OK);
        sampled_graph_free(&s);
        ck_assert(sampled_graph_build(&s, &seq, &target, 1, &o, seed, 0, &err) == TF_OK);
        char got[512];
        edges_of(&s, 0, got, sizeof got);
        ck_assert_int_eq(s.num_vertices, 5);
        ck_assert_int_eq(s.hop[0] + s.hop[1] + s.hop[2], 2); /* 0 at hop 0, 1 and 2 at hop 1 */
        ck_assert_int_eq(s.sampled_edges, 4);
        ck_assert_int_eq(s.joined_edges, 2);
        ck_assert_int_eq(s.left_edges, 1);
        ck_assert_int_eq(s.refused_edges, 2);
        char want0[128], want1[128];
        snprintf(want0, sizeof want0, "%s", x == 3 ? "1>0:1 2>0:1 3>1:1 6>2:1" : "1>0:1 2>0:1 4>1:1 6>2:1");
        snprintf(want1, sizeof want1, "%s", x == 3 ? "0>2:1 1>0:2 2>1:1 3>1:1 6>2:1" : "0>2:1 1>0:2 2>1:1 4>1:1 6>2:1");
        ck_assert_str_eq(got, want0);
        edges_of(&s, 1, got, sizeof got);
        ck_assert_str_eq(got, want1);
        if (seed == 1)
            printf("crafted rule (x = %d): snapshot 0 {%s}, snapshot 1 {%s}: %lld drawn, %lld joined, %lld left, "
                   "%lld refused\n", x, want0, got, (long long)s.sampled_edges, (long long)s.joined_edges,
                   (long long)s.left_edges, (long long)s.refused_edges);
        sampled_graph_free(&s);
        ck_assert(snapshot_seq_set_edges(&seq, 1, 0, NULL, NULL, NULL, &err) == TF_OK);
    }
    printf("crafted rule: the hop-2 draw took 3>1 %d times and 4>1 %d times in 16 seeds\n", seen[0], seen[1]);
    ck_assert(seen[0] > 0 && seen[1] > 0);
    snapshot_seq_free(&seq);
}
END_TEST

/* Times edge (u, v, w) occurs in row v of g. */
static int64_t occurrences(const csr *g, int32_t u, int64_t v, float w)
{
    int64_t n = 0;
    for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++)
        n += g->col[e] == u && g->weight[e] == w;
    return n;
}

START_TEST(draw_on_generated)
{
    tf_error err;
    dataset d;
    const snapshot_seq *seq = load_snapshots("powerlaw:nodes=120,edges=900,snapshots=6,churn=0.1,seed=4", &d);
    minibatch_options o = {10, 0, {0}};
    ck_assert(minibatch_fanout_parse("4,2", &o, &err) == TF_OK);
    int32_t targets[10];
    const int64_t count = minibatch_targets(&o, seq->num_nodes, 7, 0, 1, targets);
    ck_assert_int_eq(count, 10);
    sampled_graph s, again;
    ck_assert(sampled_graph_build(&s, seq, targets, count, &o, 7, 3, &err) == TF_OK);
    ck_assert(sampled_graph_build(&again, seq, targets, count, &o, 7, 3, &err) == TF_OK);
    ck_assert(snapshot_seq_equal(&s.view, &again.view));
    const csr *g0 = &seq->snapshots[0].graph, *v0 = &s.view.snapshots[0].graph;
    for (int64_t i = 0; i < s.num_vertices; i++) {
        const int64_t v = s.vertex[i], degree = g0->row_ptr[v + 1] - g0->row_ptr[v];
        const int64_t cap = s.hop[i] < o.hops ? o.fanout[s.hop[i]] : 0;
        ck_assert_int_eq(v0->row_ptr[i + 1] - v0->row_ptr[i], degree < cap ? degree : cap);
    }
    int64_t checked = 0;
    for (int64_t t = 0; t < seq->num_snapshots; t++) {
        const csr *full = &seq->snapshots[t].graph, *mine = &s.view.snapshots[t].graph;
        for (int64_t i = 0; i < s.num_vertices; i++)
            for (int64_t e = mine->row_ptr[i]; e < mine->row_ptr[i + 1]; e++, checked++)
                ck_assert(occurrences(mine, mine->col[e], i, mine->weight[e]) <=
                          occurrences(full, s.vertex[mine->col[e]], s.vertex[i], mine->weight[e]));
    }
    printf("draw: %lld targets, %lld vertices, %lld edges drawn, %lld joined, %lld left, %lld refused; %lld sampled "
           "edges over 6 snapshots all in their snapshots\n", (long long)count, (long long)s.num_vertices,
           (long long)s.sampled_edges, (long long)s.joined_edges, (long long)s.left_edges, (long long)s.refused_edges,
           (long long)checked);
    ck_assert(s.joined_edges > 0 && s.left_edges > 0);
    sampled_graph_free(&s);
    sampled_graph_free(&again);
    dataset_free(&d);
}
END_TEST

/* One mini-batch of every vertex, a fan-out above every in-degree: the sampled graphs are the
 * full ones, and the epoch is the whole-graph epoch bit for bit. */
START_TEST(full_batch_is_trainer_epoch)
{
    tf_error err;
    dataset d;
    const snapshot_seq *seq = load_snapshots("powerlaw:nodes=40,edges=160,snapshots=6,churn=0.1,seed=3", &d);
    minibatch_options o = {seq->num_nodes, 0, {0}};
    ck_assert(minibatch_fanout_parse("1000,1000", &o, &err) == TF_OK);
    int32_t targets[40];
    ck_assert_int_eq(minibatch_targets(&o, seq->num_nodes, 1, 0, 0, targets), 40);
    sampled_graph s;
    ck_assert(sampled_graph_build(&s, seq, targets, 40, &o, 1, 0, &err) == TF_OK);
    ck_assert(snapshot_seq_equal(&s.view, seq));
    sampled_graph_free(&s);
    train_options options = train_options_windows(4, 2, 2, 0.67);
    model_config config = {MODEL_GCONVLSTM, 0, 4, 0, 2, 0};
    trainer a, b;
    ck_assert(trainer_create(&a, seq, &config, &options, &err) == TF_OK);
    ck_assert(trainer_create(&b, seq, &config, &options, &err) == TF_OK);
    for (int64_t e = 0; e < test_repeats(2, 1); e++) {
        epoch_report ra, rb;
        ck_assert_msg(minibatch_epoch(&a, seq, &o, &ra, &err) == TF_OK, "%s", err.message);
        ck_assert(trainer_epoch(&b, seq, &rb, &err) == TF_OK);
        printf("full batch, epoch %lld: train loss %.9g and %.9g, test MSE %.9g and %.9g, %lld and %lld steps\n",
               (long long)ra.epoch, ra.train_loss, rb.train_loss, ra.test_mse, rb.test_mse, (long long)ra.steps,
               (long long)rb.steps);
        ck_assert(ra.train_loss == rb.train_loss && ra.test_mse == rb.test_mse && ra.steps == rb.steps);
    }
    for (int64_t i = 0; i < a.model.parameters.count; i++)
        ck_assert(memcmp(a.model.parameters.items[i].value.data, b.model.parameters.items[i].value.data,
                         (size_t)a.model.parameters.items[i].value.size * sizeof(float)) == 0);
    trainer_free(&a);
    trainer_free(&b);
    dataset_free(&d);
}
END_TEST

START_TEST(incremental_on_sampled_graph)
{
    tf_error err;
    dataset d;
    const snapshot_seq *seq = load_snapshots("powerlaw:nodes=150,edges=1200,snapshots=12,churn=0.05,seed=6", &d);
    minibatch_options o = {15, 0, {0}};
    ck_assert(minibatch_fanout_parse("5,3", &o, &err) == TF_OK);
    int32_t targets[15];
    const int64_t count = minibatch_targets(&o, seq->num_nodes, 2, 0, 0, targets);
    sampled_graph s;
    ck_assert(sampled_graph_build(&s, seq, targets, count, &o, 2, 0, &err) == TF_OK);
    const aggregator kinds[] = {AGGREGATOR_SUM, AGGREGATOR_SYMMETRIC, AGGREGATOR_CHEBYSHEV};
    const int64_t n = s.num_vertices, f = s.view.feature_width;
    float *reference = malloc((size_t)(n * f) * sizeof(float));
    ck_assert_ptr_nonnull(reference);
    for (int k = 0; k < 3; k++) {
        snapshot_delta *deltas;
        incremental_aggregation engine;
        incremental_options options;
        incremental_options_default(&options);
        options.threshold = INFINITY; /* every delta applied, none replaced by a recompute */
        ck_assert(snapshot_delta_chain_build(&deltas, &s.view, kinds[k], &err) == TF_OK);
        ck_assert(opt_incremental_create(&engine, kinds[k], n, f, &options, &err) == TF_OK);
        double worst = 0;
        for (int64_t t = 0; t < s.view.num_snapshots; t++) {
            opt_incremental_seek(&engine, &s.view, deltas, t);
            const snapshot *snap = &s.view.snapshots[t];
            ck_assert(ref_aggregate(&snap->graph, snap->features.data, f, kinds[k], reference, &err) == TF_OK);
            worst = fmax(worst, aggregation_error(&snap->graph, snap->features.data, f, kinds[k], engine.value,
                                                  reference));
        }
        printf("sampled graph (%lld vertices), %s: %lld deltas applied, %lld full, max error %.3g\n", (long long)n,
               aggregator_name(kinds[k]), (long long)engine.stats.incremental, (long long)engine.stats.full, worst);
        ck_assert(engine.stats.incremental == s.view.num_snapshots - 1);
        ck_assert(worst <= TOLERANCE);
        opt_incremental_free(&engine);
        snapshot_delta_chain_free(deltas, s.view.num_snapshots);
    }
    free(reference);
    sampled_graph_free(&s);
    dataset_free(&d);
}
END_TEST

static double relative(double ours, double reference) { return fabs(ours - reference) / fmax(1.0, fabs(reference)); }

START_TEST(served_epoch_equals_recompute)
{
    tf_error err;
    dataset d;
    const snapshot_seq *seq = load_snapshots("powerlaw:nodes=60,edges=400,snapshots=8,churn=0.05,seed=8", &d);
    minibatch_options o = {25, 0, {0}};
    ck_assert(minibatch_fanout_parse("4,2", &o, &err) == TF_OK);
    train_options options = train_options_windows(3, 1, 2, 0.75);
    model_config config = {MODEL_TGCN, 0, 4, 0, 1, 0};
    comm local;
    comm_init_local(&local);
    incremental_inputs_options inputs;
    incremental_inputs_options_default(&inputs);
    inputs.engine.threshold = INFINITY; /* every delta applied: the default falls back on graphs this small */
    trainer a, b;
    ck_assert(trainer_create(&a, seq, &config, &options, &err) == TF_OK);
    ck_assert(trainer_create(&b, seq, &config, &options, &err) == TF_OK);
    b.model.kernels = &opt_kernels;
    minibatch_stats stats = {0};
    double worst = 0;
    for (int64_t e = 0; e < 2; e++) {
        epoch_report ra, rb;
        ck_assert_msg(minibatch_epoch(&a, seq, &o, &ra, &err) == TF_OK, "%s", err.message);
        ck_assert_msg(opt_minibatch_epoch(&b, &local, seq, &o, &inputs, &stats, &rb, &err) == TF_OK, "%s", err.message);
        worst = fmax(worst, fmax(relative(rb.train_loss, ra.train_loss), relative(rb.test_mse, ra.test_mse)));
        ck_assert_int_eq(ra.steps, rb.steps);
    }
    for (int64_t i = 0; i < a.model.parameters.count; i++) {
        const tensor *x = &a.model.parameters.items[i].value, *y = &b.model.parameters.items[i].value;
        for (int64_t j = 0; j < x->size; j++)
            worst = fmax(worst, relative(y->data[j], x->data[j]));
    }
    printf("served mini-batch epochs (T-GCN, 2 epochs, %lld mini-batches): cache %lld hits, %lld misses; engine %lld "
           "deltas, %lld full; max relative difference to the recompute %.3g\n", (long long)stats.batches,
           (long long)stats.hits, (long long)stats.misses, (long long)stats.engine_deltas,
           (long long)stats.engine_full, worst);
    ck_assert(stats.hits > 0 && stats.engine_deltas > 0);
    ck_assert(worst <= TOLERANCE);
    trainer_free(&a);
    trainer_free(&b);
    comm_finalize(&local);
    dataset_free(&d);
}
END_TEST

/* Values of the parameters that differ in bits between two trainers of one model. */
static int64_t differing_bits(const trainer *a, const trainer *b)
{
    int64_t differ = 0;
    for (int64_t i = 0; i < a->model.parameters.count; i++) {
        const tensor *x = &a->model.parameters.items[i].value, *y = &b->model.parameters.items[i].value;
        for (int64_t j = 0; j < x->size; j++)
            differ += memcmp(&x->data[j], &y->data[j], sizeof(float)) != 0;
    }
    return differ;
}

/* A run interrupted by a checkpoint resumes where it stopped: 3 epochs straight (2 under Valgrind)
 * and 1 + save + load into a fresh trainer + the rest end on the same bits, the reference and the served twin (Adam's
 * state, the epoch and the parameters are all that carries over: an epoch's draws are keyed by the
 * seed, the epoch and the mini-batch, and a mini-batch's cache and engine die with it). The
 * checkpoint records N and the fan-outs: loading it under another fan-out is refused. */
START_TEST(resume_is_bitwise)
{
    tf_error err;
    dataset d;
    const snapshot_seq *seq = load_snapshots("powerlaw:nodes=30,edges=150,snapshots=6,churn=0.05,seed=4", &d);
    minibatch_options o = {12, 0, {0}};
    const int epochs = (int)test_repeats(3, 2);
    ck_assert(minibatch_fanout_parse("3,2", &o, &err) == TF_OK);
    train_options options = train_options_windows(3, 1, 2, 0.67);
    model_config config = {MODEL_GCONVLSTM, 0, 4, 0, 2, 0};
    comm local;
    comm_init_local(&local);
    incremental_inputs_options inputs;
    incremental_inputs_options_default(&inputs);
    char directory[320];
    snprintf(directory, sizeof directory, "%s/minibatch_resume", temporary_directory());
    for (int served = 0; served < 2; served++) {
        trainer straight, stopped, resumed;
        epoch_report report;
        ck_assert(trainer_create(&straight, seq, &config, &options, &err) == TF_OK);
        ck_assert(trainer_create(&stopped, seq, &config, &options, &err) == TF_OK);
        ck_assert(trainer_create(&resumed, seq, &config, &options, &err) == TF_OK);
        for (int e = 0; e < epochs; e++) {
            trainer *tr = e == 0 ? &stopped : &resumed;
            if (e == 1) {
                ck_assert_msg(trainer_save(&stopped, directory, &err) == TF_OK, "%s", err.message);
                minibatch_record(&resumed, &o);
                ck_assert_msg(trainer_load(&resumed, directory, &err) == TF_OK, "%s", err.message);
                ck_assert_int_eq(resumed.epoch, 1);
            }
            ck_assert_msg((served ? opt_minibatch_epoch(&straight, &local, seq, &o, &inputs, NULL, &report, &err)
                                  : minibatch_epoch(&straight, seq, &o, &report, &err)) == TF_OK, "%s", err.message);
            ck_assert_msg((served ? opt_minibatch_epoch(tr, &local, seq, &o, &inputs, NULL, &report, &err)
                                  : minibatch_epoch(tr, seq, &o, &report, &err)) == TF_OK, "%s", err.message);
        }
        const int64_t differ = differing_bits(&straight, &resumed);
        printf("resume (%s, GConvLSTM, %d epochs of %lld mini-batches): 1 + save + load + %d against %d straight: %lld "
               "parameter values differ in bits\n", served ? "served twin" : "reference", epochs,
               (long long)minibatch_count(&o, seq->num_nodes), epochs - 1, epochs, (long long)differ);
        ck_assert_int_eq(differ, 0);
        trainer_free(&straight);
        trainer_free(&stopped);
        trainer_free(&resumed);
    }
    trainer other;
    minibatch_options fewer = o;
    fewer.fanout[1] = 1;
    ck_assert(trainer_create(&other, seq, &config, &options, &err) == TF_OK);
    minibatch_record(&other, &fewer);
    EXPECT_INPUT_ERROR(trainer_load(&other, directory, &err), &err, "saved with fan-out hop 2 2;",
                       "this run has fan-out hop 2 1");
    trainer_free(&other);
    comm_finalize(&local);
    dataset_free(&d);
}
END_TEST

int main(void)
{
    const named_test tests[] = {{"crafted_rule", crafted_rule},
                                {"draw_on_generated", draw_on_generated},
                                {"full_batch_is_trainer_epoch", full_batch_is_trainer_epoch},
                                {"incremental_on_sampled_graph", incremental_on_sampled_graph},
                                {"served_epoch_equals_recompute", served_epoch_equals_recompute},
                                {"resume_is_bitwise", resume_is_bitwise}};
    return run_suite(suite_of("minibatch", tests, sizeof tests / sizeof *tests, 300));
}
