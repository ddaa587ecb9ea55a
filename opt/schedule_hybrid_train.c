#include "opt/schedule_hybrid_train.h"

#include <stdlib.h>

#include "opt/train.h"
#include "ref/core/memory.h"

static int reservoir_get(void *context, int action, uint64_t number, const hybrid_batch **batch, tf_error *err)
{
    (void)number; /* the ledger decides from the count of requests */
    return opt_reservoir_get(context, action, batch, err);
}

int opt_hybrid_use_reservoir(hybrid_run *run, int threads, opt_reservoir **reservoir, tf_error *err)
{
    if (opt_reservoir_create(reservoir, &run->source, run->actions, run->sizes, threads, run->options.seed, err) !=
        TF_OK)
        return err->code;
    const batch_supplier supplier = {reservoir_get, NULL, *reservoir};
    hybrid_run_set_supplier(run, &supplier);
    return TF_OK;
}

/* The hooks of #hybrid_ranks on a comm. */
typedef struct ranks_context {
    comm *c;
    float *packed; /* [parameter count] */
} ranks_context;

static int sum_gradients(void *context, parameter_list *list, tf_error *err)
{
    ranks_context *r = context;
    return opt_trainer_sum_gradients(list, r->packed, r->c, NULL, NULL, err);
}

static int sum_numbers(void *context, double *values, int64_t count, tf_error *err)
{
    ranks_context *r = context;
    return r->c->size == 1 ? TF_OK : comm_allreduce_sum_double(r->c, values, count, err);
}

static int share_action(void *context, int *action, tf_error *err)
{
    ranks_context *r = context;
    return r->c->size == 1 ? TF_OK : comm_broadcast(r->c, action, sizeof *action, 0, err);
}

int opt_hybrid_epoch(trainer *tr, hybrid_run *run, comm *c, const snapshot_seq *seq, epoch_report *report,
                     tf_error *err)
{
    ranks_context context = {c, NULL};
    if (c->size > 1 &&
        !(context.packed = tf_alloc((size_t)parameters_size(&tr->model.parameters), sizeof(float), "gradients", err)))
        return TF_ERR_INPUT;
    const hybrid_ranks ranks = {c->rank, c->size, sum_gradients, sum_numbers, share_action, &context};
    int status = hybrid_epoch(tr, run, &ranks, report, err);
    free(context.packed);
    if (status != TF_OK)
        return status;
    return opt_trainer_evaluate(tr, c, seq, tr->train_snapshots, seq->num_snapshots - tr->train_snapshots,
                                &report->test_mse, err);
}
