#include "ref/models/classify_task.h"

#include <stdlib.h>

#include "ref/core/memory.h"
#include "ref/nn/layers.h"

/* The labelled vertices of one snapshot whose largest logit (the first, on a tie) is their label's:
 * logits [n][classes], labels [n]. */
static int64_t correct_predictions(const float *logits, const int32_t *labels, int64_t n, int64_t classes)
{
    int64_t hits = 0;
    for (int64_t v = 0; v < n; v++) {
        if (labels[v] == SNAPSHOT_UNLABELLED)
            continue;
        int64_t best = 0;
        for (int64_t c = 1; c < classes; c++)
            if (logits[v * classes + c] > logits[v * classes + best])
                best = c;
        hits += best == labels[v];
    }
    return hits;
}

int classify_task_window_loss(const snapshot_seq *seq, int64_t first, int64_t count, const float *logits, float scale,
                              float *dlogits, int64_t *correct, int64_t *labelled, double *loss, tf_error *err)
{
    const int64_t n = seq->num_nodes, classes = seq->num_classes;
    uint8_t *mask = tf_alloc((size_t)n + 1, sizeof *mask, "labelled vertices", err);
    if (!mask)
        return TF_ERR_INPUT;
    double total = 0;
    for (int64_t t = 0; t < count; t++) {
        const int32_t *labels = seq->snapshots[first + t].labels;
        const int64_t at = t * n * classes;
        int64_t in_snapshot = 0;
        for (int64_t v = 0; v < n; v++)
            in_snapshot += mask[v] = labels[v] != SNAPSHOT_UNLABELLED;
        /* each snapshot's mean over its labelled vertices (0 for none), then the mean over the window */
        total += ref_cross_entropy_loss(logits + at, labels, mask, n, classes, scale / (float)count,
                                        dlogits ? dlogits + at : NULL);
        if (correct && labelled) {
            *correct += correct_predictions(logits + at, labels, n, classes);
            *labelled += in_snapshot;
        }
    }
    free(mask);
    *loss = total / (double)count;
    return TF_OK;
}
