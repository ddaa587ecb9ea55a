#include "opt/incremental_inputs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"

void incremental_inputs_options_default(incremental_inputs_options *options)
{
    options->policy = CACHE_REINC;
    options->capacity = 1.0;
    incremental_options_default(&options->engine);
}

/* Terms 2 .. terms of GConvGRU's answer out [terms][N][F] (out[0] = T_1 already there), by the
 * Chebyshev recurrence T_k = 2 L^ T_{k-1} - T_{k-2} on snapshot t's operator, with T_0 = X_t,
 * as chebyshev_basis_forward() runs it. */
static int higher_terms(incremental_inputs *in, int64_t t, float *out, tf_error *err)
{
    const int64_t size = in->seq->num_nodes * in->seq->feature_width;
    propagation p;
    if (model_chebyshev_operator(in->model, &p, in->seq, t, err) != TF_OK)
        return TF_ERR_INPUT;
    for (int64_t j = 1; j < in->terms; j++) {
        float *current = out + j * size;
        const float *before = j == 1 ? in->seq->snapshots[t].features.data : out + (j - 2) * size;
        in->model->kernels->propagate_forward(&p, out + (j - 1) * size, in->seq->feature_width, current);
        for (int64_t i = 0; i < size; i++)
            current[i] = 2.0f * current[i] - before[i];
    }
    ref_propagation_free(&p);
    return TF_OK;
}

/* The answer for snapshot t into out [terms][num_nodes][feature_width]: from the cache when it
 * holds it, else by seeking the engine to t (and offering the result to the cache). */
static int serve(void *context, int64_t t, float *out, tf_error *err)
{
    incremental_inputs *in = context;
    const int64_t size = in->seq->num_nodes * in->seq->feature_width, count = in->terms * size;
    /* This epoch's visits of t so far; the counts start over once an epoch's are all made. */
    if (in->visited[t] >= in->visits[t])
        in->visited[t] = 0;
    in->visited[t]++;
    if (incremental_cache_get(&in->cache, t, out))
        return TF_OK;
    if (in->diffusion) {
        if (incremental_walks_get(&in->walks, t, out, err) != TF_OK)
            return TF_ERR_INPUT;
        in->produced++;
        return incremental_cache_put(&in->cache, t, out, count, in->visits[t] - in->visited[t], in->imminence, err);
    }
    opt_incremental_seek(&in->engine, in->seq, in->deltas, t);
    memcpy(out, in->engine.value, (size_t)size * sizeof(float));
    if (in->kind == AGGREGATOR_CHEBYSHEV && in->lambda_max[t] != 2.0) {
        /* The engine's y = -D^-1/2 A D^-1/2 X is L^ X for lambda_max = 2 only (opt/incremental_inputs.h). */
        const float edge = (float)(2.0 / in->lambda_max[t]), self = (float)(2.0 / in->lambda_max[t] - 1.0);
        const float *x = in->seq->snapshots[t].features.data;
        for (int64_t i = 0; i < size; i++)
            out[i] = edge * out[i] + self * x[i];
    }
    if (in->terms > 1 && higher_terms(in, t, out, err) != TF_OK)
        return TF_ERR_INPUT;
    in->produced++;
    return incremental_cache_put(&in->cache, t, out, count, in->visits[t] - in->visited[t], in->imminence, err);
}

/* ChebConv's lambda_max of g, as ref_propagation_chebyshev() finds it: twice the largest entry
 * of L = I - D^-1/2 A D^-1/2 (its diagonal 1 included). scale [num_nodes]: scratch. */
static double chebyshev_lambda_max(const csr *g, double *scale)
{
    chebyshev_scales(g, scale);
    double largest = g->num_nodes > 0 ? 1.0 : 0.0;
    for (int64_t v = 0; v < g->num_nodes; v++)
        for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++)
            if (g->col[e] != v)
                largest = fmax(largest, -g->weight[e] * scale[g->col[e]] * scale[v]);
    return 2.0 * largest;
}

/* What the model takes from the server, or an input error saying why it takes nothing. */
static int served_terms(const model_config *config, aggregator *kind, int64_t *terms, tf_error *err)
{
    const model_info *info = model_info_of(config->kind);
    if (info->inputs == MODEL_INPUTS_GCN) {
        *kind = AGGREGATOR_SYMMETRIC;
        *terms = 1;
        return TF_OK;
    }
    if (info->inputs == MODEL_INPUTS_CHEBYSHEV && config->chebyshev_k >= 2) {
        *kind = AGGREGATOR_CHEBYSHEV;
        *terms = config->chebyshev_k - 1;
        return TF_OK;
    }
    if (info->inputs == MODEL_INPUTS_DIFFUSION && config->chebyshev_k >= 2) {
        *kind = AGGREGATOR_SUM; /* over each walk's messages (opt/incremental_walks.h) */
        *terms = 2 * (config->chebyshev_k - 1);
        return TF_OK;
    }
    if (info->inputs == MODEL_INPUTS_DIFFUSION)
        return tf_error_set(err, TF_ERR_INPUT, "incremental inputs: %s with K = 1 diffuses X_t by T_0 = X_t only: "
                                               "nothing to aggregate; use K >= 2",
                            info->title);
    if (info->inputs == MODEL_INPUTS_CHEBYSHEV)
        return tf_error_set(err, TF_ERR_INPUT, "incremental inputs: %s with K = 1 convolves X_t itself (its "
                                               "Chebyshev basis is T_0 = X_t): nothing to aggregate; use K >= 2",
                            info->title);
    char served[256] = ""; /* the models the table gives an aggregation to serve */
    for (int k = 0; k < MODEL_COUNT; k++)
        if (model_table[k].inputs != MODEL_INPUTS_NONE)
            snprintf(served + strlen(served), sizeof served - strlen(served), "%s%s", served[0] ? " and " : "",
                     model_names[k]);
    return tf_error_set(err, TF_ERR_INPUT, "incremental inputs: %s; they serve %s", model_lacks(config->kind, MODEL_SERVED_INPUTS, NULL), served);
}

int incremental_inputs_create(incremental_inputs *in, const snapshot_seq *seq, const trainer *trainer,
                              const comm *ranks, const incremental_inputs_options *options, tf_error *err)
{
    memset(in, 0, sizeof *in);
    aggregator kind = AGGREGATOR_SYMMETRIC;
    int64_t terms = 0;
    if (served_terms(&trainer->model.config, &kind, &terms, err) != TF_OK)
        return TF_ERR_INPUT;
    in->seq = seq;
    in->model = &trainer->model;
    in->kind = kind;
    in->terms = terms;
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
    if (kind == AGGREGATOR_CHEBYSHEV) {
        double *scale = tf_alloc((size_t)seq->num_nodes + 1, sizeof *scale, "chebyshev scales", err);
        if (!scale || !(in->lambda_max = tf_alloc((size_t)t_all, sizeof(double), "lambda_max", err))) {
            free(scale);
            goto fail;
        }
        for (int64_t t = 0; t < t_all; t++)
            in->lambda_max[t] = chebyshev_lambda_max(&seq->snapshots[t].graph, scale);
        free(scale);
    }
    if (model_info_of(trainer->model.config.kind)->inputs == MODEL_INPUTS_DIFFUSION) {
        in->diffusion = 1;
        if (incremental_walks_create(&in->walks, seq, trainer->model.config.chebyshev_k, &options->engine, err) !=
            TF_OK)
            goto fail;
    } else if (snapshot_delta_chain_build(&in->deltas, seq, kind, err) != TF_OK ||
        opt_incremental_create(&in->engine, kind, seq->num_nodes, seq->feature_width, &options->engine, err) != TF_OK)
        goto fail;
    double data_bytes = (double)t_all * (double)(terms * seq->num_nodes * seq->feature_width) * sizeof(float);
    incremental_cache_init(&in->cache, options->policy, (int64_t)(options->capacity * data_bytes), 1);
    in->source.get = serve;
    in->source.context = in;
    return TF_OK;
fail:
    incremental_inputs_free(in);
    return TF_ERR_INPUT;
}

incremental_stats incremental_inputs_engine_stats(const incremental_inputs *in)
{
    if (!in->diffusion)
        return in->engine.stats;
    incremental_stats sum = {0};
    for (int d = 0; d < 2; d++) {
        const incremental_stats *walk = &in->walks.walks[d].engine.stats;
        sum.full += walk->full;
        sum.fallbacks += walk->fallbacks;
        sum.incremental += walk->incremental;
        sum.entries += walk->entries;
        sum.rows_recomputed += walk->rows_recomputed;
    }
    return sum;
}

void incremental_inputs_free(incremental_inputs *in)
{
    if (in->seq)
        snapshot_delta_chain_free(in->deltas, in->seq->num_snapshots);
    opt_incremental_free(&in->engine);
    incremental_walks_free(&in->walks);
    incremental_cache_free(&in->cache);
    free(in->visits);
    free(in->visited);
    free(in->lambda_max);
    memset(in, 0, sizeof *in);
}
