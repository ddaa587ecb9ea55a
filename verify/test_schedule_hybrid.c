/* DynaHB's hybrid batches (ref/schedule_hybrid.h), the DQN batch-size adjuster
 * (ref/schedule_dqn.h) and the batch reservoir (ref/schedule_reservoir.h, opt/schedule_reservoir.h):
 *  - walk-count loads on a hand graph, the balanced-group sampler, the frontier and blocks;
 *  - a hybrid batch's loss and gradient equal the full window's with the loss over its present
 *    targets only (ref kernels: the count of differing values is printed, 0 expected; opt
 *    kernels: fp);
 *  - the threaded reservoir hands out exactly the serial reservoir's batches on 1, 3 and 9
 *    generator threads;
 *  - the DQN: reward, epsilon, action sizes, TD target and gradient (finite differences), same
 *    seed twice is bit for bit the same, and it learns a bandit. */
#include <math.h>

#include "datasets/dataset.h"
#include "opt/kernels.h"
#include "opt/schedule_reservoir.h"
#include "ref/models/model.h"
#include "ref/core/rng.h"
#include "ref/schedule_dqn.h"
#include "ref/schedule_hybrid.h"
#include "ref/schedule_reservoir.h"
#include "verify/gradcheck.h"

static const char *const generated = "powerlaw:nodes=300,edges=3000,snapshots=20,churn=0.05,arrival=0.02,seed=3";

/* The generated data and a source over its first 16 snapshots in 10 balanced groups: what the
 * sampler and block tests draw from. Returns the data's snapshots; free both. */
static const snapshot_seq *generated_source(dataset *d, hybrid_source *h)
{
    tf_error err;
    load_or_fail(generated, d);
    ck_assert_msg(hybrid_source_create(h, &d->snapshots, 16, 10, &err) == TF_OK, "%s", err.message);
    return &d->snapshots;
}

static int32_t *minus_ones(int64_t n)
{
    int32_t *scratch = malloc((size_t)n * sizeof *scratch);
    ck_assert_ptr_nonnull(scratch);
    memset(scratch, 0xff, (size_t)n * sizeof *scratch);
    return scratch;
}

/* ---- 1. loads ------------------------------------------------------------------------------------- */

/* Snapshot 0: 1 -> 0, 2 -> 0, 3 -> 1, 3 -> 2; snapshot 1: 0 -> 3.
 * One hop (in-edges): v0 2, v1 1, v2 1, v3 0 + 1 = 1.
 * Two hops: a_2(v0) = a_1(1) + a_1(2) = 2 at snapshot 0 (the walks 3 -> 1 -> 0 and 3 -> 2 -> 0:
 * two walks, one distinct vertex), every other a_2 is 0; load = 2 raw_1 + raw_2:
 * v0 = 4 + 2 = 6, v1 = 2, v2 = 2, v3 = 2. */
START_TEST(walk_load)
{
    tf_error err;
    snapshot_seq seq;
    ck_assert(snapshot_seq_alloc(&seq, 2, 4, 1, 1, &err) == TF_OK);
    const int32_t src0[4] = {1, 2, 3, 3}, dst0[4] = {0, 0, 1, 2}, src1[1] = {0}, dst1[1] = {3};
    ck_assert(snapshot_seq_set_edges(&seq, 0, 4, src0, dst0, NULL, &err) == TF_OK);
    ck_assert(snapshot_seq_set_edges(&seq, 1, 1, src1, dst1, NULL, &err) == TF_OK);
    int64_t one[4], two[4];
    ck_assert(hybrid_vertex_load(&seq, 0, 2, 1, one, &err) == TF_OK);
    ck_assert(hybrid_vertex_load(&seq, 0, 2, 2, two, &err) == TF_OK);
    printf("walk loads, one hop: %lld %lld %lld %lld (expected 2 1 1 1); two hops: %lld %lld %lld %lld (expected 6 2 2 "
           "2)\n", (long long)one[0], (long long)one[1], (long long)one[2], (long long)one[3], (long long)two[0],
           (long long)two[1], (long long)two[2], (long long)two[3]);
    const int64_t expected_one[4] = {2, 1, 1, 1}, expected_two[4] = {6, 2, 2, 2};
    ck_assert(memcmp(one, expected_one, sizeof one) == 0);
    ck_assert(memcmp(two, expected_two, sizeof two) == 0);
    EXPECT_INPUT_ERROR(hybrid_vertex_load(&seq, 1, 2, 1, one, &err), &err, "inside 0..1");
    snapshot_seq_free(&seq);
}
END_TEST

/* ---- 2. the sampler ------------------------------------------------------------------------------------ */

START_TEST(balanced_sampler)
{
    dataset d;
    hybrid_source h;
    const snapshot_seq *seq = generated_source(&d, &h);
    tf_error err;
    int64_t *loads = malloc((size_t)seq->num_nodes * sizeof *loads);
    ck_assert(hybrid_vertex_load(seq, 0, 16, 1, loads, &err) == TF_OK);
    int64_t out_of_order = 0;
    for (int64_t p = 1; p < seq->num_nodes; p++) {
        const int32_t a = h.order[p - 1], b = h.order[p];
        out_of_order += loads[a] < loads[b] || (loads[a] == loads[b] && a > b);
    }
    int32_t *scratch = minus_ones(seq->num_nodes);
    hybrid_sizes sizes = {4, 37}; /* floor(37 / 10) = 3 per group */
    int64_t wrong_per_group = 0, not_ascending = 0;
    int32_t *group_of = malloc((size_t)seq->num_nodes * sizeof *group_of);
    for (int g = 0; g < h.groups; g++)
        for (int64_t p = h.group_offsets[g]; p < h.group_offsets[g + 1]; p++)
            group_of[h.order[p]] = g;
    for (uint64_t q = 0; q < 20; q++) {
        hybrid_batch b;
        ck_assert(hybrid_batch_build(&b, &h, sizes, 5, HYBRID_STREAM, q, scratch, &err) == TF_OK);
        int per_group[10] = {0};
        for (int64_t i = 0; i < b.num_targets; i++) {
            per_group[group_of[b.frontier[i]]]++;
            not_ascending += i > 0 && b.frontier[i - 1] >= b.frontier[i];
        }
        for (int g = 0; g < 10; g++)
            wrong_per_group += per_group[g] != 3;
        ck_assert(b.first >= 0 && b.first + b.count <= 16);
        hybrid_batch_free(&b);
    }
    hybrid_batch a, same, other;
    ck_assert(hybrid_batch_build(&a, &h, sizes, 5, HYBRID_STREAM, 7, scratch, &err) == TF_OK);
    ck_assert(hybrid_batch_build(&same, &h, sizes, 5, HYBRID_STREAM, 7, scratch, &err) == TF_OK);
    ck_assert(hybrid_batch_build(&other, &h, sizes, 5, HYBRID_STREAM, 8, scratch, &err) == TF_OK);
    const int64_t differing_same = hybrid_batch_differing(&a, &same), differing_other = hybrid_batch_differing(&a, &other);
    int64_t dirty = 0;
    for (int64_t v = 0; v < seq->num_nodes; v++)
        dirty += scratch[v] != -1;
    printf("sampler: vertices out of (load desc, id) order %lld, 20 batches of 37 asked over 10 groups: groups without "
           "exactly 3 targets %lld, targets not ascending %lld, scratch entries left set %lld (all must be 0); key 7 "
           "twice: %lld values differ (must be 0), keys 7 and 8: %lld differ\n",
           (long long)out_of_order, (long long)wrong_per_group, (long long)not_ascending, (long long)dirty,
           (long long)differing_same, (long long)differing_other);
    ck_assert_int_eq(out_of_order + wrong_per_group + not_ascending + dirty + differing_same, 0);
    ck_assert_int_gt(differing_other, 0);
    hybrid_sizes too_few = {4, 9};
    hybrid_batch bad;
    EXPECT_INPUT_ERROR(hybrid_batch_build(&bad, &h, too_few, 5, HYBRID_STREAM, 0, scratch, &err), &err, "9 targets",
                       "at least one per balanced group");
    hybrid_batch_free(&a);
    hybrid_batch_free(&same);
    hybrid_batch_free(&other);
    hybrid_source_free(&h);
    free(loads);
    free(group_of);
    free(scratch);
    dataset_free(&d);
}
END_TEST

/* ---- 3. frontier and blocks -------------------------------------------------------------------------- */

START_TEST(frontier_and_blocks)
{
    dataset d;
    hybrid_source h;
    const snapshot_seq *seq = generated_source(&d, &h);
    int32_t *scratch = minus_ones(seq->num_nodes);
    tf_error err;
    char *expected = calloc((size_t)seq->num_nodes, 1), *seen = calloc((size_t)seq->num_nodes, 1);
    int64_t wrong = 0, edges_checked = 0;
    for (uint64_t q = 0; q < 5; q++) {
        hybrid_batch b;
        hybrid_sizes sizes = {5, 30};
        ck_assert(hybrid_batch_build(&b, &h, sizes, 9, HYBRID_STREAM, q, scratch, &err) == TF_OK);
        memset(expected, 0, (size_t)seq->num_nodes);
        memset(seen, 0, (size_t)seq->num_nodes);
        for (int64_t i = 0; i < b.num_targets; i++)
            expected[b.frontier[i]] = 1;
        for (int64_t k = 0; k < b.count; k++) {
            const csr *g = &seq->snapshots[b.first + k].graph;
            propagation op; /* built afresh: the coefficients must be the full snapshot's */
            ck_assert(ref_propagation_gcn(&op, g, EDGE_NORM_SYMMETRIC, 1, &err) == TF_OK);
            const hybrid_block *block = &b.blocks[k];
            for (int64_t i = 0; i < b.num_targets; i++) {
                const int32_t v = b.frontier[i];
                wrong += block->row_ptr[i + 1] - block->row_ptr[i] != g->row_ptr[v + 1] - g->row_ptr[v];
                wrong += memcmp(&block->self_coefficient[i], &op.self_coefficient[v], sizeof(float)) != 0;
                for (int64_t e = g->row_ptr[v], at = block->row_ptr[i]; e < g->row_ptr[v + 1]; e++, at++) {
                    expected[g->col[e]] = 1;
                    wrong += b.frontier[block->col[at]] != g->col[e];
                    wrong += memcmp(&block->edge_coefficient[at], &op.edge_coefficient[e], sizeof(float)) != 0;
                    edges_checked++;
                }
            }
            ref_propagation_free(&op);
        }
        for (int64_t p = 0; p < b.num_frontier; p++) {
            wrong += seen[b.frontier[p]] || !expected[b.frontier[p]]; /* once, and wanted */
            seen[b.frontier[p]] = 1;
        }
        for (int64_t v = 0; v < seq->num_nodes; v++)
            wrong += expected[v] && !seen[v];
        hybrid_batch_free(&b);
    }
    printf("frontier and blocks, 5 batches, %lld edges checked: %lld wrong entries (must be 0)\n",
           (long long)edges_checked, (long long)wrong);
    ck_assert_int_eq(wrong, 0);
    free(expected);
    free(seen);
    free(scratch);
    hybrid_source_free(&h);
    dataset_free(&d);
}
END_TEST

/* ---- 4. the equality ----------------------------------------------------------------------------------- */

/* @p batches batches of 5 % of the vertices x 4 snapshots of model @p kind (a one-hop one: T-GCN,
 * WD-GCN); with @p want_absent, some target rows must be absent (vertices that have left), the case
 * where the loss's mask matters. */
static void equality_on(const char *spec, model_kind kind, uint64_t batches, int want_absent)
{
    tf_error err;
    dataset d;
    const snapshot_seq *seq = load_snapshots(spec, &d);
    const int64_t train = seq->num_snapshots / 2;
    model_config config = {kind, seq->feature_width, 8, seq->target_width, 2, 0};
    model oracle, ours;
    ck_assert(model_create(&oracle, &config, 3, &err) == TF_OK);
    ck_assert(model_create(&ours, &config, 3, &err) == TF_OK);
    hybrid_source h;
    ck_assert(hybrid_source_create(&h, seq, train, 10, &err) == TF_OK);
    int32_t *scratch = minus_ones(seq->num_nodes);
    hybrid_sizes sizes = {4, seq->num_nodes / 20 > 10 ? seq->num_nodes / 20 : 10};
    for (int kernels = 0; kernels < 2; kernels++) {
        ours.kernels = kernels ? &opt_kernels : oracle.kernels;
        double worst = 0;
        int64_t differing = 0, absent_targets = 0;
        for (uint64_t q = 0; q < batches; q++) {
            hybrid_batch b;
            ck_assert(hybrid_batch_build(&b, &h, sizes, 4, HYBRID_STREAM, q, scratch, &err) == TF_OK);
            for (int64_t t = 0; t < b.count; t++)
                for (int64_t i = 0; i < b.num_targets; i++)
                    absent_targets += !b.view.snapshots[t].present[i];
            parameters_zero_grad(&oracle.parameters);
            parameters_zero_grad(&ours.parameters);
            double expected;
            ck_assert(hybrid_window_gradient(&oracle, seq, &b, 1.0f, &expected, &err) == TF_OK);
            double loss;
            ck_assert_msg(hybrid_batch_gradient(&ours, &b, 1.0f, &loss, &err) == TF_OK, "%s", err.message);
            worst = fmax(worst, fabs(loss - expected) / fmax(1, fabs(expected)));
            differing += memcmp(&loss, &expected, sizeof loss) != 0;
            for (int64_t p = 0; p < oracle.parameters.count; p++) {
                const tensor *a = &ours.parameters.items[p].grad, *e = &oracle.parameters.items[p].grad;
                worst = fmax(worst, relative_error(a->data, e->data, a->size));
                differing += differing_values(a->data, e->data, a->size);
            }
            hybrid_batch_free(&b);
        }
        printf("hybrid batch vs the restricted window, %s, %s, %llu batches of %lld targets x 4 snapshots (%lld absent "
               "target rows), %s kernels: loss and gradients %.2e (<= 1e-5), %lld values differ%s\n",
               d.name, model_kind_name(kind), (unsigned long long)batches, (long long)sizes.targets,
               (long long)absent_targets,
               kernels ? "opt" : "ref", worst,
               (long long)differing, kernels ? "" : " (0 expected)");
        ck_assert(worst <= 1e-5);
        ck_assert(!want_absent || absent_targets > 0);
    }
    model_free(&oracle);
    config.kind = MODEL_GCLSTM;
    ck_assert(model_create(&oracle, &config, 3, &err) == TF_OK);
    hybrid_batch b;
    ck_assert(hybrid_batch_build(&b, &h, sizes, 4, HYBRID_STREAM, 0, scratch, &err) == TF_OK);
    double loss;
    EXPECT_INPUT_ERROR(hybrid_batch_gradient(&oracle, &b, 1.0f, &loss, &err), &err, "use --model tgcn or wdgcn");
    hybrid_batch_free(&b);
    model_free(&oracle);
    model_free(&ours);
    hybrid_source_free(&h);
    free(scratch);
    dataset_free(&d);
}

START_TEST(hybrid_equals_restricted_snapshot_batch)
{
    equality_on("england_covid", MODEL_TGCN, 2, 0);
    equality_on(generated, MODEL_TGCN, 5, 1);
    /* WD-GCN: its LSTM per vertex reads the same A^ X_t. Five batches under memcheck too: the first
     * two have no absent target row, and the mask's path is what the absent rows check. */
    equality_on(generated, MODEL_WDGCN, 5, 1);
}
END_TEST

/* ---- 5. the reservoir --------------------------------------------------------------------------------- */

START_TEST(reservoir_threads_equal_serial)
{
    tf_error err;
    dataset d;
    load_or_fail("powerlaw:nodes=200,edges=1500,snapshots=20,churn=0.05,seed=5", &d);
    hybrid_source h;
    ck_assert(hybrid_source_create(&h, &d.snapshots, 16, 10, &err) == TF_OK);
    hybrid_sizes sizes[HYBRID_ACTIONS];
    for (int a = 0; a < HYBRID_ACTIONS; a++)
        hybrid_action_sizes(a, 16, 200, 10, &sizes[a]);
    const int thread_counts[3] = {1, 3, 9};
    for (int c = 0; c < 3; c++) {
        ref_reservoir serial;
        opt_reservoir *threaded;
        ck_assert(ref_reservoir_create(&serial, &h, HYBRID_ACTIONS, sizes, 11, &err) == TF_OK);
        ck_assert(opt_reservoir_create(&threaded, &h, HYBRID_ACTIONS, sizes, thread_counts[c], 11, &err) == TF_OK);
        rng r;
        rng_seed(&r, 42);
        int64_t differing = 0, reused = 0;
        for (int g = 0; g < 120; g++) {
            const int action = (int)rng_below(&r, HYBRID_ACTIONS);
            const int64_t before = serial.ledger.stored[action];
            const hybrid_batch *a, *b;
            ck_assert(ref_reservoir_get(&serial, action, &a, &err) == TF_OK);
            ck_assert(opt_reservoir_get(threaded, action, &b, &err) == TF_OK);
            differing += hybrid_batch_differing(a, b);
            reused += serial.ledger.stored[action] == before;
        }
        int64_t over = 0;
        for (int a = 0; a < HYBRID_ACTIONS; a++)
            over += serial.ledger.stored[a] > serial.ledger.max_batches[a];
        printf("reservoir, 120 gets over 9 actions, %d generator thread(s): %lld values differ from the serial "
               "reservoir (must be 0); %lld reuses; actions over their max: %lld (must be 0); max batches %lld .. %lld\n",
               thread_counts[c], (long long)differing, (long long)reused, (long long)over,
               (long long)serial.ledger.max_batches[HYBRID_ACTIONS - 1], (long long)serial.ledger.max_batches[0]);
        ck_assert_int_eq(differing, 0);
        ck_assert_int_eq(over, 0);
        ck_assert_int_gt(reused, 0);
        opt_reservoir_free(threaded);
        ref_reservoir_free(&serial);
    }
    opt_reservoir *none;
    EXPECT_INPUT_ERROR(opt_reservoir_create(&none, &h, HYBRID_ACTIONS, sizes, 10, 11, &err), &err, "expected 1..9");
    hybrid_source_free(&h);
    dataset_free(&d);
}
END_TEST

/* ---- 6-9. the DQN ------------------------------------------------------------------------------------- */

START_TEST(dqn_reward_rules)
{
    /* t_l = 2, t_c = 1, drop_l = 0.5, drop_c = 1: (2 - 1) / 2 + (1 - 0.5) / 1 = 1 */
    const double hand = dqn_reward(2, 1, 0.5, 1);
    const double no_work = dqn_reward(0, 1, 0.5, 1);       /* time term 0: 0.5 */
    const double clipped = dqn_reward(1, 10, 0.01, 1);      /* (1 - 10) / 1 clips to -1; 0.99 */
    const double rose = dqn_reward(2, 1, 0.5, -0.25);       /* loss rose: -|0.5| - |clip(3)| = -1.5 */
    const double flat = dqn_reward(2, 1, 0.5, 0);           /* no drop: loss term 0, -|0.5| */
    printf("DQN reward: %g (expected 1), %g (0.5), %g (-0.01), %g (-1.5), %g (-0.5)\n", hand, no_work, clipped, rose,
           flat);
    ck_assert_double_eq_tol(hand, 1, 1e-12);
    ck_assert_double_eq_tol(no_work, 0.5, 1e-12);
    ck_assert_double_eq_tol(clipped, -1 + 0.99, 1e-12);
    ck_assert_double_eq_tol(rose, -1.5, 1e-12);
    ck_assert_double_eq_tol(flat, -0.5, 1e-12);
}
END_TEST

START_TEST(dqn_epsilon_and_actions)
{
    tf_error err;
    dqn q;
    dqn_options o;
    dqn_options_default(&o);
    ck_assert(dqn_create(&q, &o, &err) == TF_OK);
    for (int k = 0; k < 5; k++)
        dqn_remember(&q, 0.1f * (float)k, k, 0, 0);
    double worst = 0;
    for (int k = 1; k <= 60; k++) {
        ck_assert(dqn_train_step(&q) >= 0);
        worst = fmax(worst, fabs(q.epsilon - fmax(pow(0.95, k), 0.1)));
    }
    printf("epsilon after k training steps vs max(0.95^k, 0.1), k = 1..60: worst %.1e\n", worst);
    ck_assert(worst <= 1e-12);
    dqn_free(&q);
    /* 20 vertices, 30 training snapshots, 10 groups: snapshots 3, 6, 9; targets 0, 1, 2 clamp to 10 */
    int wrong = 0;
    for (int a = 0; a < HYBRID_ACTIONS; a++) {
        hybrid_sizes s;
        hybrid_action_sizes(a, 30, 20, 10, &s);
        wrong += s.snapshots != 3 * (a / 3 + 1) || s.targets != 10;
    }
    hybrid_sizes big;
    hybrid_action_sizes(8, 5, 1000, 10, &big); /* 30 % of 5 = 1.5 -> 1; 10 % of 1000 = 100 */
    printf("action sizes: %d wrong on the clamped graph (must be 0); action 8 on 1000 x 5: %lld x %lld\n", wrong,
           (long long)big.targets, (long long)big.snapshots);
    ck_assert_int_eq(wrong, 0);
    ck_assert(big.snapshots == 1 && big.targets == 100);
}
END_TEST

typedef struct td_case {
    parameter_list *net;
    float states[5], targets[5];
    int actions[5];
} td_case;

static double td_loss_only(void *context)
{
    td_case *c = context;
    return dqn_td_loss(c->net, c->states, c->actions, c->targets, 5, 0);
}

START_TEST(dqn_td_target_and_gradient)
{
    tf_error err;
    dqn q;
    dqn_options o;
    dqn_options_default(&o);
    ck_assert(dqn_create(&q, &o, &err) == TF_OK);
    /* hand-set: W1 = 1, b1 = 0, W2 row a = a, b2 = 0: Q(s)[a] = a * 16 * relu(s) */
    parameter_list *nets[2] = {&q.online, &q.target};
    for (int k = 0; k < 2; k++) {
        for (int h = 0; h < DQN_HIDDEN; h++) {
            nets[k]->items[0].value.data[h] = 1;
            nets[k]->items[1].value.data[h] = 0;
            for (int a = 0; a < DQN_ACTIONS; a++)
                nets[k]->items[2].value.data[a * DQN_HIDDEN + h] = (float)a;
        }
        memset(nets[k]->items[3].value.data, 0, DQN_ACTIONS * sizeof(float));
    }
    float values[DQN_ACTIONS];
    dqn_q_values(&q.online, 0.5f, values);
    int wrong = 0;
    for (int a = 0; a < DQN_ACTIONS; a++)
        wrong += values[a] != (float)a * 8.0f;
    /* one transition (0.5, 2, r = 1, 0.25), replay of 5 copies: y = 1 + 0.99 * 8 * 16 * 0.25 = 32.68,
     * Q = 2 * 8 = 16, TD loss (16 - 32.68)^2 */
    for (int k = 0; k < 5; k++)
        dqn_remember(&q, 0.5f, 2, 1, 0.25f);
    const double loss = dqn_train_step(&q);
    const double expected = (16.0 - (1 + 0.99 * 32.0)) * (16.0 - (1 + 0.99 * 32.0));
    printf("DQN hand network: Q(0.5) = a x 8 (%d wrong), TD loss %.6f (expected %.6f)\n", wrong, loss, expected);
    ck_assert_int_eq(wrong, 0);
    ck_assert(fabs(loss - expected) <= 1e-4 * expected);
    dqn_free(&q);
    /* the gradient of the TD loss against central differences, all 185 parameters */
    o.seed = 9;
    ck_assert(dqn_create(&q, &o, &err) == TF_OK);
    td_case c = {&q.online, {0.3f, -0.7f, 0.9f, 0.05f, 1.2f}, {1.5f, -0.2f, 0.7f, 2.0f, 0.1f}, {0, 3, 8, 4, 4}};
    parameters_zero_grad(&q.online);
    dqn_td_loss(&q.online, c.states, c.actions, c.targets, 5, 1);
    double worst = 0;
    int64_t count = 0;
    for (int64_t p = 0; p < q.online.count; p++) {
        parameter *param = &q.online.items[p];
        worst = fmax(worst, finite_difference_error(td_loss_only, &c, param->value.data, param->grad.data,
                                                    param->value.size));
        count += param->value.size;
    }
    printf("DQN TD-loss gradient over %lld parameters vs central differences: %.2e (<= %g)\n", (long long)count, worst,
           TOLERANCE);
    ck_assert_int_eq(count, 185);
    ck_assert(worst <= TOLERANCE);
    dqn_free(&q);
}
END_TEST

/* 400 scripted steps: choose from a state, remember with a reward, train. Returns the actions. */
static void script(dqn *q, int *actions, int bandit)
{
    rng r;
    rng_seed(&r, 77);
    float state = 0;
    for (int k = 0; k < 400; k++) {
        const int a = dqn_choose(q, state);
        actions[k] = a;
        const float reward = bandit ? (a == 4 ? 1.0f : 0.0f) : (float)(rng_uniform(&r) - 0.5);
        const float next = bandit ? 0.0f : (float)(rng_uniform(&r) - 0.5);
        dqn_remember(q, state, a, reward, next);
        dqn_train_step(q);
        state = next;
    }
}

START_TEST(dqn_deterministic_and_learns)
{
    tf_error err;
    dqn_options o;
    dqn_options_default(&o);
    o.seed = 3;
    dqn a, b, c;
    ck_assert(dqn_create(&a, &o, &err) == TF_OK);
    ck_assert(dqn_create(&b, &o, &err) == TF_OK);
    o.seed = 4;
    ck_assert(dqn_create(&c, &o, &err) == TF_OK);
    int first[400], second[400], other[400];
    script(&a, first, 0);
    script(&b, second, 0);
    script(&c, other, 0);
    int64_t differing_actions = 0, differing_parameters = 0, other_actions = 0;
    for (int k = 0; k < 400; k++) {
        differing_actions += first[k] != second[k];
        other_actions += first[k] != other[k];
    }
    for (int64_t p = 0; p < a.online.count; p++)
        differing_parameters += differing_values(a.online.items[p].value.data, b.online.items[p].value.data,
                                               a.online.items[p].value.size) +
                                differing_values(a.target.items[p].value.data, b.target.items[p].value.data,
                                               a.target.items[p].value.size);
    dqn_free(&a);
    dqn_free(&b);
    dqn_free(&c);
    /* a bandit: action 4 always earns 1, the others 0 */
    o.seed = 5;
    dqn bandit;
    ck_assert(dqn_create(&bandit, &o, &err) == TF_OK);
    int actions[400];
    script(&bandit, actions, 1);
    float values[DQN_ACTIONS];
    dqn_q_values(&bandit.online, 0, values);
    int greedy = 0;
    for (int k = 1; k < DQN_ACTIONS; k++)
        if (values[k] > values[greedy])
            greedy = k;
    int late_fours = 0;
    for (int k = 300; k < 400; k++)
        late_fours += actions[k] == 4;
    printf("DQN seed 3 twice, 400 steps: %lld actions and %lld parameters differ (must be 0); seed 4: %lld actions "
           "differ; bandit: greedy action %d (must be 4), action 4 in %d of the last 100 steps, Q(4) - max other %.3f\n",
           (long long)differing_actions, (long long)differing_parameters, (long long)other_actions, greedy, late_fours,
           values[4] - fmax(values[greedy == 4 ? 3 : greedy], values[0]));
    ck_assert_int_eq(differing_actions, 0);
    ck_assert_int_eq(differing_parameters, 0);
    ck_assert_int_gt(other_actions, 0);
    ck_assert_int_eq(greedy, 4);
    dqn_free(&bandit);
}
END_TEST

int main(void)
{
    opt_set_threads(1);
    Suite *suite = suite_create("schedule_hybrid");
    TCase *cases = tcase_create("hybrid");
    tcase_set_timeout(cases, 600);
    tcase_add_test(cases, walk_load);
    tcase_add_test(cases, balanced_sampler);
    tcase_add_test(cases, frontier_and_blocks);
    tcase_add_test(cases, hybrid_equals_restricted_snapshot_batch);
    tcase_add_test(cases, reservoir_threads_equal_serial);
    tcase_add_test(cases, dqn_reward_rules);
    tcase_add_test(cases, dqn_epsilon_and_actions);
    tcase_add_test(cases, dqn_td_target_and_gradient);
    tcase_add_test(cases, dqn_deterministic_and_learns);
    suite_add_tcase(suite, cases);
    return run_suite(suite);
}
