/**
 * @file opt/async_straggler.h
 * Twins: none — an injected delay for chapter 05's straggler runs; it changes no number.
 * @brief An injected delay that makes one rank (or random ranks) slow, for chapter 05's
 *        straggler experiment: a test option, not a technique.
 *
 * A straggler sleeps for `milliseconds` right after its local gradient of a step and before any
 * collective of that step, in every synchronization mode, so each mode meets the same delays.
 * Whether rank r is delayed in (epoch, step) is drawn from a generator keyed by (seed, r, epoch,
 * step), never by time or by the rank count: a run replays, and the delays do not change a
 * single number of the result (verify/test_async_mpi.c checks it), only the wall-clock time.
 *
 * Spellings (straggler_parse()): "RANK:MS" delays rank RANK at every step; "RANK:MS:P" with
 * probability P per step; "each:MS:P" every rank independently with probability P (jitter
 * spread over the ranks).
 */
#ifndef TWOFOLD_OPT_ASYNC_STRAGGLER_H
#define TWOFOLD_OPT_ASYNC_STRAGGLER_H

#include <stdint.h>

#include "ref/core/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Which ranks a straggler delays, besides one rank's number. */
enum straggler_ranks {
    STRAGGLER_NONE = -1, /**< no rank */
    STRAGGLER_EACH = -2, /**< every rank, each with its own draws */
};

/** The delay to inject. */
typedef struct straggler {
    int rank;              /**< the slow rank, or STRAGGLER_NONE, or STRAGGLER_EACH (every rank draws) */
    double milliseconds;   /**< sleep per delayed step, in (0, 60000] */
    double probability;    /**< chance a step is delayed, in (0, 1] */
    uint64_t seed;         /**< keys the draws */
} straggler;

/** No straggler (rank STRAGGLER_NONE), seed 1. */
void straggler_none(straggler *s);

/** Parse "RANK:MS[:P]" or "each:MS:P" into @p out (seed left at 1). One-line error naming the text. */
int straggler_parse(const char *text, straggler *out, tf_error *err);

/** 1 if @p rank sleeps in step @p step of epoch @p epoch. */
int straggler_is_delayed(const straggler *s, int rank, int64_t epoch, int64_t step);

/** Sleep if straggler_is_delayed() (nanosleep, resumed when a signal interrupts it). */
void straggler_wait(const straggler *s, int rank, int64_t epoch, int64_t step);

/** Its spelling for messages ("none", "1:50", "each:20:0.25"), into @p buffer [size]. */
const char *straggler_name(const straggler *s, char *buffer, int size);

#ifdef __cplusplus
}
#endif

#endif
