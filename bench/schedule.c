/* Chapter 07's DyGNeX benchmark (build/bench/bench schedule [--quick] [--threads N] [--repeats N]
 * [--out DIR]): 1. DyGNeX-G's solve time against the number of groups, validated bitwise first
 * through the table's entry (technique_schedule's greedy variant with the sweep's times,
 * verify/techniques/schedule.c); 2. DyGNeX-L's; 3. every method's gap to the lower bound; 4. the
 * simulator at 4 .. 1024 ranks. CSV files in DIR. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/benchmark.h"
#include "opt/kernels.h"
#include "opt/schedule.h"
#include "opt/schedule_simulate.h"
#include "ref/schedule.h"
#include "ref/schedule_cost.h"
#include "verify/techniques/schedule.h"

/* The linear cost every predicted number of the benchmark uses (seconds per row, edge, group). */
static const cost_model bench_cost = {1e-6, 1e-7, 1e-4, 0, 0, 1};

/* Window times (window 4, stride 1) of a dataset's snapshot sizes cycled to `snapshots`. */
static int cycled_times(const dataset *d, int64_t snapshots, double **times, int64_t *groups, tf_error *err)
{
    int64_t *nodes, *edges;
    if (schedule_sizes_cycle(&d->snapshots, snapshots, &nodes, &edges, err) != TF_OK)
        return TF_ERR_INPUT;
    int status = schedule_window_times(nodes, edges, snapshots, SCHEDULE_WINDOW, 1, &bench_cost, times, groups, err);
    free(nodes);
    free(edges);
    return status;
}

/* 1. DyGNeX-G's solve time against the number of groups, ref and opt, validated bitwise first by the
 * engine (greedy variant with the benchmark's times). Table 5 beside it. */
static int greedy_times(const benchmark_options *o, const dataset *tennis, FILE *csv, tf_error *err)
{
    static const int64_t sizes[] = {50, 100, 300, 1000, 3000};
    static const char *const table5[] = {"< 0.001", "0.0041", "0.0183", "0.162", "1.297"};
    const int count = o->quick ? 3 : 5;
    int wrong = 0;
    printf("\n1. DyGNeX-G solve time, G = 4; times: twitter_tennis's snapshot sizes cycled, windows of 4, the linear "
           "cost (ref one thread, opt %d thread(s), best of %d)\n", o->threads, o->repeats);
    printf("%8s %12s %12s %8s %10s  %s\n", "groups", "ref s", "opt s", "ref/opt", "Table 5 s", "check");
    for (int k = 0; k < count; k++) {
        double *times;
        int64_t groups;
        if (cycled_times(tennis, sizes[k], &times, &groups, err) != TF_OK)
            return -1;
        schedule_params params = {times, groups, 4};
        engine_options engine = {.timed = 1, .repeats = o->repeats, .threads = o->threads};
        engine_result r;
        int status = engine_run(&technique_schedule, tennis, &params, SCHEDULE_VARIANT_GREEDY, &engine, &r, err);
        free(times);
        if (status != TF_OK)
            return -1;
        wrong += r.wrong != 0;
        printf("%8lld %12.4g %12.4g %8.2f %10s  %s\n", (long long)groups, r.seconds[0], r.seconds[1],
               r.seconds[1] > 0 ? r.seconds[0] / r.seconds[1] : NAN, table5[k], r.wrong ? "WRONG" : "bitwise equal");
        fprintf(csv, "%lld,%g,%g,%s,%d\n", (long long)groups, r.seconds[0], r.seconds[1], table5[k], r.wrong != 0);
    }
    return wrong;
}

/* 2. DyGNeX-L's solve time against the number of groups (gap 2 %, Table 6's row), validated. */
static int ilp_times(const benchmark_options *o, const dataset *tennis, FILE *csv, tf_error *err)
{
    static const int64_t sizes[] = {10, 20, 30, 40, 50, 60, 80, 100};
    static const char *const table6[] = {"0.51", "0.60", "1.93", "2.63", "3.47", "5.36", "11.16", "23.02"};
    const int count = o->quick ? 3 : 8;
    const double limit = o->quick ? 5 : 30;
    printf("\n2. DyGNeX-L (GLPK) solve time, G = 4, gap 2 %%, limit %g s; the same times\n", limit);
    printf("%8s %10s %-12s %9s %14s %12s %10s\n", "groups", "seconds", "status", "gap", "below greedy", "columns",
           "Table 6 s");
    for (int k = 0; k < count; k++) {
        double *times;
        int64_t groups;
        if (cycled_times(tennis, sizes[k], &times, &groups, err) != TF_OK)
            return -1;
        schedule s;
        ilp_options ilp = {limit, 0.02};
        ilp_report report;
        int status = opt_schedule_ilp(&s, times, groups, 4, 2, 0, &ilp, &report, err);
        free(times);
        if (status != TF_OK)
            return -1;
        status = schedule_validate(&s, err);
        schedule_free(&s);
        if (status != TF_OK)
            return -1;
        const double gain = 1 - report.objective / report.start_objective;
        printf("%8lld %10.3f %-12s %8.2f%% %13.2f%% %12lld %10s\n", (long long)groups, report.seconds, report.status,
               100 * report.gap, 100 * gain, (long long)report.columns, table6[k]);
        fprintf(csv, "%lld,%g,%s,%g,%g,%lld,%s\n", (long long)groups, report.seconds, report.status, report.gap, gain,
                (long long)report.columns, table6[k]);
    }
    return 0;
}

/* 3. Every method's gap to the lower bound on real and generated data, predicted. */
static int bound_gaps(const benchmark_options *o, FILE *csv, tf_error *err)
{
    static const char *const data[] = {"twitter_tennis", "england_covid",
                                       "powerlaw:nodes=2000,edges=20000,snapshots=64,growth=8"};
    static const char *const labels[] = {"twitter_tennis", "england_covid", "powerlaw growth=8"};
    const double limit = o->quick ? 2 : 10;
    printf("\n3. gap to the lower bound max(t_max, sum t / G), predicted with the linear cost; windows of 4, stride 1 "
           "over 80 %% of the snapshots; ILP %g s, gap 2 %%\n", limit);
    printf("%-18s %6s %3s %-11s %10s %12s %10s %10s\n", "data", "groups", "G", "method", "iterations", "gap to LB",
           "imbalance", "efficiency");
    for (int d = 0; d < 3; d++) {
        dataset set;
        if (dataset_load(data[d], NULL, &set, err) != TF_OK)
            return -1;
        train_options options;
        train_options_default(&options);
        options.window = SCHEDULE_WINDOW;
        options.stride = 1;
        model_config config = {MODEL_TGCN, 0, SCHEDULE_HIDDEN, 0, 2, 0};
        trainer tr;
        double *times = NULL; /* [groups] */
        int64_t groups = 0;
        int status = trainer_create(&tr, &set.snapshots, &config, &options, err);
        if (status == TF_OK) {
            status = schedule_linear_times(&tr, &set.snapshots, &times, &groups, err);
            const train_schedule steps = trainer_schedule(&tr);
            for (int ranks = 2; status == TF_OK && ranks <= 4; ranks++)
                for (int m = SCHEDULE_ROUNDROBIN; status == TF_OK && m <= SCHEDULE_ILP; m++) {
                    train_schedule round_robin = steps;
                    round_robin.batch = ranks;
                    round_robin.steps = (steps.windows + ranks - 1) / ranks;
                    ilp_options ilp = {limit, 0.02};
                    schedule s;
                    status = opt_schedule_compute(&s, (schedule_method)m, times, groups, ranks, 2,
                                                  &round_robin, 0, &ilp, NULL, err);
                    if (status != TF_OK)
                        break;
                    status = schedule_validate(&s, err);
                    schedule_cost cost;
                    schedule_evaluate(&s, times, 0, &cost);
                    const double gap = cost.critical_path / cost.lower_bound - 1;
                    printf("%-18s %6lld %3d %-11s %10lld %11.2f%% %10.4f %10.4f\n", labels[d], (long long)groups,
                           ranks, schedule_method_name((schedule_method)m), (long long)s.iterations, 100 * gap,
                           cost.imbalance, cost.efficiency);
                    fprintf(csv, "%s,%lld,%d,%s,%lld,%g,%g,%g\n", labels[d], (long long)groups, ranks,
                            schedule_method_name((schedule_method)m), (long long)s.iterations, gap, cost.imbalance,
                            cost.efficiency);
                    schedule_free(&s);
                }
            trainer_free(&tr);
        }
        free(times);
        dataset_free(&set);
        if (status != TF_OK)
            return -1;
    }
    return 0;
}

/* 4. The simulator at 4 .. 1024 ranks. */
static int simulation(const benchmark_options *o, const dataset *tennis, FILE *csv, tf_error *err)
{
    static const int ranks[] = {4, 16, 64, 128, 256, 512, 1024};
    const int64_t snapshots = o->quick ? 512 : 4096;
    double *times;
    int64_t groups;
    if (cycled_times(tennis, snapshots, &times, &groups, err) != TF_OK)
        return -1;
    printf("\n4. simulation: twitter_tennis's snapshot sizes cycled to %lld snapshots, windows of 4: %lld groups, the "
           "linear cost, alpha 0 (opt greedy on %d thread(s))\n", (long long)snapshots, (long long)groups, o->threads);
    printf("%6s %12s %-11s %10s %10s %10s %9s\n", "ranks", "groups/rank", "method", "iterations", "efficiency",
           "imbalance", "solve s");
    int status = TF_OK;
    for (int k = 0; status == TF_OK && k < 7; k++) {
        simulation_row *rows;
        status = opt_schedule_simulate(times, groups, &ranks[k], 1, &rows, err);
        for (int m = 0; status == TF_OK && m < 3; m++) {
            const simulation_row *r = &rows[m];
            printf("%6d %12.2f %-11s %10lld %10.4f %10.4f %9.3f\n", r->ranks, (double)groups / r->ranks,
                   schedule_method_name(r->method), (long long)r->iterations, r->efficiency, r->imbalance,
                   r->solve_seconds);
            fprintf(csv, "%d,%s,%lld,%lld,%g,%g,%g\n", r->ranks, schedule_method_name(r->method), (long long)groups,
                    (long long)r->iterations, r->efficiency, r->imbalance, r->solve_seconds);
            fflush(stdout);
        }
        if (status == TF_OK)
            free(rows);
    }
    free(times);
    return status == TF_OK ? 0 : -1;
}

int schedule_benchmark(const benchmark_options *o, tf_error *err)
{
    opt_set_threads(o->threads);
    dataset tennis;
    if (dataset_load("twitter_tennis", NULL, &tennis, err) != TF_OK)
        return -1;
    static const char *const names[4] = {"greedy_time.csv", "ilp_time.csv", "lower_bound.csv", "simulate.csv"};
    static const char *const headers[4] = {
        "groups,ref_seconds,opt_seconds,table5_seconds,wrong",
        "groups,seconds,status,gap,below_greedy,columns,table6_seconds",
        "data,groups,ranks,method,iterations,gap_to_bound,imbalance,efficiency",
        "ranks,method,groups,iterations,efficiency,imbalance,solve_seconds"};
    output_file csv[4] = {{0}, {0}, {0}, {0}};
    int outcome = 0;
    for (int k = 0; k < 4 && outcome == 0; k++) {
        if (bench_csv_open(&csv[k], o->out, names[k], 0, err) != TF_OK)
            outcome = -1;
        else
            fprintf(csv[k].stream, "%s\n", headers[k]);
    }
    int wrong = 0;
    if (outcome == 0)
        outcome = wrong = greedy_times(o, &tennis, csv[0].stream, err);
    if (outcome >= 0)
        outcome = ilp_times(o, &tennis, csv[1].stream, err);
    if (outcome >= 0)
        outcome = bound_gaps(o, csv[2].stream, err);
    if (outcome >= 0)
        outcome = simulation(o, &tennis, csv[3].stream, err);
    for (int k = 0; k < 4; k++)
        if (bench_csv_close(&csv[k], outcome >= 0, err) < 0)
            outcome = -1;
    dataset_free(&tennis);
    if (outcome >= 0)
        printf("\nCSV in %s: %s, %s, %s, %s\n", o->out, names[0], names[1], names[2], names[3]);
    return outcome < 0 ? -1 : wrong;
}
