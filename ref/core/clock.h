/**
 * @file ref/core/clock.h
 * @brief The project's one wall-clock timer: every benchmark, demo row and progress line
 *        measures time with it; and a thread's CPU time, for busy time only.
 */
#ifndef TWOFOLD_REF_CLOCK_H
#define TWOFOLD_REF_CLOCK_H

#ifdef __cplusplus
extern "C" {
#endif

/** Seconds from a monotonic clock (CLOCK_MONOTONIC): only differences mean something. */
double wall_seconds(void);

/**
 * CPU seconds the calling thread has used (CLOCK_THREAD_CPUTIME_ID): not a wall clock, but
 * the busy time of one rank when several ranks share fewer cores (a rank waiting for a core
 * or at an all-reduce does not count). Only differences mean something.
 */
double thread_cpu_seconds(void);

#ifdef __cplusplus
}
#endif

#endif
