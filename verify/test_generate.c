/* The generators against their documented contract: every property is measured here from the
 * generated data (sets of edges, degrees, repeated pairs, timestamp gaps) and compared with
 * what the parameters promise, never with numbers copied from an earlier run. */
#include <math.h>
#include <stdint.h>

#include "datasets/generate.h"
#include "ref/core/memory.h"
#include "ref/data/snapshot.h"
#include "verify/testing.h"

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The edges of a snapshot as sorted src<<32|dst keys (caller frees). */
static uint64_t *sorted_edge_keys(const csr *g)
{
    uint64_t *keys = malloc((size_t)(g->num_edges ? g->num_edges : 1) * sizeof *keys);
    ck_assert_ptr_nonnull(keys);
    for (int64_t v = 0; v < g->num_nodes; v++)
        for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++)
            keys[e] = (uint64_t)(uint32_t)g->col[e] << 32 | (uint32_t)v;
    qsort(keys, (size_t)g->num_edges, sizeof *keys, compare_u64);
    return keys;
}

/* How many keys of sorted `a` are not in sorted `b` (both without duplicates). */
static int64_t count_missing(const uint64_t *a, int64_t na, const uint64_t *b, int64_t nb)
{
    int64_t missing = 0, j = 0;
    for (int64_t i = 0; i < na; i++) {
        while (j < nb && b[j] < a[i])
            j++;
        missing += j == nb || b[j] != a[i];
    }
    return missing;
}

static void generate_or_fail(const powerlaw_params *p, snapshot_seq *out)
{
    tf_error err;
    ck_assert_msg(generate_powerlaw(p, out, &err) == TF_OK, "%s", err.message);
}

/* The memory limit is process-global and the suite runs in one process (CK_FORK=no). */
static void clear_memory_limit(void) { tf_set_memory_limit(0); }

/* ---- generate_powerlaw ---------------------------------------------------------------------- */

static void small_params(powerlaw_params *p)
{
    powerlaw_params_default(p);
    p->num_nodes = 400;
    p->num_edges = 2000;
    p->num_snapshots = 6;
    p->churn = 0.05;
    p->vertex_churn = 0.1;
    p->seed = 3;
}

START_TEST(powerlaw_is_deterministic)
{
    powerlaw_params p;
    small_params(&p);
    snapshot_seq a, b, c;
    generate_or_fail(&p, &a);
    generate_or_fail(&p, &b);
    p.seed = 4;
    generate_or_fail(&p, &c);
    int same_seed = snapshot_seq_equal(&a, &b), other_seed = snapshot_seq_equal(&a, &c);
    printf("powerlaw: seed 3 twice %s; seeds 3 and 4 %s\n", same_seed ? "identical" : "DIFFER",
           other_seed ? "IDENTICAL" : "differ");
    ck_assert(same_seed);
    ck_assert(!other_seed);
    snapshot_seq_free(&a);
    snapshot_seq_free(&b);
    snapshot_seq_free(&c);
}
END_TEST

START_TEST(powerlaw_snapshot_invariants)
{
    powerlaw_params p;
    small_params(&p);
    snapshot_seq s;
    generate_or_fail(&p, &s);
    ck_assert_int_eq(s.num_snapshots, p.num_snapshots);
    ck_assert_int_eq(s.num_nodes, p.num_nodes);
    ck_assert_int_eq(s.feature_width, p.feature_width);
    ck_assert_int_eq(s.target_width, 1);
    /* generate.c starts llround(vertex_churn N) vertices absent, and each step departs that
     * many present vertices and brings back as many absent ones, so the count never moves. */
    const int64_t expected_present = p.num_nodes - llround(p.vertex_churn * (double)p.num_nodes);
    int64_t wrong_edge_counts = 0, self_loops = 0, duplicates = 0, edges_touching_absent = 0;
    int64_t absent_nonzero = 0, wrong_present = 0, presence_changes = 0;
    for (int64_t t = 0; t < s.num_snapshots; t++) {
        const snapshot *snap = &s.snapshots[t];
        const csr *g = &snap->graph;
        wrong_edge_counts += g->num_edges != p.num_edges;
        int64_t present = 0;
        for (int64_t v = 0; v < s.num_nodes; v++) {
            present += snap->present[v] != 0;
            if (t > 0)
                presence_changes += snap->present[v] != s.snapshots[t - 1].present[v];
            if (snap->present[v])
                continue;
            for (int64_t k = 0; k < s.feature_width; k++)
                absent_nonzero += snap->features.data[v * s.feature_width + k] != 0;
            absent_nonzero += snap->targets.data[v] != 0;
        }
        wrong_present += present != expected_present;
        for (int64_t v = 0; v < g->num_nodes; v++)
            for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++) {
                self_loops += g->col[e] == v;
                edges_touching_absent += !snap->present[v] || !snap->present[g->col[e]];
            }
        uint64_t *keys = sorted_edge_keys(g);
        for (int64_t i = 1; i < g->num_edges; i++)
            duplicates += keys[i] == keys[i - 1];
        free(keys);
        printf("powerlaw snapshot %lld: %lld edges, %lld present (expected %lld)\n", (long long)t,
               (long long)g->num_edges, (long long)present, (long long)expected_present);
    }
    printf("powerlaw N=%lld E=%lld T=%lld vertex_churn=%g: %lld wrong edge counts, %lld self loops, %lld duplicate "
           "edges, %lld edges touching absent vertices, %lld nonzero features/targets of absent vertices, %lld "
           "wrong present counts, %lld presence changes over all steps\n",
           (long long)p.num_nodes, (long long)p.num_edges, (long long)p.num_snapshots, p.vertex_churn,
           (long long)wrong_edge_counts, (long long)self_loops, (long long)duplicates,
           (long long)edges_touching_absent, (long long)absent_nonzero, (long long)wrong_present,
           (long long)presence_changes);
    ck_assert_int_eq(wrong_edge_counts, 0);
    ck_assert_int_eq(self_loops, 0);
    ck_assert_int_eq(duplicates, 0);
    ck_assert_int_eq(edges_touching_absent, 0);
    ck_assert_int_eq(absent_nonzero, 0);
    ck_assert_int_eq(wrong_present, 0);
    /* 40 depart and 40 arrive per step: 80 flips in each of the 5 steps. */
    ck_assert_int_eq(presence_changes, 2 * (p.num_nodes - expected_present) * (p.num_snapshots - 1));
    snapshot_edge_stats stats = snapshot_seq_edge_stats(&s);
    ck_assert_int_eq(stats.min_edges, p.num_edges);
    ck_assert_int_eq(stats.max_edges, p.num_edges);
    snapshot_seq_free(&s);
}
END_TEST

START_TEST(powerlaw_edge_churn)
{
    /* Between snapshots, llround(churn E) edges are removed and as many drawn again. A new
     * draw can land on a pair just removed (likely between two hubs), so the fraction of
     * snapshot t-1's edges missing from t is at most llround(churn E) / E and a little below.
     * The allowance below churn is 10% of churn: re-drawing a removed pair needs the same
     * pair twice among E draws, rare except among the few hub pairs. */
    const double churns[3] = {0.01, 0.1, 0.5};
    for (int c = 0; c < 3; c++) {
        powerlaw_params p;
        powerlaw_params_default(&p);
        p.num_nodes = 1000;
        p.num_edges = 5000;
        p.num_snapshots = 6;
        p.churn = churns[c];
        p.vertex_churn = 0;
        p.seed = 11;
        snapshot_seq s;
        generate_or_fail(&p, &s);
        const double upper = (double)llround(p.churn * (double)p.num_edges) / (double)p.num_edges;
        double lowest = 1, highest = 0;
        int64_t duplicates = 0;
        for (int64_t t = 1; t < s.num_snapshots; t++) {
            const csr *before = &s.snapshots[t - 1].graph, *after = &s.snapshots[t].graph;
            uint64_t *a = sorted_edge_keys(before), *b = sorted_edge_keys(after);
            /* Heavy removal stresses the generator's hash deletions: a stale entry would let
             * a pair be added twice. */
            for (int64_t i = 1; i < after->num_edges; i++)
                duplicates += b[i] == b[i - 1];
            int64_t missing = count_missing(a, before->num_edges, b, after->num_edges);
            int64_t added = count_missing(b, after->num_edges, a, before->num_edges);
            free(a);
            free(b);
            /* Same edge count on both sides: every removal was replaced by one addition. */
            ck_assert_int_eq(missing, added);
            double fraction = (double)missing / (double)before->num_edges;
            lowest = fraction < lowest ? fraction : lowest;
            highest = fraction > highest ? fraction : highest;
        }
        printf("churn requested %.2f: fraction of edges replaced per step %.4f..%.4f (allowed %.4f..%.4f), %lld "
               "duplicate edges\n",
               p.churn, lowest, highest, p.churn * 0.9, upper, (long long)duplicates);
        ck_assert_int_eq(duplicates, 0);
        ck_assert_double_le(highest, upper);
        ck_assert_double_ge(lowest, p.churn * 0.9);
        snapshot_seq_free(&s);
    }
}
END_TEST

/* In-degrees of snapshot 0 of a one-snapshot graph: largest and mean. */
static void degree_skew(double exponent, int64_t *max_degree, double *mean_degree)
{
    powerlaw_params p;
    powerlaw_params_default(&p);
    p.num_nodes = 20000;
    p.num_edges = 200000;
    p.num_snapshots = 1;
    p.exponent = exponent;
    p.feature_width = 1;
    p.seed = 5;
    snapshot_seq s;
    generate_or_fail(&p, &s);
    const csr *g = &s.snapshots[0].graph;
    /* Rows are destinations, so a row's length is the vertex's in-degree. */
    int64_t total = 0, largest = 0;
    for (int64_t v = 0; v < g->num_nodes; v++) {
        int64_t degree = g->row_ptr[v + 1] - g->row_ptr[v];
        total += degree;
        largest = degree > largest ? degree : largest;
    }
    ck_assert_int_eq(total, p.num_edges);
    *max_degree = largest;
    *mean_degree = (double)total / (double)p.num_nodes;
    snapshot_seq_free(&s);
}

START_TEST(powerlaw_degree_skew)
{
    int64_t max_22, max_25, max_40;
    double mean_22, mean_25, mean_40;
    degree_skew(2.2, &max_22, &mean_22);
    degree_skew(2.5, &max_25, &mean_25);
    degree_skew(4.0, &max_40, &mean_40);
    printf("powerlaw N=20000 E=200000: max in-degree %lld / %lld / %lld for exponent 2.2 / 2.5 / 4.0, mean %.1f; "
           "max/mean at 2.5 = %.1f\n",
           (long long)max_22, (long long)max_25, (long long)max_40, mean_25, (double)max_25 / mean_25);
    /* An Erdos-Renyi graph of the same density would have max in-degree near mean + 4 sqrt(mean),
     * about 2.3 x mean; a power-law tail puts hubs far above that. */
    ck_assert_double_gt((double)max_25, 20 * mean_25);
    /* A steeper tail (larger exponent) means smaller hubs. */
    ck_assert_int_gt(max_22, max_25);
    ck_assert_int_gt(max_25, max_40);
}
END_TEST

START_TEST(powerlaw_features_and_targets)
{
    powerlaw_params p;
    small_params(&p);
    snapshot_seq s;
    generate_or_fail(&p, &s);
    const int64_t n = s.num_nodes, f = s.feature_width;
    double *in_weight = malloc((size_t)n * sizeof *in_weight);
    int64_t *out_degree = malloc((size_t)n * sizeof *out_degree);
    ck_assert(in_weight && out_degree);
    double worst_target = 0, worst_in = 0, worst_out = 0;
    int64_t checked = 0, nonzero_targets = 0;
    for (int64_t t = 0; t < s.num_snapshots; t++) {
        const snapshot *now = &s.snapshots[t];
        /* The target looks one snapshot ahead; the last snapshot predicts itself. */
        const int64_t next = t + 1 < s.num_snapshots ? t + 1 : t;
        for (int pass = 0; pass < 2; pass++) {
            const csr *g = &s.snapshots[pass == 0 ? t : next].graph;
            memset(in_weight, 0, (size_t)n * sizeof *in_weight);
            memset(out_degree, 0, (size_t)n * sizeof *out_degree);
            for (int64_t v = 0; v < n; v++)
                for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++) {
                    in_weight[v] += g->weight[e];
                    out_degree[g->col[e]]++;
                }
            for (int64_t v = 0; v < n; v++) {
                if (!now->present[v])
                    continue;
                if (pass == 0) {
                    double in_error = fabs(now->features.data[v * f] - log1p(in_weight[v]));
                    double out_error = fabs(now->features.data[v * f + 1] - log1p((double)out_degree[v]));
                    worst_in = in_error > worst_in ? in_error : worst_in;
                    worst_out = out_error > worst_out ? out_error : worst_out;
                } else {
                    double error = fabs(now->targets.data[v] - log1p(in_weight[v]));
                    worst_target = error > worst_target ? error : worst_target;
                    nonzero_targets += now->targets.data[v] != 0;
                    checked++;
                }
            }
        }
    }
    printf("powerlaw features/targets over %lld present vertex-snapshots (%lld nonzero targets): max error "
           "feature 0 (log1p weighted in-degree) %.3g, feature 1 (log1p out-degree) %.3g, target (log1p weighted "
           "in-degree at t+1) %.3g\n",
           (long long)checked, (long long)nonzero_targets, worst_in, worst_out, worst_target);
    /* Both sides sum in double and round once to float: within float rounding of values < 16. */
    ck_assert_double_le(worst_in, 1e-5);
    ck_assert_double_le(worst_out, 1e-5);
    ck_assert_double_le(worst_target, 1e-5);
    ck_assert_int_gt(nonzero_targets, checked / 4); /* the comparison was not vacuous */
    free(in_weight);
    free(out_degree);
    snapshot_seq_free(&s);
}
END_TEST

typedef struct progress_log {
    int calls;
    int64_t last_done, total;
    int in_order;
} progress_log;

static void record_progress(void *context, const char *stage, int64_t done, int64_t total)
{
    progress_log *log = context;
    (void)stage;
    log->in_order &= done == log->last_done + 1;
    log->last_done = done;
    log->total = total;
    log->calls++;
}

START_TEST(powerlaw_reports_progress)
{
    powerlaw_params p;
    small_params(&p);
    progress_log log = {0, 0, 0, 1};
    p.progress = record_progress;
    p.progress_context = &log;
    snapshot_seq s;
    generate_or_fail(&p, &s);
    printf("progress: %d calls, last %lld of %lld, in order %d\n", log.calls, (long long)log.last_done,
           (long long)log.total, log.in_order);
    ck_assert_int_eq(log.calls, p.num_snapshots);
    ck_assert_int_eq(log.last_done, p.num_snapshots);
    ck_assert_int_eq(log.total, p.num_snapshots);
    ck_assert(log.in_order);
    snapshot_seq_free(&s);
}
END_TEST

/* growth=K: snapshot t has round(E (1 + (K - 1) t / (T - 1))) edges, here E = 1000, K = 4,
 * T = 7: 1000, 1500, 2000, ..., 4000 (exact halves do not occur: (K - 1) E / (T - 1) = 500). */
START_TEST(powerlaw_growth)
{
    powerlaw_params p;
    small_params(&p);
    p.num_edges = 1000;
    p.num_snapshots = 7;
    p.growth = 4;
    snapshot_seq s;
    generate_or_fail(&p, &s);
    int64_t wrong = 0;
    for (int64_t t = 0; t < s.num_snapshots; t++) {
        const int64_t expected = 1000 + 500 * t;
        printf("powerlaw growth=4 snapshot %lld: %lld edges (expected %lld)\n", (long long)t,
               (long long)s.snapshots[t].graph.num_edges, (long long)expected);
        wrong += s.snapshots[t].graph.num_edges != expected || powerlaw_edges_at(&p, t) != expected;
    }
    ck_assert_int_eq(wrong, 0);
    snapshot_seq_free(&s);
    tf_error err;
    p.growth = 0.5;
    EXPECT_INPUT_ERROR(generate_powerlaw(&p, &s, &err), &err, "growth=0.5", "[1, 1000]");
    /* the density check is made on the largest snapshot: 320 present vertices allow 25520 edges,
     * the last snapshot would need 2000 x 25 = 50000 */
    p.growth = 25;
    p.num_edges = 2000;
    EXPECT_INPUT_ERROR(generate_powerlaw(&p, &s, &err), &err, "too dense", "edges=2000 with growth=25 (50000 in the last snapshot)");
}
END_TEST

START_TEST(powerlaw_rejects_invalid_parameters)
{
    powerlaw_params p;
    snapshot_seq s;
    tf_error err;

    powerlaw_params_default(&p);
    p.num_nodes = 1;
    EXPECT_INPUT_ERROR(generate_powerlaw(&p, &s, &err), &err, "nodes=1");
    powerlaw_params_default(&p);
    p.exponent = 2.0;
    EXPECT_INPUT_ERROR(generate_powerlaw(&p, &s, &err), &err, "exponent=2", "(2, 100)");
    powerlaw_params_default(&p);
    p.churn = 1.5;
    EXPECT_INPUT_ERROR(generate_powerlaw(&p, &s, &err), &err, "churn=1.5");
    powerlaw_params_default(&p);
    p.vertex_churn = 0.7;
    EXPECT_INPUT_ERROR(generate_powerlaw(&p, &s, &err), &err, "0.7");
    powerlaw_params_default(&p);
    p.num_snapshots = 0;
    EXPECT_INPUT_ERROR(generate_powerlaw(&p, &s, &err), &err, "snapshots=0");
    powerlaw_params_default(&p);
    p.feature_width = 0;
    EXPECT_INPUT_ERROR(generate_powerlaw(&p, &s, &err), &err, "features=0");
    /* 10 vertices hold at most 90 directed edges without loops; 1000 cannot fit. */
    powerlaw_params_default(&p);
    p.num_nodes = 10;
    p.num_edges = 1000;
    EXPECT_INPUT_ERROR(generate_powerlaw(&p, &s, &err), &err, "too dense", "edges=1000");
    ck_assert_ptr_null(s.snapshots);

    /* 2e9 vertices and 4e10 edges per snapshot pass the density check but need terabytes:
     * refused up front, before anything is allocated. */
    powerlaw_params_default(&p);
    p.num_nodes = 2000000000;
    p.num_edges = 40000000000;
    EXPECT_INPUT_ERROR(generate_powerlaw(&p, &s, &err), &err, "too large for memory");
    ck_assert_ptr_null(s.snapshots);
    ck_assert_int_eq(s.num_snapshots, 0);

    /* A modest graph under a tiny --memory-limit is refused the same way. */
    powerlaw_params_default(&p);
    tf_set_memory_limit(64 << 10);
    int status = generate_powerlaw(&p, &s, &err);
    tf_set_memory_limit(0);
    EXPECT_INPUT_ERROR(status, &err, "too large for memory", "--memory-limit");
    ck_assert_ptr_null(s.snapshots);
}
END_TEST

/* ---- generate_events ------------------------------------------------------------------------ */

static void generate_events_or_fail(const event_params *p, event_stream *out)
{
    tf_error err;
    ck_assert_msg(generate_events(p, out, &err) == TF_OK, "%s", err.message);
}

/* Fraction of events whose (src, dst) pair occurred at an earlier event: events minus
 * distinct pairs, counted here by sorting. */
static double repeated_fraction(const event_stream *es, int64_t *distinct_out)
{
    uint64_t *keys = malloc((size_t)es->num_events * sizeof *keys);
    ck_assert_ptr_nonnull(keys);
    for (int64_t i = 0; i < es->num_events; i++)
        keys[i] = (uint64_t)(uint32_t)es->src[i] << 32 | (uint32_t)es->dst[i];
    qsort(keys, (size_t)es->num_events, sizeof *keys, compare_u64);
    int64_t distinct = es->num_events > 0;
    for (int64_t i = 1; i < es->num_events; i++)
        distinct += keys[i] != keys[i - 1];
    free(keys);
    *distinct_out = distinct;
    return (double)(es->num_events - distinct) / (double)es->num_events;
}

START_TEST(events_stream_invariants)
{
    event_params p;
    event_params_default(&p);
    p.num_nodes = 1000;
    p.num_events = 20000;
    p.feature_width = 3;
    p.seed = 17;
    event_stream es;
    generate_events_or_fail(&p, &es);
    tf_error err;
    ck_assert_msg(event_stream_validate(&es, "generated", &err) == TF_OK, "%s", err.message);
    ck_assert_int_eq(es.num_events, p.num_events);
    ck_assert_int_eq(es.num_nodes, p.num_nodes);
    ck_assert_int_eq(es.feature_width, p.feature_width);
    int64_t decreasing = 0, out_of_range = 0, self_loops = 0, not_integer = 0, ties = 0;
    for (int64_t i = 0; i < es.num_events; i++) {
        decreasing += i > 0 && es.time[i] < es.time[i - 1];
        ties += i > 0 && es.time[i] == es.time[i - 1];
        out_of_range += es.src[i] < 0 || es.src[i] >= p.num_nodes || es.dst[i] < 0 || es.dst[i] >= p.num_nodes;
        /* A repeated event copies an earlier pair, which was itself drawn with src != dst. */
        self_loops += es.src[i] == es.dst[i];
        not_integer += es.time[i] != floor(es.time[i]);
    }
    /* Gaps are floor(X), X exponential with mean 5: P(gap = 0) = P(X < 1) = 1 - e^(-1/5) and
     * E[gap] = sum_{k>=1} P(X >= k) = e^(-1/5) / (1 - e^(-1/5)). Standard errors over 20000
     * gaps: 0.0027 for the tie fraction and 0.035 for the mean gap. */
    const double expected_ties = 1 - exp(-0.2), expected_gap = exp(-0.2) / (1 - exp(-0.2));
    double tie_fraction = (double)ties / (double)(es.num_events - 1);
    double mean_gap = (es.time[es.num_events - 1] - es.time[0]) / (double)(es.num_events - 1);
    printf("events N=%lld E=%lld: %lld decreasing times, %lld ids out of range, %lld self loops, %lld non-integer "
           "times; %lld events share the previous timestamp (fraction %.4f, expected %.4f); mean gap %.3f "
           "(expected %.3f)\n",
           (long long)p.num_nodes, (long long)p.num_events, (long long)decreasing, (long long)out_of_range,
           (long long)self_loops, (long long)not_integer, (long long)ties, tie_fraction, expected_ties, mean_gap,
           expected_gap);
    ck_assert_int_eq(decreasing, 0);
    ck_assert_int_eq(out_of_range, 0);
    ck_assert_int_eq(self_loops, 0);
    ck_assert_int_eq(not_integer, 0);
    ck_assert_int_gt(ties, 0);
    ck_assert_double_eq_tol(tie_fraction, expected_ties, 0.02);
    ck_assert_double_eq_tol(mean_gap, expected_gap, 0.2);

    /* Features are standard normal: every column filled, mean 0 and variance 1 within
     * about seven standard errors (0.007 and 0.01). */
    ck_assert_ptr_nonnull(es.features);
    for (int64_t k = 0; k < p.feature_width; k++) {
        double sum = 0, square = 0;
        int64_t nonzero = 0;
        for (int64_t i = 0; i < es.num_events; i++) {
            double x = es.features[i * p.feature_width + k];
            sum += x;
            square += x * x;
            nonzero += x != 0;
        }
        double mean = sum / (double)es.num_events, variance = square / (double)es.num_events - mean * mean;
        printf("event feature column %lld: %lld nonzero, mean %.4f, variance %.4f\n", (long long)k,
               (long long)nonzero, mean, variance);
        ck_assert_int_eq(nonzero, es.num_events);
        ck_assert_double_eq_tol(mean, 0.0, 0.05);
        ck_assert_double_eq_tol(variance, 1.0, 0.1);
    }
    ck_assert_ptr_null(es.label);
    event_stream_free(&es);

    /* Without feature columns there is no feature array. */
    p.feature_width = 0;
    generate_events_or_fail(&p, &es);
    ck_assert_ptr_null(es.features);
    event_stream_free(&es);
}
END_TEST

START_TEST(events_repeat_probability)
{
    event_params p;
    event_params_default(&p);
    p.num_nodes = 1000;
    p.num_events = 20000;
    p.seed = 23;
    event_stream fresh, repeating;
    p.repeat = 0.0;
    generate_events_or_fail(&p, &fresh);
    p.repeat = 0.9;
    generate_events_or_fail(&p, &repeating);
    int64_t distinct_fresh, distinct_repeating;
    double fraction_fresh = repeated_fraction(&fresh, &distinct_fresh);
    double fraction_repeating = repeated_fraction(&repeating, &distinct_repeating);
    printf("events: fraction whose pair occurred earlier: repeat 0.0 -> %.4f, repeat 0.9 -> %.4f "
           "(distinct pairs %lld and %lld)\n",
           fraction_fresh, fraction_repeating, (long long)distinct_fresh, (long long)distinct_repeating);
    /* The library's own count of distinct pairs agrees with the sort above. */
    ck_assert_int_eq(event_stream_distinct_pairs(&fresh), distinct_fresh);
    ck_assert_int_eq(event_stream_distinct_pairs(&repeating), distinct_repeating);
    /* Each event after the first repeats with probability 0.9 and a fresh draw may still hit an
     * earlier pair, so the fraction is at least 0.9 less sampling noise (standard error
     * 0.0021 over 20000 events; allowance 0.02). A fresh draw repeats an earlier pair at most
     * about as often as in the stream without repeats, bounding it above. */
    ck_assert_double_gt(fraction_repeating, fraction_fresh);
    ck_assert_double_ge(fraction_repeating, 0.9 - 0.02);
    ck_assert_double_le(fraction_repeating, 0.9 + 0.1 * fraction_fresh + 0.02);
    event_stream_free(&fresh);
    event_stream_free(&repeating);
}
END_TEST

START_TEST(events_are_deterministic)
{
    event_params p;
    event_params_default(&p);
    p.num_events = 5000;
    p.feature_width = 2;
    p.seed = 8;
    event_stream a, b, c;
    generate_events_or_fail(&p, &a);
    generate_events_or_fail(&p, &b);
    p.seed = 9;
    generate_events_or_fail(&p, &c);
    size_t n = (size_t)a.num_events;
    int same = memcmp(a.src, b.src, n * 4) == 0 && memcmp(a.dst, b.dst, n * 4) == 0 &&
               memcmp(a.time, b.time, n * 8) == 0 && memcmp(a.features, b.features, n * 2 * 4) == 0;
    int64_t differing_pairs = 0;
    for (size_t i = 0; i < n; i++)
        differing_pairs += a.src[i] != c.src[i] || a.dst[i] != c.dst[i];
    printf("events: seed 8 twice %s; seeds 8 and 9 differ in %lld of %zu pairs\n", same ? "identical" : "DIFFER",
           (long long)differing_pairs, n);
    ck_assert(same);
    ck_assert_int_gt(differing_pairs, (int64_t)n / 2);
    event_stream_free(&a);
    event_stream_free(&b);
    event_stream_free(&c);
}
END_TEST

START_TEST(events_reject_invalid_parameters)
{
    event_params p;
    event_stream es;
    tf_error err;
    event_params_default(&p);
    p.num_nodes = 1;
    EXPECT_INPUT_ERROR(generate_events(&p, &es, &err), &err, "nodes=1");
    event_params_default(&p);
    p.num_events = 0;
    EXPECT_INPUT_ERROR(generate_events(&p, &es, &err), &err, "events=0");
    event_params_default(&p);
    p.repeat = 1.0;
    EXPECT_INPUT_ERROR(generate_events(&p, &es, &err), &err, "repeat=1");
    event_params_default(&p);
    p.exponent = 1.5;
    EXPECT_INPUT_ERROR(generate_events(&p, &es, &err), &err, "exponent=1.5");
    event_params_default(&p);
    p.feature_width = -1;
    EXPECT_INPUT_ERROR(generate_events(&p, &es, &err), &err, "features=-1");
    /* 1e12 events need over 16 TB. */
    event_params_default(&p);
    p.num_events = 1000000000000;
    EXPECT_INPUT_ERROR(generate_events(&p, &es, &err), &err, "too large for memory");
    ck_assert_ptr_null(es.src);
}
END_TEST

/* ---- generate_communities ------------------------------------------------------------------ */

static void community_or_fail(const community_params *p, snapshot_seq *out)
{
    tf_error err;
    ck_assert_msg(generate_communities(p, out, &err) == TF_OK, "%s", err.message);
    ck_assert_msg(snapshot_seq_validate(out, "communities", &err) == TF_OK, "%s", err.message);
}

/* Every vertex labelled: the labels are the communities, so what moves can be counted. */
static void community_small(community_params *p)
{
    community_params_default(p);
    p->num_nodes = 400;
    p->num_edges = 4000;
    p->num_snapshots = test_repeats(6, 3); /* 3 under Valgrind: still 12000 edges for the shares */
    p->change = 0.05;
    p->labelled = 1;
    p->seed = 3;
}

START_TEST(communities_are_deterministic)
{
    community_params p;
    community_small(&p);
    snapshot_seq a, b, c;
    community_or_fail(&p, &a);
    community_or_fail(&p, &b);
    p.seed = 4;
    community_or_fail(&p, &c);
    const int same_seed = snapshot_seq_equal(&a, &b), other_seed = snapshot_seq_equal(&a, &c);
    printf("communities: seed 3 twice %s; seeds 3 and 4 %s\n", same_seed ? "identical" : "DIFFER",
           other_seed ? "IDENTICAL" : "differ");
    ck_assert(same_seed && !other_seed);
    snapshot_seq_free(&a);
    snapshot_seq_free(&b);
    snapshot_seq_free(&c);
}
END_TEST

/* Exactly round(change N) vertices move each step, each to another community; the edges are
 * distinct, without loops, as many as asked, and a `homophily` share of them (plus the uniform
 * draws that land inside by chance, 1/C of the rest) joins a community to itself; the planted
 * feature column carries the signal, 1 above the others on average. */
START_TEST(communities_move_and_cluster)
{
    community_params p;
    community_small(&p);
    snapshot_seq seq;
    community_or_fail(&p, &seq);
    const int64_t n = p.num_nodes, f = p.feature_width, movers = (int64_t)llround(p.change * (double)n);
    int64_t inside = 0, edges = 0;
    double planted = 0, other = 0;
    for (int64_t t = 0; t < p.num_snapshots; t++) {
        const snapshot *s = &seq.snapshots[t];
        ck_assert_int_eq(s->graph.num_edges, p.num_edges);
        uint64_t *keys = sorted_edge_keys(&s->graph);
        for (int64_t e = 1; e < s->graph.num_edges; e++)
            ck_assert(keys[e] != keys[e - 1]);
        free(keys);
        for (int64_t v = 0; v < n; v++)
            for (int64_t e = s->graph.row_ptr[v]; e < s->graph.row_ptr[v + 1]; e++) {
                ck_assert(s->graph.col[e] != v);
                inside += s->labels[s->graph.col[e]] == s->labels[v];
                edges++;
            }
        int64_t moved = 0;
        for (int64_t v = 0; t > 0 && v < n; v++)
            moved += s->labels[v] != seq.snapshots[t - 1].labels[v];
        ck_assert_int_eq(moved, t > 0 ? movers : 0);
        for (int64_t v = 0; v < n; v++)
            for (int64_t k = 0; k < f; k++)
                *(k == s->labels[v] % f ? &planted : &other) += s->features.data[v * f + k];
    }
    const double share = (double)inside / (double)edges;
    const double expected = p.homophily + (1 - p.homophily) / (double)p.num_classes;
    planted /= (double)(n * p.num_snapshots);
    other /= (double)(n * p.num_snapshots * (f - 1));
    printf("communities: %lld of %lld vertices move per step; %.4f of the edges inside a community (expected about "
           "%.4f); planted feature column mean %.3f, the others %.3f\n", (long long)movers, (long long)n, share,
           expected, planted, other);
    ck_assert(fabs(share - expected) < 0.03);
    ck_assert(fabs(planted - 1) < 0.1 && fabs(other) < 0.1);
    snapshot_seq_free(&seq);
}
END_TEST

/* A `labelled` share of the vertices carries a label, drawn per snapshot. */
START_TEST(communities_label_a_share)
{
    community_params p;
    community_small(&p);
    p.labelled = 0.6;
    snapshot_seq seq;
    community_or_fail(&p, &seq);
    int64_t labelled = 0, changed = 0;
    for (int64_t t = 0; t < p.num_snapshots; t++)
        for (int64_t v = 0; v < p.num_nodes; v++) {
            labelled += seq.snapshots[t].labels[v] != SNAPSHOT_UNLABELLED;
            changed += t > 0 && (seq.snapshots[t].labels[v] == SNAPSHOT_UNLABELLED) !=
                                    (seq.snapshots[t - 1].labels[v] == SNAPSHOT_UNLABELLED);
        }
    const double share = (double)labelled / (double)(p.num_nodes * p.num_snapshots);
    printf("communities: labelled=0.6 labels %.4f of the vertices; %lld times a vertex's mask changed between "
           "snapshots\n", share, (long long)changed);
    ck_assert(fabs(share - p.labelled) < 0.03);
    ck_assert(changed > 0);
    snapshot_seq_free(&seq);
}
END_TEST

START_TEST(communities_reject_invalid_parameters)
{
    community_params p;
    snapshot_seq seq;
    tf_error err;
    static const char *const expected[] = {"classes=1", "change=1.5", "homophily=-0.1", "labelled=0", "noise=-1",
                                           "features=0", "edges=100,", "nodes=1"};
    for (int which = 0; which < 8; which++) {
        community_params_default(&p);
        p.num_nodes = which == 7 ? 1 : 20;
        p.num_edges = which == 6 ? 100 : 40; /* 20 vertices hold a quarter of 380 pairs: 95 */
        p.num_classes = which == 0 ? 1 : 3;
        p.change = which == 1 ? 1.5 : p.change;
        p.homophily = which == 2 ? -0.1 : p.homophily;
        p.labelled = which == 3 ? 0 : p.labelled;
        p.noise = which == 4 ? -1 : p.noise;
        p.feature_width = which == 5 ? 0 : p.feature_width;
        EXPECT_INPUT_ERROR(generate_communities(&p, &seq, &err), &err, "communities: ", expected[which]);
        ck_assert_ptr_null(seq.snapshots);
    }
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("generate");
    TCase *powerlaw = tcase_create("powerlaw");
    tcase_set_timeout(powerlaw, 300);
    tcase_add_checked_fixture(powerlaw, NULL, clear_memory_limit);
    tcase_add_test(powerlaw, powerlaw_is_deterministic);
    tcase_add_test(powerlaw, powerlaw_snapshot_invariants);
    tcase_add_test(powerlaw, powerlaw_edge_churn);
    tcase_add_test(powerlaw, powerlaw_degree_skew);
    tcase_add_test(powerlaw, powerlaw_features_and_targets);
    tcase_add_test(powerlaw, powerlaw_reports_progress);
    tcase_add_test(powerlaw, powerlaw_rejects_invalid_parameters);
    tcase_add_test(powerlaw, powerlaw_growth);
    suite_add_tcase(suite, powerlaw);

    TCase *events = tcase_create("events");
    tcase_set_timeout(events, 300);
    tcase_add_test(events, events_stream_invariants);
    tcase_add_test(events, events_repeat_probability);
    tcase_add_test(events, events_are_deterministic);
    tcase_add_test(events, events_reject_invalid_parameters);
    TCase *communities = tcase_create("communities");
    tcase_set_timeout(communities, 120);
    tcase_add_test(communities, communities_are_deterministic);
    tcase_add_test(communities, communities_move_and_cluster);
    tcase_add_test(communities, communities_label_a_share);
    tcase_add_test(communities, communities_reject_invalid_parameters);
    suite_add_tcase(suite, communities);
    suite_add_tcase(suite, events);
    return run_suite(suite);
}
