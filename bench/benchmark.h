/**
 * @file bench/benchmark.h
 * @brief The bench program's sweeps: each technique's full benchmark, one per bench/STEM.c, that
 *        calls the technique table's engine (verify/techniques/engine.h) for every point it
 *        times, and writes CSV files. bench/main.c names them.
 *
 * A sweep returns the number of wrong results (0 or more), or a negative value with @p err set
 * when something failed to run.
 */
#ifndef TWOFOLD_BENCH_BENCHMARK_H
#define TWOFOLD_BENCH_BENCHMARK_H

#include "ref/core/error.h"
#include "ref/core/io.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What a sweep is asked to do. */
typedef struct benchmark_options {
    int quick;          /**< shrink everything: a smoke test, not a measurement */
    int threads;        /**< OpenMP threads of the twins (the reference is single-threaded) */
    int repeats;        /**< timed runs of a twin at most, best kept */
    const char *out;    /**< directory for the CSV files */
} benchmark_options;

/** Chapter 02: ReInc time against churn, cache hit rate, epochs (bench/incremental.c). */
int incremental_benchmark(const benchmark_options *options, tf_error *err);

/** Chapter 02: ReInc's sampled mini-batches, recompute against served inputs (bench/minibatch.c). */
int minibatch_benchmark(const benchmark_options *options, tf_error *err);
/** Chapter 03: DGC padded against fused lanes, spatial fusion (bench/fusion.c). */
int fusion_benchmark(const benchmark_options *options, tf_error *err);
/** Chapter 04: Sven's redundancy and bytes per epoch, under mpiexec (bench/dispatch.c). */
int dispatch_benchmark(const benchmark_options *options, tf_error *err);
/** Chapter 04: the same for APAN (its M-mail rows, its neighbour deliveries): apan_eta.csv, apan_bytes.csv. */
int dispatch_apan_benchmark(const benchmark_options *options, tf_error *err);
/** Chapter 05b: DGC's bytes saved and their cost in test MSE, simulated (bench/async.c). */
int async_benchmark(const benchmark_options *options, tf_error *err);
/** Chapter 05b: DGC's rule on DySAT's structural layer, link prediction, simulated (bench/async.c). */
int async_dysat_benchmark(const benchmark_options *options, tf_error *err);
/** Chapter 06: the partitioners' cut, balance, halo and bytes (bench/partition.c). */
int partition_benchmark(const benchmark_options *options, tf_error *err);
/** Chapter 06: PSS, PTS and DGC's chunks with T-GCN's and DySAT's spatial and temporal bytes (bench/partition.c). */
int partition_traffic_benchmark(const benchmark_options *options, tf_error *err);
/** Chapter 07: DyGNeX solve times, gaps to the bound, the simulator (bench/schedule.c). */
int schedule_benchmark(const benchmark_options *options, tf_error *err);
/** Chapter 07: DynaHB's hybrid against snapshot batches, and the reservoir (bench/hybrid.c). */
int hybrid_benchmark(const benchmark_options *options, tf_error *err);

/**
 * A whole number in [1, @p maximum] for option @p name of program @p program, or -1 after one
 * line on stderr ("PROGRAM: NAME "VALUE", expected a whole number in 1..MAXIMUM"; none when
 * @p program is NULL: the ranks of an MPI program that do not report).
 */
int bench_parse_count(const char *program, const char *name, const char *value, int maximum);

/**
 * Open @p directory/@p name for a sweep's CSV rows through ref/core/io.h's output_open(): the rows
 * go to a temporary beside it, which bench_csv_close() renames over it once whole, so a sweep that
 * fails, or a full disk, leaves the last whole file. With @p append the file's rows so far are
 * copied first (bench/dispatch.sh collects the runs at every R in one file). @return TF_OK, or
 * the error naming the path.
 */
int bench_csv_open(output_file *csv, const char *directory, const char *name, int append, tf_error *err);

/**
 * Rename @p csv over its path when @p keep, else remove it; nothing when it was never opened
 * (csv->stream NULL). @return 0, or -1 with @p err when a write failed (the old file is kept).
 */
int bench_csv_close(output_file *csv, int keep, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
