/* The CUDA twin of incremental aggregation (cuda/incremental.h) against the reference
 * ref_aggregate() (ref/incremental.h), for every aggregator, on twitter_tennis (120 snapshots)
 * and a generated graph with vertices arriving and leaving (101 snapshots, churn 1 %):
 *  - cuda_aggregate(), the full recompute on the GPU, at every snapshot;
 *  - the device-resident engine reset at the first snapshot and then advanced by the delta
 *    kernel alone through every delta (no refresh, no fallback), at every snapshot.
 * sum, mean and symmetric are fp: |a - b| <= 1e-4 * max(1, sum of |coefficient x|) (the GPU
 * tolerance, against the size of the summed terms as in verify/test_incremental.c), with the
 * error relative to max(1, |ref|) printed beside it; max and min are bitwise (0 values may
 * differ in bits). Also printed, not checked: how many values of the engine differ in bits
 * from the CPU twin (opt/incremental.c) run along the same deltas; both do the same double
 * operations in the same order, so 0 is expected where the C compiler does not contract
 * them into FMAs.
 * Without a GPU (or driver) the program exits 77: CTest reports it skipped. Where a GPU is
 * available, run it under compute-sanitizer too:
 *     compute-sanitizer --error-exitcode 1 build/verify/test_incremental_cuda */
#include <math.h>

#include "cuda/incremental.h"
#include "datasets/dataset.h"
#include "opt/incremental.h"
#include "ref/incremental.h"
#include "verify/testing_cuda.h"

#define TOLERANCE 1e-4

static cuda_context gpu;

/* The errors of one way of computing (full recompute or delta chain) over all snapshots. */
typedef struct measured {
    double worst;       /* largest error relative to the terms' magnitude (the checked one) */
    double relative;    /* largest error relative to max(1, |ref|) */
    int64_t differing;  /* values whose bits differ from the reference */
} measured;

static void measure(measured *m, const snapshot *s, aggregator kind, const float *ours, const float *reference, int64_t n)
{
    const int64_t width = n / s->graph.num_nodes;
    double error = aggregation_error(&s->graph, s->features.data, width, kind, ours, reference);
    ck_assert(error >= 0);
    m->worst = fmax(m->worst, error);
    m->relative = fmax(m->relative, relative_error(ours, reference, n));
    m->differing += differing_values(ours, reference, n);
}

static const incremental_options always_incremental = {INFINITY, 0};

/* Every aggregator along all snapshots of seq: the full recompute and the delta chain on the
 * GPU against the reference at every snapshot; fails on the first aggregator outside its promise. */
static void check_sequence(const char *what, const snapshot_seq *seq)
{
    tf_error err;
    const int64_t n = seq->num_nodes, width = seq->feature_width, cells = n * width, count = seq->num_snapshots;
    float *reference = malloc((size_t)cells * sizeof(float) + 1);
    float *full = malloc((size_t)cells * sizeof(float) + 1);
    float *chained = malloc((size_t)cells * sizeof(float) + 1);
    ck_assert(reference && full && chained);
    for (int k = 0; k < AGGREGATOR_COUNT; k++) {
        const aggregator kind = (aggregator)k;
        if (kind == AGGREGATOR_CHEBYSHEV) { /* no CUDA twin (cuda/incremental.cu says why) */
            ck_assert(cuda_incremental_create(&(cuda_incremental){0}, &gpu, kind, n, width, &err) == TF_ERR_INPUT);
            continue;
        }
        const int exact = kind == AGGREGATOR_MAX || kind == AGGREGATOR_MIN;
        cuda_incremental engine;
        incremental_aggregation twin;
        ck_assert_msg(cuda_incremental_create(&engine, &gpu, kind, n, width, &err) == TF_OK, "%s", err.message);
        ck_assert(opt_incremental_create(&twin, kind, n, width, &always_incremental, &err) == TF_OK);
        measured recompute = {0}, chain = {0};
        int64_t twin_differing = 0, entries = 0, edges = 0;
        for (int64_t t = 0; t < count; t++) {
            const snapshot *current = &seq->snapshots[t];
            const float *x = current->features.data;
            ck_assert(ref_aggregate(&current->graph, x, width, kind, reference, &err) == TF_OK);

            ck_assert_msg(cuda_aggregate(&gpu, &current->graph, x, width, kind, full, &err) == TF_OK, "%s",
                          err.message);
            measure(&recompute, current, kind, full, reference, cells);

            if (t == 0) {
                ck_assert_msg(cuda_incremental_reset(&engine, current, &err) == TF_OK, "%s", err.message);
                opt_incremental_reset(&twin, current, t);
            } else {
                const snapshot *previous = &seq->snapshots[t - 1];
                snapshot_delta delta;
                ck_assert_msg(snapshot_delta_build(&delta, previous, current, kind, &err) == TF_OK, "%s", err.message);
                ck_assert_msg(cuda_incremental_advance(&engine, previous, current, &delta, &err) == TF_OK, "%s",
                              err.message);
                opt_incremental_advance(&twin, previous, current, &delta, t);
                entries += snapshot_delta_entries(&delta);
                edges += current->graph.num_edges;
                snapshot_delta_free(&delta);
            }
            ck_assert_msg(cuda_incremental_download(&engine, chained, &err) == TF_OK, "%s", err.message);
            measure(&chain, current, kind, chained, reference, cells);
            twin_differing += differing_values(chained, twin.value, cells);
        }
        int64_t rows_recomputed = 0;
        ck_assert(cuda_incremental_rows_recomputed(&engine, &rows_recomputed, &err) == TF_OK);
        const long long values = (long long)(count * cells);
        printf("%-20s %-9s full recompute on the GPU, %lld snapshots: error %.3g of the terms (%.3g of |ref|), "
               "%lld of %lld values differ in bits%s\n",
               what, aggregator_name(kind), (long long)count, recompute.worst, recompute.relative,
               (long long)recompute.differing, values, exact ? " (must be 0)" : "");
        printf("%-20s %-9s delta chain on the GPU, %lld deltas (%.4f entries per edge, %lld max/min rows recomputed): "
               "error %.3g of the terms (%.3g of |ref|), %lld of %lld values differ in bits%s; %lld differ in bits "
               "from the CPU twin (not checked)\n",
               what, aggregator_name(kind), (long long)engine.stats.incremental,
               edges ? (double)entries / (double)edges : 0.0, (long long)rows_recomputed, chain.worst, chain.relative,
               (long long)chain.differing, values, exact ? " (must be 0)" : "", (long long)twin_differing);
        ck_assert_int_eq(engine.stats.full, 1);
        ck_assert_int_eq(engine.stats.incremental, count - 1);
        if (exact) {
            ck_assert_int_eq(recompute.differing, 0);
            ck_assert_int_eq(chain.differing, 0);
        } else {
            ck_assert_msg(recompute.worst <= TOLERANCE, "%s %s full recompute: error %g", what, aggregator_name(kind),
                          recompute.worst);
            ck_assert_msg(chain.worst <= TOLERANCE, "%s %s delta chain: error %g", what, aggregator_name(kind),
                          chain.worst);
        }
        cuda_incremental_free(&engine);
        opt_incremental_free(&twin);
    }
    free(reference);
    free(full);
    free(chained);
}

START_TEST(twitter_tennis_chain)
{
    dataset tennis;
    load_or_fail("twitter_tennis", &tennis);
    ck_assert_int_ge(tennis.snapshots.num_snapshots, 100);
    check_sequence("twitter_tennis", &tennis.snapshots);
    dataset_free(&tennis);
}
END_TEST

START_TEST(generated_chain)
{
    dataset d;
    load_or_fail("powerlaw:nodes=600,edges=5000,snapshots=101,churn=0.01,arrival=0.01,features=4,degrees=0,seed=4", &d);
    check_sequence("powerlaw churn 0.01", &d.snapshots);
    dataset_free(&d);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("cuda_incremental");
    TCase *cases = tcase_create("cuda_incremental");
    tcase_set_timeout(cases, 300);
    tcase_add_test(cases, twitter_tennis_chain);
    tcase_add_test(cases, generated_chain);
    suite_add_tcase(suite, cases);
    return run_suite_cuda(suite, &gpu);
}
