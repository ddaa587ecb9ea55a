#include "ref/train_events.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ref/models/checkpoint.h"
#include "ref/core/io.h"
#include "ref/core/memory.h"
#include "ref/nn/metrics.h"
#include "ref/data/npy.h"
#include "ref/core/rng.h"

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
    if (options->staleness != 0 && options->staleness != 1)
        return tf_error_set(err, TF_ERR_INPUT, "staleness %d: expected 0 or 1 (Sven bounds staleness to one step)",
                            options->staleness);
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
    if (status == TF_OK && options->kernels)
        tr->model.kernels = options->kernels;
    if (status == TF_OK)
        status = adam_create(&tr->optimizer, &tr->model.parameters, options->learning_rate, err);
    if (status == TF_OK && !options->without_memory)
        status = node_memory_create_mailbox(&tr->memory, events->num_nodes, tr->model.config.memory_width,
                                            event_model_mail_width(&tr->model), tr->model.config.mails, err);
    if (status == TF_OK)
        status = temporal_csr_build(&tr->history, events, err);
    if (status == TF_OK)
        status = collect_candidates(tr, err);
    if (status == TF_OK && options->staleness == 1)
        status = delayed_gradient_create(&tr->delayed, &tr->model.parameters, err);
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
    delayed_gradient_free(&tr->delayed);
    workspace_free(&tr->scratch);
    memset(tr, 0, sizeof *tr);
}

/* ---- batches ---------------------------------------------------------------------------------- */

int32_t event_trainer_negative(const event_trainer *tr, uint64_t stream, int64_t event)
{
    /* The stream's key (seed and epoch, or a fixed evaluation key) plays the seed; one stream of
     * draws per key, so the third argument is 0. */
    rng r;
    rng_seed_keyed(&r, stream, 0, (uint64_t)event);
    return tr->candidates[rng_below(&r, (uint64_t)tr->candidate_count)];
}

/* Events [first, end) of split `split` in batches of batch_size from `first`, appended to batches
 * (NULL: only counted). */
static int64_t add_batches(const event_trainer *tr, int64_t first, int64_t end, uint64_t stream, int train,
                           event_split split, event_batch_spec *batches, int64_t count)
{
    const int64_t B = tr->options.batch_size;
    for (int64_t start = first; start < end; start += B, count++)
        if (batches)
            batches[count] = (event_batch_spec){start, end - start < B ? end - start : B, stream, train, split};
    return count;
}

int64_t event_trainer_epoch_batches(const event_trainer *tr, event_batch_spec *batches)
{
    /* Epoch e's negatives depend only on (seed, e): a resumed run draws the same ones. */
    const uint64_t stream = tr->options.seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(tr->epoch + 1));
    int64_t count = add_batches(tr, 0, tr->train_end, stream, 1, EVENT_SPLIT_TRAIN, batches, 0);
    count = add_batches(tr, tr->train_end, tr->validation_end, VALIDATION_SEED, 0, EVENT_SPLIT_VALIDATION, batches,
                        count);
    return add_batches(tr, tr->validation_end, tr->events->num_events, TEST_SEED, 0, EVENT_SPLIT_TEST, batches, count);
}

int64_t event_trainer_replay_batches(const event_trainer *tr, event_batch_spec *batches)
{
    int64_t count = add_batches(tr, 0, tr->train_end, REPLAY_SEED, 0, EVENT_SPLIT_TRAIN, batches, 0);
    count = add_batches(tr, tr->train_end, tr->validation_end, VALIDATION_SEED, 0, EVENT_SPLIT_VALIDATION, batches,
                        count);
    return add_batches(tr, tr->validation_end, tr->events->num_events, TEST_SEED, 0, EVENT_SPLIT_TEST, batches, count);
}

int event_trainer_check_batch(const event_trainer *tr, const event_batch_spec *spec, tf_error *err)
{
    const int64_t size = spec->size;
    if (size < 1 || size > tr->options.batch_size || spec->first < 0 || spec->first + size > tr->events->num_events)
        return tf_error_set(err, TF_ERR_INPUT, "batch of %lld events from %lld: expected 1..%lld events of the %lld",
                            (long long)size, (long long)spec->first, (long long)tr->options.batch_size,
                            (long long)tr->events->num_events);
    return TF_OK;
}

int event_trainer_run_batch(event_trainer *tr, const event_batch_spec *spec, double *loss, float *scores,
                            tf_error *err)
{
    const int64_t size = spec->size;
    if (event_trainer_check_batch(tr, spec, err) != TF_OK)
        return TF_ERR_INPUT;
    if (!scores)
        scores = tr->scores;
    for (int64_t j = 0; j < size; j++)
        tr->negatives[j] = event_trainer_negative(tr, spec->stream, spec->first + j);
    event_batch batch = {tr->events, tr->edge_features, spec->first, size, tr->negatives};
    event_tape tape;
    int status =
        event_model_forward_in(&tr->model, &tr->memory, &tr->history, &batch, &tr->scratch, &tape, scores, err);
    if (status != TF_OK)
        return status;
    *loss = event_model_loss(scores, size, spec->train ? tr->dscores : NULL);
    if (spec->train) {
        parameters_zero_grad(&tr->model.parameters);
        status = event_model_backward(&tr->model, &tape, tr->dscores, err);
        /* Staleness 1 keeps this gradient and applies the previous one ([Sven] Eq. 13). */
        if (status == TF_OK &&
            (tr->options.staleness == 0 || delayed_gradient_exchange(&tr->delayed, &tr->model.parameters)))
            ref_adam_step(&tr->optimizer, &tr->model.parameters);
    }
    /* The memory is written with the s' of this batch's forward, computed before the step. */
    if (status == TF_OK)
        event_model_write_memory(&tr->model, &tape, &batch, &tr->memory);
    event_tape_free(&tape);
    return status;
}

void event_trainer_flush_gradient(event_trainer *tr)
{
    if (tr->options.staleness == 1 && delayed_gradient_flush(&tr->delayed, &tr->model.parameters))
        ref_adam_step(&tr->optimizer, &tr->model.parameters);
}

int event_trainer_check_finite(const event_trainer *tr, double loss, int64_t step, tf_error *err)
{
    const int64_t B = tr->options.batch_size, first = (step - 1) * B;
    const int64_t last = (first + B < tr->train_end ? first + B : tr->train_end) - 1;
    char where[128], what[192];
    snprintf(where, sizeof where, "epoch %lld, step %lld (training events %lld..%lld)", (long long)tr->epoch + 1,
             (long long)step, (long long)first, (long long)last);
    const char *name;
    if (!isfinite(loss))
        snprintf(what, sizeof what, "loss %g", loss);
    else if ((name = parameters_first_non_finite(&tr->model.parameters, 0)))
        snprintf(what, sizeof what, "parameter %s is not finite", name);
    else if ((name = parameters_first_non_finite(&tr->optimizer.moments, 0)) ||
             (name = parameters_first_non_finite(&tr->optimizer.moments, 1)))
        snprintf(what, sizeof what, "Adam's moment of %s is not finite: gradients beyond float's range", name);
    else
        return TF_OK;
    return tf_error_set(err, TF_ERR_INPUT, "%s: training diverged (%s); stopped, nothing saved", where, what);
}

/* ---- epochs ---------------------------------------------------------------------------------- */

int event_epoch_tally_create(event_epoch_tally *t, const event_trainer *tr, const char *label, const char *train_stage,
                             progress_fn progress, void *progress_context, tf_error *err)
{
    memset(t, 0, sizeof *t);
    const int64_t ends[4] = {0, tr->train_end, tr->validation_end, tr->events->num_events};
    const char *names[3] = {train_stage, "validation", "test"};
    for (int split = 0; split < 3; split++) {
        t->first[split] = ends[split];
        t->count[split] = ends[split + 1] - ends[split];
        t->total[split] = (t->count[split] + tr->options.batch_size - 1) / tr->options.batch_size;
        snprintf(t->stage[split], sizeof t->stage[split], "%s%s", label, names[split]);
        if (split > 0 && !(t->scores[split] = tf_alloc((size_t)(2 * t->count[split]), sizeof(float), "scores", err))) {
            event_epoch_tally_free(t);
            return TF_ERR_INPUT;
        }
    }
    t->progress = progress;
    t->progress_context = progress_context;
    return TF_OK;
}

void event_epoch_tally_add(event_epoch_tally *t, const event_batch_spec *spec, double loss, const float *scores)
{
    const int split = spec->split;
    t->loss_sum[split] += loss;
    t->batches[split]++;
    if (t->scores[split]) { /* positives first, negatives after, in event order */
        const int64_t at = spec->first - t->first[split], count = t->count[split];
        memcpy(t->scores[split] + at, scores, (size_t)spec->size * sizeof(float));
        memcpy(t->scores[split] + count + at, scores + spec->size, (size_t)spec->size * sizeof(float));
    }
    if (t->progress)
        t->progress(t->progress_context, t->stage[split], t->batches[split], t->total[split]);
}

/* The loss, AP and AUC of an evaluated split. */
static int split_metrics(const event_epoch_tally *t, int split, event_metrics *metrics, tf_error *err)
{
    const int64_t count = t->count[split];
    uint8_t *labels = tf_alloc((size_t)(2 * count), 1, "labels", err);
    if (!labels)
        return TF_ERR_INPUT;
    memset(labels, 1, (size_t)count); /* positives first, negatives after: labels 1 then 0 */
    metrics->events = count;
    metrics->loss = t->loss_sum[split] / (double)t->batches[split];
    int status = ref_average_precision(t->scores[split], labels, 2 * count, &metrics->average_precision, err);
    if (status == TF_OK)
        status = ref_roc_auc(t->scores[split], labels, 2 * count, &metrics->roc_auc, err);
    free(labels);
    return status;
}

int event_epoch_tally_finish(const event_epoch_tally *t, event_epoch_report *report, tf_error *err)
{
    report->batches = t->batches[EVENT_SPLIT_TRAIN];
    report->train_loss = t->loss_sum[EVENT_SPLIT_TRAIN] / (double)t->batches[EVENT_SPLIT_TRAIN];
    int status = split_metrics(t, EVENT_SPLIT_VALIDATION, &report->validation, err);
    if (status == TF_OK)
        status = split_metrics(t, EVENT_SPLIT_TEST, &report->test, err);
    return status;
}

void event_epoch_tally_free(event_epoch_tally *t)
{
    for (int split = 0; split < 3; split++)
        free(t->scores[split]);
    memset(t, 0, sizeof *t);
}

/* The reference's runner: each batch on this process, scores in the trainer's scratch. */
static int reference_start(void *context, const event_batch_spec *batches, int64_t count, tf_error *err)
{
    (void)batches, (void)count, (void)err;
    event_trainer *tr = context;
    node_memory_reset(&tr->memory);
    return TF_OK;
}

static int reference_run(void *context, const event_batch_spec *spec, double *loss, const float **scores,
                         tf_error *err)
{
    event_trainer *tr = context;
    *scores = tr->scores;
    return event_trainer_run_batch(tr, spec, loss, tr->scores, err);
}

static int reference_end_training(void *context, tf_error *err)
{
    (void)err;
    event_trainer_flush_gradient(context);
    return TF_OK;
}

event_batch_runner event_trainer_runner(event_trainer *tr)
{
    return (event_batch_runner){reference_start, reference_run, reference_end_training, NULL, tr};
}

/* Every batch in order into the tally; the epoch counter moves when the training batches end. */
static int run_batches(event_trainer *tr, const event_batch_runner *runner, const event_batch_spec *batches,
                       int64_t count, event_epoch_tally *tally, tf_error *err)
{
    for (int64_t i = 0; i < count; i++) {
        double loss;
        const float *scores;
        int status = runner->run(runner->context, &batches[i], &loss, &scores, err);
        /* Stop at the first step that overflowed (the training batches come first: step i + 1). A
         * twin's loss is all-reduced and its parameters equal on every rank: all stop together. */
        if (status == TF_OK && batches[i].train)
            status = event_trainer_check_finite(tr, loss, i + 1, err);
        if (status != TF_OK)
            return status;
        event_epoch_tally_add(tally, &batches[i], loss, scores);
        if (batches[i].train && (i + 1 == count || !batches[i + 1].train)) {
            if (runner->end_training && ((status = runner->end_training(runner->context, err)) != TF_OK ||
                                         (status = event_trainer_check_finite(tr, loss, i + 1, err)) != TF_OK))
                return status;
            tr->epoch++;
        }
    }
    return TF_OK;
}

/* Run the batches the given function lists, from a zero memory, into the report. */
static int run_listing(event_trainer *tr, int64_t (*list)(const event_trainer *, event_batch_spec *),
                       const event_batch_runner *runner, const char *label, const char *train_stage,
                       event_epoch_report *report, progress_fn progress, void *progress_context, tf_error *err)
{
    memset(report, 0, sizeof *report);
    const int64_t count = list(tr, NULL);
    event_batch_spec *batches = tf_alloc((size_t)count, sizeof *batches, "batch list", err);
    event_epoch_tally tally;
    int status = batches ? event_epoch_tally_create(&tally, tr, label, train_stage, progress, progress_context, err)
                         : TF_ERR_INPUT;
    if (status == TF_OK) {
        list(tr, batches);
        status = runner->start(runner->context, batches, count, err);
        if (status == TF_OK)
            status = run_batches(tr, runner, batches, count, &tally, err);
        if (runner->stop)
            runner->stop(runner->context);
        if (status == TF_OK)
            status = event_epoch_tally_finish(&tally, report, err);
        event_epoch_tally_free(&tally);
    }
    free(batches);
    return status;
}

int event_trainer_epoch_with(event_trainer *tr, const event_batch_runner *runner, event_epoch_report *report,
                             progress_fn progress, void *progress_context, tf_error *err)
{
    char label[32];
    snprintf(label, sizeof label, "epoch %lld: ", (long long)tr->epoch + 1);
    int status = run_listing(tr, event_trainer_epoch_batches, runner, label, "training", report, progress,
                             progress_context, err);
    report->epoch = tr->epoch;
    return status;
}

int event_trainer_evaluate_with(event_trainer *tr, const event_batch_runner *runner, event_metrics *validation,
                                event_metrics *test, progress_fn progress, void *progress_context, tf_error *err)
{
    event_epoch_report report;
    int status = run_listing(tr, event_trainer_replay_batches, runner, "", "replaying training events", &report,
                             progress, progress_context, err);
    *validation = report.validation;
    *test = report.test;
    return status;
}

int event_trainer_epoch(event_trainer *tr, event_epoch_report *report, progress_fn progress, void *progress_context,
                        tf_error *err)
{
    const event_batch_runner runner = event_trainer_runner(tr);
    return event_trainer_epoch_with(tr, &runner, report, progress, progress_context, err);
}

int event_trainer_evaluate(event_trainer *tr, event_metrics *validation, event_metrics *test, progress_fn progress,
                           void *progress_context, tf_error *err)
{
    const event_batch_runner runner = event_trainer_runner(tr);
    return event_trainer_evaluate_with(tr, &runner, validation, test, progress, progress_context, err);
}

/* ---- checkpoints ------------------------------------------------------------------------------- */

/* trainer.npy of an event model: checkpoint.h's header (format, family, kind, epoch, Adam step,
 * data digest), the seed, then what else must match to resume: the model's shape, its memory-update
 * rule (a run resumed under the other rule is refused: its memory would mean something else), its
 * mails per mailbox (APAN's parameters fit any M, but a run resumed with another M would attend
 * over other mailboxes) and the split. */
enum {
    STATE_SEED = CHECKPOINT_HEADER_SIZE, STATE_MEMORY, STATE_TIME, STATE_EMBEDDING, STATE_EDGE, STATE_HEADS,
    STATE_NEIGHBOURS, STATE_MEMORY_UPDATE, STATE_MAILS, STATE_TRAIN_END, STATE_VALIDATION_END, STATE_SIZE
};

static void checkpoint_state(const event_trainer *tr, int64_t state[STATE_SIZE])
{
    const event_model_config *c = &tr->model.config;
    const uint64_t data = checkpoint_event_digest(tr->events, tr->edge_features, c->edge_width);
    int64_t values[STATE_SIZE] = {CHECKPOINT_FORMAT, CHECKPOINT_EVENT_MODEL, c->kind, tr->epoch, tr->optimizer.step,
                                  (int64_t)data, TASK_LINK, (int64_t)tr->options.seed, c->memory_width, c->time_width,
                                  c->embedding_width, c->edge_width, c->heads, c->neighbours, c->memory_update,
                                  c->mails, tr->train_end, tr->validation_end};
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
    int64_t s[STATE_SIZE], e[STATE_SIZE];
    static const char *const labels[] = {"memory", "time", "embedding", "edge features", "heads", "neighbours",
                                         "memory update (0 entry, 1 vertex)", "mails", "train events",
                                         "train and validation events"};
    int found;
    checkpoint_state(tr, e);
    if (checkpoint_resume(directory, e, s, STATE_SIZE, STATE_MEMORY, labels, &tr->model.parameters, &tr->optimizer,
                          &tr->epoch, &found, err) != TF_OK)
        return TF_ERR_INPUT;
    if (found) /* the negatives of the epochs still to come */
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
