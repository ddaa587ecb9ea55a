#include "ref/nn/metrics.h"

#include <math.h>
#include <stdlib.h>

#include "ref/core/memory.h"

/* One scored item for sorting. */
typedef struct scored {
    float score;
    uint8_t label;
} scored;

/* Highest score first. Items with equal scores are processed as one group below, so their
 * order after the sort (qsort is not stable) cannot change any result. */
static int by_score_descending(const void *a, const void *b)
{
    float x = ((const scored *)a)->score, y = ((const scored *)b)->score;
    return (x < y) - (x > y);
}

/* The items of scores, labels [n] sorted by score, highest first; NULL with err set for a non-finite score. */
static scored *sorted_items(const float *scores, const uint8_t *labels, int64_t n, tf_error *err)
{
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(scores[i])) {
            tf_error_set(err, TF_ERR_INPUT, "score %lld is %g; ranking metrics need finite scores (did training "
                         "diverge?)", (long long)i, (double)scores[i]);
            return NULL;
        }
    scored *items = tf_alloc((size_t)n, sizeof *items, "scores to rank", err);
    if (!items)
        return NULL;
    for (int64_t i = 0; i < n; i++) {
        items[i].score = scores[i];
        items[i].label = labels[i] != 0;
    }
    qsort(items, (size_t)n, sizeof *items, by_score_descending);
    return items;
}

int ref_average_precision(const float *scores, const uint8_t *labels, int64_t n, double *average_precision,
                          tf_error *err)
{
    scored *items = sorted_items(scores, labels, n, err);
    if (!items)
        return TF_ERR_INPUT;
    double positives = 0;
    for (int64_t i = 0; i < n; i++)
        positives += items[i].label;
    double true_positives = 0, false_positives = 0, previous_recall = 0, sum = 0;
    for (int64_t i = 0; i < n;) {
        /* One threshold: every item with this score. */
        int64_t end = i;
        for (; end < n && items[end].score == items[i].score; end++) {
            true_positives += items[end].label;
            false_positives += !items[end].label;
        }
        double recall = positives > 0 ? true_positives / positives : 0;
        sum += (recall - previous_recall) * (true_positives / (true_positives + false_positives));
        previous_recall = recall;
        i = end;
    }
    *average_precision = positives > 0 ? sum : NAN;
    free(items);
    return TF_OK;
}

int ref_roc_auc(const float *scores, const uint8_t *labels, int64_t n, double *roc_auc, tf_error *err)
{
    scored *items = sorted_items(scores, labels, n, err);
    if (!items)
        return TF_ERR_INPUT;
    double positives = 0, negatives = 0;
    for (int64_t i = 0; i < n; i++) {
        positives += items[i].label;
        negatives += !items[i].label;
    }
    /* Walking from the highest score down: a positive beats every negative below its group and
     * ties with the negatives in its group. */
    double negatives_above = 0, correct_pairs = 0;
    for (int64_t i = 0; i < n;) {
        double group_positives = 0, group_negatives = 0;
        int64_t end = i;
        for (; end < n && items[end].score == items[i].score; end++) {
            group_positives += items[end].label;
            group_negatives += !items[end].label;
        }
        double negatives_below = negatives - negatives_above - group_negatives;
        correct_pairs += group_positives * (negatives_below + 0.5 * group_negatives);
        negatives_above += group_negatives;
        i = end;
    }
    *roc_auc = positives > 0 && negatives > 0 ? correct_pairs / (positives * negatives) : NAN;
    free(items);
    return TF_OK;
}
