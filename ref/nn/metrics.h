/**
 * @file ref/nn/metrics.h
 * @brief Ranking metrics of link prediction: average precision and the area under the ROC
 *        curve, with ties handled as scikit-learn handles them.
 *
 * Given n scores and binary labels (1 = a true event, 0 = a negative sample), with P positives
 * and N negatives:
 *
 * **Average precision** (scikit-learn's `average_precision_score`): sort by score, highest
 * first; at each *distinct* score value s_k (a threshold), let TP_k and FP_k count the labels
 * with score >= s_k. Then precision_k = TP_k / (TP_k + FP_k), recall_k = TP_k / P and
 *
 *     AP = sum_k (recall_k - recall_{k-1}) precision_k,      recall_0 = 0.
 *
 * Tied scores enter together, at one threshold: a tie between a positive and a negative counts
 * as half right, not as whichever the sort happened to put first. (No interpolation: this is
 * not the 11-point AP of information retrieval.)
 *
 * **ROC AUC** (scikit-learn's `roc_auc_score`, the trapezoidal area under the ROC curve), equal
 * to the Mann-Whitney statistic: the fraction of (positive, negative) pairs ranked correctly,
 * a tie counting one half:
 *
 *     AUC = (#{s_pos > s_neg} + 0.5 #{s_pos = s_neg}) / (P N).
 *
 * Both are undefined without positives (AP, AUC) or without negatives (AUC); the functions
 * then return NaN. Scores may be logits or probabilities: only their order matters. twofold
 * passes logits, because sigmoid() rounds large logits to exactly 1.0f and would create ties
 * that the model did not make. Sums are in double and taken in one fixed order, so equal input
 * gives bitwise-equal results.
 */
#ifndef TWOFOLD_REF_METRICS_H
#define TWOFOLD_REF_METRICS_H

#include <stdint.h>

#include "ref/core/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Average precision of @p scores against @p labels.
 * @param scores             [n] scores, higher = more likely a positive; all finite
 * @param labels             [n] 1 for a positive, 0 for a negative
 * @param n                  number of scored items
 * @param average_precision  out: [1] AP in [0, 1], NaN when there is no positive
 * @param err                out: a score that is not finite, no memory
 * @return 0, or TF_ERR_INPUT
 */
int ref_average_precision(const float *scores, const uint8_t *labels, int64_t n, double *average_precision,
                          tf_error *err);

/**
 * Area under the ROC curve of @p scores against @p labels.
 * @param scores   [n] scores, higher = more likely a positive; all finite
 * @param labels   [n] 1 for a positive, 0 for a negative
 * @param n        number of scored items
 * @param roc_auc  out: [1] AUC in [0, 1], NaN without positives or without negatives
 * @param err      out: a score that is not finite, no memory
 * @return 0, or TF_ERR_INPUT
 */
int ref_roc_auc(const float *scores, const uint8_t *labels, int64_t n, double *roc_auc, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
