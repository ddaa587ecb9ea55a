/* The GPU's masked GRU and LSTM steps (cuda/fusion.h) against the per-sequence reference
 * (ref/fusion.h): outputs, input gradients and parameter gradients within the GPU fp tolerance
 * (max |a - b| / max(1, |ref|) <= 1e-4), in fused lanes and zero-padded, on generated lengths
 * (uniform, heavy-tailed, all equal, all 1) and twitter_tennis's activity lifetimes (first day).
 * Without a GPU (or driver) the program exits 77: CTest reports it skipped. Where a GPU is
 * available, run it under compute-sanitizer too:
 *     compute-sanitizer --error-exitcode 1 build/verify/test_fusion_cuda */
#include <math.h>

#include "cuda/fusion.h"
#include "datasets/dataset.h"
#include "opt/fusion.h"
#include "ref/fusion.h"
#include "ref/fusion_sequences.h"
#include "ref/core/rng.h"
#include "verify/testing_cuda.h"

#define TOLERANCE 1e-4

static cuda_context gpu;

/* A device copy of `count` host floats (owned by the context). */
static float *to_device(const float *host, int64_t count)
{
    tf_error err;
    float *device = cuda_alloc(&gpu, (size_t)(count ? count : 1) * sizeof(float), &err);
    ck_assert_msg(device != NULL, "%s", err.message);
    ck_assert(cuda_upload(&gpu, device, host, (size_t)count * sizeof(float), &err) == TF_OK);
    return device;
}

static float *to_host(const float *device, int64_t count)
{
    tf_error err;
    float *host = malloc((size_t)(count ? count : 1) * sizeof(float));
    ck_assert(cuda_download(&gpu, host, device, (size_t)count * sizeof(float), &err) == TF_OK);
    return host;
}

/* Reference vs GPU for one set, one cell kind and one layout; returns the worst error. */
static double compare_on_gpu(const sequence_set *set, time_encoder_kind kind, fusion_layout layout, uint64_t seed)
{
    tf_error err;
    rng r;
    rng_seed(&r, seed);
    const int64_t in = 5, H = 16, G = time_encoder_gates(kind), total = set->total_steps;
    const int64_t sizes[4] = {G * H * in, G * H * H, G * H, G * H};
    float *weights[4], *ref_gradients[4], *d_weights[4], *d_gradients[4];
    for (int k = 0; k < 4; k++) {
        weights[k] = random_floats(sizes[k], 2.0f / sqrtf((float)H), &r);
        ref_gradients[k] = calloc((size_t)sizes[k], sizeof(float));
        d_weights[k] = to_device(weights[k], sizes[k]);
        d_gradients[k] = to_device(ref_gradients[k], sizes[k]);
    }
    time_encoder host_encoder = {kind, in, H, weights[0], weights[1], weights[2], weights[3], {NULL, NULL, NULL}};
    time_encoder device_encoder = {kind, in, H, d_weights[0], d_weights[1], d_weights[2], d_weights[3],
                                   {NULL, NULL, NULL}};
    float *x = random_floats(total * in, 1.0f, &r), *dh_out = random_floats(total * H, 1.0f, &r);
    float *h_ref = calloc((size_t)(total * H), sizeof(float)), *dx_ref = calloc((size_t)(total * in), sizeof(float));
    ck_assert(ref_fusion_forward(&host_encoder, set, x, h_ref, &err) == TF_OK);
    time_encoder_gradients host_gradients = {ref_gradients[0], ref_gradients[1], ref_gradients[2], ref_gradients[3],
                                             {NULL, NULL, NULL}};
    ck_assert(ref_fusion_backward(&host_encoder, set, x, dh_out, dx_ref, &host_gradients, &err) == TF_OK);

    fusion_plan plan;
    ck_assert(layout == FUSION_LANES ? opt_fusion_plan_lanes(set, &plan, &err) == TF_OK
                                     : opt_fusion_plan_padded(set, &plan, &err) == TF_OK);
    cuda_fusion_plan device_plan;
    ck_assert_msg(cuda_fusion_plan_upload(&gpu, &plan, &device_plan, &err) == TF_OK, "%s", err.message);
    float *d_x = to_device(x, total * in), *d_dh = to_device(dh_out, total * H);
    float *zeros_h = calloc((size_t)(total * H), sizeof(float)), *zeros_x = calloc((size_t)(total * in), sizeof(float));
    float *d_h = to_device(zeros_h, total * H), *d_dx = to_device(zeros_x, total * in);
    cuda_fusion_tape tape;
    ck_assert_msg(cuda_fusion_forward(&gpu, &device_encoder, set, &device_plan, d_x, d_h, &tape, &err) == TF_OK, "%s",
                  err.message);
    time_encoder_gradients device_gradients = {d_gradients[0], d_gradients[1], d_gradients[2], d_gradients[3],
                                               {NULL, NULL, NULL}};
    ck_assert_msg(cuda_fusion_backward(&gpu, &device_encoder, set, &device_plan, &tape, d_dh, d_dx, &device_gradients,
                                       &err) == TF_OK,
                  "%s", err.message);
    float *h_gpu = to_host(d_h, total * H), *dx_gpu = to_host(d_dx, total * in);
    double output = relative_error(h_gpu, h_ref, total * H), input = relative_error(dx_gpu, dx_ref, total * in);
    double parameter = 0;
    for (int k = 0; k < 4; k++) {
        float *g = to_host(d_gradients[k], sizes[k]);
        parameter = fmax(parameter, relative_error(g, ref_gradients[k], sizes[k]));
        free(g);
    }
    printf("  %s %-6s: h %.2e, dx %.2e, parameter gradients %.2e (computed/useful %.2f)\n",
           kind == TIME_ENCODER_GRU ? "GRU " : "LSTM", layout == FUSION_LANES ? "fused" : "padded", output, input,
           parameter, fusion_plan_computed_per_useful(&plan));
    cuda_fusion_tape_free(&gpu, &tape);
    cuda_fusion_plan_free(&gpu, &device_plan);
    fusion_plan_free(&plan);
    cuda_free(&gpu, d_x), cuda_free(&gpu, d_dh), cuda_free(&gpu, d_h), cuda_free(&gpu, d_dx);
    for (int k = 0; k < 4; k++) {
        free(weights[k]), free(ref_gradients[k]);
        cuda_free(&gpu, d_weights[k]), cuda_free(&gpu, d_gradients[k]);
    }
    free(x), free(dh_out), free(h_ref), free(dx_ref), free(zeros_h), free(zeros_x), free(h_gpu), free(dx_gpu);
    return fmax(output, fmax(input, parameter));
}

static void check_set_on_gpu(const char *what, const sequence_set *set, uint64_t seed)
{
    printf("%s: %lld sequences, %lld steps, T_max %lld\n", what, (long long)set->count, (long long)set->total_steps,
           (long long)set->max_length);
    double worst = 0;
    for (int kind = TIME_ENCODER_GRU; kind <= TIME_ENCODER_LSTM; kind++)
        for (int layout = FUSION_PADDED; layout <= FUSION_LANES; layout++)
            worst = fmax(worst, compare_on_gpu(set, (time_encoder_kind)kind, (fusion_layout)layout, seed + kind));
    ck_assert_msg(worst <= TOLERANCE, "%s: worst relative error %.2e", what, worst);
}

START_TEST(generated_lengths_on_gpu)
{
    for (int kind = LENGTHS_UNIFORM; kind <= LENGTHS_ONE; kind++) {
        tf_error err;
        sequence_set set;
        ck_assert(sequence_set_generate((length_distribution)kind, 400, 24, 40 + (uint64_t)kind, &set, &err) == TF_OK);
        check_set_on_gpu(length_distribution_name((length_distribution)kind), &set, 50 + (uint64_t)kind);
        sequence_set_free(&set);
    }
}
END_TEST

START_TEST(tennis_lifetimes_on_gpu)
{
    tf_error err;
    dataset tennis;
    load_or_fail("twitter_tennis", &tennis);
    sequence_set set;
    /* the first day: parameter gradients sum over every step, and the device's expf and
     * cuBLAS round differently from the CPU, so their difference grows with the step count */
    const int64_t all_hours = tennis.snapshots.num_snapshots;
    tennis.snapshots.num_snapshots = 24;
    ck_assert(sequence_set_from_snapshots(&tennis.snapshots, 1, &set, &err) == TF_OK);
    tennis.snapshots.num_snapshots = all_hours;
    check_set_on_gpu("twitter_tennis active runs, hours 0-23", &set, 60);
    sequence_set_free(&set);
    dataset_free(&tennis);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("cuda_fusion");
    TCase *cases = tcase_create("cuda_fusion");
    tcase_set_timeout(cases, 300);
    tcase_add_test(cases, generated_lengths_on_gpu);
    tcase_add_test(cases, tennis_lifetimes_on_gpu);
    suite_add_tcase(suite, cases);
    return run_suite_cuda(suite, &gpu);
}
