/**
 * @file opt/train_events.h
 * Twins: event_trainer_run_batch(), event_trainer_epoch(), event_trainer_evaluate() (ref/train_events.h).
 * @brief The distributed twin of event-model training (ref/train_events.h): TGN, JODIE and APAN
 *        on R MPI ranks with the node memory partitioned by vertex, moved by Sven's redundancy-free
 *        dispatch ([Sven] §3.1) or by one of its baselines.
 *
 * **What it twins.** event_trainer_run_batch(), event_trainer_epoch() and
 * event_trainer_evaluate(): the same batches (event_trainer_epoch_batches()), the same negatives
 * (keyed by event), the same model stages (ref/models/event_model.h), the same Adam. The stages run
 * on the kernels of the options (event_train_options.kernels): the reference's by default, which
 * gives the bitwise equalities below; opt_kernels (BLAS, what `twofold train --impl opt` uses)
 * gives the fast twin, equal within the fp tolerance after every batch, with the time encoders'
 * weight gradients held to 1e-4 (verify/test_dispatch_mpi.c says why). The fast twin also runs
 * the memory updater once per distinct (vertex, update time) of a batch (the update time is the
 * query time under the per-entry rule and the vertex's mail_ts under the per-vertex rule, so there
 * once per vertex, event_model_update_time()): entries that share both read the same row (Psi) at
 * the same time, so their s' are equal by construction; their
 * gradients are added before the updater's backward (another order of the same sum, hence not
 * on the reference's kernels, whose checks are bitwise). DepComm's owners update per request.
 *
 * **What changes.** Every rank holds the stream, its temporal CSR, the parameters and Adam's
 * state; the node memory, mailbox and timestamps are split by vertex over the ranks
 * (opt/dispatch_placement.h: owner and local row, Sven's dual hash). Global batch k is the
 * reference's batch k, cut into R time-ordered slices (opt/dispatch_batch.h); rank r runs its
 * slice. Per batch, in this order (each step its own function, so chapter 05's pipelining can
 * reorder and overlap them):
 *
 *  1. plan      opt_dispatch_plan_batch(): slice, negatives, entries, Algorithm 2 (V_u, Psi,
 *               Phi with global winners), requests by owner. No memory, weights or MPI.
 *  2. requests  opt_dispatch_exchange_requests(): the ids (DepComm: ids and query times) to
 *               their owners, one all-to-all of counts and one of ids.
 *  3. fetch     opt_dispatch_fetch_rows(): owners answer with their rows [memory | mail | mem_ts]
 *               (and mail_ts under the per-vertex memory-update rule; APAN: its M mails and their
 *               M mail_ts),
 *               one all-to-all; the rows are expanded by Psi into the tape, one copy per entry,
 *               exactly what the reference's per-occurrence read gives.
 *  4. forward   opt_dispatch_forward(): memory update, embedding, scores, the loss's two sums
 *               all-reduced (the global batch's loss: sums / B).
 *  5. backward  opt_dispatch_backward(): gradients of this rank's terms (each already divided
 *               by the global B), summed in double (parameter.sums, ref/nn/parameters.h).
 *  6. reduce    opt_dispatch_reduce_gradients(): one all-reduce of every gradient's double sums,
 *               packed, then each rounded to float once.
 *  7. update    opt_dispatch_apply_update(): Adam, identical on every rank (identical input).
 *  8. write     opt_dispatch_write_back(): each vertex's winning write [vertex | s' | mail |
 *               time] (per vertex also tau, the new mem_ts) (Phi over the global batch) to its
 *               owner, one all-to-all; owners store it
 *               at its local row. APAN: rows [vertex | parts | s' | mail | mem_ts | mail_ts] that
 *               store an endpoint's memory, deliver the delivery rule's winning mail (to an
 *               endpoint or a sampled neighbour), or both (opt/dispatch_batch.h lists them);
 *               the owner puts the mail into the vertex's next ring slot.
 *
 * The modes differ only in steps 2, 3 and 8 (and DepComm in 4 and 5):
 *
 * | mode      | read (2, 3)                                   | write (8)                                 |
 * |-----------|-----------------------------------------------|-------------------------------------------|
 * | sven      | each unique vertex of a rank's slice once      | each vertex's winning write once          |
 * | naive     | every occurrence (Psi the identity)            | every positive endpoint, in key order     |
 * | depcache  | a full replica on every rank: local, 0 bytes   | winning writes all-gathered to replicas   |
 * | depcomm   | every occurrence: the owner runs the memory    | as sven                                   |
 * |           | updater and returns s' and mem_ts; backward    |                                           |
 * |           | returns d loss / d s' to the owner             |                                           |
 *
 * **Why it is still equal.** An entry's s' depends only on its row's bits, its update time and the
 * parameters (the updater, the time encodings and LayerNorm work row by row; attention and the
 * decoder per root), and the fetch delivers exactly the row the reference's per-occurrence read
 * gives: dispatch moves bits, Psi restores one copy per occurrence. The write-back stores exactly
 * the bits the reference's last write stores, for exactly the vertices it writes. So, given the
 * same parameters, the scores of every batch and the node memory, mailbox and both timestamps
 * after every batch are **bitwise** the reference's, on any R and under any placement, in every
 * mode. The parameter gradient is a sum over the entries; the reference sums it in double and
 * rounds it to float once (event_model_backward()), and the twin sums each rank's part in
 * double, all-reduces the double sums and rounds once, so the gradients differ from the
 * reference's only by the order of a double sum (about 1e-16 relative): after the rounding to
 * float they are almost always the same bits. Rounding each rank's part to float before a float
 * all-reduce, as an earlier version did, left one-ulp differences that Adam carried into a test
 * AP 1.8e-3 away after two epochs on 4 ranks. Hence the checks: after every batch with the
 * reference's parameters adopted (lockstep: opt_event_trainer_adopt_parameters()), memory
 * bitwise; on one rank, free-running, everything bitwise; free-running on R > 1 ranks, the test
 * AP within 1e-6 of the reference's. Sven, naive and DepCache compute the same local gradients,
 * so their parameters stay bitwise equal to each other on any R; DepComm sums the updater's
 * gradient on the owners (another order of the same double sums).
 *
 * **The pre-batch invariant.** Every read of batch k sees the memory as it was before batch k.
 * An owner packs all the rows batch k asks of it (step 3) before it applies batch k's writes
 * (step 8): program order on the owner gives it with blocking collectives. Non-blocking
 * variants (chapter 05) must keep it.
 *
 * **Bytes** are counted by the comm layer (exact, self-sends excluded) and split by purpose
 * (#dispatch_bytes); dispatch_traffic_predict() gives what each category must be from the counts
 * of a run, and verify/test_dispatch_mpi.c and bench/dispatch.c check measured == predicted.
 *
 * Ownership: opt_event_trainer_create() builds the reference trainer inside (tr->base) and
 * every buffer, sized once for the batch size; opt_event_trainer_free() releases everything.
 * The trainer must not be moved after creation (its setup points into it). The stream and edge
 * features are borrowed and must outlive it.
 */
#ifndef TWOFOLD_OPT_TRAIN_EVENTS_H
#define TWOFOLD_OPT_TRAIN_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "opt/comm.h"
#include "opt/dispatch_batch.h"
#include "opt/dispatch_exchange.h"
#include "opt/dispatch_placement.h"
#include "opt/dispatch.h"
#include "ref/train_events.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Bytes this rank sent, by purpose (summed over ranks by opt_event_trainer_traffic()). */
typedef struct dispatch_bytes {
    uint64_t counts;             /**< the one-count-per-pair exchanges before every row exchange */
    uint64_t requests;           /**< ids asked of owners (DepComm: ids and query times) */
    uint64_t dispatch_rows;      /**< memory rows owners send to requesters */
    uint64_t updates;            /**< DepComm: s' and mem_ts owners send to requesters */
    uint64_t update_gradients;   /**< DepComm: d loss / d s' requesters send to owners */
    uint64_t aggregation;        /**< write rows to owners (DepCache: to every replica) */
    uint64_t gradients;          /**< the parameter gradient all-reduce */
    uint64_t other;              /**< loss sums and gathered scores */
} dispatch_bytes;

/** The distributed trainer. */
typedef struct opt_event_trainer {
    event_trainer base;             /**< model, Adam, temporal CSR, candidates, split; base.memory is DepCache's
                                         replica (never made in the other modes) */
    comm *group;                    /**< the ranks (borrowed) */
    dispatch_mode mode;             /**< how memory moves */
    dispatch_placement placement;   /**< who owns which vertex's row */
    node_memory shard;              /**< the rows this rank owns, in local-row order (unused by DepCache) */
    dispatch_setup setup;           /**< what plans are built from (points into this trainer) */
    dispatch_table table;           /**< plan scratch */
    dispatch_batch batch;           /**< the batch in flight */
    dispatch_exchange fetch;        /**< layout of the request and fetch exchanges */
    dispatch_exchange write;        /**< layout of the write-back exchange */
    int64_t capacity;               /**< rows every exchange buffer holds */
    size_t row_bytes;               /**< bytes per row of capacity in the exchange buffers: every write row fits, and
                                         every read row of the entries (APAN's hold M mails, read by 3 B entries) */
    unsigned char *send_rows;       /**< [capacity][row_bytes] */
    unsigned char *receive_rows;    /**< [capacity][row_bytes] */
    int32_t *asked;                 /**< [capacity] ids other ranks asked of this rank, as received */
    double *asked_time;             /**< [capacity] DepComm: their query times */
    int32_t *arrival;               /**< [capacity] where V_u row i's answer sits in receive_rows */
    event_tape serving;             /**< DepComm: the occurrences this rank updated as owner (kept for backward) */
    float *scores;                  /**< [2 B] this rank's slice: positives, then negatives */
    float *dscores;                 /**< [2 B] their gradients */
    float *global_scores;           /**< [2 B] the global batch's scores, gathered */
    float *dupdated;                /**< DepComm: [capacity][d_mem] d loss / d s' of this rank's entries */
    double *gradients;              /**< [parameter count] the gradients' double sums, packed */
    double loss_sums[2];            /**< the batch's all-reduced positive and negative BCE sums */
    dispatch_bytes bytes;           /**< this rank's traffic since the last reset */
    dispatch_counts counts;         /**< this rank's batches since the last reset */
    int64_t trained_entries_remote; /**< remote entries of training batches (DepComm's gradient return) */
    event_tape unique;              /**< off the reference's kernels, not DepComm: the batch's distinct
                                         (vertex, query time) entries, one updater row each
                                         (opt_dispatch_forward()); sized once for capacity rows */
    int32_t *unique_of;             /**< [capacity] the row of `unique` each entry of the batch shares */
    int32_t *slots;                 /**< [slot_count] open-addressing table of `unique`'s rows, -1 empty */
    int64_t slot_count;             /**< a power of two >= 2 capacity */
    int64_t updates_saved;          /**< updater rows not computed, as duplicates (since creation) */
    int64_t updater_rows;           /**< updater rows this rank computed (since creation; DepComm: as owner) */
    int64_t updater_batches;        /**< batches whose updater this rank ran (since creation) */
    int64_t updater_entries;        /**< their entries, each of which the reference gives an updater row */
} opt_event_trainer;

/**
 * Create the trainer on every rank of @p group (collective: every rank passes the same data,
 * options, mode and placement).
 * @param tr             out (must stay where it is)
 * @param events         the stream (borrowed)
 * @param edge_features  [num_events][config->edge_width] or NULL
 * @param config         the model's shape
 * @param options        how to train
 * @param mode           how memory moves
 * @param placement      a --placement value (opt/dispatch_placement.h)
 * @param group          the ranks, MPI transport
 * @param err            out: what failed (as event_trainer_create(), a bad placement, parameters that differ)
 * @return 0, or an error code (nothing is left allocated)
 */
int opt_event_trainer_create(opt_event_trainer *tr, const event_stream *events, const float *edge_features,
                             const event_model_config *config, const event_train_options *options,
                             dispatch_mode mode, const char *placement, comm *group, tf_error *err);

/** Release everything. Safe on a zeroed trainer. */
void opt_event_trainer_free(opt_event_trainer *tr);

/** Zero this rank's part of the node memory (the start of every epoch and evaluation). */
void opt_event_trainer_reset_memory(opt_event_trainer *tr);

/** Step 1: plan this rank's part of global batch @p global into tr->batch. No MPI. */
int opt_dispatch_plan_batch(opt_event_trainer *tr, const event_batch_spec *global, tf_error *err);

/** Step 2: ids (DepComm: ids and times) to their owners. Collective. */
int opt_dispatch_exchange_requests(opt_event_trainer *tr, tf_error *err);

/** Step 3: the rows of the planned batch into its tape (DepCache: from the replica; DepComm: the
 *  owners' s' and mem_ts). Collective. */
int opt_dispatch_fetch_rows(opt_event_trainer *tr, tf_error *err);

/** Step 3's owner half: the rows asked of this rank (tr->asked, tr->fetch.received of them), in the
 *  order asked, packed into tr->send_rows from this rank's shard. */
void opt_dispatch_pack_answers(opt_event_trainer *tr);

/** Step 3's requester half for one entry: answer @p answer of tr->receive_rows into entry @p k of
 *  @p tape (its own copy of memory, mail and mem_ts). */
void opt_dispatch_unpack_answer(const opt_event_trainer *tr, int64_t answer, event_tape *tape, int64_t k);

/**
 * Step 4: memory update (not DepComm: its owners did it), embeddings, scores; the loss's sums
 * all-reduced into tr->loss_sums. Collective.
 * @param tr      the trainer, its batch fetched
 * @param loss    out: the global batch's loss
 * @param scores  [2 B] out: the global batch's scores, gathered (a collective of its own), or NULL
 * @param err     out: what failed
 * @return 0, or an error code
 */
int opt_dispatch_forward(opt_event_trainer *tr, double *loss, float *scores, tf_error *err);

/** Step 5: zero the gradients, then add this rank's (DepComm: and its served occurrences') parts.
 *  Collective in DepComm. */
int opt_dispatch_backward(opt_event_trainer *tr, tf_error *err);

/** Step 6: sum every gradient over the ranks (one all-reduce). Collective. */
int opt_dispatch_reduce_gradients(opt_event_trainer *tr, tf_error *err);

/** Step 7: one Adam step on the summed gradient (the same on every rank). */
void opt_dispatch_apply_update(opt_event_trainer *tr);

/** Step 8: the winning writes to their owners (DepCache: to every replica), applied; the batch's
 *  counts then join the trainer's (tr->counts). Collective. */
int opt_dispatch_write_back(opt_event_trainer *tr, tf_error *err);

/**
 * Twin of event_trainer_run_batch(): steps 1-8 (5-7 only when global->train). Collective.
 * @param tr      the trainer
 * @param global  the global batch
 * @param loss    out: the global batch's loss (every rank)
 * @param scores  [2 global->size] out: the global batch's scores (every rank), or NULL
 * @param err     out: what failed
 * @return 0, or an error code
 */
int opt_event_trainer_run_batch(opt_event_trainer *tr, const event_batch_spec *global, double *loss, float *scores,
                                tf_error *err);

/** Twin of event_trainer_epoch(). Collective; every rank's report is the same. Pass progress on one rank only. */
int opt_event_trainer_epoch(opt_event_trainer *tr, event_epoch_report *report, progress_fn progress,
                            void *progress_context, tf_error *err);

/** Twin of event_trainer_evaluate(). Collective. */
int opt_event_trainer_evaluate(opt_event_trainer *tr, event_metrics *validation, event_metrics *test,
                               progress_fn progress, void *progress_context, tf_error *err);

/**
 * The union of every rank's memory, mailbox and timestamps, on rank 0 (DepCache: rank 0's
 * replica, after checking every replica has the same bits). Collective; not counted as traffic.
 * @param tr    the trainer
 * @param full  rank 0: a node memory of num_nodes rows, overwritten; other ranks: NULL
 * @param err   out: replicas that differ
 * @return 0, or an error code
 */
int opt_event_trainer_gather_memory(const opt_event_trainer *tr, node_memory *full, tf_error *err);

/** Every rank takes rank @p root's parameter values (lockstep checks). Collective; not counted. */
int opt_event_trainer_adopt_parameters(opt_event_trainer *tr, int root, tf_error *err);

/** Save a checkpoint (event_trainer_save() of the model and Adam, which every rank shares) on rank 0. */
int opt_event_trainer_save(const opt_event_trainer *tr, const char *directory, tf_error *err);

/** Load a checkpoint on every rank, then check the ranks agree. Collective. */
int opt_event_trainer_load(opt_event_trainer *tr, const char *directory, tf_error *err);

/** A run's traffic, summed over the ranks. */
typedef struct dispatch_traffic {
    int ranks;                       /**< R */
    dispatch_bytes bytes;            /**< measured bytes by purpose */
    dispatch_counts counts;          /**< what the batches read and wrote */
    int64_t trained_entries_remote;  /**< remote entries of training batches */
} dispatch_traffic;

/** Sum every rank's bytes and counts (collective); then zero them when @p reset. */
int opt_event_trainer_traffic(opt_event_trainer *tr, dispatch_traffic *out, int reset, tf_error *err);

/** Bytes of a row the fetch moves for model @p m: [memory d_mem][mailbox M d_msg] float32 and mem_ts
 *  float64; under the per-vertex memory-update rule, and for APAN, the mail_ts of every slot too
 *  (8 M bytes more; TGN and JODIE: M = 1). */
size_t dispatch_read_row_bytes(const event_model *m);

/** Bytes of a row the write-back moves for model @p m: vertex int32, [s' d_mem][mail d_msg] float32,
 *  time float64; under the per-vertex rule the new mem_ts float64 too (8 bytes more). APAN: vertex
 *  and which halves it carries, int32 each, [s'][one mail], mem_ts and mail_ts (8 + 4 (d_mem + d_msg)
 *  + 16): a row may store a memory, deliver a mail, or both. */
size_t dispatch_write_row_bytes(const event_model *m);

/**
 * What each predictable category must be for @p mode from a run's counts (exact; `gradients`
 * and `other` are left 0): counts 8 R (R - 1) per count exchange (two per batch, DepCache one);
 * requests 4 per remote row asked (DepComm 12: id and time); fetched rows read_row each; DepComm
 * (4 d_mem + 8) per remote entry (per vertex: 4 d_mem + 16, mail_ts too) and 4 d_mem per remote
 * entry of a training batch; write rows
 * write_row each (DepCache: (R - 1) write_row per vertex written).
 */
void dispatch_traffic_predict(const dispatch_traffic *t, dispatch_mode mode, const event_model *m,
                              dispatch_bytes *predicted);

/** The lower bound of a partitioned memory: each unique remote row fetched once, each remote
 *  winning write sent once (rows only: read_row U1_remote + write_row U2_remote). */
uint64_t dispatch_traffic_lower_bound(const dispatch_traffic *t, const event_model *m);

#ifdef __cplusplus
}
#endif

#endif
