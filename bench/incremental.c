/* ReInc's incremental aggregation and cache, measured (chapters/02-incremental.md).
 *
 *   build/bench/bench_incremental [--quick] [--threads N] [--out DIR]
 *
 * Three parts, each validating before it times:
 *  1. churn: on generated power-law graphs of 10^6 edges (10^5 vertices, 16 features, a churn
 *     fraction of edges replaced and of vertices given new features per step: degrees=0), per
 *     aggregator, the time to bring the aggregation from snapshot t-1 to t by the reference's
 *     full recompute (ref_aggregate), the twin's full recompute (opt_incremental_reset) and
 *     the twin's delta (opt_incremental_advance, threshold infinity). The incremental result is
 *     compared with the reference first (fp for sum/mean/symmetric, bitwise for max/min); a
 *     wrong answer prints WRONG and no speed. Prints entries per edge, edges/s, the ratios, and
 *     the crossover: the delta size (entries per edge) at which the delta stops being faster
 *     than the twin's full recompute, which fixes INCREMENTAL_DEFAULT_THRESHOLD.
 *  2. cache: replays the global-cache accesses of ReInc's workload (a GraphRNN encoder-decoder
 *     with teacher forcing, sequences of L = 8, stride 1, input width 128, as the paper's
 *     GCRN-M2 runs) through the cache at capacities 0..100 % of all snapshots' input
 *     aggregations, ReInc's policy and LRU, and prints the hit rates (of the accesses that can
 *     hit: all but each snapshot's first) beside the paper's; and ReInc's closed form for F
 *     beside the count in the trace.
 *  3. epoch: T-GCN training epochs on a generated graph: the reference (recompute in every
 *     window), the optimized kernels alone, and the optimized kernels with incremental inputs;
 *     the loss must agree within fp first.
 * CSV files go to DIR (default bench_incremental_out): churn.csv, cache.csv, epoch.csv;
 * bench/incremental.gp plots them. --quick shrinks everything (a smoke test, not a measurement).
 * Times are medians over 5 deltas (part 1) on whatever machine runs this; the chapter names
 * its machine. The opt side runs N OpenMP threads (default 1: ref and opt on one core each,
 * the ratio is the algorithm's, not the core count's). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "datasets/dataset.h"
#include "datasets/generate.h"
#include "opt/incremental.h"
#include "opt/incremental_cache.h"
#include "opt/incremental_inputs.h"
#include "opt/kernels.h"
#include "ref/clock.h"
#include "ref/incremental.h"
#include "ref/train.h"

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, compare_doubles);
    return t[n / 2];
}

/* ---- 1. time against churn ------------------------------------------------------------ */

typedef struct churn_point {
    double entries_per_edge, ref_full, opt_full, incremental;
} churn_point;

static int churn_sweep(int quick, FILE *csv, double *threshold_out)
{
    static const double churns[] = {0.001, 0.003, 0.01, 0.03, 0.1, 0.2, 0.35, 0.5};
    const int churn_count = quick ? 3 : (int)(sizeof churns / sizeof churns[0]);
    const int64_t edges = quick ? 20000 : 1000000, snapshots = 6; /* 5 deltas, each timed */
    fprintf(csv, "aggregator,churn,entries_per_edge,ref_full_s,opt_full_s,incremental_s,speedup_vs_ref,speedup_vs_opt_full,"
                 "error\n");
    printf("== 1. aggregation time against churn: %lld edges, %lld vertices, 16 features, median over %lld deltas ==\n",
           (long long)edges, (long long)(edges / 10), (long long)(snapshots - 1));
    printf("%-9s %6s %8s %10s %10s %10s %9s %9s %10s\n", "aggr", "churn", "entr/edge", "ref full", "opt full",
           "increment", "x ref", "x opt", "error");
    churn_point points[AGGREGATOR_COUNT][8];
    for (int c = 0; c < churn_count; c++) {
        powerlaw_params p;
        powerlaw_params_default(&p);
        p.num_edges = edges;
        p.num_nodes = edges / 10;
        p.num_snapshots = snapshots;
        p.churn = churns[c];
        p.feature_width = 16;
        p.degree_features = 0;
        p.seed = 7;
        snapshot_seq seq;
        tf_error err;
        if (generate_powerlaw(&p, &seq, &err) != TF_OK) {
            fprintf(stderr, "bench_incremental: %s\n", err.message);
            return 1;
        }
        const int64_t n = seq.num_nodes, width = seq.feature_width, cells = n * width;
        float *reference = malloc((size_t)cells * sizeof(float));
        for (int k = 0; k < AGGREGATOR_COUNT; k++) {
            incremental_options options = {INFINITY, 0};
            incremental_aggregation a, full;
            snapshot_delta *deltas;
            if (!reference || snapshot_delta_chain_build(&deltas, &seq, (aggregator)k, &err) != TF_OK ||
                opt_incremental_create(&a, (aggregator)k, n, width, &options, &err) != TF_OK ||
                opt_incremental_create(&full, (aggregator)k, n, width, &options, &err) != TF_OK) {
                fprintf(stderr, "bench_incremental: %s\n", err.message);
                return 1;
            }
            double ref_times[8], opt_times[8], inc_times[8], error = 0, entries = 0, edge_total = 0;
            opt_incremental_reset(&a, &seq.snapshots[0], 0);
            for (int64_t t = 1; t < snapshots; t++) {
                const snapshot *prev = &seq.snapshots[t - 1], *cur = &seq.snapshots[t];
                double start = wall_seconds();
                opt_incremental_advance(&a, prev, cur, &deltas[t], t);
                inc_times[t - 1] = wall_seconds() - start;
                start = wall_seconds();
                ref_aggregate(&cur->graph, cur->features.data, width, (aggregator)k, reference, &err);
                ref_times[t - 1] = wall_seconds() - start;
                start = wall_seconds();
                opt_incremental_reset(&full, cur, t);
                opt_times[t - 1] = wall_seconds() - start;
                /* validate: the chain against the reference, every snapshot: bitwise for max and
                 * min, within 1e-5 of the summed terms' size for the others (ref/incremental.h) */
                int extreme = k == AGGREGATOR_MAX || k == AGGREGATOR_MIN;
                double e = extreme ? (double)(memcmp(a.value, reference, (size_t)cells * sizeof(float)) != 0)
                                   : aggregation_error(&cur->graph, cur->features.data, width, (aggregator)k, a.value,
                                                       reference);
                error = fmax(error, e);
                if (extreme ? e != 0 : !(e >= 0 && e <= 1e-5)) {
                    printf("WRONG: %s at churn %g, snapshot %lld: error %g; no speed reported\n",
                           aggregator_name((aggregator)k), churns[c], (long long)t, e);
                    return 1;
                }
                entries += (double)snapshot_delta_entries(&deltas[t]);
                edge_total += (double)cur->graph.num_edges;
            }
            churn_point *pt = &points[k][c];
            pt->entries_per_edge = entries / edge_total;
            pt->ref_full = median(ref_times, (int)snapshots - 1);
            pt->opt_full = median(opt_times, (int)snapshots - 1);
            pt->incremental = median(inc_times, (int)snapshots - 1);
            printf("%-9s %5.1f%% %8.4f %9.2fms %9.2fms %9.3fms %8.1fx %8.1fx %10.2g\n", aggregator_name((aggregator)k),
                   100 * churns[c], pt->entries_per_edge, 1e3 * pt->ref_full, 1e3 * pt->opt_full,
                   1e3 * pt->incremental, pt->ref_full / pt->incremental, pt->opt_full / pt->incremental, error);
            fprintf(csv, "%s,%g,%g,%g,%g,%g,%g,%g,%g\n", aggregator_name((aggregator)k), churns[c],
                    pt->entries_per_edge, pt->ref_full, pt->opt_full, pt->incremental,
                    pt->ref_full / pt->incremental, pt->opt_full / pt->incremental, error);
            snapshot_delta_chain_free(deltas, snapshots);
            opt_incremental_free(&a);
            opt_incremental_free(&full);
        }
        free(reference);
        snapshot_seq_free(&seq);
    }
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
    access *items;
    int64_t count, allocated;
} trace;

static void trace_push(trace *tr, int64_t key, int64_t count, double imminence)
{
    if (tr->count == tr->allocated) {
        tr->allocated = tr->allocated ? 2 * tr->allocated : 4096;
        tr->items = realloc(tr->items, (size_t)tr->allocated * sizeof *tr->items);
        if (!tr->items) {
            fprintf(stderr, "bench_incremental: out of memory\n");
            exit(1);
        }
    }
    tr->items[tr->count++] = (access){key, count, imminence, 0};
}

/* ReInc's workload, seq-first: for each sequence start s (stride S), the encoder runs
 * snapshots s .. s+L-1 and the decoder, fed the ground truth (teacher forcing), s+L .. s+2L-1.
 * Each cell reads its snapshot's input aggregation from the global cache once and shares it
 * among its K gates (reuse across gates happens inside the cell, as in ref/model_tgcn.c); the
 * hidden-state aggregations live in the per-layer local caches for one cell (F = K - g) and
 * never compete with the global cache, so the global cache sees one access per cell. */
static trace reinc_trace(int64_t snapshots, int64_t length, int64_t stride, int64_t input_floats)
{
    trace tr = {0};
    for (int64_t s = 0; s + 2 * length <= snapshots; s += stride)
        for (int part = 0; part < 2; part++) /* 0 encoder, 1 decoder */
            for (int64_t idx = 0; idx < length; idx++)
                trace_push(&tr, s + part * length + idx, input_floats,
                           part == 0 ? (double)(length - stride) : (double)(length - 1));
    return tr;
}

/* F of every access: how many later accesses the same snapshot has (exact, from the trace). */
static void fill_future(trace *tr, int64_t snapshots)
{
    int64_t *seen = calloc((size_t)snapshots, sizeof *seen);
    if (!seen) {
        fprintf(stderr, "bench_incremental: out of memory\n");
        exit(1);
    }
    for (int64_t i = tr->count - 1; i >= 0; i--)
        tr->items[i].future = seen[tr->items[i].key]++;
    free(seen);
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

static void cache_sweep(int quick, FILE *csv)
{
    const int64_t snapshots = quick ? 24 : 100, length = 8, stride = 1, nodes = 1000;
    const int gates = 4;
    trace tr = reinc_trace(snapshots, length, stride, nodes * 128);
    fill_future(&tr, snapshots);
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
}

/* ---- 3. end-to-end epochs ----------------------------------------------------------------- */

static int epoch_compare(int quick, FILE *csv)
{
    tf_error err;
    dataset d;
    const char *spec = quick ? "powerlaw:nodes=2000,edges=20000,snapshots=24,churn=0.01,features=64,degrees=0,seed=5"
                             : "powerlaw:nodes=20000,edges=200000,snapshots=40,churn=0.01,features=64,degrees=0,seed=5";
    if (dataset_load(spec, NULL, &d, &err) != TF_OK) {
        fprintf(stderr, "bench_incremental: %s\n", err.message);
        return 1;
    }
    train_options opts;
    train_options_default(&opts);
    opts.window = 8;
    opts.stride = 2;
    opts.batch = 1;
    model_config config = {MODEL_TGCN, 0, 16, 0, 1};
    const char *names[3] = {"ref (recompute A^X in every window)", "opt kernels, recompute",
                            "opt kernels + incremental inputs and cache"};
    double times[3] = {0}, losses[3] = {0}, build_seconds = 0;
    incremental_inputs inputs;
    int64_t produced = 0, deltas = 0, fulls = 0;
    opts.epochs = 2;
    for (int v = 0; v < 3; v++) {
        trainer tr;
        if (trainer_create(&tr, &d.snapshots, &config, &opts, &err) != TF_OK) {
            fprintf(stderr, "bench_incremental: %s\n", err.message);
            return 1;
        }
        if (v > 0)
            tr.model.kernels = &opt_kernels;
        if (v == 2) {
            double start = wall_seconds();
            incremental_inputs_options options;
            incremental_inputs_options_default(&options);
            if (incremental_inputs_create(&inputs, &d.snapshots, &tr, NULL, &options, &err) != TF_OK) {
                fprintf(stderr, "bench_incremental: %s\n", err.message);
                return 1;
            }
            tr.model.inputs = &inputs.source;
            build_seconds = wall_seconds() - start;
        }
        /* Epoch 1 warms up (first touch of every buffer); epoch 2 is timed. */
        epoch_report report;
        double start = 0;
        for (int e = 0; e < 2; e++) {
            start = wall_seconds();
            if (trainer_epoch(&tr, &d.snapshots, &report, &err) != TF_OK) {
                fprintf(stderr, "bench_incremental: %s\n", err.message);
                return 1;
            }
        }
        times[v] = wall_seconds() - start;
        losses[v] = report.train_loss;
        if (v == 2) {
            produced = inputs.produced;
            deltas = inputs.engine.stats.incremental;
            fulls = inputs.engine.stats.full;
            incremental_inputs_free(&inputs);
        }
        trainer_free(&tr);
    }
    printf("\n== 3. T-GCN's second epoch (hidden 16, window 8, stride 2) on %s ==\n", spec);
    for (int v = 1; v < 3; v++)
        if (fabs(losses[v] - losses[0]) / fmax(1.0, fabs(losses[0])) > 1e-5) {
            printf("WRONG: %s loss %.9g, reference %.9g; no speed reported\n", names[v], losses[v], losses[0]);
            return 1;
        }
    fprintf(csv, "variant,seconds,speedup_vs_ref,train_loss\n");
    for (int v = 0; v < 3; v++) {
        printf("%-44s %8.2f s  %5.2fx  loss %.9g\n", names[v], times[v], times[0] / times[v], losses[v]);
        fprintf(csv, "\"%s\",%g,%g,%.9g\n", names[v], times[v], times[0] / times[v], losses[v]);
    }
    printf("incremental inputs over both epochs: engine produced %lld aggregations (%lld full recomputes, %lld deltas); "
           "building the deltas took %.2f s once, before training\n",
           (long long)produced, (long long)fulls, (long long)deltas, build_seconds);
    dataset_free(&d);
    return 0;
}

int main(int argc, char **argv)
{
    int quick = 0, threads = 1;
    const char *out = "bench_incremental_out";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            out = argv[++i];
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_incremental [--quick] [--threads N] [--out DIR]\n");
            return 2;
        }
    }
    if (threads < 1) {
        fprintf(stderr, "bench_incremental: --threads must be at least 1\n");
        return 2;
    }
    opt_set_threads(threads);
    printf("opt side: %d OpenMP thread(s); ref: one thread\n", threads);
    mkdir(out, 0755);
    char path[3][512];
    const char *files[3] = {"churn.csv", "cache.csv", "epoch.csv"};
    FILE *csv[3];
    for (int i = 0; i < 3; i++) {
        snprintf(path[i], sizeof path[i], "%s/%s", out, files[i]);
        if (!(csv[i] = fopen(path[i], "w"))) {
            fprintf(stderr, "bench_incremental: cannot write %s\n", path[i]);
            return 1;
        }
    }
    double crossovers[2] = {NAN, NAN};
    int status = churn_sweep(quick, csv[0], crossovers);
    if (status == 0) {
        printf("=> crossovers between %.2f and %.2f delta entries per edge (INCREMENTAL_DEFAULT_THRESHOLD = %g)\n",
               crossovers[0], crossovers[1], INCREMENTAL_DEFAULT_THRESHOLD);
        cache_sweep(quick, csv[1]);
        status = epoch_compare(quick, csv[2]);
    }
    for (int i = 0; i < 3; i++)
        fclose(csv[i]);
    if (status == 0)
        printf("\nCSV: %s, %s, %s\n", path[0], path[1], path[2]);
    return status;
}
