/**
 * @file opt/minibatch.h
 * Twins: minibatch_epoch() (ref/minibatch.h).
 * @brief ReInc's sampled mini-batches, data-parallel, with the incremental engine and the global
 *        cache serving the first layer's aggregations on each mini-batch's sampled graphs.
 *
 * What changes from the reference epoch, and why the result is still equal:
 *  - Every rank builds every mini-batch's sampled graphs itself (the draws are keyed by seed,
 *    epoch and mini-batch: the same graphs everywhere, ReInc's step (i) of §3.4 with no traffic).
 *  - Within a mini-batch the steps and slots are the trainer's schedule, slot j on rank j % size
 *    (opt_trainer_rank_of()), and one gradient all-reduce per step sums the windows' gradients,
 *    each already scaled by 1 / windows-in-step: the reference's mean, up to the order of float
 *    additions (opt/train.h says the same of whole graphs).
 *  - With @p inputs, the model's first-layer aggregation of X_t is served from an
 *    incremental_inputs (opt/incremental_inputs.h) built over the mini-batch's view: deltas
 *    between consecutive sampled graphs, ReInc's engine and global cache. One server per
 *    mini-batch, dropped when it ends: the cache is keyed per mini-batch, and only the current
 *    mini-batch's aggregations are ever held (sequence-first order, [ReInc] §3.3). Its values
 *    depend on t only, so the run is fp-equal to the reference's recompute on the same sampled
 *    graphs (verify/test_minibatch.c, verify/test_minibatch_mpi.c).
 *  - The models run on opt_kernels; one thread per rank (a served model reads one shared source).
 *  - Evaluation on the full graphs is opt_trainer_evaluate().
 */
#ifndef TWOFOLD_OPT_MINIBATCH_H
#define TWOFOLD_OPT_MINIBATCH_H

#include <stdint.h>

#include "opt/comm.h"
#include "opt/incremental_inputs.h"
#include "ref/minibatch.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What an epoch's mini-batches did (this rank's counts; the cache's summed over mini-batches). */
typedef struct minibatch_stats {
    int64_t batches;          /**< mini-batches trained */
    int64_t vertices;         /**< sampled vertices, summed over the mini-batches */
    int64_t sampled_edges;    /**< edges drawn at snapshot 0, summed */
    int64_t joined_edges;     /**< inserted edges the delta rule admitted, summed */
    int64_t hits;             /**< cache hits */
    int64_t misses;           /**< cache misses */
    int64_t engine_full;      /**< full recomputes by the engine */
    int64_t engine_deltas;    /**< deltas the engine applied */
    double sample_seconds;    /**< wall seconds spent sampling and building servers */
} minibatch_stats;

/**
 * Twin of minibatch_epoch(): train one epoch on the ranks of @p c (every rank calls it), serving
 * the inputs through the incremental machinery when @p inputs is not NULL (refused, naming why,
 * for a model without such an aggregation), and evaluate on the full graphs. Adds into @p stats
 * (NULL: not counted). @p tr must have been made parallel (opt_trainer_parallel()).
 */
int opt_minibatch_epoch(trainer *tr, comm *c, const snapshot_seq *seq, const minibatch_options *o,
                        const incremental_inputs_options *inputs, minibatch_stats *stats, epoch_report *report,
                        tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
