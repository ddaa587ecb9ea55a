/* Training event models: the split, determinism, exact resume from a checkpoint, learning at
 * all, and the errors a user can run into (too few events, edge features of the wrong shape,
 * checkpoints of another model). */
#include <math.h>
#include <sys/stat.h>

#include "datasets/generate.h"
#include "ref/models/checkpoint.h"
#include "ref/data/npy.h"
#include "ref/train_events.h"
#include "verify/testing.h"

static void generated(event_stream *es, int64_t nodes, int64_t events, int64_t features)
{
    event_params p;
    event_params_default(&p);
    p.num_nodes = nodes;
    p.num_events = events;
    p.feature_width = features;
    p.seed = 71;
    tf_error err;
    ck_assert(generate_events(&p, es, &err) == TF_OK);
}

/* The length of the streams the determinism, resume and evaluation checks train on: 800 events
 * natively; 240 under Valgrind, still three training batches of 64 (the last one short), a validation
 * and a test batch, so every path of an epoch runs. What they check are equalities of bits, which
 * hold on any length. */
static int64_t checked_events(void) { return test_repeats(800, 240); }

static void small_config(event_model_config *config, event_model_kind kind, int64_t edge_width)
{
    event_model_config_default(config, kind);
    config->memory_width = 6;
    config->time_width = 4;
    config->embedding_width = 6;
    config->edge_width = edge_width;
}

static void small_options(event_train_options *options)
{
    event_train_options_default(options);
    options->batch_size = 64;
    options->learning_rate = 1e-3;
}

static void make(event_trainer *tr, const event_stream *es, event_model_kind kind, const event_train_options *o)
{
    event_model_config config;
    small_config(&config, kind, es->feature_width);
    tf_error err;
    ck_assert_msg(event_trainer_create(tr, es, es->features, &config, o, &err) == TF_OK, "%s", err.message);
}

static void run_epochs(event_trainer *tr, int64_t until, event_epoch_report *last)
{
    tf_error err;
    while (tr->epoch < until)
        ck_assert_msg(event_trainer_epoch(tr, last, NULL, NULL, &err) == TF_OK, "%s", err.message);
}

START_TEST(split_70_15_15)
{
    /* 10 events: 7 train (0..6), 10 * 85 / 100 = 8, so 1 validates (7) and 2 test (8, 9). */
    event_stream es;
    generated(&es, 20, 10, 0);
    event_train_options o;
    small_options(&o);
    event_trainer tr;
    make(&tr, &es, EVENT_MODEL_JODIE, &o);
    ck_assert_int_eq(tr.train_end, 7);
    ck_assert_int_eq(tr.validation_end, 8);
    event_trainer_free(&tr);
    event_stream_free(&es);
    /* Wikipedia's 157,474 events: 110,231 / 23,621 / 23,622. */
    generated(&es, 20, 157474, 0);
    make(&tr, &es, EVENT_MODEL_JODIE, &o);
    printf("157474 events split at %lld and %lld\n", (long long)tr.train_end, (long long)tr.validation_end);
    ck_assert_int_eq(tr.train_end, 110231);
    ck_assert_int_eq(tr.validation_end - tr.train_end, 23621);
    event_trainer_free(&tr);
    event_stream_free(&es);
}
END_TEST

/* Negatives come from every vertex of the stream, or only from its destinations. */
START_TEST(negative_candidates)
{
    /* Vertices 0..19: sources are 0..9 only when the stream is made bipartite below. */
    event_stream es;
    generated(&es, 20, 200, 0);
    for (int64_t i = 0; i < es.num_events; i++) {
        es.src[i] %= 10;
        es.dst[i] = 10 + es.dst[i] % 10;
    }
    event_train_options o;
    small_options(&o);
    for (int mode = EVENT_NEGATIVES_ALL; mode <= EVENT_NEGATIVES_DESTINATIONS; mode++) {
        o.negatives = (event_negatives)mode;
        event_trainer tr;
        make(&tr, &es, EVENT_MODEL_JODIE, &o);
        int64_t sources = 0;
        for (int64_t k = 0; k < tr.candidate_count; k++)
            sources += tr.candidates[k] < 10;
        printf("negatives from %s: %lld candidates, %lld of them sources only\n",
               mode == EVENT_NEGATIVES_ALL ? "all vertices" : "destinations", (long long)tr.candidate_count,
               (long long)sources);
        ck_assert_int_eq(sources, mode == EVENT_NEGATIVES_ALL ? 10 : 0);
        ck_assert_int_eq(tr.candidate_count - sources, 10);
        /* The negatives of a trained epoch are drawn from these only. */
        event_epoch_report report;
        tf_error err;
        ck_assert(event_trainer_epoch(&tr, &report, NULL, NULL, &err) == TF_OK);
        for (int64_t j = 0; j < o.batch_size && mode == EVENT_NEGATIVES_DESTINATIONS; j++)
            ck_assert_int_ge(tr.negatives[j], 10);
        event_trainer_free(&tr);
    }
    event_stream_free(&es);
}
END_TEST

/* Negatives are keyed by event: a batch's negatives are event_trainer_negative() of its events
 * whatever the batch size, so every event keeps its negative when the batching changes; and the
 * draws are uniform over the candidates (a chi-square bound far above its 99.9 % point). */
START_TEST(negatives_keyed_by_event)
{
    event_stream es;
    generated(&es, 20, 300, 0);
    event_train_options o;
    small_options(&o);
    event_trainer a, b;
    o.batch_size = 50;
    make(&a, &es, EVENT_MODEL_JODIE, &o);
    o.batch_size = 33;
    make(&b, &es, EVENT_MODEL_JODIE, &o);
    tf_error err;
    int64_t checked = 0;
    for (int64_t first = 0; first + 50 <= a.train_end; first += 50) {
        double loss;
        event_batch_spec slot = {first, 50, 1234, 0, EVENT_SPLIT_TRAIN};
        ck_assert(event_trainer_run_batch(&a, &slot, &loss, NULL, &err) == TF_OK);
        for (int64_t j = 0; j < 50; j++, checked++)
            ck_assert_int_eq(a.negatives[j], event_trainer_negative(&b, 1234, first + j));
    }
    int64_t counts[20] = {0};
    const int64_t draws = 20000;
    for (int64_t e = 0; e < draws; e++)
        counts[event_trainer_negative(&a, 77, e)]++;
    double chi_square = 0, expected = (double)draws / (double)a.candidate_count;
    for (int64_t k = 0; k < a.candidate_count; k++)
        chi_square += pow((double)counts[a.candidates[k]] - expected, 2) / expected;
    printf("negatives keyed by event: %lld checked against another batch size; %lld draws over %lld candidates, "
           "chi-square %.1f (%lld degrees of freedom)\n",
           (long long)checked, (long long)draws, (long long)a.candidate_count, chi_square,
           (long long)a.candidate_count - 1);
    ck_assert_int_gt(checked, 0);
    ck_assert(chi_square < 60); /* 19 degrees of freedom: the 99.9 % point is 43.8 */
    event_trainer_free(&a);
    event_trainer_free(&b);
    event_stream_free(&es);
}
END_TEST

START_TEST(same_seed_same_bits)
{
    event_stream es;
    generated(&es, 60, checked_events(), 2);
    event_train_options o;
    small_options(&o);
    for (int kind = EVENT_MODEL_TGN; kind <= EVENT_MODEL_JODIE; kind++) {
        event_trainer a, b;
        event_epoch_report ra, rb;
        make(&a, &es, (event_model_kind)kind, &o);
        make(&b, &es, (event_model_kind)kind, &o);
        run_epochs(&a, 2, &ra);
        run_epochs(&b, 2, &rb);
        int64_t differing = differing_training_state(&a.model.parameters, &a.optimizer,
                                                             &b.model.parameters, &b.optimizer);
        printf("%s: two runs with seed 1, 2 epochs of %lld events: %lld of %lld values differ; test AP %.9g and %.9g\n",
               event_model_kind_name((event_model_kind)kind), (long long)es.num_events, (long long)differing,
               (long long)parameters_size(&a.model.parameters), ra.test.average_precision, rb.test.average_precision);
        ck_assert_int_eq(differing, 0);
        ck_assert(memcmp(&ra, &rb, sizeof ra) == 0);
        /* The node memory after the epoch too (it is not saved, but it must not vary). */
        ck_assert(memcmp(a.memory.memory, b.memory.memory,
                         (size_t)(a.memory.num_nodes * a.memory.memory_width) * sizeof(float)) == 0);
        event_trainer_free(&a);
        event_trainer_free(&b);
    }
    event_stream_free(&es);
}
END_TEST

START_TEST(resume_ends_where_uninterrupted_run_ends)
{
    event_stream es;
    generated(&es, 60, checked_events(), 0);
    event_train_options o;
    small_options(&o);
    char directory[256];
    snprintf(directory, sizeof directory, "%s/event_checkpoint", temporary_directory());
    /* APAN (its rings restart at every epoch like the other memories, and --mails is in trainer.npy):
     * natively only, since six epochs of its mailbox attention would add minutes under Valgrind, where
     * its memory is checked by test_event_gradcheck and checkpoint_errors below. */
    const int last = test_repeats(EVENT_MODEL_APAN, EVENT_MODEL_JODIE);
    for (int kind = EVENT_MODEL_TGN; kind <= last; kind++) {
        event_trainer straight, first, resumed;
        event_epoch_report r_straight, r_first, r_resumed;
        tf_error err;
        make(&straight, &es, (event_model_kind)kind, &o);
        run_epochs(&straight, 3, &r_straight);
        make(&first, &es, (event_model_kind)kind, &o);
        run_epochs(&first, 1, &r_first);
        ck_assert_msg(event_trainer_save(&first, directory, &err) == TF_OK, "%s", err.message);
        event_trainer_free(&first);
        /* Another seed: initial values and negatives must all come from the checkpoint. */
        event_train_options other = o;
        other.seed = 999;
        make(&resumed, &es, (event_model_kind)kind, &other);
        ck_assert_msg(event_trainer_load(&resumed, directory, &err) == TF_OK, "%s", err.message);
        ck_assert_int_eq(resumed.epoch, 1);
        ck_assert_int_eq(resumed.options.seed, o.seed);
        run_epochs(&resumed, 3, &r_resumed);
        int64_t differing = differing_training_state(&straight.model.parameters, &straight.optimizer,
                                                             &resumed.model.parameters, &resumed.optimizer);
        printf("%s: 3 epochs of %lld events straight vs 1 + save + load + 2: %lld values differ; test AP %.9g and "
               "%.9g, Adam steps %lld and %lld\n",
               event_model_kind_name((event_model_kind)kind), (long long)es.num_events, (long long)differing,
               r_straight.test.average_precision,
               r_resumed.test.average_precision, (long long)straight.optimizer.step, (long long)resumed.optimizer.step);
        ck_assert_int_eq(differing, 0);
        ck_assert(memcmp(&r_straight, &r_resumed, sizeof r_straight) == 0);
        event_trainer_free(&straight);
        event_trainer_free(&resumed);
    }
    event_stream_free(&es);
}
END_TEST

/* event_trainer_evaluate() (reset, replay the training events forward only, validate, test) must
 * agree with the evaluation at the end of an epoch whenever training did not move the parameters:
 * with lr 1e-30 Adam's steps vanish below float32 rounding, so both build the same memory. It also
 * equals itself on a trainer loaded from a checkpoint. */
START_TEST(evaluation_protocols_agree)
{
    event_stream es;
    generated(&es, 60, checked_events(), 0);
    event_train_options o;
    small_options(&o);
    o.learning_rate = 1e-30;
    char directory[256];
    snprintf(directory, sizeof directory, "%s/evaluated_checkpoint", temporary_directory());
    for (int kind = EVENT_MODEL_TGN; kind <= EVENT_MODEL_JODIE; kind++) {
        event_trainer tr, loaded;
        event_epoch_report epoch;
        event_metrics validation, test, validation_loaded, test_loaded;
        tf_error err;
        make(&tr, &es, (event_model_kind)kind, &o);
        event_model fresh;
        ck_assert(event_model_create(&fresh, &tr.model.config, o.seed, &err) == TF_OK);
        run_epochs(&tr, 1, &epoch);
        double moved = 0; /* parameters starting at 0 (phases, LayerNorm shifts) move by ~1e-30 */
        for (int64_t i = 0; i < fresh.parameters.count; i++)
            moved = fmax(moved,
                         tensor_max_abs_diff(&fresh.parameters.items[i].value, &tr.model.parameters.items[i].value));
        ck_assert(moved < 1e-20);
        ck_assert(event_trainer_evaluate(&tr, &validation, &test, NULL, NULL, &err) == TF_OK);
        ck_assert(event_trainer_save(&tr, directory, &err) == TF_OK);
        make(&loaded, &es, (event_model_kind)kind, &o);
        ck_assert(event_trainer_load(&loaded, directory, &err) == TF_OK);
        ck_assert(event_trainer_evaluate(&loaded, &validation_loaded, &test_loaded, NULL, NULL, &err) == TF_OK);
        printf("%s, parameters unmoved, %lld events: test AP %.9g at the end of the epoch, %.9g by replay, %.9g by "
               "replay after save and load\n",
               event_model_kind_name((event_model_kind)kind), (long long)es.num_events, epoch.test.average_precision,
               test.average_precision,
               test_loaded.average_precision);
        ck_assert(memcmp(&epoch.validation, &validation, sizeof validation) == 0);
        ck_assert(memcmp(&epoch.test, &test, sizeof test) == 0);
        ck_assert(memcmp(&test, &test_loaded, sizeof test) == 0);
        event_model_free(&fresh);
        event_trainer_free(&tr);
        event_trainer_free(&loaded);
    }
    event_stream_free(&es);
}
END_TEST

/* On a stream where events repeat earlier pairs, training lowers the training loss and the
 * trained model ranks true test events above random ones clearly better than chance (AP 0.5).
 *
 * It does not compare the validation AP of two single epochs, as it once did (epoch 5 above
 * epoch 1): on this 300-event validation split TGN's AP moves by up to 0.25 from one epoch to
 * the next, so that comparison tested rounding luck. When Adam's constants moved to round as
 * torch's (1 - beta2 had been 1.3e-5 off 0.001; chapter 01, the peer check), TGN's epochs 4 to 6
 * went from 0.80, 0.80, 0.87 to 0.83, 0.63, 0.88 (epoch 1: 0.74 both times), and its validation
 * loss rose with the dip too, a genuine worse epoch rather than a wrong optimizer (Adam is
 * checked against torch's over ten steps in test_models_peer). With this Adam, over three stream
 * seeds and two model seeds, the training loss fell from epoch 1 to 5 and the test AP of epoch 5
 * was above 0.63 every time, for both models. */
START_TEST(training_learns)
{
    event_stream es;
    event_params p;
    event_params_default(&p);
    p.num_nodes = 100;
    p.num_events = 2000;
    p.repeat = 0.9;
    p.exponent = 2.1;
    p.seed = 72;
    tf_error err;
    ck_assert(generate_events(&p, &es, &err) == TF_OK);
    event_train_options o;
    small_options(&o);
    o.batch_size = 100;
    for (int kind = EVENT_MODEL_TGN; kind <= EVENT_MODEL_JODIE; kind++) {
        event_trainer tr;
        event_epoch_report first, last;
        make(&tr, &es, (event_model_kind)kind, &o);
        run_epochs(&tr, 1, &first);
        run_epochs(&tr, 5, &last);
        printf("%s on a repetitive stream: train loss %.4f -> %.4f, validation AP %.4f -> %.4f, test AP %.4f\n",
               event_model_kind_name((event_model_kind)kind), first.train_loss, last.train_loss,
               first.validation.average_precision, last.validation.average_precision, last.test.average_precision);
        ck_assert(last.train_loss < first.train_loss);
        ck_assert(last.test.average_precision > 0.6);
        event_trainer_free(&tr);
    }
    event_stream_free(&es);
}
END_TEST

START_TEST(bad_input)
{
    tf_error err;
    event_trainer tr;
    event_train_options o;
    small_options(&o);
    event_model_config config;
    small_config(&config, EVENT_MODEL_TGN, 0);
    /* Too few events to split. */
    event_stream es;
    generated(&es, 10, 3, 0);
    EXPECT_INPUT_ERROR(event_trainer_create(&tr, &es, NULL, &config, &o, &err), &err, "3 events are too few",
                       "validation part would be empty");
    event_stream_free(&es);
    /* Edge features: a .npy of the wrong shape, then of the right one. */
    generated(&es, 10, 50, 0);
    const float values[3 * 2] = {1, 2, 3, 4, 5, 6};
    int64_t shape[2] = {3, 2};
    char path[256];
    snprintf(path, sizeof path, "%s/features.npy", temporary_directory());
    ck_assert(npy_write(path, NPY_FLOAT32, 2, shape, values, &err) == TF_OK);
    tensor features;
    EXPECT_INPUT_ERROR(event_features_read(path, es.num_events, &features, &err), &err, "features.npy",
                       "shape 3 x 2", "expected 50 x F");
    EXPECT_INPUT_ERROR(event_features_read("/nonexistent/features.npy", es.num_events, &features, &err), &err,
                       "/nonexistent/features.npy");
    float *many = calloc(50 * 2, sizeof(float));
    shape[0] = 50;
    ck_assert(npy_write(path, NPY_FLOAT32, 2, shape, many, &err) == TF_OK);
    ck_assert(event_features_read(path, es.num_events, &features, &err) == TF_OK);
    ck_assert_int_eq(features.shape[1], 2);
    /* A model with edge features but none given, and the reverse. */
    EXPECT_INPUT_ERROR(event_trainer_create(&tr, &es, features.data, &config, &o, &err), &err,
                       "0 edge feature columns");
    config.edge_width = 2;
    EXPECT_INPUT_ERROR(event_trainer_create(&tr, &es, NULL, &config, &o, &err), &err, "2 edge feature columns",
                       "no edge features");
    tensor_free(&features);
    free(many);
    /* Unknown model names, bad shapes. */
    event_model_kind kind;
    EXPECT_INPUT_ERROR(event_model_kind_parse("tgat", &kind, &err), &err, "\"tgat\"", "tgn, jodie");
    small_config(&config, EVENT_MODEL_TGN, 0);
    config.heads = 4; /* embedding 6 is not a multiple of 4 */
    EXPECT_INPUT_ERROR(event_trainer_create(&tr, &es, NULL, &config, &o, &err), &err, "4 heads", "embedding width 6");
    /* JODIE needs t + 1 > 0. */
    small_config(&config, EVENT_MODEL_JODIE, 0);
    double saved_time = es.time[0];
    es.time[0] = -5;
    EXPECT_INPUT_ERROR(event_trainer_create(&tr, &es, NULL, &config, &o, &err), &err, "t + 1", "-5");
    es.time[0] = saved_time;
    event_stream_free(&es);
}
END_TEST

START_TEST(checkpoint_errors)
{
    event_stream es;
    generated(&es, 30, 200, 0);
    event_train_options o;
    small_options(&o);
    event_trainer tgn, other;
    tf_error err;
    make(&tgn, &es, EVENT_MODEL_TGN, &o);
    char directory[256];
    snprintf(directory, sizeof directory, "%s/tgn_checkpoint", temporary_directory());
    ck_assert(event_trainer_save(&tgn, directory, &err) == TF_OK);
    EXPECT_INPUT_ERROR(event_trainer_load(&tgn, "/nonexistent/checkpoint", &err), &err, "no such checkpoint");
    /* JODIE from TGN's checkpoint: trainer.npy, read first, names both models. */
    make(&other, &es, EVENT_MODEL_JODIE, &o);
    EXPECT_INPUT_ERROR(event_trainer_load(&other, directory, &err), &err, "trainer.npy", "a checkpoint of model tgn",
                       "this run trains jodie");
    event_trainer_free(&other);
    /* Another width: trainer.npy names it. */
    event_model_config wider;
    small_config(&wider, EVENT_MODEL_TGN, 0);
    wider.memory_width = 7;
    ck_assert(event_trainer_create(&other, &es, NULL, &wider, &o, &err) == TF_OK);
    EXPECT_INPUT_ERROR(event_trainer_load(&other, directory, &err), &err, "trainer.npy", "saved with memory 6;",
                       "this run has memory 7");
    event_trainer_free(&other);
    /* Other events with the same shapes: the data digest tells. */
    event_stream moved;
    generated(&moved, 30, 200, 0);
    moved.dst[10] = moved.dst[10] == moved.dst[11] ? moved.dst[12] : moved.dst[11]; /* one event moved */
    make(&other, &moved, EVENT_MODEL_TGN, &o);
    EXPECT_INPUT_ERROR(event_trainer_load(&other, directory, &err), &err, "trainer.npy", "saved from other data");
    event_trainer_free(&other);
    event_stream_free(&moved);
    /* The same parameters but another neighbour count: trainer.npy tells. */
    event_model_config fewer;
    small_config(&fewer, EVENT_MODEL_TGN, 0);
    fewer.neighbours = 5;
    ck_assert(event_trainer_create(&other, &es, NULL, &fewer, &o, &err) == TF_OK);
    EXPECT_INPUT_ERROR(event_trainer_load(&other, directory, &err), &err, "trainer.npy", "saved with neighbours 10;",
                       "this run has neighbours 5");
    event_trainer_free(&other);
    /* The same shapes under the other memory-update rule: its memory would mean something else. */
    event_model_config per_vertex;
    small_config(&per_vertex, EVENT_MODEL_TGN, 0);
    per_vertex.memory_update = EVENT_MEMORY_PER_VERTEX;
    ck_assert(event_trainer_create(&other, &es, NULL, &per_vertex, &o, &err) == TF_OK);
    EXPECT_INPUT_ERROR(event_trainer_load(&other, directory, &err), &err, "trainer.npy",
                       "saved with memory update (0 entry, 1 vertex) 0;", "this run has memory update (0 entry, 1 vertex) 1");
    event_trainer_free(&other);
    /* APAN saved with 10 mails, resumed with 3: its parameters fit, trainer.npy names both counts. */
    event_trainer apan;
    make(&apan, &es, EVENT_MODEL_APAN, &o);
    char apan_directory[256];
    snprintf(apan_directory, sizeof apan_directory, "%s/apan_checkpoint", temporary_directory());
    ck_assert(event_trainer_save(&apan, apan_directory, &err) == TF_OK);
    event_model_config fewer_mails;
    small_config(&fewer_mails, EVENT_MODEL_APAN, 0);
    fewer_mails.mails = 3;
    ck_assert(event_trainer_create(&other, &es, NULL, &fewer_mails, &o, &err) == TF_OK);
    EXPECT_INPUT_ERROR(event_trainer_load(&other, apan_directory, &err), &err, "trainer.npy", "saved with mails 10;",
                       "this run has mails 3");
    event_trainer_free(&other);
    event_trainer_free(&apan);
    /* A snapshot model's trainer.npy (format 5: header with the task, then hidden, K, features,
     * targets, window, stride, train snapshots, layers, classes, mini-batch size and four fan-outs),
     * and one of the earlier format (version 1, 8 values). */
    char path[320];
    snprintf(path, sizeof path, "%s/trainer.npy", directory);
    int64_t snapshot_state[21] = {CHECKPOINT_FORMAT, CHECKPOINT_SNAPSHOT_MODEL, 0, 5, 10, 0, TASK_REGRESSION, 32, 2, 4,
                                  1, 4, 4, 20, 0, 0, 0, 0, 0, 0, 0},
            shape[1] = {21};
    ck_assert(npy_write(path, NPY_INT64, 1, shape, snapshot_state, &err) == TF_OK);
    EXPECT_INPUT_ERROR(event_trainer_load(&tgn, directory, &err), &err, "a checkpoint of model tgcn",
                       "this run trains tgn");
    int64_t old_state[8] = {1, 5, 10, 0, 32, 2, 4, 1};
    shape[0] = 8;
    ck_assert(npy_write(path, NPY_INT64, 1, shape, old_state, &err) == TF_OK);
    EXPECT_INPUT_ERROR(event_trainer_load(&tgn, directory, &err), &err, "checkpoint format 1", "train again");
    /* A save never replaces a directory that is not a checkpoint. */
    EXPECT_INPUT_ERROR(event_trainer_save(&tgn, source_path("verify"), &err), &err, "not a twofold checkpoint");
    event_trainer_free(&tgn);
    event_stream_free(&es);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("train_events");
    TCase *cases = tcase_create("train_events");
    tcase_set_timeout(cases, 600);
    tcase_add_test(cases, split_70_15_15);
    tcase_add_test(cases, negative_candidates);
    tcase_add_test(cases, negatives_keyed_by_event);
    tcase_add_test(cases, same_seed_same_bits);
    tcase_add_test(cases, resume_ends_where_uninterrupted_run_ends);
    tcase_add_test(cases, evaluation_protocols_agree);
    tcase_add_test(cases, training_learns);
    tcase_add_test(cases, bad_input);
    tcase_add_test(cases, checkpoint_errors);
    suite_add_tcase(suite, cases);
    return run_suite(suite);
}
