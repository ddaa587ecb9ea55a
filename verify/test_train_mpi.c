/* Training equivalence: the optimized twin (`--impl opt`: opt kernels, windows shared among
 * MPI ranks, gradients all-reduced) against the reference trainer, on 1..4 ranks (ctest runs
 * this under mpiexec). Every rank also runs the reference alone; the loss curve (train loss
 * and test MSE of every epoch) and the final parameters must agree within the fp tolerance
 * of chapters/00-overview.md ("What equal means"), max |a - b| / max(1, |ref|) <= 1e-5.
 *
 * With 4 windows per step and 3 ranks, rank 0 holds two windows of a step and the others one:
 * the case where dividing by the rank count instead of the window count would go wrong. */
#include <math.h>

#include "datasets/dataset.h"
#include "opt/kernels.h"
#include "opt/train.h"
#include "verify/testing_mpi.h"

#define TOLERANCE 1e-5

static comm world;
static int threads = 1; /* OpenMP threads per rank (opt_set_threads()) */

static double relative(double ours, double reference) { return fabs(ours - reference) / fmax(1.0, fabs(reference)); }

/* Trains the reference and the twin side by side on @p task; returns the worst difference seen. */
static void compare_task(const char *data, model_kind kind, int64_t epochs, train_task task)
{
    tf_error err;
    dataset d;
    ck_assert_msg(dataset_load(data, NULL, &d, &err) == TF_OK, "%s", err.message);
    train_options options;
    train_options_default(&options);
    options.window = 8;
    options.batch = 4;
    options.train_ratio = 0.5;
    options.learning_rate = 0.01;
    options.task = task;
    /* The link task compares SGD steps: GAT's att_dst gets a gradient that is almost all rounding
     * (the softmax over a target's entries ignores a shift common to them all, and d_i shifts them
     * all; only the LeakyReLU's kink lets a little through), and Adam divides it by its own size,
     * so the twin's last-bit differences in it become whole steps (chapter 01: "What verify
     * compares: SGD, because Adam amplifies the last bit"). */
    if (task == TASK_LINK)
        options.optimizer = OPTIMIZER_SGD;
    model_config config = {kind, 0, 12, 0, 2, 0};
    trainer reference, twin;
    ck_assert(trainer_create(&reference, &d.snapshots, &config, &options, &err) == TF_OK);
    ck_assert(trainer_create(&twin, &d.snapshots, &config, &options, &err) == TF_OK);
    ck_assert_msg(opt_trainer_parallel(&twin, &world, &err) == TF_OK, "%s", err.message);
    double worst_curve = 0, worst_parameter = 0;
    for (int64_t e = 0; e < epochs; e++) {
        epoch_report a, b;
        ck_assert(trainer_epoch(&reference, &d.snapshots, &a, &err) == TF_OK);
        ck_assert_msg(opt_trainer_epoch(&twin, &world, &d.snapshots, &b, &err) == TF_OK, "%s", err.message);
        worst_curve = fmax(worst_curve, fmax(relative(b.train_loss, a.train_loss), relative(b.test_mse, a.test_mse)));
        /* the link task's test AP and AUC too, and the classification's accuracy (0 for the others) */
        worst_curve = fmax(worst_curve, fmax(relative(b.test_ap, a.test_ap), relative(b.test_auc, a.test_auc)));
        worst_curve = fmax(worst_curve, relative(b.test_accuracy, a.test_accuracy));
        ck_assert(task != TASK_LINK || (a.test_ap > 0 && a.test_auc > 0));
        ck_assert(task != TASK_CLASSIFY || a.test_accuracy > 0);
    }
    /* The gradients of the last step are still in place: the all-reduced sum divided by the
     * step's window count must equal the reference's mean. */
    double worst_gradient = 0;
    const char *worst_name = "";
    for (int64_t i = 0; i < reference.model.parameters.count; i++) {
        const parameter *a = &reference.model.parameters.items[i], *b = &twin.model.parameters.items[i];
        for (int64_t k = 0; k < a->value.size; k++) {
            if (relative(b->value.data[k], a->value.data[k]) > worst_parameter)
                worst_name = a->name;
            worst_parameter = fmax(worst_parameter, relative(b->value.data[k], a->value.data[k]));
            worst_gradient = fmax(worst_gradient, relative(b->grad.data[k], a->grad.data[k]));
        }
    }
    if (world.rank == 0)
        printf("%-10s on %-14s %s%d rank(s) x %d thread(s), %lld epochs, 4 windows per step: loss curve %.2e, final "
               "parameters %.2e, last step's gradient %.2e\n",
               model_kind_name(kind), d.name, task == TASK_REGRESSION ? "" : task == TASK_LINK ? "link task, "
                                                                                               : "classify task, ",
               world.size, threads, (long long)epochs, worst_curve, worst_parameter, worst_gradient);
    ck_assert_msg(worst_gradient <= TOLERANCE, "%s: gradients differ by %g", model_kind_name(kind), worst_gradient);
    ck_assert_msg(worst_curve <= TOLERANCE, "%s: loss curves differ by %g", model_kind_name(kind), worst_curve);
    ck_assert_msg(worst_parameter <= TOLERANCE, "%s: parameters differ by %g (worst: %s)", model_kind_name(kind),
                  worst_parameter, worst_name);
    trainer_free(&reference);
    trainer_free(&twin);
    dataset_free(&d);
}

static void compare(const char *data, model_kind kind, int64_t epochs)
{
    compare_task(data, kind, epochs, TASK_REGRESSION);
}

START_TEST(chickenpox_all_models)
{
    for (int kind = 0; kind < MODEL_COUNT; kind++)
        compare("chickenpox", (model_kind)kind, 4);
}
END_TEST

START_TEST(generated_graph)
{
    compare("powerlaw:nodes=300,edges=3000,snapshots=40,churn=0.05,arrival=0.02,seed=3", MODEL_TGCN, 3);
    compare("powerlaw:nodes=300,edges=3000,snapshots=40,churn=0.05,arrival=0.02,seed=3", MODEL_GCLSTM, 3);
    compare("powerlaw:nodes=300,edges=3000,snapshots=40,churn=0.05,arrival=0.02,seed=3", MODEL_TGCN2, 3);
    compare("powerlaw:nodes=300,edges=3000,snapshots=40,churn=0.05,arrival=0.02,seed=3", MODEL_WDGCN, 3);
    compare("powerlaw:nodes=300,edges=3000,snapshots=40,churn=0.05,arrival=0.02,seed=3", MODEL_GCONVLSTM, 3);
    compare("powerlaw:nodes=300,edges=3000,snapshots=40,churn=0.05,arrival=0.02,seed=3", MODEL_MPNNLSTM, 3);
    compare("powerlaw:nodes=300,edges=3000,snapshots=40,churn=0.05,arrival=0.02,seed=3", MODEL_GCRNM1, 3);
    compare("powerlaw:nodes=300,edges=3000,snapshots=40,churn=0.05,arrival=0.02,seed=3", MODEL_DCRNN, 3);
    compare("powerlaw:nodes=300,edges=3000,snapshots=40,churn=0.05,arrival=0.02,seed=3", MODEL_CDGCN, 3);
}
END_TEST

/* Link prediction on snapshots through the table: every model, on a small churning graph (the
 * edges of t + 1 change, so the task is not the same pairs every snapshot), SGD steps (see
 * compare_task()); the loss curve includes the test AP and AUC of every epoch. */
/* The twin's logic apart from its kernels: on one rank (more ranks sum the gradients in another
 * order), the twin trainer given the reference's kernels must end on the reference's bits. DCRNN's
 * race (bench/train.sh dcrnn chickenpox 4) ended 1.4e-4 off the reference with the opt kernels; with
 * the reference's kernels in the twin it ends on the same bits, so that difference is the rounding of
 * the optimized products, not a difference in what the twin computes: a hidden state 8e-8 from the
 * head's ReLU kink landed on its other side, and Adam grew that one gradient's jump (bench/drift.c,
 * bench/results/01-models/notes.md). */
START_TEST(dcrnn_twin_logic_bitwise)
{
    if (world.size != 1) {
        if (world.rank == 0)
            printf("dcrnn twin logic: one rank only (%d ranks add the gradients in another order)\n", world.size);
        return;
    }
    tf_error err;
    dataset d;
    ck_assert_msg(dataset_load("chickenpox", NULL, &d, &err) == TF_OK, "%s", err.message);
    train_options options;
    train_options_default(&options);
    options.window = 8, options.batch = 4, options.train_ratio = 0.8, options.learning_rate = 0.01;
    const model_config config = {MODEL_DCRNN, 0, 16, 0, 2, 0};
    trainer reference, twin;
    ck_assert(trainer_create(&reference, &d.snapshots, &config, &options, &err) == TF_OK);
    ck_assert(trainer_create(&twin, &d.snapshots, &config, &options, &err) == TF_OK);
    ck_assert_msg(opt_trainer_parallel(&twin, &world, &err) == TF_OK, "%s", err.message);
    twin.model.kernels = &ref_kernels;
    const int64_t epochs = 4;
    for (int64_t e = 0; e < epochs; e++) {
        epoch_report a, b;
        ck_assert(trainer_epoch(&reference, &d.snapshots, &a, &err) == TF_OK);
        ck_assert_msg(opt_trainer_epoch(&twin, &world, &d.snapshots, &b, &err) == TF_OK, "%s", err.message);
    }
    int64_t differing = 0, values = 0;
    for (int64_t i = 0; i < reference.model.parameters.count; i++) {
        const tensor *a = &reference.model.parameters.items[i].value, *b = &twin.model.parameters.items[i].value;
        values += a->size;
        for (int64_t k = 0; k < a->size; k++)
            differing += memcmp(&a->data[k], &b->data[k], sizeof(float)) != 0;
    }
    printf("dcrnn twin logic: the twin trainer on the reference's kernels, chickenpox, hidden 16, %lld epochs: %lld of "
           "%lld parameters differ in bits from the reference's (must be 0)\n",
           (long long)epochs, (long long)differing, (long long)values);
    ck_assert_int_eq(differing, 0);
    trainer_free(&reference);
    trainer_free(&twin);
    dataset_free(&d);
}
END_TEST

START_TEST(link_task_all_models)
{
    for (int kind = 0; kind < MODEL_COUNT; kind++)
        compare_task("powerlaw:nodes=60,edges=400,snapshots=20,churn=0.1,seed=4", (model_kind)kind, 3, TASK_LINK);
}
END_TEST

/* Node classification on snapshots through the table: every model, on communities that move
 * (a tenth of the vertices each snapshot) with a fifth of them unlabelled; the loss curve includes
 * the test accuracy of every epoch. */
START_TEST(classify_task_all_models)
{
    for (int kind = 0; kind < MODEL_COUNT; kind++)
        compare_task("communities:nodes=60,edges=400,snapshots=20,classes=3,change=0.1,seed=4", (model_kind)kind, 3,
                     TASK_CLASSIFY);
}
END_TEST

/* Two threads per rank: a rank's windows of a step run side by side on its threads, the
 * replicas' gradients added into the rank's (opt/train.c). Still the reference's result. */
START_TEST(two_threads_per_rank)
{
    opt_set_threads(threads = 2);
    /* the four PyG Temporal cells and one stacked model (the threads share out windows, whatever the
     * model: every model of the table runs on one thread per rank above) */
    for (int kind = MODEL_TGCN; kind <= MODEL_EVOLVEGCN; kind++)
        compare("chickenpox", (model_kind)kind, 4);
    compare("chickenpox", MODEL_MPNNLSTM, 4);
    compare("powerlaw:nodes=300,edges=3000,snapshots=40,churn=0.05,arrival=0.02,seed=3", MODEL_GCONVGRU, 3);
    opt_set_threads(threads = 1);
}
END_TEST

int main(int argc, char **argv)
{
    if (start_mpi(&world, &argc, &argv, 0) != 0)
        return 1;
    Suite *suite = suite_create("train_parallel");
    TCase *cases = tcase_create("equivalence");
    tcase_set_timeout(cases, 600);
    tcase_add_test(cases, chickenpox_all_models);
    tcase_add_test(cases, generated_graph);
    tcase_add_test(cases, link_task_all_models);
    tcase_add_test(cases, classify_task_all_models);
    tcase_add_test(cases, two_threads_per_rank);
    tcase_add_test(cases, dcrnn_twin_logic_bitwise);
    suite_add_tcase(suite, cases);
    return run_suite_mpi(suite, &world);
}
