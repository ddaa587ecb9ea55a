#include "ref/train_events.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ref/checkpoint.h"
#include "ref/io.h"
#include "ref/memory.h"
#include "ref/metrics.h"
#include "ref/npy.h"
#include "ref/rng.h"

/* Negative streams of evaluation: fixed, independent of the training seed. */
#define REPLAY_SEED 0x7e91a1ull
#define VALIDATION_SEED 0x7e91a2ull
#define TEST_SEED 0x7e91a3ull

void event_train_options_default(event_train_options *options)
{
    memset(options, 0, sizeof *options);
    options->epochs = 3;
    options->learning_rate = 1e-3;
    options->batch_size = 200;
    options->seed = 1;
    options->negatives = EVENT_NEGATIVES_ALL;
}

/* The vertices negatives are drawn from, in increasing id order: those that take part in at least
 * one event, or only those that are some event's destination. */
static int collect_candidates(event_trainer *tr, tf_error *err)
{
    const event_stream *es = tr->events;
    uint8_t *seen = tf_alloc((size_t)es->num_nodes, 1, "vertex flags", err);
    if (!seen)
        return TF_ERR_INPUT;
    for (int64_t i = 0; i < es->num_events; i++) {
        seen[es->dst[i]] = 1;
        if (tr->options.negatives == EVENT_NEGATIVES_ALL)
            seen[es->src[i]] = 1;
    }
    int64_t count = 0;
    for (int64_t v = 0; v < es->num_nodes; v++)
        count += seen[v];
    tr->candidates = tf_alloc((size_t)count, sizeof *tr->candidates, "negative candidates", err);
    if (tr->candidates) {
        tr->candidate_count = 0;
        for (int64_t v = 0; v < es->num_nodes; v++)
            if (seen[v])
                tr->candidates[tr->candidate_count++] = (int32_t)v;
    }
    free(seen);
    return tr->candidates ? TF_OK : TF_ERR_INPUT;
}

int event_trainer_create(event_trainer *tr, const event_stream *events, const float *edge_features,
                         const event_model_config *config, const event_train_options *options, tf_error *err)
{
    memset(tr, 0, sizeof *tr);
    tr->events = events;
    tr->edge_features = edge_features;
    tr->options = *options;
    if (options->epochs < 0 || options->batch_size < 1)
        return tf_error_set(err, TF_ERR_INPUT, "epochs %lld and batch size %lld: expected >= 0 and >= 1",
                            (long long)options->epochs, (long long)options->batch_size);
    if (!(options->learning_rate > 0))
        return tf_error_set(err, TF_ERR_INPUT, "learning rate %g, expected > 0", options->learning_rate);
    const int64_t n = events->num_events;
    tr->train_end = n * 70 / 100;
    tr->validation_end = n * 85 / 100;
    const char *empty = tr->train_end < 1 ? "training" : tr->validation_end == tr->train_end ? "validation"
                                                      : tr->validation_end == n            ? "test"
                                                                                           : NULL;
    if (empty)
        return tf_error_set(err, TF_ERR_INPUT,
                            "%lld events are too few to split 70/15/15 in time: the %s part would be empty "
                            "(at least 4 events are needed)",
                            (long long)n, empty);
    if (config->edge_width > 0 && !edge_features)
        return tf_error_set(err, TF_ERR_INPUT,
                            "the model has %lld edge feature columns, but no edge features were given",
                            (long long)config->edge_width);
    if (config->edge_width == 0 && edge_features)
        return tf_error_set(err, TF_ERR_INPUT, "edge features were given, but the model has 0 edge feature columns");
    if (config->kind == EVENT_MODEL_JODIE && events->time[0] < 0)
        return tf_error_set(err, TF_ERR_INPUT,
                            "JODIE's time projection divides by t + 1, so timestamps must be >= 0; the first is %g",
                            events->time[0]);
    const int64_t B = options->batch_size;
    int status = event_model_create(&tr->model, config, options->seed, err);
    if (status == TF_OK)
        status = adam_create(&tr->optimizer, &tr->model.parameters, options->learning_rate, err);
    if (status == TF_OK)
        status = node_memory_create(&tr->memory, events->num_nodes, tr->model.config.memory_width,
                                    event_model_mail_width(&tr->model), err);
    if (status == TF_OK)
        status = temporal_csr_build(&tr->history, events, err);
    if (status == TF_OK)
        status = collect_candidates(tr, err);
    if (status == TF_OK && (!(tr->negatives = tf_alloc((size_t)B, sizeof(int32_t), "negatives", err)) ||
                            !(tr->scores = tf_alloc((size_t)(2 * B), sizeof(float), "scores", err)) ||
                            !(tr->dscores = tf_alloc((size_t)(2 * B), sizeof(float), "scores", err))))
        status = TF_ERR_INPUT;
    if (status != TF_OK)
        event_trainer_free(tr);
    return status;
}

void event_trainer_free(event_trainer *tr)
{
    event_model_free(&tr->model);
    adam_free(&tr->optimizer);
    node_memory_free(&tr->memory);
    temporal_csr_free(&tr->history);
    free(tr->candidates);
    free(tr->negatives);
    free(tr->scores);
    free(tr->dscores);
    memset(tr, 0, sizeof *tr);
}

/* What running a split collects. */
typedef struct split_run {
    const char *stage;   /* progress label */
    int train;           /* 1: backward and an Adam step per batch */
    rng negatives;       /* where the split's negatives come from */
    float *scores;       /* [2 count] positives then negatives, or NULL when not wanted */
    double loss_sum;     /* sum of batch losses */
    int64_t batches;     /* batches run */
} split_run;

/* One batch: negatives, forward, loss, (backward, Adam step), write-back. */
static int run_batch(event_trainer *tr, int64_t first, int64_t size, split_run *run, tf_error *err)
{
    for (int64_t j = 0; j < size; j++)
        tr->negatives[j] = tr->candidates[rng_below(&run->negatives, (uint64_t)tr->candidate_count)];
    event_batch batch = {tr->events, tr->edge_features, first, size, tr->negatives};
    event_tape tape;
    int status = event_model_forward(&tr->model, &tr->memory, &tr->history, &batch, &tape, tr->scores, err);
    if (status != TF_OK)
        return status;
    run->loss_sum += event_model_loss(tr->scores, size, run->train ? tr->dscores : NULL);
    run->batches++;
    if (run->train) {
        parameters_zero_grad(&tr->model.parameters);
        status = event_model_backward(&tr->model, &tape, tr->dscores, err);
        if (status == TF_OK)
            ref_adam_step(&tr->optimizer, &tr->model.parameters);
    }
    /* The memory is written with the s' of this batch's forward, computed before the step. */
    if (status == TF_OK)
        event_model_write_memory(&tr->model, &tape, &batch, &tr->memory);
    event_tape_free(&tape);
    return status;
}

/* Events [first, end) in batches of batch_size from `first`. */
static int run_split(event_trainer *tr, int64_t first, int64_t end, split_run *run, progress_fn progress,
                     void *progress_context, tf_error *err)
{
    const int64_t B = tr->options.batch_size, count = end - first, total = (count + B - 1) / B;
    for (int64_t start = first; start < end; start += B) {
        int64_t size = end - start < B ? end - start : B;
        int status = run_batch(tr, start, size, run, err);
        if (status != TF_OK)
            return status;
        if (run->scores) {
            memcpy(run->scores + (start - first), tr->scores, (size_t)size * sizeof(float));
            memcpy(run->scores + count + (start - first), tr->scores + size, (size_t)size * sizeof(float));
        }
        if (progress)
            progress(progress_context, run->stage, run->batches, total);
    }
    return TF_OK;
}

/* Forward-only pass over an evaluated split, then its AP and AUC. */
static int evaluate_split(event_trainer *tr, int64_t first, int64_t end, uint64_t seed, const char *stage,
                          event_metrics *metrics, progress_fn progress, void *progress_context, tf_error *err)
{
    const int64_t count = end - first;
    split_run run = {stage, 0, {{0}}, NULL, 0, 0};
    rng_seed(&run.negatives, seed);
    uint8_t *labels = tf_alloc((size_t)(2 * count), 1, "labels", err);
    run.scores = labels ? tf_alloc((size_t)(2 * count), sizeof(float), "scores", err) : NULL;
    int status = run.scores ? TF_OK : TF_ERR_INPUT;
    if (status == TF_OK)
        status = run_split(tr, first, end, &run, progress, progress_context, err);
    if (status == TF_OK) {
        memset(labels, 1, (size_t)count); /* positives first, negatives after: labels 1 then 0 */
        metrics->events = count;
        metrics->loss = run.loss_sum / (double)run.batches;
        status = ref_average_precision(run.scores, labels, 2 * count, &metrics->average_precision, err);
        if (status == TF_OK)
            status = ref_roc_auc(run.scores, labels, 2 * count, &metrics->roc_auc, err);
    }
    free(labels);
    free(run.scores);
    return status;
}

/* Validation then test, memory continued; progress labels start with @p label. */
static int evaluate_held_out(event_trainer *tr, const char *label, event_metrics *validation, event_metrics *test,
                             progress_fn progress, void *progress_context, tf_error *err)
{
    char stage[2][64];
    snprintf(stage[0], sizeof stage[0], "%svalidation", label);
    snprintf(stage[1], sizeof stage[1], "%stest", label);
    int status = evaluate_split(tr, tr->train_end, tr->validation_end, VALIDATION_SEED, stage[0], validation,
                                progress, progress_context, err);
    if (status == TF_OK)
        status = evaluate_split(tr, tr->validation_end, tr->events->num_events, TEST_SEED, stage[1], test, progress,
                                progress_context, err);
    return status;
}

int event_trainer_epoch(event_trainer *tr, event_epoch_report *report, progress_fn progress, void *progress_context,
                        tf_error *err)
{
    memset(report, 0, sizeof *report);
    node_memory_reset(&tr->memory);
    char label[32], stage[64];
    snprintf(label, sizeof label, "epoch %lld: ", (long long)tr->epoch + 1);
    snprintf(stage, sizeof stage, "%straining", label);
    split_run run = {stage, 1, {{0}}, NULL, 0, 0};
    /* Epoch e's negatives depend only on (seed, e): a resumed run draws the same ones. */
    rng_seed(&run.negatives, tr->options.seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(tr->epoch + 1)));
    int status = run_split(tr, 0, tr->train_end, &run, progress, progress_context, err);
    if (status != TF_OK)
        return status;
    tr->epoch++;
    report->epoch = tr->epoch;
    report->batches = run.batches;
    report->train_loss = run.loss_sum / (double)run.batches;
    return evaluate_held_out(tr, label, &report->validation, &report->test, progress, progress_context, err);
}

int event_trainer_evaluate(event_trainer *tr, event_metrics *validation, event_metrics *test, progress_fn progress,
                           void *progress_context, tf_error *err)
{
    node_memory_reset(&tr->memory);
    split_run replay = {"replaying training events", 0, {{0}}, NULL, 0, 0};
    rng_seed(&replay.negatives, REPLAY_SEED);
    int status = run_split(tr, 0, tr->train_end, &replay, progress, progress_context, err);
    if (status == TF_OK)
        status = evaluate_held_out(tr, "", validation, test, progress, progress_context, err);
    return status;
}

/* ---- checkpoints ------------------------------------------------------------------------------- */

/* trainer.npy of an event model. The version differs from the snapshot trainer's (1), so each
 * trainer recognizes the other's checkpoint as not its own. */
enum {
    STATE_VERSION, STATE_EPOCH, STATE_STEP, STATE_SEED, STATE_KIND, STATE_MEMORY, STATE_TIME, STATE_EMBEDDING,
    STATE_EDGE, STATE_HEADS, STATE_NEIGHBORS, STATE_SIZE
};
#define EVENT_CHECKPOINT_VERSION 1001

static void checkpoint_state(const event_trainer *tr, int64_t state[STATE_SIZE])
{
    const event_model_config *c = &tr->model.config;
    int64_t values[STATE_SIZE] = {EVENT_CHECKPOINT_VERSION, tr->epoch, tr->optimizer.step, (int64_t)tr->options.seed,
                                  c->kind, c->memory_width, c->time_width, c->embedding_width, c->edge_width,
                                  c->heads, c->neighbors};
    memcpy(state, values, sizeof values);
}

int event_trainer_save(const event_trainer *tr, const char *directory, tf_error *err)
{
    int64_t state[STATE_SIZE];
    checkpoint_state(tr, state);
    return checkpoint_save(directory, &tr->model.parameters, &tr->optimizer, state, STATE_SIZE, err);
}

int event_trainer_load(event_trainer *tr, const char *directory, tf_error *err)
{
    int64_t s[STATE_SIZE], expected[STATE_SIZE];
    char path[4096];
    int found;
    if (checkpoint_load(directory, &tr->model.parameters, s, STATE_SIZE, &found, path, err) != TF_OK)
        return TF_ERR_INPUT;
    if (!found)
        return TF_OK; /* parameters only: epoch 0, fresh optimizer */
    checkpoint_state(tr, expected);
    if (s[STATE_VERSION] != EVENT_CHECKPOINT_VERSION)
        return tf_error_set(err, TF_ERR_INPUT, "%s: not a twofold event-model checkpoint (version %d)", path,
                            EVENT_CHECKPOINT_VERSION);
    if (memcmp(s + STATE_KIND, expected + STATE_KIND, (STATE_SIZE - STATE_KIND) * sizeof(int64_t)) != 0)
        return tf_error_set(err, TF_ERR_INPUT,
                            "%s: saved for %s with memory %lld, time %lld, embedding %lld, edge features %lld, "
                            "%lld heads, %lld neighbours; this run has %s with %lld, %lld, %lld, %lld, %lld, %lld",
                            path, event_model_kind_name((event_model_kind)s[STATE_KIND]),
                            (long long)s[STATE_MEMORY], (long long)s[STATE_TIME], (long long)s[STATE_EMBEDDING],
                            (long long)s[STATE_EDGE], (long long)s[STATE_HEADS], (long long)s[STATE_NEIGHBORS],
                            event_model_kind_name(tr->model.config.kind), (long long)expected[STATE_MEMORY],
                            (long long)expected[STATE_TIME], (long long)expected[STATE_EMBEDDING],
                            (long long)expected[STATE_EDGE], (long long)expected[STATE_HEADS],
                            (long long)expected[STATE_NEIGHBORS]);
    if (checkpoint_load_moments(&tr->optimizer, directory, err) != TF_OK)
        return TF_ERR_INPUT;
    tr->epoch = s[STATE_EPOCH];
    tr->optimizer.step = s[STATE_STEP];
    tr->options.seed = (uint64_t)s[STATE_SEED];
    return TF_OK;
}

int event_features_read(const char *path, int64_t num_events, tensor *out, tf_error *err)
{
    if (npy_read_tensor(path, out, err) != TF_OK)
        return TF_ERR_INPUT;
    if (out->ndim == 2 && out->shape[0] == num_events && out->shape[1] >= 1)
        return TF_OK;
    char shape[128] = "";
    for (int d = 0; d < out->ndim; d++)
        snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%lld", d ? " x " : "",
                 (long long)out->shape[d]);
    tensor_free(out);
    return tf_error_set(err, TF_ERR_INPUT, "%s: edge features of shape %s; expected %lld x F, one row per event",
                        path, shape, (long long)num_events);
}
