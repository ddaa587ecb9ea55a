/* DynaHB's hybrid batches (chapter 07): the benchmark (build/bench/bench hybrid [--quick]
 * [--threads N] [--out DIR]). T-GCN training epochs under snapshot batches, hybrid batches of fixed
 * sizes and the DQN's, their seconds and test MSE (hybrid.csv in DIR); then the time of building a
 * batch against training on it, and an epoch with batches built inline against one from a
 * reservoir. The table's entry, technique_schedule_hybrid, is verify/techniques/schedule_hybrid.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/benchmark.h"
#include "datasets/dataset.h"
#include "opt/kernels.h"
#include "opt/schedule_hybrid_train.h"
#include "ref/core/clock.h"
#include "ref/schedule_hybrid.h"
#include "ref/schedule_hybrid_train.h"

enum { BATCHING_SNAPSHOT, BATCHING_FIXED, BATCHING_DQN };

/* One training run: E epochs of T-GCN (hidden 32, opt kernels, one process) under a batching;
 * per epoch the seconds and the test MSE. */
static int training_run(const snapshot_seq *seq, int batching, double vertex_share, int reservoir, int64_t epochs,
                        double *seconds, double *mse, tf_error *err)
{
    train_options options;
    train_options_default(&options);
    const int64_t train = (int64_t)(0.8 * (double)seq->num_snapshots);
    const int64_t snapshots = train / 5 > 0 ? train / 5 : 1; /* 20 % */
    options.window = snapshots;
    options.epochs = epochs;
    model_config config = {MODEL_TGCN, 0, 32, 0, 2, 0};
    trainer tr;
    if (trainer_create(&tr, seq, &config, &options, err) != TF_OK)
        return err->code;
    tr.model.kernels = &opt_kernels;
    hybrid_run run;
    int status = TF_OK, have_run = 0;
    opt_reservoir *threaded = NULL;
    if (batching != BATCHING_SNAPSHOT) {
        hybrid_options o;
        hybrid_options_default(&o);
        o.adjust_dqn = batching == BATCHING_DQN;
        o.fixed = (hybrid_sizes){snapshots, (int64_t)(vertex_share * (double)seq->num_nodes)};
        if (o.fixed.targets < o.balanced_groups)
            o.fixed.targets = o.balanced_groups;
        status = hybrid_run_create(&run, &tr, seq, &o, err);
        have_run = status == TF_OK;
        if (status == TF_OK && reservoir)
            status = opt_hybrid_use_reservoir(&run, 1, &threaded, err);
    }
    for (int64_t e = 0; status == TF_OK && e < epochs; e++) {
        epoch_report report;
        const double started = wall_seconds();
        status = batching == BATCHING_SNAPSHOT ? trainer_epoch(&tr, seq, &report, err)
                                               : ref_hybrid_epoch(&tr, &run, seq, &report, err);
        seconds[e] = wall_seconds() - started;
        mse[e] = report.test_mse;
    }
    if (have_run)
        hybrid_run_free(&run);
    opt_reservoir_free(threaded);
    trainer_free(&tr);
    return status;
}

int hybrid_benchmark(const benchmark_options *o, tf_error *err)
{
    opt_set_threads(o->threads);
    static const char *const data[2] = {"twitter_tennis", "powerlaw:nodes=20000,edges=200000,snapshots=40,churn=0.01"};
    static const char *const labels[2] = {"twitter_tennis", "powerlaw 20000"};
    const int datasets = o->quick ? 1 : 2;
    const int64_t epochs = o->quick ? 3 : 10;
    /* the runs: snapshot batches, hybrid fixed at 1, 5 and 10 % of the vertices, the DQN */
    static const int batchings[5] = {BATCHING_SNAPSHOT, BATCHING_FIXED, BATCHING_FIXED, BATCHING_FIXED, BATCHING_DQN};
    static const double shares[5] = {0, 0.01, 0.05, 0.1, 0};
    static const char *const names[5] = {"snapshot batches", "hybrid 1% x 20%", "hybrid 5% x 20%", "hybrid 10% x 20%",
                                         "hybrid, DQN"};
    output_file file;
    if (bench_csv_open(&file, o->out, "hybrid.csv", 0, err) != TF_OK)
        return -1;
    FILE *csv = file.stream;
    fprintf(csv, "data,batching,epoch,seconds,test_mse\n");
    printf("\nhybrid vs snapshot batches: T-GCN hidden 32, opt kernels, %d thread(s), one process, %lld epochs; an "
           "epoch of hybrid batches covers the vertex-snapshot pairs once in expectation at 5 %% x 20 %%\n",
           o->threads, (long long)epochs);
    int status = TF_OK;
    double *seconds = calloc((size_t)(5 * epochs), sizeof *seconds), *mse = calloc((size_t)(5 * epochs), sizeof *mse);
    for (int d = 0; status == TF_OK && d < datasets; d++) {
        dataset set;
        if ((status = dataset_load(data[d], NULL, &set, err)) != TF_OK)
            break;
        printf("\n%s: %lld vertices, %lld snapshots\n%-20s %12s %14s %14s %16s\n", labels[d],
               (long long)set.snapshots.num_nodes, (long long)set.snapshots.num_snapshots, "batching", "epoch s",
               "final test MSE", "best test MSE", "s to 1.05 x best");
        for (int k = 0; status == TF_OK && k < 5; k++) {
            status = training_run(&set.snapshots, batchings[k], shares[k], 0, epochs, seconds + k * epochs,
                                  mse + k * epochs, err);
            for (int64_t e = 0; status == TF_OK && e < epochs; e++)
                fprintf(csv, "%s,\"%s\",%lld,%g,%.9g\n", labels[d], names[k], (long long)e + 1, seconds[k * epochs + e],
                        mse[k * epochs + e]);
        }
        /* the target: 1.05 x the best final test MSE of the set (DynaHB's Table 8 asks the time to reach an
         * accuracy) */
        double best_final = INFINITY;
        for (int k = 0; k < 5; k++)
            best_final = fmin(best_final, mse[k * epochs + epochs - 1]);
        for (int k = 0; status == TF_OK && k < 5; k++) {
            double total = 0, reached = NAN, best = INFINITY;
            for (int64_t e = 0; e < epochs; e++) {
                total += seconds[k * epochs + e];
                best = fmin(best, mse[k * epochs + e]);
                if (isnan(reached) && mse[k * epochs + e] <= 1.05 * best_final)
                    reached = total;
            }
            printf("%-20s %12.3f %14.6f %14.6f %16.3f\n", names[k], total / (double)epochs, mse[k * epochs + epochs - 1],
                   best, reached);
        }
        fflush(stdout);
        dataset_free(&set);
    }
    free(seconds);
    free(mse);
    if (bench_csv_close(&file, status == TF_OK, err) < 0 || status != TF_OK)
        return -1;
    /* batch building against training, and the reservoir that takes it off the training thread */
    dataset tennis;
    if (dataset_load("twitter_tennis", NULL, &tennis, err) != TF_OK)
        return -1;
    double inline_seconds[3], inline_mse[3], reservoir_seconds[3], reservoir_mse[3];
    status = training_run(&tennis.snapshots, BATCHING_FIXED, 0.05, 0, 3, inline_seconds, inline_mse, err);
    if (status == TF_OK)
        status = training_run(&tennis.snapshots, BATCHING_FIXED, 0.05, 1, 3, reservoir_seconds, reservoir_mse, err);
    hybrid_source source;
    const int64_t train = (int64_t)(0.8 * (double)tennis.snapshots.num_snapshots);
    if (status == TF_OK)
        status = hybrid_source_create(&source, &tennis.snapshots, train, HYBRID_BALANCED_GROUPS, err);
    if (status == TF_OK) {
        int32_t *scratch = malloc((size_t)tennis.snapshots.num_nodes * sizeof *scratch);
        memset(scratch, 0xff, (size_t)tennis.snapshots.num_nodes * sizeof *scratch);
        model_config config = {MODEL_TGCN, tennis.snapshots.feature_width, 32, tennis.snapshots.target_width, 2, 0};
        model m;
        status = model_create(&m, &config, 1, err);
        m.kernels = &opt_kernels;
        double build = 0, step = 0;
        const hybrid_sizes sizes = {train / 5, tennis.snapshots.num_nodes / 20};
        for (int q = 0; status == TF_OK && q < 50; q++) {
            hybrid_batch b;
            double started = wall_seconds(), loss;
            status = hybrid_batch_build(&b, &source, sizes, 1, HYBRID_STREAM, (uint64_t)q, scratch, err);
            build += wall_seconds() - started;
            started = wall_seconds();
            if (status == TF_OK)
                status = hybrid_batch_gradient(&m, &b, 1.0f, &loss, err);
            step += wall_seconds() - started;
            hybrid_batch_free(&b);
        }
        if (status == TF_OK)
            printf("\ntwitter_tennis, 50 batches of %lld x %lld: building %.3f ms per batch, forward + backward %.3f ms "
                   "(building is %.0f %% of a batch's time on the training thread)\n"
                   "epoch time, 3 epochs of 5 %% x 20 %%: batches built inline %.3f s, from a reservoir with one "
                   "generator thread %.3f s (final test MSE %.6f and %.6f: reused batches change the run)\n",
                   (long long)sizes.targets, (long long)sizes.snapshots, 1e3 * build / 50, 1e3 * step / 50,
                   100 * build / (build + step), (inline_seconds[0] + inline_seconds[1] + inline_seconds[2]) / 3,
                   (reservoir_seconds[0] + reservoir_seconds[1] + reservoir_seconds[2]) / 3, inline_mse[2],
                   reservoir_mse[2]);
        model_free(&m);
        free(scratch);
        hybrid_source_free(&source);
    }
    dataset_free(&tennis);
    if (status == TF_OK)
        printf("\nCSV: %s/hybrid.csv\n", o->out);
    return status == TF_OK ? 0 : -1;
}
