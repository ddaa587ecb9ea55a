/* `twofold train --profile`'s counters (opt/profile.h): calls through the wrapper table count the
 * FLOPs and bytes of the formulas written there, for shapes whose counts are worked out here by
 * hand, and the wrapped kernels still compute what the inner table computes. */
#include "datasets/dataset.h"
#include "opt/profile.h"
#include "ref/nn/compare.h"
#include "ref/nn/layers.h"
#include "ref/core/rng.h"
#include "verify/testing.h"

START_TEST(dense_flops_by_the_formula)
{
    rng r;
    rng_seed(&r, 1);
    const kernels *k = profile_wrap(&ref_kernels);
    const int64_t n = 5, in = 3, out = 7;
    float *x = random_units(n * in, &r), *w = random_units(out * in, &r), *b = random_units(out, &r);
    float *y = random_units(n * out, &r), *y_ref = random_units(n * out, &r);
    k->linear_forward(x, w, b, n, in, out, y);
    ref_linear_forward(x, w, b, n, in, out, y_ref);
    const profile_counters *c = profile_counters_now();
    printf("one linear_forward n %lld, in %lld, out %lld: %lld call, %.0f FLOPs (2 n in out = %lld), %.0f bytes, "
           "%d shape; %lld values differ from ref's\n",
           (long long)n, (long long)in, (long long)out, (long long)c->calls[PROFILE_DENSE], c->flops[PROFILE_DENSE],
           (long long)(2 * n * in * out), c->bytes[PROFILE_DENSE], c->shape_count,
           (long long)differing_values(y, y_ref, n * out));
    ck_assert_int_eq(c->calls[PROFILE_DENSE], 1);
    ck_assert(c->flops[PROFILE_DENSE] == 2.0 * 5 * 3 * 7); /* 210 */
    ck_assert(c->bytes[PROFILE_DENSE] == 4.0 * (5 * 3 + 3 * 7 + 5 * 7)); /* x, W, y once: 284 */
    ck_assert_int_eq(c->shape_count, 1);
    ck_assert(c->shapes[0].n == n && c->shapes[0].in == in && c->shapes[0].out == out && c->shapes[0].flops == 210.0);
    ck_assert_int_eq(differing_values(y, y_ref, n * out), 0);
    /* The backward: dx and dW products (2 x 210) and the bias sums (n out = 35); same shape. */
    float *dx = random_units(n * in, &r), *dw = random_units(out * in, &r), *db = random_units(out, &r);
    k->linear_backward(x, w, y, n, in, out, dx, dw, db);
    printf("then one linear_backward with dx, dW and db: %lld calls, %.0f FLOPs in all\n",
           (long long)c->calls[PROFILE_DENSE], c->flops[PROFILE_DENSE]);
    ck_assert_int_eq(c->calls[PROFILE_DENSE], 2);
    ck_assert(c->flops[PROFILE_DENSE] == 210.0 + 2 * 210.0 + 35.0);
    ck_assert_int_eq(c->shape_count, 1);
    ck_assert(c->shapes[0].flops == 3 * 210.0);
    /* A GRU cell (EvolveGCN's): six products, 2 n (in + H) 3H = 6 n H (in + H) FLOPs, counted
     * as cells, not dense. */
    const int64_t hidden = 4;
    float *h = random_units(n * hidden, &r), *w_ih = random_units(3 * hidden * in, &r);
    float *w_hh = random_units(3 * hidden * hidden, &r), *b_ih = random_units(3 * hidden, &r);
    float *b_hh = random_units(3 * hidden, &r), *h_out = random_units(n * hidden, &r);
    float *cache = random_units(n * 4 * hidden, &r);
    k->gru_cell_forward(x, h, w_ih, w_hh, b_ih, b_hh, n, in, hidden, h_out, cache);
    printf("one gru_cell_forward n %lld, in %lld, H %lld: %.0f FLOPs (6 n H (in + H) = %lld)\n", (long long)n,
           (long long)in, (long long)hidden, c->flops[PROFILE_CELLS], (long long)(6 * n * hidden * (in + hidden)));
    ck_assert_int_eq(c->calls[PROFILE_CELLS], 1);
    ck_assert(c->flops[PROFILE_CELLS] == 6.0 * 5 * 4 * (3 + 4)); /* 840 */
    ck_assert_int_eq(c->calls[PROFILE_DENSE], 2);
    free(h), free(w_ih), free(w_hh), free(b_ih), free(b_hh), free(h_out), free(cache);
    /* No other family moved. */
    for (int f = 0; f < PROFILE_FAMILIES; f++)
        if (f != PROFILE_DENSE && f != PROFILE_CELLS)
            ck_assert(c->calls[f] == 0 && c->flops[f] == 0 && c->bytes[f] == 0);
    free(x), free(w), free(b), free(y), free(y_ref), free(dx), free(dw), free(db);
}
END_TEST

START_TEST(sparse_and_elementwise_by_the_formula)
{
    rng r;
    rng_seed(&r, 2);
    tf_error err;
    dataset d;
    load_or_fail("chickenpox", &d);
    const csr *g = &d.snapshots.snapshots[0].graph;
    propagation p;
    ck_assert(ref_propagation_gcn(&p, g, EDGE_NORM_SYMMETRIC, 1, &err) == TF_OK);
    const kernels *k = profile_wrap(&ref_kernels);
    const int64_t n = g->num_nodes, nnz = g->num_edges, width = 8;
    float *x = random_units(n * width, &r), *y = random_units(n * width, &r);
    k->propagate_forward(&p, x, width, y);
    const profile_counters *c = profile_counters_now();
    printf("one propagate_forward on chickenpox (%lld vertices, %lld edges), width %lld: %.0f FLOPs "
           "(2 (nnz + n) w = %lld), %.0f bytes (8 nnz + 4 n + 8 n w = %lld)\n",
           (long long)n, (long long)nnz, (long long)width, c->flops[PROFILE_SPARSE], (long long)(2 * (nnz + n) * width),
           c->bytes[PROFILE_SPARSE], (long long)(8 * nnz + 4 * n + 8 * n * width));
    ck_assert_int_eq(c->calls[PROFILE_SPARSE], 1);
    ck_assert(c->flops[PROFILE_SPARSE] == (double)(2 * (nnz + n) * width));
    ck_assert(c->bytes[PROFILE_SPARSE] == (double)(8 * nnz + 4 * n + 8 * n * width));
    /* A sigmoid forward and backward on n w values: 8 and 16 bytes each. */
    k->sigmoid_forward(x, n * width, y);
    k->sigmoid_backward(y, x, n * width, y);
    ck_assert_int_eq(c->calls[PROFILE_ACTIVATIONS], 2);
    ck_assert(c->bytes[PROFILE_ACTIVATIONS] == 24.0 * (double)(n * width));
    /* The roofline bound of a family is the larger of its two times. */
    profile_peaks peaks;
    memset(&peaks, 0, sizeof peaks);
    peaks.sgemm_rate = 1e9;
    peaks.copy_rate = 1e8;
    peaks.triad_rate = 2e8; /* the better bandwidth counts */
    const double compute = c->flops[PROFILE_SPARSE] / 1e9, memory = c->bytes[PROFILE_SPARSE] / 2e8;
    printf("sparse bound at 1 GFLOP/s and 0.2 GB/s: %.3g s (compute %.3g s, memory %.3g s)\n",
           profile_bound(c, &peaks, PROFILE_SPARSE), compute, memory);
    ck_assert(profile_bound(c, &peaks, PROFILE_SPARSE) == (compute > memory ? compute : memory));
    ck_assert(profile_bound(c, &peaks, PROFILE_COMMUNICATION) == 0);
    free(x), free(y);
    ref_propagation_free(&p);
    dataset_free(&d);
}
END_TEST

int main(void)
{
    const named_test tests[] = {{"dense_flops_by_the_formula", dense_flops_by_the_formula},
                                {"sparse_and_elementwise_by_the_formula", sparse_and_elementwise_by_the_formula}};
    return run_suite(suite_of("profile", tests, sizeof tests / sizeof *tests, 60));
}
