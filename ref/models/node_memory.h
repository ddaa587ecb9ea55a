/**
 * @file ref/models/node_memory.h
 * @brief The per-vertex state of memory-based TGNNs (TGN, JODIE): memory, a one-message
 *        mailbox, and the two timestamps.
 *
 * Every vertex v stores (as TGL's code does, [TGL]; Sven's "node memory and message", [Sven]
 * §2.1.2; citations: chapters/references.md):
 *  - its memory s_v [d_mem], a summary of everything v took part in so far;
 *  - mem_ts_v, the time s_v stands for (the event that wrote it, or under the per-vertex
 *    update rule the message it last consumed, event_model.h);
 *  - its mailbox: one message mail_v [d_msg] (mailbox size 1, so "aggregating" the pending
 *    messages means keeping the most recent one), built from v's latest event as
 *    [s'_v || s'_other || edge feature], d_msg = 2 d_mem + d_e;
 *  - mail_ts_v, the time of that event.
 *
 * APAN keeps M mails instead of one (M = 10 by default, `--mails`): the mailbox is a ring of M
 * slots with their mail_ts, filled in arrival order. mail_next_v is the slot the next mail goes
 * to; a delivery writes there and advances it by one, modulo M (node_memory_deliver()), so once
 * the ring is full the oldest mail is the one overwritten. With M = 1 this is the one-message
 * mailbox above: every delivery overwrites slot 0.
 *
 * All of it is zero at the start of every epoch (node_memory_reset()). It is *state*, not a
 * parameter: a batch reads the rows it needs as they were before the batch
 * (node_memory_gather(), the "dispatch" of [Sven] §2.2, step 3 of event_model.h) and, after its
 * forward, overwrites the rows of its events' endpoints (node_memory_write(), step 6) with
 * values that carry no gradient. Who writes what, and which write wins, is decided in
 * event_model.h; this file only stores.
 *
 * Ownership: node_memory_create() allocates five arrays indexed by vertex id, freed by
 * node_memory_free().
 */
#ifndef TWOFOLD_REF_NODE_MEMORY_H
#define TWOFOLD_REF_NODE_MEMORY_H

#include <stdint.h>

#include "ref/core/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The state of every vertex. */
typedef struct node_memory {
    int64_t num_nodes;      /**< rows: the vertex id space */
    int64_t memory_width;   /**< d_mem */
    int64_t mail_width;     /**< d_msg = 2 d_mem + d_e */
    int64_t mails;          /**< M, slots per mailbox: 1 (TGN, JODIE) or APAN's M */
    float *memory;          /**< [num_nodes][d_mem] s */
    double *memory_time;    /**< [num_nodes] mem_ts */
    float *mail;            /**< [num_nodes][M][d_msg] the mailbox (M = 1: the one pending message) */
    double *mail_time;      /**< [num_nodes][M] mail_ts of each slot */
    int32_t *mail_next;     /**< [num_nodes] the slot the next delivery writes, 0..M-1 */
} node_memory;

/**
 * Allocate a zeroed state for @p num_nodes vertices with a one-message mailbox
 * (node_memory_create_mailbox() with M = 1).
 * @param m             out: the state
 * @param num_nodes     vertex id space
 * @param memory_width  d_mem >= 1
 * @param mail_width    d_msg >= 1
 * @param err           out: too large for memory
 * @return 0, or TF_ERR_INPUT (nothing is left allocated)
 */
int node_memory_create(node_memory *m, int64_t num_nodes, int64_t memory_width, int64_t mail_width, tf_error *err);

/**
 * Allocate a zeroed state whose mailboxes hold @p mails messages each (APAN).
 * @param m             out: the state
 * @param num_nodes     vertex id space
 * @param memory_width  d_mem >= 1
 * @param mail_width    d_msg >= 1
 * @param mails         M >= 1, slots per mailbox
 * @param err           out: too large for memory
 * @return 0, or TF_ERR_INPUT (nothing is left allocated)
 */
int node_memory_create_mailbox(node_memory *m, int64_t num_nodes, int64_t memory_width, int64_t mail_width,
                               int64_t mails, tf_error *err);

/** Release the arrays and zero @p m. Safe on a zeroed state. */
void node_memory_free(node_memory *m);

/** Zero every memory, mail, timestamp and ring position: the state at the start of an epoch. */
void node_memory_reset(node_memory *m);

/**
 * Copy the rows of @p count vertices (repeats allowed: each occurrence gets its own copy)
 * into the four output arrays, any of which may be NULL.
 * @param m            the state, read only
 * @param vertices     [count] vertex ids, each in 0..num_nodes-1
 * @param count        number of rows to copy
 * @param memory       [count][d_mem] out
 * @param memory_time  [count] out
 * @param mail         [count][M][d_msg] out: the whole mailbox, slots in storage order
 * @param mail_time    [count][M] out
 */
void node_memory_gather(const node_memory *m, const int32_t *vertices, int64_t count, float *memory,
                        double *memory_time, float *mail, double *mail_time);

/**
 * Deliver one mail to vertex @p vertex: it goes to slot mail_next, with mail_ts @p time, and
 * mail_next advances by one modulo M. Memory and mem_ts are not touched.
 * @param m       the state
 * @param vertex  id in 0..num_nodes-1
 * @param mail    [d_msg] the message
 * @param time    its event's time
 */
void node_memory_deliver(node_memory *m, int32_t vertex, const float *mail, double time);

/** Overwrite vertex @p vertex's memory s [d_mem] and its mem_ts, nothing else (APAN's endpoints). */
void node_memory_store(node_memory *m, int32_t vertex, const float *memory, double time);

/**
 * Overwrite vertex @p vertex's memory and mem_ts (node_memory_store()), and deliver @p mail
 * (node_memory_deliver(); with M = 1 an overwrite of the one message).
 * @param m            the state
 * @param vertex       id in 0..num_nodes-1
 * @param memory       [d_mem] the new s_v
 * @param memory_time  the time s_v stands for, stored as mem_ts
 * @param mail         [d_msg] the new message
 * @param mail_time    the event's time, stored as mail_ts
 */
void node_memory_write(node_memory *m, int32_t vertex, const float *memory, double memory_time, const float *mail,
                       double mail_time);

#ifdef __cplusplus
}
#endif

#endif
