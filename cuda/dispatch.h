/**
 * @file cuda/dispatch.h
 * Twins: ref_dispatch_plan() and ref_dispatch_expand() (ref/dispatch.h).
 * @brief The CUDA twin of Algorithm 2 (opt/dispatch.h) as a sort instead of a table, and
 *        the row kernels of the dispatch: gather rows by index, expand by Psi, scatter back.
 *
 * How it differs from opt_dispatch_plan(), and why it is still equal:
 *  - The plan: radix sort the (vertex, entry) pairs by vertex (stable, CUB
 *    DeviceRadixSort::SortPairs: a vertex's entries stay in entry order), mark the heads where the
 *    vertex changes, an inclusive scan of the heads numbers the segments: segment s is V_u[s],
 *    Psi[entry] = its segment (a scatter), and Phi[s] = the entry of largest write key in the
 *    segment (dispatch_write_key(); one thread walks each segment). V_u comes out in **increasing
 *    vertex order**, not in order of first appearance: the same set, the same Psi up to that
 *    renumbering, the same writers. verify/test_dispatch_cuda.c sorts the CPU plan's V_u the same
 *    way (renumbering Psi and permuting Phi) and compares **bitwise**.
 *  - The row kernels copy rows as 32-bit words (a row's bytes are a multiple of 4): bitwise
 *    copies, like ref_dispatch_expand().
 * Not wired into training: the event models run on the CPU (chapter 04 explains why the
 * memory's bits, not the model's speed, are the point there).
 *
 * Device buffers: inputs and outputs are the caller's (cuda_alloc()); the sort's temporary
 * storage and intermediate arrays are the context's scratch slots 0..5 (cuda_scratch()), reused
 * by the next call.
 */
#ifndef TWOFOLD_CUDA_DISPATCH_H
#define TWOFOLD_CUDA_DISPATCH_H

#include <stddef.h>
#include <stdint.h>

#include "cuda/context.h"
#include "ref/core/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The plan of one batch's entries on the device.
 * @param context     the GPU
 * @param d_entries   [count] V_o, vertex ids >= 0
 * @param count       N (>= 0)
 * @param first       the batch's first event
 * @param batch_size  B (entries 0 .. 2B-1 are the positive roots)
 * @param d_vertex    [count] out: V_u in increasing vertex order (first *unique used)
 * @param d_position  [count] out: Psi, V_o[k] = V_u[position[k]]
 * @param d_writer    [count] out: Phi, the entry of largest write key per V_u row, or -1
 * @param unique      out: U
 * @param err         out: a CUDA error
 * @return 0, or TF_ERR_SYSTEM
 */
int cuda_dispatch_plan(cuda_context *context, const int32_t *d_entries, int64_t count, int64_t first,
                       int64_t batch_size, int32_t *d_vertex, int32_t *d_position, int64_t *d_writer, int64_t *unique,
                       tf_error *err);

/** out[i] = table[rows[i]] for i < count: d_table [*][row_bytes], d_rows [count], d_out [count][row_bytes]. */
int cuda_dispatch_gather_rows(cuda_context *context, const unsigned char *d_table, const int32_t *d_rows,
                              int64_t count, size_t row_bytes, unsigned char *d_out, tf_error *err);

/** Restore: d_rows_o [count][row_bytes] row k = d_rows_u row d_position[k] (the twin of ref_dispatch_expand()). */
int cuda_dispatch_expand(cuda_context *context, const unsigned char *d_rows_u, const int32_t *d_position, int64_t count,
                         size_t row_bytes, unsigned char *d_rows_o, tf_error *err);

/** table[rows[i]] = in[i] for i < count (rows distinct): d_table [*][row_bytes], d_in [count][row_bytes]. */
int cuda_dispatch_scatter_rows(cuda_context *context, unsigned char *d_table, const int32_t *d_rows, int64_t count,
                               size_t row_bytes, const unsigned char *d_in, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
