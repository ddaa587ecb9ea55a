/* bench_fusion: DGC's temporal and spatial fusion on this machine's CPU (chapter 03).
 *
 * Temporal: for real vertex lifetimes (twitter_tennis activity, collegemsg events grouped into
 * snapshots) and generated length distributions, the computed steps per useful
 * step and the lane occupancy of the zero-padded batch and of fused lanes, then the time of one
 * forward + backward of the time encoder for the per-sequence reference, padded and fused.
 * Every case is validated against the reference first (fusion_measure(), opt/fusion_measure.h):
 * a twin that is not fp-equal gets "WRONG" and no time, and the program exits 1.
 *
 * Spatial: bytes loaded when every chunk loads its own vertices and halo, and when groups of
 * chunks chosen by the paper's rule (largest shared load first, under a memory cap) load their
 * union once; each chunk's rows out of the union are compared with memcmp before anything is
 * printed. Bytes = snapshots x loaded vertices x features x 4.
 *
 * Writes fusion_temporal.csv and fusion_spatial.csv into --out (default: the current
 * directory); bench/fusion.gp turns them into chapters/03-fusion.svg:
 *     build/bench/bench_fusion --out build && gnuplot -e "dir='build'" bench/fusion.gp */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/dataset.h"
#include "opt/cli/cli.h"
#include "opt/fusion.h"
#include "opt/fusion_measure.h"
#include "opt/kernels.h"
#include "ref/fusion.h"

static const char usage[] =
    "usage: bench_fusion [--out DIR] [--threads N] [--repeats N] [--hidden H] [--quick]\n"
    "  --out DIR     where fusion_temporal.csv and fusion_spatial.csv go (default .)\n"
    "  --threads N   OpenMP threads of the twins (default 1; the reference is single-threaded)\n"
    "  --repeats N   timed runs of each twin, best kept; runs over 1 s are not repeated (default 3)\n"
    "  --hidden H    state width of the time encoder (default 32; input width 16)\n"
    "  --quick       smaller generated sets, for a fast check\n";

typedef struct options {
    const char *out;
    int64_t threads, repeats, hidden;
    int quick;
    int help;
} options;

/* One temporal case: prints a row per cell kind and appends it to the CSV. Returns the number
 * of wrong results (0 or more), or -1 when something failed to run. */
static int temporal_case(const char *name, const sequence_set *set, const options *o, FILE *csv)
{
    int wrong = 0;
    for (int kind = TIME_ENCODER_GRU; kind <= TIME_ENCODER_LSTM; kind++) {
        tf_error err;
        fusion_measurement m;
        if (fusion_measure(set, (time_encoder_kind)kind, 16, o->hidden, (int)o->repeats, 7, &m, &err) != TF_OK) {
            fprintf(stderr, "bench_fusion: %s: %s\n", name, err.message);
            return -1;
        }
        const char *cell = kind == TIME_ENCODER_GRU ? "GRU" : "LSTM";
        printf("%-20s %-4s %7lld %8lld %5lld | %6.2f %5.2f %5.3f %6lld | %8.1e %8.1e |", name, cell,
               (long long)m.sequences, (long long)m.useful_steps, (long long)m.max_length, m.padded_computed_per_useful,
               m.fused_computed_per_useful, m.fused_occupancy, (long long)m.lanes, m.padded_error, m.fused_error);
        if (!m.valid) {
            printf(" WRONG: not equal to the reference, not timed\n");
            wrong++;
            continue;
        }
        printf(" %9.1f %9.1f %9.1f | %6.2fx %6.1fx\n", 1e3 * m.ref_seconds, 1e3 * m.padded_seconds,
               1e3 * m.fused_seconds, m.padded_seconds / m.fused_seconds, m.ref_seconds / m.fused_seconds);
        fprintf(csv, "\"%s\",%s,%lld,%lld,%lld,%.4f,%.4f,%.4f,%.4f,%lld,%.3e,%.3e,%.4f,%.4f,%.4f\n", name, cell,
                (long long)m.sequences, (long long)m.useful_steps, (long long)m.max_length,
                m.padded_computed_per_useful, m.fused_computed_per_useful, m.padded_occupancy, m.fused_occupancy,
                (long long)m.lanes, m.padded_error, m.fused_error, 1e3 * m.ref_seconds, 1e3 * m.padded_seconds,
                1e3 * m.fused_seconds);
    }
    fflush(stdout);
    return wrong;
}

/* Spatial fusion of `num_chunks` chunks under a cap of `cap_fraction` of the whole graph's
 * data (fusion_measure_spatial()). Returns 1 for a wrong result, 0 when right, -1 on failure. */
static int spatial_case(const char *name, const snapshot_seq *seq, int64_t num_chunks, double cap_fraction, FILE *csv)
{
    tf_error err;
    spatial_measurement m;
    if (fusion_measure_spatial(seq, num_chunks, cap_fraction, &m, &err) != TF_OK) {
        fprintf(stderr, "bench_fusion: %s: %s\n", name, err.message);
        return -1;
    }
    if (!m.valid) {
        printf("%-20s %6lld %5.2f | WRONG: %lld rows differ from per-chunk loading, %lld groups over the cap\n", name,
               (long long)num_chunks, cap_fraction, (long long)m.differing_rows, (long long)m.groups_over_cap);
        return 1;
    }
    printf("%-20s %6lld %5.2f %7lld | %12lld %12lld %6.1f%% | %8.1f %8.1f\n", name, (long long)num_chunks,
           cap_fraction, (long long)m.groups, (long long)m.unfused_bytes, (long long)m.fused_bytes,
           100.0 * (1.0 - (double)m.fused_bytes / (double)m.unfused_bytes), 1e3 * m.alone_seconds,
           1e3 * m.fused_seconds);
    fprintf(csv, "\"%s\",%lld,%.2f,%lld,%lld,%lld,%.4f,%.4f\n", name, (long long)num_chunks, cap_fraction,
            (long long)m.groups, (long long)m.unfused_bytes, (long long)m.fused_bytes, 1e3 * m.alone_seconds,
            1e3 * m.fused_seconds);
    return 0;
}

static int parse_options(int argc, char **argv, options *o, tf_error *err)
{
    *o = (options){".", 1, 3, 32, 0, 0};
    for (int i = 1; i < argc; i++) {
        const char *value;
        int matched;
        if (cli_is_help(argv[i])) {
            o->help = 1;
            return TF_OK;
        }
        if (!strcmp(argv[i], "--quick")) {
            o->quick = 1;
            continue;
        }
        if ((matched = cli_option(argc, argv, &i, "--out", &value, err)) < 0)
            return err->code;
        if (matched) {
            o->out = value;
            continue;
        }
        static const char *const names[3] = {"--threads", "--repeats", "--hidden"};
        int64_t *targets[3] = {&o->threads, &o->repeats, &o->hidden};
        int k;
        for (k = 0; k < 3; k++) {
            if ((matched = cli_option(argc, argv, &i, names[k], &value, err)) < 0)
                return err->code;
            if (matched) {
                if (cli_parse_int(names[k], value, 1, 4096, targets[k], err) != TF_OK)
                    return err->code;
                break;
            }
        }
        if (k == 3)
            return tf_error_set(err, TF_ERR_INPUT, "bench_fusion: unknown argument %s (see --help)", argv[i]);
    }
    return TF_OK;
}

static FILE *open_csv(const char *directory, const char *name, const char *header, tf_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", directory, name);
    FILE *file = fopen(path, "w");
    if (!file) {
        tf_error_set(err, TF_ERR_INPUT, "bench_fusion: cannot write %s", path);
        return NULL;
    }
    fprintf(file, "%s\n", header);
    return file;
}

int main(int argc, char **argv)
{
    tf_error err;
    options o;
    if (parse_options(argc, argv, &o, &err) != TF_OK) {
        fprintf(stderr, "%s\n", err.message);
        return err.code;
    }
    if (o.help) {
        fputs(usage, stdout);
        return 0;
    }
    opt_set_threads((int)o.threads);
    FILE *temporal = open_csv(o.out, "fusion_temporal.csv",
                              "data,cell,sequences,useful_steps,max_length,padded_computed_per_useful,"
                              "fused_computed_per_useful,padded_occupancy,fused_occupancy,lanes,padded_error,"
                              "fused_error,ref_ms,padded_ms,fused_ms",
                              &err);
    FILE *spatial = temporal ? open_csv(o.out, "fusion_spatial.csv",
                                        "data,chunks,cap_fraction,groups,unfused_bytes,fused_bytes,alone_ms,fused_ms",
                                        &err)
                             : NULL;
    if (!spatial) {
        fprintf(stderr, "%s\n", err.message);
        return err.code;
    }
    printf("temporal fusion: time encoder input 16, hidden %lld, %lld thread(s), best of %lld runs; one forward + "
           "backward (ms)\n",
           (long long)o.hidden, (long long)o.threads, (long long)o.repeats);
    printf("%-20s %-4s %7s %8s %5s | %6s %5s %5s %6s | %8s %8s | %9s %9s %9s | %7s %7s\n", "data", "cell", "seqs",
           "steps", "T_max", "padded", "fused", "occup", "lanes", "err pad", "err fuse", "ref ms", "padded", "fused",
           "vs pad", "vs ref");
    printf("%-20s %-4s %7s %8s %5s | %-19s %6s |\n", "", "", "", "", "", "computed/useful", "");
    int wrong = 0, failed = 0;
    dataset tennis = {0}, messages = {0}, generated = {0};
    sequence_set set;
#define RUN_CASE(name)                                                                                             \
    do {                                                                                                           \
        int result_ = temporal_case((name), &set, &o, temporal);                                                   \
        sequence_set_free(&set);                                                                                   \
        if (result_ < 0)                                                                                           \
            failed = 1;                                                                                            \
        else                                                                                                       \
            wrong += result_;                                                                                      \
    } while (0)
    if (dataset_load("twitter_tennis", NULL, &tennis, &err) == TF_OK &&
        sequence_set_from_snapshots(&tennis.snapshots, 1, &set, &err) == TF_OK)
        RUN_CASE("tennis 120 h");
    else
        failed = 1, fprintf(stderr, "%s\n", err.message);
    if (dataset_load("collegemsg", NULL, &messages, &err) == TF_OK &&
        sequence_set_from_events(&messages.events, 64, &set, &err) == TF_OK)
        RUN_CASE("collegemsg 64 snap.");
    else
        failed = 1, fprintf(stderr, "%s\n", err.message);
    const int64_t count = o.quick ? 2000 : 10000;
    const length_distribution kinds[3] = {LENGTHS_HEAVY_TAILED, LENGTHS_UNIFORM, LENGTHS_EQUAL};
    for (int k = 0; k < 3; k++) {
        char name[64];
        static const char *const short_names[3] = {"heavy-tailed", "uniform", "equal"};
        snprintf(name, sizeof name, "%s T 64", short_names[k]);
        if (sequence_set_generate(kinds[k], kinds[k] == LENGTHS_EQUAL ? count / 10 : count, 64, 11, &set, &err) ==
            TF_OK)
            RUN_CASE(name);
        else
            failed = 1, fprintf(stderr, "%s\n", err.message);
    }

    printf("\nspatial fusion: bytes = snapshots x loaded vertices x features x 4; load time in ms\n");
    printf("%-20s %6s %5s %7s | %12s %12s %7s | %8s %8s\n", "data", "chunks", "cap", "groups", "per-chunk B",
           "fused B", "saved", "alone", "fused");
    if (tennis.kind == DATASET_SNAPSHOTS && tennis.snapshots.num_snapshots > 0) {
        const double caps[3] = {0.3, 0.6, 1.0};
        for (int k = 0; k < 3; k++) {
            int result = spatial_case("tennis 120 h", &tennis.snapshots, 16, caps[k], spatial);
            failed |= result < 0, wrong += result > 0;
        }
    }
    const char *spec = o.quick ? "powerlaw:nodes=5000,edges=25000,snapshots=8,seed=4"
                               : "powerlaw:nodes=20000,edges=100000,snapshots=8,seed=4";
    if (dataset_load(spec, NULL, &generated, &err) == TF_OK) {
        const double caps[3] = {0.1, 0.25, 0.5};
        for (int k = 0; k < 3; k++) {
            int result = spatial_case(o.quick ? "powerlaw 5k, 8 snap." : "powerlaw 20k, 8 snap.",
                                          &generated.snapshots, 32, caps[k], spatial);
            failed |= result < 0, wrong += result > 0;
        }
    } else {
        failed = 1, fprintf(stderr, "%s\n", err.message);
    }
    dataset_free(&tennis), dataset_free(&messages), dataset_free(&generated);
    fclose(temporal);
    fclose(spatial);
    printf("\n%s: %d wrong result(s)%s; CSV in %s/fusion_temporal.csv and %s/fusion_spatial.csv\n",
           wrong || failed ? "FAILED" : "OK", wrong, failed ? ", some cases failed to run" : "", o.out, o.out);
    return wrong || failed ? 1 : 0;
}
