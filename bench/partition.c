/* Chapter 06's benchmark (build/bench/bench partition [--quick] [--out DIR]): the partitioners on
 * the chapter's datasets at R = 2 .. 64 in one process: edge cut, vertices, DynaHB load imbalance,
 * halo rows, cache replication at depth 1 and at GC-LSTM's depth for windows of 8, exchange bytes
 * per epoch (T-GCN and GC-LSTM, H = 32, counted from the graph) and the partitioner's seconds;
 * metrics.csv. `bench partition_traffic`: PSS, PTS and DGC's chunks (whole sequences, and
 * spatio-temporal) with T-GCN's and DySAT's spatial and temporal bytes (partition_split_traffic(),
 * ref/partition.h); traffic.csv. Training is measured under mpiexec by bench/partition.sh; the table's
 * entry, technique_partition, is verify/techniques/partition.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/benchmark.h"
#include "datasets/dataset.h"
#include "ref/core/clock.h"
#include "ref/core/memory.h"
#include "ref/partition.h"
#include "ref/partition_chunks.h"

/* One CSV row per (dataset, method, R). */
static int measure_one(FILE *csv, const char *name, const snapshot_seq *seq, partition_method method, int ranks,
                       tf_error *err)
{
    partition_options o;
    partition_options_default(&o);
    o.ranks = ranks;
    partition p;
    double started = wall_seconds();
    if (ref_partition_snapshots(seq, method, &o, &p, err) != TF_OK)
        return TF_ERR_INPUT;
    const double seconds = wall_seconds() - started;
    const model_config tgcn = {MODEL_TGCN, seq->feature_width, 32, seq->target_width, 2, 0};
    const model_config gclstm = {MODEL_GCLSTM, seq->feature_width, 32, seq->target_width, 2, 0};
    const int64_t train = (int64_t)(0.8 * (double)seq->num_snapshots);
    const int deep = partition_cache_depth(&gclstm, 8);
    int status = TF_OK;
    if (p.vertex_owner) {
        partition_metrics shallow, wide;
        int64_t tgcn_bytes = 0, gclstm_bytes = 0;
        status = partition_measure(seq, p.vertex_owner, ranks, 1, 1, MODEL_TGCN, &shallow, err);
        if (status == TF_OK)
            status = partition_measure(seq, p.vertex_owner, ranks, 1, deep, MODEL_GCLSTM, &wide, err);
        if (status == TF_OK)
            status = partition_exchange_bytes(seq, p.vertex_owner, ranks, &tgcn, train, 8, 0, &tgcn_bytes, err);
        if (status == TF_OK)
            status = partition_exchange_bytes(seq, p.vertex_owner, ranks, &gclstm, train, 8, 0, &gclstm_bytes, err);
        if (status == TF_OK) {
            const double mean_vertices = (double)seq->num_nodes / ranks;
            fprintf(csv, "%s,%s,%d,%.4f,%.4f,%.4f,%.4f,%lld,%.4f,%.4f,%lld,%lld,%.4f\n", name,
                    partition_method_name(method), ranks,
                    100.0 * (double)shallow.cut_edges / (double)(shallow.total_edges ? shallow.total_edges : 1),
                    (double)shallow.vertices_max / mean_vertices, shallow.load_max_over_mean,
                    isinf(shallow.load_max_over_min) ? -1.0 : shallow.load_max_over_min, (long long)shallow.halo_rows,
                    shallow.replication, wide.replication, (long long)tgcn_bytes, (long long)gclstm_bytes, seconds);
            printf("  %-15s %-7s R %2d  cut %6.2f%%  load max/mean %6.3f  halo %9lld  replication %5.2f / %5.2f  "
                   "bytes/epoch tgcn %11lld gclstm %12lld  (%.3f s)\n",
                   name, partition_method_name(method), ranks,
                   100.0 * (double)shallow.cut_edges / (double)(shallow.total_edges ? shallow.total_edges : 1),
                   shallow.load_max_over_mean, (long long)shallow.halo_rows, shallow.replication, wide.replication,
                   (long long)tgcn_bytes, (long long)gclstm_bytes, seconds);
            partition_metrics_free(&wide);
        }
        partition_metrics_free(&shallow);
    } else if (p.snapshot_owner) { /* pss: load over snapshot blocks and the state rows crossing them */
        int64_t *load = tf_alloc((size_t)ranks, sizeof *load, "pss loads", err), boundary = 0;
        if (!load)
            status = TF_ERR_INPUT;
        else {
            partition_pss_costs(seq, p.snapshot_owner, ranks, load, &boundary);
            double largest = 0, total = 0;
            for (int r = 0; r < ranks; r++) {
                largest = fmax(largest, (double)load[r]);
                total += (double)load[r];
            }
            fprintf(csv, "%s,pss,%d,,,%.4f,,%lld,1,1,0,0,%.4f\n", name, ranks, largest / (total / ranks),
                    (long long)boundary, seconds);
            printf("  %-15s pss     R %2d  load max/mean %6.3f  state rows crossing blocks %lld\n", name, ranks,
                   largest / (total / ranks), (long long)boundary);
        }
        free(load);
    } else { /* dgc-st: spatial and temporal super-graph cut, work balance */
        double *work = tf_alloc((size_t)ranks, sizeof *work, "dgc-st work", err);
        int64_t spatial = 0, temporal = 0;
        status = work ? partition_dgc_steps_costs(seq, &o, p.step_owner, &spatial, &temporal, work, err) : TF_ERR_INPUT;
        if (status == TF_OK) {
            double largest = 0, smallest = INFINITY, total = 0;
            for (int r = 0; r < ranks; r++) {
                largest = fmax(largest, work[r]);
                smallest = fmin(smallest, work[r]);
                total += work[r];
            }
            fprintf(csv, "%s,dgc-st,%d,,,%.4f,%.4f,,,,%lld,%lld,%.4f\n", name, ranks, largest / (total / ranks),
                    smallest > 0 ? largest / smallest : -1.0, (long long)spatial, (long long)temporal, seconds);
            printf("  %-15s dgc-st  R %2d  work max/mean %6.3f  super-graph cut: spatial %lld, temporal %lld floats  "
                   "(%.3f s)\n",
                   name, ranks, largest / (total / ranks), (long long)spatial, (long long)temporal, seconds);
        }
        free(work);
    }
    partition_free(&p);
    return status;
}

int partition_benchmark(const benchmark_options *options, tf_error *err)
{
    static const char *const full[][2] = {
        {"twitter_tennis", "twitter_tennis"},
        {"england_covid", "england_covid"},
        {"montevideo_bus", "montevideo_bus"},
        {"los", "los"},
        {"powerlaw:nodes=50000,edges=100000,snapshots=10,arrival=0.02,exponent=2.1,features=2,seed=1", "powerlaw_1e6"},
    };
    static const char *const quick[][2] = {
        {"england_covid", "england_covid"},
        {"powerlaw:nodes=2000,edges=4000,snapshots=5,arrival=0.02,exponent=2.1,features=2,seed=1", "powerlaw_2e4"},
    };
    const partition_method methods[] = {PARTITION_HASH, PARTITION_PTS,    PARTITION_METIS, PARTITION_DYNAHB,
                                        PARTITION_DGC,  PARTITION_PSS,    PARTITION_DGC_ST};
    const int count = options->quick ? 2 : 5;
    output_file file;
    if (bench_csv_open(&file, options->out, "metrics.csv", 0, err) != TF_OK)
        return -1;
    FILE *csv = file.stream;
    fprintf(csv, "dataset,method,ranks,cut_percent,vertices_max_over_mean,load_max_over_mean,load_max_over_min,"
                 "halo_rows,replication_depth1,replication_gclstm_w8,bytes_tgcn_h32,bytes_gclstm_h32,seconds\n");
    printf("partition metrics, one process (pss: load = present + edges per snapshot block; dgc-st: cost-model work "
           "and super-graph cut). Replication at depth 1 / GC-LSTM's depth for windows of 8; bytes per epoch counted "
           "from the graph, windows of 8.\n");
    int status = TF_OK;
    for (int i = 0; status == TF_OK && i < count; i++) {
        const char *spec = options->quick ? quick[i][0] : full[i][0], *name = options->quick ? quick[i][1] : full[i][1];
        dataset d;
        if ((status = dataset_load(spec, NULL, &d, err)) != TF_OK)
            break;
        for (int ranks = 2; status == TF_OK && ranks <= 64; ranks *= 2) {
            if (ranks > d.snapshots.num_nodes) {
                printf("  %-15s R %2d skipped: more ranks than its %lld vertices\n", name, ranks,
                       (long long)d.snapshots.num_nodes);
                continue;
            }
            for (size_t m = 0; status == TF_OK && m < sizeof methods / sizeof *methods; m++) {
                if (methods[m] == PARTITION_PSS && ranks > d.snapshots.num_snapshots)
                    continue;
                status = measure_one(csv, name, &d.snapshots, methods[m], ranks, err);
            }
            fflush(csv);
        }
        dataset_free(&d);
    }
    if (bench_csv_close(&file, status == TF_OK, err) < 0 || status != TF_OK)
        return -1;
    printf("wrote %s/metrics.csv (training under mpiexec: bench/partition.sh)\n", options->out);
    return 0;
}

/* One line of the traffic table: @p method at @p ranks for T-GCN and DySAT (H = 32, windows of 8); the chunkers
 * weigh their edges with the model they place (partition_options::model). */
static int traffic_one(FILE *csv, const char *name, const snapshot_seq *seq, partition_method method, int ranks,
                       int32_t *owner, tf_error *err)
{
    const model_kind kinds[2] = {MODEL_TGCN, MODEL_DYSAT};
    int64_t spatial[2] = {0, 0}, temporal[2] = {0, 0};
    int status = TF_OK;
    for (int k = 0; status == TF_OK && k < 2; k++) {
        partition_options o;
        partition_options_default(&o);
        o.ranks = ranks;
        o.model = (model_config){kinds[k], seq->feature_width, 32, seq->target_width, 2, 0};
        partition p;
        if ((status = ref_partition_snapshots(seq, method, &o, &p, err)) != TF_OK)
            break;
        partition_step_owners(&p, owner);
        status = partition_split_traffic(seq, owner, ranks, &o.model, 8, &spatial[k], &temporal[k], err);
        partition_free(&p);
        if (status == TF_OK)
            fprintf(csv, "%s,%s,%d,%s,%lld,%lld\n", name, partition_method_name(method), ranks, model_kind_name(kinds[k]),
                    (long long)spatial[k], (long long)temporal[k]);
    }
    char ratio[32] = "-"; /* DySAT's temporal bytes over T-GCN's, where T-GCN has any */
    if (temporal[0])
        snprintf(ratio, sizeof ratio, "%.2f", (double)temporal[1] / (double)temporal[0]);
    if (status == TF_OK)
        printf("  %-16s %-6s R %d  tgcn spatial %8lld temporal %8lld  dysat spatial %8lld temporal %9lld  "
               "dysat/tgcn temporal %s\n",
               name, partition_method_name(method), ranks, (long long)spatial[0], (long long)temporal[0],
               (long long)spatial[1], (long long)temporal[1], ratio);
    return status;
}

int partition_traffic_benchmark(const benchmark_options *options, tf_error *err)
{
    static const char *const full[][2] = {
        {"twitter_tennis", "twitter_tennis"},
        {"england_covid", "england_covid"},
        {"powerlaw:nodes=2000,edges=8000,snapshots=24,arrival=0.05,churn=0.1,seed=1", "powerlaw_arrival"},
    };
    const partition_method methods[] = {PARTITION_PSS, PARTITION_PTS, PARTITION_DGC, PARTITION_DGC_ST};
    const int count = options->quick ? 1 : 3;
    output_file file;
    if (bench_csv_open(&file, options->out, "traffic.csv", 0, err) != TF_OK)
        return -1;
    FILE *csv = file.stream;
    fprintf(csv, "dataset,method,ranks,model,spatial_bytes,temporal_bytes\n");
    printf("bytes of one pass in windows of 8, forward and backward, H = 32, counted from the graph "
           "(partition_split_traffic): spatial = the structure encoder's halo rows (X_t for both models), temporal = "
           "a vertex's rows read from another rank (T-GCN's GRU: the previous snapshot's state; DySAT's attention: "
           "every earlier snapshot of the window). pss: snapshot blocks; pts: vertex ranges; dgc: DGC's chunks of "
           "whole sequences; dgc-st: its spatio-temporal chunks (weighed with the model placed).\n");
    int status = TF_OK;
    for (int i = 0; status == TF_OK && i < count; i++) {
        dataset d;
        if ((status = dataset_load(full[i][0], NULL, &d, err)) != TF_OK)
            break;
        const snapshot_seq *seq = &d.snapshots;
        int32_t *owner = tf_alloc((size_t)(seq->num_snapshots * seq->num_nodes), sizeof *owner, "owners", err);
        status = owner ? TF_OK : TF_ERR_INPUT;
        for (int ranks = 2; status == TF_OK && ranks <= 8 && ranks <= seq->num_snapshots; ranks *= 2)
            for (size_t m = 0; status == TF_OK && m < sizeof methods / sizeof *methods; m++)
                status = traffic_one(csv, full[i][1], seq, methods[m], ranks, owner, err);
        free(owner);
        dataset_free(&d);
    }
    if (bench_csv_close(&file, status == TF_OK, err) < 0 || status != TF_OK)
        return -1;
    printf("wrote %s/traffic.csv\n", options->out);
    return 0;
}
