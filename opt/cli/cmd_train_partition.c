/* twofold train --split vertex: vertex-partitioned training of a snapshot model (chapter 06,
 * opt/train_partition.h). Every rank loads the data, computes the same partition, keeps its part, and
 * frees the rest; rank 0 prints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/dataset.h"
#include "opt/async_embeddings.h"
#include "opt/cli/cli.h"
#include "opt/cli/commands.h"
#include "opt/kernels.h"
#include "opt/train_partition.h"
#include "opt/train.h"
#include "ref/core/clock.h"
#include "ref/core/memory.h"

/* Each rank's value of `mine` on every rank: values [size] (zeroed here, summed across the ranks). */
static int gather(comm *group, double mine, double *values, tf_error *err)
{
    memset(values, 0, (size_t)group->size * sizeof *values);
    values[group->rank] = mine;
    return comm_allreduce_sum_double(group, values, group->size, err);
}

/* max / mean of values [count]. */
static double max_over_mean(const double *values, int count)
{
    double largest = 0, total = 0;
    for (int i = 0; i < count; i++) {
        largest = values[i] > largest ? values[i] : largest;
        total += values[i];
    }
    return total > 0 ? largest / (total / count) : 1.0;
}

int train_vertex_split(const train_vertex_split_request *request, comm *group, tf_error *err)
{
    const int speaks = group->rank == 0;
    const vertex_split *split = request->split;
    cli_progress_state progress = {0, ""};
    dataset_options data_options = {request->lags, speaks ? cli_progress : NULL, &progress, NULL, NULL};
    dataset d;
    int loaded = dataset_load(request->data, &data_options, &d, err);
    if (loaded == TF_OK && d.kind != DATASET_SNAPSHOTS) {
        dataset_free(&d);
        loaded = tf_error_set(err, TF_ERR_INPUT, "train: %s is an event stream; model %s needs snapshots",
                              request->data, model_kind_name(request->config->kind));
    }
    /* The ranks compare options and data before their first collective (ranks_agree()). */
    if ((loaded = ranks_agree_on_data(group, request->argc, request->argv, loaded, &d, err)) != TF_OK)
        return loaded;
    const snapshot_seq *seq = &d.snapshots;
    partition_options po;
    partition_options_default(&po);
    po.ranks = group->size;
    po.seed = split->seed;
    po.model = *request->config;
    partition p;
    double started = wall_seconds();
    int status = ref_partition_snapshots(seq, split->method, &po, &p, err);
    partition_metrics metrics;
    memset(&metrics, 0, sizeof metrics);
    if (status == TF_OK)
        status = partition_measure(seq, p.vertex_owner, group->size, partition_model_layers(request->config), 0,
                                   &metrics, err);
    if (status == TF_OK && speaks)
        printf("split vertex: %s on %d rank(s) (%.3f s): edge cut %lld of %lld (%.2f%%), vertices %lld .. %lld per rank, "
               "DynaHB load max/mean %.3f\n",
               partition_method_name(split->method), group->size, wall_seconds() - started, (long long)metrics.cut_edges,
               (long long)metrics.total_edges,
               metrics.total_edges ? 100.0 * (double)metrics.cut_edges / (double)metrics.total_edges : 0.0,
               (long long)metrics.vertices_min, (long long)metrics.vertices_max, metrics.load_max_over_mean);
    partition_metrics_free(&metrics);
    partition_trainer pt;
    memset(&pt, 0, sizeof pt);
    if (status == TF_OK)
        status = partition_trainer_create(&pt, group, seq, p.vertex_owner,
                                          split->method == PARTITION_PSS_TS ? p.snapshot_owner : NULL, split->mode,
                                          request->config, request->options, &opt_kernels, err);
    const int64_t num_nodes = seq->num_nodes, num_snapshots = seq->num_snapshots;
    if (status == TF_OK && speaks)
        printf("model %s (state width %lld, %lld parameters), data %s: %lld snapshots x %lld vertices; %s mode, "
               "windows of %lld, %lld per step, every rank runs every window on its own rows\n",
               model_kind_name(request->config->kind), (long long)model_state_width(&pt.base.model),
               (long long)parameters_size(&pt.base.model.parameters), d.name, (long long)num_snapshots,
               (long long)num_nodes, partition_mode_name(split->mode),
               (long long)(request->options->window ? request->options->window : pt.base.train_snapshots),
               (long long)request->options->batch);
    partition_free(&p);
    dataset_free(&d); /* each rank keeps only its part */
    if (status == TF_OK && request->load)
        status = trainer_load(&pt.base, request->load, err);
    /* partition_trainer_create() compared the fresh parameters; a loaded checkpoint is compared
     * again, with its epoch, Adam step and moments (each rank reads its own copy). */
    if (status == TF_OK && request->load)
        status = opt_state_agree(group, &pt.base.model.parameters, &pt.base.optimizer, pt.base.epoch, err);
    stale_fetcher stale;
    memset(&stale, 0, sizeof stale);
    if (status == TF_OK && request->stale)
        status = stale_fetcher_attach(&stale, &pt, request->stale, err);
    double *values = status == TF_OK ? tf_alloc((size_t)group->size, sizeof *values, "rank values", err) : NULL;
    if (status == TF_OK && !values)
        status = TF_ERR_INPUT;
    const int64_t first_epoch = pt.base.epoch;
    started = wall_seconds();
    while (status == TF_OK && pt.base.epoch < request->options->epochs) {
        epoch_report report;
        const double epoch_started = wall_seconds(), busy_before = pt.stats.busy_cpu_seconds;
        const uint64_t bytes_before = pt.stats.exchange_bytes;
        status = request->stale ? opt_stale_embeddings_epoch(&stale, &pt, &report, err)
                                : opt_partition_trainer_epoch(&pt, &report, err);
        if (status == TF_OK)
            status = comm_barrier(group, err);
        const double seconds = wall_seconds() - epoch_started;
        if (status == TF_OK)
            status = gather(group, pt.stats.busy_cpu_seconds - busy_before, values, err);
        const double busy = status == TF_OK ? max_over_mean(values, group->size) : 0;
        if (status == TF_OK)
            status = gather(group, (double)(pt.stats.exchange_bytes - bytes_before), values, err);
        double bytes = 0;
        for (int r = 0; status == TF_OK && r < group->size; r++)
            bytes += values[r];
        if (status == TF_OK && speaks) {
            printf("epoch %4lld  train loss %.6f  test MSE %.6f  (%.3f s)  exchange %.0f bytes  busy max/mean %.3f\n",
                   (long long)report.epoch, report.train_loss, report.test_mse, seconds, bytes, busy);
            fflush(stdout);
            cli_progress(&progress, "training epochs", pt.base.epoch - first_epoch,
                         request->options->epochs - first_epoch);
        }
    }
    if (status == TF_OK) {
        double test_mse;
        status = opt_partition_trainer_evaluate(&pt, pt.base.train_snapshots, num_snapshots - pt.base.train_snapshots,
                                                &test_mse, err);
        if (status == TF_OK && speaks)
            printf("final test MSE %.6f after %lld epochs (%.2f s)\n", test_mse, (long long)pt.base.epoch,
                   wall_seconds() - started);
    }
    double totals[4] = {(double)pt.stats.exchange_bytes, (double)pt.stats.gradient_bytes,
                        (double)(pt.part.rows + pt.part.cached), 0};
    if (status == TF_OK)
        status = comm_allreduce_sum_double(group, totals, 3, err);
    if (status == TF_OK)
        status = gather(group, (double)pt.part.bytes_held, values, err);
    for (int r = 0; status == TF_OK && r < group->size; r++)
        totals[3] = values[r] > totals[3] ? values[r] : totals[3];
    if (status == TF_OK && speaks) {
        char largest[32];
        printf("communication: exchange %.0f bytes (feature and embedding rows), gradients %.0f bytes; rows held %.0f "
               "(replication %.3f), largest part %s\n",
               totals[0], totals[1], totals[2], totals[2] / (double)num_nodes,
               tf_format_bytes(totals[3], largest, sizeof largest));
    }
    double saved[4] = {(double)stale.stats.bytes_fresh, (double)stale.stats.bytes_sent, (double)stale.stats.bytes_exact,
                       (double)stale.stats.bytes_stale};
    if (status == TF_OK && request->stale)
        status = comm_allreduce_sum_double(group, saved, 4, err);
    if (status == TF_OK && request->stale && speaks) {
        char name[64];
        printf("stale embeddings %s: training forwards sent %.0f of the exchange mode's %.0f bytes (%.2f%% saved; "
               "exact reuse %.0f, stale reuse %.0f bytes, bitmaps included in what was sent)\n",
               stale_schedule_name(request->stale, name, sizeof name), saved[1], saved[0],
               saved[0] > 0 ? 100 * (1 - saved[1] / saved[0]) : 0.0, saved[2], saved[3]);
    }
    if (status == TF_OK && request->save && speaks) {
        status = trainer_save(&pt.base, request->save, err);
        if (status == TF_OK)
            printf("saved checkpoint %s\n", request->save);
    }
    free(values);
    if (request->stale)
        stale_fetcher_free(&stale);
    partition_trainer_free(&pt);
    return status;
}
