#include "ref/schedule_cost.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"

void schedule_group_sizes(const train_schedule *windows, const snapshot_seq *seq, int64_t *rows, int64_t *edges)
{
    for (int64_t w = 0; w < windows->windows; w++) {
        int64_t first, count;
        train_schedule_span(windows, w, &first, &count);
        rows[w] = count * seq->num_nodes;
        edges[w] = 0;
        for (int64_t t = first; t < first + count; t++)
            edges[w] += seq->snapshots[t].graph.num_edges;
    }
}

double cost_model_predict(const cost_model *m, int64_t rows, int64_t edges)
{
    return m->per_row * (double)rows + m->per_edge * (double)edges + m->per_group;
}

int cost_model_fit(const int64_t *rows, const int64_t *edges, const double *seconds, int64_t n, cost_model *out,
                   tf_error *err)
{
    memset(out, 0, sizeof *out);
    if (n < 2)
        return tf_error_set(err, TF_ERR_INPUT, "a cost fit of %lld group(s): expected at least 2", (long long)n);
    enum { COLUMNS = 3 };
    double *q = tf_alloc((size_t)n * COLUMNS, sizeof *q, "cost fit", err); /* [COLUMNS][n] */
    double *y = q ? tf_alloc((size_t)n, sizeof *y, "cost fit", err) : NULL;
    if (!y) {
        free(q);
        return TF_ERR_INPUT;
    }
    double scale[COLUMNS] = {0, 0, 1};
    for (int64_t k = 0; k < n; k++) {
        scale[0] = fmax(scale[0], fabs((double)rows[k]));
        scale[1] = fmax(scale[1], fabs((double)edges[k]));
    }
    for (int64_t k = 0; k < n; k++) {
        q[0 * n + k] = scale[0] > 0 ? (double)rows[k] / scale[0] : 0;
        q[1 * n + k] = scale[1] > 0 ? (double)edges[k] / scale[1] : 0;
        q[2 * n + k] = 1;
        y[k] = seconds[k];
    }
    /* Modified Gram-Schmidt: columns orthonormalized in the order intercept, rows, edges, so a
     * constant rows column is the one dropped, not the intercept. r[a][b] = q_a . column b. */
    const int order[COLUMNS] = {2, 0, 1};
    double r[COLUMNS][COLUMNS] = {{0}};
    int kept[COLUMNS] = {0};
    for (int a = 0; a < COLUMNS; a++) {
        double *column = q + order[a] * n;
        double norm_before = 0, norm = 0;
        for (int64_t k = 0; k < n; k++)
            norm_before += column[k] * column[k];
        for (int b = 0; b < a; b++) {
            if (!kept[b])
                continue;
            const double *basis = q + order[b] * n;
            double dot = 0;
            for (int64_t k = 0; k < n; k++)
                dot += basis[k] * column[k];
            r[b][a] = dot;
            for (int64_t k = 0; k < n; k++)
                column[k] -= dot * basis[k];
        }
        for (int64_t k = 0; k < n; k++)
            norm += column[k] * column[k];
        norm = sqrt(norm);
        kept[a] = norm_before > 0 && norm > 1e-9 * sqrt(norm_before);
        r[a][a] = kept[a] ? norm : 0;
        for (int64_t k = 0; kept[a] && k < n; k++)
            column[k] /= norm;
    }
    /* Q^T y, then back substitution over the kept columns. */
    double qty[COLUMNS] = {0}, coefficient[COLUMNS] = {0};
    for (int a = 0; a < COLUMNS; a++)
        for (int64_t k = 0; kept[a] && k < n; k++)
            qty[a] += q[order[a] * n + k] * y[k];
    for (int a = COLUMNS - 1; a >= 0; a--) {
        if (!kept[a])
            continue;
        double value = qty[a];
        for (int b = a + 1; b < COLUMNS; b++)
            value -= r[a][b] * coefficient[b];
        coefficient[a] = value / r[a][a];
    }
    /* coefficient[a] belongs to scaled column order[a] */
    double scaled[COLUMNS] = {0};
    for (int a = 0; a < COLUMNS; a++)
        scaled[order[a]] = coefficient[a];
    out->per_row = scale[0] > 0 ? scaled[0] / scale[0] : 0;
    out->per_edge = scale[1] > 0 ? scaled[1] / scale[1] : 0;
    out->per_group = scaled[2];
    out->dropped = (!kept[1] ? 1 : 0) | (!kept[2] ? 2 : 0);
    double mean = 0, residual_squares = 0, total_squares = 0;
    for (int64_t k = 0; k < n; k++)
        mean += seconds[k];
    mean /= (double)n;
    for (int64_t k = 0; k < n; k++) {
        const double e = seconds[k] - cost_model_predict(out, rows[k], edges[k]);
        residual_squares += e * e;
        total_squares += (seconds[k] - mean) * (seconds[k] - mean);
    }
    out->residual = mean != 0 ? sqrt(residual_squares / (double)n) / fabs(mean) : 0;
    out->r_squared = total_squares > 0 ? 1 - residual_squares / total_squares : 1;
    free(q);
    free(y);
    return TF_OK;
}

int cost_model_parse(const char *text, cost_model *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    out->r_squared = 1;
    double value[3];
    const char *at = text;
    if (strncmp(at, "linear:", 7) != 0)
        goto bad;
    at += 7;
    for (int k = 0; k < 3; k++) {
        char *end;
        value[k] = strtod(at, &end);
        if (end == at || !isfinite(value[k]) || *end != (k < 2 ? ',' : '\0'))
            goto bad;
        at = end + (k < 2);
    }
    out->per_row = value[0];
    out->per_edge = value[1];
    out->per_group = value[2];
    return TF_OK;
bad:
    return tf_error_set(err, TF_ERR_INPUT, "cost \"%s\": expected measured or linear:A,B,C (seconds per row, per edge, "
                                           "per group)", text);
}
