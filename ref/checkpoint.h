/**
 * @file checkpoint.h
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
#ifndef TWOFOLD_CHECKPOINT_H
#define TWOFOLD_CHECKPOINT_H

#include "adam.h"
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The file that marks a directory as a twofold checkpoint. */
#define CHECKPOINT_MARKER "trainer.npy"

/**
 * Writes a checkpoint's files into @p directory (an empty directory that exists), including
 * #CHECKPOINT_MARKER. @return 0, or an error code with @p err set.
 */
typedef int (*checkpoint_writer)(const char *directory, const void *context, tf_error *err);

/**
 * Save a checkpoint atomically as described above.
 * @param directory  where the checkpoint goes
 * @param write      fills DIRECTORY.partial
 * @param context    passed to @p write
 * @param err        out: a directory that is not a checkpoint, a file that cannot be written
 * @return 0, TF_ERR_INPUT for a directory that may not be replaced, TF_ERR_SYSTEM when writing
 *         or renaming fails
 */
int checkpoint_save(const char *directory, checkpoint_writer write, const void *context, tf_error *err);

/**
 * Write Adam's moments of every parameter into @p directory as adam.exp_avg.NAME.npy and
 * adam.exp_avg_sq.NAME.npy.
 * @param optimizer  the optimizer
 * @param directory  an existing directory
 * @param err        out: a file that cannot be written
 * @return 0, or the error's code
 */
int checkpoint_save_moments(const adam *optimizer, const char *directory, tf_error *err);

/**
 * Read the moments written by checkpoint_save_moments() into @p optimizer, whose parameter
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
