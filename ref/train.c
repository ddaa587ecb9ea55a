#include "ref/train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ref/checkpoint.h"
#include "ref/io.h"
#include "ref/memory.h"
#include "ref/npy.h"

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

/* Length of windows and distance between their starts over a split of `length` snapshots. */
static int64_t window_length(const trainer *tr, int64_t length)
{
    return tr->options.window == 0 || tr->options.window > length ? length : tr->options.window;
}

static int64_t window_stride(const trainer *tr, int64_t length)
{
    return tr->options.stride > 0 ? tr->options.stride : window_length(tr, length);
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
    model_config shaped = *config;
    shaped.in_features = seq->feature_width;
    shaped.out_features = seq->target_width;
    if (model_create(&tr->model, &shaped, options->seed, err) != TF_OK)
        return TF_ERR_INPUT;
    if (adam_create(&tr->optimizer, &tr->model.parameters, options->learning_rate, err) != TF_OK) {
        model_free(&tr->model);
        return TF_ERR_INPUT;
    }
    tr->group.rank = 0;
    tr->group.size = 1;
    return TF_OK;
}

void trainer_free(trainer *tr)
{
    model_free(&tr->model);
    adam_free(&tr->optimizer);
    free(tr->gradients);
    tr->gradients = NULL;
}

int trainer_join_group(trainer *tr, const train_group *group, tf_error *err)
{
    if (group->size < 1 || group->rank < 0 || group->rank >= group->size ||
        (group->size > 1 && (!group->sum_floats || !group->sum_doubles)))
        return tf_error_set(err, TF_ERR_INPUT, "train group: rank %d of %d, expected 0 <= rank < size with sum functions",
                            group->rank, group->size);
    tr->group = *group;
    free(tr->gradients);
    tr->gradients = NULL;
    if (group->size > 1 &&
        !(tr->gradients = tf_alloc((size_t)parameters_size(&tr->model.parameters), sizeof(float), "gradient buffer", err)))
        return TF_ERR_INPUT;
    return TF_OK;
}

/* Sums every parameter's gradient across the group: packed into one buffer, one collective. */
static int sum_gradients(trainer *tr, tf_error *err)
{
    if (tr->group.size == 1)
        return TF_OK;
    parameter_list *list = &tr->model.parameters;
    int64_t offset = 0;
    for (int64_t i = 0; i < list->count; i++) {
        memcpy(tr->gradients + offset, list->items[i].grad.data, (size_t)list->items[i].grad.size * sizeof(float));
        offset += list->items[i].grad.size;
    }
    if (tr->group.sum_floats(tr->group.context, tr->gradients, offset, err) != TF_OK)
        return err->code;
    offset = 0;
    for (int64_t i = 0; i < list->count; i++) {
        memcpy(list->items[i].grad.data, tr->gradients + offset, (size_t)list->items[i].grad.size * sizeof(float));
        offset += list->items[i].grad.size;
    }
    return TF_OK;
}

/* Sums `count` doubles across the group (a group of one: nothing to do). */
static int sum_across_group(const trainer *tr, double *values, int64_t count, tf_error *err)
{
    return tr->group.size == 1 ? TF_OK : tr->group.sum_doubles(tr->group.context, values, count, err);
}

/* The window in slot `slot` of step `step`, or -1 when that slot is empty (the last step, or
 * the end of a short block): consecutive windows, or the step-th window of block `slot`. */
static int64_t step_window(const trainer *tr, int64_t windows, int64_t steps, int64_t step, int64_t slot)
{
    int64_t w = tr->options.blocks ? slot * steps + step : step * tr->options.batch + slot;
    return w < windows ? w : -1;
}

/* Forward one window; optionally backward with the loss scaled by `scale`. */
static int run_window(model *m, const snapshot_seq *seq, int64_t first, int64_t count, float scale, int backward,
                      double *loss, float *predictions_out, tf_error *err)
{
    const int64_t size = count * seq->num_nodes * seq->target_width;
    float *predictions = tf_alloc((size_t)size, sizeof(float), "predictions", err);
    float *dpredictions = predictions && backward ? tf_alloc((size_t)size, sizeof(float), "predictions", err) : NULL;
    int status = predictions && (dpredictions || !backward) ? TF_OK : TF_ERR_INPUT;
    window_tape tape;
    memset(&tape, 0, sizeof tape);
    if (status == TF_OK)
        status = model_forward(m, seq, first, count, &tape, predictions, err);
    if (status == TF_OK) {
        *loss = model_window_loss(seq, first, count, predictions, scale, dpredictions);
        if (backward)
            status = model_backward(m, seq, &tape, dpredictions, err);
        if (predictions_out)
            memcpy(predictions_out, predictions, (size_t)size * sizeof(float));
    }
    window_tape_free(m, &tape);
    free(predictions);
    free(dpredictions);
    return status;
}

int trainer_epoch(trainer *tr, const snapshot_seq *seq, epoch_report *report, tf_error *err)
{
    memset(report, 0, sizeof *report);
    const int64_t length = window_length(tr, tr->train_snapshots), stride = window_stride(tr, tr->train_snapshots);
    const int64_t windows = (tr->train_snapshots + stride - 1) / stride;
    double loss_sum = 0;
    int status = TF_OK;
    const int64_t batch = tr->options.batch, steps = (windows + batch - 1) / batch;
    for (int64_t step = 0; status == TF_OK && step < steps; step++) {
        int64_t in_step = 0;
        for (int64_t slot = 0; slot < batch; slot++)
            in_step += step_window(tr, windows, steps, step, slot) >= 0;
        parameters_zero_grad(&tr->model.parameters);
        /* This process runs slots rank, rank + size, ... of the step. */
        for (int64_t slot = tr->group.rank; status == TF_OK && slot < batch; slot += tr->group.size) {
            int64_t w = step_window(tr, windows, steps, step, slot);
            if (w < 0)
                continue;
            int64_t first = w * stride;
            int64_t count = first + length > tr->train_snapshots ? tr->train_snapshots - first : length;
            double loss;
            /* Each window's gradient is scaled by 1 / windows-in-step: the step sees their mean,
             * the sum over all windows of the step divided by their number, whoever ran them. */
            status = run_window(&tr->model, seq, first, count, 1.0f / (float)in_step, 1, &loss, NULL, err);
            loss_sum += loss;
        }
        if (status == TF_OK)
            status = sum_gradients(tr, err);
        if (status == TF_OK) {
            ref_adam_step(&tr->optimizer, &tr->model.parameters);
            report->steps++;
        }
    }
    if (status == TF_OK)
        status = sum_across_group(tr, &loss_sum, 1, err);
    if (status != TF_OK)
        return status;
    tr->epoch++;
    report->epoch = tr->epoch;
    report->windows = windows;
    report->train_loss = loss_sum / (double)windows;
    return trainer_evaluate(tr, seq, tr->train_snapshots, seq->num_snapshots - tr->train_snapshots, &report->test_mse,
                            NULL, err);
}

int trainer_evaluate(const trainer *tr, const snapshot_seq *seq, int64_t first, int64_t count, double *mse,
                     float *predictions, tf_error *err)
{
    /* Window 0 evaluates the whole range from one zero state, as the library's examples do. */
    const int64_t length = tr->options.window == 0 || tr->options.window > count ? count : tr->options.window;
    const int64_t per_snapshot = seq->num_nodes * seq->target_width;
    /* Window j goes to rank j % size; with predictions wanted, every rank runs every window,
     * since each needs all of them. */
    const int share = predictions == NULL && tr->group.size > 1;
    double total = 0;
    int64_t j = 0;
    for (int64_t start = first; start < first + count; start += length, j++) {
        if (share && j % tr->group.size != tr->group.rank)
            continue;
        int64_t in_window = start + length > first + count ? first + count - start : length;
        double loss;
        /* Evaluation never touches gradients: the model is only read (backward = 0). */
        int status = run_window((model *)&tr->model, seq, start, in_window, 1.0f, 0, &loss,
                                predictions ? predictions + (start - first) * per_snapshot : NULL, err);
        if (status != TF_OK)
            return status;
        total += loss * (double)in_window;
    }
    if (share && sum_across_group(tr, &total, 1, err) != TF_OK)
        return err->code;
    *mse = total / (double)count;
    return TF_OK;
}

/* ---- checkpoints ------------------------------------------------------------------------- */

/* trainer.npy: what must match to resume, and where training stands. */
enum { STATE_VERSION, STATE_EPOCH, STATE_STEP, STATE_KIND, STATE_HIDDEN, STATE_K, STATE_IN, STATE_OUT, STATE_SIZE };
#define CHECKPOINT_VERSION 1

/* Fills a checkpoint directory: parameters, Adam's moments, trainer.npy. */
int trainer_save(const trainer *tr, const char *directory, tf_error *err)
{
    const model_config *c = &tr->model.config;
    int64_t state[STATE_SIZE] = {CHECKPOINT_VERSION, tr->epoch, tr->optimizer.step, c->kind, c->hidden,
                                 c->chebyshev_k, c->in_features, c->out_features};
    return checkpoint_save(directory, &tr->model.parameters, &tr->optimizer, state, STATE_SIZE, err);
}

int trainer_load(trainer *tr, const char *directory, tf_error *err)
{
    int64_t s[STATE_SIZE];
    char path[4096];
    int found;
    if (checkpoint_load(directory, &tr->model.parameters, s, STATE_SIZE, &found, path, err) != TF_OK)
        return TF_ERR_INPUT;
    if (!found)
        return TF_OK; /* parameters only: start from epoch 0 with a fresh optimizer */
    const model_config *c = &tr->model.config;
    if (s[STATE_VERSION] != CHECKPOINT_VERSION)
        return tf_error_set(err, TF_ERR_INPUT, "%s: not a twofold checkpoint of version %d", path, CHECKPOINT_VERSION);
    if (s[STATE_KIND] != c->kind || s[STATE_HIDDEN] != c->hidden || s[STATE_K] != c->chebyshev_k ||
        s[STATE_IN] != c->in_features || s[STATE_OUT] != c->out_features)
        return tf_error_set(err, TF_ERR_INPUT,
                            "%s: saved for model %s with hidden %lld, K %lld, %lld features, %lld targets; "
                            "this run has %s with hidden %lld, K %d, %lld features, %lld targets",
                            path, model_kind_name((model_kind)s[STATE_KIND]), (long long)s[STATE_HIDDEN],
                            (long long)s[STATE_K], (long long)s[STATE_IN], (long long)s[STATE_OUT],
                            model_kind_name(c->kind), (long long)c->hidden, c->chebyshev_k,
                            (long long)c->in_features, (long long)c->out_features);
    if (checkpoint_load_moments(&tr->optimizer, directory, err) != TF_OK)
        return TF_ERR_INPUT;
    tr->epoch = s[STATE_EPOCH];
    tr->optimizer.step = s[STATE_STEP];
    return TF_OK;
}
