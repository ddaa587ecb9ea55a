/**
 * @file ref/minibatch.h
 * @brief ReInc's training setting ([ReInc] §3.4, §5; chapters/02-incremental.md, "Sampled
 *        mini-batches"): node mini-batches of N target vertices, each over a seeded sampled k-hop
 *        computational graph drawn at the sequence's first snapshot and then changed only by the
 *        snapshots' deltas, trained sequence-first.
 *
 * **The sample.** For a mini-batch's targets (hop 0), hop h = 1 .. k draws, for every vertex that
 * joined at hop h - 1, fanout[h-1] of its in-edges in snapshot 0 uniformly without replacement
 * (all of them when it has no more); their sources not yet in the graph join at hop h. Vertices of
 * hop k are not expanded. The draws of mini-batch b of epoch e come from rng_seed_keyed(seed,
 * #MINIBATCH_SAMPLE_STREAM, e * batches + b): the same graph on every rank.
 *
 * **Later snapshots: the delta rule.** The paper applies "only the relevant graph changes" and
 * leaves open how an inserted edge meets the fan-out. twofold's rule: the vertex set is fixed for
 * the sequence, and for t >= 1, with the edges of t-1 and t paired as edge_difference() pairs them
 * (same source, same weight bits):
 *  - an edge that stays in the snapshot keeps its membership (sampled or not);
 *  - an edge whose weight changed (an unpaired edge of t-1 and one of t, same source and
 *    destination, paired in CSR order) keeps its membership with the new weight;
 *  - a deleted edge leaves;
 *  - an inserted edge joins when both its endpoints are vertices of the sampled graph and its
 *    destination is expanded (hop < k). The fan-out caps only snapshot 0's draw, so a vertex's
 *    sampled in-degree can grow past it; no new vertex ever joins.
 * So reference and optimized runs see the same graphs, and the sampled graph of t differs from
 * that of t-1 by the deltas restricted to it, which is what the incremental engine applies.
 *
 * **The view.** A #sampled_graph holds the sampled graphs as a snapshot sequence of their own over
 * the sampled vertices (targets first, in the order given, then the rest ascending by id): every
 * snapshot of the full sequence, with the vertices' features, targets and presence. A model runs
 * on it as on any sequence, its operators computed from the sampled graph (a recompute "on the same
 * sampled graph"), and the loss is taken over the present targets only.
 *
 * **Sequence-first order** ([ReInc] §3.3, §5.4): an epoch cuts a seeded permutation of the
 * vertices (rng_seed_keyed(seed, #MINIBATCH_STREAM, epoch)) into mini-batches of N; for each
 * mini-batch in turn it runs every optimizer step of the trainer's schedule (ref/train.h) over the
 * view, then drops it and samples the next. An epoch takes batches x steps optimizer steps.
 * Evaluation runs on the full graphs.
 *
 * Ownership: a sampled graph owns its arrays and its view; it borrows nothing.
 */
#ifndef TWOFOLD_REF_MINIBATCH_H
#define TWOFOLD_REF_MINIBATCH_H

#include <stdint.h>

#include "ref/core/error.h"
#include "ref/data/snapshot.h"
#include "ref/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Hops --fanout may list (a checkpoint records each: trainer.sampling, ref/train.h). */
#define MINIBATCH_MAX_HOPS (TRAIN_SAMPLING_VALUES - 1)

/** The rng stream of the epochs' vertex permutations (keys of rng_seed_keyed()). */
#define MINIBATCH_STREAM 0x4d494e49ull

/** The rng stream of the samples. */
#define MINIBATCH_SAMPLE_STREAM 0x53414d50ull

/** --minibatch N --fanout F1,F2,...: the mini-batches and the sample. */
typedef struct minibatch_options {
    int64_t size;                    /**< N, target vertices per mini-batch (>= 1) */
    int hops;                        /**< k, entries of fanout (1 .. #MINIBATCH_MAX_HOPS) */
    int fanout[MINIBATCH_MAX_HOPS];  /**< in-edges drawn per vertex at hop h (>= 1) */
} minibatch_options;

/**
 * Parse a --fanout list ("25,10": one positive integer per hop) into @p o's hops and fanout.
 * @return 0, or TF_ERR_INPUT "--fanout 'TEXT': expected ..." on anything else.
 */
int minibatch_fanout_parse(const char *text, minibatch_options *o, tf_error *err);

/** A mini-batch's sampled computational graphs over a whole sequence (the rule above). */
typedef struct sampled_graph {
    int64_t num_targets;   /**< targets: vertices 0 .. num_targets-1 of the view */
    int64_t num_vertices;  /**< vertices of the view */
    int32_t *vertex;       /**< [num_vertices] each view vertex's id in the full sequence */
    uint8_t *hop;          /**< [num_vertices] the hop it joined at: 0 for the targets .. k */
    snapshot_seq view;     /**< the sampled graphs, every snapshot of the full sequence */
    int64_t sampled_edges; /**< edges drawn at snapshot 0 */
    int64_t joined_edges;  /**< inserted edges the rule admitted, over snapshots 1 .. */
    int64_t left_edges;    /**< sampled edges that later snapshots deleted */
    int64_t refused_edges; /**< inserted edges the rule left out (an endpoint outside, or a hop-k destination) */
} sampled_graph;

/**
 * Sample the computational graph of @p num_targets distinct @p targets of @p seq with @p o's
 * fan-outs, draws from rng_seed_keyed(@p seed, #MINIBATCH_SAMPLE_STREAM, @p index), and follow it
 * through every snapshot by the delta rule. @return 0, or TF_ERR_INPUT (a target out of range or
 * repeated, no memory).
 */
int sampled_graph_build(sampled_graph *s, const snapshot_seq *seq, const int32_t *targets, int64_t num_targets,
                        const minibatch_options *o, uint64_t seed, uint64_t index, tf_error *err);

/** Release @p s (safe on a zeroed one). */
void sampled_graph_free(sampled_graph *s);

/**
 * Record @p o in @p tr->sampling, which checkpoints keep, so that a checkpoint of mini-batch epochs
 * resumes only with the same N and fan-outs (and a whole-graph one only on whole graphs). The
 * epochs below record it themselves; a run that loads a checkpoint records it before the load.
 */
void minibatch_record(trainer *tr, const minibatch_options *o);

/** Mini-batches per epoch: ceil(num_nodes / N). */
int64_t minibatch_count(const minibatch_options *o, int64_t num_nodes);

/**
 * The targets of mini-batch @p batch of epoch @p epoch: positions batch * N .. of the epoch's
 * permutation, sorted ascending, into @p targets [N]. @return how many (N, or fewer in the last).
 */
int64_t minibatch_targets(const minibatch_options *o, int64_t num_nodes, uint64_t seed, int64_t epoch, int64_t batch,
                          int32_t *targets);

/**
 * Mini-batch @p batch of @p tr's current epoch: its targets (minibatch_targets() into @p targets
 * [N]) and their sampled graphs, drawn under the key epoch x batches + batch, so that the
 * reference and every rank of the twin build the same ones. @return as sampled_graph_build();
 * @p s is zeroed on failure.
 */
int minibatch_sample(sampled_graph *s, const trainer *tr, const snapshot_seq *seq, const minibatch_options *o,
                     int64_t batch, int32_t *targets, tf_error *err);

/**
 * Close an epoch of mini-batches (trainer_close_epoch() over batches x the schedule's windows):
 * @p loss_sum is the sum of every mini-batch window's loss; report->steps is kept.
 */
void minibatch_close_epoch(trainer *tr, const minibatch_options *o, int64_t num_nodes, double loss_sum,
                           epoch_report *report);

/**
 * Forward and backward of @p m over view snapshots first .. first+count-1 of @p s: the loss, the
 * mean over the snapshots of the MSE over the present targets, computed by @p m's kernels and
 * scaled by @p scale for the gradients (added to the model's). Adds the unscaled loss to
 * @p loss_sum.
 */
int minibatch_window_gradient(model *m, const sampled_graph *s, int64_t first, int64_t count, float scale,
                              double *loss_sum, tf_error *err);

/**
 * The gradient of step @p step of @p plan over mini-batch @p s (trainer_train_step() on a sampled
 * view): zero the model's gradients, then minibatch_window_gradient() for every window of the
 * step, scaled by 1 / the step's windows, so they hold the step's mean gradient, ready for an
 * optimizer step. Adds the windows' (unscaled) losses to @p loss_sum.
 */
int minibatch_train_step(model *m, const sampled_graph *s, const train_schedule *plan, int64_t step,
                         double *loss_sum, tf_error *err);

/**
 * One epoch sequence-first (above), then the test MSE on the full graphs (trainer_evaluate()).
 * report->windows counts mini-batch windows (batches x windows), report->steps the optimizer
 * steps. The oracle of opt_minibatch_epoch() (opt/minibatch.h).
 */
int minibatch_epoch(trainer *tr, const snapshot_seq *seq, const minibatch_options *o, epoch_report *report,
                    tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
