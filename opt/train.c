#include "opt/train.h"

#include <stdlib.h>
#include <string.h>

#include "opt/kernels.h"
#include "ref/digest.h"
#include "ref/layers.h"
#include "ref/memory.h"

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

int opt_trainer_sum_gradients(parameter_list *list, float *packed, comm *c, const kernels *copier, tf_error *err)
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
    if (comm_allreduce_sum(c, packed, offset, err) != TF_OK)
        return err->code;
    offset = 0;
    for (int64_t i = 0; i < list->count; i++) {
        copy(list->items[i].grad.data, 0, packed + offset, 0, 1, list->items[i].grad.size);
        offset += list->items[i].grad.size;
    }
    return TF_OK;
}

int opt_trainer_epoch(trainer *tr, comm *c, const snapshot_seq *seq, epoch_report *report, tf_error *err)
{
    memset(report, 0, sizeof *report);
    parameter_list *list = &tr->model.parameters;
    float *packed = NULL;
    if (c->size > 1 && !(packed = tf_alloc((size_t)parameters_size(list), sizeof(float), "gradient buffer", err)))
        return TF_ERR_INPUT;
    const train_schedule s = trainer_schedule(tr);
    double loss_sum = 0; /* of this rank's windows */
    int status = TF_OK;
    for (int64_t step = 0; status == TF_OK && step < s.steps; step++) {
        parameters_zero_grad(list);
        for (int64_t slot = 0; status == TF_OK && slot < s.batch; slot++)
            if (opt_trainer_rank_of(slot, c->size) == c->rank)
                status = trainer_train_slot(tr, seq, &s, step, slot, &loss_sum, err);
        if (status == TF_OK)
            status = opt_trainer_sum_gradients(list, packed, c, tr->model.kernels, err);
        if (status == TF_OK) {
            trainer_apply_gradient(tr);
            report->steps++;
        }
    }
    free(packed);
    if (status == TF_OK)
        status = sum_across_ranks(c, &loss_sum, err);
    if (status != TF_OK)
        return status;
    trainer_close_epoch(tr, &s, loss_sum, report);
    return opt_trainer_evaluate(tr, c, seq, tr->train_snapshots, seq->num_snapshots - tr->train_snapshots,
                                &report->test_mse, err);
}

int opt_trainer_evaluate(const trainer *tr, comm *c, const snapshot_seq *seq, int64_t first, int64_t count,
                         double *mse, tf_error *err)
{
    const int64_t length = trainer_evaluation_length(tr, count);
    double error_sum = 0; /* of this rank's windows */
    for (int64_t j = 0; j * length < count; j++) {
        if (opt_trainer_rank_of(j, c->size) != c->rank)
            continue;
        int status = trainer_evaluate_window(tr, seq, first, count, j, &error_sum, NULL, err);
        if (status != TF_OK)
            return status;
    }
    int status = sum_across_ranks(c, &error_sum, err);
    if (status == TF_OK)
        *mse = error_sum / (double)count;
    return status;
}
