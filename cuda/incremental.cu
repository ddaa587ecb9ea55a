/* The CUDA twin of incremental aggregation (ReInc): full recompute and the delta kernel.
 * Ref twin: ref_aggregate() and snapshot_delta (ref/incremental.c); the same math as the CPU
 * twin opt/incremental.c (opt_incremental_reset(), apply_linear(), apply_extreme()). What
 * changes and why it is still equal is in cuda/incremental.h; in short: the loops are the
 * CPU twin's, one GPU thread per output cell (a warp per row for max and min); double
 * multiplies and adds go through __dmul_rn / __dadd_rn / __dsub_rn so nvcc cannot contract
 * them into an FMA, which keeps every value the CPU twin's rounding for rounding; linear
 * aggregators are fp-equal to the reference (1e-4 on a GPU), max and min bitwise. */
#include "cuda/incremental.h"

#include <cuda_runtime.h>
#include <string.h>

#include "cuda/check.h"

static const int threads_per_block = 256;
static const int warp_size = 32;
static const int warps_per_block = threads_per_block / warp_size;

static unsigned blocks_for(int64_t threads)
{
    return (unsigned)((threads + threads_per_block - 1) / threads_per_block);
}

static int is_extreme(aggregator kind) { return kind == AGGREGATOR_MAX || kind == AGGREGATOR_MIN; }

/* ---- device code ------------------------------------------------------------------------- */

/* The max/min message w x, exactly as ref/incremental.c forms it: one float rounding, -0 made
 * +0 so that which of two equal messages wins never changes the bits of the result. */
__device__ static float message(float weight, float x)
{
    float m = __fmul_rn(weight, x);
    return m == 0.0f ? 0.0f : m;
}

/* Cell (v, c) of max (sign 1) or min (sign -1) from scratch, with its winner: the first best
 * message in CSR order, 0 and winner -1 without in-edges (the reference's extreme_row()).
 *   row_ptr [num_nodes + 1], col [edges], weight [edges]   the in-edges, CSR by destination
 *   x [num_nodes][width]                                   the sources' features
 *   value, winner [num_nodes][width]                       cell (v, c) written */
__device__ static void extreme_cell(const int64_t *row_ptr, const int32_t *col, const float *weight, const float *x,
                                    int64_t width, int64_t v, int64_t c, int sign, float *value, int32_t *winner)
{
    float best = 0.0f;
    int32_t best_source = -1;
    for (int64_t e = row_ptr[v]; e < row_ptr[v + 1]; e++) {
        float m = message(weight[e], x[(int64_t)col[e] * width + c]);
        if (best_source < 0 || (sign > 0 ? m > best : m < best)) {
            best = m;
            best_source = col[e];
        }
    }
    value[v * width + c] = best;
    winner[v * width + c] = best_source;
}

/* Full recompute of max or min: one thread per (row, column).
 *   row_ptr [num_nodes + 1], col [edges], weight [edges]   the in-edges, CSR by destination
 *   x [num_nodes][width]; value, winner [num_nodes][width] (overwritten) */
__global__ static void extreme_recompute_kernel(int sign, int64_t num_nodes, int64_t width, const int64_t *row_ptr,
                                                const int32_t *col, const float *weight, const float *x, float *value,
                                                int32_t *winner)
{
    int64_t index = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= num_nodes * width)
        return;
    extreme_cell(row_ptr, col, weight, x, width, index / width, index % width, sign, value, winner);
}

/* Each row's output scale, as opt_incremental_reset() computes it: 1 (sum), 1 / in-edges
 * (mean), 1 / sqrt(d_v) with d_v = the last self loop's weight (else 1) plus the other
 * in-edges' weights, added in CSR order (symmetric). One thread per row.
 *   row_ptr [num_nodes + 1], col [edges], weight [edges]   the in-edges, CSR by destination
 *   scale [num_nodes]                                      (overwritten) */
__global__ static void scale_kernel(int kind, int64_t num_nodes, const int64_t *row_ptr, const int32_t *col,
                                    const float *weight, double *scale)
{
    int64_t v = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= num_nodes)
        return;
    const int64_t begin = row_ptr[v], end = row_ptr[v + 1];
    if (kind == AGGREGATOR_SUM) {
        scale[v] = 1.0;
    } else if (kind == AGGREGATOR_MEAN) {
        scale[v] = end > begin ? __ddiv_rn(1.0, (double)(end - begin)) : 0.0;
    } else {
        double degree = 1.0;
        for (int64_t e = begin; e < end; e++)
            if (col[e] == v)
                degree = weight[e];
        for (int64_t e = begin; e < end; e++)
            if (col[e] != v)
                degree = __dadd_rn(degree, (double)weight[e]);
        scale[v] = degree > 0 ? __ddiv_rn(1.0, __dsqrt_rn(degree)) : 0.0;
    }
}

/* Full recompute of sum, mean or symmetric: one thread per (row, column) accumulates the
 * row's terms coefficient x_u in double in CSR order (the symmetric self loop last), then
 * writes value = (float)(sum x scale). Needs scale_kernel's scales (symmetric: of the sources).
 *   row_ptr [num_nodes + 1], col [edges], weight [edges]   the in-edges, CSR by destination
 *   x [num_nodes][width]; scale [num_nodes]
 *   accumulator [num_nodes][width] (double), value [num_nodes][width]   (overwritten) */
__global__ static void linear_recompute_kernel(int symmetric, int64_t num_nodes, int64_t width,
                                               const int64_t *row_ptr, const int32_t *col, const float *weight,
                                               const float *x, const double *scale, double *accumulator, float *value)
{
    int64_t index = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= num_nodes * width)
        return;
    const int64_t v = index / width, c = index % width;
    double sum = 0.0, loop = 1.0;
    for (int64_t e = row_ptr[v]; e < row_ptr[v + 1]; e++) {
        const int32_t u = col[e];
        if (symmetric && u == v) {
            loop = weight[e]; /* the last loop edge is the self loop, as in the reference */
            continue;
        }
        double coefficient = symmetric ? __dmul_rn((double)weight[e], scale[u]) : (double)weight[e];
        sum = __dadd_rn(sum, __dmul_rn(coefficient, (double)x[(int64_t)u * width + c]));
    }
    if (symmetric)
        sum = __dadd_rn(sum, __dmul_rn(__dmul_rn(loop, scale[v]), (double)x[index]));
    accumulator[index] = sum;
    value[index] = __double2float_rn(__dmul_rn(sum, scale[v]));
}

/* The delta for sum, mean and symmetric (ReInc Eq. 2): one thread per (delta row, column).
 * Delta rows are distinct, so each cell has exactly one writer: no atomics.
 *   rows [num_rows], row_scale [num_rows]        the rows the delta touches, their new scales
 *   minus_offsets [num_rows + 1]; minus_source, minus_coefficient [minus_offsets[num_rows]]
 *                                                the terms G- removes, per row
 *   plus_offsets [num_rows + 1]; plus_source, plus_coefficient [plus_offsets[num_rows]]
 *                                                the terms G+ adds, per row
 *   x_before, x_after [num_nodes][width]         the features before and after the delta
 *   accumulator [num_nodes][width] (double), value [num_nodes][width], scale [num_nodes]
 *                                                the state, updated at the delta rows */
__global__ static void linear_delta_kernel(int64_t num_rows, int64_t width, const int32_t *rows,
                                           const double *row_scale, const int64_t *minus_offsets,
                                           const int32_t *minus_source, const double *minus_coefficient,
                                           const int64_t *plus_offsets, const int32_t *plus_source,
                                           const double *plus_coefficient, const float *x_before,
                                           const float *x_after, double *accumulator, double *scale, float *value)
{
    int64_t index = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= num_rows * width)
        return;
    const int64_t i = index / width, c = index % width, v = rows[i], cell = v * width + c;
    double sum = accumulator[cell];
    for (int64_t k = minus_offsets[i]; k < minus_offsets[i + 1]; k++)
        sum = __dsub_rn(sum, __dmul_rn(minus_coefficient[k], (double)x_before[(int64_t)minus_source[k] * width + c]));
    for (int64_t k = plus_offsets[i]; k < plus_offsets[i + 1]; k++)
        sum = __dadd_rn(sum, __dmul_rn(plus_coefficient[k], (double)x_after[(int64_t)plus_source[k] * width + c]));
    accumulator[cell] = sum;
    value[cell] = __double2float_rn(__dmul_rn(sum, row_scale[i]));
    if (c == 0)
        scale[v] = row_scale[i]; /* the state mirrors the CPU twin's; this kernel reads row_scale */
}

/* The delta for max (sign 1) or min (sign -1): one warp per delta row, lanes over columns.
 * A G- source that is the winner of any column of the row sends the whole row to a recompute
 * from the current graph (as apply_extreme() does); otherwise the G+ messages are compared in.
 *   rows [num_rows]                               the rows the delta touches
 *   minus_offsets [num_rows + 1]; minus_source [minus_offsets[num_rows]]
 *   plus_offsets [num_rows + 1]; plus_source, plus_coefficient [plus_offsets[num_rows]]
 *   row_ptr [num_nodes + 1], col [edges], weight [edges]   the current graph's in-edges
 *   x_after [num_nodes][width]; value, winner [num_nodes][width]   updated at the delta rows
 *   rows_recomputed [1]                           counts the rows sent to a recompute */
__global__ static void extreme_delta_kernel(int sign, int64_t num_rows, int64_t width, const int32_t *rows,
                                            const int64_t *minus_offsets, const int32_t *minus_source,
                                            const int64_t *plus_offsets, const int32_t *plus_source,
                                            const double *plus_coefficient, const int64_t *row_ptr,
                                            const int32_t *col, const float *weight, const float *x_after,
                                            float *value, int32_t *winner, unsigned long long *rows_recomputed)
{
    const int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / warp_size;
    const int lane = (int)(threadIdx.x % warp_size);
    if (i >= num_rows)
        return; /* i is the same for the whole warp: it leaves together */
    const int64_t v = rows[i];
    float *row_value = value + v * width;
    int32_t *row_winner = winner + v * width;
    int lost_winner = 0;
    for (int64_t k = minus_offsets[i]; k < minus_offsets[i + 1] && !lost_winner; k++)
        for (int64_t c = lane; c < width; c += warp_size)
            if (row_winner[c] == minus_source[k]) {
                lost_winner = 1;
                break;
            }
    if (__any_sync(0xffffffffu, lost_winner)) {
        for (int64_t c = lane; c < width; c += warp_size)
            extreme_cell(row_ptr, col, weight, x_after, width, v, c, sign, value, winner);
        if (lane == 0)
            atomicAdd(rows_recomputed, 1ULL); /* a statistic, not data */
        return;
    }
    for (int64_t k = plus_offsets[i]; k < plus_offsets[i + 1]; k++) {
        const int32_t u = plus_source[k];
        const float w = __double2float_rn(plus_coefficient[k]); /* the edge weight, exactly */
        for (int64_t c = lane; c < width; c += warp_size) {
            float m = message(w, x_after[(int64_t)u * width + c]);
            if (row_winner[c] < 0 || (sign > 0 ? m > row_value[c] : m < row_value[c])) {
                row_value[c] = m;
                row_winner[c] = u;
            }
        }
    }
}

/* ---- host side ---------------------------------------------------------------------------- */

/* Replace *buffer by a device buffer of `count` elements of `size` bytes (content not kept). */
static int regrow(cuda_context *context, void **buffer, size_t count, size_t size, tf_error *err)
{
    cuda_free(context, *buffer);
    *buffer = cuda_alloc(context, count * size, err);
    return *buffer ? TF_OK : TF_ERR_SYSTEM;
}

/* Room for `needed` elements plus a quarter, so a growing sequence reallocates rarely. */
static size_t with_slack(size_t needed) { return needed + needed / 4 + 16; }

/* cuda_upload() that accepts an empty copy. */
static int upload(cuda_context *context, void *device, const void *host, size_t bytes, tf_error *err)
{
    return bytes ? cuda_upload(context, device, host, bytes, err) : TF_OK;
}

extern "C" int cuda_incremental_create(cuda_incremental *a, cuda_context *context, aggregator kind, int64_t num_nodes,
                                       int64_t width, tf_error *err)
{
    memset(a, 0, sizeof *a);
    if ((int)kind < 0 || (int)kind >= (int)AGGREGATOR_COUNT || num_nodes < 0 || num_nodes > INT32_MAX || width < 0)
        return tf_error_set(err, TF_ERR_INPUT,
                            "cuda_incremental_create: bad shape (%lld rows, %lld columns) or aggregator",
                            (long long)num_nodes, (long long)width);
    /* Chebyshev's scales are out-degrees, sums scattered across rows: on the GPU they would need
     * atomic double adds, whose order (and so whose bits) varies from run to run. */
    if (kind == AGGREGATOR_CHEBYSHEV)
        return tf_error_set(err, TF_ERR_INPUT, "cuda_incremental_create: no CUDA twin of the chebyshev aggregator "
                                               "(use opt/incremental.h's)");
    a->context = context;
    a->kind = kind;
    a->num_nodes = num_nodes;
    a->width = width;
    const size_t cells = (size_t)(num_nodes * width);
    int ok = (a->d_value = (float *)cuda_alloc(context, cells * sizeof(float), err)) &&
             (a->d_features[0] = (float *)cuda_alloc(context, cells * sizeof(float), err)) &&
             (a->d_row_ptr = (int64_t *)cuda_alloc(context, (size_t)(num_nodes + 1) * sizeof(int64_t), err)) &&
             (a->d_rows_recomputed = (unsigned long long *)cuda_alloc(context, sizeof(unsigned long long), err));
    if (ok && is_extreme(kind))
        ok = (a->d_winner = (int32_t *)cuda_alloc(context, cells * sizeof(int32_t), err)) != NULL;
    else if (ok)
        ok = (a->d_accumulator = (double *)cuda_alloc(context, cells * sizeof(double), err)) &&
             (a->d_scale = (double *)cuda_alloc(context, (size_t)num_nodes * sizeof(double), err));
    if (!ok) {
        cuda_incremental_free(a);
        return TF_ERR_SYSTEM;
    }
    cudaStream_t stream = (cudaStream_t)context->stream;
    int status = cuda_check(cudaMemsetAsync(a->d_rows_recomputed, 0, sizeof(unsigned long long), stream), __FILE__,
                            __LINE__, err);
    if (status == TF_OK)
        status = cuda_check(cudaMemsetAsync(a->d_value, 0, cells * sizeof(float), stream), __FILE__, __LINE__, err);
    if (status == TF_OK)
        status = cuda_check(cudaStreamSynchronize(stream), __FILE__, __LINE__, err);
    if (status != TF_OK)
        cuda_incremental_free(a);
    return status;
}

extern "C" void cuda_incremental_free(cuda_incremental *a)
{
    cuda_context *context = a->context;
    if (context) {
        void *buffers[] = {a->d_value,          a->d_accumulator,       a->d_scale,          a->d_winner,
                           a->d_rows_recomputed, a->d_row_ptr,           a->d_col,            a->d_weight,
                           a->d_features[0],     a->d_features[1],       a->d_rows,           a->d_row_scale,
                           a->d_minus_offsets,   a->d_plus_offsets,      a->d_minus_source,   a->d_minus_coefficient,
                           a->d_plus_source,     a->d_plus_coefficient};
        cuda_free_each(context, buffers, sizeof buffers / sizeof buffers[0]);
    }
    memset(a, 0, sizeof *a);
}

/* 0, or TF_ERR_INPUT naming `what` when `s` is not num_nodes x width. */
static int check_shape(const cuda_incremental *a, const snapshot *s, const char *what, tf_error *err)
{
    if (s->graph.num_nodes != a->num_nodes || s->features.size != a->num_nodes * a->width)
        return tf_error_set(err, TF_ERR_INPUT,
                            "cuda incremental %s: snapshot of %lld vertices and %lld feature values, "
                            "engine of %lld x %lld",
                            what, (long long)s->graph.num_nodes, (long long)s->features.size, (long long)a->num_nodes,
                            (long long)a->width);
    return TF_OK;
}

/* Copy graph g to the device graph buffers, growing the edge arrays as needed. */
static int upload_graph(cuda_incremental *a, const csr *g, tf_error *err)
{
    const size_t edges = (size_t)g->num_edges;
    if (edges > a->edge_capacity) {
        const size_t capacity = with_slack(edges);
        a->edge_capacity = 0; /* a failure below leaves both arrays to be regrown next time */
        if (regrow(a->context, (void **)&a->d_col, capacity, sizeof(int32_t), err) != TF_OK ||
            regrow(a->context, (void **)&a->d_weight, capacity, sizeof(float), err) != TF_OK)
            return TF_ERR_SYSTEM;
        a->edge_capacity = capacity;
    }
    if (upload(a->context, a->d_row_ptr, g->row_ptr, (size_t)(a->num_nodes + 1) * sizeof(int64_t), err) != TF_OK ||
        upload(a->context, a->d_col, g->col, edges * sizeof(int32_t), err) != TF_OK ||
        upload(a->context, a->d_weight, g->weight, edges * sizeof(float), err) != TF_OK)
        return TF_ERR_SYSTEM;
    a->num_edges = g->num_edges;
    return TF_OK;
}

static size_t feature_bytes(const cuda_incremental *a) { return (size_t)(a->num_nodes * a->width) * sizeof(float); }

extern "C" int cuda_incremental_load(cuda_incremental *a, const snapshot *s, tf_error *err)
{
    if (check_shape(a, s, "load", err) != TF_OK)
        return TF_ERR_INPUT;
    a->staged_host = NULL; /* whatever was staged is dropped */
    a->held_host = NULL;
    a->graph_held = 0;
    if (upload_graph(a, &s->graph, err) != TF_OK ||
        upload(a->context, a->d_features[a->held], s->features.data, feature_bytes(a), err) != TF_OK)
        return TF_ERR_SYSTEM;
    a->held_host = s->features.data;
    a->graph_held = 1;
    return TF_OK;
}

extern "C" int cuda_incremental_recompute(cuda_incremental *a, tf_error *err)
{
    if (!a->held_host || !a->graph_held)
        return tf_error_set(err, TF_ERR_INPUT, "cuda incremental recompute: the device does not hold a loaded snapshot "
                                               "(call cuda_incremental_load or cuda_incremental_reset)");
    cudaStream_t stream = (cudaStream_t)a->context->stream;
    const int64_t n = a->num_nodes, cells = n * a->width;
    const float *x = a->d_features[a->held];
    if (is_extreme(a->kind)) {
        if (cells > 0)
            extreme_recompute_kernel<<<blocks_for(cells), threads_per_block, 0, stream>>>(
                a->kind == AGGREGATOR_MAX ? 1 : -1, n, a->width, a->d_row_ptr, a->d_col, a->d_weight, x, a->d_value,
                a->d_winner);
    } else {
        if (n > 0)
            scale_kernel<<<blocks_for(n), threads_per_block, 0, stream>>>(a->kind, n, a->d_row_ptr, a->d_col,
                                                                          a->d_weight, a->d_scale);
        if (cells > 0)
            linear_recompute_kernel<<<blocks_for(cells), threads_per_block, 0, stream>>>(
                a->kind == AGGREGATOR_SYMMETRIC, n, a->width, a->d_row_ptr, a->d_col, a->d_weight, x, a->d_scale,
                a->d_accumulator, a->d_value);
    }
    CUDA_CHECK(cudaGetLastError(), err);
    CUDA_CHECK(cudaStreamSynchronize(stream), err);
    a->stats.full++;
    return TF_OK;
}

extern "C" int cuda_incremental_reset(cuda_incremental *a, const snapshot *s, tf_error *err)
{
    int status = cuda_incremental_load(a, s, err);
    return status == TF_OK ? cuda_incremental_recompute(a, err) : status;
}

/* Copy the delta's arrays to the device, growing the staging buffers as needed. */
static int upload_delta(cuda_incremental *a, const snapshot_delta *d, tf_error *err)
{
    cuda_context *context = a->context;
    const size_t rows = (size_t)d->num_rows;
    a->delta_rows = 0;
    a->delta_entries = 0;
    if (rows == 0)
        return TF_OK;
    const size_t minus = (size_t)d->minus_offsets[rows], plus = (size_t)d->plus_offsets[rows];
    if (rows > a->row_capacity) {
        const size_t capacity = with_slack(rows);
        a->row_capacity = 0;
        if (regrow(context, (void **)&a->d_rows, capacity, sizeof(int32_t), err) != TF_OK ||
            regrow(context, (void **)&a->d_row_scale, capacity, sizeof(double), err) != TF_OK ||
            regrow(context, (void **)&a->d_minus_offsets, capacity + 1, sizeof(int64_t), err) != TF_OK ||
            regrow(context, (void **)&a->d_plus_offsets, capacity + 1, sizeof(int64_t), err) != TF_OK)
            return TF_ERR_SYSTEM;
        a->row_capacity = capacity;
    }
    if (minus > a->minus_capacity) {
        const size_t capacity = with_slack(minus);
        a->minus_capacity = 0;
        if (regrow(context, (void **)&a->d_minus_source, capacity, sizeof(int32_t), err) != TF_OK ||
            regrow(context, (void **)&a->d_minus_coefficient, capacity, sizeof(double), err) != TF_OK)
            return TF_ERR_SYSTEM;
        a->minus_capacity = capacity;
    }
    if (plus > a->plus_capacity) {
        const size_t capacity = with_slack(plus);
        a->plus_capacity = 0;
        if (regrow(context, (void **)&a->d_plus_source, capacity, sizeof(int32_t), err) != TF_OK ||
            regrow(context, (void **)&a->d_plus_coefficient, capacity, sizeof(double), err) != TF_OK)
            return TF_ERR_SYSTEM;
        a->plus_capacity = capacity;
    }
    if (upload(context, a->d_rows, d->rows, rows * sizeof(int32_t), err) != TF_OK ||
        upload(context, a->d_row_scale, d->row_scale, rows * sizeof(double), err) != TF_OK ||
        upload(context, a->d_minus_offsets, d->minus_offsets, (rows + 1) * sizeof(int64_t), err) != TF_OK ||
        upload(context, a->d_plus_offsets, d->plus_offsets, (rows + 1) * sizeof(int64_t), err) != TF_OK ||
        upload(context, a->d_minus_source, d->minus_source, minus * sizeof(int32_t), err) != TF_OK ||
        upload(context, a->d_minus_coefficient, d->minus_coefficient, minus * sizeof(double), err) != TF_OK ||
        upload(context, a->d_plus_source, d->plus_source, plus * sizeof(int32_t), err) != TF_OK ||
        upload(context, a->d_plus_coefficient, d->plus_coefficient, plus * sizeof(double), err) != TF_OK)
        return TF_ERR_SYSTEM;
    a->delta_rows = d->num_rows;
    a->delta_entries = (int64_t)(minus + plus);
    return TF_OK;
}

extern "C" int cuda_incremental_stage(cuda_incremental *a, const snapshot *previous, const snapshot *current,
                                      const snapshot_delta *delta, tf_error *err)
{
    if (check_shape(a, previous, "stage (previous)", err) != TF_OK ||
        check_shape(a, current, "stage (current)", err) != TF_OK)
        return TF_ERR_INPUT;
    if (delta->kind != a->kind)
        return tf_error_set(err, TF_ERR_INPUT, "cuda incremental stage: a delta for %s given to a %s engine",
                            aggregator_name(delta->kind), aggregator_name(a->kind));
    if (!a->held_host)
        return tf_error_set(err, TF_ERR_INPUT,
                            "cuda incremental stage: no snapshot held (call cuda_incremental_reset first)");
    a->staged_host = NULL;
    cuda_context *context = a->context;
    const int staged = 1 - a->held;
    if (!a->d_features[staged] &&
        !(a->d_features[staged] = (float *)cuda_alloc(context, feature_bytes(a), err)))
        return TF_ERR_SYSTEM;
    if (is_extreme(a->kind)) {
        /* max and min read only the current snapshot, graph included (rows that lost a winner). */
        a->graph_held = 0;
        if (upload_graph(a, &current->graph, err) != TF_OK)
            return TF_ERR_SYSTEM;
    } else if (previous->features.data != a->held_host) {
        /* G- is taken with previous's features: make sure those are the ones on the device
         * (a failed copy leaves no snapshot held, so only a reset can follow). */
        a->held_host = NULL;
        if (upload(context, a->d_features[a->held], previous->features.data, feature_bytes(a), err) != TF_OK)
            return TF_ERR_SYSTEM;
        a->held_host = previous->features.data;
    }
    if (upload(context, a->d_features[staged], current->features.data, feature_bytes(a), err) != TF_OK ||
        upload_delta(a, delta, err) != TF_OK)
        return TF_ERR_SYSTEM;
    a->staged_host = current->features.data;
    return TF_OK;
}

extern "C" int cuda_incremental_apply(cuda_incremental *a, tf_error *err)
{
    if (!a->staged_host)
        return tf_error_set(err, TF_ERR_INPUT, "cuda incremental apply: no delta staged (call cuda_incremental_stage)");
    cudaStream_t stream = (cudaStream_t)a->context->stream;
    const int staged = 1 - a->held;
    const int64_t rows = a->delta_rows;
    if (is_extreme(a->kind)) {
        if (rows > 0 && a->width > 0)
            extreme_delta_kernel<<<(unsigned)((rows + warps_per_block - 1) / warps_per_block), threads_per_block, 0,
                                   stream>>>(a->kind == AGGREGATOR_MAX ? 1 : -1, rows, a->width, a->d_rows,
                                             a->d_minus_offsets, a->d_minus_source, a->d_plus_offsets,
                                             a->d_plus_source, a->d_plus_coefficient, a->d_row_ptr, a->d_col,
                                             a->d_weight, a->d_features[staged], a->d_value, a->d_winner,
                                             a->d_rows_recomputed);
    } else if (rows * a->width > 0) {
        linear_delta_kernel<<<blocks_for(rows * a->width), threads_per_block, 0, stream>>>(
            rows, a->width, a->d_rows, a->d_row_scale, a->d_minus_offsets, a->d_minus_source, a->d_minus_coefficient,
            a->d_plus_offsets, a->d_plus_source, a->d_plus_coefficient, a->d_features[a->held], a->d_features[staged],
            a->d_accumulator, a->d_scale, a->d_value);
    }
    CUDA_CHECK(cudaGetLastError(), err);
    CUDA_CHECK(cudaStreamSynchronize(stream), err);
    a->held = staged;
    a->held_host = a->staged_host;
    a->staged_host = NULL;
    /* max/min staged the current graph; the linear delta left the last loaded one in place. */
    a->graph_held = is_extreme(a->kind);
    a->stats.incremental++;
    a->stats.entries += a->delta_entries;
    return TF_OK;
}

extern "C" int cuda_incremental_advance(cuda_incremental *a, const snapshot *previous, const snapshot *current,
                                        const snapshot_delta *delta, tf_error *err)
{
    int status = cuda_incremental_stage(a, previous, current, delta, err);
    return status == TF_OK ? cuda_incremental_apply(a, err) : status;
}

extern "C" int cuda_incremental_download(cuda_incremental *a, float *host_value, tf_error *err)
{
    const size_t bytes = feature_bytes(a);
    return bytes ? cuda_download(a->context, host_value, a->d_value, bytes, err) : TF_OK;
}

extern "C" int cuda_incremental_rows_recomputed(cuda_incremental *a, int64_t *rows, tf_error *err)
{
    unsigned long long count = 0;
    if (cuda_download(a->context, &count, a->d_rows_recomputed, sizeof count, err) != TF_OK)
        return TF_ERR_SYSTEM;
    *rows = (int64_t)count;
    return TF_OK;
}

extern "C" int cuda_aggregate(cuda_context *context, const csr *g, const float *x, int64_t width, aggregator kind,
                              float *y, tf_error *err)
{
    cuda_incremental a;
    int status = cuda_incremental_create(&a, context, kind, g->num_nodes, width, err);
    if (status != TF_OK)
        return status;
    /* reset() reads only the graph and the features of its snapshot. */
    snapshot s;
    memset(&s, 0, sizeof s);
    s.graph = *g;
    s.features.data = (float *)x;
    s.features.size = g->num_nodes * width;
    status = cuda_incremental_reset(&a, &s, err);
    if (status == TF_OK)
        status = cuda_incremental_download(&a, y, err);
    cuda_incremental_free(&a);
    return status;
}
