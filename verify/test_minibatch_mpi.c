/* ReInc's sampled mini-batches data-parallel on 1..4 ranks (opt/minibatch.h): every rank builds
 * every mini-batch's sampled graphs itself, the slots of each step are shared among the ranks
 * (batch 4, ReInc's blocks of consecutive windows), and the first layer's aggregation of X_t is
 * served by an incremental engine and cache built over each mini-batch's sampled graphs; against
 * the reference mini-batch epoch (ref/minibatch.h: one process, ref kernels, every aggregation
 * recomputed on the same sampled graphs) on every rank:
 *  - loss curve and final parameters fp-equal (max |a - b| / max(1, |ref|) <= 1e-5), for T-GCN,
 *    GConvLSTM (ReInc's GCRN-M2, integrated) and GCRN-M1 (stacked);
 *  - the only values that cross ranks are gradients (one all-reduce per optimizer step: mini-batches
 *    x steps of the schedule) and two doubles per epoch (train loss, test MSE): the comm layer's
 *    counters must equal exactly that, so no feature, sample or state is ever sent. */
#include <math.h>

#include "datasets/dataset.h"
#include "opt/minibatch.h"
#include "opt/train.h"
#include "verify/testing_mpi.h"

#define TOLERANCE 1e-5

static comm world;

static double relative(double ours, double reference) { return fabs(ours - reference) / fmax(1.0, fabs(reference)); }

/* opt/comm.h's all-reduce formula, 2 (n - 1) S / n bytes for a payload of S on n ranks. */
static uint64_t allreduce_formula(int n, uint64_t payload) { return 2 * (uint64_t)(n - 1) * payload / (uint64_t)n; }

static void compare(const char *data, model_kind kind, int k, optimizer_kind optimizer)
{
    tf_error err;
    dataset d;
    load_or_fail(data, &d);
    const int64_t epochs = 2;
    train_options options = train_options_windows(4, 2, 4, 0.75);
    options.batching = BATCH_ACROSS_BLOCKS;
    options.optimizer = optimizer;
    model_config config = {kind, 0, 4, 0, k, 0};
    minibatch_options o = {25, 0, {0}};
    ck_assert(minibatch_fanout_parse("5,3", &o, &err) == TF_OK);
    incremental_inputs_options inputs;
    incremental_inputs_options_default(&inputs);
    inputs.engine.threshold = INFINITY; /* every delta applied: the default falls back on graphs this small */
    trainer reference, twin;
    ck_assert(trainer_create(&reference, &d.snapshots, &config, &options, &err) == TF_OK);
    ck_assert(trainer_create(&twin, &d.snapshots, &config, &options, &err) == TF_OK);
    ck_assert_msg(opt_trainer_parallel(&twin, &world, &err) == TF_OK, "%s", err.message);
    const uint64_t bytes_before = world.bytes_sent, calls_before = world.calls;
    minibatch_stats stats = {0};
    double worst_curve = 0, worst_parameter = 0;
    int64_t steps = 0;
    for (int64_t e = 0; e < epochs; e++) {
        epoch_report a, b;
        ck_assert_msg(minibatch_epoch(&reference, &d.snapshots, &o, &a, &err) == TF_OK, "%s", err.message);
        ck_assert_msg(opt_minibatch_epoch(&twin, &world, &d.snapshots, &o, &inputs, &stats, &b, &err) == TF_OK, "%s",
                      err.message);
        worst_curve = fmax(worst_curve, fmax(relative(b.train_loss, a.train_loss), relative(b.test_mse, a.test_mse)));
        ck_assert_int_eq(a.steps, b.steps);
        steps += b.steps;
    }
    for (int64_t i = 0; i < reference.model.parameters.count; i++) {
        const parameter *a = &reference.model.parameters.items[i], *b = &twin.model.parameters.items[i];
        for (int64_t j = 0; j < a->value.size; j++)
            worst_parameter = fmax(worst_parameter, relative(b->value.data[j], a->value.data[j]));
    }
    const int alone = world.size == 1;
    const int64_t parameter_count = parameters_size(&twin.model.parameters) + 1;
    const int64_t gradient_calls = alone ? 0 : steps, loss_doubles = alone ? 0 : 2 * epochs;
    const double accounted =
        (double)(gradient_calls * allreduce_formula(world.size, (uint64_t)parameter_count * sizeof(float)) +
                 loss_doubles * allreduce_formula(world.size, sizeof(double)));
    const double sent = (double)(world.bytes_sent - bytes_before);
    const int64_t calls = (int64_t)(world.calls - calls_before);
    if (world.rank == 0)
        printf("%-9s %d rank(s), %lld mini-batches of <= %lld targets, fan-out 5,3, %lld epochs: loss curve %.2e, final "
               "parameters %.2e; rank 0 sent %.0f bytes in %lld all-reduces (%lld of gradients), features and states "
               "0; rank 0's cache %lld hits, %lld misses, engine %lld deltas, %lld full\n",
               model_kind_name(kind), world.size, (long long)stats.batches, (long long)o.size, (long long)epochs,
               worst_curve, worst_parameter, sent, (long long)calls, (long long)gradient_calls, (long long)stats.hits,
               (long long)stats.misses, (long long)stats.engine_deltas, (long long)stats.engine_full);
    ck_assert_msg(worst_curve <= TOLERANCE, "loss curves differ by %g", worst_curve);
    ck_assert_msg(worst_parameter <= TOLERANCE, "parameters differ by %g", worst_parameter);
    ck_assert_msg(fabs(sent - accounted) < 0.5, "sent %.0f bytes, gradients and losses account for %.0f", sent,
                  accounted);
    ck_assert_msg(calls == gradient_calls + loss_doubles, "%lld collectives, gradients and losses account for %lld",
                  (long long)calls, (long long)(gradient_calls + loss_doubles));
    ck_assert(stats.engine_deltas > 0);
    ck_assert(world.size > 1 || stats.hits > 0); /* on more ranks a rank's block can hold one window: no reuse */
    trainer_free(&reference);
    trainer_free(&twin);
    dataset_free(&d);
}

START_TEST(generated_graph)
{
    const char *data = "powerlaw:nodes=60,edges=400,snapshots=10,churn=0.05,features=4,degrees=0,seed=3";
    compare(data, MODEL_TGCN, 1, OPTIMIZER_ADAM);
    compare(data, MODEL_GCONVLSTM, 2, OPTIMIZER_SGD);
    compare(data, MODEL_GCRNM1, 2, OPTIMIZER_SGD);
}
END_TEST

int main(int argc, char **argv)
{
    if (start_mpi(&world, &argc, &argv, 0) != 0)
        return 1;
    Suite *suite = suite_create("minibatch_parallel");
    TCase *cases = tcase_create("equivalence");
    tcase_set_timeout(cases, 600);
    tcase_add_test(cases, generated_graph);
    suite_add_tcase(suite, cases);
    return run_suite_mpi(suite, &world);
}
