/* The distributed event-model trainer (opt/train_events.h) against the single-process reference, on
 * 1..4 ranks (ctest runs it under mpiexec), the mission's third equivalence:
 *
 *  - lockstep: the reference runs every batch of an epoch once, on rank 0, keeping per batch its
 *    parameters before the step, loss, gradients, scores and node memory after the batch. Each
 *    twin (every dispatch mode x every placement, TGN and JODIE) runs the same batches, adopting
 *    the reference's parameters before each; its memory evolves only by its own dispatch and
 *    write-back. After every batch the union of all ranks' memory, mailbox and both timestamps
 *    must be **bitwise** the reference's, and the scores too; loss and gradients within fp;
 *  - traffic: every byte category measured by the comm layer equals the one predicted from the
 *    run's counts; Sven's rows equal the lower bound (each unique remote row once), the naive
 *    baseline's exceed it;
 *  - free-running: 2 epochs of training, TGN, JODIE and APAN; test AP within 1e-6 of the reference's;
 *    on one rank the parameters bitwise; Sven, naive and DepCache bitwise to each other on any rank count;
 *  - empty slices: batches of 2 events on 3 and 4 ranks (some ranks hold nothing) pass lockstep;
 *  - APAN: lockstep in every mode and placement, its M-mail rings, their mail_ts and ring positions
 *    bitwise, mails delivered to the endpoints' sampled neighbours; the fast twin below on APAN too;
 *  - the per-vertex memory-update rule (event_model.h): lockstep in every mode, TGN and JODIE, with
 *    and without edge features, and the fast twin below under it too;
 *  - the fast twin (the same trainer on opt_kernels: BLAS products, chapter 01's Speed section) in
 *    lockstep over a whole epoch: timestamps bitwise, memory, mailbox, scores and loss within the fp
 *    tolerance after every batch, the gradients too against the reference run on the twin's own
 *    memory (fast_lockstep() says why), and the epoch's training loss and validation and
 *    test AP (from the lockstep scores) within 1e-5 relative of the reference's (of the interval
 *    its exact score ties span, broken either way: BLAS need not keep equal rows' bits equal, and
 *    the per-vertex rule makes such rows common). Free-running it
 *    cannot stay within 1e-5 (nor can any reordering of the reference's sums): the time encoders'
 *    cos(w dt) with dt up to 1e6 s turn a one-ulp change of w into a different phase after one
 *    Adam step; the free run's AP difference is printed beside the one-ulp noise control. */
#include <math.h>

#include "opt/kernels.h"
#include "opt/train_events.h"
#include "opt/train.h"
#include "ref/nn/metrics.h"
#include "ref/core/rng.h"
#include "verify/testing_events.h"
#include "verify/testing_mpi.h"

#define TOLERANCE 1e-5

static comm world;

static double relative(double ours, double reference) { return fabs(ours - reference) / fmax(1.0, fabs(reference)); }

/* ---- the data and the reference ----------------------------------------------------------------- */

/* What the reference did in every batch of one epoch (rank 0 only). */
typedef struct reference_run {
    int64_t count;               /* batches listed */
    event_batch_spec *specs;     /* [count] */
    int64_t parameters;          /* P values */
    float *before;               /* [count][P] parameter values before the batch */
    float *gradient;             /* [count][P] the batch's gradient (training batches) */
    double *loss;                /* [count] */
    float *scores;               /* [count][2B] */
    node_memory *memory;         /* [count] after the batch */
} reference_run;

static void pack(const parameter_list *list, int gradients, float *out)
{
    for (int64_t i = 0, offset = 0; i < list->count; offset += list->items[i].value.size, i++)
        memcpy(out + offset, gradients ? list->items[i].grad.data : list->items[i].value.data,
               (size_t)list->items[i].value.size * sizeof(float));
}

static void unpack_values(parameter_list *list, const float *in)
{
    for (int64_t i = 0, offset = 0; i < list->count; offset += list->items[i].value.size, i++)
        memcpy(list->items[i].value.data, in + offset, (size_t)list->items[i].value.size * sizeof(float));
}

/* Copy every array of @p from into @p to (the same shape). */
static void memory_copy(node_memory *to, const node_memory *from)
{
    memcpy(to->memory, from->memory, (size_t)(from->num_nodes * from->memory_width) * sizeof(float));
    memcpy(to->mail, from->mail, (size_t)(from->num_nodes * from->mails * from->mail_width) * sizeof(float));
    memcpy(to->memory_time, from->memory_time, (size_t)from->num_nodes * sizeof(double));
    memcpy(to->mail_time, from->mail_time, (size_t)(from->num_nodes * from->mails) * sizeof(double));
    memcpy(to->mail_next, from->mail_next, (size_t)from->num_nodes * sizeof(int32_t));
}

static void reference_record(const workload *w, reference_run *run)
{
    tf_error err;
    event_trainer tr;
    ck_assert(event_trainer_create(&tr, &w->events, w->events.features, &w->config, &w->options, &err) == TF_OK);
    memset(run, 0, sizeof *run);
    run->count = event_trainer_epoch_batches(&tr, NULL);
    run->specs = malloc((size_t)run->count * sizeof *run->specs);
    event_trainer_epoch_batches(&tr, run->specs);
    run->parameters = parameters_size(&tr.model.parameters);
    const int64_t B = w->options.batch_size;
    run->before = malloc((size_t)(run->count * run->parameters) * sizeof(float));
    run->gradient = malloc((size_t)(run->count * run->parameters) * sizeof(float));
    run->loss = malloc((size_t)run->count * sizeof(double));
    run->scores = malloc((size_t)(run->count * 2 * B) * sizeof(float));
    run->memory = calloc((size_t)run->count, sizeof(node_memory));
    for (int64_t s = 0; s < run->count; s++) {
        pack(&tr.model.parameters, 0, run->before + s * run->parameters);
        ck_assert(event_trainer_run_batch(&tr, &run->specs[s], &run->loss[s], run->scores + s * 2 * B, &err) == TF_OK);
        pack(&tr.model.parameters, 1, run->gradient + s * run->parameters);
        const node_memory *m = &tr.memory;
        ck_assert(node_memory_create_mailbox(&run->memory[s], m->num_nodes, m->memory_width, m->mail_width, m->mails,
                                             &err) == TF_OK);
        memory_copy(&run->memory[s], m);
    }
    event_trainer_free(&tr);
}

static void reference_free(reference_run *run)
{
    for (int64_t s = 0; run->memory && s < run->count; s++)
        node_memory_free(&run->memory[s]);
    free(run->specs), free(run->before), free(run->gradient), free(run->loss), free(run->scores), free(run->memory);
    memset(run, 0, sizeof *run);
}

/* ---- lockstep ----------------------------------------------------------------------------------- */

/* A placement file every rank can read: rank 0 writes a random placement and shares the path. */
static const char *placement_file(const workload *w)
{
    static char spec[600];
    tf_error err;
    if (world.rank == 0) {
        event_trainer tr;
        ck_assert(event_trainer_create(&tr, &w->events, w->events.features, &w->config, &w->options, &err) == TF_OK);
        int32_t *owner = malloc((size_t)w->events.num_nodes * sizeof *owner);
        ck_assert(dispatch_place("random", &tr, world.size, owner, &err) == TF_OK);
        snprintf(spec, sizeof spec, "file:%s/placement_%d.npy", temporary_directory(), world.size);
        ck_assert(placement_write_file(spec + 5, owner, w->events.num_nodes, &err) == TF_OK);
        free(owner);
        event_trainer_free(&tr);
    }
    ck_assert(comm_broadcast(&world, spec, sizeof spec, 0, &err) == TF_OK);
    return spec;
}

/* A twin of @p mode on @p kernels (NULL: the reference's) for lockstep: the epoch's batches, listed on
 * every rank (the record is rank 0's), and on rank 0 a node memory for the gathered union. */
static event_batch_spec *lockstep_start(const workload *w, dispatch_mode mode, const char *placement,
                                        const kernels *kernels, opt_event_trainer *tr, int64_t *count,
                                        node_memory *full)
{
    tf_error err;
    event_train_options options = w->options;
    options.kernels = kernels;
    ck_assert_msg(opt_event_trainer_create(tr, &w->events, w->events.features, &w->config, &options, mode, placement,
                                           &world, &err) == TF_OK,
                  "%s", err.message);
    *count = event_trainer_epoch_batches(&tr->base, NULL);
    event_batch_spec *specs = malloc((size_t)*count * sizeof *specs);
    event_trainer_epoch_batches(&tr->base, specs);
    memset(full, 0, sizeof *full);
    if (world.rank == 0)
        ck_assert(node_memory_create_mailbox(full, w->events.num_nodes, tr->base.model.config.memory_width,
                                             event_model_mail_width(&tr->base.model), tr->base.model.config.mails,
                                             &err) == TF_OK);
    return specs;
}

/* One twin in lockstep with the recorded reference; prints its line; returns its byte traffic. */
static void lockstep(const workload *w, const reference_run *run, dispatch_mode mode, const char *placement,
                     dispatch_traffic *traffic)
{
    tf_error err;
    opt_event_trainer tr;
    int64_t count;
    node_memory full;
    event_batch_spec *specs = lockstep_start(w, mode, placement, NULL, &tr, &count, &full);
    const int64_t B = w->options.batch_size;
    float *scores = malloc((size_t)(2 * B) * sizeof(float));
    float *gradient = malloc((size_t)parameters_size(&tr.base.model.parameters) * sizeof(float));
    int64_t differing = 0, score_differing = 0, rows = 0;
    double loss_error = 0, gradient_error = 0;
    for (int64_t s = 0; s < count; s++) {
        if (world.rank == 0)
            unpack_values(&tr.base.model.parameters, run->before + s * run->parameters);
        ck_assert(opt_event_trainer_adopt_parameters(&tr, 0, &err) == TF_OK);
        double loss;
        ck_assert_msg(opt_event_trainer_run_batch(&tr, &specs[s], &loss, scores, &err) == TF_OK, "%s",
                      err.message);
        ck_assert(opt_event_trainer_gather_memory(&tr, world.rank == 0 ? &full : NULL, &err) == TF_OK);
        if (world.rank != 0)
            continue;
        differing += memory_differences(&full, &run->memory[s]);
        rows += full.num_nodes;
        score_differing += differing_values(scores, run->scores + s * 2 * B, 2 * run->specs[s].size);
        loss_error = fmax(loss_error, relative(loss, run->loss[s]));
        if (run->specs[s].train) {
            pack(&tr.base.model.parameters, 1, gradient);
            gradient_error = fmax(gradient_error, relative_error(gradient, run->gradient + s * run->parameters,
                                                                  run->parameters));
        }
    }
    ck_assert(opt_event_trainer_traffic(&tr, traffic, 1, &err) == TF_OK);
    /* Measured bytes against the prediction from the counts, category by category. */
    dispatch_bytes predicted;
    dispatch_traffic_predict(traffic, mode, &tr.base.model, &predicted);
    const dispatch_bytes *b = &traffic->bytes;
    const uint64_t rows_moved = b->dispatch_rows + b->updates + b->update_gradients + b->aggregation;
    const uint64_t bound = dispatch_traffic_lower_bound(traffic, &tr.base.model);
    if (world.rank == 0) {
        printf("%-6s %-28s %-8s %-22s %d rank(s): %2lld batches, %7lld rows compared, differing values %lld (must be "
               "0), scores %lld; loss %.1e, gradients %.1e; rows %llu B = %.2f x lower bound\n",
               event_model_kind_name(w->config.kind), w->label, dispatch_mode_name(mode),
               strncmp(placement, "file:", 5) == 0 ? "file (random)" : placement, world.size, (long long)count,
               (long long)rows, (long long)differing, (long long)score_differing, loss_error, gradient_error,
               (unsigned long long)rows_moved, bound ? (double)rows_moved / (double)bound : 1.0);
        ck_assert_int_eq(differing, 0);
        ck_assert_int_eq(score_differing, 0);
        ck_assert_msg(loss_error <= TOLERANCE && gradient_error <= TOLERANCE, "loss %g gradients %g", loss_error,
                      gradient_error);
    }
    ck_assert_uint_eq(b->counts, predicted.counts);
    ck_assert_uint_eq(b->requests, predicted.requests);
    ck_assert_uint_eq(b->dispatch_rows, predicted.dispatch_rows);
    ck_assert_uint_eq(b->updates, predicted.updates);
    ck_assert_uint_eq(b->update_gradients, predicted.update_gradients);
    ck_assert_uint_eq(b->aggregation, predicted.aggregation);
    if (mode == DISPATCH_SVEN)
        ck_assert_uint_eq(rows_moved, bound);
    if (mode == DISPATCH_NAIVE && world.size > 1 && bound > 0)
        ck_assert_uint_gt(rows_moved, bound);
    if (world.size == 1)
        ck_assert_uint_eq(b->counts + b->requests + b->dispatch_rows + b->updates + b->update_gradients +
                              b->aggregation + b->gradients + b->other,
                          0);
    free(scores), free(gradient), free(specs);
    node_memory_free(&full);
    opt_event_trainer_free(&tr);
}

/* @p mails: APAN's M, or 0 for the model's default. */
static void lockstep_all(const char *label, const char *spec, int64_t events, event_model_kind kind, int64_t batch,
                         int every_placement, event_memory_update rule, int64_t mails)
{
    workload w;
    workload_load(&w, label, spec, events, kind, batch);
    w.config.memory_update = rule;
    if (mails > 0)
        w.config.mails = mails;
    reference_run run;
    memset(&run, 0, sizeof run);
    if (world.rank == 0)
        reference_record(&w, &run);
    const char *placements[] = {"hash", "range", "interval", "random", "reflexbicut", placement_file(&w)};
    const int count = every_placement ? 6 : 1;
    for (int p = 0; p < count; p++)
        for (int mode = DISPATCH_SVEN; mode <= DISPATCH_DEPCOMM; mode++) {
            dispatch_traffic traffic;
            lockstep(&w, &run, (dispatch_mode)mode, placements[p], &traffic);
        }
    reference_free(&run);
    workload_free(&w);
}

#define REPEATS "events:nodes=50,events=2000,repeat=0.9,features=2,seed=5"

START_TEST(lockstep_generated)
{
    lockstep_all("repeats (2000 events)", REPEATS, 2000, EVENT_MODEL_TGN, 100, 1, EVENT_MEMORY_PER_ENTRY, 0);
    lockstep_all("repeats (2000 events)", REPEATS, 2000, EVENT_MODEL_JODIE, 100, 1, EVENT_MEMORY_PER_ENTRY, 0);
}
END_TEST

START_TEST(lockstep_wikipedia)
{
    lockstep_all("wikipedia (first 1000)", "wikipedia", 1000, EVENT_MODEL_TGN, 100, 1, EVENT_MEMORY_PER_ENTRY, 0);
    lockstep_all("wikipedia (first 1000)", "wikipedia", 1000, EVENT_MODEL_JODIE, 100, 0, EVENT_MEMORY_PER_ENTRY, 0);
}
END_TEST

/* The per-vertex memory-update rule: rows carry mail_ts too, the write-back a second time; every
 * mode on the hash placement, with edge features (generated) and without (Wikipedia). */
START_TEST(lockstep_per_vertex)
{
    for (int kind = EVENT_MODEL_TGN; kind <= EVENT_MODEL_JODIE; kind++) {
        lockstep_all("repeats (2000), per vertex", REPEATS, 2000, (event_model_kind)kind, 100, 0,
                     EVENT_MEMORY_PER_VERTEX, 0);
        lockstep_all("wikipedia (1000), per vertex", "wikipedia", 1000, (event_model_kind)kind, 100, 0,
                     EVENT_MEMORY_PER_VERTEX, 0);
    }
}
END_TEST

START_TEST(lockstep_empty_slices)
{
    lockstep_all("repeats (60), batch 2", REPEATS, 60, EVENT_MODEL_TGN, 2, 0, EVENT_MEMORY_PER_ENTRY, 0);
}
END_TEST

/* APAN: rows carry its ring of M mails with their mail_ts, and the write-back delivers mails to the
 * positive endpoints' sampled neighbours (one per vertex per batch, the delivery rule); the ring
 * positions are compared too. Every mode and placement on the generated stream (with edge features),
 * every mode on Wikipedia, and slices left empty by batches of 2. */
START_TEST(lockstep_apan)
{
    lockstep_all("repeats (2000 events)", REPEATS, 2000, EVENT_MODEL_APAN, 100, 1, EVENT_MEMORY_PER_ENTRY, 0);
    /* Wikipedia's 9,227 vertices with 10 mails of d_msg 188 each would make every recorded memory 70 MB: 2 mails
     * (the ring wraps after two deliveries) keep the check of its real neighbourhoods small. */
    lockstep_all("wikipedia (first 1000), 2 mails", "wikipedia", 1000, EVENT_MODEL_APAN, 100, 0,
                 EVENT_MEMORY_PER_ENTRY, 2);
    lockstep_all("repeats (60), batch 2", REPEATS, 60, EVENT_MODEL_APAN, 2, 0, EVENT_MEMORY_PER_ENTRY, 0);
}
END_TEST

/* ---- the fast twin ------------------------------------------------------------------------------ */

/* Items of one split sorted by score, descending; among equal scores positives first (`order` 1) or
 * negatives first (0). */
static int positives_first;
static int by_score(const void *a, const void *b)
{
    const float x = ((const float *)a)[0], y = ((const float *)b)[0];
    const float lx = ((const float *)a)[1], ly = ((const float *)b)[1];
    if (x != y)
        return x > y ? -1 : 1;
    return positives_first ? (lx > ly ? -1 : lx < ly) : (lx < ly ? -1 : lx > ly);
}

/* The AP of one split's scores [count][2B] with their exact positive-negative ties broken the worst
 * and the best way, one threshold per item. A tie is two rows equal by construction (the same s'
 * at the same time; under the per-vertex rule more often), whose bits the reference's loops keep
 * equal and BLAS's blocking need not: two runs equal within fp differ in AP by how their ties
 * fall, so the check compares these intervals. Returns the ties. */
static int64_t split_ap_bracket(const reference_run *run, const float *scores, int64_t B, event_split split,
                                double *low, double *high)
{
    int64_t n = 0;
    for (int64_t s = 0; s < run->count; s++)
        n += run->specs[s].split == split ? 2 * run->specs[s].size : 0;
    float *items = malloc((size_t)(2 * n) * sizeof(float)); /* [n][score, label] */
    int64_t at = 0, positives = 0, ties = 0;
    for (int64_t s = 0; s < run->count; s++)
        for (int64_t j = 0; run->specs[s].split == split && j < 2 * run->specs[s].size; j++, at++) {
            items[2 * at] = scores[s * 2 * B + j];
            items[2 * at + 1] = j < run->specs[s].size;
            positives += j < run->specs[s].size;
        }
    for (int way = 0; way < 2; way++) {
        positives_first = way;
        qsort(items, (size_t)n, 2 * sizeof(float), by_score);
        double true_positives = 0, sum = 0;
        for (int64_t i = 0; i < n; i++) {
            ties += way == 0 && i > 0 && items[2 * i] == items[2 * (i - 1)] && items[2 * i + 1] != items[2 * i - 1];
            if (items[2 * i + 1] > 0) {
                true_positives += 1;
                sum += true_positives / (double)(i + 1) / (double)positives;
            }
        }
        *(way ? high : low) = sum;
    }
    free(items);
    return ties;
}

/* AP of one split from per-batch scores [count][2B] (positives, then negatives, of each batch). */
static double split_ap(const reference_run *run, const float *scores, int64_t B, event_split split)
{
    int64_t n = 0;
    for (int64_t s = 0; s < run->count; s++)
        n += run->specs[s].split == split ? 2 * run->specs[s].size : 0;
    float *all = malloc((size_t)n * sizeof(float));
    uint8_t *labels = malloc((size_t)n);
    int64_t at = 0;
    for (int64_t s = 0; s < run->count; s++)
        for (int64_t j = 0; run->specs[s].split == split && j < 2 * run->specs[s].size; j++, at++) {
            all[at] = scores[s * 2 * B + j];
            labels[at] = j < run->specs[s].size;
        }
    double ap = 0;
    tf_error err;
    ck_assert(ref_average_precision(all, labels, n, &ap, &err) == TF_OK);
    free(all), free(labels);
    return ap;
}

/* The largest |ours - reference| / max(1, |reference|) of memory and mailbox values, and the count of
 * timestamps whose bits differ (they are copied from the events: they must not). */
static double memory_error(const node_memory *ours, const node_memory *reference, int64_t *timestamps_differing)
{
    *timestamps_differing += differing_doubles(ours->memory_time, reference->memory_time, ours->num_nodes) +
                             differing_doubles(ours->mail_time, reference->mail_time, ours->num_nodes * ours->mails);
    for (int64_t v = 0; v < ours->num_nodes; v++) /* ring positions are integers: exact */
        *timestamps_differing += ours->mail_next[v] != reference->mail_next[v];
    return fmax(relative_error(ours->memory, reference->memory, ours->num_nodes * ours->memory_width),
                relative_error(ours->mail, reference->mail, ours->num_nodes * ours->mails * ours->mail_width));
}

/* The time encoders' weight gradient is sum_i dphi_i sin(w dt_i + b) dt_i over every entry, with dt
 * up to 1e6 s on these streams: terms of order 1e5 that cancel to order 1e2, so the 1e-7 relative
 * difference BLAS's order leaves in dphi grows by their ratio. Measured against the reference on the
 * same memory (fast_lockstep()): up to 4.6e-5 (TGN on Wikipedia under the per-vertex rule); every other
 * gradient stays below TOLERANCE. */
#define TIME_WEIGHT_TOLERANCE 1e-4

/* The largest relative error of @p ours against @p reference over every parameter but the time
 * encoders' weights (into *gradient, its name into *worst) and over those (into *time). */
static void gradient_errors(const parameter_list *list, const float *ours, const float *reference, double *gradient,
                            const char **worst, double *time)
{
    for (int64_t i = 0, offset = 0; i < list->count; offset += list->items[i].value.size, i++) {
        const double e = relative_error(ours + offset, reference + offset, list->items[i].value.size);
        if (strstr(list->items[i].name, "time_enc.w.weight"))
            *time = fmax(*time, e);
        else if (e > *gradient)
            *gradient = e, *worst = list->items[i].name;
    }
}

/* The twin on opt_kernels in lockstep with the recorded reference over a whole epoch, Sven's dispatch.
 * Its memory is its own (never copied from the reference), so after a few batches it differs from
 * the reference's by the fp the kernels left in earlier batches (the drift, held to TOLERANCE with the
 * scores, the loss and the epoch's APs). A batch's gradient is a function of the memory it reads, and
 * the event models amplify a change of that memory: APAN's LayerNorm divides by each row's standard
 * deviation (inverse_std up to 24 on the generated stream), so a drift of 5.4e-7 in the memory the
 * batch read became a gradient difference of 1.2e-5 on memory_updater.w_v.bias at batch 6. That was
 * no branch flip: every ReLU and LeakyReLU pre-activation within 1e-5 of its kink had the same sign in
 * both runs, and with the twin given the reference's memory before each batch the same batch differed
 * by 1.5e-6. Compared with the recorded reference, the gradient measures that amplification, not the
 * kernels; so it is held to TOLERANCE against a control: the reference (its own kernels) run on rank 0
 * from the twin's memory of the batch before, with the same parameters. The two then differ only in
 * one batch of kernels (measured: 2.6e-6 on that case, 4.4e-6 the largest, TGN on the same stream).
 * The gradient's difference from the recorded reference is printed beside it. */
static void fast_lockstep(const workload *w, const reference_run *run)
{
    tf_error err;
    opt_event_trainer tr;
    event_trainer control; /* rank 0: the reference's kernels on the twin's memory, batch by batch */
    int64_t count;
    node_memory full;
    event_batch_spec *specs = lockstep_start(w, DISPATCH_SVEN, "hash", &opt_kernels, &tr, &count, &full);
    if (world.rank == 0)
        ck_assert(event_trainer_create(&control, &w->events, w->events.features, &w->config, &w->options, &err) ==
                  TF_OK);
    const int64_t B = w->options.batch_size;
    float *scores = malloc((size_t)(count * 2 * B) * sizeof(float));
    float *control_scores = malloc((size_t)(2 * B) * sizeof(float));
    float *gradient = malloc((size_t)parameters_size(&tr.base.model.parameters) * sizeof(float));
    float *control_gradient = malloc((size_t)parameters_size(&tr.base.model.parameters) * sizeof(float));
    int64_t timestamps = 0;
    const char *worst = "none", *drift_worst = "none";
    double time_error = 0; /* the two time encoders' weights against the control, held to TIME_WEIGHT_TOLERANCE */
    double gradient_error = 0, control_memory = 0, control_score = 0, control_loss = 0; /* against the control */
    double drift_gradient = 0, drift_time = 0; /* the gradients against the recorded reference: printed */
    double memory = 0, score = 0, loss_error = 0, loss = 0, reference_loss = 0; /* against the recorded reference */
    for (int64_t s = 0; s < count; s++) {
        if (world.rank == 0) {
            unpack_values(&tr.base.model.parameters, run->before + s * run->parameters);
            unpack_values(&control.model.parameters, run->before + s * run->parameters);
            memory_copy(&control.memory, &full); /* the twin's memory after batch s - 1 (zero before the first) */
        }
        ck_assert(opt_event_trainer_adopt_parameters(&tr, 0, &err) == TF_OK);
        double batch_loss, control_batch_loss;
        ck_assert_msg(opt_event_trainer_run_batch(&tr, &specs[s], &batch_loss, scores + s * 2 * B, &err) == TF_OK,
                      "%s", err.message);
        ck_assert(opt_event_trainer_gather_memory(&tr, world.rank == 0 ? &full : NULL, &err) == TF_OK);
        if (world.rank != 0)
            continue;
        ck_assert(event_trainer_run_batch(&control, &specs[s], &control_batch_loss, control_scores, &err) == TF_OK);
        control_memory = fmax(control_memory, memory_error(&full, &control.memory, &timestamps));
        control_score = fmax(control_score, relative_error(scores + s * 2 * B, control_scores, 2 * specs[s].size));
        control_loss = fmax(control_loss, relative(batch_loss, control_batch_loss));
        memory = fmax(memory, memory_error(&full, &run->memory[s], &timestamps));
        score = fmax(score, relative_error(scores + s * 2 * B, run->scores + s * 2 * B, 2 * specs[s].size));
        loss_error = fmax(loss_error, relative(batch_loss, run->loss[s]));
        if (specs[s].train) {
            loss += batch_loss, reference_loss += run->loss[s];
            pack(&tr.base.model.parameters, 1, gradient);
            pack(&control.model.parameters, 1, control_gradient);
            gradient_errors(&tr.base.model.parameters, gradient, control_gradient, &gradient_error, &worst,
                            &time_error);
            gradient_errors(&tr.base.model.parameters, gradient, run->gradient + s * run->parameters,
                            &drift_gradient, &drift_worst, &drift_time);
        }
    }
    double saved = (double)tr.updates_saved; /* the updater rows shared by duplicates, all ranks */
    ck_assert(comm_allreduce_sum_double(&world, &saved, 1, &err) == TF_OK);
    ck_assert_msg(saved > 0, "no entry shared its updater row: the fast twin did not deduplicate");
    if (world.rank == 0) {
        const double epoch_loss = fabs(loss - reference_loss) / fabs(reference_loss);
        double ap[2], plain = 0; /* plain: |ours - reference| / reference, the larger split's, printed */
        int64_t ties = 0;
        for (int split = 0; split < 2; split++) { /* the gap between the two runs' tie intervals */
            const event_split which = split == 0 ? EVENT_SPLIT_VALIDATION : EVENT_SPLIT_TEST;
            double low = 0, high = 0, our_low = 0, our_high = 0;
            ties += split_ap_bracket(run, run->scores, B, which, &low, &high);
            ties += split_ap_bracket(run, scores, B, which, &our_low, &our_high);
            const double reference = split_ap(run, run->scores, B, which);
            ap[split] = fmax(0, fmax(our_low - high, low - our_high)) / reference;
            plain = fmax(plain, fabs(split_ap(run, scores, B, which) - reference) / reference);
        }
        printf("%-6s %-28s fast (opt_kernels) %d rank(s): %2lld batches; against the reference on the same "
               "memory, batch by batch: memory and mail %.1e, scores %.1e, loss %.1e, gradients %.1e (%s), time "
               "encoders' weights %.1e; against the recorded reference (the twin's memory its own, drifting): "
               "memory and mail %.1e, timestamps differing %lld (must be 0), scores %.1e, loss %.1e, gradients "
               "%.1e (%s, printed), time encoders' weights %.1e (printed); %.0f updater rows shared by duplicates; "
               "the epoch's train loss %.1e, validation AP %.1e, test AP %.1e (relative gap between the two runs' "
               "APs with their %lld exact positive-negative ties broken either way; plain difference %.1e)\n",
               event_model_kind_name(w->config.kind), w->label, world.size, (long long)count, control_memory,
               control_score, control_loss, gradient_error, worst, time_error, memory, (long long)timestamps, score,
               loss_error, drift_gradient, drift_worst, drift_time, saved, epoch_loss, ap[0], ap[1], (long long)ties,
               plain);
        ck_assert_int_eq(timestamps, 0);
        ck_assert_msg(control_memory <= TOLERANCE && control_score <= TOLERANCE && control_loss <= TOLERANCE &&
                          gradient_error <= TOLERANCE && time_error <= TIME_WEIGHT_TOLERANCE,
                      "against the reference on the same memory: memory %g scores %g loss %g gradients %g time "
                      "encoders %g",
                      control_memory, control_score, control_loss, gradient_error, time_error);
        ck_assert_msg(memory <= TOLERANCE && score <= TOLERANCE && loss_error <= TOLERANCE,
                      "against the recorded reference: memory %g scores %g loss %g", memory, score, loss_error);
        ck_assert_msg(epoch_loss <= TOLERANCE && ap[0] <= TOLERANCE && ap[1] <= TOLERANCE,
                      "epoch loss %g, validation AP %g, test AP %g", epoch_loss, ap[0], ap[1]);
        event_trainer_free(&control);
    }
    free(scores), free(control_scores), free(gradient), free(control_gradient), free(specs);
    node_memory_free(&full);
    opt_event_trainer_free(&tr);
}

static void fast_lockstep_on(const char *label, const char *spec, int64_t events, event_model_kind kind,
                             event_memory_update rule)
{
    workload w;
    workload_load(&w, label, spec, events, kind, 100);
    w.config.memory_update = rule;
    reference_run run;
    memset(&run, 0, sizeof run);
    if (world.rank == 0)
        reference_record(&w, &run);
    fast_lockstep(&w, &run);
    reference_free(&run);
    workload_free(&w);
}

/* Edge features (the generated stream's 2 columns) and none (Wikipedia's bundled stream), under
 * both memory-update rules (per vertex the twin runs the updater once per vertex of a batch). */
START_TEST(fast_lockstep_models)
{
    for (int kind = EVENT_MODEL_TGN; kind <= EVENT_MODEL_JODIE; kind++) {
        fast_lockstep_on("repeats (2000 events)", REPEATS, 2000, (event_model_kind)kind, EVENT_MEMORY_PER_ENTRY);
        fast_lockstep_on("wikipedia (first 1000)", "wikipedia", 1000, (event_model_kind)kind, EVENT_MEMORY_PER_ENTRY);
        fast_lockstep_on("repeats (2000), per vertex", REPEATS, 2000, (event_model_kind)kind, EVENT_MEMORY_PER_VERTEX);
        fast_lockstep_on("wikipedia (1000), per vertex", "wikipedia", 1000, (event_model_kind)kind,
                         EVENT_MEMORY_PER_VERTEX);
    }
    fast_lockstep_on("repeats (2000 events)", REPEATS, 2000, EVENT_MODEL_APAN, EVENT_MEMORY_PER_ENTRY);
}
END_TEST

/* ---- free-running ------------------------------------------------------------------------------- */

/* The control of a free run: an epoch of the reference in which every gradient value, after each
 * backward, moves by one ulp up or down at random (about what reordering its sums does, without
 * any dispatch). */
static void noisy_epoch(event_trainer *tr, rng *noise)
{
    tf_error err;
    const int64_t count = event_trainer_epoch_batches(tr, NULL);
    event_batch_spec *specs = malloc((size_t)count * sizeof *specs);
    event_trainer_epoch_batches(tr, specs);
    node_memory_reset(&tr->memory);
    for (int64_t i = 0; i < count && specs[i].train; i++) {
        const event_batch_spec *s = &specs[i];
        for (int64_t j = 0; j < s->size; j++)
            tr->negatives[j] = event_trainer_negative(tr, s->stream, s->first + j);
        event_batch batch = {tr->events, tr->edge_features, s->first, s->size, tr->negatives};
        event_tape tape;
        ck_assert(event_model_forward(&tr->model, &tr->memory, &tr->history, &batch, &tape, tr->scores, &err) == TF_OK);
        event_model_loss(tr->scores, s->size, tr->dscores);
        parameters_zero_grad(&tr->model.parameters);
        ck_assert(event_model_backward(&tr->model, &tape, tr->dscores, &err) == TF_OK);
        for (int64_t p = 0; p < tr->model.parameters.count; p++) {
            tensor *g = &tr->model.parameters.items[p].grad;
            for (int64_t k = 0; k < g->size; k++)
                g->data[k] = nextafterf(g->data[k], rng_below(noise, 2) ? INFINITY : -INFINITY);
        }
        ref_adam_step(&tr->optimizer, &tr->model.parameters);
        event_model_write_memory(&tr->model, &tape, &batch, &tr->memory);
        event_tape_free(&tape);
    }
    tr->epoch++;
    free(specs);
}

/* Two epochs of training, every mode. On one rank the twin sums every gradient over the same rows
 * in the same order as the reference: bitwise in everything. Sven, naive and DepCache compute the
 * same local gradients on any R: bitwise to each other. On R > 1 every rank's gradient stays a
 * double sum through the all-reduce and is rounded to float once, as the reference rounds its
 * own: the test AP must be within 1e-6 of the reference's. The control above, the reference with
 * one-ulp noise on every gradient, shows what a single rounding per rank would cost: Adam
 * carries it into the AP (chapters/04-dispatch.md). */
static void free_run(event_model_kind kind, int64_t events)
{
    const char *name = event_model_kind_name(kind);
    workload w;
    workload_load(&w, "repeats", REPEATS, events, kind, 100);
    w.options.learning_rate = 1e-3; /* the default */
    tf_error err;
    const int64_t epochs = 2;
    event_trainer ref, noisy;
    ck_assert(event_trainer_create(&ref, &w.events, w.events.features, &w.config, &w.options, &err) == TF_OK);
    ck_assert(event_trainer_create(&noisy, &w.events, w.events.features, &w.config, &w.options, &err) == TF_OK);
    event_epoch_report reference;
    rng noise;
    rng_seed(&noise, 12);
    for (int64_t e = 0; e < epochs; e++) {
        ck_assert(event_trainer_epoch(&ref, &reference, NULL, NULL, &err) == TF_OK);
        noisy_epoch(&noisy, &noise);
    }
    event_metrics validation, control, replayed;
    ck_assert(event_trainer_evaluate(&noisy, &validation, &control, NULL, NULL, &err) == TF_OK);
    ck_assert(event_trainer_evaluate(&ref, &validation, &replayed, NULL, NULL, &err) == TF_OK);
    const int64_t P = parameters_size(&ref.model.parameters);
    float *expected = malloc((size_t)P * sizeof(float)), *sven = malloc((size_t)P * sizeof(float));
    float *ours = malloc((size_t)P * sizeof(float)), *noisy_values = malloc((size_t)P * sizeof(float));
    pack(&ref.model.parameters, 0, expected);
    pack(&noisy.model.parameters, 0, noisy_values);
    if (world.rank == 0)
        printf("free-running %s, %lld events, %lld epochs: the reference with one-ulp noise on every gradient value "
               "ends with parameters %.1e from the reference; test AP by replay %.9f vs %.9f (|diff| %.1e)\n",
               name, (long long)events, (long long)epochs, relative_error(noisy_values, expected, P), control.average_precision,
               replayed.average_precision, fabs(control.average_precision - replayed.average_precision));
    for (int mode = DISPATCH_SVEN; mode <= DISPATCH_DEPCOMM; mode++) {
        opt_event_trainer tr;
        ck_assert(opt_event_trainer_create(&tr, &w.events, w.events.features, &w.config, &w.options,
                                           (dispatch_mode)mode, "hash", &world, &err) == TF_OK);
        event_epoch_report report;
        for (int64_t e = 0; e < epochs; e++)
            ck_assert_msg(opt_event_trainer_epoch(&tr, &report, NULL, NULL, &err) == TF_OK, "%s", err.message);
        ck_assert_msg(opt_state_agree(&world, &tr.base.model.parameters, &tr.base.optimizer, tr.base.epoch, &err) == TF_OK, "%s", err.message);
        pack(&tr.base.model.parameters, 0, ours);
        if (mode == DISPATCH_SVEN)
            memcpy(sven, ours, (size_t)P * sizeof(float));
        const double ap = fabs(report.test.average_precision - reference.test.average_precision);
        const int64_t to_reference = differing_values(ours, expected, P), to_sven = differing_values(ours, sven, P);
        if (world.rank == 0)
            printf("free-running %s, %lld epochs, %-8s on %d rank(s): test AP %.9f vs %.9f (|diff| %.1e); parameters "
                   "%.1e from the reference (%lld of %lld differ), %lld differ from sven's\n",
                   name, (long long)epochs, dispatch_mode_name((dispatch_mode)mode), world.size,
                   report.test.average_precision, reference.test.average_precision, ap,
                   relative_error(ours, expected, P), (long long)to_reference, (long long)P, (long long)to_sven);
        if (world.size == 1)
            ck_assert(to_reference == 0 && ap == 0);
        ck_assert_msg(ap <= 1e-6, "%s %s on %d ranks: test AP %.1e from the reference's", name,
                      dispatch_mode_name((dispatch_mode)mode), world.size, ap);
        if (mode != DISPATCH_DEPCOMM)
            ck_assert_int_eq(to_sven, 0);
        opt_event_trainer_free(&tr);
    }
    /* The fast twin free-running: printed beside the control, not held to 1e-6 (see the top). */
    event_train_options fast = w.options;
    fast.kernels = &opt_kernels;
    opt_event_trainer tr;
    ck_assert(opt_event_trainer_create(&tr, &w.events, w.events.features, &w.config, &fast, DISPATCH_SVEN, "hash",
                                       &world, &err) == TF_OK);
    event_epoch_report report;
    for (int64_t e = 0; e < epochs; e++)
        ck_assert_msg(opt_event_trainer_epoch(&tr, &report, NULL, NULL, &err) == TF_OK, "%s", err.message);
    pack(&tr.base.model.parameters, 0, ours);
    if (world.rank == 0)
        printf("free-running %s, %lld epochs, fast twin on %d rank(s): test AP %.9f vs %.9f (|diff| %.1e; the "
               "one-ulp control's %.1e); parameters %.1e from the reference\n",
               name, (long long)epochs, world.size, report.test.average_precision, reference.test.average_precision,
               fabs(report.test.average_precision - reference.test.average_precision),
               fabs(control.average_precision - replayed.average_precision), relative_error(ours, expected, P));
    opt_event_trainer_free(&tr);
    free(expected), free(sven), free(ours), free(noisy_values);
    event_trainer_free(&ref);
    event_trainer_free(&noisy);
    workload_free(&w);
}

/* TGN on the whole generated stream; JODIE and APAN (its default ring of 10 mails, delivered to
 * neighbours) on its first 1000 events, which keeps the case quick on 4 ranks. */
START_TEST(free_running)
{
    free_run(EVENT_MODEL_TGN, 2000);
    free_run(EVENT_MODEL_JODIE, 1000);
    free_run(EVENT_MODEL_APAN, 1000);
}
END_TEST

int main(int argc, char **argv)
{
    if (start_mpi(&world, &argc, &argv, 0) != 0)
        return 1;
    Suite *suite = suite_create("dispatch_parallel");
    TCase *cases = tcase_create("equivalence");
    tcase_set_timeout(cases, 900);
    tcase_add_test(cases, lockstep_generated);
    tcase_add_test(cases, lockstep_wikipedia);
    tcase_add_test(cases, lockstep_per_vertex);
    tcase_add_test(cases, lockstep_empty_slices);
    tcase_add_test(cases, lockstep_apan);
    tcase_add_test(cases, fast_lockstep_models);
    tcase_add_test(cases, free_running);
    suite_add_tcase(suite, cases);
    return run_suite_mpi(suite, &world);
}
