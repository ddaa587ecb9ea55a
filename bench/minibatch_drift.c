/* What parts T-GCN's served mini-batch run from its recompute in `bench minibatch` (chapters/
 * 02-incremental.md, "The full size"), Adam step by Adam step:
 *
 *   build/bench/bench_minibatch_drift [DATA [TARGETS [EPOCHS]]]
 *       (default: bench minibatch's full-size graph, mini-batches of 5000 targets, 2 epochs)
 *
 * Two T-GCN trainers with bench minibatch's settings (hidden 16, windows of 8 with stride 2, Adam,
 * fan-out 25,10, the optimized kernels, one rank) train the same mini-batches in turn: (a)
 * recomputes A^ X_t on each mini-batch's sampled graphs, (b) is served it by the mini-batch's
 * engine and cache (opt/minibatch.h). For every mini-batch, the largest difference of (b)'s A^ X_t
 * from (a)'s over every snapshot, relative to the summed terms (|A^| |X_t|, chapter 00's fp bound)
 * and to |A^ X_t| where it is over 1e-3; for every Adam step, the losses, the hidden states of the
 * targets the two put on opposite sides of the head's ReLU (bench/drift_compare.h, the first 3
 * printed), the largest relative difference of the gradients and of the parameters after it; the
 * epochs' losses as bench minibatch compares them. Exit status 0, or 2 on bad arguments or data. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/drift_compare.h"
#include "datasets/dataset.h"
#include "opt/kernels.h"
#include "opt/minibatch.h"

/* Snapshot t's A^ X_t as the recompute forms it (@p out) and |A^| |X_t| (@p terms), [n][f] each. */
static int recompute(const model *m, const snapshot_seq *view, int64_t t, float *out, float *terms, tf_error *err)
{
    propagation p;
    if (model_gcn_operator(m, &p, view, t, err) != TF_OK)
        return TF_ERR_INPUT;
    const int64_t f = view->feature_width, size = view->num_nodes * f;
    const float *x = view->snapshots[t].features.data;
    m->kernels->propagate_forward(&p, x, f, out);
    for (int64_t i = 0; i < size; i++)
        terms[i] = fabsf(x[i]); /* the coefficients are positive: A^ |X| is |A^| |X| */
    float *absolute = malloc((size_t)size * sizeof *absolute + 1);
    if (absolute) {
        memcpy(absolute, terms, (size_t)size * sizeof *absolute);
        m->kernels->propagate_forward(&p, absolute, f, terms);
    }
    free(absolute);
    ref_propagation_free(&p);
    return absolute ? TF_OK : tf_error_set(err, TF_ERR_INPUT, "out of memory");
}

/* Every snapshot's served A^ X_t against the recompute: prints the largest differences. */
static int compare_inputs(const model *m, const sampled_graph *s, int64_t batch, int epoch,
                          const incremental_inputs_options *o, const trainer *tr, comm *local, tf_error *err)
{
    const int64_t size = s->view.num_nodes * s->view.feature_width;
    float *served = malloc((size_t)size * sizeof(float) + 1), *again = malloc((size_t)size * sizeof(float) + 1),
          *terms = malloc((size_t)size * sizeof(float) + 1);
    incremental_inputs probe; /* its own server: the trained one's counts stay bench minibatch's */
    int status = served && again && terms ? incremental_inputs_create(&probe, &s->view, tr, local, o, err)
                                          : tf_error_set(err, TF_ERR_INPUT, "out of memory");
    const int made = status == TF_OK;
    double of_terms = 0, of_values = 0;
    for (int64_t t = 0; status == TF_OK && t < s->view.num_snapshots; t++) {
        if ((status = probe.source.get(probe.source.context, t, served, err)) != TF_OK ||
            (status = recompute(m, &s->view, t, again, terms, err)) != TF_OK)
            break;
        for (int64_t i = 0; i < size; i++) {
            const double gap = fabs((double)served[i] - again[i]);
            of_terms = terms[i] > 0 ? fmax(of_terms, gap / terms[i]) : fmax(of_terms, gap > 0 ? INFINITY : 0);
            of_values = fabs(again[i]) > 1e-3 ? fmax(of_values, gap / fabs(again[i])) : of_values;
        }
    }
    if (status == TF_OK)
        printf("epoch %d, mini-batch %lld (%lld vertices): served A^ X_t within %.2e of the summed terms, %.2e of "
               "|A^ X_t| (engine: %lld deltas, %lld full)\n", epoch, (long long)batch, (long long)s->num_vertices,
               of_terms, of_values, (long long)probe.engine.stats.incremental, (long long)probe.engine.stats.full);
    if (made)
        incremental_inputs_free(&probe);
    free(served);
    free(again);
    free(terms);
    return status;
}

/* One Adam step of both trainers over mini-batch @p s: crossings first, then gradients and step. */
static int step_both(trainer tr[2], const sampled_graph *s, const train_schedule *plan, int64_t step, int64_t number,
                     double loss[2], tf_error *err)
{
    const int64_t crossed = drift_kink_crossings(&tr[0], &tr[1], &s->view, plan, step, number, s->num_targets, 3,
                                                 "recompute", "served", err);
    double step_loss[2] = {0, 0};
    for (int v = 0; crossed >= 0 && v < 2; v++)
        if (minibatch_train_step(&tr[v].model, s, plan, step, &step_loss[v], err) != TF_OK)
            return TF_ERR_INPUT;
    if (crossed < 0)
        return TF_ERR_INPUT;
    int64_t differ, total;
    const char *gradient_name = "", *value_name = "";
    const double gradient = drift_worst_of(&tr[0], &tr[1], 0, &differ, &total, &gradient_name);
    trainer_apply_gradient(&tr[0]);
    trainer_apply_gradient(&tr[1]);
    const double value = drift_worst_of(&tr[0], &tr[1], 1, &differ, &total, &value_name);
    printf("step %3lld: loss %.9f (recompute), %.9f (served); %lld state%s across the ReLU; gradients %.2e (%s), "
           "parameters after Adam %.2e (%s)\n", (long long)number, step_loss[0], step_loss[1], (long long)crossed,
           crossed == 1 ? "" : "s", gradient, gradient_name, value, value_name);
    loss[0] += step_loss[0];
    loss[1] += step_loss[1];
    return TF_OK;
}

/* One epoch of both trainers, mini-batch by mini-batch. */
static int epoch_both(trainer tr[2], const snapshot_seq *seq, const minibatch_options *o,
                      const incremental_inputs_options *served, comm *local, int64_t *number, tf_error *err)
{
    const int64_t batches = minibatch_count(o, seq->num_nodes);
    const int epoch = (int)tr[0].epoch + 1;
    int32_t *targets = malloc((size_t)o->size * sizeof *targets);
    double loss[2] = {0, 0};
    int status = targets ? TF_OK : tf_error_set(err, TF_ERR_INPUT, "out of memory");
    for (int64_t b = 0; status == TF_OK && b < batches; b++) {
        sampled_graph s;
        incremental_inputs server;
        if ((status = minibatch_sample(&s, &tr[0], seq, o, b, targets, err)) != TF_OK)
            break;
        if ((status = compare_inputs(&tr[0].model, &s, b, epoch, served, &tr[1], local, err)) == TF_OK &&
            (status = incremental_inputs_create(&server, &s.view, &tr[1], local, served, err)) == TF_OK) {
            tr[1].model.inputs = &server.source;
            const train_schedule plan = trainer_schedule(&tr[0]);
            for (int64_t step = 0; status == TF_OK && step < plan.steps; step++)
                status = step_both(tr, &s, &plan, step, (*number)++, loss, err);
            tr[1].model.inputs = NULL;
            incremental_inputs_free(&server);
        }
        sampled_graph_free(&s);
    }
    free(targets);
    epoch_report report[2];
    for (int v = 0; status == TF_OK && v < 2; v++) {
        memset(&report[v], 0, sizeof report[v]);
        minibatch_close_epoch(&tr[v], o, seq->num_nodes, loss[v], &report[v]);
    }
    if (status == TF_OK)
        printf("epoch %d: train loss %.9f (recompute), %.9f (served), relative difference %.2e (bench minibatch's "
               "bound 1e-5)\n", epoch, report[0].train_loss, report[1].train_loss,
               drift_relative(report[1].train_loss, report[0].train_loss));
    return status;
}

int main(int argc, char **argv)
{
    const char *data = argc > 1 ? argv[1]
                                : "powerlaw:nodes=20000,edges=100000,snapshots=24,churn=0.01,features=64,degrees=0,seed=5";
    const int64_t size = argc > 2 ? atoll(argv[2]) : 5000, epochs = argc > 3 ? atoll(argv[3]) : 2;
    if (argc > 4 || size < 1 || epochs < 1) {
        fprintf(stderr, "usage: bench_minibatch_drift [DATA [TARGETS [EPOCHS]]] (TARGETS, EPOCHS >= 1)\n");
        return 2;
    }
    tf_error err;
    dataset d;
    if (dataset_load(data, NULL, &d, &err) != TF_OK) {
        fprintf(stderr, "bench_minibatch_drift: %s\n", err.message);
        return 2;
    }
    const minibatch_options o = {size, 2, {25, 10}};
    train_options options;
    train_options_default(&options);
    options.window = 8, options.stride = 2;
    const model_config config = {MODEL_TGCN, 0, 16, 0, 1, 0};
    incremental_inputs_options served;
    incremental_inputs_options_default(&served);
    comm local;
    comm_init_local(&local);
    opt_set_threads(1);
    trainer tr[2];
    int created = 0, status = TF_OK;
    for (; created < 2 && status == TF_OK; created++)
        if ((status = trainer_create(&tr[created], &d.snapshots, &config, &options, &err)) == TF_OK) {
            tr[created].model.kernels = &opt_kernels;
            minibatch_record(&tr[created], &o);
        }
    printf("tgcn on %s, mini-batches of %lld targets, fan-out 25,10, hidden 16, windows of 8 with stride 2, %lld "
           "epochs: (a) recomputes A^ X_t on the sampled graphs, (b) is served it (opt/minibatch.h)\n", data,
           (long long)size, (long long)epochs);
    for (int64_t e = 0, number = 1; status == TF_OK && e < epochs; e++)
        status = epoch_both(tr, &d.snapshots, &o, &served, &local, &number, &err);
    if (status != TF_OK)
        fprintf(stderr, "bench_minibatch_drift: %s\n", err.message);
    for (int v = 0; v < created; v++)
        trainer_free(&tr[v]);
    comm_finalize(&local);
    dataset_free(&d);
    return status == TF_OK ? 0 : 2;
}
