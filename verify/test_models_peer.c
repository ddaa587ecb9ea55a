/* The peer cross-check: twofold's ref/ models and Adam against PyTorch Geometric Temporal
 * and torch.optim.Adam.
 *
 * bench/peer/peer_models.py loaded twofold's initial parameters into the library's own
 * TGCN, GConvGRU, GCLSTM, EvolveGCNO and GConvLSTM (plus the Linear(ReLU(H)) head of its examples) and
 * took 10 torch.optim.Adam steps (lr 0.01), step s on the window of `count` chickenpox or
 * twitter_tennis snapshots (as loaded by the library) starting at first + s * count, from a
 * zero state. It wrote to verify/golden/models/CASE/ the first step's outputs, loss, gradients
 * and parameters after it, and the loss of every step's window and every parameter after
 * every step. Here ref/ takes the same steps from the same parameters, and every value of
 * every step must agree within the project's fp tolerance, max |a - b| / max(1, |b|) <= 1e-5;
 * the maximum error after each step is printed. One step alone would not see how Adam rounds
 * its constants: with 1 - beta2 formed in float the first step still agreed and the later
 * ones drifted (chapter 01, "Peer check against PyTorch Geometric Temporal"). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "datasets/dataset.h"
#include "ref/nn/adam.h"
#include "ref/nn/graph_attention.h"
#include "ref/nn/kernels.h"
#include "ref/nn/propagate.h"
#include "ref/models/model.h"
#include "ref/data/npy.h"
#include "verify/testing.h"

#define TOLERANCE 1e-5

/* Adam steps per case, as STEPS in bench/peer/golden_steps.py. */
#define STEPS 10

typedef struct peer_case {
    const char *name;
    model_kind kind;
    const char *data;
    int64_t hidden;
    int k;
    int64_t first, count;
} peer_case;

/* Must match CASES in bench/peer/peer_models.py (and peer_dysat.py for DySAT). */
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
    {"gconvlstm_chickenpox", MODEL_GCONVLSTM, "chickenpox", 8, 2, 0, 8},
    {"gconvlstm_chickenpox_k1", MODEL_GCONVLSTM, "chickenpox", 8, 1, 0, 8},
    {"mpnnlstm_chickenpox", MODEL_MPNNLSTM, "chickenpox", 8, 2, 0, 8},
    {"dcrnn_chickenpox_k3", MODEL_DCRNN, "chickenpox", 8, 3, 0, 8},
    /* not in PyTorch Geometric Temporal: bench/peer/peer_dysat.py writes it in plain PyTorch, from the paper */
    {"dysat_chickenpox", MODEL_DYSAT, "chickenpox", 8, 2, 0, 8},
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

/* The worst relative error of every parameter's gradient (@p gradients 1) or value (0) against
 * the golden file FILE_PREFIX.NAME of the case; @p worst_name (may be NULL) gets the parameter's
 * name. */
static double golden_parameters_error(const char *case_name, const char *file_prefix, const parameter_list *list,
                                      int gradients, const char **worst_name)
{
    double worst = 0;
    for (int64_t i = 0; i < list->count; i++) {
        const parameter *p = &list->items[i];
        const tensor *values = gradients ? &p->grad : &p->value;
        char file[160];
        npy_array expected;
        snprintf(file, sizeof file, "%s.%s", file_prefix, p->name);
        golden(case_name, file, values->size, &expected);
        double e = relative_error(values->data, expected.data, values->size);
        if (e >= worst) {
            worst = e;
            if (worst_name)
                *worst_name = p->name;
        }
        npy_free(&expected);
    }
    return worst;
}

/* The window of step @p step (0-based): forward, loss, backward into zeroed gradients. Returns
 * the loss; fills @p predictions. */
static float window_gradient(model *m, const snapshot_seq *seq, int64_t first, int64_t count, float *predictions,
                             float *dpredictions)
{
    tf_error err;
    window_tape tape;
    ck_assert_msg(model_forward(m, seq, first, count, &tape, predictions, &err) == TF_OK, "%s", err.message);
    float loss = (float)model_window_loss(seq, first, count, predictions, 1.0f, dpredictions);
    parameters_zero_grad(&m->parameters);
    ck_assert_msg(model_backward(m, seq, &tape, dpredictions, &err) == TF_OK, "%s", err.message);
    window_tape_free(m, &tape);
    return loss;
}

static void check_case(const peer_case *c)
{
    tf_error err;
    /* each dataset loaded once for every case on it: they only read it */
    const snapshot_seq *seq = shared_snapshots(c->data);
    ck_assert_msg(c->first + STEPS * c->count <= seq->num_snapshots, "%s: %d windows of %lld snapshots do not fit in %lld",
                  c->name, STEPS, (long long)c->count, (long long)seq->num_snapshots);
    model_config config = {c->kind, seq->feature_width, c->hidden, seq->target_width, c->k, 0};
    model m;
    ck_assert_msg(model_create(&m, &config, 99, &err) == TF_OK, "%s", err.message);
    char directory[512];
    snprintf(directory, sizeof directory, "verify/golden/models/%s", c->name);
    ck_assert_msg(parameters_load(&m.parameters, source_path(directory), &err) == TF_OK, "%s", err.message);

    const int64_t size = c->count * seq->num_nodes * seq->target_width;
    float *predictions = calloc((size_t)size, sizeof(float)), *dpredictions = calloc((size_t)size, sizeof(float));
    float loss = window_gradient(&m, seq, c->first, c->count, predictions, dpredictions);

    /* Step 1 in detail: outputs, loss, every gradient, the parameters after Adam. */
    npy_array outputs, golden_loss;
    golden(c->name, "outputs", size, &outputs);
    golden(c->name, "loss", 1, &golden_loss);
    double output_error = relative_error(predictions, outputs.data, size);
    double loss_error = relative_error(&loss, golden_loss.data, 1);
    const char *worst_gradient = "";
    double gradient_error = golden_parameters_error(c->name, "grad", &m.parameters, 1, &worst_gradient);
    adam optimizer;
    ck_assert(adam_create(&optimizer, &m.parameters, 0.01, &err) == TF_OK);
    ref_adam_step(&optimizer, &m.parameters);
    double adam_error = golden_parameters_error(c->name, "adam", &m.parameters, 0, NULL);
    printf("%-26s outputs %.1e  loss %.1e  gradients %.1e (worst %s)  after Adam %.1e\n", c->name, output_error,
           loss_error, gradient_error, worst_gradient, adam_error);
    fflush(stdout);
    ck_assert_msg(output_error <= TOLERANCE, "%s: outputs differ by %g", c->name, output_error);
    ck_assert_msg(loss_error <= TOLERANCE, "%s: loss differs by %g", c->name, loss_error);
    ck_assert_msg(gradient_error <= TOLERANCE, "%s: gradient of %s differs by %g", c->name, worst_gradient,
                  gradient_error);
    ck_assert_msg(adam_error <= TOLERANCE, "%s: parameters after Adam differ by %g", c->name, adam_error);

    /* All STEPS steps: each window's loss before its update and every parameter after it
     * (steps.NAME.npy holds one row per step). Step 1's update is taken above. */
    npy_array golden_losses;
    golden(c->name, "losses", STEPS, &golden_losses);
    npy_array *after = calloc((size_t)m.parameters.count, sizeof *after);
    for (int64_t i = 0; i < m.parameters.count; i++) {
        char file[160];
        snprintf(file, sizeof file, "steps.%s", m.parameters.items[i].name);
        golden(c->name, file, STEPS * m.parameters.items[i].value.size, &after[i]);
    }
    /* Under Valgrind two steps: Adam's second step reads every moment the first wrote. */
    const int steps = (int)test_repeats(STEPS, 2);
    double step_loss_error[STEPS], step_parameter_error[STEPS];
    for (int step = 0; step < steps; step++) {
        if (step > 0) {
            loss = window_gradient(&m, seq, c->first + step * c->count, c->count, predictions, dpredictions);
            ref_adam_step(&optimizer, &m.parameters);
        }
        step_loss_error[step] = relative_error(&loss, (float *)golden_losses.data + step, 1);
        step_parameter_error[step] = 0;
        for (int64_t i = 0; i < m.parameters.count; i++) {
            parameter *p = &m.parameters.items[i];
            step_parameter_error[step] = fmax(step_parameter_error[step],
                                              relative_error(p->value.data, (float *)after[i].data + step * p->value.size,
                                                             p->value.size));
        }
    }
    printf("%-26s steps 1..%d, loss:      ", c->name, steps);
    for (int step = 0; step < steps; step++)
        printf(" %.1e", step_loss_error[step]);
    printf("\n%-26s steps 1..%d, parameters:", c->name, steps);
    for (int step = 0; step < steps; step++)
        printf(" %.1e", step_parameter_error[step]);
    printf("\n");
    fflush(stdout); /* a failing check ends this forked test before stdio would flush */
    for (int step = 0; step < steps; step++) {
        ck_assert_msg(step_loss_error[step] <= TOLERANCE, "%s: loss of step %d differs by %g", c->name, step + 1,
                      step_loss_error[step]);
        ck_assert_msg(step_parameter_error[step] <= TOLERANCE, "%s: parameters after step %d differ by %g", c->name,
                      step + 1, step_parameter_error[step]);
    }

    for (int64_t i = 0; i < m.parameters.count; i++)
        npy_free(&after[i]);
    free(after);
    npy_free(&golden_losses);
    adam_free(&optimizer);
    npy_free(&outputs);
    npy_free(&golden_loss);
    free(predictions);
    free(dpredictions);
    model_free(&m);
}

START_TEST(matches_pytorch_geometric_temporal) { check_case(&cases[_i]); }
END_TEST

/* ---- cases worked by hand: chapter 01a's T-GCN example, and the models PyTorch Geometric Temporal lacks ----- */

/* The value of parameter @p name of @p m (every tensor here holds one number). */
static float *value_of(model *m, const char *name)
{
    for (int64_t i = 0; i < m->parameters.count; i++)
        if (strcmp(m->parameters.items[i].name, name) == 0)
            return m->parameters.items[i].value.data;
    ck_abort_msg("no parameter %s", name);
    return NULL;
}

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

/* One vertex's LSTM step from its pre-activations a (i, f, g, o): c' = f c + i g, h' = o tanh(c'). */
static void lstm_by_hand(const double a[4], double *cell, double *state)
{
    *cell = sigmoid(a[1]) * *cell + sigmoid(a[0]) * tanh(a[2]);
    *state = sigmoid(a[3]) * tanh(*cell);
}

/* The path 0 - 1 - 2 (both directions of each edge) over @p snapshots snapshots, one feature each,
 * snapshot t's from features[t]. */
static void path_of_three(snapshot_seq *seq, int snapshots, const double (*features)[3])
{
    const int32_t src[4] = {0, 1, 1, 2}, dst[4] = {1, 0, 2, 1};
    tf_error err;
    ck_assert_int_eq(snapshot_seq_alloc(seq, snapshots, 3, 1, 1, &err), TF_OK);
    for (int t = 0; t < snapshots; t++) {
        ck_assert_int_eq(snapshot_seq_set_edges(seq, t, 4, src, dst, NULL, &err), TF_OK);
        for (int v = 0; v < 3; v++)
            seq->snapshots[t].features.data[v] = (float)features[t][v];
    }
}

/* The model @p kind (one feature, H = 1, K = 2, @p layers pairs where it stacks them) with fresh
 * parameters on path_of_three()'s @p snapshots snapshots; the caller sets the parameters it works with. */
static void model_on_path(model_kind kind, int layers, int snapshots, const double (*features)[3], snapshot_seq *seq,
                          model *m)
{
    tf_error err;
    path_of_three(seq, snapshots, features);
    model_config config = {kind, 1, 1, 1, 2, layers};
    ck_assert_int_eq(model_create(m, &config, 3, &err), TF_OK);
}

/* (A^ x)_v on that path: A^ = D^-1/2 (A + I) D^-1/2, degrees (self loop included) 2, 3, 2, so
 * A^_vu = 1 / sqrt(d_v d_u) for u = v and v's path neighbours, 0 elsewhere. */
static double gcn_on_path(const double x[3], int v)
{
    const double degree[3] = {2, 3, 2};
    double aggregated = 0;
    for (int u = v - 1; u <= v + 1; u++)
        if (u >= 0 && u < 3)
            aggregated += x[u] / sqrt(degree[v] * degree[u]);
    return aggregated;
}

/* Prints snapshot @p t's @p label and the three values of @p v to four places, one line. */
static void print_three(int t, const char *label, const double v[3])
{
    printf("  snapshot %d  %-3s  %7.4f %7.4f %7.4f\n", t, label, v[0], v[1], v[2]);
}

/* Chapter 01a's worked example: T-GCN on the path 0 - 1 - 2, one feature, H = 1, every weight 1 and
 * every bias 0, two snapshots from H = 0 (x = (1, 0, 2), then (0, 1, 0)). Worked out here in double
 * from the equations with nothing of ref/: C_g = A^ x for every gate, Z = R = sigmoid(A^ x + H),
 * H~ = tanh(A^ x + R H), H' = Z H + (1 - Z) H~, y = ReLU(H'). The numbers printed are the hand
 * computation's, the ones the chapter shows; the aggregation ref_propagate_forward() computes and the
 * states and predictions model_forward() computes must equal them. */
START_TEST(tgcn_worked_by_hand)
{
    const double features[2][3] = {{1.0, 0.0, 2.0}, {0.0, 1.0, 0.0}};
    tf_error err;
    snapshot_seq seq;
    model m;
    model_on_path(MODEL_TGCN, 0, 2, features, &seq, &m);
    for (int64_t i = 0; i < m.parameters.count; i++) {
        const parameter *p = &m.parameters.items[i];
        const int bias = strstr(p->name, "bias") != NULL;
        for (int64_t j = 0; j < p->value.size; j++)
            p->value.data[j] = bias ? 0.0f : 1.0f;
    }
    float predictions[2][3];
    window_tape tape;
    ck_assert_int_eq(model_forward(&m, &seq, 0, 2, &tape, &predictions[0][0], &err), TF_OK);
    double worst = 0, state[3] = {0, 0, 0};
    printf("tgcn worked by hand (path 0 - 1 - 2, one feature, H = 1, weights 1, biases 0), vertices 0 1 2:\n");
    for (int t = 0; t < 2; t++) {
        propagation graph;
        float x[3], aggregated_by_ref[3];
        for (int v = 0; v < 3; v++)
            x[v] = (float)features[t][v];
        ck_assert_int_eq(model_gcn_operator(&m, &graph, &seq, t, &err), TF_OK);
        ref_propagate_forward(&graph, x, 1, aggregated_by_ref);
        ref_propagation_free(&graph);
        double aggregated[3], z[3], candidate[3];
        for (int v = 0; v < 3; v++) {
            aggregated[v] = gcn_on_path(features[t], v);
            z[v] = sigmoid(aggregated[v] + state[v]); /* R is the same expression */
            candidate[v] = tanh(aggregated[v] + z[v] * state[v]);
            state[v] = z[v] * state[v] + (1 - z[v]) * candidate[v];
            const double model_state = tape.states[t * 3 + v];
            worst = fmax(worst, fabs(aggregated_by_ref[v] - aggregated[v]));
            worst = fmax(worst, fabs(model_state - state[v]));
            worst = fmax(worst, fabs(predictions[t][v] - fmax(0.0, state[v])));
        }
        print_three(t + 1, "A^x", aggregated);
        print_three(t + 1, "Z", z);
        print_three(t + 1, "H~", candidate);
        print_three(t + 1, "H'", state);
    }
    printf("tgcn worked by hand: A^x, H' and y of ref/ against the hand computation, max error %.2e\n", worst);
    ck_assert_msg(worst <= 1e-6, "T-GCN differs from the hand computation by %g", worst);
    window_tape_free(&m, &tape);
    model_free(&m);
    snapshot_seq_free(&seq);
}
END_TEST

/* The two-layer T-GCN on the path 0 - 1 - 2, one feature, H = 1, one snapshot from H = 0, worked out
 * here in double from the paper's equations with nothing of ref/: A^ = D^-1/2 (A + I) D^-1/2 with
 * degrees (self loop included) 2, 3, 2, so A^_ij = 1 / sqrt(d_i d_j) on the path and its loops;
 * C_g = sigmoid(A^ ReLU(A^ x w0_g + b0_g) w1_g + b1_g), Z = sigmoid(l_z0 C_z + c_z), H~ = tanh(l_h0 C_h
 * + c_h) (H = 0 zeroes the other terms), H' = (1 - Z) H~, y = w ReLU(H') + b. Vertex 0's output reads
 * x_2, two hops away: a second feature vector that changes x_2 alone must change it. */
START_TEST(tgcn2_worked_by_hand)
{
    const double features[2][3] = {{0.5, -1.0, 2.0}, {0.5, -1.0, -0.7}};
    static const char *const gates[3] = {"z", "r", "h"};
    /* per gate: b0, w0, b1, w1, the linear's two weights and its bias */
    const double set[3][7] = {{0.1, 0.8, -0.2, 1.3, 0.7, -0.4, 0.05}, {-0.3, 0.5, 0.2, -0.9, 0.3, 0.6, -0.1},
                              {0.2, -1.1, 0.1, 0.9, 1.2, 0.8, 0.3}};
    const double head_w = 1.5, head_b = -0.25;
    double worst = 0, change = 0, first_output = 0;
    for (int variant = 0; variant < 2; variant++) {
        tf_error err;
        snapshot_seq seq;
        model m;
        model_on_path(MODEL_TGCN2, 0, 1, &features[variant], &seq, &m);
        for (int g = 0; g < 3; g++) {
            char name[64];
            const char *roles[6] = {"conv_%s.0.bias", "conv_%s.0.lin.weight", "conv_%s.1.bias", "conv_%s.1.lin.weight",
                                    "linear_%s.weight", "linear_%s.bias"};
            for (int r = 0; r < 6; r++) {
                char role[32];
                snprintf(role, sizeof role, roles[r], gates[g]);
                snprintf(name, sizeof name, "recurrent.%s", role);
                value_of(&m, name)[0] = (float)set[g][r < 5 ? r : 6];
                if (r == 4)
                    value_of(&m, name)[1] = (float)set[g][5];
            }
        }
        value_of(&m, "linear.weight")[0] = (float)head_w;
        value_of(&m, "linear.bias")[0] = (float)head_b;
        float predictions[3];
        window_tape tape;
        ck_assert_int_eq(model_forward(&m, &seq, 0, 1, &tape, predictions, &err), TF_OK);
        window_tape_free(&m, &tape);
        for (int v = 0; v < 3; v++) {
            double convolved[3];
            for (int g = 0; g < 3; g++) {
                double first[3]; /* ReLU(A^ x w0 + b0) */
                for (int u = 0; u < 3; u++)
                    first[u] = fmax(0.0, gcn_on_path(features[variant], u) * set[g][1] + set[g][0]);
                convolved[g] = sigmoid(gcn_on_path(first, v) * set[g][3] + set[g][2]);
            }
            const double z = sigmoid(set[0][4] * convolved[0] + set[0][6]);
            const double candidate = tanh(set[2][4] * convolved[2] + set[2][6]);
            const double expected = head_w * fmax(0.0, (1 - z) * candidate) + head_b;
            worst = fmax(worst, fabs(predictions[v] - expected) / fmax(1.0, fabs(expected)));
            if (v == 0 && variant == 0)
                first_output = predictions[0];
            if (v == 0 && variant == 1)
                change = fabs(predictions[0] - first_output);
        }
        model_free(&m);
        snapshot_seq_free(&seq);
    }
    printf("tgcn2 worked by hand (path of 3, H = 1): max error %.2e; vertex 0's output moved %.3e when only x_2 "
           "(two hops away) changed\n", worst, change);
    ck_assert_msg(worst <= TOLERANCE, "the two-layer T-GCN differs from the hand computation by %g", worst);
    ck_assert_msg(change > 1e-4, "vertex 0 does not see x_2 two hops away (moved %g)", change);
}
END_TEST

/* WD-GCN on the same path over two snapshots (the second with other features, so the LSTM's state
 * carries something), one feature, H = 1, worked out here in double from the paper's equations:
 * Z_t = ReLU(A^ x_t theta + b), then per vertex i, f, o = sigmoid(w_q z + u_q h + b_q + b'_q),
 * g = tanh(...), c' = f c + i g, h' = o tanh(c'), y = w ReLU(h') + b, from h = c = 0. */
START_TEST(wdgcn_worked_by_hand)
{
    const double features[2][3] = {{0.5, -1.0, 2.0}, {1.5, 0.3, -0.7}};
    const double conv_bias = 0.1, conv_weight = 0.8, head_w = 1.5, head_b = -0.25;
    /* i, f, g, o: weight_ih, weight_hh, bias_ih, bias_hh */
    const double lstm[4][4] = {{0.7, -0.4, 0.05, 0.1}, {0.3, 0.6, -0.1, 0.2}, {1.2, 0.8, 0.3, -0.2},
                               {-0.5, 0.9, 0.2, 0.0}};
    tf_error err;
    snapshot_seq seq;
    model m;
    model_on_path(MODEL_WDGCN, 0, 2, features, &seq, &m);
    value_of(&m, "recurrent.conv.bias")[0] = (float)conv_bias;
    value_of(&m, "recurrent.conv.lin.weight")[0] = (float)conv_weight;
    static const char *const lstm_names[4] = {"recurrent.lstm.weight_ih_l0", "recurrent.lstm.weight_hh_l0",
                                              "recurrent.lstm.bias_ih_l0", "recurrent.lstm.bias_hh_l0"};
    for (int which = 0; which < 4; which++)
        for (int q = 0; q < 4; q++)
            value_of(&m, lstm_names[which])[q] = (float)lstm[q][which];
    value_of(&m, "linear.weight")[0] = (float)head_w;
    value_of(&m, "linear.bias")[0] = (float)head_b;
    float predictions[2][3];
    window_tape tape;
    ck_assert_int_eq(model_forward(&m, &seq, 0, 2, &tape, &predictions[0][0], &err), TF_OK);
    window_tape_free(&m, &tape);
    double worst = 0, state[3] = {0, 0, 0}, cell[3] = {0, 0, 0};
    for (int t = 0; t < 2; t++)
        for (int v = 0; v < 3; v++) {
            const double z = fmax(0.0, gcn_on_path(features[t], v) * conv_weight + conv_bias);
            double pre[4];
            for (int q = 0; q < 4; q++)
                pre[q] = lstm[q][0] * z + lstm[q][1] * state[v] + lstm[q][2] + lstm[q][3];
            lstm_by_hand(pre, &cell[v], &state[v]);
            const double expected = head_w * fmax(0.0, state[v]) + head_b;
            worst = fmax(worst, fabs(predictions[t][v] - expected) / fmax(1.0, fabs(expected)));
        }
    printf("wdgcn worked by hand (path of 3, H = 1, 2 snapshots): max error %.2e\n", worst);
    ck_assert_msg(worst <= TOLERANCE, "WD-GCN differs from the hand computation by %g", worst);
    model_free(&m);
    snapshot_seq_free(&seq);
}
END_TEST

/* GCRN-M1 with two pairs, K = 2, on the same path over two snapshots, one feature, H = 1, worked out
 * here in double: L^ = -D^-1/2 A D^-1/2 (PyTorch Geometric's ChebConv with lambda_max = 2; degrees 1,
 * 2, 1), so (L^ u)_v = -sum over the path's neighbours w of u_w / sqrt(d_v d_w); each pair
 * z = theta0 u + theta1 L^ u + b, then the LSTM with peepholes: i = sigmoid(a_i + p_i c),
 * f = sigmoid(a_f + p_f c), g = tanh(a_g), c' = f c + i g, o = sigmoid(a_o + p_o c'), h' = o tanh(c'),
 * with a_q = w_q z + u_q h + b_q + b'_q; pair 2 reads pair 1's h'; y = w ReLU(h'_2) + b. */
START_TEST(gcrnm1_worked_by_hand)
{
    const double degree[3] = {1, 2, 1};
    const double features[2][3] = {{0.5, -1.0, 2.0}, {1.5, 0.3, -0.7}};
    /* per pair: conv bias, theta0, theta1; then per gate i, f, g, o: w, u, b, b'; then p_i, p_f, p_o */
    const double conv[2][3] = {{0.1, 0.8, -0.6}, {-0.2, 1.1, 0.4}};
    const double gates[2][4][4] = {{{0.7, -0.4, 0.05, 0.1}, {0.3, 0.6, -0.1, 0.2}, {1.2, 0.8, 0.3, -0.2},
                                    {-0.5, 0.9, 0.2, 0.0}},
                                   {{0.4, 0.5, -0.3, 0.1}, {-0.6, 0.2, 0.3, 0.0}, {0.9, -0.7, 0.1, 0.2},
                                    {0.8, 0.3, -0.1, 0.1}}};
    const double peepholes[2][3] = {{0.3, -0.5, 0.7}, {-0.4, 0.6, 0.2}};
    const double head_w = 1.5, head_b = -0.25;
    tf_error err;
    snapshot_seq seq;
    model m;
    model_on_path(MODEL_GCRNM1, 2, 2, features, &seq, &m);
    static const char *const lstm_names[4] = {"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"};
    static const char *const peephole_names[3] = {"w_c_i", "w_c_f", "w_c_o"};
    for (int l = 0; l < 2; l++) {
        char name[96];
        snprintf(name, sizeof name, "recurrent.layers.%d.conv.bias", l);
        value_of(&m, name)[0] = (float)conv[l][0];
        for (int k = 0; k < 2; k++) {
            snprintf(name, sizeof name, "recurrent.layers.%d.conv.lins.%d.weight", l, k);
            value_of(&m, name)[0] = (float)conv[l][1 + k];
        }
        for (int which = 0; which < 4; which++)
            for (int q = 0; q < 4; q++) {
                snprintf(name, sizeof name, "recurrent.layers.%d.lstm.%s", l, lstm_names[which]);
                value_of(&m, name)[q] = (float)gates[l][q][which];
            }
        for (int p = 0; p < 3; p++) {
            snprintf(name, sizeof name, "recurrent.layers.%d.lstm.%s", l, peephole_names[p]);
            value_of(&m, name)[0] = (float)peepholes[l][p];
        }
    }
    value_of(&m, "linear.weight")[0] = (float)head_w;
    value_of(&m, "linear.bias")[0] = (float)head_b;
    float predictions[2][3];
    window_tape tape;
    ck_assert_int_eq(model_forward(&m, &seq, 0, 2, &tape, &predictions[0][0], &err), TF_OK);
    window_tape_free(&m, &tape);
    double worst = 0, state[2][3] = {{0}}, cell[2][3] = {{0}};
    for (int t = 0; t < 2; t++) {
        double input[3] = {features[t][0], features[t][1], features[t][2]};
        for (int l = 0; l < 2; l++) {
            for (int v = 0; v < 3; v++) {
                double laplacian = 0; /* (L^ u)_v */
                for (int w = v - 1; w <= v + 1; w += 2)
                    if (w >= 0 && w < 3)
                        laplacian -= input[w] / sqrt(degree[v] * degree[w]);
                const double z = conv[l][1] * input[v] + conv[l][2] * laplacian + conv[l][0];
                double a[4];
                for (int q = 0; q < 4; q++)
                    a[q] = gates[l][q][0] * z + gates[l][q][1] * state[l][v] + gates[l][q][2] + gates[l][q][3];
                const double in = sigmoid(a[0] + peepholes[l][0] * cell[l][v]);
                const double forget = sigmoid(a[1] + peepholes[l][1] * cell[l][v]);
                cell[l][v] = forget * cell[l][v] + in * tanh(a[2]);
                state[l][v] = sigmoid(a[3] + peepholes[l][2] * cell[l][v]) * tanh(cell[l][v]);
            }
            for (int v = 0; v < 3; v++)
                input[v] = state[l][v]; /* the next pair's input */
        }
        for (int v = 0; v < 3; v++) {
            const double expected = head_w * fmax(0.0, state[1][v]) + head_b;
            worst = fmax(worst, fabs(predictions[t][v] - expected) / fmax(1.0, fabs(expected)));
        }
    }
    printf("gcrnm1 worked by hand (2 pairs, K = 2, path of 3, H = 1, 2 snapshots): max error %.2e\n", worst);
    ck_assert_msg(worst <= TOLERANCE, "GCRN-M1 differs from the hand computation by %g", worst);
    model_free(&m);
    snapshot_seq_free(&seq);
}
END_TEST

/* CD-GCN with two pairs on the same path over two snapshots, one feature, H = 1, worked out here in
 * double from the equations (ref/models/model_cdgcn.c): per pair, G = ReLU(theta . (A^ u) + b) with
 * A^ = D^-1/2 (A + I) D^-1/2 (degrees 2, 3, 2), V = [u | G], the LSTM on V, U = [V | h']; pair 2 reads
 * pair 1's U (3 wide) and the head reads ReLU of pair 2's U (5 wide: x, G_1, h'_1, G_2, h'_2). The
 * parameters are filled with a fixed pattern and read back as the model holds them. */
START_TEST(cdgcn_worked_by_hand)
{
    const double features[2][3] = {{0.5, -1.0, 2.0}, {1.5, 0.3, -0.7}};
    tf_error err;
    snapshot_seq seq;
    model m;
    model_on_path(MODEL_CDGCN, 2, 2, features, &seq, &m);
    ck_assert_int_eq(model_state_width(&m), 5);
    for (int64_t i = 0, counter = 0; i < m.parameters.count; i++)
        for (int64_t j = 0; j < m.parameters.items[i].value.size; j++, counter++)
            m.parameters.items[i].value.data[j] = (float)(0.9 * sin(1.7 * (double)counter + 0.3));
    float predictions[2][3];
    window_tape tape;
    ck_assert_int_eq(model_forward(&m, &seq, 0, 2, &tape, &predictions[0][0], &err), TF_OK);
    window_tape_free(&m, &tape);
    double worst = 0, state[2][3] = {{0}}, cell[2][3] = {{0}};
    for (int t = 0; t < 2; t++) {
        double u[3][5]; /* each vertex's U_{l-1}, then U_l */
        for (int v = 0; v < 3; v++)
            u[v][0] = features[t][v];
        for (int l = 0; l < 2; l++) {
            const int w = 1 + 2 * l;
            char name[96];
#define PAIR(what) (snprintf(name, sizeof name, "recurrent.layers.%d.%s", l, what), value_of(&m, name))
            const float *theta = PAIR("conv.lin.weight"), *b = PAIR("conv.bias"), *w_ih = PAIR("lstm.weight_ih_l0"),
                        *w_hh = PAIR("lstm.weight_hh_l0"), *b_ih = PAIR("lstm.bias_ih_l0"), *b_hh = PAIR("lstm.bias_hh_l0");
#undef PAIR
            double next[3][5];
            for (int v = 0; v < 3; v++) {
                double g = b[0];
                for (int j = 0; j < w; j++) {
                    const double column[3] = {u[0][j], u[1][j], u[2][j]};
                    g += theta[j] * gcn_on_path(column, v);
                }
                for (int j = 0; j < w; j++)
                    next[v][j] = u[v][j];
                next[v][w] = fmax(0.0, g);
                double a[4];
                for (int q = 0; q < 4; q++) {
                    a[q] = w_hh[q] * state[l][v] + b_ih[q] + b_hh[q];
                    for (int j = 0; j <= w; j++)
                        a[q] += w_ih[q * (w + 1) + j] * next[v][j];
                }
                lstm_by_hand(a, &cell[l][v], &state[l][v]);
                next[v][w + 1] = state[l][v];
            }
            memcpy(u, next, sizeof u);
        }
        const float *head_w = value_of(&m, "linear.weight"), *head_b = value_of(&m, "linear.bias");
        for (int v = 0; v < 3; v++) {
            double expected = head_b[0];
            for (int j = 0; j < 5; j++)
                expected += head_w[j] * fmax(0.0, u[v][j]);
            worst = fmax(worst, fabs(predictions[t][v] - expected) / fmax(1.0, fabs(expected)));
        }
    }
    printf("cdgcn worked by hand (2 pairs, path of 3, H = 1, 2 snapshots, output 5 wide): max error %.2e\n", worst);
    ck_assert_msg(worst <= TOLERANCE, "CD-GCN differs from the hand computation by %g", worst);
    model_free(&m);
    snapshot_seq_free(&seq);
}
END_TEST

/* ---- the graph attention layer against PyTorch Geometric's GATConv ------------------------------- */

/* bench/peer/peer_gatconv.py's cases: name, heads, channels per head, concat. */
static const struct gat_case {
    const char *name;
    int64_t heads, channels;
    int concat;
} gat_cases[] = {{"concat", 3, 4, 1}, {"mean", 2, 3, 0}};

/* Golden file verify/golden/gat/CASE/NAME.npy. */
static void gat_golden(const char *case_name, const char *file, npy_array *out)
{
    char relative[512];
    tf_error err;
    snprintf(relative, sizeof relative, "verify/golden/gat/%s/%s.npy", case_name, file);
    ck_assert_msg(npy_read(source_path(relative), out, &err) == TF_OK, "%s", err.message);
}

/* GATConv(x, edge_index) and the gradients of sum(r * out) as PyG computed them, against
 * ref_graph_attention_forward() and _backward() on the same graph, inputs and parameters. */
START_TEST(gat_matches_pytorch_geometric)
{
    const struct gat_case *c = &gat_cases[_i];
    tf_error err;
    npy_array x, edges, r, expected_out, expected_dx;
    gat_golden(c->name, "x", &x);
    gat_golden(c->name, "edge_index", &edges);
    gat_golden(c->name, "r", &r);
    gat_golden(c->name, "out", &expected_out);
    gat_golden(c->name, "grad.x", &expected_dx);
    ck_assert_int_eq(edges.dtype, NPY_INT64);
    const int64_t n = x.shape[0], features = x.shape[1], edge_count = edges.shape[1];
    int32_t *src = malloc((size_t)edge_count * sizeof *src), *dst = malloc((size_t)edge_count * sizeof *dst);
    for (int64_t e = 0; e < edge_count; e++) {
        src[e] = (int32_t)((int64_t *)edges.data)[e];
        dst[e] = (int32_t)((int64_t *)edges.data)[edge_count + e];
    }
    csr g;
    ck_assert_msg(csr_from_edges(&g, n, edge_count, src, dst, NULL, &err) == TF_OK, "%s", err.message);
    propagation p = {.graph = &g};
    parameter_list list = {0};
    const int64_t width = c->concat ? c->heads * c->channels : c->channels;
    int64_t vector_shape[3] = {1, c->heads, c->channels}, bias_shape[1] = {width},
            weight_shape[2] = {c->heads * c->channels, features};
    ck_assert(parameters_add(&list, "att_src", 3, vector_shape, &err) >= 0 &&
              parameters_add(&list, "att_dst", 3, vector_shape, &err) >= 0 &&
              parameters_add(&list, "bias", 1, bias_shape, &err) >= 0 &&
              parameters_add(&list, "lin.weight", 2, weight_shape, &err) >= 0);
    char directory[512];
    snprintf(directory, sizeof directory, "verify/golden/gat/%s", c->name);
    ck_assert_msg(parameters_load(&list, source_path(directory), &err) == TF_OK, "%s", err.message);
    graph_attention a = {features, c->channels, c->heads, c->concat, &list.items[0], &list.items[1], &list.items[2],
                         &list.items[3]};
    workspace scratch;
    workspace_init(&scratch);
    graph_attention_tape tape;
    float *out = calloc((size_t)(n * width), sizeof *out), *dx = calloc((size_t)(n * features), sizeof *dx);
    ck_assert_int_eq(ref_graph_attention_forward(&ref_kernels, &a, &p, x.data, &scratch, &tape, out, &err), TF_OK);
    ck_assert_int_eq(ref_graph_attention_backward(&ref_kernels, &a, &p, &tape, r.data, dx, &scratch, &err), TF_OK);
    double out_error = relative_error(out, expected_out.data, n * width);
    double dx_error = relative_error(dx, expected_dx.data, n * features), worst_parameter = 0;
    for (int64_t i = 0; i < list.count; i++) {
        char file[128];
        npy_array expected;
        snprintf(file, sizeof file, "grad.%s", list.items[i].name);
        gat_golden(c->name, file, &expected);
        worst_parameter = fmax(worst_parameter, relative_error(list.items[i].grad.data, expected.data, expected.size));
        npy_free(&expected);
    }
    printf("GATConv %s (%lld vertices, %lld edges, %lld heads of %lld): output %.2e, dx %.2e, parameter "
           "gradients %.2e\n", c->name, (long long)n, (long long)edge_count, (long long)c->heads,
           (long long)c->channels, out_error, dx_error, worst_parameter);
    ck_assert_msg(out_error <= TOLERANCE && dx_error <= TOLERANCE && worst_parameter <= TOLERANCE,
                  "GAT %s differs from PyG's GATConv", c->name);
    workspace_free(&scratch);
    parameters_free(&list);
    csr_free(&g);
    free(src), free(dst), free(out), free(dx);
    npy_free(&x), npy_free(&edges), npy_free(&r), npy_free(&expected_out), npy_free(&expected_dx);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("models_peer");
    TCase *peer = tcase_create("peer");
    tcase_set_timeout(peer, 300);
    tcase_add_loop_test(peer, matches_pytorch_geometric_temporal, 0, (int)(sizeof cases / sizeof *cases));
    tcase_add_loop_test(peer, gat_matches_pytorch_geometric, 0, (int)(sizeof gat_cases / sizeof *gat_cases));
    suite_add_tcase(suite, peer);
    /* A case of its own, so that CK_RUN_CASE=by_hand runs the hand-worked examples alone (chapter
     * 01a's worked example), without the peer cases' seconds on twitter_tennis. */
    TCase *by_hand = tcase_create("by_hand");
    tcase_add_test(by_hand, tgcn_worked_by_hand);
    tcase_add_test(by_hand, tgcn2_worked_by_hand);
    tcase_add_test(by_hand, wdgcn_worked_by_hand);
    tcase_add_test(by_hand, gcrnm1_worked_by_hand);
    tcase_add_test(by_hand, cdgcn_worked_by_hand);
    suite_add_tcase(suite, by_hand);
    const int status = run_suite(suite);
    shared_snapshots_free();
    return status;
}
