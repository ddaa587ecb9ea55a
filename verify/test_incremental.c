/* Incremental aggregation (opt/incremental.h) against its reference twin, the full
 * recompute ref_aggregate() (ref/incremental.h), for every aggregator:
 *  - along >= 100 consecutive snapshots of twitter_tennis, of england_covid (53 snapshots, run
 *    forward then backward: 105 snapshots, 104 deltas) and of generated graphs at churn
 *    0.1 %, 1 %, 10 % and 50 % with vertices arriving and leaving, never refreshing and never
 *    falling back, so every snapshot after the first is reached by deltas alone;
 *  - fp for sum, mean, symmetric and chebyshev, bitwise for max and min. The fp error of a float sum is
 *    bounded by the size of its terms, not of its result: england_covid's mobility weights make
 *    sums of large terms that cancel, where the reference's own float sum is 2e-5 away from
 *    the exact value (the twin's double accumulator is 6e-8 away). So the check is
 *    |a - b| <= 1e-5 * max(1, sum of |coefficient x|) (the standard bound for a float sum); the
 *    error relative to max(1, |ref|) is printed beside it;
 *  - integer-valued data makes sum exact: every value equal to the reference (as numbers: an
 *    empty row is -0 in the reference when its self coefficient 0 meets a negative feature);
 *  - chapter 02's worked example by hand (four vertices, one delta): the delta's rows and entries
 *    and the updated values asserted against the hand-computed ones;
 *  - crafted max/min cases: the winner deleted, ties, the winner's features changed, -0;
 *  - the delta's structural part rebuilds E_t from E_{t-1} exactly (chapters/02-incremental.md,
 *    "The delta");
 *  - threshold 0 (always full) and infinity (always incremental) agree, and seek() gives
 *    snapshot t the same bits from any starting point (what makes caching exact).
 * Runs with 2 OpenMP threads so the parallel row updates are exercised. Prints what it measured.
 * Under Valgrind the chains are cut to a few snapshots (test_repeats in verify/testing.h), and a
 * generated graph stands in for twitter_tennis (tennis_or_generated()). */
#include <math.h>

#include "datasets/dataset.h"
#include "opt/incremental.h"
#include "opt/kernels.h"
#include "ref/incremental.h"
#include "verify/testing.h"

#define TOLERANCE 1e-5

static const incremental_options always_incremental = {INFINITY, 0};

/* What one chain measured. */
typedef struct chain_result {
    double worst;        /* largest error relative to the terms' magnitude (the checked one) */
    double relative;     /* largest error relative to max(1, |ref|) */
    int64_t unequal;     /* values that differ as numbers */
    int64_t differing;   /* values whose bits differ from the reference */
    int64_t deltas;      /* deltas applied */
    int64_t entries;     /* delta entries applied */
    int64_t edges;       /* edges of the snapshots reached by deltas */
} chain_result;

/* Runs the engine along the snapshots order[0..count) of seq and compares every one with the
 * reference. */
static chain_result run_chain(const snapshot_seq *seq, const int64_t *order, int64_t count, aggregator kind,
                              const incremental_options *options)
{
    tf_error err;
    const int64_t n = seq->num_nodes, width = seq->feature_width;
    incremental_aggregation a;
    ck_assert(opt_incremental_create(&a, kind, n, width, options, &err) == TF_OK);
    float *reference = malloc((size_t)(n * width) * sizeof(float) + 1);
    ck_assert_ptr_nonnull(reference);
    chain_result result = {0};
    for (int64_t i = 0; i < count; i++) {
        const snapshot *current = &seq->snapshots[order[i]];
        if (i == 0) {
            opt_incremental_reset(&a, current, i);
        } else {
            snapshot_delta delta;
            const snapshot *previous = &seq->snapshots[order[i - 1]];
            ck_assert_msg(snapshot_delta_build(&delta, previous, current, kind, &err) == TF_OK, "%s", err.message);
            opt_incremental_advance(&a, previous, current, &delta, i);
            result.entries += snapshot_delta_entries(&delta);
            result.edges += current->graph.num_edges;
            snapshot_delta_free(&delta);
        }
        ck_assert(ref_aggregate(&current->graph, current->features.data, width, kind, reference, &err) == TF_OK);
        double error = aggregation_error(&current->graph, current->features.data, width, kind, a.value, reference);
        ck_assert(error >= 0);
        result.worst = fmax(result.worst, error);
        result.relative = fmax(result.relative, relative_error(a.value, reference, n * width));
        result.differing += differing_values(a.value, reference, n * width);
        for (int64_t j = 0; j < n * width; j++)
            result.unequal += a.value[j] != reference[j];
    }
    result.deltas = a.stats.incremental;
    opt_incremental_free(&a);
    free(reference);
    return result;
}

/* Every aggregator along the given order; fails on the first one outside its promise. */
static void check_all_aggregators(const char *what, const snapshot_seq *seq, const int64_t *order, int64_t count)
{
    for (int k = 0; k < AGGREGATOR_COUNT; k++) {
        chain_result r = run_chain(seq, order, count, (aggregator)k, &always_incremental);
        int exact = k == AGGREGATOR_MAX || k == AGGREGATOR_MIN;
        printf("%-30s %-9s %lld snapshots, %lld deltas (%.4f entries per edge): error %.3g of the terms (%.3g of "
               "|ref|), %lld of %lld values differ in bits%s\n",
               what, aggregator_name((aggregator)k), (long long)count, (long long)r.deltas,
               r.edges ? (double)r.entries / (double)r.edges : 0.0, r.worst, r.relative, (long long)r.differing,
               (long long)(count * seq->num_nodes * seq->feature_width), exact ? " (must be 0)" : "");
        ck_assert_int_eq(r.deltas, count - 1);
        if (exact)
            ck_assert_int_eq(r.differing, 0);
        else
            ck_assert_msg(r.worst <= TOLERANCE, "%s %s: error %g", what, aggregator_name((aggregator)k), r.worst);
    }
}

static int64_t *in_order(int64_t count)
{
    int64_t *order = malloc((size_t)count * sizeof *order);
    ck_assert_ptr_nonnull(order);
    for (int64_t i = 0; i < count; i++)
        order[i] = i;
    return order;
}

/* The first @p count snapshots of @p seq, as a view of its snapshots (nothing to free). */
static snapshot_seq first_snapshots(const snapshot_seq *seq, int64_t count)
{
    snapshot_seq prefix = *seq;
    prefix.num_snapshots = count < seq->num_snapshots ? count : seq->num_snapshots;
    return prefix;
}

START_TEST(real_data_chains)
{
    dataset covid;
    /* loaded once for the three tests that read it */
    const snapshot_seq *tennis = shared_snapshots(tennis_or_generated());
    load_or_fail("england_covid", &covid);
    /* Under Valgrind a prefix of each chain (test_repeats): every path, not the drift. */
    const int64_t tennis_count = test_repeats(tennis->num_snapshots, 8);
    int64_t *order = in_order(tennis_count);
    check_all_aggregators(tennis_or_generated(), tennis, order, tennis_count);
    free(order);
    /* england_covid has 53 snapshots: forward to the last and back to the first. */
    const int64_t t = test_repeats(covid.snapshots.num_snapshots, 5), count = 2 * t - 1;
    order = malloc((size_t)count * sizeof *order);
    ck_assert_ptr_nonnull(order);
    for (int64_t i = 0; i < count; i++)
        order[i] = i < t ? i : 2 * (t - 1) - i;
    check_all_aggregators("england_covid (forward, back)", &covid.snapshots, order, count);
    free(order);
    dataset_free(&covid);
}
END_TEST

START_TEST(generated_chains)
{
    /* Vertices arrive and leave (arrival=0.01); degrees=0 changes the features of exactly a
     * churn fraction of vertices, degrees=1 those of every vertex an edge change touches. */
    static const struct {
        double churn, arrival;
        int degrees, seed;
    } graphs[] = {{0.001, 0.01, 0, 3}, {0.01, 0.01, 0, 4}, {0.1, 0.01, 0, 5}, {0.5, 0.01, 0, 6}, {0.01, 0.02, 1, 7}};
    for (size_t i = 0; i < sizeof graphs / sizeof graphs[0]; i++) {
        dataset d;
        char spec[160], label[64];
        snprintf(spec, sizeof spec,
                 "powerlaw:nodes=400,edges=3000,snapshots=%lld,churn=%g,arrival=%g,features=4,degrees=%d,seed=%d",
                 (long long)test_repeats(101, 8), graphs[i].churn, graphs[i].arrival, graphs[i].degrees, graphs[i].seed);
        snprintf(label, sizeof label, "powerlaw churn %g%s", graphs[i].churn, graphs[i].degrees ? " deg-feat" : "");
        load_or_fail(spec, &d);
        int64_t *order = in_order(d.snapshots.num_snapshots);
        check_all_aggregators(label, &d.snapshots, order, d.snapshots.num_snapshots);
        free(order);
        dataset_free(&d);
    }
}
END_TEST

/* Integer features and unit weights: every sum is an exact integer in float and double, so
 * the incremental sum must equal the reference exactly (compared as numbers: -0 == +0). */
START_TEST(integer_sums_are_bitwise)
{
    tf_error err;
    dataset d;
    ck_assert(dataset_load("powerlaw:nodes=400,edges=3000,snapshots=100,churn=0.05,arrival=0.02,features=3,degrees=0,seed=9",
                           NULL, &d, &err) == TF_OK);
    snapshot_seq *seq = &d.snapshots;
    for (int64_t t = 0; t < seq->num_snapshots; t++) {
        snapshot *s = &seq->snapshots[t];
        for (int64_t e = 0; e < s->graph.num_edges; e++)
            s->graph.weight[e] = 1.0f;
        for (int64_t i = 0; i < s->features.size; i++)
            s->features.data[i] = (float)lround(s->features.data[i] * 4.0);
    }
    int64_t *order = in_order(seq->num_snapshots);
    chain_result r = run_chain(seq, order, seq->num_snapshots, AGGREGATOR_SUM, &always_incremental);
    printf("integer-valued sum, %lld deltas: %lld values differ (must be 0), %lld differ in bits (-0 against +0)\n",
           (long long)r.deltas, (long long)r.unequal, (long long)r.differing);
    ck_assert_int_eq(r.unequal, 0);
    free(order);
    dataset_free(&d);
}
END_TEST

/* A two-snapshot sequence on 4 vertices with hand-picked edges and features. */
static void make_pair(snapshot_seq *seq, int64_t edges0, const int32_t *src0, const int32_t *dst0, const float *w0,
                      const float *x0, int64_t edges1, const int32_t *src1, const int32_t *dst1, const float *w1,
                      const float *x1)
{
    tf_error err;
    ck_assert(snapshot_seq_alloc(seq, 2, 4, 2, 1, &err) == TF_OK);
    ck_assert(snapshot_seq_set_edges(seq, 0, edges0, src0, dst0, w0, &err) == TF_OK);
    ck_assert(snapshot_seq_set_edges(seq, 1, edges1, src1, dst1, w1, &err) == TF_OK);
    memcpy(seq->snapshots[0].features.data, x0, 8 * sizeof(float));
    memcpy(seq->snapshots[1].features.data, x1, 8 * sizeof(float));
}

START_TEST(crafted_max_min)
{
    /* Row 3 gathers from 0, 1, 2. Column 0: 0 is the max, deleted at t = 1. Column 1: 1 and 2
     * tie for the max; 1's edge is deleted, 2's stays. Vertex 2's column 0 drops (a feature
     * change of the min's source). -0 * 1 and 0 * -1 messages appear in row 0. */
    const int32_t src0[] = {0, 1, 2, 3, 1}, dst0[] = {3, 3, 3, 0, 0};
    const float w0[] = {1, 1, 1, -1, 1};
    const float x0[] = {5, 1, 2, 4, 1, 4, 0, 7};
    const int32_t src1[] = {2, 3, 1, 0}, dst1[] = {3, 0, 0, 0};
    const float w1[] = {1, -1, 1, 2};
    const float x1[] = {-0.0f, 1, 2, 4, -3, 4, 0, -0.0f};
    snapshot_seq seq;
    make_pair(&seq, 5, src0, dst0, w0, x0, 4, src1, dst1, w1, x1);
    const int64_t order[2] = {0, 1};
    for (int k = AGGREGATOR_MAX; k <= AGGREGATOR_MIN; k++) {
        chain_result r = run_chain(&seq, order, 2, (aggregator)k, &always_incremental);
        printf("crafted %s: %lld values differ in bits (must be 0)\n", aggregator_name((aggregator)k),
               (long long)r.differing);
        ck_assert_int_eq(r.differing, 0);
    }
    for (int k = 0; k < AGGREGATOR_MAX; k++) {
        chain_result r = run_chain(&seq, order, 2, (aggregator)k, &always_incremental);
        printf("crafted %s: max rel error %.3g\n", aggregator_name((aggregator)k), r.worst);
        ck_assert(r.worst <= TOLERANCE);
    }
    snapshot_seq_free(&seq);
}
END_TEST

/* A row whose in-edges all leave must return to 0, and a loop edge's weight moves the
 * symmetric self term. */
START_TEST(emptied_rows_and_loops)
{
    const int32_t src0[] = {0, 1, 2, 3}, dst0[] = {1, 1, 2, 3};
    const float w0[] = {1, 2, 3, 1};
    const float x0[] = {1, 2, 3, 4, 5, 6, 7, 8};
    const int32_t src1[] = {2, 3, 0}, dst1[] = {2, 3, 3};
    const float w1[] = {0.5f, 1, 1};
    snapshot_seq seq;
    make_pair(&seq, 4, src0, dst0, w0, x0, 3, src1, dst1, w1, x0);
    const int64_t order[2] = {0, 1};
    for (int k = 0; k < AGGREGATOR_COUNT; k++) {
        chain_result r = run_chain(&seq, order, 2, (aggregator)k, &always_incremental);
        printf("emptied row and loops, %s: max rel error %.3g, %lld values differ in bits\n",
               aggregator_name((aggregator)k), r.worst, (long long)r.differing);
        ck_assert(r.worst <= TOLERANCE);
        if (k == AGGREGATOR_MAX || k == AGGREGATOR_MIN)
            ck_assert_int_eq(r.differing, 0);
    }
    snapshot_seq_free(&seq);
}
END_TEST

/* Chapter 02's worked example, small enough to check by hand (chapters/02-incremental-idea.svg
 * draws it): vertices A B C D = 0 1 2 3, one feature each, every weight 1. Snapshot t-1 has A->B,
 * B->C, D->B and x = (2, 3, 5, 7); at t, D->B is deleted, A->D inserted and x_A becomes 4. By hand,
 * sum: y(t-1) = (0, 2 + 7, 3, 0) = (0, 9, 3, 0); G- lists row B's D->B (x_D = 7) and A->B (old
 * x_A = 2), G+ row B's A->B and row D's A->D (new x_A = 4), so y(t) = (0, 9 - 7 - 2 + 4, 3, 0 + 4) =
 * (0, 4, 3, 4), which recomputing E(t) gives too. Symmetric: d_B drops from 3 to 2, so row C, whose
 * in-edge did not change, is re-entered (B->C out with 1/sqrt 3, in with 1/sqrt 2) and goes from
 * 3/sqrt 6 + 5/2 to 3/2 + 5/2 = 4. The test asserts the delta's rows and entries and those values. */
static const char worked_names[] = "ABCD";

/* "B: -D -A" style: the sources of one delta row's entries. */
static void print_delta_rows(const snapshot_delta *d, int plus)
{
    const int64_t *offsets = plus ? d->plus_offsets : d->minus_offsets;
    const int32_t *source = plus ? d->plus_source : d->minus_source;
    for (int64_t i = 0; i < d->num_rows; i++) {
        if (offsets[i] == offsets[i + 1])
            continue;
        printf(" row %c:", worked_names[d->rows[i]]);
        for (int64_t k = offsets[i]; k < offsets[i + 1]; k++)
            printf(" %c%c", plus ? '+' : '-', worked_names[source[k]]);
    }
}

/* The engine's value after applying the delta from t-1 to t, and the reference's at t. */
static void worked_values(const snapshot_seq *seq, aggregator kind, const snapshot_delta *delta, float *by_delta,
                          float *recomputed, float *before)
{
    tf_error err;
    incremental_aggregation a;
    ck_assert(opt_incremental_create(&a, kind, 4, 1, &always_incremental, &err) == TF_OK);
    opt_incremental_reset(&a, &seq->snapshots[0], 0);
    memcpy(before, a.value, 4 * sizeof(float));
    opt_incremental_advance(&a, &seq->snapshots[0], &seq->snapshots[1], delta, 1);
    ck_assert_int_eq(a.stats.incremental, 1);
    memcpy(by_delta, a.value, 4 * sizeof(float));
    ck_assert(ref_aggregate(&seq->snapshots[1].graph, seq->snapshots[1].features.data, 1, kind, recomputed, &err) ==
              TF_OK);
    opt_incremental_free(&a);
}

START_TEST(worked_example)
{
    tf_error err;
    const int32_t src0[] = {0, 1, 3}, dst0[] = {1, 2, 1}, src1[] = {0, 1, 0}, dst1[] = {1, 2, 3};
    const float x0[] = {2, 3, 5, 7}, x1[] = {4, 3, 5, 7};
    snapshot_seq seq;
    ck_assert(snapshot_seq_alloc(&seq, 2, 4, 1, 1, &err) == TF_OK);
    ck_assert(snapshot_seq_set_edges(&seq, 0, 3, src0, dst0, NULL, &err) == TF_OK);
    ck_assert(snapshot_seq_set_edges(&seq, 1, 3, src1, dst1, NULL, &err) == TF_OK);
    memcpy(seq.snapshots[0].features.data, x0, sizeof x0);
    memcpy(seq.snapshots[1].features.data, x1, sizeof x1);

    /* sum: rows B and D only, G- = {D->B, A->B}, G+ = {A->B, A->D}, all with coefficient 1 */
    snapshot_delta sum;
    ck_assert(snapshot_delta_build(&sum, &seq.snapshots[0], &seq.snapshots[1], AGGREGATOR_SUM, &err) == TF_OK);
    ck_assert_int_eq(sum.num_rows, 2);
    ck_assert(sum.rows[0] == 1 && sum.rows[1] == 3);
    ck_assert(sum.minus_offsets[1] == 2 && sum.minus_offsets[2] == 2);
    ck_assert(sum.plus_offsets[1] == 1 && sum.plus_offsets[2] == 2);
    ck_assert((sum.minus_source[0] == 0 && sum.minus_source[1] == 3) ||
              (sum.minus_source[0] == 3 && sum.minus_source[1] == 0));
    ck_assert(sum.plus_source[0] == 0 && sum.plus_source[1] == 0);
    for (int k = 0; k < 2; k++)
        ck_assert(sum.minus_coefficient[k] == 1.0 && sum.plus_coefficient[k] == 1.0);
    float before[4], by_delta[4], recomputed[4];
    worked_values(&seq, AGGREGATOR_SUM, &sum, by_delta, recomputed, before);
    const float hand_before[4] = {0, 9, 3, 0}, hand_after[4] = {0, 4, 3, 4};
    printf("worked example, sum: y(t-1) = %g %g %g %g; G-:", before[0], before[1], before[2], before[3]);
    print_delta_rows(&sum, 0);
    printf("; G+:");
    print_delta_rows(&sum, 1);
    printf("; y(t) by the delta %g %g %g %g, recomputed %g %g %g %g\n", by_delta[0], by_delta[1], by_delta[2],
           by_delta[3], recomputed[0], recomputed[1], recomputed[2], recomputed[3]);
    for (int v = 0; v < 4; v++) /* small integers: every value exact */
        ck_assert(before[v] == hand_before[v] && by_delta[v] == hand_after[v] && recomputed[v] == hand_after[v]);
    snapshot_delta_free(&sum);

    /* symmetric: every row listed; row C re-entered with B's old and new 1/sqrt(d_B) */
    snapshot_delta sym;
    ck_assert(snapshot_delta_build(&sym, &seq.snapshots[0], &seq.snapshots[1], AGGREGATOR_SYMMETRIC, &err) ==
              TF_OK);
    ck_assert_int_eq(sym.num_rows, 4);
    const int64_t c = 2;
    ck_assert(sym.rows[c] == 2);
    ck_assert(sym.minus_offsets[c + 1] - sym.minus_offsets[c] == 1 && sym.plus_offsets[c + 1] - sym.plus_offsets[c] == 1);
    const int64_t m = sym.minus_offsets[c], p = sym.plus_offsets[c];
    ck_assert(sym.minus_source[m] == 1 && sym.plus_source[p] == 1);
    ck_assert(fabs(sym.minus_coefficient[m] - 1 / sqrt(3.0)) < 1e-15 && fabs(sym.plus_coefficient[p] - 1 / sqrt(2.0)) < 1e-15);
    worked_values(&seq, AGGREGATOR_SYMMETRIC, &sym, by_delta, recomputed, before);
    printf("worked example, symmetric: %lld rows listed; row C: -B with %.4f, +B with %.4f; y_C %.4f -> %.4f by the "
           "delta, %.4f recomputed\n",
           (long long)sym.num_rows, sym.minus_coefficient[m], sym.plus_coefficient[p], before[2], by_delta[2],
           recomputed[2]);
    ck_assert(fabs(before[2] - (3 / sqrt(6.0) + 2.5)) < 1e-6);
    ck_assert(fabs(by_delta[2] - 4.0) < 1e-6 && fabs(recomputed[2] - 4.0) < 1e-6);
    ck_assert(aggregation_error(&seq.snapshots[1].graph, x1, 1, AGGREGATOR_SYMMETRIC, by_delta, recomputed) <= TOLERANCE);
    snapshot_delta_free(&sym);
    snapshot_seq_free(&seq);
}
END_TEST

/* Sorts the (source, destination, weight bits) triples so two edge multisets can be compared. */
static int compare_triples(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    for (int i = 0; i < 3; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

static void collect(const csr *g, const uint8_t *skip, uint64_t *triples, int64_t *count)
{
    for (int64_t v = 0; v < g->num_nodes; v++)
        for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++) {
            if (skip && skip[e])
                continue;
            uint32_t bits;
            memcpy(&bits, &g->weight[e], sizeof bits);
            uint64_t *t = triples + 3 * (*count)++;
            t[0] = (uint64_t)g->col[e];
            t[1] = (uint64_t)v;
            t[2] = bits;
        }
}

/* E_{t-1} minus the removed edges plus the added ones is E_t, as a multiset. */
static int64_t check_difference(const snapshot_seq *seq)
{
    int64_t changes = 0;
    for (int64_t t = 1; t < seq->num_snapshots; t++) {
        const csr *before = &seq->snapshots[t - 1].graph, *after = &seq->snapshots[t].graph;
        uint8_t *removed = calloc((size_t)before->num_edges + 1, 1), *added = calloc((size_t)after->num_edges + 1, 1);
        uint64_t *rebuilt = malloc((size_t)(before->num_edges + after->num_edges + 1) * 3 * sizeof(uint64_t));
        uint64_t *expected = malloc((size_t)(after->num_edges + 1) * 3 * sizeof(uint64_t));
        ck_assert(removed && added && rebuilt && expected);
        changes += edge_difference(before, after, removed, added);
        int64_t count = 0, expected_count = 0;
        collect(before, removed, rebuilt, &count);
        uint8_t *kept = malloc((size_t)after->num_edges + 1);
        ck_assert_ptr_nonnull(kept);
        for (int64_t e = 0; e < after->num_edges; e++)
            kept[e] = !added[e];
        collect(after, kept, rebuilt, &count); /* only the added ones */
        collect(after, NULL, expected, &expected_count);
        ck_assert_int_eq(count, expected_count);
        qsort(rebuilt, (size_t)count, 3 * sizeof(uint64_t), compare_triples);
        qsort(expected, (size_t)count, 3 * sizeof(uint64_t), compare_triples);
        ck_assert(memcmp(rebuilt, expected, (size_t)count * 3 * sizeof(uint64_t)) == 0);
        free(removed);
        free(added);
        free(kept);
        free(rebuilt);
        free(expected);
    }
    return changes;
}

START_TEST(difference_rebuilds_the_next_graph)
{
    tf_error err;
    dataset generated;
    /* Under Valgrind the first 12 snapshots: every path, not all 120 differences. */
    const snapshot_seq tennis = first_snapshots(shared_snapshots(tennis_or_generated()), test_repeats(INT64_MAX, 12));
    ck_assert(dataset_load("powerlaw:nodes=500,edges=4000,snapshots=20,churn=0.2,arrival=0.05,seed=2", NULL, &generated,
                           &err) == TF_OK);
    int64_t a = check_difference(&tennis), b = check_difference(&generated.snapshots);
    printf("edge difference: %s (%lld snapshots) %lld changed edges, powerlaw %lld, every E_t rebuilt exactly\n",
           tennis_or_generated(), (long long)tennis.num_snapshots, (long long)a, (long long)b);
    ck_assert(a > 0 && b > 0);
    dataset_free(&generated);
}
END_TEST

/* Threshold 0 against infinity, and the seek property, on twitter_tennis (under Valgrind the first
 * 40 snapshots of tennis_or_generated(): with a full recompute every 16 snapshots, seeks still jump
 * forward, back, across refreshes and within their spans). */
START_TEST(threshold_and_seek)
{
    tf_error err;
    const snapshot_seq prefix = first_snapshots(shared_snapshots(tennis_or_generated()), test_repeats(INT64_MAX, 40));
    const snapshot_seq *seq = &prefix;
    const int64_t n = seq->num_nodes, width = seq->feature_width, count = seq->num_snapshots;
    int64_t *order = in_order(count);
    incremental_options always_full = {0.0, 0};
    chain_result full = run_chain(seq, order, count, AGGREGATOR_SYMMETRIC, &always_full);
    printf("threshold 0 (always full), %lld snapshots: %lld deltas applied, max rel error %.3g\n", (long long)count,
           (long long)full.deltas, full.worst);
    ck_assert_int_eq(full.deltas, 0);
    ck_assert(full.worst <= TOLERANCE);

    /* One aggregator of each kind (linear, normalized, extreme) over the first 60 snapshots. */
    static const aggregator kinds[3] = {AGGREGATOR_SUM, AGGREGATOR_SYMMETRIC, AGGREGATOR_MAX};
    const int64_t visited = count < 60 ? count : 60;
    for (int j = 0; j < 3; j++) {
        const aggregator k = kinds[j];
        snapshot_delta *deltas;
        ck_assert(snapshot_delta_chain_build(&deltas, seq, (aggregator)k, &err) == TF_OK);
        incremental_options options = {INFINITY, 16};
        incremental_aggregation forward, jumping;
        ck_assert(opt_incremental_create(&forward, (aggregator)k, n, width, &options, &err) == TF_OK);
        ck_assert(opt_incremental_create(&jumping, (aggregator)k, n, width, &options, &err) == TF_OK);
        int64_t differing = 0;
        for (int64_t t = 0; t < visited; t++) {
            opt_incremental_seek(&forward, seq, deltas, t);
            /* jumping reaches t from wherever it was: a later snapshot, or one segments away */
            opt_incremental_seek(&jumping, seq, deltas, (t * 37 + 11) % visited);
            opt_incremental_seek(&jumping, seq, deltas, t);
            differing += differing_values(forward.value, jumping.value, n * width);
        }
        printf("seek, %s: %lld values differ in bits between forward and jumping visits (must be 0); "
               "%lld full recomputes, %lld deltas\n",
               aggregator_name((aggregator)k), (long long)differing, (long long)jumping.stats.full,
               (long long)jumping.stats.incremental);
        ck_assert_int_eq(differing, 0);
        opt_incremental_free(&forward);
        opt_incremental_free(&jumping);
        snapshot_delta_chain_free(deltas, count);
    }
    free(order);
}
END_TEST

/* The stateless twin gives the reference's values too (it is the engine's full recompute). */
START_TEST(full_recompute_twin)
{
    tf_error err;
    dataset d;
    load_or_fail("powerlaw:nodes=2000,edges=20000,snapshots=1,features=8,seed=11", &d);
    const snapshot *s = &d.snapshots.snapshots[0];
    const int64_t cells = d.snapshots.num_nodes * d.snapshots.feature_width;
    float *ours = malloc((size_t)cells * sizeof(float)), *reference = malloc((size_t)cells * sizeof(float));
    ck_assert(ours && reference);
    for (int k = 0; k < AGGREGATOR_COUNT; k++) {
        ck_assert(opt_aggregate(&s->graph, s->features.data, d.snapshots.feature_width, (aggregator)k, ours, &err) == TF_OK);
        ck_assert(ref_aggregate(&s->graph, s->features.data, d.snapshots.feature_width, (aggregator)k, reference, &err) ==
                  TF_OK);
        double worst = relative_error(ours, reference, cells);
        int64_t differing = differing_values(ours, reference, cells);
        printf("opt_aggregate %-9s: max rel error %.3g, %lld values differ in bits\n", aggregator_name((aggregator)k),
               worst, (long long)differing);
        ck_assert(worst <= TOLERANCE);
        if (k == AGGREGATOR_MAX || k == AGGREGATOR_MIN)
            ck_assert_int_eq(differing, 0);
    }
    free(ours);
    free(reference);
    dataset_free(&d);
}
END_TEST

START_TEST(bad_input)
{
    tf_error err;
    aggregator kind;
    EXPECT_INPUT_ERROR(aggregator_parse("median", &kind, &err), &err, "median", "sum, mean, symmetric, chebyshev, max or min");
    snapshot_seq a, b;
    ck_assert(snapshot_seq_alloc(&a, 1, 4, 2, 1, &err) == TF_OK);
    ck_assert(snapshot_seq_alloc(&b, 1, 5, 2, 1, &err) == TF_OK);
    snapshot_delta delta;
    EXPECT_INPUT_ERROR(snapshot_delta_build(&delta, &a.snapshots[0], &b.snapshots[0], AGGREGATOR_SUM, &err), &err,
                       "different shapes");
    snapshot_seq_free(&a);
    snapshot_seq_free(&b);
}
END_TEST

int main(void)
{
    opt_set_threads(2);
    Suite *s = suite_create("incremental");
    TCase *tc = tcase_create("incremental");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, real_data_chains);
    tcase_add_test(tc, generated_chains);
    tcase_add_test(tc, integer_sums_are_bitwise);
    tcase_add_test(tc, crafted_max_min);
    tcase_add_test(tc, emptied_rows_and_loops);
    tcase_add_test(tc, difference_rebuilds_the_next_graph);
    tcase_add_test(tc, threshold_and_seek);
    tcase_add_test(tc, full_recompute_twin);
    tcase_add_test(tc, bad_input);
    suite_add_tcase(s, tc);
    /* its own case, so CK_RUN_CASE=worked_example runs it alone (chapter 02's Try it) */
    TCase *worked = tcase_create("worked_example");
    tcase_set_timeout(worked, 60); /* tiny, but Valgrind on a loaded machine is slow to start */
    tcase_add_test(worked, worked_example);
    suite_add_tcase(s, worked);
    const int status = run_suite(s);
    shared_snapshots_free();
    return status;
}
