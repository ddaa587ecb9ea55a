/* Chapter 05's MPI twins (opt/async.h) against their serial references (ref/async.h), on 1..4
 * ranks (ctest runs this under mpiexec):
 *  - averaging (DynaHB): after EVERY step, rank r's parameters against replica r of the serial
 *    simulation with R = the rank count on the same kernels: bitwise, differing values summed
 *    over ranks; with SGD and K = 1 against synchronous data-parallel SGD: fp;
 *  - delayed gradients (Sven Eq. 13): staleness 0 against opt_trainer_epoch(): bitwise; staleness
 *    1 against the serial delayed recurrence: fp, and bitwise on one rank on the same kernels;
 *  - a straggler changes no bit; the bytes sent are the header's formulas.
 * Chickenpox (windows of 8, 4 per step, half the snapshots: 33 windows in 9 steps, the last
 * holding one window, so on 2+ ranks some ranks have no window in it) and a generated graph. */
#include <math.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "datasets/dataset.h"
#include "opt/async.h"
#include "opt/kernels.h"
#include "opt/train.h"
#include "ref/core/clock.h"
#include "verify/testing_mpi.h"

#define TOLERANCE 1e-5

static comm world;

static const char *const generated = "powerlaw:nodes=300,edges=3000,snapshots=40,churn=0.05,arrival=0.02,seed=3";

static double relative(double ours, double reference) { return fabs(ours - reference) / fmax(1.0, fabs(reference)); }

static double sum_over_ranks(double value)
{
    tf_error err;
    ck_assert(comm_allreduce_sum_double(&world, &value, 1, &err) == TF_OK);
    return value;
}

static double max_over_ranks(double value)
{
    double all;
    MPI_Allreduce(&value, &all, 1, MPI_DOUBLE, MPI_MAX, world.world);
    return all;
}

/* Dataset @p data and the options every check here trains it with. Chickenpox: windows of 8, 4
 * per step. The generated graph (20 training snapshots): windows of 4, 2 per step, so that an
 * epoch has 3 steps. */
static void load_with_options(const char *data, optimizer_kind optimizer, dataset *d, train_options *o)
{
    tf_error err;
    ck_assert_msg(dataset_load(data, NULL, d, &err) == TF_OK, "%s", err.message);
    train_options_default(o);
    const int real = strcmp(data, "chickenpox") == 0;
    o->window = real ? 8 : 4;
    o->batch = real ? 4 : 2;
    o->train_ratio = 0.5;
    o->learning_rate = optimizer == OPTIMIZER_SGD ? 0.05 : 0.01;
    o->optimizer = optimizer;
}

static void make_trainer(trainer *tr, const snapshot_seq *seq, model_kind kind, const train_options *o)
{
    model_config config = {kind, 0, 12, 0, 2, 0};
    tf_error err;
    ck_assert_msg(trainer_create(tr, seq, &config, o, &err) == TF_OK, "%s", err.message);
}

static void make_async(async_trainer *at, trainer *tr, sync_mode mode, int64_t every, int staleness,
                       const straggler *slow)
{
    async_options o;
    async_options_default(&o);
    o.mode = mode;
    o.every = every;
    o.staleness = staleness;
    if (slow)
        o.straggler = *slow;
    tf_error err;
    ck_assert_msg(opt_async_create(at, tr, &world, &o, &err) == TF_OK, "%s", err.message);
}

/* Averaging every `every` steps: every step of the twin against the simulation. */
static void average_against_simulation(const char *data, model_kind kind, int64_t every, int64_t epochs)
{
    tf_error err;
    dataset d;
    train_options o;
    load_with_options(data, OPTIMIZER_ADAM, &d, &o);
    trainer mine;
    make_trainer(&mine, &d.snapshots, kind, &o);
    async_trainer twin;
    make_async(&twin, &mine, SYNC_AVERAGE, every, 0, NULL);
    replica_set simulation; /* every rank simulates all R replicas, on the twin's kernels */
    model_config config = {kind, 0, 12, 0, 2, 0};
    ck_assert(replica_set_create(&simulation, &d.snapshots, &config, &o, world.size, every, &err) == TF_OK);
    for (int i = 0; i < world.size; i++)
        simulation.replicas[i].model.kernels = &opt_kernels;
    int64_t steps = 0, differing = 0, averages = 0;
    double worst_curve = 0;
    for (int64_t e = 0; e < epochs; e++) {
        int done_twin = 0, done_simulation = 0;
        epoch_report a, b;
        while (!done_twin) {
            ck_assert_msg(opt_async_step(&twin, &d.snapshots, &b, &done_twin, &err) == TF_OK, "%s", err.message);
            ck_assert(ref_local_average_step(&simulation, &d.snapshots, &a, &done_simulation, &err) == TF_OK);
            ck_assert_int_eq(done_twin, done_simulation);
            differing += parameters_differing_values(&mine.model.parameters,
                                              &simulation.replicas[world.rank].model.parameters);
            steps++;
        }
        averages += twin.averages;
        ck_assert_int_eq(twin.averages, simulation.averages);
        worst_curve = fmax(worst_curve, fmax(relative(b.train_loss, a.train_loss), relative(b.test_mse, a.test_mse)));
    }
    const double all_differing = sum_over_ranks((double)differing);
    worst_curve = max_over_ranks(worst_curve);
    if (world.rank == 0)
        printf("average every %lld: %-8s on %-10s %d rank(s): %lld steps x %lld values compared on every rank, %.0f "
               "differ from the serial simulation (must be 0); %lld averages; loss curve %.2e (fp: the loss sums "
               "across ranks)\n",
               (long long)every, model_kind_name(kind), d.name, world.size, (long long)steps,
               (long long)parameters_size(&mine.model.parameters), all_differing, (long long)averages, worst_curve);
    ck_assert(all_differing == 0);
    ck_assert_double_le(worst_curve, TOLERANCE);
    opt_async_free(&twin);
    replica_set_free(&simulation);
    trainer_free(&mine);
    dataset_free(&d);
}

START_TEST(average_equals_simulation_every_step)
{
    average_against_simulation("chickenpox", MODEL_TGCN, 1, 2);
    average_against_simulation("chickenpox", MODEL_TGCN, 4, 2); /* the epoch's end forces one after a partial interval */
    average_against_simulation("chickenpox", MODEL_GCLSTM, 4, 2);
    average_against_simulation(generated, MODEL_TGCN, 2, 2);
}
END_TEST

/* An async twin and synchronous data-parallel training (opt_trainer_epoch()) of the same model on
 * chickenpox with the same options, epoch by epoch side by side. */
typedef struct beside_sync {
    dataset data;
    trainer twin_model;     /* the twin's */
    trainer sync;           /* synchronous training's */
    async_trainer twin;
} beside_sync;

static void beside_sync_create(beside_sync *b, optimizer_kind optimizer, model_kind kind, sync_mode mode,
                               int staleness)
{
    tf_error err;
    train_options o;
    load_with_options("chickenpox", optimizer, &b->data, &o);
    make_trainer(&b->twin_model, &b->data.snapshots, kind, &o);
    make_trainer(&b->sync, &b->data.snapshots, kind, &o);
    make_async(&b->twin, &b->twin_model, mode, 1, staleness, NULL);
    ck_assert(opt_trainer_parallel(&b->sync, &world, &err) == TF_OK);
}

/* One epoch of each: synchronous training's report in @p sync, the twin's in @p twin. */
static void beside_sync_epoch(beside_sync *b, epoch_report *sync, epoch_report *twin)
{
    tf_error err;
    ck_assert(opt_trainer_epoch(&b->sync, &world, &b->data.snapshots, sync, &err) == TF_OK);
    ck_assert(opt_async_epoch(&b->twin, &b->data.snapshots, twin, &err) == TF_OK);
}

static void beside_sync_free(beside_sync *b)
{
    opt_async_free(&b->twin);
    trainer_free(&b->twin_model);
    trainer_free(&b->sync);
    dataset_free(&b->data);
}

/* K = 1 and SGD: the averaged replicas take synchronous SGD's steps, up to rounding. */
START_TEST(average_sgd_every_step_equals_sync)
{
    beside_sync b;
    beside_sync_create(&b, OPTIMIZER_SGD, MODEL_TGCN, SYNC_AVERAGE, 0);
    double worst_curve = 0;
    for (int e = 0; e < 3; e++) {
        epoch_report sync, twin;
        beside_sync_epoch(&b, &sync, &twin);
        worst_curve = fmax(worst_curve, fmax(relative(twin.train_loss, sync.train_loss),
                                             relative(twin.test_mse, sync.test_mse)));
    }
    const double worst_parameter =
        max_over_ranks(parameters_relative_error(&b.twin_model.model.parameters, &b.sync.model.parameters));
    if (world.rank == 0)
        printf("SGD averaged every step against synchronous SGD, %d rank(s), 3 epochs: loss curve %.2e, final "
               "parameters %.2e (fp, must be <= %g)\n",
               world.size, worst_curve, worst_parameter, TOLERANCE);
    ck_assert_double_le(worst_curve, TOLERANCE);
    ck_assert_double_le(worst_parameter, TOLERANCE);
    beside_sync_free(&b);
}
END_TEST

/* Staleness 0 runs the twin's loop with the blocking all-reduce: synchronous training, bit for bit. */
START_TEST(delayed_zero_is_sync)
{
    beside_sync b;
    beside_sync_create(&b, OPTIMIZER_ADAM, MODEL_GCLSTM, SYNC_ALLREDUCE, 0);
    int64_t differing = 0, reports = 0;
    for (int e = 0; e < 2; e++) {
        epoch_report sync, twin;
        beside_sync_epoch(&b, &sync, &twin);
        differing += parameters_differing_values(&b.twin_model.model.parameters, &b.sync.model.parameters);
        reports += memcmp(&sync.train_loss, &twin.train_loss, sizeof(double)) != 0 ||
                   memcmp(&sync.test_mse, &twin.test_mse, sizeof(double)) != 0 || sync.steps != twin.steps;
    }
    const double all = sum_over_ranks((double)(differing + reports));
    if (world.rank == 0)
        printf("staleness 0 against synchronous training, gclstm, %d rank(s), 2 epochs: %.0f parameter values or "
               "epoch reports differ (must be 0)\n",
               world.size, all);
    ck_assert(all == 0);
    beside_sync_free(&b);
}
END_TEST

/* Staleness 1 against the serial delayed recurrence (ref kernels: fp; on one rank also against
 * the recurrence on the twin's kernels: bitwise). */
static void delayed_one(const char *data, model_kind kind, int64_t epochs)
{
    tf_error err;
    dataset d;
    train_options o;
    load_with_options(data, OPTIMIZER_ADAM, &d, &o);
    trainer delayed, reference, same_kernels;
    make_trainer(&delayed, &d.snapshots, kind, &o);
    make_trainer(&reference, &d.snapshots, kind, &o);
    make_trainer(&same_kernels, &d.snapshots, kind, &o);
    same_kernels.model.kernels = &opt_kernels;
    async_trainer twin;
    make_async(&twin, &delayed, SYNC_ALLREDUCE, 1, 1, NULL);
    double worst_curve = 0;
    int64_t steps = 0;
    for (int64_t e = 0; e < epochs; e++) {
        epoch_report a, b, c;
        ck_assert(ref_delayed_epoch(&reference, &d.snapshots, &a, &err) == TF_OK);
        ck_assert_msg(opt_async_epoch(&twin, &d.snapshots, &b, &err) == TF_OK, "%s", err.message);
        if (world.size == 1)
            ck_assert(ref_delayed_epoch(&same_kernels, &d.snapshots, &c, &err) == TF_OK);
        worst_curve = fmax(worst_curve, fmax(relative(b.train_loss, a.train_loss), relative(b.test_mse, a.test_mse)));
        ck_assert_int_eq(a.steps, b.steps);
        steps += b.steps;
    }
    const double worst_parameter = max_over_ranks(parameters_relative_error(&delayed.model.parameters,
                                                                  &reference.model.parameters));
    worst_curve = max_over_ranks(worst_curve);
    if (world.rank == 0) {
        printf("staleness 1: %-8s on %-10s %d rank(s), %lld epochs (%lld optimizer steps): against the serial "
               "recurrence, loss curve %.2e, final parameters %.2e (fp, must be <= %g)",
               model_kind_name(kind), d.name, world.size, (long long)epochs, (long long)steps, worst_curve,
               worst_parameter, TOLERANCE);
        if (world.size == 1)
            printf("; on the same kernels %lld values differ (must be 0)",
                   (long long)parameters_differing_values(&delayed.model.parameters, &same_kernels.model.parameters));
        printf("\n");
    }
    if (world.size == 1)
        ck_assert_int_eq(parameters_differing_values(&delayed.model.parameters, &same_kernels.model.parameters), 0);
    ck_assert_double_le(worst_curve, TOLERANCE);
    ck_assert_double_le(worst_parameter, TOLERANCE);
    ck_assert_int_eq(delayed.optimizer.step, reference.optimizer.step);
    opt_async_free(&twin);
    trainer_free(&delayed);
    trainer_free(&reference);
    trainer_free(&same_kernels);
    dataset_free(&d);
}

START_TEST(delayed_one_equals_recurrence)
{
    delayed_one("chickenpox", MODEL_TGCN, 3);
    delayed_one(generated, MODEL_GCLSTM, 2);
}
END_TEST

/* A straggler sleeps; it does not change a bit. */
START_TEST(straggler_changes_nothing)
{
    tf_error err;
    dataset d;
    train_options o;
    load_with_options("chickenpox", OPTIMIZER_ADAM, &d, &o);
    straggler slow;
    char spelling[32];
    snprintf(spelling, sizeof spelling, "%d:5", 1 % world.size);
    ck_assert(straggler_parse(spelling, &slow, &err) == TF_OK);
    int64_t differing = 0;
    double seconds[2];
    for (int mode = 0; mode < 2; mode++) {
        trainer plain, slowed;
        make_trainer(&plain, &d.snapshots, MODEL_TGCN, &o);
        make_trainer(&slowed, &d.snapshots, MODEL_TGCN, &o);
        async_trainer a, b;
        make_async(&a, &plain, mode ? SYNC_AVERAGE : SYNC_ALLREDUCE, 2, mode ? 0 : 1, NULL);
        make_async(&b, &slowed, mode ? SYNC_AVERAGE : SYNC_ALLREDUCE, 2, mode ? 0 : 1, &slow);
        epoch_report ra, rb;
        ck_assert(opt_async_epoch(&a, &d.snapshots, &ra, &err) == TF_OK);
        double started = wall_seconds();
        ck_assert(opt_async_epoch(&b, &d.snapshots, &rb, &err) == TF_OK);
        seconds[mode] = wall_seconds() - started;
        differing += parameters_differing_values(&plain.model.parameters, &slowed.model.parameters);
        differing += memcmp(&ra.train_loss, &rb.train_loss, sizeof(double)) != 0;
        opt_async_free(&a);
        opt_async_free(&b);
        trainer_free(&plain);
        trainer_free(&slowed);
    }
    const double all = sum_over_ranks((double)differing);
    if (world.rank == 0)
        printf("straggler %s (9 steps of 5 ms), %d rank(s): stale-1 epoch %.3f s, average-2 epoch %.3f s; %.0f values "
               "differ from the runs without it (must be 0)\n",
               spelling, world.size, seconds[0], seconds[1], all);
    ck_assert(all == 0);
    dataset_free(&d);
}
END_TEST

/* The bytes rank 0 sends per epoch are the header's formulas. */
START_TEST(bytes_counted)
{
    tf_error err;
    dataset d;
    train_options o;
    load_with_options("chickenpox", OPTIMIZER_ADAM, &d, &o);
    const uint64_t r = (uint64_t)world.size;
    uint64_t measured[3], expected[3];
    const char *names[3] = {"synchronous", "stale-1", "average-4"};
    for (int mode = 0; mode < 3; mode++) {
        trainer tr;
        make_trainer(&tr, &d.snapshots, MODEL_TGCN, &o);
        async_trainer at;
        make_async(&at, &tr, mode == 2 ? SYNC_AVERAGE : SYNC_ALLREDUCE, 4, mode == 1, NULL);
        const train_schedule s = trainer_schedule(&tr);
        const uint64_t p = (uint64_t)parameters_size(&tr.model.parameters);
        const uint64_t doubles = 2 * (2 * (r - 1) * 8 / r);   /* train loss and test MSE */
        /* one gradient, and synchronous the step's status value beside it (opt/async.h) */
        const uint64_t allreduce = 2 * (r - 1) * (4 * (p + (mode == 0))) / r;
        const uint64_t allgather = (r - 1) * 4 * p;            /* one average */
        const uint64_t averages = (uint64_t)((s.steps + 3) / 4);
        expected[mode] = (mode == 2 ? averages * allgather : (uint64_t)s.steps * allreduce) + doubles;
        const uint64_t before = world.bytes_sent;
        epoch_report report;
        ck_assert(opt_async_epoch(&at, &d.snapshots, &report, &err) == TF_OK);
        measured[mode] = world.bytes_sent - before;
        opt_async_free(&at);
        trainer_free(&tr);
    }
    if (world.rank == 0)
        for (int mode = 0; mode < 3; mode++)
            printf("bytes per epoch, rank 0 of %d: %-11s %10llu (formula %llu)\n", world.size, names[mode],
                   (unsigned long long)measured[mode], (unsigned long long)expected[mode]);
    for (int mode = 0; mode < 3; mode++)
        ck_assert_uint_eq(measured[mode], expected[mode]);
    dataset_free(&d);
}
END_TEST

/* A rank that fails mid-step (--memory-limit, say) frees its reducer with its last all-reduce still
 * in flight and waits in finish_ranks() for the others, polling MPI; the others post their halves
 * of that all-reduce later, and MPI completes it in the failing rank's buffer then. Here ranks 1..
 * R-1 push a gradient, free the reducer and wait in a barrier on a communicator of their own, as
 * finish_ranks() does; rank 0 posts its half after them and collects the sum. The buffers are
 * large allocations, which free() gives back to the system (malloc's mmap threshold set low, so
 * that earlier tests cannot have raised it): written after the free, the failing ranks died of a
 * segmentation fault. */
START_TEST(failed_rank_keeps_buffer_in_flight)
{
#ifdef M_MMAP_THRESHOLD
    mallopt(M_MMAP_THRESHOLD, 64 * 1024);
#endif
    tf_error err;
    parameter_list list = {0, 0, NULL};
    int64_t shape[1] = {1 << 20}; /* 4 MiB of floats */
    ck_assert(parameters_add(&list, "w", 1, shape, &err) == 0);
    for (int64_t k = 0; k < shape[0]; k++)
        list.items[0].grad.data[k] = (float)(world.rank + 1);
    opt_delayed_gradient reducer;
    ck_assert(opt_delayed_gradient_create(&reducer, &world, shape[0], 1, 0, &err) == TF_OK);
    MPI_Comm control;
    MPI_Comm_dup(world.world, &control);
    int apply = 0;
    double worst = 0;
    if (world.rank > 0) {
        ck_assert(opt_delayed_gradient_push(&reducer, &list, &apply, &err) == TF_OK);
        opt_delayed_gradient_free(&reducer); /* the failing rank's way out */
    } else {
        const struct timespec later = {0, 200000000}; /* the failing ranks are waiting by now */
        nanosleep(&later, NULL);
        ck_assert(opt_delayed_gradient_push(&reducer, &list, &apply, &err) == TF_OK);
        ck_assert(opt_delayed_gradient_flush(&reducer, &list, &apply, &err) == TF_OK && apply);
        const double expected = world.size * (world.size + 1) / 2.0; /* ranks add 1, 2, .. R */
        for (int64_t k = 0; k < shape[0]; k++)
            worst = fmax(worst, fabs(list.items[0].grad.data[k] - expected));
        opt_delayed_gradient_free(&reducer);
    }
    MPI_Barrier(control);
    MPI_Comm_free(&control);
    if (world.rank == 0)
        printf("a failed rank's reducer freed with its all-reduce in flight, %d rank(s): every rank alive after "
               "the sum arrived; rank 0's sum off by %g (must be 0)\n",
               world.size, worst);
    ck_assert(worst == 0);
    parameters_free(&list);
#ifdef M_MMAP_THRESHOLD
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
}
END_TEST

int main(int argc, char **argv)
{
    if (start_mpi(&world, &argc, &argv, 0) != 0)
        return 1;
    Suite *suite = suite_create("async_mpi");
    TCase *cases = tcase_create("twins");
    tcase_set_timeout(cases, 600);
    tcase_add_test(cases, average_equals_simulation_every_step);
    tcase_add_test(cases, average_sgd_every_step_equals_sync);
    tcase_add_test(cases, delayed_zero_is_sync);
    tcase_add_test(cases, delayed_one_equals_recurrence);
    tcase_add_test(cases, straggler_changes_nothing);
    tcase_add_test(cases, bytes_counted);
    tcase_add_test(cases, failed_rank_keeps_buffer_in_flight);
    suite_add_tcase(suite, cases);
    return run_suite_mpi(suite, &world);
}
