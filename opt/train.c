#include "opt/train.h"

#include <string.h>

#include "opt/kernels.h"

static int sum_floats(void *context, float *values, int64_t count, tf_error *err)
{
    return comm_allreduce_sum(context, values, count, err);
}

static int sum_doubles(void *context, double *values, int64_t count, tf_error *err)
{
    return comm_allreduce_sum_double(context, values, count, err);
}

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

int opt_trainer_parallel(trainer *tr, comm *c, tf_error *err)
{
    if (c->transport != COMM_MPI)
        return tf_error_set(err, TF_ERR_INPUT, "data-parallel training keeps gradients in host memory: it needs the MPI "
                                               "transport");
    tr->model.kernels = &opt_kernels;
    train_group group = {c->rank, c->size, sum_floats, sum_doubles, c};
    if (trainer_join_group(tr, &group, err) != TF_OK)
        return TF_ERR_INPUT;
    /* Same parameters on every rank: compare each rank's checksum with rank 0's. */
    double reference = parameter_checksum(&tr->model.parameters);
    double own = reference;
    if (comm_broadcast(c, &reference, sizeof reference, 0, err) != TF_OK)
        return err->code;
    double mismatches = own != reference;
    if (comm_allreduce_sum_double(c, &mismatches, 1, err) != TF_OK)
        return err->code;
    if (mismatches != 0)
        return tf_error_set(err, TF_ERR_INPUT, "%.0f rank(s) start from other parameters than rank 0: create every "
                                               "rank's trainer with the same data, options, seed and checkpoint",
                            mismatches);
    return TF_OK;
}
