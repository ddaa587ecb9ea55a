/* How far the optimized kernels carry a snapshot model's training from the reference's, Adam step
 * by Adam step, and what makes the distance jump:
 *
 *   build/bench/bench_drift [MODEL [DATA [EPOCHS [HIDDEN]]]]     (default dcrnn chickenpox 4 32)
 *
 * Two reference trainers with bench/train.sh's settings (windows of 8, 4 per Adam step, lr 0.01,
 * train ratio 0.8, seed 1), one on the reference's kernels and one on the optimized ones
 * (opt/kernels.h): the arithmetic of the twin on one rank, whose trainer on the reference's
 * kernels ends on the reference's bits (dcrnn_twin_logic_bitwise, verify/test_train_mpi.c). Before
 * each step both run the step's windows forward, and every hidden state that lies on opposite
 * sides of the head's ReLU (y^ = Linear(ReLU(H)), ref/models/model.c) in the two is printed; after
 * each step, the largest relative difference (|a - b| / max(1, |a|)) of the step's gradients and
 * of the parameters after it, and how many parameters differ in bits; after each epoch, both test
 * MSEs. Exit status 0, or 2 on bad arguments or data. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/drift_compare.h"
#include "datasets/dataset.h"
#include "opt/kernels.h"
#include "ref/train.h"

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "dcrnn", *data = argc > 2 ? argv[2] : "chickenpox";
    const int64_t epochs = argc > 3 ? atoll(argv[3]) : 4, hidden = argc > 4 ? atoll(argv[4]) : 32;
    tf_error err;
    model_kind kind;
    dataset d;
    if (argc > 5 || epochs < 1 || hidden < 1 || model_kind_parse(name, &kind, &err) != TF_OK) {
        fprintf(stderr, "usage: bench_drift [MODEL [DATA [EPOCHS [HIDDEN]]]] (EPOCHS, HIDDEN >= 1)\n");
        return 2;
    }
    train_options options;
    train_options_default(&options);
    options.window = 8, options.batch = 4, options.learning_rate = 0.01, options.train_ratio = 0.8;
    const model_config config = {kind, 0, hidden, 0, 2, 0};
    trainer a, b;
    if (dataset_load(data, NULL, &d, &err) != TF_OK || trainer_create(&a, &d.snapshots, &config, &options, &err) != TF_OK ||
        trainer_create(&b, &d.snapshots, &config, &options, &err) != TF_OK) {
        fprintf(stderr, "bench_drift: %s\n", err.message);
        return 2;
    }
    b.model.kernels = &opt_kernels;
    opt_set_threads(1);
    const train_schedule s = trainer_schedule(&a);
    printf("%s on %s, hidden %lld, %lld epochs of %lld Adam steps: the reference trainer on ref kernels (a) and on "
           "opt kernels (b)\n", name, d.name, (long long)hidden, (long long)epochs, (long long)s.steps);
    int status = TF_OK;
    for (int64_t e = 0, number = 1; status == TF_OK && e < epochs; e++) {
        double loss_a = 0, loss_b = 0, mse_a = 0, mse_b = 0;
        for (int64_t step = 0; status == TF_OK && step < s.steps; step++, number++) {
            if (drift_kink_crossings(&a, &b, &d.snapshots, &s, step, number, d.snapshots.num_nodes, INT64_MAX,
                                     "ref kernels", "opt", &err) < 0 ||
                trainer_train_step(&a, &d.snapshots, &s, step, &loss_a, &err) != TF_OK ||
                trainer_train_step(&b, &d.snapshots, &s, step, &loss_b, &err) != TF_OK) {
                status = TF_ERR_INPUT;
                break;
            }
            int64_t differ, total;
            const char *gradient_name = "", *value_name = "";
            const double gradient = drift_worst_of(&a, &b, 0, &differ, &total, &gradient_name);
            trainer_apply_gradient(&a);
            trainer_apply_gradient(&b);
            const double value = drift_worst_of(&a, &b, 1, &differ, &total, &value_name);
            printf("epoch %lld step %3lld: gradients %.2e (%s), parameters after Adam %.2e (%s), %lld of %lld differ "
                   "in bits\n", (long long)e + 1, (long long)number, gradient, gradient_name, value, value_name,
                   (long long)differ, (long long)total);
        }
        const int64_t test = d.snapshots.num_snapshots - a.train_snapshots;
        if (status == TF_OK && (status = trainer_evaluate(&a, &d.snapshots, a.train_snapshots, test, &mse_a, NULL, &err)) == TF_OK &&
            (status = trainer_evaluate(&b, &d.snapshots, b.train_snapshots, test, &mse_b, NULL, &err)) == TF_OK)
            printf("epoch %lld: test MSE %.9f (a), %.9f (b), relative difference %.2e\n", (long long)e + 1, mse_a, mse_b,
                   drift_relative(mse_b, mse_a));
    }
    if (status != TF_OK)
        fprintf(stderr, "bench_drift: %s\n", err.message);
    trainer_free(&a);
    trainer_free(&b);
    dataset_free(&d);
    return status == TF_OK ? 0 : 2;
}
