/* Chapter 05 in the technique table: asynchronous and stale updates of snapshot training, each
 * twin (opt/async.h, on the ranks of the group) against its serial reference (ref/async.h, on
 * rank 0). Variants:
 *  - average: DynaHB's local updates, parameters averaged every 2 steps. Reference: R replicas
 *    stepped serially on the twin's kernels (R = the group's ranks). Bitwise: after every epoch
 *    (which ends with an average, so every replica holds one model) rank 0's parameters against
 *    the simulation's; the error is the count of values that differ.
 *  - stale: Sven's stale gradients, staleness 1. Reference: the serial delayed recurrence, on the
 *    twin's kernels too, so that what differs is the all-reduce's addition order alone (against
 *    the reference kernels: verify/test_async_mpi.c). fp: the worst |twin - ref| / max(1, |ref|)
 *    over every parameter; 0 on one rank, where the all-reduce is the identity.
 *  - dgc-zero: DGC's stale aggregation with theta = 0 on R = 4 simulated ranks (owner v mod R,
 *    ref/async_embeddings.h) against plain training, GConvGRU hidden 12, one window of 8 per step:
 *    bitwise (only rows whose bits the receiver already holds are reused). Serial: rank 0 alone.
 * average, stale: T-GCN, hidden 12, windows of 8, 2R windows per step, 2 epochs. Work = snapshots
 * trained.
 * Without a group (one process without MPI, as verify/test_technique.c runs the table) the
 * twin runs as one rank, where it calls no collective at all (opt/async.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/technique.h"
#include "opt/async.h"
#include "opt/kernels.h"
#include "ref/async.h"
#include "ref/async_embeddings.h"
#include "ref/nn/compare.h"
#include "ref/core/memory.h"

enum { ASYNC_EPOCHS = 2, ASYNC_HIDDEN = 12, ASYNC_WINDOW = 8, ASYNC_EVERY = 2 };

static const char *const async_variants[] = {"average", "stale", "dgc-zero", NULL};
enum { VARIANT_AVERAGE, VARIANT_STALE, VARIANT_DGC_ZERO };

/* What the benchmark may change for dgc-zero (technique_context::params); NULL: GConvGRU, hidden
 * 12, 4 simulated ranks. */
typedef struct dgc_params {
    model_kind kind;      /* the model */
    int64_t hidden;       /* its state width */
    int ranks;            /* simulated ranks (owner v mod R) */
    int epochs;           /* epochs compared */
} dgc_params;

static const dgc_params dgc_defaults = {MODEL_GCONVGRU, 12, 4, ASYNC_EPOCHS};


typedef struct async_state {
    const snapshot_seq *seq;  /* borrowed */
    int variant;
    comm alone;               /* the twin's one rank when there is no group */
    comm *group;              /* the twin's ranks */
    int root;                 /* 1 on the rank that runs the reference and compares */
    replica_set simulation;   /* VARIANT_AVERAGE's reference (root only) */
    trainer reference;        /* VARIANT_STALE's reference (root only) */
    trainer mine;             /* this rank's trainer of the twin */
    async_trainer twin;
    int64_t averages;         /* in the twin's last epoch */
    dgc_params dgc;           /* VARIANT_DGC_ZERO's settings */
    int32_t *owner;           /* [num_nodes] VARIANT_DGC_ZERO's simulated owners */
    stale_simulation simulated; /* VARIANT_DGC_ZERO's twin: the model `mine` runs on its kernels */
    technique_twin twins[1];
} async_state;

/* dgc-zero: plain training (the reference) against DGC's stale aggregation with theta = 0 on R
 * simulated ranks, one process. Reusing only rows whose bits the receiver already holds changes
 * nothing: bitwise. */
static int dgc_setup(async_state *s, const technique_context *context, tf_error *err)
{
    s->dgc = context->params ? *(const dgc_params *)context->params : dgc_defaults;
    s->root = !context->group || context->group->rank == 0;
    s->twins[0] = (technique_twin){"stale aggregation theta 0 (DGC)", TECHNIQUE_BITWISE, 0};
    if (!s->root)
        return TF_OK; /* a serial simulation: the other ranks of a group only wait */
    model_config config = {s->dgc.kind, 0, s->dgc.hidden, 0, 2};
    train_options options;
    train_options_default(&options);
    options.window = ASYNC_WINDOW;
    options.batch = 1;
    if (trainer_create(&s->reference, s->seq, &config, &options, err) != TF_OK ||
        trainer_create(&s->mine, s->seq, &config, &options, err) != TF_OK)
        return err->code;
    if (!(s->owner = tf_alloc((size_t)s->seq->num_nodes, sizeof(int32_t), "owners", err)))
        return err->code;
    for (int64_t v = 0; v < s->seq->num_nodes; v++)
        s->owner[v] = (int32_t)(v % s->dgc.ranks);
    stale_schedule zero = {STALE_ZERO, 0};
    if (stale_simulation_create(&s->simulated, s->seq, s->owner, s->dgc.ranks, &zero, &ref_kernels, err) != TF_OK)
        return err->code;
    s->mine.model.kernels = &s->simulated.table;
    return TF_OK;
}

static int async_setup(const technique_context *context, const dataset *data, int variant, void **state, int *twins,
                       tf_error *err)
{
    if (data->kind != DATASET_SNAPSHOTS)
        return tf_error_set(err, TECHNIQUE_SKIP, "needs a snapshot sequence; %s is an event stream", data->name);
    async_state *s = tf_alloc(1, sizeof *s, "async technique", err);
    if (!(*state = s))
        return err->code;
    s->seq = &data->snapshots;
    s->variant = variant;
    *twins = 1;
    if (variant == VARIANT_DGC_ZERO) /* serial: no ranks involved */
        return dgc_setup(s, context, err);
    s->alone = (comm){.world = MPI_COMM_NULL, .rank = 0, .size = 1, .local_size = 1, .device = -1};
    s->group = context->group ? context->group : &s->alone;
    s->root = s->group->rank == 0;
    const int ranks = s->group->size;
    model_config config = {MODEL_TGCN, 0, ASYNC_HIDDEN, 0, 2};
    train_options options;
    train_options_default(&options);
    options.epochs = ASYNC_EPOCHS;
    options.window = ASYNC_WINDOW;
    options.batch = 2 * ranks;
    async_options async;
    async_options_default(&async);
    if (variant == VARIANT_AVERAGE) {
        async.mode = SYNC_AVERAGE;
        async.every = ASYNC_EVERY;
    } else {
        async.staleness = 1;
    }
    if (trainer_create(&s->mine, s->seq, &config, &options, err) != TF_OK ||
        opt_async_create(&s->twin, &s->mine, s->group, &async, err) != TF_OK)
        return err->code;
    if (s->root && variant == VARIANT_AVERAGE) {
        if (replica_set_create(&s->simulation, s->seq, &config, &options, ranks, ASYNC_EVERY, err) != TF_OK)
            return err->code;
        for (int i = 0; i < ranks; i++) /* the twin's arithmetic: bitwise comparable */
            s->simulation.replicas[i].model.kernels = &opt_kernels;
    }
    if (s->root && variant == VARIANT_STALE) {
        if (trainer_create(&s->reference, s->seq, &config, &options, err) != TF_OK)
            return err->code;
        s->reference.model.kernels = &opt_kernels; /* what differs is then the protocol's all-reduce alone */
    }
    s->twins[0] = variant == VARIANT_AVERAGE
                      ? (technique_twin){"average every 2 (DynaHB)", TECHNIQUE_BITWISE, 0}
                      : (technique_twin){"staleness 1 (Sven)", TECHNIQUE_FP, TECHNIQUE_CPU_TOLERANCE};
    *twins = 1;
    return TF_OK;
}

static const technique_twin *async_twin(const void *state, int index)
{
    return &((const async_state *)state)->twins[index];
}

static int64_t async_steps(const void *state)
{
    const async_state *s = state;
    return s->variant == VARIANT_DGC_ZERO ? s->dgc.epochs : ASYNC_EPOCHS;
}

static int async_run_ref(void *state, int64_t step, tf_error *err)
{
    (void)step;
    async_state *s = state;
    epoch_report report;
    if (s->variant == VARIANT_DGC_ZERO)
        return trainer_epoch(&s->reference, s->seq, &report, err);
    return s->variant == VARIANT_AVERAGE ? ref_local_average_epoch(&s->simulation, s->seq, &report, err)
                                         : ref_delayed_epoch(&s->reference, s->seq, &report, err);
}

static int async_run_twin(void *state, int twin, int64_t step, tf_error *err)
{
    (void)twin, (void)step;
    async_state *s = state;
    epoch_report report;
    if (s->variant == VARIANT_DGC_ZERO)
        return s->root ? ref_stale_embeddings_epoch(&s->simulated, &s->mine, s->seq, &report, err) : TF_OK;
    int status = opt_async_epoch(&s->twin, s->seq, &report, err);
    s->averages = s->twin.averages;
    return status;
}

static double async_compare(void *state, int twin, int64_t step)
{
    (void)twin, (void)step;
    const async_state *s = state;
    const parameter_list *ours = &s->mine.model.parameters;
    const parameter_list *ref = s->variant == VARIANT_AVERAGE ? &s->simulation.replicas[0].model.parameters
                                                              : &s->reference.model.parameters; /* stale, dgc */
    return s->variant == VARIANT_STALE ? parameters_relative_error(ours, ref)
                                       : (double)parameters_differing_values(ours, ref);
}

static void async_corrupt(void *state, int twin)
{
    (void)twin;
    async_state *s = state;
    if (s->mine.model.parameters.count == 0)
        return; /* a rank that holds no twin (dgc-zero runs on rank 0) */
    float *first = s->mine.model.parameters.items[0].value.data;
    first[0] = technique_spoiled(first[0]);
}

static double async_work(const void *state, const char **unit)
{
    const async_state *s = state;
    *unit = "snapshots trained";
    return (double)(s->mine.train_snapshots * async_steps(state));
}

static void async_describe(const void *state, const double *seconds, char *text, size_t size)
{
    const async_state *s = state;
    if (s->variant == VARIANT_DGC_ZERO) {
        const stale_stats *st = &s->simulated.stats;
        snprintf(text, size, "%lld epochs, %d simulated ranks: %llu of %llu exchange bytes sent (%.1f%% saved, all by "
                 "exact reuse)",
                 (long long)s->dgc.epochs, s->dgc.ranks, (unsigned long long)st->bytes_sent,
                 (unsigned long long)st->bytes_fresh,
                 st->bytes_fresh ? 100.0 * (1.0 - (double)st->bytes_sent / (double)st->bytes_fresh) : 0.0);
        return;
    }
    const train_schedule sc = trainer_schedule(&s->mine);
    int used = snprintf(text, size, "%d epochs of %lld steps on %d rank(s)", ASYNC_EPOCHS, (long long)sc.steps,
                        s->group->size);
    if (s->variant == VARIANT_AVERAGE)
        used += snprintf(text + used, size - (size_t)used, ", %lld averages per epoch", (long long)s->averages);
    if (seconds[0] > 0)
        snprintf(text + used, size - (size_t)used, ": ref %.2f s, opt %.2f s", seconds[0], seconds[1]);
}

static void async_teardown(void *state)
{
    async_state *s = state;
    if (!s)
        return;
    opt_async_free(&s->twin);
    stale_simulation_free(&s->simulated);
    free(s->owner);
    trainer_free(&s->mine);
    trainer_free(&s->reference);
    replica_set_free(&s->simulation);
    free(s);
}

/* ---- the benchmark: DGC's bytes and accuracy, simulated -------------------------------------- */

/* One simulated run: DGC's rule with `schedule` on `ranks` ranks (owner v mod R), `epochs`
 * epochs; the plain run's final parameters and test MSE beside it. */
typedef struct dgc_run {
    stale_stats stats;
    double test_mse;          /* after the last epoch */
    double first_loss;        /* l_1 */
    double *losses;           /* [epochs] training loss of each epoch */
    double *fraction;         /* [epochs] theta / D used in each epoch (0 in epoch 1) */
} dgc_run;

static int dgc_simulate(const snapshot_seq *seq, model_kind kind, int64_t hidden, int ranks, const char *schedule,
                        int epochs, dgc_run *out, tf_error *err)
{
    model_config config = {kind, 0, hidden, 0, 2};
    train_options options;
    train_options_default(&options);
    options.window = ASYNC_WINDOW;
    options.batch = 1;
    stale_schedule rule;
    trainer tr;
    stale_simulation sim;
    memset(&sim, 0, sizeof sim);
    int32_t *owner = tf_alloc((size_t)seq->num_nodes, sizeof(int32_t), "owners", err);
    int status = owner ? trainer_create(&tr, seq, &config, &options, err) : TF_ERR_INPUT;
    for (int64_t v = 0; owner && v < seq->num_nodes; v++)
        owner[v] = (int32_t)(v % ranks);
    if (status == TF_OK)
        status = stale_schedule_parse(schedule, &rule, err);
    if (status == TF_OK)
        status = stale_simulation_create(&sim, seq, owner, ranks, &rule, &opt_kernels, err);
    if (status == TF_OK)
        tr.model.kernels = &sim.table;
    for (int e = 0; status == TF_OK && e < epochs; e++) {
        epoch_report report;
        status = ref_stale_embeddings_epoch(&sim, &tr, seq, &report, err);
        out->losses[e] = report.train_loss;
        out->fraction[e] = sim.fraction;
        out->test_mse = report.test_mse;
    }
    out->stats = sim.stats;
    out->first_loss = sim.first_loss;
    stale_simulation_free(&sim);
    if (owner)
        trainer_free(&tr);
    free(owner);
    return status;
}

static double percent_of(uint64_t part, uint64_t whole) { return whole ? 100.0 * (double)part / (double)whole : 0; }

/* The DGC part: for each model and R, validate theta = 0 against plain training through the
 * engine (bitwise), then run each theta > 0 schedule and tabulate bytes saved (by exact and by
 * stale reuse, minus bitmaps) and the test MSE against plain training's. */
static int dgc_sweep(const benchmark_options *o, FILE *csv, FILE *theta_csv, tf_error *err)
{
    const char *data = o->quick ? "powerlaw:nodes=200,edges=1500,snapshots=24,churn=0.05,seed=5" : "twitter_tennis";
    const int epochs = o->quick ? 3 : 20;
    const int all_ranks[4] = {2, 4, 8, 16};
    const int rank_counts = o->quick ? 2 : 4;
    const model_kind kinds[3] = {MODEL_GCONVGRU, MODEL_GCLSTM, MODEL_TGCN};
    const char *const schedules[5] = {"static:0.3", "static:0.5", "static:0.7", "adaptive", "adaptive-printed"};
    const int64_t hidden = 16;
    dataset d;
    if (dataset_load(data, NULL, &d, err) != TF_OK)
        return -1;
    double *buffers = tf_alloc((size_t)(2 * epochs), sizeof(double), "losses", err);
    if (!buffers) {
        dataset_free(&d);
        return -1;
    }
    dgc_run run = {.losses = buffers, .fraction = buffers + epochs};
    printf("DGC stale aggregation, simulated (ref/async_embeddings.h): %s, hidden %lld, K 2, windows of %d, %d "
           "epochs, owner = vertex mod R; bytes as the exchange mode would send them\n",
           d.name, (long long)hidden, ASYNC_WINDOW, epochs);
    printf("  %-8s %3s %-17s %8s %8s %8s %7s %8s %11s %9s %8s\n", "model", "R", "theta", "saved%", "exact%", "stale%",
           "bitmap%", "d/theta", "test MSE", "vs off", "check");
    fprintf(csv, "model,ranks,schedule,epochs,bytes_fresh,bytes_sent,bytes_exact,bytes_stale,bytes_bitmap,rows_sent,"
                 "rows_exact,rows_stale,worst_ratio,test_mse,test_mse_off\n");
    fprintf(theta_csv, "model,ranks,schedule,epoch,train_loss,fraction,fraction_text,fraction_printed\n");
    int wrong = 0, status = 0;
    for (int k = 0; status == 0 && k < 3; k++) {
        const int kind_ranks = kinds[k] == MODEL_TGCN ? 1 : rank_counts; /* T-GCN: the exact-cache point only */
        for (int r = 0; status == 0 && r < kind_ranks; r++) {
            const int ranks = kinds[k] == MODEL_TGCN ? 4 : all_ranks[r];
            /* theta = 0 through the engine: plain training is the reference, the simulation the twin */
            dgc_params params = {kinds[k], hidden, ranks, epochs};
            engine_options engine = {.timed = 0, .repeats = 1, .threads = o->threads};
            engine_result result;
            const technique *t = technique_find("async");
            if (engine_run(t, &d, &params, VARIANT_DGC_ZERO, &engine, &result, err) != TF_OK) {
                status = -1;
                break;
            }
            if (dgc_simulate(&d.snapshots, kinds[k], hidden, ranks, "off", epochs, &run, err) != TF_OK) {
                status = -1;
                break;
            }
            const double off_mse = run.test_mse;
            const uint64_t fresh = run.stats.bytes_fresh;
            double saved[5];
            for (int sc = -1; status == 0 && sc < (kinds[k] == MODEL_TGCN ? 0 : 5); sc++) {
                const char *schedule = sc < 0 ? "zero" : schedules[sc];
                if (dgc_simulate(&d.snapshots, kinds[k], hidden, ranks, schedule, epochs, &run, err) != TF_OK) {
                    status = -1;
                    break;
                }
                const stale_stats *st = &run.stats;
                /* checks: theta = 0 bitwise plain (the engine's verdict); every reuse within theta;
                 * the bytes add up; the same products as the exchange mode */
                const int accounts = st->bytes_sent + st->bytes_exact + st->bytes_stale ==
                                     st->bytes_fresh + st->bytes_bitmap;
                const int bad = (sc < 0 && result.wrong) || !(st->worst_ratio <= 1.0) || !accounts ||
                                st->bytes_fresh != fresh || (sc < 0 && run.test_mse != off_mse);
                wrong += bad;
                const double saved_percent = 100.0 - percent_of(st->bytes_sent, st->bytes_fresh);
                if (sc >= 0)
                    saved[sc] = saved_percent;
                printf("  %-8s %3d %-17s %8.2f %8.2f %8.2f %7.2f %8.4f %11.6f %8.2f%% %8s\n", model_kind_name(kinds[k]),
                       ranks, schedule, saved_percent, percent_of(st->bytes_exact, st->bytes_fresh),
                       percent_of(st->bytes_stale, st->bytes_fresh), percent_of(st->bytes_bitmap, st->bytes_fresh),
                       st->worst_ratio, run.test_mse, 100.0 * (run.test_mse - off_mse) / off_mse,
                       bad ? "WRONG" : sc < 0 ? "bitwise" : "ok");
                fprintf(csv, "%s,%d,%s,%d,%llu,%llu,%llu,%llu,%llu,%lld,%lld,%lld,%.6f,%.9g,%.9g\n",
                        model_kind_name(kinds[k]), ranks, schedule, epochs, (unsigned long long)st->bytes_fresh,
                        (unsigned long long)st->bytes_sent, (unsigned long long)st->bytes_exact,
                        (unsigned long long)st->bytes_stale, (unsigned long long)st->bytes_bitmap,
                        (long long)st->rows_sent, (long long)st->rows_reused_exact, (long long)st->rows_reused_stale,
                        st->worst_ratio, run.test_mse, off_mse);
                if (sc >= 3) { /* both adaptive signs: theta / D per epoch from the run's own losses */
                    stale_schedule text = {STALE_ADAPTIVE, 0}, printed = {STALE_ADAPTIVE_PRINTED, 0};
                    for (int e = 0; e < epochs; e++)
                        fprintf(theta_csv, "%s,%d,%s,%d,%.9g,%.6f,%.6f,%.6f\n", model_kind_name(kinds[k]), ranks,
                                schedule, e + 1, run.losses[e], run.fraction[e],
                                e ? stale_threshold_fraction(&text, run.first_loss, run.losses[e - 1]) : 0.0,
                                e ? stale_threshold_fraction(&printed, run.first_loss, run.losses[e - 1]) : 0.0);
                }
            }
            if (status == 0 && kinds[k] != MODEL_TGCN)
                printf("  %-8s %3d the text's sign saves %.2f%%: between static 0.5 and 0.7 (%.2f%%, %.2f%%): %s; "
                       "the printed sign saves %.2f%%: below static 0.5: %s\n",
                       model_kind_name(kinds[k]), ranks, saved[3], saved[1], saved[2],
                       saved[3] > saved[1] && saved[3] < saved[2] ? "yes" : "no", saved[4],
                       saved[4] < saved[1] ? "yes" : "no");
        }
    }
    printf("  paper ([DGC] 7.3.3, Table 3, adaptive): 80.26%% of cross-GPU traffic saved for an average accuracy drop "
           "of 1.56%% (classification accuracy; here the tasks are regressions and the cost is the test MSE's "
           "change); its adaptive savings lie between the static 0.5D and 0.7D ones in all 12 rows\n");
    free(buffers);
    dataset_free(&d);
    return status < 0 ? status : wrong;
}

static int async_benchmark(const benchmark_options *o, tf_error *err)
{
    char path[2][4096];
    const char *files[2] = {"dgc.csv", "dgc_theta.csv"};
    FILE *csv[2] = {NULL, NULL};
    int status = 0;
    for (int i = 0; i < 2 && status == 0; i++) {
        snprintf(path[i], sizeof path[i], "%s/%s", o->out, files[i]);
        if (!(csv[i] = fopen(path[i], "w")))
            status = -tf_error_set(err, TF_ERR_INPUT, "bench async: cannot write %s", path[i]);
    }
    if (status == 0)
        status = dgc_sweep(o, csv[0], csv[1], err);
    for (int i = 0; i < 2; i++)
        if (csv[i])
            fclose(csv[i]);
    if (status >= 0)
        printf("\nCSV: %s, %s (the straggler experiment runs on MPI ranks: bench/async.sh)\n", path[0], path[1]);
    return status;
}

static const technique_case async_demo[] = {
    {VARIANT_AVERAGE, "chickenpox", "chickenpox"},
    {VARIANT_STALE, "chickenpox", "chickenpox"},
    {VARIANT_DGC_ZERO, "twitter_tennis", "twitter_tennis"},
    {0, NULL, NULL},
};

const technique technique_async = {
    .name = "async",
    .chapter = "05",
    .title = "async updates",
    .needs = "a snapshot sequence",
    .variants = async_variants,
    .distributed = 1,
    .demo = async_demo,
    .setup = async_setup,
    .twin = async_twin,
    .steps = async_steps,
    .run_ref = async_run_ref,
    .run_twin = async_run_twin,
    .compare = async_compare,
    .corrupt = async_corrupt,
    .work = async_work,
    .describe = async_describe,
    .teardown = async_teardown,
    .benchmark = async_benchmark,
};
