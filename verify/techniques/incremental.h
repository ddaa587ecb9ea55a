/**
 * @file verify/techniques/incremental.h
 * @brief What a caller of technique_incremental (chapter 02) may set and read: the parameters a
 *        sweep passes to engine_run(), and the delta size an inspect callback reads.
 */
#ifndef TWOFOLD_VERIFY_TECHNIQUES_INCREMENTAL_H
#define TWOFOLD_VERIFY_TECHNIQUES_INCREMENTAL_H

#include "opt/incremental.h"
#include "verify/techniques/table.h"

#ifdef __cplusplus
extern "C" {
#endif

/** technique_context::params of technique_incremental; NULL means the engine's defaults and one twin. */
typedef struct incremental_params {
    incremental_options engine;   /**< threshold and refresh of the delta twin */
    int full_twin;                /**< 1: also time the twin's full recompute (twin 1) */
} incremental_params;

/** For engine_options::inspect: delta entries per current edge over snapshots 1 .. T-1 of a
 *  technique_incremental @p state. */
double incremental_entries_per_edge(const void *state);

#ifdef __cplusplus
}
#endif

#endif
