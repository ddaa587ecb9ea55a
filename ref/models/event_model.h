/**
 * @file ref/models/event_model.h
 * @brief The memory-based event models TGN, JODIE and APAN: parameters, and the reference batch
 *        procedure (read the memory, update it, embed, score, backward, write the memory back).
 *
 * **The models** (TGL's `GeneralModel` with its TGN and JODIE configs, [TGL]: [Sven] gives no model
 * equations; citations: chapters/references.md).
 * Every vertex has a memory s, a one-message mailbox and timestamps (node_memory.h). For an
 * occurrence of vertex v queried at time t:
 *
 *     x  = [mail_v || phi_mem(t - mem_ts_v)]                    updater input, d_msg + d_t
 *     s' = GRU(x, s_v)                              (TGN)       torch.nn.GRUCell, recurrent.h
 *     s' = tanh(W_ih x + b_ih + W_hh s_v + b_hh)    (JODIE)     torch.nn.RNNCell
 *
 * with phi_mem the updater's cosine time encoding (time_encoding.h). The embedding is then
 *
 *     TGN:   z_u = temporal attention over u's 10 most recent neighbours before t, with
 *            h = s' for the root and for every neighbour (attention.h, its own encoder phi_att)
 *     JODIE: z_u = LayerNorm(s'_u) * (1 + W_tau delta~ + b_tau),
 *            delta~ = (t - t_u) / (t + 1)                           (time_projection.h)
 *            t_u the time of u's latest event before the batch: mem_ts_u per entry
 *            (where it equals mail_ts_u), mail_ts_u per vertex
 *
 * and a pair is scored by the MLP decoder (link_decoder.h).
 *
 * **APAN** (TGL's APAN: a `transformer` memory updater over a mailbox of M = 10 mails that are
 * delivered to neighbours too, then an identity embedding layer; [APAN], [TGL]). Every vertex
 * keeps M mails with their mail_ts, a ring in arrival order (node_memory.h). For a root v at t:
 *
 *     x_i = [mail_v,i || phi_mem(t - mail_ts_v,i)]      i = 1..M, every slot, empty ones too
 *     s'  = attention of s_v over x_1 .. x_M            (mailbox_attention.h)
 *     z_v = LayerNorm(s')                               (TGL's IdentityNormLayer)
 *
 * The updater is that attention, not the LSTM [Sven]'s HPDC version names: the chapter says why.
 * Only the 3B roots are read and updated (entries = R), since the embedding uses nothing of a
 * neighbour; each *positive* root samples its k most recent neighbours before t (negatives
 * sample none), and those receive its mail in the write-back. Messages are
 * mail_u = [s'_u || s'_v || e] for an event (u, v, t, e): d_msg = 2 d_mem + d_e, no time term
 * (Sven Eq. 14); without edge features, d_e = 0.
 *
 * **The batch procedure** ([Sven] §2.1.2, Algorithm 1, made concrete as TGL's training loop runs
 * it; the steps and the write rule are chapters/01b-event-models.md, "One batch, step by step"),
 * plain and in this order:
 *  1. The batch is B consecutive events; with B negative destinations the roots are
 *     R = [src; dst; neg], each queried at its event's time t.
 *  2. TGN samples, for each root, the k = 10 most recent events of that vertex strictly before
 *     t (temporal_csr_recent(), over the whole stream; TGL's `recent` sampler). JODIE samples
 *     nothing. The batch's *entries* are the 3B roots followed by all sampled neighbours; a
 *     neighbour entry is queried at its own event's time t_e (TGL's prop_time = False).
 *  3. Dispatch: every entry gets a copy of its vertex's memory, mail and timestamps as they
 *     were **before the batch** (node_memory_gather()). A vertex appearing several times gets
 *     several copies of the same row.
 *  4. The memory update (config.memory_update) runs, under the per-entry rule (the default,
 *     TGL's), **once per entry** at its query time t: copies of one vertex differ by their time
 *     encoding (t - mem_ts), so they give different s'. Under the per-vertex rule (the TGN
 *     paper's code, PyTorch Geometric's TGNMemory with LastAggregator) it runs at the time of the
 *     vertex's pending message, tau = mail_ts: x = [mail_v || phi_mem(mail_ts_v - mem_ts_v)], the
 *     same for every copy, so all copies of a vertex get one s' (the twins compute it once).
 *  5. Embeddings, scores, loss (BCE, one negative per positive), backward: event_model_forward(),
 *     event_model_loss(), event_model_backward(). The memory read in step 3 is data: no
 *     gradient flows into it (nor across batches).
 *  6. Write-back, without gradient (event_model_write_memory()): for each event j = (u, v, t_j, e_j)
 *     in order, u gets s' of its root entry, mail [s'_u || s'_v || e_j], mail_ts = t_j and
 *     mem_ts = the time s'_u was computed at (per entry: t_j; per vertex: the consumed message's
 *     mail_ts); then v gets s'_v, [s'_v || s'_u || e_j] and its two times. Only positive endpoints are written (negatives and
 *     neighbours never; APAN's neighbours get a mail, below). **Conflict rule**: when a vertex occurs in several events of the batch,
 *     the write of the largest event index wins, and within one event the destination's write
 *     comes after the source's (so a self-loop keeps the destination's row). TGL leaves this
 *     to a scatter with duplicate indices, whose winner is unspecified on a GPU; the reference
 *     makes it a rule that the optimized twins must reproduce bit for bit.
 *     **APAN's write-back**: memories and mem_ts as above; then the mails, **one per vertex per
 *     batch** (TGL's mail_combine = last), chosen by the **delivery rule**: the batch's
 *     deliveries are ordered by event index and, within event j, (a) u's mail to each of u's
 *     sampled neighbours, (b) v's mail to each of v's, (c) u's own mail to u, (d) v's own mail to
 *     v; a vertex receives the *last* delivery that reaches it in this order. So the latest event
 *     reaching a vertex wins; within that event, its mail as an endpoint beats one delivered to it
 *     as a neighbour, and the destination's beats the source's. The winner goes into the vertex's
 *     next ring slot with mail_ts t_j (node_memory_deliver()); the list of winners is made at
 *     collection (tape->delivery_vertex, delivery_entry), since it depends on the stream only.
 *
 * Usage, one training step:
 *
 *     event_tape tape;
 *     event_model_forward(&m, &memory, &history, &batch, &tape, scores, &err);     // [2B]
 *     loss = event_model_loss(scores, B, dscores);
 *     parameters_zero_grad(&m.parameters);
 *     event_model_backward(&m, &tape, dscores, &err);
 *     ref_adam_step(&optimizer, &m.parameters);
 *     event_model_write_memory(&m, &tape, &batch, &memory);
 *     event_tape_free(&tape);
 *
 * Parameters use TGL's state_dict names: `memory_updater.updater.{weight_ih, weight_hh, bias_ih,
 * bias_hh}` (APAN instead: `memory_updater.{w_q, w_k, w_v, layer_norm, mlp}.*`),
 * `memory_updater.time_enc.w.{weight, bias}`; TGN: `layers.l0h0.time_enc.w.*`,
 * `layers.l0h0.{w_q, w_k, w_v, w_out, layer_norm}.*`; JODIE: `layers.l0h0.norm.*`,
 * `layers.l0h0t.time_emb.*`; APAN: `layers.l0h0.norm.*`; all: `edge_predictor.{src_fc, dst_fc, out_fc}.*`.
 */
#ifndef TWOFOLD_REF_EVENT_MODEL_H
#define TWOFOLD_REF_EVENT_MODEL_H

#include <stdint.h>

#include "ref/nn/attention.h"
#include "ref/core/error.h"
#include "ref/nn/kernels.h"
#include "ref/data/events.h"
#include "ref/nn/link_decoder.h"
#include "ref/nn/mailbox_attention.h"
#include "ref/models/node_memory.h"
#include "ref/nn/parameters.h"
#include "ref/data/temporal_csr.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The three event models. */
typedef enum event_model_kind {
    EVENT_MODEL_TGN,     /**< TGN: GRU updater, temporal attention (Rossi et al., 2020) */
    EVENT_MODEL_JODIE,   /**< JODIE: RNN updater, time projection (Kumar, Zhang and Leskovec, KDD 2019) */
    EVENT_MODEL_APAN,    /**< APAN: attention over a mailbox of M mails, mails delivered to neighbours
                              (Wang et al., SIGMOD 2021); see "APAN" below */
} event_model_kind;

/**
 * When a vertex's memory is updated from its pending message (step 4 of the batch procedure).
 * Both are legitimate readings of [Sven] §2.1.2; they differ in rows computed and in what s' means.
 */
typedef enum event_memory_update {
    EVENT_MEMORY_PER_ENTRY,  /**< TGL's: once per batch entry at that entry's query time t: the updater
                                  sees phi_mem(t - mem_ts); the written mem_ts is the event's time */
    EVENT_MEMORY_PER_VERTEX, /**< the TGN paper's code and PyTorch Geometric's TGNMemory: once per
                                  vertex at its message's time: the updater sees phi_mem(mail_ts -
                                  mem_ts), so every entry of a vertex gets the same s', and the
                                  written mem_ts is that mail_ts (the message it consumed) */
} event_memory_update;

/** Name on the command line: "entry" or "vertex". */
const char *event_memory_update_name(event_memory_update rule);

/** Shape of an event model. */
typedef struct event_model_config {
    event_model_kind kind;     /**< which model */
    event_memory_update memory_update; /**< the memory-update rule (default: per entry) */
    int64_t memory_width;      /**< d_mem, width of s */
    int64_t time_width;        /**< d_t, width of both time encodings */
    int64_t embedding_width;   /**< d_emb: TGN's attention output; JODIE's is d_mem (this is ignored) */
    int64_t edge_width;        /**< d_e: edge feature columns, 0 for none */
    int64_t heads;             /**< TGN's attention heads, d_emb a multiple of them (JODIE: set to 0) */
    int neighbours;             /**< TGN's most recent neighbours sampled per root, APAN's per positive root (the
                                     mail recipients), >= 1 (JODIE: set to 0) */
    int64_t mails;             /**< APAN: M, mails per mailbox (default 10); TGN and JODIE: set to 1 */
} event_model_config;

/**
 * Defaults for @p kind: d_mem = d_t = d_emb = 32, no edge features, 2 heads, 10 neighbours.
 * (TGL uses 100; at 100 an epoch of TGN on Wikipedia takes this single-threaded reference about
 * 17 minutes on a 2-core VM, at 32 about 3, and 32 already reaches test AP 0.98 there:
 * chapters/01b-event-models.md.)
 */
void event_model_config_default(event_model_config *config, event_model_kind kind);

/** The event models' names on the command line, in #event_model_kind order, NULL-terminated (a
 *  table's rows, such as `twofold verify dispatch`'s variants, come from here, one per model). */
extern const char *const event_model_kind_names[];

/** Name on the command line: "tgn", "jodie" or "apan". */
const char *event_model_kind_name(event_model_kind kind);

/** Parse "tgn", "jodie" or "apan". @return 0, or TF_ERR_INPUT naming the known models. */
int event_model_kind_parse(const char *name, event_model_kind *kind, tf_error *err);

/** A model: its shape, its parameters, and named pointers into them (valid while it lives). */
typedef struct event_model {
    event_model_config config;         /**< the shape (JODIE: embedding = memory width, no heads, no neighbours) */
    parameter_list parameters;         /**< every trainable tensor, TGL names, in state_dict order */
    parameter *updater_weight_ih;      /**< memory_updater.updater.weight_ih [G d_mem][d_msg + d_t], G = 3 (GRU) or 1 */
    parameter *updater_weight_hh;      /**< memory_updater.updater.weight_hh [G d_mem][d_mem] */
    parameter *updater_bias_ih;        /**< memory_updater.updater.bias_ih [G d_mem] */
    parameter *updater_bias_hh;        /**< memory_updater.updater.bias_hh [G d_mem] */
    parameter *memory_time_weight;     /**< memory_updater.time_enc.w.weight [d_t][1] */
    parameter *memory_time_bias;       /**< memory_updater.time_enc.w.bias [d_t] */
    parameter *attention_time_weight;  /**< TGN: layers.l0h0.time_enc.w.weight [d_t][1] */
    parameter *attention_time_bias;    /**< TGN: layers.l0h0.time_enc.w.bias [d_t] */
    temporal_attention attention;      /**< TGN: layers.l0h0.* */
    parameter *norm_weight;            /**< JODIE, APAN: layers.l0h0.norm.weight [d_mem] */
    parameter *norm_bias;              /**< JODIE, APAN: layers.l0h0.norm.bias [d_mem] */
    parameter *projection_weight;      /**< JODIE: layers.l0h0t.time_emb.weight [d_mem][1] */
    parameter *projection_bias;        /**< JODIE: layers.l0h0t.time_emb.bias [d_mem] */
    mailbox_attention mailbox;         /**< APAN: memory_updater.{w_q, w_k, w_v, layer_norm, mlp}.* (its
                                            updater; APAN has no updater_weight_* cell) */
    link_decoder decoder;              /**< edge_predictor.* */
    const kernels *kernels;            /**< the products, cells and activations it runs on: ref_kernels (set
                                            by event_model_create()), or a twin (opt_kernels: BLAS, within the
                                            fp tolerance) */
} event_model;

/**
 * Create a model with parameters initialized as TGL/PyTorch initialize them, drawn from
 * @p seed: Linear layers and the recurrent cell uniform(+-1/sqrt(fan_in)) (the cell:
 * +-1/sqrt(d_mem)), time encodings 10^(-9 i/(d-1)) and 0, LayerNorm 1 and 0, JODIE's time
 * projection N(0, 1).
 * @param m       out: the model; free with event_model_free()
 * @param config  its shape
 * @param seed    initial values
 * @param err     out: a width < 1, d_emb not a multiple of the heads, neighbours < 1, no memory
 * @return 0, or TF_ERR_INPUT
 */
int event_model_create(event_model *m, const event_model_config *config, uint64_t seed, tf_error *err);

/** Release the parameters. */
void event_model_free(event_model *m);

/** d_msg = 2 d_mem + d_e, the width of a message. */
int64_t event_model_mail_width(const event_model *m);

/** One batch: B consecutive events of a stream and their negative destinations. */
typedef struct event_batch {
    const event_stream *events;    /**< the stream (src, dst, time of every event) */
    const float *edge_features;    /**< [num_events][d_e] edge features, NULL when d_e = 0 */
    int64_t first;                 /**< index of the batch's first event */
    int64_t size;                  /**< B, number of events */
    const int32_t *negatives;      /**< [B] negative destination of each event */
} event_batch;

/** What a batch's forward keeps: the entries, the memory rows read, and every layer's tape. */
typedef struct event_tape {
    workspace *scratch;          /**< where its arrays come from (event_model_collect_in()), or NULL: each its own */
    int64_t batch_size;          /**< B */
    int64_t roots;               /**< R = 3B: sources, destinations, negatives */
    int64_t entries;             /**< N = R + E: roots, then all sampled neighbours */
    int32_t *vertex;             /**< [N] vertex of each entry */
    double *time;                /**< [N] query time: the event's for roots, the neighbour event's for neighbours */
    int64_t *neighbour_offset;    /**< [R + 1] root r's neighbours are entries R + offset[r] .. R + offset[r+1] - 1 */
    int64_t *neighbour_event;     /**< [E] index of each neighbour's event */
    float *neighbour_delta;       /**< [E] t_root - t_e, the attention's time difference */
    float *memory;               /**< [N][d_mem] s, read from the pre-batch memory */
    double *memory_time;         /**< [N] mem_ts, read from the pre-batch memory */
    float *mail;                 /**< [N][M][d_msg] the pending messages (M = 1 but APAN's), read from the pre-batch
                                      memory */
    double *mail_time;           /**< [N][M] their mail_ts, read from the pre-batch memory */
    float *updater_delta;        /**< [N] tau - mem_ts, tau = event_model_update_time() */
    float *updater_input;        /**< [N][d_msg + d_t] [mail || phi_mem(tau - mem_ts)] */
    float *updater_cache;        /**< TGN: [N][4 d_mem] GRU cache */
    float *updated;              /**< [N][d_mem] s' */
    float *query_delta;          /**< TGN: [R] zeros, the query's time difference */
    float *query_time;           /**< TGN: [R][d_t] phi_att(0) */
    float *neighbour_time;        /**< TGN: [E][d_t] phi_att(t_root - t_e) */
    float *neighbour_edge;        /**< TGN: [E][d_e] edge features of the neighbour events (NULL when d_e = 0) */
    attention_tape attention;    /**< TGN: the attention's tape */
    float *projection_delta;     /**< JODIE: [R] delta~ */
    float *norm_output;          /**< JODIE: [R][d_mem] LayerNorm(s') */
    float *norm_hat;             /**< JODIE: [R][d_mem] LayerNorm's x^ */
    float *norm_inverse_std;     /**< JODIE: [R] LayerNorm's 1/sqrt(var + eps) */
    float *embedding;            /**< [R][d_emb] z of every root */
    float *positive_hidden;      /**< [B][d_emb] the decoder's hidden layer, positive pairs */
    float *negative_hidden;      /**< [B][d_emb] the decoder's hidden layer, negative pairs */
    float *message;              /**< [d_msg] scratch for event_model_write_memory() */
    float *mail_delta;           /**< APAN: [N][M] t - mail_ts */
    float *mail_input;           /**< APAN: [N][M][d_msg + d_t] [mail || phi_mem(t - mail_ts)] */
    mailbox_attention_tape mailbox; /**< APAN: the updater's tape */
    int32_t *recipient;          /**< APAN: [E] the sampled neighbours of the positive roots, root r's are
                                      recipient[neighbour_offset[r] .. neighbour_offset[r+1]-1]; not entries */
    int64_t deliveries;          /**< APAN: W, mails the write-back delivers (one per vertex reached) */
    int32_t *delivery_vertex;    /**< APAN: [W] who receives each, in delivery order */
    int64_t *delivery_entry;     /**< APAN: [W] the positive root entry (0..2B-1) whose message it is */
} event_tape;

/**
 * Steps 1-5 forward: sample, read the pre-batch memory, update it per entry, embed, score. The
 * composition of the stages below: event_model_collect(), event_model_read_memory(),
 * event_model_update(), event_model_embed(). (The twins of chapter 04 replace only the read.)
 * @param m        the model
 * @param memory   the node memory before the batch (read only)
 * @param history  temporal CSR of the whole stream, for TGN's neighbours (JODIE: may be NULL)
 * @param batch    the events and their negatives
 * @param tape     out: what backward and write-back need; free with event_tape_free()
 * @param scores   [2B] out: logits of the positive pairs (src_j, dst_j), then of the negative
 *                 pairs (src_j, neg_j)
 * @param err      out: a batch outside the stream, a vertex outside the memory, feature widths
 *                 that do not match, no memory
 * @return 0, or TF_ERR_INPUT (the tape is then empty)
 */
int event_model_forward(const event_model *m, const node_memory *memory, const temporal_csr *history,
                        const event_batch *batch, event_tape *tape, float *scores, tf_error *err);

/**
 * event_model_forward() with the tape's arrays (and the backward's scratch) from @p scratch, as
 * event_model_collect_in() takes them: what a trainer uses, so that a run allocates once.
 */
int event_model_forward_in(const event_model *m, const node_memory *memory, const temporal_csr *history,
                           const event_batch *batch, workspace *scratch, event_tape *tape, float *scores,
                           tf_error *err);

/**
 * Steps 1-2: check the batch, list its entries (roots [src; dst; neg], then TGN's sampled
 * neighbours, with their query times) and allocate the tape's per-entry arrays. Reads no memory
 * and no parameter: the batch's structure depends only on the stream and the negatives.
 * @param m        the model (its kind and widths)
 * @param history  temporal CSR of the whole stream, for TGN's neighbours (JODIE: may be NULL)
 * @param batch    the events and their negatives
 * @param tape     out: entries, times, neighbour lists, per-entry arrays; free with event_tape_free()
 * @param err      out: a batch outside the stream, a negative outside the vertices, feature
 *                 widths that do not match, no memory
 * @return 0, or TF_ERR_INPUT (the tape is then empty)
 */
int event_model_collect(const event_model *m, const temporal_csr *history, const event_batch *batch,
                        event_tape *tape, tf_error *err);

/**
 * event_model_collect() with the tape's arrays, and later the backward's scratch, carved from
 * @p scratch (zeroed, as their own allocations are): event_tape_free() resets the workspace, so
 * a trainer that keeps one for its batches allocates once, at the largest batch, instead of some
 * forty arrays per batch. One live tape per workspace. NULL: each array its own allocation. APAN's
 * tape (its mailbox's own allocations) ignores it.
 */
int event_model_collect_in(const event_model *m, const temporal_csr *history, const event_batch *batch,
                           workspace *scratch, event_tape *tape, tf_error *err);

/**
 * Allocate a tape's per-entry arrays for @p entries entries (vertex and time too when they are
 * still NULL): memory, memory_time, mail, updater arrays, updated, the message scratch. Used by
 * event_model_collect() and by a twin that builds a tape of rows it serves (chapter 04's DepComm).
 * @return 0, or TF_ERR_INPUT (free the tape with event_tape_free())
 */
int event_tape_alloc_entries(const event_model *m, event_tape *tape, int64_t entries, tf_error *err);

/**
 * Step 3, the naive dispatch: every entry gets its own copy of its vertex's memory, mail and
 * mem_ts from @p memory (node_memory_gather() over tape->vertex, repeats and all).
 * @param m       the model
 * @param memory  the node memory before the batch (read only)
 * @param tape    a collected tape: its memory, memory_time and mail rows are written
 * @param err     out: widths that do not match, a vertex outside the memory
 * @return 0, or TF_ERR_INPUT
 */
int event_model_read_memory(const event_model *m, const node_memory *memory, event_tape *tape, tf_error *err);

/**
 * Step 4: s' = updater([mail || phi_mem(t - mem_ts)], s) for every entry of the tape, from its
 * rows (tape->memory, memory_time, mail) and query times. Each row's s' depends only on that
 * row, its time and the parameters. Works on any tape with entries filled (roots may be 0).
 */
void event_model_update(const event_model *m, event_tape *tape);

/**
 * The time tau at which entry @p k's updater runs and which its s' stands for: its query time
 * (per entry) or its vertex's pre-batch mail_ts (per vertex). The updater sees tau - mem_ts; the
 * write-back stores tau as mem_ts. Twins that compute s' once per distinct (vertex, tau) do so
 * once per vertex under the per-vertex rule.
 */
double event_model_update_time(const event_model *m, const event_tape *tape, int64_t k);

/**
 * Step 5 forward: the roots' embeddings (TGN: attention over the sampled neighbours' s'; JODIE:
 * time projection) and the decoder's scores.
 * @param m       the model
 * @param batch   the batch the tape was collected from
 * @param tape    a tape after event_model_update()
 * @param scores  [2B] out: positive pairs, then negative pairs
 * @param err     out: no memory
 * @return 0, or TF_ERR_INPUT
 */
int event_model_embed(const event_model *m, const event_batch *batch, event_tape *tape, float *scores, tf_error *err);

/**
 * The loss: BCE-with-logits of the positives against 1, averaged, plus that of the negatives
 * against 0, averaged (TGL's). Writes dscores = d loss / d scores [2B] unless it is NULL.
 * @param scores      [2B] the forward's logits
 * @param batch_size  B
 * @param dscores     [2B] out, or NULL
 * @return the loss, in double
 */
double event_model_loss(const float *scores, int64_t batch_size, float *dscores);

/**
 * The loss's two sums for @p count events that are part of a batch of @p batch_size (a rank's
 * slice of a global batch): sums[0] = the positives' BCE terms, sums[1] = the negatives'; the
 * batch loss is (sum over all parts of sums[0]) / B + (of sums[1]) / B. dscores [2 count], unless
 * NULL, gets d loss / d scores of the *batch* loss, (sigmoid(x) - target) / B.
 * @param scores      [2 count] positives then negatives
 * @param count       events of this part (may be 0)
 * @param batch_size  B, the whole batch's events
 * @param dscores     [2 count] out, or NULL
 * @param sums        out: positive and negative sums
 */
void event_model_loss_sums(const float *scores, int64_t count, int64_t batch_size, float *dscores, double sums[2]);

/**
 * Step 5 backward: adds d loss / d parameters into every parameter's double sums
 * (parameter.sums), through the decoder, the embedding, the memory updater and both time
 * encodings, then sets each gradient to its sums rounded once (parameters_round_sums()).
 * Nothing flows into the memory that was read. The sums are rounded only here, once per
 * batch: a batch split over processes (opt/train_events.h) adds the processes' sums in double
 * first, so its gradients are the reference's whatever the split.
 * @param m        the model (its sums are added into, its gradients set)
 * @param tape     the forward's tape
 * @param dscores  [2B] gradient of the loss with respect to the scores
 * @param err      out: no memory for scratch
 * @return 0, or TF_ERR_INPUT
 */
int event_model_backward(event_model *m, const event_tape *tape, const float *dscores, tf_error *err);

/**
 * The first half of event_model_backward(): decoder and embedding backward, adding into their
 * parameters' double sums (not rounded) and into @p dupdated [N][d_mem], the gradient of every
 * entry's s'.
 * @return 0, or TF_ERR_INPUT (no memory for scratch)
 */
int event_model_backward_embedding(event_model *m, const event_tape *tape, const float *dscores, float *dupdated,
                                   tf_error *err);

/**
 * The second half: the updater cell and its time encoder backward from @p dupdated [N][d_mem],
 * adding into their parameters' double sums (not rounded). The gradient with respect to the memory that was read
 * is not wanted: it is data. Works on any tape after event_model_update().
 * @return 0, or TF_ERR_INPUT (no memory for scratch)
 */
int event_model_backward_updater(event_model *m, const event_tape *tape, const float *dupdated, tf_error *err);

/**
 * Step 6: write the batch's updated memories and new messages into @p memory, no gradient,
 * in event order with the conflict rule above (largest event index wins, dst after src).
 * @param m       the model
 * @param tape    the forward's tape (its s' of the source and destination roots)
 * @param batch   the same batch the forward ran on
 * @param memory  the node memory to update
 */
void event_model_write_memory(const event_model *m, const event_tape *tape, const event_batch *batch,
                              node_memory *memory);

/**
 * The message positive root entry @p entry (< 2B) leaves: [s'_self || s'_other || e] with
 * s'_other the s' of the event's other endpoint's root entry and e the event's edge features.
 * @param m      the model
 * @param tape   the batch's tape after the update (its s')
 * @param batch  the batch
 * @param entry  a positive root entry, 0 .. 2B-1
 * @param mail   [d_msg] out
 */
void event_model_entry_message(const event_model *m, const event_tape *tape, const event_batch *batch, int64_t entry,
                               float *mail);

/** Release a tape's arrays (when they come from a workspace: reset it) and zero it. Safe on a zeroed tape. */
void event_tape_free(event_tape *tape);

#ifdef __cplusplus
}
#endif

#endif
