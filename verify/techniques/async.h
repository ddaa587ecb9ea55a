/**
 * @file verify/techniques/async.h
 * @brief What a caller of technique_async (chapter 05) may set: its variants, the training every
 *        row uses, and the parameters a sweep passes to engine_run() for dgc-zero.
 */
#ifndef TWOFOLD_VERIFY_TECHNIQUES_ASYNC_H
#define TWOFOLD_VERIFY_TECHNIQUES_ASYNC_H

#include <stdint.h>

#include "ref/models/model.h"
#include "verify/techniques/table.h"

#ifdef __cplusplus
extern "C" {
#endif

/** technique_context::params of the dgc-zero variant; NULL: GConvGRU, hidden 12, 4 simulated ranks. */
typedef struct dgc_params {
    model_kind kind;      /**< the model */
    int64_t hidden;       /**< its state width */
    int ranks;            /**< simulated ranks (owner v mod R) */
    int epochs;           /**< epochs compared */
} dgc_params;

/** The variants of technique_async, in technique::variants order. */
enum { ASYNC_VARIANT_AVERAGE, ASYNC_VARIANT_DELAYED, ASYNC_VARIANT_DGC_ZERO };

/** The training every row uses: epochs compared, hidden width, window length, steps between averages. */
enum { ASYNC_EPOCHS = 2, ASYNC_HIDDEN = 12, ASYNC_WINDOW = 8, ASYNC_EVERY = 2 };

#ifdef __cplusplus
}
#endif

#endif
