/* build/bench/bench: the full benchmark of each technique in the table (bench/technique.h),
 * validated before timed.
 *
 *   build/bench/bench [TECHNIQUE...] [--quick] [--threads N] [--repeats N] [--out DIR]
 *
 * Without names, every technique. A technique with its own benchmark (sweeps and CSV files:
 * bench/incremental.c, bench/fusion.c) runs it; the others run their demo rows with the time,
 * the work rate and its unit. The output opens with its provenance (command, date, machine, load),
 * so a committed result says where it was measured. Exit status 1 when any result was wrong, 2 for
 * bad arguments. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/technique.h"

static const char usage[] =
    "usage: bench [TECHNIQUE...] [--quick] [--threads N] [--repeats N] [--out DIR]\n"
    "  TECHNIQUE     a name from the table (default: all, listed below)\n"
    "  --quick       smaller inputs: a smoke test, not a measurement\n"
    "  --threads N   OpenMP threads of the twins (default 1; the reference is single-threaded)\n"
    "  --repeats N   timed runs of each twin, best kept; runs over 1 s are not repeated (default 3)\n"
    "  --out DIR     where CSV files go (default bench_out, created)\n";

/* The demo rows of a technique without its own benchmark, timed, with the work rate. */
static int demo_rows(const technique *t, const benchmark_options *o, tf_error *err)
{
    int wrong = 0;
    engine_options engine = {.timed = 1, .repeats = o->repeats, .threads = o->threads};
    for (const technique_case *c = t->demo; c->data; c++) {
        dataset d;
        if (dataset_load(c->data, NULL, &d, err) != TF_OK)
            return -1;
        engine_result r;
        int status = engine_run(t, &d, NULL, c->variant, &engine, &r, err);
        dataset_free(&d);
        if (status != TF_OK && status != TECHNIQUE_SKIP)
            return -1;
        engine_print_row(stdout, t, c->variant, c->label, &r);
        if (!r.wrong && r.work > 0 && r.seconds[1] > 0)
            printf("      work %.4g %s: ref %.3g %s/s, %s %.3g %s/s\n", r.work, r.work_unit, r.work / r.seconds[0],
                   r.work_unit, r.twin[0].name, r.work / r.seconds[1], r.work_unit);
        wrong += r.wrong != 0;
    }
    return wrong;
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

/* A whole number in [1, maximum] for option @p name, or -1. */
static int parse_count(const char *name, const char *value, int maximum)
{
    char *end;
    long number = value ? strtol(value, &end, 10) : 0;
    if (!value || end == value || *end != '\0' || number < 1 || number > maximum) {
        fprintf(stderr, "bench: %s \"%s\", expected a whole number in 1..%d\n", name, value ? value : "", maximum);
        return -1;
    }
    return (int)number;
}

int main(int argc, char **argv)
{
    benchmark_options o = {0, 1, 3, "bench_out"};
    const technique *chosen[32];
    int count = 0;
    tf_error err;
    for (int i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage, stdout);
            printf("techniques:");
            for (const technique *const *t = technique_table; *t; t++)
                if (t == technique_table || strcmp(t[-1]->name, (*t)->name) != 0) /* fusion has two entries */
                    printf(" %s", (*t)->name);
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
            int number = parse_count(argv[i], value, argv[i][2] == 't' ? 4096 : 1000);
            if (number < 0)
                return 2;
            *(argv[i][2] == 't' ? &o.threads : &o.repeats) = number;
            i++;
        } else {
            int found = 0;
            for (const technique *const *t = technique_table; *t && count < 32; t++)
                if (!strcmp((*t)->name, argv[i]))
                    chosen[count++] = *t, found = 1;
            if (!found) {
                fprintf(stderr, "bench: unknown technique or option %s (see --help)\n", argv[i]);
                return 2;
            }
        }
    }
    if (count == 0)
        for (const technique *const *t = technique_table; *t && count < 32; t++)
            chosen[count++] = *t;
    struct stat info;
    if (mkdir(o.out, 0755) != 0 && !(stat(o.out, &info) == 0 && S_ISDIR(info.st_mode))) {
        fprintf(stderr, "bench: cannot create the output directory %s\n", o.out);
        return 2;
    }
    print_provenance(argc, argv);
    int wrong = 0, failed = 0;
    for (int k = 0; k < count; k++) {
        const technique *t = chosen[k];
        int seen = 0; /* one benchmark may cover several entries of a stem (fusion: temporal, spatial) */
        for (int j = 0; j < k; j++)
            seen |= t->benchmark && t->benchmark == chosen[j]->benchmark;
        if (seen)
            continue;
        printf("\n### %s (chapter %s)\n", t->title, t->chapter);
        int outcome = t->benchmark ? t->benchmark(&o, &err) : demo_rows(t, &o, &err);
        if (outcome < 0) {
            fprintf(stderr, "bench: %s: %s\n", t->name, err.message);
            failed = 1;
        } else {
            wrong += outcome;
        }
    }
    printf("\n#wrong %d%s\n", wrong, failed ? " (and some benchmarks failed to run)" : "");
    return wrong || failed ? 1 : 0;
}
