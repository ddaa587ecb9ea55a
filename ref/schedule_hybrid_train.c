#include "ref/schedule_hybrid_train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref/nn/adam.h"
#include "ref/core/memory.h"

void hybrid_options_default(hybrid_options *o)
{
    memset(o, 0, sizeof *o);
    o->adjust_every = 10;
    o->balanced_groups = HYBRID_BALANCED_GROUPS;
    o->batch = 1;
    o->seed = 1;
}

/* Fresh batches, built when asked and freed when released. */
static int fresh_get(void *context, int action, uint64_t number, const hybrid_batch **batch, tf_error *err)
{
    hybrid_run *run = context;
    if (hybrid_batch_build(&run->fresh, &run->source, run->sizes[action], run->options.seed, HYBRID_STREAM, number,
                           run->scratch, err) != TF_OK)
        return TF_ERR_INPUT;
    *batch = &run->fresh;
    return TF_OK;
}

static void fresh_release(void *context, const hybrid_batch *batch)
{
    (void)batch;
    hybrid_batch_free(&((hybrid_run *)context)->fresh);
}

static int reservoir_get(void *context, int action, uint64_t number, const hybrid_batch **batch, tf_error *err)
{
    (void)number;
    return ref_reservoir_get(&((hybrid_run *)context)->reservoir, action, batch, err);
}

void hybrid_run_free(hybrid_run *run)
{
    hybrid_source_free(&run->source);
    if (run->have_agent)
        dqn_free(&run->agent);
    if (run->have_reservoir)
        ref_reservoir_free(&run->reservoir);
    hybrid_batch_free(&run->fresh);
    free(run->scratch);
    memset(run, 0, sizeof *run);
}

void hybrid_run_set_supplier(hybrid_run *run, const batch_supplier *supplier) { run->supplier = *supplier; }

int hybrid_run_create(hybrid_run *run, const trainer *tr, const snapshot_seq *seq, const hybrid_options *o,
                      tf_error *err)
{
    memset(run, 0, sizeof *run);
    run->options = *o;
    if (!model_has(tr->model.config.kind, MODEL_ONE_HOP))
        return tf_error_set(err, TF_ERR_INPUT, "hybrid batches train a target's one-hop neighbourhood, which is all "
                                               "T-GCN and WD-GCN read: use --model tgcn or wdgcn, not %s",
                            model_kind_name(tr->model.config.kind));
    if (o->batch < 1 || o->adjust_every < 1)
        return tf_error_set(err, TF_ERR_INPUT, "hybrid batches: %lld per step, DQN every %lld steps: expected >= 1",
                            (long long)o->batch, (long long)o->adjust_every);
    const int64_t n = seq->num_nodes, train = tr->train_snapshots;
    if (hybrid_source_create(&run->source, seq, train, o->balanced_groups, err) != TF_OK)
        return TF_ERR_INPUT;
    hybrid_sizes middle;
    hybrid_action_sizes(4, train, n, o->balanced_groups, &middle);
    run->actions = o->adjust_dqn ? HYBRID_ACTIONS : 1;
    if (o->adjust_dqn) {
        for (int a = 0; a < HYBRID_ACTIONS; a++)
            hybrid_action_sizes(a, train, n, o->balanced_groups, &run->sizes[a]);
        run->action = 4;
    } else {
        run->sizes[0].snapshots = o->fixed.snapshots ? o->fixed.snapshots : middle.snapshots;
        run->sizes[0].targets = o->fixed.targets ? o->fixed.targets : middle.targets;
    }
    int status = TF_OK;
    if (run->sizes[0].snapshots < 1 || run->sizes[0].snapshots > train)
        status = tf_error_set(err, TF_ERR_INPUT, "hybrid batches of %lld snapshots: expected 1..%lld (the training "
                                                 "snapshots)", (long long)run->sizes[0].snapshots, (long long)train);
    else if (run->sizes[0].targets < o->balanced_groups || run->sizes[0].targets > n)
        status = tf_error_set(err, TF_ERR_INPUT, "hybrid batches of %lld targets: expected %d..%lld (at least one per "
                                                 "balanced group, at most every vertex)",
                              (long long)run->sizes[0].targets, o->balanced_groups, (long long)n);
    const double pairs = (double)n * (double)train, per_step = (double)middle.targets * middle.snapshots * o->batch;
    run->steps_per_epoch = (int64_t)ceil(pairs / per_step);
    if (status == TF_OK && o->adjust_dqn) {
        dqn_options agent;
        dqn_options_default(&agent);
        agent.seed = o->seed;
        status = dqn_create(&run->agent, &agent, err);
        run->have_agent = status == TF_OK;
    }
    if (status == TF_OK && !(run->scratch = tf_alloc((size_t)n, sizeof *run->scratch, "batch scratch", err)))
        status = TF_ERR_INPUT;
    if (status == TF_OK) {
        memset(run->scratch, 0xff, (size_t)n * sizeof *run->scratch); /* all -1 */
        run->supplier = (batch_supplier){fresh_get, fresh_release, run};
    }
    if (status == TF_OK && o->reservoir) {
        status = ref_reservoir_create(&run->reservoir, &run->source, run->actions, run->sizes, o->seed, err);
        run->have_reservoir = status == TF_OK;
        run->supplier = (batch_supplier){reservoir_get, NULL, run};
    }
    if (status != TF_OK)
        hybrid_run_free(run);
    return status;
}

/* The end of a DQN interval (header comment): the agent learns and picks the next action. Every
 * rank has the interval's sums (already summed over the ranks); rank 0 decides and shares. */
static int end_interval(hybrid_run *run, const hybrid_ranks *ranks, tf_error *err)
{
    const double loss = run->interval_loss / run->interval_batches, work = run->interval_work;
    const int64_t k = run->interval;
    int next = run->action;
    double drop = 0;
    if (k >= 1)
        drop = run->last_loss != 0 ? (run->last_loss - loss) / run->last_loss : 0;
    if (!ranks || ranks->rank == 0) {
        if (k >= 2) {
            dqn_remember(&run->agent, (float)run->last_drop, run->action,
                         (float)dqn_reward(run->last_work, work, run->last_drop, drop), (float)drop);
            dqn_train_step(&run->agent);
        }
        if (k >= 1)
            next = dqn_choose(&run->agent, (float)drop);
    }
    if (ranks && ranks->share_action(ranks->context, &next, err) != TF_OK)
        return TF_ERR_SYSTEM;
    run->last_loss = loss;
    run->last_work = work;
    run->last_drop = drop;
    run->action = next;
    run->interval++;
    run->interval_steps = 0;
    run->interval_loss = run->interval_batches = run->interval_work = 0;
    return TF_OK;
}

int hybrid_epoch(trainer *tr, hybrid_run *run, const hybrid_ranks *ranks, epoch_report *report, tf_error *err)
{
    memset(report, 0, sizeof *report);
    parameter_list *list = &tr->model.parameters;
    const int64_t slots = run->options.batch;
    const float scale = 1.0f / (float)slots;
    const int every_slot = run->have_reservoir || run->supplier.get != fresh_get; /* a reservoir's ledger */
    double sums[2] = {0, 0}; /* this rank's batch losses and work over the epoch */
    int status = TF_OK;
    for (int64_t step = 0; status == TF_OK && step < run->steps_per_epoch; step++) {
        parameters_zero_grad(list);
        double step_sums[2] = {0, 0}; /* loss, work */
        for (int64_t j = 0; status == TF_OK && j < slots; j++) {
            const int mine = !ranks || j % ranks->size == ranks->rank;
            if (!mine && !every_slot)
                continue;
            const hybrid_batch *b;
            status = run->supplier.get(run->supplier.context, run->action, (uint64_t)(run->steps * slots + j), &b, err);
            if (status != TF_OK)
                break;
            double loss = 0;
            if (mine)
                status = hybrid_batch_gradient(&tr->model, b, scale, &loss, err);
            if (mine) {
                step_sums[0] += loss;
                step_sums[1] += (double)b->work;
            }
            if (run->supplier.release)
                run->supplier.release(run->supplier.context, b);
        }
        if (status == TF_OK && ranks)
            status = ranks->sum_gradients(ranks->context, list, err);
        if (status != TF_OK)
            break;
        trainer_apply_gradient(tr);
        report->steps++;
        run->steps++;
        run->action_steps[run->action]++;
        sums[0] += step_sums[0];
        sums[1] += step_sums[1];
        if (!run->options.adjust_dqn)
            continue;
        run->interval_loss += step_sums[0];
        run->interval_work += step_sums[1];
        run->interval_batches += (double)slots;
        if (++run->interval_steps < run->options.adjust_every)
            continue;
        if (ranks) { /* the interval's sums over all ranks */
            double interval[2] = {run->interval_loss, run->interval_work};
            status = ranks->sum_numbers(ranks->context, interval, 2, err);
            run->interval_loss = interval[0];
            run->interval_work = interval[1];
        }
        if (status == TF_OK)
            status = end_interval(run, ranks, err);
    }
    if (status == TF_OK && ranks)
        status = ranks->sum_numbers(ranks->context, sums, 2, err);
    if (status != TF_OK)
        return status;
    run->work += sums[1];
    tr->epoch++;
    report->epoch = tr->epoch;
    report->windows = run->steps_per_epoch * slots;
    report->train_loss = sums[0] / (double)report->windows;
    return TF_OK;
}

int ref_hybrid_epoch(trainer *tr, hybrid_run *run, const snapshot_seq *seq, epoch_report *report, tf_error *err)
{
    if (hybrid_epoch(tr, run, NULL, report, err) != TF_OK)
        return err->code ? err->code : TF_ERR_INPUT;
    return trainer_evaluate(tr, seq, tr->train_snapshots, seq->num_snapshots - tr->train_snapshots, &report->test_mse,
                            NULL, err);
}
