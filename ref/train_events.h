/**
 * @file ref/train_events.h
 * @brief Training an event model (TGN, JODIE) for link prediction: chronological split,
 *        batches, negative sampling, epochs, evaluation by AP and AUC, checkpoints.
 *
 * **Split.** The events are split in time order, 70/15/15 by count: events 0 .. 0.70 N - 1
 * train, 0.70 N .. 0.85 N - 1 validate, the rest test (integer arithmetic, N * 70 / 100 and
 * N * 85 / 100). Events with equal timestamps may straddle a boundary; nothing leaks, since a
 * root only ever sees neighbours strictly before its time.
 *
 * **Batches.** Each split is cut into batches of `batch_size` consecutive events from its
 * start (the last one shorter); boundaries never move (TGL's random chunk scheduling is not
 * used), so a seed fixes the whole run.
 *
 * **Negatives.** One per positive: a destination drawn uniformly from the vertices that take part
 * in at least one event of the stream (TGL draws from all node ids, which are exactly those
 * vertices in its datasets; here ids may have gaps, e.g. Wikipedia's start at 1), or, with
 * EVENT_NEGATIVES_DESTINATIONS, from the vertices that are the destination of at least one event
 * (TGN's reference code samples from the destinations of the data; on a bipartite stream such as
 * Wikipedia that makes every negative an item, a harder test than mostly-user negatives). Event
 * e's negative is a pure function of (stream, e) (event_trainer_negative(): a keyed draw,
 * rng_seed_keyed(), as every other seeded draw of twofold), so it does not depend on the batch size, on how a batch is split among
 * ranks, or on the order batches are built in. The training stream of epoch e is keyed by
 * (seed, e), so a resumed run draws what an uninterrupted one would; the validation, test and
 * replay streams have fixed keys of their own, the same every epoch and for every training seed,
 * so evaluation numbers are comparable across epochs and runs.
 *
 * **Listings.** An epoch is a list of batch specs (event_trainer_epoch_batches(): first event,
 * size, negative stream, train or not, split), run in order by one loop, event_trainer_epoch_with(),
 * through an #event_batch_runner: the reference's runs each batch with event_trainer_run_batch();
 * the twins of chapters 04 and 05 bring their own (opt/train_events.h plans and exchanges each
 * batch over ranks, opt/async_pipeline.h takes it from a queue built ahead), so the loop, its
 * stops and its bookkeeping (event_epoch_tally: losses, scores, AP) are the same code for all.
 *
 * **An epoch** (event_trainer_epoch()): the node memory is reset to zero; the training split is
 * run batch by batch (forward, loss, backward, one Adam step, memory write-back); then the
 * validation split and the test split are run forward only, **continuing the memory** from the
 * training pass and writing it back too (no gradient), as TGN's protocol does. The epoch
 * reports the mean training batch loss and, for validation and test, the mean batch loss and the
 * average precision and ROC AUC over all the split's positive and negative scores (metrics.h).
 *
 * **Evaluation with fixed parameters** (event_trainer_evaluate(), TGL's end-of-training
 * protocol): reset the memory, replay the training split forward only to rebuild it, then
 * validation and test. Used when a run trains no epoch (e.g. it loads a finished checkpoint).
 *
 * **Checkpoints** (checkpoint.h): parameters, Adam's moments and trainer.npy (version, epoch,
 * Adam step, seed and the model's shape). The memory is not saved: every epoch starts from zero.
 * The seed is restored on load because it decides the negatives of the epochs still to come.
 */
#ifndef TWOFOLD_REF_TRAIN_EVENTS_H
#define TWOFOLD_REF_TRAIN_EVENTS_H

#include <stdint.h>

#include "ref/nn/adam.h"
#include "ref/async.h"
#include "ref/core/error.h"
#include "ref/models/event_model.h"
#include "ref/data/events.h"
#include "ref/models/node_memory.h"
#include "ref/core/progress.h"
#include "ref/data/temporal_csr.h"
#include "ref/core/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Where negative destinations are drawn from. */
typedef enum event_negatives {
    EVENT_NEGATIVES_ALL,            /**< every vertex of the stream (TGL) */
    EVENT_NEGATIVES_DESTINATIONS,   /**< every vertex that is some event's destination (TGN's code) */
} event_negatives;

/** How to train. */
typedef struct event_train_options {
    int64_t epochs;              /**< epochs to reach (a resumed run continues up to this) */
    double learning_rate;        /**< Adam's lr */
    int64_t batch_size;          /**< events per batch (>= 1) */
    uint64_t seed;               /**< initial parameters and training negatives */
    event_negatives negatives;   /**< where negatives come from */
    int staleness;               /**< 0, or 1: each Adam step applies the previous training batch's gradient
                                      ([Sven] Eq. 13); the last one is applied where the training split ends */
    const kernels *kernels;      /**< what the model computes on: NULL for ref_kernels, or a twin (opt_kernels,
                                      BLAS: the same model within the fp tolerance, ref/nn/kernels.h) */
    int without_memory;          /**< 1: the trainer holds no node memory (set by a twin that keeps it
                                      partitioned: a replica made only to be freed would set its peak) */
} event_train_options;

/** Set @p options to the defaults: 3 epochs, lr 1e-3, batch 200, seed 1, negatives from all vertices. */
void event_train_options_default(event_train_options *options);

/** A model being trained, with its optimizer, node memory and where training stands. */
typedef struct event_trainer {
    event_model model;               /**< the model */
    adam optimizer;                  /**< Adam state */
    node_memory memory;              /**< node memory, mailbox and timestamps */
    temporal_csr history;            /**< every vertex's events in time order, for neighbour sampling */
    const event_stream *events;      /**< the data (not owned; must outlive the trainer) */
    const float *edge_features;      /**< [num_events][d_e] (not owned), or NULL */
    event_train_options options;     /**< the settings */
    int64_t epoch;                   /**< epochs completed */
    int64_t train_end;               /**< events 0 .. train_end-1 train */
    int64_t validation_end;          /**< train_end .. validation_end-1 validate, the rest test */
    int32_t *candidates;             /**< where negatives come from: vertices of the stream, or its destinations */
    int64_t candidate_count;         /**< number of candidates */
    int32_t *negatives;              /**< [batch_size] scratch */
    float *scores;                   /**< [2 batch_size] scratch */
    float *dscores;                  /**< [2 batch_size] scratch */
    delayed_gradient delayed;        /**< staleness 1: the gradient waiting for the next step */
    workspace scratch;               /**< every batch's tape and backward scratch (event_model_forward_in()): allocated
                                          once, at the largest batch, and reused */
} event_trainer;

/** Loss and ranking metrics of one split. */
typedef struct event_metrics {
    int64_t events;              /**< positive events scored */
    double loss;                 /**< mean batch loss */
    double average_precision;    /**< AP over all positive and negative scores of the split */
    double roc_auc;              /**< ROC AUC over the same */
} event_metrics;

/** Results of one epoch. */
typedef struct event_epoch_report {
    int64_t epoch;               /**< 1-based number of the epoch just finished */
    int64_t batches;             /**< training batches (= Adam steps) */
    double train_loss;           /**< mean training batch loss, each computed before its step */
    event_metrics validation;    /**< the validation split, memory continued from training */
    event_metrics test;          /**< the test split, memory continued from validation */
} event_epoch_report;

/** The three parts of the stream. */
typedef enum event_split {
    EVENT_SPLIT_TRAIN,        /**< the first 70 %: trained (or replayed forward only) */
    EVENT_SPLIT_VALIDATION,   /**< the next 15 % */
    EVENT_SPLIT_TEST,         /**< the rest */
} event_split;

/** One batch of an epoch: which events, whose negatives, and whether it trains. */
typedef struct event_batch_spec {
    int64_t first;       /**< index of the batch's first event */
    int64_t size;        /**< B events (the last batch of a split may be shorter) */
    uint64_t stream;     /**< key of its negatives (event_trainer_negative()) */
    int train;           /**< 1: backward and one Adam step */
    event_split split;   /**< where its loss and scores are tallied */
} event_batch_spec;

/** What an epoch's batches add up to: losses per split, the evaluated splits' scores, progress. */
typedef struct event_epoch_tally {
    char stage[3][64];              /**< progress label of each split */
    double loss_sum[3];             /**< sum of the batch losses of each split */
    int64_t batches[3];             /**< batches tallied per split */
    int64_t total[3];               /**< batches per split */
    int64_t first[3];               /**< first event of each split */
    int64_t count[3];               /**< events of each split */
    float *scores[3];               /**< validation and test: [2 count] positives then negatives; training: NULL */
    progress_fn progress;           /**< called after every batch, or NULL */
    void *progress_context;         /**< passed to progress */
} event_epoch_tally;

/**
 * Create a trainer: check the data and options, split, build the temporal CSR, create the
 * model, optimizer and memory.
 * @param tr             out: the trainer; free with event_trainer_free()
 * @param events         the event stream (validated, time-sorted, as dataset_load() returns it)
 * @param edge_features  [num_events][config->edge_width] edge features, NULL when edge_width is 0
 * @param config         the model's shape
 * @param options        how to train
 * @param err            out: too few events to split, bad options, JODIE with negative
 *                       timestamps, features missing, no memory
 * @return 0, or TF_ERR_INPUT
 */
int event_trainer_create(event_trainer *tr, const event_stream *events, const float *edge_features,
                         const event_model_config *config, const event_train_options *options, tf_error *err);

/** Release everything the trainer owns. Safe on a zeroed trainer. */
void event_trainer_free(event_trainer *tr);

/**
 * The negative destination of event @p event in the negative stream @p stream: a pure function
 * of both (and of the candidates), drawn uniformly from the candidates.
 */
int32_t event_trainer_negative(const event_trainer *tr, uint64_t stream, int64_t event);

/**
 * The batches of the next epoch (number tr->epoch + 1): the training split in batches that train,
 * then validation and test forward only.
 * @param tr     the trainer
 * @param batches  [count] out, or NULL to count
 * @return the number of batches
 */
int64_t event_trainer_epoch_batches(const event_trainer *tr, event_batch_spec *batches);

/** The batches of event_trainer_evaluate(): the training split replayed forward only (its own
 *  negative stream), then validation and test. @p batches [count] out, or NULL to count. */
int64_t event_trainer_replay_batches(const event_trainer *tr, event_batch_spec *batches);

/** Whether @p spec is a batch @p tr can run: 1..batch_size events inside the stream.
 *  @return 0, or TF_ERR_INPUT with "batch of N events from F: expected ..." in @p err. */
int event_trainer_check_batch(const event_trainer *tr, const event_batch_spec *spec, tf_error *err);

/**
 * One batch: negatives, forward, loss, (when spec->train: backward and one Adam step), then the
 * memory write-back. After a training batch the parameters' gradients are still in place (with
 * staleness 1: the gradient just applied, the previous batch's; the first batch of an epoch
 * applies nothing, and event_trainer_flush_gradient() applies the last one).
 * @param tr      the trainer
 * @param spec    the batch (size 1..batch_size)
 * @param loss    out: the batch loss
 * @param scores  [2 size] out: positives then negatives, or NULL (the trainer's scratch)
 * @param err     out: a batch outside the stream, what failed
 * @return 0, or an error code
 */
int event_trainer_run_batch(event_trainer *tr, const event_batch_spec *spec, double *loss, float *scores,
                            tf_error *err);

/**
 * Whether training is still finite after training batch @p step of the current epoch: the
 * batch's loss, every parameter and Adam's moments. Features near float's range overflow the
 * model into Inf or NaN; a checkpoint of that state would be refused by its own --load, so the
 * caller stops at the first such step and saves nothing.
 * @param tr   the trainer after the batch (its epoch counter not yet moved: the epoch is tr->epoch + 1)
 * @param loss the batch's loss
 * @param step 1-based training batch (= Adam step) of the epoch
 * @param err  set to "epoch E, step S (events F..L): training diverged (what is not finite); ..."
 * @return 0, or TF_ERR_INPUT
 */
int event_trainer_check_finite(const event_trainer *tr, double loss, int64_t step, tf_error *err);

/** Staleness 1: the pending gradient's Adam step, where the training split ends (before any
 *  evaluation or checkpoint). Nothing with staleness 0 or nothing pending. */
void event_trainer_flush_gradient(event_trainer *tr);

/**
 * Start tallying an epoch (or an evaluation) of @p tr's splits. Progress labels are @p label
 * followed by @p train_stage, "validation" and "test".
 * @return 0, or TF_ERR_INPUT (no memory; nothing is left allocated)
 */
int event_epoch_tally_create(event_epoch_tally *t, const event_trainer *tr, const char *label, const char *train_stage,
                             progress_fn progress, void *progress_context, tf_error *err);

/** Add one batch's loss and scores [2 spec->size] (the whole batch's, in event order). */
void event_epoch_tally_add(event_epoch_tally *t, const event_batch_spec *spec, double loss, const float *scores);

/** The report of a finished tally: mean training loss and batches, validation and test metrics
 *  (the caller sets report->epoch). */
int event_epoch_tally_finish(const event_epoch_tally *t, event_epoch_report *report, tf_error *err);

/** Release a tally's scores. */
void event_epoch_tally_free(event_epoch_tally *t);

/**
 * How the batches of a listing run: the part of an epoch that differs between the reference and
 * its twins. event_trainer_epoch_with() calls start(), then run() for every batch in order, and
 * end_training() where the training batches end (before any evaluation), then stop().
 */
typedef struct event_batch_runner {
    /** Zero the node memory and get ready for @p batches [count] (a twin may build them ahead). */
    int (*start)(void *context, const event_batch_spec *batches, int64_t count, tf_error *err);
    /** Run the next batch, @p spec: its loss, and in *scores where its scores [2 spec->size] are. */
    int (*run)(void *context, const event_batch_spec *spec, double *loss, const float **scores, tf_error *err);
    /** The training batches are done: apply what is pending (staleness 1's last gradient), or NULL. */
    int (*end_training)(void *context, tf_error *err);
    /** Release what start() took (called after every start(), failed or not), or NULL. */
    void (*stop)(void *context);
    void *context;   /**< passed to each */
} event_batch_runner;

/** The reference's runner: event_trainer_run_batch() on @p tr, which must outlive it. */
event_batch_runner event_trainer_runner(event_trainer *tr);

/**
 * event_trainer_epoch() with another runner: the one loop of every event trainer. The batches of
 * event_trainer_epoch_batches() run in order by @p runner from a zero memory; the first training
 * step whose loss or state is not finite stops it (event_trainer_check_finite()); tr->epoch moves
 * where the training batches end. Arguments as event_trainer_epoch()'s.
 */
int event_trainer_epoch_with(event_trainer *tr, const event_batch_runner *runner, event_epoch_report *report,
                             progress_fn progress, void *progress_context, tf_error *err);

/** event_trainer_evaluate() with another runner: the batches of event_trainer_replay_batches(), as
 *  event_trainer_epoch_with() runs them. Arguments as event_trainer_evaluate()'s. */
int event_trainer_evaluate_with(event_trainer *tr, const event_batch_runner *runner, event_metrics *validation,
                                event_metrics *test, progress_fn progress, void *progress_context, tf_error *err);

/**
 * Train one epoch, then evaluate validation and test continuing the memory (see above).
 * @param tr                the trainer
 * @param report            out: the epoch's numbers
 * @param progress          called after every batch with the stage and batches done (may be NULL)
 * @param progress_context  passed to @p progress
 * @param err               out: what failed
 * @return 0, or an error code
 */
int event_trainer_epoch(event_trainer *tr, event_epoch_report *report, progress_fn progress, void *progress_context,
                        tf_error *err);

/**
 * Evaluate the current parameters: reset the memory, replay the training split forward only,
 * then validation and test.
 * @param tr                the trainer (its memory is overwritten; parameters untouched)
 * @param validation        out: validation metrics
 * @param test              out: test metrics
 * @param progress          called after every batch (may be NULL)
 * @param progress_context  passed to @p progress
 * @param err               out: what failed
 * @return 0, or an error code
 */
int event_trainer_evaluate(event_trainer *tr, event_metrics *validation, event_metrics *test, progress_fn progress,
                           void *progress_context, tf_error *err);

/**
 * Save a checkpoint (checkpoint.h: a kill at any instant leaves a complete one): parameters as
 * NAME.npy with TGL's names, Adam's moments, and trainer.npy, written last (the header with epoch,
 * step and a digest of the events and edge features; the seed, the model's shape and the split).
 * @param tr         the trainer
 * @param directory  where to save
 * @param err        out: what failed
 * @return 0, or an error code
 */
int event_trainer_save(const event_trainer *tr, const char *directory, tf_error *err);

/**
 * Load parameters from @p directory (or the complete checkpoint an interrupted save left beside
 * it); if it holds trainer.npy, that is checked first (the model, the data, the shape and the
 * split must be this run's, or the error names what differs), then Adam's state, the epoch and
 * the seed are read, so training resumes exactly. A directory of parameters only starts at
 * epoch 0 with a fresh optimizer.
 * @param tr         the trainer
 * @param directory  the checkpoint
 * @param err        out: another model, other data, other shapes, missing or damaged files
 * @return 0, or TF_ERR_INPUT
 */
int event_trainer_load(event_trainer *tr, const char *directory, tf_error *err);

/**
 * Read user-supplied edge features: a float32 .npy matrix with one row per event.
 * @param path        the .npy file
 * @param num_events  the event count the matrix must have as rows
 * @param out         out: the matrix [num_events][F], F >= 1; free with tensor_free()
 * @param err         out: unreadable file, or a shape other than [num_events][F] (named in the message)
 * @return 0, or TF_ERR_INPUT
 */
int event_features_read(const char *path, int64_t num_events, tensor *out, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
