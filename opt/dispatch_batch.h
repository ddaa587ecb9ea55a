/**
 * @file opt/dispatch_batch.h
 * Twins: the set-up of event_trainer_run_batch() (ref/train_events.h), for one rank's slice.
 * @brief One rank's part of a global batch, planned: its slice of events, negatives, entries,
 *        Algorithm 2's plan with global winners, and the rows to fetch from each owner. Built
 *        from read-only data only: no node memory, no parameter, no MPI call.
 *
 * **The global batch** (what the paper leaves open, [Sven] §3.2): batch k of the reference is
 * the events [first, first + B) of event_trainer_epoch_batches(); on R ranks it is the time-ordered
 * concatenation of the ranks' slices, rank r holding
 *
 *     [first + floor(B r / R), first + floor(B (r + 1) / R))          (dispatch_slice())
 *
 * (possibly empty when B < R). Negatives are keyed by event index (event_trainer_negative()) and
 * TGN's neighbours are a function of the stream, so rank r's entries are exactly the reference's
 * entries of its events, whatever R is. The loss of the global batch is the sum of every rank's
 * BCE terms divided by B (event_model_loss_sums() with denominator B), so the gradient summed
 * over the ranks is the reference's mean gradient.
 *
 * **Why a plan needs no memory.** A batch's structure (entries, V_u, Phi, Psi, requests) depends
 * on the stream, the temporal CSR, the candidates, the seed and the placement — never on the node
 * memory or the weights. So plans can be built ahead (Sven's prefetching, chapter 05) by any
 * thread holding its own dispatch_table, in any order: dispatch_batch_build() is reentrant and
 * touches only its arguments.
 *
 * Ownership: dispatch_batch_create() allocates every buffer for the trainer's batch size once;
 * dispatch_batch_build() refills them (and replaces the tape); dispatch_batch_free() releases all.
 */
#ifndef TWOFOLD_OPT_DISPATCH_BATCH_H
#define TWOFOLD_OPT_DISPATCH_BATCH_H

#include <stdint.h>

#include "opt/dispatch_placement.h"
#include "opt/dispatch.h"
#include "ref/dispatch.h"
#include "ref/models/event_model.h"
#include "ref/train_events.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How node memory moves between ranks (chapters/04-dispatch.md). */
typedef enum dispatch_mode {
    DISPATCH_SVEN,       /**< partitioned memory; each unique row fetched once, each winning write sent once */
    DISPATCH_NAIVE,      /**< partitioned memory; one fetch per occurrence, every positive endpoint written */
    DISPATCH_DEPCACHE,   /**< a full replica on every rank; winning writes all-gathered */
    DISPATCH_DEPCOMM,    /**< partitioned memory; owners run the memory updater per requesting occurrence */
} dispatch_mode;

/** "sven", "naive", "depcache" or "depcomm". */
const char *dispatch_mode_name(dispatch_mode mode);

/** Parse a mode name. @return 0, or TF_ERR_INPUT listing the modes. */
int dispatch_mode_parse(const char *name, dispatch_mode *mode, tf_error *err);

/** What one rank's batches read and write, counted (summed over batches; over ranks by the trainer). */
typedef struct dispatch_counts {
    int64_t batches;                     /**< global batches */
    int64_t entries;                     /**< N1: entries, every occurrence of a vertex */
    int64_t entries_remote;              /**< of them owned by another rank */
    int64_t unique;                      /**< U1: unique vertices of the ranks' plans */
    int64_t unique_remote;               /**< of them owned by another rank */
    int64_t writes;                      /**< N2: positive endpoints (2 per event; APAN: and the slice's mail
                                              deliveries, the rows of its naive write-back) */
    int64_t writes_remote;               /**< of them owned by another rank (the naive write-back) */
    int64_t written_per_trainer;         /**< vertices with a writer in a rank's own plan (the paper's Phi;
                                              APAN: every vertex its slice's deliveries reach) */
    int64_t written_per_trainer_remote;  /**< of them owned by another rank */
    int64_t written;                     /**< U2: vertices written, once each (global winners; APAN: vertices
                                              whose memory or mail this rank writes, one row each) */
    int64_t written_remote;              /**< of them held by a rank that does not own them */
} dispatch_counts;

/** Add @p b into @p a, field by field. */
void dispatch_counts_add(dispatch_counts *a, const dispatch_counts *b);

/** The read-only data plans are built from (may be shared by threads). */
typedef struct dispatch_setup {
    const event_trainer *base;             /**< stream, features, temporal CSR, candidates, model shape, batch size */
    const dispatch_placement *placement;   /**< owners; NULL: no requests and no remote counts */
    dispatch_mode mode;                    /**< which rows are fetched */
    int ranks;                             /**< R */
    int rank;                              /**< whose slice */
} dispatch_setup;

/** One rank's planned part of a global batch. */
typedef struct dispatch_batch {
    event_batch_spec global;       /**< the global batch */
    int64_t first;                 /**< this rank's first event */
    int64_t size;                  /**< this rank's events (0 .. global.size) */
    int32_t *negatives;            /**< [batch size] the slice's negative destinations */
    event_batch batch;             /**< the slice as an event batch (when size > 0) */
    event_tape tape;               /**< its entries (event_model_collect_in()); rows not yet read; empty if size = 0 */
    workspace *scratch;            /**< [1] where the tape's arrays come from: allocated once per run, reused per
                                        batch; on the heap, so that the tape's pointer to it survives the
                                        batch's moves (chapter 05's pipeline swaps batches by value) */
    dispatch_plan plan;            /**< Algorithm 2 over the entries; writers are global winners */
    dispatch_plan occurrences;     /**< naive and depcomm: the identity plan, one row per entry */
    const dispatch_plan *fetch;    /**< whose V_u is fetched: &plan (sven) or &occurrences (naive, depcomm) */
    dispatch_requests requests;    /**< fetch's rows grouped by owner (empty for depcache) */
    dispatch_counts counts;        /**< this batch on this rank */
    /* APAN's write-back (its mails reach the positive roots' sampled neighbours too, event_model.h). The
     * slice's tape lists its deliveries after the delivery rule (tape.delivery_vertex, delivery_entry);
     * a delivery wins in the global batch when no later slice reaches its vertex. */
    uint8_t *delivery_wins;        /**< APAN: [2 B (k + 1)] 1 where the tape's delivery w is a global winner */
    int32_t *reached;              /**< APAN scratch: [2 B (k + 1)] vertices the later slices reach */
    int64_t write_count;           /**< APAN: rows of the write-back (opt/train_events.c packs them) */
    int32_t *write_vertex;         /**< APAN: [2 B (k + 2)] the vertex of each row */
    int64_t *write_memory;         /**< APAN: [2 B (k + 2)] the positive root entry whose s' it stores, or -1 */
    int64_t *write_mail;           /**< APAN: [2 B (k + 2)] the tape's delivery it delivers, or -1 */
} dispatch_batch;

/** Events [*first, *first + *size) of global batch @p global belong to @p rank of @p ranks. */
void dispatch_slice(const event_batch_spec *global, int rank, int ranks, int64_t *first, int64_t *size);

/** The most events a batch of @p s can have: the batch size, or the whole stream when that is
 *  shorter (a batch size larger than the stream must not size buffers for events that do not
 *  exist). */
int64_t dispatch_batch_largest(const dispatch_setup *s);

/** The most entries a batch of @p s can have: 3 B (1 + k), B = dispatch_batch_largest(), k =
 *  TGN's neighbours (JODIE, APAN: 0; APAN's neighbours receive mails but are not entries). */
int64_t dispatch_batch_capacity(const dispatch_setup *s);

/** The most rows a write-back of @p s moves to one rank: the entries' capacity, or for APAN 2 B (k + 2)
 *  (every positive endpoint's memory and every delivery of the naive write-back), whichever is larger. */
int64_t dispatch_batch_write_capacity(const dispatch_setup *s);

/** Allocate a batch's buffers for @p s's batch size. @return 0, or TF_ERR_INPUT (no memory). */
int dispatch_batch_create(dispatch_batch *b, const dispatch_setup *s, tf_error *err);

/**
 * Plan @p s->rank's part of global batch @p global: slice, negatives, entries, plan (global
 * winners kept), occurrences, requests, counts. Reads only @p s and its trainer's read-only data.
 * @param b        a created batch (its previous content is replaced)
 * @param s        the setup
 * @param global     the global batch
 * @param scratch  a table over the vertex ids, all -1 (left so)
 * @param err      out: what failed
 * @return 0, or TF_ERR_INPUT
 */
int dispatch_batch_build(dispatch_batch *b, const dispatch_setup *s, const event_batch_spec *global,
                         dispatch_table *scratch, tf_error *err);

/** Release a batch's buffers and tape and zero it. Safe on a zeroed batch. */
void dispatch_batch_free(dispatch_batch *b);

/** tf_digest() of the slice, negatives, entries, plans and requests: equal hashes, equal plans. */
uint64_t dispatch_batch_hash(const dispatch_batch *b);

#ifdef __cplusplus
}
#endif

#endif
