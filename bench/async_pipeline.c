/* Chapter 05's Sven pipelining measurement, on the MPI ranks it runs on (bench/async_pipeline.sh):
 * the distributed event trainer (Sven's dispatch) plain, with prefetching, with micro-batches,
 * with stale gradients and with all three, each for the same epochs from the same start.
 *
 *   mpiexec -n R build/bench/bench_async_pipeline [--data SPEC] [--epochs E] [--batch B] [--width W]
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
            status = node_memory_create(&out->memory, events->num_nodes, config->memory_width,
                                        event_model_mail_width(&tr.base.model), err);
    }
    if (status == TF_OK)
        status = opt_event_trainer_gather_memory(&tr, world->rank == 0 ? &out->memory : NULL, err);
    if (status == TF_OK)
        status = opt_event_trainer_traffic(&tr, &out->traffic, 1, err);
    event_pipeline_free(&p);
    opt_event_trainer_free(&tr);
    return status;
}

static int64_t memory_differences(const node_memory *a, const node_memory *b)
{
    return differing_values(a->memory, b->memory, a->num_nodes * a->memory_width) +
           differing_values(a->mail, b->mail, a->num_nodes * a->mail_width) +
           differing_doubles(a->memory_time, b->memory_time, a->num_nodes) +
           differing_doubles(a->mail_time, b->mail_time, a->num_nodes);
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
    const char *speaker = world.rank == 0 ? PROGRAM : NULL; /* one rank reports a bad argument */
    for (int i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = 1;
        if (!strcmp(argv[i], "--data") && value)
            data = value;
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
    event_model_config_default(&config, EVENT_MODEL_TGN);
    config.memory_width = config.time_width = config.embedding_width = width;
    config.edge_width = d.events.feature_width;
    event_train_options options;
    event_train_options_default(&options);
    options.batch_size = batch;
    if (world.rank == 0)
        printf("%d rank(s): %s\ndata %s (%lld events), TGN width %lld, batch %lld, %lld epochs per configuration, "
               "Sven's dispatch, hash placement\n\n",
               world.size, reason, data, (long long)d.events.num_events, (long long)width, (long long)batch,
               (long long)epochs);
    measured m[CONFIGURATIONS];
    memset(m, 0, sizeof m);
    int wrong = 0;
    for (int c = 0; c < CONFIGURATIONS; c++) {
        if (run(&configurations[c], &d.events, &config, &options, epochs, &world, &m[c], &err) != TF_OK) {
            fprintf(stderr, "rank %d: %s\n", world.rank, err.message);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    if (world.rank == 0) {
        const dispatch_bytes *plain = &m[0].traffic.bytes;
        const uint64_t R = (uint64_t)world.size;
        printf("%-44s %9s %9s %9s %10s %12s %10s %9s %11s %9s  %s\n", "configuration", "epoch s", "vs plain",
               "plan wait", "rows B/ep", "ids B/ep", "counts B", "grad B/ep", "other B/ep", "test AP", "check");
        for (int c = 0; c < CONFIGURATIONS; c++) {
            const configuration *k = &configurations[c];
            const dispatch_bytes *b = &m[c].traffic.bytes;
            const int n = k->micro_batches ? k->micro_batches : 1;
            const uint64_t extra = 8 * (uint64_t)(n - 1) * R * (R - 1) * (uint64_t)m[c].trained_batches;
            int ok = b->dispatch_rows == plain->dispatch_rows && b->aggregation == plain->aggregation &&
                     b->requests == plain->requests && b->gradients == plain->gradients && b->other == plain->other &&
                     b->counts == plain->counts + extra;
            if (k->micro_batches == 0 && k->staleness == 0) /* prefetching only: the same training, bit for bit */
                ok = ok && memory_differences(&m[c].memory, &m[0].memory) == 0 &&
                     differing_values(m[c].parameters, m[0].parameters, m[0].parameter_count) == 0 &&
                     m[c].test_ap == m[0].test_ap;
            wrong += !ok;
            const double e = (double)epochs;
            printf("%-44s %9.3f %8.1f%% %9.3f %10.0f %12.0f %10.0f %9.0f %11.0f %9.4f  %s\n", k->name,
                   m[c].median_seconds, 100.0 * (m[0].median_seconds - m[c].median_seconds) / m[0].median_seconds,
                   m[c].wait_seconds / e, (double)(b->dispatch_rows + b->aggregation) / e, (double)b->requests / e,
                   (double)b->counts / e, (double)b->gradients / e, (double)b->other / e, m[c].test_ap,
                   ok ? "ok" : "WRONG");
        }
        printf("\n'vs plain' is the time saved, (t_plain - t) / t_plain; 'plan wait' is the main thread's seconds per "
               "epoch in building or waiting for plans. check: every byte category equal to the plain run's (counts: plus "
               "8 (n-1) R (R-1) per training batch); with prefetching only, also the node memory, the parameters and "
               "the test AP bit for bit (micro-batches add their gradients in another order, into double sums rounded "
               "once, so equal bits are likely, not guaranteed; staleness 1 is another training; both are checked "
               "per batch by verify/test_async_pipeline_mpi)\n#wrong %d\n",
               wrong);
    }
    for (int c = 0; c < CONFIGURATIONS; c++) {
        free(m[c].parameters);
        node_memory_free(&m[c].memory);
    }
    dataset_free(&d);
    comm_finalize(&world);
    return wrong ? 1 : 0;
}
