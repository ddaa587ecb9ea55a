/* Scheduled data-parallel training (opt/schedule.h) on 1..4 ranks (ctest runs it under mpiexec):
 *  - the epoch gradient at fixed parameters, sum_k grad L_k, is the same under the round-robin,
 *    LPT, greedy and ILP schedules as in one process (a schedule that dropped or repeated a
 *    window would be off by a whole window's gradient);
 *  - training under LPT, greedy and ILP schedules on R ranks equals the reference trainer running
 *    the same iterations in one process (ref_schedule_epoch()): loss curve, test MSE, parameters;
 *  - the gradient-scaling pitfall: with rank 0 holding two windows of an iteration and the other
 *    ranks one, the all-reduced sum divided by the iteration's window count is the reference's
 *    mean, while dividing by each rank's own count and averaging the ranks is not;
 *  - the round-robin schedule of the trainer's steps trains bit for bit as opt_trainer_epoch();
 *  - hybrid batches (fixed sizes, fresh or from a reservoir) on R ranks equal the reference.
 * england_covid (129 vertices, 53 snapshots), T-GCN hidden 8, windows of 4 with stride 1 over
 * half the snapshots (26 windows), times from a linear cost (deterministic). All fp: max
 * |a - b| / max(1, |ref|) <= 1e-5 (chapters/00-overview.md, "What equal means"). */
#include <math.h>

#include "datasets/dataset.h"
#include "opt/schedule.h"
#include "opt/schedule_hybrid_train.h"
#include "opt/train.h"
#include "ref/schedule_cost.h"
#include "verify/testing_mpi.h"

#define TOLERANCE 1e-5

static comm world;
static dataset data;

static double relative(double ours, double reference) { return fabs(ours - reference) / fmax(1.0, fabs(reference)); }

/* The worst relative difference between two trainers' parameters. */
static double parameter_difference(const trainer *reference, const trainer *twin)
{
    double worst = 0;
    for (int64_t i = 0; i < reference->model.parameters.count; i++) {
        const parameter *a = &reference->model.parameters.items[i], *b = &twin->model.parameters.items[i];
        for (int64_t k = 0; k < a->value.size; k++)
            worst = fmax(worst, relative(b->value.data[k], a->value.data[k]));
    }
    return worst;
}

static void make_trainer(trainer *tr, int parallel)
{
    tf_error err;
    train_options options = train_options_windows(4, 1, 1, 0.5);
    model_config config = {MODEL_TGCN, 0, 8, 0, 2, 0};
    ck_assert_msg(trainer_create(tr, &data.snapshots, &config, &options, &err) == TF_OK, "%s", err.message);
    if (parallel)
        ck_assert_msg(opt_trainer_parallel(tr, &world, &err) == TF_OK, "%s", err.message);
}

/* The windows' times under t = 1e-6 rows + 1e-7 edges + 1e-4 s; caller frees. */
static double *linear_times(const trainer *tr, int64_t *groups)
{
    const train_schedule w = trainer_schedule(tr);
    int64_t *rows = malloc((size_t)w.windows * sizeof *rows), *edges = malloc((size_t)w.windows * sizeof *edges);
    double *times = malloc((size_t)w.windows * sizeof *times);
    schedule_group_sizes(&w, &data.snapshots, rows, edges);
    const cost_model m = {1e-6, 1e-7, 1e-4, 0, 0, 1};
    for (int64_t k = 0; k < w.windows; k++)
        times[k] = cost_model_predict(&m, rows[k], edges[k]);
    free(rows);
    free(edges);
    *groups = w.windows;
    return times;
}

static void build(schedule *s, schedule_method method, const trainer *tr, const double *times, int64_t groups)
{
    tf_error err;
    train_schedule steps = trainer_schedule(tr);
    steps.batch = world.size;
    steps.steps = (steps.windows + world.size - 1) / world.size;
    ilp_options ilp = {1, 0.02};
    ck_assert_msg(opt_schedule_build(s, method, times, groups, &world, 2, &steps, 0, &ilp, NULL, &err) == TF_OK, "%s",
                  err.message);
    ck_assert_msg(schedule_validate(s, &err) == TF_OK, "%s", err.message);
}

START_TEST(epoch_gradient_same_under_every_schedule)
{
    tf_error err;
    trainer reference, twin;
    make_trainer(&reference, 0);
    make_trainer(&twin, 1);
    int64_t groups;
    double *times = linear_times(&reference, &groups);
    /* one process: every window at scale 1, in id order */
    const train_schedule w = trainer_schedule(&reference);
    double loss = 0;
    parameters_zero_grad(&reference.model.parameters);
    for (int64_t k = 0; k < w.windows; k++)
        ck_assert(trainer_train_window(&reference, &data.snapshots, &w, k, 1.0f, &loss, &err) == TF_OK);
    const parameter_list *list = &reference.model.parameters;
    const int64_t size = parameters_size(list);
    float *expected = malloc((size_t)size * sizeof *expected), *got = malloc((size_t)size * sizeof *got);
    for (int64_t p = 0, at = 0; p < list->count; p++)
        for (int64_t v = 0; v < list->items[p].grad.size; v++)
            expected[at++] = list->items[p].grad.data[v];
    for (int m = SCHEDULE_ROUNDROBIN; m <= SCHEDULE_ILP; m++) {
        schedule s;
        build(&s, (schedule_method)m, &twin, times, groups);
        ck_assert_msg(opt_schedule_gradient(&twin, &world, &data.snapshots, &s, got, &err) == TF_OK, "%s", err.message);
        double worst = 0;
        for (int64_t i = 0; i < size; i++)
            worst = fmax(worst, relative(got[i], expected[i]));
        if (world.rank == 0)
            printf("epoch gradient, %-10s on %d rank(s), %lld iterations: %.2e against one process (<= 1e-5)\n",
                   schedule_method_name((schedule_method)m), world.size, (long long)s.iterations, worst);
        ck_assert_msg(worst <= TOLERANCE, "%s: %g", schedule_method_name((schedule_method)m), worst);
        schedule_free(&s);
    }
    free(expected);
    free(got);
    free(times);
    trainer_free(&reference);
    trainer_free(&twin);
}
END_TEST

START_TEST(training_equals_single_process_grouping)
{
    tf_error err;
    for (int m = SCHEDULE_LPT; m <= SCHEDULE_ILP; m++) {
        trainer reference, twin;
        make_trainer(&reference, 0);
        make_trainer(&twin, 1);
        int64_t groups;
        double *times = linear_times(&reference, &groups);
        schedule s;
        build(&s, (schedule_method)m, &twin, times, groups);
        double worst_curve = 0, worst_parameter;
        for (int e = 0; e < 2; e++) {
            epoch_report a, b;
            ck_assert_msg(ref_schedule_epoch(&reference, &data.snapshots, &s, &a, &err) == TF_OK, "%s", err.message);
            ck_assert_msg(opt_schedule_epoch(&twin, &world, &data.snapshots, &s, NULL, &b, &err) == TF_OK, "%s",
                          err.message);
            ck_assert_int_eq(a.steps, b.steps);
            worst_curve = fmax(worst_curve, fmax(relative(b.train_loss, a.train_loss), relative(b.test_mse, a.test_mse)));
        }
        worst_parameter = parameter_difference(&reference, &twin);
        if (world.rank == 0)
            printf("training under %-7s on %d rank(s), %lld steps per epoch, 2 epochs: loss curve %.2e, parameters "
                   "%.2e against one process (<= 1e-5)\n",
                   schedule_method_name((schedule_method)m), world.size, (long long)s.iterations, worst_curve,
                   worst_parameter);
        ck_assert(worst_curve <= TOLERANCE);
        ck_assert(worst_parameter <= TOLERANCE);
        schedule_free(&s);
        free(times);
        trainer_free(&reference);
        trainer_free(&twin);
    }
}
END_TEST

/* Copies every gradient into out [size]. */
static void gradients(const parameter_list *list, float *out)
{
    for (int64_t p = 0, at = 0; p < list->count; p++)
        for (int64_t v = 0; v < list->items[p].grad.size; v++)
            out[at++] = list->items[p].grad.data[v];
}

START_TEST(gradient_scaling_pitfall)
{
    if (world.size < 2)
        return; /* the pitfall needs ranks holding different numbers of windows */
    tf_error err;
    trainer reference, twin;
    make_trainer(&reference, 0);
    make_trainer(&twin, 1);
    const train_schedule w = trainer_schedule(&reference);
    const int ranks = world.size;
    const int64_t in_iteration = ranks + 1; /* windows 0 and 1 on rank 0, window r + 1 on rank r >= 1 */
    const int64_t size = parameters_size(&reference.model.parameters);
    float *mean = malloc((size_t)size * sizeof *mean), *right = malloc((size_t)size * sizeof *right),
          *wrong = malloc((size_t)size * sizeof *wrong), *packed = malloc((size_t)size * sizeof *packed);
    double loss = 0;
    /* the reference: the iteration's mean in one process */
    parameters_zero_grad(&reference.model.parameters);
    for (int64_t k = 0; k < in_iteration; k++)
        ck_assert(trainer_train_window(&reference, &data.snapshots, &w, k, 1.0f / (float)in_iteration, &loss, &err) ==
                  TF_OK);
    gradients(&reference.model.parameters, mean);
    /* this rank's windows */
    const int64_t first = world.rank == 0 ? 0 : world.rank + 1, count = world.rank == 0 ? 2 : 1;
    /* the rule: each window scaled by 1 / B_i (B_i = R + 1 on all ranks), all-reduced sum */
    parameters_zero_grad(&twin.model.parameters);
    for (int64_t k = first; k < first + count; k++)
        ck_assert(trainer_train_window(&twin, &data.snapshots, &w, k, 1.0f / (float)in_iteration, &loss, &err) == TF_OK);
    ck_assert(opt_trainer_sum_gradients(&twin.model.parameters, packed, &world, NULL, NULL, &err) == TF_OK);
    gradients(&twin.model.parameters, right);
    /* the pitfall: each rank's own mean (1 / its count), then the ranks averaged (1 / R) */
    parameters_zero_grad(&twin.model.parameters);
    for (int64_t k = first; k < first + count; k++)
        ck_assert(trainer_train_window(&twin, &data.snapshots, &w, k, 1.0f / (float)count, &loss, &err) == TF_OK);
    ck_assert(opt_trainer_sum_gradients(&twin.model.parameters, packed, &world, NULL, NULL, &err) == TF_OK);
    gradients(&twin.model.parameters, wrong);
    double right_error = 0, wrong_error = 0;
    for (int64_t i = 0; i < size; i++) {
        right_error = fmax(right_error, relative(right[i], mean[i]));
        wrong_error = fmax(wrong_error, relative(wrong[i] / (float)ranks, mean[i]));
    }
    if (world.rank == 0)
        printf("an iteration of %lld windows, two on rank 0 and one on each of the other %d: sum / %lld is %.2e from "
               "the mean (<= 1e-5); each rank's own mean averaged over the ranks is %.2e from it (must be > 1e-3)\n",
               (long long)in_iteration, ranks - 1, (long long)in_iteration, right_error, wrong_error);
    ck_assert(right_error <= TOLERANCE);
    ck_assert(wrong_error > 1e-3);
    parameters_zero_grad(&twin.model.parameters);
    free(mean);
    free(right);
    free(wrong);
    free(packed);
    trainer_free(&reference);
    trainer_free(&twin);
}
END_TEST

/* Round-robin of the trainer's own steps is the placement opt_trainer_epoch() uses (slot j on
 * rank j mod R): the same windows on the same ranks in the same order, so the same bits. */
START_TEST(roundrobin_is_the_trainers_placement)
{
    tf_error err;
    trainer a, b;
    make_trainer(&a, 1);
    make_trainer(&b, 1);
    a.options.batch = b.options.batch = 4; /* 4 windows per step: on 3 ranks, rank 0 holds two */
    schedule s;
    const train_schedule steps = trainer_schedule(&a);
    ck_assert(ref_schedule_roundrobin(&s, &steps, world.size, &err) == TF_OK);
    int64_t differing = 0;
    for (int e = 0; e < 2; e++) {
        epoch_report ra, rb;
        ck_assert(opt_trainer_epoch(&a, &world, &data.snapshots, &ra, &err) == TF_OK);
        ck_assert(opt_schedule_epoch(&b, &world, &data.snapshots, &s, NULL, &rb, &err) == TF_OK);
        differing += memcmp(&ra.train_loss, &rb.train_loss, sizeof(double)) != 0;
        differing += memcmp(&ra.test_mse, &rb.test_mse, sizeof(double)) != 0;
    }
    for (int64_t i = 0; i < a.model.parameters.count; i++)
        differing += differing_values(a.model.parameters.items[i].value.data, b.model.parameters.items[i].value.data,
                                    a.model.parameters.items[i].value.size);
    if (world.rank == 0)
        printf("round-robin schedule vs opt_trainer_epoch, batch 4 on %d rank(s), 2 epochs: %lld values differ (must "
               "be 0)\n", world.size, (long long)differing);
    ck_assert_int_eq(differing, 0);
    schedule_free(&s);
    trainer_free(&a);
    trainer_free(&b);
}
END_TEST

/* Hybrid batches, fixed sizes, 4 per step: the data-parallel epoch on R ranks against the reference
 * epoch in one process, with fresh batches and with a reservoir (serial in the reference, a
 * generator thread per rank in the twin: one batch size, one thread). */
START_TEST(hybrid_fixed_equals_single_process)
{
    tf_error err;
    for (int reservoir = 0; reservoir <= 1; reservoir++) {
        trainer reference, twin;
        make_trainer(&reference, 0);
        make_trainer(&twin, 1);
        hybrid_options o;
        hybrid_options_default(&o);
        o.batch = 4;
        o.reservoir = reservoir;
        hybrid_run ref_run, twin_run;
        ck_assert_msg(hybrid_run_create(&ref_run, &reference, &data.snapshots, &o, &err) == TF_OK, "%s", err.message);
        o.reservoir = 0;
        ck_assert(hybrid_run_create(&twin_run, &twin, &data.snapshots, &o, &err) == TF_OK);
        opt_reservoir *threaded = NULL;
        if (reservoir)
            ck_assert(opt_hybrid_use_reservoir(&twin_run, 1, &threaded, &err) == TF_OK); /* one size: one thread */
        double worst_curve = 0, worst_parameter;
        for (int e = 0; e < 2; e++) {
            epoch_report a, b;
            ck_assert_msg(ref_hybrid_epoch(&reference, &ref_run, &data.snapshots, &a, &err) == TF_OK, "%s", err.message);
            ck_assert_msg(opt_hybrid_epoch(&twin, &twin_run, &world, &data.snapshots, &b, &err) == TF_OK, "%s",
                          err.message);
            ck_assert_int_eq(a.steps, b.steps);
            worst_curve = fmax(worst_curve, fmax(relative(b.train_loss, a.train_loss), relative(b.test_mse, a.test_mse)));
        }
        worst_parameter = parameter_difference(&reference, &twin);
        if (world.rank == 0)
            printf("hybrid batches %lld x %lld, 4 per step, %s, on %d rank(s), 2 epochs of %lld steps: loss curve "
                   "%.2e, parameters %.2e against one process (<= 1e-5)\n",
                   (long long)ref_run.sizes[0].targets, (long long)ref_run.sizes[0].snapshots,
                   reservoir ? "reservoir (a generator thread per rank)" : "fresh", world.size,
                   (long long)ref_run.steps_per_epoch, worst_curve, worst_parameter);
        ck_assert(worst_curve <= TOLERANCE);
        ck_assert(worst_parameter <= TOLERANCE);
        hybrid_run_free(&ref_run);
        hybrid_run_free(&twin_run);
        opt_reservoir_free(threaded);
        trainer_free(&reference);
        trainer_free(&twin);
    }
}
END_TEST

int main(int argc, char **argv)
{
    if (start_mpi(&world, &argc, &argv, 0) != 0)
        return 1;
    tf_error err;
    if (dataset_load("england_covid", NULL, &data, &err) != TF_OK) {
        fprintf(stderr, "%s\n", err.message);
        comm_finalize(&world);
        return 1;
    }
    Suite *suite = suite_create("schedule_parallel");
    TCase *cases = tcase_create("equivalence");
    tcase_set_timeout(cases, 600);
    tcase_add_test(cases, epoch_gradient_same_under_every_schedule);
    tcase_add_test(cases, training_equals_single_process_grouping);
    tcase_add_test(cases, gradient_scaling_pitfall);
    tcase_add_test(cases, roundrobin_is_the_trainers_placement);
    tcase_add_test(cases, hybrid_fixed_equals_single_process);
    suite_add_tcase(suite, cases);
    const int status = run_suite_mpi(suite, &world);
    dataset_free(&data);
    return status;
}
