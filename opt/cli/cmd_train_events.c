/* twofold train --model tgn|jodie|apan: train a memory-based event model for link prediction,
 * printing the training loss and validation/test AP and AUC after every epoch; with --impl opt on
 * the ranks of mpiexec, node memory partitioned and moved by Sven's dispatch or a baseline
 * (opt/train_events.h), printing each epoch's bytes. The options are in the train table
 * (opt/cli/cmd_train_options.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt/async_pipeline.h"
#include "opt/dispatch_placement.h"
#include "opt/cli/commands.h"
#include "opt/cli/train.h"
#include "opt/kernels.h"
#include "opt/profile.h"
#include "opt/train_events.h"
#include "ref/core/clock.h"
#include "ref/core/digest.h"
#include "ref/core/memory.h"

/* The edge features to use: the user's .npy (checked against the event count), none, or the
 * dataset's own. On success *owned is what the caller frees (NULL when borrowed). */
static int choose_edge_features(const char *edge_features, const event_stream *es, const float **features,
                                int64_t *width, tensor *owned, tf_error *err)
{
    memset(owned, 0, sizeof *owned);
    *features = es->features;
    *width = es->feature_width;
    if (!edge_features)
        return TF_OK;
    if (strcmp(edge_features, "none") == 0) {
        *features = NULL;
        *width = 0;
        return TF_OK;
    }
    if (event_features_read(edge_features, es->num_events, owned, err) != TF_OK)
        return TF_ERR_INPUT;
    *features = owned->data;
    *width = owned->shape[1];
    return TF_OK;
}

static void print_metrics(const char *name, const event_metrics *m)
{
    printf("  %s AP %.4f AUC %.4f", name, m->average_precision, m->roc_auc);
}

/* One line of an optimized epoch's traffic (all ranks, this epoch): bytes by purpose, the lower
 * bound of a partitioned memory, and the redundancy the plans saw. */
static void print_traffic(const opt_event_trainer *tr, const dispatch_traffic *t)
{
    const dispatch_bytes *b = &t->bytes;
    const event_model *m = &tr->base.model;
    const uint64_t rows = b->dispatch_rows + b->updates + b->update_gradients + b->aggregation;
    printf("  %s on %d rank(s), bytes sent: memory rows %.4g MB (fetch %.4g, updates %.4g + %.4g, write-back %.4g), "
           "lower bound %.4g MB; ids %.4g MB, counts %.4g MB, gradients %.4g MB, other %.4g MB; "
           "eta_1 %.3f, eta_2 %.3f\n",
           dispatch_mode_name(tr->mode), t->ranks, rows / 1e6, b->dispatch_rows / 1e6, b->updates / 1e6,
           b->update_gradients / 1e6, b->aggregation / 1e6,
           dispatch_traffic_lower_bound(t, m) / 1e6,
           b->requests / 1e6, b->counts / 1e6, b->gradients / 1e6, b->other / 1e6,
           dispatch_eta(t->counts.entries, t->counts.unique),
           dispatch_eta(t->counts.writes, t->counts.written_per_trainer));
}

/* One run of an event model: the data, and the trainer that runs it: the reference, the distributed
 * twin, or the twin behind its pipeline (opt/async_pipeline.h). */
typedef struct event_run {
    const train_command *c;
    comm *group;                  /* NULL for the reference */
    int speaks;                   /* rank 0, or the reference */
    cli_progress_state progress;
    dataset data;
    const float *features;        /* [events][edge width] the edge features used, or NULL */
    tensor owned_features;        /* --edge-features FILE.npy */
    event_model_config config;    /* the model, with the edge width chosen */
    event_train_options options;  /* the training (the twin's without staleness: its pipeline delays) */
    int staleness;                /* --staleness */
    int pipelined;                /* the twin runs behind its pipeline */
    const char *placement;        /* --placement, hash by default */
    event_trainer reference;
    opt_event_trainer twin;
    event_pipeline pipeline;
    event_trainer *tr;            /* the reference, or the twin's base */
} event_run;

/* The data (every rank loads its own) and the ranks' agreement on it and on the command line. An event
 * CSV's line on which columns became edge features comes before the model's line. */
static int load_events(event_run *r, tf_error *err)
{
    const train_command *c = r->c;
    dataset_options options = {0, r->speaks ? cli_progress : NULL, &r->progress, c->events.edge_columns,
                               r->speaks ? stdout : NULL};
    int loaded = dataset_load(c->data, &options, &r->data, err);
    if (loaded == TF_OK && r->data.kind != DATASET_EVENTS) {
        dataset_free(&r->data);
        loaded = tf_error_set(err, TF_ERR_INPUT, "train: %s is a snapshot sequence; model %s needs an event stream",
                              c->data, event_model_kind_name(c->events.config.kind));
    }
    /* The ranks compare options and data before their first collective (ranks_agree()). */
    return ranks_agree_on_data(r->group, c->argc, c->argv, loaded, &r->data, err);
}

/* Under MPI, the files each rank read besides the data (--edge-features, --placement file:P): the
 * ranks compare what they read before the trainer's first collective, so that different files under
 * one name are refused instead of training on a mix, and a file one rank could not read is one line
 * instead of an abort. The placement file is read here only to be compared; the trainer reads it. */
static int agree_on_files(const event_run *r, int status, tf_error *err)
{
    const train_events_options *o = &r->c->events;
    const event_stream *es = &r->data.events;
    if (!r->group)
        return status;
    if (o->edge_features && strcmp(o->edge_features, "none") != 0) {
        const size_t bytes = status == TF_OK ? (size_t)(es->num_events * r->config.edge_width) * sizeof(float) : 0;
        status = ranks_agree_on_file(r->group, "--edge-features", status, tf_digest(TF_DIGEST_START, r->features, bytes),
                                     err);
    }
    const placement_method *method;
    int64_t interval;
    const char *file = NULL;
    if (placement_parse(r->placement, &method, &interval, &file, NULL) != TF_OK || !file)
        return status;
    int32_t *owner = NULL;
    int read = status;
    if (read == TF_OK && (owner = tf_alloc((size_t)es->num_nodes, sizeof *owner, "placement", err)))
        read = placement_read_file(file, es->num_nodes, r->group->size, owner, err);
    else if (read == TF_OK)
        read = err->code;
    const uint64_t digest = read == TF_OK ? tf_digest(TF_DIGEST_START, owner, (size_t)es->num_nodes * sizeof *owner) : 0;
    free(owner);
    return ranks_agree_on_file(r->group, "--placement", read, digest, err);
}

/* The trainer, its pipeline, and the checkpoint of --load. */
static int create_trainer(event_run *r, tf_error *err)
{
    const train_events_options *o = &r->c->events;
    const event_stream *es = &r->data.events;
    r->config = o->config;
    r->options = o->options;
    r->staleness = o->options.staleness;
    r->pipelined = r->group && (o->prefetch >= 0 || r->staleness != 0 || o->micro_batches > 0);
    if (r->group) { /* the twin delays its gradients in its pipeline, not in its options */
        r->options.staleness = 0;
        r->options.kernels = &opt_kernels; /* BLAS products: within the fp tolerance of the reference */
    }
    r->tr = r->group ? &r->twin.base : &r->reference;
    r->placement = o->placement ? o->placement : "hash";
    int status = choose_edge_features(o->edge_features, es, &r->features, &r->config.edge_width, &r->owned_features,
                                      err);
    status = agree_on_files(r, status, err);
    if (status == TF_OK)
        status = r->group ? opt_event_trainer_create(&r->twin, es, r->features, &r->config, &r->options, o->mode,
                                                        r->placement, r->group, err)
                          : event_trainer_create(&r->reference, es, r->features, &r->config, &r->options, err);
    /* Node memory has a row per vertex id up to the largest one, so one stray large id in a file
     * asks for more memory than the machine has: name the file and its id range. */
    if (status != TF_OK && strncmp(err->message, "too large for memory", 20) == 0)
        tf_error_prefix(err, "%s (vertex ids 0..%lld)", r->data.source, (long long)es->num_nodes - 1);
    else if (status == TF_ERR_INPUT && es->num_events < 4) /* "N events are too few to split": whose events */
        tf_error_prefix(err, "%s", r->data.source);
    if (status == TF_OK && r->pipelined)
        status = event_pipeline_create(&r->pipeline, &r->twin, o->prefetch > 0 ? o->prefetch : 0, r->staleness,
                                       o->micro_batches, err);
    if (status == TF_OK && r->c->load && r->speaks)
        note_interrupted_save(r->c->load);
    if (status == TF_OK && r->c->load)
        status = r->group ? opt_event_trainer_load(&r->twin, r->c->load, err)
                          : event_trainer_load(&r->reference, r->c->load, err);
    return status;
}

/* Rank 0's lines on the model, the data, the split and the ranks. */
static void describe_run(const event_run *r)
{
    const train_events_options *o = &r->c->events;
    const event_trainer *tr = r->tr;
    const event_model_config *m = &tr->model.config;
    printf("model %s (memory %lld, time %lld, embedding %lld", event_model_kind_name(m->kind),
           (long long)m->memory_width, (long long)m->time_width, (long long)m->embedding_width);
    if (m->kind != EVENT_MODEL_JODIE)
        printf(", %lld heads, %d neighbours", (long long)m->heads, m->neighbours);
    printf(", memory updated per %s", event_memory_update_name(m->memory_update));
    if (m->kind == EVENT_MODEL_APAN)
        printf(", %lld mails", (long long)m->mails);
    printf("; %lld parameters), data %s: %lld events, %s%lld edge feature%s\n",
           (long long)parameters_size(&tr->model.parameters), r->data.name, (long long)r->data.events.num_events,
           o->edge_features && m->edge_width ? "from .npy: " : "", (long long)m->edge_width,
           m->edge_width == 1 ? "" : "s");
    printf("events 0..%lld train, %lld..%lld validate, %lld..%lld test; batches of %lld; Adam lr %g; seed %llu; "
           "negatives from %lld %s\n",
           (long long)tr->train_end - 1, (long long)tr->train_end, (long long)tr->validation_end - 1,
           (long long)tr->validation_end, (long long)r->data.events.num_events - 1, (long long)o->options.batch_size,
           o->options.learning_rate, (unsigned long long)tr->options.seed, (long long)tr->candidate_count,
           o->options.negatives == EVENT_NEGATIVES_ALL ? "vertices" : "destinations");
    if (r->group)
        printf("node memory on %d rank(s): dispatch %s, placement %s\n", r->group->size, dispatch_mode_name(o->mode),
               r->placement);
    if (r->pipelined || r->staleness)
        printf("pipeline: prefetch %d, micro-batches %d, staleness %d\n", r->pipelined ? r->pipeline.prefetch : 0,
               o->micro_batches ? o->micro_batches : 1, r->staleness);
    if (tr->epoch)
        printf("resuming after epoch %lld from %s\n", (long long)tr->epoch, r->c->load);
    fflush(stdout);
}

/* One epoch of whichever trainer runs. */
static int one_epoch(event_run *r, event_epoch_report *report, tf_error *err)
{
    progress_fn show = r->speaks ? cli_progress : NULL;
    return r->pipelined ? opt_event_pipeline_epoch(&r->pipeline, report, show, &r->progress, err)
           : r->group   ? opt_event_trainer_epoch(&r->twin, report, show, &r->progress, err)
                        : event_trainer_epoch(&r->reference, report, show, &r->progress, err);
}

/* The epochs up to --epochs; rank 0 prints each one's metrics and, on the ranks, its traffic. */
static int run_epochs(event_run *r, event_epoch_report *report, tf_error *err)
{
    int status = TF_OK;
    while (status == TF_OK && r->tr->epoch < r->c->events.options.epochs) {
        const double started = wall_seconds();
        const int64_t rows = r->twin.updater_rows, batches = r->twin.updater_batches,
                      entries = r->twin.updater_entries;
        status = one_epoch(r, report, err);
        dispatch_traffic traffic;
        if (status == TF_OK && r->group)
            status = opt_event_trainer_traffic(&r->twin, &traffic, 1, err);
        if (status != TF_OK || !r->speaks)
            continue;
        printf("epoch %3lld  train loss %.4f", (long long)report->epoch, report->train_loss);
        print_metrics("validation", &report->validation);
        print_metrics("test", &report->test);
        printf("  (%.1f s)\n", wall_seconds() - started);
        if (r->group) {
            print_traffic(&r->twin, &traffic);
            const int64_t ran = r->twin.updater_batches - batches;
            printf("  memory updater on rank 0: %.1f rows per batch for %.1f entries (%lld batches)\n",
                   ran ? (double)(r->twin.updater_rows - rows) / (double)ran : 0.0,
                   ran ? (double)(r->twin.updater_entries - entries) / (double)ran : 0.0, (long long)ran);
        }
        fflush(stdout);
    }
    return status;
}

/* Nothing trained in this run: the parameters evaluated as they are. */
static int evaluate_only(event_run *r, double started, tf_error *err)
{
    event_metrics validation, test;
    progress_fn show = r->speaks ? cli_progress : NULL;
    const int status =
        r->pipelined ? opt_event_pipeline_evaluate(&r->pipeline, &validation, &test, show, &r->progress, err)
        : r->group   ? opt_event_trainer_evaluate(&r->twin, &validation, &test, show, &r->progress, err)
                     : event_trainer_evaluate(&r->reference, &validation, &test, show, &r->progress, err);
    if (status == TF_OK && r->speaks) {
        printf("evaluation after %lld epochs, memory rebuilt by replaying the training events:", (long long)r->tr->epoch);
        print_metrics("validation", &validation);
        print_metrics("test", &test);
        printf("  (%.1f s)\n", wall_seconds() - started);
    }
    return status;
}

/* --profile (opt/profile.h): the model's kernels wrapped by the counting table for the epochs; the
 * all-reduces counted by the comm. Then the table, rank 0's own counters. */
static int profiled_epochs(event_run *r, event_epoch_report *report, tf_error *err)
{
    const kernels *unprofiled = r->tr->model.kernels;
    const int64_t first_epoch = r->tr->epoch;
    const uint64_t calls = r->group ? r->group->allreduce_calls : 0;
    const uint64_t bytes = r->group ? r->group->bytes_sent : 0;
    const double seconds = r->group ? r->group->allreduce_seconds : 0, started = wall_seconds();
    r->tr->model.kernels = profile_wrap(unprofiled);
    int status = run_epochs(r, report, err);
    const double epoch_seconds = wall_seconds() - started;
    r->tr->model.kernels = unprofiled;
    if (r->group)
        profile_add(PROFILE_COMMUNICATION, (int64_t)(r->group->allreduce_calls - calls),
                    r->group->allreduce_seconds - seconds, (double)(r->group->bytes_sent - bytes));
    if (status != TF_OK || !r->speaks || r->tr->epoch == first_epoch)
        return status;
    profile_peaks peaks;
    char whose[96];
    snprintf(whose, sizeof whose, "--impl %s, %s", r->group ? "opt" : "ref",
             r->group && r->group->size > 1 ? "rank 0's own (each rank counts its own)" : "this process's");
    if (profile_measure_peaks(profile_counters_now(), &peaks, err) != TF_OK)
        return err->code;
    profile_print(stdout, profile_counters_now(), &peaks, epoch_seconds, r->tr->epoch - first_epoch, whose);
    return TF_OK;
}

int train_events(const train_command *c, comm *group, tf_error *err)
{
    /* only rank 0 prints and writes files */
    event_run r = {.c = c, .group = group, .speaks = !group || group->rank == 0};
    int status = load_events(&r, err);
    if (status != TF_OK)
        return status;
    status = create_trainer(&r, err);
    if (status == TF_OK && r.speaks)
        describe_run(&r);
    const double started = wall_seconds();
    event_epoch_report report;
    memset(&report, 0, sizeof report);
    if (status == TF_OK)
        status = c->profile ? profiled_epochs(&r, &report, err) : run_epochs(&r, &report, err);
    if (status == TF_OK && report.epoch > 0 && r.speaks)
        printf("final test AP %.4f AUC %.4f after %lld epochs (%.1f min)\n", report.test.average_precision,
               report.test.roc_auc, (long long)r.tr->epoch, (wall_seconds() - started) / 60.0);
    else if (status == TF_OK && report.epoch == 0)
        status = evaluate_only(&r, started, err);
    if (status == TF_OK && c->save) {
        status = group ? opt_event_trainer_save(&r.twin, c->save, err) : event_trainer_save(&r.reference, c->save, err);
        if (status == TF_OK && r.speaks)
            printf("saved checkpoint %s\n", c->save);
    }
    event_trainer_free(&r.reference);
    event_pipeline_free(&r.pipeline);
    opt_event_trainer_free(&r.twin);
    tensor_free(&r.owned_features);
    dataset_free(&r.data);
    return status;
}
