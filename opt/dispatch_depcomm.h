/**
 * @file opt/dispatch_depcomm.h
 * @brief The DepComm baseline's own steps (NeutronStar's dependency communication, as [Sven]
 *        §2.3 and Fig. 4b describe it): the owner of a vertex runs the memory updater for every
 *        occurrence another rank asks about and sends back s', and in backward the asker sends
 *        d loss / d s' back to the owner, which runs the updater's backward.
 *
 * The owner's updater sees exactly the row and query time the reference's entry sees, so s' has
 * the reference's bits (opt/train_events.h); the updater's parameter gradient is then summed on the
 * owners instead of the askers: fp. Internal to opt/train_events.c (the steps it calls per mode).
 */
#ifndef TWOFOLD_OPT_DISPATCH_DEPCOMM_H
#define TWOFOLD_OPT_DISPATCH_DEPCOMM_H

#include "opt/train_events.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Step 2: every entry's (vertex, query time) to the vertex's owner, 12 bytes each. Collective. */
int dispatch_depcomm_send_requests(opt_event_trainer *tr, tf_error *err);

/** Step 3: as owner, read the asked rows and run the updater on them (tr->serving, kept for
 *  backward); send back s' and mem_ts; as asker, store them in the batch's tape. Collective. */
int dispatch_depcomm_serve_updates(opt_event_trainer *tr, tf_error *err);

/** Step 5 (gradients zeroed by the caller): decoder and embedding backward here, d loss / d s'
 *  of every entry to its owner, the updater's backward there. Collective. */
int dispatch_depcomm_backward(opt_event_trainer *tr, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
