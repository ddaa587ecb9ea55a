/**
 * @file bench/drift_compare.h
 * @brief What two fp-equal training runs of one model are compared by, step by step
 *        (bench/drift.c, bench/minibatch_drift.c): the hidden states the two put on opposite
 *        sides of the head's ReLU (y^ = Linear(ReLU(H)), ref/models/model.c), where a difference
 *        of one rounding can switch a state's gradient on in one run and off in the other, and the
 *        largest relative difference of their gradients or parameters.
 */
#ifndef TWOFOLD_BENCH_DRIFT_COMPARE_H
#define TWOFOLD_BENCH_DRIFT_COMPARE_H

#include <stdint.h>

#include "ref/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/** |ours - reference| / max(1, |reference|). */
double drift_relative(double ours, double reference);

/**
 * Run the windows of step @p step of schedule @p s forward in both trainers over @p seq and count
 * the states H[t][v][unit] of vertices v < @p rows that lie on opposite sides of the ReLU; print
 * the first @p print of them, each as "  step NUMBER, window W: H[...] is A on LABEL_A, B on
 * LABEL_B: opposite sides of the ReLU". @return the count, or -1 with @p err set.
 */
int64_t drift_kink_crossings(trainer *a, trainer *b, const snapshot_seq *seq, const train_schedule *s, int64_t step,
                             int64_t number, int64_t rows, int64_t print, const char *label_a, const char *label_b,
                             tf_error *err);

/**
 * Run the windows of step @p step of schedule @p s forward in trainer @p a over @p seq and find the
 * hidden state H[t][v][unit] nearest the head's ReLU kink (smallest |H|): its value into *value and
 * its place into place[3] (snapshot, vertex, unit). A state within a few roundings of 0 is one a
 * twin's last-bit differences can put on the other side. @return 0, or -1 with @p err set.
 */
int drift_nearest_kink(trainer *a, const snapshot_seq *seq, const train_schedule *s, int64_t step, float *value,
                       int64_t place[3], tf_error *err);

/**
 * The largest drift_relative() of @p b's gradients (@p values 0) or values (1) from @p a's, and
 * in which parameter (*name); *differ counts those that differ in bits, *total all.
 */
double drift_worst_of(const trainer *a, const trainer *b, int values, int64_t *differ, int64_t *total,
                      const char **name);

#ifdef __cplusplus
}
#endif

#endif
