/* Whole training runs with ReInc's incremental aggregation and cache serving the inputs
 * (opt/incremental_inputs.h: T-GCN's A^ X_t, GConvGRU's Chebyshev terms T_1 .. T_{K-1} of X_t)
 * against the reference run that recomputes them in every window:
 *  - loss curve (train loss and test MSE per epoch) and final parameters fp-equal
 *    (max |a - b| / max(1, |ref|) <= 1e-5), with overlapping windows (window 8, stride 2 on a
 *    generated graph; window 10, stride 5 on twitter_tennis), with the engine forced to apply
 *    every delta (threshold infinity) and with the default threshold; GConvGRU with K = 2 (T_1
 *    by deltas) and K = 3 (T_2 by the recurrence on the cached T_1), and on a graph with negative
 *    weights, where ChebConv's lambda_max is not 2 and T_1 is rescaled (the blocks-on-ranks
 *    placement: verify/test_incremental_mpi.c);
 *  - the cache never changes a result: capacities 0 % .. 100 % with ReInc's policy and LRU give
 *    bitwise the same parameters (chapters/02-incremental.md, "What ReInc leaves unsaid"), while
 *    hit rates and engine work differ, for T-GCN and GConvGRU;
 *  - ReInc's F is exact: after each epoch nothing is left in a cache big enough for everything
 *    (every entry expired when its last predicted access came);
 *  - GC-LSTM (input term X_t W) and GConvGRU with K = 1 are refused with the reason;
 *  - the papers' models the table serves (two-layer T-GCN, WD-GCN, MPNN-LSTM, CD-GCN, GConvLSTM,
 *    GCRN-M1, DCRNN) against their reference runs on a small generated graph, and DCRNN's served
 *    diffusions term by term (the closure's rows counted, its terms bitwise a recompute of every row);
 *  - reuse across gates, counted: the integrated GraphRNNs aggregate each input once per cell,
 *    not once per gate (sparse products per snapshot, against what per-gate convolutions need),
 *    and the stacked ones have nothing to share. */
#include <math.h>

#include "datasets/dataset.h"
#include "opt/incremental_inputs.h"
#include "verify/testing.h"

#define TOLERANCE 1e-5

static double relative(double ours, double reference) { return fabs(ours - reference) / fmax(1.0, fabs(reference)); }

typedef struct run_result {
    double losses[8];         /* train loss and test MSE per epoch, interleaved */
    float *parameters;        /* all parameter values, concatenated */
    int64_t count;            /* floats in parameters */
    double hit_rate;          /* of the cache (incremental runs) */
    int64_t produced;         /* answers the engine produced */
    int64_t engine_full;      /* full recomputes by the engine */
    int64_t engine_deltas;    /* deltas applied */
    int64_t left_in_cache;    /* entries resident after the last epoch */
    int64_t rescaled;         /* snapshots whose lambda_max is not 2 (GConvGRU's T_1 rescaled) */
    diffusion_stats closure;  /* DCRNN: rows of T_2 .. T_{K-1} the closure formed, against every row */
} run_result;

/* The model of a run: T-GCN, or GConvGRU of order k (hidden 8 for both). */
static model_config config_of(model_kind kind, int k)
{
    model_config config = {kind, 0, 8, 0, k, 0};
    return config;
}

/* Trains `config` on `seq` for train_opts->epochs (at most 4); incremental when `options` is not
 * NULL. */
static run_result train(const snapshot_seq *seq, const model_config *config, const train_options *train_opts,
                        const incremental_inputs_options *options)
{
    tf_error err;
    const int64_t epochs = train_opts->epochs;
    ck_assert(epochs >= 1 && epochs <= 4);
    trainer tr;
    ck_assert_msg(trainer_create(&tr, seq, config, train_opts, &err) == TF_OK, "%s", err.message);
    incremental_inputs inputs;
    if (options) {
        ck_assert_msg(incremental_inputs_create(&inputs, seq, &tr, NULL, options, &err) == TF_OK, "%s", err.message);
        tr.model.inputs = &inputs.source;
    }
    run_result r = {0};
    for (int64_t e = 0; e < epochs; e++) {
        epoch_report report;
        ck_assert_msg(trainer_epoch(&tr, seq, &report, &err) == TF_OK, "%s", err.message);
        r.losses[2 * e] = report.train_loss;
        r.losses[2 * e + 1] = report.test_mse;
    }
    for (int64_t i = 0; i < tr.model.parameters.count; i++)
        r.count += tr.model.parameters.items[i].value.size;
    r.parameters = malloc((size_t)r.count * sizeof(float));
    ck_assert_ptr_nonnull(r.parameters);
    int64_t offset = 0;
    for (int64_t i = 0; i < tr.model.parameters.count; i++) {
        const tensor *v = &tr.model.parameters.items[i].value;
        memcpy(r.parameters + offset, v->data, (size_t)v->size * sizeof(float));
        offset += v->size;
    }
    if (options) {
        r.hit_rate = incremental_cache_hit_rate(&inputs.cache);
        r.produced = inputs.produced;
        r.engine_full = incremental_inputs_engine_stats(&inputs).full;
        r.engine_deltas = incremental_inputs_engine_stats(&inputs).incremental;
        r.left_in_cache = inputs.cache.count;
        r.closure = inputs.walks.stats;
        for (int64_t t = 0; inputs.lambda_max && t < seq->num_snapshots; t++)
            r.rescaled += inputs.lambda_max[t] != 2.0;
        incremental_inputs_free(&inputs);
    }
    trainer_free(&tr);
    return r;
}

/* Makes every fifth edge (by its ends, so the same edge in every snapshot) weigh -|w|:
 * ChebConv's lambda_max is then above 2 wherever such an edge dominates its entry of L. */
static void negate_some_weights(snapshot_seq *seq)
{
    for (int64_t t = 0; t < seq->num_snapshots; t++) {
        csr *g = &seq->snapshots[t].graph;
        for (int64_t v = 0; v < g->num_nodes; v++)
            for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++)
                if ((v * 31 + g->col[e]) % 5 == 0)
                    g->weight[e] = -fabsf(g->weight[e]);
    }
}

/* Trains `config` with and without the served inputs under `optimizer` and compares the runs. */
static void compare_trained(const char *data, const model_config *config, int64_t window, int64_t stride, int64_t epochs,
                            double threshold, int negative, optimizer_kind optimizer)
{
    /* Two epochs under Valgrind: the second is the one served from the cache. */
    epochs = test_repeats(epochs, epochs > 2 ? 2 : epochs);
    dataset d;
    load_or_fail(data, &d);
    if (negative)
        negate_some_weights(&d.snapshots);
    train_options opts = train_options_windows(window, stride, 2, 0.8);
    opts.epochs = epochs;
    opts.optimizer = optimizer;
    incremental_inputs_options inc;
    incremental_inputs_options_default(&inc);
    inc.engine.threshold = threshold;
    run_result reference = train(&d.snapshots, config, &opts, NULL), ours = train(&d.snapshots, config, &opts, &inc);
    double curve = 0, parameters = 0;
    for (int64_t i = 0; i < 2 * epochs; i++)
        curve = fmax(curve, relative(ours.losses[i], reference.losses[i]));
    for (int64_t i = 0; i < reference.count; i++)
        parameters = fmax(parameters, relative(ours.parameters[i], reference.parameters[i]));
    char closure[96] = ""; /* DCRNN's */
    if (ours.closure.rows_full)
        snprintf(closure, sizeof closure, "; closure formed %lld of %lld rows of T_2 .. T_{K-1}",
                 (long long)ours.closure.rows_recomputed, (long long)ours.closure.rows_full);
    printf("%-8s K=%d on %-9s%s threshold %g, window %lld stride %lld, %lld epochs: incremental vs full recompute: "
           "loss curve %.2e, final parameters %.2e; cache hit rate %.3f, engine: %lld full, %lld deltas, %lld entries "
           "left in the cache; lambda_max not 2 in %lld snapshots%s\n",
           model_kind_name(config->kind), config->chebyshev_k, d.name, negative ? " (some weights negative)" : "",
           threshold, (long long)window, (long long)stride, (long long)epochs, curve, parameters, ours.hit_rate,
           (long long)ours.engine_full, (long long)ours.engine_deltas, (long long)ours.left_in_cache, (long long)ours.rescaled, closure);
    if (negative) /* the rescaling of T_1 must have run, or this case checks nothing new */
        ck_assert_int_gt(ours.rescaled, 0);
    ck_assert_msg(curve <= TOLERANCE, "loss curves differ by %g", curve);
    ck_assert_msg(parameters <= TOLERANCE, "parameters differ by %g", parameters);
    ck_assert_int_eq(ours.left_in_cache, 0);
    free(reference.parameters);
    free(ours.parameters);
    dataset_free(&d);
}

/* compare_trained() with Adam, the trainer's default. */
static void compare_with_reference(const char *data, const model_config *config, int64_t window, int64_t stride,
                                   int64_t epochs, double threshold, int negative)
{
    compare_trained(data, config, window, stride, epochs, threshold, negative, OPTIMIZER_ADAM);
}

/* The generated graph of the overlapping-window runs; under memcheck (paths, not drift) a smaller
 * one with the same churn. */
static const char *generated_graph(void)
{
    return test_data("powerlaw:nodes=200,edges=1600,snapshots=32,churn=0.02,arrival=0.01,features=4,degrees=0,seed=3",
                     "powerlaw:nodes=60,edges=400,snapshots=16,churn=0.02,arrival=0.01,features=4,degrees=0,seed=3");
}

START_TEST(generated_overlapping_windows)
{
    const char *generated = generated_graph();
    const model_config tgcn = config_of(MODEL_TGCN, 1);
    compare_with_reference(generated, &tgcn, 8, 2, 2, INFINITY, 0);
    compare_with_reference(generated, &tgcn, 8, 2, 2, INCREMENTAL_DEFAULT_THRESHOLD, 0);
}
END_TEST

START_TEST(gconvgru_generated)
{
    const char *generated = generated_graph();
    const model_config k2 = config_of(MODEL_GCONVGRU, 2), k3 = config_of(MODEL_GCONVGRU, 3);
    compare_with_reference(generated, &k2, 8, 2, 4, INFINITY, 0);
    compare_with_reference(generated, &k2, 8, 2, 4, INCREMENTAL_DEFAULT_THRESHOLD, 0);
    compare_with_reference(generated, &k3, 8, 2, 4, INFINITY, 0);
    compare_with_reference(generated, &k3, 8, 2, 3, INFINITY, 1);
}
END_TEST

/* The papers' models the table gives an aggregation to serve: the first layer's A^ X_t of the
 * two-layer T-GCN (its second hop stays computed), WD-GCN and MPNN-LSTM (stacked: one GCN before the
 * LSTM), CD-GCN (every pair's X_t columns; the columns after them stay computed), and the Chebyshev terms of X_t that GConvLSTM's four gates share and GCRN-M1's first pair
 * reads (T_1 only with K = 2: the rescaling and the recurrence of the higher terms are the server's,
 * the same for every Chebyshev model, and gconvgru_generated runs them); every delta applied
 * (threshold infinity), windows of 4 every 2, two epochs of two steps. A small graph: six models
 * under Valgrind. SGD, as `twofold verify` compares parameters (chapter 01, "What verify
 * compares"): with Adam the two-layer T-GCN's parameters differed by 4.9e-05 where its loss curve
 * agreed to 1.1e-07, Adam's first step turning the rounding of a gradient element that is zero to
 * float precision into a step of up to lr. */
START_TEST(papers_models_generated)
{
    const char *small = "powerlaw:nodes=40,edges=200,snapshots=12,churn=0.05,arrival=0.02,features=4,degrees=0,seed=5";
    const model_kind gcn[] = {MODEL_TGCN2, MODEL_WDGCN, MODEL_MPNNLSTM, MODEL_CDGCN},
                     chebyshev[] = {MODEL_GCONVLSTM, MODEL_GCRNM1};
    for (size_t i = 0; i < sizeof gcn / sizeof *gcn; i++) {
        const model_config config = config_of(gcn[i], 1);
        compare_trained(small, &config, 4, 2, 2, INFINITY, 0, OPTIMIZER_SGD);
    }
    for (size_t i = 0; i < sizeof chebyshev / sizeof *chebyshev; i++) {
        const model_config config = config_of(chebyshev[i], 2);
        compare_trained(small, &config, 4, 2, 2, INFINITY, 0, OPTIMIZER_SGD);
    }
}
END_TEST

/* DCRNN served: T_1 of both walks by deltas over the walks' messages, T_2 and T_3 (K = 4) by the
 * K-hop closure of each change (opt/incremental_walks.h). At every snapshot, in order and then
 * backwards (a seek back recomputes its refresh segment): the served terms are fp-equal to the
 * reference's diffusions (forward walk: the in-edge operator; backward: the transpose of
 * D_I^-1 A^T, as dcrnn_forward() applies them), and **bitwise** the recurrence run on every row
 * from the served T_1, so the closure left no row behind that had changed; the rows it formed
 * are counted against every row. Then whole training runs against the reference, K = 3, every
 * delta applied and the default threshold. */
static double diffusion_check(const snapshot_seq *seq, incremental_walks *w, int64_t t, float *served, int *bitwise)
{
    tf_error err;
    const int64_t n = seq->num_nodes, f = seq->feature_width, size = n * f, k = w->order;
    ck_assert(incremental_walks_get(w, t, served, &err) == TF_OK);
    float *terms = malloc((size_t)(k * size) * sizeof(float)), *rows = malloc((size_t)size * sizeof(float));
    ck_assert(terms && rows);
    double worst = 0;
    for (int d = 0; d < 2; d++) {
        const float *ours = served + d * (k - 1) * size, *x = seq->snapshots[t].features.data;
        propagation reference, same; /* DCRNN's own walk; the one the server applies row by row */
        ck_assert(ref_propagation_walk(&reference, &seq->snapshots[t].graph,
                                       d == 0 ? WALK_FORWARD : WALK_BACKWARD_TRANSPOSED, &err) == TF_OK);
        ck_assert(ref_propagation_walk(&same, &w->walks[d].messages.snapshots[t].graph, WALK_FORWARD, &err) == TF_OK);
        memcpy(terms, x, (size_t)size * sizeof(float));
        for (int64_t j = 1; j < k; j++) {
            float *now = terms + j * size;
            if (d == 0)
                ref_propagate_forward(&reference, terms + (j - 1) * size, f, now);
            else {
                memset(now, 0, (size_t)size * sizeof(float));
                ref_propagate_backward(&reference, terms + (j - 1) * size, f, now);
            }
            for (int64_t i = 0; j > 1 && i < size; i++)
                now[i] = 2.0f * now[i] - terms[(j - 2) * size + i];
            for (int64_t i = 0; i < size; i++)
                worst = fmax(worst, relative(ours[(j - 1) * size + i], now[i]));
            if (j < 2)
                continue;
            ref_propagate_forward(&same, j == 2 ? ours : ours + (j - 2) * size, f, rows);
            for (int64_t i = 0; i < size; i++)
                rows[i] = 2.0f * rows[i] - (j == 2 ? x[i] : ours[(j - 3) * size + i]);
            *bitwise &= memcmp(rows, ours + (j - 1) * size, (size_t)size * sizeof(float)) == 0;
        }
        ref_propagation_free(&reference);
        ref_propagation_free(&same);
    }
    free(terms);
    free(rows);
    return worst;
}

START_TEST(dcrnn_served_diffusions)
{
    tf_error err;
    dataset d;
    load_or_fail("powerlaw:nodes=60,edges=150,snapshots=10,churn=0.03,arrival=0.02,features=3,degrees=0,seed=7", &d);
    const snapshot_seq *seq = &d.snapshots;
    incremental_options options;
    incremental_options_default(&options);
    options.threshold = INFINITY;
    incremental_walks w;
    ck_assert_msg(incremental_walks_create(&w, seq, 4, &options, &err) == TF_OK, "%s", err.message);
    float *served = malloc((size_t)(2 * 3 * seq->num_nodes * seq->feature_width) * sizeof(float));
    ck_assert_ptr_nonnull(served);
    double worst = 0;
    int bitwise = 1;
    for (int64_t t = 0; t < seq->num_snapshots; t++)
        worst = fmax(worst, diffusion_check(seq, &w, t, served, &bitwise));
    const diffusion_stats forward = w.stats;
    for (int64_t t = seq->num_snapshots - 1; t >= 0; t -= test_repeats(3, 9)) /* memcheck: one seek back */
        worst = fmax(worst, diffusion_check(seq, &w, t, served, &bitwise));
    printf("dcrnn K = 4 on %s: served T_1 .. T_3 of both walks vs the reference's diffusions %.2e; T_2, T_3 bitwise "
           "the recurrence on every row: %s; in order the closure formed %lld rows of %lld (%.2f), engine deltas "
           "%lld + %lld\n",
           d.name, worst, bitwise ? "yes" : "NO", (long long)forward.rows_recomputed, (long long)forward.rows_full,
           (double)forward.rows_recomputed / (double)forward.rows_full,
           (long long)w.walks[0].engine.stats.incremental, (long long)w.walks[1].engine.stats.incremental);
    ck_assert_msg(worst <= TOLERANCE, "served diffusions differ by %g", worst);
    ck_assert_msg(bitwise, "a row the closure left out had changed");
    ck_assert_int_gt(w.walks[0].engine.stats.incremental, 0);
    ck_assert_int_lt(forward.rows_recomputed, forward.rows_full);
    free(served);
    incremental_walks_free(&w);
    dataset_free(&d);
    /* under Valgrind the served path once: every delta applied (the default threshold's fallbacks are
     * the full recompute the first snapshot already runs) */
    const char *small = "powerlaw:nodes=30,edges=120,snapshots=8,churn=0.05,arrival=0.02,features=3,degrees=0,seed=5";
    const model_config k3 = config_of(MODEL_DCRNN, 3);
    const double thresholds[] = {INFINITY, INCREMENTAL_DEFAULT_THRESHOLD};
    for (int i = 0; i < test_repeats(2, 1); i++)
        compare_trained(small, &k3, 4, 2, 2, thresholds[i], 0, OPTIMIZER_SGD);
}
END_TEST

START_TEST(gconvgru_twitter_tennis)
{
    const model_config k2 = config_of(MODEL_GCONVGRU, 2), k3 = config_of(MODEL_GCONVGRU, 3);
    compare_with_reference("twitter_tennis", &k2, 10, 5, 3, INCREMENTAL_DEFAULT_THRESHOLD, 0);
    compare_with_reference("twitter_tennis", &k3, 10, 5, 3, INFINITY, 0);
}
END_TEST

START_TEST(models_without_input_aggregation)
{
    tf_error err;
    dataset d;
    load_or_fail("powerlaw:nodes=50,edges=200,snapshots=6,seed=2", &d);
    train_options opts;
    train_options_default(&opts);
    incremental_inputs_options inc;
    incremental_inputs_options_default(&inc);
    static const struct {
        model_kind kind;
        int k;
        const char *expected;
    } cases[] = {{MODEL_GCLSTM, 2, "GC-LSTM's input term is X_t W"},
                 {MODEL_GCONVGRU, 1, "nothing to aggregate; use K >= 2"},
                 {MODEL_EVOLVEGCN, 1, "evolves inside the window"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const model_config config = config_of(cases[i].kind, cases[i].k);
        trainer tr;
        ck_assert(trainer_create(&tr, &d.snapshots, &config, &opts, &err) == TF_OK);
        incremental_inputs inputs;
        EXPECT_INPUT_ERROR(incremental_inputs_create(&inputs, &d.snapshots, &tr, NULL, &inc, &err), &err,
                           cases[i].expected);
        incremental_inputs_free(&inputs);
        trainer_free(&tr);
    }
    dataset_free(&d);
}
END_TEST

static void cache_never_changes(const model_config *config)
{
    tf_error err;
    dataset d;
    ck_assert(dataset_load("powerlaw:nodes=100,edges=800,snapshots=24,churn=0.02,features=4,degrees=0,seed=8", NULL, &d,
                           &err) == TF_OK);
    train_options opts = train_options_windows(6, 2, 1, 0.8);
    opts.epochs = 2;
    /* None, partial and whole first: memcheck runs those three (every path), a plain run all five. */
    static const double capacities[] = {0.0, 0.3, 1.0, 0.1, 0.6};
    const int64_t tried = test_repeats(sizeof capacities / sizeof capacities[0], 3);
    run_result first = {0};
    int64_t runs = 0;
    for (int p = CACHE_REINC; p <= CACHE_LRU; p++)
        for (int64_t c = 0; c < tried; c++) {
            incremental_inputs_options inc;
            incremental_inputs_options_default(&inc);
            inc.policy = (cache_policy)p;
            inc.capacity = capacities[c];
            inc.engine.threshold = INFINITY; /* every delta applied: the paths differ most */
            run_result r = train(&d.snapshots, config, &opts, &inc);
            int64_t differing = 0;
            if (runs == 0)
                first = r;
            else
                for (int64_t i = 0; i < r.count; i++)
                    differing += memcmp(&r.parameters[i], &first.parameters[i], sizeof(float)) != 0;
            printf("%-8s K=%d cache %-5s capacity %3.0f%%: hit rate %.3f, engine produced %lld answers (%lld full, "
                   "%lld deltas); %lld of %lld parameters differ in bits from the first run (must be 0)\n",
                   model_kind_name(config->kind), config->chebyshev_k, cache_policy_name((cache_policy)p),
                   100 * capacities[c], r.hit_rate, (long long)r.produced, (long long)r.engine_full,
                   (long long)r.engine_deltas, (long long)differing, (long long)r.count);
            ck_assert_int_eq(differing, 0);
            ck_assert(memcmp(r.losses, first.losses, sizeof r.losses) == 0);
            if (runs++ > 0)
                free(r.parameters);
        }
    free(first.parameters);
    dataset_free(&d);
}

START_TEST(cache_never_changes_results)
{
    const model_config tgcn = config_of(MODEL_TGCN, 1), gconvgru = config_of(MODEL_GCONVGRU, 3);
    cache_never_changes(&tgcn);
    cache_never_changes(&gconvgru);
}
END_TEST

START_TEST(cache_policy_unit)
{
    /* Capacity for two entries of 4 floats. ReInc keeps the entries with more future uses;
     * LRU keeps the recent ones; an entry reaching F = 0 leaves at once. */
    tf_error err;
    incremental_cache reinc, lru;
    incremental_cache_init(&reinc, CACHE_REINC, 32, 1);
    incremental_cache_init(&lru, CACHE_LRU, 32, 1);
    const float values[4] = {1, 2, 3, 4};
    float out[4] = {0};
    incremental_cache *both[2] = {&reinc, &lru};
    for (int i = 0; i < 2; i++) {
        ck_assert(incremental_cache_put(both[i], 1, values, 4, 5, 0, &err) == TF_OK);
        ck_assert(incremental_cache_put(both[i], 2, values, 4, 1, 0, &err) == TF_OK);
        ck_assert(incremental_cache_put(both[i], 3, values, 4, 3, 0, &err) == TF_OK);
    }
    /* ReInc evicted key 2 (F = 1); LRU evicted key 1 (oldest). */
    ck_assert_int_eq(incremental_cache_get(&reinc, 1, out), 1);
    ck_assert(memcmp(out, values, sizeof values) == 0);
    ck_assert_int_eq(incremental_cache_get(&reinc, 2, out), 0);
    ck_assert_int_eq(incremental_cache_get(&lru, 1, out), 0);
    ck_assert_int_eq(incremental_cache_get(&lru, 2, out), 1);
    /* key 2 had F = 1: that get was its last, so it is gone. */
    ck_assert_int_eq(lru.count, 1);
    ck_assert_int_eq(lru.stats.expired, 1);
    /* ReInc refuses a newcomer ranked below everything it would displace. */
    ck_assert(incremental_cache_put(&reinc, 4, values, 4, 1, 0, &err) == TF_OK);
    ck_assert_int_eq(reinc.stats.rejected, 1);
    printf("cache unit: reinc hits %lld misses %lld rejected %lld; lru hits %lld misses %lld expired %lld\n",
           (long long)reinc.stats.hits, (long long)reinc.stats.misses, (long long)reinc.stats.rejected,
           (long long)lru.stats.hits, (long long)lru.stats.misses, (long long)lru.stats.expired);
    cache_policy policy;
    EXPECT_INPUT_ERROR(cache_policy_parse("lfu", &policy, &err), &err, "lfu", "reinc or lru");
    incremental_cache_free(&reinc);
    incremental_cache_free(&lru);
}
END_TEST

/* Counts the sparse products a forward makes: ref_kernels with a counting propagate_forward. */
static int64_t propagations;

static void counting_propagate(const propagation *p, const float *x, int64_t width, float *y)
{
    propagations++;
    ref_kernels.propagate_forward(p, x, width, y);
}

START_TEST(reuse_across_gates_counted)
{
    tf_error err;
    dataset d;
    load_or_fail("powerlaw:nodes=100,edges=600,snapshots=6,seed=2", &d);
    kernels counting = ref_kernels;
    counting.propagate_forward = counting_propagate;
    /* Sparse products per snapshot, with K = 3 (a Chebyshev basis of one input costs K - 1 = 2),
     * against what per-gate convolutions would make. The integrated models (ReInc's GCRN-M2 =
     * GConvLSTM, GConvGRU, T-GCN) share one aggregation of an input across their gates: GConvGRU
     * convolves X and H in each of its 3 gates (6 convolutions) from 3 bases (X once for all gates, H
     * once for z and r, H * R for the candidate); GConvLSTM convolves X and H in each of its 4 gates
     * (8) from 2; GC-LSTM H in 4 gates from 1; T-GCN A^ X_t in 3 gates from 1; the two-layer T-GCN
     * shares its first layer (1 for 3 gates) but not its second, which aggregates each gate's own
     * hidden layer (3). The stacked models (GCRN-M1, WD-GCN, MPNN-LSTM) have one convolution per layer
     * ahead of the recurrence, so nothing to share: per-gate and shared are the same count. */
    static const struct {
        model_kind kind;
        int64_t shared, per_gate; /* products per snapshot */
    } cases[] = {{MODEL_GCONVGRU, 3 * 2, 6 * 2}, {MODEL_GCLSTM, 1 * 2, 4 * 2}, {MODEL_GCONVLSTM, 2 * 2, 8 * 2},
                 {MODEL_TGCN, 1, 3},           {MODEL_TGCN2, 1 + 3, 3 + 3},  {MODEL_GCRNM1, 2 * 2, 2 * 2},
                 {MODEL_WDGCN, 1, 1},          {MODEL_MPNNLSTM, 2, 2}};
    const int k = 3;
    const int64_t count = d.snapshots.num_snapshots;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        model_config config = {cases[i].kind, d.snapshots.feature_width, 8, d.snapshots.target_width, k, 0};
        model m;
        ck_assert(model_create(&m, &config, 1, &err) == TF_OK);
        m.kernels = &counting;
        float *predictions = malloc((size_t)(count * d.snapshots.num_nodes * d.snapshots.target_width) * sizeof(float));
        ck_assert_ptr_nonnull(predictions);
        window_tape tape;
        propagations = 0;
        ck_assert(model_forward(&m, &d.snapshots, 0, count, &tape, predictions, &err) == TF_OK);
        printf("%-9s K = %d, %lld snapshots: %lld sparse products, %.1f per snapshot (one aggregation per input "
               "per cell); per-gate convolutions would make %lld (%.2fx)\n",
               model_kind_name(cases[i].kind), k, (long long)count, (long long)propagations,
               (double)propagations / (double)count, (long long)(count * cases[i].per_gate),
               (double)(count * cases[i].per_gate) / (double)propagations);
        ck_assert_int_eq(propagations, count * cases[i].shared);
        window_tape_free(&m, &tape);
        free(predictions);
        model_free(&m);
    }
    dataset_free(&d);
}
END_TEST

/* Two suites; verify/CMakeLists.txt runs each as its own test (CK_RUN_SUITE): "incremental_train"
 * on generated graphs (label unit, under Valgrind in CI) and "incremental_train_real_data" on
 * twitter_tennis (label slow: two GConvGRU runs against the reference take minutes under Valgrind,
 * and the same code paths are memory-checked on the generated graphs). */
int main(void)
{
    const named_test generated_tests[] = {{"cache_policy_unit", cache_policy_unit},
                                          {"generated_overlapping_windows", generated_overlapping_windows},
                                          {"gconvgru_generated", gconvgru_generated},
                                          {"papers_models_generated", papers_models_generated},
                                          {"dcrnn_served_diffusions", dcrnn_served_diffusions},
                                          {"models_without_input_aggregation", models_without_input_aggregation},
                                          {"cache_never_changes_results", cache_never_changes_results},
                                          {"reuse_across_gates_counted", reuse_across_gates_counted}};
    const named_test real[] = {{"gconvgru_twitter_tennis", gconvgru_twitter_tennis}};
    const size_t count = sizeof generated_tests / sizeof *generated_tests;
    return run_suites(suite_of("incremental_train", generated_tests, count, 900),
                      suite_of("incremental_train_real_data", real, sizeof real / sizeof *real, 900));
}
