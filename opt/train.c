#include "opt/train.h"

#include <stdlib.h>
#include <string.h>

#include "opt/kernels.h"
#include "ref/core/digest.h"
#include "ref/nn/layers.h"
#include "ref/core/memory.h"

#ifdef _OPENMP
#include <omp.h>
#endif

int opt_trainer_rank_of(int64_t position, int size) { return (int)(position % size); }

/* A checksum of a list's values (and, with @p grads, its second tensors: Adam keeps v there);
 * equal on all ranks iff (almost surely) the values are. 53 bits of tf_digest(): exact in a double. */
static double list_checksum(const parameter_list *list, int grads)
{
    uint64_t hash = TF_DIGEST_START;
    for (int64_t i = 0; i < list->count; i++) {
        const tensor *value = &list->items[i].value, *second = &list->items[i].grad;
        hash = tf_digest(hash, value->data, (size_t)value->size * sizeof(float));
        if (grads)
            hash = tf_digest(hash, second->data, (size_t)second->size * sizeof(float));
    }
    return (double)(hash >> 11);
}

/* What a rank (re)starts from, as opt_state_agree() compares it. */
enum { STATE_EPOCH, STATE_STEP, STATE_PARAMETERS, STATE_MOMENTS, STATE_VALUES };

int opt_state_agree(comm *c, const parameter_list *list, const adam *optimizer, int64_t epoch, tf_error *err)
{
    if (c->size == 1)
        return TF_OK;
    /* One all-gather of every rank's record, so every rank names the same first differing rank
     * and field, and all of them report the same line. A rank whose copy of a checkpoint lacks
     * trainer.npy starts at epoch 0 with fresh moments; one with other moment files has the
     * same parameters but would take other steps: both are caught here, before any step. */
    const double mine[STATE_VALUES] = {(double)epoch, (double)optimizer->step, list_checksum(list, 0),
                                       list_checksum(&optimizer->moments, 1)};
    double *all = tf_alloc((size_t)c->size * STATE_VALUES, sizeof *all, "rank states", err);
    int64_t *counts = tf_alloc((size_t)c->size * 2, sizeof *counts, "rank state counts", err);
    int status = all && counts ? TF_OK : TF_ERR_INPUT;
    for (int r = 0; status == TF_OK && r < c->size; r++) {
        counts[r] = STATE_VALUES;
        counts[c->size + r] = (int64_t)r * STATE_VALUES;
    }
    if (status == TF_OK)
        status = comm_allgatherv(c, mine, STATE_VALUES, all, counts, counts + c->size, sizeof *all, err);
    for (int r = 1; status == TF_OK && r < c->size; r++) {
        const double *theirs = all + (size_t)r * STATE_VALUES;
        const char *hint = ": give every rank a copy of the same checkpoint, or the same data, options and seed";
        if (theirs[STATE_EPOCH] != all[STATE_EPOCH])
            status = tf_error_set(err, TF_ERR_INPUT, "rank %d resumes from another state than rank 0: epoch %.0f vs "
                                                     "%.0f on rank 0%s",
                                  r, theirs[STATE_EPOCH], all[STATE_EPOCH], hint);
        else if (theirs[STATE_STEP] != all[STATE_STEP])
            status = tf_error_set(err, TF_ERR_INPUT, "rank %d resumes from another state than rank 0: Adam step %.0f "
                                                     "vs %.0f on rank 0%s",
                                  r, theirs[STATE_STEP], all[STATE_STEP], hint);
        else if (theirs[STATE_PARAMETERS] != all[STATE_PARAMETERS])
            status = tf_error_set(err, TF_ERR_INPUT, "rank %d starts from other parameters than rank 0%s", r, hint);
        else if (theirs[STATE_MOMENTS] != all[STATE_MOMENTS])
            status = tf_error_set(err, TF_ERR_INPUT, "rank %d resumes from another state than rank 0: Adam moments "
                                                     "differ%s",
                                  r, hint);
    }
    free(all);
    free(counts);
    return status;
}

int opt_trainer_parallel(trainer *tr, comm *c, tf_error *err)
{
    if (c->transport != COMM_MPI)
        return tf_error_set(err, TF_ERR_INPUT, "data-parallel training keeps gradients in host memory: it needs the MPI "
                                               "transport");
    tr->model.kernels = &opt_kernels;
    return opt_state_agree(c, &tr->model.parameters, &tr->optimizer, tr->epoch, err);
}

/* Sums one double across the ranks (a rank alone: nothing to do). */
static int sum_across_ranks(comm *c, double *value, tf_error *err)
{
    return c->size == 1 ? TF_OK : comm_allreduce_sum_double(c, value, 1, err);
}

/* After a collective that carried the ranks' failures (@p failed of them): a rank whose own
 * @p status is fine stops with the others, its message empty (finish_ranks() leaves the line to
 * a rank that failed, and every rank exits with the worst status). */
static int stop_with_the_ranks(int status, int failed, tf_error *err)
{
    if (status != TF_OK || failed == 0)
        return status;
    err->code = TF_ERR_INPUT;
    err->message[0] = '\0';
    return TF_ERR_INPUT;
}

int opt_trainer_sum_gradients(parameter_list *list, float *packed, comm *c, const kernels *copier, int *failed,
                              tf_error *err)
{
    if (c->size == 1)
        return TF_OK;
    void (*copy)(float *, int64_t, const float *, int64_t, int64_t, int64_t) = copier ? copier->copy_rows
                                                                                       : ref_copy_rows;
    int64_t offset = 0;
    for (int64_t i = 0; i < list->count; i++) {
        copy(packed + offset, 0, list->items[i].grad.data, 0, 1, list->items[i].grad.size);
        offset += list->items[i].grad.size;
    }
    if (failed)
        packed[offset] = (float)*failed; /* a count of ranks: exact in float */
    if (comm_allreduce_sum(c, packed, offset + (failed != NULL), err) != TF_OK)
        return err->code;
    if (failed && (*failed = (int)packed[offset]) > 0)
        return TF_OK; /* the gradients of a failed step are not used */
    offset = 0;
    for (int64_t i = 0; i < list->count; i++) {
        copy(list->items[i].grad.data, 0, packed + offset, 0, 1, list->items[i].grad.size);
        offset += list->items[i].grad.size;
    }
    return TF_OK;
}

/* ---- threads inside a rank ------------------------------------------------------------------- */

/* A rank's windows of a step (or its evaluation windows) are shared among its OpenMP threads the
 * way a step's slots are shared among ranks: the rank's k-th window runs on thread k % threads.
 * Thread 0 trains into the rank's own model; every other thread into a replica (a model of the
 * same shape, the rank's parameter values copied in before each step, its own gradients and
 * tape), whose gradients are added into the rank's in thread order after the step's windows.
 * So 1 rank x 2 threads adds the same terms as 2 ranks x 1 thread, in the same grouping, and
 * each thread is one coarse parallel region per step: the kernels inside it run on that
 * thread alone (nested regions are off, BLAS is single-threaded), nothing waits in between. */
typedef struct thread_team {
    int threads;        /* 1: the rank's own model only, no replicas */
    trainer *replicas;  /* [threads - 1] shallow copies of the trainer, each with its own model */
} thread_team;

/* Threads for the windows of one rank: OpenMP's count, at most one per window. One thread where
 * the model reads a shared source (the incremental engine's cache, a partition's operators) or
 * runs on a device: those are not safe to share. */
static int team_size(const trainer *tr, int64_t windows)
{
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    if (tr->model.kernels != &opt_kernels || tr->model.inputs || tr->model.operators)
        return 1;
    return windows < threads ? (int)(windows > 1 ? windows : 1) : threads;
}

static void team_free(thread_team *team)
{
    for (int t = 0; t + 1 < team->threads && team->replicas; t++)
        model_free(&team->replicas[t].model);
    free(team->replicas);
    memset(team, 0, sizeof *team);
}

/* Replicas of @p tr's model for threads 1 .. threads - 1 (none for one thread). */
static int team_create(thread_team *team, const trainer *tr, int threads, tf_error *err)
{
    memset(team, 0, sizeof *team);
    team->threads = 1;
    if (threads < 2)
        return TF_OK;
    if (!(team->replicas = tf_alloc((size_t)threads - 1, sizeof *team->replicas, "thread replicas", err)))
        return TF_ERR_INPUT;
    for (int t = 0; t + 1 < threads; t++) {
        team->replicas[t] = *tr;
        if (model_create(&team->replicas[t].model, &tr->model.config, 1, err) != TF_OK) {
            team_free(team);
            return TF_ERR_INPUT;
        }
        team->threads++;
        team->replicas[t].model.kernels = tr->model.kernels;
    }
    return TF_OK;
}

/* The trainer thread @p t works on. */
static trainer *team_member(thread_team *team, trainer *tr, int t) { return t == 0 ? tr : &team->replicas[t - 1]; }

/* Give every replica the rank's current parameter values and zero gradients. */
static void team_start_step(thread_team *team, const trainer *tr)
{
    for (int t = 1; t < team->threads; t++) {
        parameters_copy_values(&team->replicas[t - 1].model.parameters, &tr->model.parameters);
        parameters_zero_grad(&team->replicas[t - 1].model.parameters);
    }
}

/* Add the replicas' gradients into the rank's, in thread order. */
static void team_sum_gradients(thread_team *team, trainer *tr)
{
    for (int t = 1; t < team->threads; t++)
        for (int64_t i = 0; i < tr->model.parameters.count; i++) {
            const tensor *from = &team->replicas[t - 1].model.parameters.items[i].grad;
            float *to = tr->model.parameters.items[i].grad.data;
            for (int64_t k = 0; k < from->size; k++)
                to[k] += from->data[k];
        }
}

/* Run this rank's windows of one step (train: the slots of @p step it holds) or of the
 * evaluation (the windows j it holds), each thread its share; adds their losses (train) or
 * squared errors (evaluation) into @p sum, the threads' sums added in thread order. */
typedef struct team_work {
    const train_schedule *schedule; /* train: the epoch's schedule; NULL: evaluation */
    int64_t step;                   /* train: the step */
    int64_t first, count;           /* evaluation: the evaluated snapshots */
    int64_t *positions;             /* [windows] slots (train) or evaluation windows j of this rank */
    int64_t windows;
} team_work;

static int team_run(thread_team *team, trainer *tr, const snapshot_seq *seq, const team_work *work, double *sum,
                    tf_error *err)
{
    double sums[team->threads];
    int statuses[team->threads];
    tf_error errors[team->threads];
#pragma omp parallel num_threads(team->threads) if (team->threads > 1)
    {
        int t = 0;
#ifdef _OPENMP
        t = omp_get_thread_num();
#endif
        trainer *member = team_member(team, tr, t);
        sums[t] = t == 0 ? *sum : 0; /* one thread adds in the order of one thread before */
        statuses[t] = TF_OK;
        for (int64_t k = t; statuses[t] == TF_OK && k < work->windows; k += team->threads) {
            const int64_t position = work->positions[k];
            statuses[t] = work->schedule
                              ? trainer_train_slot(member, seq, work->schedule, work->step, position, &sums[t], &errors[t])
                              : trainer_evaluate_window(member, seq, work->first, work->count, position, &sums[t], NULL,
                                                        &errors[t]);
        }
    }
    for (int t = 0; t < team->threads; t++)
        if (statuses[t] != TF_OK) {
            *err = errors[t];
            return statuses[t];
        }
    *sum = sums[0];
    for (int t = 1; t < team->threads; t++)
        *sum += sums[t];
    return TF_OK;
}

int opt_trainer_finish_step(trainer *tr, comm *c, float *packed, int status, epoch_report *report, tf_error *err)
{
    /* A rank whose windows failed joins the step's all-reduce too, so every rank stops here. */
    int failed = status != TF_OK;
    tf_error mpi_err;
    const int summed = opt_trainer_sum_gradients(&tr->model.parameters, packed, c, tr->model.kernels, &failed,
                                                 &mpi_err);
    if (status == TF_OK && summed != TF_OK)
        *err = mpi_err, status = summed;
    status = summed == TF_OK ? stop_with_the_ranks(status, failed, err) : status;
    if (status == TF_OK) {
        trainer_apply_gradient(tr);
        report->steps++;
    }
    return status;
}

int opt_trainer_epoch(trainer *tr, comm *c, const snapshot_seq *seq, epoch_report *report, tf_error *err)
{
    memset(report, 0, sizeof *report);
    parameter_list *list = &tr->model.parameters;
    const train_schedule s = trainer_schedule(tr);
    float *packed = NULL;
    int64_t *slots = tf_alloc((size_t)s.batch, sizeof *slots, "slots of a step", err);
    thread_team team = {1, NULL};
    if (!slots || (c->size > 1 && !(packed = tf_alloc((size_t)parameters_size(list) + 1, sizeof(float),
                                                      "gradient buffer", err)))) {
        free(slots);
        return TF_ERR_INPUT;
    }
    team_work work = {&s, 0, 0, 0, slots, 0};
    for (int64_t slot = 0; slot < s.batch; slot++)
        if (opt_trainer_rank_of(slot, c->size) == c->rank)
            slots[work.windows++] = slot;
    double loss_sum = 0; /* of this rank's windows */
    int status = team_create(&team, tr, team_size(tr, work.windows), err);
    for (int64_t step = 0; status == TF_OK && step < s.steps; step++) {
        parameters_zero_grad(list);
        team_start_step(&team, tr);
        work.step = step;
        status = team_run(&team, tr, seq, &work, &loss_sum, err);
        team_sum_gradients(&team, tr);
        status = opt_trainer_finish_step(tr, c, packed, status, report, err);
    }
    team_free(&team);
    free(packed);
    free(slots);
    if (status == TF_OK)
        status = sum_across_ranks(c, &loss_sum, err);
    if (status != TF_OK)
        return status;
    trainer_close_epoch(tr, &s, loss_sum, report);
    status = opt_trainer_evaluate(tr, c, seq, tr->train_snapshots, seq->num_snapshots - tr->train_snapshots,
                                  &report->test_mse, err);
    return status == TF_OK ? trainer_task_metrics(tr, seq, report, err) : status;
}

int opt_trainer_evaluate(const trainer *tr, comm *c, const snapshot_seq *seq, int64_t first, int64_t count,
                         double *mse, tf_error *err)
{
    const int64_t length = trainer_evaluation_length(tr, count), windows = (count + length - 1) / length;
    int64_t *mine = tf_alloc((size_t)windows, sizeof *mine, "evaluation windows", err);
    if (!mine)
        return TF_ERR_INPUT;
    team_work work = {NULL, 0, first, count, mine, 0};
    for (int64_t j = 0; j < windows; j++)
        if (opt_trainer_rank_of(j, c->size) == c->rank)
            mine[work.windows++] = j;
    /* Evaluation only reads the model: the replicas need its values, not its gradients. */
    thread_team team;
    double error_sum = 0; /* of this rank's windows */
    int status = team_create(&team, tr, team_size(tr, work.windows), err);
    if (status == TF_OK) {
        team_start_step(&team, tr);
        status = team_run(&team, (trainer *)tr, seq, &work, &error_sum, err);
    }
    team_free(&team);
    free(mine);
    if (status == TF_OK)
        status = sum_across_ranks(c, &error_sum, err);
    if (status == TF_OK)
        *mse = error_sum / (double)count;
    return status;
}
