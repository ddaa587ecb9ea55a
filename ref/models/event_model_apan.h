/**
 * @file ref/models/event_model_apan.h
 * @brief APAN's own stages of the batch procedure of event_model.h (collection with the mail
 *        recipients and the delivery rule, the mailbox update, its backward, the write-back),
 *        called by event_model.c's stages when the model is APAN. The math and the delivery rule
 *        are in event_model.h.
 *
 * Ownership: everything these allocate lives in the event_tape and is freed by event_tape_free().
 */
#ifndef TWOFOLD_REF_EVENT_MODEL_APAN_H
#define TWOFOLD_REF_EVENT_MODEL_APAN_H

#include <stdint.h>

#include "ref/core/error.h"
#include "ref/models/event_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Steps 1-2 for APAN: the roots [src; dst; neg] (the only entries), each positive root's k most
 * recent neighbours before its time (the recipients of its mail), and the batch's deliveries
 * after the delivery rule (tape->delivery_vertex, delivery_entry, in delivery order).
 * @return 0, or TF_ERR_INPUT (no memory; the caller frees the tape)
 */
int event_model_apan_collect(const event_model *m, const temporal_csr *history, const event_batch *batch,
                             event_tape *tape, tf_error *err);

/** APAN's per-entry arrays for @p entries entries: mail_time, mail_delta, mail_input, the mailbox tape. */
int event_model_apan_alloc_entries(const event_model *m, event_tape *tape, int64_t entries, tf_error *err);

/** Step 4 for APAN: s' = mailbox attention of every entry's s over its M mails (event_model.h). */
void event_model_apan_update(const event_model *m, event_tape *tape);

/** The updater's backward for APAN, from dupdated [N][d_mem], into the parameters' double sums. */
int event_model_apan_backward_updater(event_model *m, const event_tape *tape, const float *dupdated, tf_error *err);

/** Step 6 for APAN: the endpoints' memories (TGN's rule), then one mail per vertex reached (the delivery rule). */
void event_model_apan_write_memory(const event_model *m, const event_tape *tape, const event_batch *batch,
                                   node_memory *memory);

#ifdef __cplusplus
}
#endif

#endif
