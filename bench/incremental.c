/* ReInc's incremental aggregation (chapters/02-incremental.md): the benchmark. The table's entry,
 * technique_incremental, is verify/techniques/incremental.c; every point here runs through it.
 *
 * build/bench/bench incremental [--quick] [--threads N] [--out DIR], three parts:
 *  1. churn: on generated power-law graphs of 10^6 edges (10^5 vertices, 16 features, a churn
 *     fraction of edges replaced and of vertices given new features per step: degrees=0), per
 *     aggregator, the technique with two twins: the delta (threshold infinity, so it never falls
 *     back) and the twin's own full recompute (opt_incremental_reset). Prints entries per edge,
 *     the mean time per delta of each, the ratios, and the crossover: the delta size (entries per
 *     edge) at which the delta stops being faster than the twin's full recompute, which fixes
 *     INCREMENTAL_DEFAULT_THRESHOLD.
 *  2. cache: replays the global-cache accesses of ReInc's workload (a GraphRNN encoder-decoder
 *     with teacher forcing, sequences of L = 8, stride 1, input width 128, as the paper's
 *     GCRN-M2 runs) through the cache at capacities 0..100 % of all snapshots' input
 *     aggregations, ReInc's policy and LRU, and prints the hit rates (of the accesses that can
 *     hit: all but each snapshot's first) beside the paper's; and ReInc's closed form for F
 *     beside the count in the trace.
 *  3. epoch: T-GCN and GConvGRU (K = 2) training epochs on a generated graph: the reference
 *     (recompute in every window), the optimized kernels alone, and the optimized kernels with
 *     incremental inputs (T-GCN's A^ X_t, GConvGRU's L^ X_t); every epoch's loss must agree
 *     within fp first. The two opt runs take turns epoch by epoch (a slow spell of a shared
 *     machine falls on both); the median and spread of epochs 2 .. E are reported, and the ratio
 *     that isolates the technique is opt recompute / opt incremental. GC-LSTM has no aggregation
 *     of X_t (its input term is X_t W), so no row.
 * CSV files: churn.csv, cache.csv, epoch.csv in DIR; bench/incremental.gp plots the first two.
 * Times are on whatever machine runs this; the chapter names its machine. The twins run N OpenMP threads
 * (default 1: the ratio is the algorithm's, not the core count's). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/benchmark.h"
#include "datasets/dataset.h"
#include "opt/incremental.h"
#include "opt/incremental_cache.h"
#include "opt/incremental_inputs.h"
#include "opt/kernels.h"
#include "ref/core/clock.h"
#include "ref/nn/compare.h"
#include "ref/incremental.h"
#include "ref/core/memory.h"
#include "ref/train.h"
#include "verify/techniques/incremental.h"

/* ---- 1. time against churn ------------------------------------------------------------ */

typedef struct churn_point {
    double entries_per_edge, ref_full, opt_full, incremental;
} churn_point;

/* engine_options::inspect: delta entries per current edge over snapshots 1 .. T-1. */
static void inspect_entries(void *context, const void *state)
{
    *(double *)context = incremental_entries_per_edge(state);
}

/* Returns the number of wrong points, or -1 when something failed to run. */
static int churn_sweep(const benchmark_options *o, FILE *csv, double *threshold_out, tf_error *err)
{
    static const double churns[] = {0.001, 0.003, 0.01, 0.03, 0.1, 0.2, 0.35, 0.5};
    const int churn_count = o->quick ? 3 : (int)(sizeof churns / sizeof churns[0]);
    const int64_t edges = o->quick ? 20000 : 1000000, snapshots = 6; /* 5 deltas, each timed */
    fprintf(csv, "aggregator,churn,entries_per_edge,ref_full_s,opt_full_s,incremental_s,speedup_vs_ref,"
                 "speedup_vs_opt_full,error\n");
    printf("== 1. aggregation time against churn: %lld edges, %lld vertices, 16 features, mean over %lld deltas "
           "(twins: best of %d runs) ==\n",
           (long long)edges, (long long)(edges / 10), (long long)(snapshots - 1), o->repeats);
    printf("%-9s %6s %8s %10s %10s %10s %9s %9s %10s\n", "aggr", "churn", "entr/edge", "ref full", "opt full",
           "increment", "x ref", "x opt", "error");
    churn_point points[AGGREGATOR_COUNT][8];
    incremental_params params = {{INFINITY, 0}, 1}; /* never fall back, no refresh; both twins */
    engine_options engine = {.timed = 1, .repeats = o->repeats, .threads = o->threads, .inspect = inspect_entries};
    int wrong = 0;
    for (int c = 0; c < churn_count; c++) {
        char spec[256];
        snprintf(spec, sizeof spec, "powerlaw:nodes=%lld,edges=%lld,snapshots=%lld,churn=%g,features=16,degrees=0,seed=7",
                 (long long)(edges / 10), (long long)edges, (long long)snapshots, churns[c]);
        dataset d;
        if (dataset_load(spec, NULL, &d, err) != TF_OK)
            return -1;
        for (int k = 0; k < AGGREGATOR_COUNT; k++) {
            engine_result r;
            churn_point *pt = &points[k][c];
            engine.inspect_context = &pt->entries_per_edge;
            if (engine_run(&technique_incremental, &d, &params, k, &engine, &r, err) != TF_OK) {
                dataset_free(&d);
                return -1;
            }
            double error = r.error[0];
            if (r.wrong) {
                printf("%-9s %5.1f%% WRONG: %s error %g (worst at snapshot %lld); no speed reported\n",
                       aggregator_name((aggregator)k), 100 * churns[c],
                       r.twin[0].equality == TECHNIQUE_BITWISE ? "values differing" : "fp", error,
                       (long long)r.worst_step[0]);
                wrong++;
                continue;
            }
            const double deltas = (double)(snapshots - 1);
            pt->ref_full = r.seconds[0] / deltas;
            pt->incremental = r.seconds[1] / deltas;
            pt->opt_full = r.seconds[2] / deltas;
            printf("%-9s %5.1f%% %8.4f %9.2fms %9.2fms %9.3fms %8.1fx %8.1fx %10.2g\n", aggregator_name((aggregator)k),
                   100 * churns[c], pt->entries_per_edge, 1e3 * pt->ref_full, 1e3 * pt->opt_full,
                   1e3 * pt->incremental, pt->ref_full / pt->incremental, pt->opt_full / pt->incremental, error);
            fprintf(csv, "%s,%g,%g,%g,%g,%g,%g,%g,%g\n", aggregator_name((aggregator)k), churns[c],
                    pt->entries_per_edge, pt->ref_full, pt->opt_full, pt->incremental,
                    pt->ref_full / pt->incremental, pt->opt_full / pt->incremental, error);
        }
        dataset_free(&d);
    }
    if (wrong)
        return wrong;
    /* Crossover: where the delta's time meets the twin's full recompute, interpolated in
     * entries per edge between the last point faster and the first slower, per aggregator. */
    double smallest = INFINITY, largest = 0;
    for (int k = 0; k < AGGREGATOR_COUNT; k++) {
        double crossover = NAN;
        for (int c = 1; c < churn_count; c++) {
            const churn_point *a = &points[k][c - 1], *b = &points[k][c];
            double ra = a->opt_full / a->incremental, rb = b->opt_full / b->incremental;
            if (ra >= 1 && rb < 1) {
                double f = (ra - 1) / (ra - rb);
                crossover = a->entries_per_edge + f * (b->entries_per_edge - a->entries_per_edge);
                break;
            }
        }
        if (isnan(crossover))
            printf("crossover %-9s: not reached in this sweep (the delta stays %s)\n", aggregator_name((aggregator)k),
                   points[k][churn_count - 1].opt_full >= points[k][churn_count - 1].incremental ? "faster" : "slower");
        else
            printf("crossover %-9s: %.3f delta entries per edge\n", aggregator_name((aggregator)k), crossover);
        if (!isnan(crossover)) {
            smallest = fmin(smallest, crossover);
            largest = fmax(largest, crossover);
        }
    }
    threshold_out[0] = smallest;
    threshold_out[1] = largest;
    return 0;
}

/* ---- 2. cache hit rate against capacity --------------------------------------------------- */

/* One access of ReInc's trace. */
typedef struct access {
    int64_t key;
    int64_t count;       /* floats */
    double imminence;
    int64_t future;      /* accesses of this key after this one (filled by a backward scan) */
} access;

typedef struct trace {
    access *items;   /* [count] */
    int64_t count;
} trace;

/* ReInc's workload, seq-first: for each sequence start s (stride S), the encoder runs
 * snapshots s .. s+L-1 and the decoder, fed the ground truth (teacher forcing), s+L .. s+2L-1.
 * Each cell reads its snapshot's input aggregation from the global cache once and shares it
 * among its K gates (reuse across gates happens inside the cell, as in ref/models/model_tgcn.c); the
 * hidden-state aggregations live in the per-layer local caches for one cell (F = K - g) and
 * never compete with the global cache, so the global cache sees one access per cell. F of
 * every access (how many later accesses the same snapshot has) is exact, from a backward scan. */
static int reinc_trace(int64_t snapshots, int64_t length, int64_t stride, int64_t input_floats, trace *tr,
                       tf_error *err)
{
    const int64_t sequences = snapshots >= 2 * length ? (snapshots - 2 * length) / stride + 1 : 0;
    tr->count = 0;
    tr->items = tf_alloc((size_t)(sequences * 2 * length), sizeof *tr->items, "cache trace", err);
    int64_t *seen = tr->items ? tf_alloc((size_t)snapshots, sizeof *seen, "cache trace counts", err) : NULL;
    if (!seen) {
        free(tr->items);
        return err->code;
    }
    for (int64_t s = 0; s + 2 * length <= snapshots; s += stride)
        for (int part = 0; part < 2; part++) /* 0 encoder, 1 decoder */
            for (int64_t idx = 0; idx < length; idx++)
                tr->items[tr->count++] = (access){s + part * length + idx, input_floats,
                                                  part == 0 ? (double)(length - stride) : (double)(length - 1), 0};
    for (int64_t i = tr->count - 1; i >= 0; i--)
        tr->items[i].future = seen[tr->items[i].key]++;
    free(seen);
    return TF_OK;
}

static double replay(const trace *tr, cache_policy policy, int64_t capacity_bytes)
{
    incremental_cache c;
    tf_error err;
    incremental_cache_init(&c, policy, capacity_bytes, 0);
    for (int64_t i = 0; i < tr->count; i++) {
        const access *a = &tr->items[i];
        if (!incremental_cache_get(&c, a->key, NULL))
            incremental_cache_put(&c, a->key, NULL, a->count, a->future, a->imminence, &err);
    }
    double rate = incremental_cache_hit_rate(&c);
    incremental_cache_free(&c);
    return rate;
}

static int cache_sweep(int quick, FILE *csv, tf_error *err)
{
    const int64_t snapshots = quick ? 24 : 100, length = 8, stride = 1, nodes = 1000;
    const int gates = 4;
    trace tr;
    if (reinc_trace(snapshots, length, stride, nodes * 128, &tr, err) != TF_OK)
        return -1;
    /* The data size: every snapshot's input aggregation once. */
    const int64_t data_bytes = snapshots * nodes * 128 * (int64_t)sizeof(float);
    printf("\n== 2. global cache hit rate against capacity: ReInc's workload (encoder-decoder with teacher forcing, "
           "L = %lld, S = %lld, %lld snapshots), %lld accesses of which %lld can hit, data %.1f MB ==\n",
           (long long)length, (long long)stride, (long long)snapshots, (long long)tr.count,
           (long long)(tr.count - snapshots), (double)data_bytes / 1e6);
    printf("%8s %8s %8s   paper (ReInc / LRU)   [hit rates of all accesses]\n", "capacity", "ReInc", "LRU");
    fprintf(csv, "capacity,reinc_hit_rate,lru_hit_rate\n"); /* of the accesses that can hit */
    static const double capacities[] = {0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
    for (size_t i = 0; i < sizeof capacities / sizeof capacities[0]; i++) {
        int64_t bytes = (int64_t)(capacities[i] * (double)data_bytes);
        double reinc = replay(&tr, CACHE_REINC, bytes), lru = replay(&tr, CACHE_LRU, bytes);
        const double reusable = (double)(tr.count - snapshots) / (double)tr.count;
        const char *paper = capacities[i] == 0.1   ? "52 % / 0 %"
                            : capacities[i] == 0.6 ? "100 % / 78 %"
                            : capacities[i] >= 0.2 && capacities[i] <= 0.8 ? "    - / 78 %"
                                                                            : "";
        printf("%7.0f%% %7.1f%% %7.1f%%   %-13s        [%.1f %% / %.1f %%]\n", 100 * capacities[i],
               100 * reinc / reusable, 100 * lru / reusable, paper, 100 * reinc, 100 * lru);
        fprintf(csv, "%g,%g,%g\n", capacities[i], reinc / reusable, lru / reusable);
    }
    /* The paper's closed form for F of a global entry cached by the encoder, against the trace. */
    printf("F of the input aggregation first computed at encoder position idx, in gate accesses (cells x K = %d): "
           "trace vs ReInc's max(1, 2 idx - 2 S + 1) K - g at g = 0\n", gates);
    for (int64_t idx = 0; idx < length; idx += 3) {
        /* the first sequence (s = 0) computes snapshot idx at encoder position idx, gate 0 */
        int64_t position = 0, seen = 0;
        for (int64_t i = 0; i < tr.count; i++)
            if (tr.items[i].key == idx) {
                position = i;
                seen = 1;
                break;
            }
        long long paper = (long long)((2 * idx - 2 * stride + 1 > 1 ? 2 * idx - 2 * stride + 1 : 1) * gates - 0);
        if (seen)
            printf("  idx %lld: trace %lld, paper %lld\n", (long long)idx,
                   (long long)((tr.items[position].future + 1) * gates - 1), paper);
    }
    free(tr.items);
    return 0;
}

/* ---- 3. end-to-end epochs ----------------------------------------------------------------- */

/* Epochs of the two opt runs in section 3: the first warms up (first touch of every buffer, the
 * cache filling), the rest are timed. */
enum { EPOCHS_FULL = 6, EPOCHS_QUICK = 3 };

static int compare_seconds(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median, smallest and largest of seconds[0 .. count) (sorted in place). */
static void spread(double *seconds, int count, double out[3])
{
    qsort(seconds, (size_t)count, sizeof *seconds, compare_seconds);
    out[0] = count % 2 ? seconds[count / 2] : 0.5 * (seconds[count / 2 - 1] + seconds[count / 2]);
    out[1] = seconds[0];
    out[2] = seconds[count - 1];
}

/* Train one epoch of @p tr; its wall time in *seconds, its train loss in *loss. */
static int timed_epoch(trainer *tr, const dataset *d, double *seconds, double *loss)
{
    tf_error err;
    epoch_report report;
    double start = wall_seconds();
    if (trainer_epoch(tr, &d->snapshots, &report, &err) != TF_OK) {
        fprintf(stderr, "bench incremental: %s\n", err.message);
        return 1;
    }
    *seconds = wall_seconds() - start;
    *loss = report.train_loss;
    return 0;
}

/* 1 (and a WRONG line) when the loss of run @p name in epoch @p e is more than 1e-5 relative from
 * @p expected, the loss of @p against. */
static int loss_wrong(const char *name, int e, double loss, const char *against, double expected)
{
    if (fabs(loss - expected) / fmax(1.0, fabs(expected)) <= 1e-5)
        return 0;
    printf("WRONG: %s, epoch %d: loss %.9g, %s %.9g; no speed reported\n", name, e + 1, loss, against, expected);
    return 1;
}

/* One model on d: the reference (two epochs, the second timed: the "x ref" column and the losses
 * both opt runs must match), then the two opt runs, recompute and incremental inputs, created side
 * by side and trained epoch by epoch in turn, so a slow spell of a shared machine falls on both
 * rather than on one. Epoch 1 warms up; the median and spread of epochs 2 .. E are reported, and
 * their ratio is the technique's gain. Every epoch's loss is checked first: the served run's
 * against the recompute's (and the reference's for epochs 1 and 2). Returns 1 when one disagrees. */
static int epoch_model(const dataset *d, const char *spec, model_kind kind, int k, int epochs, FILE *csv)
{
    tf_error err;
    train_options opts;
    train_options_default(&opts);
    opts.window = 8;
    opts.stride = 2;
    opts.batch = 1;
    opts.epochs = epochs;
    model_config config = {kind, 0, 16, 0, k, 0};
    const char *names[3] = {"ref (recompute in every window)", "opt kernels, recompute",
                            "opt kernels + incremental inputs and cache"};
    double reference_seconds = 0, reference_losses[2] = {0}, seconds[3][EPOCHS_FULL], losses[3][EPOCHS_FULL];
    double build_seconds = 0;
    trainer tr[3];
    incremental_inputs inputs;
    int created = 0, served = 0, status = 0;

    /* the reference: two epochs, the second timed */
    if (trainer_create(&tr[0], &d->snapshots, &config, &opts, &err) != TF_OK) {
        fprintf(stderr, "bench incremental: %s\n", err.message);
        return 1;
    }
    for (int e = 0; e < 2 && status == 0; e++)
        status = timed_epoch(&tr[0], d, &reference_seconds, &reference_losses[e]);
    trainer_free(&tr[0]);

    for (int v = 1; v < 3 && status == 0; v++) {
        if (trainer_create(&tr[v], &d->snapshots, &config, &opts, &err) != TF_OK) {
            fprintf(stderr, "bench incremental: %s\n", err.message);
            status = 1;
            break;
        }
        created = v;
        tr[v].model.kernels = &opt_kernels;
    }
    if (status == 0) {
        double start = wall_seconds();
        incremental_inputs_options options;
        incremental_inputs_options_default(&options);
        if (incremental_inputs_create(&inputs, &d->snapshots, &tr[2], NULL, &options, &err) != TF_OK) {
            fprintf(stderr, "bench incremental: %s\n", err.message);
            status = 1;
        } else {
            tr[2].model.inputs = &inputs.source;
            served = 1;
            build_seconds = wall_seconds() - start;
        }
    }
    for (int e = 0; e < epochs && status == 0; e++)
        for (int v = 1; v < 3 && status == 0; v++)
            status = timed_epoch(&tr[v], d, &seconds[v][e], &losses[v][e]);
    int64_t produced = 0, deltas = 0, fulls = 0;
    if (served) {
        produced = inputs.produced;
        deltas = inputs.engine.stats.incremental;
        fulls = inputs.engine.stats.full;
        incremental_inputs_free(&inputs);
    }
    for (int v = 1; v <= created; v++)
        trainer_free(&tr[v]);
    if (status != 0)
        return 1;

    printf("\n-- %s, K = %d: hidden 16, window 8, stride 2, on %s\n", model_kind_name(kind), k, spec);
    for (int e = 0; e < epochs; e++) {
        for (int v = 1; v < 3 && e < 2; v++)
            if (loss_wrong(names[v], e, losses[v][e], "the reference", reference_losses[e]))
                return 1;
        if (loss_wrong(names[2], e, losses[2][e], names[1], losses[1][e]))
            return 1;
    }
    printf("every epoch's loss agrees within 1e-5 (epochs 1-2 with the reference, 1-%d between the opt runs)\n",
           epochs);
    double summary[3][3] = {{reference_seconds, reference_seconds, reference_seconds}};
    for (int v = 1; v < 3; v++)
        spread(seconds[v] + 1, epochs - 1, summary[v]);
    printf("%-44s %9s %19s %9s %15s\n", "", "median", "spread", "x ref", "x opt recompute");
    for (int v = 0; v < 3; v++) {
        char range[48];
        snprintf(range, sizeof range, "%.3f-%.3f s", summary[v][1], summary[v][2]);
        printf("%-44s %7.3f s %19s %8.2fx %14.2fx\n", names[v], summary[v][0], v ? range : "(epoch 2 only)",
               summary[0][0] / summary[v][0], summary[1][0] / summary[v][0]);
        fprintf(csv, "%s,%d,\"%s\",%d,%g,%g,%g,%g,%g\n", model_kind_name(kind), k, names[v], v ? epochs - 1 : 1,
                summary[v][0], summary[v][1], summary[v][2], summary[0][0] / summary[v][0],
                summary[1][0] / summary[v][0]);
    }
    printf("(median of epochs 2-%d, the two opt runs taking turns epoch by epoch; the reference: epoch 2)\n", epochs);
    printf("incremental inputs over %d epochs: engine produced %lld answers (%lld full recomputes, %lld deltas); "
           "building the deltas took %.2f s once, before training\n",
           epochs, (long long)produced, (long long)fulls, (long long)deltas, build_seconds);
    return 0;
}

static int epoch_compare(int quick, FILE *csv)
{
    tf_error err;
    dataset d;
    const char *spec = quick ? "powerlaw:nodes=2000,edges=20000,snapshots=24,churn=0.01,features=64,degrees=0,seed=5"
                             : "powerlaw:nodes=20000,edges=200000,snapshots=40,churn=0.01,features=64,degrees=0,seed=5";
    if (dataset_load(spec, NULL, &d, &err) != TF_OK) {
        fprintf(stderr, "bench incremental: %s\n", err.message);
        return 1;
    }
    printf("\n== 3. training epochs: recompute against incremental inputs, same runs ==\n");
    fprintf(csv, "model,k,variant,timed_epochs,median_seconds,min_seconds,max_seconds,speedup_vs_ref,"
                 "speedup_vs_opt_recompute\n");
    const int epochs = quick ? EPOCHS_QUICK : EPOCHS_FULL;
    int status = epoch_model(&d, spec, MODEL_TGCN, 1, epochs, csv);
    if (status == 0)
        status = epoch_model(&d, spec, MODEL_GCONVGRU, 2, epochs, csv);
    if (status == 0)
        printf("\n-- gclstm: no row; its input term is X_t W, a product with a parameter, and it convolves H only: "
               "there is no aggregation of X_t to serve\n");
    dataset_free(&d);
    return status;
}

int incremental_benchmark(const benchmark_options *o, tf_error *err)
{
    printf("opt side: %d OpenMP thread(s); ref: one thread\n", o->threads);
    const char *files[3] = {"churn.csv", "cache.csv", "epoch.csv"};
    output_file csv[3] = {{0}, {0}, {0}};
    int status = 0;
    for (int i = 0; i < 3 && status == 0; i++)
        if (bench_csv_open(&csv[i], o->out, files[i], 0, err) != TF_OK)
            status = -1;
    double crossovers[2] = {NAN, NAN};
    if (status == 0)
        status = churn_sweep(o, csv[0].stream, crossovers, err);
    if (status == 0) {
        printf("=> crossovers between %.2f and %.2f delta entries per edge (INCREMENTAL_DEFAULT_THRESHOLD = %g)\n",
               crossovers[0], crossovers[1], INCREMENTAL_DEFAULT_THRESHOLD);
        status = cache_sweep(o->quick, csv[1].stream, err);
    }
    if (status == 0)
        status = epoch_compare(o->quick, csv[2].stream);
    for (int i = 0; i < 3; i++)
        if (bench_csv_close(&csv[i], status >= 0, err) < 0)
            status = -1;
    if (status == 0)
        printf("\nCSV in %s: %s, %s, %s\n", o->out, files[0], files[1], files[2]);
    return status;
}
