/**
 * @file ref/clock.h
 * @brief The project's one wall-clock timer: every benchmark, demo row and progress line
 *        measures time with it.
 */
#ifndef TWOFOLD_REF_CLOCK_H
#define TWOFOLD_REF_CLOCK_H

#ifdef __cplusplus
extern "C" {
#endif

/** Seconds from a monotonic clock (CLOCK_MONOTONIC): only differences mean something. */
double wall_seconds(void);

#ifdef __cplusplus
}
#endif

#endif
