/* The peer cross-check: twofold's ref/ models against PyTorch Geometric Temporal.
 *
 * bench/peer/peer_models.py loaded twofold's initial parameters into the library's own
 * TGCN, GConvGRU, GCLSTM and EvolveGCNO (plus the Linear(ReLU(H)) head of its examples), ran
 * one window of chickenpox and twitter_tennis snapshots as loaded by the library, and wrote
 * the outputs, the loss, every gradient and the parameters after one torch.optim.Adam step to
 * verify/golden/models/CASE/. Here ref/ does the same from the same parameters; every value
 * must agree within the project's fp tolerance, max |a - b| / max(1, |b|) <= 1e-5. */
#include <math.h>

#include "datasets/dataset.h"
#include "ref/adam.h"
#include "ref/model.h"
#include "ref/npy.h"
#include "verify/testing.h"

#define TOLERANCE 1e-5

typedef struct peer_case {
    const char *name;
    model_kind kind;
    const char *data;
    int64_t hidden;
    int k;
    int64_t first, count;
} peer_case;

/* Must match CASES in bench/peer/peer_models.py. */
static const peer_case cases[] = {
    {"tgcn_chickenpox", MODEL_TGCN, "chickenpox", 8, 2, 0, 8},
    {"tgcn_twitter_tennis", MODEL_TGCN, "twitter_tennis", 8, 2, 0, 8},
    {"gconvgru_chickenpox", MODEL_GCONVGRU, "chickenpox", 8, 2, 0, 8},
    {"gconvgru_chickenpox_k1", MODEL_GCONVGRU, "chickenpox", 8, 1, 0, 8},
    {"gconvgru_twitter_tennis", MODEL_GCONVGRU, "twitter_tennis", 8, 2, 0, 8},
    {"gclstm_chickenpox", MODEL_GCLSTM, "chickenpox", 8, 2, 0, 8},
    {"gclstm_chickenpox_k1", MODEL_GCLSTM, "chickenpox", 8, 1, 0, 8},
    {"gclstm_twitter_tennis", MODEL_GCLSTM, "twitter_tennis", 8, 2, 0, 8},
    {"evolvegcn_chickenpox", MODEL_EVOLVEGCN, "chickenpox", 8, 2, 0, 8},
    {"evolvegcn_twitter_tennis", MODEL_EVOLVEGCN, "twitter_tennis", 8, 2, 0, 8},
};

/* Reads golden file CASE/NAME.npy as float32 and checks its element count. */
static void golden(const char *case_name, const char *file, int64_t expected_size, npy_array *out)
{
    char relative[512];
    snprintf(relative, sizeof relative, "verify/golden/models/%s/%s.npy", case_name, file);
    tf_error err;
    ck_assert_msg(npy_read(source_path(relative), out, &err) == TF_OK, "%s", err.message);
    ck_assert_int_eq(out->dtype, NPY_FLOAT32);
    ck_assert_int_eq(out->size, expected_size);
}

static void check_case(const peer_case *c)
{
    dataset d;
    tf_error err;
    ck_assert_msg(dataset_load(c->data, NULL, &d, &err) == TF_OK, "%s", err.message);
    const snapshot_seq *seq = &d.snapshots;
    model_config config = {c->kind, seq->feature_width, c->hidden, seq->target_width, c->k};
    model m;
    ck_assert_msg(model_create(&m, &config, 99, &err) == TF_OK, "%s", err.message);
    char directory[512];
    snprintf(directory, sizeof directory, "verify/golden/models/%s", c->name);
    ck_assert_msg(parameters_load(&m.parameters, source_path(directory), &err) == TF_OK, "%s", err.message);

    const int64_t size = c->count * seq->num_nodes * seq->target_width;
    float *predictions = calloc((size_t)size, sizeof(float)), *dpredictions = calloc((size_t)size, sizeof(float));
    window_tape tape;
    ck_assert(model_forward(&m, seq, c->first, c->count, &tape, predictions, &err) == TF_OK);
    float loss = (float)model_window_loss(seq, c->first, c->count, predictions, 1.0f, dpredictions);
    parameters_zero_grad(&m.parameters);
    ck_assert(model_backward(&m, seq, &tape, dpredictions, &err) == TF_OK);
    window_tape_free(&m, &tape);

    npy_array outputs, golden_loss;
    golden(c->name, "outputs", size, &outputs);
    golden(c->name, "loss", 1, &golden_loss);
    double output_error = relative_error(predictions, outputs.data, size);
    double loss_error = relative_error(&loss, golden_loss.data, 1);
    double gradient_error = 0, adam_error = 0;
    const char *worst_gradient = "";
    for (int64_t i = 0; i < m.parameters.count; i++) {
        parameter *p = &m.parameters.items[i];
        char file[160];
        npy_array expected;
        snprintf(file, sizeof file, "grad.%s", p->name);
        golden(c->name, file, p->grad.size, &expected);
        double e = relative_error(p->grad.data, expected.data, p->grad.size);
        if (e >= gradient_error) {
            gradient_error = e;
            worst_gradient = p->name;
        }
        npy_free(&expected);
    }
    /* One Adam step from these gradients, against torch.optim.Adam's. */
    adam optimizer;
    ck_assert(adam_create(&optimizer, &m.parameters, 0.01, &err) == TF_OK);
    ref_adam_step(&optimizer, &m.parameters);
    for (int64_t i = 0; i < m.parameters.count; i++) {
        parameter *p = &m.parameters.items[i];
        char file[160];
        npy_array expected;
        snprintf(file, sizeof file, "adam.%s", p->name);
        golden(c->name, file, p->value.size, &expected);
        adam_error = fmax(adam_error, relative_error(p->value.data, expected.data, p->value.size));
        npy_free(&expected);
    }
    printf("%-26s outputs %.1e  loss %.1e  gradients %.1e (worst %s)  after Adam %.1e\n", c->name, output_error,
           loss_error, gradient_error, worst_gradient, adam_error);
    ck_assert_msg(output_error <= TOLERANCE, "%s: outputs differ by %g", c->name, output_error);
    ck_assert_msg(loss_error <= TOLERANCE, "%s: loss differs by %g", c->name, loss_error);
    ck_assert_msg(gradient_error <= TOLERANCE, "%s: gradient of %s differs by %g", c->name, worst_gradient,
                  gradient_error);
    ck_assert_msg(adam_error <= TOLERANCE, "%s: parameters after Adam differ by %g", c->name, adam_error);
    adam_free(&optimizer);
    npy_free(&outputs);
    npy_free(&golden_loss);
    free(predictions);
    free(dpredictions);
    model_free(&m);
    dataset_free(&d);
}

START_TEST(matches_pytorch_geometric_temporal) { check_case(&cases[_i]); }
END_TEST

int main(void)
{
    Suite *suite = suite_create("models_peer");
    TCase *peer = tcase_create("peer");
    tcase_set_timeout(peer, 300);
    tcase_add_loop_test(peer, matches_pytorch_geometric_temporal, 0, (int)(sizeof cases / sizeof *cases));
    suite_add_tcase(suite, peer);
    return run_suite(suite);
}
