/* DGC's temporal and spatial fusion (chapters/03-fusion.md): the benchmark. The table's entries,
 * technique_fusion_temporal and technique_fusion_spatial, are verify/techniques/fusion.c.
 *
 * build/bench/bench fusion [--quick] [--threads N] [--repeats N] [--out DIR]:
 * temporal on real lifetimes (twitter_tennis; collegemsg events in 64 snapshots) and on generated
 * length distributions, GRU and LSTM, hidden 32: computed steps per useful step, lane occupancy,
 * the time of the reference, padded and fused; spatial on twitter_tennis and a generated graph at
 * three caps: bytes per chunk and fused, load times. Every point runs through engine_run(), so a
 * twin that is not equal gets WRONG and no time. CSV: fusion_temporal.csv, fusion_spatial.csv in
 * DIR; bench/fusion.gp turns them into chapters/03-fusion.svg. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/benchmark.h"
#include "datasets/dataset.h"
#include "opt/fusion.h"
#include "verify/techniques/fusion.h"

/* engine_options::inspect for temporal points: the plans' shape. */
typedef struct plan_shape {
    double padded_per_useful, fused_per_useful, padded_occupancy, fused_occupancy;
    int64_t lanes;
} plan_shape;

static void inspect_plans(void *context, const void *state)
{
    const fusion_plan *plan = fusion_temporal_plans(state); /* [2] padded, fused */
    *(plan_shape *)context = (plan_shape){fusion_plan_computed_per_useful(&plan[0]),
                                          fusion_plan_computed_per_useful(&plan[1]), fusion_plan_occupancy(&plan[0]),
                                          fusion_plan_occupancy(&plan[1]), plan[1].num_lanes};
}

/* One temporal case, GRU and LSTM: a row each, appended to the CSV. Returns the wrong rows. */
static int temporal_case(const char *name, const sequence_set *set, const benchmark_options *o, FILE *csv,
                         tf_error *err)
{
    int wrong = 0;
    for (int kind = TIME_ENCODER_GRU; kind <= TIME_ENCODER_LSTM; kind++) {
        temporal_params params = {set, 32};
        plan_shape shape = {0};
        engine_options engine = {.timed = 1, .repeats = o->repeats, .threads = o->threads, .inspect = inspect_plans,
                                 .inspect_context = &shape};
        engine_result r;
        if (engine_run(&technique_fusion_temporal, NULL, &params, kind, &engine, &r, err) != TF_OK)
            return -1;
        const char *cell = technique_fusion_temporal.variants[kind];
        printf("%-20s %-4s %7lld %8lld %5lld | %6.2f %5.2f %5.3f %6lld | %8.1e %8.1e |", name, cell,
               (long long)set->count, (long long)set->total_steps, (long long)set->max_length, shape.padded_per_useful,
               shape.fused_per_useful, shape.fused_occupancy, (long long)shape.lanes, r.error[0], r.error[1]);
        if (r.wrong) {
            printf(" WRONG: not equal to the reference, not timed\n");
            wrong++;
            continue;
        }
        const double ref = r.seconds[0], padded = r.seconds[1], fused = r.seconds[2];
        printf(" %9.1f %9.1f %9.1f | %6.2fx %6.1fx\n", 1e3 * ref, 1e3 * padded, 1e3 * fused, padded / fused,
               ref / fused);
        fprintf(csv, "\"%s\",%s,%lld,%lld,%lld,%.4f,%.4f,%.4f,%.4f,%lld,%.3e,%.3e,%.4f,%.4f,%.4f\n", name, cell,
                (long long)set->count, (long long)set->total_steps, (long long)set->max_length,
                shape.padded_per_useful, shape.fused_per_useful, shape.padded_occupancy, shape.fused_occupancy,
                (long long)shape.lanes, r.error[0], r.error[1], 1e3 * ref, 1e3 * padded, 1e3 * fused);
    }
    fflush(stdout);
    return wrong;
}

/* engine_options::inspect for spatial points: the byte counts. */
static void inspect_groups(void *context, const void *state)
{
    *(fusion_groups *)context = fusion_spatial_groups(state); /* the counts only: arrays are not kept */
}

/* One spatial case. Returns 1 for a wrong result, 0 when right, -1 on failure. */
static int spatial_case(const char *name, const dataset *data, int64_t chunks, double cap, FILE *csv, tf_error *err)
{
    spatial_params params = {chunks, cap};
    fusion_groups groups = {0};
    engine_options engine = {.timed = 1, .repeats = 1, .threads = 1, .inspect = inspect_groups, .inspect_context = &groups};
    engine_result r;
    if (engine_run(&technique_fusion_spatial, data, &params, 0, &engine, &r, err) != TF_OK)
        return -1;
    if (r.wrong) {
        printf("%-20s %6lld %5.2f | WRONG: %.0f values differ from per-chunk loading (or groups over the cap)\n", name,
               (long long)chunks, cap, r.error[0]);
        return 1;
    }
    printf("%-20s %6lld %5.2f %7lld | %12lld %12lld %6.1f%% | %8.1f %8.1f\n", name, (long long)chunks, cap,
           (long long)groups.count, (long long)groups.unfused_bytes, (long long)groups.fused_bytes,
           100.0 * (1.0 - (double)groups.fused_bytes / (double)groups.unfused_bytes), 1e3 * r.seconds[0],
           1e3 * r.seconds[1]);
    fprintf(csv, "\"%s\",%lld,%.2f,%lld,%lld,%lld,%.4f,%.4f\n", name, (long long)chunks, cap, (long long)groups.count,
            (long long)groups.unfused_bytes, (long long)groups.fused_bytes, 1e3 * r.seconds[0], 1e3 * r.seconds[1]);
    return 0;
}

/* DIR/NAME through bench_csv_open(), @p header its first line; the stream, or NULL. */
static FILE *open_csv(output_file *csv, const char *directory, const char *name, const char *header, tf_error *err)
{
    if (bench_csv_open(csv, directory, name, 0, err) != TF_OK)
        return NULL;
    fprintf(csv->stream, "%s\n", header);
    return csv->stream;
}

/* Adds a case's outcome: wrong rows, or a failure (negative). */
static void tally(int outcome, int *wrong, int *failed)
{
    if (outcome < 0)
        *failed = 1;
    else
        *wrong += outcome;
}

int fusion_benchmark(const benchmark_options *o, tf_error *err)
{
    output_file files[2] = {{0}, {0}}; /* the two CSV files: renamed into place at the end */
    FILE *temporal = open_csv(&files[0], o->out, "fusion_temporal.csv",
                              "data,cell,sequences,useful_steps,max_length,padded_computed_per_useful,"
                              "fused_computed_per_useful,padded_occupancy,fused_occupancy,lanes,padded_error,"
                              "fused_error,ref_ms,padded_ms,fused_ms",
                              err);
    FILE *spatial = temporal ? open_csv(&files[1], o->out, "fusion_spatial.csv",
                                        "data,chunks,cap_fraction,groups,unfused_bytes,fused_bytes,alone_ms,fused_ms", err)
                             : NULL;
    if (!spatial) {
        bench_csv_close(&files[0], 0, err);
        return -1;
    }
    printf("temporal fusion: time encoder input 16, hidden 32, %d thread(s), best of %d runs; one forward + "
           "backward (ms)\n",
           o->threads, o->repeats);
    printf("%-20s %-4s %7s %8s %5s | %6s %5s %5s %6s | %8s %8s | %9s %9s %9s | %7s %7s\n", "data", "cell", "seqs",
           "steps", "T_max", "padded", "fused", "occup", "lanes", "err pad", "err fuse", "ref ms", "padded", "fused",
           "vs pad", "vs ref");
    printf("%-20s %-4s %7s %8s %5s | %-19s %6s |\n", "", "", "", "", "", "computed/useful", "");
    int wrong = 0, failed = 0;
    dataset tennis = {0}, messages = {0}, generated = {0};
    sequence_set set;
    if (dataset_load("twitter_tennis", NULL, &tennis, err) == TF_OK &&
        sequence_set_from_snapshots(&tennis.snapshots, 1, &set, err) == TF_OK) {
        tally(temporal_case("tennis 120 h", &set, o, temporal, err), &wrong, &failed);
        sequence_set_free(&set);
    } else {
        failed = 1, fprintf(stderr, "%s\n", err->message);
    }
    if (dataset_load("collegemsg", NULL, &messages, err) == TF_OK &&
        sequence_set_from_events(&messages.events, 64, &set, err) == TF_OK) {
        tally(temporal_case("collegemsg 64 snap.", &set, o, temporal, err), &wrong, &failed);
        sequence_set_free(&set);
    } else {
        failed = 1, fprintf(stderr, "%s\n", err->message);
    }
    const int64_t count = o->quick ? 2000 : 10000;
    const length_distribution kinds[3] = {LENGTHS_HEAVY_TAILED, LENGTHS_UNIFORM, LENGTHS_EQUAL};
    static const char *const short_names[3] = {"heavy-tailed", "uniform", "equal"};
    for (int k = 0; k < 3; k++) {
        char name[64];
        snprintf(name, sizeof name, "%s T 64", short_names[k]);
        if (sequence_set_generate(kinds[k], kinds[k] == LENGTHS_EQUAL ? count / 10 : count, 64, 11, &set, err) ==
            TF_OK) {
            tally(temporal_case(name, &set, o, temporal, err), &wrong, &failed);
            sequence_set_free(&set);
        } else {
            failed = 1, fprintf(stderr, "%s\n", err->message);
        }
    }

    printf("\nspatial fusion: bytes = snapshots x loaded vertices x features x 4; load time in ms\n");
    printf("%-20s %6s %5s %7s | %12s %12s %7s | %8s %8s\n", "data", "chunks", "cap", "groups", "per-chunk B",
           "fused B", "saved", "alone", "fused");
    if (tennis.kind == DATASET_SNAPSHOTS && tennis.snapshots.num_snapshots > 0) {
        const double caps[3] = {0.3, 0.6, 1.0};
        for (int k = 0; k < 3; k++)
            tally(spatial_case("tennis 120 h", &tennis, 16, caps[k], spatial, err), &wrong, &failed);
    }
    const char *spec = o->quick ? "powerlaw:nodes=5000,edges=25000,snapshots=8,seed=4"
                                : "powerlaw:nodes=20000,edges=100000,snapshots=8,seed=4";
    if (dataset_load(spec, NULL, &generated, err) == TF_OK) {
        const double caps[3] = {0.1, 0.25, 0.5};
        for (int k = 0; k < 3; k++)
            tally(spatial_case(o->quick ? "powerlaw 5k, 8 snap." : "powerlaw 20k, 8 snap.", &generated, 32, caps[k],
                               spatial, err),
                  &wrong, &failed);
    } else {
        failed = 1, fprintf(stderr, "%s\n", err->message);
    }
    dataset_free(&tennis), dataset_free(&messages), dataset_free(&generated);
    for (int k = 0; k < 2; k++) /* the rows measured are kept, also when another case failed */
        if (bench_csv_close(&files[k], 1, err) < 0)
            failed = 1, fprintf(stderr, "%s\n", err->message);
    printf("\nCSV in %s/fusion_temporal.csv and %s/fusion_spatial.csv\n", o->out, o->out);
    return failed ? -1 : wrong;
}
