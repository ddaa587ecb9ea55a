/* The partitioners of chapter 06 (ref/partition.h, ref/partition_chunks.h, ref/partition_bicut.h):
 * valid owner arrays, DynaHB's walk-count load on the paper's examples, METIS against the cut
 * metric, DGC's label propagation and Algorithm 1 on hand-computed cases, Re-FlexBiCut against
 * brute force, and the metrics on a graph counted by hand. Every test prints what it measured. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/dataset.h"
#include "ref/core/memory.h"
#include "ref/partition.h"
#include "ref/partition_bicut.h"
#include "ref/partition_chunks.h"
#include "ref/core/rng.h"
#include "verify/partition_example.h"
#include "verify/testing.h"

static const char generated_spec[] = "powerlaw:nodes=200,edges=1500,snapshots=12,arrival=0.05,seed=5";

/* A sequence of `steps` snapshots on n vertices, every vertex present, features 1, the edges given
 * per snapshot as (src, dst) pairs. */
static void crafted(snapshot_seq *seq, int64_t n, int steps, const int32_t (*edges)[2], const int *counts)
{
    tf_error err;
    ck_assert_int_eq(snapshot_seq_alloc(seq, steps, n, 1, 1, &err), TF_OK);
    for (int t = 0, at = 0; t < steps; at += counts[t], t++) {
        int32_t src[64], dst[64];
        for (int e = 0; e < counts[t]; e++) {
            src[e] = edges[at + e][0];
            dst[e] = edges[at + e][1];
        }
        ck_assert_int_eq(snapshot_seq_set_edges(seq, t, counts[t], src, dst, NULL, &err), TF_OK);
    }
}

/* ---- validity --------------------------------------------------------------------------------- */

START_TEST(validity)
{
    dataset d;
    const snapshot_seq *seq = load_snapshots(generated_spec, &d);
    const int rank_counts[] = {1, 2, 3, 4, 7};
    const partition_method methods[] = {PARTITION_HASH, PARTITION_PTS, PARTITION_PSS, PARTITION_PSS_TS,
                                        PARTITION_METIS, PARTITION_DYNAHB, PARTITION_DGC, PARTITION_DGC_ST};
    tf_error err;
    for (size_t i = 0; i < sizeof methods / sizeof *methods; i++)
        for (size_t j = 0; j < sizeof rank_counts / sizeof *rank_counts; j++) {
            const int ranks = rank_counts[j];
            partition_options o;
            partition_options_default(&o);
            o.ranks = ranks;
            partition a, b;
            ck_assert_msg(ref_partition_snapshots(seq, methods[i], &o, &a, &err) == TF_OK, "%s", err.message);
            ck_assert_msg(ref_partition_snapshots(seq, methods[i], &o, &b, &err) == TF_OK, "%s", err.message);
            const int32_t *owners[3][2] = {{a.vertex_owner, b.vertex_owner},
                                           {a.snapshot_owner, b.snapshot_owner},
                                           {a.step_owner, b.step_owner}};
            const int64_t lengths[3] = {seq->num_nodes, seq->num_snapshots, seq->num_nodes * seq->num_snapshots};
            int64_t sizes[8] = {0};
            for (int kind = 0; kind < 3; kind++) {
                if (!owners[kind][0])
                    continue;
                ck_assert_int_eq(memcmp(owners[kind][0], owners[kind][1], (size_t)lengths[kind] * sizeof(int32_t)), 0);
                for (int64_t v = 0; v < lengths[kind]; v++) {
                    const int32_t r = owners[kind][0][v];
                    if (kind == 2 && !seq->snapshots[v / seq->num_nodes].present[v % seq->num_nodes]) {
                        ck_assert_int_eq(r, -1);
                        continue;
                    }
                    ck_assert_msg(r >= 0 && r < ranks, "%s: owner %d of %lld outside 0..%d",
                                  partition_method_name(methods[i]), r, (long long)v, ranks - 1);
                    if (kind < 2)
                        sizes[r]++;
                    if (methods[i] == PARTITION_HASH)
                        ck_assert_int_eq(r, v % ranks);
                }
                if (methods[i] == PARTITION_PTS || methods[i] == PARTITION_PSS || methods[i] == PARTITION_PSS_TS) {
                    int64_t smallest = INT64_MAX, largest = 0;
                    for (int r = 0; r < ranks; r++) {
                        smallest = sizes[r] < smallest ? sizes[r] : smallest;
                        largest = sizes[r] > largest ? sizes[r] : largest;
                    }
                    ck_assert_int_le(largest - smallest, 1);
                    memset(sizes, 0, sizeof sizes);
                }
            }
            partition_free(&a);
            partition_free(&b);
        }
    printf("validity: hash pts pss pss-ts metis dynahb dgc dgc-st at R = 1 2 3 4 7 on %s: every owner in range, "
           "twice the same bits\n",
           generated_spec);
    partition_options o;
    partition_options_default(&o);
    o.ranks = 201;
    partition p;
    EXPECT_INPUT_ERROR(ref_partition_snapshots(seq, PARTITION_HASH, &o, &p, &err), &err, "200 vertices", "201");
    o.ranks = 13;
    EXPECT_INPUT_ERROR(ref_partition_snapshots(seq, PARTITION_PSS, &o, &p, &err), &err, "12 snapshots");
    o.ranks = 0;
    EXPECT_INPUT_ERROR(ref_partition_snapshots(seq, PARTITION_DYNAHB, &o, &p, &err), &err, "expected >= 1");
    o.ranks = 2;
    EXPECT_INPUT_ERROR(ref_partition_snapshots(seq, PARTITION_REFLEXBICUT, &o, &p, &err), &err, "event model");
    partition_method m;
    EXPECT_INPUT_ERROR(partition_method_parse("random", &m, &err), &err, "hash", "dgc-st", "reflexbicut");
    dataset_free(&d);
}
END_TEST

/* ---- DynaHB --------------------------------------------------------------------------------- */

/* Algorithm 1 lines 8-10 literally: raw_l from dense walk counts, then the double sum. */
static int64_t literal_load(const snapshot_seq *seq, int layers, int64_t v)
{
    const int64_t n = seq->num_nodes;
    int64_t raw[8] = {0};
    int64_t *walks = calloc((size_t)n, sizeof *walks), *next = calloc((size_t)n, sizeof *next);
    for (int64_t t = 0; t < seq->num_snapshots; t++) {
        const csr *g = &seq->snapshots[t].graph;
        for (int64_t u = 0; u < n; u++)
            walks[u] = 1;
        for (int l = 1; l <= layers; l++) {
            for (int64_t u = 0; u < n; u++)
                next[u] = 0;
            for (int64_t dst = 0; dst < n; dst++) /* scatter along every edge: a_l(dst) += a_{l-1}(src) */
                for (int64_t e = g->row_ptr[dst]; e < g->row_ptr[dst + 1]; e++)
                    next[dst] += walks[g->col[e]];
            raw[l - 1] += next[v];
            int64_t *swap = walks;
            walks = next;
            next = swap;
        }
    }
    int64_t load = 0;
    for (int l = 1; l <= layers; l++)
        for (int inner = 1; inner <= l; inner++)
            load += raw[inner - 1];
    free(walks);
    free(next);
    return load;
}

START_TEST(dynahb_walks)
{
    /* a=0 -> b=1, a -> c=2, b -> d=3, c -> d */
    const int32_t edges[][2] = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
    const int counts[] = {4};
    snapshot_seq seq;
    crafted(&seq, 4, 1, edges, counts);
    int64_t load[4];
    tf_error err;
    ck_assert_int_eq(partition_dynahb_load(&seq, 2, load, &err), TF_OK);
    /* d: 2 one-hop walks (b, c) and 2 two-hop walks (a via b, a via c); two-hop *set* {a} has 1. */
    const int64_t two_hop_sets = 1, two_hop_walks = load[3] - 2 * 2;
    printf("dynahb_walks: diamond, vertex d at L = 2: load %lld; 2-hop walks %lld, 2-hop neighbour set %lld\n",
           (long long)load[3], (long long)two_hop_walks, (long long)two_hop_sets);
    ck_assert_int_eq(two_hop_walks, 2);
    snapshot_seq_free(&seq);

    dataset d;
    load_or_fail(generated_spec, &d);
    int64_t *loads = malloc((size_t)d.snapshots.num_nodes * sizeof *loads);
    for (int layers = 1; layers <= 3; layers++) {
        ck_assert_int_eq(partition_dynahb_load(&d.snapshots, layers, loads, &err), TF_OK);
        for (int64_t v = 0; v < d.snapshots.num_nodes; v += 7)
            ck_assert_int_eq(loads[v], literal_load(&d.snapshots, layers, v));
    }
    printf("dynahb_walks: closed form sum (L - l + 1) raw_l = Algorithm 1's double loop at L = 1..3 on every 7th "
           "vertex of %s\n",
           generated_spec);
    free(loads);
    dataset_free(&d);
}
END_TEST

START_TEST(dynahb_example_3)
{
    /* The paper's ids 1..4 as 0..3. Snapshot 2 is Example 2 for v2: N^1 = {v1, v3}, N^2 = {v3}. */
    const int32_t edges[][2] = {{0, 1}, {0, 2}, {0, 3}, {2, 1}, {2, 3}, {0, 1}, {0, 3}, {2, 0}, {2, 1}, {2, 3}};
    const int counts[] = {5, 5};
    snapshot_seq seq;
    crafted(&seq, 4, 2, edges, counts);
    int64_t load[4], by_hash[2] = {0}, by_load[2] = {0};
    int32_t owner[4];
    tf_error err;
    ck_assert_int_eq(partition_dynahb_load(&seq, 2, load, &err), TF_OK);
    const int64_t expected[4] = {2, 10, 2, 10};
    for (int v = 0; v < 4; v++)
        ck_assert_int_eq(load[v], expected[v]);
    partition_hash(4, 2, owner);
    for (int v = 0; v < 4; v++)
        by_hash[owner[v]] += load[v];
    ck_assert_int_eq(partition_serpentine(load, 4, 2, owner, &err), TF_OK);
    for (int v = 0; v < 4; v++)
        by_load[owner[v]] += load[v];
    printf("dynahb_example_3: loads (%lld, %lld, %lld, %lld); hash %lld / %lld, load-aware %lld / %lld\n",
           (long long)load[0], (long long)load[1], (long long)load[2], (long long)load[3], (long long)by_hash[0],
           (long long)by_hash[1], (long long)by_load[0], (long long)by_load[1]);
    ck_assert(by_hash[0] == 4 && by_hash[1] == 20);
    ck_assert(by_load[0] == 12 && by_load[1] == 12);
    /* Snapshot 2 alone, v2 (id 1): Example 2's load 5. */
    snapshot_seq second = seq;
    second.snapshots = &seq.snapshots[1];
    second.num_snapshots = 1;
    ck_assert_int_eq(partition_dynahb_load(&second, 2, load, &err), TF_OK);
    ck_assert_int_eq(load[1], 5);
    snapshot_seq_free(&seq);
}
END_TEST

START_TEST(dynahb_balance)
{
    const char *specs[] = {generated_spec, "powerlaw:nodes=300,edges=3000,snapshots=5,exponent=2.1,seed=8"};
    tf_error err;
    for (int s = 0; s < 2; s++) {
        dataset d;
        load_or_fail(specs[s], &d);
        const int64_t n = d.snapshots.num_nodes;
        int64_t *loads = malloc((size_t)n * sizeof *loads), largest = 0;
        int32_t *owner = malloc((size_t)n * sizeof *owner);
        ck_assert_int_eq(partition_dynahb_load(&d.snapshots, 2, loads, &err), TF_OK);
        for (int64_t v = 0; v < n; v++)
            largest = loads[v] > largest ? loads[v] : largest;
        for (int ranks = 2; ranks <= 8; ranks *= 2) {
            int64_t rank_load[8] = {0}, low = INT64_MAX, high = 0;
            ck_assert_int_eq(partition_serpentine(loads, n, ranks, owner, &err), TF_OK);
            for (int64_t v = 0; v < n; v++)
                rank_load[owner[v]] += loads[v];
            for (int r = 0; r < ranks; r++) {
                low = rank_load[r] < low ? rank_load[r] : low;
                high = rank_load[r] > high ? rank_load[r] : high;
            }
            printf("dynahb_balance: %s R = %d: max - min rank load %lld <= largest vertex load %lld\n", specs[s], ranks,
                   (long long)(high - low), (long long)largest);
            ck_assert_int_le(high - low, largest);
        }
        free(loads);
        free(owner);
        dataset_free(&d);
    }
}
END_TEST

START_TEST(dynahb_overflow)
{
    const int64_t n = 200;
    snapshot_seq seq;
    tf_error err;
    ck_assert_int_eq(snapshot_seq_alloc(&seq, 1, n, 1, 1, &err), TF_OK);
    int32_t *src = malloc((size_t)(n * (n - 1)) * sizeof *src), *dst = malloc((size_t)(n * (n - 1)) * sizeof *dst);
    int64_t edges = 0;
    for (int32_t u = 0; u < n; u++)
        for (int32_t v = 0; v < n; v++)
            if (u != v) {
                src[edges] = u;
                dst[edges++] = v;
            }
    ck_assert_int_eq(snapshot_seq_set_edges(&seq, 0, edges, src, dst, NULL, &err), TF_OK);
    int64_t *loads = malloc((size_t)n * sizeof *loads);
    ck_assert_int_eq(partition_dynahb_load(&seq, 8, loads, &err), TF_OK); /* 199^8 ~ 2.5e18 still fits */
    EXPECT_INPUT_ERROR(partition_dynahb_load(&seq, 9, loads, &err), &err, "overflows int64", "layer 9");
    free(src);
    free(dst);
    free(loads);
    snapshot_seq_free(&seq);
}
END_TEST

/* ---- METIS ---------------------------------------------------------------------------------- */

START_TEST(metis)
{
    dataset d;
    const snapshot_seq *seq = load_snapshots(generated_spec, &d);
    const int64_t n = seq->num_nodes;
    partition_graph g;
    tf_error err;
    ck_assert_int_eq(partition_union_graph(seq, 1, &g, &err), TF_OK);
    int32_t *owner = malloc((size_t)n * sizeof *owner), *again = malloc((size_t)n * sizeof *again);
    for (int ranks = 2; ranks <= 8; ranks *= 2) {
        int64_t metis_cut;
        ck_assert_int_eq(partition_metis(&g, ranks, 7, owner, &metis_cut, &err), TF_OK);
        ck_assert_int_eq(partition_metis(&g, ranks, 7, again, NULL, &err), TF_OK);
        ck_assert_int_eq(memcmp(owner, again, (size_t)n * sizeof *owner), 0);
        partition_metrics metis_metrics, hash_metrics;
        ck_assert_int_eq(partition_measure(seq, owner, ranks, 1, 0, MODEL_TGCN, &metis_metrics, &err), TF_OK);
        partition_hash(n, ranks, again);
        ck_assert_int_eq(partition_measure(seq, again, ranks, 1, 0, MODEL_TGCN, &hash_metrics, &err), TF_OK);
        printf("metis: R = %d: METIS edgecut %lld, measured cut %lld of %lld edge occurrences; hash cut %lld\n", ranks,
               (long long)metis_cut, (long long)metis_metrics.cut_edges, (long long)metis_metrics.total_edges,
               (long long)hash_metrics.cut_edges);
        ck_assert_int_eq(metis_cut, metis_metrics.cut_edges);
        ck_assert_int_lt(metis_metrics.cut_edges, hash_metrics.cut_edges);
        partition_metrics_free(&metis_metrics);
        partition_metrics_free(&hash_metrics);
    }
    for (int64_t v = 0; v < n; v++)
        owner[v] = 5;
    ck_assert_int_eq(partition_metis(&g, 1, 7, owner, NULL, &err), TF_OK);
    for (int64_t v = 0; v < n; v++)
        ck_assert_int_eq(owner[v], 0);
    EXPECT_INPUT_ERROR(partition_metis(&g, 201, 7, owner, NULL, &err), &err, "cannot split 200 vertices into 201");
    free(owner);
    free(again);
    partition_graph_free(&g);
    dataset_free(&d);
}
END_TEST

/* ---- DGC ------------------------------------------------------------------------------------ */

START_TEST(label_propagation)
{
    tf_error err;
    /* Two connected vertices: asynchronous sweeps settle at once (synchronous ones would swap). */
    const int32_t a[] = {0}, b[] = {1};
    const int64_t w[] = {3};
    partition_graph pair;
    ck_assert_int_eq(partition_graph_from_pairs(&pair, 2, 1, a, b, w, &err), TF_OK);
    pair.vertex_weight[0] = pair.vertex_weight[1] = 1;
    int32_t labels[2];
    label_propagation_stats stats;
    ck_assert_int_eq(ref_label_propagation(&pair, 2, LABEL_PROPAGATION_MAX_SWEEPS, labels, &stats, &err), TF_OK);
    printf("label_propagation: two vertices: labels (%d, %d) after %d sweeps\n", labels[0], labels[1], stats.sweeps);
    ck_assert(labels[0] == labels[1] && stats.sweeps <= 2);
    partition_graph_free(&pair);

    dataset d;
    const snapshot_seq *seq = load_snapshots(generated_spec, &d);
    int64_t *index = malloc((size_t)(seq->num_snapshots * seq->num_nodes) * sizeof *index);
    partition_graph g;
    ck_assert_int_eq(partition_super_graph(seq, 5, 3, &g, index, &err), TF_OK);
    int64_t present = 0;
    for (int64_t i = 0; i < seq->num_snapshots * seq->num_nodes; i++)
        if (index[i] >= 0)
            ck_assert_int_eq(index[i], present++); /* Eq. 1: prefix sums of present counts plus the rank at t */
    ck_assert_int_eq(present, g.num_vertices);
    int32_t *label = malloc((size_t)g.num_vertices * sizeof *label);
    int64_t *size = calloc((size_t)g.num_vertices, sizeof *size);
    for (int64_t cap = 8; cap <= 512; cap *= 8) {
        ck_assert_int_eq(ref_label_propagation(&g, cap, LABEL_PROPAGATION_MAX_SWEEPS, label, &stats, &err), TF_OK);
        memset(size, 0, (size_t)g.num_vertices * sizeof *size);
        int64_t inside = 0, cut = 0, total = 0, chunks = 0, largest = 0;
        for (int64_t v = 0; v < g.num_vertices; v++) {
            ck_assert(label[v] >= 0 && label[v] < g.num_vertices);
            chunks += size[label[v]] == 0;
            size[label[v]] += g.vertex_weight[v];
            for (int64_t e = g.offsets[v]; e < g.offsets[v + 1]; e++) {
                total += g.edge_weight[e];
                if (label[g.neighbours[e]] == label[v])
                    inside += g.edge_weight[e];
                else
                    cut += g.edge_weight[e];
            }
        }
        for (int64_t c = 0; c < g.num_vertices; c++)
            largest = size[c] > largest ? size[c] : largest;
        printf("label_propagation: super graph of %lld vertices, cap %lld: %lld chunks, largest %lld, %d sweeps, "
               "%lld changes; inside %lld + cut %lld = total %lld\n",
               (long long)g.num_vertices, (long long)cap, (long long)chunks, (long long)largest, stats.sweeps,
               (long long)stats.changes, (long long)inside / 2, (long long)cut / 2, (long long)total / 2);
        ck_assert_int_le(largest, cap);
        ck_assert_int_eq(inside + cut, total);
        ck_assert_int_eq(stats.hit_sweep_cap, 0);
        ck_assert_int_lt(chunks, g.num_vertices);
    }
    free(index);
    free(label);
    free(size);
    partition_graph_free(&g);
    dataset_free(&d);
}
END_TEST

/* A chunk graph of `count` chunks with the given works and h edges. */
static void chunk_graph_of(chunk_graph *c, int64_t count, const double *work, int64_t edges, const int32_t *a,
                           const int32_t *b, const int64_t *h)
{
    tf_error err;
    memset(c, 0, sizeof *c);
    c->count = count;
    c->work = malloc((size_t)count * sizeof *c->work);
    memcpy(c->work, work, (size_t)count * sizeof *work);
    ck_assert_int_eq(partition_graph_from_pairs(&c->adjacency, count, edges, a, b, h, &err), TF_OK);
}

START_TEST(chunk_assign)
{
    tf_error err;
    /* Works 5, 3, 2; h(0,2) = 1, h(1,2) = 4; g-bar = 5. Chunks 0 and 1 seed the empty ranks; chunk 2
     * scores s_0 = (5 - 5) * 1 = 0 and s_1 = (5 - 3) * 4 = 8: rank 1. */
    const double work[] = {5, 3, 2};
    const int32_t a[] = {0, 1}, b[] = {2, 2};
    const int64_t h[] = {1, 4};
    chunk_graph c;
    chunk_graph_of(&c, 3, work, 2, a, b, h);
    int32_t rank[8];
    ck_assert_int_eq(ref_chunk_assign(&c, 2, rank, &err), TF_OK);
    printf("chunk_assign: works (5, 3, 2), h(0,2) = 1, h(1,2) = 4: ranks (%d, %d, %d), expected (0, 1, 1)\n", rank[0],
           rank[1], rank[2]);
    ck_assert(rank[0] == 0 && rank[1] == 1 && rank[2] == 1);
    chunk_graph_free(&c);

    /* Eight isolated chunks of equal work on 2 ranks: every score is 0 after the seeds. */
    const double equal[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    chunk_graph_of(&c, 8, equal, 0, NULL, NULL, NULL);
    ck_assert_int_eq(ref_chunk_assign(&c, 2, rank, &err), TF_OK);
    int ours[2] = {0}, literal[2] = {1, 1}; /* literal rule: seeds, then every tie to rank 0 */
    for (int i = 0; i < 8; i++)
        ours[rank[i]]++;
    literal[0] += 6;
    printf("chunk_assign: 8 isolated chunks on 2 ranks: ties to the lowest rank give %d/%d; empty ranks first, then "
           "least load, then lowest rank give %d/%d (departure from the literal rule: a chunk with no placed neighbour "
           "scores 0 on every rank, and the literal rule piles all such chunks onto rank 0)\n",
           literal[0], literal[1], ours[0], ours[1]);
    ck_assert(ours[0] == 4 && ours[1] == 4);
    chunk_graph_free(&c);

    /* The heaviest R chunks seed the ranks, every chunk placed once. */
    dataset d;
    load_or_fail(generated_spec, &d);
    int64_t *index = malloc((size_t)(d.snapshots.num_snapshots * d.snapshots.num_nodes) * sizeof *index);
    partition_graph g;
    ck_assert_int_eq(partition_super_graph(&d.snapshots, 4, 2, &g, index, &err), TF_OK);
    int32_t *label = malloc((size_t)g.num_vertices * sizeof *label), *chunk = malloc((size_t)g.num_vertices * sizeof *chunk);
    int64_t *ones = malloc((size_t)g.num_vertices * sizeof *ones), *degree = malloc((size_t)g.num_vertices * sizeof *degree);
    for (int64_t v = 0; v < g.num_vertices; v++) {
        ones[v] = 1;
        degree[v] = g.offsets[v + 1] - g.offsets[v];
    }
    ck_assert_int_eq(ref_label_propagation(&g, 64, LABEL_PROPAGATION_MAX_SWEEPS, label, NULL, &err), TF_OK);
    const chunk_cost_model cost = {10, 1};
    ck_assert_int_eq(chunk_graph_build(&g, label, ones, degree, &cost, &c, chunk, &err), TF_OK);
    int32_t *placed = malloc((size_t)c.count * sizeof *placed);
    ck_assert_int_eq(ref_chunk_assign(&c, 4, placed, &err), TF_OK);
    int64_t heaviest[4] = {-1, -1, -1, -1};
    for (int k = 0; k < 4; k++) /* the k-th heaviest chunk (ties by id) */
        for (int64_t x = 0; x < c.count; x++) {
            int taken = 0;
            for (int j = 0; j < k; j++)
                taken |= heaviest[j] == x;
            if (!taken && (heaviest[k] < 0 || c.work[x] > c.work[heaviest[k]]))
                heaviest[k] = x;
        }
    for (int k = 0; k < 4; k++)
        ck_assert_int_eq(placed[heaviest[k]], k);
    double rank_work[4] = {0};
    for (int64_t x = 0; x < c.count; x++) {
        ck_assert(placed[x] >= 0 && placed[x] < 4);
        rank_work[placed[x]] += c.work[x];
    }
    printf("chunk_assign: %lld chunks on 4 ranks, the 4 heaviest seed ranks 0..3; work per rank %.0f %.0f %.0f %.0f\n",
           (long long)c.count, rank_work[0], rank_work[1], rank_work[2], rank_work[3]);
    free(index);
    free(label);
    free(chunk);
    free(ones);
    free(degree);
    free(placed);
    chunk_graph_free(&c);
    partition_graph_free(&g);
    dataset_free(&d);
}
END_TEST

/* ---- Re-FlexBiCut --------------------------------------------------------------------------- */

/* The smallest ζ over all R^N placements: an odometer over owners, each digit change one move
 * that updates two caps. */
static int64_t brute_force_cost(const bicut_demand *d)
{
    const int64_t n = d->num_nodes;
    const int ranks = d->ranks;
    int32_t owner[16] = {0};
    int64_t cap[8], served[8], best;
    bicut_costs(d, owner, cap, served);
    for (int k = 0; k < ranks; k++)
        cap[k] += served[k];
    best = INT64_MAX;
    for (;;) {
        int64_t zeta = 0;
        for (int k = 0; k < ranks; k++)
            zeta = cap[k] > zeta ? cap[k] : zeta;
        best = zeta < best ? zeta : best;
        int64_t v = 0;
        for (; v < n; v++) { /* move v from a to b = (a + 1) mod R; carry when it wraps */
            const int a = owner[v], b = (a + 1) % ranks;
            int64_t s = 0;
            for (int k = 0; k < ranks; k++)
                s += d->weight[k * n + v];
            cap[a] += 2 * d->weight[a * n + v] - s;
            cap[b] += s - 2 * d->weight[b * n + v];
            owner[v] = b;
            if (b != 0)
                break;
        }
        if (v == n)
            return best;
    }
}

/* 1 if no single move makes the decreasingly sorted caps lexicographically smaller. */
static int is_local_optimum(const bicut_demand *d, int32_t *owner)
{
    const int64_t n = d->num_nodes;
    int64_t cap[8], served[8];
    bicut_costs(d, owner, cap, served);
    for (int k = 0; k < d->ranks; k++)
        cap[k] += served[k];
    for (int64_t v = 0; v < n; v++)
        for (int b = 0; b < d->ranks; b++) {
            const int a = owner[v];
            if (b == a)
                continue;
            int64_t s = 0;
            for (int k = 0; k < d->ranks; k++)
                s += d->weight[k * n + v];
            const int64_t x = cap[a] + 2 * d->weight[a * n + v] - s, y = cap[b] + s - 2 * d->weight[b * n + v];
            const int64_t new_high = x > y ? x : y, new_low = x > y ? y : x;
            const int64_t old_high = cap[a] > cap[b] ? cap[a] : cap[b], old_low = cap[a] > cap[b] ? cap[b] : cap[a];
            if (new_high < old_high || (new_high == old_high && new_low < old_low))
                return 0;
        }
    return 1;
}

/* A random skewed demand: each vertex has a favourite rank that wants it more. */
static void random_demand(bicut_demand *d, int ranks, int64_t n, rng *r)
{
    tf_error err;
    ck_assert_int_eq(bicut_demand_alloc(d, ranks, n, &err), TF_OK);
    for (int64_t v = 0; v < n; v++) {
        const int favourite = (int)rng_below(r, (uint64_t)ranks);
        for (int k = 0; k < ranks; k++)
            d->weight[k * n + v] = (int64_t)rng_below(r, 4) * (int64_t)rng_below(r, 3) +
                                   (k == favourite ? (int64_t)rng_below(r, 12) : 0);
    }
}

START_TEST(reflexbicut_brute_force)
{
    rng r;
    rng_seed(&r, 2024);
    tf_error err;
    int instances = 0;
    double worst = 1, sum = 0;
    for (int ranks = 2; ranks <= 4; ranks++)
        for (int64_t n = 4; n <= (ranks == 4 ? 10 : 8); n++) {
            const int repeats = n == 10 ? 3 : (ranks == 4 && n > 7 ? 0 : 7);
            for (int i = 0; i < repeats; i++) {
                bicut_demand d;
                random_demand(&d, ranks, n, &r);
                int32_t owner[16];
                bicut_stats stats;
                ck_assert_int_eq(ref_reflexbicut(&d, owner, &stats, &err), TF_OK);
                const int64_t ours = bicut_balance_cost(&d, owner), optimum = brute_force_cost(&d);
                ck_assert_int_eq(ours, stats.final_cost);
                ck_assert_int_le(optimum, ours);
                ck_assert(is_local_optimum(&d, owner));
                ck_assert_int_le(stats.final_cost, stats.initial_cost);
                for (int64_t m = 0; m < stats.moves; m++)
                    ck_assert_int_le(stats.trace[m], m == 0 ? stats.initial_cost : stats.trace[m - 1]);
                const double ratio = optimum > 0 ? (double)ours / (double)optimum : 1.0;
                worst = fmax(worst, ratio);
                sum += ratio;
                instances++;
                bicut_stats_free(&stats);
                bicut_demand_free(&d);
            }
        }
    printf("reflexbicut_brute_force: %d instances (R 2..4, N 4..10): ratio to the optimum worst %.3f, mean %.4f; "
           "every result a single-move local optimum, ζ never rose\n",
           instances, worst, sum / instances);
}
END_TEST

START_TEST(reflexbicut_vs_baselines)
{
    dataset d;
    load_or_fail("events:nodes=500,events=20000,repeat=0.8,exponent=2.1,seed=4", &d);
    const event_stream *es = &d.events;
    temporal_csr history;
    tf_error err;
    ck_assert_int_eq(temporal_csr_build(&history, es, &err), TF_OK);
    const int64_t n = es->num_nodes;
    int32_t *owner = malloc((size_t)n * sizeof *owner);
    for (int ranks = 4; ranks <= 8; ranks *= 2) {
        bicut_demand demand;
        ck_assert_int_eq(partition_event_demand(es, &history, 0, es->num_events, 100, ranks, 10, &demand, &err), TF_OK);
        bicut_stats stats;
        ck_assert_int_eq(ref_reflexbicut(&demand, owner, &stats, &err), TF_OK);
        const int64_t ours = bicut_balance_cost(&demand, owner);
        partition_range(n, ranks, owner);
        const int64_t range = bicut_balance_cost(&demand, owner);
        partition_interval(n, ranks, PARTITION_INTERVAL_BLOCK, owner);
        const int64_t interval = bicut_balance_cost(&demand, owner);
        partition_hash(n, ranks, owner);
        const int64_t hash = bicut_balance_cost(&demand, owner);
        printf("reflexbicut_vs_baselines: R = %d: ζ re-flexbicut %lld (partition stage %lld, %lld moves), range %lld, "
               "interval %lld, hash %lld\n",
               ranks, (long long)ours, (long long)stats.initial_cost, (long long)stats.moves, (long long)range,
               (long long)interval, (long long)hash);
        ck_assert_int_le(ours, range);
        ck_assert_int_le(ours, interval);
        ck_assert_int_le(ours, hash);
        bicut_stats_free(&stats);
        bicut_demand_free(&demand);
    }
    bicut_demand bad;
    EXPECT_INPUT_ERROR(partition_event_demand(es, &history, 0, es->num_events + 1, 100, 4, 10, &bad, &err), &err,
                       "inside 0..20000");
    free(owner);
    temporal_csr_free(&history);
    dataset_free(&d);
}
END_TEST

/* ---- closure and metrics -------------------------------------------------------------------- */

START_TEST(closure)
{
    dataset d;
    const snapshot_seq *seq = load_snapshots(generated_spec, &d);
    const int64_t n = seq->num_nodes;
    csr in_union;
    tf_error err;
    ck_assert_int_eq(partition_in_union(seq, &in_union, &err), TF_OK);
    uint8_t *start = calloc((size_t)n, 1), *member = calloc((size_t)n, 1), *naive = calloc((size_t)n, 1),
            *grown = calloc((size_t)n, 1);
    int32_t *queue = malloc((size_t)n * sizeof *queue);
    for (int64_t v = 0; v < n; v += 9)
        start[v] = 1;
    for (int depth = 0; depth <= 3; depth++) {
        const int64_t count = partition_in_closure(&in_union, start, depth, member, queue);
        /* Naive: depth rounds, each adding the sources of every in-edge, in every snapshot, into the set. */
        memcpy(naive, start, (size_t)n);
        for (int hop = 0; hop < depth; hop++) {
            memcpy(grown, naive, (size_t)n);
            for (int64_t t = 0; t < seq->num_snapshots; t++) {
                const csr *g = &seq->snapshots[t].graph;
                for (int64_t v = 0; v < n; v++)
                    if (naive[v])
                        for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++)
                            grown[g->col[e]] = 1;
            }
            memcpy(naive, grown, (size_t)n);
        }
        int64_t naive_count = 0;
        for (int64_t v = 0; v < n; v++)
            naive_count += naive[v];
        printf("closure: %d hops from every 9th vertex: %lld vertices (naive scan %lld)\n", depth, (long long)count,
               (long long)naive_count);
        ck_assert_int_eq(memcmp(member, naive, (size_t)n), 0);
        ck_assert_int_eq(count, naive_count);
    }
    free(start);
    free(member);
    free(naive);
    free(grown);
    free(queue);
    csr_free(&in_union);
    dataset_free(&d);
}
END_TEST

START_TEST(metrics)
{
    /* Owners (0, 0, 0, 1, 1, 1). H_0 = {3, 4} (3 -> 1, 4 -> 1, 3 -> 2); H_1 = {1, 2} (1 -> 4, 2 -> 5);
     * cut: those five of seven edges. */
    const int32_t edges[][2] = {{0, 1}, {3, 1}, {4, 1}, {3, 2}, {1, 4}, {2, 5}, {5, 3}};
    const int counts[] = {7};
    snapshot_seq seq;
    crafted(&seq, 6, 1, edges, counts);
    const int32_t owner[6] = {0, 0, 0, 1, 1, 1};
    partition_metrics m;
    tf_error err;
    ck_assert_int_eq(partition_measure(&seq, owner, 2, 1, 0, MODEL_TGCN, &m, &err), TF_OK);
    printf("metrics: hand-counted graph: cut %lld of %lld, halo rows %lld (%lld + %lld), replication at depth 0 %.2f\n",
           (long long)m.cut_edges, (long long)m.total_edges, (long long)m.halo_rows, (long long)m.rank_halo[0],
           (long long)m.rank_halo[1], m.replication);
    ck_assert(m.cut_edges == 5 && m.total_edges == 7 && m.halo_rows == 4 && m.rank_halo[0] == 2 && m.rank_halo[1] == 2);
    ck_assert(m.replication == 1.0 && m.vertices_min == 3 && m.vertices_max == 3);
    partition_metrics_free(&m);
    /* Depth 1: rank 0 caches {3, 4}, rank 1 caches {1, 2}: replication (5 + 5) / 6. */
    ck_assert_int_eq(partition_measure(&seq, owner, 2, 1, 1, MODEL_TGCN, &m, &err), TF_OK);
    ck_assert(m.rank_cache[0] == 5 && m.rank_cache[1] == 5);
    const int64_t along[2] = {m.rank_cache[0], m.rank_cache[1]};
    partition_metrics_free(&m);
    /* DCRNN's backward walk reads out-neighbours too: rank 0 adds 5 (2 -> 5), rank 1 nothing new
     * (its out-neighbours 1 and 2 are its in-neighbours): 6 and 5. */
    ck_assert_int_eq(partition_measure(&seq, owner, 2, 1, 1, MODEL_DCRNN, &m, &err), TF_OK);
    printf("metrics: depth 1 caches: %lld and %lld rows along in-edges (T-GCN), %lld and %lld both ways (DCRNN)\n",
           (long long)along[0], (long long)along[1], (long long)m.rank_cache[0], (long long)m.rank_cache[1]);
    ck_assert(m.rank_cache[0] == 6 && m.rank_cache[1] == 5);
    partition_metrics_free(&m);
    snapshot_seq_free(&seq);
}
END_TEST

/* ---- chapter 06's example --------------------------------------------------------------------- */

/* Sven's demand on the example: trainer j takes snapshot j's edges as its events, and reads or
 * writes the memory of both ends of each: omega(j, v) = v's degree (in + out) in snapshot j. */
static void example_demand(bicut_demand *d)
{
    tf_error err;
    ck_assert_int_eq(bicut_demand_alloc(d, EXAMPLE_SNAPSHOTS, EXAMPLE_VERTICES, &err), TF_OK);
    for (int t = 0; t < EXAMPLE_SNAPSHOTS; t++)
        for (int e = 0; e < EXAMPLE_EDGES; e++) {
            d->weight[t * EXAMPLE_VERTICES + example_edges[t][e][0]]++;
            d->weight[t * EXAMPLE_VERTICES + example_edges[t][e][1]]++;
        }
}

/* Every partitioner on chapter 06's eight vertices, two snapshots, two ranks: the owners, the cut
 * and the load per rank that chapters/06a-partitioners.md works out by hand and its picture shows. */
START_TEST(chapter_example)
{
    snapshot_seq seq;
    example_sequence(&seq);
    bicut_demand demand;
    example_demand(&demand);
    tf_error err;
    /* DGC's chunks first: the union graph (T-GCN's weight, 1 float a forward halo row) under a cap of
     * 4 units (two vertices present twice) pairs {0, 1}, {2, 3}, {4, 5}, {6, 7}. */
    partition_graph union_graph;
    ck_assert_int_eq(partition_union_graph(&seq, 1, &union_graph, &err), TF_OK);
    int32_t label[EXAMPLE_VERTICES];
    ck_assert_int_eq(ref_label_propagation(&union_graph, 4, LABEL_PROPAGATION_MAX_SWEEPS, label, NULL, &err), TF_OK);
    printf("chapter_example: DGC's chunks under a cap of 4 units: labels");
    for (int v = 0; v < EXAMPLE_VERTICES; v++)
        printf(" %d", label[v]);
    printf("\n");
    for (int v = 0; v < EXAMPLE_VERTICES; v++) /* partners 0-1, 2-3, 4-5, 6-7 share a label, no one else */
        for (int u = 0; u < EXAMPLE_VERTICES; u++)
            ck_assert_msg((label[u] == label[v]) == (u / 2 == v / 2), "vertices %d and %d", u, v);
    partition_graph_free(&union_graph);

    const partition_method methods[] = {PARTITION_HASH, PARTITION_PTS,  PARTITION_METIS,
                                        PARTITION_DYNAHB, PARTITION_DGC, PARTITION_REFLEXBICUT};
    /* By hand (the chapter): hash v mod 2; pts the id halves; METIS the two groups (which group is
     * rank 0 is METIS's choice); DynaHB the serpentine deal of the loads (6, 3, 4, 2, 2, 2, 2, 1);
     * DGC the chunks {0, 1} and {4, 5} on rank 0, {2, 3} and {6, 7} on rank 1; Re-FlexBiCut each
     * vertex on the trainer that reads it more, ties to rank 0. */
    const int32_t expected[6][EXAMPLE_VERTICES] = {{0, 1, 0, 1, 0, 1, 0, 1}, {0, 0, 0, 0, 1, 1, 1, 1},
                                                   {0, 0, 1, 1, 0, 0, 1, 1}, {0, 1, 1, 0, 0, 1, 1, 0},
                                                   {0, 0, 1, 1, 0, 0, 1, 1}, {0, 0, 1, 1, 1, 0, 0, 1}};
    const int64_t expected_cut[6] = {17, 12, 2, 15, 2, 10};
    const int64_t expected_load[6][2] = {{14, 8}, {15, 7}, {13, 9}, {11, 11}, {13, 9}, {13, 9}};
    const int64_t expected_cap[6] = {23, 24, 24, 25, 20, 18};
    for (int m = 0; m < 6; m++) {
        int32_t owner[EXAMPLE_VERTICES];
        if (methods[m] == PARTITION_REFLEXBICUT) {
            ck_assert_int_eq(ref_reflexbicut(&demand, owner, NULL, &err), TF_OK);
        } else {
            partition_options o;
            partition_options_default(&o);
            o.ranks = 2;
            o.chunk_cap = 4;
            partition p;
            ck_assert_msg(ref_partition_snapshots(&seq, methods[m], &o, &p, &err) == TF_OK, "%s", err.message);
            memcpy(owner, p.vertex_owner, sizeof owner);
            partition_free(&p);
        }
        partition_metrics metrics;
        ck_assert_int_eq(partition_measure(&seq, owner, 2, 1, 1, MODEL_TGCN, &metrics, &err), TF_OK);
        int64_t caps[2];
        bicut_costs(&demand, owner, caps, caps);
        printf("chapter_example: %-11s owners", partition_method_name(methods[m]));
        for (int v = 0; v < EXAMPLE_VERTICES; v++)
            printf(" %d", owner[v]);
        printf("; cut %lld of %lld; load %lld / %lld; halo rows %lld; cache rows %lld / %lld; Sven's cap %lld / %lld\n",
               (long long)metrics.cut_edges, (long long)metrics.total_edges, (long long)metrics.rank_load[0],
               (long long)metrics.rank_load[1], (long long)metrics.halo_rows, (long long)metrics.rank_cache[0],
               (long long)metrics.rank_cache[1], (long long)caps[0], (long long)caps[1]);
        const int swapped = methods[m] == PARTITION_METIS && owner[0] == 1; /* METIS may name the groups the other way */
        for (int v = 0; v < EXAMPLE_VERTICES; v++)
            ck_assert_msg(owner[v] == (swapped ? 1 - expected[m][v] : expected[m][v]), "%s: vertex %d on rank %d",
                          partition_method_name(methods[m]), v, owner[v]);
        ck_assert_int_eq(metrics.cut_edges, expected_cut[m]);
        ck_assert_int_eq(metrics.total_edges, 2 * EXAMPLE_EDGES);
        ck_assert_int_eq(metrics.rank_load[swapped], expected_load[m][0]);
        ck_assert_int_eq(metrics.rank_load[1 - swapped], expected_load[m][1]);
        ck_assert(caps[0] == expected_cap[m] && caps[1] == expected_cap[m]); /* two ranks: received by one, served by the other */
        partition_metrics_free(&metrics);
    }
    bicut_demand_free(&demand);
    snapshot_seq_free(&seq);
}
END_TEST

/* ---- DySAT's temporal traffic beside a recurrence's ------------------------------------------- */

/* The floats of one row, from the models' equations (chapters/01a-snapshot-models.md), not the library's table:
 * T-GCN fetches X_t (F) for A^ X_t and sends its GRU state H and its gradient (2H); DySAT fetches X_t for
 * its GAT and sends Z and its gradient (2H), read by every later snapshot of the window. */
static void row_floats(model_kind kind, int64_t f, int64_t h, int64_t *spatial, int64_t *temporal, int *window)
{
    *spatial = f;
    *temporal = 2 * h;
    *window = kind == MODEL_DYSAT;
}

/* The same bytes by enumeration: a set of (t, u, reading rank) halo rows and one of (tau, v, reading rank)
 * temporal rows, each a flag in an array [T][N][R], filled from every edge and every (tau, t) pair. */
static void enumerate_traffic(const snapshot_seq *seq, const int32_t *owner, int ranks, model_kind kind, int64_t h,
                              int64_t window, int64_t *spatial_bytes, int64_t *temporal_bytes)
{
    const int64_t n = seq->num_nodes, steps = seq->num_snapshots;
    uint8_t *halo = calloc((size_t)(steps * n * ranks), 1), *read = calloc((size_t)(steps * n * ranks), 1);
    int64_t spatial_floats, temporal_floats, halo_rows = 0, temporal_rows = 0;
    int whole_window;
    row_floats(kind, seq->feature_width, h, &spatial_floats, &temporal_floats, &whole_window);
    for (int64_t t = 0; t < steps; t++) {
        const csr *g = &seq->snapshots[t].graph;
        for (int64_t v = 0; v < n; v++)
            for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++) {
                const int32_t u = g->col[e], r = owner[t * n + v];
                if (r >= 0 && owner[t * n + u] != r)
                    halo[(t * n + u) * ranks + r] = 1;
            }
        const int64_t first = t - t % window; /* the window of t */
        for (int64_t v = 0; v < n; v++)
            for (int64_t tau = whole_window ? first : t - 1; tau < t; tau++) {
                const int32_t r = owner[t * n + v], mine = tau >= first ? owner[tau * n + v] : -1;
                if (tau >= first && r >= 0 && mine >= 0 && mine != r && seq->snapshots[t].present[v] &&
                    seq->snapshots[tau].present[v])
                    read[(tau * n + v) * ranks + r] = 1;
            }
    }
    for (int64_t i = 0; i < steps * n * ranks; i++) {
        halo_rows += halo[i];
        temporal_rows += read[i];
    }
    *spatial_bytes = halo_rows * spatial_floats * 4;
    *temporal_bytes = temporal_rows * temporal_floats * 4;
    free(halo);
    free(read);
}

START_TEST(split_traffic)
{
    tf_error err;
    /* By hand: two vertices, an edge 0 -> 1 in each of 4 snapshots, H = 8 (2H = 16 floats a temporal row), F = 1. */
    const int32_t edges[][2] = {{0, 1}, {0, 1}, {0, 1}, {0, 1}};
    const int counts[] = {1, 1, 1, 1};
    snapshot_seq seq;
    crafted(&seq, 2, 4, edges, counts);
    const model_config tgcn = {MODEL_TGCN, 1, 8, 1, 2, 0}, dysat = {MODEL_DYSAT, 1, 8, 1, 2, 0};
    /* PSS, snapshots (0, 0, 1, 1), one window of 4: DySAT's rank 1 reads both vertices' rows of snapshots 0 and 1
     * (4 rows, 256 bytes); T-GCN's GRU only snapshot 1's (2 rows, 128 bytes); no edge crosses ranks. Windows of 2:
     * no window spans both ranks, nothing moves. Then (t, v) owners (0, 1, 1, 0) in time: DySAT 3 rows a vertex
     * (0 read by rank 1, 1 and 2 by rank 0; each once however many later snapshots read it), T-GCN 2 (0 -> 1,
     * 2 -> 3); every snapshot's one edge stays inside a rank. PTS (vertex 0 on rank 0, 1 on rank 1): the edge
     * crosses in every snapshot, 4 rows of F = 1 float (16 bytes); no temporal traffic. */
    const int32_t pss[8] = {0, 0, 0, 0, 1, 1, 1, 1}, alternating[8] = {0, 0, 1, 1, 1, 1, 0, 0},
                  pts[8] = {0, 1, 0, 1, 0, 1, 0, 1};
    const struct {
        const int32_t *owner;
        int64_t window, spatial, dysat_temporal, tgcn_temporal;
    } cases[] = {{pss, 4, 0, 256, 128}, {pss, 2, 0, 0, 0}, {alternating, 4, 0, 384, 256}, {pts, 4, 16, 0, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int64_t spatial[2], temporal[2];
        ck_assert_int_eq(partition_split_traffic(&seq, cases[i].owner, 2, &dysat, cases[i].window, &spatial[0],
                                                 &temporal[0], &err), TF_OK);
        ck_assert_int_eq(partition_split_traffic(&seq, cases[i].owner, 2, &tgcn, cases[i].window, &spatial[1],
                                                 &temporal[1], &err), TF_OK);
        printf("split_traffic: hand case %zu (window %lld): dysat spatial %lld temporal %lld, tgcn spatial %lld "
               "temporal %lld bytes (expected %lld, %lld, %lld, %lld)\n", i, (long long)cases[i].window,
               (long long)spatial[0], (long long)temporal[0], (long long)spatial[1], (long long)temporal[1],
               (long long)cases[i].spatial, (long long)cases[i].dysat_temporal, (long long)cases[i].spatial,
               (long long)cases[i].tgcn_temporal);
        ck_assert(spatial[0] == cases[i].spatial && spatial[1] == cases[i].spatial);
        ck_assert(temporal[0] == cases[i].dysat_temporal && temporal[1] == cases[i].tgcn_temporal);
    }
    snapshot_seq_free(&seq);
    /* Generated data with arrivals, every split kind on 3 ranks, windows of 6 (so that PSS's blocks of 4 snapshots
     * split windows): the library against enumeration. */
    dataset d;
    ck_assert_int_eq(dataset_load(generated_spec, NULL, &d, &err), TF_OK);
    const snapshot_seq *g = &d.snapshots;
    const partition_method methods[] = {PARTITION_PSS, PARTITION_PTS, PARTITION_DGC, PARTITION_DGC_ST, PARTITION_HASH};
    int32_t *owner = malloc((size_t)(g->num_snapshots * g->num_nodes) * sizeof *owner);
    for (size_t m = 0; m < sizeof methods / sizeof *methods; m++) {
        partition_options o;
        partition_options_default(&o);
        o.ranks = 3;
        o.model = dysat;
        partition p;
        ck_assert_int_eq(ref_partition_snapshots(g, methods[m], &o, &p, &err), TF_OK);
        partition_step_owners(&p, owner);
        const model_config *models[] = {&tgcn, &dysat};
        for (int k = 0; k < 2; k++) {
            int64_t spatial, temporal, expected_spatial, expected_temporal;
            ck_assert_int_eq(partition_split_traffic(g, owner, 3, models[k], 6, &spatial, &temporal, &err), TF_OK);
            enumerate_traffic(g, owner, 3, models[k]->kind, models[k]->hidden, 6, &expected_spatial, &expected_temporal);
            printf("split_traffic: %-6s %-5s R 3: spatial %lld, temporal %lld bytes; enumerated %lld, %lld\n",
                   partition_method_name(methods[m]), model_kind_name(models[k]->kind), (long long)spatial,
                   (long long)temporal, (long long)expected_spatial, (long long)expected_temporal);
            ck_assert(spatial == expected_spatial && temporal == expected_temporal);
            ck_assert(methods[m] != PARTITION_PSS || (spatial == 0 && temporal > 0));
            ck_assert(p.step_owner || methods[m] == PARTITION_PSS || temporal == 0);
        }
        partition_free(&p);
    }
    free(owner);
    dataset_free(&d);
}
END_TEST

/* ---- the bundled data (suite partition_real_data, label slow) -------------------------------- */

START_TEST(real_data)
{
    const char *names[] = {"twitter_tennis", "england_covid"};
    tf_error err;
    for (int i = 0; i < 2; i++) {
        dataset d;
        const snapshot_seq *seq = load_snapshots(names[i], &d);
        for (int ranks = 2; ranks <= 8; ranks *= 2) {
            partition_options o;
            partition_options_default(&o);
            o.ranks = ranks;
            partition metis, hash;
            ck_assert_int_eq(ref_partition_snapshots(seq, PARTITION_METIS, &o, &metis, &err), TF_OK);
            ck_assert_int_eq(ref_partition_snapshots(seq, PARTITION_HASH, &o, &hash, &err), TF_OK);
            partition_metrics a, b;
            ck_assert_int_eq(partition_measure(seq, metis.vertex_owner, ranks, 1, 0, MODEL_TGCN, &a, &err), TF_OK);
            ck_assert_int_eq(partition_measure(seq, hash.vertex_owner, ranks, 1, 0, MODEL_TGCN, &b, &err), TF_OK);
            printf("real_data: %s R = %d: METIS cut %lld, hash cut %lld of %lld\n", names[i], ranks,
                   (long long)a.cut_edges, (long long)b.cut_edges, (long long)a.total_edges);
            ck_assert_int_lt(a.cut_edges, b.cut_edges);
            partition_metrics_free(&a);
            partition_metrics_free(&b);
            partition_free(&metis);
            partition_free(&hash);
        }
        if (i == 0) {
            partition_options o;
            partition_options_default(&o);
            o.ranks = 4;
            partition steps;
            ck_assert_int_eq(ref_partition_snapshots(seq, PARTITION_DGC_ST, &o, &steps, &err), TF_OK);
            int64_t spatial, temporal;
            double work[4];
            ck_assert_int_eq(partition_dgc_steps_costs(seq, &o, steps.step_owner, &spatial, &temporal, work, &err),
                             TF_OK);
            printf("real_data: twitter_tennis dgc-st on 4 ranks: spatial cut %lld, temporal cut %lld, work per rank "
                   "%.3g %.3g %.3g %.3g\n",
                   (long long)spatial, (long long)temporal, work[0], work[1], work[2], work[3]);
            partition_free(&steps);
        }
        dataset_free(&d);
    }
}
END_TEST

/* Every model of the table has a cost for the partitioners (ref/models/model.c's #model_info::cost),
 * and it moves as its equations say: more FLOPs with a wider state, and with K where the model takes
 * K, and with L where it stacks pairs; a model with a graph convolution fetches floats for a halo row;
 * the chunk costs and the exchange traffic are that one entry. */
START_TEST(model_costs)
{
    for (int kind = 0; kind < MODEL_COUNT; kind++) {
        const model_info *info = model_info_of((model_kind)kind);
        model_config c = {(model_kind)kind, 4, 8, 1, 2, 0}, wider = c, deeper = c, stacked = c;
        wider.hidden = 16;
        deeper.chebyshev_k = 3;
        stacked.layers = 3;
        model_cost cost, cost_wider, cost_deeper, cost_stacked;
        info->cost(&c, &cost);
        info->cost(&wider, &cost_wider);
        info->cost(&deeper, &cost_deeper);
        info->cost(&stacked, &cost_stacked);
        chunk_cost_model chunk;
        chunk_cost_model_for(&c, &chunk);
        int64_t forward, backward, temporal;
        partition_model_traffic(&c, &forward, &backward, &temporal);
        printf("cost %-10s %9.0f multiply-adds a vertex-step, halo row %lld forward %lld backward, state %lld; "
               "H 16: %.0f; K 3: %.0f; L 3: %.0f\n", model_kind_name((model_kind)kind), cost.flops,
               (long long)cost.forward, (long long)cost.backward, (long long)cost.temporal, cost_wider.flops,
               cost_deeper.flops, cost_stacked.flops);
        ck_assert_msg(cost.flops > 0 && cost.forward > 0 && cost.backward >= 0 && cost.temporal >= 0, "%s",
                      model_kind_name((model_kind)kind));
        ck_assert_msg(chunk.per_vertex_step == cost.flops && chunk.per_edge == (double)(cost.forward + cost.backward) &&
                          forward == cost.forward && backward == cost.backward && temporal == cost.temporal,
                      "%s: the partitioners do not read the table's cost", model_kind_name((model_kind)kind));
        if (info->takes & MODEL_TAKES_HIDDEN)
            ck_assert_msg(cost_wider.flops > cost.flops && cost_wider.temporal > cost.temporal, "%s: H",
                          model_kind_name((model_kind)kind));
        if (info->takes & MODEL_TAKES_K)
            ck_assert_msg(cost_deeper.flops > cost.flops && cost_deeper.forward > cost.forward, "%s: K",
                          model_kind_name((model_kind)kind));
        else
            ck_assert_msg(cost_deeper.flops == cost.flops, "%s: K moved a model without K", model_kind_name((model_kind)kind));
        if (info->takes & MODEL_TAKES_LAYERS)
            ck_assert_msg(cost_stacked.flops > cost.flops && cost_stacked.forward > cost.forward, "%s: L",
                          model_kind_name((model_kind)kind));
    }
}
END_TEST

/* Two suites; verify/CMakeLists.txt runs each as its own test (CK_RUN_SUITE): "partition" on
 * crafted and generated data (label unit) and "partition_real_data" on bundled datasets (slow). */
int main(void)
{
    const named_test generated[] = {{"validity", validity},
                                    {"dynahb_walks", dynahb_walks},
                                    {"dynahb_example_3", dynahb_example_3},
                                    {"dynahb_balance", dynahb_balance},
                                    {"dynahb_overflow", dynahb_overflow},
                                    {"metis", metis},
                                    {"label_propagation", label_propagation},
                                    {"chunk_assign", chunk_assign},
                                    {"reflexbicut_brute_force", reflexbicut_brute_force},
                                    {"reflexbicut_vs_baselines", reflexbicut_vs_baselines},
                                    {"closure", closure},
                                    {"metrics", metrics},
                                    {"chapter_example", chapter_example},
                                    {"split_traffic", split_traffic},
                                    {"model_costs", model_costs}};
    const named_test real[] = {{"real_data", real_data}};
    return run_suites(suite_of("partition", generated, sizeof generated / sizeof *generated, 300),
                      suite_of("partition_real_data", real, sizeof real / sizeof *real, 300));
}
