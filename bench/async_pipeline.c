/* Chapter 05a's Sven pipelining measurement, on the MPI ranks it runs on (bench/async_pipeline.sh):
 * the distributed event trainer (Sven's dispatch) plain, with prefetching, with micro-batches,
 * with stale gradients and with all three, each for the same epochs from the same start.
 *
 *   mpiexec -n R build/bench/bench_async_pipeline [--data SPEC] [--epochs E] [--batch B] [--width W]
 *                                                 [--model tgn|jodie|apan] [--kernels ref|opt] [--micro-batch-sweep]
 *
 * --kernels: the model's products in the reference's loops (ref, the default, as the committed TGN
 * table was measured) or in chapter 01's BLAS twins (opt, what `twofold train --impl opt` runs).
 *
 * --micro-batch-sweep runs instead n = 1 (the plain trainer), 2, 3 and 4 micro-batches and the
 * plain trainer once more, whose difference from the first is the noise level of this run; it
 * marks the fastest n and prints Sven's measured optimum for the batch size beside it (n = 2
 * below 800, 3 from 800 to 2,000, 4 above).
 *
 * Validates before it reports a time: every configuration's node memory after the run must be
 * bitwise the plain run's when only prefetching differs (and its parameters too), and every
 * configuration's row, id, gradient and other bytes must equal the plain run's exactly (counts:
 * plus 8 (n - 1) R (R - 1) per training batch for n micro-batches). A mismatch prints WRONG and
 * the program exits 1. Per configuration: the median epoch time (training and evaluation), the
 * main thread's seconds waiting for (or building) plans, the exact bytes per epoch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/benchmark.h"
#include "datasets/dataset.h"
#include "opt/async_pipeline.h"
#include "opt/kernels.h"
#include "ref/core/clock.h"
#include "ref/nn/compare.h"

#define PROGRAM "bench_async_pipeline"

typedef struct configuration {
    const char *name;
    int prefetch, micro_batches, staleness;
} configuration;

static const configuration configurations[] = {
    {"plain", -1, 0, 0},
    {"prefetch 2", 2, 0, 0},
    {"micro-batches 2", 0, 2, 0},
    {"micro-batches 4", 0, 4, 0},
    {"prefetch 2 + micro-batches 4", 2, 4, 0},
    {"staleness 1", 0, 0, 1},
    {"prefetch 2 + micro-batches 4 + staleness 1", 2, 4, 1},
};
enum { CONFIGURATIONS = sizeof configurations / sizeof *configurations };

/* --micro-batch-sweep: the first row is the reference of the byte checks, the last measures the noise. */
static const configuration sweep[] = {
    {"n = 1 (plain)", -1, 0, 0}, {"n = 2", 0, 2, 0}, {"n = 3", 0, 3, 0}, {"n = 4", 0, 4, 0},
    {"n = 1 again (noise)", -1, 0, 0},
};
enum { SWEEP = sizeof sweep / sizeof *sweep, MAX_CONFIGURATIONS = CONFIGURATIONS > SWEEP ? CONFIGURATIONS : SWEEP };

/* Sven's measured optimum on APAN-LASTFM (§5.5): the micro-batch count that was fastest per batch size. */
static int sven_optimum(int64_t batch)
{
    return batch < 800 ? 2 : batch <= 2000 ? 3 : 4;
}

typedef struct measured {
    double median_seconds, wait_seconds, test_ap;
    dispatch_traffic traffic;   /* the whole run, all ranks */
    int64_t trained_batches;    /* per rank, the whole run */
    float *parameters;
    int64_t parameter_count;
    node_memory memory;         /* rank 0: the union after the run */
} measured;

static int compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int run(const configuration *c, const event_stream *events, const event_model_config *config,
               const event_train_options *options, int64_t epochs, comm *world, measured *out, tf_error *err)
{
    opt_event_trainer tr;
    event_pipeline p;
    memset(&p, 0, sizeof p);
    if (opt_event_trainer_create(&tr, events, events->features, config, options, DISPATCH_SVEN, "hash", world,
                                 err) != TF_OK)
        return TF_ERR_INPUT;
    int status = c->prefetch >= 0 ? event_pipeline_create(&p, &tr, c->prefetch, c->staleness, c->micro_batches, err)
                                  : TF_OK;
    double seconds[64];
    event_epoch_report report;
    memset(&report, 0, sizeof report);
    for (int64_t e = 0; status == TF_OK && e < epochs; e++) {
        comm_barrier(world, err);
        const double start = wall_seconds();
        status = c->prefetch >= 0 ? opt_event_pipeline_epoch(&p, &report, NULL, NULL, err)
                                  : opt_event_trainer_epoch(&tr, &report, NULL, NULL, err);
        seconds[e] = wall_seconds() - start;
        out->trained_batches += report.batches;
    }
    if (status == TF_OK) {
        qsort(seconds, (size_t)epochs, sizeof *seconds, compare_doubles);
        out->median_seconds = seconds[epochs / 2];
        out->wait_seconds = p.wait_seconds;
        out->test_ap = report.test.average_precision;
        out->parameter_count = parameters_size(&tr.base.model.parameters);
        out->parameters = malloc((size_t)out->parameter_count * sizeof(float));
        parameters_pack_values(&tr.base.model.parameters, out->parameters);
        if (world->rank == 0)
            status = node_memory_create_mailbox(&out->memory, events->num_nodes, config->memory_width,
                                                event_model_mail_width(&tr.base.model), config->mails, err);
    }
    if (status == TF_OK)
        status = opt_event_trainer_gather_memory(&tr, world->rank == 0 ? &out->memory : NULL, err);
    if (status == TF_OK)
        status = opt_event_trainer_traffic(&tr, &out->traffic, 1, err);
    event_pipeline_free(&p);
    opt_event_trainer_free(&tr);
    return status;
}

/* Values whose bits differ: memory, every mail of every mailbox, both timestamps, ring positions. */
static int64_t memory_differences(const node_memory *a, const node_memory *b)
{
    int64_t ring = 0;
    for (int64_t v = 0; v < a->num_nodes; v++)
        ring += a->mail_next[v] != b->mail_next[v];
    return differing_values(a->memory, b->memory, a->num_nodes * a->memory_width) +
           differing_values(a->mail, b->mail, a->num_nodes * a->mails * a->mail_width) +
           differing_doubles(a->memory_time, b->memory_time, a->num_nodes) +
           differing_doubles(a->mail_time, b->mail_time, a->num_nodes * a->mails) + ring;
}

/* Checks every configuration against the first (bytes; bits where only prefetching differs), prints
 * the table on rank 0, and returns how many configurations are WRONG. */
static int report(const configuration *list, int count, const measured *m, int64_t epochs, int64_t batch,
                  int is_sweep, const comm *world)
{
    const dispatch_bytes *plain = &m[0].traffic.bytes;
    const uint64_t R = (uint64_t)world->size;
    int wrong = 0, fastest = 0;
    for (int c = 1; c < count; c++) /* the sweep's last row repeats n = 1: it measures noise, it does not compete */
        if ((!is_sweep || c < count - 1) && m[c].median_seconds < m[fastest].median_seconds)
            fastest = c;
    if (world->rank == 0)
        printf("%-44s %9s %9s %9s %10s %12s %10s %9s %11s %9s  %s\n", "configuration", "epoch s",
               is_sweep ? "vs n = 1" : "vs plain", "plan wait", "rows B/ep", "ids B/ep", "counts B", "grad B/ep",
               "other B/ep", "test AP", "check");
    for (int c = 0; c < count; c++) {
        const configuration *k = &list[c];
        const dispatch_bytes *b = &m[c].traffic.bytes;
        const int n = k->micro_batches ? k->micro_batches : 1;
        const uint64_t extra = 8 * (uint64_t)(n - 1) * R * (R - 1) * (uint64_t)m[c].trained_batches;
        int ok = b->dispatch_rows == plain->dispatch_rows && b->aggregation == plain->aggregation &&
                 b->requests == plain->requests && b->gradients == plain->gradients && b->other == plain->other &&
                 b->counts == plain->counts + extra;
        if (k->micro_batches == 0 && k->staleness == 0 && world->rank == 0) /* the same training, bit for bit */
            ok = ok && memory_differences(&m[c].memory, &m[0].memory) == 0 &&
                 differing_values(m[c].parameters, m[0].parameters, m[0].parameter_count) == 0 &&
                 m[c].test_ap == m[0].test_ap;
        wrong += !ok;
        const double e = (double)epochs;
        if (world->rank == 0)
            printf("%-44s %9.3f %8.1f%% %9.3f %10.0f %12.0f %10.0f %9.0f %11.0f %9.4f  %s%s\n", k->name,
                   m[c].median_seconds, 100.0 * (m[0].median_seconds - m[c].median_seconds) / m[0].median_seconds,
                   m[c].wait_seconds / e, (double)(b->dispatch_rows + b->aggregation) / e, (double)b->requests / e,
                   (double)b->counts / e, (double)b->gradients / e, (double)b->other / e, m[c].test_ap,
                   ok ? "ok" : "WRONG", is_sweep && c == fastest ? "  <- fastest" : "");
    }
    if (world->rank != 0)
        return wrong;
    if (is_sweep) {
        double second = -1; /* the runner-up among n = 1..4 */
        for (int c = 0; c < count - 1; c++)
            if (c != fastest && (second < 0 || m[c].median_seconds < second))
                second = m[c].median_seconds;
        const double noise = fabs(m[count - 1].median_seconds - m[0].median_seconds) / m[0].median_seconds;
        const double margin = (second - m[fastest].median_seconds) / second;
        printf("\nfastest n = %d, %.1f%% ahead of the runner-up; noise (the plain run twice): %.1f%%, so the "
               "ranking is %s. Sven's measured optimum for batch %lld (APAN-LASTFM, GPUs): n = %d\n",
               list[fastest].micro_batches ? list[fastest].micro_batches : 1, 100.0 * margin, 100.0 * noise,
               margin > noise ? "beyond the noise" : "within the noise", (long long)batch, sven_optimum(batch));
    }
    printf("\n'%s' is the time saved, (%s - t) / %s; 'plan wait' is the main thread's seconds per "
           "epoch in building or waiting for plans. check: every byte category equal to the plain run's (counts: "
           "plus 8 (n-1) R (R-1) per training batch); %s also the node memory, the parameters and the test AP bit "
           "for bit (micro-batches add their gradients in another order, into double sums rounded once, so equal "
           "bits are likely, not guaranteed; staleness 1 is another training; both are checked per batch by "
           "verify/test_async_pipeline_mpi)\n#wrong %d\n",
           is_sweep ? "vs n = 1" : "vs plain", is_sweep ? "t_1" : "t_plain", is_sweep ? "t_1" : "t_plain",
           is_sweep ? "for the plain run repeated," : "with prefetching only,", wrong);
    return wrong;
}

int main(int argc, char **argv)
{
    comm world;
    char reason[256];
    tf_error err;
    if (comm_init(&world, &argc, &argv, 0, reason, sizeof reason, &err) != TF_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    const char *data = "events:nodes=2000,events=20000,repeat=0.5,features=4,seed=5";
    int64_t epochs = 3, batch = 200, width = 32;
    event_model_kind kind = EVENT_MODEL_TGN;
    int is_sweep = 0, blas = 0;
    const char *speaker = world.rank == 0 ? PROGRAM : NULL; /* one rank reports a bad argument */
    for (int i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = 1;
        if (!strcmp(argv[i], "--micro-batch-sweep")) {
            is_sweep = 1;
            continue;
        }
        if (!strcmp(argv[i], "--data") && value)
            data = value;
        else if (!strcmp(argv[i], "--model") && value) {
            if ((ok = event_model_kind_parse(value, &kind, &err) == TF_OK) == 0 && speaker)
                fprintf(stderr, PROGRAM ": --model: %s\n", err.message);
        } else if (!strcmp(argv[i], "--kernels") && value && (!strcmp(value, "ref") || !strcmp(value, "opt")))
            blas = !strcmp(value, "opt");
        else if (!strcmp(argv[i], "--epochs"))
            ok = (epochs = bench_parse_count(speaker, "--epochs", value, 64)) > 0;
        else if (!strcmp(argv[i], "--batch"))
            ok = (batch = bench_parse_count(speaker, "--batch", value, 1000000)) > 0;
        else if (!strcmp(argv[i], "--width"))
            ok = (width = bench_parse_count(speaker, "--width", value, 1024)) > 0;
        else if ((ok = 0), speaker)
            fprintf(stderr, PROGRAM ": bad argument %s\n", argv[i]);
        if (!ok) { /* every rank parses the same arguments: all stop here */
            comm_finalize(&world);
            return 2;
        }
        i++;
    }
    dataset d;
    if (dataset_load(data, NULL, &d, &err) != TF_OK || d.kind != DATASET_EVENTS) {
        if (world.rank == 0)
            fprintf(stderr, "bench_async_pipeline: %s\n", d.kind != DATASET_EVENTS ? "needs an event stream"
                                                                                 : err.message);
        comm_finalize(&world);
        return 2;
    }
    event_model_config config;
    event_model_config_default(&config, kind);
    config.memory_width = config.time_width = config.embedding_width = width;
    config.edge_width = d.events.feature_width;
    event_train_options options;
    event_train_options_default(&options);
    options.batch_size = batch;
    options.kernels = blas ? &opt_kernels : NULL;
    const char *model = kind == EVENT_MODEL_TGN ? "TGN" : kind == EVENT_MODEL_JODIE ? "JODIE" : "APAN";
    if (world.rank == 0)
        printf("%d rank(s): %s\ndata %s (%lld events), %s width %lld, batch %lld, %lld epochs per configuration, "
               "Sven's dispatch, hash placement%s\n\n",
               world.size, reason, data, (long long)d.events.num_events, model, (long long)width, (long long)batch,
               (long long)epochs, blas ? ", opt (BLAS) kernels" : "");
    const configuration *list = is_sweep ? sweep : configurations;
    const int count = is_sweep ? SWEEP : CONFIGURATIONS;
    measured m[MAX_CONFIGURATIONS];
    memset(m, 0, sizeof m);
    for (int c = 0; c < count; c++) {
        if (run(&list[c], &d.events, &config, &options, epochs, &world, &m[c], &err) != TF_OK) {
            fprintf(stderr, "rank %d: %s\n", world.rank, err.message);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    const int wrong = report(list, count, m, epochs, batch, is_sweep, &world);
    for (int c = 0; c < count; c++) {
        free(m[c].parameters);
        node_memory_free(&m[c].memory);
    }
    dataset_free(&d);
    comm_finalize(&world);
    return wrong ? 1 : 0;
}
