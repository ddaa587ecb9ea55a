/* DGC's temporal and spatial fusion (opt/fusion.h) against their references (ref/fusion.h).
 *  - Temporal: the time encoder (GRU and LSTM) over sequences of different lengths, zero-padded
 *    and in fused lanes, against each sequence run alone: outputs and input gradients bitwise,
 *    the four parameter gradients fp (max |a - b| / max(1, |ref|) <= 1e-5), on generated lengths
 *    (uniform in 1..T, heavy-tailed, all equal, all 1) and on real vertex lifetimes
 *    (twitter_tennis activity, bitcoin_alpha events grouped into snapshots, a generated graph with
 *    vertex churn). Fused lanes must compute exactly the useful steps.
 *  - Two suites: "fusion" (generated data) and "fusion_real_data" (bundled datasets); see main.
 *  - The mask rule: the paper's Eq. 4 taken literally (mask on the update gate only), and no
 *    mask at all, must give wrong outputs that the check above rejects.
 *  - The cells T-GCN and GCRN-M1 run per vertex (T-GCN's GRU, the LSTM with peepholes) the same way,
 *    and the T-GCN lanes, fed the model's own gate convolutions and weights, give the model's states.
 *  - Spatial: each chunk's data read from its group's fused load is bitwise what loading the
 *    chunk alone gives, fewer bytes are loaded, and no group exceeds the memory cap.
 * Every check prints what it measured. Runs with 2 OpenMP threads. */
#include <math.h>

#include "datasets/dataset.h"
#include "opt/fusion.h"
#include "opt/kernels.h"
#include "ref/fusion.h"
#include "ref/fusion_chunks.h"
#include "ref/fusion_sequences.h"
#include "ref/core/rng.h"
#include "ref/nn/kernels.h"
#include "ref/nn/layers.h"
#include "ref/nn/propagate.h"
#include "ref/models/model.h"
#include "ref/nn/self_attention.h"
#include "verify/testing.h"

#define TOLERANCE 1e-5

/* twitter_tennis, loaded once for the whole program: parsing it is most of this suite's time
 * under Valgrind. */
static dataset tennis_data;
static int tennis_loaded;
static dataset *tennis(void)
{
    if (!tennis_loaded) {
        load_or_fail("twitter_tennis", &tennis_data);
        tennis_loaded = 1;
    }
    return &tennis_data;
}

static float *zeros(int64_t count)
{
    float *values = calloc((size_t)(count ? count : 1), sizeof *values);
    ck_assert_ptr_nonnull(values);
    return values;
}

/* A time encoder with its own weights and gradient buffers (a tensor its kind has not is empty). */
typedef struct encoder_fixture {
    time_encoder encoder;
    float *weights[TIME_ENCODER_TENSORS];   /* weight_ih, weight_hh, bias_ih, bias_hh, three peepholes */
    float *gradients[TIME_ENCODER_TENSORS];
    int64_t sizes[TIME_ENCODER_TENSORS];
} encoder_fixture;

static void fixture_create(encoder_fixture *f, time_encoder_kind kind, int64_t in, int64_t hidden, rng *r)
{
    f->encoder = (time_encoder){.kind = kind, .in = in, .hidden = hidden};
    time_encoder_sizes(&f->encoder, f->sizes);
    for (int k = 0; k < TIME_ENCODER_TENSORS; k++) {
        /* torch's init range 1/sqrt(hidden), doubled so the gates leave their linear region */
        f->weights[k] = f->sizes[k] ? random_floats(f->sizes[k], 2.0f / sqrtf((float)hidden), r) : NULL;
        f->gradients[k] = f->sizes[k] ? zeros(f->sizes[k]) : NULL;
    }
    f->encoder = (time_encoder){kind, in, hidden, f->weights[0], f->weights[1], f->weights[2], f->weights[3],
                                {f->weights[4], f->weights[5], f->weights[6]}};
}

static void fixture_zero_gradients(encoder_fixture *f)
{
    for (int k = 0; k < TIME_ENCODER_TENSORS; k++)
        if (f->sizes[k])
            memset(f->gradients[k], 0, (size_t)f->sizes[k] * sizeof(float));
}

static time_encoder_gradients fixture_gradients(encoder_fixture *f)
{
    return (time_encoder_gradients){f->gradients[0], f->gradients[1], f->gradients[2], f->gradients[3],
                                    {f->gradients[4], f->gradients[5], f->gradients[6]}};
}

static void fixture_free(encoder_fixture *f)
{
    for (int k = 0; k < TIME_ENCODER_TENSORS; k++)
        free(f->weights[k]), free(f->gradients[k]);
}

/* What one layout measured against the reference. */
typedef struct comparison {
    double output, input_gradient, parameter_gradient;   /* worst relative errors */
    int64_t differing;                                   /* h and dx values that differ in bits */
} comparison;

/* Reference results for one set, kept to compare every layout against. */
typedef struct reference_run {
    float *x, *dh_out, *h, *dx, *gradients[TIME_ENCODER_TENSORS];
} reference_run;

static void reference_create(reference_run *run, encoder_fixture *f, const sequence_set *set, rng *r)
{
    tf_error err;
    const int64_t total = set->total_steps, in = f->encoder.in, H = f->encoder.hidden;
    run->x = random_floats(total * in, 1.0f, r);
    run->dh_out = random_floats(total * H, 1.0f, r);
    run->h = zeros(total * H);
    run->dx = zeros(total * in);
    ck_assert_msg(ref_fusion_forward(&f->encoder, set, run->x, run->h, &err) == TF_OK, "%s", err.message);
    fixture_zero_gradients(f);
    time_encoder_gradients g = fixture_gradients(f);
    ck_assert_msg(ref_fusion_backward(&f->encoder, set, run->x, run->dh_out, run->dx, &g, &err) == TF_OK, "%s",
                  err.message);
    for (int k = 0; k < TIME_ENCODER_TENSORS; k++) {
        run->gradients[k] = zeros(f->sizes[k]);
        if (f->sizes[k])
            memcpy(run->gradients[k], f->gradients[k], (size_t)f->sizes[k] * sizeof(float));
    }
}

static void reference_free(reference_run *run)
{
    free(run->x), free(run->dh_out), free(run->h), free(run->dx);
    for (int k = 0; k < TIME_ENCODER_TENSORS; k++)
        free(run->gradients[k]);
}

/* Run @p plan's forward and backward and compare with the reference. */
static comparison compare_plan(encoder_fixture *f, const sequence_set *set, const fusion_plan *plan,
                               const reference_run *ref)
{
    tf_error err;
    const int64_t total = set->total_steps, in = f->encoder.in, H = f->encoder.hidden;
    float *h = zeros(total * H), *dx = zeros(total * in);
    fusion_tape tape;
    ck_assert_msg(opt_fusion_forward(&f->encoder, set, plan, ref->x, h, &tape, &err) == TF_OK, "%s", err.message);
    fixture_zero_gradients(f);
    time_encoder_gradients g = fixture_gradients(f);
    ck_assert_msg(opt_fusion_backward(&f->encoder, set, plan, &tape, ref->dh_out, dx, &g, &err) == TF_OK, "%s",
                  err.message);
    comparison c = {relative_error(h, ref->h, total * H), relative_error(dx, ref->dx, total * in), 0,
                    differing_values(h, ref->h, total * H) + differing_values(dx, ref->dx, total * in)};
    for (int k = 0; k < TIME_ENCODER_TENSORS; k++)
        c.parameter_gradient =
            fmax(c.parameter_gradient, relative_error(f->gradients[k], ref->gradients[k], f->sizes[k]));
    fusion_tape_free(&tape);
    free(h), free(dx);
    return c;
}

/* The cells' names as the test prints them. */
static const char *const kind_names[] = {"GRU ", "LSTM", "T-GCN GRU", "peephole LSTM"};

/* How many cells check_set() can run: torch's GRU and LSTM, T-GCN's GRU, the LSTM with peepholes. */
enum { ALL_CELLS = TIME_ENCODER_PEEPHOLE + 1, TORCH_CELLS = TIME_ENCODER_LSTM + 1 };

/* Padded and fused against the reference on one set, the first @p cells cells (T-GCN's reads three
 * blocks of @p in); prints one line per cell. */
static void check_set(const char *what, const sequence_set *set, int64_t in, int64_t hidden, uint64_t seed, int cells)
{
    tf_error err;
    fusion_plan padded, lanes;
    ck_assert_msg(opt_fusion_plan_padded(set, &padded, &err) == TF_OK, "%s", err.message);
    ck_assert_msg(opt_fusion_plan_lanes(set, &lanes, &err) == TF_OK, "%s", err.message);
    /* fused lanes compute exactly the useful steps; padding computes count x T_max */
    ck_assert_int_eq(lanes.computed_rows, set->total_steps);
    ck_assert_int_eq(padded.computed_rows, set->count * set->max_length);
    printf("%s: %lld sequences, %lld steps, T_max %lld; computed/useful padded %.2f, fused %.2f "
           "(%lld lanes, occupancy %.3f)\n",
           what, (long long)set->count, (long long)set->total_steps, (long long)set->max_length,
           fusion_plan_computed_per_useful(&padded), fusion_plan_computed_per_useful(&lanes),
           (long long)lanes.num_lanes,
           fusion_plan_occupancy(&lanes));
    for (int kind = TIME_ENCODER_GRU; kind < cells; kind++) {
        rng r;
        rng_seed(&r, seed + (uint64_t)kind);
        encoder_fixture f;
        fixture_create(&f, (time_encoder_kind)kind, kind == TIME_ENCODER_TGCN ? 3 * in : in, hidden, &r);
        reference_run ref;
        reference_create(&ref, &f, set, &r);
        comparison p = compare_plan(&f, set, &padded, &ref), l = compare_plan(&f, set, &lanes, &ref);
        printf("  %s vs per-sequence ref: padded h %.2e dx %.2e dW %.2e (%lld h/dx values differ in bits) | "
               "fused h %.2e dx %.2e dW %.2e (%lld differ)\n",
               kind_names[kind], p.output, p.input_gradient, p.parameter_gradient,
               (long long)p.differing, l.output, l.input_gradient, l.parameter_gradient, (long long)l.differing);
        /* h and dx: the twins add the same float terms in the reference's order (opt_fusion.h),
         * so they are bitwise equal; parameter gradients differ only in the order of a double
         * sum, so they are held to the fp tolerance */
        ck_assert_int_eq(p.differing, 0);
        ck_assert_int_eq(l.differing, 0);
        ck_assert(p.parameter_gradient <= TOLERANCE && l.parameter_gradient <= TOLERANCE);
        reference_free(&ref);
        fixture_free(&f);
    }
    fusion_plan_free(&padded);
    fusion_plan_free(&lanes);
}

START_TEST(generated_lengths)
{
    for (int kind = LENGTHS_UNIFORM; kind <= LENGTHS_ONE; kind++) {
        tf_error err;
        sequence_set set;
        ck_assert(sequence_set_generate((length_distribution)kind, 80, 12, 7 + (uint64_t)kind, &set, &err) == TF_OK);
        char what[96];
        snprintf(what, sizeof what, "lengths %s in 1..12", length_distribution_name((length_distribution)kind));
        /* under Valgrind the models' two cells on the first set only */
        check_set(what, &set, 5, 12, 100 + (uint64_t)kind,
                  kind == LENGTHS_UNIFORM ? ALL_CELLS : test_repeats(ALL_CELLS, TORCH_CELLS));
        sequence_set_free(&set);
    }
    /* wide enough (lanes x gate units >= 16384 floats per step: the padded plan's 100 lanes, and
     * the fused LSTM's) that the twin's step loops run on both threads, not only its whole-batch
     * loops */
    tf_error err;
    sequence_set set;
    ck_assert(sequence_set_generate(LENGTHS_UNIFORM, 100, 4, 12, &set, &err) == TF_OK);
    check_set("lengths uniform in 1..4, hidden 64 (threaded steps)", &set, 6, 64, 120,
              test_repeats(ALL_CELLS, TORCH_CELLS));
    sequence_set_free(&set);
}
END_TEST

START_TEST(tennis_lifetimes)
{
    tf_error err;
    sequence_set set;
    snapshot_seq *hours = &tennis()->snapshots;
    /* twitter_tennis marks every account present in every hour: its lifetimes are the runs of
     * hours in which an account mentions or is mentioned. The first 30 hours (the benchmark
     * takes all 120). */
    const int64_t all_hours = hours->num_snapshots;
    hours->num_snapshots = 30; /* a prefix; restored so dataset_free() frees every hour */
    ck_assert(sequence_set_from_snapshots(hours, 1, &set, &err) == TF_OK);
    hours->num_snapshots = all_hours;
    check_set("twitter_tennis active runs, hours 0-29", &set, 4, 8, 11, ALL_CELLS);
    sequence_set_free(&set);
}
END_TEST

START_TEST(event_lifetimes)
{
    tf_error err;
    dataset ratings;
    sequence_set set;
    /* bitcoin_alpha's 24,186 ratings grouped into 32 snapshots of equal time span */
    load_or_fail("bitcoin_alpha", &ratings);
    ck_assert(sequence_set_from_events(&ratings.events, 32, &set, &err) == TF_OK);
    check_set("bitcoin_alpha events in 32 snapshots", &set, 4, 8, 12, ALL_CELLS);
    sequence_set_free(&set);
    dataset_free(&ratings);
}
END_TEST

START_TEST(generated_vertex_churn)
{
    tf_error err;
    dataset churn;
    sequence_set set;
    /* a generated graph whose vertices depart and arrive: present masks */
    ck_assert_msg(dataset_load("powerlaw:nodes=200,edges=800,snapshots=10,arrival=0.1,seed=3", NULL, &churn, &err) ==
                      TF_OK,
                  "%s", err.message);
    int absent = 0;
    for (int64_t t = 0; t < churn.snapshots.num_snapshots; t++)
        for (int64_t v = 0; v < churn.snapshots.num_nodes; v++)
            absent += !churn.snapshots.snapshots[t].present[v];
    ck_assert(absent > 0);
    ck_assert(sequence_set_from_snapshots(&churn.snapshots, 0, &set, &err) == TF_OK);
    printf("generated graph: %d absent (vertex, snapshot) pairs\n", absent);
    check_set("powerlaw present runs", &set, 4, 8, 13, test_repeats(ALL_CELLS, TORCH_CELLS));
    sequence_set_free(&set);
    dataset_free(&churn);
}
END_TEST

/* DGC's Eq. 4 masks the previous state in the update gate only. Applied literally, a sequence
 * that starts mid-lane (C1 after B2) still reads B2's state through the reset gate, the
 * candidate and the interpolation z * h_prev: its outputs are wrong, and the check above would
 * fail. No mask at all is wrong too. Only the first sequence of each lane is unaffected. */
START_TEST(paper_mask_is_not_enough)
{
    tf_error err;
    sequence_set set;
    ck_assert(sequence_set_generate(LENGTHS_UNIFORM, 150, 16, 21, &set, &err) == TF_OK);
    rng r;
    rng_seed(&r, 22);
    encoder_fixture f;
    fixture_create(&f, TIME_ENCODER_GRU, 5, 12, &r);
    reference_run ref;
    reference_create(&ref, &f, &set, &r);
    fusion_plan lanes;
    ck_assert(opt_fusion_plan_lanes(&set, &lanes, &err) == TF_OK);
    const int64_t H = 12, total = set.total_steps;
    const fusion_mask_rule rules[3] = {FUSION_MASK_EVERY_GATE, FUSION_MASK_UPDATE_GATE_ONLY, FUSION_MASK_NONE};
    const char *names[3] = {"every gate (twofold)", "update gate only (Eq. 4 literally)", "no mask"};
    double errors[3];
    int64_t wrong_rows[3];
    for (int k = 0; k < 3; k++) {
        lanes.mask_rule = rules[k];
        float *h = zeros(total * H);
        fusion_tape tape;
        ck_assert_msg(opt_fusion_forward(&f.encoder, &set, &lanes, ref.x, h, &tape, &err) == TF_OK, "%s", err.message);
        errors[k] = relative_error(h, ref.h, total * H);
        wrong_rows[k] = 0;
        for (int64_t i = 0; i < total; i++)
            wrong_rows[k] += relative_error(h + i * H, ref.h + i * H, H) > TOLERANCE;
        /* steps of sequences that start their lane are right under every rule */
        for (int64_t s = 0; s < set.count; s++)
            if (lanes.start_of_sequence[s] == 0)
                ck_assert(relative_error(h + set.offsets[s] * H, ref.h + set.offsets[s] * H,
                                         (set.offsets[s + 1] - set.offsets[s]) * H) <= TOLERANCE);
        printf("mask on %-36s: max relative error %.2e, %lld of %lld steps wrong\n", names[k], errors[k],
               (long long)wrong_rows[k], (long long)total);
        fusion_tape_free(&tape);
        free(h);
    }
    ck_assert(errors[0] <= TOLERANCE && wrong_rows[0] == 0);
    ck_assert_msg(errors[1] > 1e3 * TOLERANCE && wrong_rows[1] > 0, "the literal Eq. 4 mask should be caught");
    ck_assert_msg(errors[2] > 1e3 * TOLERANCE && wrong_rows[2] > 0, "no mask should be caught");
    /* the backward refuses a wrong rule rather than differentiate it */
    lanes.mask_rule = FUSION_MASK_UPDATE_GATE_ONLY;
    fusion_tape tape = {0};
    EXPECT_INPUT_ERROR(opt_fusion_backward(&f.encoder, &set, &lanes, &tape, ref.dh_out, NULL, NULL, &err), &err,
                       "every-gate");
    fusion_plan_free(&lanes);
    reference_free(&ref);
    fixture_free(&f);
    sequence_set_free(&set);
}
END_TEST

/* Chapter 03's worked example, by hand: A1..A4, B1 B2, C1 C2 (lengths 4, 2, 2; the idea picture,
 * chapters/03-fusion-idea.svg). Padding computes 3 x 4 = 12 steps for 8 useful ones; first-fit
 * decreasing puts A in lane 0 and B then C in lane 1, 8 steps, with resets at A1, B1 and C1, and
 * attention starts (0, 0, 2, 2) in lane 1. Then a GRU of one unit, every weight 1, every bias 0,
 * every input 1: its step is r = s(x + h), z = s(x + h), n = tanh(x + r h), h' = (1 - z) n + z h
 * (s the logistic function), which the test evaluates in double below, apart from the cell code.
 * From h = 0 that gives h_B1 = h_C1 = 0.2048 and h_B2 = 0.3468; C1 after B2 under DGC's Eq. 4 (z
 * reads 0, r, n and the interpolation read h_B2) gives 0.4835, with no mask 0.4517: both wrong,
 * and the reset gives the reference's 0.2048. The test asserts the plans and these four values. */
static double worked_gru_step(double x, double h_for_z, double h)
{
    const double r = 1 / (1 + exp(-(x + h))), z = 1 / (1 + exp(-(x + h_for_z))), n = tanh(x + r * h);
    return (1 - z) * n + z * h;
}

START_TEST(worked_example)
{
    tf_error err;
    const int64_t lengths[3] = {4, 2, 2};
    sequence_set set;
    ck_assert(sequence_set_from_lengths(lengths, 3, &set, &err) == TF_OK);
    fusion_plan padded, lanes;
    ck_assert(opt_fusion_plan_padded(&set, &padded, &err) == TF_OK);
    ck_assert(opt_fusion_plan_lanes(&set, &lanes, &err) == TF_OK);
    int64_t resets = 0;
    for (int64_t i = 0; i < lanes.computed_rows; i++)
        resets += lanes.reset[i];
    int32_t starts[4 * 2];
    fusion_plan_attention_starts(&lanes, &set, starts);
    printf("worked example: padded %lld lanes, %lld steps computed for %lld useful (%.2f); fused %lld lanes, %lld "
           "computed (%.2f), C starts at step %lld of B's lane, %lld resets; attention starts in that lane %d %d %d %d\n",
           (long long)padded.num_lanes, (long long)padded.computed_rows, (long long)padded.useful_rows,
           fusion_plan_computed_per_useful(&padded), (long long)lanes.num_lanes, (long long)lanes.computed_rows,
           fusion_plan_computed_per_useful(&lanes), (long long)lanes.start_of_sequence[2], (long long)resets,
           starts[0 * 2 + 1], starts[1 * 2 + 1], starts[2 * 2 + 1], starts[3 * 2 + 1]);
    ck_assert(padded.num_lanes == 3 && padded.computed_rows == 12 && padded.useful_rows == 8);
    ck_assert(lanes.num_lanes == 2 && lanes.computed_rows == 8);
    ck_assert(lanes.lane_of_sequence[0] == 0 && lanes.lane_of_sequence[1] == 1 && lanes.lane_of_sequence[2] == 1);
    ck_assert(lanes.start_of_sequence[1] == 0 && lanes.start_of_sequence[2] == 2 && resets == 3);
    ck_assert(starts[1] == 0 && starts[3] == 0 && starts[5] == 2 && starts[7] == 2);

    const float ones[3] = {1, 1, 1}, zero3[3] = {0, 0, 0};
    const time_encoder gru = {TIME_ENCODER_GRU, 1, 1, ones, ones, zero3, zero3, {NULL, NULL, NULL}};
    const float x[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    float h_ref[8];
    ck_assert(ref_fusion_forward(&gru, &set, x, h_ref, &err) == TF_OK);
    const double b1 = worked_gru_step(1, 0, 0), b2 = worked_gru_step(1, b1, b1);
    const double hand[3] = {b1, worked_gru_step(1, 0, b2), worked_gru_step(1, b2, b2)};
    const fusion_mask_rule rules[3] = {FUSION_MASK_EVERY_GATE, FUSION_MASK_UPDATE_GATE_ONLY, FUSION_MASK_NONE};
    float c1[3];
    for (int k = 0; k < 3; k++) {
        lanes.mask_rule = rules[k];
        float h[8];
        fusion_tape tape;
        ck_assert_msg(opt_fusion_forward(&gru, &set, &lanes, x, h, &tape, &err) == TF_OK, "%s", err.message);
        c1[k] = h[6];
        ck_assert_msg(fabs(c1[k] - hand[k]) < 1e-6, "C1 under rule %d: %.7f, by hand %.7f", k, c1[k], hand[k]);
        fusion_tape_free(&tape);
    }
    printf("worked example, GRU of one unit (weights 1, biases 0, inputs 1): h_B1 %.4f, h_B2 %.4f; C1 alone %.4f, "
           "fused with the reset %.4f, Eq. 4's mask %.4f, no mask %.4f\n",
           h_ref[4], h_ref[5], h_ref[6], c1[0], c1[1], c1[2]);
    ck_assert(fabs(h_ref[4] - b1) < 1e-6 && fabs(h_ref[5] - b2) < 1e-6 && h_ref[6] == h_ref[4]);
    ck_assert(c1[0] == h_ref[6]);                     /* the reset: bitwise the reference */
    ck_assert(fabs(c1[1] - c1[0]) > 0.1 && fabs(c1[2] - c1[0]) > 0.1); /* Eq. 4 and no mask: B2 leaks */
    fusion_plan_free(&padded);
    fusion_plan_free(&lanes);
    sequence_set_free(&set);
}
END_TEST

/* The reset is a select, not a multiply by 0: a NaN left in the state by one sequence (0 * NaN
 * is NaN) must not reach the next sequence of its lane. Two sequences of length 2 share a lane
 * of length 4; the first one's input is NaN. */
START_TEST(reset_does_not_multiply)
{
    tf_error err;
    const int64_t lengths[3] = {4, 2, 2};
    sequence_set set;
    ck_assert(sequence_set_from_lengths(lengths, 3, &set, &err) == TF_OK);
    fusion_plan lanes;
    ck_assert(opt_fusion_plan_lanes(&set, &lanes, &err) == TF_OK);
    ck_assert_int_eq(lanes.num_lanes, 2); /* (A1..A4) and (B1 B2 C1 C2), the paper's Fig. 9c */
    ck_assert_int_eq(lanes.lane_of_sequence[1], lanes.lane_of_sequence[2]);
    rng r;
    rng_seed(&r, 31);
    encoder_fixture f;
    fixture_create(&f, TIME_ENCODER_LSTM, 3, 4, &r);
    float x[8 * 3], h_ref[8 * 4], h[8 * 4];
    for (int i = 0; i < 8 * 3; i++)
        x[i] = (float)(2.0 * rng_uniform(&r) - 1.0);
    x[4 * 3] = NAN; /* B1 */
    ck_assert(ref_fusion_forward(&f.encoder, &set, x, h_ref, &err) == TF_OK);
    fusion_tape tape;
    ck_assert(opt_fusion_forward(&f.encoder, &set, &lanes, x, h, &tape, &err) == TF_OK);
    int finite_c = 1;
    for (int i = 6 * 4; i < 8 * 4; i++)
        finite_c &= isfinite(h[i]);
    printf("NaN in B1: B2 output is %s; C1, C2 outputs finite: %s, bitwise equal to ref: %s\n",
           isnan(h[5 * 4]) ? "NaN" : "finite", finite_c ? "yes" : "no",
           differing_values(h + 6 * 4, h_ref + 6 * 4, 2 * 4) == 0 ? "yes" : "no");
    ck_assert(isnan(h[5 * 4]));
    ck_assert(finite_c && differing_values(h + 6 * 4, h_ref + 6 * 4, 2 * 4) == 0);
    fusion_tape_free(&tape);
    fusion_plan_free(&lanes);
    fixture_free(&f);
    sequence_set_free(&set);
}
END_TEST

/* Spatial fusion on one graph: every chunk's rows read out of its group's load are memcmp-equal
 * to loading the chunk alone; fewer bytes; no merged group over the cap. */
static void check_spatial(const char *what, const snapshot_seq *seq, int64_t num_chunks, double cap_fraction)
{
    tf_error err;
    chunk_set chunks;
    ck_assert(chunk_set_contiguous(seq->num_nodes, num_chunks, &chunks, &err) == TF_OK);
    chunk_load *alone = calloc((size_t)num_chunks, sizeof *alone);
    int64_t largest = 0;
    for (int64_t c = 0; c < num_chunks; c++) {
        ck_assert_msg(ref_fusion_load_chunk(seq, &chunks, c, &alone[c], &err) == TF_OK, "%s", err.message);
        largest = alone[c].bytes > largest ? alone[c].bytes : largest;
    }
    /* the cap: a fraction of the whole graph's data, as a device holds a fraction of it */
    const int64_t whole = seq->num_snapshots * seq->num_nodes * seq->feature_width * (int64_t)sizeof(float);
    const int64_t cap = (int64_t)(cap_fraction * (double)whole);
    fusion_groups groups;
    ck_assert_msg(opt_fusion_spatial_groups(seq, &chunks, cap, &groups, &err) == TF_OK, "%s", err.message);
    int64_t differing = 0, compared = 0, over_cap = 0;
    for (int64_t g = 0; g < groups.count; g++) {
        chunk_load load;
        ck_assert(opt_fusion_load_group(seq, &chunks, &groups, g, &load, &err) == TF_OK);
        ck_assert_int_eq(load.bytes, groups.load_bytes[g]);
        over_cap += groups.offsets[g + 1] - groups.offsets[g] > 1 && load.bytes > cap;
        for (int64_t k = groups.offsets[g]; k < groups.offsets[g + 1]; k++) {
            const int64_t c = groups.chunks[k], F = seq->feature_width;
            int64_t *rows, count;
            ck_assert(opt_fusion_chunk_rows(seq, &chunks, c, &load, &rows, &count, &err) == TF_OK);
            ck_assert_int_eq(count, alone[c].num_vertices);
            for (int64_t t = 0; t < seq->num_snapshots; t++)
                for (int64_t i = 0; i < count; i++) {
                    differing += memcmp(load.features + (t * load.num_vertices + rows[i]) * F,
                                        alone[c].features + (t * count + i) * F, (size_t)F * sizeof(float)) != 0;
                    compared++;
                }
            free(rows);
        }
        chunk_load_free(&load);
    }
    printf("spatial fusion on %s, %lld chunks (largest load %lld bytes), cap %lld bytes (%.2f of the graph): "
           "%lld groups, bytes loaded %lld per chunk vs %lld fused (%.1f%% saved); %lld of %lld feature rows "
           "differ in bits, %lld merged groups over the cap\n",
           what, (long long)num_chunks, (long long)largest, (long long)cap, cap_fraction, (long long)groups.count,
           (long long)groups.unfused_bytes,
           (long long)groups.fused_bytes, 100.0 * (1.0 - (double)groups.fused_bytes / (double)groups.unfused_bytes),
           (long long)differing, (long long)compared, (long long)over_cap);
    ck_assert_int_eq(differing, 0);
    ck_assert_int_eq(over_cap, 0);
    ck_assert(groups.count < num_chunks && groups.fused_bytes < groups.unfused_bytes);
    for (int64_t c = 0; c < num_chunks; c++)
        chunk_load_free(&alone[c]);
    free(alone);
    fusion_groups_free(&groups);
    chunk_set_free(&chunks);
}

START_TEST(spatial_fusion_generated)
{
    dataset generated;
    load_or_fail("powerlaw:nodes=2000,edges=6000,snapshots=4,seed=9", &generated);
    check_spatial("powerlaw 2000 vertices", &generated.snapshots, 12, 0.6);
    dataset_free(&generated);
}
END_TEST

START_TEST(spatial_fusion_tennis)
{
    check_spatial("twitter_tennis (120 hours)", &tennis()->snapshots, 16, 0.6);
}
END_TEST

/* The lanes' T-GCN cell is T-GCN's own recurrence: on a small graph, every vertex one sequence over
 * the window, the reference lanes (and the fused ones) fed C_g = A^ X_t Theta_g^T + b_g and run with
 * the model's L_g, split into its input and state columns, give the model's states H_t. */
static void tgcn_split_weights(const model *m, int64_t H, float *w_ih, float *w_hh, float *bias)
{
    static const char *const gates[3] = {"z", "r", "h"};
    for (int g = 0; g < 3; g++) {
        char name[64];
        snprintf(name, sizeof name, "recurrent.linear_%s.weight", gates[g]);
        const float *linear = parameters_find(&m->parameters, name)->value.data; /* [H][2H] */
        snprintf(name, sizeof name, "recurrent.linear_%s.bias", gates[g]);
        const float *linear_bias = parameters_find(&m->parameters, name)->value.data;
        for (int64_t j = 0; j < H; j++) {
            memcpy(w_ih + (g * H + j) * H, linear + j * 2 * H, (size_t)H * sizeof(float));
            memcpy(w_hh + (g * H + j) * H, linear + j * 2 * H + H, (size_t)H * sizeof(float));
            bias[g * H + j] = linear_bias[j];
        }
    }
}

/* x [N][T][3H] in sequence order (vertex v's steps together): [C_z | C_r | C_h] of every snapshot. */
static void tgcn_gate_inputs(const model *m, const snapshot_seq *seq, int64_t H, float *x)
{
    static const char *const gates[3] = {"z", "r", "h"};
    tf_error err;
    const int64_t N = seq->num_nodes, F = seq->feature_width, T = seq->num_snapshots;
    float *aggregated = zeros(N * F), *convolved = zeros(N * H);
    for (int64_t t = 0; t < T; t++) {
        propagation p;
        ck_assert(ref_propagation_gcn(&p, &seq->snapshots[t].graph, EDGE_NORM_SYMMETRIC, 1, &err) == TF_OK);
        ref_propagate_forward(&p, seq->snapshots[t].features.data, F, aggregated);
        ref_propagation_free(&p);
        for (int g = 0; g < 3; g++) {
            char weight[64], bias[64];
            snprintf(weight, sizeof weight, "recurrent.conv_%s.lin.weight", gates[g]);
            snprintf(bias, sizeof bias, "recurrent.conv_%s.bias", gates[g]);
            ref_linear_forward(aggregated, parameters_find(&m->parameters, weight)->value.data,
                               parameters_find(&m->parameters, bias)->value.data, N, F, H, convolved);
            for (int64_t v = 0; v < N; v++)
                memcpy(x + ((v * T + t) * 3 + g) * H, convolved + v * H, (size_t)H * sizeof(float));
        }
    }
    free(aggregated), free(convolved);
}

START_TEST(tgcn_lanes_are_the_model)
{
    tf_error err;
    dataset d;
    load_or_fail("powerlaw:nodes=30,edges=120,snapshots=4,seed=2", &d);
    const snapshot_seq *seq = &d.snapshots;
    const int64_t N = seq->num_nodes, T = seq->num_snapshots, H = 4;
    const model_config config = {MODEL_TGCN, seq->feature_width, H, seq->target_width, 2, 0};
    model m;
    ck_assert(model_create(&m, &config, 5, &err) == TF_OK);
    float *predictions = zeros(T * N * seq->target_width);
    window_tape tape;
    ck_assert_msg(model_forward(&m, seq, 0, T, &tape, predictions, &err) == TF_OK, "%s", err.message);
    float *w_ih = zeros(3 * H * H), *w_hh = zeros(3 * H * H), *bias = zeros(3 * H), *x = zeros(N * T * 3 * H);
    tgcn_split_weights(&m, H, w_ih, w_hh, bias);
    tgcn_gate_inputs(&m, seq, H, x);
    int64_t *lengths = malloc((size_t)N * sizeof *lengths);
    for (int64_t v = 0; v < N; v++)
        lengths[v] = T;
    sequence_set set;
    ck_assert(sequence_set_from_lengths(lengths, N, &set, &err) == TF_OK);
    const time_encoder encoder = {TIME_ENCODER_TGCN, 3 * H, H, w_ih, w_hh, bias, NULL, {NULL, NULL, NULL}};
    float *h = zeros(N * T * H), *fused = zeros(N * T * H);
    ck_assert_msg(ref_fusion_forward(&encoder, &set, x, h, &err) == TF_OK, "%s", err.message);
    fusion_plan plan;
    fusion_tape fused_tape;
    ck_assert(opt_fusion_plan_lanes(&set, &plan, &err) == TF_OK);
    ck_assert(opt_fusion_forward(&encoder, &set, &plan, x, fused, &fused_tape, &err) == TF_OK);
    double worst = 0;
    int64_t differing = 0;
    for (int64_t v = 0; v < N; v++)
        for (int64_t t = 0; t < T; t++) {
            const float *model_h = tape.states + (t * N + v) * H, *lane_h = h + (v * T + t) * H;
            worst = fmax(worst, relative_error(lane_h, model_h, H));
            differing += differing_values(lane_h, model_h, H);
        }
    printf("T-GCN's lanes vs the model's states (%lld vertices x %lld snapshots, hidden %lld): %.2e, %lld values "
           "differ in bits; fused lanes vs the reference lanes: %lld differ\n",
           (long long)N, (long long)T, (long long)H, worst, (long long)differing,
           (long long)differing_values(fused, h, N * T * H));
    ck_assert(worst <= TOLERANCE);
    ck_assert_int_eq(differing_values(fused, h, N * T * H), 0);
    fusion_tape_free(&fused_tape);
    fusion_plan_free(&plan);
    sequence_set_free(&set);
    window_tape_free(&m, &tape);
    model_free(&m);
    free(lengths), free(predictions), free(w_ih), free(w_hh), free(bias), free(x), free(h), free(fused);
    dataset_free(&d);
}
END_TEST

START_TEST(bad_input)
{
    tf_error err;
    sequence_set set;
    const int64_t lengths[3] = {3, 0, 2};
    EXPECT_INPUT_ERROR(sequence_set_from_lengths(lengths, 3, &set, &err), &err, "sequence 1", "length 0");
    EXPECT_INPUT_ERROR(sequence_set_generate(LENGTHS_UNIFORM, 0, 5, 1, &set, &err), &err, "count 0");
    chunk_set chunks;
    EXPECT_INPUT_ERROR(chunk_set_contiguous(4, 5, &chunks, &err), &err, "5 chunks of 4 vertices");
    time_encoder missing = {TIME_ENCODER_GRU, 3, 0, NULL, NULL, NULL, NULL, {NULL, NULL, NULL}};
    ck_assert(sequence_set_from_lengths(lengths, 1, &set, &err) == TF_OK);
    float x[9] = {0}, h[9];
    EXPECT_INPUT_ERROR(ref_fusion_forward(&missing, &set, x, h, &err), &err, "hidden width 0");
    fusion_plan plan;
    ck_assert(opt_fusion_plan_lanes(&set, &plan, &err) == TF_OK);
    sequence_set other;
    ck_assert(sequence_set_from_lengths(lengths + 2, 1, &other, &err) == TF_OK);
    float w[3 * 3 * 3] = {0};
    time_encoder tiny = {TIME_ENCODER_GRU, 3, 3, w, w, w, w, {NULL, NULL, NULL}};
    fusion_tape tape;
    EXPECT_INPUT_ERROR(opt_fusion_forward(&tiny, &other, &plan, x, h, &tape, &err), &err, "another sequence set");
    dataset small;
    load_or_fail("powerlaw:nodes=50,edges=100,snapshots=2,seed=1", &small);
    ck_assert(chunk_set_contiguous(small.snapshots.num_nodes, 4, &chunks, &err) == TF_OK);
    fusion_groups groups;
    EXPECT_INPUT_ERROR(opt_fusion_spatial_groups(&small.snapshots, &chunks, 0, &groups, &err), &err, "memory cap");
    sequence_set_free(&other);
    event_stream empty = {0};
    EXPECT_INPUT_ERROR(sequence_set_from_events(&empty, 4, &other, &err), &err, "empty");
    chunk_set_free(&chunks);
    dataset_free(&small);
    fusion_plan_free(&plan);
    sequence_set_free(&set);
}
END_TEST

/* ---- attention fusion: DySAT's self-attention over sequences packed into lanes -------------------- */

enum { ATTENTION_WIDTH = 6 };

/* Three W x W projections with gradients, and their layer. */
typedef struct attention_fixture {
    parameter_list list;
    self_attention layer;
} attention_fixture;

static void attention_fixture_create(attention_fixture *f, rng *r)
{
    tf_error err;
    int64_t square[2] = {ATTENTION_WIDTH, ATTENTION_WIDTH};
    memset(f, 0, sizeof *f);
    ck_assert(parameters_add(&f->list, "query", 2, square, &err) >= 0 && parameters_add(&f->list, "key", 2, square, &err) >= 0 &&
              parameters_add(&f->list, "value", 2, square, &err) >= 0);
    for (int64_t i = 0; i < f->list.count; i++)
        for (int64_t j = 0; j < f->list.items[i].value.size; j++)
            f->list.items[i].value.data[j] = (float)(2.0 * rng_uniform(r) - 1.0);
    f->layer = (self_attention){ATTENTION_WIDTH, &f->list.items[0], &f->list.items[1], &f->list.items[2]};
}

/* Each sequence alone, as a model's window runs it (one lane, the plain causal mask): y and dz
 * [total_steps][W] in sequence order, the projections' gradients summed over the sequences. */
static void attention_alone(attention_fixture *f, const sequence_set *set, const float *z, const float *dy, float *y,
                            float *dz)
{
    tf_error err;
    workspace scratch;
    workspace_init(&scratch);
    parameters_zero_grad(&f->list);
    for (int64_t s = 0; s < set->count; s++) {
        const int64_t row = set->offsets[s] * ATTENTION_WIDTH, length = set->offsets[s + 1] - set->offsets[s];
        self_attention_tape tape;
        ck_assert(ref_self_attention_forward(&ref_kernels, &f->layer, length, 1, z + row, NULL, &scratch, &tape, y + row,
                                             &err) == TF_OK);
        ck_assert(ref_self_attention_backward(&ref_kernels, &f->layer, &tape, dy + row, dz + row, &scratch, &err) == TF_OK);
        workspace_reset(&scratch);
    }
    workspace_free(&scratch);
}

/* Moves rows between sequence order [total_steps][W] and the plan's grid [num_steps][num_lanes][W]. */
static void attention_grid(const fusion_plan *plan, const sequence_set *set, const float *rows, float *grid)
{
    for (int64_t s = 0; s < set->count; s++)
        for (int64_t i = set->offsets[s]; i < set->offsets[s + 1]; i++) {
            const int64_t t = plan->start_of_sequence[s] + i - set->offsets[s];
            memcpy(grid + (t * plan->num_lanes + plan->lane_of_sequence[s]) * ATTENTION_WIDTH, rows + i * ATTENTION_WIDTH,
                   ATTENTION_WIDTH * sizeof(float));
        }
}

static void attention_rows(const fusion_plan *plan, const sequence_set *set, const float *grid, float *rows)
{
    for (int64_t s = 0; s < set->count; s++)
        for (int64_t i = set->offsets[s]; i < set->offsets[s + 1]; i++) {
            const int64_t t = plan->start_of_sequence[s] + i - set->offsets[s];
            memcpy(rows + i * ATTENTION_WIDTH, grid + (t * plan->num_lanes + plan->lane_of_sequence[s]) * ATTENTION_WIDTH,
                   ATTENTION_WIDTH * sizeof(float));
        }
}

/* The lanes run by the self-attention layer with @p starts (NULL: the plain causal mask): y and dz in
 * sequence order, the gradients in @p f. */
static void attention_fused(attention_fixture *f, const kernels *k, const fusion_plan *plan, const sequence_set *set,
                            const int32_t *starts, const float *z, const float *dy, float *y, float *dz)
{
    tf_error err;
    const int64_t grid_size = plan->num_steps * plan->num_lanes * ATTENTION_WIDTH;
    float *grid_z = zeros(grid_size), *grid_dy = zeros(grid_size), *grid_y = zeros(grid_size),
          *grid_dz = zeros(grid_size);
    attention_grid(plan, set, z, grid_z);
    attention_grid(plan, set, dy, grid_dy); /* an empty slot's output gets no gradient */
    workspace scratch;
    workspace_init(&scratch);
    parameters_zero_grad(&f->list);
    self_attention_tape tape;
    ck_assert_msg(ref_self_attention_forward(k, &f->layer, plan->num_steps, plan->num_lanes, grid_z, starts, &scratch,
                                             &tape, grid_y, &err) == TF_OK, "%s", err.message);
    ck_assert(ref_self_attention_backward(k, &f->layer, &tape, grid_dy, grid_dz, &scratch, &err) == TF_OK);
    attention_rows(plan, set, grid_y, y);
    attention_rows(plan, set, grid_dz, dz);
    workspace_free(&scratch);
    free(grid_z), free(grid_dy), free(grid_y), free(grid_dz);
}

static int64_t differing_floats(const float *a, const float *b, int64_t count)
{
    int64_t differ = 0;
    for (int64_t i = 0; i < count; i++)
        differ += memcmp(a + i, b + i, sizeof(float)) != 0;
    return differ;
}

/* Sequences of different lifetimes packed end to end into lanes (the GRU's plan), run by DySAT's
 * self-attention with the block-diagonal causal mask and positions restarted at each sequence
 * (fusion_plan_attention_starts()): every output and input gradient bitwise equal to running each
 * sequence alone on the reference kernels (a lane's rows are computed in the same order either way),
 * the projections' gradients, summed over the sequences in another order, within the tolerance; on the
 * opt kernels (BLAS products) all within the tolerance. Then the plain causal mask over the same lanes:
 * the rows of every sequence that starts mid-lane read the sequences before it (and sit at shifted
 * positions), and only the sequences that start their lane stay right. */
START_TEST(attention_fusion)
{
    tf_error err;
    sequence_set set;
    ck_assert(sequence_set_generate(LENGTHS_UNIFORM, test_repeats(60, 20), 10, 31, &set, &err) == TF_OK);
    fusion_plan plan;
    ck_assert(opt_fusion_plan_lanes(&set, &plan, &err) == TF_OK);
    rng r;
    rng_seed(&r, 32);
    attention_fixture f;
    attention_fixture_create(&f, &r);
    const int64_t size = set.total_steps * ATTENTION_WIDTH;
    float *z = random_floats(size, 1.0f, &r), *dy = random_floats(size, 1.0f, &r);
    float *y_alone = zeros(size), *dz_alone = zeros(size), *y = zeros(size), *dz = zeros(size);
    attention_alone(&f, &set, z, dy, y_alone, dz_alone);
    float *gradients_alone[3];
    for (int i = 0; i < 3; i++) {
        gradients_alone[i] = zeros(f.list.items[i].grad.size);
        memcpy(gradients_alone[i], f.list.items[i].grad.data, (size_t)f.list.items[i].grad.size * sizeof(float));
    }
    int32_t *starts = malloc((size_t)(plan.num_steps * plan.num_lanes) * sizeof *starts);
    fusion_plan_attention_starts(&plan, &set, starts);
    const kernels *twins[2] = {&ref_kernels, &opt_kernels};
    for (int which = 0; which < 2; which++) {
        attention_fused(&f, twins[which], &plan, &set, starts, z, dy, y, dz);
        double dw = 0;
        for (int i = 0; i < 3; i++)
            dw = fmax(dw, relative_error(f.list.items[i].grad.data, gradients_alone[i], f.list.items[i].grad.size));
        const int64_t differ = differing_floats(y, y_alone, size) + differing_floats(dz, dz_alone, size);
        printf("attention fusion (%s kernels): %lld sequences, %lld steps in %lld lanes of %lld; block-diagonal mask vs "
               "each alone: y %.2e dz %.2e dW %.2e (%lld y/dz values differ in bits)\n",
               twins[which]->name, (long long)set.count, (long long)set.total_steps, (long long)plan.num_lanes,
               (long long)plan.num_steps, relative_error(y, y_alone, size), relative_error(dz, dz_alone, size), dw,
               (long long)differ);
        ck_assert(relative_error(y, y_alone, size) <= TOLERANCE && relative_error(dz, dz_alone, size) <= TOLERANCE &&
                  dw <= TOLERANCE);
        if (which == 0)
            ck_assert_msg(differ == 0, "the reference kernels' fused lanes should equal each sequence alone bitwise");
    }
    /* the plain causal mask: the first sequence of each lane right, every later one wrong */
    attention_fused(&f, &ref_kernels, &plan, &set, NULL, z, dy, y, dz);
    int64_t wrong_rows = 0, mid_lane_rows = 0, first_wrong = 0;
    for (int64_t s = 0; s < set.count; s++) {
        const int64_t length = set.offsets[s + 1] - set.offsets[s];
        for (int64_t i = set.offsets[s]; i < set.offsets[s + 1]; i++)
            wrong_rows += relative_error(y + i * ATTENTION_WIDTH, y_alone + i * ATTENTION_WIDTH, ATTENTION_WIDTH) > TOLERANCE;
        if (plan.start_of_sequence[s] > 0)
            mid_lane_rows += length;
        else
            first_wrong += relative_error(y + set.offsets[s] * ATTENTION_WIDTH, y_alone + set.offsets[s] * ATTENTION_WIDTH,
                                          length * ATTENTION_WIDTH) > TOLERANCE;
    }
    printf("attention fusion, plain causal mask: max relative error %.2e, %lld of %lld steps wrong (%lld steps in "
           "sequences that start mid-lane)\n",
           relative_error(y, y_alone, size), (long long)wrong_rows, (long long)set.total_steps, (long long)mid_lane_rows);
    ck_assert_msg(mid_lane_rows > 0, "the lanes should hold sequences that start mid-lane");
    ck_assert_msg(wrong_rows == mid_lane_rows && first_wrong == 0,
                  "the plain causal mask should be wrong exactly on the sequences that start mid-lane");
    /* a start that neither continues its lane's sequence nor begins one is refused before anything is read:
     * lane 0 begins a sequence at step 1, and step 2 claims the one that began at 0 */
    workspace scratch;
    workspace_init(&scratch);
    self_attention_tape tape;
    ck_assert(plan.num_steps >= 3);
    starts[0] = 0, starts[plan.num_lanes] = 1, starts[2 * plan.num_lanes] = 0;
    EXPECT_INPUT_ERROR(ref_self_attention_forward(&ref_kernels, &f.layer, 3, plan.num_lanes, z, starts, &scratch, &tape,
                                                  y, &err), &err, "lane 0, position 2 starts its sequence at 0");
    workspace_free(&scratch);
    for (int i = 0; i < 3; i++)
        free(gradients_alone[i]);
    free(starts), free(z), free(dy), free(y_alone), free(dz_alone), free(y), free(dz);
    parameters_free(&f.list);
    fusion_plan_free(&plan);
    sequence_set_free(&set);
}
END_TEST

/* Two suites; verify/CMakeLists.txt runs each as its own test (CK_RUN_SUITE): "fusion" on
 * generated data (label unit, under Valgrind in CI) and "fusion_real_data" on the bundled
 * datasets (label slow: parsing twitter_tennis's JSON alone takes 13 s under Valgrind, and the
 * loaders are memory-checked by test_loaders). */
int main(void)
{
    opt_set_threads(2);
    const named_test generated[] = {{"worked_example", worked_example},
                                           {"generated_lengths", generated_lengths},
                                           {"generated_vertex_churn", generated_vertex_churn},
                                           {"paper_mask_is_not_enough", paper_mask_is_not_enough},
                                           {"reset_does_not_multiply", reset_does_not_multiply},
                                           {"attention_fusion", attention_fusion},
                                           {"spatial_fusion_generated", spatial_fusion_generated},
                                           {"tgcn_lanes_are_the_model", tgcn_lanes_are_the_model},
                                           {"bad_input", bad_input}};
    const named_test real[] = {{"tennis_lifetimes", tennis_lifetimes},
                                      {"event_lifetimes", event_lifetimes},
                                      {"spatial_fusion_tennis", spatial_fusion_tennis}};
    int status = run_suites(suite_of("fusion", generated, sizeof generated / sizeof *generated, 300),
                            suite_of("fusion_real_data", real, sizeof real / sizeof *real, 300));
    if (tennis_loaded)
        dataset_free(&tennis_data);
    return status;
}
