#include "cuda/kernels.h"

#include <string.h>

#include "cuda/layers.h"
#include "cuda/propagate.h"
#include "cuda/recurrent.h"
#include "ref/nn/layers.h"

static cuda_context *bound;     /* the context the table runs on */
static tf_error first_failure;  /* the first failure since the last take_error */

/* 1 if the table may run: bound, and no failure waiting to be reported. */
static int usable(void)
{
    if (!bound && first_failure.code == TF_OK)
        tf_error_set(&first_failure, TF_ERR_SYSTEM, "cuda kernels used before cuda_kernels_bind()");
    return first_failure.code == TF_OK;
}

/* Records a failure (the first one wins); returns 0 so callers can write `if (!ok(...))`. */
static int ok(int status, const tf_error *err)
{
    if (status != TF_OK && first_failure.code == TF_OK)
        first_failure = *err;
    return status == TF_OK;
}

/* Scratch slot `slot` holding a copy of `bytes` host bytes (or uninitialized if host is NULL). */
static void *stage(int slot, const void *host, size_t bytes)
{
    tf_error err;
    void *device = cuda_scratch(bound, slot, bytes ? bytes : 4, &err);
    if (!ok(device ? TF_OK : TF_ERR_SYSTEM, &err))
        return NULL;
    if (host && bytes && !ok(cuda_upload(bound, device, host, bytes, &err), &err))
        return NULL;
    return device;
}

static void fetch(void *host, const void *device, size_t bytes)
{
    tf_error err;
    if (bytes)
        ok(cuda_download(bound, host, device, bytes, &err), &err);
}

#define FLOATS(count) ((size_t)(count) * sizeof(float))

static int take_error(tf_error *err)
{
    if (first_failure.code == TF_OK)
        return TF_OK;
    *err = first_failure;
    tf_error_clear(&first_failure);
    return err->code;
}

void cuda_kernels_bind(cuda_context *context)
{
    bound = context;
    tf_error_clear(&first_failure);
}

/* Host arrays, staged to the device and back: x [n][in], weight [out][in], bias [out] (or NULL),
 * y [n][out]. */
static void linear_forward(const float *x, const float *weight, const float *bias, int64_t n, int64_t in, int64_t out,
                           float *y)
{
    if (!usable())
        return;
    tf_error err;
    float *d_x = (float *)stage(0, x, FLOATS(n * in)), *d_w = (float *)stage(1, weight, FLOATS(out * in));
    float *d_b = bias ? (float *)stage(2, bias, FLOATS(out)) : NULL, *d_y = (float *)stage(3, NULL, FLOATS(n * out));
    if (d_x && d_w && (d_b || !bias) && d_y && ok(cuda_linear_forward(bound, d_x, d_w, d_b, n, in, out, d_y, &err), &err))
        fetch(y, d_y, FLOATS(n * out));
}

/* A product's device launcher: cuda_linear_accumulate() or cuda_matmul_accumulate() (layers.h). */
typedef int (*device_accumulate)(cuda_context *context, const float *d_x, const float *d_weight, int64_t n, int64_t in,
                                 int64_t out, float *d_y, tf_error *err);

/* y += the product on the device. Host arrays: x [n][in], weight [out][in] (linear) or [in][out]
 * (matmul), y [n][out]. */
static void accumulate(device_accumulate product, const float *x, const float *weight, int64_t n, int64_t in,
                       int64_t out, float *y)
{
    if (!usable())
        return;
    tf_error err;
    float *d_x = (float *)stage(0, x, FLOATS(n * in)), *d_w = (float *)stage(1, weight, FLOATS(in * out));
    float *d_y = (float *)stage(3, y, FLOATS(n * out));
    if (d_x && d_w && d_y && ok(product(bound, d_x, d_w, n, in, out, d_y, &err), &err))
        fetch(y, d_y, FLOATS(n * out));
}

/* Host arrays: x [n][in], weight [out][in], y [n][out]. */
static void linear_accumulate(const float *x, const float *weight, int64_t n, int64_t in, int64_t out, float *y)
{
    accumulate(cuda_linear_accumulate, x, weight, n, in, out, y);
}

/* Host arrays: x [n][in], weight [in][out], y [n][out]. */
static void matmul_accumulate(const float *x, const float *weight, int64_t n, int64_t in, int64_t out, float *y)
{
    accumulate(cuda_matmul_accumulate, x, weight, n, in, out, y);
}

/* The device copies a product's backward works on, in scratch slots 0..4: x [n][in], weight and
 * dweight (in * out values, [out][in] or [in][out]), dy [n][out], dx [n][in]; d_dx and d_dweight
 * are NULL where the caller asks for no such gradient. */
typedef struct product_backward_arrays {
    float *d_x, *d_w, *d_dy, *d_dx, *d_dw;
} product_backward_arrays;

static void stage_product_backward(const float *x, const float *weight, const float *dy, int64_t n, int64_t in,
                                   int64_t out, float *dx, float *dweight, product_backward_arrays *d)
{
    d->d_x = (float *)stage(0, x, FLOATS(n * in));
    d->d_w = (float *)stage(1, weight, FLOATS(in * out));
    d->d_dy = (float *)stage(2, dy, FLOATS(n * out));
    d->d_dx = dx ? (float *)stage(3, dx, FLOATS(n * in)) : NULL;
    d->d_dw = dweight ? (float *)stage(4, dweight, FLOATS(in * out)) : NULL;
}

static void fetch_product_backward(const product_backward_arrays *d, int64_t n, int64_t in, int64_t out, float *dx,
                                   float *dweight)
{
    if (dx)
        fetch(dx, d->d_dx, FLOATS(n * in));
    if (dweight)
        fetch(dweight, d->d_dw, FLOATS(in * out));
}

/* Host arrays: x [n][in], weight [out][in], dy [n][out]; dx [n][in], dweight [out][in], dbias [out]
 * (any may be NULL). */
static void linear_backward(const float *x, const float *weight, const float *dy, int64_t n, int64_t in, int64_t out,
                            float *dx, float *dweight, float *dbias)
{
    if (!usable())
        return;
    tf_error err;
    product_backward_arrays d;
    stage_product_backward(x, weight, dy, n, in, out, dx, dweight, &d);
    float *d_db = dbias ? (float *)stage(5, dbias, FLOATS(out)) : NULL;
    if (!usable() ||
        !ok(cuda_linear_backward(bound, d.d_x, d.d_w, d.d_dy, n, in, out, d.d_dx, d.d_dw, d_db, &err), &err))
        return;
    fetch_product_backward(&d, n, in, out, dx, dweight);
    if (dbias)
        fetch(dbias, d_db, FLOATS(out));
}

/* Host arrays: x [n][in], weight [in][out], dy [n][out]; dx [n][in], dweight [in][out] (either may
 * be NULL). */
static void matmul_backward(const float *x, const float *weight, const float *dy, int64_t n, int64_t in, int64_t out,
                            float *dx, float *dweight)
{
    if (!usable())
        return;
    tf_error err;
    product_backward_arrays d;
    stage_product_backward(x, weight, dy, n, in, out, dx, dweight, &d);
    if (!usable() || !ok(cuda_matmul_backward(bound, d.d_x, d.d_w, d.d_dy, n, in, out, d.d_dx, d.d_dw, &err), &err))
        return;
    fetch_product_backward(&d, n, in, out, dx, dweight);
}

/* The operator's arrays in scratch slots 8.. (the inputs use 0..7). */
static int stage_operator(const propagation *p, int transpose, cuda_propagation *out)
{
    const csr *g = p->graph;
    memset(out, 0, sizeof *out);
    out->num_nodes = g->num_nodes;
    out->num_edges = g->num_edges;
    out->d_edge_coefficient = (float *)stage(8, p->edge_coefficient, FLOATS(g->num_edges));
    out->d_self_coefficient = (float *)stage(9, p->self_coefficient, FLOATS(g->num_nodes));
    if (!transpose) {
        out->d_row_ptr = (int64_t *)stage(10, g->row_ptr, (size_t)(g->num_nodes + 1) * sizeof(int64_t));
        out->d_col = (int32_t *)stage(11, g->col, (size_t)g->num_edges * sizeof(int32_t));
    } else {
        if (!p->transpose_offsets) {
            tf_error err;
            ok(tf_error_set(&err, TF_ERR_SYSTEM, "cuda kernels: operator without transpose"), &err);
            return 0;
        }
        out->d_transpose_offsets = (int64_t *)stage(10, p->transpose_offsets, (size_t)(g->num_nodes + 1) * sizeof(int64_t));
        out->d_transpose_edge = (int64_t *)stage(11, p->transpose_edge, (size_t)g->num_edges * sizeof(int64_t));
        out->d_transpose_destination = (int32_t *)stage(12, p->transpose_destination, (size_t)g->num_edges * sizeof(int32_t));
    }
    return usable();
}

/* On the device, forward y = P x (transpose 0) or backward dx += P^T dy (transpose 1, which adds
 * into dx, so dx is staged too). Host arrays: from (x or dy), to (y or dx) [num_nodes][width]. */
static void propagate(const propagation *p, int transpose, const float *from, int64_t width, float *to)
{
    cuda_propagation operator_;
    if (!usable() || !stage_operator(p, transpose, &operator_))
        return;
    tf_error err;
    const int64_t size = p->graph->num_nodes * width;
    float *d_from = (float *)stage(0, from, FLOATS(size));
    float *d_to = (float *)stage(1, transpose ? to : NULL, FLOATS(size));
    int (*launch)(cuda_context *, const cuda_propagation *, const float *, int64_t, float *, tf_error *) =
        transpose ? cuda_propagate_backward : cuda_propagate_forward;
    if (d_from && d_to && ok(launch(bound, &operator_, d_from, width, d_to, &err), &err))
        fetch(to, d_to, FLOATS(size));
}

/* Host arrays: x, y [num_nodes][width]. */
static void propagate_forward(const propagation *p, const float *x, int64_t width, float *y)
{
    propagate(p, 0, x, width, y);
}

/* Host arrays: dy, dx [num_nodes][width]. */
static void propagate_backward(const propagation *p, const float *dy, int64_t width, float *dx)
{
    propagate(p, 1, dy, width, dx);
}

/* The GRU cell's inputs on the device, in scratch slots 0..3: x [n][in], h [n][H],
 * weight_ih [3 H][in], weight_hh [3 H][H]. Returns usable(), as stage_operator() does. */
typedef struct gru_inputs {
    float *d_x, *d_h, *d_wi, *d_wh;
} gru_inputs;

static int stage_gru_inputs(const float *x, const float *h, const float *weight_ih, const float *weight_hh, int64_t n,
                            int64_t in, int64_t H, gru_inputs *d)
{
    d->d_x = (float *)stage(0, x, FLOATS(n * in));
    d->d_h = (float *)stage(1, h, FLOATS(n * H));
    d->d_wi = (float *)stage(2, weight_ih, FLOATS(3 * H * in));
    d->d_wh = (float *)stage(3, weight_hh, FLOATS(3 * H * H));
    return usable();
}

/* Host arrays: x [n][in], h [n][hidden], weight_ih [3 hidden][in], weight_hh [3 hidden][hidden],
 * bias_ih, bias_hh [3 hidden]; h_out [n][hidden], cache [n][4 hidden]. */
static void gru_cell_forward(const float *x, const float *h, const float *weight_ih, const float *weight_hh,
                             const float *bias_ih, const float *bias_hh, int64_t n, int64_t in, int64_t hidden,
                             float *h_out, float *cache)
{
    tf_error err;
    const int64_t H = hidden;
    gru_inputs d;
    if (!usable() || !stage_gru_inputs(x, h, weight_ih, weight_hh, n, in, H, &d))
        return;
    float *d_bi = (float *)stage(4, bias_ih, FLOATS(3 * H)), *d_bh = (float *)stage(5, bias_hh, FLOATS(3 * H));
    float *d_out = (float *)stage(6, NULL, FLOATS(n * H)), *d_cache = (float *)stage(7, NULL, FLOATS(n * 4 * H));
    if (!usable() || !ok(cuda_gru_cell_forward(bound, d.d_x, d.d_h, d.d_wi, d.d_wh, d_bi, d_bh, n, in, H, d_out,
                                               d_cache, &err),
                         &err))
        return;
    fetch(h_out, d_out, FLOATS(n * H));
    fetch(cache, d_cache, FLOATS(n * 4 * H));
}

/* Host arrays: x [n][in], h [n][hidden], weight_ih [3 hidden][in], weight_hh [3 hidden][hidden],
 * cache [n][4 hidden], dh_out [n][hidden]; dx [n][in], dh [n][hidden], dweight_ih [3 hidden][in],
 * dweight_hh [3 hidden][hidden], dbias_ih, dbias_hh [3 hidden]. The host
 * scratch dpreactivation [2 n][3 hidden] is not needed: the device kernel keeps its own. */
static void gru_cell_backward(const float *x, const float *h, const float *weight_ih, const float *weight_hh,
                              const float *cache, const float *dh_out, int64_t n, int64_t in, int64_t hidden,
                              float *dpreactivation, float *dx, float *dh, float *dweight_ih, float *dweight_hh,
                              float *dbias_ih, float *dbias_hh)
{
    (void)dpreactivation;
    tf_error err;
    const int64_t H = hidden;
    gru_inputs d;
    if (!usable() || !stage_gru_inputs(x, h, weight_ih, weight_hh, n, in, H, &d))
        return;
    float *d_cache = (float *)stage(4, cache, FLOATS(n * 4 * H)), *d_dout = (float *)stage(5, dh_out, FLOATS(n * H));
    /* EvolveGCN-O passes one array as both dx and dh: then one device buffer serves both, or
     * the second copy back would overwrite the first's additions. */
    float *d_dx = dx ? (float *)stage(6, dx, FLOATS(n * in)) : NULL;
    float *d_dh = dh == dx && dh ? d_dx : dh ? (float *)stage(7, dh, FLOATS(n * H)) : NULL;
    float *d_dwi = dweight_ih ? (float *)stage(12, dweight_ih, FLOATS(3 * H * in)) : NULL;
    float *d_dwh = dweight_hh ? (float *)stage(13, dweight_hh, FLOATS(3 * H * H)) : NULL;
    float *d_dbi = dbias_ih ? (float *)stage(14, dbias_ih, FLOATS(3 * H)) : NULL;
    float *d_dbh = dbias_hh ? (float *)stage(15, dbias_hh, FLOATS(3 * H)) : NULL;
    if (!usable() || !ok(cuda_gru_cell_backward(bound, d.d_x, d.d_h, d.d_wi, d.d_wh, d_cache, d_dout, n, in, H, d_dx,
                                                d_dh, d_dwi, d_dwh, d_dbi, d_dbh, &err),
                         &err))
        return;
    if (dx)
        fetch(dx, d_dx, FLOATS(n * in));
    if (dh && dh != dx)
        fetch(dh, d_dh, FLOATS(n * H));
    if (dweight_ih)
        fetch(dweight_ih, d_dwi, FLOATS(3 * H * in));
    if (dweight_hh)
        fetch(dweight_hh, d_dwh, FLOATS(3 * H * H));
    if (dbias_ih)
        fetch(dbias_ih, d_dbi, FLOATS(3 * H));
    if (dbias_hh)
        fetch(dbias_hh, d_dbh, FLOATS(3 * H));
}

/* Host arrays: preactivation [n][4 hidden], c [n][hidden]; c_out, h_out [n][hidden],
 * gates [n][4 hidden]. */
static void lstm_pointwise_forward(const float *preactivation, const float *c, int64_t n, int64_t hidden, float *c_out,
                                   float *h_out, float *gates)
{
    if (!usable())
        return;
    tf_error err;
    const int64_t nh = n * hidden;
    float *d_a = (float *)stage(0, preactivation, FLOATS(4 * nh)), *d_c = (float *)stage(1, c, FLOATS(nh));
    float *d_c_out = (float *)stage(2, NULL, FLOATS(nh)), *d_h_out = (float *)stage(3, NULL, FLOATS(nh));
    float *d_gates = (float *)stage(4, NULL, FLOATS(4 * nh));
    if (!usable() ||
        !ok(cuda_lstm_pointwise_forward(bound, d_a, d_c, n, hidden, d_c_out, d_h_out, d_gates, &err), &err))
        return;
    fetch(c_out, d_c_out, FLOATS(nh));
    fetch(h_out, d_h_out, FLOATS(nh));
    fetch(gates, d_gates, FLOATS(4 * nh));
}

/* Host arrays: gates [n][4 hidden], c, c_out, dh_out, dc_out [n][hidden];
 * dpreactivation [n][4 hidden], dc [n][hidden]. */
static void lstm_pointwise_backward(const float *gates, const float *c, const float *c_out, const float *dh_out,
                                    const float *dc_out, int64_t n, int64_t hidden, float *dpreactivation, float *dc)
{
    if (!usable())
        return;
    tf_error err;
    const int64_t nh = n * hidden;
    float *d_gates = (float *)stage(0, gates, FLOATS(4 * nh)), *d_c = (float *)stage(1, c, FLOATS(nh));
    float *d_c_out = (float *)stage(2, c_out, FLOATS(nh)), *d_dh = (float *)stage(3, dh_out, FLOATS(nh));
    float *d_dc_out = dc_out ? (float *)stage(4, dc_out, FLOATS(nh)) : NULL;
    float *d_dpre = (float *)stage(5, NULL, FLOATS(4 * nh)), *d_dc = dc ? (float *)stage(6, dc, FLOATS(nh)) : NULL;
    if (!usable() || !ok(cuda_lstm_pointwise_backward(bound, d_gates, d_c, d_c_out, d_dh, d_dc_out, n, hidden, d_dpre,
                                                      d_dc, &err),
                         &err))
        return;
    fetch(dpreactivation, d_dpre, FLOATS(4 * nh));
    if (dc)
        fetch(dc, d_dc, FLOATS(nh));
}

const kernels cuda_kernels = {
    "cuda",
    propagation_add_transpose,
    linear_forward,
    linear_accumulate,
    linear_backward,
    matmul_accumulate,
    matmul_backward,
    propagate_forward,
    propagate_backward,
    gru_cell_forward,
    gru_cell_backward,
    lstm_pointwise_forward,
    lstm_pointwise_backward,
    take_error,
    /* The elementwise work, the loss, Adam and copies stay on the host (the models' tensors live
     * there, and staging each would cost more than it computes): the reference's functions; so
     * does the event models' double-sum backward (they do not run on a device). */
    REF_KERNELS_HOST_ENTRIES,
};
