/**
 * @file ref/checkpoint.h
 * @brief Checkpoint directories written atomically, and the Adam state inside them; shared by
 *        the snapshot trainer (train.h) and the event trainer (train_events.h).
 *
 * A checkpoint is a directory of .npy files: the parameters as NAME.npy (PyTorch state_dict
 * names), Adam's moments as adam.exp_avg.NAME.npy and adam.exp_avg_sq.NAME.npy, and the trainer's
 * own state in trainer.npy, whose presence marks the directory as a twofold checkpoint.
 *
 * checkpoint_save() never leaves a half-written checkpoint under the real name: the files go into
 * DIRECTORY.partial, which then replaces DIRECTORY (the old one is moved to DIRECTORY.previous
 * and removed only after the swap), so a crash leaves either the old checkpoint or the new one.
 * An existing DIRECTORY is replaced only if it is empty or a twofold checkpoint; anything else is
 * an error, so a mistyped --save never deletes a user's directory.
 */
#ifndef TWOFOLD_REF_CHECKPOINT_H
#define TWOFOLD_REF_CHECKPOINT_H

#include <stdint.h>

#include "ref/adam.h"
#include "ref/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The file that marks a directory as a twofold checkpoint. */
#define CHECKPOINT_MARKER "trainer.npy"

/**
 * Save a checkpoint atomically as described above: every parameter, every Adam moment, and
 * the trainer's state (@p state_count int64 values, layout up to the trainer) in the marker.
 * @param directory    where the checkpoint goes
 * @param parameters   the model's parameters
 * @param optimizer    their Adam state
 * @param state        [state_count] the trainer's own numbers (version, epoch, step, shape, ...)
 * @param state_count  number of values in @p state
 * @param err          out: a directory that is not a checkpoint, a file that cannot be written
 * @return 0, TF_ERR_INPUT for a directory that may not be replaced, TF_ERR_SYSTEM when writing
 *         or renaming fails
 */
int checkpoint_save(const char *directory, const parameter_list *parameters, const adam *optimizer,
                    const int64_t *state, int64_t state_count, tf_error *err);

/**
 * Load a checkpoint's parameters and read its marker. A directory of parameters only (for
 * example exported from PyTorch) loads with *@p found = 0; otherwise the marker must hold
 * @p state_count int64 values, copied into @p state, and *@p found = 1. The caller checks the
 * state against its own shape, then loads the moments with checkpoint_load_moments().
 * @param directory    the checkpoint
 * @param parameters   filled from NAME.npy (shapes must match)
 * @param state        out: [state_count] the marker's values
 * @param state_count  expected number of values
 * @param found        out: [1] 1 if the directory has a marker
 * @param marker       out: the marker's path, for the caller's messages ([4096])
 * @param err          out: a missing directory or file, another shape, a damaged marker
 * @return 0, or TF_ERR_INPUT
 */
int checkpoint_load(const char *directory, parameter_list *parameters, int64_t *state, int64_t state_count,
                    int *found, char *marker, tf_error *err);

/**
 * Read the moments written by checkpoint_save() into @p optimizer, whose parameter
 * layout must match (a missing file or another shape is an error naming the file).
 * @param optimizer  the optimizer (its step count is the caller's business)
 * @param directory  the checkpoint directory
 * @param err        out: what was wrong, with the file's path
 * @return 0, or TF_ERR_INPUT
 */
int checkpoint_load_moments(adam *optimizer, const char *directory, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
