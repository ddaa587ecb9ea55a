#include "ref/fusion_chunks.h"

#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"

int chunk_set_contiguous(int64_t num_nodes, int64_t count, chunk_set *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    if (count < 1 || count > num_nodes)
        return tf_error_set(err, TF_ERR_INPUT, "chunks: %lld chunks of %lld vertices; need 1 <= chunks <= vertices",
                            (long long)count, (long long)num_nodes);
    out->offsets = tf_alloc((size_t)count + 1, sizeof *out->offsets, "chunk offsets", err);
    out->vertices = out->offsets ? tf_alloc((size_t)num_nodes, sizeof *out->vertices, "chunk vertices", err) : NULL;
    if (!out->vertices) {
        chunk_set_free(out);
        return err->code;
    }
    out->count = count;
    out->num_nodes = num_nodes;
    for (int64_t c = 0; c <= count; c++)
        out->offsets[c] = c * num_nodes / count;
    for (int64_t v = 0; v < num_nodes; v++)
        out->vertices[v] = (int32_t)v;
    return TF_OK;
}

void chunk_set_free(chunk_set *chunks)
{
    free(chunks->offsets);
    free(chunks->vertices);
    memset(chunks, 0, sizeof *chunks);
}

void chunk_load_free(chunk_load *load)
{
    free(load->vertices);
    free(load->features);
    memset(load, 0, sizeof *load);
}

int ref_fusion_chunk_vertices(const snapshot_seq *seq, const chunk_set *chunks, int64_t chunk,
                              int32_t **out_vertices, int64_t *out_count, tf_error *err)
{
    *out_vertices = NULL;
    *out_count = 0;
    if (chunk < 0 || chunk >= chunks->count)
        return tf_error_set(err, TF_ERR_INPUT, "chunk %lld does not exist (there are %lld)", (long long)chunk,
                            (long long)chunks->count);
    if (chunks->num_nodes != seq->num_nodes)
        return tf_error_set(err, TF_ERR_INPUT, "chunks cover %lld vertices but the snapshots have %lld",
                            (long long)chunks->num_nodes, (long long)seq->num_nodes);
    uint8_t *needed = tf_alloc((size_t)seq->num_nodes, 1, "chunk membership", err);
    if (!needed)
        return err->code;
    for (int64_t i = chunks->offsets[chunk]; i < chunks->offsets[chunk + 1]; i++) {
        int32_t v = chunks->vertices[i];
        needed[v] = 1;
        for (int64_t t = 0; t < seq->num_snapshots; t++) {
            const csr *g = &seq->snapshots[t].graph;
            for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++)
                needed[g->col[e]] = 1;
        }
    }
    const int status = fusion_marked_vertices(needed, seq->num_nodes, out_vertices, out_count, err);
    free(needed);
    return status;
}

int fusion_marked_vertices(const uint8_t *marked, int64_t num_nodes, int32_t **out_vertices, int64_t *out_count,
                           tf_error *err)
{
    int64_t count = 0;
    for (int64_t v = 0; v < num_nodes; v++)
        count += marked[v];
    int32_t *vertices = tf_alloc((size_t)count, sizeof *vertices, "chunk vertices", err);
    if (!vertices)
        return err->code;
    int64_t k = 0;
    for (int64_t v = 0; v < num_nodes; v++)
        if (marked[v])
            vertices[k++] = (int32_t)v;
    *out_vertices = vertices;
    *out_count = count;
    return TF_OK;
}

int fusion_load_features(const snapshot_seq *seq, chunk_load *out, tf_error *err)
{
    const int64_t T = seq->num_snapshots, F = seq->feature_width, n = out->num_vertices;
    out->features = tf_alloc((size_t)(T * n * F), sizeof(float), "chunk features", err);
    if (!out->features) {
        chunk_load_free(out);
        return err->code;
    }
    for (int64_t t = 0; t < T; t++)
        for (int64_t k = 0; k < n; k++)
            memcpy(out->features + (t * n + k) * F, seq->snapshots[t].features.data + (int64_t)out->vertices[k] * F,
                   (size_t)F * sizeof(float));
    out->num_snapshots = T;
    out->feature_width = F;
    out->bytes = T * n * F * (int64_t)sizeof(float);
    return TF_OK;
}

int ref_fusion_load_chunk(const snapshot_seq *seq, const chunk_set *chunks, int64_t chunk, chunk_load *out,
                          tf_error *err)
{
    memset(out, 0, sizeof *out);
    if (ref_fusion_chunk_vertices(seq, chunks, chunk, &out->vertices, &out->num_vertices, err) != TF_OK)
        return err->code;
    return fusion_load_features(seq, out, err);
}
