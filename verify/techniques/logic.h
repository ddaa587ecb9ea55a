/**
 * @file verify/techniques/logic.h
 * @brief A training twin's logic alone: the twin run again with the reference's kernels in place
 *        of its own, beside a fresh reference, compared bit for bit. `twofold verify`'s training
 *        rows call it when a twin is outside its fp tolerance, to tell "the twin differs" from
 *        "the data amplifies the opt kernels' rounding beyond the tolerance" (chapter 01, "What
 *        verify compares").
 *
 * With ref_kernels swapped in, every value the twin computes is computed by the reference's
 * arithmetic; what is left of the twin is its logic: its windows and their order, its ranks and
 * their all-reduce, its schedule. If its parameters then have the reference's bits after every
 * epoch, that logic is the reference's, and the rest of the difference is the opt kernels'
 * rounding (each kernel is checked against its ref twin on its own: verify/test_kernels.c) grown
 * by the data. A twin whose logic is broken is broken on either kernels, and differs here too.
 *
 * Ownership: nothing is kept; the data and the group are borrowed.
 */
#ifndef TWOFOLD_VERIFY_TECHNIQUES_LOGIC_H
#define TWOFOLD_VERIFY_TECHNIQUES_LOGIC_H

#include <stdint.h>

#include "opt/comm.h"
#include "ref/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One epoch of @p tr: the reference's (@p side 0, one process) or the twin's (@p side 1, on the
 *  technique's ranks). */
typedef int (*logic_epoch_fn)(const void *context, trainer *tr, int side, tf_error *err);

/**
 * Train a fresh reference (on rank 0 of @p group) and a fresh twin on ref_kernels (on every rank;
 * data-parallel on @p group when it is not NULL) of @p config and @p options, @p epochs epochs of
 * @p epoch each, and compare their parameters bit for bit after every epoch. With @p corrupt the
 * twin's first parameter is spoiled after each epoch as technique::corrupt does (a broken twin).
 * @return on rank 0 how many values differ, summed over the epochs (0: the twin's logic is the
 *         reference's); 0 on the other ranks; -1 with @p err set on failure.
 */
double training_logic_differs(const snapshot_seq *seq, const model_config *config, const train_options *options,
                              comm *group, int64_t epochs, int corrupt, logic_epoch_fn epoch, const void *context,
                              tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
