/**
 * @file ref/models/classify_task.h
 * @brief Node classification on snapshots (`twofold train --task classify`): each vertex's class
 *        at snapshot t from the model's head, with softmax cross-entropy and accuracy.
 *
 * The data carries per-snapshot labels (ref/data/snapshot.h: `labels`, C = num_classes, with
 * #SNAPSHOT_UNLABELLED masking a vertex out). The model's head, the same linear layer on ReLU(H_t)
 * that regression trains (ref/models/model.h), gets C outputs instead of the targets' columns:
 * its outputs z = logits [N][C] for snapshot t, and a labelled vertex v with class y costs
 *
 *     CE(v) = -log softmax(z_v)[y] = log(sum_c exp(z_vc)) - z_vy,
 *     d CE / d z_vc = softmax(z_v)[c] - [c == y].
 *
 * (ref_cross_entropy_loss(), which the recurrent-model tests already check against finite
 * differences). A snapshot's loss is the mean of CE over its labelled vertices (0 for none);
 * the window's is the mean over its snapshots, as the regression's MSE is. A vertex is predicted
 * correctly when its largest logit (the first, on a tie) is its label's.
 */
#ifndef TWOFOLD_REF_CLASSIFY_TASK_H
#define TWOFOLD_REF_CLASSIFY_TASK_H

#include <stdint.h>

#include "ref/core/error.h"
#include "ref/data/snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The loss of a window from the head's logits [count][N][C] (snapshots first .. first + count - 1
 * of @p seq, C = seq->num_classes, which must be >= 2), by ref_cross_entropy_loss() per snapshot
 * (ref/nn/layers.h) with the unlabelled vertices masked; its gradient scaled by @p scale written to
 * dlogits [count][N][C] (every entry; NULL: no gradient). When @p correct and @p labelled are not
 * NULL, the window's correctly predicted and labelled vertices are added into them. The loss goes
 * to @p loss (NaN when a logit is: training diverged, which the trainer reports).
 * @return 0, or TF_ERR_INPUT with @p err set when scratch memory is missing
 */
int classify_task_window_loss(const snapshot_seq *seq, int64_t first, int64_t count, const float *logits, float scale,
                              float *dlogits, int64_t *correct, int64_t *labelled, double *loss, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
