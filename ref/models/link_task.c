#include "ref/models/link_task.h"

#include <math.h>
#include <stdlib.h>

#include "ref/core/memory.h"
#include "ref/core/rng.h"
#include "ref/nn/layers.h"

int64_t link_task_positives(const snapshot_seq *seq, int64_t t, int64_t limit)
{
    if (t + 1 >= limit || t + 1 >= seq->num_snapshots)
        return 0;
    const csr *g = &seq->snapshots[t + 1].graph;
    int64_t positives = 0;
    for (int64_t v = 0; v < g->num_nodes; v++)
        for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++)
            positives += g->col[e] != v;
    return positives;
}

void link_task_pairs(const snapshot_seq *seq, int64_t t, int64_t limit, uint64_t seed, int32_t *source,
                     int32_t *destination, uint8_t *label)
{
    const int64_t positives = link_task_positives(seq, t, limit);
    if (positives == 0)
        return;
    const csr *g = &seq->snapshots[t + 1].graph;
    rng r;
    rng_seed_keyed(&r, seed, (uint64_t)(t + 1), 0);
    int64_t p = 0;
    for (int64_t v = 0; v < g->num_nodes; v++)
        for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++) {
            if (g->col[e] == v)
                continue;
            source[p] = source[positives + p] = g->col[e];
            destination[p] = (int32_t)v;
            destination[positives + p] = (int32_t)rng_below(&r, (uint64_t)g->num_nodes);
            label[p] = 1;
            label[positives + p] = 0;
            p++;
        }
}

/* <a, b> over width floats, in order: the pair's logit. */
static float dot(const float *a, const float *b, int64_t width)
{
    float sum = 0.0f;
    for (int64_t c = 0; c < width; c++)
        sum += a[c] * b[c];
    return sum;
}

double link_task_window_loss(const snapshot_seq *seq, int64_t first, int64_t count, int64_t limit, uint64_t seed,
                             const float *states, int64_t width, float scale, float *dstates, float *scores,
                             uint8_t *labels, int64_t *scored, tf_error *err)
{
    const int64_t n = seq->num_nodes;
    int64_t scored_snapshots = 0, most = 0;
    for (int64_t t = 0; t < count; t++) {
        const int64_t positives = link_task_positives(seq, first + t, limit);
        scored_snapshots += positives > 0;
        most = positives > most ? positives : most;
    }
    if (scored_snapshots == 0)
        return 0.0;
    int32_t *source = tf_alloc((size_t)(2 * most), sizeof *source, "link pairs", err);
    int32_t *destination = source ? tf_alloc((size_t)(2 * most), sizeof *destination, "link pairs", err) : NULL;
    uint8_t *label = destination ? tf_alloc((size_t)(2 * most), sizeof *label, "link pairs", err) : NULL;
    float *logit = label ? tf_alloc((size_t)(2 * most), sizeof *logit, "link pairs", err) : NULL;
    float *dlogit = logit ? tf_alloc((size_t)(2 * most), sizeof *dlogit, "link pairs", err) : NULL;
    double total = dlogit ? 0.0 : NAN;
    for (int64_t t = 0; dlogit && t < count; t++) {
        const int64_t positives = link_task_positives(seq, first + t, limit), pairs = 2 * positives;
        if (positives == 0)
            continue;
        const float *h = states + t * n * width;
        link_task_pairs(seq, first + t, limit, seed, source, destination, label);
        for (int64_t q = 0; q < pairs; q++)
            logit[q] = dot(h + (int64_t)source[q] * width, h + (int64_t)destination[q] * width, width);
        /* mean over the pairs, then over the window's scored snapshots */
        const double sum = ref_bce_with_logits_sum(logit, positives, 1.0f, pairs, dlogit) +
                           ref_bce_with_logits_sum(logit + positives, positives, 0.0f, pairs, dlogit + positives);
        total += sum / (double)pairs;
        for (int64_t q = 0; scores && q < pairs; q++) {
            scores[*scored] = logit[q];
            labels[(*scored)++] = label[q];
        }
        for (int64_t q = 0; dstates && q < pairs; q++) {
            const float g = dlogit[q] * scale / (float)scored_snapshots;
            float *du = dstates + t * n * width + (int64_t)source[q] * width;
            float *dv = dstates + t * n * width + (int64_t)destination[q] * width;
            const float *u = h + (int64_t)source[q] * width, *v = h + (int64_t)destination[q] * width;
            for (int64_t c = 0; c < width; c++) {
                du[c] += g * v[c];
                dv[c] += g * u[c];
            }
        }
    }
    free(source), free(destination), free(label), free(logit), free(dlogit);
    return total / (double)scored_snapshots;
}
