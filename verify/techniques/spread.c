/* The reference's own spread under one-ulp changes of its inputs (verify/techniques/spread.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"
#include "ref/nn/compare.h"
#include "verify/techniques/spread.h"

/* Move every value of @p values [n] one ulp, up and down in turn (so no direction is favoured). */
static void move_one_ulp(float *values, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        values[i] = nextafterf(values[i], (i & 1) ? INFINITY : -INFINITY);
}

/* @p copy: @p seq with its own features, each moved one ulp; everything else is borrowed from
 * @p seq (edges, targets), so only the features are freed (free_moved_features). */
static int copy_moving_features(const snapshot_seq *seq, snapshot_seq *copy, tf_error *err)
{
    *copy = *seq;
    if (!(copy->snapshots = tf_alloc((size_t)seq->num_snapshots, sizeof *copy->snapshots, "perturbed data", err)))
        return err->code;
    memcpy(copy->snapshots, seq->snapshots, (size_t)seq->num_snapshots * sizeof *copy->snapshots);
    for (int64_t t = 0; t < seq->num_snapshots; t++) {
        tensor *features = &copy->snapshots[t].features;
        if (tensor_copy(features, &seq->snapshots[t].features, err) != TF_OK) {
            for (int64_t u = t; u < seq->num_snapshots; u++)
                copy->snapshots[u].features = (tensor){0};
            return err->code;
        }
        move_one_ulp(features->data, features->size);
    }
    return TF_OK;
}

static void free_moved_features(snapshot_seq *copy)
{
    if (!copy->snapshots)
        return;
    for (int64_t t = 0; t < copy->num_snapshots; t++)
        tensor_free(&copy->snapshots[t].features);
    free(copy->snapshots);
}

/* Runs 0 (as given), 1 (parameters moved) and 2 (features moved) side by side, step by step. */
static double run_three(const snapshot_seq *seq, const snapshot_seq *moved, const model_config *config,
                        const train_options *options, int64_t steps, int64_t size, spread_step_fn step,
                        const void *context, float *answers, tf_error *err)
{
    trainer runs[3];
    int created = 0;
    double spread = 0;
    for (; created < 3; created++)
        if (trainer_create(&runs[created], created == 2 ? moved : seq, config, options, err) != TF_OK)
            break;
    if (created == 3) {
        parameter_list *list = &runs[1].model.parameters;
        for (int64_t p = 0; p < list->count; p++)
            move_one_ulp(list->items[p].value.data, list->items[p].value.size);
    }
    double first_loss = 0, loss = 0;
    for (int64_t s = 0; created == 3 && spread >= 0 && s < steps; s++) {
        for (int r = 0; r < 3 && spread >= 0; r++)
            if (step(context, &runs[r], r == 2 ? moved : seq, s, answers + r * size, r ? &(double){0} : &loss,
                     err) != TF_OK)
                spread = -1;
        first_loss = s == 0 ? loss : first_loss;
        for (int r = 1; r < 3 && spread >= 0; r++)
            spread = fmax(spread, relative_error(answers + r * size, answers, size));
        if (spread >= 0 && !(loss <= first_loss || loss <= SPREAD_DIVERGED * first_loss)) /* or not finite */
            spread = INFINITY;
    }
    for (int r = 0; r < created; r++)
        trainer_free(&runs[r]);
    return created == 3 ? spread : -1;
}

double reference_spread(const snapshot_seq *seq, const model_config *config, const train_options *options,
                        int64_t steps, int64_t answer_size, spread_step_fn step, const void *context, tf_error *err)
{
    snapshot_seq moved = {0};
    float *answers = tf_alloc((size_t)(3 * answer_size), sizeof *answers, "reference spread", err);
    double spread = -1;
    if (answers && copy_moving_features(seq, &moved, err) == TF_OK)
        spread = run_three(seq, &moved, config, options, steps, answer_size, step, context, answers, err);
    free_moved_features(&moved);
    free(answers);
    return spread;
}

int spread_epoch_step(const void *context, trainer *tr, const snapshot_seq *seq, int64_t step, float *answer,
                      double *loss, tf_error *err)
{
    (void)step;
    const spread_epoch_fn *epoch = context;
    epoch_report report;
    if ((*epoch)(tr, seq, &report, err) != TF_OK)
        return err->code;
    *loss = report.train_loss;
    parameters_pack_values(&tr->model.parameters, answer);
    return TF_OK;
}
