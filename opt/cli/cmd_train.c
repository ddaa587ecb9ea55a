/* twofold train: parse the command line of any model, start the ranks once, and run the model's
 * training; for a snapshot model, a short driver over the technique hooks (opt/cli/train.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opt/cli/commands.h"
#include "opt/cli/train.h"
#include "opt/train.h"
#include "ref/core/clock.h"
#include "ref/core/io.h"
#include "ref/data/npy.h"
#include "ref/models/checkpoint.h"

void note_interrupted_save(const char *load)
{
    /* A --load whose save was interrupted reads the complete checkpoint left beside it
     * (ref/models/checkpoint.h): say which, so the user knows where the epochs come from. */
    char located[4096];
    if (checkpoint_interrupted(load, located))
        printf("note: the last save to %s was interrupted; loading the complete checkpoint %s\n", load, located);
}

/* The names dump_outputs() writes in its directory. */
static const char *const dump_files[] = {"predictions.npy", "targets.npy"};

/* --dump-outputs DIR checked before training, so that a path it cannot write costs no run: DIR
 * is a directory we can write in (a link to one is fine: the files go inside it), or absent in
 * a directory we can write in; what is at DIR/predictions.npy and DIR/targets.npy must be
 * replaceable (output_check()). */
static int dump_check(const char *directory, tf_error *err)
{
    char path[4200];
    struct stat info;
    if (directory[0] == '\0')
        return tf_error_set(err, TF_ERR_INPUT, "train: --dump-outputs \"\": expected a directory name");
    if (stat(directory, &info) != 0) {
        /* absent: output_check() asks for its parent; a dangling link or "DIR/" is refused there */
        return output_check("train: --dump-outputs", directory, err);
    }
    if (!S_ISDIR(info.st_mode))
        return tf_error_set(err, TF_ERR_INPUT, "train: --dump-outputs %s: is %s, expected a directory (the outputs "
                            "are written inside it)", directory, file_kind(info.st_mode));
    if (access(directory, W_OK | X_OK) != 0)
        return tf_error_set(err, TF_ERR_INPUT, "train: --dump-outputs %s: cannot write in it: %s", directory,
                            strerror(errno));
    for (size_t f = 0; f < sizeof dump_files / sizeof *dump_files; f++)
        if (format_path(path, sizeof path, err, "%s/%s", directory, dump_files[f]) != TF_OK ||
            output_check("train: --dump-outputs", path, err) != TF_OK)
            return TF_ERR_INPUT;
    return TF_OK;
}

/* predictions.npy and targets.npy for every snapshot, the model run in its windows. */
static int dump_outputs(const trainer *tr, const snapshot_seq *seq, const char *directory, tf_error *err)
{
    if (mkdir(directory, 0755) != 0 && errno != EEXIST)
        return tf_error_set(err, TF_ERR_INPUT, "%s: cannot create: %s", directory, strerror(errno));
    /* the head's outputs: the targets' columns, or a classifier's C logits */
    const int64_t t = seq->num_snapshots, n = seq->num_nodes, out = tr->model.config.out_features;
    tensor predictions, targets;
    int64_t shape[3] = {t, n, out}, target_shape[3] = {t, n, seq->target_width};
    if (tensor_alloc(&predictions, 3, shape, err) != TF_OK)
        return TF_ERR_INPUT;
    if (tensor_alloc(&targets, 3, target_shape, err) != TF_OK) {
        tensor_free(&predictions);
        return TF_ERR_INPUT;
    }
    double train_mse, test_mse;
    char path[4096];
    int status = trainer_evaluate(tr, seq, 0, tr->train_snapshots, &train_mse, predictions.data, err);
    if (status == TF_OK)
        status = trainer_evaluate(tr, seq, tr->train_snapshots, t - tr->train_snapshots, &test_mse,
                                  predictions.data + tr->train_snapshots * n * out, err);
    for (int64_t s = 0; s < t; s++)
        memcpy(targets.data + s * n * seq->target_width, seq->snapshots[s].targets.data,
               (size_t)(n * seq->target_width) * sizeof(float));
    const tensor *written[2] = {&predictions, &targets};
    for (size_t f = 0; f < sizeof dump_files / sizeof *dump_files; f++) {
        if (status == TF_OK)
            status = format_path(path, sizeof path, err, "%s/%s", directory, dump_files[f]);
        if (status == TF_OK)
            status = npy_write_tensor(path, written[f], err);
    }
    if (status == TF_OK)
        printf("wrote %s/predictions.npy [%lld][%lld][%lld] and targets.npy [%lld][%lld][%lld] (snapshots 0..%lld "
               "train)\n", directory, (long long)t, (long long)n, (long long)out, (long long)t, (long long)n,
               (long long)seq->target_width, (long long)tr->train_snapshots - 1);
    tensor_free(&predictions);
    tensor_free(&targets);
    return status;
}

/* ---- the driver of a snapshot model ------------------------------------------------------------- */

/* 1 if technique @p t is on in run @p r. */
static int on(const train_technique *t, const train_run *r) { return t->on(r->c, r->group); }

int train_load_snapshots(const train_command *c, comm *group, cli_progress_state *progress, dataset *d,
                         tf_error *err)
{
    const int speaks = !group || group->rank == 0;
    dataset_options options = {c->lags, speaks ? cli_progress : NULL, progress, NULL, NULL};
    int loaded = dataset_load(c->data, &options, d, err);
    if (loaded == TF_OK && d->kind != DATASET_SNAPSHOTS) {
        dataset_free(d);
        loaded = tf_error_set(err, TF_ERR_INPUT, "train: %s is an event stream; model %s needs snapshots", c->data,
                              model_kind_name(c->config.kind));
    }
    if (loaded == TF_OK && c->labels && (loaded = dataset_attach_labels(d, c->labels, err)) != TF_OK)
        dataset_free(d);
    /* The ranks compare options and data (labels too) before their first collective (ranks_agree()). */
    return ranks_agree_on_data(group, c->argc, c->argv, loaded, d, err);
}

/* The trainer (a technique's, or one), loaded from --load, on the ranks, and every technique set up. */
static int start_run(train_run *r, tf_error *err)
{
    const train_technique *const *t;
    for (t = train_techniques; *t && !(on(*t, r) && (*t)->create); t++)
        ;
    r->tr = *t ? NULL : &r->single; /* a technique's create() sets it when it made its trainer */
    int status = *t ? (*t)->create(r, err) : trainer_create(&r->single, r->seq, &r->c->config, &r->c->options, err);
    if (status == TF_OK && r->c->load && r->speaks)
        note_interrupted_save(r->c->load);
    if (status == TF_OK && r->c->load)
        status = trainer_load(r->tr, r->c->load, err);
    for (t = train_techniques; r->group && *t && !(on(*t, r) && (*t)->join); t++)
        ;
    if (status == TF_OK && r->group)
        status = *t ? (*t)->join(r, err) : opt_trainer_parallel(r->tr, r->group, err);
    for (t = train_techniques; status == TF_OK && *t; t++)
        if (on(*t, r) && (*t)->start)
            status = (*t)->start(r, err);
    return status;
}

/* Rank 0's lines on the model, the data and the split, then each technique's. */
static void describe_run(const train_run *r)
{
    const train_command *c = r->c;
    const trainer *tr = r->tr;
    const snapshot_seq *seq = r->seq;
    const int64_t train = tr->train_snapshots, window = c->options.window ? c->options.window : train;
    printf("model %s (state width %lld, %lld parameters), data %s: %lld snapshots x %lld vertices x %lld features\n",
           model_kind_name(c->config.kind), (long long)model_state_width(&tr->model),
           (long long)parameters_size(&tr->model.parameters), r->data.name, (long long)seq->num_snapshots,
           (long long)seq->num_nodes, (long long)seq->feature_width);
    char per_step[64];
    snprintf(per_step, sizeof per_step,
             c->scheduling.enabled ? "steps from --schedule" : c->batching.hybrid ? "%lld hybrid batches per step"
                                                                                  : "%lld per step",
             (long long)c->options.batch);
    printf("train snapshots 0..%lld, test %lld..%lld; windows of %lld, stride %lld, %s; Adam lr %g; seed %llu%s\n",
           (long long)train - 1, (long long)train, (long long)seq->num_snapshots - 1, (long long)window,
           (long long)(c->options.stride ? c->options.stride : window), per_step, c->options.learning_rate,
           (unsigned long long)c->options.seed, tr->epoch ? " (resumed)" : "");
    if (tr->epoch)
        printf("resuming after epoch %lld from %s\n", (long long)tr->epoch, c->load);
    if (c->load && tr->epoch >= c->options.epochs)
        printf("note: --epochs %lld is the total to reach and the checkpoint is at epoch %lld: no epoch to train; "
               "give --epochs above %lld to train on\n",
               (long long)c->options.epochs, (long long)tr->epoch, (long long)tr->epoch);
    for (const train_technique *const *t = train_techniques; *t; t++)
        if (on(*t, r) && (*t)->describe)
            (*t)->describe(r);
}

/* The epochs up to --epochs, each trained by the first technique on that trains epochs (or the plain
 * trainer, on the ranks or not); rank 0 prints a line per epoch. */
static int run_epochs(train_run *r, tf_error *err)
{
    const train_technique *const *t;
    for (t = train_techniques; *t && !(on(*t, r) && (*t)->epoch); t++)
        ;
    const train_technique *trains = *t;
    int status = TF_OK;
    r->first_epoch = r->tr->epoch;
    while (status == TF_OK && r->tr->epoch < r->c->options.epochs) {
        epoch_report report;
        const double started = wall_seconds();
        status = trains     ? trains->epoch(r, &report, err)
                 : r->group ? opt_trainer_epoch(r->tr, r->group, r->seq, &report, err)
                            : trainer_epoch(r->tr, r->seq, &report, err);
        if (status == TF_OK) /* stop at the first epoch that overflowed: its state could not be loaded again */
            status = trainer_check_finite(r->tr, &report, err);
        r->epoch_seconds += wall_seconds() - started;
        if (status != TF_OK || !r->speaks)
            continue;
        if (r->c->options.task == TASK_LINK)
            printf("epoch %4lld  train BCE %.6f  test BCE %.6f  AP %.4f  AUC %.4f  (%.3f s)\n", (long long)report.epoch,
                   report.train_loss, report.test_mse, report.test_ap, report.test_auc, wall_seconds() - started);
        else if (r->c->options.task == TASK_CLASSIFY)
            printf("epoch %4lld  train CE %.6f  test CE %.6f  accuracy %.4f  (%.3f s)\n", (long long)report.epoch,
                   report.train_loss, report.test_mse, report.test_accuracy, wall_seconds() - started);
        else
            printf("epoch %4lld  train loss %.6f  test MSE %.6f  (%.3f s)\n", (long long)report.epoch,
                   report.train_loss, report.test_mse, wall_seconds() - started);
        fflush(stdout);
        cli_progress(&r->progress, "training epochs", r->tr->epoch - r->first_epoch,
                     r->c->options.epochs - r->first_epoch);
    }
    for (t = train_techniques; *t; t++)
        if (on(*t, r) && (*t)->stop)
            (*t)->stop(r);
    return status;
}

/* The final test MSE, each technique's report, the checkpoint and the outputs. */
static int finish_run(train_run *r, double started, tf_error *err)
{
    double test_mse;
    const int64_t train = r->tr->train_snapshots, test = r->seq->num_snapshots - train;
    int status = r->group ? opt_trainer_evaluate(r->tr, r->group, r->seq, train, test, &test_mse, err)
                          : trainer_evaluate(r->tr, r->seq, train, test, &test_mse, NULL, err);
    static const char *const losses[] = {"MSE", "BCE", "CE"}; /* by train_task */
    epoch_report accuracy = {0};
    if (status == TF_OK && r->c->options.task == TASK_CLASSIFY)
        status = trainer_task_metrics(r->tr, r->seq, &accuracy, err);
    if (status == TF_OK && r->speaks && r->c->options.task == TASK_CLASSIFY)
        printf("final test CE %.6f, accuracy %.4f after %lld epochs (%.2f s)\n", test_mse, accuracy.test_accuracy,
               (long long)r->tr->epoch, wall_seconds() - started);
    else if (status == TF_OK && r->speaks)
        printf("final test %s %.6f after %lld epochs (%.2f s)\n", losses[r->c->options.task], test_mse,
               (long long)r->tr->epoch, wall_seconds() - started);
    for (const train_technique *const *t = train_techniques; status == TF_OK && *t; t++)
        if (on(*t, r) && (*t)->report)
            status = (*t)->report(r, err);
    if (status == TF_OK && r->c->save && r->speaks) {
        status = trainer_save(r->tr, r->c->save, err);
        if (status == TF_OK)
            printf("saved checkpoint %s\n", r->c->save);
    }
    if (status == TF_OK && r->c->dump && r->speaks)
        status = dump_outputs(r->tr, r->seq, r->c->dump, err);
    return status;
}

int train_snapshots(const train_command *c, comm *group, tf_error *err)
{
    /* only rank 0 prints and writes files */
    train_run r = {.c = c, .group = group, .speaks = !group || group->rank == 0};
    int status = train_load_snapshots(c, group, &r.progress, &r.data, err);
    if (status != TF_OK)
        return status;
    r.seq = &r.data.snapshots;
    status = start_run(&r, err);
    if (status == TF_OK && r.speaks)
        describe_run(&r);
    const double started = wall_seconds();
    if (status == TF_OK)
        status = run_epochs(&r, err);
    if (status == TF_OK)
        status = finish_run(&r, started, err);
    if (r.tr == &r.single)
        trainer_free(&r.single);
    for (const train_technique *const *t = train_techniques; *t; t++)
        if ((*t)->free)
            (*t)->free(&r);
    dataset_free(&r.data);
    return status;
}

/* ---- the command ------------------------------------------------------------------------------- */

/* The run of the command's model: the event models', the vertex split's, or the snapshot driver. */
static int train_run_model(const train_command *c, comm *group, tf_error *err)
{
    if (train_is_event_model(c))
        return train_events(c, group, err);
    if (c->split.on)
        return train_vertex_split(c, group, err);
    return train_snapshots(c, group, err);
}

int command_train(int argc, char **argv, tf_error *err)
{
    train_command c;
    int help = 0;
    const int parsed = train_parse(argc, argv, &c, &help, err);
    if (parsed == TF_OK && help) {
        train_print_help(&c);
        return TF_OK;
    }
    /* Under mpiexec -n R > 1 every rank starts MPI, even one with a bad option or --impl ref,
     * so that the ranks can compare their command lines and fail together with one line
     * (ranks_agree()) instead of leaving the others waiting in MPI_Init. */
    const int launched = ranks_launched();
    /* A save or dump that cannot work is reported now, not after the training it would lose. */
    int ready = parsed == TF_OK && c.save ? checkpoint_check_target(c.save, err) : parsed;
    if (ready == TF_OK && c.dump)
        ready = dump_check(c.dump, err);
    if (launched <= 1 && ready != TF_OK)
        return TF_ERR_INPUT;
    if (launched <= 1 && !c.optimized)
        return train_run_model(&c, NULL, err);
    if (ready == TF_OK && !c.optimized)
        tf_error_set(err, TF_ERR_INPUT, "train: --impl ref runs one process, and mpiexec -n %d would start %d copies "
                                        "of the same run writing one --save: what runs distributed is --impl opt (%s)",
                     launched, launched, train_is_event_model(&c) ? "node memory partitioned over the ranks"
                                                                  : "windows shared by the ranks, gradients all-reduced");
    comm group;
    if (start_ranks(&group, err->code != TF_OK, err) != TF_OK)
        return TF_ERR_SYSTEM;
    if (err->code != TF_OK) /* this rank will not train: agree on the error and stop */
        return finish_ranks(&group, ranks_agree(&group, argc, argv, 0, err), err);
    return finish_ranks(&group, train_run_model(&c, &group, err), err);
}
