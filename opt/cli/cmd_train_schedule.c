/* Two techniques of twofold train that replace the trainer's steps (opt/cli/train.h):
 *
 * --schedule M: the windows grouped into steps and placed on the ranks by a DyGNeX schedule
 * (opt/schedule.h) instead of the trainer's steps with slot j on rank j mod R. The group times come
 * from the cost model or are measured on the ranks; rank 0 schedules and every rank receives the
 * schedule; each epoch is opt_schedule_epoch(), and the end of the run prints the ranks' measured
 * busy imbalance.
 *
 * --batching hybrid: DynaHB's hybrid batches of target vertices x snapshots instead of windows of
 * every vertex, in the reference or on the ranks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt/cli/commands.h"
#include "opt/cli/train.h"
#include "ref/core/memory.h"
#include "ref/schedule_cost.h"

/* The steps --schedule and --batching hybrid take are synchronous: chapter 05's kinds of staleness
 * cannot run with them. */
static int synchronous_steps(const train_command *c, tf_error *err)
{
    if (train_wants_async(c) || c->stale_embeddings || c->replicas_given)
        return tf_error_set(err, TF_ERR_INPUT, "train: --schedule and --batching hybrid take synchronous steps: drop "
                                               "--sync average, --staleness, --straggler, --stale-embeddings and "
                                               "--replicas");
    return TF_OK;
}

static int scheduling_check(const train_command *c, tf_error *err)
{
    const train_scheduling *s = &c->scheduling;
    if (!s->enabled)
        return TF_OK;
    if (c->incremental)
        return tf_error_set(err, TF_ERR_INPUT, "train: --incremental follows the trainer's own placement of windows "
                                               "(slot j on rank j mod R): drop --schedule");
    if (s->method == SCHEDULE_GREEDY && s->per_rank != 2)
        return tf_error_set(err, TF_ERR_INPUT, "train: greedy pairs at most 2 groups per rank and iteration "
                                               "(--per-rank %lld): use --schedule ilp", (long long)s->per_rank);
    return synchronous_steps(c, err);
}

static int scheduling_on(const train_command *c, const comm *group) { return group && c->scheduling.enabled; }

/* The group times of the plan's windows: measured on the ranks, or from --cost linear:A,B,C; rank 0
 * prints where they came from. */
static int group_times(train_run *r, const train_schedule *windows, double *times, tf_error *err)
{
    const train_scheduling *s = &r->c->scheduling;
    const int64_t n = windows->windows;
    int64_t *rows = tf_alloc((size_t)n, sizeof *rows, "group sizes", err);
    int64_t *edges = rows ? tf_alloc((size_t)n, sizeof *edges, "group sizes", err) : NULL;
    int status = edges ? TF_OK : TF_ERR_INPUT;
    cost_model m;
    if (status == TF_OK)
        schedule_group_sizes(windows, r->seq, rows, edges);
    if (status == TF_OK && strcmp(s->cost, "measured") == 0) {
        status = opt_schedule_profile(r->tr, r->seq, r->group, (int)s->repeats, times, err);
        if (status == TF_OK)
            status = cost_model_fit(rows, edges, times, n, &m, err);
        if (status == TF_OK && r->speaks)
            printf("schedule %s: %lld windows measured (thread CPU, median of %lld); fit t = %.4g rows + %.4g "
                   "edges + %.4g s, residual %.2f %% of the mean\n",
                   schedule_method_name(s->method), (long long)n, (long long)s->repeats, m.per_row, m.per_edge,
                   m.per_group, 100 * m.residual);
        if (status == TF_OK && r->speaks)
            printf("note: measured times differ from run to run, and so may the schedule (and the result); "
                   "--cost linear:A,B,C makes the run repeatable%s\n",
                   r->tr->epoch > 0 ? ". This resumed run re-measured them: it is not bitwise an uninterrupted run"
                                    : "");
    } else if (status == TF_OK) {
        cost_model_parse(s->cost, &m, err);
        for (int64_t k = 0; k < n; k++)
            times[k] = cost_model_predict(&m, rows[k], edges[k]);
        status = schedule_check_times(times, n, err);
        if (status == TF_OK && r->speaks)
            printf("schedule %s: %lld windows, times from t = %g rows + %g edges + %g s\n",
                   schedule_method_name(s->method), (long long)n, m.per_row, m.per_edge, m.per_group);
    }
    free(rows);
    free(edges);
    return status;
}

/* Times (measured or modelled), alpha, the schedule built on rank 0 and broadcast; rank 0 prints. */
static int scheduling_start(train_run *r, tf_error *err)
{
    const train_scheduling *s = &r->c->scheduling;
    scheduling_state *state = &r->scheduling;
    const train_schedule windows = trainer_schedule(r->tr);
    const int64_t n = windows.windows;
    /* before the windows are timed: every rank has the windows, so they refuse together */
    if (s->method == SCHEDULE_GREEDY && greedy_groups_within_limit("train", "--schedule", n, err) != TF_OK)
        return err->code;
    double *times = tf_alloc((size_t)n, sizeof *times, "group times", err);
    state->group_seconds = times ? tf_alloc((size_t)n, sizeof *state->group_seconds, "busy times", err) : NULL;
    int status = state->group_seconds ? group_times(r, &windows, times, err) : TF_ERR_INPUT;
    double alpha = 0;
    if (status == TF_OK)
        status = opt_schedule_alpha(r->group, parameters_size(&r->tr->model.parameters), 20, &alpha, err);
    train_schedule steps = windows;
    steps.batch = r->group->size; /* roundrobin under --schedule: one window per rank and step (PSG) */
    steps.steps = (steps.windows + steps.batch - 1) / steps.batch;
    ilp_report report;
    memset(&report, 0, sizeof report);
    if (status == TF_OK)
        status = opt_schedule_build(&state->plan, s->method, times, n, r->group, (int)s->per_rank, &steps, alpha,
                                    &s->ilp, &report, err);
    if (status == TF_OK && r->speaks) {
        schedule_cost cost;
        schedule_evaluate(&state->plan, times, alpha, &cost);
        printf("schedule %s on %d rank(s): %lld steps (iterations), critical path %.4g s, %.1f %% above the lower "
               "bound; predicted imbalance %.4f, efficiency %.4f; alpha %.3g s",
               schedule_method_name(s->method), r->group->size, (long long)state->plan.iterations, cost.critical_path,
               100 * (cost.critical_path / cost.lower_bound - 1), cost.imbalance, cost.efficiency, alpha);
        if (s->method == SCHEDULE_ILP)
            printf("; ILP %s, gap %.2f %%", report.status, 100 * report.gap);
        printf("\n");
    }
    free(times);
    return status;
}

/* One epoch under the plan, busy times accumulated. */
static int scheduling_epoch(train_run *r, epoch_report *report, tf_error *err)
{
    scheduling_state *state = &r->scheduling;
    state->epochs_run++;
    return opt_schedule_epoch(r->tr, r->group, r->seq, &state->plan, state->group_seconds, report, err);
}

/* Rank 0 prints the measured busy imbalance and efficiency of the epochs run (every rank calls it). */
static int scheduling_report(train_run *r, tf_error *err)
{
    scheduling_state *state = &r->scheduling;
    if (state->epochs_run == 0)
        return TF_OK;
    if (r->group->size > 1 && comm_allreduce_sum_double(r->group, state->group_seconds, state->plan.groups, err) != TF_OK)
        return TF_ERR_SYSTEM;
    if (r->speaks) {
        schedule_cost measured;
        schedule_evaluate(&state->plan, state->group_seconds, 0, &measured);
        printf("measured over %lld epoch(s): busy imbalance %.4f (rank totals %.4g .. %.4g s of thread CPU), "
               "efficiency %.4f\n",
               (long long)state->epochs_run, measured.imbalance, measured.busy_min, measured.busy_max,
               measured.efficiency);
    }
    return TF_OK;
}

static void scheduling_free(train_run *r)
{
    schedule_free(&r->scheduling.plan);
    free(r->scheduling.group_seconds);
    r->scheduling.group_seconds = NULL;
}

const train_technique train_scheduling_technique = {
    .name = "scheduling", .check = scheduling_check, .on = scheduling_on, .start = scheduling_start,
    .epoch = scheduling_epoch, .report = scheduling_report, .free = scheduling_free,
};

/* ---- twofold train --batching hybrid: DynaHB's hybrid batches -------------------------------------- */

static int batching_check(const train_command *c, tf_error *err)
{
    const train_batching *b = &c->batching;
    if (!b->hybrid)
        return TF_OK;
    if (!model_has(c->config.kind, MODEL_ONE_HOP))
        return tf_error_set(err, TF_ERR_INPUT, "train: hybrid batches train a target's one-hop neighbourhood, which is "
                                               "all T-GCN and WD-GCN read: use --model tgcn or wdgcn, not %s",
                            model_kind_name(c->config.kind));
    if (c->scheduling.enabled)
        return tf_error_set(err, TF_ERR_INPUT, "train: --schedule places windows; hybrid batches are not windows: drop "
                                               "one of --schedule and --batching hybrid");
    if (c->blocks)
        return tf_error_set(err, TF_ERR_INPUT, "train: --blocks places windows in steps; hybrid batches are not windows: "
                                               "drop --blocks");
    if (c->incremental)
        return tf_error_set(err, TF_ERR_INPUT, "train: --incremental serves whole snapshots' aggregations; hybrid "
                                               "batches aggregate their targets' rows themselves: drop --incremental");
    if (b->threads > (b->options.adjust_dqn ? HYBRID_ACTIONS : 1))
        return tf_error_set(err, TF_ERR_INPUT, "train: --reservoir %d: a generator thread per batch size at most (%d "
                                               "with --adjust %s)", b->threads, b->options.adjust_dqn ? HYBRID_ACTIONS : 1,
                            b->options.adjust_dqn ? "dqn" : "fixed");
    return synchronous_steps(c, err);
}

static int batching_on(const train_command *c, const comm *group)
{
    (void)group;
    return c->batching.hybrid;
}

/* The hybrid run (and reservoir) for the trainer; rank 0 prints the sizes. */
static int batching_start(train_run *r, tf_error *err)
{
    const train_command *c = r->c;
    batching_state *state = &r->batching;
    hybrid_options options = c->batching.options;
    const int threads = c->batching.threads;
    options.fixed.snapshots = c->options.window; /* N_S (0: the default share of the training snapshots) */
    options.batch = c->options.batch;
    options.seed = c->options.seed;
    options.reservoir = threads > 0 && !c->optimized; /* the reference's serial reservoir */
    if (hybrid_run_create(&state->run, r->tr, r->seq, &options, err) != TF_OK)
        return TF_ERR_INPUT;
    state->started = 1;
    if (r->group && threads > 0 && opt_hybrid_use_reservoir(&state->run, threads, &state->reservoir, err) != TF_OK)
        return err->code;
    if (r->speaks) {
        printf("hybrid batches: %lld vertices in %d balanced groups; %s", (long long)r->seq->num_nodes,
               options.balanced_groups, options.adjust_dqn ? "the DQN picks among" : "fixed");
        for (int a = 0; a < state->run.actions; a++)
            printf(" %lld x %lld", (long long)state->run.sizes[a].targets, (long long)state->run.sizes[a].snapshots);
        printf(" (targets x snapshots); %lld per step, %lld steps per epoch; batches %s\n", (long long)options.batch,
               (long long)state->run.steps_per_epoch,
               threads ? (r->group ? "from a reservoir with generator threads" : "from the serial reservoir")
                       : "built when needed");
    }
    return TF_OK;
}

/* One hybrid epoch: the reference's, or the data-parallel twin's. */
static int batching_epoch(train_run *r, epoch_report *report, tf_error *err)
{
    return r->group ? opt_hybrid_epoch(r->tr, &r->batching.run, r->group, r->seq, report, err)
                    : ref_hybrid_epoch(r->tr, &r->batching.run, r->seq, report, err);
}

/* Rank 0 prints the steps, the work and (with the DQN) the steps per size. */
static int batching_report(train_run *r, tf_error *err)
{
    (void)err;
    const hybrid_run *run = &r->batching.run;
    if (!r->speaks)
        return TF_OK;
    printf("hybrid batches: %lld steps, %.4g rows + edges trained", (long long)run->steps, run->work);
    if (r->c->batching.options.adjust_dqn) {
        printf("; steps per size:");
        for (int a = 0; a < HYBRID_ACTIONS; a++)
            printf(" %lldx%lld:%lld", (long long)run->sizes[a].targets, (long long)run->sizes[a].snapshots,
                   (long long)run->action_steps[a]);
    }
    printf("\n");
    return TF_OK;
}

static void batching_free(train_run *r)
{
    batching_state *state = &r->batching;
    if (state->started)
        hybrid_run_free(&state->run);
    opt_reservoir_free(state->reservoir);
    state->reservoir = NULL;
    state->started = 0;
}

const train_technique train_batching_technique = {
    .name = "hybrid batches", .check = batching_check, .on = batching_on, .start = batching_start,
    .epoch = batching_epoch, .report = batching_report, .free = batching_free,
};
