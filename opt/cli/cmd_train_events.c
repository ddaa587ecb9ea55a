/* twofold train --model tgn|jodie: train a memory-based event model for link prediction,
 * printing the training loss and validation/test AP and AUC after every epoch; with --impl opt on
 * the ranks of mpiexec, node memory partitioned and moved by Sven's dispatch or a baseline
 * (opt/train_events.h), printing each epoch's bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/dataset.h"
#include "opt/cli/cli.h"
#include "opt/cli/commands.h"
#include "opt/async_pipeline.h"
#include "opt/train_events.h"
#include "ref/models/checkpoint.h"
#include "ref/core/clock.h"
#include "ref/train_events.h"

static const char train_events_usage[] =
    "usage: twofold train --model tgn|jodie --data DATASET [options]\n"
    "\n"
    "Train a memory-based event model for link prediction. The events are split 70/15/15 in\n"
    "time; each event is scored against one negative destination drawn uniformly from the\n"
    "vertices; the loss is binary cross-entropy, the optimizer Adam. Every epoch starts from a\n"
    "zero node memory, trains on the first 70%, then runs validation and test forward only,\n"
    "continuing the memory, and prints their average precision (AP) and ROC AUC. The same\n"
    "options and seed give the same result, bit for bit.\n"
    "\n"
    "  --model M            tgn (GRU memory, temporal attention) or jodie (RNN memory, time projection)\n"
    "  --data D             an event stream: bundled name (wikipedia, collegemsg, enron, bitcoin_otc,\n"
    "                       bitcoin_alpha), file, or events: generator spec\n"
    "  --epochs E           epochs (default 3; with --load, the total to reach)\n"
    "  --lr X               Adam learning rate (default 1e-3; TGL uses 1e-4 with batches of 600)\n"
    "  --batch B            events per batch (default 200)\n"
    "  --memory-dim D       memory width (default 32; TGL's is 100)\n"
    "  --time-dim D         width of the time encodings (default 32; TGL's is 100)\n"
    "  --embedding-dim D    TGN's attention output width (default 32; JODIE's is the memory width)\n"
    "  --heads H            TGN's attention heads (default 2)\n"
    "  --neighbours K        TGN's most recent neighbours per vertex (default 10)\n"
    "  --edge-features F    edge features from F.npy, float32 [events][columns], instead of the\n"
    "                       dataset's own (bitcoin_*: the rating); 'none' uses no features\n"
    "  --edge-columns L     for an event CSV, the header columns to take as edge features, comma-\n"
    "                       separated, or 'none' (default: those named feat... or f<digits>, and\n"
    "                       JODIE's feature list; other columns are ignored, and a line says which);\n"
    "                       not with --edge-features\n"
    "  --negatives N        all: negative destinations drawn from every vertex (default, TGL's);\n"
    "                       destinations: only from vertices that are some event's destination\n"
    "                       (TGN's code; on Wikipedia every negative is then an item)\n"
    "  --seed S             initial parameters and training negatives (default 1)\n"
    "  --save DIR           write a checkpoint at the end: parameters as NAME.npy (TGL names), Adam\n"
    "                       state, epoch and seed; checked before training, and a kill at any\n"
    "                       instant leaves a complete checkpoint --load finds\n"
    "                       (DIR.partial and DIR.previous are the save's own names; saves to\n"
    "                       one DIR take turns; not a symbolic link, ., or ..)\n"
    "  --load DIR           start from a checkpoint (resumes epoch, Adam state and seed if present);\n"
    "                       with nothing left to train, evaluates the loaded parameters\n"
    "  --impl I             ref (default: the reference, one process) or opt (the distributed twin:\n"
    "                       node memory partitioned over the ranks of mpiexec; bitwise the reference's\n"
    "                       memory for the same parameters, fp-equal gradients; chapter 04)\n"
    "  --dispatch M         with --impl opt, how node memory moves: sven (default: each unique row\n"
    "                       once, each winning write once), naive (one row per occurrence), depcache\n"
    "                       (a replica per rank, writes all-gathered), depcomm (owners run the memory\n"
    "                       updater per occurrence)\n"
    "  --placement P        with --impl opt, which rank owns a vertex's row: hash (default), range,\n"
    "                       interval[:G] (blocks of G ids dealt round-robin, G = 16), random (seeded),\n"
    "                       reflexbicut (Sven's Re-FlexBiCut on the demand measured first, chapter 06)\n"
    "                       or file:PATH (an int64 .npy of one rank per vertex id)\n"
    "  --staleness S        0 (default) or 1: each Adam step applies the previous batch's gradient\n"
    "                       (Sven Eq. 13; the last one where the training split ends); node memory is\n"
    "                       never stale. With --impl opt the gradient all-reduce of a batch overlaps\n"
    "                       the next batch (chapter 05)\n"
    "  --prefetch D         with --impl opt, build the next D batches' plans (negatives, entries,\n"
    "                       Algorithm 2, request lists) on a producer thread, D in 0..4 (default 0:\n"
    "                       each when it runs); bitwise the same training for every D\n"
    "  --micro-batches N    with --impl opt --dispatch sven, cut each rank's part of a training batch\n"
    "                       into N micro-batches (1..8), the row fetch of one overlapping the compute\n"
    "                       of the one before; the same memory bit for bit, gradients summed in\n"
    "                       another order (equal within float rounding; N = 1: bitwise)\n"
    "\n"
    "Run distributed: mpiexec -n 4 twofold train --model tgn --data wikipedia --impl opt --dispatch sven\n"
    "  --placement hash\n";

/* Parsed command line. */
typedef struct train_events_command {
    const char *data, *save, *load, *edge_features;
    const char *edge_columns;    /* --edge-columns LIST, or NULL for the loader's rule */
    event_model_config config;
    event_train_options options;
    int optimized;               /* --impl opt */
    const char *dispatch;        /* --dispatch, or NULL */
    const char *placement;       /* --placement, or NULL */
    dispatch_mode mode;          /* parsed --dispatch (sven by default) */
    int prefetch;                /* --prefetch D, or -1 */
    int micro_batches;           /* --micro-batches N, or 0 */
    int argc;                    /* the arguments as given: the ranks compare them (ranks_agree()) */
    char **argv;
} train_events_command;

int train_wants_event_model(int argc, char **argv, const char **model)
{
    *model = NULL;
    for (int i = 0; i < argc; i++) {
        const char *value;
        if (cli_option(argc, argv, &i, "--model", &value, NULL) > 0)
            *model = value;
    }
    event_model_kind kind;
    return *model && event_model_kind_parse(*model, &kind, NULL) == TF_OK;
}

static int parse_arguments(int argc, char **argv, train_events_command *c, int *help, tf_error *err)
{
    memset(c, 0, sizeof *c);
    c->prefetch = -1;
    c->argc = argc;
    c->argv = argv;
    event_train_options_default(&c->options);
    event_model_config_default(&c->config, EVENT_MODEL_TGN);
    int have_model = 0;
    for (int i = 0; i < argc; i++) {
        const char *value = NULL;
        int64_t number;
        int matched = 0;
        if (cli_is_help(argv[i])) {
            *help = 1;
            return TF_OK;
        }
#define OPTION(name) ((matched = cli_option(argc, argv, &i, name, &value, err)) != 0)
#define WHOLE(name, low, high, target)                                                                     \
    if (matched < 0 || cli_parse_int(name, value, low, high, &number, err) != TF_OK)                      \
        return TF_ERR_INPUT;                                                                               \
    target = number
        if (OPTION("--model")) {
            if (matched < 0 || event_model_kind_parse(value, &c->config.kind, err) != TF_OK)
                return TF_ERR_INPUT;
            have_model = 1;
        } else if (OPTION("--data")) {
            c->data = value;
        } else if (OPTION("--edge-columns")) {
            if (matched < 0)
                return TF_ERR_INPUT;
            c->edge_columns = value;
        } else if (OPTION("--epochs")) {
            WHOLE("--epochs", 0, 100000000, c->options.epochs);
        } else if (OPTION("--lr")) {
            char *end;
            if (matched < 0)
                return TF_ERR_INPUT;
            c->options.learning_rate = strtod(value, &end);
            if (end == value || *end || !(c->options.learning_rate > 0 && c->options.learning_rate < 1e3))
                return tf_error_set(err, TF_ERR_INPUT, "option --lr: \"%s\", expected a positive number", value);
        } else if (OPTION("--batch")) {
            WHOLE("--batch", 1, 100000000, c->options.batch_size);
        } else if (OPTION("--memory-dim")) {
            WHOLE("--memory-dim", 1, 65536, c->config.memory_width);
        } else if (OPTION("--time-dim")) {
            WHOLE("--time-dim", 1, 65536, c->config.time_width);
        } else if (OPTION("--embedding-dim")) {
            WHOLE("--embedding-dim", 1, 65536, c->config.embedding_width);
        } else if (OPTION("--heads")) {
            WHOLE("--heads", 1, 1024, c->config.heads);
        } else if (OPTION("--neighbours")) {
            WHOLE("--neighbours", 1, 100000, c->config.neighbours);
        } else if (OPTION("--edge-features")) {
            c->edge_features = value;
        } else if (OPTION("--negatives")) {
            if (matched < 0)
                return TF_ERR_INPUT;
            if (strcmp(value, "all") == 0)
                c->options.negatives = EVENT_NEGATIVES_ALL;
            else if (strcmp(value, "destinations") == 0)
                c->options.negatives = EVENT_NEGATIVES_DESTINATIONS;
            else
                return tf_error_set(err, TF_ERR_INPUT, "option --negatives: \"%s\", expected all or destinations",
                                    value);
        } else if (OPTION("--seed")) {
            WHOLE("--seed", 0, INT64_MAX, c->options.seed);
        } else if (OPTION("--save")) {
            c->save = value;
        } else if (OPTION("--load")) {
            c->load = value;
        } else if (OPTION("--impl")) {
            if (matched < 0)
                return TF_ERR_INPUT;
            if (strcmp(value, "ref") != 0 && strcmp(value, "opt") != 0)
                return tf_error_set(err, TF_ERR_INPUT, "option --impl: \"%s\", expected ref or opt", value);
            c->optimized = strcmp(value, "opt") == 0;
        } else if (OPTION("--dispatch")) {
            if (matched < 0 || dispatch_mode_parse(value, &c->mode, err) != TF_OK)
                return TF_ERR_INPUT;
            c->dispatch = value;
        } else if (OPTION("--staleness")) {
            if (matched < 0)
                return TF_ERR_INPUT;
            if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0)
                return tf_error_set(err, TF_ERR_INPUT, "option --staleness: \"%s\", expected 0 or 1 (Sven bounds "
                                                       "staleness to one step)",
                                    value);
            c->options.staleness = value[0] - '0';
        } else if (OPTION("--prefetch")) {
            WHOLE("--prefetch", 0, BATCH_QUEUE_MAX_DEPTH, c->prefetch);
        } else if (OPTION("--micro-batches")) {
            WHOLE("--micro-batches", 1, MICROBATCH_MAX, c->micro_batches);
        } else if (OPTION("--placement")) {
            if (matched < 0)
                return TF_ERR_INPUT;
            const placement_method *method;
            int64_t interval;
            const char *file;
            if (placement_parse(value, &method, &interval, &file, err) != TF_OK)
                return TF_ERR_INPUT;
            c->placement = value;
        } else {
            return tf_error_set(err, TF_ERR_INPUT,
                                "train: unexpected argument %s (see twofold train --model tgn --help)", argv[i]);
        }
#undef WHOLE
#undef OPTION
        if (matched < 0)
            return TF_ERR_INPUT;
    }
    if (!have_model || !c->data)
        return tf_error_set(err, TF_ERR_INPUT, "train: --model and --data are required (see twofold train --help)");
    /* --edge-features replaces the file's own features, so columns chosen from the CSV would be
     * named in the loader's line and then not used: refuse the pair instead. */
    if (c->edge_columns && c->edge_features)
        return tf_error_set(err, TF_ERR_INPUT, "train: give one of --edge-columns and --edge-features (--edge-features "
                                               "%s replaces the columns --edge-columns %s takes from the CSV)",
                            c->edge_features, c->edge_columns);
    if ((c->dispatch || c->placement) && !c->optimized)
        return tf_error_set(err, TF_ERR_INPUT, "train: %s chooses how the distributed twin moves node memory: add "
                            "--impl opt", c->dispatch ? "--dispatch" : "--placement");
    if (c->prefetch >= 0 && !c->optimized)
        return tf_error_set(err, TF_ERR_INPUT, "train: --prefetch overlaps the distributed twin's batch planning: add "
                                               "--impl opt");
    if (c->micro_batches && (!c->optimized || c->mode != DISPATCH_SVEN))
        return tf_error_set(err, TF_ERR_INPUT, "train: --micro-batches splits the fetch of Sven's dispatch: use "
                                               "--impl opt --dispatch sven");
    return TF_OK;
}

/* A --load whose save was interrupted reads the complete checkpoint left beside it
 * (ref/models/checkpoint.h): say which, so the user knows where the epochs come from. */
static void note_interrupted_save(const char *load)
{
    char located[4096];
    if (checkpoint_interrupted(load, located))
        printf("note: the last save to %s was interrupted; loading the complete checkpoint %s\n", load, located);
}

/* The edge features to use: the user's .npy (checked against the event count), none, or the
 * dataset's own. On success *owned is what the caller frees (NULL when borrowed). */
static int choose_edge_features(const train_events_command *c, const event_stream *es, const float **features,
                                int64_t *width, tensor *owned, tf_error *err)
{
    memset(owned, 0, sizeof *owned);
    *features = es->features;
    *width = es->feature_width;
    if (!c->edge_features)
        return TF_OK;
    if (strcmp(c->edge_features, "none") == 0) {
        *features = NULL;
        *width = 0;
        return TF_OK;
    }
    if (event_features_read(c->edge_features, es->num_events, owned, err) != TF_OK)
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
           dispatch_traffic_lower_bound(t, m->config.memory_width, event_model_mail_width(m)) / 1e6,
           b->requests / 1e6, b->counts / 1e6, b->gradients / 1e6, b->other / 1e6,
           dispatch_eta(t->counts.entries, t->counts.unique),
           dispatch_eta(t->counts.writes, t->counts.written_per_trainer));
}

/* Training proper; `group` is NULL for the reference, the ranks for the distributed twin. */
static int train_events(const train_events_command *cp, comm *group, tf_error *err)
{
    train_events_command c = *cp;
    const int speaks = !group || group->rank == 0; /* only rank 0 prints and writes files */
    cli_progress_state progress = {0, ""};
    /* An event CSV's line on which columns became edge features comes before the model's line. */
    dataset_options data_options = {0, speaks ? cli_progress : NULL, &progress, c.edge_columns, speaks ? stdout : NULL};
    dataset d;
    int loaded = dataset_load(c.data, &data_options, &d, err);
    if (loaded == TF_OK && d.kind != DATASET_EVENTS) {
        dataset_free(&d);
        loaded = tf_error_set(err, TF_ERR_INPUT, "train: %s is a snapshot sequence; model %s needs an event stream",
                              c.data, event_model_kind_name(c.config.kind));
    }
    /* The ranks compare options and data before their first collective (ranks_agree()). */
    if ((loaded = ranks_agree_on_data(group, c.argc, c.argv, loaded, &d, err)) != TF_OK)
        return loaded;
    const event_stream *es = &d.events;
    const float *features;
    tensor owned_features;
    int status = choose_edge_features(&c, es, &features, &c.config.edge_width, &owned_features, err);
    event_trainer reference;
    opt_event_trainer twin;
    event_pipeline pipeline;
    memset(&reference, 0, sizeof reference);
    memset(&twin, 0, sizeof twin);
    memset(&pipeline, 0, sizeof pipeline);
    /* The twin delays its gradients in its pipeline (opt/async_pipeline.h), not in its options. */
    const int staleness = c.options.staleness, pipelined =
        group && (c.prefetch >= 0 || staleness != 0 || c.micro_batches > 0);
    if (group)
        c.options.staleness = 0;
    event_trainer *tr = group ? &twin.base : &reference;
    const char *placement = c.placement ? c.placement : "hash";
    if (status == TF_OK)
        status = group ? opt_event_trainer_create(&twin, es, features, &c.config, &c.options, c.mode, placement,
                                                  group, err)
                       : event_trainer_create(&reference, es, features, &c.config, &c.options, err);
    /* Node memory has a row per vertex id up to the largest one, so one stray large id in a file
     * asks for more memory than the machine has: name the file and its id range. */
    if (status != TF_OK && strncmp(err->message, "too large for memory", 20) == 0)
        tf_error_prefix(err, "%s (vertex ids 0..%lld)", d.source, (long long)es->num_nodes - 1);
    if (status == TF_OK && pipelined)
        status = event_pipeline_create(&pipeline, &twin, c.prefetch > 0 ? c.prefetch : 0, staleness, c.micro_batches,
                                       err);
    if (status == TF_OK && c.load && speaks)
        note_interrupted_save(c.load);
    if (status == TF_OK && c.load)
        status = group ? opt_event_trainer_load(&twin, c.load, err) : event_trainer_load(&reference, c.load, err);
    if (status == TF_OK && speaks) {
        const event_model_config *m = &tr->model.config;
        printf("model %s (memory %lld, time %lld, embedding %lld", event_model_kind_name(m->kind),
               (long long)m->memory_width, (long long)m->time_width, (long long)m->embedding_width);
        if (m->kind == EVENT_MODEL_TGN)
            printf(", %lld heads, %d neighbours", (long long)m->heads, m->neighbours);
        printf("; %lld parameters), data %s: %lld events, %s%lld edge feature%s\n",
               (long long)parameters_size(&tr->model.parameters), d.name, (long long)es->num_events,
               c.edge_features && m->edge_width ? "from .npy: " : "", (long long)m->edge_width,
               m->edge_width == 1 ? "" : "s");
        printf("events 0..%lld train, %lld..%lld validate, %lld..%lld test; batches of %lld; Adam lr %g; seed %llu; "
               "negatives from %lld %s\n",
               (long long)tr->train_end - 1, (long long)tr->train_end, (long long)tr->validation_end - 1,
               (long long)tr->validation_end, (long long)es->num_events - 1, (long long)c.options.batch_size,
               c.options.learning_rate, (unsigned long long)tr->options.seed, (long long)tr->candidate_count,
               c.options.negatives == EVENT_NEGATIVES_ALL ? "vertices" : "destinations");
        if (group)
            printf("node memory on %d rank(s): dispatch %s, placement %s\n", group->size,
                   dispatch_mode_name(c.mode), placement);
        if (pipelined || staleness)
            printf("pipeline: prefetch %d, micro-batches %d, staleness %d\n", pipelined ? pipeline.prefetch : 0,
                   c.micro_batches ? c.micro_batches : 1, staleness);
        if (tr->epoch)
            printf("resuming after epoch %lld from %s\n", (long long)tr->epoch, c.load);
        fflush(stdout);
    }
    progress_fn show = speaks ? cli_progress : NULL;
    double started = wall_seconds();
    event_epoch_report report;
    memset(&report, 0, sizeof report);
    while (status == TF_OK && tr->epoch < c.options.epochs) {
        double epoch_started = wall_seconds();
        status = pipelined ? opt_event_pipeline_epoch(&pipeline, &report, show, &progress, err)
                 : group   ? opt_event_trainer_epoch(&twin, &report, show, &progress, err)
                           : event_trainer_epoch(&reference, &report, show, &progress, err);
        dispatch_traffic traffic;
        if (status == TF_OK && group)
            status = opt_event_trainer_traffic(&twin, &traffic, 1, err);
        if (status != TF_OK || !speaks)
            continue;
        printf("epoch %3lld  train loss %.4f", (long long)report.epoch, report.train_loss);
        print_metrics("validation", &report.validation);
        print_metrics("test", &report.test);
        printf("  (%.1f s)\n", wall_seconds() - epoch_started);
        if (group)
            print_traffic(&twin, &traffic);
        fflush(stdout);
    }
    if (status == TF_OK && report.epoch > 0) {
        if (speaks)
            printf("final test AP %.4f AUC %.4f after %lld epochs (%.1f min)\n", report.test.average_precision,
                   report.test.roc_auc, (long long)tr->epoch, (wall_seconds() - started) / 60.0);
    } else if (status == TF_OK) {
        /* Nothing trained in this run: evaluate the parameters as they are. */
        event_metrics validation, test;
        status = pipelined ? opt_event_pipeline_evaluate(&pipeline, &validation, &test, show, &progress, err)
                 : group   ? opt_event_trainer_evaluate(&twin, &validation, &test, show, &progress, err)
                           : event_trainer_evaluate(&reference, &validation, &test, show, &progress, err);
        if (status == TF_OK && speaks) {
            printf("evaluation after %lld epochs, memory rebuilt by replaying the training events:",
                   (long long)tr->epoch);
            print_metrics("validation", &validation);
            print_metrics("test", &test);
            printf("  (%.1f s)\n", wall_seconds() - started);
        }
    }
    if (status == TF_OK && c.save) {
        status = group ? opt_event_trainer_save(&twin, c.save, err) : event_trainer_save(&reference, c.save, err);
        if (status == TF_OK && speaks)
            printf("saved checkpoint %s\n", c.save);
    }
    event_trainer_free(&reference);
    event_pipeline_free(&pipeline);
    opt_event_trainer_free(&twin);
    tensor_free(&owned_features);
    dataset_free(&d);
    return status;
}

int command_train_events(int argc, char **argv, tf_error *err)
{
    train_events_command c;
    int help = 0;
    const int parsed = parse_arguments(argc, argv, &c, &help, err);
    if (parsed == TF_OK && help) {
        fputs(train_events_usage, stdout);
        return TF_OK;
    }
    /* Under mpiexec -n R > 1 every rank starts MPI, even one with a bad option or without
     * --impl opt, so that the ranks compare their command lines and fail together with one line
     * (ranks_agree()) instead of leaving the others waiting in MPI_Init. */
    const int launched = ranks_launched();
    /* A save that cannot work is reported now, not after the training it would lose. */
    const int ready = parsed == TF_OK && c.save ? checkpoint_check_target(c.save, err) : parsed;
    if (launched <= 1 && ready != TF_OK)
        return TF_ERR_INPUT;
    if (launched <= 1 && !c.optimized)
        return train_events(&c, NULL, err);
    if (ready == TF_OK && !c.optimized)
        tf_error_set(err, TF_ERR_INPUT, "train: --model %s without --impl opt is the reference, one process; "
                                        "mpiexec -n %d would start %d copies of the same run writing one --save: "
                                        "what runs distributed is --impl opt (node memory partitioned over the "
                                        "ranks)",
                     event_model_kind_name(c.config.kind), launched, launched);
    comm group;
    if (start_ranks(&group, err->code != TF_OK, err) != TF_OK)
        return TF_ERR_SYSTEM;
    if (err->code != TF_OK) /* this rank will not train: agree on the error and stop */
        return finish_ranks(&group, ranks_agree(&group, argc, argv, 0, err), err);
    return finish_ranks(&group, train_events(&c, &group, err), err);
}
