#include "ref/async.h"

#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"

/* ---- stale gradients ------------------------------------------------------------------------- */

int delayed_gradient_create(delayed_gradient *d, const parameter_list *parameters, tf_error *err)
{
    memset(d, 0, sizeof *d);
    d->size = parameters_size(parameters);
    d->pending = tf_alloc((size_t)d->size, sizeof(float), "delayed gradient", err);
    d->current = d->pending ? tf_alloc((size_t)d->size, sizeof(float), "delayed gradient", err) : NULL;
    return d->current ? TF_OK : TF_ERR_INPUT;
}

void delayed_gradient_free(delayed_gradient *d)
{
    free(d->pending);
    free(d->current);
    memset(d, 0, sizeof *d);
}

int delayed_gradient_exchange(delayed_gradient *d, parameter_list *parameters)
{
    parameters_pack_gradients(parameters, d->current);
    const int due = d->has_pending;
    if (due)
        parameters_unpack_gradients(parameters, d->pending);
    float *kept = d->current; /* this step's gradient waits for the next step */
    d->current = d->pending;
    d->pending = kept;
    d->has_pending = 1;
    return due;
}

int delayed_gradient_flush(delayed_gradient *d, parameter_list *parameters)
{
    if (!d->has_pending)
        return 0;
    parameters_unpack_gradients(parameters, d->pending);
    d->has_pending = 0;
    return 1;
}

int ref_delayed_epoch(trainer *tr, const snapshot_seq *seq, epoch_report *report, tf_error *err)
{
    memset(report, 0, sizeof *report);
    delayed_gradient delay;
    if (delayed_gradient_create(&delay, &tr->model.parameters, err) != TF_OK)
        return TF_ERR_INPUT;
    const train_schedule s = trainer_schedule(tr);
    double loss_sum = 0;
    int status = TF_OK;
    for (int64_t step = 0; status == TF_OK && step < s.steps; step++) {
        status = trainer_train_step(tr, seq, &s, step, &loss_sum, err);
        if (status == TF_OK && delayed_gradient_exchange(&delay, &tr->model.parameters)) {
            trainer_apply_gradient(tr);
            report->steps++;
        }
    }
    /* The last gradient is applied before evaluation (and before any checkpoint). */
    if (status == TF_OK && delayed_gradient_flush(&delay, &tr->model.parameters)) {
        trainer_apply_gradient(tr);
        report->steps++;
    }
    delayed_gradient_free(&delay);
    if (status != TF_OK)
        return status;
    trainer_close_epoch(tr, &s, loss_sum, report);
    return trainer_evaluate(tr, seq, tr->train_snapshots, seq->num_snapshots - tr->train_snapshots, &report->test_mse,
                            NULL, err);
}

/* ---- local updates and averaging ------------------------------------------------------------ */

int replica_of_slot(int64_t slot, int replicas) { return (int)(slot % replicas); }

int64_t replica_windows_in_step(const train_schedule *s, int64_t step, int replica, int replicas)
{
    int64_t windows = 0;
    for (int64_t slot = replica; slot < s->batch; slot += replicas)
        windows += train_schedule_window(s, step, slot) >= 0;
    return windows;
}

int average_clock_create(average_clock *c, int replicas, int64_t every, tf_error *err)
{
    memset(c, 0, sizeof *c);
    if (replicas < 1 || every < 1)
        return tf_error_set(err, TF_ERR_INPUT, "model averaging over %d replica(s) every %lld step(s): expected at "
                                               "least 1 of each",
                            replicas, (long long)every);
    c->replicas = replicas;
    c->every = every;
    c->windows_since = tf_alloc((size_t)replicas, sizeof(int64_t), "averaging weights", err);
    return c->windows_since ? TF_OK : TF_ERR_INPUT;
}

void average_clock_free(average_clock *c)
{
    free(c->windows_since);
    memset(c, 0, sizeof *c);
}

int average_clock_tick(average_clock *c, const train_schedule *s, int64_t step)
{
    for (int i = 0; i < c->replicas; i++)
        c->windows_since[i] += replica_windows_in_step(s, step, i, c->replicas);
    c->steps_since++;
    /* Also at every epoch's end: evaluation, the reported test MSE and checkpoints see one model. */
    return c->steps_since == c->every || step == s->steps - 1;
}

void average_clock_reset(average_clock *c)
{
    c->steps_since = 0;
    memset(c->windows_since, 0, (size_t)c->replicas * sizeof(int64_t));
}

void local_average_combine(const float *replicas, const int64_t *weights, int count, int64_t size, float *out)
{
    double total = 0;
    for (int i = 0; i < count; i++)
        total += (double)weights[i];
    for (int64_t k = 0; k < size; k++) {
        double sum = 0;
        for (int i = 0; i < count; i++)
            sum += (double)weights[i] * (double)replicas[(int64_t)i * size + k];
        out[k] = (float)(sum / total); /* one rounding to float, after the division */
    }
}

int replica_set_create(replica_set *rs, const snapshot_seq *seq, const model_config *config,
                       const train_options *options, int replicas, int64_t every, tf_error *err)
{
    memset(rs, 0, sizeof *rs);
    if (average_clock_create(&rs->clock, replicas, every, err) != TF_OK)
        return TF_ERR_INPUT;
    rs->replicas = tf_alloc((size_t)replicas, sizeof(trainer), "replicas", err);
    if (!rs->replicas)
        return TF_ERR_INPUT;
    for (int i = 0; i < replicas; i++) {
        rs->count = i + 1; /* trainer_create leaves a freeable trainer even when it fails */
        if (trainer_create(&rs->replicas[i], seq, config, options, err) != TF_OK)
            return TF_ERR_INPUT;
    }
    const int64_t size = parameters_size(&rs->replicas[0].model.parameters);
    rs->packed = tf_alloc((size_t)((replicas + 1) * size), sizeof(float), "replica parameters", err);
    return rs->packed ? TF_OK : TF_ERR_INPUT;
}

void replica_set_free(replica_set *rs)
{
    for (int i = 0; i < rs->count; i++)
        trainer_free(&rs->replicas[i]);
    free(rs->replicas);
    free(rs->packed);
    average_clock_free(&rs->clock);
    memset(rs, 0, sizeof *rs);
}

/* Every replica's parameters become the weighted average of all of them. */
static void average_replicas(replica_set *rs)
{
    const int64_t size = parameters_size(&rs->replicas[0].model.parameters);
    for (int i = 0; i < rs->count; i++)
        parameters_pack_values(&rs->replicas[i].model.parameters, rs->packed + i * size);
    float *averaged = rs->packed + rs->count * size;
    local_average_combine(rs->packed, rs->clock.windows_since, rs->count, size, averaged);
    for (int i = 0; i < rs->count; i++)
        parameters_unpack_values(&rs->replicas[i].model.parameters, averaged);
}

int ref_local_average_step(replica_set *rs, const snapshot_seq *seq, epoch_report *report, int *epoch_done,
                           tf_error *err)
{
    *epoch_done = 0;
    const train_schedule s = trainer_schedule(&rs->replicas[0]);
    const int64_t step = rs->step;
    if (step == 0)
        rs->averages = 0;
    for (int i = 0; i < rs->count; i++) {
        trainer *tr = &rs->replicas[i];
        const int64_t windows = replica_windows_in_step(&s, step, i, rs->count);
        parameters_zero_grad(&tr->model.parameters);
        for (int64_t slot = i; slot < s.batch; slot += rs->count) {
            const int64_t w = train_schedule_window(&s, step, slot);
            if (w >= 0 && trainer_train_window(tr, seq, &s, w, 1.0f / (float)windows, &rs->loss_sum, err) != TF_OK)
                return err->code;
        }
        if (windows > 0) /* no window, no step: Adam would still move through its momentum */
            trainer_apply_gradient(tr);
    }
    if (average_clock_tick(&rs->clock, &s, step)) {
        average_replicas(rs);
        average_clock_reset(&rs->clock);
        rs->averages++;
    }
    rs->step++;
    if (rs->step < s.steps)
        return TF_OK;
    memset(report, 0, sizeof *report);
    for (int i = 0; i < rs->count; i++)
        trainer_close_epoch(&rs->replicas[i], &s, rs->loss_sum, report);
    report->steps = s.steps;
    rs->step = 0;
    rs->loss_sum = 0;
    *epoch_done = 1;
    /* After the epoch's average every replica holds the same model: evaluate one. */
    const trainer *tr = &rs->replicas[0];
    return trainer_evaluate(tr, seq, tr->train_snapshots, seq->num_snapshots - tr->train_snapshots, &report->test_mse,
                            NULL, err);
}

int ref_local_average_epoch(replica_set *rs, const snapshot_seq *seq, epoch_report *report, tf_error *err)
{
    int done = 0;
    while (!done)
        if (ref_local_average_step(rs, seq, report, &done, err) != TF_OK)
            return err->code;
    return TF_OK;
}
