#include "opt/train.h"

#include <stdlib.h>
#include <string.h>

#include "opt/kernels.h"
#include "ref/memory.h"

int opt_trainer_rank_of(int64_t position, int size) { return (int)(position % size); }

/* A checksum of every parameter's bits; equal on all ranks iff (almost surely) the values are. */
static double parameter_checksum(const parameter_list *list)
{
    uint64_t hash = 1469598103934665603ull; /* FNV-1a over the bytes */
    for (int64_t i = 0; i < list->count; i++) {
        const unsigned char *bytes = (const unsigned char *)list->items[i].value.data;
        for (size_t k = 0; k < (size_t)list->items[i].value.size * sizeof(float); k++)
            hash = (hash ^ bytes[k]) * 1099511628211ull;
    }
    return (double)(hash >> 11); /* 53 bits: exact in a double */
}

int opt_parameters_agree(comm *c, const parameter_list *list, tf_error *err)
{
    /* Same parameters on every rank: compare each rank's checksum with rank 0's. */
    double mismatches;
    if (comm_ranks_differing(c, parameter_checksum(list), &mismatches, err) != TF_OK)
        return err->code;
    if (mismatches != 0)
        return tf_error_set(err, TF_ERR_INPUT, "%.0f rank(s) start from other parameters than rank 0: create every "
                                               "rank's trainer with the same data, options, seed and checkpoint",
                            mismatches);
    return TF_OK;
}

int opt_trainer_parallel(trainer *tr, comm *c, tf_error *err)
{
    if (c->transport != COMM_MPI)
        return tf_error_set(err, TF_ERR_INPUT, "data-parallel training keeps gradients in host memory: it needs the MPI "
                                               "transport");
    tr->model.kernels = &opt_kernels;
    return opt_parameters_agree(c, &tr->model.parameters, err);
}

/* Sums one double across the ranks (a rank alone: nothing to do). */
static int sum_across_ranks(comm *c, double *value, tf_error *err)
{
    return c->size == 1 ? TF_OK : comm_allreduce_sum_double(c, value, 1, err);
}

int opt_trainer_sum_gradients(parameter_list *list, float *packed, comm *c, tf_error *err)
{
    if (c->size == 1)
        return TF_OK;
    int64_t offset = 0;
    for (int64_t i = 0; i < list->count; i++) {
        memcpy(packed + offset, list->items[i].grad.data, (size_t)list->items[i].grad.size * sizeof(float));
        offset += list->items[i].grad.size;
    }
    if (comm_allreduce_sum(c, packed, offset, err) != TF_OK)
        return err->code;
    offset = 0;
    for (int64_t i = 0; i < list->count; i++) {
        memcpy(list->items[i].grad.data, packed + offset, (size_t)list->items[i].grad.size * sizeof(float));
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
            status = opt_trainer_sum_gradients(list, packed, c, err);
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
