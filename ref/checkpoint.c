#include "ref/checkpoint.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ref/io.h"
#include "ref/npy.h"

static int save_moments(const adam *optimizer, const char *directory, tf_error *err)
{
    for (int64_t i = 0; i < optimizer->moments.count; i++) {
        const parameter *p = &optimizer->moments.items[i];
        char path[4096];
        if (format_path(path, sizeof path, err, "%s/adam.exp_avg.%s.npy", directory, p->name) != TF_OK ||
            npy_write_tensor(path, &p->value, err) != TF_OK ||
            format_path(path, sizeof path, err, "%s/adam.exp_avg_sq.%s.npy", directory, p->name) != TF_OK ||
            npy_write_tensor(path, &p->grad, err) != TF_OK)
            return err->code;
    }
    return TF_OK;
}

static int load_moment(tensor *target, const char *directory, const char *kind, const char *name, tf_error *err)
{
    char path[4096];
    if (format_path(path, sizeof path, err, "%s/adam.%s.%s.npy", directory, kind, name) != TF_OK)
        return TF_ERR_INPUT;
    tensor loaded;
    if (npy_read_tensor(path, &loaded, err) != TF_OK)
        return TF_ERR_INPUT;
    int status = TF_OK;
    if (!tensor_same_shape(&loaded, target))
        status = tf_error_set(err, TF_ERR_INPUT, "%s: shape differs from the parameter %s", path, name);
    else
        memcpy(target->data, loaded.data, (size_t)loaded.size * sizeof(float));
    tensor_free(&loaded);
    return status;
}

int checkpoint_load_moments(adam *optimizer, const char *directory, tf_error *err)
{
    for (int64_t i = 0; i < optimizer->moments.count; i++) {
        parameter *p = &optimizer->moments.items[i];
        if (load_moment(&p->value, directory, "exp_avg", p->name, err) != TF_OK ||
            load_moment(&p->grad, directory, "exp_avg_sq", p->name, err) != TF_OK)
            return TF_ERR_INPUT;
    }
    return TF_OK;
}

/* Removes a checkpoint directory: its .npy files (all a checkpoint holds), then the directory
 * itself, which fails harmlessly if anything else was put there. */
static void remove_checkpoint(const char *directory)
{
    DIR *listing = opendir(directory);
    if (!listing)
        return;
    char path[4096];
    for (struct dirent *entry; (entry = readdir(listing));) {
        size_t length = strlen(entry->d_name);
        if (length > 4 && strcmp(entry->d_name + length - 4, ".npy") == 0 &&
            format_path(path, sizeof path, NULL, "%s/%s", directory, entry->d_name) == TF_OK)
            unlink(path);
    }
    closedir(listing);
    rmdir(directory);
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

int checkpoint_save(const char *directory, const parameter_list *parameters, const adam *optimizer,
                    const int64_t *state, int64_t state_count, tf_error *err)
{
    char partial[4096], previous[4096], marker[4096];
    if (format_path(partial, sizeof partial, err, "%s.partial", directory) != TF_OK ||
        format_path(previous, sizeof previous, err, "%s.previous", directory) != TF_OK ||
        format_path(marker, sizeof marker, err, "%s.partial/" CHECKPOINT_MARKER, directory) != TF_OK)
        return TF_ERR_INPUT;
    struct stat info;
    if (stat(directory, &info) == 0 && (!S_ISDIR(info.st_mode) || !replaceable(directory)))
        return tf_error_set(err, TF_ERR_INPUT, "%s: exists and is not a twofold checkpoint; choose another directory",
                            directory);
    remove_checkpoint(partial);  /* leftovers of an interrupted save */
    remove_checkpoint(previous);
    if (mkdir(partial, 0755) != 0)
        return tf_error_set(err, TF_ERR_INPUT, "%s: cannot create: %s", partial, strerror(errno));
    int64_t shape[1] = {state_count};
    if (parameters_save(parameters, partial, err) != TF_OK || save_moments(optimizer, partial, err) != TF_OK ||
        npy_write(marker, NPY_INT64, 1, shape, state, err) != TF_OK) {
        remove_checkpoint(partial);
        return TF_ERR_SYSTEM;
    }
    /* Swap in the complete new checkpoint; the old one is removed only afterwards. */
    int had_previous = stat(directory, &info) == 0;
    if (had_previous && rename(directory, previous) != 0)
        return tf_error_set(err, TF_ERR_SYSTEM, "%s: cannot move aside: %s", directory, strerror(errno));
    if (rename(partial, directory) != 0)
        return tf_error_set(err, TF_ERR_SYSTEM, "%s: cannot rename to %s: %s", partial, directory, strerror(errno));
    if (had_previous)
        remove_checkpoint(previous);
    return TF_OK;
}

int checkpoint_load(const char *directory, parameter_list *parameters, int64_t *state, int64_t state_count,
                    int *found, char *marker, tf_error *err)
{
    *found = 0;
    struct stat info;
    if (stat(directory, &info) != 0 || !S_ISDIR(info.st_mode))
        return tf_error_set(err, TF_ERR_INPUT, "%s: no such checkpoint directory", directory);
    if (parameters_load(parameters, directory, err) != TF_OK ||
        format_path(marker, 4096, err, "%s/" CHECKPOINT_MARKER, directory) != TF_OK)
        return TF_ERR_INPUT;
    if (stat(marker, &info) != 0)
        return TF_OK; /* parameters only */
    npy_array saved;
    if (npy_read(marker, &saved, err) != TF_OK)
        return TF_ERR_INPUT;
    int status = TF_OK;
    if (saved.dtype != NPY_INT64 || saved.size != state_count)
        status = tf_error_set(err, TF_ERR_INPUT,
                              "%s: not a twofold checkpoint for this kind of model (%lld values, expected %lld int64)",
                              marker, (long long)saved.size, (long long)state_count);
    else
        memcpy(state, saved.data, (size_t)state_count * sizeof *state);
    npy_free(&saved);
    *found = status == TF_OK;
    return status;
}
