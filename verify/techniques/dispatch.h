/**
 * @file verify/techniques/dispatch.h
 * @brief What a caller of technique_dispatch (chapter 04) may set: the parameters a sweep passes
 *        to engine_run(), and the defaults the table's rows use.
 */
#ifndef TWOFOLD_VERIFY_TECHNIQUES_DISPATCH_H
#define TWOFOLD_VERIFY_TECHNIQUES_DISPATCH_H

#include <stdint.h>

#include "verify/techniques/table.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What a run uses unless its parameters say otherwise: a bounded prefix of the stream, widths 8
 *  (bytes scale with them; correctness does not depend on them), TGL's batch of 600. */
enum { DISPATCH_EVENTS = 20000, DISPATCH_WIDTH = 8, DISPATCH_BATCH = 600 };

/** technique_context::params of technique_dispatch (NULL: the defaults above, placement hash). */
typedef struct dispatch_params {
    const char *placement;   /**< a --placement value */
    int64_t events;          /**< the prefix of the stream used */
    int64_t batch;           /**< events per batch */
    int64_t width;           /**< d_mem = d_t = d_emb */
} dispatch_params;

#ifdef __cplusplus
}
#endif

#endif
