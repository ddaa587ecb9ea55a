/* Chapter 06 in the technique table: vertex-partitioned training (opt/train_partition.h) against the
 * single-process reference trainer (ref/train.h), and the partition metrics benchmark.
 *
 * A variant is a partitioner and a mode ("dynahb cache", "metis exchange", ...). A step of the engine
 * is one optimizer step of the first epoch: the reference runs its windows on rank 0, the twin runs
 * every window on every rank's own rows and all-reduces the gradient. Compared: the step's loss and
 * every gradient, fp (the worst |twin - ref| / max(1, |ref|); sums over ranks and rows in another
 * order, and BLAS, are the only differences). Work = the edge occurrences of the step's windows
 * (Σ over windows and their snapshots of |E_t|). The row's closing words: the ranks, the exchange
 * bytes the twin sent (summed over ranks) beside the count from the graph (halo rows x the model's
 * floats per row x 4, over the windows run), the busy-time imbalance and the rows held per vertex.
 * Under `mpiexec -n R` the twin runs on R ranks; alone, on one rank (no MPI needed).
 *
 * The benchmark (build/bench/bench partition) measures the partitioners on the chapter's datasets
 * at R = 2 .. 64 in one process: edge cut, vertices, DynaHB load imbalance, halo rows, cache
 * replication at depth 1 and at GC-LSTM's depth for windows of 8, exchange bytes per epoch (T-GCN and
 * GC-LSTM, H = 32, counted from the graph) and the partitioner's seconds; metrics.csv. Training is
 * measured under mpiexec by bench/partition.sh. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/technique.h"
#include "opt/kernels.h"
#include "opt/train_partition.h"
#include "ref/core/clock.h"
#include "ref/nn/compare.h"
#include "ref/core/memory.h"
#include "ref/partition_chunks.h"

static const char *const partition_variants[] = {
    "hash cache",   "hash exchange", "pts cache", "pts exchange", "metis cache",     "metis exchange",
    "dynahb cache", "dynahb exchange", "dgc cache", "dgc exchange", "pss-ts exchange", NULL,
};
static const partition_method variant_method[] = {
    PARTITION_HASH,   PARTITION_HASH,   PARTITION_PTS, PARTITION_PTS, PARTITION_METIS,  PARTITION_METIS,
    PARTITION_DYNAHB, PARTITION_DYNAHB, PARTITION_DGC, PARTITION_DGC, PARTITION_PSS_TS,
};

/* The training every run uses (small: `twofold verify` runs it on the user's data). */
enum { PARTITION_HIDDEN = 16, PARTITION_WINDOW = 8, PARTITION_BATCH = 2 };

typedef struct partition_state {
    const snapshot_seq *seq;     /* borrowed */
    comm *group;                 /* the ranks, or `alone` */
    comm alone;                  /* a one-rank comm that never calls MPI */
    partition p;
    trainer ref;                 /* rank 0 */
    partition_trainer twin;
    train_schedule schedule;
    int64_t steps;
    double ref_loss, twin_loss;  /* the current step's loss sums */
    float *ref_gradient, *twin_gradient; /* [parameters] */
    int64_t parameters;
    double work;                 /* edge occurrences of the steps' windows */
    double counted_bytes;        /* exchange bytes counted from the graph for the steps */
    double sent_bytes;           /* exchange bytes sent, summed over ranks (after the last step) */
    double busy_imbalance;       /* busy time max / mean over ranks (after the last step) */
    double rows_held;            /* sum over ranks of rows held, over N */
    technique_twin twins[1];
} partition_state;

/* Every gradient of list, packed in order into out [parameters]. */
static void pack_gradient(const parameter_list *list, float *out)
{
    int64_t at = 0;
    for (int64_t i = 0; i < list->count; i++) {
        memcpy(out + at, list->items[i].grad.data, (size_t)list->items[i].grad.size * sizeof(float));
        at += list->items[i].grad.size;
    }
}

/* The exchange bytes of the steps' windows, from the graph: halo rows x floats per row x 4 (pss-ts:
 * the rows its snapshots' owners send). */
static double counted_bytes(const partition_state *s, const model_config *config)
{
    const snapshot_seq *seq = s->seq;
    model_config shaped = *config;
    shaped.in_features = seq->feature_width;
    int64_t forward, backward, temporal;
    partition_model_traffic(&shaped, &forward, &backward, &temporal);
    int32_t *mark = calloc((size_t)seq->num_nodes, sizeof *mark);
    double floats = 0;
    for (int64_t step = 0; mark && step < s->steps; step++)
        for (int64_t slot = 0; slot < s->schedule.batch; slot++) {
            const int64_t w = train_schedule_window(&s->schedule, step, slot);
            int64_t first, count;
            if (w < 0)
                continue;
            train_schedule_span(&s->schedule, w, &first, &count);
            for (int64_t t = first; t < first + count; t++) {
                if (s->p.method == PARTITION_PSS_TS) {
                    int64_t foreign = 0;
                    for (int64_t v = 0; v < seq->num_nodes; v++)
                        foreign += s->p.vertex_owner[v] != s->p.snapshot_owner[t];
                    floats += (double)(foreign * seq->feature_width);
                } else
                    floats += (double)(partition_halo_rows(&seq->snapshots[t].graph, s->p.vertex_owner, s->p.ranks,
                                                           NULL, mark) *
                                       (forward + backward));
            }
        }
    free(mark);
    return floats * 4;
}

static int partition_setup(const technique_context *context, const dataset *data, int variant, void **state,
                           int *twins, tf_error *err)
{
    if (data->kind != DATASET_SNAPSHOTS)
        return tf_error_set(err, TECHNIQUE_SKIP, "needs a snapshot sequence; %s is an event stream", data->name);
    partition_state *s = tf_alloc(1, sizeof *s, "partition technique", err);
    if (!(*state = s))
        return err->code;
    s->seq = &data->snapshots;
    s->alone.size = 1;
    s->group = context->group ? context->group : &s->alone;
    if (s->group->size > s->seq->num_nodes)
        return tf_error_set(err, TECHNIQUE_SKIP, "%d ranks for %lld vertices", s->group->size,
                            (long long)s->seq->num_nodes);
    /* model (kind, in, hidden, out, Chebyshev K): in and out come from the data */
    model_config config = {MODEL_TGCN, 0, PARTITION_HIDDEN, 0, 2};
    if (context->params)
        config = *(const model_config *)context->params;
    const partition_mode mode = strstr(partition_variants[variant], "cache") ? PARTITION_CACHE : PARTITION_EXCHANGE;
    const partition_method method = variant_method[variant];
    if (partition_training_supported(method, mode, config.kind, err) != TF_OK)
        return tf_error_set(err, TECHNIQUE_SKIP, "%s", err->message);
    train_options options;
    train_options_default(&options);
    options.window = PARTITION_WINDOW;
    options.batch = PARTITION_BATCH;
    partition_options po;
    partition_options_default(&po);
    po.ranks = s->group->size;
    po.model = config;
    if (method == PARTITION_PSS_TS && po.ranks > s->seq->num_snapshots)
        return tf_error_set(err, TECHNIQUE_SKIP, "pss-ts: %d ranks for %lld snapshots", po.ranks,
                            (long long)s->seq->num_snapshots);
    if (ref_partition_snapshots(s->seq, method, &po, &s->p, err) != TF_OK ||
        trainer_create(&s->ref, s->seq, &config, &options, err) != TF_OK ||
        partition_trainer_create(&s->twin, s->group, s->seq, s->p.vertex_owner,
                                 method == PARTITION_PSS_TS ? s->p.snapshot_owner : NULL, mode, &config, &options,
                                 &opt_kernels, err) != TF_OK)
        return err->code;
    s->schedule = trainer_schedule(&s->ref);
    s->steps = s->schedule.steps;
    s->parameters = parameters_size(&s->ref.model.parameters);
    s->ref_gradient = tf_alloc((size_t)s->parameters, sizeof(float), "gradients", err);
    s->twin_gradient = s->ref_gradient ? tf_alloc((size_t)s->parameters, sizeof(float), "gradients", err) : NULL;
    if (!s->twin_gradient)
        return err->code;
    for (int64_t step = 0; step < s->steps; step++)
        for (int64_t slot = 0; slot < s->schedule.batch; slot++) {
            const int64_t w = train_schedule_window(&s->schedule, step, slot);
            int64_t first, count;
            if (w < 0)
                continue;
            train_schedule_span(&s->schedule, w, &first, &count);
            for (int64_t t = first; t < first + count; t++)
                s->work += (double)s->seq->snapshots[t].graph.num_edges;
        }
    s->counted_bytes = mode == PARTITION_EXCHANGE ? counted_bytes(s, &config) : 0;
    s->twins[0] = (technique_twin){"R ranks", TECHNIQUE_FP, TECHNIQUE_CPU_TOLERANCE};
    *twins = 1;
    return TF_OK;
}

static const technique_twin *partition_twin(const void *state, int index)
{
    return &((const partition_state *)state)->twins[index];
}

static int64_t partition_steps(const void *state) { return ((const partition_state *)state)->steps; }

static int partition_run_ref(void *state, int64_t step, tf_error *err)
{
    partition_state *s = state;
    parameters_zero_grad(&s->ref.model.parameters);
    s->ref_loss = 0;
    for (int64_t slot = 0; slot < s->schedule.batch; slot++)
        if (trainer_train_slot(&s->ref, s->seq, &s->schedule, step, slot, &s->ref_loss, err) != TF_OK)
            return err->code;
    pack_gradient(&s->ref.model.parameters, s->ref_gradient);
    trainer_apply_gradient(&s->ref);
    return TF_OK;
}

/* After the last step every rank joins one sum of the bytes, the busy times and the rows held. */
static int gather_counts(partition_state *s, tf_error *err)
{
    comm *g = s->group;
    const int ranks = g->size;
    double *values = tf_alloc((size_t)(ranks + 2), sizeof *values, "rank counts", err);
    if (!values)
        return err->code;
    values[0] = (double)s->twin.stats.exchange_bytes;
    values[1] = (double)(s->twin.part.rows + s->twin.part.cached);
    values[2 + g->rank] = s->twin.stats.busy_cpu_seconds;
    int status = ranks > 1 ? comm_allreduce_sum_double(g, values, ranks + 2, err) : TF_OK;
    if (status == TF_OK) {
        double largest = 0, total = 0;
        for (int r = 0; r < ranks; r++) {
            largest = fmax(largest, values[2 + r]);
            total += values[2 + r];
        }
        s->sent_bytes = values[0];
        s->rows_held = values[1] / (double)s->seq->num_nodes;
        s->busy_imbalance = total > 0 ? largest / (total / ranks) : 1.0;
    }
    free(values);
    return status;
}

static int partition_run_twin(void *state, int twin, int64_t step, tf_error *err)
{
    (void)twin;
    partition_state *s = state;
    s->twin_loss = 0;
    if (partition_trainer_step(&s->twin, step, &s->twin_loss, err) != TF_OK)
        return err->code;
    pack_gradient(&s->twin.base.model.parameters, s->twin_gradient);
    return step + 1 == s->steps ? gather_counts(s, err) : TF_OK;
}

static double partition_compare(void *state, int twin, int64_t step)
{
    (void)twin, (void)step;
    const partition_state *s = state;
    const double loss = fabs(s->twin_loss - s->ref_loss) / fmax(1.0, fabs(s->ref_loss));
    const double gradient = relative_error(s->twin_gradient, s->ref_gradient, s->parameters);
    return isnan(loss) || isnan(gradient) ? INFINITY : fmax(loss, gradient);
}

static void partition_corrupt(void *state, int twin)
{
    (void)twin;
    partition_state *s = state;
    s->twin_gradient[0] = technique_spoiled(s->twin_gradient[0]);
}

static double partition_work(const void *state, const char **unit)
{
    *unit = "edges";
    return ((const partition_state *)state)->work;
}

/* technique::describe: seconds [1 + twins], text [size]. */
static void partition_describe(const void *state, const double *seconds, char *text, size_t size)
{
    (void)seconds;
    const partition_state *s = state;
    snprintf(text, size, "%d rank(s), exchange %.0f bytes (counted from the graph: %.0f), busy max/mean %.2f, rows "
                         "held / N %.2f",
             s->group->size, s->sent_bytes, s->counted_bytes, s->busy_imbalance, s->rows_held);
}

static void partition_teardown(void *state)
{
    partition_state *s = state;
    if (!s)
        return;
    partition_trainer_free(&s->twin);
    trainer_free(&s->ref);
    partition_free(&s->p);
    free(s->ref_gradient);
    free(s->twin_gradient);
    free(s);
}

/* ---- the metrics benchmark ---------------------------------------------------------------------- */

/* One CSV row per (dataset, method, R). */
static int measure_one(FILE *csv, const char *name, const snapshot_seq *seq, partition_method method, int ranks,
                       tf_error *err)
{
    partition_options o;
    partition_options_default(&o);
    o.ranks = ranks;
    partition p;
    double started = wall_seconds();
    if (ref_partition_snapshots(seq, method, &o, &p, err) != TF_OK)
        return TF_ERR_INPUT;
    const double seconds = wall_seconds() - started;
    const model_config tgcn = {MODEL_TGCN, seq->feature_width, 32, seq->target_width, 2};
    const model_config gclstm = {MODEL_GCLSTM, seq->feature_width, 32, seq->target_width, 2};
    const int64_t train = (int64_t)(0.8 * (double)seq->num_snapshots);
    const int deep = partition_cache_depth(&gclstm, 8);
    int status = TF_OK;
    if (p.vertex_owner) {
        partition_metrics shallow, wide;
        int64_t tgcn_bytes = 0, gclstm_bytes = 0;
        status = partition_measure(seq, p.vertex_owner, ranks, 1, 1, &shallow, err);
        if (status == TF_OK)
            status = partition_measure(seq, p.vertex_owner, ranks, 1, deep, &wide, err);
        if (status == TF_OK)
            status = partition_exchange_bytes(seq, p.vertex_owner, ranks, &tgcn, train, 8, 0, &tgcn_bytes, err);
        if (status == TF_OK)
            status = partition_exchange_bytes(seq, p.vertex_owner, ranks, &gclstm, train, 8, 0, &gclstm_bytes, err);
        if (status == TF_OK) {
            const double mean_vertices = (double)seq->num_nodes / ranks;
            fprintf(csv, "%s,%s,%d,%.4f,%.4f,%.4f,%.4f,%lld,%.4f,%.4f,%lld,%lld,%.4f\n", name,
                    partition_method_name(method), ranks,
                    100.0 * (double)shallow.cut_edges / (double)(shallow.total_edges ? shallow.total_edges : 1),
                    (double)shallow.vertices_max / mean_vertices, shallow.load_max_over_mean,
                    isinf(shallow.load_max_over_min) ? -1.0 : shallow.load_max_over_min, (long long)shallow.halo_rows,
                    shallow.replication, wide.replication, (long long)tgcn_bytes, (long long)gclstm_bytes, seconds);
            printf("  %-15s %-7s R %2d  cut %6.2f%%  load max/mean %6.3f  halo %9lld  replication %5.2f / %5.2f  "
                   "bytes/epoch tgcn %11lld gclstm %12lld  (%.3f s)\n",
                   name, partition_method_name(method), ranks,
                   100.0 * (double)shallow.cut_edges / (double)(shallow.total_edges ? shallow.total_edges : 1),
                   shallow.load_max_over_mean, (long long)shallow.halo_rows, shallow.replication, wide.replication,
                   (long long)tgcn_bytes, (long long)gclstm_bytes, seconds);
            partition_metrics_free(&wide);
        }
        partition_metrics_free(&shallow);
    } else if (p.snapshot_owner) { /* pss: load over snapshot blocks and the state rows crossing them */
        int64_t *load = tf_alloc((size_t)ranks, sizeof *load, "pss loads", err), boundary = 0;
        if (!load)
            status = TF_ERR_INPUT;
        else {
            partition_pss_costs(seq, p.snapshot_owner, ranks, load, &boundary);
            double largest = 0, total = 0;
            for (int r = 0; r < ranks; r++) {
                largest = fmax(largest, (double)load[r]);
                total += (double)load[r];
            }
            fprintf(csv, "%s,pss,%d,,,%.4f,,%lld,1,1,0,0,%.4f\n", name, ranks, largest / (total / ranks),
                    (long long)boundary, seconds);
            printf("  %-15s pss     R %2d  load max/mean %6.3f  state rows crossing blocks %lld\n", name, ranks,
                   largest / (total / ranks), (long long)boundary);
        }
        free(load);
    } else { /* dgc-st: spatial and temporal super-graph cut, work balance */
        double *work = tf_alloc((size_t)ranks, sizeof *work, "dgc-st work", err);
        int64_t spatial = 0, temporal = 0;
        status = work ? partition_dgc_steps_costs(seq, &o, p.step_owner, &spatial, &temporal, work, err) : TF_ERR_INPUT;
        if (status == TF_OK) {
            double largest = 0, smallest = INFINITY, total = 0;
            for (int r = 0; r < ranks; r++) {
                largest = fmax(largest, work[r]);
                smallest = fmin(smallest, work[r]);
                total += work[r];
            }
            fprintf(csv, "%s,dgc-st,%d,,,%.4f,%.4f,,,,%lld,%lld,%.4f\n", name, ranks, largest / (total / ranks),
                    smallest > 0 ? largest / smallest : -1.0, (long long)spatial, (long long)temporal, seconds);
            printf("  %-15s dgc-st  R %2d  work max/mean %6.3f  super-graph cut: spatial %lld, temporal %lld floats  "
                   "(%.3f s)\n",
                   name, ranks, largest / (total / ranks), (long long)spatial, (long long)temporal, seconds);
        }
        free(work);
    }
    partition_free(&p);
    return status;
}

static int partition_benchmark(const benchmark_options *options, tf_error *err)
{
    static const char *const full[][2] = {
        {"twitter_tennis", "twitter_tennis"},
        {"england_covid", "england_covid"},
        {"montevideo_bus", "montevideo_bus"},
        {"los", "los"},
        {"powerlaw:nodes=50000,edges=100000,snapshots=10,arrival=0.02,exponent=2.1,features=2,seed=1", "powerlaw_1e6"},
    };
    static const char *const quick[][2] = {
        {"england_covid", "england_covid"},
        {"powerlaw:nodes=2000,edges=4000,snapshots=5,arrival=0.02,exponent=2.1,features=2,seed=1", "powerlaw_2e4"},
    };
    const partition_method methods[] = {PARTITION_HASH, PARTITION_PTS,    PARTITION_METIS, PARTITION_DYNAHB,
                                        PARTITION_DGC,  PARTITION_PSS,    PARTITION_DGC_ST};
    const int count = options->quick ? 2 : 5;
    char path[4096];
    snprintf(path, sizeof path, "%s/metrics.csv", options->out);
    FILE *csv = fopen(path, "w");
    if (!csv)
        return tf_error_set(err, TF_ERR_INPUT, "%s: cannot create", path), -1;
    fprintf(csv, "dataset,method,ranks,cut_percent,vertices_max_over_mean,load_max_over_mean,load_max_over_min,"
                 "halo_rows,replication_depth1,replication_gclstm_w8,bytes_tgcn_h32,bytes_gclstm_h32,seconds\n");
    printf("partition metrics, one process (pss: load = present + edges per snapshot block; dgc-st: cost-model work "
           "and super-graph cut). Replication at depth 1 / GC-LSTM's depth for windows of 8; bytes per epoch counted "
           "from the graph, windows of 8.\n");
    int status = TF_OK;
    for (int i = 0; status == TF_OK && i < count; i++) {
        const char *spec = options->quick ? quick[i][0] : full[i][0], *name = options->quick ? quick[i][1] : full[i][1];
        dataset d;
        if ((status = dataset_load(spec, NULL, &d, err)) != TF_OK)
            break;
        for (int ranks = 2; status == TF_OK && ranks <= 64; ranks *= 2) {
            if (ranks > d.snapshots.num_nodes) {
                printf("  %-15s R %2d skipped: more ranks than its %lld vertices\n", name, ranks,
                       (long long)d.snapshots.num_nodes);
                continue;
            }
            for (size_t m = 0; status == TF_OK && m < sizeof methods / sizeof *methods; m++) {
                if (methods[m] == PARTITION_PSS && ranks > d.snapshots.num_snapshots)
                    continue;
                status = measure_one(csv, name, &d.snapshots, methods[m], ranks, err);
            }
            fflush(csv);
        }
        dataset_free(&d);
    }
    fclose(csv);
    if (status != TF_OK)
        return -1;
    printf("wrote %s (training under mpiexec: bench/partition.sh)\n", path);
    return 0;
}

static const technique_case partition_demo[] = {
    {6, "twitter_tennis", "twitter_tennis"},
    {5, "twitter_tennis", "twitter_tennis"},
    {0, NULL, NULL},
};

const technique technique_partition = {
    .name = "partition",
    .chapter = "06",
    .title = "partition",
    .needs = "a snapshot sequence",
    .variants = partition_variants,
    .distributed = 1,
    .demo = partition_demo,
    .setup = partition_setup,
    .twin = partition_twin,
    .steps = partition_steps,
    .run_ref = partition_run_ref,
    .run_twin = partition_run_twin,
    .compare = partition_compare,
    .corrupt = partition_corrupt,
    .work = partition_work,
    .describe = partition_describe,
    .teardown = partition_teardown,
    .benchmark = partition_benchmark,
};
