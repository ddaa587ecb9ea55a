/* The CUDA twins (cuda/) against the reference kernels, on real graphs (twitter_tennis) and a
 * generated one: propagation bitwise, dense products and cells within the GPU fp tolerance
 * (max |a - b| / max(1, |ref|) <= 1e-4), and whole models run through the GPU kernel table.
 * Without a GPU (or driver) the program exits 77: CTest reports it skipped. Where a GPU is
 * available, run it under compute-sanitizer too:
 *     compute-sanitizer --error-exitcode 1 build/verify/test_kernels_cuda */
#include <math.h>

#include "cuda/kernels.h"
#include "cuda/layers.h"
#include "cuda/propagate.h"
#include "cuda/recurrent.h"
#include "datasets/dataset.h"
#include "ref/nn/layers.h"
#include "ref/models/model.h"
#include "ref/nn/recurrent.h"
#include "ref/core/rng.h"
#include "verify/testing_cuda.h"

#define TOLERANCE 1e-4

static cuda_context gpu;

/* A device copy of `count` host floats (owned by the context). */
static float *to_device(const float *host, int64_t count)
{
    tf_error err;
    float *device = cuda_alloc(&gpu, (size_t)count * sizeof(float), &err);
    ck_assert_msg(device != NULL, "%s", err.message);
    ck_assert(cuda_upload(&gpu, device, host, (size_t)count * sizeof(float), &err) == TF_OK);
    return device;
}

static void to_host(float *host, const float *device, int64_t count)
{
    tf_error err;
    ck_assert(cuda_download(&gpu, host, device, (size_t)count * sizeof(float), &err) == TF_OK);
}

START_TEST(propagation_bitwise)
{
    tf_error err;
    dataset tennis;
    load_or_fail("twitter_tennis", &tennis);
    rng r;
    rng_seed(&r, 1);
    int64_t differing = 0, total = 0;
    for (int64_t t = 0; t < tennis.snapshots.num_snapshots; t += 17) {
        const csr *g = &tennis.snapshots.snapshots[t].graph;
        for (int kind = 0; kind < 2; kind++) {
            propagation p;
            int status = kind == 0 ? ref_propagation_gcn(&p, g, EDGE_NORM_SYMMETRIC, 1, &err)
                                   : ref_propagation_chebyshev(&p, g, &err);
            ck_assert(status == TF_OK && propagation_add_transpose(&p, &err) == TF_OK);
            cuda_propagation device;
            ck_assert_msg(cuda_propagation_upload(&gpu, &p, &device, &err) == TF_OK, "%s", err.message);
            const int64_t width = 16, size = g->num_nodes * width;
            float *x = random_units(size, &r), *y_ref = random_units(size, &r), *y_gpu = random_units(size, &r);
            float *dx_ref = random_units(size, &r), *dx_gpu = malloc((size_t)size * sizeof(float));
            memcpy(dx_gpu, dx_ref, (size_t)size * sizeof(float));
            float *d_x = to_device(x, size), *d_y = to_device(y_gpu, size), *d_dx = to_device(dx_gpu, size);
            ref_propagate_forward(&p, x, width, y_ref);
            ref_propagate_backward(&p, x, width, dx_ref);
            ck_assert(cuda_propagate_forward(&gpu, &device, d_x, width, d_y, &err) == TF_OK);
            ck_assert(cuda_propagate_backward(&gpu, &device, d_x, width, d_dx, &err) == TF_OK);
            to_host(y_gpu, d_y, size);
            to_host(dx_gpu, d_dx, size);
            for (int64_t i = 0; i < size; i++)
                differing += memcmp(&y_gpu[i], &y_ref[i], 4) != 0 || memcmp(&dx_gpu[i], &dx_ref[i], 4) != 0;
            total += size;
            cuda_free(&gpu, d_x), cuda_free(&gpu, d_y), cuda_free(&gpu, d_dx);
            free(x), free(y_ref), free(y_gpu), free(dx_ref), free(dx_gpu);
            cuda_propagation_free(&gpu, &device);
            ref_propagation_free(&p);
        }
    }
    printf("propagation on twitter_tennis snapshots (GCN and Chebyshev, width 16): %lld of %lld values differ in bits\n",
           (long long)differing, (long long)total);
    ck_assert_int_eq(differing, 0);
    dataset_free(&tennis);
}
END_TEST

START_TEST(dense_and_cells)
{
    rng r;
    rng_seed(&r, 2);
    tf_error err;
    const int64_t n = 1000, in = 16, out = 32;
    float *x = random_units(n * in, &r), *w = random_units(out * in, &r), *b = random_units(out, &r);
    float *dy = random_units(n * out, &r), *y_ref = random_units(n * out, &r), *y_gpu = malloc((size_t)(n * out) * 4);
    float *dx_ref = random_units(n * in, &r), *dw_ref = random_units(out * in, &r), *db_ref = random_units(out, &r);
    float *d_x = to_device(x, n * in), *d_w = to_device(w, out * in), *d_b = to_device(b, out);
    float *d_dy = to_device(dy, n * out), *d_y = to_device(y_ref, n * out);
    float *d_dx = to_device(dx_ref, n * in), *d_dw = to_device(dw_ref, out * in), *d_db = to_device(db_ref, out);
    ref_linear_forward(x, w, b, n, in, out, y_ref);
    ck_assert(cuda_linear_forward(&gpu, d_x, d_w, d_b, n, in, out, d_y, &err) == TF_OK);
    to_host(y_gpu, d_y, n * out);
    double forward = relative_error(y_gpu, y_ref, n * out);
    ref_linear_backward(x, w, dy, n, in, out, dx_ref, dw_ref, db_ref);
    ck_assert(cuda_linear_backward(&gpu, d_x, d_w, d_dy, n, in, out, d_dx, d_dw, d_db, &err) == TF_OK);
    float *dx_gpu = malloc((size_t)(n * in) * 4), *dw_gpu = malloc((size_t)(out * in) * 4), *db_gpu = malloc((size_t)out * 4);
    to_host(dx_gpu, d_dx, n * in);
    to_host(dw_gpu, d_dw, out * in);
    to_host(db_gpu, d_db, out);
    double backward = fmax(relative_error(dx_gpu, dx_ref, n * in),
                           fmax(relative_error(dw_gpu, dw_ref, out * in), relative_error(db_gpu, db_ref, out)));
    printf("linear (1000 x 16 -> 32): forward %.2e, backward %.2e\n", forward, backward);
    ck_assert(forward <= TOLERANCE && backward <= TOLERANCE);

    /* GRU cell forward. */
    const int64_t H = 24;
    float *h = random_units(n * H, &r), *wi = random_units(3 * H * in, &r), *wh = random_units(3 * H * H, &r);
    float *bi = random_units(3 * H, &r), *bh = random_units(3 * H, &r);
    float *h_ref = malloc((size_t)(n * H) * 4), *cache_ref = malloc((size_t)(n * 4 * H) * 4);
    float *h_gpu = malloc((size_t)(n * H) * 4);
    ref_gru_cell_forward(x, h, wi, wh, bi, bh, n, in, H, h_ref, cache_ref);
    float *d_h = to_device(h, n * H), *d_wi = to_device(wi, 3 * H * in), *d_wh = to_device(wh, 3 * H * H);
    float *d_bi = to_device(bi, 3 * H), *d_bh = to_device(bh, 3 * H);
    float *d_hout = to_device(h_ref, n * H), *d_cache = to_device(cache_ref, n * 4 * H);
    ck_assert(cuda_gru_cell_forward(&gpu, d_x, d_h, d_wi, d_wh, d_bi, d_bh, n, in, H, d_hout, d_cache, &err) == TF_OK);
    to_host(h_gpu, d_hout, n * H);
    double gru = relative_error(h_gpu, h_ref, n * H);
    printf("GRU cell forward (1000 rows): %.2e\n", gru);
    ck_assert(gru <= TOLERANCE);
    float *all[] = {x, w, b, dy, y_ref, y_gpu, dx_ref, dw_ref, db_ref, dx_gpu, dw_gpu, db_gpu, h, wi, wh, bi, bh,
                    h_ref, cache_ref, h_gpu};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        free(all[i]);
}
END_TEST

START_TEST(models_through_the_gpu_table)
{
    dataset d;
    const snapshot_seq *seq = load_snapshots("twitter_tennis", &d);
    cuda_kernels_bind(&gpu);
    for (int kind = MODEL_TGCN; kind <= MODEL_EVOLVEGCN; kind++) {
        double output, gradient;
        compare_model_on_kernels(seq, (model_kind)kind, &cuda_kernels, 10, 4, &output, &gradient);
        printf("%-10s through the GPU kernels: outputs %.2e, gradients %.2e\n", model_kind_name((model_kind)kind),
               output, gradient);
        ck_assert(output <= TOLERANCE && gradient <= TOLERANCE);
    }
    dataset_free(&d);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("cuda_kernels");
    TCase *cases = tcase_create("cuda_kernels");
    tcase_set_timeout(cases, 300);
    tcase_add_test(cases, propagation_bitwise);
    tcase_add_test(cases, dense_and_cells);
    tcase_add_test(cases, models_through_the_gpu_table);
    suite_add_tcase(suite, cases);
    return run_suite_cuda(suite, &gpu);
}
