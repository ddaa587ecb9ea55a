/* Where a vertex-partitioned run parts from the reference, and whether the split's arithmetic is
 * the cause (chapter 06b, the two WRONG rows of bench/partition.sh):
 *
 *   mpiexec -n R build/bench/bench_partition_parting [DATA [METHOD [MODE [HIDDEN [STEPS]]]]]
 *                                  (default los pts exchange 32, the first epoch's steps)
 *
 * T-GCN with bench/partition.sh's settings (windows of 8, 2 per Adam step, lr 0.01, seed 1). Three
 * runs, step by step: the reference trainer (rank 0), the vertex-partitioned twin (every rank),
 * and on rank 0 a second reference trainer given the twin's parameters before each step. Per step
 * it prints how far the twin's gradient is from the reference's (chained: each run on its own
 * parameters), how far from the reference's at the twin's own parameters (the split's arithmetic
 * alone), how far the parameters are apart, and the hidden state of the step's windows nearest the
 * head's ReLU kink at the twin's parameters. A split whose arithmetic is right keeps the second
 * column at rounding (1e-8 to 1e-7) at every step; a chained distance that grows where the second
 * column jumps once, at a step with a state a few roundings from the kink, is a parting (chapter
 * 02's drift), not a defect. Exit status 0, or 2 on bad arguments or data. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/drift_compare.h"
#include "datasets/dataset.h"
#include "opt/kernels.h"
#include "opt/train_partition.h"
#include "ref/core/memory.h"
#include "ref/nn/compare.h"
#include "ref/partition.h"

typedef struct parting {
    comm group;
    dataset data;
    partition split;
    trainer ref, probe; /* rank 0: the reference, and the reference at the twin's parameters */
    partition_trainer twin;
    float *gradient[3]; /* [parameters]: the reference's, the probe's, the twin's */
    float *values[2];   /* [parameters]: the reference's and the twin's before the step */
    int64_t parameters;
} parting;

static int setup(parting *p, int argc, char **argv, int64_t *steps, tf_error *err)
{
    const char *data = argc > 1 ? argv[1] : "los", *method_name = argc > 2 ? argv[2] : "pts";
    const char *mode_name = argc > 3 ? argv[3] : "exchange";
    const int64_t hidden = argc > 4 ? atoll(argv[4]) : 32;
    partition_method method;
    if (argc > 6 || hidden < 1 || (strcmp(mode_name, "cache") && strcmp(mode_name, "exchange")))
        return tf_error_set(err, TF_ERR_INPUT, "usage: bench_partition_parting [DATA [METHOD [cache|exchange [HIDDEN "
                                               "[STEPS]]]]] (HIDDEN >= 1)");
    if (partition_method_parse(method_name, &method, err) != TF_OK)
        return err->code;
    const partition_mode mode = strcmp(mode_name, "cache") ? PARTITION_EXCHANGE : PARTITION_CACHE;
    train_options options;
    train_options_default(&options);
    options.window = 8, options.batch = 2, options.learning_rate = 0.01;
    const model_config config = {MODEL_TGCN, 0, hidden, 0, 2, 0};
    partition_options po;
    partition_options_default(&po);
    po.ranks = p->group.size;
    po.model = config;
    const snapshot_seq *seq = &p->data.snapshots;
    if (dataset_load(data, NULL, &p->data, err) != TF_OK || partition_training_supported(method, mode, config.kind, err) != TF_OK ||
        ref_partition_snapshots(seq, method, &po, &p->split, err) != TF_OK ||
        trainer_create(&p->ref, seq, &config, &options, err) != TF_OK ||
        trainer_create(&p->probe, seq, &config, &options, err) != TF_OK ||
        partition_trainer_create(&p->twin, &p->group, seq, p->split.vertex_owner, NULL, mode, &config, &options,
                                 &opt_kernels, err) != TF_OK)
        return TF_ERR_INPUT;
    p->parameters = parameters_size(&p->ref.model.parameters);
    for (int i = 0; i < 3; i++)
        if (!(p->gradient[i] = tf_alloc((size_t)p->parameters, sizeof(float), "gradients", err)))
            return TF_ERR_INPUT;
    for (int i = 0; i < 2; i++)
        if (!(p->values[i] = tf_alloc((size_t)p->parameters, sizeof(float), "parameters", err)))
            return TF_ERR_INPUT;
    const train_schedule s = trainer_schedule(&p->ref);
    *steps = argc > 5 ? atoll(argv[5]) : s.steps;
    if (*steps < 1 || *steps > s.steps)
        return tf_error_set(err, TF_ERR_INPUT, "STEPS must be 1 to %lld", (long long)s.steps);
    if (p->group.rank == 0)
        printf("T-GCN on %s, hidden %lld, %s %s on %d rank(s), %lld Adam steps: gradients of the twin against the "
               "reference's (chained) and against the reference's at the twin's parameters; the state nearest the "
               "ReLU's kink at the twin's parameters\n", p->data.name, (long long)hidden, method_name, mode_name,
               p->group.size, (long long)*steps);
    return TF_OK;
}

/* One Adam step of the three runs; rank 0 prints its line. */
static int step_once(parting *p, const train_schedule *s, int64_t step, tf_error *err)
{
    const snapshot_seq *seq = &p->data.snapshots;
    float nearest = 0;
    int64_t place[3] = {0, 0, 0};
    double loss[3] = {0, 0, 0};
    if (p->group.rank == 0) {
        parameters_copy_values(&p->probe.model.parameters, &p->twin.base.model.parameters);
        parameters_pack_values(&p->ref.model.parameters, p->values[0]);
        parameters_pack_values(&p->twin.base.model.parameters, p->values[1]);
        if (drift_nearest_kink(&p->probe, seq, s, step, &nearest, place, err) != 0 ||
            trainer_train_step(&p->probe, seq, s, step, &loss[1], err) != TF_OK ||
            trainer_train_step(&p->ref, seq, s, step, &loss[0], err) != TF_OK)
            return TF_ERR_INPUT;
        parameters_pack_gradients(&p->ref.model.parameters, p->gradient[0]);
        parameters_pack_gradients(&p->probe.model.parameters, p->gradient[1]);
        trainer_apply_gradient(&p->ref);
    }
    if (partition_trainer_step(&p->twin, step, &loss[2], err) != TF_OK)
        return err->code;
    if (p->group.rank == 0) {
        parameters_pack_gradients(&p->twin.base.model.parameters, p->gradient[2]);
        printf("step %3lld: twin vs reference %.2e, vs reference at twin's parameters %.2e; parameters apart %.2e; "
               "nearest state to the kink %.3e (snapshot %lld, vertex %lld, unit %lld)\n", (long long)step,
               relative_error(p->gradient[2], p->gradient[0], p->parameters),
               relative_error(p->gradient[2], p->gradient[1], p->parameters),
               relative_error(p->values[1], p->values[0], p->parameters), nearest, (long long)place[0],
               (long long)place[1], (long long)place[2]);
    }
    return TF_OK;
}

int main(int argc, char **argv)
{
    parting p = {0};
    tf_error err = {0};
    char transport[256];
    if (comm_init(&p.group, &argc, &argv, 0, transport, sizeof transport, &err) != TF_OK) {
        fprintf(stderr, "bench_partition_parting: %s\n", err.message);
        return 2;
    }
    int64_t steps = 0;
    int status = setup(&p, argc, argv, &steps, &err);
    const train_schedule s = status == TF_OK ? trainer_schedule(&p.ref) : (train_schedule){0};
    for (int64_t step = 0; status == TF_OK && step < steps; step++)
        status = step_once(&p, &s, step, &err);
    if (status != TF_OK)
        fprintf(stderr, "bench_partition_parting: %s\n", err.message);
    for (int i = 0; i < 3; i++)
        free(p.gradient[i]);
    for (int i = 0; i < 2; i++)
        free(p.values[i]);
    partition_trainer_free(&p.twin);
    trainer_free(&p.probe);
    trainer_free(&p.ref);
    partition_free(&p.split);
    dataset_free(&p.data);
    comm_finalize(&p.group);
    return status == TF_OK ? 0 : 2;
}
