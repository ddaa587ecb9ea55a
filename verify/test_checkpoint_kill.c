/* A kill at any instant of a checkpoint save leaves a checkpoint that loads, and training resumed
 * from it ends bit for bit where an uninterrupted run ends (verify/ERRORS.md, Checkpoints), for a
 * snapshot model (T-GCN) and an event model (JODIE) on small data.
 *
 * A forked child trains and saves with TWOFOLD_SAVE_FAULT_STEP=k (ref/models/checkpoint.h), which kills
 * it with SIGKILL at the save's k-th step; k runs over every step (the loop ends at the first k
 * that the save finishes before reaching). After each kill the parent loads the directory, trains
 * to the last epoch and compares every parameter and Adam moment with the uninterrupted run's,
 * then saves over the directory again (a leftover NAME.npy.tmpXXXXXX once made that fail). Where
 * the killed state needs recovery, the next save's recovery is killed at each of its steps too,
 * each on a copy of that state. */
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "datasets/dataset.h"
#include "datasets/generate.h"
#include "ref/models/checkpoint.h"
#include "ref/train.h"
#include "ref/train_events.h"
#include "verify/testing.h"

enum { LAST_EPOCH = 3 };

/* One training run of either trainer. */
typedef struct run {
    int events; /* 1: JODIE on `stream`, 0: T-GCN on `snapshots` */
    trainer snapshot;
    event_trainer event;
} run;

static dataset snapshots;
static event_stream stream;

static void run_create(run *r, int events)
{
    memset(r, 0, sizeof *r);
    r->events = events;
    tf_error err;
    if (events) {
        event_model_config config = event_model_config_with(EVENT_MODEL_JODIE, 4, 4, 4, 0);
        event_train_options o;
        event_train_options_default(&o);
        o.batch_size = 50;
        ck_assert_msg(event_trainer_create(&r->event, &stream, NULL, &config, &o, &err) == TF_OK, "%s", err.message);
    } else {
        model_config config = {MODEL_TGCN, 0, 4, 0, 2, 0};
        train_options o = train_options_windows(4, 0, 1, 0.1);
        ck_assert_msg(trainer_create(&r->snapshot, &snapshots.snapshots, &config, &o, &err) == TF_OK, "%s",
                      err.message);
    }
}

static void run_free(run *r)
{
    r->events ? event_trainer_free(&r->event) : trainer_free(&r->snapshot);
}

static int64_t run_epoch(const run *r)
{
    return r->events ? r->event.epoch : r->snapshot.epoch;
}

static void run_to(run *r, int64_t epoch)
{
    tf_error err;
    while (run_epoch(r) < epoch) {
        event_epoch_report events;
        epoch_report report;
        int status = r->events ? event_trainer_epoch(&r->event, &events, NULL, NULL, &err)
                               : trainer_epoch(&r->snapshot, &snapshots.snapshots, &report, &err);
        ck_assert_msg(status == TF_OK, "%s", err.message);
    }
}

static int run_save(const run *r, const char *directory, tf_error *err)
{
    return r->events ? event_trainer_save(&r->event, directory, err) : trainer_save(&r->snapshot, directory, err);
}

static int run_load(run *r, const char *directory, tf_error *err)
{
    return r->events ? event_trainer_load(&r->event, directory, err) : trainer_load(&r->snapshot, directory, err);
}

static int64_t run_differs(const run *a, const run *b)
{
    return a->events ? differing_training_state(&a->event.model.parameters, &a->event.optimizer,
                                                &b->event.model.parameters, &b->event.optimizer)
                     : differing_training_state(&a->snapshot.model.parameters, &a->snapshot.optimizer,
                                                &b->snapshot.model.parameters, &b->snapshot.optimizer);
}

static int exists(const char *path, const char *suffix)
{
    char name[512];
    struct stat info;
    snprintf(name, sizeof name, "%s%s", path, suffix);
    return stat(name, &info) == 0;
}

/* A directory that exists and holds nothing: what a save's first step leaves after any recovery. */
static int empty_directory(const char *path)
{
    DIR *listing = opendir(path);
    if (!listing)
        return 0;
    int entries = 0;
    for (struct dirent *entry; (entry = readdir(listing));)
        entries += strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0;
    closedir(listing);
    return entries == 0;
}

static void shell(const char *command)
{
    ck_assert_msg(system(command) == 0, "%s", command);
}

/* DIRECTORY and its .partial and .previous, removed or copied as a whole. */
static void remove_all(const char *directory)
{
    char command[1200];
    snprintf(command, sizeof command, "rm -rf '%s' '%s.partial' '%s.previous'", directory, directory, directory);
    shell(command);
}

static void copy_all(const char *from, const char *to)
{
    char command[1200];
    remove_all(to);
    snprintf(command, sizeof command, "for s in '' .partial .previous; do [ ! -e '%s'$s ] || cp -r '%s'$s '%s'$s; done",
             from, from, to);
    shell(command);
}

/* A child process that starts from `load` (or from scratch when NULL), trains to `epoch` and
 * saves to `directory` with the fault at `step`. Returns 1 if the fault killed it, 0 if the save
 * finished first. */
static int killed_save(int events, const char *load, int64_t epoch, const char *directory, int64_t step)
{
    fflush(stdout);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        char value[32];
        snprintf(value, sizeof value, "%lld", (long long)step);
        setenv(CHECKPOINT_FAULT_VARIABLE, value, 1);
        run r;
        run_create(&r, events);
        tf_error err;
        if (load && run_load(&r, load, &err) != TF_OK) {
            fprintf(stderr, "%s\n", err.message);
            _exit(1);
        }
        run_to(&r, epoch);
        int status = run_save(&r, directory, &err);
        if (status != TF_OK)
            fprintf(stderr, "%s\n", err.message);
        _exit(status == TF_OK ? 0 : 1);
    }
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "save at step %lld ended with status %d",
                  (long long)step, status);
    return 1;
}

/* Load `directory`, train to the last epoch, compare with the uninterrupted run; returns the
 * epoch loaded. With `save_again`, then save over the directory and check nothing is left beside it. */
static int64_t resume(int events, const char *directory, const run *straight, int save_again)
{
    run r;
    run_create(&r, events);
    tf_error err;
    ck_assert_msg(run_load(&r, directory, &err) == TF_OK, "%s", err.message);
    int64_t loaded = run_epoch(&r);
    run_to(&r, LAST_EPOCH);
    ck_assert_msg(run_differs(&r, straight) == 0, "%s: resumed after epoch %lld, differs", directory,
                  (long long)loaded);
    if (save_again) {
        ck_assert_msg(run_save(&r, directory, &err) == TF_OK, "%s", err.message);
        ck_assert(!exists(directory, ".partial") && !exists(directory, ".previous"));
    }
    run_free(&r);
    return loaded;
}

/* Where the checkpoints go: /dev/shm where there is one. Every file a save writes is fsync'ed,
 * and on a disk the test's thousands of saves would wait minutes for them; a killed process is
 * not a power failure, so memory-backed files show the same thing. */
static const char *work_directory(void)
{
    static char directory[64];
    if (!directory[0]) {
        snprintf(directory, sizeof directory, "/dev/shm/twofold-kill-XXXXXX");
        if (!mkdtemp(directory))
            snprintf(directory, sizeof directory, "%s", temporary_directory());
    }
    return directory;
}

static void kill_every_step(int events)
{
    const char *name = events ? "jodie" : "tgcn";
    char base[256], directory[256], nested[256], nested_partial[300];
    snprintf(base, sizeof base, "%s/%s_epoch1", work_directory(), name);
    snprintf(directory, sizeof directory, "%s/%s_killed", work_directory(), name);
    snprintf(nested, sizeof nested, "%s/%s_recovery", work_directory(), name);
    snprintf(nested_partial, sizeof nested_partial, "%s.partial", nested);
    run straight, first;
    run_create(&straight, events);
    run_to(&straight, LAST_EPOCH);
    run_create(&first, events);
    run_to(&first, 1);
    tf_error err;
    remove_all(base);
    ck_assert_msg(run_save(&first, base, &err) == TF_OK, "%s", err.message);
    run_free(&first);

    /* 1. A save to epoch 2 over the checkpoint of epoch 1, killed at step k. */
    int64_t steps = 0, recoveries = 0, loaded[LAST_EPOCH] = {0};
    for (int64_t k = 1;; k++) {
        copy_all(base, directory);
        if (!killed_save(events, base, 2, directory, k))
            break;
        steps = k;
        if (exists(directory, ".partial") || exists(directory, ".previous") || !exists(directory, "/trainer.npy"))
            for (int64_t j = 1;; j++) { /* the next save's recovery, killed at its j-th step */
                copy_all(directory, nested);
                int killed = killed_save(events, directory, 2, nested, j);
                if (!killed || empty_directory(nested_partial)) /* the kill came after the recovery */
                    break;
                resume(events, nested, &straight, 1);
                recoveries++;
            }
        loaded[resume(events, directory, &straight, 1)]++;
    }
    printf("%s: a save over a checkpoint killed at each of its %lld steps (and its recovery at each of %lld steps "
           "where it needed one): --load found epoch 1 %lld times, epoch 2 %lld times; every resumed run equal to the "
           "uninterrupted one bit for bit\n",
           name, (long long)steps, (long long)recoveries, (long long)loaded[1], (long long)loaded[2]);
    ck_assert_int_ge(steps, 8);
    ck_assert_int_ge(recoveries, 4);

    /* 2. A first save (no checkpoint before it) killed at step k: a later save must succeed, and
     *    what it loads (nothing, or the complete .partial) must resume exactly. */
    int64_t first_steps = 0, found = 0;
    for (int64_t k = 1;; k++) {
        remove_all(directory);
        if (!killed_save(events, NULL, 1, directory, k))
            break;
        first_steps = k;
        char located[4096];
        if (checkpoint_locate(directory, located, &err) == TF_OK) {
            resume(events, directory, &straight, 0);
            found++;
        }
        run r;
        run_create(&r, events);
        run_to(&r, LAST_EPOCH);
        ck_assert_msg(run_save(&r, directory, &err) == TF_OK, "first save killed at step %lld, then: %s",
                      (long long)k, err.message);
        run_free(&r);
        ck_assert_int_eq(resume(events, directory, &straight, 0), LAST_EPOCH);
    }
    printf("%s: a first save killed at each of its %lld steps: a later save succeeded every time; %lld kills left a "
           "complete checkpoint (after its marker), which resumed exactly\n",
           name, (long long)first_steps, (long long)found);
    run_free(&straight);
}

START_TEST(tgcn_killed_at_every_step)
{
    kill_every_step(0);
}
END_TEST

START_TEST(jodie_killed_at_every_step)
{
    kill_every_step(1);
}
END_TEST

int main(void)
{
    tf_error err;
    if (dataset_load("chickenpox", NULL, &snapshots, &err) != TF_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    event_params p;
    event_params_default(&p);
    p.num_nodes = 20;
    p.num_events = 100;
    if (generate_events(&p, &stream, &err) != TF_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    Suite *suite = suite_create("checkpoint_kill");
    TCase *cases = tcase_create("checkpoint_kill");
    tcase_set_timeout(cases, 300);
    tcase_add_test(cases, tgcn_killed_at_every_step);
    tcase_add_test(cases, jodie_killed_at_every_step);
    suite_add_tcase(suite, cases);
    int status = run_suite(suite);
    char command[200];
    snprintf(command, sizeof command, "rm -rf '%s'", work_directory());
    if (strncmp(work_directory(), "/dev/shm/", 9) == 0 && system(command) != 0)
        status = 1;
    dataset_free(&snapshots);
    event_stream_free(&stream);
    return status;
}
