/* build/bench/bench: each technique's full benchmark, validated before timed.
 *
 *   build/bench/bench [BENCHMARK...] [--quick] [--threads N] [--repeats N] [--out DIR]
 *
 * Without names, every benchmark of sweeps[] below, in chapter order. A benchmark is a sweep of
 * bench/STEM.c (bench/benchmark.h) that runs every point through the technique table's engine
 * (verify/techniques/engine.h) and writes CSV files; a technique without one runs its demo rows
 * through the engine's loop, timed, with the work rate and its unit. The output opens with its
 * provenance (command, date, machine, load), so a committed result says where it was measured.
 * Exit status (twofold's, opt/cli/commands.h): 1 when any result was wrong; else 2 for bad
 * arguments or a benchmark that failed on bad input, 3 for one the machine failed (a full disk
 * under its CSV files). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/benchmark.h"
#include "verify/techniques/table.h"

static const char usage[] =
    "usage: bench [BENCHMARK...] [--quick] [--threads N] [--repeats N] [--out DIR]\n"
    "  BENCHMARK     a name listed below (default: all)\n"
    "  --quick       smaller inputs: a smoke test, not a measurement\n"
    "  --threads N   OpenMP threads of the twins (default 1; the reference is single-threaded)\n"
    "  --repeats N   timed runs of each twin, best kept; runs over 1 s are not repeated (default 3)\n"
    "  --out DIR     where CSV files go (default bench_out, created)\n"
    "Exit status: 0 done; 1 a twin was not equal to its reference; 2 bad input; 3 the machine failed\n"
    "(disk full, I/O error): a CSV file a failed write was to replace is left as it was.\n";

/* One benchmark: its name, the table entry whose title and chapter head its output, its sweep. */
typedef struct sweep {
    const char *name;
    const char *entry;   /* technique_find() name */
    int (*run)(const benchmark_options *options, tf_error *err); /* NULL: the entry's demo rows, timed */
} sweep;

static const sweep sweeps[] = {
    {"train", "train", NULL},
    {"incremental", "incremental", incremental_benchmark},
    {"minibatch", "incremental", minibatch_benchmark},
    {"fusion", "fusion_temporal", fusion_benchmark},
    {"dispatch", "dispatch", dispatch_benchmark},
    {"dispatch_apan", "dispatch", dispatch_apan_benchmark},
    {"async", "async", async_benchmark},
    {"async_dysat", "async", async_dysat_benchmark},
    {"partition", "partition", partition_benchmark},
    {"partition_traffic", "partition", partition_traffic_benchmark},
    {"schedule", "schedule", schedule_benchmark},
    {"hybrid", "schedule_hybrid", hybrid_benchmark},
};
enum { SWEEPS = sizeof sweeps / sizeof *sweeps };

/* The demo rows of a technique without a sweep, through the table's loop: timed, with the work
 * rate. Returns the number of wrong rows, or -1 with err set. */
static int demo_rows(const technique *t, const benchmark_options *o, tf_error *err)
{
    unsigned char chosen[TECHNIQUE_TABLE_MAX] = {0};
    technique_choose(t->name, chosen);
    engine_row rows[64];
    const int count = technique_demo_rows(chosen, NULL, rows, 64);
    engine_options engine = {.timed = 1, .repeats = o->repeats, .threads = o->threads, .rates = 1};
    engine_tally tally;
    if (engine_run_rows(rows, count, &engine, &tally, err) != TF_OK)
        return -1;
    return tally.wrong;
}

/* The first value of the line starting with @p key in a /proc file (e.g. "model name" in
 * /proc/cpuinfo), into @p value; "unknown" when absent. */
static void proc_value(const char *path, const char *key, char *value, size_t size)
{
    snprintf(value, size, "unknown");
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[512];
    size_t length = strlen(key);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, length) != 0)
            continue;
        const char *start = strchr(line, ':');
        start = start ? start + 1 : line + length;
        while (*start == ' ' || *start == '\t')
            start++;
        snprintf(value, size, "%.*s", (int)strcspn(start, "\n"), start);
        break;
    }
    fclose(f);
}

/* Where a result came from, printed before any number: the command, the date, the machine and
 * its load at the start. Timings taken on a shared or loaded machine say so here. */
static void print_provenance(int argc, char **argv)
{
    printf("# command:");
    for (int i = 0; i < argc; i++)
        printf(" %s", i == 0 ? "build/bench/bench" : argv[i]);
    char date[32], model[128], memory[64], load[64];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    proc_value("/proc/cpuinfo", "model name", model, sizeof model);
    proc_value("/proc/meminfo", "MemTotal", memory, sizeof memory);
    proc_value("/proc/loadavg", "", load, sizeof load);
    load[strcspn(load, " ")] = '\0'; /* the one-minute average */
    printf("\n# date: %s; machine: %s, %ld cores online, memory %s, load average %s at start; compiler %s\n",
           date, model, sysconf(_SC_NPROCESSORS_ONLN), memory, load, __VERSION__);
}

/* This process's rank as its launcher numbered it (Open MPI's mpiexec, MPICH's Hydra or Slurm's
 * PMI, a PMIx launcher), 0 when started alone. Read before MPI starts (a sweep starts it), so that
 * the other ranks of `mpiexec -n R build/bench/bench dispatch` print no copy of the header. */
static long launcher_rank(void)
{
    const char *names[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
    for (int i = 0; i < 3; i++)
        if (getenv(names[i]))
            return strtol(getenv(names[i]), NULL, 10);
    return 0;
}

int main(int argc, char **argv)
{
    benchmark_options o = {0, 1, 3, "bench_out"};
    unsigned char chosen[SWEEPS] = {0};
    int any = 0;
    tf_error err;
    for (int i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage, stdout);
            printf("benchmarks:");
            for (int k = 0; k < SWEEPS; k++)
                printf(" %s", sweeps[k].name);
            printf("\n");
            return 0;
        } else if (!strcmp(argv[i], "--quick")) {
            o.quick = 1;
        } else if (!strcmp(argv[i], "--out")) {
            if (!value) {
                fprintf(stderr, "bench: --out needs a directory\n");
                return 2;
            }
            o.out = argv[++i];
        } else if (!strcmp(argv[i], "--threads") || !strcmp(argv[i], "--repeats")) {
            int number = bench_parse_count("bench", argv[i], value, argv[i][2] == 't' ? 4096 : 1000);
            if (number < 0)
                return 2;
            *(argv[i][2] == 't' ? &o.threads : &o.repeats) = number;
            i++;
        } else {
            int found = 0;
            for (int k = 0; k < SWEEPS; k++)
                if (!strcmp(sweeps[k].name, argv[i]))
                    chosen[k] = found = any = 1;
            if (!found) {
                fprintf(stderr, "bench: unknown benchmark or option %s (see --help)\n", argv[i]);
                return 2;
            }
        }
    }
    struct stat info;
    if (mkdir(o.out, 0755) != 0 && !(stat(o.out, &info) == 0 && S_ISDIR(info.st_mode))) {
        fprintf(stderr, "bench: cannot create the output directory %s\n", o.out);
        return 2;
    }
    /* Only rank 0 speaks (a sweep on MPI silences the others again once it knows their rank). */
    if (launcher_rank() != 0 && !freopen("/dev/null", "w", stdout)) {
        fprintf(stderr, "bench: cannot silence rank %ld\n", launcher_rank());
        return 3;
    }
    print_provenance(argc, argv);
    int wrong = 0, failed = 0; /* failed: the worst status of a benchmark that did not run through */
    for (int k = 0; k < SWEEPS; k++) {
        const technique *t = technique_find(sweeps[k].entry);
        if (any && !chosen[k])
            continue;
        printf("\n### %s (chapter %s)\n", t->title, t->chapter);
        int outcome = sweeps[k].run ? sweeps[k].run(&o, &err) : demo_rows(t, &o, &err);
        if (outcome < 0) {
            fprintf(stderr, "bench: %s: %s\n", sweeps[k].name, err.message);
            failed = err.code > failed ? err.code : failed;
        } else {
            wrong += outcome;
        }
    }
    printf("\n#wrong %d%s\n", wrong, failed ? " (and some benchmarks failed to run)" : "");
    return wrong ? 1 : failed; /* 1 means a twin differs, in bench as in twofold verify */
}
