/**
 * @file ref/models/link_task.h
 * @brief Link prediction on snapshots (`twofold train --task link`): the embeddings of snapshot t
 *        score the edges of snapshot t + 1 against sampled non-edges, with binary cross-entropy.
 *
 * DGC and DySAT evaluate their models this way: a model's embedding of vertex u after snapshot t
 * is the cell's output H_t[u] (any model of the table; the regression head is not used, its
 * gradient stays zero), and the score of a pair (u, v) is the logit
 *
 *     s(u, v) = <H_t[u], H_t[v]>.
 *
 * The pairs of snapshot t: every stored edge u -> v of snapshot t + 1 with u != v is a positive
 * (label 1); for each, in CSR order, one negative (u, w) with w drawn uniformly from the vertices
 * by a generator keyed by (seed, t + 1) (ref/core/rng.h: rng_seed_keyed()), so the negatives
 * never depend on the window, the rank or the thread that scores them. (A drawn w may happen to be
 * a true neighbour: uniform negative sampling, as DySAT's evaluation draws them.) A snapshot
 * scores the next one only inside its own split: the last training snapshot does not see the
 * first test snapshot's edges (the caller passes the split's end as `limit`).
 *
 * The window's loss is the mean over its scored snapshots of the mean BCE over each one's 2P
 * pairs (0 for a window with no scored snapshot).
 */
#ifndef TWOFOLD_REF_LINK_TASK_H
#define TWOFOLD_REF_LINK_TASK_H

#include <stdint.h>

#include "ref/core/error.h"
#include "ref/data/snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The positives of snapshot @p t's pairs: the stored edges of t + 1 that are not loops (0 when t + 1 >= limit). */
int64_t link_task_positives(const snapshot_seq *seq, int64_t t, int64_t limit);

/**
 * Snapshot @p t's pairs: source [2P], destination [2P], label [2P] (positives first, then the
 * negatives in the same order). P = link_task_positives().
 */
void link_task_pairs(const snapshot_seq *seq, int64_t t, int64_t limit, uint64_t seed, int32_t *source,
                     int32_t *destination, uint8_t *label);

/**
 * The loss of a window from its states [count][N][width] (snapshots first .. first + count - 1),
 * scaled by @p scale into dstates [count][N][width] (added into; NULL: no gradient). When
 * @p scores is not NULL, each scored pair's logit and label are appended at scores[*scored],
 * labels[*scored] and *scored advanced (the caller sizes them with link_task_positives()).
 * @return the loss, or NaN with @p err set when scratch memory is missing.
 */
double link_task_window_loss(const snapshot_seq *seq, int64_t first, int64_t count, int64_t limit, uint64_t seed,
                             const float *states, int64_t width, float scale, float *dstates, float *scores,
                             uint8_t *labels, int64_t *scored, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
