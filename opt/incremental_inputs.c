#include "opt/incremental_inputs.h"

#include <stdlib.h>
#include <string.h>

#include "ref/memory.h"

void incremental_inputs_options_default(incremental_inputs_options *options)
{
    options->policy = CACHE_REINC;
    options->capacity = 1.0;
    incremental_options_default(&options->engine);
}

/* The aggregation of snapshot t into out [num_nodes][feature_width]: from the cache when it
 * holds it, else by seeking the engine to t (and offering the result to the cache). */
static int serve(void *context, int64_t t, float *out, tf_error *err)
{
    incremental_inputs *in = context;
    const int64_t count = in->seq->num_nodes * in->seq->feature_width;
    /* This epoch's visits of t so far; the counts start over once an epoch's are all made. */
    if (in->visited[t] >= in->visits[t])
        in->visited[t] = 0;
    in->visited[t]++;
    if (incremental_cache_get(&in->cache, t, out))
        return TF_OK;
    opt_incremental_seek(&in->engine, in->seq, in->deltas, t);
    memcpy(out, in->engine.value, (size_t)count * sizeof(float));
    in->produced++;
    return incremental_cache_put(&in->cache, t, out, count, in->visits[t] - in->visited[t],
                                 in->imminence, err);
}

int incremental_inputs_create(incremental_inputs *in, const snapshot_seq *seq, const trainer *trainer,
                              const comm *ranks, const incremental_inputs_options *options, tf_error *err)
{
    memset(in, 0, sizeof *in);
    in->seq = seq;
    const int64_t t_all = seq->num_snapshots, train = trainer->train_snapshots;
    const train_schedule s = trainer_schedule(trainer);
    const int rank = ranks ? ranks->rank : 0, size = ranks ? ranks->size : 1;
    in->imminence = (double)(s.length - s.stride);
    if (!(in->visits = tf_alloc((size_t)t_all, sizeof(int64_t), "cache visit counts", err)) ||
        !(in->visited = tf_alloc((size_t)t_all, sizeof(int64_t), "cache visit counts", err)))
        goto fail;
    /* The windows this process runs: slot j of every step, and evaluation window j of the test
     * split, belong to rank j % size (opt/train.h). */
    for (int64_t step = 0; step < s.steps; step++)
        for (int64_t slot = 0; slot < s.batch; slot++) {
            int64_t w = train_schedule_window(&s, step, slot), first, count;
            if (w < 0 || opt_trainer_rank_of(slot, size) != rank)
                continue;
            train_schedule_span(&s, w, &first, &count);
            for (int64_t t = first; t < first + count; t++)
                in->visits[t]++;
        }
    const int64_t test_length = trainer_evaluation_length(trainer, t_all - train);
    for (int64_t t = train; t < t_all; t++)
        in->visits[t] = opt_trainer_rank_of((t - train) / test_length, size) == rank;
    if (snapshot_delta_chain_build(&in->deltas, seq, AGGREGATOR_SYMMETRIC, err) != TF_OK ||
        opt_incremental_create(&in->engine, AGGREGATOR_SYMMETRIC, seq->num_nodes, seq->feature_width, &options->engine,
                               err) != TF_OK)
        goto fail;
    double data_bytes = (double)t_all * (double)(seq->num_nodes * seq->feature_width) * sizeof(float);
    incremental_cache_init(&in->cache, options->policy, (int64_t)(options->capacity * data_bytes), 1);
    in->source.get = serve;
    in->source.context = in;
    return TF_OK;
fail:
    incremental_inputs_free(in);
    return TF_ERR_INPUT;
}

void incremental_inputs_free(incremental_inputs *in)
{
    if (in->seq)
        snapshot_delta_chain_free(in->deltas, in->seq->num_snapshots);
    opt_incremental_free(&in->engine);
    incremental_cache_free(&in->cache);
    free(in->visits);
    free(in->visited);
    memset(in, 0, sizeof *in);
}
