#include "opt/async.h"

#include <stdlib.h>
#include <string.h>

#include "opt/kernels.h"
#include "opt/train.h"
#include "ref/core/clock.h"
#include "ref/core/memory.h"

const char *sync_mode_name(sync_mode mode) { return mode == SYNC_AVERAGE ? "average" : "allreduce"; }

int sync_mode_parse(const char *text, sync_mode *mode, tf_error *err)
{
    if (strcmp(text, "allreduce") == 0)
        *mode = SYNC_ALLREDUCE;
    else if (strcmp(text, "average") == 0)
        *mode = SYNC_AVERAGE;
    else
        return tf_error_set(err, TF_ERR_INPUT, "option --sync: \"%s\", expected allreduce or average", text);
    return TF_OK;
}

void async_options_default(async_options *options)
{
    memset(options, 0, sizeof *options);
    options->mode = SYNC_ALLREDUCE;
    options->every = 1;
    options->staleness = 0;
    straggler_none(&options->straggler);
}

int async_options_check(const async_options *options, int ranks, tf_error *err)
{
    if (options->staleness != 0 && options->staleness != 1)
        return tf_error_set(err, TF_ERR_INPUT, "staleness %d: expected 0 or 1 (Sven bounds staleness to one step)",
                            options->staleness);
    if (options->every < 1)
        return tf_error_set(err, TF_ERR_INPUT, "averaging every %lld steps: expected at least 1",
                            (long long)options->every);
    if (options->mode == SYNC_AVERAGE && options->staleness != 0)
        return tf_error_set(err, TF_ERR_INPUT, "choose one kind of staleness: --staleness applies to --sync allreduce");
    if (options->straggler.rank >= ranks) {
        char name[64];
        return tf_error_set(err, TF_ERR_INPUT, "--straggler %s: rank %d, but %d rank(s) run",
                            straggler_name(&options->straggler, name, sizeof name), options->straggler.rank, ranks);
    }
    return TF_OK;
}

/* ---- the reducer ---------------------------------------------------------------------------- */

int opt_delayed_gradient_create(opt_delayed_gradient *r, comm *c, int64_t size, int staleness, int sums, tf_error *err)
{
    memset(r, 0, sizeof *r);
    r->c = c;
    r->staleness = staleness;
    r->sums = sums;
    r->size = size;
    if (staleness != 0 && staleness != 1)
        return tf_error_set(err, TF_ERR_INPUT, "staleness %d: expected 0 or 1 (Sven bounds staleness to one step)",
                            staleness);
    for (int b = 0; b < 2; b++)
        if (!(r->buffers[b] = tf_alloc((size_t)size + 1, sums ? sizeof(double) : sizeof(float), "gradient buffer", err)))
            return TF_ERR_INPUT;
    return TF_OK;
}

void opt_delayed_gradient_free(opt_delayed_gradient *r)
{
    for (int b = 0; b < 2; b++) {
        /* A rank that failed mid-step leaves with its last all-reduce in flight: the other ranks
         * post their halves later, and MPI writes the sum here while this rank waits for them in
         * finish_ranks(). Such a buffer stays MPI's, left allocated as the process ends. */
        int done = 1;
        if (r->requests[b].active && comm_test(r->c, &r->requests[b], &done, &(tf_error){0}) != TF_OK)
            done = 0;
        if (done)
            free(r->buffers[b]);
    }
    memset(r, 0, sizeof *r);
}

/* This step's gradient (float) or double sums into @p packed. */
static void pack_step(const opt_delayed_gradient *r, const parameter_list *parameters, void *packed)
{
    if (r->sums)
        parameters_pack_sums(parameters, packed);
    else
        parameters_pack_gradients(parameters, packed);
}

/* A summed gradient back into the parameters' gradients; double sums are rounded once here. */
static void unpack_sum(const opt_delayed_gradient *r, parameter_list *parameters, const void *packed)
{
    if (r->sums) {
        parameters_unpack_sums(parameters, packed);
        parameters_round_sums(parameters);
    } else {
        parameters_unpack_gradients(parameters, packed);
    }
}

int opt_delayed_gradient_push(opt_delayed_gradient *r, parameter_list *parameters, int *apply, tf_error *err)
{
    void *mine = r->buffers[r->pushed % 2];
    *apply = 0;
    if (r->staleness == 0) {
        /* The synchronous trainers' own blocking all-reduce: bitwise synchronous training. */
        *apply = 1;
        if (r->c->size == 1)
            return TF_OK; /* the backward's gradients are the sum */
        if (!r->sums) {
            /* No rank fails here; the status value gives the all-reduce the synchronous trainer's length
             * (opt_trainer_finish_step()), so MPI adds every value in its order: on 3 ranks Open MPI's
             * ring all-reduce cuts the values into blocks by the length, and one value more or less
             * moved 504 sums by a rounding. */
            int failed = 0;
            return opt_trainer_sum_gradients(parameters, mine, r->c, NULL, &failed, err);
        }
        pack_step(r, parameters, mine);
        if (comm_allreduce_sum_double(r->c, mine, r->size, err) != TF_OK)
            return err->code;
        unpack_sum(r, parameters, mine);
        return TF_OK;
    }
    pack_step(r, parameters, mine);
    /* Staleness 1: this step's sum starts travelling, the previous one's is collected. */
    comm_request *request = &r->requests[r->pushed % 2];
    if (r->c->size > 1 && (r->sums ? comm_iallreduce_sum_double(r->c, mine, r->size, request, err)
                                   : comm_iallreduce_sum(r->c, mine, r->size, request, err)) != TF_OK)
        return err->code;
    r->pushed++;
    if (r->pushed == 1)
        return TF_OK; /* the first step of an epoch: nothing to apply yet */
    const int previous = (int)((r->pushed - 2) % 2);
    if (comm_wait(r->c, &r->requests[previous], err) != TF_OK)
        return err->code;
    unpack_sum(r, parameters, r->buffers[previous]);
    *apply = 1;
    return TF_OK;
}

int opt_delayed_gradient_flush(opt_delayed_gradient *r, parameter_list *parameters, int *apply, tf_error *err)
{
    *apply = 0;
    if (r->staleness == 0 || r->pushed == 0)
        return TF_OK;
    const int last = (int)((r->pushed - 1) % 2);
    r->pushed = 0;
    if (comm_wait(r->c, &r->requests[last], err) != TF_OK)
        return err->code;
    unpack_sum(r, parameters, r->buffers[last]);
    *apply = 1;
    return TF_OK;
}

int opt_delayed_gradient_progress(opt_delayed_gradient *r, tf_error *err)
{
    if (r->staleness == 0 || r->pushed == 0)
        return TF_OK;
    int done;
    return comm_test(r->c, &r->requests[(r->pushed - 1) % 2], &done, err);
}

/* ---- the trainer ---------------------------------------------------------------------------- */

int opt_async_create(async_trainer *at, trainer *tr, comm *c, const async_options *options, tf_error *err)
{
    memset(at, 0, sizeof *at);
    at->tr = tr;
    at->c = c;
    at->options = *options;
    if (async_options_check(options, c->size, err) != TF_OK)
        return TF_ERR_INPUT;
    /* One rank exchanges nothing, so it needs no MPI: the kernels are all there is to set. */
    if (c->size > 1 && opt_trainer_parallel(tr, c, err) != TF_OK)
        return err->code;
    tr->model.kernels = &opt_kernels;
    const int64_t size = parameters_size(&tr->model.parameters);
    if (options->mode == SYNC_ALLREDUCE)
        return opt_delayed_gradient_create(&at->reducer, c, size, options->staleness, 0, err);
    if (average_clock_create(&at->clock, c->size, options->every, err) != TF_OK)
        return TF_ERR_INPUT;
    at->packed = tf_alloc((size_t)size, sizeof(float), "parameter buffer", err);
    at->gathered = at->packed ? tf_alloc((size_t)((c->size + 1) * size), sizeof(float), "gathered parameters", err)
                              : NULL;
    at->counts = at->gathered ? tf_alloc((size_t)(2 * c->size), sizeof(int64_t), "all-gather counts", err) : NULL;
    if (!at->counts)
        return TF_ERR_INPUT;
    for (int j = 0; j < c->size; j++) {
        at->counts[j] = size;
        at->counts[c->size + j] = j * size;
    }
    return TF_OK;
}

void opt_async_free(async_trainer *at)
{
    opt_delayed_gradient_free(&at->reducer);
    average_clock_free(&at->clock);
    free(at->packed);
    free(at->gathered);
    free(at->counts);
    memset(at, 0, sizeof *at);
}

/* DynaHB's average: every rank's parameters gathered in rank order, combined with the windows
 * each trained since the last average as weights (local_average_combine(), as the simulation). */
static int average_ranks(async_trainer *at, tf_error *err)
{
    comm *c = at->c;
    const int64_t size = parameters_size(&at->tr->model.parameters);
    parameters_pack_values(&at->tr->model.parameters, at->packed);
    if (c->size > 1) {
        if (comm_allgatherv(c, at->packed, size, at->gathered, at->counts, at->counts + c->size, sizeof(float), err) !=
            TF_OK)
            return err->code;
    } else {
        memcpy(at->gathered, at->packed, (size_t)size * sizeof(float));
    }
    float *averaged = at->gathered + c->size * size;
    local_average_combine(at->gathered, at->clock.windows_since, c->size, size, averaged);
    parameters_unpack_values(&at->tr->model.parameters, averaged);
    average_clock_reset(&at->clock);
    at->averages++;
    return TF_OK;
}

/* Averaging: this rank's replica trains its slots, each loss scaled by 1 / its windows in the step. */
static int average_step(async_trainer *at, const snapshot_seq *seq, const train_schedule *s, int64_t step,
                        tf_error *err)
{
    trainer *tr = at->tr;
    const int rank = at->c->rank, ranks = at->c->size;
    const int64_t windows = replica_windows_in_step(s, step, rank, ranks);
    parameters_zero_grad(&tr->model.parameters);
    for (int64_t slot = rank; slot < s->batch; slot += ranks) {
        const int64_t w = train_schedule_window(s, step, slot);
        if (w >= 0 && trainer_train_window(tr, seq, s, w, 1.0f / (float)windows, &at->loss_sum, err) != TF_OK)
            return err->code;
    }
    straggler_wait(&at->options.straggler, rank, tr->epoch, step);
    if (windows > 0) { /* no window, no step (ref/async.h) */
        trainer_apply_gradient(tr);
        at->steps_applied++;
    }
    /* Every rank ticks the same clock from the same schedule: all reach the all-gather together. */
    if (!average_clock_tick(&at->clock, s, step))
        return TF_OK;
    double started = wall_seconds();
    int status = average_ranks(at, err);
    at->blocked_seconds += wall_seconds() - started;
    return status;
}

/* Gradient all-reduce with 0 or 1 step of delay. */
static int allreduce_step(async_trainer *at, const snapshot_seq *seq, const train_schedule *s, int64_t step,
                          tf_error *err)
{
    trainer *tr = at->tr;
    parameter_list *list = &tr->model.parameters;
    parameters_zero_grad(list);
    for (int64_t slot = 0; slot < s->batch; slot++) {
        if (opt_trainer_rank_of(slot, at->c->size) != at->c->rank)
            continue;
        if (trainer_train_slot(tr, seq, s, step, slot, &at->loss_sum, err) != TF_OK ||
            opt_delayed_gradient_progress(&at->reducer, err) != TF_OK) /* the previous step's sum moves on */
            return err->code;
    }
    straggler_wait(&at->options.straggler, at->c->rank, tr->epoch, step);
    double started = wall_seconds();
    int apply;
    if (opt_delayed_gradient_push(&at->reducer, list, &apply, err) != TF_OK)
        return err->code;
    at->blocked_seconds += wall_seconds() - started;
    if (apply) {
        trainer_apply_gradient(tr);
        at->steps_applied++;
    }
    if (step < s->steps - 1)
        return TF_OK;
    /* The epoch's last gradient is applied before evaluation and before any checkpoint. */
    started = wall_seconds();
    if (opt_delayed_gradient_flush(&at->reducer, list, &apply, err) != TF_OK)
        return err->code;
    at->blocked_seconds += wall_seconds() - started;
    if (apply) {
        trainer_apply_gradient(tr);
        at->steps_applied++;
    }
    return TF_OK;
}

int opt_async_step(async_trainer *at, const snapshot_seq *seq, epoch_report *report, int *epoch_done, tf_error *err)
{
    *epoch_done = 0;
    trainer *tr = at->tr;
    const train_schedule s = trainer_schedule(tr);
    const int64_t step = at->step;
    if (step == 0)
        at->averages = 0;
    int status = at->options.mode == SYNC_AVERAGE ? average_step(at, seq, &s, step, err)
                                                  : allreduce_step(at, seq, &s, step, err);
    if (status != TF_OK)
        return status;
    if (++at->step < s.steps)
        return TF_OK;
    double loss_sum = at->loss_sum;
    if (at->c->size > 1 && comm_allreduce_sum_double(at->c, &loss_sum, 1, err) != TF_OK)
        return err->code;
    memset(report, 0, sizeof *report);
    trainer_close_epoch(tr, &s, loss_sum, report);
    report->steps = at->steps_applied;
    at->step = 0;
    at->loss_sum = 0;
    at->steps_applied = 0;
    *epoch_done = 1;
    return opt_trainer_evaluate(tr, at->c, seq, tr->train_snapshots, seq->num_snapshots - tr->train_snapshots,
                                &report->test_mse, err);
}

int opt_async_epoch(async_trainer *at, const snapshot_seq *seq, epoch_report *report, tf_error *err)
{
    int done = 0;
    while (!done)
        if (opt_async_step(at, seq, report, &done, err) != TF_OK)
            return err->code;
    return TF_OK;
}
