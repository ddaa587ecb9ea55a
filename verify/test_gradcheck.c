/* Every backward in ref/ against central finite differences.
 *
 * For a function y = f(x, params) the check builds the scalar L = sum(r * y) with a fixed
 * random r, gets the analytic gradients by running the backward with dy = r, and compares
 * each of them with (L(v + h) - L(v - h)) / 2h for every element v (loss accumulated in
 * double, parameters and activations float32).
 *
 * Error measure: |analytic - numeric| / max(1, |numeric|), the project's "fp" measure.
 * Tolerance, from float32 arithmetic: with h = 1e-3 the truncation error of a central
 * difference is h^2 |f'''| / 6 ~ 1e-7 for these smooth functions, and rounding in L is about
 * 6e-8 |L| per evaluation, divided by 2h: ~3e-5 |L|, so ~3e-4 at worst for |L| up to 10. A
 * correct backward stays below 1e-3; a wrong one (a missing term, a transposed weight) is off
 * by O(1). Each check prints the worst error it measured.
 *
 * ReLU has a kink at 0 where no difference quotient converges: the layer check keeps its
 * inputs away from it; in the whole-model checks (ReLU in the head) a step of 1e-3 crosses it
 * only if a state lies within 1e-3 of zero. With h = 1e-2 that happens here and T-GCN and
 * EvolveGCN-O then show errors of ~3e-3 and ~8e-3 while h = 1e-3 and 3e-3 agree to 1e-5: the
 * kink, not the backward, which is why the step is 1e-3. */
#include <math.h>

#include "ref/nn/chebconv.h"
#include "ref/nn/graph_attention.h"
#include "ref/nn/layers.h"
#include "ref/models/classify_task.h"
#include "ref/models/link_task.h"
#include "ref/models/model.h"
#include "ref/nn/propagate.h"
#include "ref/nn/recurrent.h"
#include "ref/nn/self_attention.h"
#include "ref/core/rng.h"
#include "verify/gradcheck.h"
#include "verify/testing.h"

/* ---- dense layers ------------------------------------------------------------------------ */

enum { ROWS = 5, IN = 3, OUT = 4 };

typedef struct linear_case {
    float *x, *weight, *bias, *r, *y;
    int matmul;
} linear_case;

static double linear_loss(void *context)
{
    linear_case *c = context;
    if (c->matmul) {
        memset(c->y, 0, sizeof(float) * ROWS * OUT);
        ref_matmul_accumulate(c->x, c->weight, ROWS, IN, OUT, c->y);
    } else {
        ref_linear_forward(c->x, c->weight, c->bias, ROWS, IN, OUT, c->y);
    }
    return projected(c->r, c->y, ROWS * OUT);
}

START_TEST(linear_and_matmul)
{
    rng r;
    rng_seed(&r, 1);
    for (int matmul = 0; matmul < 2; matmul++) {
        linear_case c = {random_array(ROWS * IN, 1, &r), random_array(IN * OUT, 1, &r), random_array(OUT, 1, &r),
                         random_array(ROWS * OUT, 1, &r), zero_array(ROWS * OUT), matmul};
        float *dx = zero_array(ROWS * IN), *dweight = zero_array(IN * OUT), *dbias = zero_array(OUT);
        if (matmul)
            ref_matmul_backward(c.x, c.weight, c.r, ROWS, IN, OUT, dx, dweight);
        else
            ref_linear_backward(c.x, c.weight, c.r, ROWS, IN, OUT, dx, dweight, dbias);
        report(matmul ? "matmul dx" : "linear dx", finite_difference_error(linear_loss, &c, c.x, dx, ROWS * IN));
        report(matmul ? "matmul dweight" : "linear dweight",
               finite_difference_error(linear_loss, &c, c.weight, dweight, IN * OUT));
        if (!matmul)
            report("linear dbias", finite_difference_error(linear_loss, &c, c.bias, dbias, OUT));
        free(c.x), free(c.weight), free(c.bias), free(c.r), free(c.y), free(dx), free(dweight), free(dbias);
    }
}
END_TEST

typedef struct activation_case {
    float *x, *y, *r;
    int64_t count;
    int which; /* 0 sigmoid, 1 tanh, 2 relu */
} activation_case;

static double activation_loss(void *context)
{
    activation_case *c = context;
    if (c->which == 0)
        ref_sigmoid_forward(c->x, c->count, c->y);
    else if (c->which == 1)
        ref_tanh_forward(c->x, c->count, c->y);
    else
        ref_relu_forward(c->x, c->count, c->y);
    return projected(c->r, c->y, c->count);
}

START_TEST(activations)
{
    static const char *names[3] = {"sigmoid", "tanh", "relu"};
    rng r;
    rng_seed(&r, 2);
    for (int which = 0; which < 3; which++) {
        activation_case c = {random_array(40, 2, &r), zero_array(40), random_array(40, 1, &r), 40, which};
        for (int64_t i = 0; i < c.count; i++) /* keep ReLU's inputs a step away from its kink at 0 */
            if (fabsf(c.x[i]) < 0.1f)
                c.x[i] = c.x[i] < 0 ? -0.5f : 0.5f;
        float *dx = zero_array(c.count);
        activation_loss(&c);
        if (which == 0)
            ref_sigmoid_backward(c.y, c.r, c.count, dx);
        else if (which == 1)
            ref_tanh_backward(c.y, c.r, c.count, dx);
        else
            ref_relu_backward(c.y, c.r, c.count, dx);
        char what[64];
        snprintf(what, sizeof what, "%s dx", names[which]);
        report(what, finite_difference_error(activation_loss, &c, c.x, dx, c.count));
        free(c.x), free(c.y), free(c.r), free(dx);
    }
}
END_TEST

typedef struct loss_case {
    float *prediction, *target;
    int32_t *labels;
    uint8_t *mask;
} loss_case;

static double mse_value(void *context)
{
    loss_case *c = context;
    return ref_mse_loss(c->prediction, c->target, c->mask, ROWS, OUT, 1.0f, NULL);
}

static double cross_entropy_value(void *context)
{
    loss_case *c = context;
    return ref_cross_entropy_loss(c->prediction, c->labels, c->mask, ROWS, OUT, 1.0f, NULL);
}

START_TEST(losses)
{
    rng r;
    rng_seed(&r, 3);
    int32_t labels[ROWS] = {0, 3, 1, 2, 3};
    uint8_t mask[ROWS] = {1, 1, 0, 1, 1}; /* row 2 must get no gradient */
    loss_case c = {random_array(ROWS * OUT, 2, &r), random_array(ROWS * OUT, 2, &r), labels, mask};
    float *d = zero_array(ROWS * OUT);
    ref_mse_loss(c.prediction, c.target, c.mask, ROWS, OUT, 1.0f, d);
    report("mse dprediction (masked row)", finite_difference_error(mse_value, &c, c.prediction, d, ROWS * OUT));
    ref_cross_entropy_loss(c.prediction, c.labels, c.mask, ROWS, OUT, 1.0f, d);
    report("cross-entropy dlogits (masked row)",
           finite_difference_error(cross_entropy_value, &c, c.prediction, d, ROWS * OUT));
    free(c.prediction), free(c.target), free(d);
}
END_TEST

/* ---- graph propagation --------------------------------------------------------------------- */

/* A small directed weighted graph with a self loop, a duplicate edge and an isolated vertex. */
static void small_graph(csr *g)
{
    int32_t src[] = {0, 1, 2, 3, 3, 1, 4, 2, 2, 0};
    int32_t dst[] = {1, 2, 0, 3, 1, 0, 1, 4, 4, 4};
    float weight[] = {1.0f, 0.5f, 2.0f, 0.7f, 1.5f, 1.0f, 0.3f, 0.8f, 0.8f, 1.2f};
    tf_error err;
    ck_assert(csr_from_edges(g, 6, 10, src, dst, weight, &err) == TF_OK);
}

typedef struct propagate_case {
    propagation *p;
    float *x, *y, *r;
    int64_t width;
    int chebyshev_terms; /* 0: plain propagation; K: Chebyshev basis of K terms */
} propagate_case;

static double propagate_loss(void *context)
{
    propagate_case *c = context;
    int64_t n = c->p->graph->num_nodes;
    if (c->chebyshev_terms == 0) {
        ref_propagate_forward(c->p, c->x, c->width, c->y);
        return projected(c->r, c->y, n * c->width);
    }
    chebyshev_basis_forward(&ref_kernels, c->p, c->x, c->width, c->chebyshev_terms, c->y);
    return projected(c->r, c->y, c->chebyshev_terms * n * c->width);
}

START_TEST(propagation_operators)
{
    csr g;
    small_graph(&g);
    rng r;
    rng_seed(&r, 4);
    const int64_t n = g.num_nodes, width = 3;
    static const char *kinds[3] = {"sum", "mean", "symmetric"};
    tf_error err;
    for (int kind = 0; kind < 3; kind++)
        for (int loops = 0; loops < 2; loops++) {
            propagation p;
            ck_assert(ref_propagation_gcn(&p, &g, (edge_normalization)kind, loops, &err) == TF_OK);
            propagate_case c = {&p, random_array(n * width, 1, &r), zero_array(n * width),
                                random_array(n * width, 1, &r), width, 0};
            float *dx = zero_array(n * width);
            ref_propagate_backward(&p, c.r, width, dx);
            char what[64];
            snprintf(what, sizeof what, "propagate %s%s dx", kinds[kind], loops ? " + self loops" : "");
            report(what, finite_difference_error(propagate_loss, &c, c.x, dx, n * width));
            free(c.x), free(c.y), free(c.r), free(dx);
            ref_propagation_free(&p);
        }
    for (int k = 1; k <= 4; k++) {
        propagation p;
        ck_assert(ref_propagation_chebyshev(&p, &g, &err) == TF_OK);
        propagate_case c = {&p, random_array(n * width, 1, &r), zero_array(k * n * width),
                            random_array(k * n * width, 1, &r), width, k};
        float *dx = zero_array(n * width), *scratch = zero_array(k * n * width);
        memcpy(scratch, c.r, sizeof(float) * (size_t)(k * n * width));
        chebyshev_basis_backward(&ref_kernels, &p, scratch, width, k, dx);
        char what[64];
        snprintf(what, sizeof what, "chebyshev basis K=%d dx", k);
        report(what, finite_difference_error(propagate_loss, &c, c.x, dx, n * width));
        free(c.x), free(c.y), free(c.r), free(dx), free(scratch);
        ref_propagation_free(&p);
    }
    csr_free(&g);
}
END_TEST

/* ---- graph attention ----------------------------------------------------------------------- */

typedef struct attention_case {
    graph_attention *a;
    propagation *p;
    float *x, *y, *r;
    workspace *scratch;
} attention_case;

static double attention_loss(void *context)
{
    attention_case *c = context;
    graph_attention_tape tape;
    tf_error err;
    ck_assert(ref_graph_attention_forward(&ref_kernels, c->a, c->p, c->x, c->scratch, &tape, c->y, &err) == TF_OK);
    workspace_reset(c->scratch);
    return projected(c->r, c->y, c->p->graph->num_nodes * graph_attention_width(c->a));
}

/* GAT on the small graph (its stored loop removed and rebuilt, a duplicate edge, a vertex
 * without in-edges), two heads concatenated and averaged: dx and every parameter. */
START_TEST(graph_attention_layer)
{
    csr g;
    small_graph(&g);
    propagation p = {.graph = &g};
    rng r;
    rng_seed(&r, 6);
    const int64_t n = g.num_nodes, features = 3, heads = 2, channels = 3;
    tf_error err;
    for (int concat = 0; concat < 2; concat++) {
        const int64_t width = concat ? heads * channels : channels;
        parameter_list list = {0};
        int64_t vector_shape[3] = {1, heads, channels}, bias_shape[1] = {width}, weight_shape[2] = {heads * channels, features};
        ck_assert(parameters_add(&list, "att_src", 3, vector_shape, &err) >= 0 &&
                  parameters_add(&list, "att_dst", 3, vector_shape, &err) >= 0 &&
                  parameters_add(&list, "bias", 1, bias_shape, &err) >= 0 &&
                  parameters_add(&list, "lin.weight", 2, weight_shape, &err) >= 0);
        for (int64_t i = 0; i < list.count; i++)
            fill_random(list.items[i].value.data, list.items[i].value.size, 1, &r);
        graph_attention a = {features, channels, heads, concat, &list.items[0], &list.items[1], &list.items[2],
                             &list.items[3]};
        workspace scratch;
        workspace_init(&scratch);
        attention_case c = {&a, &p, random_array(n * features, 1, &r), zero_array(n * width),
                            random_array(n * width, 1, &r), &scratch};
        float *dx = zero_array(n * features);
        graph_attention_tape tape;
        ck_assert(ref_graph_attention_forward(&ref_kernels, &a, &p, c.x, &scratch, &tape, c.y, &err) == TF_OK);
        ck_assert(ref_graph_attention_backward(&ref_kernels, &a, &p, &tape, c.r, dx, &scratch, &err) == TF_OK);
        workspace_reset(&scratch);
        char what[160];
        snprintf(what, sizeof what, "GAT (%s) dx", concat ? "concat" : "mean");
        report(what, finite_difference_error(attention_loss, &c, c.x, dx, n * features));
        for (int64_t i = 0; i < list.count; i++) {
            snprintf(what, sizeof what, "GAT (%s) d%s", concat ? "concat" : "mean", list.items[i].name);
            report(what, finite_difference_error(attention_loss, &c, list.items[i].value.data,
                                                 list.items[i].grad.data, list.items[i].value.size));
        }
        free(c.x), free(c.y), free(c.r), free(dx);
        workspace_free(&scratch);
        parameters_free(&list);
    }
    csr_free(&g);
}
END_TEST

/* ---- self-attention over time (DySAT) --------------------------------------------------------- */

enum { SELF_COUNT = 5, SELF_LANES = 3, SELF_WIDTH = 4 };

typedef struct self_attention_case {
    self_attention *a;
    const int32_t *starts;
    float *z, *y, *r;
    workspace *scratch;
} self_attention_case;

static double self_attention_loss(void *context)
{
    self_attention_case *c = context;
    self_attention_tape tape;
    tf_error err;
    ck_assert(ref_self_attention_forward(&ref_kernels, c->a, SELF_COUNT, SELF_LANES, c->z, c->starts, c->scratch, &tape,
                                         c->y, &err) == TF_OK);
    workspace_reset(c->scratch);
    return projected(c->r, c->y, SELF_COUNT * SELF_LANES * SELF_WIDTH);
}

/* The fused lanes' starts: lane 0 one sequence, lane 1 two (2 + 3 positions), lane 2 three (1 + 2 + 2). */
static const int32_t self_starts[SELF_COUNT][SELF_LANES] = {{0, 0, 0}, {0, 0, 1}, {0, 2, 1}, {0, 2, 3}, {0, 2, 3}};

/* The layer's three [W][W] projections, zero, into an empty list. */
static void self_attention_parameters(parameter_list *list)
{
    int64_t square[2] = {SELF_WIDTH, SELF_WIDTH};
    tf_error err;
    ck_assert(parameters_add(list, "query", 2, square, &err) >= 0 && parameters_add(list, "key", 2, square, &err) >= 0 &&
              parameters_add(list, "value", 2, square, &err) >= 0);
}

/* The plain causal mask (starts NULL), and the block-diagonal one of fused lanes (self_starts): dz and
 * the three projections. */
START_TEST(self_attention_layer)
{
    rng r;
    rng_seed(&r, 8);
    const int64_t size = SELF_COUNT * SELF_LANES * SELF_WIDTH;
    tf_error err;
    for (int fused = 0; fused < 2; fused++) {
        parameter_list list = {0};
        self_attention_parameters(&list);
        for (int64_t i = 0; i < list.count; i++)
            fill_random(list.items[i].value.data, list.items[i].value.size, 1, &r);
        self_attention a = {SELF_WIDTH, &list.items[0], &list.items[1], &list.items[2]};
        workspace scratch;
        workspace_init(&scratch);
        self_attention_case c = {&a, fused ? &self_starts[0][0] : NULL, random_array(size, 1, &r), zero_array(size),
                                 random_array(size, 1, &r), &scratch};
        float *dz = zero_array(size);
        self_attention_tape tape;
        ck_assert(ref_self_attention_forward(&ref_kernels, &a, SELF_COUNT, SELF_LANES, c.z, c.starts, &scratch, &tape, c.y,
                                             &err) == TF_OK);
        ck_assert(ref_self_attention_backward(&ref_kernels, &a, &tape, c.r, dz, &scratch, &err) == TF_OK);
        workspace_reset(&scratch);
        char what[160];
        snprintf(what, sizeof what, "self-attention (%s mask) dz", fused ? "block-diagonal" : "causal");
        report(what, finite_difference_error(self_attention_loss, &c, c.z, dz, size));
        for (int64_t i = 0; i < list.count; i++) {
            snprintf(what, sizeof what, "self-attention (%s mask) d%s", fused ? "block-diagonal" : "causal",
                     list.items[i].name);
            report(what, finite_difference_error(self_attention_loss, &c, list.items[i].value.data, list.items[i].grad.data,
                                                 list.items[i].value.size));
        }
        free(c.z), free(c.y), free(c.r), free(dz);
        workspace_free(&scratch);
        parameters_free(&list);
    }
}
END_TEST

/* The residual carries the input z, not z plus its position: with W_v = 0 the attention adds nothing,
 * so y must be z bit for bit under either mask. A position in the residual is one vector shared by
 * every vertex at a step (|p_t|^2 = W / 2), which the link task's dot products cannot tell from
 * signal: with it, DySAT ranked link-prediction pairs at chance (chapters/01a-snapshot-models.md). */
START_TEST(self_attention_residual)
{
    rng r;
    rng_seed(&r, 12);
    const int64_t size = SELF_COUNT * SELF_LANES * SELF_WIDTH;
    tf_error err;
    for (int fused = 0; fused < 2; fused++) {
        parameter_list list = {0};
        self_attention_parameters(&list);
        fill_random(list.items[0].value.data, list.items[0].value.size, 1, &r);
        fill_random(list.items[1].value.data, list.items[1].value.size, 1, &r); /* value stays 0 */
        self_attention a = {SELF_WIDTH, &list.items[0], &list.items[1], &list.items[2]};
        workspace scratch;
        workspace_init(&scratch);
        float *z = random_array(size, 1, &r), *y = zero_array(size);
        self_attention_tape tape;
        ck_assert(ref_self_attention_forward(&ref_kernels, &a, SELF_COUNT, SELF_LANES, z, fused ? &self_starts[0][0] : NULL,
                                             &scratch, &tape, y, &err) == TF_OK);
        double worst = 0;
        int64_t differ = 0;
        for (int64_t i = 0; i < size; i++) {
            worst = fmax(worst, fabs((double)y[i] - z[i]));
            differ += memcmp(&y[i], &z[i], sizeof(float)) != 0;
        }
        printf("self-attention residual (%s mask), W_v = 0: max |y - z| %.2e, %lld of %lld values differ in bits "
               "(must be 0)\n", fused ? "block-diagonal" : "causal", worst, (long long)differ, (long long)size);
        ck_assert_int_eq(differ, 0);
        free(z), free(y);
        workspace_free(&scratch);
        parameters_free(&list);
    }
}
END_TEST

/* ---- the link task's loss ------------------------------------------------------------------- */

enum { LINK_NODES = 5, LINK_SNAPSHOTS = 4, LINK_WIDTH = 3 };

typedef struct link_case {
    const snapshot_seq *seq;
    float *states;
} link_case;

static double link_loss(void *context)
{
    link_case *c = context;
    tf_error err;
    return link_task_window_loss(c->seq, 0, LINK_SNAPSHOTS, LINK_SNAPSHOTS - 1, 7, c->states, LINK_WIDTH, 1.0f, NULL,
                                 NULL, NULL, NULL, &err);
}

/* Four snapshots of five vertices, each with a stored loop (not a pair) and a duplicated edge
 * (two pairs); the split ends at 3, so snapshots 0 and 1 score the edges of 1 and 2, and 2 scores
 * nothing (3 is past the split). The loss is recomputed here in double from the pairs, and its
 * gradient with respect to the states checked against central differences. */
START_TEST(link_task_loss)
{
    snapshot_seq seq;
    tf_error err;
    ck_assert_int_eq(snapshot_seq_alloc(&seq, LINK_SNAPSHOTS, LINK_NODES, 1, 1, &err), TF_OK);
    const int32_t src[LINK_SNAPSHOTS][6] = {{0, 1, 2, 3, 3, 4}, {1, 1, 2, 4, 4, 0}, {4, 3, 3, 0, 2, 2}, {0, 1, 2, 3, 4, 0}};
    const int32_t dst[LINK_SNAPSHOTS][6] = {{1, 2, 3, 4, 4, 4}, {0, 1, 3, 2, 2, 4}, {0, 1, 1, 0, 4, 3}, {4, 3, 2, 1, 0, 2}};
    for (int t = 0; t < LINK_SNAPSHOTS; t++)
        ck_assert_int_eq(snapshot_seq_set_edges(&seq, t, 6, src[t], dst[t], NULL, &err), TF_OK);
    rng r;
    rng_seed(&r, 9);
    const int64_t size = LINK_SNAPSHOTS * LINK_NODES * LINK_WIDTH;
    link_case c = {&seq, random_array(size, 1, &r)};
    float *dstates = zero_array(size);
    const double loss = link_task_window_loss(&seq, 0, LINK_SNAPSHOTS, LINK_SNAPSHOTS - 1, 7, c.states, LINK_WIDTH,
                                              1.0f, dstates, NULL, NULL, NULL, &err);
    /* by hand: mean over the scored snapshots of the mean BCE over their pairs */
    double expected = 0;
    int scored = 0;
    for (int t = 0; t < LINK_SNAPSHOTS; t++) {
        const int64_t positives = link_task_positives(&seq, t, LINK_SNAPSHOTS - 1);
        ck_assert_int_eq(positives, t < 2 ? 5 : 0); /* six edges, one of them a loop */
        if (positives == 0)
            continue;
        int32_t u[10], v[10];
        uint8_t label[10];
        link_task_pairs(&seq, t, LINK_SNAPSHOTS - 1, 7, u, v, label);
        double sum = 0;
        for (int q = 0; q < 2 * positives; q++) {
            double x = 0;
            for (int k = 0; k < LINK_WIDTH; k++)
                x += (double)c.states[(t * LINK_NODES + u[q]) * LINK_WIDTH + k] *
                     c.states[(t * LINK_NODES + v[q]) * LINK_WIDTH + k];
            sum += label[q] ? log1p(exp(-x)) : log1p(exp(x)); /* -log sigmoid(x), -log(1 - sigmoid(x)) */
            ck_assert(q >= positives || (u[q] != v[q] && label[q] == 1));
        }
        expected += sum / (double)(2 * positives);
        scored++;
    }
    expected /= scored;
    printf("link task, 4 snapshots of 5 vertices: loss %.9f, by hand %.9f\n", loss, expected);
    ck_assert(fabs(loss - expected) <= 1e-6 * fmax(1.0, fabs(expected)));
    report("link task dstates", finite_difference_error(link_loss, &c, c.states, dstates, size));
    free(c.states), free(dstates);
    snapshot_seq_free(&seq);
}
END_TEST

/* ---- the classification task's loss ---------------------------------------------------------- */

enum { CLASSIFY_NODES = 5, CLASSIFY_SNAPSHOTS = 3, CLASSES = 3 };

typedef struct classify_case {
    const snapshot_seq *seq;
    float *logits;
} classify_case;

static double classify_loss(void *context)
{
    classify_case *c = context;
    tf_error err;
    double loss;
    ck_assert(classify_task_window_loss(c->seq, 0, CLASSIFY_SNAPSHOTS, c->logits, 1.0f, NULL, NULL, NULL, &loss,
                                        &err) == TF_OK);
    return loss;
}

/* Three snapshots of five vertices and three classes: the first with one unlabelled vertex, the
 * second with none labelled (it adds 0 to the window's mean), the third with two. The loss and the
 * accuracy are recomputed here in double, and the gradient with respect to the logits is checked
 * against central differences (an unlabelled vertex must get none). */
START_TEST(classify_task_loss)
{
    snapshot_seq seq;
    tf_error err;
    ck_assert_int_eq(snapshot_seq_alloc(&seq, CLASSIFY_SNAPSHOTS, CLASSIFY_NODES, 1, 1, &err), TF_OK);
    ck_assert_int_eq(snapshot_seq_alloc_labels(&seq, CLASSES, &err), TF_OK);
    const int32_t labels[CLASSIFY_SNAPSHOTS][CLASSIFY_NODES] = {{0, 2, -1, 1, 1}, {-1, -1, -1, -1, -1}, {2, -1, 0, -1, 1}};
    for (int t = 0; t < CLASSIFY_SNAPSHOTS; t++)
        memcpy(seq.snapshots[t].labels, labels[t], sizeof labels[t]);
    ck_assert_int_eq(snapshot_seq_validate(&seq, "classify case", &err), TF_OK);
    rng r;
    rng_seed(&r, 12);
    const int64_t size = CLASSIFY_SNAPSHOTS * CLASSIFY_NODES * CLASSES;
    classify_case c = {&seq, random_array(size, 2, &r)};
    float *dlogits = random_array(size, 1, &r); /* overwritten: every entry, zero where unlabelled */
    int64_t correct = 0, labelled = 0;
    double loss;
    ck_assert_int_eq(classify_task_window_loss(&seq, 0, CLASSIFY_SNAPSHOTS, c.logits, 1.0f, dlogits, &correct,
                                               &labelled, &loss, &err), TF_OK);
    double expected = 0;
    int64_t expected_correct = 0, expected_labelled = 0;
    for (int t = 0; t < CLASSIFY_SNAPSHOTS; t++) {
        double sum = 0;
        int in_snapshot = 0;
        for (int v = 0; v < CLASSIFY_NODES; v++) {
            const float *z = c.logits + (t * CLASSIFY_NODES + v) * CLASSES;
            if (labels[t][v] < 0) {
                for (int k = 0; k < CLASSES; k++)
                    ck_assert(dlogits[(t * CLASSIFY_NODES + v) * CLASSES + k] == 0.0f);
                continue;
            }
            double normalizer = 0;
            int best = 0;
            for (int k = 0; k < CLASSES; k++) {
                normalizer += exp((double)z[k]);
                best = z[k] > z[best] ? k : best;
            }
            sum += log(normalizer) - z[labels[t][v]];
            expected_correct += best == labels[t][v];
            in_snapshot++;
        }
        expected += in_snapshot ? sum / in_snapshot : 0;
        expected_labelled += in_snapshot;
    }
    expected /= CLASSIFY_SNAPSHOTS;
    printf("classify task, 3 snapshots of 5 vertices: loss %.9f, by hand %.9f; %lld of %lld right, by hand %lld of "
           "%lld\n", loss, expected, (long long)correct, (long long)labelled, (long long)expected_correct,
           (long long)expected_labelled);
    ck_assert(fabs(loss - expected) <= 1e-6 * fmax(1.0, fabs(expected)));
    ck_assert(correct == expected_correct && labelled == expected_labelled && labelled == 7);
    report("classify task dlogits", finite_difference_error(classify_loss, &c, c.logits, dlogits, size));
    /* a label outside 0..C-1 is refused by the validation every loader runs */
    seq.snapshots[2].labels[3] = CLASSES;
    ck_assert_int_eq(snapshot_seq_validate(&seq, "classify case", &err), TF_ERR_INPUT);
    printf("a label of %d with %d classes: %s\n", CLASSES, CLASSES, err.message);
    free(c.logits), free(dlogits);
    snapshot_seq_free(&seq);
}
END_TEST

/* ---- recurrent cells ----------------------------------------------------------------------- */

enum { HIDDEN = 4 };

typedef struct cell_case {
    float *x, *h, *c, *w_ih, *w_hh, *b_ih, *b_hh;
    float *h_out, *c_out, *cache, *preactivation, *gates, *r_h, *r_c;
    int lstm;
} cell_case;

static double cell_loss(void *context)
{
    cell_case *c = context;
    if (!c->lstm) {
        ref_gru_cell_forward(c->x, c->h, c->w_ih, c->w_hh, c->b_ih, c->b_hh, ROWS, IN, HIDDEN, c->h_out, c->cache);
        return projected(c->r_h, c->h_out, ROWS * HIDDEN);
    }
    ref_lstm_cell_forward(c->x, c->h, c->c, c->w_ih, c->w_hh, c->b_ih, c->b_hh, ROWS, IN, HIDDEN, c->h_out, c->c_out,
                          c->preactivation, c->gates);
    return projected(c->r_h, c->h_out, ROWS * HIDDEN) + projected(c->r_c, c->c_out, ROWS * HIDDEN);
}

START_TEST(gru_and_lstm_cells)
{
    rng r;
    rng_seed(&r, 5);
    for (int lstm = 0; lstm < 2; lstm++) {
        int64_t gates = lstm ? 4 : 3;
        cell_case c = {random_array(ROWS * IN, 1, &r), random_array(ROWS * HIDDEN, 1, &r),
                       random_array(ROWS * HIDDEN, 1, &r), random_array(gates * HIDDEN * IN, 1, &r),
                       random_array(gates * HIDDEN * HIDDEN, 1, &r), random_array(gates * HIDDEN, 1, &r),
                       random_array(gates * HIDDEN, 1, &r), zero_array(ROWS * HIDDEN), zero_array(ROWS * HIDDEN),
                       zero_array(ROWS * 4 * HIDDEN), zero_array(ROWS * 4 * HIDDEN), zero_array(ROWS * 4 * HIDDEN),
                       random_array(ROWS * HIDDEN, 1, &r), random_array(ROWS * HIDDEN, 1, &r), lstm};
        float *dx = zero_array(ROWS * IN), *dh = zero_array(ROWS * HIDDEN), *dc = zero_array(ROWS * HIDDEN);
        float *dw_ih = zero_array(gates * HIDDEN * IN), *dw_hh = zero_array(gates * HIDDEN * HIDDEN);
        float *db_ih = zero_array(gates * HIDDEN), *db_hh = zero_array(gates * HIDDEN);
        float *dpreactivation = zero_array(ROWS * 6 * HIDDEN); /* LSTM [n][4H], GRU [2n][3H] */
        cell_loss(&c);
        if (!lstm)
            ref_gru_cell_backward(c.x, c.h, c.w_ih, c.w_hh, c.cache, c.r_h, ROWS, IN, HIDDEN, dpreactivation, dx, dh,
                                  dw_ih, dw_hh, db_ih, db_hh);
        else
            ref_lstm_cell_backward(c.x, c.h, c.c, c.w_ih, c.w_hh, c.c_out, c.gates, c.r_h, c.r_c, ROWS, IN, HIDDEN,
                                   dpreactivation, dx, dh, dc, dw_ih, dw_hh, db_ih, db_hh);
        const char *name = lstm ? "lstm cell" : "gru cell";
        char what[64];
        snprintf(what, sizeof what, "%s dx", name);
        report(what, finite_difference_error(cell_loss, &c, c.x, dx, ROWS * IN));
        snprintf(what, sizeof what, "%s dh", name);
        report(what, finite_difference_error(cell_loss, &c, c.h, dh, ROWS * HIDDEN));
        if (lstm) {
            snprintf(what, sizeof what, "%s dc", name);
            report(what, finite_difference_error(cell_loss, &c, c.c, dc, ROWS * HIDDEN));
        }
        snprintf(what, sizeof what, "%s dweight_ih", name);
        report(what, finite_difference_error(cell_loss, &c, c.w_ih, dw_ih, gates * HIDDEN * IN));
        snprintf(what, sizeof what, "%s dweight_hh", name);
        report(what, finite_difference_error(cell_loss, &c, c.w_hh, dw_hh, gates * HIDDEN * HIDDEN));
        snprintf(what, sizeof what, "%s dbias_ih", name);
        report(what, finite_difference_error(cell_loss, &c, c.b_ih, db_ih, gates * HIDDEN));
        snprintf(what, sizeof what, "%s dbias_hh", name);
        report(what, finite_difference_error(cell_loss, &c, c.b_hh, db_hh, gates * HIDDEN));
        float *all[] = {c.x, c.h, c.c, c.w_ih, c.w_hh, c.b_ih, c.b_hh, c.h_out, c.c_out, c.cache, c.preactivation,
                        c.gates, c.r_h, c.r_c, dx, dh, dc, dw_ih, dw_hh, db_ih, db_hh, dpreactivation};
        for (size_t i = 0; i < sizeof all / sizeof *all; i++)
            free(all[i]);
    }
}
END_TEST

/* T-GCN's GRU as the fused lanes run it (ref_tgcn_cell_forward()): one row, gate blocks z, r, h,
 * each reading its own IN-wide block of x; the loss is sum(r_h * h'). */
typedef struct tgcn_cell_case {
    float *x, *h, *w_ih, *w_hh, *bias, *h_out, *cache, *r_h;
} tgcn_cell_case;

static double tgcn_cell_loss(void *context)
{
    tgcn_cell_case *c = context;
    ref_tgcn_cell_forward(c->x, c->h, c->w_ih, c->w_hh, c->bias, IN, HIDDEN, c->h_out, c->cache);
    double loss = 0;
    for (int64_t j = 0; j < HIDDEN; j++)
        loss += (double)c->r_h[j] * c->h_out[j];
    return loss;
}

START_TEST(tgcn_cell)
{
    rng r;
    rng_seed(&r, 6);
    tgcn_cell_case c = {random_array(3 * IN, 1, &r),         random_array(HIDDEN, 1, &r),
                        random_array(3 * HIDDEN * IN, 1, &r), random_array(3 * HIDDEN * HIDDEN, 1, &r),
                        random_array(3 * HIDDEN, 1, &r),      zero_array(HIDDEN),
                        zero_array(4 * HIDDEN),               random_array(HIDDEN, 1, &r)};
    float *dx = zero_array(3 * IN), *dh = zero_array(HIDDEN), *dw_ih = zero_array(3 * HIDDEN * IN);
    float *dw_hh = zero_array(3 * HIDDEN * HIDDEN), *dbias = zero_array(3 * HIDDEN), *scratch = zero_array(4 * HIDDEN);
    tgcn_cell_loss(&c);
    ref_tgcn_cell_backward(c.x, c.h, c.w_ih, c.w_hh, c.cache, c.r_h, IN, HIDDEN, scratch, dx, dh, dw_ih, dw_hh, dbias);
    report("tgcn cell dx", finite_difference_error(tgcn_cell_loss, &c, c.x, dx, 3 * IN));
    report("tgcn cell dh", finite_difference_error(tgcn_cell_loss, &c, c.h, dh, HIDDEN));
    report("tgcn cell dweight_ih", finite_difference_error(tgcn_cell_loss, &c, c.w_ih, dw_ih, 3 * HIDDEN * IN));
    report("tgcn cell dweight_hh", finite_difference_error(tgcn_cell_loss, &c, c.w_hh, dw_hh, 3 * HIDDEN * HIDDEN));
    report("tgcn cell dbias", finite_difference_error(tgcn_cell_loss, &c, c.bias, dbias, 3 * HIDDEN));
    float *all[] = {c.x, c.h, c.w_ih, c.w_hh, c.bias, c.h_out, c.cache, c.r_h, dx, dh, dw_ih, dw_hh, dbias, scratch};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        free(all[i]);
}
END_TEST

/* ---- whole models ---------------------------------------------------------------------------- */

typedef struct model_case {
    model *m;
    const snapshot_seq *seq;
    int64_t first, count;
    float *predictions;
    uint8_t *signs;   /* [count][N][width] out unless NULL: which inputs of the head's ReLU are > 0 */
    int classify;     /* 1: the loss is the classification task's cross-entropy, not the MSE */
} model_case;

/* The window's loss of c's predictions: MSE, or the classification task's (dpredictions as they). */
static double case_window_loss(const model_case *c, float *dpredictions)
{
    if (!c->classify)
        return model_window_loss(c->seq, c->first, c->count, c->predictions, 1.0f, dpredictions);
    double loss;
    tf_error err;
    ck_assert(classify_task_window_loss(c->seq, c->first, c->count, c->predictions, 1.0f, dpredictions, NULL, NULL,
                                        &loss, &err) == TF_OK);
    return loss;
}

static double model_loss(void *context)
{
    model_case *c = context;
    window_tape tape;
    tf_error err;
    ck_assert(model_forward(c->m, c->seq, c->first, c->count, &tape, c->predictions, &err) == TF_OK);
    const int64_t size = c->count * c->seq->num_nodes * model_state_width(c->m);
    for (int64_t i = 0; c->signs && i < size; i++)
        c->signs[i] = tape.states[i] > 0.0f;
    window_tape_free(c->m, &tape);
    return case_window_loss(c, NULL);
}

/* finite_difference_error() for a whole model, leaving out each element that disagrees beyond
 * TOLERANCE while its two forwards, at +STEP and -STEP, put some input of the head's ReLU(H) on
 * different sides of zero: a kink lies between them and the central difference mixes two slopes
 * (an LSTM's bias moves many vertices' H at once, and one H within 1e-4 of zero is enough).
 * *skipped counts them; an element across a kink that agrees is checked as any other. */
static double model_difference_error(model_case *c, float *values, const float *analytic, int64_t count,
                                     int64_t *skipped)
{
    const int64_t size = c->count * c->seq->num_nodes * model_state_width(c->m);
    uint8_t *plus_signs = calloc((size_t)size, 1), *minus_signs = calloc((size_t)size, 1);
    ck_assert(plus_signs && minus_signs);
    double worst = 0;
    for (int64_t i = 0; i < count; i++) {
        const float saved = values[i];
        values[i] = saved + STEP;
        c->signs = plus_signs;
        const double plus = model_loss(c);
        values[i] = saved - STEP;
        c->signs = minus_signs;
        const double minus = model_loss(c);
        values[i] = saved;
        c->signs = NULL;
        const double numeric = (plus - minus) / (2.0 * (double)STEP);
        const double error = fabs(analytic[i] - numeric) / fmax(1.0, fabs(numeric));
        if (error > TOLERANCE && memcmp(plus_signs, minus_signs, (size_t)size) != 0) {
            (*skipped)++;
            continue;
        }
        worst = fmax(worst, error);
    }
    free(plus_signs);
    free(minus_signs);
    return worst;
}

/* The whole model, window loss included, on a small generated graph where vertices come and go;
 * with `classify`, on evolving communities, the head giving C logits and the loss the
 * classification task's cross-entropy. */
static void check_model(model_kind kind, int classify)
{
    dataset d;
    const snapshot_seq *seq =
        load_snapshots(classify ? "communities:nodes=16,edges=30,snapshots=4,classes=3,change=0.2,features=3,"
                                  "labelled=0.7,seed=11"
                                : "powerlaw:nodes=16,edges=30,snapshots=4,churn=0.3,arrival=0.1,features=3,seed=11",
                       &d);
    tf_error err;
    const int64_t out = classify ? seq->num_classes : seq->target_width;
    /* DCRNN at K = 3, so that its recurrence's third term, 2 W T_1 - T_0 on each walk, is checked too */
    model_config config = {kind, seq->feature_width, 4, out, kind == MODEL_DCRNN ? 3 : 2, 0};
    model m;
    ck_assert(model_create(&m, &config, 7, &err) == TF_OK);
    if (kind >= MODEL_TGCN2) {
        /* Zero biases (GCNConv's) put every vertex whose aggregation is zero (an absent vertex has no
         * features) exactly on the kink of the ReLU after a GCN layer, where a central difference
         * sees half a slope: draw the biases away from zero. (An input of the head's ReLU that a step
         * moves across zero is model_difference_error()'s to leave out; with draws 1 to 5 every model
         * passed, the worst error 9.6e-4.) */
        rng r;
        rng_seed(&r, 1);
        for (int64_t i = 0; i < m.parameters.count; i++)
            if (m.parameters.items[i].value.ndim == 1 || strstr(m.parameters.items[i].name, ".b_"))
                for (int64_t j = 0; j < m.parameters.items[i].value.size; j++)
                    m.parameters.items[i].value.data[j] = (float)(0.2 * rng_uniform(&r) - 0.1);
    }
    model_case c = {&m, seq, 1, 3, zero_array(3 * seq->num_nodes * out), NULL, classify};
    float *dpredictions = zero_array(3 * seq->num_nodes * out);
    window_tape tape;
    ck_assert(model_forward(&m, seq, c.first, c.count, &tape, c.predictions, &err) == TF_OK);
    case_window_loss(&c, dpredictions);
    parameters_zero_grad(&m.parameters);
    ck_assert(model_backward(&m, seq, &tape, dpredictions, &err) == TF_OK);
    window_tape_free(&m, &tape);
    double worst = 0;
    const char *worst_name = "";
    int64_t skipped = 0;
    for (int64_t i = 0; i < m.parameters.count; i++) {
        parameter *q = &m.parameters.items[i];
        double e = model_difference_error(&c, q->value.data, q->grad.data, q->value.size, &skipped);
        if (e >= worst) {
            worst = e;
            worst_name = q->name;
        }
    }
    char what[224];
    snprintf(what, sizeof what, "model %s%s, %lld parameters (%lld off across a kink; worst: %s)",
             model_kind_name(kind), classify ? " classifying" : "", (long long)parameters_size(&m.parameters),
             (long long)skipped, worst_name);
    report(what, worst);
    /* a check of almost nothing would pass: at most 2 % of the elements may be left out */
    ck_assert_msg(skipped * 50 <= parameters_size(&m.parameters), "model %s: %lld of %lld elements across a kink",
                  model_kind_name(kind), (long long)skipped, (long long)parameters_size(&m.parameters));
    free(c.predictions);
    free(dpredictions);
    model_free(&m);
    dataset_free(&d);
}

/* Every model of the table (ref/models/model.c). */
START_TEST(model_gradients) { check_model((model_kind)_i, 0); }
END_TEST

/* The classification head's cross-entropy through a whole model: its C logits per vertex and the
 * cell below them (T-GCN and GC-LSTM; the cells are the ones every model's check above covers). */
START_TEST(classify_gradients)
{
    check_model(MODEL_TGCN, 1);
    check_model(MODEL_GCLSTM, 1);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("gradcheck");
    TCase *layers = tcase_create("layers");
    tcase_add_test(layers, linear_and_matmul);
    tcase_add_test(layers, activations);
    tcase_add_test(layers, losses);
    tcase_add_test(layers, propagation_operators);
    tcase_add_test(layers, graph_attention_layer);
    tcase_add_test(layers, self_attention_layer);
    tcase_add_test(layers, self_attention_residual);
    tcase_add_test(layers, link_task_loss);
    tcase_add_test(layers, classify_task_loss);
    tcase_add_test(layers, gru_and_lstm_cells);
    tcase_add_test(layers, tgcn_cell);
    suite_add_tcase(suite, layers);
    TCase *models = tcase_create("models");
    tcase_set_timeout(models, 300);
    tcase_add_loop_test(models, model_gradients, 0, MODEL_COUNT);
    tcase_add_test(models, classify_gradients);
    suite_add_tcase(suite, models);
    return run_suite(suite);
}
