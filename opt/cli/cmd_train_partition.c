/* twofold train --split vertex: vertex-partitioned training of a snapshot model (chapter 06,
 * opt/train_partition.h). Every rank loads the data, computes the same partition, keeps its part, and
 * frees the rest; rank 0 prints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt/async_embeddings.h"
#include "opt/cli/commands.h"
#include "opt/cli/train.h"
#include "opt/kernels.h"
#include "opt/train.h"
#include "opt/train_partition.h"
#include "ref/core/clock.h"
#include "ref/core/memory.h"

int vertex_split_check(const train_command *c, tf_error *err)
{
    const vertex_split *split = &c->split;
    if (!split->on)
        return TF_OK;
    if (!split->partition_given)
        return train_needs("--split vertex", "--partition (hash, pts, metis, dynahb, dgc or pss-ts)", err);
    if (c->scheduling.enabled || c->batching.hybrid || train_wants_async(c) || c->replicas > 1 ||
        c->options.optimizer != OPTIMIZER_ADAM)
        return tf_error_set(err, TF_ERR_INPUT, "train: --split vertex takes synchronous Adam steps over every window: "
                                               "drop --schedule, --batching hybrid, --sync average, --staleness, "
                                               "--straggler, --replicas and --optimizer sgd");
    if (c->stale_embeddings && split->mode != PARTITION_EXCHANGE)
        return tf_error_set(err, TF_ERR_INPUT, "train: stale embeddings change what the exchange mode sends: use "
                                               "--split vertex --mode exchange");
    if (c->stale_embeddings && c->load)
        return tf_error_set(err, TF_ERR_INPUT, "train: --stale-embeddings keeps caches a checkpoint does not hold: "
                                               "drop --load");
    if (c->incremental || c->options.batching == BATCH_ACROSS_BLOCKS || c->gpu || c->dump)
        return tf_error_set(err, TF_ERR_INPUT, "train: --split vertex runs every window on every rank's own rows on "
                                               "the CPU kernels: drop %s",
                            c->incremental ? "--incremental" : c->gpu ? "--device cuda" : c->dump ? "--dump-outputs"
                                                                                                   : "--blocks");
    return partition_training_supported(split->method, split->mode, c->config.kind, err) == TF_OK ? TF_OK
                                                                                                  : TF_ERR_INPUT;
}

/* What a vertex-split run holds. */
typedef struct split_run {
    const train_command *c;
    comm *group;
    int speaks;                   /* rank 0 */
    cli_progress_state progress;
    partition_trainer pt;         /* this rank's part and the model */
    stale_fetcher stale;          /* --stale-embeddings on the exchange */
    double *values;               /* [ranks] one value of each rank */
    int64_t num_nodes, num_snapshots;
} split_run;

/* Each rank's value of `mine` in r->values (zeroed here, summed across the ranks). */
static int gather(split_run *r, double mine, tf_error *err)
{
    memset(r->values, 0, (size_t)r->group->size * sizeof *r->values);
    r->values[r->group->rank] = mine;
    return comm_allreduce_sum_double(r->group, r->values, r->group->size, err);
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

/* The partition of the data every rank computes alike; rank 0 prints what it cuts. */
static int split_data(split_run *r, const snapshot_seq *seq, partition *p, tf_error *err)
{
    const vertex_split *split = &r->c->split;
    partition_options po;
    partition_options_default(&po);
    po.ranks = r->group->size;
    po.seed = split->seed;
    po.model = r->c->config;
    const double started = wall_seconds();
    if (ref_partition_snapshots(seq, split->method, &po, p, err) != TF_OK)
        return err->code;
    partition_metrics metrics;
    memset(&metrics, 0, sizeof metrics);
    int status = partition_measure(seq, p->vertex_owner, r->group->size, partition_model_layers(&r->c->config), 0,
                                   r->c->config.kind, &metrics, err);
    if (status == TF_OK && r->speaks)
        printf("split vertex: %s on %d rank(s) (%.3f s): edge cut %lld of %lld (%.2f%%), vertices %lld .. %lld per rank, "
               "DynaHB load max/mean %.3f\n",
               partition_method_name(split->method), r->group->size, wall_seconds() - started,
               (long long)metrics.cut_edges, (long long)metrics.total_edges,
               metrics.total_edges ? 100.0 * (double)metrics.cut_edges / (double)metrics.total_edges : 0.0,
               (long long)metrics.vertices_min, (long long)metrics.vertices_max, metrics.load_max_over_mean);
    partition_metrics_free(&metrics);
    return status;
}

/* This rank's part of the data and the model, loaded from --load; the data itself is freed. */
static int split_start(split_run *r, dataset *d, tf_error *err)
{
    const train_command *c = r->c;
    const snapshot_seq *seq = &d->snapshots;
    partition p;
    int status = split_data(r, seq, &p, err);
    if (status == TF_OK)
        status = partition_trainer_create(&r->pt, r->group, seq, p.vertex_owner,
                                          c->split.method == PARTITION_PSS_TS ? p.snapshot_owner : NULL, c->split.mode,
                                          &c->config, &c->options, &opt_kernels, err);
    r->num_nodes = seq->num_nodes;
    r->num_snapshots = seq->num_snapshots;
    if (status == TF_OK && r->speaks)
        printf("model %s (state width %lld, %lld parameters), data %s: %lld snapshots x %lld vertices; %s mode, "
               "windows of %lld, %lld per step, every rank runs every window on its own rows\n",
               model_kind_name(c->config.kind), (long long)model_state_width(&r->pt.base.model),
               (long long)parameters_size(&r->pt.base.model.parameters), d->name, (long long)r->num_snapshots,
               (long long)r->num_nodes, partition_mode_name(c->split.mode),
               (long long)(c->options.window ? c->options.window : r->pt.base.train_snapshots), (long long)c->options.batch);
    partition_free(&p);
    dataset_free(d); /* each rank keeps only its part */
    if (status == TF_OK && c->load)
        status = trainer_load(&r->pt.base, c->load, err);
    /* partition_trainer_create() compared the fresh parameters; a loaded checkpoint is compared
     * again, with its epoch, Adam step and moments (each rank reads its own copy). */
    if (status == TF_OK && c->load)
        status = opt_state_agree(r->group, &r->pt.base.model.parameters, &r->pt.base.optimizer, r->pt.base.epoch, err);
    if (status == TF_OK && c->stale_embeddings)
        status = stale_fetcher_attach(&r->stale, &r->pt, &c->stale, err);
    if (status == TF_OK && !(r->values = tf_alloc((size_t)r->group->size, sizeof *r->values, "rank values", err)))
        status = TF_ERR_INPUT;
    return status;
}

/* One epoch on every rank; rank 0 prints its loss, the exchange's bytes and the ranks' busy balance. */
static int split_epoch(split_run *r, int64_t first_epoch, tf_error *err)
{
    epoch_report report;
    partition_trainer *pt = &r->pt;
    const double started = wall_seconds(), busy_before = pt->stats.busy_cpu_seconds;
    const uint64_t bytes_before = pt->stats.exchange_bytes;
    int status = r->c->stale_embeddings ? opt_stale_embeddings_epoch(&r->stale, pt, &report, err)
                                        : opt_partition_trainer_epoch(pt, &report, err);
    if (status == TF_OK)
        status = comm_barrier(r->group, err);
    const double seconds = wall_seconds() - started;
    if (status == TF_OK)
        status = gather(r, pt->stats.busy_cpu_seconds - busy_before, err);
    const double busy = status == TF_OK ? max_over_mean(r->values, r->group->size) : 0;
    if (status == TF_OK)
        status = gather(r, (double)(pt->stats.exchange_bytes - bytes_before), err);
    double bytes = 0;
    for (int k = 0; status == TF_OK && k < r->group->size; k++)
        bytes += r->values[k];
    if (status == TF_OK && r->speaks) {
        printf("epoch %4lld  train loss %.6f  test MSE %.6f  (%.3f s)  exchange %.0f bytes  busy max/mean %.3f\n",
               (long long)report.epoch, report.train_loss, report.test_mse, seconds, bytes, busy);
        fflush(stdout);
        cli_progress(&r->progress, "training epochs", pt->base.epoch - first_epoch, r->c->options.epochs - first_epoch);
    }
    return status;
}

/* The bytes of the whole run, summed over the ranks: the exchange, the gradients, the rows held; and
 * what --stale-embeddings saved. */
static int split_report(split_run *r, tf_error *err)
{
    const partition_trainer *pt = &r->pt;
    double totals[4] = {(double)pt->stats.exchange_bytes, (double)pt->stats.gradient_bytes,
                        (double)(pt->part.rows + pt->part.cached), 0};
    int status = comm_allreduce_sum_double(r->group, totals, 3, err);
    if (status == TF_OK)
        status = gather(r, (double)pt->part.bytes_held, err);
    for (int k = 0; status == TF_OK && k < r->group->size; k++)
        totals[3] = r->values[k] > totals[3] ? r->values[k] : totals[3];
    if (status == TF_OK && r->speaks) {
        char largest[32];
        printf("communication: exchange %.0f bytes (feature and embedding rows), gradients %.0f bytes; rows held %.0f "
               "(replication %.3f), largest part %s\n",
               totals[0], totals[1], totals[2], totals[2] / (double)r->num_nodes,
               tf_format_bytes(totals[3], largest, sizeof largest));
    }
    const stale_stats *st = &r->stale.stats;
    double saved[4] = {(double)st->bytes_fresh, (double)st->bytes_sent, (double)st->bytes_exact, (double)st->bytes_stale};
    if (status == TF_OK && r->c->stale_embeddings)
        status = comm_allreduce_sum_double(r->group, saved, 4, err);
    if (status == TF_OK && r->c->stale_embeddings && r->speaks) {
        char name[64];
        printf("stale embeddings %s: training forwards sent %.0f of the exchange mode's %.0f bytes (%.2f%% saved; "
               "exact reuse %.0f, stale reuse %.0f bytes, bitmaps included in what was sent)\n",
               stale_schedule_name(&r->c->stale, name, sizeof name), saved[1], saved[0],
               saved[0] > 0 ? 100 * (1 - saved[1] / saved[0]) : 0.0, saved[2], saved[3]);
    }
    return status;
}

int train_vertex_split(const train_command *c, comm *group, tf_error *err)
{
    split_run r = {.c = c, .group = group, .speaks = group->rank == 0};
    dataset d;
    int status = train_load_snapshots(c, group, &r.progress, &d, err);
    if (status != TF_OK)
        return status;
    status = split_start(&r, &d, err);
    const int64_t first_epoch = r.pt.base.epoch;
    const double started = wall_seconds();
    while (status == TF_OK && r.pt.base.epoch < c->options.epochs)
        status = split_epoch(&r, first_epoch, err);
    double test_mse;
    const int64_t train = r.pt.base.train_snapshots;
    if (status == TF_OK)
        status = opt_partition_trainer_evaluate(&r.pt, train, r.num_snapshots - train, &test_mse, err);
    if (status == TF_OK && r.speaks)
        printf("final test MSE %.6f after %lld epochs (%.2f s)\n", test_mse, (long long)r.pt.base.epoch,
               wall_seconds() - started);
    if (status == TF_OK)
        status = split_report(&r, err);
    if (status == TF_OK && c->save && r.speaks) {
        status = trainer_save(&r.pt.base, c->save, err);
        if (status == TF_OK)
            printf("saved checkpoint %s\n", c->save);
    }
    free(r.values);
    if (c->stale_embeddings)
        stale_fetcher_free(&r.stale);
    partition_trainer_free(&r.pt);
    return status;
}
