#include "ref/data/snapshot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"

int snapshot_seq_alloc(snapshot_seq *seq, int64_t num_snapshots, int64_t num_nodes,
                       int64_t feature_width, int64_t target_width, tf_error *err)
{
    memset(seq, 0, sizeof *seq);
    if (num_snapshots < 0 || num_nodes < 0 || feature_width < 0 || target_width < 0)
        return tf_error_set(err, TF_ERR_INPUT, "snapshot sequence: negative size");
    /* Each snapshot is allocated on its own; check the whole before starting. */
    double bytes = (double)num_snapshots * ((double)num_nodes * (double)(feature_width + target_width) * 4.0 +
                                            (double)num_nodes * 9.0 + sizeof(snapshot));
    if (tf_check_memory(bytes, "the snapshots", err) != TF_OK)
        return TF_ERR_INPUT;
    seq->snapshots = tf_alloc((size_t)num_snapshots, sizeof *seq->snapshots, "snapshots", err);
    if (!seq->snapshots)
        return TF_ERR_INPUT;
    seq->num_snapshots = num_snapshots;
    seq->num_nodes = num_nodes;
    seq->feature_width = feature_width;
    seq->target_width = target_width;
    for (int64_t t = 0; t < num_snapshots; t++) {
        snapshot *s = &seq->snapshots[t];
        if (csr_from_edges(&s->graph, num_nodes, 0, NULL, NULL, NULL, err) != TF_OK ||
            tensor_alloc_2d(&s->features, num_nodes, feature_width, err) != TF_OK ||
            tensor_alloc_2d(&s->targets, num_nodes, target_width, err) != TF_OK ||
            !(s->present = tf_alloc((size_t)num_nodes, 1, "vertex presence masks", err))) {
            snapshot_seq_free(seq);
            return TF_ERR_INPUT;
        }
        memset(s->present, 1, (size_t)num_nodes);
    }
    return TF_OK;
}

int snapshot_seq_set_edges(snapshot_seq *seq, int64_t t, int64_t num_edges, const int32_t *src,
                           const int32_t *dst, const float *weight, tf_error *err)
{
    if (t < 0 || t >= seq->num_snapshots)
        return tf_error_set(err, TF_ERR_INPUT, "snapshot %lld does not exist (0..%lld)", (long long)t,
                            (long long)seq->num_snapshots - 1);
    csr built;
    if (csr_from_edges(&built, seq->num_nodes, num_edges, src, dst, weight, err) != TF_OK)
        return TF_ERR_INPUT;
    csr_free(&seq->snapshots[t].graph);
    seq->snapshots[t].graph = built;
    return TF_OK;
}

void snapshot_seq_free(snapshot_seq *seq)
{
    if (seq->snapshots)
        for (int64_t t = 0; t < seq->num_snapshots; t++) {
            csr_free(&seq->snapshots[t].graph);
            tensor_free(&seq->snapshots[t].features);
            tensor_free(&seq->snapshots[t].targets);
            free(seq->snapshots[t].present);
            free(seq->snapshots[t].labels);
        }
    free(seq->snapshots);
    memset(seq, 0, sizeof *seq);
}

int snapshot_seq_alloc_labels(snapshot_seq *seq, int64_t num_classes, tf_error *err)
{
    if (num_classes < 2 || num_classes > INT32_MAX)
        return tf_error_set(err, TF_ERR_INPUT, "%lld classes, expected 2 or more", (long long)num_classes);
    for (int64_t t = 0; t < seq->num_snapshots; t++) {
        int32_t *labels = tf_alloc((size_t)seq->num_nodes + 1, sizeof *labels, "labels", err);
        if (!labels)
            return TF_ERR_INPUT;
        for (int64_t v = 0; v < seq->num_nodes; v++)
            labels[v] = SNAPSHOT_UNLABELLED;
        free(seq->snapshots[t].labels);
        seq->snapshots[t].labels = labels;
    }
    seq->num_classes = num_classes;
    return TF_OK;
}

/* Labels of snapshot t of seq in range, none on an absent vertex. */
static int validate_labels(const snapshot_seq *seq, int64_t t, const char *source, tf_error *err)
{
    const snapshot *s = &seq->snapshots[t];
    if (!seq->num_classes != !s->labels)
        return tf_error_set(err, TF_ERR_INPUT, "%s: snapshot %lld: labels %s, but %lld classes", source, (long long)t,
                            s->labels ? "given" : "missing", (long long)seq->num_classes);
    for (int64_t v = 0; s->labels && v < seq->num_nodes; v++) {
        const int32_t label = s->labels[v];
        if (label != SNAPSHOT_UNLABELLED && (label < 0 || label >= seq->num_classes || !s->present[v]))
            return tf_error_set(err, TF_ERR_INPUT, "%s: snapshot %lld: vertex %lld has label %d, expected 0..%lld on a "
                                "present vertex or %d (unlabelled)", source, (long long)t, (long long)v, label,
                                (long long)seq->num_classes - 1, SNAPSHOT_UNLABELLED);
    }
    return TF_OK;
}

/* The index of the first non-finite value of values [n], or -1. */
static int64_t first_non_finite(const float *values, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(values[i]))
            return i;
    return -1;
}

int snapshot_seq_validate(const snapshot_seq *seq, const char *source, tf_error *err)
{
    for (int64_t t = 0; t < seq->num_snapshots; t++) {
        const snapshot *s = &seq->snapshots[t];
        const csr *g = &s->graph;
        if (g->num_nodes != seq->num_nodes || g->row_ptr[0] != 0 || g->row_ptr[g->num_nodes] != g->num_edges)
            return tf_error_set(err, TF_ERR_INPUT, "%s: snapshot %lld: malformed graph offsets", source, (long long)t);
        for (int64_t v = 0; v < g->num_nodes; v++) {
            if (g->row_ptr[v + 1] < g->row_ptr[v])
                return tf_error_set(err, TF_ERR_INPUT, "%s: snapshot %lld: offsets decrease at vertex %lld", source,
                                    (long long)t, (long long)v);
            if (!s->present[v] && g->row_ptr[v + 1] > g->row_ptr[v])
                return tf_error_set(err, TF_ERR_INPUT, "%s: snapshot %lld: absent vertex %lld has in-edges", source,
                                    (long long)t, (long long)v);
        }
        for (int64_t e = 0; e < g->num_edges; e++)
            if (g->col[e] < 0 || g->col[e] >= g->num_nodes || !s->present[g->col[e]])
                return tf_error_set(err, TF_ERR_INPUT, "%s: snapshot %lld: edge %lld comes from vertex %d, absent or out of range",
                                    source, (long long)t, (long long)e, g->col[e]);
        int64_t bad;
        if ((bad = first_non_finite(g->weight, g->num_edges)) >= 0)
            return tf_error_set(err, TF_ERR_INPUT, "%s: snapshot %lld: weight of edge %lld is not finite", source,
                                (long long)t, (long long)bad);
        if ((bad = first_non_finite(s->features.data, s->features.size)) >= 0)
            return tf_error_set(err, TF_ERR_INPUT, "%s: snapshot %lld: feature %lld is not finite", source,
                                (long long)t, (long long)bad);
        if ((bad = first_non_finite(s->targets.data, s->targets.size)) >= 0)
            return tf_error_set(err, TF_ERR_INPUT, "%s: snapshot %lld: target %lld is not finite", source,
                                (long long)t, (long long)bad);
        if (validate_labels(seq, t, source, err) != TF_OK)
            return TF_ERR_INPUT;
    }
    return TF_OK;
}

snapshot_edge_stats snapshot_seq_edge_stats(const snapshot_seq *seq)
{
    snapshot_edge_stats stats = {0, 0.0, 0, 0};
    for (int64_t t = 0; t < seq->num_snapshots; t++) {
        int64_t edges = seq->snapshots[t].graph.num_edges;
        if (t == 0 || edges < stats.min_edges)
            stats.min_edges = edges;
        if (edges > stats.max_edges)
            stats.max_edges = edges;
        stats.total_edges += edges;
    }
    if (seq->num_snapshots > 0)
        stats.mean_edges = (double)stats.total_edges / (double)seq->num_snapshots;
    return stats;
}

static int tensor_equal(const tensor *a, const tensor *b)
{
    return tensor_same_shape(a, b) &&
           (a->size == 0 || memcmp(a->data, b->data, (size_t)a->size * sizeof(float)) == 0);
}

int snapshot_seq_equal(const snapshot_seq *a, const snapshot_seq *b)
{
    if (a->num_nodes != b->num_nodes || a->num_snapshots != b->num_snapshots ||
        a->feature_width != b->feature_width || a->target_width != b->target_width || a->num_classes != b->num_classes)
        return 0;
    for (int64_t t = 0; t < a->num_snapshots; t++) {
        const snapshot *x = &a->snapshots[t], *y = &b->snapshots[t];
        if (!csr_equal(&x->graph, &y->graph) || !tensor_equal(&x->features, &y->features) ||
            !tensor_equal(&x->targets, &y->targets) ||
            (a->num_nodes && memcmp(x->present, y->present, (size_t)a->num_nodes) != 0) ||
            (a->num_classes && memcmp(x->labels, y->labels, (size_t)a->num_nodes * sizeof *x->labels) != 0))
            return 0;
    }
    return 1;
}
