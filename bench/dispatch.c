/* Sven's redundancy-free dispatch (chapter 04): the benchmark. The table's entry,
 * technique_dispatch, is verify/techniques/dispatch.c.
 *
 * build/bench/bench dispatch --out DIR, under mpiexec -n R (bench/dispatch.sh runs R = 1, 2, 4,
 * ..., 64):
 *  - R = 1: the redundancy sweep, plans only: eta_1 = 1 - U1/N1 (dispatch) and eta_2 = 1 - U2/N2
 *    (aggregation; [Sven] Eq. 1) per dataset, batch size and model -> eta.csv; and epoch times of
 *    the reference and each mode -> epoch.csv;
 *  - R > 1: bytes per training epoch, by mode and placement -> bytes.csv: every category measured
 *    must equal the one predicted from the run's counts (dispatch_traffic_predict(); else the row
 *    is WRONG and prints no number), beside the lower bound and the paper's App. C formulas
 *    (Eqs. 15-21) evaluated with the run's own N1, N2, eta_1, eta_2; the placement's cut capacity
 *    cap(r) (max and mean over ranks); at R = 2 also the epoch time per mode.
 * The formulas, with C0 = 4 bytes and M ranks:
 *     C_DepCache = N2 (1 - eta_2) (d_msg + d_mem) 2 (M - 1)^2 / M C0                      (15)
 *     C_DepComm  = N1 d_mem 2 (M - 1) / M C0 + N2 (1 - eta_2) (d_msg + d_mem) 2 (M - 1) / M C0  (16-18)
 *     C_Sven     = N1 (1 - eta_1) (d_msg + d_mem) 2 (M - 1) / M C0
 *                  + N2 (1 - eta_2) (d_msg + d_mem) 2 (M - 1) / M C0                        (19-21) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/benchmark.h"
#include "opt/train_events.h"
#include "ref/core/clock.h"
#include "ref/core/memory.h"
#include "verify/techniques/dispatch.h"

/* Whether an append-mode file is still empty (its header not yet written). */
static int csv_is_empty(FILE *f)
{
    fseek(f, 0, SEEK_END);
    return ftell(f) == 0;
}

static int load_events(const char *name, dataset *d, tf_error *err)
{
    if (dataset_load(name, NULL, d, err) != TF_OK)
        return TF_ERR_INPUT;
    if (d->kind != DATASET_EVENTS) {
        dataset_free(d);
        return tf_error_set(err, TF_ERR_INPUT, "bench dispatch: %s is not an event stream", name);
    }
    return TF_OK;
}

static void shape(event_model_config *config, event_train_options *options, event_model_kind kind, int64_t width,
                  int64_t edge_width, int64_t batch)
{
    event_model_config_default(config, kind);
    config->memory_width = config->time_width = config->embedding_width = width;
    config->edge_width = edge_width;
    event_train_options_default(options);
    options->batch_size = batch;
}

/* A reference trainer whose plans the sweeps read (widths 8: plans do not depend on them). */
static int plan_trainer(const event_stream *es, event_model_kind kind, int64_t batch, event_trainer *tr, tf_error *err)
{
    event_model_config config;
    event_train_options options;
    shape(&config, &options, kind, DISPATCH_WIDTH, es->feature_width, batch);
    return event_trainer_create(tr, es, es->features, &config, &options, err);
}

/* The redundancy of one epoch's training batches on one rank, from the plans alone. */
static int redundancy(const event_stream *es, event_model_kind kind, int64_t batch, dispatch_counts *sum,
                      tf_error *err)
{
    event_trainer tr;
    if (plan_trainer(es, kind, batch, &tr, err) != TF_OK)
        return TF_ERR_INPUT;
    const int64_t count = event_trainer_epoch_batches(&tr, NULL);
    event_batch_spec *slots = tf_alloc((size_t)count, sizeof *slots, "slots", err);
    dispatch_setup setup = {&tr, NULL, DISPATCH_SVEN, 1, 0};
    dispatch_table table;
    dispatch_batch b;
    memset(&table, 0, sizeof table);
    memset(&b, 0, sizeof b);
    memset(sum, 0, sizeof *sum);
    int status = slots ? dispatch_table_create(&table, es->num_nodes, err) : TF_ERR_INPUT;
    if (status == TF_OK)
        status = dispatch_batch_create(&b, &setup, err);
    if (status == TF_OK) {
        event_trainer_epoch_batches(&tr, slots);
        for (int64_t i = 0; status == TF_OK && i < count && slots[i].train; i++)
            if ((status = dispatch_batch_build(&b, &setup, &slots[i], &table, err)) == TF_OK)
                dispatch_counts_add(sum, &b.counts);
    }
    dispatch_batch_free(&b);
    dispatch_table_free(&table);
    free(slots);
    event_trainer_free(&tr);
    return status;
}

static const char *const sweep_data[] = {"wikipedia", "collegemsg", "enron", "bitcoin_otc"};
static const int64_t sweep_batches[] = {200, 600, 1200, 2000};

/* Models first .. last of event_model_kind: TGN and JODIE (bench dispatch) or APAN (bench dispatch_apan). */
typedef struct model_range {
    event_model_kind first, last;
} model_range;

static int eta_sweep(const benchmark_options *o, model_range models, FILE *csv, tf_error *err)
{
    if (csv_is_empty(csv))
        fprintf(csv, "data,model,batch,batches,N1,U1,eta1,N2,U2,eta2,T\n");
    printf("\nRedundancy of one training epoch, one rank (plans only): eta_1 = 1 - U1/N1 (dispatch), "
           "eta_2 = 1 - U2/N2 (aggregation), T = U1/U2\n");
    printf("  %-12s %-6s %6s %10s %9s %6s %9s %9s %6s %6s\n", "data", "model", "batch", "N1", "U1", "eta_1", "N2", "U2",
           "eta_2", "T");
    const int datasets = o->quick ? 1 : 4;
    for (int d = 0; d < datasets; d++) {
        dataset data;
        if (load_events(sweep_data[d], &data, err) != TF_OK)
            return -1;
        for (int kind = models.first; kind <= (int)models.last; kind++)
            for (int b = 0; b < 4; b++) {
                dispatch_counts c;
                if (redundancy(&data.events, (event_model_kind)kind, sweep_batches[b], &c, err) != TF_OK) {
                    dataset_free(&data);
                    return -1;
                }
                const double eta1 = dispatch_eta(c.entries, c.unique), eta2 = dispatch_eta(c.writes, c.written);
                const double T = (double)c.unique / (double)c.written;
                printf("  %-12s %-6s %6lld %10lld %9lld %6.3f %9lld %9lld %6.3f %6.2f\n", sweep_data[d],
                       event_model_kind_name((event_model_kind)kind), (long long)sweep_batches[b],
                       (long long)c.entries, (long long)c.unique, eta1, (long long)c.writes, (long long)c.written, eta2,
                       T);
                fprintf(csv, "%s,%s,%lld,%lld,%lld,%lld,%.6f,%lld,%lld,%.6f,%.4f\n", sweep_data[d],
                        event_model_kind_name((event_model_kind)kind), (long long)sweep_batches[b],
                        (long long)c.batches, (long long)c.entries, (long long)c.unique, eta1, (long long)c.writes,
                        (long long)c.written, eta2, T);
            }
        dataset_free(&data);
    }
    return 0;
}

/* The paper's App. C volume of @p mode (bytes), from a run's own counts; NaN for naive (no formula).
 * A dispatched row is d_mem + the mailbox (APAN: M mails of d_msg), a written one d_mem + one mail. */
static double paper_formula(const dispatch_traffic *t, dispatch_mode mode, const event_model *m)
{
    const double M = t->ranks, C0 = 4, N1 = (double)t->counts.entries, N2 = (double)t->counts.writes;
    const double dm = (double)m->config.memory_width, dmsg = (double)event_model_mail_width(m);
    const double box = (double)m->config.mails * dmsg;
    const double eta1 = dispatch_eta(t->counts.entries, t->counts.unique);
    const double eta2 = dispatch_eta(t->counts.writes, t->counts.written_per_trainer);
    const double aggregation = N2 * (1 - eta2) * (dmsg + dm) * 2 * (M - 1) / M * C0;
    switch (mode) {
    case DISPATCH_DEPCACHE:
        return N2 * (1 - eta2) * (dmsg + dm) * 2 * (M - 1) * (M - 1) / M * C0;
    case DISPATCH_DEPCOMM:
        return N1 * dm * 2 * (M - 1) / M * C0 + aggregation;
    case DISPATCH_SVEN:
        return N1 * (1 - eta1) * (box + dm) * 2 * (M - 1) / M * C0 + aggregation;
    default:
        return NAN;
    }
}

/* Run the training batches of one epoch of @p tr (free-running), or every batch when @p all. */
static int run_epoch_slots(opt_event_trainer *tr, int all, tf_error *err)
{
    const int64_t count = event_trainer_epoch_batches(&tr->base, NULL);
    event_batch_spec *slots = tf_alloc((size_t)count, sizeof *slots, "slots", err);
    if (!slots)
        return TF_ERR_INPUT;
    event_trainer_epoch_batches(&tr->base, slots);
    opt_event_trainer_reset_memory(tr);
    int status = TF_OK;
    for (int64_t i = 0; status == TF_OK && i < count && (all || slots[i].train); i++) {
        double loss;
        status = opt_event_trainer_run_batch(tr, &slots[i], &loss, NULL, err);
    }
    free(slots);
    return status;
}

/* One line and one CSV row of the bytes of a training epoch; 1 when a measured category differs
 * from its prediction (then no number is printed). */
static int bytes_point(comm *group, const char *name, const event_stream *es, event_model_kind kind,
                       const char *placement, dispatch_mode mode, double cap_max, double cap_mean, FILE *csv,
                       tf_error *err)
{
    event_model_config config;
    event_train_options options;
    shape(&config, &options, kind, DISPATCH_WIDTH, es->feature_width, DISPATCH_BATCH);
    opt_event_trainer tr;
    if (opt_event_trainer_create(&tr, es, es->features, &config, &options, mode, placement, group, err) != TF_OK)
        return -1;
    double started = wall_seconds();
    dispatch_traffic t;
    int status = run_epoch_slots(&tr, 0, err);
    double seconds = wall_seconds() - started;
    if (status == TF_OK)
        status = opt_event_trainer_traffic(&tr, &t, 1, err);
    if (status != TF_OK) {
        opt_event_trainer_free(&tr);
        return -1;
    }
    dispatch_bytes p;
    dispatch_traffic_predict(&t, mode, &tr.base.model, &p);
    const dispatch_bytes *b = &t.bytes;
    const int wrong = b->counts != p.counts || b->requests != p.requests || b->dispatch_rows != p.dispatch_rows ||
                      b->updates != p.updates || b->update_gradients != p.update_gradients ||
                      b->aggregation != p.aggregation;
    const uint64_t rows = b->dispatch_rows + b->updates + b->update_gradients + b->aggregation;
    const uint64_t bound = dispatch_traffic_lower_bound(&t, &tr.base.model);
    const dispatch_counts *c = &t.counts;
    const double formula = paper_formula(&t, mode, &tr.base.model);
    const double eta1 = dispatch_eta(c->entries, c->unique), eta2 = dispatch_eta(c->writes, c->written_per_trainer);
    const double per_trainer_extra = (double)dispatch_write_row_bytes(&tr.base.model) *
                                     (double)(c->written_per_trainer_remote - c->written_remote);
    if (group->rank == 0) {
        if (wrong)
            printf("  %-11s %-5s %-9s R=%-3d %-8s WRONG: measured bytes differ from the prediction from counts "
                   "(counts %llu/%llu requests %llu/%llu rows %llu/%llu updates %llu/%llu %llu/%llu write %llu/%llu)\n",
                   name, event_model_kind_name(kind), placement, group->size, dispatch_mode_name(mode),
                   (unsigned long long)b->counts, (unsigned long long)p.counts, (unsigned long long)b->requests,
                   (unsigned long long)p.requests, (unsigned long long)b->dispatch_rows,
                   (unsigned long long)p.dispatch_rows, (unsigned long long)b->updates, (unsigned long long)p.updates,
                   (unsigned long long)b->update_gradients, (unsigned long long)p.update_gradients,
                   (unsigned long long)b->aggregation, (unsigned long long)p.aggregation);
        else
            printf("  %-11s %-5s %-9s R=%-3d %-8s rows %10.4g B (%5.2fx bound %10.4g), paper %10.4g, ids %9.3g, "
                   "gradients %9.3g; eta %.3f %.3f; cap max/mean %.2f; %.1f s\n",
                   name, event_model_kind_name(kind), placement, group->size, dispatch_mode_name(mode), (double)rows,
                   bound ? (double)rows / (double)bound : 1.0, (double)bound, formula, (double)b->requests,
                   (double)b->gradients, eta1, eta2, cap_mean > 0 ? cap_max / cap_mean : 1.0, seconds);
        fprintf(csv,
                "%s,%s,%s,%d,%s,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%.6f,%.6f,%.4f,%llu,%llu,%llu,%llu,%llu,"
                "%llu,%llu,%llu,%llu,%llu,%.1f,%.1f,%.1f,%.1f,%.3f,%d\n",
                name, event_model_kind_name(kind), placement, group->size, dispatch_mode_name(mode),
                (long long)c->batches, (long long)c->entries, (long long)c->unique, (long long)c->unique_remote,
                (long long)c->entries_remote, (long long)c->writes, (long long)c->written_per_trainer,
                (long long)c->written, (long long)c->written_remote, eta1, eta2,
                (double)c->unique / (double)c->written_per_trainer, (unsigned long long)b->counts,
                (unsigned long long)b->requests, (unsigned long long)b->dispatch_rows, (unsigned long long)b->updates,
                (unsigned long long)b->update_gradients, (unsigned long long)b->aggregation,
                (unsigned long long)b->gradients, (unsigned long long)b->other, (unsigned long long)rows,
                (unsigned long long)bound, formula, per_trainer_extra, cap_max, cap_mean, seconds, wrong);
        fflush(stdout);
    }
    opt_event_trainer_free(&tr);
    return wrong;
}

/* The cut capacity cap(r) of a placement at R ranks (the partitioner's objective), its max and
 * mean over the ranks, from the demand of an epoch's training plans. No MPI: rank 0 alone. */
static int placement_cost(const event_stream *es, event_model_kind kind, const char *placement, int ranks,
                          double cap[2], tf_error *err)
{
    event_trainer tr;
    if (plan_trainer(es, kind, DISPATCH_BATCH, &tr, err) != TF_OK)
        return TF_ERR_INPUT;
    bicut_demand demand;
    memset(&demand, 0, sizeof demand);
    int32_t *owner = tf_alloc((size_t)es->num_nodes, sizeof *owner, "placement", err);
    int64_t *cost = owner ? tf_alloc((size_t)ranks, sizeof *cost, "cost", err) : NULL;
    int status = cost ? dispatch_place(placement, &tr, ranks, owner, err) : TF_ERR_INPUT;
    if (status == TF_OK)
        status = dispatch_demand_measure(&tr, ranks, &demand, err);
    if (status == TF_OK) {
        bicut_costs(&demand, owner, cost, cost);
        cap[0] = cap[1] = 0;
        for (int r = 0; r < ranks; r++) {
            cap[0] = fmax(cap[0], (double)cost[r]);
            cap[1] += (double)cost[r] / ranks;
        }
    }
    bicut_demand_free(&demand);
    free(owner);
    free(cost);
    event_trainer_free(&tr);
    return status;
}

static int bytes_sweep(comm *group, const benchmark_options *o, model_range models, FILE *csv, tf_error *err)
{
    if (group->rank == 0) {
        printf("\nBytes of one training epoch on %d ranks, batch %d, widths %d: memory rows sent (all ranks), the "
               "lower bound (each unique remote row once), the paper's App. C volume from this run's N1, N2, eta\n",
               group->size, DISPATCH_BATCH, DISPATCH_WIDTH);
        if (models.first == EVENT_MODEL_APAN)
            printf("APAN on Wikipedia's first %d events, hash placement\n", DISPATCH_EVENTS);
        if (csv_is_empty(csv))
            fprintf(csv, "data,model,placement,R,mode,batches,N1,U1,U1_remote,N1_remote,N2,U2_trainer,U2,U2_remote,"
                         "eta1,eta2,T,counts,requests,dispatch_rows,updates,update_gradients,aggregation,gradients,"
                         "other,memory_rows,lower_bound,paper,per_trainer_extra,cap_max,cap_mean,seconds,wrong\n");
    }
    const char *placements[] = {"hash", "range", "interval", "random"};
    /* Every placement on Wikipedia at 4 and 8 ranks; hash elsewhere. APAN's mailbox attention over M
     * mails makes its epochs the slowest: it runs on the first DISPATCH_EVENTS events, hash only. */
    const int apan = models.first == EVENT_MODEL_APAN;
    const int placement_rounds = !apan && (group->size == 4 || group->size == 8) ? 4 : 1;
    int wrong = 0;
    for (int d = 0; d < (o->quick || apan ? 1 : 2); d++) {
        dataset data;
        if (load_events(sweep_data[d], &data, err) != TF_OK)
            return -1;
        if (apan) { /* the prefix replaces the stream it came from */
            event_stream prefix;
            if (event_stream_copy_prefix(&data.events, DISPATCH_EVENTS, &prefix, err) != TF_OK) {
                dataset_free(&data);
                return -1;
            }
            event_stream_free(&data.events);
            data.events = prefix;
        }
        for (int kind = models.first; kind <= (int)models.last; kind++)
            for (int p = 0; p < (d == 0 ? placement_rounds : 1); p++) {
                double cap[2] = {0, 0}; /* max, mean */
                if (group->rank == 0 &&
                    placement_cost(&data.events, (event_model_kind)kind, placements[p], group->size, cap, err) != TF_OK)
                    cap[0] = cap[1] = NAN; /* only rank 0 knows: the row says nan */
                for (int mode = DISPATCH_SVEN; mode <= DISPATCH_DEPCOMM; mode++) {
                    int outcome = bytes_point(group, sweep_data[d], &data.events, (event_model_kind)kind,
                                              placements[p], (dispatch_mode)mode, cap[0], cap[1], csv, err);
                    if (outcome < 0) {
                        dataset_free(&data);
                        return -1;
                    }
                    wrong += outcome;
                }
            }
        dataset_free(&data);
    }
    return wrong;
}

/* Epoch times on this many ranks: the reference (rank 0 alone, R = 1 only) and each mode, TGN at
 * the default widths (32), batch 600, on Wikipedia's first 40,000 events; each mode validated
 * first (lockstep over 10 batches, memory bitwise) by the technique itself. */
static int epoch_times(comm *group, FILE *csv, tf_error *err)
{
    enum { EVENTS = 40000 };
    dataset data;
    if (load_events("wikipedia", &data, err) != TF_OK)
        return -1;
    event_stream es;
    if (event_stream_copy_prefix(&data.events, EVENTS, &es, err) != TF_OK) {
        dataset_free(&data);
        return -1;
    }
    event_model_config config;
    event_train_options options;
    shape(&config, &options, EVENT_MODEL_TGN, 32, 0, DISPATCH_BATCH);
    int wrong = 0, status = TF_OK;
    /* Validation first: every mode against the reference, batch by batch, on the first batches. */
    dispatch_params params = {"hash", 10 * DISPATCH_BATCH, DISPATCH_BATCH, 32};
    engine_options engine = {.timed = 0, .repeats = 1, .threads = 1, .group = group};
    engine_result r;
    status = engine_run(&technique_dispatch, &data, &params, 0, &engine, &r, err);
    if (status == TF_OK && group->rank == 0) {
        printf("\nEpoch time, TGN widths 32, batch %d, Wikipedia's first %d events, %d rank(s); validated first:\n",
               DISPATCH_BATCH, EVENTS, group->size);
        engine_print_row(stdout, &technique_dispatch, 0, "wikipedia, first 6,000 events", &r);
        if (csv_is_empty(csv))
            fprintf(csv, "run,ranks,seconds,test_ap\n");
    }
    wrong = r.wrong;
    if (group->rank == 0 && group->size == 1 && status == TF_OK && !wrong) {
        event_trainer ref;
        if ((status = event_trainer_create(&ref, &es, NULL, &config, &options, err)) == TF_OK) {
            event_epoch_report report;
            double started = wall_seconds();
            status = event_trainer_epoch(&ref, &report, NULL, NULL, err);
            double seconds = wall_seconds() - started;
            printf("  reference        %8.1f s   test AP %.4f\n", seconds, report.test.average_precision);
            fprintf(csv, "ref,1,%.2f,%.6f\n", seconds, report.test.average_precision);
            event_trainer_free(&ref);
        }
    }
    for (int mode = DISPATCH_SVEN; status == TF_OK && !wrong && mode <= DISPATCH_DEPCOMM; mode++) {
        opt_event_trainer tr;
        if ((status = opt_event_trainer_create(&tr, &es, NULL, &config, &options, (dispatch_mode)mode, "hash",
                                                  group, err)) != TF_OK)
            break;
        event_epoch_report report;
        if ((status = comm_barrier(group, err)) != TF_OK)
            break;
        double started = wall_seconds();
        status = opt_event_trainer_epoch(&tr, &report, NULL, NULL, err);
        double seconds = wall_seconds() - started;
        if (status == TF_OK && group->rank == 0) {
            printf("  %-8s on %d    %8.1f s   test AP %.4f\n", dispatch_mode_name((dispatch_mode)mode), group->size,
                   seconds, report.test.average_precision);
            fprintf(csv, "%s,%d,%.2f,%.6f\n", dispatch_mode_name((dispatch_mode)mode), group->size, seconds,
                    report.test.average_precision);
            fflush(stdout);
        }
        opt_event_trainer_free(&tr);
    }
    event_stream_free(&es);
    dataset_free(&data);
    return status == TF_OK ? wrong : -1;
}

/* A CSV file in the output directory on rank 0 (other ranks: NULL), its rows so far copied first:
 * one file collects the runs at every R of bench/dispatch.sh. *file is zeroed on the other ranks. */
static FILE *open_csv(const benchmark_options *o, const comm *group, const char *name, output_file *file,
                      tf_error *err)
{
    memset(file, 0, sizeof *file);
    if (group->rank != 0 || bench_csv_open(file, o->out, name, 1, err) != TF_OK)
        return NULL;
    return file->stream;
}

/* One R of either benchmark: the redundancy sweep at R = 1 (into eta.csv, APAN's apan_eta.csv), the
 * bytes sweep at R > 1 (bytes.csv, apan_bytes.csv), and (TGN and JODIE, R <= 2) the epoch times. */
static int dispatch_models(const benchmark_options *o, model_range models, tf_error *err)
{
    const int apan = models.first == EVENT_MODEL_APAN;
    comm group;
    char reason[256];
    if (comm_init(&group, NULL, NULL, 0, reason, sizeof reason, err) != TF_OK)
        return -1;
    /* Only rank 0 speaks: the other ranks' standard output (the bench program's own lines too)
     * goes nowhere. */
    if (group.rank != 0 && !freopen("/dev/null", "w", stdout))
        return -tf_error_set(err, TF_ERR_SYSTEM, "bench dispatch: cannot silence rank %d", group.rank);
    printf("%d rank(s), %s; counted bytes are exact (comm layer), times depend on the machine's load\n", group.size,
           reason);
    int result = 0;
    FILE *csv = NULL;
    output_file file;
    if (group.size == 1) {
        if (!(csv = open_csv(o, &group, apan ? "apan_eta.csv" : "eta.csv", &file, err)))
            result = -1;
        if (result == 0)
            result = eta_sweep(o, models, csv, err);
        if (bench_csv_close(&file, result >= 0, err) < 0)
            result = -1;
    } else {
        if (!(csv = open_csv(o, &group, apan ? "apan_bytes.csv" : "bytes.csv", &file, err)) && group.rank == 0)
            result = -1;
        double failed = result < 0; /* every rank must agree before the collectives start */
        if (comm_allreduce_sum_double(&group, &failed, 1, err) != TF_OK || failed)
            result = -1;
        if (result == 0)
            result = bytes_sweep(&group, o, models, csv, err);
        if (bench_csv_close(&file, result >= 0, err) < 0)
            result = -1;
    }
    if (result >= 0 && group.size <= 2 && !o->quick && !apan) {
        int wrong_before = result;
        if (!(csv = open_csv(o, &group, "epoch.csv", &file, err)) && group.rank == 0)
            result = -1;
        if (result >= 0) {
            int outcome = epoch_times(&group, csv, err);
            result = outcome < 0 ? -1 : wrong_before + outcome;
        }
        if (bench_csv_close(&file, result >= 0, err) < 0)
            result = -1;
    }
    comm_finalize(&group);
    return result;
}

int dispatch_benchmark(const benchmark_options *o, tf_error *err)
{
    return dispatch_models(o, (model_range){EVENT_MODEL_TGN, EVENT_MODEL_JODIE}, err);
}

int dispatch_apan_benchmark(const benchmark_options *o, tf_error *err)
{
    return dispatch_models(o, (model_range){EVENT_MODEL_APAN, EVENT_MODEL_APAN}, err);
}
