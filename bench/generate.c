/* How large a graph the generator makes on this machine, how fast, and in how much memory.
 *
 *   build/bench/bench_generate [EDGES_PER_SNAPSHOT [SNAPSHOTS]]     (default 1e7 and 3)
 *
 * Validates before it reports: every snapshot must hold exactly the requested number of
 * distinct edges. Prints edges generated per second and the peak resident memory. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "datasets/generate.h"
#include "ref/core/clock.h"

int main(int argc, char **argv)
{
    powerlaw_params p;
    powerlaw_params_default(&p);
    p.num_edges = argc > 1 ? (int64_t)strtod(argv[1], NULL) : 10000000;
    p.num_snapshots = argc > 2 ? atoi(argv[2]) : 3;
    p.num_nodes = p.num_edges / 10;
    p.churn = 0.01;
    snapshot_seq seq;
    tf_error err;
    double started = wall_seconds();
    if (generate_powerlaw(&p, &seq, &err) != TF_OK) {
        fprintf(stderr, "bench_generate: %s\n", err.message);
        return err.code;
    }
    double elapsed = wall_seconds() - started;
    snapshot_edge_stats stats = snapshot_seq_edge_stats(&seq);
    if (stats.min_edges != p.num_edges || stats.max_edges != p.num_edges) {
        fprintf(stderr, "bench_generate: WRONG: snapshots hold %lld..%lld edges, expected %lld\n",
                (long long)stats.min_edges, (long long)stats.max_edges, (long long)p.num_edges);
        return 1;
    }
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    printf("powerlaw: %lld vertices, %lld snapshots x %lld edges (%lld in all), churn %.2f\n", (long long)p.num_nodes,
           (long long)p.num_snapshots, (long long)p.num_edges, (long long)stats.total_edges, p.churn);
    printf("time %.2f s, %.2f M edges/s, peak resident memory %.2f GiB\n", elapsed,
           (double)stats.total_edges / elapsed / 1e6, (double)usage.ru_maxrss / (1024.0 * 1024.0));
    snapshot_seq_free(&seq);
    return 0;
}
