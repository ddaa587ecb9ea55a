/* A whole T-GCN training run with ReInc's incremental aggregation and cache
 * (opt/incremental_inputs.h) against the reference run that recomputes A^ X_t in every window:
 *  - loss curve (train loss and test MSE per epoch) and final parameters fp-equal
 *    (max |a - b| / max(1, |ref|) <= 1e-5), on a generated graph with overlapping windows
 *    (window 8, stride 2), with the engine forced to apply every delta (threshold infinity) and
 *    with the default threshold (twitter_tennis and the blocks-on-ranks placement:
 *    verify/test_incremental_mpi.c);
 *  - the cache never changes a result: capacities 0 % .. 100 % with ReInc's policy and LRU give
 *    bitwise the same parameters (chapters/02-incremental.md, "What ReInc leaves unsaid"), while
 *    hit rates and engine work differ;
 *  - ReInc's F is exact: after each epoch nothing is left in a cache big enough for everything
 *    (every entry expired when its last predicted access came);
 *  - reuse across gates, counted: the integrated GraphRNNs aggregate each input once per cell,
 *    not once per gate (sparse products per snapshot, against what per-gate convolutions need). */
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
} run_result;

static const int64_t epochs = 2;

/* Trains T-GCN on `seq`; incremental when `options` is not NULL. */
static run_result train(const snapshot_seq *seq, const train_options *train_opts,
                        const incremental_inputs_options *options)
{
    tf_error err;
    model_config config = {MODEL_TGCN, 0, 8, 0, 1};
    trainer tr;
    ck_assert_msg(trainer_create(&tr, seq, &config, train_opts, &err) == TF_OK, "%s", err.message);
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
        r.engine_full = inputs.engine.stats.full;
        r.engine_deltas = inputs.engine.stats.incremental;
        r.left_in_cache = inputs.cache.count;
        incremental_inputs_free(&inputs);
    }
    trainer_free(&tr);
    return r;
}

static void compare_with_reference(const char *data, int64_t window, int64_t stride, double threshold)
{
    tf_error err;
    dataset d;
    ck_assert_msg(dataset_load(data, NULL, &d, &err) == TF_OK, "%s", err.message);
    train_options opts;
    train_options_default(&opts);
    opts.window = window;
    opts.stride = stride;
    opts.batch = 2;
    opts.epochs = epochs;
    incremental_inputs_options inc;
    incremental_inputs_options_default(&inc);
    inc.engine.threshold = threshold;
    run_result reference = train(&d.snapshots, &opts, NULL), ours = train(&d.snapshots, &opts, &inc);
    double curve = 0, parameters = 0;
    for (int64_t i = 0; i < 2 * epochs; i++)
        curve = fmax(curve, relative(ours.losses[i], reference.losses[i]));
    for (int64_t i = 0; i < reference.count; i++)
        parameters = fmax(parameters, relative(ours.parameters[i], reference.parameters[i]));
    printf("tgcn on %-9s threshold %g, window %lld stride %lld, %lld epochs: incremental vs full recompute: loss curve %.2e, final "
           "parameters %.2e; cache hit rate %.3f, engine: %lld full, %lld deltas, %lld entries left in the cache\n",
           d.name, threshold, (long long)window, (long long)stride, (long long)epochs, curve, parameters, ours.hit_rate,
           (long long)ours.engine_full, (long long)ours.engine_deltas, (long long)ours.left_in_cache);
    ck_assert_msg(curve <= TOLERANCE, "loss curves differ by %g", curve);
    ck_assert_msg(parameters <= TOLERANCE, "parameters differ by %g", parameters);
    ck_assert_int_eq(ours.left_in_cache, 0);
    free(reference.parameters);
    free(ours.parameters);
    dataset_free(&d);
}

START_TEST(generated_overlapping_windows)
{
    const char *data = "powerlaw:nodes=200,edges=1600,snapshots=32,churn=0.02,arrival=0.01,features=4,degrees=0,seed=3";
    compare_with_reference(data, 8, 2, INFINITY);
    compare_with_reference(data, 8, 2, INCREMENTAL_DEFAULT_THRESHOLD);
}
END_TEST

START_TEST(cache_never_changes_results)
{
    tf_error err;
    dataset d;
    ck_assert(dataset_load("powerlaw:nodes=100,edges=800,snapshots=24,churn=0.02,features=4,degrees=0,seed=8", NULL, &d,
                           &err) == TF_OK);
    train_options opts;
    train_options_default(&opts);
    opts.window = 6;
    opts.stride = 2;
    opts.epochs = epochs;
    static const double capacities[] = {0.0, 0.1, 0.3, 0.6, 1.0};
    run_result first = {0};
    int64_t runs = 0;
    for (int p = CACHE_REINC; p <= CACHE_LRU; p++)
        for (size_t c = 0; c < sizeof capacities / sizeof capacities[0]; c++) {
            incremental_inputs_options inc;
            incremental_inputs_options_default(&inc);
            inc.policy = (cache_policy)p;
            inc.capacity = capacities[c];
            inc.engine.threshold = INFINITY; /* every delta applied: the paths differ most */
            run_result r = train(&d.snapshots, &opts, &inc);
            int64_t differing = 0;
            if (runs == 0)
                first = r;
            else
                for (int64_t i = 0; i < r.count; i++)
                    differing += memcmp(&r.parameters[i], &first.parameters[i], sizeof(float)) != 0;
            printf("cache %-5s capacity %3.0f%%: hit rate %.3f, engine produced %lld answers (%lld full, %lld deltas); "
                   "%lld of %lld parameters differ in bits from the first run (must be 0)\n",
                   cache_policy_name((cache_policy)p), 100 * capacities[c], r.hit_rate, (long long)r.produced,
                   (long long)r.engine_full, (long long)r.engine_deltas, (long long)differing, (long long)r.count);
            ck_assert_int_eq(differing, 0);
            ck_assert(memcmp(r.losses, first.losses, sizeof r.losses) == 0);
            if (runs++ > 0)
                free(r.parameters);
        }
    free(first.parameters);
    dataset_free(&d);
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
    ck_assert(dataset_load("powerlaw:nodes=100,edges=600,snapshots=6,seed=2", NULL, &d, &err) == TF_OK);
    kernels counting = ref_kernels;
    counting.propagate_forward = counting_propagate;
    /* Chebyshev order K: a basis of one input costs K - 1 products. GConvGRU convolves X and H
     * in each of its 3 gates (6 convolutions, 6 (K - 1) products per snapshot without reuse)
     * but needs only 3 bases: X once for all gates, H once for z and r, H * R for the
     * candidate. GC-LSTM convolves H in its 4 gates (4 (K - 1)) but needs one basis. */
    static const struct {
        model_kind kind;
        int64_t bases, convolutions;
    } cases[] = {{MODEL_GCONVGRU, 3, 6}, {MODEL_GCLSTM, 1, 4}};
    const int k = 3;
    const int64_t count = d.snapshots.num_snapshots;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        model_config config = {cases[i].kind, d.snapshots.feature_width, 8, d.snapshots.target_width, k};
        model m;
        ck_assert(model_create(&m, &config, 1, &err) == TF_OK);
        m.kernels = &counting;
        float *predictions = malloc((size_t)(count * d.snapshots.num_nodes * d.snapshots.target_width) * sizeof(float));
        ck_assert_ptr_nonnull(predictions);
        window_tape tape;
        propagations = 0;
        ck_assert(model_forward(&m, &d.snapshots, 0, count, &tape, predictions, &err) == TF_OK);
        const int64_t expected = count * cases[i].bases * (k - 1), per_gate = count * cases[i].convolutions * (k - 1);
        printf("%-9s K = %d, %lld snapshots: %lld sparse products (one basis per input per cell); per-gate convolutions "
               "would make %lld\n",
               model_kind_name(cases[i].kind), k, (long long)count, (long long)propagations, (long long)per_gate);
        ck_assert_int_eq(propagations, expected);
        window_tape_free(&m, &tape);
        free(predictions);
        model_free(&m);
    }
    dataset_free(&d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("incremental_train");
    TCase *tc = tcase_create("incremental_train");
    tcase_set_timeout(tc, 900);
    tcase_add_test(tc, cache_policy_unit);
    tcase_add_test(tc, generated_overlapping_windows);
    tcase_add_test(tc, cache_never_changes_results);
    tcase_add_test(tc, reuse_across_gates_counted);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
