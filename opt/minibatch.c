#include "opt/minibatch.h"

#include <stdlib.h>
#include <string.h>

#include "opt/train.h"
#include "ref/core/clock.h"
#include "ref/core/memory.h"

/* Every step of the schedule over one mini-batch, this rank's slots only, one all-reduce per step. */
static int train_batch(trainer *tr, comm *c, const sampled_graph *s, const train_schedule *plan, float *packed,
                       double *loss_sum, epoch_report *report, tf_error *err)
{
    int status = TF_OK;
    for (int64_t step = 0; status == TF_OK && step < plan->steps; step++) {
        parameters_zero_grad(&tr->model.parameters);
        const float scale = 1.0f / (float)train_schedule_windows_in_step(plan, step);
        for (int64_t slot = 0; status == TF_OK && slot < plan->batch; slot++) {
            const int64_t window = train_schedule_window(plan, step, slot);
            int64_t first, count;
            if (window < 0 || opt_trainer_rank_of(slot, c->size) != c->rank)
                continue;
            train_schedule_span(plan, window, &first, &count);
            status = minibatch_window_gradient(&tr->model, s, first, count, scale, loss_sum, err);
        }
        status = opt_trainer_finish_step(tr, c, packed, status, report, err);
    }
    return status;
}

/* Mini-batch b: its sampled graphs, its server (with @p inputs), its steps; the counts into @p stats. */
static int run_batch(trainer *tr, comm *c, const snapshot_seq *seq, const minibatch_options *o,
                     const incremental_inputs_options *inputs, int64_t b, int32_t *targets, float *packed,
                     double *loss_sum, minibatch_stats *stats, epoch_report *report, tf_error *err)
{
    const double started = wall_seconds();
    sampled_graph s;
    int status = minibatch_sample(&s, tr, seq, o, b, targets, err);
    if (status != TF_OK)
        return status;
    incremental_inputs server;
    memset(&server, 0, sizeof server);
    const input_aggregations *saved = tr->model.inputs;
    const int served = inputs && (status = incremental_inputs_create(&server, &s.view, tr, c, inputs, err)) == TF_OK;
    if (served)
        tr->model.inputs = &server.source;
    const double ready = wall_seconds();
    const train_schedule plan = trainer_schedule(tr);
    if (status == TF_OK)
        status = train_batch(tr, c, &s, &plan, packed, loss_sum, report, err);
    tr->model.inputs = saved;
    if (stats) {
        stats->batches++;
        stats->vertices += s.num_vertices;
        stats->sampled_edges += s.sampled_edges;
        stats->joined_edges += s.joined_edges;
        stats->sample_seconds += ready - started;
        if (served) {
            stats->hits += server.cache.stats.hits;
            stats->misses += server.cache.stats.misses;
            stats->engine_full += server.engine.stats.full;
            stats->engine_deltas += server.engine.stats.incremental;
        }
    }
    if (served)
        incremental_inputs_free(&server);
    sampled_graph_free(&s);
    return status;
}

int opt_minibatch_epoch(trainer *tr, comm *c, const snapshot_seq *seq, const minibatch_options *o,
                        const incremental_inputs_options *inputs, minibatch_stats *stats, epoch_report *report,
                        tf_error *err)
{
    memset(report, 0, sizeof *report);
    minibatch_record(tr, o);
    const int64_t batches = minibatch_count(o, seq->num_nodes);
    float *packed = NULL;
    int32_t *targets = tf_alloc((size_t)o->size, sizeof *targets, "mini-batch targets", err);
    if (!targets || (c->size > 1 && !(packed = tf_alloc((size_t)parameters_size(&tr->model.parameters) + 1,
                                                        sizeof(float), "gradient buffer", err)))) {
        free(targets);
        return TF_ERR_INPUT;
    }
    double loss_sum = 0; /* of this rank's windows */
    int status = TF_OK;
    for (int64_t b = 0; status == TF_OK && b < batches; b++)
        status = run_batch(tr, c, seq, o, inputs, b, targets, packed, &loss_sum, stats, report, err);
    free(targets);
    free(packed);
    if (status == TF_OK && c->size > 1)
        status = comm_allreduce_sum_double(c, &loss_sum, 1, err);
    if (status != TF_OK)
        return status;
    minibatch_close_epoch(tr, o, seq->num_nodes, loss_sum, report);
    return opt_trainer_evaluate(tr, c, seq, tr->train_snapshots, seq->num_snapshots - tr->train_snapshots,
                                &report->test_mse, err);
}
