/* The GPU's sort-based Algorithm 2 and row kernels (cuda/dispatch.h) against the CPU's table
 * plan (opt/dispatch.h) and plain copies: every batch of a generated stream with heavy
 * repeats and 20 Wikipedia TGN batches, plans compared **bitwise** after putting the CPU plan in
 * the GPU's order (V_u sorted by vertex, Psi renumbered, Phi permuted); gather, expand and
 * scatter compared bitwise with CPU loops. Without a GPU (or driver) the program exits 77: CTest
 * reports it skipped. Where a GPU is available, run it under compute-sanitizer too:
 *     compute-sanitizer --error-exitcode 1 build/verify/test_dispatch_cuda */
#include "cuda/dispatch.h"
#include "opt/dispatch_batch.h"
#include "ref/core/rng.h"
#include "verify/testing_cuda.h"
#include "verify/testing_events.h"

static cuda_context gpu;

static void *to_device(const void *host, size_t bytes)
{
    tf_error err;
    void *device = cuda_alloc(&gpu, bytes ? bytes : 1, &err);
    ck_assert_msg(device != NULL, "%s", err.message);
    ck_assert(cuda_upload(&gpu, device, host, bytes, &err) == TF_OK);
    return device;
}

static void to_host(void *host, const void *device, size_t bytes)
{
    tf_error err;
    ck_assert(cuda_download(&gpu, host, device, bytes, &err) == TF_OK);
}

/* The CPU plan in the GPU's order: V_u by increasing vertex. */
static void canonical(const dispatch_plan *p, int32_t *vertex, int32_t *position, int64_t *writer)
{
    int32_t *order = malloc((size_t)(p->unique ? p->unique : 1) * sizeof *order);
    int32_t *renumber = malloc((size_t)(p->unique ? p->unique : 1) * sizeof *renumber);
    for (int64_t i = 0; i < p->unique; i++)
        order[i] = (int32_t)i;
    for (int64_t i = 1; i < p->unique; i++) /* insertion sort by vertex: plans are small */
        for (int64_t j = i; j > 0 && p->vertex[order[j - 1]] > p->vertex[order[j]]; j--) {
            int32_t swap = order[j];
            order[j] = order[j - 1];
            order[j - 1] = swap;
        }
    for (int64_t i = 0; i < p->unique; i++) {
        renumber[order[i]] = (int32_t)i;
        vertex[i] = p->vertex[order[i]];
        writer[i] = p->writer[order[i]];
    }
    for (int64_t k = 0; k < p->entries; k++)
        position[k] = renumber[p->position[k]];
    free(order);
    free(renumber);
}

/* Every training batch's plan, CPU against GPU; returns the batches compared. */
static int64_t compare_plans(const char *spec, event_model_kind kind, int64_t batch, int64_t max_batches,
                             int64_t *entries)
{
    tf_error err;
    workload w;
    workload_load(&w, spec, spec, INT64_MAX, kind, batch);
    event_trainer tr;
    ck_assert(event_trainer_create(&tr, &w.events, w.events.features, &w.config, &w.options, &err) == TF_OK);
    dispatch_setup setup = {&tr, NULL, DISPATCH_SVEN, 1, 0};
    dispatch_batch b;
    dispatch_table table;
    ck_assert(dispatch_batch_create(&b, &setup, &err) == TF_OK);
    ck_assert(dispatch_table_create(&table, w.events.num_nodes, &err) == TF_OK);
    const int64_t count = event_trainer_epoch_batches(&tr, NULL), capacity = dispatch_batch_capacity(&setup);
    event_batch_spec *specs = malloc((size_t)count * sizeof *specs);
    event_trainer_epoch_batches(&tr, specs);
    int32_t *vertex = malloc((size_t)capacity * sizeof *vertex);
    int32_t *position = malloc((size_t)capacity * sizeof *position);
    int32_t *gpu_vertex = malloc((size_t)capacity * sizeof *vertex);
    int32_t *gpu_position = malloc((size_t)capacity * sizeof *position);
    int64_t *writer = malloc((size_t)capacity * sizeof *writer);
    int64_t *gpu_writer = malloc((size_t)capacity * sizeof *writer);
    int32_t *d_vertex = cuda_alloc(&gpu, (size_t)capacity * sizeof(int32_t), &err);
    int32_t *d_position = cuda_alloc(&gpu, (size_t)capacity * sizeof(int32_t), &err);
    int64_t *d_writer = cuda_alloc(&gpu, (size_t)capacity * sizeof(int64_t), &err);
    ck_assert(d_vertex && d_position && d_writer);
    int64_t batches = 0;
    for (int64_t s = 0; s < count && batches < max_batches; s++, batches++) {
        ck_assert(dispatch_batch_build(&b, &setup, &specs[s], &table, &err) == TF_OK);
        /* the plan before the global filter: on one rank they are the same */
        const int64_t N = b.tape.entries;
        canonical(&b.plan, vertex, position, writer);
        int32_t *d_entries = to_device(b.tape.vertex, (size_t)N * sizeof(int32_t));
        int64_t unique;
        ck_assert_msg(cuda_dispatch_plan(&gpu, d_entries, N, b.first, b.size, d_vertex, d_position, d_writer, &unique,
                                         &err) == TF_OK,
                      "%s", err.message);
        cuda_free(&gpu, d_entries);
        ck_assert_int_eq(unique, b.plan.unique);
        to_host(gpu_vertex, d_vertex, (size_t)unique * sizeof(int32_t));
        to_host(gpu_position, d_position, (size_t)N * sizeof(int32_t));
        to_host(gpu_writer, d_writer, (size_t)unique * sizeof(int64_t));
        ck_assert(memcmp(gpu_vertex, vertex, (size_t)unique * sizeof(int32_t)) == 0);
        ck_assert(memcmp(gpu_position, position, (size_t)N * sizeof(int32_t)) == 0);
        ck_assert(memcmp(gpu_writer, writer, (size_t)unique * sizeof(int64_t)) == 0);
        *entries += N;
    }
    printf("%-5s %-50s batch %4lld: %lld batches, plans bitwise equal to the CPU's (canonical order)\n",
           event_model_kind_name(kind), spec, (long long)batch, (long long)batches);
    cuda_free(&gpu, d_vertex), cuda_free(&gpu, d_position), cuda_free(&gpu, d_writer);
    free(vertex), free(position), free(writer), free(gpu_vertex), free(gpu_position), free(gpu_writer), free(specs);
    dispatch_table_free(&table);
    dispatch_batch_free(&b);
    event_trainer_free(&tr);
    workload_free(&w);
    return batches;
}

START_TEST(plans_match_the_cpu)
{
    int64_t entries = 0, batches = 0;
    batches += compare_plans("events:nodes=60,events=2000,repeat=0.9,features=2", EVENT_MODEL_TGN, 100, 1000, &entries);
    batches += compare_plans("events:nodes=60,events=2000,repeat=0.9,features=2", EVENT_MODEL_JODIE, 100, 1000,
                             &entries);
    batches += compare_plans("wikipedia", EVENT_MODEL_TGN, 600, 20, &entries);
    printf("%lld batches, %lld entries: GPU plans equal (must be all)\n", (long long)batches, (long long)entries);
}
END_TEST

START_TEST(row_kernels_are_copies)
{
    enum { ROWS = 5000, COUNT = 20000, ROW_BYTES = 4 * 37 + 8 };
    rng r;
    rng_seed(&r, 4);
    unsigned char *table = malloc((size_t)ROWS * ROW_BYTES), *out = malloc((size_t)COUNT * ROW_BYTES);
    unsigned char *expected = malloc((size_t)COUNT * ROW_BYTES);
    int32_t *rows = malloc(COUNT * sizeof *rows), *distinct = malloc(ROWS * sizeof *distinct);
    for (size_t i = 0; i < (size_t)ROWS * ROW_BYTES; i++)
        table[i] = (unsigned char)rng_below(&r, 256);
    for (int i = 0; i < COUNT; i++)
        rows[i] = (int32_t)rng_below(&r, ROWS);
    for (int i = 0; i < ROWS; i++)
        distinct[i] = ROWS - 1 - i;
    tf_error err;
    unsigned char *d_table = to_device(table, (size_t)ROWS * ROW_BYTES);
    unsigned char *d_out = cuda_alloc(&gpu, (size_t)COUNT * ROW_BYTES, &err);
    int32_t *d_rows = to_device(rows, COUNT * sizeof *rows), *d_distinct = to_device(distinct, ROWS * sizeof *distinct);
    /* gather and expand are the same copy: out[i] = table[rows[i]] */
    ref_dispatch_expand(table, rows, COUNT, ROW_BYTES, expected);
    ck_assert(cuda_dispatch_gather_rows(&gpu, d_table, d_rows, COUNT, ROW_BYTES, d_out, &err) == TF_OK);
    to_host(out, d_out, (size_t)COUNT * ROW_BYTES);
    int64_t differing = memcmp(out, expected, (size_t)COUNT * ROW_BYTES) != 0;
    ck_assert(cuda_dispatch_expand(&gpu, d_table, d_rows, COUNT, ROW_BYTES, d_out, &err) == TF_OK);
    to_host(out, d_out, (size_t)COUNT * ROW_BYTES);
    differing += memcmp(out, expected, (size_t)COUNT * ROW_BYTES) != 0;
    /* scatter to distinct rows: table'[distinct[i]] = in[i] */
    ck_assert(cuda_dispatch_scatter_rows(&gpu, d_table, d_distinct, ROWS, ROW_BYTES, d_out, &err) == TF_OK);
    unsigned char *scattered = malloc((size_t)ROWS * ROW_BYTES);
    to_host(scattered, d_table, (size_t)ROWS * ROW_BYTES);
    for (int i = 0; i < ROWS; i++)
        differing +=
            memcmp(scattered + (size_t)distinct[i] * ROW_BYTES, expected + (size_t)i * ROW_BYTES, ROW_BYTES) != 0;
    printf("row kernels: gather, expand (%d rows of %d bytes) and scatter: %lld differ from the CPU copies "
           "(must be 0)\n",
           COUNT, ROW_BYTES, (long long)differing);
    ck_assert_int_eq(differing, 0);
    EXPECT_INPUT_ERROR(cuda_dispatch_expand(&gpu, d_table, d_rows, COUNT, 6, d_out, &err), &err, "multiple of 4");
    free(table), free(out), free(expected), free(rows), free(distinct), free(scattered);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("dispatch_cuda");
    TCase *cases = tcase_create("sort_based_plan");
    tcase_set_timeout(cases, 300);
    tcase_add_test(cases, plans_match_the_cpu);
    tcase_add_test(cases, row_kernels_are_copies);
    suite_add_tcase(suite, cases);
    return run_suite_cuda(suite, &gpu);
}
