/* Where a vertex-partitioned run parts from the reference, and whether the split's arithmetic is
 * the cause (chapter 06b; bench/partition.sh runs it on a row whose final MSE misses the reference's):
 *
 *   mpiexec -n R build/bench/bench_partition_parting [MODEL [DATA [METHOD [MODE [EPOCHS]]]]]
 *                                  (default tgcn los pts exchange 1)
 *
 * bench/partition.sh's settings (hidden 32, windows of 8, 2 per Adam step, lr 0.01, seed 1). Three
 * runs, step by step: the reference trainer (rank 0), the vertex-partitioned twin (every rank),
 * and on rank 0 a second reference trainer given the twin's parameters before each step. Per step
 * it prints how far the twin's gradient is from the reference's (chained: each run on its own
 * parameters), how far from the reference's at the twin's own parameters (the split's arithmetic
 * alone), how far the parameters are apart, and the hidden state of the step's windows nearest the
 * head's ReLU kink (y^ = Linear(ReLU(H))) at the twin's parameters.
 *
 * The verdict: a split whose arithmetic is right is the reference's within rounding (1e-7) at its
 * own parameters at every step, except where one of the step's states lies a few roundings from
 * the kink and the twin's last bits put it on the other side (chapter 02's parting). So the run
 * "parted" when every step is within EXACT_BOUND or holds a state within KINK_BOUND of the kink,
 * and is WRONG (exit status 1) when a step is off with no state near the kink: a defect. Exit
 * status 2 on bad arguments or data. TWOFOLD_BREAK_TWIN=partition (or all) moves one gradient of the
 * twin by 1e-3 at every step: the verdict must then say WRONG. */
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

/* About ten times the largest rounding distance seen at the twin's own parameters (1.2e-7), and ten times
 * a state's rounding distance (H in (-1, 1), a few float32 roundings of 1e-8). */
#define EXACT_BOUND 1e-6
#define KINK_BOUND 1e-6

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
    const char *model_name = argc > 1 ? argv[1] : "tgcn", *data = argc > 2 ? argv[2] : "los";
    const char *method_name = argc > 3 ? argv[3] : "pts", *mode_name = argc > 4 ? argv[4] : "exchange";
    const int64_t epochs = argc > 5 ? atoll(argv[5]) : 1;
    model_kind kind;
    partition_method method;
    if (argc > 6 || epochs < 1 || (strcmp(mode_name, "cache") && strcmp(mode_name, "exchange")))
        return tf_error_set(err, TF_ERR_INPUT, "usage: bench_partition_parting [MODEL [DATA [METHOD [cache|exchange "
                                               "[EPOCHS]]]]] (EPOCHS >= 1)");
    if (model_kind_parse(model_name, &kind, err) != TF_OK || partition_method_parse(method_name, &method, err) != TF_OK)
        return err->code;
    const partition_mode mode = strcmp(mode_name, "cache") ? PARTITION_EXCHANGE : PARTITION_CACHE;
    train_options options;
    train_options_default(&options);
    options.window = 8, options.batch = 2, options.learning_rate = 0.01;
    const model_config config = {kind, 0, 32, 0, 2, 0};
    partition_options po;
    partition_options_default(&po);
    po.ranks = p->group.size;
    po.model = config;
    const snapshot_seq *seq = &p->data.snapshots;
    if (dataset_load(data, NULL, &p->data, err) != TF_OK)
        return TF_ERR_INPUT;
    if (p->data.kind != DATASET_SNAPSHOTS)
        return tf_error_set(err, TF_ERR_INPUT, "needs a snapshot sequence; %s is an event stream", p->data.name);
    if (partition_training_supported(method, mode, kind, err) != TF_OK ||
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
    *steps = epochs * trainer_schedule(&p->ref).steps;
    if (p->group.rank == 0)
        printf("%s on %s, hidden 32, %s %s on %d rank(s), %lld Adam steps: gradients of the twin against the "
               "reference's (chained) and against the reference's at the twin's parameters; the state nearest the "
               "ReLU's kink at the twin's parameters\n", model_name, p->data.name, method_name, mode_name,
               p->group.size, (long long)*steps);
    return TF_OK;
}

/* Adam step @p number (counted over epochs) of the three runs; rank 0 prints its line and counts the
 * steps off at the twin's own parameters (*off) and, of those, the ones with no state near the kink
 * (*unexplained). */
static int step_once(parting *p, const train_schedule *s, int64_t number, int64_t *off, int64_t *unexplained,
                     tf_error *err)
{
    const int64_t step = number % s->steps;
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
        const char *broken = getenv("TWOFOLD_BREAK_TWIN"); /* to see the verdict fail, as in twofold verify */
        if (broken && (!strcmp(broken, "partition") || !strcmp(broken, "all")))
            p->gradient[2][0] += 1e-3f;
        const double own = relative_error(p->gradient[2], p->gradient[1], p->parameters);
        printf("step %3lld: twin vs reference %.2e, vs reference at twin's parameters %.2e; parameters apart %.2e; "
               "nearest state to the kink %.3e (snapshot %lld, vertex %lld, unit %lld)\n", (long long)number,
               relative_error(p->gradient[2], p->gradient[0], p->parameters), own,
               relative_error(p->values[1], p->values[0], p->parameters), nearest, (long long)place[0],
               (long long)place[1], (long long)place[2]);
        *off += !(own <= EXACT_BOUND);
        *unexplained += !(own <= EXACT_BOUND) && !(nearest <= KINK_BOUND);
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
    int64_t off = 0, unexplained = 0;
    for (int64_t number = 0; status == TF_OK && number < steps; number++)
        status = step_once(&p, &s, number, &off, &unexplained, &err);
    if (status != TF_OK)
        fprintf(stderr, "bench_partition_parting: %s\n", err.message);
    else if (p.group.rank == 0)
        printf("%s: the split's arithmetic is the reference's within %.0e at its own parameters at %lld of %lld "
               "steps; %lld other(s) hold a state within %.0e of the ReLU's kink, %lld do not\n",
               unexplained ? "WRONG" : off ? "parted" : "equal", EXACT_BOUND, (long long)(steps - off), (long long)steps,
               (long long)(off - unexplained), KINK_BOUND, (long long)unexplained);
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
    return status != TF_OK ? 2 : unexplained ? 1 : 0;
}
