/* The T-GCN CSV pair (speed readings + dense adjacency) -> snapshot_seq. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/data/loaders.h"
#include "ref/core/memory.h"

/* Reads the numeric rows of `content` into a row-major matrix of `width` columns, skipping
 * `skip` header lines. Every row must have exactly `width` finite numbers. rows [1] gets the row
 * count, values [1] an allocated [rows][width] array (caller frees). */
static int read_numeric_rows(const text *content, const char *source, long skip, int64_t width, int64_t *rows,
                             double **values, tf_error *err)
{
    *values = NULL;
    int64_t capacity = 1024, count = 0;
    double *out = tf_alloc((size_t)(capacity * width), sizeof *out, "CSV values", err);
    if (!out) {
        tf_error_prefix(err, "%s (%lld columns)", source, (long long)width);
        return TF_ERR_INPUT;
    }
    line_cursor cursor = line_cursor_start(content);
    const char *begin, *end;
    while (line_cursor_next(&cursor, &begin, &end)) {
        if (cursor.number <= skip)
            continue;
        if (begin == end)
            continue; /* a blank line carries no row */
        long fields = count_fields(begin, end, ',');
        if (fields != width) {
            free(out);
            return tf_error_set(err, TF_ERR_INPUT, "%s:%ld: %ld fields, expected %lld", source, cursor.number, fields,
                                (long long)width);
        }
        if (count == capacity) {
            double *grown = tf_realloc(out, (size_t)(2 * capacity * width), sizeof *out, "CSV values", err);
            if (!grown) {
                free(out);
                tf_error_prefix(err, "%s:%ld (%lld columns)", source, cursor.number, (long long)width);
                return TF_ERR_INPUT;
            }
            out = grown;
            capacity *= 2;
        }
        const char *position = begin, *field_begin, *field_end;
        for (int64_t k = 0; next_field(&position, end, ',', &field_begin, &field_end); k++) {
            int parsed = parse_double(field_begin, field_end, &out[count * width + k]);
            if (parsed == 0 && fabs(out[count * width + k]) > FLT_MAX)
                parsed = -2; /* stored as float32 later: it would become infinity */
            if (parsed != 0) {
                char field[32];
                quote_field(field_begin, field_end, field, sizeof field);
                free(out);
                return tf_error_set(err, TF_ERR_INPUT, "%s:%ld: field %lld is \"%s\", expected a %snumber%s", source,
                                    cursor.number, (long long)k + 1, field, parsed == -2 ? "finite " : "",
                                    parsed == -2 ? " (float32 range)" : "");
            }
        }
        count++;
    }
    *rows = count;
    *values = out;
    return TF_OK;
}

int load_tgcn_csv(const text *speed, const char *speed_source, const text *adjacency,
                  const char *adjacency_source, int lags, snapshot_seq *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    if (lags == 0)
        lags = TGCN_DEFAULT_LAGS;
    if (lags < 1)
        return tf_error_set(err, TF_ERR_INPUT, "%s: lags is %d, expected at least 1", speed_source, lags);
    if (speed->size == 0)
        return tf_error_set(err, TF_ERR_INPUT, "%s: file is empty, expected a header of sensor ids", speed_source);
    if (adjacency->size == 0)
        return tf_error_set(err, TF_ERR_INPUT, "%s: file is empty, expected an adjacency matrix", adjacency_source);
    line_cursor cursor = line_cursor_start(speed);
    const char *begin, *end;
    line_cursor_next(&cursor, &begin, &end);
    int64_t num_nodes = 0;
    const char *position = begin, *field_begin, *field_end;
    while (next_field(&position, end, ',', &field_begin, &field_end)) {
        if (field_begin == field_end)
            return tf_error_set(err, TF_ERR_INPUT, "%s:1: sensor id %lld is empty, expected a header of sensor ids",
                                speed_source, (long long)num_nodes + 1);
        num_nodes++;
    }

    int64_t steps, adjacency_rows;
    double *readings = NULL, *weights = NULL;
    int status = read_numeric_rows(speed, speed_source, 1, num_nodes, &steps, &readings, err);
    if (status == TF_OK)
        status = read_numeric_rows(adjacency, adjacency_source, 0, num_nodes, &adjacency_rows, &weights, err);
    if (status == TF_OK && adjacency_rows != num_nodes)
        status = tf_error_set(err, TF_ERR_INPUT, "%s: %lld rows, expected %lld (one per sensor in %s)", adjacency_source,
                              (long long)adjacency_rows, (long long)num_nodes, speed_source);
    double maximum = 0;
    for (int64_t i = 0; status == TF_OK && i < steps * num_nodes; i++)
        if (readings[i] > maximum)
            maximum = readings[i];
    if (status == TF_OK && maximum <= 0)
        status = tf_error_set(err, TF_ERR_INPUT, "%s: no positive reading to normalize by", speed_source);
    if (status == TF_OK && steps <= lags)
        status = tf_error_set(err, TF_ERR_INPUT, "%s: %lld time steps, expected more than the %d lags", speed_source,
                              (long long)steps, lags);
    if (status == TF_OK && (status = snapshot_seq_alloc(out, steps - lags, num_nodes, lags, 1, err)) != TF_OK)
        tf_error_prefix(err, "%s", speed_source); /* a memory error names no file by itself */
    for (int64_t i = 0; status == TF_OK && i < out->num_snapshots; i++)
        for (int64_t v = 0; v < num_nodes; v++) {
            for (int k = 0; k < lags; k++)
                out->snapshots[i].features.data[v * lags + k] = (float)(readings[(i + k) * num_nodes + v] / maximum);
            out->snapshots[i].targets.data[v] = (float)(readings[(i + lags) * num_nodes + v] / maximum);
        }

    int64_t num_edges = 0;
    for (int64_t i = 0; status == TF_OK && i < num_nodes * num_nodes; i++)
        num_edges += weights[i] != 0;
    int32_t *src = NULL, *dst = NULL;
    float *edge_weights = NULL;
    if (status == TF_OK) {
        src = tf_alloc((size_t)num_edges, sizeof *src, "edge sources", err);
        dst = src ? tf_alloc((size_t)num_edges, sizeof *dst, "edge targets", err) : NULL;
        edge_weights = dst ? tf_alloc((size_t)num_edges, sizeof *edge_weights, "edge weights", err) : NULL;
        status = edge_weights ? TF_OK : TF_ERR_INPUT;
        if (status != TF_OK)
            tf_error_prefix(err, "%s", adjacency_source);
    }
    int64_t e = 0;
    for (int64_t i = 0; status == TF_OK && i < num_nodes; i++)
        for (int64_t j = 0; j < num_nodes; j++)
            if (weights[i * num_nodes + j] != 0) {
                src[e] = (int32_t)i;
                dst[e] = (int32_t)j;
                edge_weights[e++] = (float)weights[i * num_nodes + j];
            }
    for (int64_t t = 0; status == TF_OK && t < out->num_snapshots; t++)
        status = snapshot_seq_set_edges(out, t, num_edges, src, dst, edge_weights, err);
    free(readings);
    free(weights);
    free(src);
    free(dst);
    free(edge_weights);
    if (status != TF_OK)
        snapshot_seq_free(out);
    return status;
}
