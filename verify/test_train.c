/* Training: determinism, exact resume from a checkpoint, the batching orders and window spans,
 * the gradient of a step being the mean over its windows, learning at all, and the checkpoint
 * errors a user can run into. */
#include <math.h>
#include <sys/stat.h>

#include "datasets/dataset.h"
#include "ref/models/checkpoint.h"
#include "ref/data/npy.h"
#include "ref/train.h"
#include "verify/testing.h"

static void make_trainer(trainer *tr, const snapshot_seq *seq, model_kind kind, const train_options *options)
{
    model_config config = {kind, 0, 6, 0, 2, 0};
    tf_error err;
    ck_assert_msg(trainer_create(tr, seq, &config, options, &err) == TF_OK, "%s", err.message);
}

static void run_epochs(trainer *tr, const snapshot_seq *seq, int64_t until, double *last_loss)
{
    tf_error err;
    while (tr->epoch < until) {
        epoch_report report;
        ck_assert_msg(trainer_epoch(tr, seq, &report, &err) == TF_OK, "%s", err.message);
        *last_loss = report.train_loss;
    }
}

/* Real data natively; under memcheck, which looks for paths, not drift, a small generated graph
 * with the same windows (two per step over the training half). */
static const char *model_loop_data(void)
{
    return test_data("england_covid", "powerlaw:nodes=60,edges=300,snapshots=26,seed=5");
}

START_TEST(same_seed_same_bits)
{
    dataset d;
    load_or_fail(model_loop_data(), &d);
    train_options o = train_options_windows(6, 0, 2, 0.5);
    const int64_t epochs = test_repeats(3, 1);
    for (int kind = 0; kind < MODEL_COUNT; kind++) {
        trainer a, b;
        double loss_a = 0, loss_b = 0;
        make_trainer(&a, &d.snapshots, (model_kind)kind, &o);
        make_trainer(&b, &d.snapshots, (model_kind)kind, &o);
        run_epochs(&a, &d.snapshots, epochs, &loss_a);
        run_epochs(&b, &d.snapshots, epochs, &loss_b);
        int64_t differing = differing_training_state(&a.model.parameters, &a.optimizer,
                                                             &b.model.parameters, &b.optimizer);
        printf("%s: two runs with seed 1, %lld epochs: %lld of %lld values differ, losses %.9g and %.9g\n",
               model_kind_name((model_kind)kind), (long long)epochs, (long long)differing,
               (long long)parameters_size(&a.model.parameters), loss_a, loss_b);
        ck_assert_int_eq(differing, 0);
        ck_assert(memcmp(&loss_a, &loss_b, sizeof loss_a) == 0);
        trainer_free(&a);
        trainer_free(&b);
    }
    dataset_free(&d);
}
END_TEST

/* 2 `half` epochs straight against `half`, a save to `directory`, a load and `half` more: the
 * parameters, Adam's moments, the last loss and the step count must be the same bits. */
static void check_resume(const snapshot_seq *seq, model_kind kind, const train_options *o, int64_t half,
                         const char *directory)
{
    trainer straight, first, resumed;
    double loss_straight = 0, loss_resumed = 0, unused = 0;
    tf_error err;
    make_trainer(&straight, seq, kind, o);
    run_epochs(&straight, seq, 2 * half, &loss_straight);
    make_trainer(&first, seq, kind, o);
    run_epochs(&first, seq, half, &unused);
    ck_assert_msg(trainer_save(&first, directory, &err) == TF_OK, "%s", err.message);
    trainer_free(&first);
    /* A new process would start with other initial values: a different seed shows that
     * everything comes from the checkpoint. */
    train_options other = *o;
    other.seed = 12345;
    make_trainer(&resumed, seq, kind, &other);
    ck_assert_msg(trainer_load(&resumed, directory, &err) == TF_OK, "%s", err.message);
    ck_assert_int_eq(resumed.epoch, half);
    run_epochs(&resumed, seq, 2 * half, &loss_resumed);
    int64_t differing = differing_training_state(&straight.model.parameters, &straight.optimizer,
                                                 &resumed.model.parameters, &resumed.optimizer);
    printf("%s (%s task): %lld epochs straight vs %lld + save + load + %lld: %lld values differ (parameters and "
           "Adam moments), losses %.9g and %.9g, Adam steps %lld and %lld\n",
           model_kind_name(kind), train_task_name(o->task), (long long)(2 * half), (long long)half, (long long)half,
           (long long)differing, loss_straight, loss_resumed, (long long)straight.optimizer.step,
           (long long)resumed.optimizer.step);
    ck_assert_int_eq(differing, 0);
    ck_assert(memcmp(&loss_straight, &loss_resumed, sizeof loss_straight) == 0);
    ck_assert_int_eq(straight.optimizer.step, resumed.optimizer.step);
    trainer_free(&straight);
    trainer_free(&resumed);
}

START_TEST(resume_ends_where_uninterrupted_run_ends)
{
    dataset d;
    load_or_fail(model_loop_data(), &d);
    train_options o = train_options_windows(6, 0, 2, 0.5);
    char directory[256];
    snprintf(directory, sizeof directory, "%s/checkpoint", temporary_directory());
    /* 2 + 2 epochs (1 + 1 under Valgrind: the save and load paths are the same). */
    const int64_t half = test_repeats(2, 1);
    for (int kind = 0; kind < MODEL_COUNT; kind++)
        check_resume(&d.snapshots, (model_kind)kind, &o, half, directory);
    /* A save never replaces a directory that is not a checkpoint. */
    trainer any;
    tf_error err;
    make_trainer(&any, &d.snapshots, MODEL_TGCN, &o);
    EXPECT_INPUT_ERROR(trainer_save(&any, source_path("verify"), &err), &err, "verify", "not a twofold checkpoint");
    trainer_free(&any);
    /* Saving over an existing checkpoint replaces it and leaves no .partial or .previous. */
    struct stat info;
    char side[300];
    snprintf(side, sizeof side, "%s.partial", directory);
    ck_assert_int_ne(stat(side, &info), 0);
    snprintf(side, sizeof side, "%s.previous", directory);
    ck_assert_int_ne(stat(side, &info), 0);
    dataset_free(&d);
}
END_TEST

/* A classification checkpoint: resumed, it ends where the run would have; resumed under another
 * task (regression, link) on the same data and model, it is refused in one line naming both tasks
 * (the head and the loss would mean something else); data without labels cannot classify. */
START_TEST(classify_checkpoint)
{
    dataset d;
    load_or_fail("communities:nodes=30,edges=120,snapshots=12,classes=3,change=0.1,seed=2", &d);
    train_options o = train_options_windows(3, 0, 2, 0.5);
    o.task = TASK_CLASSIFY;
    char directory[256];
    snprintf(directory, sizeof directory, "%s/classify_checkpoint", temporary_directory());
    check_resume(&d.snapshots, MODEL_TGCN, &o, test_repeats(2, 1), directory);
    check_resume(&d.snapshots, MODEL_GCLSTM, &o, 1, directory);
    for (int task = TASK_REGRESSION; task <= TASK_LINK; task++) {
        train_options other = o;
        other.task = (train_task)task;
        trainer resumed;
        tf_error err;
        make_trainer(&resumed, &d.snapshots, MODEL_GCLSTM, &other);
        EXPECT_INPUT_ERROR(trainer_load(&resumed, directory, &err), &err, "trainer.npy",
                           "a checkpoint of the classify task;",
                           task == TASK_LINK ? "this run trains the link task" : "this run trains the regression task");
        trainer_free(&resumed);
    }
    dataset chickenpox;
    load_or_fail("chickenpox", &chickenpox);
    trainer none;
    tf_error err;
    model_config config = {MODEL_TGCN, 0, 6, 0, 2, 0};
    EXPECT_INPUT_ERROR(trainer_create(&none, &chickenpox.snapshots, &config, &o, &err), &err,
                       "--task classify: the data has no class labels");
    dataset_free(&chickenpox);
    dataset_free(&d);
}
END_TEST

/* The batching orders, by their definitions, on 10 windows of 5 snapshots with 4 per step:
 * consecutive steps take {0 1 2 3} {4 5 6 7} {8 9}; across blocks (blocks 0-2, 3-5, 6-8, 9)
 * they take the k-th window of each block, {0 3 6 9} {1 4 7} {2 5 8}. Every window sits in one
 * slot; with stride 3 the windows overlap and the last one is cut at the end of the split. */
START_TEST(schedule_orders_and_spans)
{
    dataset d;
    load_or_fail("chickenpox", &d);
    train_options o = train_options_windows(5, 0, 4, 50.5 / 517.0); /* 50 training snapshots */
    static const int64_t expected[2][3][4] = {
        {{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, -1, -1}},
        {{0, 3, 6, 9}, {1, 4, 7, -1}, {2, 5, 8, -1}},
    };
    for (int order = 0; order < 2; order++) {
        o.batching = order == 0 ? BATCH_CONSECUTIVE : BATCH_ACROSS_BLOCKS;
        trainer tr;
        make_trainer(&tr, &d.snapshots, MODEL_TGCN, &o);
        const train_schedule s = trainer_schedule(&tr);
        ck_assert_int_eq(s.windows, 10);
        ck_assert_int_eq(s.steps, 3);
        int64_t differing = 0, seen[10] = {0};
        printf("%-13s steps:", order == 0 ? "consecutive" : "across blocks");
        for (int64_t step = 0; step < s.steps; step++) {
            int64_t filled = 0;
            printf(" {");
            for (int64_t slot = 0; slot < s.batch; slot++) {
                int64_t w = train_schedule_window(&s, step, slot);
                differing += w != expected[order][step][slot];
                filled += expected[order][step][slot] >= 0;
                if (w >= 0 && w < 10) {
                    seen[w]++;
                    printf(slot ? " %lld" : "%lld", (long long)w);
                }
            }
            printf("}");
            differing += train_schedule_windows_in_step(&s, step) != filled;
        }
        printf("; %lld slots or step sizes differ from the definition (must be 0)\n", (long long)differing);
        ck_assert_int_eq(differing, 0);
        for (int w = 0; w < 10; w++)
            ck_assert_int_eq(seen[w], 1);
        trainer_free(&tr);
    }
    o.stride = 3;
    o.batching = BATCH_CONSECUTIVE;
    trainer tr;
    make_trainer(&tr, &d.snapshots, MODEL_TGCN, &o);
    const train_schedule s = trainer_schedule(&tr);
    int64_t first, count, last_first, last_count;
    train_schedule_span(&s, 15, &first, &count);
    train_schedule_span(&s, s.windows - 1, &last_first, &last_count);
    printf("window 5, stride 3 over 50 snapshots: %lld windows, window 15 is %lld..%lld, the last %lld..%lld\n",
           (long long)s.windows, (long long)first, (long long)(first + count - 1), (long long)last_first,
           (long long)(last_first + last_count - 1));
    ck_assert_int_eq(s.windows, 17); /* starts 0, 3, ..., 48 */
    ck_assert(first == 45 && count == 5);
    ck_assert(last_first == 48 && last_count == 2);
    trainer_free(&tr);
    dataset_free(&d);
}
END_TEST

/* One step over two windows applies the mean of the two windows' gradients. */
START_TEST(step_gradient_is_mean_over_windows)
{
    dataset d;
    load_or_fail("chickenpox", &d);
    train_options o = train_options_windows(5, 0, 2, 10.5 / 517.0); /* 10 training snapshots: two windows, one step */
    trainer tr;
    make_trainer(&tr, &d.snapshots, MODEL_TGCN, &o);
    model fresh; /* same seed, so the same parameters the step started from */
    model_config config = tr.model.config;
    tf_error err;
    ck_assert(model_create(&fresh, &config, o.seed, &err) == TF_OK);
    epoch_report report;
    ck_assert(trainer_epoch(&tr, &d.snapshots, &report, &err) == TF_OK);
    ck_assert_int_eq(report.windows, 2);
    ck_assert_int_eq(report.steps, 1);
    /* Each window's gradient separately, then their mean. */
    const int64_t size = 5 * d.snapshots.num_nodes;
    float *predictions = calloc((size_t)size, sizeof(float)), *dpredictions = calloc((size_t)size, sizeof(float));
    parameters_zero_grad(&fresh.parameters);
    for (int w = 0; w < 2; w++) {
        window_tape tape;
        ck_assert(model_forward(&fresh, &d.snapshots, 5 * w, 5, &tape, predictions, &err) == TF_OK);
        model_window_loss(&d.snapshots, 5 * w, 5, predictions, 1.0f, dpredictions);
        ck_assert(model_backward(&fresh, &d.snapshots, &tape, dpredictions, &err) == TF_OK);
        window_tape_free(&fresh, &tape);
    }
    double worst = 0;
    for (int64_t i = 0; i < fresh.parameters.count; i++) {
        const tensor *mean = &tr.model.parameters.items[i].grad, *sum = &fresh.parameters.items[i].grad;
        for (int64_t k = 0; k < sum->size; k++)
            worst = fmax(worst, fabs(mean->data[k] - sum->data[k] / 2.0) / fmax(1.0, fabs(sum->data[k] / 2.0)));
    }
    printf("step over 2 windows: gradient vs (g1 + g2) / 2: max relative difference %.2e\n", worst);
    ck_assert(worst <= 1e-6);
    free(predictions);
    free(dpredictions);
    model_free(&fresh);
    trainer_free(&tr);
    dataset_free(&d);
}
END_TEST

START_TEST(training_reduces_the_loss)
{
    dataset d;
    load_or_fail("chickenpox", &d);
    train_options o;
    train_options_default(&o);
    o.train_ratio = 0.2;
    trainer tr;
    make_trainer(&tr, &d.snapshots, MODEL_TGCN, &o);
    tf_error err;
    epoch_report first, report;
    ck_assert(trainer_epoch(&tr, &d.snapshots, &first, &err) == TF_OK);
    report = first;
    while (tr.epoch < 20)
        ck_assert(trainer_epoch(&tr, &d.snapshots, &report, &err) == TF_OK);
    printf("T-GCN on chickenpox: train loss %.4f after epoch 1, %.4f after epoch 20; test MSE %.4f -> %.4f\n",
           first.train_loss, report.train_loss, first.test_mse, report.test_mse);
    ck_assert(report.train_loss < 0.95 * first.train_loss);
    ck_assert(report.test_mse < first.test_mse);
    trainer_free(&tr);
    dataset_free(&d);
}
END_TEST

START_TEST(checkpoint_errors)
{
    dataset d;
    load_or_fail("chickenpox", &d);
    train_options o = train_options_windows(6, 0, 2, 0.5);
    trainer tgcn, other;
    tf_error err;
    make_trainer(&tgcn, &d.snapshots, MODEL_TGCN, &o);
    char directory[256];
    snprintf(directory, sizeof directory, "%s/tgcn_checkpoint", temporary_directory());
    ck_assert(trainer_save(&tgcn, directory, &err) == TF_OK);
    EXPECT_INPUT_ERROR(trainer_load(&tgcn, "/nonexistent/checkpoint", &err), &err, "/nonexistent/checkpoint",
                       "no such checkpoint");
    /* A checkpoint of another model is reported as such (trainer.npy is read first), not as a
     * parameter file that is missing. */
    make_trainer(&other, &d.snapshots, MODEL_GCLSTM, &o);
    EXPECT_INPUT_ERROR(trainer_load(&other, directory, &err), &err, "trainer.npy", "a checkpoint of model tgcn",
                       "this run trains gclstm");
    trainer_free(&other);
    /* The same model with another width: trainer.npy names the width. */
    model_config wider = {MODEL_TGCN, 0, 7, 0, 2, 0};
    ck_assert(trainer_create(&other, &d.snapshots, &wider, &o, &err) == TF_OK);
    EXPECT_INPUT_ERROR(trainer_load(&other, directory, &err), &err, "trainer.npy", "saved with hidden 6;",
                       "this run has hidden 7");
    trainer_free(&other);
    /* A stacked model with other pairs: trainer.npy names the layers, whether the run has fewer (which
     * would find every parameter file it asks for) or more. */
    char stacked[256];
    snprintf(stacked, sizeof stacked, "%s/gcrnm1_checkpoint", temporary_directory());
    model_config pairs = {MODEL_GCRNM1, 0, 3, 0, 2, 2};
    ck_assert(trainer_create(&other, &d.snapshots, &pairs, &o, &err) == TF_OK);
    ck_assert(trainer_save(&other, stacked, &err) == TF_OK);
    trainer_free(&other);
    for (int layers = 1; layers <= 3; layers += 2) {
        pairs.layers = layers;
        ck_assert(trainer_create(&other, &d.snapshots, &pairs, &o, &err) == TF_OK);
        EXPECT_INPUT_ERROR(trainer_load(&other, stacked, &err), &err, "trainer.npy", "saved with layers 2;",
                           layers == 1 ? "this run has layers 1" : "this run has layers 3");
        trainer_free(&other);
    }
    /* A damaged trainer.npy. */
    char path[320];
    snprintf(path, sizeof path, "%s/trainer.npy", directory);
    float wrong[3] = {1, 2, 3};
    int64_t shape[1] = {3};
    ck_assert(npy_write(path, NPY_FLOAT32, 1, shape, wrong, &err) == TF_OK);
    EXPECT_INPUT_ERROR(trainer_load(&tgcn, directory, &err), &err, "trainer.npy", "damaged", "expected int64");
    /* Options that cannot work. */
    train_options bad = o;
    bad.train_ratio = 1.5;
    model_config config = {MODEL_TGCN, 0, 6, 0, 2, 0};
    EXPECT_INPUT_ERROR(trainer_create(&other, &d.snapshots, &config, &bad, &err), &err, "train ratio 1.5");
    bad = o;
    bad.train_ratio = 0.001;
    EXPECT_INPUT_ERROR(trainer_create(&other, &d.snapshots, &config, &bad, &err), &err, "empty train or test part");
    config.chebyshev_k = 0;
    config.kind = MODEL_GCONVGRU;
    EXPECT_INPUT_ERROR(trainer_create(&other, &d.snapshots, &config, &o, &err), &err, "Chebyshev order K = 0");
    trainer_free(&tgcn);
    dataset_free(&d);
}
END_TEST

/* Rewrites value `index` of DIRECTORY/trainer.npy (a test of what a load accepts). */
static void set_state(const char *directory, int index, int64_t value)
{
    char path[320];
    snprintf(path, sizeof path, "%s/trainer.npy", directory);
    npy_array a;
    tf_error err;
    ck_assert_msg(npy_read(path, &a, &err) == TF_OK, "%s", err.message);
    ((int64_t *)a.data)[index] = value;
    ck_assert(npy_write(path, NPY_INT64, a.ndim, a.shape, a.data, &err) == TF_OK);
    npy_free(&a);
}

/* trainer.npy is checked before anything is taken from a checkpoint: a damaged epoch or Adam step,
 * a negative second moment, an earlier format, other data, other windows are all refused with a
 * line naming what is wrong (each was once taken as it was). */
START_TEST(checkpoint_state_refused)
{
    dataset d, other_data;
    load_or_fail("chickenpox", &d);
    load_or_fail("pedalme", &other_data);
    train_options o = train_options_windows(6, 0, 2, 0.5);
    trainer tr, other;
    tf_error err;
    make_trainer(&tr, &d.snapshots, MODEL_TGCN, &o);
    double loss;
    run_epochs(&tr, &d.snapshots, 1, &loss);
    char directory[256];
    snprintf(directory, sizeof directory, "%s/tgcn_state_checkpoint", temporary_directory());
    ck_assert(trainer_save(&tr, directory, &err) == TF_OK);
    ck_assert_msg(trainer_load(&tr, directory, &err) == TF_OK, "%s", err.message);
    /* The header: format, family, kind, epoch, step, data (ref/models/checkpoint.h). */
    set_state(directory, CHECKPOINT_FIELD_EPOCH, -1);
    EXPECT_INPUT_ERROR(trainer_load(&tr, directory, &err), &err, "trainer.npy", "epoch -1");
    set_state(directory, CHECKPOINT_FIELD_EPOCH, 1);
    set_state(directory, CHECKPOINT_FIELD_STEP, -7);
    EXPECT_INPUT_ERROR(trainer_load(&tr, directory, &err), &err, "trainer.npy", "Adam step -7");
    set_state(directory, CHECKPOINT_FIELD_STEP, tr.optimizer.step);
    set_state(directory, CHECKPOINT_FIELD_FORMAT, 1);
    EXPECT_INPUT_ERROR(trainer_load(&tr, directory, &err), &err, "trainer.npy", "checkpoint format 1",
                       "train again");
    set_state(directory, CHECKPOINT_FIELD_FORMAT, CHECKPOINT_FORMAT);
    ck_assert_msg(trainer_load(&tr, directory, &err) == TF_OK, "%s", err.message);
    /* A negative second moment (Adam would take its square root). */
    char path[400];
    snprintf(path, sizeof path, "%s/adam.exp_avg_sq.%s.npy", directory, tr.model.parameters.items[0].name);
    tensor moment;
    ck_assert(npy_read_tensor(path, &moment, &err) == TF_OK);
    moment.data[1] = -0.25f;
    ck_assert(npy_write_tensor(path, &moment, &err) == TF_OK);
    tensor_free(&moment);
    EXPECT_INPUT_ERROR(trainer_load(&tr, directory, &err), &err, path, "element 1 is negative");
    /* Another dataset with the same shapes: the digest tells. */
    ck_assert(trainer_save(&tr, directory, &err) == TF_OK);
    make_trainer(&other, &other_data.snapshots, MODEL_TGCN, &o);
    EXPECT_INPUT_ERROR(trainer_load(&other, directory, &err), &err, "trainer.npy", "saved from other data");
    trainer_free(&other);
    /* Other windows or another split of the same data. */
    train_options moved = o;
    moved.window = 5;
    make_trainer(&other, &d.snapshots, MODEL_TGCN, &moved);
    EXPECT_INPUT_ERROR(trainer_load(&other, directory, &err), &err, "saved with windows of 6, stride 6;",
                       "this run has windows of 5, stride 5");
    trainer_free(&other);
    moved = o;
    moved.train_ratio = 0.6;
    make_trainer(&other, &d.snapshots, MODEL_TGCN, &moved);
    EXPECT_INPUT_ERROR(trainer_load(&other, directory, &err), &err, "train snapshots 258;",
                       "this run has train snapshots 310");
    trainer_free(&other);
    printf("trainer.npy refused: epoch -1, step -7, format 1, a negative exp_avg_sq, other data, window, split\n");
    trainer_free(&tr);
    dataset_free(&d);
    dataset_free(&other_data);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("train");
    TCase *cases = tcase_create("train");
    tcase_set_timeout(cases, 600);
    tcase_add_test(cases, same_seed_same_bits);
    tcase_add_test(cases, resume_ends_where_uninterrupted_run_ends);
    tcase_add_test(cases, classify_checkpoint);
    tcase_add_test(cases, schedule_orders_and_spans);
    tcase_add_test(cases, step_gradient_is_mean_over_windows);
    tcase_add_test(cases, training_reduces_the_loss);
    tcase_add_test(cases, checkpoint_errors);
    tcase_add_test(cases, checkpoint_state_refused);
    suite_add_tcase(suite, cases);
    return run_suite(suite);
}
