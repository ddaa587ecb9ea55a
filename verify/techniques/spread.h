/**
 * @file verify/techniques/spread.h
 * @brief The reference's own spread: how far the reference's answer moves when its inputs move
 *        by one unit in the last place. `twofold verify`'s training rows call it for a twin outside
 *        the tolerance that adds in another order than the reference by design (ranks, schedules),
 *        so that its rerun on the reference's kernels (verify/techniques/logic.h) cannot be bitwise:
 *        an estimate, to tell "the twin differs" from "this data amplifies rounding beyond any float
 *        tolerance" (chapter 01, "What verify compares").
 *
 * Two reruns of the reference, each compared with an unperturbed rerun after every step by the
 * same measure as the row (relative_error(), ref/nn/compare.h): one with every initial parameter
 * moved one ulp (up and down in turn), one with every input feature moved one ulp. Both changes
 * are smaller than any rounding the twin's kernels make, so where the reference itself moves by
 * more than the tolerance, no float implementation can be held to it on that data.
 *
 * A reference whose training diverges (its loss not finite, or grown more than #SPREAD_DIVERGED
 * fold over the steps) has an infinite spread: its answer is made by the amplification of its
 * steps, and any rounding moves it without bound.
 *
 * Ownership: nothing is kept; the data is borrowed.
 */
#ifndef TWOFOLD_VERIFY_TECHNIQUES_SPREAD_H
#define TWOFOLD_VERIFY_TECHNIQUES_SPREAD_H

#include <stdint.h>

#include "ref/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How many fold the reference's loss may grow over the steps before its training counts as diverged. */
#define SPREAD_DIVERGED 1e6

/** How far past the reference's own spread a reordered twin may be and still be "not comparable"
 *  rather than WRONG. A right twin's reordering is a few roundings where the spread's change is
 *  one ulp, amplified by the same data, so its error is of the spread's order (0.9x on the +-100
 *  one-vertex graph of verify/test_ranks_options.sh); a broken one's is orders of magnitude past it
 *  (a spoiled twin there: 1.2 and 3.0 against spreads of 2.6e-5 and 6.5e-5). */
#define SPREAD_MARGIN 10

/**
 * One step of a reference run: advance @p tr on @p seq by step @p step, then write the row's
 * answer (the packed parameters, or a gradient) into @p answer [the size given to
 * reference_spread()] and the step's loss into @p loss.
 */
typedef int (*spread_step_fn)(const void *context, trainer *tr, const snapshot_seq *seq, int64_t step, float *answer,
                              double *loss, tf_error *err);

/** A reference's epoch, trainer_epoch() or the serial reference of a protocol (ref_delayed_epoch()). */
typedef int (*spread_epoch_fn)(trainer *tr, const snapshot_seq *seq, epoch_report *report, tf_error *err);

/**
 * The spread_step_fn of a row whose step is an epoch and whose answer is the parameters: @p context
 * points to the #spread_epoch_fn that runs the epoch.
 */
int spread_epoch_step(const void *context, trainer *tr, const snapshot_seq *seq, int64_t step, float *answer,
                      double *loss, tf_error *err);

/**
 * The worst relative_error() over @p steps steps between an unperturbed reference run and each
 * of the two one-ulp perturbed runs (a fresh trainer of @p config and @p options each, ref
 * kernels). @return the spread (>= 0; INFINITY when the unperturbed run diverges), or -1 with @p err set.
 */
double reference_spread(const snapshot_seq *seq, const model_config *config, const train_options *options,
                        int64_t steps, int64_t answer_size, spread_step_fn step, const void *context, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
