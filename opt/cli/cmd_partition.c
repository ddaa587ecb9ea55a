/* twofold partition: split a dataset among R ranks with one of chapter 06's partitioners and print
 * what the split costs; --save writes the owner array as an int64 .npy. One process, no MPI. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/dataset.h"
#include "opt/cli/cli.h"
#include "opt/cli/commands.h"
#include "ref/core/clock.h"
#include "ref/core/io.h"
#include "ref/core/memory.h"
#include "ref/data/npy.h"
#include "ref/partition.h"
#include "ref/partition_bicut.h"
#include "ref/partition_chunks.h"

typedef struct partition_command {
    const char *data, *save;
    partition_method method;
    int have_layers, have_model;
    partition_options options;
    int64_t window, batch, neighbours;
    option_parse parsed;   /* which options were given */
} partition_command;

#define AT(member) OPTION_FIELD(partition_command, member)

static const option_spec partition_options_table[] = {
    {"--data", OPTION_TEXT, AT(data), .required = 1, .value_name = "D",
     .help = "bundled name, file or generator spec (see twofold info --help)"},
    {"--ranks", OPTION_WHOLE, AT(options.ranks), .min = 1, .max = 1 << 20, .required = 1, .value_name = "R",
     .help = "ranks to split among (>= 1)"},
    {"--method", OPTION_CHOICE, AT(method), .choices = partition_method_choices, .required = 1, .value_name = "M",
     .help = "snapshot sequences: hash, pts, pss, pss-ts, metis, dynahb, dgc, dgc-st;\n"
             "event streams: reflexbicut, interval, hash, pts (Sven's placement of\n"
             "the node memory; pts is Sven's range)"},
    {"--save", OPTION_TEXT, AT(save), .value_name = "FILE",
     .help = "write the owners as an int64 .npy: [N] for vertex methods (pss-ts: its vertex\n"
             "owners), [T] for pss, [T][N] for dgc-st (-1 where absent); for an event stream\n"
             "the [N] placement the dispatch trainer reads as file:FILE"},
    {"", OPTION_SECTION, .help = "\nSnapshot sequences (refused with an event stream):"},
    {"--seed", OPTION_WHOLE, AT(options.seed), .min = 0, .max = INT64_MAX, .value_name = "S",
     .help = "METIS's seed (default 1)"},
    {"--layers", OPTION_WHOLE, AT(options.layers), .min = 1, .max = 64, .given = AT(have_layers), .value_name = "L",
     .help = "DynaHB's L (default: from --model, else 2 as in DynaHB's Example 2)"},
    {"--chunk-cap", OPTION_WHOLE, AT(options.chunk_cap), .min = 1, .max = INT64_MAX, .value_name = "C",
     .help = "DGC's label size cap in vertex-steps (default: a quarter of a rank's share)"},
    {"--model", OPTION_CHOICE, AT(options.model.kind), .choices = snapshot_model_choices, .given = AT(have_model),
     .value_name = "M",
     .help = "tgcn (default), gconvgru, gclstm or evolvegcn: weighs DGC's graph, sets the\n"
             "bytes and the cache depth"},
    {"--hidden", OPTION_WHOLE, AT(options.model.hidden), .min = 1, .max = 65536, .value_name = "H",
     .help = "its state width (default 32)"},
    {"--k", OPTION_WHOLE, AT(options.model.chebyshev_k), .min = 1, .max = 16, .value_name = "K",
     .help = "its Chebyshev order (default 2)"},
    {"--window", OPTION_WHOLE, AT(window), .min = 0, .max = INT64_MAX, .value_name = "W",
     .help = "training window (default 0: the whole training split)"},
    {"", OPTION_SECTION, .help = "\nEvent streams (refused with a snapshot sequence):"},
    {"--batch", OPTION_WHOLE, AT(batch), .min = 1, .max = INT64_MAX, .value_name = "B",
     .help = "events per rank per batch (default 200)"},
    {"--neighbours", OPTION_WHOLE, AT(neighbours), .min = 0, .max = 1000, .value_name = "K",
     .help = "recent neighbours sampled per root (default 10, TGN's)"},
    {.name = NULL},
};

static const option_page partition_pages[] = {
    {0, 19,
     "usage: twofold partition --data D --ranks R --method M [options]\n"
     "\n"
     "Split a dataset among R ranks and print the cost of the split: per rank its vertices, DynaHB\n"
     "load, halo rows and cache rows; then the imbalance, the edge cut, the bytes exchange-mode\n"
     "training would move per epoch (counted from the graph) and the cache's replication.\n"
     "One process does it (no MPI): run it alone, not under mpiexec.\n"
     "\n",
     "\n" EXIT_STATUS_HELP},
    {0, 0, NULL, NULL},
};

static const option_table partition_table = {
    .command = "partition", .options = partition_options_table, .pages = partition_pages};

static int parse_arguments(int argc, char **argv, partition_command *c, int *help, tf_error *err)
{
    memset(c, 0, sizeof *c);
    partition_options_default(&c->options);
    c->options.ranks = 0;
    c->batch = 200;
    c->neighbours = 10;
    if (options_parse(&partition_table, argc, argv, c, &c->parsed, err) != TF_OK)
        return TF_ERR_INPUT;
    *help = c->parsed.help;
    /* chapter 06's cost model (ref/partition.h: layers, cache depth, traffic) knows the models the
     * model table marks for vertex splitting; the others would be charged another model's costs */
    if (!*help && c->have_model && !model_has(c->options.model.kind, MODEL_VERTEX_ROWS))
        return tf_error_set(err, TF_ERR_INPUT, "partition: chapter 06's cost model does not know %s yet (its halos "
                                               "and traffic); it knows the models --split vertex trains",
                            model_kind_name(c->options.model.kind));
    if (!c->have_layers)
        c->options.layers = c->have_model ? partition_model_layers(&c->options.model) : 2;
    return TF_OK;
}

/* Refuses an option of the other kind of data (@p snapshots: the data is a snapshot sequence),
 * which the split would take and ignore. */
static int other_kind_options(const partition_command *c, int snapshots, tf_error *err)
{
    static const char *const event_options[] = {"--batch", "--neighbours", NULL};
    static const char *const snapshot_options[] = {"--layers", "--chunk-cap", "--model", "--hidden", "--k",
                                                   "--window", "--seed", NULL};
    for (const char *const *name = snapshots ? event_options : snapshot_options; *name; name++)
        if (options_given(&partition_table, &c->parsed, *name))
            return tf_error_set(err, TF_ERR_INPUT, "partition: %s applies to %s; %s is %s", *name,
                                snapshots ? "event streams" : "snapshot sequences", c->data,
                                snapshots ? "a snapshot sequence" : "an event stream");
    return TF_OK;
}

/* owner [shape[0]] or [shape[0]][shape[1]] written as an int64 .npy of that shape. */
static int save_owners(const char *path, const int32_t *owner, int ndim, const int64_t *shape, tf_error *err)
{
    const int64_t count = ndim == 1 ? shape[0] : shape[0] * shape[1];
    int64_t *wide = tf_alloc((size_t)count, sizeof *wide, "owners to save", err);
    if (!wide)
        return TF_ERR_INPUT;
    for (int64_t i = 0; i < count; i++)
        wide[i] = owner[i];
    int status = npy_write(path, NPY_INT64, ndim, shape, wide, err);
    free(wide);
    if (status == TF_OK && ndim == 1)
        printf("saved %s: int64 [%lld] owners\n", path, (long long)shape[0]);
    else if (status == TF_OK)
        printf("saved %s: int64 [%lld][%lld] owners (-1 where absent)\n", path, (long long)shape[0],
               (long long)shape[1]);
    return status;
}

/* "max/mean 1.234" or "inf" when the denominator is zero. */
static const char *ratio_text(double value, char *out, size_t size)
{
    if (isinf(value))
        snprintf(out, size, "inf (a rank holds none)");
    else
        snprintf(out, size, "%.3f", value);
    return out;
}

/* Vertex methods: the per-rank table and the summary of owner [N]. */
static int report_vertices(const partition_command *c, const snapshot_seq *seq, const int32_t *owner, tf_error *err)
{
    const int ranks = c->options.ranks;
    model_config model = c->options.model;
    model.in_features = seq->feature_width;
    model.out_features = seq->target_width;
    const int64_t train = (int64_t)(0.8 * (double)seq->num_snapshots);
    const int64_t length = c->window == 0 || c->window > train ? train : c->window;
    const int depth = partition_cache_depth(&model, length);
    partition_metrics m;
    if (partition_measure(seq, owner, ranks, c->options.layers, depth, model.kind, &m, err) != TF_OK)
        return TF_ERR_INPUT;
    int64_t bytes = 0;
    int status = train >= 1 ? partition_exchange_bytes(seq, owner, ranks, &model, train, c->window, 0, &bytes, err)
                            : TF_OK;
    if (status == TF_OK) {
        char a[64], b[64], held[32];
        printf("%6s %10s %16s %12s %12s\n", "rank", "vertices", "DynaHB load", "halo rows", "cache rows");
        for (int r = 0; r < ranks; r++)
            printf("%6d %10lld %16lld %12lld %12lld\n", r, (long long)m.rank_vertices[r], (long long)m.rank_load[r],
                   (long long)m.rank_halo[r], (long long)m.rank_cache[r]);
        printf("imbalance: DynaHB load (L = %d) max/mean %s, max/min %s; vertices %lld .. %lld per rank\n",
               c->options.layers, ratio_text(m.load_max_over_mean, a, sizeof a),
               ratio_text(m.load_max_over_min, b, sizeof b), (long long)m.vertices_min, (long long)m.vertices_max);
        printf("edge cut: %lld of %lld edge occurrences (%.2f%%) over %lld snapshots\n", (long long)m.cut_edges,
               (long long)m.total_edges, m.total_edges ? 100.0 * (double)m.cut_edges / (double)m.total_edges : 0.0,
               (long long)seq->num_snapshots);
        printf("exchange mode, %s H = %lld K = %d, window %lld: %lld halo rows over all snapshots, %lld bytes per "
               "epoch (training forward and backward, test forward; counted from the graph)\n",
               model_kind_name(model.kind), (long long)model.hidden, model.chebyshev_k, (long long)length,
               (long long)m.halo_rows, (long long)bytes);
        const double row_bytes = (double)(seq->num_snapshots * (seq->feature_width + seq->target_width)) * 4.0;
        printf("cache mode: depth %d (%s of all snapshots), replication %.3f, largest part %lld rows (%s of "
               "features and targets)\n",
               depth, model_info_of(model.kind)->graph_operator == OPERATOR_WALK_FORWARD ? "in- and out-edges" : "in-edges",
               m.replication, (long long)m.cache_rows_max,
               tf_format_bytes((double)m.cache_rows_max * row_bytes, held, sizeof held));
    }
    partition_metrics_free(&m);
    return status;
}

/* pss: snapshots per rank of snapshot_owner [T], their load (rank_load [R] out) and the state rows
 * crossing blocks. */
static void report_snapshots(const partition_command *c, const snapshot_seq *seq, const int32_t *snapshot_owner,
                             int64_t *rank_load)
{
    int64_t boundary;
    partition_pss_costs(seq, snapshot_owner, c->options.ranks, rank_load, &boundary);
    double total = 0, largest = 0;
    printf("%6s %10s %16s\n", "rank", "snapshots", "present + edges");
    for (int r = 0; r < c->options.ranks; r++) {
        int64_t count = 0;
        for (int64_t t = 0; t < seq->num_snapshots; t++)
            count += snapshot_owner[t] == r;
        printf("%6d %10lld %16lld\n", r, (long long)count, (long long)rank_load[r]);
        total += (double)rank_load[r];
        largest = fmax(largest, (double)rank_load[r]);
    }
    printf("imbalance: load max/mean %.3f\n", total > 0 ? largest / (total / c->options.ranks) : 1.0);
    printf("state rows crossing the %d block boundaries in a full-sequence pass: %lld (windowed training with "
           "--split window --blocks sends none: each window starts from a zero state)\n",
           c->options.ranks - 1, (long long)boundary);
}

/* dgc-st: super-graph cut and per-rank work of step_owner [T][N]. */
static int report_steps(const partition_command *c, const snapshot_seq *seq, const int32_t *step_owner, tf_error *err)
{
    int64_t spatial, temporal;
    double *work = tf_alloc((size_t)c->options.ranks, sizeof *work, "rank work", err);
    if (!work || partition_dgc_steps_costs(seq, &c->options, step_owner, &spatial, &temporal, work, err) != TF_OK) {
        free(work);
        return TF_ERR_INPUT;
    }
    double total = 0, largest = 0, smallest = INFINITY;
    printf("%6s %14s %16s\n", "rank", "vertex-steps", "work (cost model)");
    for (int r = 0; r < c->options.ranks; r++) {
        int64_t steps = 0;
        for (int64_t i = 0; i < seq->num_snapshots * seq->num_nodes; i++)
            steps += step_owner[i] == r;
        printf("%6d %14lld %16.4g\n", r, (long long)steps, work[r]);
        total += work[r];
        largest = fmax(largest, work[r]);
        smallest = fmin(smallest, work[r]);
    }
    char a[64];
    printf("imbalance: work max/mean %.3f, max/min (DGC's lambda) %s\n", total > 0 ? largest / (total / c->options.ranks) : 1.0,
           ratio_text(smallest > 0 ? largest / smallest : INFINITY, a, sizeof a));
    printf("super-graph cut: spatial %lld, temporal %lld floats per epoch pass (partition_model_traffic weights); "
           "dgc-st is measured only: training needs an owner per vertex (--partition dgc)\n",
           (long long)spatial, (long long)temporal);
    free(work);
    return TF_OK;
}

static int partition_snapshots(const partition_command *c, const dataset *d, tf_error *err)
{
    const snapshot_seq *seq = &d->snapshots;
    if (!partition_method_for_snapshots(c->method))
        return tf_error_set(err, TF_ERR_INPUT, "partition: %s places an event model's memory; %s is a snapshot "
                                               "sequence (use hash, pts, pss, pss-ts, metis, dynahb, dgc or dgc-st)",
                            partition_method_name(c->method), c->data);
    if (other_kind_options(c, 1, err) != TF_OK)
        return TF_ERR_INPUT;
    partition p;
    double started = wall_seconds();
    if (ref_partition_snapshots(seq, c->method, &c->options, &p, err) != TF_OK)
        return TF_ERR_INPUT;
    const double seconds = wall_seconds() - started;
    printf("%s on %s: %lld vertices, %lld snapshots, %d ranks (%.3f s)\n", partition_method_name(c->method), d->name,
           (long long)seq->num_nodes, (long long)seq->num_snapshots, c->options.ranks, seconds);
    int status = TF_OK;
    int64_t *rank_load = NULL;
    if (p.snapshot_owner && c->method == PARTITION_PSS) {
        if (!(rank_load = tf_alloc((size_t)c->options.ranks, sizeof *rank_load, "rank loads", err)))
            status = TF_ERR_INPUT;
        else
            report_snapshots(c, seq, p.snapshot_owner, rank_load);
    } else if (p.step_owner)
        status = report_steps(c, seq, p.step_owner, err);
    else {
        if (c->method == PARTITION_PSS_TS)
            printf("pss-ts: the structure encoder runs on snapshot blocks (pss), its output is shuffled to the pts "
                   "owners below, which run the time encoder\n");
        status = report_vertices(c, seq, p.vertex_owner, err);
    }
    if (status == TF_OK && c->save) {
        const int64_t vertex_shape[1] = {seq->num_nodes}, snapshot_shape[1] = {seq->num_snapshots},
                      step_shape[2] = {seq->num_snapshots, seq->num_nodes};
        if (p.vertex_owner)
            status = save_owners(c->save, p.vertex_owner, 1, vertex_shape, err);
        else if (p.snapshot_owner)
            status = save_owners(c->save, p.snapshot_owner, 1, snapshot_shape, err);
        else
            status = save_owners(c->save, p.step_owner, 2, step_shape, err);
    }
    free(rank_load);
    partition_free(&p);
    return status;
}

/* @p method's placement of @p n vertices on @p ranks into owner [n] (reflexbicut's on @p demand). */
static int place(partition_method method, int64_t n, int ranks, const bicut_demand *demand, int32_t *owner,
                 bicut_stats *stats, tf_error *err)
{
    if (method == PARTITION_PTS)
        partition_range(n, ranks, owner);
    else if (method == PARTITION_INTERVAL)
        partition_interval(n, ranks, PARTITION_INTERVAL_BLOCK, owner);
    else if (method == PARTITION_HASH)
        partition_hash(n, ranks, owner);
    else
        return ref_reflexbicut(demand, owner, stats, err);
    return TF_OK;
}

/* The per-rank table of a placement owner [n] and its costs beside every baseline's (cost [4]:
 * range, interval, hash, reflexbicut); received and served [ranks] are scratch. */
static void print_placement(const partition_command *c, const dataset *d, const bicut_demand *demand,
                            const int32_t *owner, const int64_t *cost, const bicut_stats *stats, int64_t train_end,
                            double seconds, int64_t *received, int64_t *served)
{
    const int ranks = c->options.ranks;
    const int64_t n = d->events.num_nodes;
    printf("%s on %s: %lld vertices, demand of training events 0..%lld in batches of %lld per rank with %lld "
           "neighbours, %d ranks (%.3f s)\n",
           partition_method_name(c->method), d->name, (long long)n, (long long)train_end - 1, (long long)c->batch,
           (long long)c->neighbours, ranks, seconds);
    bicut_costs(demand, owner, received, served);
    printf("%6s %10s %12s %12s %12s\n", "rank", "vertices", "received", "served", "cap");
    for (int r = 0; r < ranks; r++) {
        int64_t held = 0;
        for (int64_t v = 0; v < n; v++)
            held += owner[v] == r;
        printf("%6d %10lld %12lld %12lld %12lld\n", r, (long long)held, (long long)received[r], (long long)served[r],
               (long long)(received[r] + served[r]));
    }
    printf("zeta (largest received + served, rows per epoch): %s %lld; range %lld, interval %lld, hash %lld, "
           "reflexbicut %lld (partition stage %lld, %lld moves%s)\n",
           partition_method_name(c->method), (long long)bicut_balance_cost(demand, owner), (long long)cost[0],
           (long long)cost[1], (long long)cost[2], (long long)cost[3], (long long)stats->initial_cost,
           (long long)stats->moves, stats->hit_move_cap ? ", stopped at the move cap" : "");
    printf("for reference: Sven's Eq. 5 read literally (local demand) %lld; Eq. 2's largest residual %lld\n",
           (long long)bicut_literal_cost(demand, owner), (long long)bicut_residual_max(demand, owner));
}

/* Event streams: a placement of the node memory and its communication cost per rank. */
static int partition_events(const partition_command *c, const dataset *d, tf_error *err)
{
    const event_stream *es = &d->events;
    const int ranks = c->options.ranks;
    const int64_t n = es->num_nodes;
    if (!partition_method_for_events(c->method))
        return tf_error_set(err, TF_ERR_INPUT, "partition: %s splits snapshot sequences; %s is an event stream (use "
                                               "reflexbicut, interval, hash or pts)",
                            partition_method_name(c->method), c->data);
    if (other_kind_options(c, 0, err) != TF_OK)
        return TF_ERR_INPUT;
    if (ranks > n)
        return tf_error_set(err, TF_ERR_INPUT, "partition: %d ranks for %lld vertices", ranks, (long long)n);
    temporal_csr history;
    bicut_demand demand;
    bicut_stats stats;
    memset(&demand, 0, sizeof demand);
    memset(&stats, 0, sizeof stats);
    int32_t *owner = tf_alloc((size_t)n, sizeof *owner, "placement", err);
    int64_t *received = owner ? tf_alloc((size_t)ranks, sizeof *received, "placement costs", err) : NULL;
    int64_t *served = received ? tf_alloc((size_t)ranks, sizeof *served, "placement costs", err) : NULL;
    if (!served || temporal_csr_build(&history, es, err) != TF_OK) {
        free(owner);
        free(received);
        free(served);
        return TF_ERR_INPUT;
    }
    const int64_t train_end = es->num_events * 70 / 100; /* the event trainer's training split */
    const double started = wall_seconds();
    int status = partition_event_demand(es, &history, 0, train_end, c->batch, ranks, (int)c->neighbours, &demand, err);
    const partition_method baselines[] = {PARTITION_PTS, PARTITION_INTERVAL, PARTITION_HASH, PARTITION_REFLEXBICUT};
    int64_t cost[4] = {0};
    for (int i = 0; status == TF_OK && i < 4; i++) {
        status = place(baselines[i], n, ranks, &demand, owner, &stats, err);
        cost[i] = status == TF_OK ? bicut_balance_cost(&demand, owner) : 0;
    }
    /* `owner` ends as reflexbicut's; the chosen method's is recomputed when it is a baseline. */
    if (status == TF_OK && c->method != PARTITION_REFLEXBICUT)
        place(c->method, n, ranks, &demand, owner, &stats, err);
    if (status == TF_OK)
        print_placement(c, d, &demand, owner, cost, &stats, train_end, wall_seconds() - started, received, served);
    if (status == TF_OK && c->save) {
        const int64_t shape[1] = {n};
        status = save_owners(c->save, owner, 1, shape, err);
    }
    bicut_stats_free(&stats);
    bicut_demand_free(&demand);
    temporal_csr_free(&history);
    free(owner);
    free(received);
    free(served);
    return status;
}

int command_partition(int argc, char **argv, tf_error *err)
{
    partition_command c;
    int help = 0;
    if (parse_arguments(argc, argv, &c, &help, err) != TF_OK)
        return TF_ERR_INPUT;
    if (help) {
        options_help(&partition_table, -1, stdout);
        return TF_OK;
    }
    /* One process computes the split for --ranks R; R copies under mpiexec printed it R times and
     * raced to write --save (with -wdir, one file per rank). */
    if (ranks_launched() > 1)
        return tf_error_set(err, TF_ERR_INPUT, "partition: run it as one process (it splits for --ranks %d without "
                            "MPI), not under mpiexec -n %d", c.options.ranks, ranks_launched());
    /* A path the save could not write (or would destroy) is said before the work, not after. */
    if (c.save && output_check("partition: --save", c.save, err) != TF_OK)
        return err->code;
    cli_progress_state progress = {0, ""};
    dataset_options data_options = {0, cli_progress, &progress, NULL, NULL};
    dataset d;
    if (dataset_load(c.data, &data_options, &d, err) != TF_OK)
        return TF_ERR_INPUT;
    int status = d.kind == DATASET_SNAPSHOTS ? partition_snapshots(&c, &d, err) : partition_events(&c, &d, err);
    dataset_free(&d);
    return status;
}
