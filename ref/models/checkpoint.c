/* realpath() is X/Open (the build defines only _POSIX_C_SOURCE): the messages name the real directory. */
#define _XOPEN_SOURCE 700

#include "ref/models/checkpoint.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ref/core/digest.h"
#include "ref/models/event_model.h"
#include "ref/core/io.h"
#include "ref/models/model.h"
#include "ref/data/npy.h"

/* ---- data digests ------------------------------------------------------------------------- */

/* The data digests, built on the project's one digest (ref/core/digest.h). */
static uint64_t digest_int(uint64_t hash, int64_t value)
{
    return tf_digest(hash, &value, sizeof value);
}

uint64_t checkpoint_snapshot_digest(const snapshot_seq *seq)
{
    uint64_t h = TF_DIGEST_START;
    h = digest_int(h, seq->num_nodes);
    h = digest_int(h, seq->num_snapshots);
    h = digest_int(h, seq->feature_width);
    h = digest_int(h, seq->target_width);
    for (int64_t t = 0; t < seq->num_snapshots; t++) {
        const snapshot *s = &seq->snapshots[t];
        const csr *g = &s->graph;
        h = digest_int(h, g->num_edges);
        h = tf_digest(h, g->row_ptr, (size_t)(g->num_nodes + 1) * sizeof *g->row_ptr);
        h = tf_digest(h, g->col, (size_t)g->num_edges * sizeof *g->col);
        h = tf_digest(h, g->weight, (size_t)g->num_edges * sizeof *g->weight);
        h = tf_digest(h, s->features.data, (size_t)s->features.size * sizeof(float));
        h = tf_digest(h, s->targets.data, (size_t)s->targets.size * sizeof(float));
        if (s->present)
            h = tf_digest(h, s->present, (size_t)seq->num_nodes);
        if (s->labels) /* data without labels keeps the digest it had */
            h = tf_digest(h, s->labels, (size_t)seq->num_nodes * sizeof *s->labels);
    }
    return h;
}

uint64_t checkpoint_event_digest(const event_stream *events, const float *features, int64_t width)
{
    const size_t n = (size_t)events->num_events;
    uint64_t h = TF_DIGEST_START;
    h = digest_int(h, events->num_events);
    h = digest_int(h, events->num_nodes);
    h = tf_digest(h, events->src, n * sizeof *events->src);
    h = tf_digest(h, events->dst, n * sizeof *events->dst);
    h = tf_digest(h, events->time, n * sizeof *events->time);
    if (events->label)
        h = tf_digest(h, events->label, n * sizeof *events->label);
    h = digest_int(h, features ? width : 0);
    if (features)
        h = tf_digest(h, features, n * (size_t)width * sizeof *features);
    return h;
}

/* ---- the fault-injection hook ----------------------------------------------------------------- */

/* TWOFOLD_SAVE_FAULT_STEP=k: the save's k-th step kills the process (checkpoint.h); k = -1 only
 * counts the steps and prints their number. Steps are counted from the start of each
 * checkpoint_save(). A step that writes a file first leaves what a
 * kill inside npy_write() leaves: a half-written NAME.npy.tmpXXXXXX next to where NAME.npy goes. */
static int64_t fault_at, fault_count, delay_ms;

static void fault_start(void)
{
    const char *value = getenv(CHECKPOINT_FAULT_VARIABLE), *delay = getenv(CHECKPOINT_DELAY_VARIABLE);
    fault_at = value ? strtoll(value, NULL, 10) : 0;
    delay_ms = delay ? strtoll(delay, NULL, 10) : 0;
    fault_count = 0;
}

static void fault_point(const char *what, const char *path)
{
    if (delay_ms > 0) { /* TWOFOLD_SAVE_STEP_DELAY_MS: a slow save, so that two saves overlap */
        struct timespec pause = {(time_t)(delay_ms / 1000), (long)(delay_ms % 1000) * 1000000L};
        nanosleep(&pause, NULL);
    }
    if (fault_at == 0 || ++fault_count != fault_at)
        return;
    char temporary[4200];
    if (snprintf(temporary, sizeof temporary, "%s.tmpXXXXXX", path) < (int)sizeof temporary &&
        strstr(what, "writing")) {
        int fd = mkstemp(temporary);
        if (fd >= 0) {
            ssize_t written = write(fd, "\x93NUMPY", 6); /* half a header */
            close(fd);
            (void)written;
        }
    }
    fprintf(stderr, "%s: fault injected at step %lld: %s %s\n", CHECKPOINT_FAULT_VARIABLE, (long long)fault_at,
            what, path);
    raise(SIGKILL);
}

/* ---- the three directories ---------------------------------------------------------------------- */

/* DIRECTORY without trailing slashes, and its .partial and .previous names. */
typedef struct names {
    char directory[4000], partial[4096], previous[4096];
} names;

static int make_names(const char *directory, names *n, const char *option, tf_error *err)
{
    size_t length = strlen(directory);
    while (length > 1 && directory[length - 1] == '/')
        length--; /* "DIR/" is DIR, not a DIR/.partial inside it */
    if (length == 0 || strcmp(directory, "/") == 0)
        return tf_error_set(err, TF_ERR_INPUT, "%s \"%s\": expected a directory name", option, directory);
    if (length + 16 > sizeof n->directory)
        return tf_error_set(err, TF_ERR_INPUT, "%s %s: path too long", option, directory);
    memcpy(n->directory, directory, length);
    n->directory[length] = '\0';
    snprintf(n->partial, sizeof n->partial, "%s.partial", n->directory);
    snprintf(n->previous, sizeof n->previous, "%s.previous", n->directory);
    return TF_OK;
}

static int exists(const char *path)
{
    struct stat info;
    return stat(path, &info) == 0;
}

static int is_directory(const char *path)
{
    struct stat info;
    return stat(path, &info) == 0 && S_ISDIR(info.st_mode);
}

/* A complete checkpoint: a directory with its marker, the file a save writes last. */
static int complete(const char *directory)
{
    char marker[4200];
    struct stat info;
    snprintf(marker, sizeof marker, "%s/" CHECKPOINT_MARKER, directory);
    return is_directory(directory) && stat(marker, &info) == 0 && S_ISREG(info.st_mode);
}

/* A file a checkpoint holds: NAME.npy, or NAME.npy.tmpXXXXXX that a kill inside npy_write() left. */
static int checkpoint_file(const char *name)
{
    size_t length = strlen(name);
    return (length > 4 && strcmp(name + length - 4, ".npy") == 0) || strstr(name, ".npy.tmp") != NULL;
}

/* Removes a checkpoint directory: the marker first, so a removal cut short leaves an incomplete
 * directory rather than one that looks complete, then every checkpoint file, then the directory,
 * which fails if anything else was put there. */
static int remove_checkpoint(const char *directory, tf_error *err)
{
    DIR *listing = opendir(directory);
    if (!listing)
        return TF_OK;
    char path[4200];
    snprintf(path, sizeof path, "%s/" CHECKPOINT_MARKER, directory);
    unlink(path);
    fault_point("removing", directory);
    for (struct dirent *entry; (entry = readdir(listing));)
        if (checkpoint_file(entry->d_name)) {
            snprintf(path, sizeof path, "%s/%s", directory, entry->d_name);
            unlink(path);
        }
    closedir(listing);
    if (rmdir(directory) != 0)
        return tf_error_set(err, TF_ERR_INPUT, "%s: cannot remove (%s): it holds files no checkpoint writes; "
                            "move them away", directory, strerror(errno));
    return TF_OK;
}

static int move(const char *from, const char *to, tf_error *err)
{
    if (rename(from, to) != 0)
        return tf_error_set(err, TF_ERR_SYSTEM, "%s: cannot rename to %s: %s", from, to, strerror(errno));
    fault_point("renamed to", to);
    return TF_OK;
}

/* Finishes or undoes a save that was killed, so that DIRECTORY is the complete checkpoint (if
 * any exists) and neither .partial nor .previous is left. Each step keeps a complete checkpoint
 * under one of the three names, so a kill during the recovery is recovered from in turn. */
static int recover(const names *n, tf_error *err)
{
    if (complete(n->partial)) { /* killed after its marker: the new checkpoint is whole */
        if (exists(n->directory)) {
            if (exists(n->previous) && remove_checkpoint(n->previous, err) != TF_OK)
                return err->code;
            if (move(n->directory, n->previous, err) != TF_OK)
                return err->code;
        }
        if (move(n->partial, n->directory, err) != TF_OK)
            return err->code;
    } else if (exists(n->partial) && remove_checkpoint(n->partial, err) != TF_OK) {
        return err->code; /* killed while writing: nothing there is needed */
    }
    if (!complete(n->directory) && complete(n->previous)) { /* killed between the two renames */
        if (is_directory(n->directory))
            rmdir(n->directory); /* empty, or the rename below fails and says so */
        if (move(n->previous, n->directory, err) != TF_OK)
            return err->code;
    }
    if (complete(n->directory) && exists(n->previous))
        return remove_checkpoint(n->previous, err);
    return TF_OK;
}

/* 1 if `directory` does not exist, is empty, or holds a twofold checkpoint (the marker file):
 * the only directories a save may replace. */
static int replaceable(const char *directory)
{
    DIR *listing = opendir(directory);
    if (!listing)
        return 1;
    int entries = 0, checkpoint = 0;
    for (struct dirent *entry; (entry = readdir(listing));) {
        entries += strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0;
        checkpoint |= strcmp(entry->d_name, CHECKPOINT_MARKER) == 0;
    }
    closedir(listing);
    return entries == 0 || checkpoint;
}

/* The directory holding n->directory: "." for "x", "/" for "/x". */
static void parent_of(const names *n, char parent[sizeof n->directory])
{
    memcpy(parent, n->directory, sizeof n->directory);
    char *slash = strrchr(parent, '/');
    if (!slash)
        strcpy(parent, ".");
    else
        slash[slash == parent] = '\0';
}

/* A target a save cannot replace by name: a path ending in "." or ".." (renaming "e3/." fails,
 * and only after training), or a symbolic link (a save would replace the link by a directory and
 * empty the link's target). The message names the real directory to give instead. */
static int unsafe_name(const names *n, const char *directory, tf_error *err)
{
    const char *slash = strrchr(n->directory, '/'), *last = slash ? slash + 1 : n->directory;
    char real[PATH_MAX + 8] = "", hint[PATH_MAX + 40] = "";
    if (realpath(n->directory, real))
        snprintf(hint, sizeof hint, " (here %s)", real);
    if (strcmp(last, ".") == 0 || strcmp(last, "..") == 0)
        return tf_error_set(err, TF_ERR_INPUT, "--save %s: a path ending in \"%s\" cannot be replaced by a "
                            "checkpoint; name the directory itself%s", directory, last, hint);
    struct stat info;
    if (lstat(n->directory, &info) == 0 && S_ISLNK(info.st_mode))
        return tf_error_set(err, TF_ERR_INPUT, "--save %s: is a symbolic link, which a save would replace; give "
                            "the real directory%s", directory, hint);
    return TF_OK;
}

/* 1 if `directory` is absent or a directory holding only files a checkpoint writes: what a save
 * may remove as DIR.partial or DIR.previous (remove_checkpoint() fails on anything else). */
static int removable(const char *directory)
{
    struct stat info;
    if (lstat(directory, &info) != 0)
        return 1;
    DIR *listing = S_ISDIR(info.st_mode) ? opendir(directory) : NULL;
    if (!listing)
        return 0;
    int only_checkpoint = 1;
    for (struct dirent *entry; (entry = readdir(listing));)
        only_checkpoint &= strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0 ||
                           checkpoint_file(entry->d_name);
    closedir(listing);
    return only_checkpoint;
}

int checkpoint_check_target(const char *directory, tf_error *err)
{
    names n;
    if (make_names(directory, &n, "--save", err) != TF_OK)
        return TF_ERR_INPUT;
    if (unsafe_name(&n, directory, err) != TF_OK)
        return TF_ERR_INPUT;
    char parent[sizeof n.directory];
    parent_of(&n, parent);
    char name[sizeof n.directory + 8];
    snprintf(name, sizeof name, "--save %s", directory);
    if (directory_check(name, parent, err) != TF_OK)
        return TF_ERR_INPUT;
    if (access(parent, R_OK | W_OK | X_OK) != 0) /* R too: the save opens it to lock it (checkpoint_save()) */
        return tf_error_set(err, TF_ERR_INPUT, "--save %s: cannot read and write in %s: %s", directory, parent,
                            strerror(errno));
    if (exists(n.directory) && !is_directory(n.directory))
        return tf_error_set(err, TF_ERR_INPUT, "--save %s: exists and is not a directory; choose another name",
                            directory);
    if (!replaceable(n.directory))
        return tf_error_set(err, TF_ERR_INPUT, "--save %s: exists and is not a twofold checkpoint; choose another "
                            "directory", directory);
    /* The save owns DIR.partial and DIR.previous and removes them; a user's file there would make
     * it fail only after training. */
    const char *owned[2] = {n.partial, n.previous};
    for (int i = 0; i < 2; i++)
        if (!removable(owned[i]))
            return tf_error_set(err, TF_ERR_INPUT, "--save %s: %s is not a checkpoint's leftover (it is a file or "
                                "holds other files); a save owns that name and removes it: move it away",
                                directory, owned[i]);
    return TF_OK;
}

int checkpoint_locate(const char *directory, char *found, tf_error *err)
{
    names n;
    if (make_names(directory, &n, "--load", err) != TF_OK)
        return TF_ERR_INPUT;
    const char *use = complete(n.partial)    ? n.partial
                      : complete(n.directory) ? n.directory
                      : complete(n.previous)  ? n.previous
                      : is_directory(n.directory) ? n.directory : NULL;
    if (!use)
        return tf_error_set(err, TF_ERR_INPUT, "%s: no such checkpoint directory%s", directory,
                            exists(n.partial) ? " (only an incomplete save in .partial)" : "");
    strcpy(found, use);
    return TF_OK;
}

int checkpoint_interrupted(const char *directory, char *located)
{
    names n;
    return make_names(directory, &n, "--load", NULL) == TF_OK && checkpoint_locate(directory, located, NULL) == TF_OK &&
           strcmp(located, n.directory) != 0;
}

/* ---- saving ----------------------------------------------------------------------------------- */

static int write_tensor(const char *directory, const char *prefix, const char *name, const tensor *t, tf_error *err)
{
    char path[4096];
    if (format_path(path, sizeof path, err, "%s/%s%s.npy", directory, prefix, name) != TF_OK)
        return TF_ERR_INPUT;
    fault_point("writing", path);
    return npy_write_tensor(path, t, err);
}

/* The save proper, under the lock checkpoint_save() holds. */
static int save_locked(const names *n, const char *directory, const parameter_list *parameters,
                       const adam *optimizer, const int64_t *state, int64_t state_count, tf_error *err)
{
    if (exists(n->directory) && (!is_directory(n->directory) || !replaceable(n->directory)))
        return tf_error_set(err, TF_ERR_INPUT, "%s: exists and is not a twofold checkpoint; choose another directory",
                            directory);
    if (recover(n, err) != TF_OK)
        return err->code;
    if (mkdir(n->partial, 0755) != 0)
        return tf_error_set(err, TF_ERR_INPUT, "%s: cannot create: %s", n->partial, strerror(errno));
    fault_point("created", n->partial);
    int status = TF_OK;
    for (int64_t i = 0; status == TF_OK && i < parameters->count; i++)
        status = write_tensor(n->partial, "", parameters->items[i].name, &parameters->items[i].value, err);
    for (int64_t i = 0; status == TF_OK && i < optimizer->moments.count; i++) {
        const parameter *p = &optimizer->moments.items[i];
        status = write_tensor(n->partial, "adam.exp_avg.", p->name, &p->value, err);
        if (status == TF_OK)
            status = write_tensor(n->partial, "adam.exp_avg_sq.", p->name, &p->grad, err);
    }
    /* The marker last: from here on .partial is a complete checkpoint, the newest one. */
    char marker[4200];
    snprintf(marker, sizeof marker, "%s/" CHECKPOINT_MARKER, n->partial);
    int64_t shape[1] = {state_count};
    if (status == TF_OK) {
        fault_point("writing", marker);
        status = npy_write(marker, NPY_INT64, 1, shape, state, err);
    }
    if (status != TF_OK) {
        remove_checkpoint(n->partial, NULL);
        return TF_ERR_SYSTEM;
    }
    fault_point("written", marker);
    /* Swap in the new checkpoint; the old one is removed only afterwards. */
    if (exists(n->directory) && move(n->directory, n->previous, err) != TF_OK)
        return err->code;
    if (move(n->partial, n->directory, err) != TF_OK)
        return err->code;
    if (exists(n->previous))
        remove_checkpoint(n->previous, NULL); /* a leftover only costs space; the next save retries */
    if (fault_at < 0) /* TWOFOLD_SAVE_FAULT_STEP=-1: how many steps a test has to try */
        fprintf(stderr, "%s: this save took %lld steps\n", CHECKPOINT_FAULT_VARIABLE, (long long)fault_count);
    return TF_OK;
}

int checkpoint_save(const char *directory, const parameter_list *parameters, const adam *optimizer,
                    const int64_t *state, int64_t state_count, tf_error *err)
{
    names n;
    if (make_names(directory, &n, "--save", err) != TF_OK || unsafe_name(&n, directory, err) != TF_OK)
        return TF_ERR_INPUT;
    fault_start();
    /* One save at a time per directory: two at once would each recover (remove) the other's
     * DIR.partial and swap directories under each other, leaving a marker without its files. An
     * exclusive flock on the parent directory, held through recovery, writing and the renames,
     * makes a second save wait for the first and then replace its checkpoint (the last one wins).
     * The kernel drops the lock when the descriptor closes, also when the process is killed. */
    char parent[sizeof n.directory];
    parent_of(&n, parent);
    int lock = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (lock < 0)
        return tf_error_set(err, TF_ERR_SYSTEM, "%s: cannot open %s to lock it: %s", directory, parent,
                            strerror(errno));
    int status;
    while ((status = flock(lock, LOCK_EX)) != 0 && errno == EINTR)
        ;
    if (status != 0)
        status = tf_error_set(err, TF_ERR_SYSTEM, "%s: cannot lock %s: %s", directory, parent, strerror(errno));
    else
        status = save_locked(&n, directory, parameters, optimizer, state, state_count, err);
    close(lock); /* releases the lock */
    return status;
}

/* ---- loading ---------------------------------------------------------------------------------- */

/* "tgcn" or "jodie" for a header's family and kind. */
static const char *model_name(int64_t family, int64_t kind)
{
    if (family == CHECKPOINT_SNAPSHOT_MODEL)
        return model_kind_name((model_kind)kind);
    if (family == CHECKPOINT_EVENT_MODEL)
        return event_model_kind_name((event_model_kind)kind);
    return "unknown";
}

/* checkpoint_load()'s first half: locate the checkpoint and check its marker's header (the trainer's
 * own values are compare_values()'s); a directory without a marker opens with *found = 0. */
static int open_marker(const char *directory, const int64_t *expected, int64_t *state, int64_t state_count, int *found,
                    char *located, char *marker, tf_error *err)
{
    *found = 0;
    if (checkpoint_locate(directory, located, err) != TF_OK ||
        format_path(marker, 4096, err, "%s/" CHECKPOINT_MARKER, located) != TF_OK)
        return TF_ERR_INPUT;
    if (!exists(marker))
        return TF_OK; /* parameters only */
    npy_array saved;
    if (npy_read(marker, &saved, err) != TF_OK)
        return TF_ERR_INPUT;
    const int64_t *s = saved.data;
    int status = TF_OK;
    if (saved.dtype != NPY_INT64 || saved.ndim != 1 || saved.size < 3)
        status = tf_error_set(err, TF_ERR_INPUT, "%s: damaged: expected int64 [%lld]", marker,
                              (long long)state_count);
    else if (s[CHECKPOINT_FIELD_FORMAT] != CHECKPOINT_FORMAT)
        status = tf_error_set(err, TF_ERR_INPUT, "%s: checkpoint format %lld; this twofold reads format %d only "
                              "(earlier checkpoints cannot be resumed: train again)",
                              marker, (long long)s[CHECKPOINT_FIELD_FORMAT], CHECKPOINT_FORMAT);
    else if (s[CHECKPOINT_FIELD_FAMILY] != expected[CHECKPOINT_FIELD_FAMILY] ||
             s[CHECKPOINT_FIELD_KIND] != expected[CHECKPOINT_FIELD_KIND])
        status = tf_error_set(err, TF_ERR_INPUT, "%s: a checkpoint of model %s; this run trains %s", marker,
                              model_name(s[CHECKPOINT_FIELD_FAMILY], s[CHECKPOINT_FIELD_KIND]),
                              model_name(expected[CHECKPOINT_FIELD_FAMILY], expected[CHECKPOINT_FIELD_KIND]));
    else if (saved.size > CHECKPOINT_FIELD_TASK && s[CHECKPOINT_FIELD_TASK] != expected[CHECKPOINT_FIELD_TASK])
        /* the head and the loss mean something else under another task */
        status = tf_error_set(err, TF_ERR_INPUT, "%s: a checkpoint of the %s task; this run trains the %s task", marker,
                              train_task_name(s[CHECKPOINT_FIELD_TASK]), train_task_name(expected[CHECKPOINT_FIELD_TASK]));
    else if (saved.size != state_count)
        status = tf_error_set(err, TF_ERR_INPUT, "%s: damaged: %lld values, expected %lld", marker,
                              (long long)saved.size, (long long)state_count);
    else if (s[CHECKPOINT_FIELD_EPOCH] < 0 || s[CHECKPOINT_FIELD_STEP] < s[CHECKPOINT_FIELD_EPOCH])
        /* every epoch takes at least one Adam step; a negative step would blow up its bias correction */
        status = tf_error_set(err, TF_ERR_INPUT, "%s: damaged: epoch %lld, Adam step %lld (expected 0 <= epoch <= "
                              "step)", marker, (long long)s[CHECKPOINT_FIELD_EPOCH],
                              (long long)s[CHECKPOINT_FIELD_STEP]);
    else if (s[CHECKPOINT_FIELD_DATA] != expected[CHECKPOINT_FIELD_DATA])
        status = tf_error_set(err, TF_ERR_INPUT, "%s: saved from other data (digest %016llx; this run's data has "
                              "%016llx): resume on the data it was trained on",
                              marker, (unsigned long long)s[CHECKPOINT_FIELD_DATA],
                              (unsigned long long)expected[CHECKPOINT_FIELD_DATA]);
    else
        memcpy(state, s, (size_t)state_count * sizeof *state);
    npy_free(&saved);
    *found = status == TF_OK;
    return status;
}

/* Names only the trainer's values that differ: "MARKER: saved with A 1, B 2; this run has A 3, B 4". */
static int compare_values(const char *marker, const int64_t *saved, const int64_t *expected, int first,
                       const char *const *labels, int count, tf_error *err)
{
    char was[512] = "", is[512] = "";
    size_t at_was = 0, at_is = 0;
    for (int i = first; i < first + count; i++)
        if (saved[i] != expected[i] && at_was < sizeof was && at_is < sizeof is) {
            const char *label = labels[i - first], *comma = at_was ? ", " : "";
            at_was += (size_t)snprintf(was + at_was, sizeof was - at_was, "%s%s %lld", comma, label,
                                       (long long)saved[i]);
            at_is += (size_t)snprintf(is + at_is, sizeof is - at_is, "%s%s %lld", comma, label, (long long)expected[i]);
        }
    if (!at_was)
        return TF_OK;
    return tf_error_set(err, TF_ERR_INPUT, "%s: saved with %s; this run has %s", marker, was, is);
}

static int load_moment(tensor *target, const char *directory, const char *kind, const char *name, tf_error *err)
{
    char path[4096];
    if (format_path(path, sizeof path, err, "%s/adam.%s.%s.npy", directory, kind, name) != TF_OK)
        return TF_ERR_INPUT;
    tensor loaded;
    if (npy_read_tensor(path, &loaded, err) != TF_OK) /* refuses NaN and infinities */
        return TF_ERR_INPUT;
    int status = TF_OK;
    if (!tensor_same_shape(&loaded, target))
        status = tf_error_set(err, TF_ERR_INPUT, "%s: shape differs from the parameter %s", path, name);
    for (int64_t i = 0; status == TF_OK && strcmp(kind, "exp_avg_sq") == 0 && i < loaded.size; i++)
        if (loaded.data[i] < 0) /* a mean of squares: a negative one would make Adam's sqrt NaN */
            status = tf_error_set(err, TF_ERR_INPUT, "%s: element %lld is negative (%g); a second moment is >= 0",
                                  path, (long long)i, loaded.data[i]);
    if (status == TF_OK)
        memcpy(target->data, loaded.data, (size_t)loaded.size * sizeof(float));
    tensor_free(&loaded);
    return status;
}

/* Adam's two moments of every parameter, written by checkpoint_save(). */
static int load_moments(adam *optimizer, const char *located, tf_error *err)
{
    for (int64_t i = 0; i < optimizer->moments.count; i++) {
        parameter *p = &optimizer->moments.items[i];
        if (load_moment(&p->value, located, "exp_avg", p->name, err) != TF_OK ||
            load_moment(&p->grad, located, "exp_avg_sq", p->name, err) != TF_OK)
            return TF_ERR_INPUT;
    }
    return TF_OK;
}

int checkpoint_load(const char *directory, const int64_t *expected, int64_t *state, int64_t state_count, int first,
                    const char *const *labels, parameter_list *parameters, adam *optimizer, int *found,
                    tf_error *err)
{
    char located[4096], marker[4096];
    if (open_marker(directory, expected, state, state_count, found, located, marker, err) != TF_OK)
        return TF_ERR_INPUT;
    if (*found && compare_values(marker, state, expected, first, labels, (int)(state_count - first), err) != TF_OK)
        return TF_ERR_INPUT;
    if (parameters_load(parameters, located, err) != TF_OK)
        return TF_ERR_INPUT;
    if (*found && load_moments(optimizer, located, err) != TF_OK)
        return TF_ERR_INPUT;
    return TF_OK;
}

int checkpoint_resume(const char *directory, const int64_t *expected, int64_t *state, int64_t state_count, int first,
                      const char *const *labels, parameter_list *parameters, adam *optimizer, int64_t *epoch,
                      int *found, tf_error *err)
{
    if (checkpoint_load(directory, expected, state, state_count, first, labels, parameters, optimizer, found, err) !=
        TF_OK)
        return TF_ERR_INPUT;
    if (*found) {
        *epoch = state[CHECKPOINT_FIELD_EPOCH];
        optimizer->step = state[CHECKPOINT_FIELD_STEP];
    }
    return TF_OK;
}
