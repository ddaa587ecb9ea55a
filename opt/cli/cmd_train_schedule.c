/* twofold train --schedule M: the windows grouped into steps and placed on the ranks by a DyGNeX
 * schedule (opt/schedule.h) instead of the trainer's steps with slot j on rank j mod R. The group
 * times come from the cost model or are measured on the ranks; rank 0 schedules and every rank
 * receives the schedule; each epoch is opt_schedule_epoch(), and the end of the run prints the
 * ranks' measured busy imbalance. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt/cli/cli.h"
#include "opt/cli/commands.h"
#include "ref/core/memory.h"
#include "ref/schedule_cost.h"

void train_scheduling_default(train_scheduling *s)
{
    memset(s, 0, sizeof *s);
    s->per_rank = 2;
    s->cost = "measured";
    s->repeats = 3;
    ilp_options_default(&s->ilp);
}

int train_scheduling_option(int argc, char **argv, int *i, train_scheduling *s, tf_error *err)
{
    const char *value;
    int matched;
    if ((matched = cli_option(argc, argv, i, "--schedule", &value, err)) != 0) {
        if (matched > 0 && schedule_method_parse(value, &s->method, err) != TF_OK)
            return -1;
        s->enabled = 1;
    } else if ((matched = cli_option(argc, argv, i, "--per-rank", &value, err)) != 0) {
        if (matched > 0 && cli_parse_int("--per-rank", value, 1, 64, &s->per_rank, err) != TF_OK)
            return -1;
        s->options_given = 1;
    } else if ((matched = cli_option(argc, argv, i, "--cost", &value, err)) != 0) {
        cost_model unused;
        if (matched > 0 && strcmp(value, "measured") != 0 && cost_model_parse(value, &unused, err) != TF_OK)
            return -1;
        s->cost = value;
        s->options_given = 1;
    } else if ((matched = cli_option(argc, argv, i, "--ilp-seconds", &value, err)) != 0) {
        if (matched > 0 && cli_parse_number("--ilp-seconds", value, 1e-3, 86400.0001, &s->ilp.seconds, err) != TF_OK)
            return -1;
        s->options_given = 1;
    } else if ((matched = cli_option(argc, argv, i, "--ilp-gap", &value, err)) != 0) {
        if (matched > 0 && cli_parse_number("--ilp-gap", value, 0, 1, &s->ilp.gap, err) != TF_OK)
            return -1;
        s->options_given = 1;
    }
    return matched;
}

int train_scheduling_check(const train_scheduling *s, int optimized, int incremental, tf_error *err)
{
    if (s->options_given && !s->enabled)
        return tf_error_set(err, TF_ERR_INPUT, "train: --per-rank, --cost, --ilp-seconds and --ilp-gap configure "
                                               "--schedule: add it");
    if (!s->enabled)
        return TF_OK;
    if (!optimized)
        return tf_error_set(err, TF_ERR_INPUT, "train: --schedule places windows on ranks: add --impl opt");
    if (incremental)
        return tf_error_set(err, TF_ERR_INPUT, "train: --incremental follows the trainer's own placement of windows "
                                               "(slot j on rank j mod R): drop --schedule");
    if (s->method == SCHEDULE_GREEDY && s->per_rank != 2)
        return tf_error_set(err, TF_ERR_INPUT, "train: greedy pairs at most 2 groups per rank and iteration "
                                               "(--per-rank %lld): use --schedule ilp", (long long)s->per_rank);
    return TF_OK;
}

int train_scheduling_start(train_scheduling *s, trainer *tr, const snapshot_seq *seq, comm *group, int resumed,
                           tf_error *err)
{
    const int speaks = group->rank == 0;
    const train_schedule windows = trainer_schedule(tr);
    const int64_t n = windows.windows;
    double *times = tf_alloc((size_t)n, sizeof *times, "group times", err);
    int64_t *rows = times ? tf_alloc((size_t)n, sizeof *rows, "group sizes", err) : NULL;
    int64_t *edges = rows ? tf_alloc((size_t)n, sizeof *edges, "group sizes", err) : NULL;
    s->group_seconds = edges ? tf_alloc((size_t)n, sizeof *s->group_seconds, "busy times", err) : NULL;
    int status = s->group_seconds ? TF_OK : TF_ERR_INPUT;
    cost_model m;
    if (status == TF_OK) {
        schedule_group_sizes(&windows, seq, rows, edges);
        if (strcmp(s->cost, "measured") == 0) {
            status = opt_schedule_profile(tr, seq, group, (int)s->repeats, times, err);
            if (status == TF_OK)
                status = cost_model_fit(rows, edges, times, n, &m, err);
            if (status == TF_OK && speaks)
                printf("schedule %s: %lld windows measured (thread CPU, median of %lld); fit t = %.4g rows + %.4g "
                       "edges + %.4g s, residual %.2f %% of the mean\n",
                       schedule_method_name(s->method), (long long)n, (long long)s->repeats, m.per_row, m.per_edge,
                       m.per_group, 100 * m.residual);
            if (status == TF_OK && speaks)
                printf("note: measured times differ from run to run, and so may the schedule (and the result); "
                       "--cost linear:A,B,C makes the run repeatable%s\n",
                       resumed ? ". This resumed run re-measured them: it is not bitwise an uninterrupted run" : "");
        } else {
            cost_model_parse(s->cost, &m, err);
            for (int64_t k = 0; k < n; k++)
                times[k] = cost_model_predict(&m, rows[k], edges[k]);
            status = schedule_check_times(times, n, err);
            if (status == TF_OK && speaks)
                printf("schedule %s: %lld windows, times from t = %g rows + %g edges + %g s\n",
                       schedule_method_name(s->method), (long long)n, m.per_row, m.per_edge, m.per_group);
        }
    }
    double alpha = 0;
    if (status == TF_OK)
        status = opt_schedule_alpha(group, parameters_size(&tr->model.parameters), 20, &alpha, err);
    train_schedule steps = windows;
    steps.batch = group->size; /* roundrobin under --schedule: one window per rank and step (PSG) */
    steps.steps = (steps.windows + steps.batch - 1) / steps.batch;
    ilp_report report;
    memset(&report, 0, sizeof report);
    if (status == TF_OK)
        status = opt_schedule_build(&s->plan, s->method, times, n, group, (int)s->per_rank, &steps, alpha, &s->ilp,
                                    &report, err);
    if (status == TF_OK && speaks) {
        schedule_cost cost;
        schedule_evaluate(&s->plan, times, alpha, &cost);
        printf("schedule %s on %d rank(s): %lld steps (iterations), critical path %.4g s, %.1f %% above the lower "
               "bound; predicted imbalance %.4f, efficiency %.4f; alpha %.3g s",
               schedule_method_name(s->method), group->size, (long long)s->plan.iterations, cost.critical_path,
               100 * (cost.critical_path / cost.lower_bound - 1), cost.imbalance, cost.efficiency, alpha);
        if (s->method == SCHEDULE_ILP)
            printf("; ILP %s, gap %.2f %%", report.status, 100 * report.gap);
        printf("\n");
    }
    free(times);
    free(rows);
    free(edges);
    return status;
}

int train_scheduling_epoch(train_scheduling *s, trainer *tr, comm *group, const snapshot_seq *seq,
                           epoch_report *report, tf_error *err)
{
    s->epochs_run++;
    return opt_schedule_epoch(tr, group, seq, &s->plan, s->group_seconds, report, err);
}

int train_scheduling_finish(train_scheduling *s, comm *group, tf_error *err)
{
    if (s->epochs_run == 0)
        return TF_OK;
    if (group->size > 1 && comm_allreduce_sum_double(group, s->group_seconds, s->plan.groups, err) != TF_OK)
        return TF_ERR_SYSTEM;
    if (group->rank == 0) {
        schedule_cost measured;
        schedule_evaluate(&s->plan, s->group_seconds, 0, &measured);
        printf("measured over %lld epoch(s): busy imbalance %.4f (rank totals %.4g .. %.4g s of thread CPU), "
               "efficiency %.4f\n",
               (long long)s->epochs_run, measured.imbalance, measured.busy_min, measured.busy_max, measured.efficiency);
    }
    return TF_OK;
}

void train_scheduling_free(train_scheduling *s)
{
    schedule_free(&s->plan);
    free(s->group_seconds);
    s->group_seconds = NULL;
}

/* ---- twofold train --batching hybrid: DynaHB's hybrid batches -------------------------------------- */

void train_batching_default(train_batching *b)
{
    memset(b, 0, sizeof *b);
    hybrid_options_default(&b->options);
}

int train_batching_option(int argc, char **argv, int *i, train_batching *b, tf_error *err)
{
    const char *value;
    int64_t number;
    int matched;
    if ((matched = cli_option(argc, argv, i, "--batching", &value, err)) != 0) {
        if (matched > 0 && strcmp(value, "snapshot") != 0 && strcmp(value, "hybrid") != 0) {
            tf_error_set(err, TF_ERR_INPUT, "option --batching: \"%s\", expected snapshot or hybrid", value);
            return -1;
        }
        b->hybrid = matched > 0 && strcmp(value, "hybrid") == 0;
    } else if ((matched = cli_option(argc, argv, i, "--adjust", &value, err)) != 0) {
        if (matched > 0 && strcmp(value, "fixed") != 0 && strcmp(value, "dqn") != 0) {
            tf_error_set(err, TF_ERR_INPUT, "option --adjust: \"%s\", expected fixed or dqn", value);
            return -1;
        }
        b->options.adjust_dqn = matched > 0 && strcmp(value, "dqn") == 0;
        b->options_given = 1;
    } else if ((matched = cli_option(argc, argv, i, "--targets", &value, err)) != 0) {
        if (matched > 0 && cli_parse_int("--targets", value, 1, INT32_MAX, &b->options.fixed.targets, err) != TF_OK)
            return -1;
        b->options_given = 1;
    } else if ((matched = cli_option(argc, argv, i, "--balanced-groups", &value, err)) != 0) {
        if (matched > 0 && cli_parse_int("--balanced-groups", value, 1, 100000, &number, err) != TF_OK)
            return -1;
        b->options.balanced_groups = (int)number;
        b->options_given = 1;
    } else if ((matched = cli_option(argc, argv, i, "--adjust-every", &value, err)) != 0) {
        if (matched > 0 && cli_parse_int("--adjust-every", value, 1, 1000000, &b->options.adjust_every, err) != TF_OK)
            return -1;
        b->every_given = 1;
    } else if ((matched = cli_option(argc, argv, i, "--reservoir", &value, err)) != 0) {
        if (matched > 0 && cli_parse_int("--reservoir", value, 0, HYBRID_ACTIONS, &number, err) != TF_OK)
            return -1;
        b->threads = (int)number;
        b->options_given = 1;
    }
    return matched;
}

int train_batching_check(train_batching *b, const train_command_view *c, tf_error *err)
{
    if ((b->options_given || b->every_given) && !b->hybrid)
        return tf_error_set(err, TF_ERR_INPUT, "train: --adjust, --targets, --balanced-groups, --adjust-every and "
                                               "--reservoir configure --batching hybrid: add it");
    if (!b->hybrid)
        return TF_OK;
    if (b->every_given && !b->options.adjust_dqn)
        return tf_error_set(err, TF_ERR_INPUT, "train: --adjust-every sets the DQN's interval: add --adjust dqn");
    if (c->kind != MODEL_TGCN)
        return tf_error_set(err, TF_ERR_INPUT, "train: hybrid batches train a target's one-hop neighbourhood, which is "
                                               "all T-GCN reads: use --model tgcn, not %s", model_kind_name(c->kind));
    if (c->scheduled)
        return tf_error_set(err, TF_ERR_INPUT, "train: --schedule places windows; hybrid batches are not windows: drop "
                                               "one of --schedule and --batching hybrid");
    if (c->incremental)
        return tf_error_set(err, TF_ERR_INPUT, "train: --incremental serves whole snapshots' aggregations; hybrid "
                                               "batches aggregate their targets' rows themselves: drop --incremental");
    if (b->threads > (b->options.adjust_dqn ? HYBRID_ACTIONS : 1))
        return tf_error_set(err, TF_ERR_INPUT, "train: --reservoir %d: a generator thread per batch size at most (%d "
                                               "with --adjust %s)", b->threads, b->options.adjust_dqn ? HYBRID_ACTIONS : 1,
                            b->options.adjust_dqn ? "dqn" : "fixed");
    b->options.fixed.snapshots = c->window;
    b->options.batch = c->batch;
    b->options.seed = c->seed;
    b->options.reservoir = b->threads > 0 && !c->optimized; /* the reference's serial reservoir */
    return TF_OK;
}

int train_batching_start(train_batching *b, trainer *tr, const snapshot_seq *seq, comm *group, tf_error *err)
{
    if (hybrid_run_create(&b->run, tr, seq, &b->options, err) != TF_OK)
        return TF_ERR_INPUT;
    b->started = 1;
    if (group && b->threads > 0 && opt_hybrid_use_reservoir(&b->run, b->threads, &b->reservoir, err) != TF_OK)
        return err->code;
    if (!group || group->rank == 0) {
        printf("hybrid batches: %lld vertices in %d balanced groups; %s", (long long)seq->num_nodes,
               b->options.balanced_groups, b->options.adjust_dqn ? "the DQN picks among" : "fixed");
        for (int a = 0; a < b->run.actions; a++)
            printf(" %lld x %lld", (long long)b->run.sizes[a].targets, (long long)b->run.sizes[a].snapshots);
        printf(" (targets x snapshots); %lld per step, %lld steps per epoch; batches %s\n", (long long)b->options.batch,
               (long long)b->run.steps_per_epoch,
               b->threads ? (group ? "from a reservoir with generator threads" : "from the serial reservoir")
                          : "built when needed");
    }
    return TF_OK;
}

int train_batching_epoch(train_batching *b, trainer *tr, comm *group, const snapshot_seq *seq, epoch_report *report,
                         tf_error *err)
{
    return group ? opt_hybrid_epoch(tr, &b->run, group, seq, report, err)
                 : ref_hybrid_epoch(tr, &b->run, seq, report, err);
}

void train_batching_finish(const train_batching *b, const comm *group)
{
    if (!b->started || (group && group->rank != 0))
        return;
    printf("hybrid batches: %lld steps, %.4g rows + edges trained", (long long)b->run.steps, b->run.work);
    if (b->options.adjust_dqn) {
        printf("; steps per size:");
        for (int a = 0; a < HYBRID_ACTIONS; a++)
            printf(" %lldx%lld:%lld", (long long)b->run.sizes[a].targets, (long long)b->run.sizes[a].snapshots,
                   (long long)b->run.action_steps[a]);
    }
    printf("\n");
}

void train_batching_free(train_batching *b)
{
    if (b->started)
        hybrid_run_free(&b->run);
    opt_reservoir_free(b->reservoir);
    b->reservoir = NULL;
    b->started = 0;
}
