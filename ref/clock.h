/**
 * @file ref/clock.h
 * @brief The project's one wall-clock timer: every benchmark, demo row and progress line
 *        measures time with it; and a thread's CPU time, for busy time.
 */
#ifndef TWOFOLD_REF_CLOCK_H
#define TWOFOLD_REF_CLOCK_H

#ifdef __cplusplus
extern "C" {
#endif

/** Seconds from a monotonic clock (CLOCK_MONOTONIC): only differences mean something. */
double wall_seconds(void);

/** CPU seconds the calling thread has used (CLOCK_THREAD_CPUTIME_ID): a rank's busy time, which
 *  oversubscribed ranks' wall time does not show (chapter 06 measures load balance with it). */
double cpu_seconds(void);

#ifdef __cplusplus
}
#endif

#endif
