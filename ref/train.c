#include "ref/train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ref/models/checkpoint.h"
#include "ref/models/classify_task.h"
#include "ref/models/link_task.h"
#include "ref/core/io.h"
#include "ref/core/memory.h"
#include "ref/data/npy.h"
#include "ref/nn/metrics.h"
#include "ref/nn/sgd.h"

const char *optimizer_kind_name(optimizer_kind kind) { return kind == OPTIMIZER_SGD ? "sgd" : "adam"; }

int optimizer_kind_parse(const char *name, optimizer_kind *kind, tf_error *err)
{
    if (strcmp(name, "adam") == 0)
        *kind = OPTIMIZER_ADAM;
    else if (strcmp(name, "sgd") == 0)
        *kind = OPTIMIZER_SGD;
    else
        return tf_error_set(err, TF_ERR_INPUT, "optimizer \"%s\", expected adam or sgd", name);
    return TF_OK;
}

void train_options_default(train_options *options)
{
    memset(options, 0, sizeof *options);
    options->epochs = 50;
    options->learning_rate = 0.01;
    options->window = 0;
    options->stride = 0;
    options->batch = 1;
    options->train_ratio = 0.8;
    options->seed = 1;
}

/* The labelled vertices of snapshots first .. end - 1. */
static int64_t labelled_vertices(const snapshot_seq *seq, int64_t first, int64_t end)
{
    int64_t labelled = 0;
    for (int64_t t = first; t < end; t++)
        for (int64_t v = 0; v < seq->num_nodes; v++)
            labelled += seq->snapshots[t].labels[v] != SNAPSHOT_UNLABELLED;
    return labelled;
}

/* The pairs to score in snapshots first .. end - 1, each scoring the next one's edges inside the part. */
static int64_t link_positives(const snapshot_seq *seq, int64_t first, int64_t end)
{
    int64_t positives = 0;
    for (int64_t t = first; t < end; t++)
        positives += link_task_positives(seq, t, end);
    return positives;
}

int trainer_create(trainer *tr, const snapshot_seq *seq, const model_config *config, const train_options *options,
                   tf_error *err)
{
    memset(tr, 0, sizeof *tr);
    tr->options = *options;
    if (!(options->train_ratio > 0 && options->train_ratio < 1))
        return tf_error_set(err, TF_ERR_INPUT, "train ratio %g, expected a fraction in (0, 1)", options->train_ratio);
    if (options->epochs < 0 || options->window < 0 || options->stride < 0 || options->batch < 1)
        return tf_error_set(err, TF_ERR_INPUT, "epochs, window and stride must be >= 0 and batch >= 1");
    if (!(options->learning_rate > 0))
        return tf_error_set(err, TF_ERR_INPUT, "learning rate %g, expected > 0", options->learning_rate);
    /* temporal_signal_split: int(train_ratio * T) snapshots train. */
    tr->train_snapshots = (int64_t)(options->train_ratio * (double)seq->num_snapshots);
    if (tr->train_snapshots < 1 || tr->train_snapshots >= seq->num_snapshots)
        return tf_error_set(err, TF_ERR_INPUT, "%lld snapshots split at %g leave an empty train or test part",
                            (long long)seq->num_snapshots, options->train_ratio);
    if (options->task == TASK_LINK && (tr->train_snapshots < 2 || seq->num_snapshots - tr->train_snapshots < 2))
        return tf_error_set(err, TF_ERR_INPUT, "--task link: %lld snapshots split at %g give %lld to train and %lld to "
                            "test; each part needs 2 or more (a snapshot scores the next one's edges)",
                            (long long)seq->num_snapshots, options->train_ratio, (long long)tr->train_snapshots,
                            (long long)(seq->num_snapshots - tr->train_snapshots));
    for (int part = 0; options->task == TASK_LINK && part < 2; part++) {
        /* a part without an edge to score would train on nothing, or report an AP of nothing (NaN) */
        const int64_t first = part ? tr->train_snapshots : 0;
        const int64_t end = part ? seq->num_snapshots : tr->train_snapshots;
        if (!link_positives(seq, first, end))
            return tf_error_set(err, TF_ERR_INPUT, "--task link: the %s part's scored snapshots %lld..%lld hold no edge between two "
                                "vertices to score (self-loops are not scored), expected edges in both parts of the split",
                                part ? "test" : "train", (long long)first + 1, (long long)end - 1);
    }
    if (options->task == TASK_CLASSIFY && seq->num_classes < 2)
        return tf_error_set(err, TF_ERR_INPUT, "--task classify: the data has no class labels (a generator spec "
                            "communities:... has them; ref/models/classify_task.h)");
    for (int part = 0; options->task == TASK_CLASSIFY && part < 2; part++) {
        /* a part without a labelled vertex would train on nothing, or report an accuracy of nothing */
        const int64_t first = part ? tr->train_snapshots : 0;
        const int64_t end = part ? seq->num_snapshots : tr->train_snapshots;
        if (!labelled_vertices(seq, first, end))
            return tf_error_set(err, TF_ERR_INPUT, "--task classify: the %s snapshots %lld..%lld hold no labelled "
                                "vertex, expected labels in both parts of the split", part ? "test" : "train",
                                (long long)first, (long long)end - 1);
    }
    model_config shaped = *config;
    shaped.in_features = seq->feature_width;
    /* classification: the head gives each vertex C logits instead of its targets */
    shaped.out_features = options->task == TASK_CLASSIFY ? seq->num_classes : seq->target_width;
    if (model_create(&tr->model, &shaped, options->seed, err) != TF_OK)
        return TF_ERR_INPUT;
    if (adam_create(&tr->optimizer, &tr->model.parameters, options->learning_rate, err) != TF_OK) {
        model_free(&tr->model);
        return TF_ERR_INPUT;
    }
    tr->data_digest = checkpoint_snapshot_digest(seq); /* a checkpoint resumes only on the same data */
    return TF_OK;
}

void trainer_free(trainer *tr)
{
    model_free(&tr->model);
    adam_free(&tr->optimizer);
}

/* ---- the schedule ---------------------------------------------------------------------------- */

train_schedule trainer_schedule(const trainer *tr)
{
    train_schedule s;
    s.train_snapshots = tr->train_snapshots;
    s.length = tr->options.window == 0 || tr->options.window > s.train_snapshots ? s.train_snapshots
                                                                                 : tr->options.window;
    s.stride = tr->options.stride > 0 ? tr->options.stride : s.length;
    /* A stride past the train part gives the one window a stride equal to it gives; a batch of
     * more windows than exist is one step of them all. Bounding both here keeps the sums below
     * from overflowing and the slot loops from running over slots that hold nothing. */
    if (s.stride > s.train_snapshots)
        s.stride = s.train_snapshots;
    s.windows = (s.train_snapshots + s.stride - 1) / s.stride;
    s.batch = tr->options.batch < s.windows ? tr->options.batch : s.windows;
    s.steps = (s.windows + s.batch - 1) / s.batch;
    s.batching = tr->options.batching;
    return s;
}

int64_t train_schedule_window(const train_schedule *s, int64_t step, int64_t slot)
{
    int64_t w = s->batching == BATCH_ACROSS_BLOCKS ? slot * s->steps + step : step * s->batch + slot;
    return w < s->windows ? w : -1;
}

int64_t train_schedule_windows_in_step(const train_schedule *s, int64_t step)
{
    int64_t in_step = 0;
    for (int64_t slot = 0; slot < s->batch; slot++)
        in_step += train_schedule_window(s, step, slot) >= 0;
    return in_step;
}

void train_schedule_span(const train_schedule *s, int64_t window, int64_t *first, int64_t *count)
{
    *first = window * s->stride;
    *count = *first + s->length > s->train_snapshots ? s->train_snapshots - *first : s->length;
}

/* ---- one window ------------------------------------------------------------------------------ */

/* The link task's loss of a window whose forward is in `tape` (ref/models/link_task.h), scored
 * within the split ending at `limit`; backward through the cell unless `backward` is 0. */
static int link_window(const trainer *tr, model *m, const snapshot_seq *seq, const window_tape *tape, int64_t limit,
                       float scale, int backward, double *loss, tf_error *err)
{
    const int64_t width = model_state_width(m), size = tape->count * seq->num_nodes * width;
    float *dstates = backward ? model_scratch_zeroed(m, (size_t)size, sizeof(float), "state gradients", err) : NULL;
    if (backward && !dstates)
        return TF_ERR_INPUT;
    *loss = link_task_window_loss(seq, tape->first, tape->count, limit, tr->options.seed, tape->states, width, scale,
                                  dstates, NULL, NULL, NULL, err);
    if (isnan(*loss))
        return TF_ERR_INPUT;
    return backward ? model_backward_states(m, seq, tape, dstates, err) : TF_OK;
}

/* The loss of the head's predictions [count][N][out] under the trainer's task (regression's MSE or
 * classification's cross-entropy) into *loss, its gradient scaled by `scale` into dpredictions
 * (NULL: none). */
static int head_loss(const trainer *tr, const model *m, const snapshot_seq *seq, int64_t first, int64_t count,
                     const float *predictions, float scale, float *dpredictions, double *loss, tf_error *err)
{
    if (tr->options.task == TASK_CLASSIFY)
        return classify_task_window_loss(seq, first, count, predictions, scale, dpredictions, NULL, NULL, loss, err);
    *loss = model_window_loss_of(m, seq, first, count, predictions, scale, dpredictions);
    return TF_OK;
}

/* Forward one window; optionally backward with the loss scaled by `scale`. The predictions and
 * their gradients are model_scratch(): the window's, reused by the next. The link task scores
 * pairs within the split that ends at `limit`. */
static int run_window(const trainer *tr, model *m, const snapshot_seq *seq, int64_t first, int64_t count, int64_t limit,
                      float scale, int backward, double *loss, float *predictions_out, tf_error *err)
{
    const int64_t size = count * seq->num_nodes * m->config.out_features;
    const int link = tr->options.task == TASK_LINK;
    float *predictions = model_scratch(m, (size_t)size, sizeof(float), "predictions", err);
    float *dpredictions = predictions && backward && !link
                              ? model_scratch(m, (size_t)size, sizeof(float), "predictions", err) : NULL;
    int status = predictions && (dpredictions || !backward || link) ? TF_OK : TF_ERR_INPUT;
    window_tape tape;
    memset(&tape, 0, sizeof tape);
    if (status == TF_OK)
        status = model_forward(m, seq, first, count, &tape, predictions, err);
    if (status == TF_OK && link) {
        status = link_window(tr, m, seq, &tape, limit, scale, backward, loss, err);
    } else if (status == TF_OK) {
        status = head_loss(tr, m, seq, first, count, predictions, scale, dpredictions, loss, err);
        if (status == TF_OK && backward)
            status = model_backward(m, seq, &tape, dpredictions, err);
    }
    if (status == TF_OK && predictions_out)
        m->kernels->copy_rows(predictions_out, size, predictions, size, 1, size);
    window_tape_free(m, &tape); /* and the predictions */
    return status;
}

int trainer_train_slot(trainer *tr, const snapshot_seq *seq, const train_schedule *s, int64_t step, int64_t slot,
                       double *loss_sum, tf_error *err)
{
    const int64_t w = train_schedule_window(s, step, slot);
    if (w < 0)
        return TF_OK;
    /* Scaled by 1 / windows-in-step: the step sees their mean, the sum over all windows of the
     * step divided by their number. */
    return trainer_train_window(tr, seq, s, w, 1.0f / (float)train_schedule_windows_in_step(s, step), loss_sum, err);
}

int trainer_train_window(trainer *tr, const snapshot_seq *seq, const train_schedule *s, int64_t window, float scale,
                         double *loss_sum, tf_error *err)
{
    int64_t first, count;
    train_schedule_span(s, window, &first, &count);
    double loss = 0;
    int status = run_window(tr, &tr->model, seq, first, count, tr->train_snapshots, scale, 1, &loss, NULL, err);
    *loss_sum += loss;
    return status;
}

void trainer_apply_gradient(trainer *tr)
{
    if (tr->options.optimizer == OPTIMIZER_SGD) {
        ref_sgd_step(&tr->model.parameters, tr->options.learning_rate);
        tr->optimizer.step++;
    } else {
        tr->model.kernels->adam_step(&tr->optimizer, &tr->model.parameters);
    }
}

int64_t trainer_evaluation_length(const trainer *tr, int64_t count)
{
    return tr->options.window == 0 || tr->options.window > count ? count : tr->options.window;
}

int trainer_evaluate_window(const trainer *tr, const snapshot_seq *seq, int64_t first, int64_t count, int64_t j,
                            double *error_sum, float *predictions, tf_error *err)
{
    const int64_t length = trainer_evaluation_length(tr, count), start = first + j * length;
    const int64_t in_window = start + length > first + count ? first + count - start : length;
    const int64_t per_snapshot = seq->num_nodes * tr->model.config.out_features;
    double loss;
    /* Evaluation never touches gradients: the model is only read (backward = 0). */
    int status = run_window(tr, (model *)&tr->model, seq, start, in_window, first + count, 1.0f, 0, &loss,
                            predictions ? predictions + j * length * per_snapshot : NULL, err);
    if (status == TF_OK)
        *error_sum += loss * (double)in_window;
    return status;
}

/* ---- an epoch -------------------------------------------------------------------------------- */

void trainer_close_epoch(trainer *tr, const train_schedule *s, double loss_sum, epoch_report *report)
{
    tr->epoch++;
    report->epoch = tr->epoch;
    report->windows = s->windows;
    report->train_loss = loss_sum / (double)s->windows;
}

int trainer_train_step(trainer *tr, const snapshot_seq *seq, const train_schedule *s, int64_t step, double *loss_sum,
                       tf_error *err)
{
    parameters_zero_grad(&tr->model.parameters);
    int status = TF_OK;
    for (int64_t slot = 0; status == TF_OK && slot < s->batch; slot++)
        status = trainer_train_slot(tr, seq, s, step, slot, loss_sum, err);
    return status;
}

int trainer_epoch(trainer *tr, const snapshot_seq *seq, epoch_report *report, tf_error *err)
{
    memset(report, 0, sizeof *report);
    const train_schedule s = trainer_schedule(tr);
    double loss_sum = 0;
    int status = TF_OK;
    for (int64_t step = 0; status == TF_OK && step < s.steps; step++) {
        status = trainer_train_step(tr, seq, &s, step, &loss_sum, err);
        if (status == TF_OK) {
            trainer_apply_gradient(tr);
            report->steps++;
        }
    }
    if (status != TF_OK)
        return status;
    trainer_close_epoch(tr, &s, loss_sum, report);
    status = trainer_evaluate(tr, seq, tr->train_snapshots, seq->num_snapshots - tr->train_snapshots,
                              &report->test_mse, NULL, err);
    return status == TF_OK ? trainer_task_metrics(tr, seq, report, err) : status;
}

/* What the test metrics of a task collect from each evaluation window. */
typedef struct task_tally {
    float *scores;     /* link: [pairs] every pair's logit */
    uint8_t *labels;   /* link: [pairs] its label */
    int64_t scored;    /* link: pairs collected so far */
    int64_t correct;   /* classify: labelled vertices predicted right */
    int64_t labelled;  /* classify: labelled vertices */
} task_tally;

/* One evaluation window's forward (from a zero state, the model only read), its pairs or its
 * predicted classes added to `tally`. */
static int tally_window(const trainer *tr, const snapshot_seq *seq, int64_t start, int64_t in_window, int64_t limit,
                        task_tally *tally, tf_error *err)
{
    model *m = (model *)&tr->model; /* only read: forward, no backward */
    float *predictions = model_scratch(m, (size_t)(in_window * seq->num_nodes * m->config.out_features),
                                       sizeof(float), "predictions", err);
    window_tape tape;
    memset(&tape, 0, sizeof tape);
    int status = predictions ? model_forward(m, seq, start, in_window, &tape, predictions, err) : TF_ERR_INPUT;
    double loss;
    if (status == TF_OK && tr->options.task == TASK_CLASSIFY)
        status = classify_task_window_loss(seq, start, in_window, predictions, 1.0f, NULL, &tally->correct,
                                           &tally->labelled, &loss, err);
    else if (status == TF_OK &&
             isnan(link_task_window_loss(seq, start, in_window, limit, tr->options.seed, tape.states,
                                         model_state_width(m), 1.0f, NULL, tally->scores, tally->labels,
                                         &tally->scored, err)))
        status = TF_ERR_INPUT;
    window_tape_free(m, &tape);
    return status;
}

int trainer_task_metrics(const trainer *tr, const snapshot_seq *seq, epoch_report *report, tf_error *err)
{
    if (tr->options.task == TASK_REGRESSION)
        return TF_OK;
    const int64_t first = tr->train_snapshots, count = seq->num_snapshots - first;
    const int64_t length = trainer_evaluation_length(tr, count);
    int64_t pairs = 0;
    for (int64_t t = first; tr->options.task == TASK_LINK && t < first + count; t++)
        pairs += 2 * link_task_positives(seq, t, first + count);
    task_tally tally = {tf_alloc((size_t)pairs + 1, sizeof(float), "link scores", err), NULL, 0, 0, 0};
    if (tally.scores)
        tally.labels = tf_alloc((size_t)pairs + 1, sizeof(uint8_t), "link scores", err);
    int status = tally.labels ? TF_OK : TF_ERR_INPUT;
    /* the evaluation's windows, each from a zero state */
    for (int64_t start = first; status == TF_OK && start < first + count; start += length)
        status = tally_window(tr, seq, start, start + length > first + count ? first + count - start : length,
                              first + count, &tally, err);
    if (status == TF_OK && tr->options.task == TASK_CLASSIFY)
        report->test_accuracy = tally.labelled ? (double)tally.correct / (double)tally.labelled : 0;
    else if (status == TF_OK && ref_average_precision(tally.scores, tally.labels, tally.scored, &report->test_ap,
                                                      err) == TF_OK)
        status = ref_roc_auc(tally.scores, tally.labels, tally.scored, &report->test_auc, err);
    else if (status == TF_OK)
        status = TF_ERR_INPUT;
    free(tally.scores);
    free(tally.labels);
    return status;
}

int trainer_check_finite(const trainer *tr, const epoch_report *report, tf_error *err)
{
    const char *name;
    if (!isfinite(report->train_loss) || !isfinite(report->test_mse))
        return tf_error_set(err, TF_ERR_INPUT, "epoch %lld: training diverged (train loss %g, test MSE %g); stopped, "
                            "nothing saved", (long long)report->epoch, report->train_loss, report->test_mse);
    if ((name = parameters_first_non_finite(&tr->model.parameters, 0)))
        return tf_error_set(err, TF_ERR_INPUT, "epoch %lld: training diverged (parameter %s is not finite); "
                            "stopped, nothing saved", (long long)report->epoch, name);
    if ((name = parameters_first_non_finite(&tr->optimizer.moments, 0)) ||
        (name = parameters_first_non_finite(&tr->optimizer.moments, 1)))
        return tf_error_set(err, TF_ERR_INPUT, "epoch %lld: training diverged (Adam's moment of %s is not finite: "
                            "gradients beyond float's range); stopped, nothing saved", (long long)report->epoch, name);
    return TF_OK;
}

int trainer_evaluate(const trainer *tr, const snapshot_seq *seq, int64_t first, int64_t count, double *mse,
                     float *predictions, tf_error *err)
{
    /* Window 0 evaluates the whole range from one zero state, as the library's examples do. */
    const int64_t length = trainer_evaluation_length(tr, count);
    double error_sum = 0;
    for (int64_t j = 0; j * length < count; j++) {
        int status = trainer_evaluate_window(tr, seq, first, count, j, &error_sum, predictions, err);
        if (status != TF_OK)
            return status;
    }
    *mse = error_sum / (double)count;
    return TF_OK;
}

/* ---- checkpoints ------------------------------------------------------------------------- */

/* trainer.npy: checkpoint.h's header (format, family, kind, epoch, Adam step, data digest, task),
 * then what else must match to resume: the model's shape (a stacked model's pairs too: GCRN-M1 with
 * fewer pairs would load the first ones silently), the windows, the split, the number of classes
 * (0 but for classification) and the sampled mini-batches (their epochs draw other graphs and take
 * other steps: a whole-graph checkpoint resumed under --minibatch would go on silently elsewhere). */
enum { STATE_HIDDEN = CHECKPOINT_HEADER_SIZE, STATE_K, STATE_IN, STATE_OUT, STATE_WINDOW, STATE_STRIDE, STATE_TRAIN,
       STATE_LAYERS, STATE_CLASSES, STATE_SAMPLING, STATE_SIZE = STATE_SAMPLING + TRAIN_SAMPLING_VALUES };

/* This trainer's state, windows and stride as they take effect (0 means "the split", "the window"). */
static void checkpoint_state(const trainer *tr, int64_t state[STATE_SIZE])
{
    const model_config *c = &tr->model.config;
    const int64_t window = tr->options.window ? tr->options.window : tr->train_snapshots;
    int64_t values[STATE_SAMPLING] = {CHECKPOINT_FORMAT, CHECKPOINT_SNAPSHOT_MODEL, c->kind, tr->epoch,
                                  tr->optimizer.step, (int64_t)tr->data_digest, tr->options.task, c->hidden,
                                  c->chebyshev_k, c->in_features, c->out_features, window,
                                  tr->options.stride ? tr->options.stride : window, tr->train_snapshots,
                                  c->layers, tr->options.task == TASK_CLASSIFY ? c->out_features : 0};
    memcpy(state, values, sizeof values);
    memcpy(state + STATE_SAMPLING, tr->sampling, sizeof tr->sampling);
}

/* Fills a checkpoint directory: parameters, Adam's moments, trainer.npy. */
int trainer_save(const trainer *tr, const char *directory, tf_error *err)
{
    int64_t state[STATE_SIZE];
    checkpoint_state(tr, state);
    return checkpoint_save(directory, &tr->model.parameters, &tr->optimizer, state, STATE_SIZE, err);
}

int trainer_load(trainer *tr, const char *directory, tf_error *err)
{
    int64_t s[STATE_SIZE], e[STATE_SIZE];
    static const char *const labels[] = {"hidden", "K", "features", "targets", "windows of", "stride",
                                         "train snapshots", "layers", "classes", "mini-batch size",
                                         "fan-out hop 1", "fan-out hop 2", "fan-out hop 3", "fan-out hop 4"};
    int found;
    checkpoint_state(tr, e);
    return checkpoint_resume(directory, e, s, STATE_SIZE, STATE_HIDDEN, labels, &tr->model.parameters, &tr->optimizer,
                             &tr->epoch, &found, err);
}
