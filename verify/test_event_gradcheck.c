/* Every backward of the event models (TGN, JODIE, APAN) against central finite differences, layer by
 * layer and then the whole model over one batch. Method, step (h = 1e-3) and tolerance (1e-3 on
 * |analytic - numeric| / max(1, |numeric|)) are test_gradcheck.c's, shared through gradcheck.h;
 * each check prints the worst error it measured.
 *
 * Time differences are kept small here (|delta| <= 3): d cos(delta w + b) / dw = -delta sin(.)
 * grows with delta, and a step of 1e-3 in w moves the argument by delta * 1e-3, so with the raw
 * timestamps of real data (10^6 s) no difference quotient would converge. The whole-model checks
 * therefore scale a generated stream's times by 0.01. */
#include <math.h>
#include <string.h>

#include "datasets/generate.h"
#include "ref/models/event_model.h"
#include "ref/nn/layers.h"
#include "ref/nn/mailbox_attention.h"
#include "ref/nn/recurrent.h"
#include "ref/nn/time_encoding.h"
#include "ref/nn/time_projection.h"
#include "verify/gradcheck.h"

/* ---- small layers ----------------------------------------------------------------------------- */

enum { ROWS = 5, WIDTH = 6 };

typedef struct pointwise_case {
    float *x, *y, *r, *weight, *bias, *normalized, *inverse_std, *delta;
    int which; /* 0 LeakyReLU, 1 LayerNorm, 2 time encoding, 3 time projection */
} pointwise_case;

static double pointwise_loss(void *context)
{
    pointwise_case *c = context;
    switch (c->which) {
    case 0: ref_leaky_relu_forward(c->x, ROWS * WIDTH, 0.2f, c->y); break;
    case 1:
        ref_layer_norm_forward(c->x, c->weight, c->bias, ROWS, WIDTH, 1e-5f, c->y, c->normalized, c->inverse_std);
        break;
    case 2: ref_time_encoding_forward(c->delta, ROWS, c->weight, c->bias, WIDTH, WIDTH, c->y); break;
    default: ref_time_projection_forward(c->x, c->delta, ROWS, WIDTH, c->weight, c->bias, c->y); break;
    }
    return projected(c->r, c->y, ROWS * WIDTH);
}

/* The double sums of a layer's weight and bias gradients [WIDTH], rounded to float. */
static void round_sums(const double *weight_sums, const double *bias_sums, float *dweight, float *dbias)
{
    for (int i = 0; i < WIDTH; i++) {
        dweight[i] = (float)weight_sums[i];
        dbias[i] = (float)bias_sums[i];
    }
}

START_TEST(pointwise_layers)
{
    rng r;
    rng_seed(&r, 21);
    for (int which = 0; which < 4; which++) {
        pointwise_case c = {random_array(ROWS * WIDTH, 2, &r), zero_array(ROWS * WIDTH),
                            random_array(ROWS * WIDTH, 1, &r), random_array(WIDTH, 1, &r),
                            random_array(WIDTH, 1, &r),        zero_array(ROWS * WIDTH),
                            zero_array(ROWS),                  random_array(ROWS, 3, &r),
                            which};
        float *dx = zero_array(ROWS * WIDTH), *dweight = zero_array(WIDTH), *dbias = zero_array(WIDTH);
        double weight_sums[WIDTH] = {0}, bias_sums[WIDTH] = {0}; /* these layers' parameter gradients are double sums */
        if (which == 0) /* keep LeakyReLU's inputs a step away from its kink */
            for (int i = 0; i < ROWS * WIDTH; i++)
                if (fabsf(c.x[i]) < 0.1f)
                    c.x[i] = c.x[i] < 0 ? -0.5f : 0.5f;
        pointwise_loss(&c);
        switch (which) {
        case 0:
            ref_leaky_relu_backward(c.y, c.r, ROWS * WIDTH, 0.2f, dx);
            report("leaky relu (0.2) dx", finite_difference_error(pointwise_loss, &c, c.x, dx, ROWS * WIDTH));
            break;
        case 1:
            ref_layer_norm_backward(c.normalized, c.inverse_std, c.weight, c.r, ROWS, WIDTH, dx, weight_sums, bias_sums);
            round_sums(weight_sums, bias_sums, dweight, dbias);
            report("layer norm dx", finite_difference_error(pointwise_loss, &c, c.x, dx, ROWS * WIDTH));
            report("layer norm dweight", finite_difference_error(pointwise_loss, &c, c.weight, dweight, WIDTH));
            report("layer norm dbias", finite_difference_error(pointwise_loss, &c, c.bias, dbias, WIDTH));
            break;
        case 2:
            ref_time_encoding_backward(c.delta, ROWS, c.weight, c.bias, WIDTH, WIDTH, c.r, weight_sums, bias_sums);
            round_sums(weight_sums, bias_sums, dweight, dbias);
            report("time encoding dweight (w)", finite_difference_error(pointwise_loss, &c, c.weight, dweight, WIDTH));
            report("time encoding dbias (b)", finite_difference_error(pointwise_loss, &c, c.bias, dbias, WIDTH));
            break;
        default:
            ref_time_projection_backward(c.x, c.delta, ROWS, WIDTH, c.weight, c.bias, c.r, dx, weight_sums, bias_sums);
            round_sums(weight_sums, bias_sums, dweight, dbias);
            report("jodie time projection dy", finite_difference_error(pointwise_loss, &c, c.x, dx, ROWS * WIDTH));
            report("jodie time projection dweight",
                   finite_difference_error(pointwise_loss, &c, c.weight, dweight, WIDTH));
            report("jodie time projection dbias", finite_difference_error(pointwise_loss, &c, c.bias, dbias, WIDTH));
            break;
        }
        float *all[] = {c.x, c.y, c.r, c.weight, c.bias, c.normalized, c.inverse_std, c.delta, dx, dweight, dbias};
        for (size_t i = 0; i < sizeof all / sizeof *all; i++)
            free(all[i]);
    }
}
END_TEST

typedef struct bce_case {
    float *logits;
    float target;
} bce_case;

static double bce_loss(void *context)
{
    bce_case *c = context;
    return ref_bce_with_logits_sum(c->logits, ROWS, c->target, ROWS, NULL) / ROWS;
}

START_TEST(binary_cross_entropy)
{
    rng r;
    rng_seed(&r, 22);
    for (int target = 0; target < 2; target++) {
        bce_case c = {random_array(ROWS, 4, &r), (float)target};
        float *d = zero_array(ROWS);
        ref_bce_with_logits_sum(c.logits, ROWS, c.target, ROWS, d);
        report(target ? "bce with logits, target 1, dlogits" : "bce with logits, target 0, dlogits",
               finite_difference_error(bce_loss, &c, c.logits, d, ROWS));
        free(c.logits), free(d);
    }
    /* Far in the tails the loss must stay finite and exact: log(1 + e^-|x|) form. */
    float extreme[2] = {-100.0f, 100.0f};
    double at_one = ref_bce_with_logits_sum(extreme, 2, 1.0f, 2, NULL) / 2;
    printf("bce of logits -100 and 100 against 1: %.6f (expected 50)\n", at_one);
    ck_assert(fabs(at_one - 50.0) < 1e-9);
}
END_TEST

/* ---- the RNN cell --------------------------------------------------------------------------- */

enum { IN = 3, HIDDEN = 4 };

typedef struct rnn_case {
    float *x, *h, *w_ih, *w_hh, *b_ih, *b_hh, *h_out, *r;
} rnn_case;

static double rnn_loss(void *context)
{
    rnn_case *c = context;
    ref_rnn_cell_forward(c->x, c->h, c->w_ih, c->w_hh, c->b_ih, c->b_hh, ROWS, IN, HIDDEN, c->h_out);
    return projected(c->r, c->h_out, ROWS * HIDDEN);
}

START_TEST(rnn_cell)
{
    rng r;
    rng_seed(&r, 23);
    rnn_case c = {random_array(ROWS * IN, 1, &r), random_array(ROWS * HIDDEN, 1, &r), random_array(HIDDEN * IN, 1, &r),
                  random_array(HIDDEN * HIDDEN, 1, &r), random_array(HIDDEN, 1, &r), random_array(HIDDEN, 1, &r),
                  zero_array(ROWS * HIDDEN), random_array(ROWS * HIDDEN, 1, &r)};
    float *dx = zero_array(ROWS * IN), *dh = zero_array(ROWS * HIDDEN), *dw_ih = zero_array(HIDDEN * IN);
    float *dw_hh = zero_array(HIDDEN * HIDDEN), *db_ih = zero_array(HIDDEN), *db_hh = zero_array(HIDDEN);
    float *scratch = zero_array(ROWS * HIDDEN);
    rnn_loss(&c);
    ref_rnn_cell_backward(c.x, c.h, c.w_ih, c.w_hh, c.h_out, c.r, ROWS, IN, HIDDEN, scratch, dx, dh, dw_ih, dw_hh,
                          db_ih, db_hh);
    report("rnn cell dx", finite_difference_error(rnn_loss, &c, c.x, dx, ROWS * IN));
    report("rnn cell dh", finite_difference_error(rnn_loss, &c, c.h, dh, ROWS * HIDDEN));
    report("rnn cell dweight_ih", finite_difference_error(rnn_loss, &c, c.w_ih, dw_ih, HIDDEN * IN));
    report("rnn cell dweight_hh", finite_difference_error(rnn_loss, &c, c.w_hh, dw_hh, HIDDEN * HIDDEN));
    report("rnn cell dbias_ih", finite_difference_error(rnn_loss, &c, c.b_ih, db_ih, HIDDEN));
    report("rnn cell dbias_hh", finite_difference_error(rnn_loss, &c, c.b_hh, db_hh, HIDDEN));
    float *all[] = {c.x,  c.h,  c.w_ih,  c.w_hh,  c.b_ih,  c.b_hh,  c.h_out, c.r,
                    dx,   dh,   dw_ih,   dw_hh,   db_ih,   db_hh,   scratch};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        free(all[i]);
}
END_TEST

/* ---- attention and decoder, with the parameters of a small TGN ------------------------------- */

/* A small TGN whose parameters, LayerNorm's included, are random rather than at their initial
 * values (LayerNorm's weight 1 and bias 0 would hide a mix-up of the two). The attention's
 * output bias is made positive so most ReLU units are active: LayerNorm is scale-invariant, so
 * a row with a single active unit would not depend on the attention at all, and its gradients
 * would be zero on both sides of the check, which then tests nothing. */
static void small_tgn(event_model *m, int64_t edge_width, uint64_t seed)
{
    event_model_config config = event_model_config_with(EVENT_MODEL_TGN, 4, 3, 6, edge_width);
    tf_error err;
    ck_assert_msg(event_model_create(m, &config, seed, &err) == TF_OK, "%s", err.message);
    rng r;
    rng_seed(&r, seed + 1);
    for (int64_t i = 0; i < m->parameters.count; i++)
        fill_random(m->parameters.items[i].value.data, m->parameters.items[i].value.size, 0.8, &r);
    for (int64_t i = 0; i < m->attention.output_bias->value.size; i++)
        m->attention.output_bias->value.data[i] += 1.0f;
}

/* A check of an all-zero gradient against an all-zero difference passes without testing
 * anything, so every check also requires some gradient element above 1e-6. (Some are small by
 * nature: w_k's bias adds <Q_h, b_k,h> to all of a root's scores alike, which the softmax
 * ignores unless the LeakyReLU bends some of them.) */
static void assert_not_negligible(const char *what, const float *gradient, int64_t count)
{
    double largest = 0;
    for (int64_t i = 0; i < count; i++)
        largest = fmax(largest, fabs(gradient[i]));
    ck_assert_msg(largest > 1e-6, "%s: gradient is %g at most, too small for the check to mean anything", what,
                  largest);
}

enum { ROOTS = 4 };

typedef struct attention_case {
    const temporal_attention *a;
    int64_t offset[ROOTS + 1];
    float *root_node, *root_time, *neighbour_node, *neighbour_edge, *neighbour_time, *out, *r;
} attention_case;

static double attention_loss(void *context)
{
    attention_case *c = context;
    attention_tape tape;
    tf_error err;
    ck_assert(ref_temporal_attention_forward(&ref_kernels, c->a, ROOTS, c->offset, c->root_node, c->root_time,
                                             c->neighbour_node,
                                             c->neighbour_edge, c->neighbour_time, NULL, &tape, c->out, &err) == TF_OK);
    attention_tape_free(&tape);
    return projected(c->r, c->out, ROOTS * c->a->out_width);
}

/* One gradient [count] against central differences of `loss` over `values` [count], printed as
 * "WHAT NAME" and required not negligible; returns the error. */
static double check_gradient(const char *what, const char *name, scalar_fn loss, void *context, float *values,
                             const float *gradient, int64_t count)
{
    char line[256];
    double e = finite_difference_error(loss, context, values, gradient, count);
    snprintf(line, sizeof line, "%s %s", what, name);
    report(line, e);
    assert_not_negligible(line, gradient, count);
    return e;
}

/* Worst error over every parameter of a model, printing each; returns the worst. */
static double check_parameters(const char *what, parameter **list, int count, scalar_fn loss, void *context)
{
    double worst = 0;
    for (int i = 0; i < count; i++)
        worst = fmax(worst, check_gradient(what, list[i]->name, loss, context, list[i]->value.data, list[i]->grad.data,
                                           list[i]->value.size));
    return worst;
}

START_TEST(temporal_attention_layer)
{
    for (int64_t edge_width = 0; edge_width <= 2; edge_width += 2) {
        event_model m;
        small_tgn(&m, edge_width, 31);
        const temporal_attention *a = &m.attention;
        rng r;
        rng_seed(&r, 32);
        /* Roots with 3, 0 (no neighbours: agg = 0), 1 and 5 neighbours. */
        attention_case c = {a, {0, 3, 3, 4, 9}, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
        const int64_t E = c.offset[ROOTS], dh = a->node_width, dt = a->time_width, d = a->out_width;
        c.root_node = random_array(ROOTS * dh, 1, &r);
        c.root_time = random_array(ROOTS * dt, 1, &r);
        c.neighbour_node = random_array(E * dh, 1, &r);
        c.neighbour_edge = edge_width ? random_array(E * edge_width, 1, &r) : NULL;
        c.neighbour_time = random_array(E * dt, 1, &r);
        c.out = zero_array(ROOTS * d);
        c.r = random_array(ROOTS * d, 1, &r);
        float *droot_node = zero_array(ROOTS * dh), *droot_time = zero_array(ROOTS * dt);
        float *dneighbour_node = zero_array(E * dh), *dneighbour_time = zero_array(E * dt);
        attention_tape tape;
        tf_error err;
        parameters_zero_grad(&m.parameters);
        ck_assert(ref_temporal_attention_forward(&ref_kernels, a, ROOTS, c.offset, c.root_node, c.root_time,
                                                 c.neighbour_node,
                                                 c.neighbour_edge, c.neighbour_time, NULL, &tape, c.out, &err) == TF_OK);
        ck_assert(ref_temporal_attention_backward(&ref_kernels, a, &tape, c.r, droot_node, droot_time, dneighbour_node,
                                                  dneighbour_time, &err) == TF_OK);
        parameters_round_sums(&m.parameters);
        attention_tape_free(&tape);
        char what[96];
        snprintf(what, sizeof what, "attention (edge width %lld)", (long long)edge_width);
        check_gradient(what, "droot_node", attention_loss, &c, c.root_node, droot_node, ROOTS * dh);
        check_gradient(what, "droot_time", attention_loss, &c, c.root_time, droot_time, ROOTS * dt);
        check_gradient(what, "dneighbour_node", attention_loss, &c, c.neighbour_node, dneighbour_node, E * dh);
        check_gradient(what, "dneighbour_time", attention_loss, &c, c.neighbour_time, dneighbour_time, E * dt);
        parameter *list[] = {a->query_weight, a->query_bias,    a->key_weight,    a->key_bias,
                             a->value_weight, a->value_bias,    a->output_weight, a->output_bias,
                             a->norm_weight,  a->norm_bias};
        check_parameters(what, list, 10, attention_loss, &c);
        float *all[] = {c.root_node, c.root_time, c.neighbour_node, c.neighbour_edge, c.neighbour_time, c.out, c.r,
                        droot_node, droot_time, dneighbour_node, dneighbour_time};
        for (size_t i = 0; i < sizeof all / sizeof *all; i++)
            free(all[i]);
        event_model_free(&m);
    }
}
END_TEST

/* ---- APAN's mailbox attention ---------------------------------------------------------------- */

enum { MAILBOX_ROWS = 4, MAILBOX_MAILS = 3 };

/* A small APAN (3 mails, so check_model()'s warm-up overfills some rings and wrapped rings are
 * checked too; 3 neighbours, 2 heads) with random parameters but the decoder's; the linear layer's bias is made
 * positive so most ReLU units are active, as small_tgn() does for its attention. */
static void small_apan(event_model *m, int64_t edge_width, uint64_t seed)
{
    event_model_config config = event_model_config_with(EVENT_MODEL_APAN, 4, 3, 4, edge_width);
    config.mails = MAILBOX_MAILS;
    config.neighbours = 3;
    tf_error err;
    ck_assert_msg(event_model_create(m, &config, seed, &err) == TF_OK, "%s", err.message);
    rng r;
    rng_seed(&r, seed + 1);
    for (int64_t i = 0; i < m->parameters.count; i++) /* not the decoder: random, its ReLUs can all be dead */
        if (strncmp(m->parameters.items[i].name, "edge_predictor.", 15) != 0)
            fill_random(m->parameters.items[i].value.data, m->parameters.items[i].value.size, 0.8, &r);
    for (int64_t i = 0; i < m->mailbox.mlp_bias->value.size; i++)
        m->mailbox.mlp_bias->value.data[i] += 1.0f;
}

typedef struct mailbox_case {
    const mailbox_attention *a;
    float *node, *mail_input, *out, *r;
} mailbox_case;

static double mailbox_loss(void *context)
{
    mailbox_case *c = context;
    mailbox_attention_tape tape;
    tf_error err;
    ck_assert(mailbox_attention_tape_alloc(c->a, MAILBOX_ROWS, &tape, &err) == TF_OK);
    ref_mailbox_attention_forward(&ref_kernels, c->a, c->node, c->mail_input, &tape, c->out);
    mailbox_attention_tape_free(&tape);
    return projected(c->r, c->out, MAILBOX_ROWS * c->a->width);
}

START_TEST(mailbox_attention_layer)
{
    event_model m;
    small_apan(&m, 2, 35);
    const mailbox_attention *a = &m.mailbox;
    rng r;
    rng_seed(&r, 36);
    const int64_t d = a->width, rows = MAILBOX_ROWS * MAILBOX_MAILS * a->mail_width;
    mailbox_case c = {a, random_array(MAILBOX_ROWS * d, 1, &r), random_array(rows, 1, &r),
                      zero_array(MAILBOX_ROWS * d), random_array(MAILBOX_ROWS * d, 1, &r)};
    float *dmail_input = zero_array(rows);
    mailbox_attention_tape tape;
    tf_error err;
    parameters_zero_grad(&m.parameters);
    ck_assert(mailbox_attention_tape_alloc(a, MAILBOX_ROWS, &tape, &err) == TF_OK);
    ref_mailbox_attention_forward(&ref_kernels, a, c.node, c.mail_input, &tape, c.out);
    ck_assert(ref_mailbox_attention_backward(&ref_kernels, a, &tape, c.r, dmail_input, &err) == TF_OK);
    parameters_round_sums(&m.parameters);
    mailbox_attention_tape_free(&tape);
    check_gradient("mailbox attention", "dmail_input", mailbox_loss, &c, c.mail_input, dmail_input, rows);
    parameter *list[] = {a->query_weight, a->query_bias, a->key_weight,  a->key_bias, a->value_weight,
                         a->value_bias,   a->norm_weight, a->norm_bias, a->mlp_weight, a->mlp_bias};
    check_parameters("mailbox attention", list, 10, mailbox_loss, &c);
    float *all[] = {c.node, c.mail_input, c.out, c.r, dmail_input};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        free(all[i]);
    event_model_free(&m);
}
END_TEST

enum { PAIRS = 6 };

typedef struct decoder_case {
    const link_decoder *d;
    float *source, *destination, *hidden, *scores, *r;
} decoder_case;

static double decoder_loss(void *context)
{
    decoder_case *c = context;
    ref_link_decoder_forward(&ref_kernels, c->d, c->source, c->destination, PAIRS, c->hidden, c->scores);
    return projected(c->r, c->scores, PAIRS);
}

START_TEST(link_decoder_layer)
{
    event_model m;
    small_tgn(&m, 0, 41);
    const link_decoder *d = &m.decoder;
    rng r;
    rng_seed(&r, 42);
    const int64_t w = d->width;
    decoder_case c = {d, random_array(PAIRS * w, 1, &r), random_array(PAIRS * w, 1, &r), zero_array(PAIRS * w),
                      zero_array(PAIRS), random_array(PAIRS, 1, &r)};
    float *dsource = zero_array(PAIRS * w), *ddestination = zero_array(PAIRS * w), *dhidden = zero_array(PAIRS * w);
    parameters_zero_grad(&m.parameters);
    decoder_loss(&c);
    ref_link_decoder_backward(&ref_kernels, d, c.source, c.destination, c.hidden, c.r, PAIRS, dhidden, dsource,
                              ddestination);
    parameters_round_sums(&m.parameters);
    report("decoder dsource", finite_difference_error(decoder_loss, &c, c.source, dsource, PAIRS * w));
    report("decoder ddestination", finite_difference_error(decoder_loss, &c, c.destination, ddestination, PAIRS * w));
    parameter *list[] = {d->source_weight, d->source_bias, d->destination_weight, d->destination_bias,
                         d->output_weight, d->output_bias};
    check_parameters("decoder", list, 6, decoder_loss, &c);
    float *all[] = {c.source, c.destination, c.hidden, c.scores, c.r, dsource, ddestination, dhidden};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        free(all[i]);
    event_model_free(&m);
}
END_TEST

/* ---- whole models on one batch ------------------------------------------------------------- */

enum { BATCH = 8, WARM_EVENTS = 48 };

typedef struct model_case {
    const event_model *m;
    const node_memory *memory;
    const temporal_csr *history;
    const event_batch *batch;
    float *scores;
} model_case;

static double model_loss(void *context)
{
    model_case *c = context;
    event_tape tape;
    tf_error err;
    ck_assert_msg(event_model_forward(c->m, c->memory, c->history, c->batch, &tape, c->scores, &err) == TF_OK, "%s",
                  err.message);
    event_tape_free(&tape);
    return event_model_loss(c->scores, c->batch->size, NULL);
}

/* Forward, loss and backward of one batch of a generated stream, after WARM_EVENTS events have
 * filled the memory (so s, mail and mem_ts are not zero), against finite differences of every
 * parameter. */
static void check_model(event_model_kind kind, int64_t edge_width)
{
    event_params p;
    event_params_default(&p);
    p.num_nodes = 12;
    p.num_events = WARM_EVENTS + BATCH;
    p.feature_width = edge_width;
    p.seed = 51;
    event_stream es;
    tf_error err;
    ck_assert(generate_events(&p, &es, &err) == TF_OK);
    for (int64_t i = 0; i < es.num_events; i++)
        es.time[i] *= 0.01;
    temporal_csr history;
    ck_assert(temporal_csr_build(&history, &es, &err) == TF_OK);
    event_model_config config = event_model_config_with(kind, 4, 3, 4, edge_width);
    event_model m;
    ck_assert(event_model_create(&m, &config, 52, &err) == TF_OK);
    /* APAN with random parameters (small_apan(): 3 mails, 3 neighbours): at the initial values all of
     * a row's scores can share a sign, and then w_k's bias gets no gradient to check. */
    if (kind == EVENT_MODEL_APAN) {
        event_model_free(&m);
        small_apan(&m, edge_width, 52);
    }
    node_memory memory;
    ck_assert(node_memory_create_mailbox(&memory, es.num_nodes, 4, event_model_mail_width(&m), m.config.mails, &err) ==
              TF_OK);
    rng r;
    rng_seed(&r, 53);
    int32_t negatives[BATCH];
    float scores[2 * BATCH], dscores[2 * BATCH];
    event_batch batch = {&es, es.features, 0, BATCH, negatives};
    for (batch.first = 0; batch.first <= WARM_EVENTS; batch.first += BATCH) {
        for (int j = 0; j < BATCH; j++)
            negatives[j] = (int32_t)rng_below(&r, (uint64_t)es.num_nodes);
        event_tape tape;
        ck_assert_msg(event_model_forward(&m, &memory, &history, &batch, &tape, scores, &err) == TF_OK, "%s",
                      err.message);
        if (batch.first == WARM_EVENTS) { /* the batch that is checked */
            event_model_loss(scores, BATCH, dscores);
            parameters_zero_grad(&m.parameters);
            ck_assert(event_model_backward(&m, &tape, dscores, &err) == TF_OK);
            printf("%s batch of %d events: %lld entries (%lld roots + sampled neighbours)\n",
                   event_model_kind_name(kind), BATCH, (long long)tape.entries, (long long)tape.roots);
        } else {
            event_model_write_memory(&m, &tape, &batch, &memory);
        }
        event_tape_free(&tape);
    }
    batch.first = WARM_EVENTS;
    model_case c = {&m, &memory, &history, &batch, scores};
    double worst = 0;
    const char *worst_name = "";
    for (int64_t i = 0; i < m.parameters.count; i++) {
        parameter *q = &m.parameters.items[i];
        double e = finite_difference_error(model_loss, &c, q->value.data, q->grad.data, q->value.size);
        printf("  %-40s max error %.2e\n", q->name, e);
        assert_not_negligible(q->name, q->grad.data, q->value.size);
        if (e >= worst) {
            worst = e;
            worst_name = q->name;
        }
    }
    char what[160];
    snprintf(what, sizeof what, "model %s%s, %lld parameters (worst: %s)", event_model_kind_name(kind),
             edge_width ? " + edge features" : "", (long long)parameters_size(&m.parameters), worst_name);
    report(what, worst);
    node_memory_free(&memory);
    event_model_free(&m);
    temporal_csr_free(&history);
    event_stream_free(&es);
}

START_TEST(model_tgn) { check_model(EVENT_MODEL_TGN, 0); }
END_TEST
START_TEST(model_tgn_edge_features) { check_model(EVENT_MODEL_TGN, 2); }
END_TEST
START_TEST(model_jodie) { check_model(EVENT_MODEL_JODIE, 0); }
END_TEST
START_TEST(model_jodie_edge_features) { check_model(EVENT_MODEL_JODIE, 2); }
END_TEST
START_TEST(model_apan) { check_model(EVENT_MODEL_APAN, 0); }
END_TEST
START_TEST(model_apan_edge_features) { check_model(EVENT_MODEL_APAN, 2); }
END_TEST

int main(void)
{
    Suite *suite = suite_create("event_gradcheck");
    TCase *layers = tcase_create("layers");
    tcase_add_test(layers, pointwise_layers);
    tcase_add_test(layers, binary_cross_entropy);
    tcase_add_test(layers, rnn_cell);
    tcase_add_test(layers, temporal_attention_layer);
    tcase_add_test(layers, mailbox_attention_layer);
    tcase_add_test(layers, link_decoder_layer);
    suite_add_tcase(suite, layers);
    TCase *models = tcase_create("models");
    tcase_set_timeout(models, 300);
    tcase_add_test(models, model_tgn);
    tcase_add_test(models, model_tgn_edge_features);
    tcase_add_test(models, model_jodie);
    tcase_add_test(models, model_jodie_edge_features);
    tcase_add_test(models, model_apan);
    tcase_add_test(models, model_apan_edge_features);
    suite_add_tcase(suite, models);
    return run_suite(suite);
}
