/* Algorithm 2 as a sort, and the row copies of the dispatch (cuda/dispatch.h). */
#include "cuda/dispatch.h"

#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include "cuda/check.h"

static const int threads_per_block = 256;
static unsigned blocks_for(int64_t count) { return (unsigned)((count + threads_per_block - 1) / threads_per_block); }

/* dispatch_write_key() of ref/dispatch.h, on the device: event index then src (0) before dst (1). */
__device__ static int64_t write_key(int64_t entry, int64_t first, int64_t batch_size)
{
    return entry < 2 * batch_size ? 2 * (first + entry % batch_size) + entry / batch_size : -1;
}

/* index [count] = 0, 1, 2, ...: the entry of each (vertex, entry) pair before sorting */
__global__ static void iota(int32_t *index, int64_t count)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count)
        index[i] = (int32_t)i;
}

/* head [count] = 1 where the sorted vertex changes (a new segment starts) */
__global__ static void mark_heads(const int32_t *sorted, int64_t count, int32_t *head)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count)
        head[i] = i == 0 || sorted[i] != sorted[i - 1];
}

/* From the segment numbers (inclusive scan of the heads, 1-based): V_u and each segment's first
 * sorted position at the heads, Psi for every entry. */
__global__ static void number_segments(const int32_t *sorted, const int32_t *entry_of, const int32_t *segment_plus_one,
                                       int64_t count, int32_t *vertex, int32_t *start, int32_t *position)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count)
        return;
    int32_t s = segment_plus_one[i] - 1;
    position[entry_of[i]] = s;
    if (i == 0 || sorted[i] != sorted[i - 1]) {
        vertex[s] = sorted[i];
        start[s] = (int32_t)i;
    }
}

/* Phi: one thread per segment walks its entries (in entry order: the sort is stable) and keeps
 * the one of largest write key. */
__global__ static void segment_writers(const int32_t *entry_of, const int32_t *start, int64_t unique, int64_t count,
                                       int64_t first, int64_t batch_size, int64_t *writer)
{
    int64_t s = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= unique)
        return;
    int64_t end = s + 1 < unique ? start[s + 1] : count, best = -1, best_key = -1;
    for (int64_t i = start[s]; i < end; i++) {
        int64_t key = write_key(entry_of[i], first, batch_size);
        if (key > best_key) {
            best_key = key;
            best = entry_of[i];
        }
    }
    writer[s] = best;
}

extern "C" int cuda_dispatch_plan(cuda_context *context, const int32_t *d_entries, int64_t count, int64_t first,
                                  int64_t batch_size, int32_t *d_vertex, int32_t *d_position, int64_t *d_writer,
                                  int64_t *unique, tf_error *err)
{
    *unique = 0;
    if (count == 0)
        return TF_OK;
    if (count > INT32_MAX)
        return tf_error_set(err, TF_ERR_INPUT, "dispatch plan of %lld entries: at most %d", (long long)count,
                            INT32_MAX);
    cudaStream_t stream = (cudaStream_t)context->stream;
    const size_t n = (size_t)count * sizeof(int32_t);
    int32_t *sorted = (int32_t *)cuda_scratch(context, 0, n, err);
    int32_t *index = (int32_t *)cuda_scratch(context, 1, n, err);
    int32_t *entry_of = (int32_t *)cuda_scratch(context, 2, n, err);
    int32_t *head = (int32_t *)cuda_scratch(context, 3, n, err);
    int32_t *start = (int32_t *)cuda_scratch(context, 4, n, err);
    if (!sorted || !index || !entry_of || !head || !start)
        return TF_ERR_SYSTEM;
    iota<<<blocks_for(count), threads_per_block, 0, stream>>>(index, count);
    size_t temporary_bytes = 0;
    CUDA_CHECK(cub::DeviceRadixSort::SortPairs(NULL, temporary_bytes, d_entries, sorted, index, entry_of, (int)count,
                                               0, 32, stream),
               err);
    void *temporary = cuda_scratch(context, 5, temporary_bytes, err);
    if (!temporary)
        return TF_ERR_SYSTEM;
    CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temporary, temporary_bytes, d_entries, sorted, index, entry_of,
                                               (int)count, 0, 32, stream),
               err);
    mark_heads<<<blocks_for(count), threads_per_block, 0, stream>>>(sorted, count, head);
    /* the inclusive scan of the heads, in place into `index` (no longer needed) */
    size_t scan_bytes = 0;
    CUDA_CHECK(cub::DeviceScan::InclusiveSum(NULL, scan_bytes, head, index, (int)count, stream), err);
    if (!(temporary = cuda_scratch(context, 5, scan_bytes > temporary_bytes ? scan_bytes : temporary_bytes, err)))
        return TF_ERR_SYSTEM;
    CUDA_CHECK(cub::DeviceScan::InclusiveSum(temporary, scan_bytes, head, index, (int)count, stream), err);
    number_segments<<<blocks_for(count), threads_per_block, 0, stream>>>(sorted, entry_of, index, count, d_vertex,
                                                                         start, d_position);
    int32_t segments = 0;
    CUDA_CHECK(cudaMemcpyAsync(&segments, index + count - 1, sizeof segments, cudaMemcpyDeviceToHost, stream), err);
    CUDA_CHECK(cudaStreamSynchronize(stream), err);
    segment_writers<<<blocks_for(segments), threads_per_block, 0, stream>>>(entry_of, start, segments, count, first,
                                                                            batch_size, d_writer);
    CUDA_CHECK(cudaGetLastError(), err);
    CUDA_CHECK(cudaStreamSynchronize(stream), err);
    *unique = segments;
    return TF_OK;
}

/* out row i = table row rows[i] (gather) or table row rows[i] = in row i (scatter), as words */
__global__ static void copy_rows(const uint32_t *from, const int32_t *rows, int64_t count, int64_t words,
                                 int scatter, uint32_t *to)
{
    int64_t index = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= count * words)
        return;
    int64_t i = index / words, w = index % words, row = rows[i];
    if (scatter)
        to[row * words + w] = from[index];
    else
        to[index] = from[row * words + w];
}

/* One copy kernel and its wait; rows must be whole 32-bit words. */
static int launch_copy(cuda_context *context, const void *from, const int32_t *rows, int64_t count, size_t row_bytes,
                       int scatter, void *to, tf_error *err)
{
    if (row_bytes % 4 != 0)
        return tf_error_set(err, TF_ERR_INPUT, "dispatch rows of %zu bytes: expected a multiple of 4", row_bytes);
    if (count == 0)
        return TF_OK;
    const int64_t words = (int64_t)(row_bytes / 4);
    cudaStream_t stream = (cudaStream_t)context->stream;
    copy_rows<<<blocks_for(count * words), threads_per_block, 0, stream>>>((const uint32_t *)from, rows, count, words,
                                                                           scatter, (uint32_t *)to);
    CUDA_CHECK(cudaGetLastError(), err);
    CUDA_CHECK(cudaStreamSynchronize(stream), err);
    return TF_OK;
}

extern "C" int cuda_dispatch_gather_rows(cuda_context *context, const unsigned char *d_table, const int32_t *d_rows,
                                         int64_t count, size_t row_bytes, unsigned char *d_out, tf_error *err)
{
    return launch_copy(context, d_table, d_rows, count, row_bytes, 0, d_out, err);
}

extern "C" int cuda_dispatch_expand(cuda_context *context, const unsigned char *d_rows_u, const int32_t *d_position,
                                    int64_t count, size_t row_bytes, unsigned char *d_rows_o, tf_error *err)
{
    return launch_copy(context, d_rows_u, d_position, count, row_bytes, 0, d_rows_o, err);
}

extern "C" int cuda_dispatch_scatter_rows(cuda_context *context, unsigned char *d_table, const int32_t *d_rows,
                                          int64_t count, size_t row_bytes, const unsigned char *d_in, tf_error *err)
{
    return launch_copy(context, d_in, d_rows, count, row_bytes, 1, d_table, err);
}
