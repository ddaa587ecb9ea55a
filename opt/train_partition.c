/* The vertex-partitioned trainer (opt/train_partition.h). */
#include "opt/train_partition.h"

#include <stdlib.h>
#include <string.h>

#include "opt/kernels.h"
#include "opt/train.h"
#include "ref/models/checkpoint.h"
#include "ref/core/clock.h"
#include "ref/nn/layers.h"
#include "ref/core/memory.h"

int partition_training_supported(partition_method method, partition_mode mode, model_kind model, tf_error *err)
{
    if (method == PARTITION_PSS)
        return tf_error_set(err, TF_ERR_INPUT, "pss splits time, not vertices: train it with --split window --blocks "
                                               "(PSS at window granularity; each window starts from a zero state, so "
                                               "no state crosses ranks)");
    if (method == PARTITION_DGC_ST)
        return tf_error_set(err, TF_ERR_INPUT, "dgc-st gives an owner per (snapshot, vertex): a vertex's recurrent "
                                               "state would move between ranks inside a window and the models have no "
                                               "hook between steps to move it; train --partition dgc (whole vertex "
                                               "sequences), twofold partition --method dgc-st measures it");
    if (!model_has(model, MODEL_VERTEX_ROWS))
        return tf_error_set(err, TF_ERR_INPUT, "--split vertex does not train %s yet: its partition parts (halos of "
                                               "every hop it reads) are not built; train it with --split window",
                            model_kind_name(model));
    if (method == PARTITION_PSS_TS && (!model_has(model, MODEL_ONE_HOP) || mode != PARTITION_EXCHANGE))
        return tf_error_set(err, TF_ERR_INPUT, "pss-ts needs a structure encoder separable from the recurrence: only "
                                               "the A^ X_t of T-GCN and WD-GCN is, and only in exchange mode (in cache "
                                               "mode the shuffle happens once and is pts); use --model tgcn or wdgcn "
                                               "--mode exchange");
    if (!partition_method_for_snapshots(method))
        return tf_error_set(err, TF_ERR_INPUT, "%s places an event model's memory, not a snapshot model's vertices",
                            partition_method_name(method));
    return TF_OK;
}

void partition_trainer_free(partition_trainer *pt)
{
    trainer_free(&pt->base);
    partition_exchange_free(&pt->exchange);
    partition_shuffle_free(&pt->shuffle);
    partition_part_free(&pt->part);
    partition_operators_free(&pt->operators);
    free(pt->packed);
    memset(pt, 0, sizeof *pt);
}

train_schedule partition_trainer_schedule(const partition_trainer *pt) { return trainer_schedule(&pt->base); }

/* The longest window training or evaluation runs with these options on T snapshots (cache depth). */
static int64_t longest_window(const train_options *options, int64_t steps)
{
    const int64_t train = (int64_t)(options->train_ratio * (double)steps), test = steps - train;
    const int64_t train_length = options->window == 0 || options->window > train ? train : options->window;
    const int64_t test_length = options->window == 0 || options->window > test ? test : options->window;
    return train_length > test_length ? train_length : test_length;
}

int partition_trainer_create(partition_trainer *pt, comm *group, const snapshot_seq *seq, const int32_t *owner,
                             const int32_t *snapshot_owner, partition_mode mode, const model_config *config,
                             const train_options *options, const kernels *dense, tf_error *err)
{
    memset(pt, 0, sizeof *pt);
    pt->group = group;
    pt->mode = mode;
    model_config shaped = *config;
    shaped.in_features = seq->feature_width;
    shaped.out_features = seq->target_width;
    if (snapshot_owner && partition_training_supported(PARTITION_PSS_TS, mode, config->kind, err) != TF_OK)
        return TF_ERR_INPUT;
    int status = partition_operators_create(&pt->operators, seq, config->kind, err);
    if (status == TF_OK)
        status = partition_part_create(&pt->part, seq, &pt->operators, owner, group->size, group->rank, mode, &shaped,
                                       longest_window(options, seq->num_snapshots), err);
    partition_operators_free(&pt->operators); /* the part copied what it needs */
    if (status == TF_OK && mode == PARTITION_EXCHANGE)
        status = partition_exchange_create(&pt->exchange, group, &pt->part, seq, owner, dense, err);
    if (status == TF_OK && snapshot_owner)
        status = partition_shuffle_create(&pt->shuffle, group, seq, snapshot_owner, owner, err);
    if (status == TF_OK)
        status = trainer_create(&pt->base, &pt->part.local, config, options, err);
    if (status == TF_OK) /* checkpoints name the whole data, not this rank's part: they load on any split */
        pt->base.data_digest = checkpoint_snapshot_digest(seq);
    if (status == TF_OK && group->size > 1) /* same parameters on every rank (one rank: no MPI needed) */
        status = opt_trainer_parallel(&pt->base, group, err);
    if (status == TF_OK && !(pt->packed = tf_alloc((size_t)parameters_size(&pt->base.model.parameters), sizeof(float),
                                                    "gradient buffer", err)))
        status = TF_ERR_INPUT;
    if (status != TF_OK) {
        partition_trainer_free(pt);
        return status;
    }
    partition_part_attach(&pt->part, &pt->base.model);
    if (mode == PARTITION_EXCHANGE) {
        pt->table = partition_kernels(dense);
        pt->base.model.kernels = &pt->table;
        pt->base.model.operators = &pt->exchange.operators;
        if (snapshot_owner) /* T-GCN's only product comes shuffled: no halo is ever fetched */
            pt->base.model.inputs = &pt->shuffle.source;
    } else
        pt->base.model.kernels = dense;
    return TF_OK;
}

/* One window on this rank's rows (loss [1] added into): forward, the loss over the owned rows with the whole snapshots'
 * denominators (the reference's model_window_loss() split by rows), backward unless `backward` is
 * 0. Adds the rank's part of the window's loss to *loss; writes the owned rows' predictions
 * [count][owned][out] unless `owned_predictions` is NULL. */
static int run_window(partition_trainer *pt, int64_t first, int64_t count, float scale, int backward, double *loss,
                      float *owned_predictions, tf_error *err)
{
    const partition_part *part = &pt->part;
    const int64_t rows = part->rows, out = part->local.target_width, per_step = rows * out;
    float *predictions = tf_alloc((size_t)(count * per_step), sizeof(float), "predictions", err);
    float *dpredictions = predictions && backward ? tf_alloc((size_t)(count * per_step), sizeof(float), "predictions", err)
                                                  : NULL;
    int status = predictions && (dpredictions || !backward) ? TF_OK : TF_ERR_INPUT;
    window_tape tape;
    memset(&tape, 0, sizeof tape);
    if (status == TF_OK)
        status = model_forward(&pt->base.model, &part->local, first, count, &tape, predictions, err);
    if (status == TF_OK) {
        double total = 0;
        for (int64_t t = 0; t < count; t++) { /* rows after the owned ones (a cache) stay out of the loss */
            const snapshot *s = &part->local.snapshots[first + t];
            total += ref_mse_loss_over(predictions + t * per_step, s->targets.data, s->present, part->owned, out,
                                       part->present_total[first + t], scale / (float)count,
                                       dpredictions ? dpredictions + t * per_step : NULL);
        }
        *loss += total / (double)count;
        if (backward)
            status = model_backward(&pt->base.model, &part->local, &tape, dpredictions, err);
        for (int64_t t = 0; owned_predictions && t < count; t++)
            memcpy(owned_predictions + t * part->owned * out, predictions + t * per_step,
                   (size_t)(part->owned * out) * sizeof(float));
    }
    window_tape_free(&pt->base.model, &tape);
    free(predictions);
    free(dpredictions);
    return status;
}

/* Sums values [count] over the ranks, counting the bytes as gradient traffic. */
static int sum_doubles(partition_trainer *pt, double *values, int64_t count, tf_error *err)
{
    if (pt->group->size == 1)
        return TF_OK;
    uint64_t *outer = comm_charge(pt->group, &pt->stats.gradient_bytes);
    int status = comm_allreduce_sum_double(pt->group, values, count, err);
    comm_charge(pt->group, outer);
    return status;
}

/* Adds every parameter's gradient over the ranks: packed, one all-reduce, unpacked. */
static int sum_gradients(partition_trainer *pt, tf_error *err)
{
    if (pt->group->size == 1)
        return TF_OK;
    parameter_list *list = &pt->base.model.parameters;
    int64_t offset = 0;
    for (int64_t i = 0; i < list->count; i++) {
        memcpy(pt->packed + offset, list->items[i].grad.data, (size_t)list->items[i].grad.size * sizeof(float));
        offset += list->items[i].grad.size;
    }
    uint64_t *outer = comm_charge(pt->group, &pt->stats.gradient_bytes);
    int status = comm_allreduce_sum(pt->group, pt->packed, offset, err);
    comm_charge(pt->group, outer);
    offset = 0;
    for (int64_t i = 0; status == TF_OK && i < list->count; i++) {
        memcpy(list->items[i].grad.data, pt->packed + offset, (size_t)list->items[i].grad.size * sizeof(float));
        offset += list->items[i].grad.size;
    }
    return status;
}

/* Busy time: CPU time since `cpu_started`, less what the exchanges and all-reduces took meanwhile. */
static void account(partition_trainer *pt, double cpu_started, double exchange_cpu_started, double collective_cpu)
{
    const double used = thread_cpu_seconds() - cpu_started;
    pt->stats.step_cpu_seconds += used;
    pt->stats.busy_cpu_seconds += used - (pt->exchange.cpu_seconds + pt->shuffle.cpu_seconds - exchange_cpu_started) -
                                  collective_cpu;
    pt->stats.exchange_bytes = pt->exchange.bytes + pt->shuffle.bytes;
}

int partition_trainer_gradient(partition_trainer *pt, int64_t step, double *loss_sum, tf_error *err)
{
    const double cpu_started = thread_cpu_seconds(), exchange_cpu = pt->exchange.cpu_seconds + pt->shuffle.cpu_seconds;
    const train_schedule s = trainer_schedule(&pt->base);
    parameters_zero_grad(&pt->base.model.parameters);
    const float scale = 1.0f / (float)train_schedule_windows_in_step(&s, step);
    double loss = 0;
    int status = TF_OK;
    for (int64_t slot = 0; status == TF_OK && slot < s.batch; slot++) {
        const int64_t w = train_schedule_window(&s, step, slot);
        if (w < 0)
            continue;
        int64_t first, count;
        train_schedule_span(&s, w, &first, &count);
        status = run_window(pt, first, count, scale, 1, &loss, NULL, err);
    }
    const double collective_started = thread_cpu_seconds();
    if (status == TF_OK)
        status = sum_gradients(pt, err);
    if (status == TF_OK)
        status = sum_doubles(pt, &loss, 1, err);
    account(pt, cpu_started, exchange_cpu, thread_cpu_seconds() - collective_started);
    if (status == TF_OK)
        *loss_sum = loss;
    return status;
}

int partition_trainer_step(partition_trainer *pt, int64_t step, double *loss_sum, tf_error *err)
{
    double loss = 0;
    int status = partition_trainer_gradient(pt, step, &loss, err);
    if (status == TF_OK) {
        trainer_apply_gradient(&pt->base);
        pt->stats.steps++;
        *loss_sum += loss;
    }
    return status;
}

int opt_partition_trainer_epoch(partition_trainer *pt, epoch_report *report, tf_error *err)
{
    memset(report, 0, sizeof *report);
    const train_schedule s = trainer_schedule(&pt->base);
    double loss_sum = 0;
    int status = TF_OK;
    for (int64_t step = 0; status == TF_OK && step < s.steps; step++) {
        status = partition_trainer_step(pt, step, &loss_sum, err);
        report->steps += status == TF_OK;
    }
    if (status != TF_OK)
        return status;
    trainer_close_epoch(&pt->base, &s, loss_sum, report);
    const int64_t train = pt->base.train_snapshots;
    return opt_partition_trainer_evaluate(pt, train, pt->part.local.num_snapshots - train, &report->test_mse, err);
}

int opt_partition_trainer_evaluate(partition_trainer *pt, int64_t first, int64_t count, double *mse, tf_error *err)
{
    const double cpu_started = thread_cpu_seconds(), exchange_cpu = pt->exchange.cpu_seconds + pt->shuffle.cpu_seconds;
    const int64_t length = trainer_evaluation_length(&pt->base, count);
    double error_sum = 0;
    int status = TF_OK;
    for (int64_t start = first; status == TF_OK && start < first + count; start += length) {
        const int64_t in_window = start + length > first + count ? first + count - start : length;
        double loss = 0;
        status = run_window(pt, start, in_window, 1.0f, 0, &loss, NULL, err);
        error_sum += loss * (double)in_window;
    }
    const double collective_started = thread_cpu_seconds();
    if (status == TF_OK)
        status = sum_doubles(pt, &error_sum, 1, err);
    account(pt, cpu_started, exchange_cpu, thread_cpu_seconds() - collective_started);
    if (status == TF_OK)
        *mse = error_sum / (double)count;
    return status;
}

int partition_trainer_predict(partition_trainer *pt, int64_t first, int64_t count, float *predictions, tf_error *err)
{
    double loss = 0;
    return run_window(pt, first, count, 1.0f, 0, &loss, predictions, err);
}
