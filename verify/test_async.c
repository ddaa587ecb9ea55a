/* Chapter 05's serial references (ref/async.h) and the pieces its twins share, in one process:
 *  - SGD by hand; the optimizer option leaves Adam runs untouched;
 *  - stale gradients: step 0 applies nothing, step 1 applies step 0's gradient, a whole epoch is
 *    a delayed loop written here from the trainer's building blocks;
 *  - the chapter's worked example: two ranks, two SGD steps, synchronous, stale and averaged;
 *  - model averaging: the combine by hand, identical replicas average to themselves, one
 *    replica is plain training, SGD averaged every step is synchronous SGD (fp) while Adam is
 *    not (printed), replicas agree after an average while their Adam moments do not;
 *  - DGC's stale embeddings: the chapter's three rows by hand, two rows owed to one receiver over
 *    three epochs through the simulation's product, the threshold's two signs, the
 *    reuse rule, why the cache holds the last SENT copy, and the serial simulation of R ranks
 *    (theta = 0 is bitwise plain training, theta > 0 reuses only rows within theta, bytes counted);
 *  - the prefetch queue: any depth hands out the same stream, stops cleanly, passes errors on;
 *  - the straggler's draws and the options' one-line errors.
 * Small inputs: this suite runs under Valgrind in CI. */
#include <math.h>

#include "datasets/dataset.h"
#include "opt/async.h"
#include "opt/async_pipeline.h"
#include "opt/train.h"
#include "ref/async.h"
#include "ref/async_embeddings.h"
#include "ref/core/digest.h"
#include "ref/nn/sgd.h"
#include "ref/partition.h"
#include "verify/testing.h"
#include "verify/testing_events.h"

#define TOLERANCE 1e-5

static void load(const char *name, dataset *d)
{
    tf_error err;
    ck_assert_msg(dataset_load(name, NULL, d, &err) == TF_OK, "%s", err.message);
}

/* Chickenpox, hidden 4, windows of 8, 4 per step, half the snapshots training: 33 windows in 9
 * steps, the last one holding a single window. */
static void small_options(train_options *o, int64_t batch)
{
    train_options_default(o);
    o->window = 8;
    o->batch = batch;
    o->train_ratio = 0.5;
    o->learning_rate = 0.01;
}

static const model_config small_model = {MODEL_TGCN, 0, 4, 0, 2, 0};

/* Chickenpox and small_options() with 4 windows a step: the data most checks here train on. */
static void load_chickenpox(dataset *d, train_options *o)
{
    load("chickenpox", d);
    small_options(o, 4);
}

static void make_trainer(trainer *tr, const snapshot_seq *seq, const train_options *o)
{
    tf_error err;
    ck_assert_msg(trainer_create(tr, seq, &small_model, o, &err) == TF_OK, "%s", err.message);
}

static double relative(double ours, double reference) { return fabs(ours - reference) / fmax(1.0, fabs(reference)); }

START_TEST(sgd_step_by_hand)
{
    tf_error err;
    parameter_list list = {0, 0, NULL};
    int64_t shape[1] = {3};
    ck_assert(parameters_add(&list, "w", 1, shape, &err) == 0);
    const float values[3] = {1.5f, -2.0f, 0.25f}, gradients[3] = {0.5f, -3.0f, 1e-3f};
    memcpy(list.items[0].value.data, values, sizeof values);
    memcpy(list.items[0].grad.data, gradients, sizeof gradients);
    ref_sgd_step(&list, 0.1);
    int64_t differing = 0;
    for (int k = 0; k < 3; k++) {
        float expected = values[k] - 0.1f * gradients[k];
        differing += memcmp(&expected, &list.items[0].value.data[k], sizeof expected) != 0;
    }
    printf("SGD step p - (float)lr g on 3 values: %lld differ from the hand computation (must be 0)\n",
           (long long)differing);
    ck_assert_int_eq(differing, 0);
    ck_assert(memcmp(list.items[0].grad.data, gradients, sizeof gradients) == 0); /* gradients left alone */
    parameters_free(&list);

    optimizer_kind kind;
    ck_assert(optimizer_kind_parse("sgd", &kind, &err) == TF_OK && kind == OPTIMIZER_SGD);
    ck_assert_str_eq(optimizer_kind_name(kind), "sgd");
    ck_assert(optimizer_kind_parse("adam", &kind, &err) == TF_OK && kind == OPTIMIZER_ADAM);
    EXPECT_INPUT_ERROR(optimizer_kind_parse("adamw", &kind, &err), &err, "adamw", "adam or sgd");
}
END_TEST

/* Staleness 1: nothing moves at step 0, step 1 applies step 0's gradient (so the parameters are
 * the synchronous run's after its step 0), and a whole epoch is the recurrence written here. */
START_TEST(delayed_one_lags_one_step)
{
    dataset d;
    train_options o;
    load_chickenpox(&d, &o);
    const snapshot_seq *seq = &d.snapshots;
    trainer sync, delayed, whole, by_hand;
    make_trainer(&sync, seq, &o);
    make_trainer(&delayed, seq, &o);
    make_trainer(&whole, seq, &o);
    make_trainer(&by_hand, seq, &o);
    const train_schedule s = trainer_schedule(&delayed);
    tf_error err;
    double loss = 0;
    delayed_gradient delay;
    ck_assert(delayed_gradient_create(&delay, &delayed.model.parameters, &err) == TF_OK);
    /* step 0 of the synchronous run */
    parameters_zero_grad(&sync.model.parameters);
    for (int64_t slot = 0; slot < s.batch; slot++)
        ck_assert(trainer_train_slot(&sync, seq, &s, 0, slot, &loss, &err) == TF_OK);
    trainer_apply_gradient(&sync);
    /* steps 0 and 1 of the delayed one */
    int64_t after_step0 = -1, after_step1 = -1;
    for (int64_t step = 0; step < 2; step++) {
        parameters_zero_grad(&delayed.model.parameters);
        for (int64_t slot = 0; slot < s.batch; slot++)
            ck_assert(trainer_train_slot(&delayed, seq, &s, step, slot, &loss, &err) == TF_OK);
        int due = delayed_gradient_exchange(&delay, &delayed.model.parameters);
        ck_assert_int_eq(due, step == 1);
        if (due)
            trainer_apply_gradient(&delayed);
        if (step == 0)
            after_step0 = parameters_differing_values(&delayed.model.parameters, &whole.model.parameters); /* initial */
        else
            after_step1 = parameters_differing_values(&delayed.model.parameters, &sync.model.parameters);
    }
    delayed_gradient_free(&delay);

    /* One epoch by ref_delayed_epoch() against the recurrence with an explicit previous gradient. */
    epoch_report report;
    ck_assert_msg(ref_delayed_epoch(&whole, seq, &report, &err) == TF_OK, "%s", err.message);
    const int64_t size = parameters_size(&by_hand.model.parameters);
    float *previous = malloc((size_t)size * sizeof(float)), *current = malloc((size_t)size * sizeof(float));
    double hand_loss = 0;
    for (int64_t step = 0; step <= s.steps; step++) {
        if (step < s.steps) {
            parameters_zero_grad(&by_hand.model.parameters);
            for (int64_t slot = 0; slot < s.batch; slot++)
                ck_assert(trainer_train_slot(&by_hand, seq, &s, step, slot, &hand_loss, &err) == TF_OK);
            parameters_pack_gradients(&by_hand.model.parameters, current);
        }
        if (step > 0) { /* w_{k+1} = w_k - Adam(g_{k-1}) */
            parameters_unpack_gradients(&by_hand.model.parameters, previous);
            trainer_apply_gradient(&by_hand);
        }
        memcpy(previous, current, (size_t)size * sizeof(float));
    }
    const int64_t epoch_differing = parameters_differing_values(&whole.model.parameters, &by_hand.model.parameters);
    printf("staleness 1 on chickenpox (%lld steps of 4 windows): after step 0, %lld values differ from the initial "
           "ones; after step 1, %lld from synchronous training after its step 0; after the epoch, %lld from the "
           "recurrence written in the test (all must be 0); %lld optimizer steps (must be %lld), train loss %.9g and "
           "%.9g\n",
           (long long)s.steps, (long long)after_step0, (long long)after_step1, (long long)epoch_differing,
           (long long)whole.optimizer.step, (long long)s.steps, report.train_loss, hand_loss / (double)s.windows);
    ck_assert_int_eq(after_step0, 0);
    ck_assert_int_eq(after_step1, 0);
    ck_assert_int_eq(epoch_differing, 0);
    ck_assert_int_eq(whole.optimizer.step, s.steps);
    ck_assert_int_eq(report.steps, s.steps);
    ck_assert(report.train_loss == hand_loss / (double)s.windows);
    free(previous);
    free(current);
    trainer_free(&sync);
    trainer_free(&delayed);
    trainer_free(&whole);
    trainer_free(&by_hand);
    dataset_free(&d);
}
END_TEST

/* The reference event trainer with staleness 1 is the delayed recurrence written out by hand:
 * batch k's gradient is applied at batch k + 1, the first batch of an epoch applies nothing, the
 * last gradient is applied where the training split ends (Adam steps = batches); the memory is
 * written from each batch's own forward. Bitwise, two epochs; staleness 2 is refused. */
START_TEST(event_delayed_one_is_the_recurrence)
{
    tf_error err;
    workload w;
    const char *spec = "events:nodes=40,events=300,repeat=0.5,features=2,seed=3";
    workload_load(&w, spec, spec, 300, EVENT_MODEL_TGN, 40);
    event_train_options options = w.options;
    event_trainer by_hand, delayed;
    ck_assert(event_trainer_create(&by_hand, &w.events, w.events.features, &w.config, &options, &err) == TF_OK);
    options.staleness = 1;
    ck_assert(event_trainer_create(&delayed, &w.events, w.events.features, &w.config, &options, &err) == TF_OK);
    const int64_t P = parameters_size(&delayed.model.parameters);
    float *pending = malloc((size_t)P * sizeof(float)), *current = malloc((size_t)P * sizeof(float));
    const int64_t count = event_trainer_epoch_batches(&delayed, NULL);
    event_batch_spec *specs = malloc((size_t)count * sizeof *specs);
    int64_t differing = 0, batches = 0;
    for (int epoch = 0; epoch < 2; epoch++) {
        event_epoch_report report;
        ck_assert(event_trainer_epoch(&delayed, &report, NULL, NULL, &err) == TF_OK);
        event_trainer_epoch_batches(&by_hand, specs);
        node_memory_reset(&by_hand.memory);
        int has_pending = 0;
        const int64_t before = batches;
        for (int64_t i = 0; i < count && specs[i].train; i++, batches++) {
            const event_batch_spec *s = &specs[i];
            for (int64_t j = 0; j < s->size; j++)
                by_hand.negatives[j] = event_trainer_negative(&by_hand, s->stream, s->first + j);
            event_batch batch = {by_hand.events, by_hand.edge_features, s->first, s->size, by_hand.negatives};
            event_tape tape;
            ck_assert(event_model_forward(&by_hand.model, &by_hand.memory, &by_hand.history, &batch, &tape,
                                          by_hand.scores, &err) == TF_OK);
            event_model_loss(by_hand.scores, s->size, by_hand.dscores);
            parameters_zero_grad(&by_hand.model.parameters);
            ck_assert(event_model_backward(&by_hand.model, &tape, by_hand.dscores, &err) == TF_OK);
            parameters_pack_gradients(&by_hand.model.parameters, current);
            if (has_pending) { /* apply the previous batch's gradient */
                parameters_unpack_gradients(&by_hand.model.parameters, pending);
                ref_adam_step(&by_hand.optimizer, &by_hand.model.parameters);
            }
            memcpy(pending, current, (size_t)P * sizeof(float));
            has_pending = 1;
            event_model_write_memory(&by_hand.model, &tape, &batch, &by_hand.memory);
            event_tape_free(&tape);
        }
        parameters_unpack_gradients(&by_hand.model.parameters, pending); /* the flush */
        ref_adam_step(&by_hand.optimizer, &by_hand.model.parameters);
        by_hand.epoch++;
        for (int64_t i = 0; i < delayed.model.parameters.count; i++)
            differing += differing_values(delayed.model.parameters.items[i].value.data,
                                          by_hand.model.parameters.items[i].value.data,
                                          delayed.model.parameters.items[i].value.size);
        ck_assert_int_eq(report.batches, batches - before);
    }
    printf("event staleness 1: %lld training batches, Adam steps %lld (by hand %lld), differing parameters %lld "
           "(must be 0)\n",
           (long long)batches, (long long)delayed.optimizer.step, (long long)by_hand.optimizer.step,
           (long long)differing);
    ck_assert_int_eq(differing, 0);
    ck_assert_int_eq(delayed.optimizer.step, batches);
    ck_assert_int_eq(by_hand.optimizer.step, batches);
    event_trainer refused;
    options.staleness = 2;
    EXPECT_INPUT_ERROR(event_trainer_create(&refused, &w.events, w.events.features, &w.config, &options, &err), &err,
                       "staleness 2", "0 or 1");
    free(pending), free(current), free(specs);
    event_trainer_free(&by_hand);
    event_trainer_free(&delayed);
    workload_free(&w);
}
END_TEST

START_TEST(average_combine_by_hand)
{
    /* three replicas of 2 values, weights 1, 2, 1 */
    const float replicas[6] = {1.0f, -0.5f, 2.0f, 0.25f, 4.0f, 1e-3f};
    const int64_t weights[3] = {1, 2, 1};
    float out[2];
    local_average_combine(replicas, weights, 3, 2, out);
    int64_t differing = 0;
    for (int k = 0; k < 2; k++) {
        double sum = 1.0 * (double)replicas[k] + 2.0 * (double)replicas[2 + k] + 1.0 * (double)replicas[4 + k];
        float expected = (float)(sum / 4.0);
        differing += memcmp(&expected, &out[k], sizeof expected) != 0;
    }
    /* Identical replicas average to themselves for any weights, thirds included. */
    float same[9], identical_out[3];
    const float x[3] = {0.1f, -1.0f / 3.0f, 12345.678f};
    for (int i = 0; i < 3; i++)
        memcpy(same + 3 * i, x, sizeof x);
    const int64_t uneven[3][3] = {{1, 1, 1}, {3, 1, 0}, {7, 11, 13}};
    int64_t identical_differing = 0;
    for (int w = 0; w < 3; w++) {
        local_average_combine(same, uneven[w], 3, 3, identical_out);
        identical_differing += differing_values(identical_out, x, 3);
    }
    printf("weighted average by hand: %lld of 2 values differ; identical replicas under 3 weightings: %lld of 9 "
           "values differ from the replicas' (both must be 0)\n",
           (long long)differing, (long long)identical_differing);
    ck_assert_int_eq(differing, 0);
    ck_assert_int_eq(identical_differing, 0);
}
END_TEST

/* The chapter's worked example, by hand: one parameter w = 0, two ranks, SGD with lr 1/2; rank 0's
 * window has the gradient w - 4, rank 1's has 2w. Synchronous steps apply the mean, 1.5 w - 2;
 * staleness 1 applies the previous step's mean; averaging lets each rank step alone and then takes
 * local_average_combine() of the two (one window each: weights 1, 1). Every number is a dyadic
 * fraction, exact in float, so each is compared bit for bit with the chapter's. */
static float example_gradient(int rank, float w) { return rank == 0 ? w - 4.0f : 2.0f * w; }

/* One SGD step of lr 1/2 on w by ref_sgd_step(), the trainers' own step. */
static float example_sgd(float w, float gradient)
{
    tf_error err;
    parameter_list list = {0, 0, NULL};
    int64_t shape[1] = {1};
    ck_assert(parameters_add(&list, "w", 1, shape, &err) == 0);
    list.items[0].value.data[0] = w;
    list.items[0].grad.data[0] = gradient;
    ref_sgd_step(&list, 0.5);
    const float moved = list.items[0].value.data[0];
    parameters_free(&list);
    return moved;
}

static float example_mean_gradient(float w) { return 0.5f * (example_gradient(0, w) + example_gradient(1, w)); }

/* Averaging every `every` steps: each rank steps alone, then the weighted average of the two.
 * after[k]: rank 0's w after step k; before[r]: rank r's w just before the last average. */
static void example_averaging(int every, float after[2], float before[2])
{
    float replica[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        for (int r = 0; r < 2; r++)
            replica[r] = example_sgd(replica[r], example_gradient(r, replica[r]));
        if ((k + 1) % every == 0) {
            const int64_t weights[2] = {1, 1}; /* one window each since the last average */
            float combined;
            before[0] = replica[0];
            before[1] = replica[1];
            local_average_combine(replica, weights, 2, 1, &combined);
            replica[0] = replica[1] = combined;
        }
        after[k] = replica[0];
    }
}

START_TEST(worked_example_two_ranks)
{
    /* synchronous: both ranks read w_k and the mean gradient is applied at once */
    float sync[3] = {0};
    for (int k = 0; k < 2; k++)
        sync[k + 1] = example_sgd(sync[k], example_mean_gradient(sync[k]));
    /* staleness 1: step k reads w as it stands and applies g_{k-1}; the flush applies the last */
    const float g0 = example_mean_gradient(0.0f);
    const float w_step0 = 0.0f;                       /* step 0 applies nothing */
    const float g1 = example_mean_gradient(w_step0);  /* step 1 reads w = 0 again */
    const float w_step1 = example_sgd(w_step0, g0);   /* and applies g_0 */
    const float w_flush = example_sgd(w_step1, g1);   /* the flush applies g_1 */
    float every2[2], before2[2], every1[2], before1[2];
    example_averaging(2, every2, before2);
    example_averaging(1, every1, before1);
    printf("worked example (w = 0, gradients w - 4 and 2w, lr 1/2): synchronous %g, %g; staleness 1 %g, %g, after "
           "the flush %g; average every 2: rank 0 %g, rank 1 %g, averaged %g; average every step %g, %g (must be the "
           "synchronous ones)\n",
           sync[1], sync[2], w_step0, w_step1, w_flush, before2[0], before2[1], every2[1], every1[0], every1[1]);
    ck_assert(sync[1] == 1.0f && sync[2] == 1.25f);
    ck_assert(g0 == -2.0f && g1 == -2.0f && w_step1 == 1.0f && w_flush == 2.0f);
    ck_assert(every2[0] == 2.0f && before2[0] == 3.0f && before2[1] == 0.0f && every2[1] == 1.5f);
    ck_assert(every1[0] == sync[1] && every1[1] == sync[2]);
}
END_TEST

/* A replica set of one is plain training, for any interval. */
START_TEST(replicas_one_is_plain)
{
    dataset d;
    train_options o;
    load_chickenpox(&d, &o);
    trainer plain;
    make_trainer(&plain, &d.snapshots, &o);
    replica_set one;
    tf_error err;
    ck_assert_msg(replica_set_create(&one, &d.snapshots, &small_model, &o, 1, 3, &err) == TF_OK, "%s", err.message);
    int64_t differing = 0, loss_differing = 0;
    for (int epoch = 0; epoch < 2; epoch++) {
        epoch_report a, b;
        ck_assert(trainer_epoch(&plain, &d.snapshots, &a, &err) == TF_OK);
        ck_assert_msg(ref_local_average_epoch(&one, &d.snapshots, &b, &err) == TF_OK, "%s", err.message);
        differing += parameters_differing_values(&plain.model.parameters, &one.replicas[0].model.parameters);
        loss_differing += a.train_loss != b.train_loss || a.test_mse != b.test_mse || a.steps != b.steps;
    }
    printf("1 replica averaging every 3 steps against plain training, 2 epochs: %lld parameter values and %lld "
           "epoch reports differ (must be 0); %lld averages in the last epoch\n",
           (long long)differing, (long long)loss_differing, (long long)one.averages);
    ck_assert_int_eq(differing, 0);
    ck_assert_int_eq(loss_differing, 0);
    ck_assert_int_eq(one.averages, 3); /* 9 steps: after steps 3, 6 and 9 */
    trainer_free(&plain);
    replica_set_free(&one);
    dataset_free(&d);
}
END_TEST

/* K = 1 with SGD is synchronous SGD up to rounding: 3 replicas holding 2, 1 and 1 windows of a
 * step (1, 0, 0 in the last), weighted by them. With Adam the two are different algorithms. */
START_TEST(replicas_sgd_every_step_is_synchronous)
{
    dataset d;
    load("chickenpox", &d);
    double errors[2];
    for (int with_adam = 0; with_adam < 2; with_adam++) {
        train_options o;
        small_options(&o, 4);
        o.optimizer = with_adam ? OPTIMIZER_ADAM : OPTIMIZER_SGD;
        o.learning_rate = with_adam ? 0.01 : 0.05;
        trainer sync;
        make_trainer(&sync, &d.snapshots, &o);
        replica_set three;
        tf_error err;
        ck_assert(replica_set_create(&three, &d.snapshots, &small_model, &o, 3, 1, &err) == TF_OK);
        double worst = 0;
        for (int epoch = 0; epoch < 2; epoch++) {
            epoch_report a, b;
            ck_assert(trainer_epoch(&sync, &d.snapshots, &a, &err) == TF_OK);
            ck_assert(ref_local_average_epoch(&three, &d.snapshots, &b, &err) == TF_OK);
            worst = fmax(worst, fmax(relative(b.train_loss, a.train_loss), relative(b.test_mse, a.test_mse)));
        }
        errors[with_adam] = fmax(worst, parameters_relative_error(&three.replicas[0].model.parameters, &sync.model.parameters));
        trainer_free(&sync);
        replica_set_free(&three);
    }
    printf("3 replicas averaged every step against synchronous training, 2 epochs on chickenpox: SGD %.2e (must be "
           "<= %g), Adam %.2e (a different algorithm: each replica's moments see only its gradients)\n",
           errors[0], TOLERANCE, errors[1]);
    ck_assert_double_le(errors[0], TOLERANCE);
    ck_assert_double_gt(errors[1], TOLERANCE);
    dataset_free(&d);
}
END_TEST

START_TEST(replicas_identical_after_average_adam_not)
{
    dataset d;
    train_options o;
    load_chickenpox(&d, &o);
    replica_set three;
    tf_error err;
    ck_assert(replica_set_create(&three, &d.snapshots, &small_model, &o, 3, 2, &err) == TF_OK);
    epoch_report report;
    int done;
    int64_t between = 0, after = 0, moments = 0;
    for (int step = 0; step < 2; step++) {
        ck_assert(ref_local_average_step(&three, &d.snapshots, &report, &done, &err) == TF_OK);
        for (int i = 1; i < 3; i++) {
            int64_t differing = parameters_differing_values(&three.replicas[0].model.parameters,
                                                     &three.replicas[i].model.parameters);
            if (step == 0)
                between += differing;
            else
                after += differing;
        }
    }
    for (int i = 1; i < 3; i++)
        moments += parameters_differing_values(&three.replicas[0].optimizer.moments, &three.replicas[i].optimizer.moments);
    printf("3 replicas, average every 2 steps: after step 1 (local) %lld values differ from replica 0's, after step 2 "
           "(averaged) %lld (must be 0); Adam first moments differing: %lld (never averaged, must be > 0)\n",
           (long long)between, (long long)after, (long long)moments);
    ck_assert_int_gt(between, 0);
    ck_assert_int_eq(after, 0);
    ck_assert_int_gt(moments, 0);
    replica_set_free(&three);
    dataset_free(&d);
}
END_TEST

/* The serial simulation and the MPI twin place slot j on the same replica / rank. */
START_TEST(placement_agrees_with_the_twin)
{
    int64_t disagreements = 0, checked = 0;
    for (int size = 1; size <= 6; size++)
        for (int64_t slot = 0; slot < 40; slot++, checked++)
            disagreements += replica_of_slot(slot, size) != opt_trainer_rank_of(slot, size);
    printf("replica_of_slot against opt_trainer_rank_of on %lld (slot, ranks) pairs: %lld disagree (must be 0)\n",
           (long long)checked, (long long)disagreements);
    ck_assert_int_eq(disagreements, 0);
}
END_TEST

/* theta / D from Eqs. 6-7: both signs start at 1/2; a loss that fell all the way (norm 1) takes
 * the printed one to 1/(1+e) and the text's to 1/(1+1/e); static and zero are constants. */
START_TEST(threshold_schedule)
{
    tf_error err;
    stale_schedule text, printed, fixed, zero;
    ck_assert(stale_schedule_parse("adaptive", &text, &err) == TF_OK);
    ck_assert(stale_schedule_parse("adaptive-printed", &printed, &err) == TF_OK);
    ck_assert(stale_schedule_parse("static:0.3", &fixed, &err) == TF_OK);
    ck_assert(stale_schedule_parse("zero", &zero, &err) == TF_OK);
    const double start_text = stale_threshold_fraction(&text, 2.0, 2.0);
    const double start_printed = stale_threshold_fraction(&printed, 2.0, 2.0);
    const double end_text = stale_threshold_fraction(&text, 2.0, 0.0);
    const double end_printed = stale_threshold_fraction(&printed, 2.0, 0.0);
    const double rising = stale_threshold_fraction(&text, 2.0, 3.0);
    printf("theta/D at epoch 2: text %.5f, printed %.5f; after the loss fell to 0: text %.5f, printed %.5f; loss "
           "risen by half: text %.5f; static:0.3 %.2f; zero %.0f\n",
           start_text, start_printed, end_text, end_printed, rising, stale_threshold_fraction(&fixed, 2.0, 1.0),
           stale_threshold_fraction(&zero, 2.0, 1.0));
    ck_assert(start_text == 0.5 && start_printed == 0.5);
    ck_assert_double_eq_tol(end_printed, 1.0 / (1.0 + exp(1.0)), 1e-15);
    ck_assert_double_eq_tol(end_text, 1.0 / (1.0 + exp(-1.0)), 1e-15);
    ck_assert_double_lt(rising, 0.5);
    ck_assert(stale_threshold_fraction(&fixed, 2.0, 1.0) == 0.3);
    ck_assert(stale_threshold_fraction(&zero, 2.0, 1.0) == 0);
    char name[32];
    ck_assert_str_eq(stale_schedule_name(&fixed, name, sizeof name), "static:0.3");
    ck_assert_str_eq(stale_schedule_name(&printed, name, sizeof name), "adaptive-printed");
}
END_TEST

/* The chapter's worked example of DGC's rule: three rows of one value, all cached as 0, now 0.125,
 * 0.5 and 0 (distances 0.125, 0.5, 0); epoch 2's fraction 1/2 of D = 0.5 gives theta = 0.25, so
 * row 0 is reused stale, row 1 is sent, row 2 is reused exactly; one bitmap byte, 0x02. */
START_TEST(worked_example_stale_rows)
{
    const float rows[3] = {0.125f, 0.5f, 0.0f};
    float cache[3] = {0, 0, 0};
    uint8_t bitmap = 0;
    stale_stats stats;
    memset(&stats, 0, sizeof stats);
    const int64_t stale = stale_decide_rows(rows, NULL, cache, 3, 1, 0.5, 0, &bitmap, &stats);
    printf("worked example (rows 0.125, 0.5, 0 cached as 0, fraction 1/2): bitmap 0x%02x, sent %lld, stale %lld, "
           "exact %lld; worst d/theta %.2f; bytes %llu of %llu; cache now %g %g %g\n",
           bitmap, (long long)stats.rows_sent, (long long)stale, (long long)stats.rows_reused_exact,
           stats.worst_ratio, (unsigned long long)stats.bytes_sent, (unsigned long long)stats.bytes_fresh,
           cache[0], cache[1], cache[2]);
    ck_assert(bitmap == 0x02 && stats.rows_sent == 1 && stale == 1 && stats.rows_reused_exact == 1);
    ck_assert(stats.worst_ratio == 0.5 && stats.bytes_sent == 5 && stats.bytes_fresh == 12);
    ck_assert(cache[0] == 0.0f && cache[1] == 0.5f && cache[2] == 0.0f); /* what the receiver reads */
}
END_TEST

/* Chapter 05b's worked example, through the simulation's own product (what the receiver computes):
 * vertices a = 0 and b = 1 on rank 0, v = 2 on rank 1, edges a -> v and b -> v, y_v = (x_a + x_b) / 2
 * (a mean, no self loop), rows of two values. Epoch 1 sends both rows. Epoch 2 (theta = D / 2): a
 * moved 0.5, b 1.25 (a 3-4-5 step), so a is reused stale and v reads its old copy. Epoch 3, after the
 * loss halved: a has drifted 1 from the copy last sent (0.5 from epoch 2's value) and is sent; b moved
 * 0.5, reused under the text's sign (theta = 0.62 D), sent under the printed one (0.38 D). Every row,
 * mean and byte count is a dyadic fraction, exact in float. */
typedef struct receiver_epoch {
    double fraction;          /* theta / D */
    int64_t sent, stale;      /* rows, this epoch */
    uint64_t bytes;           /* bitmap and fresh rows, this epoch */
    float y_v[2], fresh_v[2]; /* what v's owner computes, and the product on the fresh rows */
} receiver_epoch;

static void receiver_example(stale_schedule_kind kind, receiver_epoch out[3], double *worst_ratio)
{
    static const float x[3][3][2] = {{{1, 0}, {0, 1}, {0, 0}},        /* epoch 1: x_a, x_b, x_v */
                                     {{1.5f, 0}, {0.75f, 2}, {0, 0}}, /* epoch 2 */
                                     {{2, 0}, {0.75f, 2.5f}, {0, 0}}};
    const double losses[2] = {1.0, 0.5}; /* l_1 and l_2: the loss halved */
    const int32_t src[2] = {0, 1}, dst[2] = {2, 2}, owner[3] = {0, 0, 1};
    tf_error err;
    snapshot_seq seq;
    ck_assert(snapshot_seq_alloc(&seq, 1, 3, 2, 1, &err) == TF_OK);
    ck_assert(snapshot_seq_set_edges(&seq, 0, 2, src, dst, NULL, &err) == TF_OK);
    const stale_schedule rule = {kind, 0};
    stale_simulation s;
    ck_assert_msg(stale_simulation_create(&s, &seq, owner, 2, &rule, &ref_kernels, &err) == TF_OK, "%s", err.message);
    propagation p;
    ck_assert(ref_propagation_gcn(&p, &seq.snapshots[0].graph, EDGE_NORM_MEAN, 0, &err) == TF_OK);
    s.training = 1; /* what ref_stale_embeddings_epoch() sets around a trainer's epoch */
    s.train_snapshots = 1;
    for (int e = 0; e < 3; e++) {
        s.epoch = e + 1;
        s.fraction = e >= 1 ? stale_threshold_fraction(&rule, losses[0], losses[e - 1]) : 0;
        ck_assert(s.table.prepare_propagation(&p, &err) == TF_OK); /* each epoch's operator: ordinal 0 again */
        const stale_stats before = s.stats;
        float y[3][2], fresh[3][2];
        s.table.propagate_forward(&p, &x[e][0][0], 2, &y[0][0]);
        ref_propagate_forward(&p, &x[e][0][0], 2, &fresh[0][0]);
        out[e] = (receiver_epoch){s.fraction,
                                  s.stats.rows_sent - before.rows_sent,
                                  s.stats.rows_reused_stale - before.rows_reused_stale,
                                  s.stats.bytes_sent - before.bytes_sent,
                                  {y[2][0], y[2][1]},
                                  {fresh[2][0], fresh[2][1]}};
    }
    *worst_ratio = s.stats.worst_ratio;
    ref_propagation_free(&p);
    stale_simulation_free(&s);
    snapshot_seq_free(&seq);
}

START_TEST(worked_example_receiver)
{
    const stale_schedule_kind kinds[2] = {STALE_ADAPTIVE, STALE_ADAPTIVE_PRINTED};
    receiver_epoch r[2][3];
    double worst[2];
    for (int k = 0; k < 2; k++) {
        receiver_example(kinds[k], r[k], &worst[k]);
        printf("worked example (a, b on rank 0 -> v on rank 1, y_v = (x_a + x_b)/2, %s sign):", k ? "printed" : "text's");
        for (int e = 0; e < 3; e++)
            printf(" epoch %d theta/D %.4f sent %lld stale %lld bytes %llu y_v %g %g (fresh %g %g);", e + 1,
                   r[k][e].fraction, (long long)r[k][e].sent, (long long)r[k][e].stale,
                   (unsigned long long)r[k][e].bytes, r[k][e].y_v[0], r[k][e].y_v[1], r[k][e].fresh_v[0],
                   r[k][e].fresh_v[1]);
        printf(" worst d/theta %.4f\n", worst[k]);
    }
    for (int k = 0; k < 2; k++) {
        /* epoch 1: everything sent, no bitmap; v reads the fresh mean */
        ck_assert(r[k][0].sent == 2 && r[k][0].stale == 0 && r[k][0].bytes == 16);
        ck_assert(r[k][0].y_v[0] == 0.5f && r[k][0].y_v[1] == 0.5f);
        /* epoch 2, theta = D / 2 = 0.625 under both signs: a (d 0.5) stale, b (d 1.25) sent; a bitmap byte and a row */
        ck_assert(r[k][1].fraction == 0.5 && r[k][1].sent == 1 && r[k][1].stale == 1 && r[k][1].bytes == 9);
        ck_assert(r[k][1].y_v[0] == 0.875f && r[k][1].y_v[1] == 1.0f);         /* read with a's old copy (1, 0) */
        ck_assert(r[k][1].fresh_v[0] == 1.125f && r[k][1].fresh_v[1] == 1.0f); /* off by (x_a - c_a) / 2 */
        ck_assert(r[k][2].fresh_v[0] == 1.375f && r[k][2].fresh_v[1] == 1.25f);
    }
    /* epoch 3, D = 1 (a's drift from its last sent copy): the text's theta 0.62 keeps b (d 0.5) stale */
    ck_assert_double_eq_tol(r[0][2].fraction, 1.0 / (1.0 + exp(-0.5)), 1e-15);
    ck_assert(r[0][2].sent == 1 && r[0][2].stale == 1 && r[0][2].bytes == 9);
    ck_assert(r[0][2].y_v[0] == 1.375f && r[0][2].y_v[1] == 1.0f);
    /* the printed theta 0.38 sends both: v reads the fresh rows */
    ck_assert_double_eq_tol(r[1][2].fraction, 1.0 / (1.0 + exp(0.5)), 1e-15);
    ck_assert(r[1][2].sent == 2 && r[1][2].stale == 0 && r[1][2].bytes == 17);
    ck_assert(r[1][2].y_v[0] == 1.375f && r[1][2].y_v[1] == 1.25f);
    ck_assert(worst[1] == 0.8); /* the printed sign's one stale row: a at epoch 2, 0.5 / 0.625 */
    ck_assert_double_eq_tol(worst[0], 0.5 / (1.0 / (1.0 + exp(-0.5))), 1e-12); /* b at epoch 3: 0.5 / 0.62 */
}
END_TEST

START_TEST(reuse_rule)
{
    const float fresh[2] = {1.0f, 2.0f}, near[2] = {1.0f, 2.5f}, far[2] = {1.0f, 3.5f};
    const float plus_zero[2] = {0.0f, 1.0f}, minus_zero[2] = {-0.0f, 1.0f}, nan_row[2] = {NAN, 1.0f};
    double d;
    const int within = stale_reuse(fresh, near, 2, 1.0, &d);      /* d = 0.5 <= 1 */
    const int beyond = stale_reuse(fresh, far, 2, 1.0, &d);       /* d = 1.5 > 1 */
    const int at = stale_reuse(fresh, far, 2, 1.5, &d);           /* d = theta: reused (sent iff d > theta) */
    const int exact = stale_reuse(fresh, fresh, 2, 0.0, &d);      /* theta 0, same bits */
    const int signed_zero = stale_reuse(plus_zero, minus_zero, 2, 0.0, &d); /* distance 0, other bits */
    const int not_a_number = stale_reuse(nan_row, fresh, 2, 1e30, &d);
    printf("reuse: d 0.5 <= theta 1: %d; d 1.5 > theta 1: %d; d = theta: %d; theta 0 same bits: %d; theta 0 with -0 "
           "for +0: %d; NaN: %d\n",
           within, beyond, at, exact, signed_zero, not_a_number);
    ck_assert(within && !beyond && at && exact && !signed_zero && !not_a_number);
}
END_TEST

/* A row drifting delta per epoch with theta just above delta: measured against the previous
 * epoch it would never be sent; against the last sent copy its drift adds up and it is. */
START_TEST(last_sent_not_previous_epoch)
{
    const double delta = 0.1, theta = 0.15;
    float row[1] = {0}, previous[1] = {0}, sent[1] = {0};
    int64_t sends_previous = 0, sends_last = 0;
    char epochs[128] = "";
    for (int epoch = 2; epoch <= 10; epoch++) {
        row[0] = (float)(delta * (epoch - 1));
        double d;
        if (!stale_reuse(row, previous, 1, theta, &d))
            sends_previous++;
        if (!stale_reuse(row, sent, 1, theta, &d)) {
            sends_last++;
            sent[0] = row[0];
            snprintf(epochs + strlen(epochs), sizeof epochs - strlen(epochs), " %d", epoch);
        }
        previous[0] = row[0];
    }
    printf("drift %.2f per epoch, theta %.2f, epochs 2..10: against the previous epoch %lld sends; against the last "
           "sent copy %lld, in epochs%s\n",
           delta, theta, (long long)sends_previous, (long long)sends_last, epochs);
    ck_assert_int_eq(sends_previous, 0);
    ck_assert_int_eq(sends_last, 4); /* every second epoch: 2 delta > theta >= delta */
}
END_TEST

/* The simulation of stale aggregation: a generated graph, owners v % R. */
static const char *const stale_data = "powerlaw:nodes=120,edges=700,snapshots=10,arrival=0.05,seed=4";

static void stale_options(train_options *o)
{
    train_options_default(o);
    o->window = 4;
    o->batch = 1;
    o->train_ratio = 0.8;
    o->learning_rate = 0.01;
}

/* Runs `epochs` epochs of `kind` under the simulation with `schedule` on `ranks` ranks beside a
 * plain trainer; returns the parameter values that differ, fills the stats. */
static int64_t simulate(const dataset *d, model_kind kind, const char *schedule, int ranks, int epochs,
                        stale_stats *stats, double *worst_loss)
{
    tf_error err;
    train_options o;
    stale_options(&o);
    model_config config = {kind, 0, 4, 0, 2, 0};
    trainer plain, stale;
    ck_assert(trainer_create(&plain, &d->snapshots, &config, &o, &err) == TF_OK);
    ck_assert(trainer_create(&stale, &d->snapshots, &config, &o, &err) == TF_OK);
    int32_t *owner = malloc((size_t)d->snapshots.num_nodes * sizeof(int32_t));
    partition_hash(d->snapshots.num_nodes, ranks, owner); /* vertex v on rank v mod R */
    stale_schedule rule;
    ck_assert(stale_schedule_parse(schedule, &rule, &err) == TF_OK);
    stale_simulation s;
    ck_assert_msg(stale_simulation_create(&s, &d->snapshots, owner, ranks, &rule, &ref_kernels, &err) == TF_OK, "%s",
                  err.message);
    stale.model.kernels = &s.table;
    *worst_loss = 0;
    for (int e = 0; e < epochs; e++) {
        epoch_report a, b;
        ck_assert(trainer_epoch(&plain, &d->snapshots, &a, &err) == TF_OK);
        ck_assert_msg(ref_stale_embeddings_epoch(&s, &stale, &d->snapshots, &b, &err) == TF_OK, "%s", err.message);
        *worst_loss = fmax(*worst_loss, relative(b.train_loss, a.train_loss));
    }
    const int64_t differing = parameters_differing_values(&plain.model.parameters, &stale.model.parameters);
    *stats = s.stats;
    stale_simulation_free(&s);
    free(owner);
    trainer_free(&plain);
    trainer_free(&stale);
    return differing;
}

START_TEST(stale_simulation_zero_is_plain)
{
    dataset d;
    load(stale_data, &d);
    const model_kind kinds[2] = {MODEL_GCONVGRU, MODEL_GCLSTM};
    for (int k = 0; k < 2; k++)
        for (int off = 0; off < 2; off++) {
            stale_stats st;
            double loss;
            int64_t differing = simulate(&d, kinds[k], off ? "off" : "zero", 3, 3, &st, &loss);
            printf("%s, theta %s on 3 ranks, 3 epochs: %lld values differ from plain training (must be 0); rows sent "
                   "%lld, reused exactly %lld, stale %lld (must be 0); bytes %llu of the exchange mode's %llu\n",
                   model_kind_name(kinds[k]), off ? "off" : "= 0", (long long)differing, (long long)st.rows_sent,
                   (long long)st.rows_reused_exact, (long long)st.rows_reused_stale,
                   (unsigned long long)st.bytes_sent, (unsigned long long)st.bytes_fresh);
            ck_assert_int_eq(differing, 0);
            ck_assert_int_eq(st.rows_reused_stale, 0);
            ck_assert_uint_gt(st.bytes_fresh, 0);
            if (off)
                ck_assert_uint_eq(st.bytes_sent, st.bytes_fresh);
            else
                ck_assert_int_gt(st.rows_reused_exact, 0); /* zero states at window starts, at least */
        }
    dataset_free(&d);
}
END_TEST

START_TEST(stale_simulation_within_threshold)
{
    dataset d;
    load(stale_data, &d);
    const char *const schedules[3] = {"adaptive", "adaptive-printed", "static:0.5"};
    for (int k = 0; k < 3; k++) {
        stale_stats st;
        double loss;
        int64_t differing = simulate(&d, MODEL_GCONVGRU, schedules[k], 3, 4, &st, &loss);
        printf("gconvgru, %-16s on 3 ranks, 4 epochs: rows sent %lld, reused exactly %lld, stale %lld; worst d/theta "
               "%.4f (must be <= 1); bytes %llu (%llu in bitmaps) of %llu, %.1f%% saved; %lld parameter values moved "
               "away from plain training, train loss within %.2e\n",
               schedules[k], (long long)st.rows_sent, (long long)st.rows_reused_exact, (long long)st.rows_reused_stale,
               st.worst_ratio, (unsigned long long)st.bytes_sent, (unsigned long long)st.bytes_bitmap,
               (unsigned long long)st.bytes_fresh, 100.0 * (1.0 - (double)st.bytes_sent / (double)st.bytes_fresh),
               (long long)differing, loss);
        ck_assert_int_gt(st.rows_reused_stale, 0);
        ck_assert_double_le(st.worst_ratio, 1.0);
        ck_assert_uint_lt(st.bytes_sent, st.bytes_fresh);
        /* every fresh byte is sent, or reused exactly, or reused stale; bitmaps come on top */
        ck_assert_uint_eq(st.bytes_sent + st.bytes_exact + st.bytes_stale, st.bytes_fresh + st.bytes_bitmap);
        ck_assert_int_gt(differing, 0); /* stale rows change the result: this is an approximation */
    }
    stale_stats alone;
    double loss;
    int64_t differing = simulate(&d, MODEL_GCONVGRU, "adaptive", 1, 2, &alone, &loss);
    printf("one rank: %llu bytes (must be 0), %lld values differ from plain training (must be 0)\n",
           (unsigned long long)alone.bytes_sent, (long long)differing);
    ck_assert_uint_eq(alone.bytes_sent + alone.bytes_fresh, 0);
    ck_assert_int_eq(differing, 0);
    dataset_free(&d);
}
END_TEST

/* Graph attention goes through the rule too (GAT-LSTM's and DySAT's structural layer): its rows are the
 * in-neighbours' projections W x_j. theta = 0 is plain training bit for bit, with rows counted (a model
 * whose GAT bypassed the simulation would count none); a static theta reuses rows within it, every
 * byte accounted for, and moves the result away from plain training. */
START_TEST(stale_simulation_attention)
{
    dataset d;
    load(stale_data, &d);
    const model_kind kinds[2] = {MODEL_DYSAT, MODEL_GATLSTM};
    const int epochs = (int)test_repeats(3, 2), models = (int)test_repeats(2, 1); /* Valgrind: DySAT alone */
    for (int k = 0; k < models; k++)
        for (int stale = 0; stale < 2; stale++) {
            stale_stats st;
            double loss;
            int64_t differing = simulate(&d, kinds[k], stale ? "static:0.7" : "zero", 3, epochs, &st, &loss);
            printf("%s, theta %s on 3 ranks, %d epochs: %lld values differ from plain training; rows sent %lld, "
                   "reused exactly %lld, stale %lld; worst d/theta %.4f; bytes %llu (%llu in bitmaps) of the "
                   "exchange mode's %llu\n",
                   model_kind_name(kinds[k]), stale ? "0.7 D" : "= 0", epochs, (long long)differing,
                   (long long)st.rows_sent, (long long)st.rows_reused_exact, (long long)st.rows_reused_stale,
                   st.worst_ratio, (unsigned long long)st.bytes_sent, (unsigned long long)st.bytes_bitmap,
                   (unsigned long long)st.bytes_fresh);
            ck_assert_uint_gt(st.bytes_fresh, 0);
            ck_assert_uint_eq(st.bytes_sent + st.bytes_exact + st.bytes_stale, st.bytes_fresh + st.bytes_bitmap);
            ck_assert_double_le(st.worst_ratio, 1.0);
            if (stale) {
                ck_assert_int_gt(st.rows_reused_stale, 0);
                ck_assert_int_gt(differing, 0);
            } else {
                ck_assert_int_eq(st.rows_reused_stale, 0);
                ck_assert_int_eq(differing, 0);
            }
        }
    dataset_free(&d);
}
END_TEST

/* A stand-in for a batch's structure: contents drawn from a generator keyed by the index, so
 * any thread builds the same item for the same index. */
typedef struct synthetic_batch {
    int64_t index;
    int64_t size;
    float values[64];
} synthetic_batch;

static int build_synthetic(void *context, int64_t index, void *item, tf_error *err)
{
    const int64_t fail_at = *(const int64_t *)context;
    if (index == fail_at)
        return tf_error_set(err, TF_ERR_INPUT, "synthetic batch %lld: cannot be built", (long long)index);
    synthetic_batch *b = item;
    rng r;
    rng_seed(&r, 1000 + (uint64_t)index);
    b->index = index;
    b->size = 1 + (int64_t)rng_below(&r, 64);
    memset(b->values, 0, sizeof b->values);
    for (int64_t k = 0; k < b->size; k++)
        b->values[k] = (float)rng_uniform(&r);
    return TF_OK;
}

static uint64_t hash_synthetic(const synthetic_batch *b, uint64_t hash) { return tf_digest(hash, b, sizeof *b); }

START_TEST(batch_queue_same_stream)
{
    tf_error err;
    synthetic_batch storage[BATCH_QUEUE_MAX_DEPTH + 1];
    void *items[BATCH_QUEUE_MAX_DEPTH + 1];
    for (int k = 0; k <= BATCH_QUEUE_MAX_DEPTH; k++)
        items[k] = &storage[k];
    const int64_t never = -1, at_five = 5;
    uint64_t hashes[BATCH_QUEUE_MAX_DEPTH + 1];
    for (int depth = 0; depth <= BATCH_QUEUE_MAX_DEPTH; depth++) {
        batch_queue q;
        ck_assert(batch_queue_start(&q, depth, 50, items, build_synthetic, (void *)&never, &err) == TF_OK);
        uint64_t hash = TF_DIGEST_START;
        for (int64_t i = 0; i < 50; i++) {
            void *item;
            ck_assert_msg(batch_queue_pop(&q, &item, &err) == TF_OK, "%s", err.message);
            ck_assert_int_eq(((synthetic_batch *)item)->index, i);
            hash = hash_synthetic(item, hash);
            batch_queue_recycle(&q);
        }
        void *item;
        EXPECT_INPUT_ERROR(batch_queue_pop(&q, &item, &err), &err, "no batch left");
        batch_queue_stop(&q);
        batch_queue_stop(&q); /* idempotent */
        hashes[depth] = hash;
    }
    int64_t differing = 0;
    for (int depth = 1; depth <= BATCH_QUEUE_MAX_DEPTH; depth++)
        differing += hashes[depth] != hashes[0];
    /* stopping early joins a producer that may be waiting for a free slot */
    batch_queue early;
    ck_assert(batch_queue_start(&early, 2, 10, items, build_synthetic, (void *)&never, &err) == TF_OK);
    for (int i = 0; i < 3; i++) {
        void *item;
        ck_assert(batch_queue_pop(&early, &item, &err) == TF_OK);
        batch_queue_recycle(&early);
    }
    batch_queue_stop(&early);
    /* a failed build reaches the consumer at its own index, with its message */
    int64_t delivered = 0;
    for (int depth = 0; depth <= BATCH_QUEUE_MAX_DEPTH; depth += 2) {
        batch_queue failing;
        ck_assert(batch_queue_start(&failing, depth, 10, items, build_synthetic, (void *)&at_five, &err) == TF_OK);
        void *item;
        for (int i = 0; i < 5; i++, delivered++) {
            ck_assert(batch_queue_pop(&failing, &item, &err) == TF_OK);
            batch_queue_recycle(&failing);
        }
        EXPECT_INPUT_ERROR(batch_queue_pop(&failing, &item, &err), &err, "synthetic batch 5");
        batch_queue_stop(&failing);
    }
    printf("prefetch queue, 50 synthetic batches at depths 0..%d: %lld stream hashes differ from depth 0's (must be "
           "0); stopped after 3 of 10; a build failing at batch 5 delivered batches 0..4 and then its error (%lld "
           "batches over depths 0, 2, 4)\n",
           BATCH_QUEUE_MAX_DEPTH, (long long)differing, (long long)delivered);
    ck_assert_int_eq(differing, 0);
    batch_queue bad;
    EXPECT_INPUT_ERROR(batch_queue_start(&bad, 5, 10, items, build_synthetic, (void *)&never, &err), &err,
                       "depth 5", "[0, 4]");
    batch_queue_stop(&bad);
}
END_TEST

START_TEST(straggler_draws_replay)
{
    tf_error err;
    straggler one, each;
    ck_assert(straggler_parse("1:5", &one, &err) == TF_OK);
    ck_assert(straggler_parse("each:2:0.25", &each, &err) == TF_OK);
    int64_t others = 0, mine = 0, delayed = 0, replayed = 0, draws = 0;
    for (int rank = 0; rank < 4; rank++)
        for (int64_t step = 0; step < 250; step++, draws++) {
            *(rank == 1 ? &mine : &others) += straggler_is_delayed(&one, rank, 3, step);
            int d = straggler_is_delayed(&each, rank, 3, step);
            delayed += d;
            replayed += d == straggler_is_delayed(&each, rank, 3, step);
        }
    printf("straggler 1:5 delays rank 1 in %lld of 250 steps and the others in %lld; each:2:0.25 delays %lld of %lld "
           "(rank, step) draws, %lld replayed the same\n",
           (long long)mine, (long long)others, (long long)delayed, (long long)draws, (long long)replayed);
    ck_assert_int_eq(mine, 250);
    ck_assert_int_eq(others, 0);
    ck_assert_int_eq(replayed, draws);
    ck_assert(delayed > draws / 8 && delayed < draws / 2); /* about a quarter */
}
END_TEST

START_TEST(option_errors)
{
    tf_error err;
    straggler s;
    EXPECT_INPUT_ERROR(straggler_parse("1:abc", &s, &err), &err, "1:abc");
    EXPECT_INPUT_ERROR(straggler_parse("-1:5", &s, &err), &err, "-1:5");
    EXPECT_INPUT_ERROR(straggler_parse("1:5:2", &s, &err), &err, "1:5:2");
    EXPECT_INPUT_ERROR(straggler_parse("each:5", &s, &err), &err, "each:5");
    EXPECT_INPUT_ERROR(straggler_parse("1:0", &s, &err), &err, "1:0");
    sync_mode mode;
    EXPECT_INPUT_ERROR(sync_mode_parse("gossip", &mode, &err), &err, "gossip", "allreduce or average");
    stale_schedule rule;
    EXPECT_INPUT_ERROR(stale_schedule_parse("static:1.5", &rule, &err), &err, "static:1.5", "[0, 1]");
    EXPECT_INPUT_ERROR(stale_schedule_parse("adaptive-sign", &rule, &err), &err, "adaptive-sign", "adaptive-printed");
    async_options o;
    async_options_default(&o);
    o.staleness = 2;
    EXPECT_INPUT_ERROR(async_options_check(&o, 2, &err), &err, "staleness 2", "0 or 1");
    async_options_default(&o);
    o.mode = SYNC_AVERAGE;
    o.staleness = 1;
    EXPECT_INPUT_ERROR(async_options_check(&o, 2, &err), &err, "one kind of staleness");
    async_options_default(&o);
    ck_assert(straggler_parse("5:100", &o.straggler, &err) == TF_OK);
    EXPECT_INPUT_ERROR(async_options_check(&o, 4, &err), &err, "5:100", "rank 5", "4 rank(s)");

    dataset d;
    train_options options;
    load_chickenpox(&d, &options);
    replica_set rs;
    EXPECT_INPUT_ERROR(replica_set_create(&rs, &d.snapshots, &small_model, &options, 0, 2, &err), &err,
                       "0 replica(s)");
    replica_set_free(&rs);
    EXPECT_INPUT_ERROR(replica_set_create(&rs, &d.snapshots, &small_model, &options, 2, 0, &err), &err,
                       "every 0 step(s)");
    replica_set_free(&rs);
    dataset_free(&d);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("async");
    TCase *cases = tcase_create("references");
    tcase_set_timeout(cases, 600);
    tcase_add_test(cases, sgd_step_by_hand);
    tcase_add_test(cases, delayed_one_lags_one_step);
    tcase_add_test(cases, event_delayed_one_is_the_recurrence);
    tcase_add_test(cases, average_combine_by_hand);
    tcase_add_test(cases, worked_example_two_ranks);
    tcase_add_test(cases, replicas_one_is_plain);
    tcase_add_test(cases, replicas_sgd_every_step_is_synchronous);
    tcase_add_test(cases, replicas_identical_after_average_adam_not);
    tcase_add_test(cases, placement_agrees_with_the_twin);
    tcase_add_test(cases, threshold_schedule);
    tcase_add_test(cases, worked_example_stale_rows);
    tcase_add_test(cases, worked_example_receiver);
    tcase_add_test(cases, reuse_rule);
    tcase_add_test(cases, last_sent_not_previous_epoch);
    tcase_add_test(cases, stale_simulation_zero_is_plain);
    tcase_add_test(cases, stale_simulation_within_threshold);
    tcase_add_test(cases, stale_simulation_attention);
    tcase_add_test(cases, batch_queue_same_stream);
    tcase_add_test(cases, straggler_draws_replay);
    tcase_add_test(cases, option_errors);
    suite_add_tcase(suite, cases);
    return run_suite(suite);
}
