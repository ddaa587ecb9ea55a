/* PSS-TS's shuffle of A^ X_t from the snapshot owners to the vertex owners (opt/partition_shuffle.h). */
#include "opt/partition_shuffle.h"

#include <stdlib.h>
#include <string.h>

#include "opt/kernels.h"
#include "ref/core/clock.h"
#include "ref/core/memory.h"

/* input_aggregations::get: t's owner computes A^ X_t and sends every rank its rows, out [owned][F]. */
static int shuffled_aggregation(void *context, int64_t t, float *out, tf_error *err)
{
    partition_shuffle *s = context;
    const int ranks = s->group->size, me = s->group->rank, source = s->snapshot_owner[t];
    const int64_t f = s->features;
    int64_t *send_counts = s->counts, *send_offsets = s->counts + ranks, *receive_counts = s->counts + 2 * ranks,
            *receive_offsets = s->counts + 3 * ranks;
    if (me == source) {
        opt_propagate_forward(&s->operators[t], s->inputs[t], f, s->aggregated);
        for (int64_t i = 0; i < s->num_nodes; i++)
            memcpy(s->send + i * f, s->aggregated + (int64_t)s->order[i] * f, (size_t)f * sizeof(float));
    }
    int64_t *sending = s->counts + 4 * ranks, *at = sending + ranks; /* this call's counts in floats */
    for (int p = 0; p < ranks; p++) {
        sending[p] = me == source ? send_counts[p] * f : 0;
        at[p] = send_offsets[p] * f;
        receive_counts[p] = p == source ? s->owned * f : 0;
        receive_offsets[p] = 0;
    }
    if (ranks == 1) { /* everything is this rank's: no collective (and no MPI needed) */
        memcpy(out, s->send, (size_t)(s->owned * f) * sizeof(float));
        return TF_OK;
    }
    uint64_t *outer = comm_charge(s->group, &s->bytes);
    const double cpu_before = thread_cpu_seconds();
    int status = comm_alltoallv(s->group, s->send, sending, at, out, receive_counts, receive_offsets, sizeof(float), err);
    comm_charge(s->group, outer);
    s->cpu_seconds += thread_cpu_seconds() - cpu_before;
    return status;
}

void partition_shuffle_free(partition_shuffle *s)
{
    for (int64_t t = 0; t < s->num_snapshots; t++) {
        if (s->operators)
            ref_propagation_free(&s->operators[t]);
        if (s->graphs)
            csr_free(&s->graphs[t]);
        if (s->inputs)
            free(s->inputs[t]);
    }
    free(s->operators);
    free(s->graphs);
    free(s->inputs);
    free(s->snapshot_owners);
    free(s->order);
    free(s->counts);
    free(s->aggregated);
    free(s->send);
    memset(s, 0, sizeof *s);
}

int partition_shuffle_create(partition_shuffle *s, comm *group, const snapshot_seq *seq, const int32_t *snapshot_owner,
                             const int32_t *vertex_owner, tf_error *err)
{
    memset(s, 0, sizeof *s);
    const int64_t n = seq->num_nodes, steps = seq->num_snapshots, f = seq->feature_width;
    const int ranks = group->size, me = group->rank;
    s->group = group;
    s->num_nodes = n;
    s->num_snapshots = steps;
    s->features = f;
    s->snapshot_owners = tf_alloc((size_t)steps, sizeof(int32_t), "shuffle", err);
    s->order = s->snapshot_owners ? tf_alloc((size_t)n, sizeof(int32_t), "shuffle", err) : NULL;
    s->counts = s->order ? tf_alloc((size_t)(6 * ranks), sizeof(int64_t), "shuffle", err) : NULL;
    s->graphs = s->counts ? tf_alloc((size_t)steps, sizeof(csr), "shuffle", err) : NULL;
    s->operators = s->graphs ? tf_alloc((size_t)steps, sizeof(propagation), "shuffle", err) : NULL;
    s->inputs = s->operators ? tf_alloc((size_t)steps, sizeof(float *), "shuffle", err) : NULL;
    s->aggregated = s->inputs ? tf_alloc((size_t)(n * f), sizeof(float), "shuffle", err) : NULL;
    s->send = s->aggregated ? tf_alloc((size_t)(n * f), sizeof(float), "shuffle", err) : NULL;
    int status = s->send ? TF_OK : TF_ERR_INPUT;
    for (int64_t t = 0; status == TF_OK && t < steps; t++)
        if (snapshot_owner[t] < 0 || snapshot_owner[t] >= ranks)
            status = tf_error_set(err, TF_ERR_INPUT, "shuffle: snapshot %lld has owner %d, expected 0..%d", (long long)t,
                                  snapshot_owner[t], ranks - 1);
    if (status == TF_OK) {
        memcpy(s->snapshot_owners, snapshot_owner, (size_t)steps * sizeof(int32_t));
        s->snapshot_owner = s->snapshot_owners;
        int64_t next = 0;
        for (int p = 0; p < ranks; p++) { /* grouped by owner, by id within */
            s->counts[ranks + p] = next;
            for (int64_t v = 0; v < n; v++)
                if (vertex_owner[v] == p)
                    s->order[next++] = (int32_t)v;
            s->counts[p] = next - s->counts[ranks + p];
        }
        s->owned = s->counts[me];
    }
    for (int64_t t = 0; status == TF_OK && t < steps; t++) {
        if (snapshot_owner[t] != me)
            continue;
        status = csr_copy(&s->graphs[t], &seq->snapshots[t].graph, err);
        if (status == TF_OK)
            status = ref_propagation_gcn(&s->operators[t], &s->graphs[t], EDGE_NORM_SYMMETRIC, 1, err);
        if (status == TF_OK && !(s->inputs[t] = tf_alloc((size_t)(n * f), sizeof(float), "shuffle inputs", err)))
            status = TF_ERR_INPUT;
        if (status == TF_OK)
            memcpy(s->inputs[t], seq->snapshots[t].features.data, (size_t)(n * f) * sizeof(float));
    }
    s->source = (input_aggregations){shuffled_aggregation, s};
    if (status != TF_OK)
        partition_shuffle_free(s);
    return status;
}
