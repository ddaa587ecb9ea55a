/* Each optimized CPU kernel (opt/kernels.h) against its reference twin, on real graphs
 * (twitter_tennis: directed, weighted, 1000 vertices; england_covid) and generated ones, with
 * the equality each promises: bitwise for propagation and the LSTM's pointwise part, the fp
 * tolerance (max |a - b| / max(1, |ref|) <= 1e-5) where BLAS reorders sums. Each check prints
 * what it measured. Runs with 2 OpenMP threads so the parallel paths are exercised. */
#include <math.h>

#include "datasets/dataset.h"
#include "opt/kernels.h"
#include "ref/nn/adam.h"
#include "ref/nn/compare.h"
#include "ref/nn/layers.h"
#include "ref/models/model.h"
#include "ref/nn/recurrent.h"
#include "ref/core/rng.h"
#include "ref/nn/time_encoding.h"
#include "verify/testing.h"

#define TOLERANCE 1e-5

static float *copy_array(const float *values, int64_t count)
{
    float *copy = malloc((size_t)(count ? count : 1) * sizeof *copy);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, values, (size_t)count * sizeof *copy);
    return copy;
}

/* The snapshot of twitter_tennis (under Valgrind, its generated stand-in: tennis_or_generated())
 * with the most edges; loaded once for the program (the tests only read it). */
static const csr *twitter_tennis_busiest(void)
{
    const snapshot_seq *seq = shared_snapshots(tennis_or_generated());
    int64_t busiest = 0;
    for (int64_t t = 0; t < seq->num_snapshots; t++)
        if (seq->snapshots[t].graph.num_edges > seq->snapshots[busiest].graph.num_edges)
            busiest = t;
    return &seq->snapshots[busiest].graph;
}

/* The skewed generated graph of the propagation and attention checks: 3000 vertices natively; under
 * Valgrind 300, still many more than the 64 rows of a thread's chunk (opt/kernels.c), so both
 * threads take rows of the same skewed shape. */
static const char *skewed_graph(void)
{
    return test_data("powerlaw:nodes=3000,edges=30000,snapshots=1,seed=5",
                     "powerlaw:nodes=300,edges=3000,snapshots=1,seed=5");
}

/* ---- propagation: bitwise -------------------------------------------------------------- */

/* Every operator kind on graph g, widths 1, 7 and 32: forward and backward, both bitwise. */
static void check_propagation_on(const char *what, const csr *g, rng *r)
{
    static const char *names[4] = {"sum", "mean", "symmetric", "chebyshev"};
    tf_error err;
    int64_t differing_total = 0, values_total = 0;
    for (int kind = 0; kind < 4; kind++)
        for (int loops = 0; loops < (kind == 3 ? 1 : 2); loops++) {
            propagation p;
            int status = kind == 3 ? ref_propagation_chebyshev(&p, g, &err)
                                   : ref_propagation_gcn(&p, g, (edge_normalization)kind, loops, &err);
            ck_assert_msg(status == TF_OK, "%s", err.message);
            ck_assert(propagation_add_transpose(&p, &err) == TF_OK);
            static const int64_t widths[3] = {1, 7, 32};
            for (int w = 0; w < 3; w++) {
                int64_t size = g->num_nodes * widths[w];
                float *x = random_units(size, r), *y_ref = random_units(size, r), *y_opt = random_units(size, r);
                ref_propagate_forward(&p, x, widths[w], y_ref);
                opt_propagate_forward(&p, x, widths[w], y_opt);
                int64_t forward = differing_values(y_ref, y_opt, size);
                /* The backward adds into dx: start both from the same nonzero values. */
                float *dx_ref = random_units(size, r), *dx_opt = copy_array(dx_ref, size);
                ref_propagate_backward(&p, x, widths[w], dx_ref);
                opt_propagate_backward(&p, x, widths[w], dx_opt);
                int64_t backward = differing_values(dx_ref, dx_opt, size);
                ck_assert_msg(forward == 0 && backward == 0, "%s %s%s width %lld: %lld / %lld values differ", what,
                              names[kind], loops ? " + loops" : "", (long long)widths[w], (long long)forward,
                              (long long)backward);
                differing_total += forward + backward;
                values_total += 2 * size;
                free(x), free(y_ref), free(y_opt), free(dx_ref), free(dx_opt);
            }
            ref_propagation_free(&p);
        }
    printf("propagation on %s (%lld vertices, %lld edges), 7 operators x 3 widths: %lld of %lld values differ in "
           "bits\n",
           what, (long long)g->num_nodes, (long long)g->num_edges, (long long)differing_total, (long long)values_total);
}

START_TEST(propagation_is_bitwise_equal)
{
    rng r;
    rng_seed(&r, 1);
    tf_error err;
    dataset covid, generated;
    load_or_fail("england_covid", &covid);
    ck_assert_msg(dataset_load(skewed_graph(), NULL, &generated, &err) == TF_OK, "%s", err.message);
    /* The busiest twitter_tennis snapshot, a covid day, and a skewed generated graph. */
    char busiest[160];
    snprintf(busiest, sizeof busiest, "%s (busiest snapshot)", tennis_or_generated());
    check_propagation_on(busiest, twitter_tennis_busiest(), &r);
    check_propagation_on("england_covid day 0", &covid.snapshots.snapshots[0].graph, &r);
    check_propagation_on("generated power law", &generated.snapshots.snapshots[0].graph, &r);
    dataset_free(&covid);
    dataset_free(&generated);
}
END_TEST

/* ---- the order of a float sum, by hand (chapters/08-gpu.md's worked example) ------------------ */

/* terms[order[0]] + terms[order[1]] + ..., added left to right, each addition rounded to float. */
static float sum_in_order(const float *terms, const int *order, int count)
{
    volatile float sum = terms[order[0]]; /* volatile: every partial sum is stored, i.e. rounded */
    for (int i = 1; i < count; i++)
        sum = sum + terms[order[i]];
    return sum;
}

/* Vertex 0 of a 4-vertex graph gathers its self term and the in-edges from 1, 2, 3, all of
 * coefficient 1 (plain sum, one self loop), with x = (1e8, 1, -1e8, 1): the exact sum is 2, but
 * float has 24 bits, so next to 1e8 the spacing is 8 and 1e8 + 1 rounds back to 1e8. The
 * reference adds self, 1, 2, 3 in that order: ((1e8 + 1) - 1e8) + 1 = 1. An atomic add on a
 * GPU takes whichever order the threads arrive in; two of those give 0 and 2. A fixed order
 * gives 1 every time, and ref and opt (and cuda/propagate.cu's kernel, same order) agree on it.
 * Then one multiply-add: with a = 1 + 2^-12, a a = 1 + 2^-11 + 2^-24 rounds to 1 + 2^-11 (a
 * tie, to even), so a a - (1 + 2^-11) is 0 rounded twice and 2^-24 fused (fmaf, one rounding). */
START_TEST(summation_order_by_hand)
{
    tf_error err;
    const int32_t source[3] = {1, 2, 3}, destination[3] = {0, 0, 0};
    csr g;
    ck_assert(csr_from_edges(&g, 4, 3, source, destination, NULL, &err) == TF_OK);
    propagation p;
    ck_assert_msg(ref_propagation_gcn(&p, &g, EDGE_NORM_NONE, 1, &err) == TF_OK, "%s", err.message);
    ck_assert(propagation_add_transpose(&p, &err) == TF_OK);
    const float x[4] = {1e8f, 1.0f, -1e8f, 1.0f};
    float y_ref[4], y_opt[4];
    ref_propagate_forward(&p, x, 1, y_ref);
    opt_propagate_forward(&p, x, 1, y_opt);
    static const int reference_order[4] = {0, 1, 2, 3}, ones_first[4] = {1, 3, 0, 2}, cancel_first[4] = {0, 2, 1, 3};
    const float fixed = sum_in_order(x, reference_order, 4), early = sum_in_order(x, ones_first, 4),
                late = sum_in_order(x, cancel_first, 4);
    printf("x = (1e8, 1, -1e8, 1), exact sum 2: reference order %g, ref kernel %g, opt kernel %g; "
           "order (1, 1, 1e8, -1e8) %g, order (1e8, -1e8, 1, 1) %g\n",
           (double)fixed, (double)y_ref[0], (double)y_opt[0], (double)early, (double)late);
    ck_assert(fixed == 1.0f && early == 0.0f && late == 2.0f);
    ck_assert(memcmp(&y_ref[0], &fixed, sizeof fixed) == 0 && memcmp(&y_opt[0], &fixed, sizeof fixed) == 0);

    const float a = 1.0f + 0x1p-12f, c = -(1.0f + 0x1p-11f);
    volatile float product = a * a; /* rounded to float before the add */
    const float twice = product + c, once = fmaf(a, a, c);
    printf("a = 1 + 2^-12: a a + c with c = -(1 + 2^-11): rounded twice %g, fused (one rounding) %g = 2^-24\n",
           (double)twice, (double)once);
    ck_assert(twice == 0.0f && once == 0x1p-24f);
    ref_propagation_free(&p);
    csr_free(&g);
}
END_TEST

/* ---- DCRNN's backward walk as a gather: bitwise the scatter --------------------------------- */

/* The backward walk W_i = (D_I^-1 A^T)^T: ref_propagate_backward() of WALK_BACKWARD_TRANSPOSED scatters
 * it, ref_propagation_transpose() makes it an operator of the reversed graph whose rows gather the same
 * terms in the same order. On g, width 7: @return the values that differ in bits, except a row with no
 * terms, which the gather starts from 0 x_u (-0 where x_u < 0) and the scatter leaves at +0 (equal as
 * numbers; counted apart in @p signed_zeros). */
static int64_t check_walk_transpose_on(const char *what, const csr *g, rng *r, int64_t *signed_zeros)
{
    tf_error err;
    propagation transposed, backward;
    csr reversed = {0, 0, malloc((size_t)(g->num_nodes + 1) * sizeof(int64_t)),
                    malloc((size_t)(g->num_edges + 1) * sizeof(int32_t)), malloc((size_t)(g->num_edges + 1) * sizeof(float))};
    ck_assert(ref_propagation_walk(&transposed, g, WALK_BACKWARD_TRANSPOSED, &err) == TF_OK);
    ck_assert(ref_propagation_transpose(&backward, &reversed, &transposed, &err) == TF_OK);
    const int64_t width = 7, size = g->num_nodes * width;
    float *x = random_units(size, r), *scattered = calloc((size_t)size + 1, sizeof(float));
    float *gathered = random_units(size, r), *gathered_opt = random_units(size, r);
    ref_propagate_backward(&transposed, x, width, scattered);
    ref_propagate_forward(&backward, x, width, gathered);
    opt_propagate_forward(&backward, x, width, gathered_opt);
    int64_t differing = differing_values(gathered, gathered_opt, size);
    *signed_zeros = 0;
    for (int64_t i = 0; i < size; i++)
        if (differing_values(&scattered[i], &gathered[i], 1)) {
            const int zero = scattered[i] == 0.0f && gathered[i] == 0.0f;
            *signed_zeros += zero;
            differing += !zero;
        }
    printf("DCRNN backward walk on %s (%lld vertices, %lld edges): the reversed graph's gather (ref and opt) against "
           "the scatter, width %lld: %lld values differ in bits (must be 0), %lld zeros differ in sign only\n",
           what, (long long)g->num_nodes, (long long)g->num_edges, (long long)width, (long long)differing,
           (long long)*signed_zeros);
    free(x), free(scattered), free(gathered), free(gathered_opt);
    ref_propagation_free(&transposed);
    ref_propagation_free(&backward);
    csr_free(&reversed);
    return differing;
}

START_TEST(walk_transpose_is_the_scatter)
{
    rng r;
    rng_seed(&r, 3);
    tf_error err;
    /* 4 vertices, the edge 0 -> 2 twice (its terms keep their order), a loop at 1, and a vertex (3) with no
     * out-edge: W_i's row 3 has no terms */
    const int32_t src[] = {0, 1, 0, 2, 1, 0, 0}, dst[] = {2, 2, 2, 1, 1, 1, 3};
    const float weight[] = {1.0f, 2.0f, 0.5f, 3.0f, 1.5f, 0.25f, 2.0f};
    csr crafted;
    ck_assert(csr_from_edges(&crafted, 4, 7, src, dst, weight, &err) == TF_OK);
    int64_t zeros;
    ck_assert_int_eq(check_walk_transpose_on("a crafted graph", &crafted, &r, &zeros), 0);
    ck_assert_int_le(zeros, 7); /* row 3 only */
    char busiest[160];
    snprintf(busiest, sizeof busiest, "%s (busiest snapshot)", tennis_or_generated());
    ck_assert_int_eq(check_walk_transpose_on(busiest, twitter_tennis_busiest(), &r, &zeros), 0);
    csr_free(&crafted);
}
END_TEST

/* ---- graph attention's edge work: bitwise ---------------------------------------------------- */

/* opt_graph_attention_edges_forward() and _backward() against the reference on graph g, 2 heads of
 * 5 channels: scores, alpha, output, and every gradient, bit for bit. */
static int64_t check_graph_attention_on(const char *what, const csr *g, rng *r)
{
    tf_error err;
    propagation p = {.graph = g};
    ck_assert(propagation_add_transpose(&p, &err) == TF_OK);
    const int64_t n = g->num_nodes, heads = 2, channels = 5, width = heads * channels, slots = (g->num_edges + n) * heads;
    float *projected = random_units(n * width, r), *dout = random_units(n * width, r);
    float *vectors = random_units(2 * width, r); /* a_src, then a_dst */
    float *results[2][4];                        /* per side: scores (both), alpha, out, scratch */
    float *gradients[2][2];                      /* per side: dprojected, d(a_src, a_dst), added into */
    gradients[0][0] = random_units(n * width, r);
    gradients[0][1] = random_units(2 * width, r);
    gradients[1][0] = copy_array(gradients[0][0], n * width);
    gradients[1][1] = copy_array(gradients[0][1], 2 * width);
    for (int side = 0; side < 2; side++) {
        results[side][0] = random_units(2 * n * heads, r);
        results[side][1] = random_units(slots, r);
        results[side][2] = random_units(n * width, r);
        results[side][3] = random_units(slots + 3 * n * heads, r);
        const kernels *k = side ? &opt_kernels : &ref_kernels;
        k->graph_attention_edges_forward(&p, projected, vectors, vectors + width, heads, channels, results[side][0],
                                         results[side][0] + n * heads, results[side][1], results[side][2]);
        k->graph_attention_edges_backward(&p, projected, vectors, vectors + width, results[side][0],
                                          results[side][0] + n * heads, results[side][1], dout, heads, channels,
                                          results[side][3], gradients[side][0], gradients[side][1],
                                          gradients[side][1] + width);
    }
    const int64_t forward = differing_values(results[0][0], results[1][0], 2 * n * heads) +
                            differing_values(results[0][1], results[1][1], slots) +
                            differing_values(results[0][2], results[1][2], n * width);
    const int64_t backward = differing_values(gradients[0][0], gradients[1][0], n * width) +
                             differing_values(gradients[0][1], gradients[1][1], 2 * width);
    printf("GAT edge work on %s (%lld vertices, %lld edges, 2 heads of 5): %lld forward and %lld backward values "
           "differ in bits (must be 0)\n",
           what, (long long)n, (long long)g->num_edges, (long long)forward, (long long)backward);
    for (int side = 0; side < 2; side++) {
        for (int a = 0; a < 4; a++)
            free(results[side][a]);
        free(gradients[side][0]), free(gradients[side][1]);
    }
    free(projected), free(dout), free(vectors);
    ref_propagation_free(&p);
    return forward + backward;
}

START_TEST(graph_attention_is_bitwise_equal)
{
    rng r;
    rng_seed(&r, 3);
    tf_error err;
    dataset generated;
    ck_assert_msg(dataset_load(skewed_graph(), NULL, &generated, &err) == TF_OK, "%s", err.message);
    /* and a graph with stored loops (removed, then one added per vertex) and duplicates */
    const int32_t src[] = {0, 1, 1, 2, 2, 3, 3, 4, 0}, dst[] = {1, 1, 0, 3, 3, 3, 0, 4, 4};
    csr loops;
    ck_assert(csr_from_edges(&loops, 6, 9, src, dst, NULL, &err) == TF_OK);
    const csr *tennis_first = &shared_snapshots(tennis_or_generated())->snapshots[0].graph;
    char first[160];
    snprintf(first, sizeof first, "%s snapshot 0", tennis_or_generated());
    int64_t differing = check_graph_attention_on(first, tennis_first, &r) +
                        check_graph_attention_on("generated power law", &generated.snapshots.snapshots[0].graph, &r) +
                        check_graph_attention_on("loops and duplicates", &loops, &r);
    ck_assert_int_eq(differing, 0);
    csr_free(&loops);
    dataset_free(&generated);
}
END_TEST

/* ---- dense products: fp ------------------------------------------------------------------ */

START_TEST(dense_products_within_tolerance)
{
    rng r;
    rng_seed(&r, 2);
    /* Shapes the models use: gate inputs, the head over a window, GC-LSTM's x W. */
    static const int64_t shapes[][3] = {{20, 4, 32}, {1000, 16, 32}, {1000, 64, 32}, {8000, 32, 1}, {129, 8, 3}};
    double worst_forward = 0, worst_backward = 0, worst_matmul = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        int64_t n = shapes[s][0], in = shapes[s][1], out = shapes[s][2];
        float *x = random_units(n * in, &r), *w = random_units(out * in, &r), *b = random_units(out, &r);
        float *dy = random_units(n * out, &r);
        float *y_ref = random_units(n * out, &r), *y_opt = random_units(n * out, &r);
        ref_linear_forward(x, w, b, n, in, out, y_ref);
        opt_linear_forward(x, w, b, n, in, out, y_opt);
        worst_forward = fmax(worst_forward, relative_error(y_opt, y_ref, n * out));
        ref_linear_accumulate(x, w, n, in, out, y_ref);
        opt_linear_accumulate(x, w, n, in, out, y_opt);
        worst_forward = fmax(worst_forward, relative_error(y_opt, y_ref, n * out));
        float *dx_ref = random_units(n * in, &r), *dw_ref = random_units(out * in, &r), *db_ref = random_units(out, &r);
        float *dx_opt = copy_array(dx_ref, n * in), *dw_opt = copy_array(dw_ref, out * in), *db_opt = copy_array(db_ref, out);
        ref_linear_backward(x, w, dy, n, in, out, dx_ref, dw_ref, db_ref);
        opt_linear_backward(x, w, dy, n, in, out, dx_opt, dw_opt, db_opt);
        worst_backward = fmax(worst_backward, relative_error(dx_opt, dx_ref, n * in));
        worst_backward = fmax(worst_backward, relative_error(dw_opt, dw_ref, out * in));
        worst_backward = fmax(worst_backward, relative_error(db_opt, db_ref, out));
        /* The matmul form reads the weight as [in][out]. */
        ref_matmul_accumulate(x, w, n, in, out, y_ref);
        opt_matmul_accumulate(x, w, n, in, out, y_opt);
        worst_matmul = fmax(worst_matmul, relative_error(y_opt, y_ref, n * out));
        ref_matmul_backward(x, w, dy, n, in, out, dx_ref, dw_ref);
        opt_matmul_backward(x, w, dy, n, in, out, dx_opt, dw_opt);
        worst_matmul = fmax(worst_matmul, relative_error(dx_opt, dx_ref, n * in));
        worst_matmul = fmax(worst_matmul, relative_error(dw_opt, dw_ref, out * in));
        float *all[] = {x, w, b, dy, y_ref, y_opt, dx_ref, dw_ref, db_ref, dx_opt, dw_opt, db_opt};
        for (size_t i = 0; i < sizeof all / sizeof *all; i++)
            free(all[i]);
    }
    printf("linear forward/accumulate: max relative error %.2e; backward (dx, dW over up to 8000 rows, db): %.2e; "
           "matmul: %.2e\n",
           worst_forward, worst_backward, worst_matmul);
    ck_assert(worst_forward <= TOLERANCE && worst_backward <= TOLERANCE && worst_matmul <= TOLERANCE);
}
END_TEST

/* ---- the event models' kernels ----------------------------------------------------------------- */

/* The largest |a - b| / max(1, |b|) of two double arrays. */
static double relative_error_double(const double *a, const double *b, int64_t n)
{
    double worst = 0;
    for (int64_t i = 0; i < n; i++)
        worst = fmax(worst, fabs(a[i] - b[i]) / fmax(1.0, fabs(b[i])));
    return worst;
}

/* linear_backward_sums at the event models' shapes (TGN's updater: 6,600 rows of 96 into 96 gates;
 * the decoder's score: 200 rows into 1), and the time encodings on deltas from 0 to 1e6 s (the
 * arguments w dt reach 1e6 radians) with TGL's weights: forward values and the double sums of the
 * backward. */
START_TEST(event_kernels_within_tolerance)
{
    rng r;
    rng_seed(&r, 5);
    /* Under Valgrind 660 rows for the updater's 6600: still 20 blocks of 32 rows (opt/kernels.c's
     * ROWS_PER_BLOCK) and a short last one, a tenth of the products. */
    const int64_t updater_rows = test_repeats(6600, 660);
    const int64_t shapes[][3] = {{updater_rows, 96, 96}, {updater_rows, 32, 96}, {200, 32, 1}, {37, 5, 3}};
    double worst_sums = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        const int64_t n = shapes[s][0], in = shapes[s][1], out = shapes[s][2];
        float *x = random_units(n * in, &r), *w = random_units(out * in, &r), *dy = random_units(n * out, &r);
        float *dx_ref = random_units(n * in, &r), *dx_opt = copy_array(dx_ref, n * in);
        double *sums_ref = calloc((size_t)(out * in + out), sizeof(double));
        double *sums_opt = calloc((size_t)(out * in + out), sizeof(double));
        ref_linear_backward_sums(x, w, dy, n, in, out, dx_ref, sums_ref, sums_ref + out * in);
        opt_linear_backward_sums(x, w, dy, n, in, out, dx_opt, sums_opt, sums_opt + out * in);
        worst_sums = fmax(worst_sums, relative_error(dx_opt, dx_ref, n * in));
        worst_sums = fmax(worst_sums, relative_error_double(sums_opt, sums_ref, out * in + out));
        free(x), free(w), free(dy), free(dx_ref), free(dx_opt), free(sums_ref), free(sums_opt);
    }
    enum { ROWS = 5000, WIDTH = 32 };
    float delta[ROWS], weight[WIDTH], bias[WIDTH], *dout = random_units(ROWS * WIDTH, &r);
    float *y_ref = random_units(ROWS * WIDTH, &r), *y_opt = random_units(ROWS * WIDTH, &r);
    for (int k = 0; k < ROWS; k++) /* 0 .. 1e6 s, log-spread, and exact zeros (TGN's queries) */
        delta[k] = k % 7 == 0 ? 0.0f : (float)pow(10.0, 6.0 * rng_uniform(&r));
    ref_time_encoding_init(weight, bias, WIDTH);
    for (int i = 0; i < WIDTH; i++)
        bias[i] = (float)(rng_uniform(&r) - 0.5);
    ref_time_encoding_forward(delta, ROWS, weight, bias, WIDTH, WIDTH, y_ref);
    opt_time_encoding_forward(delta, ROWS, weight, bias, WIDTH, WIDTH, y_opt);
    const double encoding = relative_error(y_opt, y_ref, ROWS * WIDTH);
    double sums_ref[2 * WIDTH] = {0}, sums_opt[2 * WIDTH] = {0};
    ref_time_encoding_backward(delta, ROWS, weight, bias, WIDTH, WIDTH, dout, sums_ref, sums_ref + WIDTH);
    opt_time_encoding_backward(delta, ROWS, weight, bias, WIDTH, WIDTH, dout, sums_opt, sums_opt + WIDTH);
    /* The weight's sums add terms of up to 1e6 (dt itself): compared relative to their scale. */
    double scale = 0, difference = 0;
    for (int i = 0; i < 2 * WIDTH; i++) {
        scale = fmax(scale, fabs(sums_ref[i]));
        difference = fmax(difference, fabs(sums_opt[i] - sums_ref[i]));
    }
    printf("linear_backward_sums (dx, double sums over up to %lld rows): max relative error %.2e; time encoding "
           "forward %.2e, backward sums %.2e of their largest (%.3g)\n",
           (long long)updater_rows, worst_sums, encoding, difference / scale, scale);
    ck_assert(worst_sums <= TOLERANCE && encoding <= TOLERANCE && difference / scale <= TOLERANCE);
    free(dout), free(y_ref), free(y_opt);
}
END_TEST

/* ---- recurrent cells ------------------------------------------------------------------------ */

START_TEST(recurrent_cells)
{
    rng r;
    rng_seed(&r, 3);
    const int64_t n = 700, in = 16, H = 24;
    float *x = random_units(n * in, &r), *h = random_units(n * H, &r), *c = random_units(n * H, &r);
    float *w_ih = random_units(3 * H * in, &r), *w_hh = random_units(3 * H * H, &r);
    float *b_ih = random_units(3 * H, &r), *b_hh = random_units(3 * H, &r), *dh_out = random_units(n * H, &r);
    float *h_ref = random_units(n * H, &r), *h_opt = random_units(n * H, &r);
    float *cache_ref = random_units(n * 4 * H, &r), *cache_opt = random_units(n * 4 * H, &r);
    ref_gru_cell_forward(x, h, w_ih, w_hh, b_ih, b_hh, n, in, H, h_ref, cache_ref);
    opt_gru_cell_forward(x, h, w_ih, w_hh, b_ih, b_hh, n, in, H, h_opt, cache_opt);
    double forward = fmax(relative_error(h_opt, h_ref, n * H), relative_error(cache_opt, cache_ref, n * 4 * H));
    float *grads_ref[6], *grads_opt[6];
    int64_t sizes[6] = {n * in, n * H, 3 * H * in, 3 * H * H, 3 * H, 3 * H};
    for (int i = 0; i < 6; i++) {
        grads_ref[i] = random_units(sizes[i], &r);
        grads_opt[i] = copy_array(grads_ref[i], sizes[i]);
    }
    float *gate_gradients = random_units(2 * n * 3 * H, &r); /* scratch: overwritten */
    ref_gru_cell_backward(x, h, w_ih, w_hh, cache_ref, dh_out, n, in, H, gate_gradients, grads_ref[0], grads_ref[1],
                          grads_ref[2], grads_ref[3], grads_ref[4], grads_ref[5]);
    opt_gru_cell_backward(x, h, w_ih, w_hh, cache_ref, dh_out, n, in, H, gate_gradients, grads_opt[0], grads_opt[1],
                          grads_opt[2], grads_opt[3], grads_opt[4], grads_opt[5]);
    double backward = 0;
    for (int i = 0; i < 6; i++)
        backward = fmax(backward, relative_error(grads_opt[i], grads_ref[i], sizes[i]));
    printf("GRU cell (%lld rows, in %lld, hidden %lld): forward max relative error %.2e, backward %.2e\n",
           (long long)n, (long long)in, (long long)H, forward, backward);
    ck_assert(forward <= TOLERANCE && backward <= TOLERANCE);

    /* LSTM pointwise: bitwise. */
    float *preactivation = random_units(n * 4 * H, &r);
    float *c_ref = random_units(n * H, &r), *c_opt = random_units(n * H, &r);
    float *gates_ref = random_units(n * 4 * H, &r), *gates_opt = random_units(n * 4 * H, &r);
    ref_lstm_pointwise_forward(preactivation, c, n, H, c_ref, h_ref, gates_ref);
    opt_lstm_pointwise_forward(preactivation, c, n, H, c_opt, h_opt, gates_opt);
    int64_t differing = differing_values(c_ref, c_opt, n * H) + differing_values(h_ref, h_opt, n * H) +
                        differing_values(gates_ref, gates_opt, n * 4 * H);
    float *dpre_ref = random_units(n * 4 * H, &r), *dpre_opt = random_units(n * 4 * H, &r);
    float *dc_ref = random_units(n * H, &r), *dc_opt = copy_array(dc_ref, n * H);
    ref_lstm_pointwise_backward(gates_ref, c, c_ref, dh_out, c, n, H, dpre_ref, dc_ref);
    opt_lstm_pointwise_backward(gates_opt, c, c_opt, dh_out, c, n, H, dpre_opt, dc_opt);
    differing += differing_values(dpre_ref, dpre_opt, n * 4 * H) + differing_values(dc_ref, dc_opt, n * H);
    printf("LSTM pointwise forward + backward: %lld values differ in bits\n", (long long)differing);
    ck_assert_int_eq(differing, 0);
    float *all[] = {x, h, c, w_ih, w_hh, b_ih, b_hh, dh_out, h_ref, h_opt, cache_ref, cache_opt, preactivation,
                    c_ref, c_opt, gates_ref, gates_opt, dpre_ref, dpre_opt, dc_ref, dc_opt, gate_gradients};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        free(all[i]);
    for (int i = 0; i < 6; i++) {
        free(grads_ref[i]);
        free(grads_opt[i]);
    }
}
END_TEST

/* ---- activations, bias, loss, Adam: bitwise ---------------------------------------------------- */

/* The elementwise twins on arrays below and above the size where they start threads (the model's
 * n H and the head's window of rows), each against ref: every value equal bit for bit. Inputs
 * span [-8, 8) so the sigmoid and tanh saturate somewhere; the backwards add into nonzero dx. */
START_TEST(elementwise_loss_adam_bitwise)
{
    rng r;
    rng_seed(&r, 4);
    static const int64_t counts[2] = {1000 * 32, 1000 * 8 * 32 + 5};
    int64_t differing = 0, values = 0;
    for (int c = 0; c < 2; c++) {
        const int64_t count = counts[c];
        float *x = random_units(count, &r), *dy = random_units(count, &r);
        for (int64_t i = 0; i < count; i++)
            x[i] *= 8.0f;
        x[0] = 0.0f, x[1] = -0.0f; /* relu's edge */
        float *y_ref = random_units(count, &r), *y_opt = random_units(count, &r);
        float *dx_ref = random_units(count, &r), *dx_opt = copy_array(dx_ref, count);
        dx_ref[2] = dx_opt[2] = -0.0f; /* relu's backward must leave -0 alone where y <= 0 */
        const kernels *twins[2] = {&ref_kernels, &opt_kernels};
        float *ys[2] = {y_ref, y_opt}, *dxs[2] = {dx_ref, dx_opt};
        for (int k = 0; k < 2; k++) {
            twins[k]->sigmoid_forward(x, count, ys[k]);
            twins[k]->sigmoid_backward(ys[k], dy, count, dxs[k]);
        }
        differing += differing_values(y_ref, y_opt, count) + differing_values(dx_ref, dx_opt, count);
        for (int k = 0; k < 2; k++) {
            twins[k]->tanh_forward(x, count, ys[k]);
            twins[k]->tanh_backward(ys[k], dy, count, dxs[k]);
        }
        differing += differing_values(y_ref, y_opt, count) + differing_values(dx_ref, dx_opt, count);
        for (int k = 0; k < 2; k++) {
            twins[k]->relu_forward(x, count, ys[k]);
            twins[k]->relu_backward(ys[k], dy, count, dxs[k]);
        }
        differing += differing_values(y_ref, y_opt, count) + differing_values(dx_ref, dx_opt, count);
        /* add_bias and its backward over rows of 32: the backward's double column sums */
        const int64_t width = 32, rows = count / width;
        float *bias = random_units(width, &r), *db_ref = random_units(width, &r), *db_opt = copy_array(db_ref, width);
        for (int k = 0; k < 2; k++) {
            memcpy(ys[k], x, (size_t)count * sizeof(float));
            twins[k]->add_bias(ys[k], bias, rows, width);
        }
        ref_add_bias_backward(dy, rows, width, db_ref);
        opt_add_bias_backward(dy, rows, width, db_opt);
        differing += differing_values(y_ref, y_opt, count) + differing_values(db_ref, db_opt, width);
        values += 7 * count + width;
        /* The MSE loss with a mask: the loss in double and the gradient, over [rows][width]. */
        uint8_t *mask = malloc((size_t)rows);
        ck_assert_ptr_nonnull(mask);
        for (int64_t i = 0; i < rows; i++)
            mask[i] = rng_uniform(&r) < 0.8;
        double loss_ref = ref_mse_loss(x, dy, mask, rows, width, 0.25f, y_ref);
        double loss_opt = opt_mse_loss(x, dy, mask, rows, width, 0.25f, y_opt);
        double unmasked_ref = ref_mse_loss(x, dy, NULL, rows, width, 1.0f, dx_ref);
        double unmasked_opt = opt_mse_loss(x, dy, NULL, rows, width, 1.0f, dx_opt);
        differing += differing_values(y_ref, y_opt, rows * width) + differing_values(dx_ref, dx_opt, rows * width) +
                     (memcmp(&loss_ref, &loss_opt, sizeof loss_ref) != 0) +
                     (memcmp(&unmasked_ref, &unmasked_opt, sizeof unmasked_ref) != 0);
        values += 2 * rows * width + 2;
        printf("elementwise on %lld values: MSE loss ref %.17g opt %.17g (masked), |difference| %.3g\n",
               (long long)count, loss_ref, loss_opt, fabs(loss_ref - loss_opt));
        free(mask);
        float *all[] = {x, dy, y_ref, y_opt, dx_ref, dx_opt, bias, db_ref, db_opt};
        for (size_t i = 0; i < sizeof all / sizeof *all; i++)
            free(all[i]);
    }
    printf("sigmoid, tanh, relu (+ backward), add_bias (+ backward), MSE loss: %lld of %lld values differ in bits\n",
           (long long)differing, (long long)values);
    ck_assert_int_eq(differing, 0);

    /* Adam: ten steps on a small and a large parameter (threads split the large one), each step
     * from fresh random gradients, on two copies of the same state. */
    tf_error err;
    parameter_list lists[2];
    adam optimizers[2];
    static const int64_t shapes[2][2] = {{32, 33}, {300, 100}};
    memset(lists, 0, sizeof lists);
    for (int k = 0; k < 2; k++) {
        for (int q = 0; q < 2; q++)
            ck_assert(parameters_add(&lists[k], q ? "large" : "small", 2, shapes[q], &err) >= 0);
        ck_assert(adam_create(&optimizers[k], &lists[k], 0.01, &err) == TF_OK);
    }
    for (int q = 0; q < 2; q++) {
        float *start = random_units(lists[0].items[q].value.size, &r);
        for (int k = 0; k < 2; k++)
            memcpy(lists[k].items[q].value.data, start, (size_t)lists[0].items[q].value.size * sizeof(float));
        free(start);
    }
    for (int step = 0; step < 10; step++) {
        for (int q = 0; q < 2; q++) {
            float *g = random_units(lists[0].items[q].grad.size, &r);
            for (int k = 0; k < 2; k++)
                memcpy(lists[k].items[q].grad.data, g, (size_t)lists[0].items[q].grad.size * sizeof(float));
            free(g);
        }
        ref_adam_step(&optimizers[0], &lists[0]);
        opt_adam_step(&optimizers[1], &lists[1]);
    }
    int64_t adam_differing = differing_training_state(&lists[0], &optimizers[0], &lists[1], &optimizers[1]);
    printf("Adam, 10 steps on %lld parameters: %lld values (parameters and moments) differ in bits, max relative "
           "error %.3g\n",
           (long long)parameters_size(&lists[0]), (long long)adam_differing,
           parameters_relative_error(&lists[1], &lists[0]));
    ck_assert_int_eq(adam_differing, 0);
    for (int k = 0; k < 2; k++) {
        adam_free(&optimizers[k]);
        parameters_free(&lists[k]);
    }
}
END_TEST

/* ---- whole models on the opt kernels ----------------------------------------------------- */

START_TEST(models_on_opt_kernels)
{
    dataset generated;
    /* Natively the real graph; under memcheck, whose cost grows with the work and which looks for
     * paths, not sizes, a small generated graph with two snapshots (the recurrence carried once). */
    const char *data = test_data("twitter_tennis", "powerlaw:nodes=60,edges=300,snapshots=2,seed=5");
    const int real = strcmp(data, "twitter_tennis") == 0;
    const snapshot_seq *seq = real ? shared_snapshots(data) : load_snapshots(data, &generated);
    const int64_t snapshots = test_repeats(6, 2);
    for (int kind = 0; kind < MODEL_COUNT; kind++) {
        double output, gradient;
        compare_model_on_kernels(seq, (model_kind)kind, &opt_kernels, test_repeats(20, 0), snapshots, &output,
                                 &gradient);
        printf("%-10s on %s, %lld snapshots, opt vs ref kernels: outputs %.2e, gradients %.2e\n",
               model_kind_name((model_kind)kind), data, (long long)snapshots, output, gradient);
        ck_assert(output <= TOLERANCE && gradient <= TOLERANCE);
    }
    if (!real)
        dataset_free(&generated);
}
END_TEST

int main(void)
{
    opt_set_threads(2);
    Suite *suite = suite_create("kernels");
    TCase *cases = tcase_create("kernels");
    tcase_set_timeout(cases, 300);
    tcase_add_test(cases, propagation_is_bitwise_equal);
    tcase_add_test(cases, walk_transpose_is_the_scatter);
    tcase_add_test(cases, graph_attention_is_bitwise_equal);
    tcase_add_test(cases, dense_products_within_tolerance);
    tcase_add_test(cases, recurrent_cells);
    tcase_add_test(cases, event_kernels_within_tolerance);
    tcase_add_test(cases, elementwise_loss_adam_bitwise);
    tcase_add_test(cases, models_on_opt_kernels);
    suite_add_tcase(suite, cases);
    /* A case of its own, so that CK_RUN_CASE=by_hand runs the hand example alone (chapter 08). */
    TCase *by_hand = tcase_create("by_hand");
    tcase_add_test(by_hand, summation_order_by_hand);
    suite_add_tcase(suite, by_hand);
    const int status = run_suite(suite);
    shared_snapshots_free();
    return status;
}
