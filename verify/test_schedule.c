/* DyGNeX schedules (ref/schedule.h, opt/schedule.h, opt/schedule_ilp.h) and the group cost model
 * (ref/schedule_cost.h):
 *  - every method gives a valid schedule (each group once, <= L per rank and iteration, no empty
 *    iteration) on random, tied and real-data times, and its cost recomputed here by a naive loop;
 *  - the optimized greedy equals the reference greedy bit for bit, on 1 and 2 threads (120 random
 *    instances and the real-data costs);
 *  - the fixes to the paper's greedy, and the chapter's worked example derived by hand;
 *  - LPT is optimal for one group per rank (against exhaustive search); the ILP against
 *    exhaustive search, within its gap, and its limits;
 *  - the cost model fit, the balance pass, the simulator, and bad input;
 *  - the reference epoch of the round-robin schedule is the trainer's epoch, bit for bit.
 * Two suites (CK_RUN_SUITE): "schedule" (unit, under Valgrind) and "schedule_slow" (slow: larger
 * ILP solves against exhaustive search, and the ILP on real-data costs). */
#include <math.h>

#include "datasets/dataset.h"
#include "opt/kernels.h"
#include "opt/schedule.h"
#include "opt/schedule_ilp.h"
#include "opt/schedule_simulate.h"
#include "ref/core/rng.h"
#include "ref/schedule.h"
#include "ref/schedule_cost.h"
#include "verify/testing.h"

/* ---- helpers --------------------------------------------------------------------------------- */

/* The cost of a schedule by the definition, with nothing shared with schedule_evaluate():
 * for every iteration and rank, the load; the iteration's maximum; their sum. */
static double naive_critical_path(const schedule *s, const double *times)
{
    double total = 0;
    for (int64_t i = 0; i < s->iterations; i++) {
        double highest = 0;
        for (int j = 0; j < s->ranks; j++) {
            double load = 0;
            for (int64_t k = 0; k < s->groups; k++)
                if (s->iteration[k] == i && s->rank[k] == j)
                    load += times[k];
            highest = fmax(highest, load);
        }
        total += highest;
    }
    return total;
}

static double *random_times(rng *r, int64_t n, int kind)
{
    double *t = malloc((size_t)n * sizeof *t);
    ck_assert_ptr_nonnull(t);
    for (int64_t k = 0; k < n; k++)
        t[k] = kind == 0 ? 0.1 + rng_uniform(r) : kind == 1 ? 2.5 : (double)(1 + rng_below(r, 3));
    return t;
}

/* Linear-model times of the windows (window 4, stride 1, the trainer's default split) of a dataset,
 * at most the first 120 (chickenpox has 413: the greedy's n^3 would dominate the suite under
 * Valgrind). */
static double *load_dataset_times(const char *data, int64_t *groups)
{
    tf_error err;
    dataset d;
    const snapshot_seq *seq = load_snapshots(data, &d);
    train_schedule w = {0};
    w.train_snapshots = (int64_t)(0.8 * (double)seq->num_snapshots);
    w.length = 4;
    w.stride = 1;
    w.windows = w.train_snapshots;
    w.batch = 1;
    w.steps = w.windows;
    int64_t *rows = malloc((size_t)w.windows * sizeof *rows), *edges = malloc((size_t)w.windows * sizeof *edges);
    double *t = malloc((size_t)w.windows * sizeof *t);
    schedule_group_sizes(&w, seq, rows, edges);
    cost_model m;
    ck_assert(cost_model_parse("linear:1e-6,1e-7,1e-4", &m, &err) == TF_OK);
    for (int64_t k = 0; k < w.windows; k++)
        t[k] = cost_model_predict(&m, rows[k], edges[k]);
    *groups = w.windows < 120 ? w.windows : 120;
    free(rows);
    free(edges);
    dataset_free(&d);
    return t;
}

static const char *const real_data[] = {"chickenpox", "england_covid",
                                        "powerlaw:nodes=200,edges=2000,snapshots=30,growth=4"};

/* The times of real_data[d], loaded once for the whole program (parsing is most of the cost
 * under Valgrind). Returns a copy the caller frees. */
static double *dataset_times(const char *data, int64_t *groups)
{
    static double *cached[3];
    static int64_t sizes[3];
    size_t d = 0;
    while (d < 3 && strcmp(real_data[d], data) != 0)
        d++;
    ck_assert(d < 3);
    if (!cached[d])
        cached[d] = load_dataset_times(data, &sizes[d]);
    double *copy = malloc((size_t)sizes[d] * sizeof *copy);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, cached[d], (size_t)sizes[d] * sizeof *copy);
    *groups = sizes[d];
    return copy;
}

/* Checks one schedule and prints its line. */
static void check_schedule(const char *label, const char *method, const schedule *s, const double *times, int ranks)
{
    tf_error err;
    ck_assert_msg(schedule_validate(s, &err) == TF_OK, "%s %s: %s", label, method, err.message);
    schedule_cost cost;
    schedule_evaluate(s, times, 0, &cost);
    const double naive = naive_critical_path(s, times);
    printf("  %-44s %-10s G=%d: %lld iterations, critical path %.6g (naive %.6g), bound %.6g, imbalance %.3f\n",
           label, method, ranks, (long long)s->iterations, cost.critical_path, naive, cost.lower_bound, cost.imbalance);
    ck_assert_msg(fabs(cost.critical_path - naive) <= 1e-12 * fmax(1, naive), "%s %s: %.17g vs %.17g", label, method,
                  cost.critical_path, naive);
    ck_assert(cost.critical_path >= cost.lower_bound * (1 - 1e-12));
}

/* Every method on one instance; ILP only when small. */
static void every_method(const char *label, const double *times, int64_t n, int ranks, int with_ilp)
{
    tf_error err;
    schedule s;
    train_schedule steps = {n, 1, 1, n, ranks, (n + ranks - 1) / ranks, BATCH_CONSECUTIVE};
    ck_assert(ref_schedule_roundrobin(&s, &steps, ranks, &err) == TF_OK);
    check_schedule(label, "roundrobin", &s, times, ranks);
    schedule_free(&s);
    const int64_t most = (n + ranks - 1) / ranks;
    ck_assert(ref_schedule_lpt(&s, times, n, ranks, 2, &err) == TF_OK);
    check_schedule(label, "lpt", &s, times, ranks);
    ck_assert_int_le(s.iterations, most);
    ck_assert(n > ranks || s.iterations == 1);
    schedule_free(&s);
    ck_assert(ref_schedule_greedy(&s, times, n, ranks, &err) == TF_OK);
    check_schedule(label, "greedy", &s, times, ranks);
    ck_assert_int_le(s.iterations, most);
    ck_assert(n > ranks || s.iterations == 1);
    schedule_free(&s);
    ck_assert(opt_schedule_greedy(&s, times, n, ranks, &err) == TF_OK);
    check_schedule(label, "opt greedy", &s, times, ranks);
    schedule_free(&s);
    if (with_ilp) {
        ilp_options o = {1, 0.02};
        ilp_report report;
        ck_assert_msg(opt_schedule_ilp(&s, times, n, ranks, 2, 0, &o, &report, &err) == TF_OK, "%s", err.message);
        check_schedule(label, "ilp", &s, times, ranks);
        ck_assert(report.objective <= report.start_objective * (1 + 1e-12));
        schedule_free(&s);
    }
}

/* ---- 1. validity --------------------------------------------------------------------------------- */

START_TEST(validity_every_method)
{
    rng r;
    rng_seed(&r, 14);
    const int64_t sizes[] = {1, 2, 5, 17, 64};
    const int rank_counts[] = {1, 2, 3, 4, 7};
    char label[64];
    for (int kind = 0; kind < 3; kind++)
        for (int a = 0; a < 5; a++)
            for (int b = 0; b < 5; b++) {
                double *t = random_times(&r, sizes[a], kind);
                snprintf(label, sizeof label, "%s n=%lld", kind == 0 ? "random" : kind == 1 ? "equal" : "ties 1..3",
                         (long long)sizes[a]);
                every_method(label, t, sizes[a], rank_counts[b], sizes[a] <= 5);
                free(t);
            }
    for (size_t d = 0; d < sizeof real_data / sizeof *real_data; d++) {
        int64_t n;
        double *t = dataset_times(real_data[d], &n);
        for (int g = 2; g <= 4; g++) {
            snprintf(label, sizeof label, "%.30s n=%lld", real_data[d], (long long)n);
            every_method(label, t, n, g, 0);
        }
        free(t);
    }
}
END_TEST

/* ---- 2. the greedy twins -------------------------------------------------------------------------- */

/* Entries where two schedules differ. */
static int64_t differing_entries(const schedule *a, const schedule *b)
{
    int64_t differing = (a->iterations != b->iterations) + (a->groups != b->groups);
    for (int64_t k = 0; k < a->groups && k < b->groups; k++)
        differing += (a->iteration[k] != b->iteration[k]) + (a->rank[k] != b->rank[k]);
    return differing;
}

/* The reference greedy against the twin on 1 and 2 threads: differing [2] += entries that differ. */
static void compare_greedy_twins(const double *times, int64_t n, int ranks, int64_t *differing)
{
    tf_error err;
    schedule ref, ours;
    ck_assert(ref_schedule_greedy(&ref, times, n, ranks, &err) == TF_OK);
    for (int threads = 1; threads <= 2; threads++) {
        opt_set_threads(threads);
        ck_assert(opt_schedule_greedy(&ours, times, n, ranks, &err) == TF_OK);
        differing[threads - 1] += differing_entries(&ref, &ours);
        schedule_free(&ours);
    }
    schedule_free(&ref);
}

START_TEST(greedy_twins_identical)
{
    rng r;
    rng_seed(&r, 7);
    int64_t differing[2] = {0, 0}, instances = 0;
    for (int q = 0; q < 120; q++) {
        const int64_t n = 1 + (int64_t)rng_below(&r, 40);
        const int ranks = 1 + (int)rng_below(&r, 8);
        double *t = random_times(&r, n, q % 3);
        if (q % 10 == 0)
            t[rng_below(&r, (uint64_t)n)] = 0; /* zeros tie with the sentinel */
        compare_greedy_twins(t, n, ranks, differing);
        free(t);
        instances++;
    }
    for (size_t d = 0; d < sizeof real_data / sizeof *real_data; d++) {
        int64_t n;
        double *t = dataset_times(real_data[d], &n);
        for (int ranks = 2; ranks <= 8; ranks += 3) {
            compare_greedy_twins(t, n, ranks, differing);
            instances++;
        }
        free(t);
    }
    opt_set_threads(1);
    printf("greedy twins: %lld instances, differing entries with 1 thread %lld, 2 threads %lld (must be 0)\n",
           (long long)instances, (long long)differing[0], (long long)differing[1]);
    ck_assert_int_eq(differing[0], 0);
    ck_assert_int_eq(differing[1], 0);
}
END_TEST

/* ---- 3. the fixes ------------------------------------------------------------------------------------ */

START_TEST(greedy_fixes)
{
    tf_error err;
    schedule s;
    /* (e) all equal: every candidate's pairs are singles at W = 0 for "alone"; the first
     * candidate wins, so every iteration has G groups, one per rank (PSG). */
    double equal[12];
    for (int k = 0; k < 12; k++)
        equal[k] = 3;
    ck_assert(ref_schedule_greedy(&s, equal, 12, 3, &err) == TF_OK);
    int64_t crowded = 0;
    for (int64_t i = 0; i < s.iterations; i++)
        for (int j = 0; j < 3; j++) {
            int64_t here = 0;
            for (int k = 0; k < 12; k++)
                here += s.iteration[k] == i && s.rank[k] == j;
            crowded += here != 1;
        }
    printf("equal times, n=12, G=3: %lld iterations, %lld bins without exactly one group (must be 0)\n",
           (long long)s.iterations, (long long)crowded);
    ck_assert_int_eq(s.iterations, 4);
    ck_assert_int_eq(crowded, 0);
    schedule_free(&s);
    /* (a) times {5,5,5,5,1,1}, G = 3: as printed, GetGroupPair would return the same closest pair
     * (5 + 1 for a target of 5 + 1) for both ranks, placing a group twice. Here each group
     * once: validate() checks it, and every group has an iteration. */
    const double repeat[6] = {5, 5, 5, 5, 1, 1};
    ck_assert(ref_schedule_greedy(&s, repeat, 6, 3, &err) == TF_OK);
    ck_assert_msg(schedule_validate(&s, &err) == TF_OK, "%s", err.message);
    schedule_cost cost;
    schedule_evaluate(&s, repeat, 0, &cost);
    printf("{5,5,5,5,1,1}, G=3: %lld iterations, critical path %g (each group once)\n", (long long)s.iterations,
           cost.critical_path);
    schedule_free(&s);
    /* Tie rule on {1,1,1,1}, G = 2 (ids 0..3, sorted positions 1..4 = ids 0..3). Iteration 0:
     * target "id 3 alone" (T = 1): the scan starts at (sentinel, id 2), sum 1, distance 0: the
     * pair is id 2 alone; W = 1*2 - 1 - 1 = 0; no later candidate beats 0 (strict <).
     * Iteration 0 = {3 | 2}; the last two, ids 0 and 1, form iteration 1. The balance pass then
     * gives the first iteration's bins (equal loads: the lower bin, id 3's, first) to ranks 0
     * and 1 in order, and the second's to the ranks by busy time (equal: rank 0 first). */
    const double ones[4] = {1, 1, 1, 1};
    ck_assert(ref_schedule_greedy(&s, ones, 4, 2, &err) == TF_OK);
    printf("{1,1,1,1}, G=2: iterations %lld %lld %lld %lld, ranks %d %d %d %d\n", (long long)s.iteration[0],
           (long long)s.iteration[1], (long long)s.iteration[2], (long long)s.iteration[3], s.rank[0], s.rank[1],
           s.rank[2], s.rank[3]);
    ck_assert_int_eq(s.iteration[3], 0);
    ck_assert_int_eq(s.iteration[2], 0);
    ck_assert_int_eq(s.iteration[1], 1);
    ck_assert_int_eq(s.iteration[0], 1);
    ck_assert_int_eq(s.rank[3], 0);
    ck_assert_int_eq(s.rank[2], 1);
    ck_assert_int_eq(s.rank[0], 0);
    ck_assert_int_eq(s.rank[1], 1);
    schedule_free(&s);
}
END_TEST

/* ---- 4. the worked example ----------------------------------------------------------------------------- */

/* Times {8,7,7,5,4,1} (ids 0..5), G = 2, L = 2, alpha = 0 (chapters/07-schedule.md).
 *  - round-robin (batch 2, given order): {8|7}, {7|5}, {4|1}: 8 + 7 + 4 = 19.
 *  - LPT: sorted 8,7,7,5,4,1, two per iteration: the same bins, 19.
 *  - greedy: sorted [0 | 1,4,5,7,7,8]. Iteration 0, target 8 alone (T = 8): the scan
 *    (0,7) = 7, then (1,7) = 8 at distance 0: the pair {7 (id 2), 1}; W = 8*2 - 8 - 8 = 0, and
 *    no target 8 + x can reach W < 0: {8 | 7 + 1}. Left {4,5,7}: target 7 alone gets the pair
 *    {5} (W = 7*2 - 5 - 7 = 2), beating 7 + 4 with {5} (W = 11*2 - 5 - 11 = 6) and 7 + 5 with
 *    {4} (W = 24 - 4 - 12 = 8): {7 | 5}. Left {4}: the last iteration. 8 + 7 + 4 = 19.
 *  - optimum: {8 + 1 | 5 + 4}, {7 | 7} = 9 + 7 = 16 = sum / G, the lower bound. */
START_TEST(worked_example)
{
    const double t[6] = {8, 7, 7, 5, 4, 1};
    tf_error err;
    schedule s;
    schedule_cost cost;
    train_schedule steps = {6, 1, 1, 6, 2, 3, BATCH_CONSECUTIVE};
    ck_assert(ref_schedule_roundrobin(&s, &steps, 2, &err) == TF_OK);
    schedule_evaluate(&s, t, 0, &cost);
    printf("worked example: roundrobin %g", cost.objective);
    ck_assert_double_eq(cost.objective, 19);
    schedule_free(&s);
    ck_assert(ref_schedule_lpt(&s, t, 6, 2, 2, &err) == TF_OK);
    schedule_evaluate(&s, t, 0, &cost);
    printf(", lpt %g", cost.objective);
    ck_assert_double_eq(cost.objective, 19);
    schedule_free(&s);
    ck_assert(ref_schedule_greedy(&s, t, 6, 2, &err) == TF_OK);
    schedule_evaluate(&s, t, 0, &cost);
    printf(", greedy %g", cost.objective);
    ck_assert_double_eq(cost.objective, 19);
    /* bins: {8} and {7 (id 2), 1} share iteration 0 on different ranks; {7 (id 1)}, {5} iteration 1 */
    ck_assert_int_eq(s.iteration[0], 0);
    ck_assert_int_eq(s.iteration[2], 0);
    ck_assert_int_eq(s.iteration[5], 0);
    ck_assert_int_ne(s.rank[0], s.rank[2]);
    ck_assert_int_eq(s.rank[2], s.rank[5]);
    ck_assert_int_eq(s.iteration[1], 1);
    ck_assert_int_eq(s.iteration[3], 1);
    ck_assert_int_ne(s.rank[1], s.rank[3]);
    ck_assert_int_eq(s.iteration[4], 2);
    schedule_free(&s);
    ck_assert(ref_schedule_optimal(&s, t, 6, 2, 2, 0, &err) == TF_OK);
    schedule_evaluate(&s, t, 0, &cost);
    printf(", optimum %g (lower bound %g)", cost.objective, cost.lower_bound);
    ck_assert_double_eq(cost.objective, 16);
    ck_assert_double_eq(cost.lower_bound, 16);
    schedule_free(&s);
    ilp_options o = {10, 0};
    ilp_report report;
    ck_assert_msg(opt_schedule_ilp(&s, t, 6, 2, 2, 0, &o, &report, &err) == TF_OK, "%s", err.message);
    printf(", ilp %g (%s, gap %g, %.3f s)\n", report.objective, report.status, report.gap, report.seconds);
    ck_assert_double_eq_tol(report.objective, 16, 1e-9);
    schedule_free(&s);
}
END_TEST

/* ---- 5. LPT is optimal for L = 1 --------------------------------------------------------------------- */

START_TEST(lpt_optimal_for_one_per_rank)
{
    rng r;
    rng_seed(&r, 5);
    tf_error err;
    double worst = 0;
    for (int q = 0; q < 30; q++) {
        const int64_t n = 1 + (int64_t)rng_below(&r, 8);
        const int ranks = 2 + (int)rng_below(&r, 2);
        double *t = random_times(&r, n, q % 3 == 2 ? 2 : 0);
        schedule lpt, best;
        ck_assert(ref_schedule_lpt(&lpt, t, n, ranks, 1, &err) == TF_OK);
        ck_assert(ref_schedule_optimal(&best, t, n, ranks, 1, 0, &err) == TF_OK);
        schedule_cost a, b;
        schedule_evaluate(&lpt, t, 0, &a);
        schedule_evaluate(&best, t, 0, &b);
        worst = fmax(worst, fabs(a.objective - b.objective) / b.objective);
        schedule_free(&lpt);
        schedule_free(&best);
        free(t);
    }
    printf("LPT vs exhaustive optimum, L = 1, 30 instances: worst relative difference %.1e (must be <= 1e-12)\n", worst);
    ck_assert(worst <= 1e-12);
}
END_TEST

/* ---- 6, 7. the ILP ------------------------------------------------------------------------------------- */

static void ilp_against_exhaustive(int instances, int64_t most_groups, int most_ranks, uint64_t seed)
{
    rng r;
    rng_seed(&r, seed);
    tf_error err;
    for (int q = 0; q < instances; q++) {
        const int64_t n = 2 + (int64_t)rng_below(&r, (uint64_t)most_groups - 1);
        const int ranks = 2 + (int)rng_below(&r, (uint64_t)most_ranks - 1), per_rank = 1 + q % 2;
        const double alpha = q % 3 == 2 ? 0.3 : 0;
        double *t = random_times(&r, n, q % 4 == 3 ? 2 : 0);
        schedule ilp, best, greedy;
        ilp_options o = {10, 0};
        ilp_report report;
        ck_assert_msg(opt_schedule_ilp(&ilp, t, n, ranks, per_rank, alpha, &o, &report, &err) == TF_OK, "%s",
                      err.message);
        ck_assert(ref_schedule_optimal(&best, t, n, ranks, per_rank, alpha, &err) == TF_OK);
        ck_assert_msg(schedule_validate(&ilp, &err) == TF_OK, "%s", err.message);
        schedule_cost a, b, c;
        schedule_evaluate(&ilp, t, alpha, &a);
        schedule_evaluate(&best, t, alpha, &b);
        double greedy_objective = NAN;
        if (per_rank == 2) {
            ck_assert(ref_schedule_greedy(&greedy, t, n, ranks, &err) == TF_OK);
            schedule_evaluate(&greedy, t, alpha, &c);
            greedy_objective = c.objective;
            ck_assert(c.objective >= b.objective * (1 - 1e-9));
            schedule_free(&greedy);
        }
        printf("  n=%lld G=%d L=%d alpha=%g: ilp %.6f (%s, gap %.3g, %.3f s), optimum %.6f, greedy %.6f\n",
               (long long)n, ranks, per_rank, alpha, a.objective, report.status, report.gap, report.seconds,
               b.objective, greedy_objective);
        ck_assert(a.objective >= b.objective * (1 - 1e-9));
        ck_assert(a.objective <= b.objective * (1 + report.gap) + 1e-9);
        if (strcmp(report.status, "optimal") == 0)
            ck_assert(fabs(a.objective - b.objective) <= 1e-9 * b.objective);
        schedule_free(&ilp);
        schedule_free(&best);
        free(t);
    }
}

START_TEST(ilp_against_exhaustive_small)
{
    ilp_against_exhaustive(5, 6, 2, 11);
}
END_TEST

START_TEST(ilp_limits)
{
    rng r;
    rng_seed(&r, 40);
    tf_error err;
    double *t = random_times(&r, 40, 0);
    schedule s, greedy;
    ilp_options o = {1, 0};
    ilp_report report;
    ck_assert_msg(opt_schedule_ilp(&s, t, 40, 4, 2, 0, &o, &report, &err) == TF_OK, "%s", err.message);
    ck_assert_msg(schedule_validate(&s, &err) == TF_OK, "%s", err.message);
    ck_assert(opt_schedule_greedy(&greedy, t, 40, 4, &err) == TF_OK);
    schedule_cost g;
    schedule_evaluate(&greedy, t, 0, &g);
    printf("ILP n=40 G=4, limit 1 s, gap 0: %s after %.2f s, objective %.6f (greedy %.6f), bound %.6f, gap %.3g, %lld "
           "columns\n",
           report.status, report.seconds, report.objective, g.objective, report.bound, report.gap,
           (long long)report.columns);
    ck_assert_str_eq(report.status, "time limit");
    ck_assert(report.objective <= g.objective * (1 + 1e-12));
    ck_assert(report.gap > 0 && report.gap < 1);
    ck_assert(fabs(report.gap - (report.objective - report.bound) / report.objective) < 1e-12);
    schedule_free(&s);
    schedule_free(&greedy);
    free(t);
    /* 3000 groups on 4 ranks: 3000 x 750 x 4 = 9 million columns, refused before building */
    double *many = random_times(&r, 3000, 0);
    EXPECT_INPUT_ERROR(opt_schedule_ilp(&s, many, 3000, 4, 2, 0, &o, &report, &err), &err, "columns",
                       "use --method greedy");
    free(many);
}
END_TEST

/* ---- 8. the cost model ------------------------------------------------------------------------------- */

START_TEST(cost_fit)
{
    rng r;
    rng_seed(&r, 8);
    tf_error err;
    enum { N = 40 };
    int64_t rows[N], edges[N];
    double exact[N], noisy[N];
    for (int k = 0; k < N; k++) {
        rows[k] = 100 * (1 + (int64_t)rng_below(&r, 50));
        edges[k] = 1000 * (1 + (int64_t)rng_below(&r, 500));
        exact[k] = 2e-6 * (double)rows[k] + 3e-8 * (double)edges[k] + 1e-4;
        noisy[k] = exact[k] * (1 + 0.01 * rng_normal(&r));
    }
    cost_model m;
    ck_assert(cost_model_fit(rows, edges, exact, N, &m, &err) == TF_OK);
    printf("planted a=2e-6 b=3e-8 c=1e-4: fitted a=%.12g b=%.12g c=%.12g, residual %.2e, R^2 %.12f\n", m.per_row,
           m.per_edge, m.per_group, m.residual, m.r_squared);
    ck_assert(fabs(m.per_row - 2e-6) <= 1e-9 * 2e-6);
    ck_assert(fabs(m.per_edge - 3e-8) <= 1e-9 * 3e-8);
    ck_assert(fabs(m.per_group - 1e-4) <= 1e-9 * 1e-4);
    ck_assert(m.residual < 1e-9);
    ck_assert_int_eq(m.dropped, 0);
    ck_assert(cost_model_fit(rows, edges, noisy, N, &m, &err) == TF_OK);
    printf("with 1%% noise: a=%.4g b=%.4g c=%.4g, residual %.2f%% of the mean, R^2 %.4f\n", m.per_row, m.per_edge,
           m.per_group, 100 * m.residual, m.r_squared);
    ck_assert(m.residual >= 0.005 && m.residual <= 0.02);
    for (int k = 0; k < N; k++) { /* constant rows: the intercept's column; a x 5000 joins c */
        rows[k] = 5000;
        exact[k] = 2e-6 * (double)rows[k] + 3e-8 * (double)edges[k] + 1e-4;
    }
    ck_assert(cost_model_fit(rows, edges, exact, N, &m, &err) == TF_OK);
    printf("constant rows: dropped %d (bit 0 = rows), a=%g b=%.12g c=%.12g (planted 0.0101), residual %.2e\n",
           m.dropped, m.per_row, m.per_edge, m.per_group, m.residual);
    ck_assert_int_eq(m.dropped, 1);
    ck_assert_double_eq(m.per_row, 0);
    ck_assert(fabs(m.per_edge - 3e-8) <= 1e-9 * 3e-8);
    ck_assert(fabs(m.per_group - 0.0101) <= 1e-9 * 0.0101);
    ck_assert(m.residual < 1e-9);
    EXPECT_INPUT_ERROR(cost_model_fit(rows, edges, exact, 1, &m, &err), &err, "at least 2");
    EXPECT_INPUT_ERROR(cost_model_parse("linear:1,x,2", &m, &err), &err, "expected measured or linear:A,B,C");
    EXPECT_INPUT_ERROR(cost_model_parse("linear:1,2", &m, &err), &err, "linear:A,B,C");
    EXPECT_INPUT_ERROR(cost_model_parse("linear:1,2,3,", &m, &err), &err, "linear:A,B,C");
}
END_TEST

/* ---- 9. the balance pass ------------------------------------------------------------------------------ */

START_TEST(balance_pass)
{
    rng r;
    rng_seed(&r, 9);
    tf_error err;
    double *t = random_times(&r, 64, 0);
    /* the greedy bins before the pass: iteration by iteration, the target's bin on rank 0 */
    schedule before, after, again;
    train_schedule steps = {64, 1, 1, 64, 4, 16, BATCH_CONSECUTIVE};
    ck_assert(ref_schedule_roundrobin(&before, &steps, 4, &err) == TF_OK);
    ck_assert(schedule_copy(&after, &before, &err) == TF_OK);
    ck_assert(schedule_balance_ranks(&after, t, &err) == TF_OK);
    ck_assert(schedule_copy(&again, &before, &err) == TF_OK);
    ck_assert(schedule_balance_ranks(&again, t, &err) == TF_OK);
    ck_assert_msg(schedule_validate(&after, &err) == TF_OK, "%s", err.message);
    schedule_cost a, b;
    schedule_evaluate(&before, t, 0, &a);
    schedule_evaluate(&after, t, 0, &b);
    printf("balance pass on round-robin, n=64, G=4: critical path %.6f -> %.6f, rank-total imbalance %.4f -> %.4f\n",
           a.critical_path, b.critical_path, a.imbalance, b.imbalance);
    ck_assert(a.critical_path == b.critical_path);
    ck_assert(b.imbalance <= a.imbalance);
    ck_assert(memcmp(after.rank, again.rank, 64 * sizeof *after.rank) == 0);
    ck_assert(memcmp(after.iteration, before.iteration, 64 * sizeof *after.iteration) == 0);
    schedule_free(&before);
    schedule_free(&after);
    schedule_free(&again);
    free(t);
}
END_TEST

/* ---- 10. the simulator ------------------------------------------------------------------------------ */

START_TEST(simulator)
{
    tf_error err;
    dataset d;
    load_or_fail("england_covid", &d);
    int64_t *nodes, *edges, groups;
    double *times;
    ck_assert(schedule_sizes_cycle(&d.snapshots, 123, &nodes, &edges, &err) == TF_OK);
    ck_assert_int_eq(edges[122], d.snapshots.snapshots[122 % d.snapshots.num_snapshots].graph.num_edges);
    cost_model m = {1e-6, 1e-7, 1e-4, 0, 0, 1};
    ck_assert(schedule_window_times(nodes, edges, 123, 4, 1, &m, &times, &groups, &err) == TF_OK);
    ck_assert_int_eq(groups, 123);
    const int ranks[3] = {4, 16, 64};
    simulation_row *rows;
    ck_assert(opt_schedule_simulate(times, groups, ranks, 3, &rows, &err) == TF_OK);
    for (int k = 0; k < 9; k++) {
        /* E recomputed from the schedule, built again here */
        schedule s;
        const train_schedule steps = {groups, 1, 1, groups, rows[k].ranks, (groups + rows[k].ranks - 1) / rows[k].ranks,
                                      BATCH_CONSECUTIVE};
        ck_assert(opt_schedule_compute(&s, rows[k].method, times, groups, rows[k].ranks, 2, &steps, 0, NULL, NULL,
                                       &err) == TF_OK);
        double total = 0;
        for (int64_t g = 0; g < groups; g++)
            total += times[g];
        const double efficiency = total / (rows[k].ranks * naive_critical_path(&s, times));
        printf("simulated n=%lld G=%-3d %-10s: %lld iterations, efficiency %.4f (recomputed %.4f), imbalance %.4f\n",
               (long long)groups, rows[k].ranks, schedule_method_name(rows[k].method), (long long)rows[k].iterations,
               rows[k].efficiency, efficiency, rows[k].imbalance);
        ck_assert(rows[k].efficiency > 0 && rows[k].efficiency <= 1 + 1e-12);
        ck_assert(fabs(rows[k].efficiency - efficiency) <= 1e-12);
        schedule_free(&s);
    }
    double imbalance;
    ck_assert(schedule_predict_esdg(nodes, edges, 123, 4, 1, &m, 4, &imbalance, &err) == TF_OK);
    printf("ESDG predicted imbalance on 4 ranks: %.4f\n", imbalance);
    ck_assert(imbalance >= 1);
    EXPECT_INPUT_ERROR(schedule_predict_esdg(nodes, edges, 123, 4, 1, &m, 5, &imbalance, &err), &err, "1..4");
    free(rows);
    free(times);
    free(nodes);
    free(edges);
    dataset_free(&d);
}
END_TEST

/* ---- 11. bad input ------------------------------------------------------------------------------------- */

START_TEST(bad_input)
{
    tf_error err;
    schedule s;
    const double good[3] = {1, 2, 3}, negative[3] = {1, -2, 3}, not_a_number[3] = {1, NAN, 3};
    EXPECT_INPUT_ERROR(ref_schedule_greedy(&s, good, 0, 2, &err), &err, "no groups");
    EXPECT_INPUT_ERROR(ref_schedule_lpt(&s, good, 3, 0, 1, &err), &err, "0 rank(s)");
    EXPECT_INPUT_ERROR(ref_schedule_lpt(&s, good, 3, 2, 0, &err), &err, "0 per rank");
    EXPECT_INPUT_ERROR(ref_schedule_greedy(&s, negative, 3, 2, &err), &err, "group 1", ">= 0");
    EXPECT_INPUT_ERROR(opt_schedule_greedy(&s, not_a_number, 3, 2, &err), &err, "group 1", "finite");
    double eleven[11] = {0};
    EXPECT_INPUT_ERROR(ref_schedule_optimal(&s, eleven, 11, 2, 2, 0, &err), &err, "at most 10");
    EXPECT_INPUT_ERROR(opt_schedule_compute(&s, SCHEDULE_GREEDY, good, 3, 2, 3, NULL, 0, NULL, NULL, &err), &err,
                       "greedy pairs at most 2", "use --method ilp");
    schedule_method method;
    EXPECT_INPUT_ERROR(schedule_method_parse("foo", &method, &err), &err, "roundrobin, lpt, greedy or ilp");
    /* a hand-made invalid schedule: two groups too many on one rank, then an empty iteration */
    ck_assert(schedule_alloc(&s, 4, 2, 1, &err) == TF_OK);
    s.iterations = 2;
    s.iteration[0] = 0, s.iteration[1] = 0, s.iteration[2] = 1, s.iteration[3] = 1;
    s.rank[0] = 0, s.rank[1] = 0, s.rank[2] = 0, s.rank[3] = 1;
    EXPECT_INPUT_ERROR(schedule_validate(&s, &err), &err, "iteration 0 gives rank 0 2 groups", "at most 1");
    s.rank[1] = 1;
    s.iterations = 3;
    s.iteration[2] = 2, s.iteration[3] = 2;
    EXPECT_INPUT_ERROR(schedule_validate(&s, &err), &err, "iteration 1 is empty");
    s.rank[3] = 2;
    EXPECT_INPUT_ERROR(schedule_validate(&s, &err), &err, "group 3 on rank 2");
    schedule_free(&s);
}
END_TEST

/* ---- the round-robin epoch is the trainer's epoch --------------------------------------------------- */

START_TEST(roundrobin_epoch_is_trainer_epoch)
{
    tf_error err;
    dataset d;
    load_or_fail("chickenpox", &d);
    model_config config = {MODEL_TGCN, 0, 8, 0, 2, 0};
    for (int blocks = 0; blocks <= 1; blocks++) {
        train_options options = train_options_windows(6, 2, 3, 0.15); /* 39 windows: small under Valgrind */
        options.batching = blocks ? BATCH_ACROSS_BLOCKS : BATCH_CONSECUTIVE;
        trainer a, b;
        ck_assert(trainer_create(&a, &d.snapshots, &config, &options, &err) == TF_OK);
        ck_assert(trainer_create(&b, &d.snapshots, &config, &options, &err) == TF_OK);
        const train_schedule steps = trainer_schedule(&a);
        schedule s;
        ck_assert(ref_schedule_roundrobin(&s, &steps, 1, &err) == TF_OK);
        int64_t differing = 0;
        for (int e = 0; e < 2; e++) {
            epoch_report ra, rb;
            ck_assert(trainer_epoch(&a, &d.snapshots, &ra, &err) == TF_OK);
            ck_assert(ref_schedule_epoch(&b, &d.snapshots, &s, &rb, &err) == TF_OK);
            differing += memcmp(&ra.train_loss, &rb.train_loss, sizeof(double)) != 0;
            differing += memcmp(&ra.test_mse, &rb.test_mse, sizeof(double)) != 0;
            differing += ra.steps != rb.steps;
        }
        for (int64_t i = 0; i < a.model.parameters.count; i++)
            differing += differing_values(a.model.parameters.items[i].value.data, b.model.parameters.items[i].value.data,
                                          a.model.parameters.items[i].value.size);
        printf("chickenpox %s batches of 3: ref_schedule_epoch on round-robin vs trainer_epoch, 2 epochs: %lld values "
               "differ (must be 0)\n", blocks ? "block" : "consecutive", (long long)differing);
        ck_assert_int_eq(differing, 0);
        schedule_free(&s);
        trainer_free(&a);
        trainer_free(&b);
    }
    dataset_free(&d);
}
END_TEST

/* ---- the slow suite -------------------------------------------------------------------------------------- */

START_TEST(ilp_against_exhaustive_larger)
{
    ilp_against_exhaustive(20, 9, 3, 21);
}
END_TEST

START_TEST(ilp_on_real_costs)
{
    tf_error err;
    for (size_t d = 0; d < sizeof real_data / sizeof *real_data; d++) {
        int64_t n;
        double *t = dataset_times(real_data[d], &n);
        for (int ranks = 2; ranks <= 4; ranks++) {
            schedule s;
            ilp_options o = {2, 0.02};
            ilp_report report;
            ck_assert_msg(opt_schedule_ilp(&s, t, n, ranks, 2, 0, &o, &report, &err) == TF_OK, "%s", err.message);
            char label[64];
            snprintf(label, sizeof label, "%.30s n=%lld", real_data[d], (long long)n);
            check_schedule(label, "ilp", &s, t, ranks);
            printf("    %s, gap %.3g, %.2f s, start (greedy) %.6g\n", report.status, report.gap, report.seconds,
                   report.start_objective);
            ck_assert(report.objective <= report.start_objective * (1 + 1e-12));
            schedule_free(&s);
        }
        free(t);
    }
}
END_TEST

int main(void)
{
    opt_set_threads(1);
    const named_test unit[] = {{"validity_every_method", validity_every_method},
                               {"greedy_twins_identical", greedy_twins_identical},
                               {"greedy_fixes", greedy_fixes},
                               {"worked_example", worked_example},
                               {"lpt_optimal_for_one_per_rank", lpt_optimal_for_one_per_rank},
                               {"ilp_against_exhaustive_small", ilp_against_exhaustive_small},
                               {"ilp_limits", ilp_limits},
                               {"cost_fit", cost_fit},
                               {"balance_pass", balance_pass},
                               {"simulator", simulator},
                               {"bad_input", bad_input},
                               {"roundrobin_epoch_is_trainer_epoch", roundrobin_epoch_is_trainer_epoch}};
    const named_test slow[] = {{"ilp_against_exhaustive_larger", ilp_against_exhaustive_larger},
                               {"ilp_on_real_costs", ilp_on_real_costs}};
    return run_suites(suite_of("schedule", unit, sizeof unit / sizeof *unit, 900),
                      suite_of("schedule_slow", slow, sizeof slow / sizeof *slow, 900));
}
