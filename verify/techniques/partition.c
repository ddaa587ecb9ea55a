/* The technique table's entry of chapter 06: vertex-partitioned training (opt/train_partition.h)
 * against the single-process reference trainer (ref/train.h).
 *
 * A variant is a partitioner and a mode ("dynahb cache", "metis exchange", ...). A step of the engine
 * is one optimizer step of the first epoch: the reference runs its windows on rank 0, the twin runs
 * every window on every rank's own rows and all-reduces the gradient. Compared: the step's loss and
 * every gradient, fp (the worst |twin - ref| / max(1, |ref|); sums over ranks and rows in another
 * order, and BLAS, are the only differences). A twin past the tolerance is rerun on the reference's
 * kernels (partition_logic(); bitwise on one rank) and, on several ranks, held to the reference's
 * one-ulp spread (partition_spread()), as chapter 01's training rows are. Work = the edge
 * occurrences of the step's windows (Σ over windows and their snapshots of |E_t|). The row's closing words: the ranks, the exchange
 * bytes the twin sent (summed over ranks) beside the count from the graph (halo rows x the model's
 * floats per row x 4, over the windows run), the busy-time imbalance and the rows held per vertex.
 * Under `mpiexec -n R` the twin runs on R ranks; alone, on one rank (no MPI needed). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt/kernels.h"
#include "opt/train_partition.h"
#include "ref/core/memory.h"
#include "ref/nn/compare.h"
#include "verify/techniques/spread.h"
#include "verify/techniques/table.h"

static const char *const partition_variants[] = {
    "hash cache",   "hash exchange", "pts cache", "pts exchange", "metis cache",     "metis exchange",
    "dynahb cache", "dynahb exchange", "dgc cache", "dgc exchange", "pss-ts exchange", NULL,
};
/* What each variant needs of a model: a vertex split, and pss-ts a separable A^ X_t (T-GCN's, WD-GCN's). */
#define SPLIT (1u << MODEL_VERTEX_ROWS)
static const unsigned partition_needs[] = {SPLIT, SPLIT, SPLIT, SPLIT, SPLIT, SPLIT,
                                           SPLIT, SPLIT, SPLIT, SPLIT, SPLIT | 1u << MODEL_ONE_HOP};
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
    model_config config;         /* the model and training both sides run (logic and spread make fresh ones) */
    train_options options;
    partition_mode mode;
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

/* The floats one snapshot @p t of a window sends in exchange mode, from the graph: its halo rows x
 * the model's floats per row (pss-ts: the rows its snapshot's owner sends). @p mark: scratch [N]. */
static double exchange_floats(const partition_state *s, int64_t t, int64_t floats_per_row, int32_t *mark)
{
    const snapshot_seq *seq = s->seq;
    if (s->p.method != PARTITION_PSS_TS)
        return (double)(partition_halo_rows(&seq->snapshots[t].graph, s->p.vertex_owner, s->p.ranks, NULL, mark) *
                        floats_per_row);
    int64_t foreign = 0;
    for (int64_t v = 0; v < seq->num_nodes; v++)
        foreign += s->p.vertex_owner[v] != s->p.snapshot_owner[t];
    return (double)(foreign * seq->feature_width);
}

/* One walk over every snapshot of every window the steps train: the work (edge occurrences) and,
 * in exchange mode, the bytes counted from the graph (exchange_floats() x 4). */
static void count_windows(partition_state *s, const model_config *config, partition_mode mode)
{
    model_config shaped = *config;
    shaped.in_features = s->seq->feature_width;
    int64_t forward, backward, temporal;
    partition_model_traffic(&shaped, &forward, &backward, &temporal);
    int32_t *mark = mode == PARTITION_EXCHANGE ? calloc((size_t)s->seq->num_nodes, sizeof *mark) : NULL;
    double floats = 0;
    for (int64_t step = 0; step < s->steps; step++)
        for (int64_t slot = 0; slot < s->schedule.batch; slot++) {
            const int64_t w = train_schedule_window(&s->schedule, step, slot);
            int64_t first, count;
            if (w < 0)
                continue;
            train_schedule_span(&s->schedule, w, &first, &count);
            for (int64_t t = first; t < first + count; t++) {
                s->work += (double)s->seq->snapshots[t].graph.num_edges;
                floats += mark ? exchange_floats(s, t, forward + backward, mark) : 0;
            }
        }
    free(mark);
    s->counted_bytes = floats * 4;
}

/* A partitioned trainer of the state's split, model and training, on @p kernels. */
static int make_twin(const partition_state *s, partition_trainer *twin, const kernels *dense, tf_error *err)
{
    return partition_trainer_create(twin, s->group, s->seq, s->p.vertex_owner,
                                    s->p.method == PARTITION_PSS_TS ? s->p.snapshot_owner : NULL, s->mode, &s->config,
                                    &s->options, dense, err);
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
        return tf_error_set(err, TECHNIQUE_SKIP, "needs a vertex for each rank; %s has %lld for %d ranks", data->name,
                            (long long)s->seq->num_nodes, s->group->size);
    /* model (kind, in, hidden, out, Chebyshev K): in and out come from the data */
    model_config config = {MODEL_TGCN, 0, PARTITION_HIDDEN, 0, 2, 0};
    if (context->params)
        config = *(const model_config *)context->params;
    if (context->model)
        config.kind = *context->model;
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
        return tf_error_set(err, TECHNIQUE_SKIP, "pss-ts needs a snapshot for each rank; %s has %lld for %d ranks",
                            data->name, (long long)s->seq->num_snapshots, po.ranks);
    s->config = config;
    s->options = options;
    s->mode = mode;
    if (ref_partition_snapshots(s->seq, method, &po, &s->p, err) != TF_OK ||
        trainer_create(&s->ref, s->seq, &config, &options, err) != TF_OK ||
        make_twin(s, &s->twin, &opt_kernels, err) != TF_OK)
        return err->code;
    s->schedule = trainer_schedule(&s->ref);
    s->steps = s->schedule.steps;
    s->parameters = parameters_size(&s->ref.model.parameters);
    s->ref_gradient = tf_alloc((size_t)s->parameters, sizeof(float), "gradients", err);
    s->twin_gradient = s->ref_gradient ? tf_alloc((size_t)s->parameters, sizeof(float), "gradients", err) : NULL;
    if (!s->twin_gradient)
        return err->code;
    count_windows(s, &config, mode);
    s->twins[0] = (technique_twin){"R ranks", TECHNIQUE_FP, TECHNIQUE_CPU_TOLERANCE};
    *twins = 1;
    return TF_OK;
}

static const technique_twin *partition_twin(const void *state, int index)
{
    return &((const partition_state *)state)->twins[index];
}

static int64_t partition_steps(const void *state) { return ((const partition_state *)state)->steps; }

/* One optimizer step of a reference trainer @p tr: its gradient into @p gradient, its loss sum into
 * *loss, then the update. The spread_step_fn of the entry (context: the state). */
static int reference_step(const void *context, trainer *tr, const snapshot_seq *seq, int64_t step, float *gradient,
                          double *loss, tf_error *err)
{
    const partition_state *s = context;
    parameters_zero_grad(&tr->model.parameters);
    *loss = 0;
    for (int64_t slot = 0; slot < s->schedule.batch; slot++)
        if (trainer_train_slot(tr, seq, &s->schedule, step, slot, loss, err) != TF_OK)
            return err->code;
    parameters_pack_gradients(&tr->model.parameters, gradient);
    trainer_apply_gradient(tr);
    return TF_OK;
}

static int partition_run_ref(void *state, int64_t step, tf_error *err)
{
    partition_state *s = state;
    if (reference_step(s, &s->ref, s->seq, step, s->ref_gradient, &s->ref_loss, err) != TF_OK)
        return err->code;
    return technique_reference_parameters_finite(&s->ref.model.parameters, step, err);
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
    parameters_pack_gradients(&s->twin.base.model.parameters, s->twin_gradient);
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

/* technique::logic: a fresh reference (rank 0) and a fresh twin on the reference's kernels (every
 * rank), every step, their gradients and loss sums compared bit for bit. On several ranks each rank
 * sums its own rows and the all-reduce sums the ranks: another order than the reference's by design. */
static double partition_logic(void *state, int twin, int corrupt, int *reordered, tf_error *err)
{
    (void)twin;
    const partition_state *s = state;
    const int root = s->group->rank == 0;
    *reordered = s->group->size > 1;
    trainer ref;
    partition_trainer mine;
    int made = 0;
    float *gradients = tf_alloc(2 * (size_t)s->parameters, sizeof(float), "logic gradients", err);
    int status = gradients ? trainer_create(&ref, s->seq, &s->config, &s->options, err) : err->code;
    made += status == TF_OK;
    if (status == TF_OK && (status = make_twin(s, &mine, &ref_kernels, err)) == TF_OK)
        made++;
    double differing = 0;
    for (int64_t step = 0; status == TF_OK && step < s->steps; step++) {
        double ref_loss = 0, twin_loss = 0;
        if (root)
            status = reference_step(s, &ref, s->seq, step, gradients, &ref_loss, err);
        if (status == TF_OK)
            status = partition_trainer_step(&mine, step, &twin_loss, err);
        if (status != TF_OK)
            break;
        parameters_pack_gradients(&mine.base.model.parameters, gradients + s->parameters);
        if (corrupt)
            gradients[s->parameters] = technique_spoiled(gradients[s->parameters]);
        if (root)
            differing += (double)differing_values(gradients + s->parameters, gradients, s->parameters) +
                         (double)differing_doubles(&twin_loss, &ref_loss, 1);
    }
    if (made > 0)
        trainer_free(&ref);
    if (made > 1)
        partition_trainer_free(&mine);
    free(gradients);
    return status == TF_OK ? differing : -1;
}

/* technique::spread: the reference's gradients under one-ulp changes of its parameters and inputs. */
static double partition_spread(void *state, int64_t steps, tf_error *err)
{
    const partition_state *s = state;
    return reference_spread(s->seq, &s->config, &s->options, steps, s->parameters, reference_step, s, err);
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
    char counted[64] = "cache mode: each rank holds its receptive field's inputs"; /* nothing to send */
    if (s->twin.mode == PARTITION_EXCHANGE)
        snprintf(counted, sizeof counted, "counted from the graph: %.0f", s->counted_bytes);
    snprintf(text, size, "%d rank(s), exchange %.0f bytes (%s), busy max/mean %.2f, rows held / N %.2f", s->group->size,
             s->sent_bytes, counted, s->busy_imbalance, s->rows_held);
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
static const technique_case partition_demo[] = {
    {6, "twitter_tennis", "twitter_tennis"},
    {5, "twitter_tennis", "twitter_tennis"},
    {0, NULL, NULL},
};

const technique technique_partition = {
    .name = "partition",
    .stem = "partition",
    .chapter = "06",
    .title = "partition",
    .needs = "a snapshot sequence",
    .variants = partition_variants,
    .distributed = 1,
    .demo = partition_demo,
    .models = TECHNIQUE_ON_MODEL,
    .model_needs = partition_needs,
    .setup = partition_setup,
    .twin = partition_twin,
    .steps = partition_steps,
    .run_ref = partition_run_ref,
    .run_twin = partition_run_twin,
    .compare = partition_compare,
    .corrupt = partition_corrupt,
    .logic = partition_logic,
    .spread = partition_spread,
    .work = partition_work,
    .describe = partition_describe,
    .teardown = partition_teardown,
};
