/* `twofold train --minibatch N --fanout F1,F2`: ReInc's sampled mini-batches (ref/minibatch.h, the
 * reference; opt/minibatch.h, the ranks' twin, with --incremental serving each mini-batch's inputs). */
#include <stdio.h>

#include "opt/cli/train.h"

static int minibatch_check(const train_command *c, tf_error *err)
{
    if (!c->minibatch.size)
        return TF_OK;
    /* the first option given that shapes an epoch otherwise (the refusal names it, not every such option) */
    const char *given = c->split.on                                ? "--split vertex"
                        : c->scheduling.enabled                    ? "--schedule"
                        : c->batching.hybrid                       ? "--batching hybrid"
                        : c->async.mode == SYNC_AVERAGE            ? "--sync average"
                        : c->async.staleness != 0                  ? "--staleness"
                        : c->async.straggler.rank != STRAGGLER_NONE ? "--straggler"
                        : c->replicas > 1                          ? "--replicas"
                        : c->stale_embeddings                      ? "--stale-embeddings"
                        : c->options.task == TASK_LINK             ? "--task link"
                        : c->gpu                                   ? "--device cuda"
                                                                   : NULL;
    if (given)
        return tf_error_set(err, TF_ERR_INPUT, "train: --minibatch trains with its own epochs (sampled graphs, loss "
                                               "over the targets): drop %s", given);
    return TF_OK;
}

static int minibatch_on(const train_command *c, const comm *group)
{
    (void)group;
    return c->minibatch.size > 0;
}

/* The trainer, its checkpoint values recorded before a --load compares them (ref/minibatch.h). */
static int minibatch_create(train_run *r, tf_error *err)
{
    r->tr = &r->single;
    int status = trainer_create(r->tr, r->seq, &r->c->config, &r->c->options, err);
    if (status == TF_OK)
        minibatch_record(r->tr, &r->c->minibatch);
    return status;
}

static void minibatch_describe(const train_run *r)
{
    const minibatch_options *o = &r->c->minibatch;
    printf("mini-batches: %lld per epoch of at most %lld target vertices, fan-out", (long long)minibatch_count(o,
           r->seq->num_nodes), (long long)o->size);
    for (int h = 0; h < o->hops; h++)
        printf("%s%d", h ? "," : " ", o->fanout[h]);
    printf(" drawn at snapshot 0, later snapshots by the deltas; sequence-first%s\n",
           r->group && r->c->incremental ? "; inputs served by a cache and engine per mini-batch" : "");
}

static int minibatch_train_epoch(train_run *r, epoch_report *report, tf_error *err)
{
    const minibatch_options *o = &r->c->minibatch;
    if (!r->group)
        return minibatch_epoch(r->tr, r->seq, o, report, err);
    return opt_minibatch_epoch(r->tr, r->group, r->seq, o, r->c->incremental ? &r->c->inputs : NULL, &r->minibatch,
                               report, err);
}

static int minibatch_report(train_run *r, tf_error *err)
{
    (void)err;
    const minibatch_stats *s = &r->minibatch;
    if (!r->speaks || !r->group || !s->batches)
        return TF_OK;
    const double batches = (double)s->batches;
    printf("mini-batches (rank 0): %lld trained, on average %.1f vertices, %.1f edges drawn, %.1f joined later; "
           "%.3f s sampling", (long long)s->batches, (double)s->vertices / batches, (double)s->sampled_edges / batches,
           (double)s->joined_edges / batches, s->sample_seconds);
    if (r->c->incremental)
        printf("; cache hit rate %.3f (%lld hits, %lld misses), engine %lld full, %lld deltas",
               s->hits + s->misses ? (double)s->hits / (double)(s->hits + s->misses) : 0.0, (long long)s->hits,
               (long long)s->misses, (long long)s->engine_full, (long long)s->engine_deltas);
    printf("\n");
    return TF_OK;
}

const train_technique train_minibatch_technique = {
    .name = "minibatch", .check = minibatch_check, .on = minibatch_on, .create = minibatch_create, .describe = minibatch_describe,
    .epoch = minibatch_train_epoch, .report = minibatch_report,
};
