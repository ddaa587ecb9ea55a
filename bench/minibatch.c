/* ReInc's sampled mini-batches (chapters/02-incremental.md, "Sampled mini-batches"): the benchmark.
 *
 * build/bench/bench minibatch [--quick] [--threads N] [--out DIR]: for GCRN-M1 (stacked), GConvLSTM
 * (ReInc's GCRN-M2, integrated) and T-GCN on a generated graph with 64 features (ReInc's layer 1
 * is the wide one), node mini-batches with ReInc's fan-out 25,10, windows of 8 with stride 2
 * (every training snapshot in 4 windows), hidden 16, one rank:
 *  - the reference mini-batch epoch (ref/minibatch.h) once, the loss both opt runs must match;
 *  - two opt runs created side by side and trained epoch by epoch in turn (a slow spell of a shared
 *    machine falls on both): recompute on the sampled graphs, and the inputs served by the engine
 *    and the cache of each mini-batch (opt/minibatch.h). Epoch 1's loss agrees within 1e-5 (with
 *    the reference too), and every later one does, or the two runs parted by less than an epoch's
 *    own move (later_epoch_agrees()); then the median of epochs 2 .. E of each, their ratio (what
 *    reuse across windows and incremental aggregation give, ReInc's Fig. 9 question), and the
 *    served run's cache hit rate and engine work (Fig. 11's question, at the default capacity:
 *    everything fits).
 * CSV: minibatch.csv in DIR. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/benchmark.h"
#include "datasets/dataset.h"
#include "opt/kernels.h"
#include "opt/minibatch.h"
#include "ref/core/clock.h"

enum { EPOCHS_FULL = 4, EPOCHS_QUICK = 2 };

static int compare_seconds(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *seconds, int count)
{
    qsort(seconds, (size_t)count, sizeof *seconds, compare_seconds);
    return count % 2 ? seconds[count / 2] : 0.5 * (seconds[count / 2 - 1] + seconds[count / 2]);
}

static int agrees(const char *what, int epoch, double loss, double expected)
{
    if (fabs(loss - expected) / fmax(1.0, fabs(expected)) <= 1e-5)
        return 1;
    printf("WRONG: %s, epoch %d: loss %.9g against %.9g; no speed reported\n", what, epoch, loss, expected);
    return 0;
}

/* A later epoch of the two opt runs: 1 when the losses agree within 1e-5; 2 when they have parted by
 * less than the recompute's own loss moved in that epoch (said in one line); 0 (WRONG) otherwise. Two
 * fp-equal runs can part: a hidden state within a few ulps of the head's ReLU kink lands on opposite
 * sides in the two, and Adam spreads that one gradient's jump into every parameter
 * (bench/results/02-incremental/minibatch_drift.txt measures it step by step). The times compare the
 * same work either way; epoch 1 is always held to 1e-5. */
static int later_epoch_agrees(int epoch, double served, double recompute, double recompute_before)
{
    const double apart = fabs(served - recompute), moved = fabs(recompute - recompute_before);
    if (apart / fmax(1.0, fabs(recompute)) <= 1e-5)
        return 1;
    if (apart < moved) {
        printf("parted: epoch %d, opt served loss %.9g against opt recompute %.9g (%.2g apart, less than the "
               "recompute's own move in that epoch, %.2g)\n", epoch, served, recompute, apart, moved);
        return 2;
    }
    return agrees("opt served against opt recompute", epoch, served, recompute);
}

/* One model: the reference epoch, then the two opt runs in turn. 0, or 1 on a disagreement or error. */
static int minibatch_model(const dataset *d, model_kind kind, int k, const minibatch_options *o, int epochs,
                           FILE *csv)
{
    tf_error err;
    train_options opts;
    train_options_default(&opts);
    opts.window = 8;
    opts.stride = 2;
    model_config config = {kind, 0, 16, 0, k, 0};
    incremental_inputs_options served;
    incremental_inputs_options_default(&served);
    comm local;
    comm_init_local(&local);
    trainer tr[3];
    int created = 0, status = 0;
    for (; created < 3 && status == 0; created++)
        if (trainer_create(&tr[created], &d->snapshots, &config, &opts, &err) != TF_OK)
            status = 1;
    epoch_report report;
    double reference_seconds = wall_seconds(), reference_loss = 0;
    if (status == 0 && minibatch_epoch(&tr[0], &d->snapshots, o, &report, &err) != TF_OK)
        status = 1;
    reference_seconds = wall_seconds() - reference_seconds;
    reference_loss = report.train_loss;
    double seconds[2][EPOCHS_FULL], losses[2][EPOCHS_FULL];
    minibatch_stats stats[2] = {{0}, {0}};
    tr[1].model.kernels = tr[2].model.kernels = &opt_kernels;
    for (int e = 0; e < epochs && status == 0; e++)
        for (int v = 0; v < 2 && status == 0; v++) {
            double start = wall_seconds();
            if (opt_minibatch_epoch(&tr[1 + v], &local, &d->snapshots, o, v ? &served : NULL, &stats[v], &report,
                                    &err) != TF_OK)
                status = 1;
            seconds[v][e] = wall_seconds() - start;
            losses[v][e] = report.train_loss;
        }
    for (int v = 0; v < created; v++)
        trainer_free(&tr[v]);
    comm_finalize(&local);
    if (status != 0) {
        fprintf(stderr, "bench minibatch: %s\n", err.message);
        return 1;
    }
    printf("\n-- %s%s: hidden 16, window 8, stride 2\n", model_kind_name(kind), k > 1 ? ", K = 2" : "");
    if (!agrees("opt recompute", 1, losses[0][0], reference_loss) ||
        !agrees("opt served", 1, losses[1][0], reference_loss) ||
        !agrees("opt served against opt recompute", 1, losses[1][0], losses[0][0]))
        return 1;
    int parted = 0;
    for (int e = 1; e < epochs; e++) {
        const int verdict = later_epoch_agrees(e + 1, losses[1][e], losses[0][e], losses[0][e - 1]);
        if (verdict == 0)
            return 1;
        parted |= verdict == 2;
    }
    const double recompute = median(seconds[0] + 1, epochs - 1), incremental = median(seconds[1] + 1, epochs - 1);
    const double lookups = (double)(stats[1].hits + stats[1].misses), batches = (double)stats[1].batches;
    printf(parted ? "epoch 1's loss agrees within 1e-5 (with the reference too); the runs parted later, as above\n"
                  : "every epoch's loss agrees within 1e-5 (epoch 1 with the reference)\n");
    printf("reference epoch 1: %.3f s; opt recompute %.3f s, opt served %.3f s (medians of epochs 2-%d): %.2fx\n",
           reference_seconds, recompute, incremental, epochs, recompute / incremental);
    printf("served: cache hit rate %.3f (%lld of %.0f lookups), engine %lld deltas and %lld full; %.0f sampled "
           "vertices and %.0f drawn edges per mini-batch, %.0f joined by the deltas; sampling and serving set-up "
           "%.3f s per epoch\n",
           lookups ? (double)stats[1].hits / lookups : 0.0, (long long)stats[1].hits, lookups,
           (long long)stats[1].engine_deltas, (long long)stats[1].engine_full, (double)stats[1].vertices / batches,
           (double)stats[1].sampled_edges / batches, (double)stats[1].joined_edges / batches,
           stats[1].sample_seconds / epochs);
    fprintf(csv, "%s,%d,%lld,%d,%g,%g,%g,%g,%g,%lld,%lld\n", model_kind_name(kind), k, (long long)o->size, epochs - 1,
            reference_seconds, recompute, incremental, recompute / incremental,
            lookups ? (double)stats[1].hits / lookups : 0.0, (long long)stats[1].engine_deltas,
            (long long)stats[1].engine_full);
    return 0;
}

int minibatch_benchmark(const benchmark_options *o, tf_error *err)
{
    const char *spec = o->quick ? "powerlaw:nodes=2000,edges=10000,snapshots=16,churn=0.01,features=64,degrees=0,seed=5"
                                : "powerlaw:nodes=20000,edges=100000,snapshots=24,churn=0.01,features=64,degrees=0,"
                                  "seed=5";
    dataset d;
    if (dataset_load(spec, NULL, &d, err) != TF_OK)
        return -1;
    minibatch_options mb = {o->quick ? 500 : 5000, 2, {25, 10}};
    printf("opt side: %d OpenMP thread(s); ref: one thread\n", o->threads);
    printf("== sampled mini-batches of %lld targets, fan-out 25,10, on %s ==\n", (long long)mb.size, spec);
    output_file csv = {0};
    if (bench_csv_open(&csv, o->out, "minibatch.csv", 0, err) != TF_OK) {
        dataset_free(&d);
        return -1;
    }
    fprintf(csv.stream, "model,k,minibatch,timed_epochs,reference_seconds,recompute_seconds,served_seconds,speedup,"
                        "hit_rate,engine_deltas,engine_full\n");
    const int epochs = o->quick ? EPOCHS_QUICK : EPOCHS_FULL;
    int status = minibatch_model(&d, MODEL_GCRNM1, 2, &mb, epochs, csv.stream);
    if (status == 0)
        status = minibatch_model(&d, MODEL_GCONVLSTM, 2, &mb, epochs, csv.stream);
    if (status == 0)
        status = minibatch_model(&d, MODEL_TGCN, 1, &mb, epochs, csv.stream);
    if (bench_csv_close(&csv, status >= 0, err) < 0)
        status = -1;
    dataset_free(&d);
    return status;
}
