/**
 * @file ref/async_embeddings.h
 * @brief DGC's adaptive stale embedding aggregation ([DGC] §5.2, Eqs. 6-7): the threshold rule,
 *        and a serial simulation of vertex-partitioned training in which every rank reads the
 *        rows other ranks own from a cache of what they last sent.
 *
 * In vertex-partitioned training (chapter 06's exchange mode) every graph product y = P x first
 * fetches, for each edge u -> v whose source and destination have different owners, the row x_u
 * from u's owner. DGC lets the owner skip a row that has barely moved:
 *
 *     d_u   = || x_u - c_u ||_2               c_u: the copy of x_u this sender last SENT this receiver
 *     D     = max over the transfer's rows of d_u
 *     theta = D * s(l_1, l_{r-1})              l_1: epoch 1's training loss, l_{r-1}: the previous epoch's
 *     send x_u (and set c_u = x_u on both sides) iff d_u > theta; else the receiver reads c_u
 *
 * Comparing with the copy last *sent*, not with the previous epoch's value, is the paper's point:
 * a row drifting a little every epoch accumulates distance until it is sent.
 *
 * **The threshold's sign.** Eq. 7 defines norm = (l_1 - l_{r-1}) / l_1, in [0, 1] while the loss
 * falls. Eq. 6 as printed, theta = D / (1 + exp(norm)), *shrinks* from D/2 to D/(1+e) = 0.269 D as
 * training settles, while the paper's text says the threshold starts small and grows, and its
 * Table 3 (adaptive savings between the static 0.5 D and 0.7 D ones in all 12 rows) fits a growing
 * one: theta = D / (1 + exp(-norm)), from D/2 to 0.731 D. Both exist (#stale_schedule_kind);
 * STALE_ADAPTIVE, the text's, is the default.
 *
 * What the paper leaves open, and what this project does (chapter 05 gives the reasons):
 *  - D is the maximum over the rows one sender owes one receiver in one transfer (causal: known
 *    when sending; no extra collective), and decisions and caches are per (transfer, sender,
 *    receiver) pair, matching chapter 06's per-peer transfers.
 *  - a row is sent iff d > theta; a row bitwise equal to its cached copy is always reused (so
 *    theta = 0 reuses only exact copies and the run is bitwise the exchange mode's). A NaN distance
 *    sends.
 *  - backward is untouched: the gradient of every halo row returns to its owner, taken at the value
 *    the receiver actually used.
 *  - epoch 1, and the first time a transfer occurs, send everything; evaluation forwards are
 *    always fresh and touch neither the caches nor the counts.
 *  - a transfer is named by (snapshot, the product's ordinal among that snapshot's products since
 *    its operator was built): the same in every epoch, and on every rank.
 *
 * The simulation runs R ranks in one process on a whole-graph model: for each training product it
 * decides, pair by pair, which rows are sent, and computes every destination v from the view its
 * owner has, y[v] = self_v x_v + sum over u -> v of c_e (owner u = owner v ? x_u : view of u at
 * owner v). It counts bytes as chapter 06's exchange mode would send them: per pair a bitmap of
 * ceil(n / 8) bytes marking the fresh rows, then those rows; `bytes_fresh` is what the exchange
 * mode sends for the same products, every row.
 *
 * Graph attention (GAT-LSTM's and DySAT's structural layer, ref/nn/graph_attention.h) goes through the
 * same rule: its edge kernel reads the projected rows p_j = W x_j of the in-neighbours j, so those are
 * the rows a receiver fetches (H*C floats each), decided per pair as above. Each receiver computes
 * the attention of the targets it owns from its view (scores s_j = <a_src, p_j> of the rows it
 * holds, the softmax, the aggregation). Unlike a product with P, the attention's backward reads the
 * values: it runs per receiver on the same view (the cache still holds what the forward read), so
 * every halo row's gradient is taken at the value the receiver used and returns to its owner.
 *
 * The kernels table passes no context to its functions, so the simulation is kept in a
 * file-static pointer, set by stale_simulation_create() and by each epoch: one simulation at a
 * time in a process, and not thread-safe.
 */
#ifndef TWOFOLD_REF_ASYNC_EMBEDDINGS_H
#define TWOFOLD_REF_ASYNC_EMBEDDINGS_H

#include <stddef.h>
#include <stdint.h>

#include "ref/core/error.h"
#include "ref/nn/kernels.h"
#include "ref/data/snapshot.h"
#include "ref/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How theta_r is chosen. */
typedef enum stale_schedule_kind {
    STALE_OFF,              /**< no reuse: every row sent, no bitmap (the exchange mode itself) */
    STALE_ZERO,             /**< theta = 0: reuse only rows bitwise equal to their cached copy */
    STALE_STATIC,           /**< theta = C * D */
    STALE_ADAPTIVE,         /**< theta = D / (1 + exp(-norm)): grows as the loss falls (the text; default) */
    STALE_ADAPTIVE_PRINTED, /**< theta = D / (1 + exp(norm)): Eq. 6 as printed, shrinks */
} stale_schedule_kind;

/** A threshold schedule. */
typedef struct stale_schedule {
    stale_schedule_kind kind; /**< which rule */
    double fraction;          /**< STALE_STATIC's C in [0, 1] */
} stale_schedule;

/** Parse "off", "zero", "static:C" (0 <= C <= 1), "adaptive" or "adaptive-printed". */
int stale_schedule_parse(const char *text, stale_schedule *out, tf_error *err);

/** Its spelling, into @p buffer [size]. */
const char *stale_schedule_name(const stale_schedule *s, char *buffer, size_t size);

/** theta_r / D_r for an epoch r >= 2, from epoch 1's training loss and the previous epoch's
 *  (Eqs. 6-7); 0 for STALE_OFF and STALE_ZERO. */
double stale_threshold_fraction(const stale_schedule *s, double first_loss, double previous_loss);

/** || a - b ||_2 over @p width floats, summed in double. a, b [width]. */
double stale_distance(const float *a, const float *b, int64_t width);

/**
 * 1 = the receiver reuses @p cached instead of @p fresh: they are bitwise equal, or theta > 0 and
 * their distance is at most theta. Writes the distance into @p distance. fresh, cached [width].
 */
int stale_reuse(const float *fresh, const float *cached, int64_t width, double theta, double *distance);

/** What the simulation (or a fetcher) sent and saved; cumulative. */
typedef struct stale_stats {
    int64_t rows_sent;          /**< (pair, row) sends */
    int64_t rows_reused_exact;  /**< reuses of a copy bitwise equal to the fresh row */
    int64_t rows_reused_stale;  /**< reuses of a copy that differs (0 < d <= theta) */
    double worst_ratio;         /**< max over stale reuses of d / theta (at most 1 by the rule) */
    uint64_t bytes_fresh;       /**< what the exchange mode sends: every row, width * 4 bytes */
    uint64_t bytes_sent;        /**< bitmaps + fresh rows */
    uint64_t bytes_bitmap;      /**< of which bitmaps */
    uint64_t bytes_exact;       /**< rows not sent because the receiver held their very bits */
    uint64_t bytes_stale;       /**< rows not sent because they moved at most theta */
    int64_t transfers;          /**< (training product, pair) transfers with at least one row */
} stale_stats;

/**
 * One sender's decision over the @p count rows it owes one receiver in one transfer (the rule above):
 * D = the largest distance to the cached copies, theta = @p fraction * D, each row sent or reused;
 * @p cache [count][width] ends holding what the receiver reads. Row i is at rows + index[i] * width,
 * or rows + i * width when @p index is NULL. @p send_all (a transfer's first time, epoch 1, STALE_OFF)
 * sends every row, without a bitmap. @p fresh_bits [ceil(count / 8)] (may be NULL) receives bit i % 8
 * of byte i / 8 set for each sent row: the message's bitmap. Counts into @p stats. Returns the stale
 * reuses. The serial simulation and the MPI fetcher (opt/async_embeddings.h) both decide here.
 */
int64_t stale_decide_rows(const float *rows, const int32_t *index, float *cache, int64_t count, int64_t width,
                          double fraction, int send_all, uint8_t *fresh_bits, stale_stats *stats);

/** One cached transfer: the rows each sender owes each receiver in one training product. */
typedef struct stale_transfer {
    int64_t width;             /**< floats per row (the same whenever the transfer recurs) */
    int64_t *pair_offsets;     /**< [R * R + 1] rows of pair (sender q, receiver r) at q * R + r */
    int32_t *vertices;         /**< [rows] the owed vertices, by pair, each pair's in increasing id */
    float *cache;              /**< [rows][width] the copy last sent */
    int sent_once;             /**< 1 after the first (full) send */
    int64_t last_stale;        /**< rows reused stale in its last forward (a GAT backward reads them again) */
} stale_transfer;

/** Graph attention layers one snapshot's forward may run before their backward (a simulation keeps their
 *  transfers' ordinals for the backward). */
#define STALE_ATTENTION_LAYERS 8

/** The rank-by-rank simulation of stale aggregation over one snapshot sequence. Owns everything
 *  but the sequence, the owner array and the base kernels, which it borrows. */
typedef struct stale_simulation {
    const snapshot_seq *seq;    /**< the data */
    const int32_t *owner;       /**< [num_nodes] the rank owning each vertex */
    int ranks;                  /**< R */
    stale_schedule schedule;    /**< the rule */
    const kernels *base;        /**< the kernels the products run on */
    kernels table;              /**< base with propagate_forward and the GAT edge kernels replaced: give it to the model */
    int64_t epoch;              /**< the epoch being trained, 1-based (0 before the first) */
    double first_loss;          /**< l_1 */
    double previous_loss;       /**< l_{r-1} */
    double fraction;            /**< theta / D in the current epoch */
    int training;               /**< 1 during an epoch (evaluation products, on test snapshots, stay fresh) */
    int64_t train_snapshots;    /**< snapshots 0 .. train_snapshots-1 train; products on later ones are fresh */
    int64_t *calls;             /**< [T] products of each snapshot since its operator was built */
    int64_t *transfer_count;    /**< [T] transfers recorded for each snapshot */
    stale_transfer **transfers; /**< [T][transfer_count] indexed by the product's ordinal */
    int64_t *attention_calls;   /**< [T][STALE_ATTENTION_LAYERS] the ordinals of the GAT products awaiting their backward */
    int64_t *attention_depth;   /**< [T] how many */
    stale_stats stats;          /**< cumulative counts */
    float *scratch;             /**< grown: [2][N][width] a receiver's view of x, its product */
    int64_t scratch_size;       /**< floats in scratch */
    tf_error failure;           /**< the first failure inside a kernel (they return nothing) */
} stale_simulation;

/**
 * Prepare a simulation of @p ranks ranks owning vertices as @p owner [num_nodes] says (values in
 * 0 .. ranks-1), with products on @p base. The caller gives the model s->table as its kernels.
 */
int stale_simulation_create(stale_simulation *s, const snapshot_seq *seq, const int32_t *owner, int ranks,
                            const stale_schedule *schedule, const kernels *base, tf_error *err);

/** Release the caches (safe on a zeroed or half-created simulation). */
void stale_simulation_free(stale_simulation *s);

/**
 * One epoch of @p tr (whose model runs on s->table): trainer_epoch() with the products of
 * training snapshots through the stale rule; evaluation reads the test snapshots, after the
 * training split, and stays fresh. Then records the epoch's training loss as l_1 (epoch 1) and
 * l_{r-1} for the next.
 */
int ref_stale_embeddings_epoch(stale_simulation *s, trainer *tr, const snapshot_seq *seq, epoch_report *report,
                               tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
