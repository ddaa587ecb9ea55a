/* DGC's stale embeddings on the exchange mode (opt/async_embeddings.h), on 1..4 ranks (ctest runs it
 * under mpiexec): with theta = 0 the run is bitwise the plain exchange mode's after every step; for
 * theta > 0 (the text's adaptive threshold, Eq. 6 as printed, static 0.5) sender and receiver caches
 * hold the same bits after every step, every reused row lies within theta of the fresh one (the worst
 * d / theta printed), the run equals ref/async_embeddings' serial simulation of the same ranks and
 * owners (the same decisions; losses and parameters within the fp tolerance), and the bytes the
 * exchange counted are the plain mode's minus what the rule saved plus the message sizes. GConvGRU
 * and GC-LSTM (Chebyshev K = 2, hidden 8) on a generated graph with vertex arrivals, hash partition. */
#include <math.h>

#include "datasets/dataset.h"
#include "opt/async_embeddings.h"
#include "opt/kernels.h"
#include "verify/testing_mpi.h"

#define TOLERANCE 1e-5
#define EPOCHS 3

static comm world;

static const char data_spec[] = "powerlaw:nodes=300,edges=3000,snapshots=20,arrival=0.02,seed=3";

static double relative(double ours, double reference) { return fabs(ours - reference) / fmax(1.0, fabs(reference)); }

static void options_for(train_options *o)
{
    train_options_default(o);
    o->window = 4;
    o->batch = 2;
    o->train_ratio = 0.5;
    o->learning_rate = 0.01;
}

static void make_trainer(partition_trainer *pt, const snapshot_seq *seq, const int32_t *owner,
                         const model_config *config)
{
    tf_error err;
    train_options options;
    options_for(&options);
    ck_assert_msg(partition_trainer_create(pt, &world, seq, owner, NULL, PARTITION_EXCHANGE, config, &options,
                                           &opt_kernels, &err) == TF_OK,
                  "%s", err.message);
}

/* One epoch, step by step as opt_partition_trainer_epoch() runs it, with `each_step` after every step. */
typedef void (*step_check)(void *context);

static void run_epoch(partition_trainer *pt, epoch_report *report, step_check each_step, void *context)
{
    tf_error err;
    memset(report, 0, sizeof *report);
    const train_schedule s = partition_trainer_schedule(pt);
    double loss_sum = 0;
    for (int64_t step = 0; step < s.steps; step++) {
        ck_assert_msg(partition_trainer_step(pt, step, &loss_sum, &err) == TF_OK, "%s", err.message);
        if (each_step)
            each_step(context);
    }
    trainer_close_epoch(&pt->base, &s, loss_sum, report);
    const int64_t train = pt->base.train_snapshots;
    ck_assert_msg(opt_partition_trainer_evaluate(pt, train, pt->part.local.num_snapshots - train, &report->test_mse,
                                                 &err) == TF_OK,
                  "%s", err.message);
}

/* Sums over ranks, in place. */
static void sum_over_ranks(double *values, int64_t count)
{
    tf_error err;
    ck_assert(comm_allreduce_sum_double(&world, values, count, &err) == TF_OK);
}

/* The largest of every rank's @p value. */
static double max_over_ranks(double value)
{
    tf_error err;
    double *all = malloc((size_t)world.size * sizeof *all);
    int64_t *counts = malloc(2 * (size_t)world.size * sizeof *counts), *offsets = counts + world.size;
    for (int p = 0; p < world.size; p++)
        counts[p] = 1, offsets[p] = p;
    ck_assert(comm_allgatherv(&world, &value, 1, all, counts, offsets, sizeof(double), &err) == TF_OK);
    double most = all[0];
    for (int p = 1; p < world.size; p++)
        most = fmax(most, all[p]);
    free(all);
    free(counts);
    return most;
}

/* ---- theta = 0 is the exchange mode ------------------------------------------------------- */

START_TEST(zero_threshold_is_exchange_mode)
{
    tf_error err;
    dataset d;
    ck_assert_msg(dataset_load(data_spec, NULL, &d, &err) == TF_OK, "%s", err.message);
    const snapshot_seq *seq = &d.snapshots;
    int32_t *owner = malloc((size_t)seq->num_nodes * sizeof *owner);
    partition_hash(seq->num_nodes, world.size, owner);
    const model_kind kinds[] = {MODEL_GCONVGRU, MODEL_GCLSTM};
    stale_schedule zero;
    ck_assert(stale_schedule_parse("zero", &zero, &err) == TF_OK);
    for (int k = 0; k < 2; k++) {
        const model_config config = {kinds[k], 0, 8, 0, 2, 0};
        partition_trainer plain, stale;
        make_trainer(&plain, seq, owner, &config);
        make_trainer(&stale, seq, owner, &config);
        stale_fetcher f;
        ck_assert_msg(stale_fetcher_attach(&f, &stale, &zero, &err) == TF_OK, "%s", err.message);
        int64_t steps = 0, differing = 0, losses_differing = 0;
        for (int e = 0; e < EPOCHS; e++) {
            const train_schedule s = partition_trainer_schedule(&plain);
            epoch_report a = {0}, b = {0};
            double loss[2] = {0, 0};
            stale_fetcher_begin_epoch(&f);
            for (int64_t step = 0; step < s.steps; step++, steps++) {
                ck_assert_msg(partition_trainer_step(&plain, step, &loss[0], &err) == TF_OK, "%s", err.message);
                ck_assert_msg(partition_trainer_step(&stale, step, &loss[1], &err) == TF_OK, "%s", err.message);
                differing += parameters_differing_values(&plain.base.model.parameters, &stale.base.model.parameters);
                losses_differing += memcmp(&loss[0], &loss[1], sizeof(double)) != 0;
            }
            trainer_close_epoch(&plain.base, &s, loss[0], &a);
            trainer_close_epoch(&stale.base, &s, loss[1], &b);
            const int64_t train = plain.base.train_snapshots, test = seq->num_snapshots - train;
            ck_assert(opt_partition_trainer_evaluate(&plain, train, test, &a.test_mse, &err) == TF_OK);
            ck_assert(opt_partition_trainer_evaluate(&stale, train, test, &b.test_mse, &err) == TF_OK);
            stale_fetcher_end_epoch(&f, b.train_loss);
            losses_differing += memcmp(&a.test_mse, &b.test_mse, sizeof(double)) != 0;
        }
        double totals[9] = {(double)differing,
                            (double)losses_differing,
                            (double)plain.exchange.bytes,
                            (double)stale.exchange.bytes,
                            (double)f.stats.bytes_exact,
                            (double)f.stats.bytes_stale,
                            (double)(stale.exchange.transfers * (world.size - 1) * 8),
                            (double)f.stats.bytes_fresh,
                            (double)f.stats.bytes_sent};
        sum_over_ranks(totals, 9);
        const double expected = totals[2] - totals[7] + totals[8] + totals[6];
        if (world.rank == 0)
            printf("zero %-9s %d rank(s): %lld steps, %.0f differing parameter values, %.0f differing losses (must be "
                   "0); exchange bytes %.0f plain, %.0f with theta = 0 (exact reuse saved %.0f, message sizes "
                   "cost %.0f)\n",
                   model_kind_name(kinds[k]), world.size, (long long)steps, totals[0], totals[1], totals[2],
                   totals[3], totals[4], totals[6]);
        ck_assert(totals[0] == 0 && totals[1] == 0);
        ck_assert_msg(totals[5] == 0, "theta = 0 reused %.0f bytes of rows that moved", totals[5]);
        ck_assert_msg(totals[3] == expected, "exchange bytes %.0f, expected %.0f", totals[3], expected);
        stale_fetcher_free(&f);
        partition_trainer_free(&plain);
        partition_trainer_free(&stale);
    }
    free(owner);
    dataset_free(&d);
}
END_TEST

/* ---- theta > 0: caches, threshold, the serial simulation ----------------------------------- */

typedef struct cache_check {
    stale_fetcher *f;
    int64_t steps, differing, compared;
} cache_check;

static void compare_caches(void *context)
{
    cache_check *c = context;
    tf_error err;
    int64_t differing, compared;
    ck_assert_msg(stale_fetcher_compare_caches(c->f, &differing, &compared, &err) == TF_OK, "%s", err.message);
    c->steps++;
    c->differing += differing;
    c->compared += compared;
}

static void check_schedule(const snapshot_seq *seq, const int32_t *owner, model_kind kind, const char *name)
{
    tf_error err;
    stale_schedule rule;
    ck_assert(stale_schedule_parse(name, &rule, &err) == TF_OK);
    const model_config config = {kind, 0, 8, 0, 2, 0};
    train_options options;
    options_for(&options);
    /* The MPI run, caches compared after every step. */
    partition_trainer plain, pt;
    make_trainer(&plain, seq, owner, &config); /* for the plain mode's bytes */
    make_trainer(&pt, seq, owner, &config);
    stale_fetcher f;
    ck_assert_msg(stale_fetcher_attach(&f, &pt, &rule, &err) == TF_OK, "%s", err.message);
    cache_check caches = {&f, 0, 0, 0};
    /* The serial simulation of the same ranks and owners, on the same kernels. */
    trainer whole;
    ck_assert(trainer_create(&whole, seq, &config, &options, &err) == TF_OK);
    stale_simulation s;
    ck_assert_msg(stale_simulation_create(&s, seq, owner, world.size, &rule, &opt_kernels, &err) == TF_OK, "%s",
                  err.message);
    whole.model.kernels = &s.table;
    double worst_loss = 0;
    for (int e = 0; e < EPOCHS; e++) {
        epoch_report mpi, serial, fresh;
        stale_fetcher_begin_epoch(&f);
        run_epoch(&pt, &mpi, compare_caches, &caches);
        stale_fetcher_end_epoch(&f, mpi.train_loss);
        run_epoch(&plain, &fresh, NULL, NULL);
        ck_assert_msg(ref_stale_embeddings_epoch(&s, &whole, seq, &serial, &err) == TF_OK, "%s", err.message);
        worst_loss = fmax(worst_loss, fmax(relative(mpi.train_loss, serial.train_loss),
                                           relative(mpi.test_mse, serial.test_mse)));
    }
    const double worst_parameter = parameters_relative_error(&pt.base.model.parameters, &whole.model.parameters);
    double totals[9] = {(double)f.stats.rows_sent,       (double)f.stats.rows_reused_exact,
                        (double)f.stats.rows_reused_stale, (double)f.stats.bytes_sent,
                        (double)f.stats.bytes_fresh,     (double)plain.exchange.bytes,
                        (double)pt.exchange.bytes,       (double)(pt.exchange.transfers * (world.size - 1) * 8),
                        (double)f.stats.bytes_bitmap};
    sum_over_ranks(totals, 9);
    const double worst_ratio = max_over_ranks(f.stats.worst_ratio);
    const double expected_bytes = totals[5] - totals[4] + totals[3] + totals[7];
    if (world.rank == 0) {
        printf("%-16s %-9s %d rank(s): caches compared after %lld steps, %lld values, %lld differ (must be 0); rows "
               "sent %.0f, reused exact %.0f, stale %.0f (simulation: %lld, %lld, %lld); worst d/theta %.4f "
               "(simulation %.4f); loss/test MSE %.1e, parameters %.1e against the simulation\n",
               name, model_kind_name(kind), world.size, (long long)caches.steps, (long long)caches.compared,
               (long long)caches.differing, totals[0], totals[1], totals[2], (long long)s.stats.rows_sent,
               (long long)s.stats.rows_reused_exact, (long long)s.stats.rows_reused_stale, worst_ratio,
               s.stats.worst_ratio, worst_loss, worst_parameter);
        printf("%-16s %-9s %d rank(s): forward bytes %.0f of the plain %.0f (%.1f%% saved, bitmaps %.0f); exchange "
               "bytes %.0f = plain %.0f - forward saved + message sizes %.0f\n",
               name, model_kind_name(kind), world.size, totals[3], totals[4],
               totals[4] > 0 ? 100 * (1 - totals[3] / totals[4]) : 0, totals[8], totals[6], totals[5], totals[7]);
    }
    ck_assert_int_eq(caches.differing, 0);
    ck_assert(caches.compared > 0 || world.size == 1);
    ck_assert_msg(worst_ratio <= 1, "a reused row moved %g theta", worst_ratio);
    ck_assert_msg(totals[0] == (double)s.stats.rows_sent && totals[1] == (double)s.stats.rows_reused_exact &&
                      totals[2] == (double)s.stats.rows_reused_stale,
                  "decisions differ from the simulation's");
    ck_assert(totals[3] == (double)s.stats.bytes_sent && totals[4] == (double)s.stats.bytes_fresh);
    ck_assert_msg(worst_loss <= TOLERANCE && worst_parameter <= TOLERANCE, "loss %g, parameters %g", worst_loss,
                  worst_parameter);
    ck_assert_msg(totals[6] == expected_bytes, "exchange bytes %.0f, expected %.0f", totals[6], expected_bytes);
    if (world.size == 1)
        ck_assert(totals[4] == 0 && totals[6] == 0);
    stale_simulation_free(&s);
    trainer_free(&whole);
    stale_fetcher_free(&f);
    partition_trainer_free(&pt);
    partition_trainer_free(&plain);
}

START_TEST(caches_threshold_and_simulation)
{
    tf_error err;
    dataset d;
    ck_assert_msg(dataset_load(data_spec, NULL, &d, &err) == TF_OK, "%s", err.message);
    int32_t *owner = malloc((size_t)d.snapshots.num_nodes * sizeof *owner);
    partition_hash(d.snapshots.num_nodes, world.size, owner);
    const char *schedules[] = {"adaptive", "adaptive-printed", "static:0.5"};
    for (int i = 0; i < 3; i++)
        check_schedule(&d.snapshots, owner, MODEL_GCONVGRU, schedules[i]);
    check_schedule(&d.snapshots, owner, MODEL_GCLSTM, "adaptive");
    free(owner);
    dataset_free(&d);
}
END_TEST

int main(int argc, char **argv)
{
    if (start_mpi(&world, &argc, &argv, 0) != 0)
        return 1;
    Suite *suite = suite_create("async_embeddings_mpi");
    TCase *tc = tcase_create("exchange");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, zero_threshold_is_exchange_mode);
    tcase_add_test(tc, caches_threshold_and_simulation);
    suite_add_tcase(suite, tc);
    return run_suite_mpi(suite, &world);
}
