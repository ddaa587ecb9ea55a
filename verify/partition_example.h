/* Chapter 06's example, shared by verify/test_partition.c (chapters/06a-partitioners.md: what each
 * partitioner makes of it) and verify/test_partition_part.c (chapters/06b-partitioned-training.md:
 * one exchange-mode product worked with numbers). Eight vertices, two snapshots, drawn by
 * chapters/06a-partitioners-idea.py: two groups, {0, 1, 4, 5} and {2, 3, 6, 7}, joined by one
 * edge a snapshot (2 -> 1, then 3 -> 4); vertex 0 is the hub every snapshot (three in-edges).
 * Every vertex present; one feature, x_v = v + 1, the same in both snapshots; targets 0. */
#ifndef TWOFOLD_VERIFY_PARTITION_EXAMPLE_H
#define TWOFOLD_VERIFY_PARTITION_EXAMPLE_H

#include <check.h>

#include "ref/data/snapshot.h"

enum { EXAMPLE_VERTICES = 8, EXAMPLE_SNAPSHOTS = 2, EXAMPLE_EDGES = 11 };

/* (source, destination) of each snapshot's edges, in the order the chapter lists them. */
static const int32_t example_edges[EXAMPLE_SNAPSHOTS][EXAMPLE_EDGES][2] = {
    {{1, 0}, {4, 0}, {5, 0}, {5, 1}, {2, 1}, {0, 5}, {4, 5}, {3, 2}, {6, 2}, {7, 6}, {6, 3}},
    {{1, 0}, {4, 0}, {5, 0}, {0, 1}, {1, 4}, {3, 4}, {3, 2}, {7, 2}, {2, 6}, {6, 7}, {2, 3}},
};

static inline void example_sequence(snapshot_seq *seq)
{
    tf_error err;
    ck_assert_int_eq(snapshot_seq_alloc(seq, EXAMPLE_SNAPSHOTS, EXAMPLE_VERTICES, 1, 1, &err), TF_OK);
    for (int t = 0; t < EXAMPLE_SNAPSHOTS; t++) {
        int32_t src[EXAMPLE_EDGES], dst[EXAMPLE_EDGES];
        for (int e = 0; e < EXAMPLE_EDGES; e++) {
            src[e] = example_edges[t][e][0];
            dst[e] = example_edges[t][e][1];
        }
        ck_assert_int_eq(snapshot_seq_set_edges(seq, t, EXAMPLE_EDGES, src, dst, NULL, &err), TF_OK);
        for (int v = 0; v < EXAMPLE_VERTICES; v++) {
            seq->snapshots[t].present[v] = 1;
            seq->snapshots[t].features.data[v] = (float)(v + 1);
            seq->snapshots[t].targets.data[v] = 0.0f;
        }
    }
}

#endif
