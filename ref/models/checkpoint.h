/**
 * @file ref/models/checkpoint.h
 * @brief Checkpoint directories that survive a kill at any instant, and the Adam state inside
 *        them; shared by the snapshot trainer (train.h) and the event trainer (train_events.h).
 *
 * A checkpoint is a directory of .npy files: the parameters as NAME.npy (PyTorch state_dict
 * names), Adam's moments as adam.exp_avg.NAME.npy and adam.exp_avg_sq.NAME.npy, and the trainer's
 * own state in trainer.npy (int64). trainer.npy is written last, so a directory is a complete
 * checkpoint if and only if it holds trainer.npy. Its first values are a header every trainer
 * shares (checkpoint_field): the format, the kind of model, epoch, Adam step, a digest of the
 * training data and the task it learns (a resume under another task is refused); the trainer's own shape values follow.
 *
 * checkpoint_save() writes into DIRECTORY.partial, then moves the old DIRECTORY aside to
 * DIRECTORY.previous, renames DIRECTORY.partial to DIRECTORY and removes DIRECTORY.previous. A
 * kill at any instant leaves at least one complete checkpoint among the three names, and
 * checkpoint_locate() finds it: DIRECTORY.partial once its trainer.npy is written (the newest),
 * else DIRECTORY, else DIRECTORY.previous. The next save first finishes (or undoes) an
 * interrupted one, so the three never pile up. An existing DIRECTORY is replaced only if it is
 * empty or a twofold checkpoint; anything else is an error, so a mistyped --save never deletes a
 * user's directory. The names DIRECTORY.partial and DIRECTORY.previous belong to the save: what a
 * user keeps there (a backup named DIR.previous) is removed by the next save of DIRECTORY. A
 * symbolic link, or a path ending in "." or "..", is refused: the save replaces DIRECTORY by name.
 *
 * Saves to one DIRECTORY are exclusive: checkpoint_save() holds an flock(LOCK_EX) on the parent
 * directory from its recovery to its last removal, so two runs saving to the same place at the
 * same time take turns, each writes a complete checkpoint, and the later one's stays (last writer
 * wins). Saves to other directories of the same parent wait too; a save takes well under a second.
 */
#ifndef TWOFOLD_REF_CHECKPOINT_H
#define TWOFOLD_REF_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "ref/nn/adam.h"
#include "ref/core/error.h"
#include "ref/data/events.h"
#include "ref/data/snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The file that marks a directory as a complete twofold checkpoint (written last). */
#define CHECKPOINT_MARKER "trainer.npy"

/** The format of trainer.npy this twofold writes and reads (1, 1001, 2, 3 and 4 were the earlier ones; 3
 *  added a snapshot model's stacked pairs, 4 the task in the header, a snapshot model's number of classes
 *  and an event model's mails per mailbox, 5 a snapshot model's mini-batch size and fan-outs). */
#define CHECKPOINT_FORMAT 5

/**
 * A test hook: with TWOFOLD_SAVE_FAULT_STEP=k in the environment, checkpoint_save() kills its
 * own process with SIGKILL at its k-th step (after printing the step to stderr), so a test can
 * show that a kill at every step leaves a loadable checkpoint; k = -1 prints the number of steps
 * a save took instead. Steps are the moves on disk: each file written (the kill leaving a
 * half-written temporary file, as a real one inside npy_write() would), each rename, each removal.
 */
#define CHECKPOINT_FAULT_VARIABLE "TWOFOLD_SAVE_FAULT_STEP"

/**
 * A test hook: with TWOFOLD_SAVE_STEP_DELAY_MS=m in the environment, checkpoint_save() sleeps m
 * milliseconds before each of its steps, so that two saves started together surely overlap and a
 * test can show that they take turns.
 */
#define CHECKPOINT_DELAY_VARIABLE "TWOFOLD_SAVE_STEP_DELAY_MS"

/** The header at the start of every trainer.npy; a trainer's own values follow it. */
typedef enum checkpoint_field {
    CHECKPOINT_FIELD_FORMAT, /**< CHECKPOINT_FORMAT */
    CHECKPOINT_FIELD_FAMILY, /**< checkpoint_family */
    CHECKPOINT_FIELD_KIND,   /**< model_kind or event_model_kind */
    CHECKPOINT_FIELD_EPOCH,  /**< epochs completed */
    CHECKPOINT_FIELD_STEP,   /**< Adam steps taken */
    CHECKPOINT_FIELD_DATA,   /**< checkpoint_snapshot_digest() or checkpoint_event_digest() of the data */
    CHECKPOINT_FIELD_TASK,   /**< train_task (ref/models/model.h): an event model's is always #TASK_LINK */
    CHECKPOINT_HEADER_SIZE   /**< number of header values */
} checkpoint_field;

/** Which trainer wrote a checkpoint. */
typedef enum checkpoint_family {
    CHECKPOINT_SNAPSHOT_MODEL = 1, /**< train.h: tgcn, gconvgru, gclstm, evolvegcn */
    CHECKPOINT_EVENT_MODEL = 2     /**< train_events.h: tgn, jodie */
} checkpoint_family;

/**
 * A 64-bit digest of a snapshot sequence: its sizes, every graph, feature, target and presence
 * flag, by tf_digest() (ref/core/digest.h: a changed bit of the data changes each bit of the digest
 * with probability about 1/2, so two sign flips do not cancel). Two runs on the same data agree;
 * other data differs with near certainty.
 * @param seq the data
 * @return the digest
 */
uint64_t checkpoint_snapshot_digest(const snapshot_seq *seq);

/**
 * The digest of an event stream: its events (ends, times, labels) and the edge features used.
 * @param events    the stream
 * @param features  [num_events][width] the edge features the model reads, or NULL
 * @param width     their columns (0 for none)
 * @return the digest
 */
uint64_t checkpoint_event_digest(const event_stream *events, const float *features, int64_t width);

/**
 * Check a --save target before any training, so a run never ends in a save that cannot work:
 * the parent directory must exist and be readable and writable, and @p directory must be absent,
 * an empty directory or a twofold checkpoint (a trailing '/' is allowed), neither a symbolic link
 * nor a path whose last component is "." or "..", and DIRECTORY.partial and DIRECTORY.previous,
 * which the save removes, must be absent or hold only files a checkpoint writes.
 * @param directory  the target
 * @param err        out: "--save DIR: ..." naming what is wrong
 * @return 0, or TF_ERR_INPUT
 */
int checkpoint_check_target(const char *directory, tf_error *err);

/**
 * Find the complete checkpoint a load of @p directory reads, without changing anything on disk:
 * DIRECTORY.partial if its save was interrupted after its marker was written, else DIRECTORY if
 * complete, else DIRECTORY.previous if complete, else DIRECTORY itself when it is a directory of
 * parameters only (no marker, e.g. exported from PyTorch).
 * @param directory  the checkpoint as the user named it
 * @param found      out: [4096] the directory to read
 * @param err        out: no such directory
 * @return 0, or TF_ERR_INPUT
 */
int checkpoint_locate(const char *directory, char *found, tf_error *err);

/**
 * Whether a load of @p directory reads the complete checkpoint an interrupted save left beside
 * it (DIRECTORY.partial or DIRECTORY.previous) rather than DIRECTORY itself, for a note to the user.
 * @param directory  the checkpoint as the user named it
 * @param located    out: [4096] the directory a load reads
 * @return 1 if it is DIRECTORY.partial or DIRECTORY.previous, else 0 (also when none is found)
 */
int checkpoint_interrupted(const char *directory, char *located);

/**
 * Save a checkpoint as described above: every parameter, every Adam moment, and the trainer's
 * state (@p state_count int64 values starting with the header) in the marker, written last.
 * @param directory    where the checkpoint goes
 * @param parameters   the model's parameters
 * @param optimizer    their Adam state
 * @param state        [state_count] the header and the trainer's own values
 * @param state_count  number of values in @p state
 * @param err          out: a directory that is not a checkpoint, a file that cannot be written
 * @return 0, TF_ERR_INPUT for a directory that may not be replaced, TF_ERR_SYSTEM when writing
 *         or renaming fails
 */
int checkpoint_save(const char *directory, const parameter_list *parameters, const adam *optimizer,
                    const int64_t *state, int64_t state_count, tf_error *err);

/**
 * Load a checkpoint into a trainer's parameters and Adam moments. It is located
 * (checkpoint_locate()), then its marker is read and checked before any parameter file, so a
 * checkpoint of another model or other data is reported as such: the marker's format, family and
 * kind must equal @p expected's, its size @p state_count, its epoch and Adam step must be a state
 * training reaches (0 <= epoch <= step), its data digest must equal @p expected's, and the
 * trainer's own values from @p first on must equal @p expected's; only those that differ are
 * named ("MARKER: saved with windows of 4, stride 4; this run has windows of 8, stride 8"). A
 * directory of parameters only (no marker, e.g. exported from PyTorch) loads the parameters and
 * returns with *@p found = 0: the trainer then starts at epoch 0 with a fresh optimizer.
 * @param directory    the checkpoint as the user named it
 * @param expected     [state_count] this run's state
 * @param state        out: [state_count] the marker's values (epoch, Adam step, ...), when found
 * @param state_count  number of values
 * @param first        index of the first of the trainer's own values
 * @param labels       [state_count - first] what each of them is ("hidden", "stride", ...)
 * @param parameters   filled in (shapes must match)
 * @param optimizer    its moments filled in; its step count is the caller's business
 * @param found        out: 1 if the directory has a marker
 * @param err          out: what differs or is wrong, naming the file
 * @return 0, or TF_ERR_INPUT
 */
int checkpoint_load(const char *directory, const int64_t *expected, int64_t *state, int64_t state_count, int first,
                    const char *const *labels, parameter_list *parameters, adam *optimizer, int *found,
                    tf_error *err);

/**
 * checkpoint_load() for a trainer that resumes where a checkpoint left off: when it has a marker,
 * *@p epoch and optimizer->step take the marker's epoch and Adam step; parameters only leave
 * them as they are (epoch 0, a fresh optimizer). Arguments as checkpoint_load()'s.
 */
int checkpoint_resume(const char *directory, const int64_t *expected, int64_t *state, int64_t state_count, int first,
                      const char *const *labels, parameter_list *parameters, adam *optimizer, int64_t *epoch,
                      int *found, tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
