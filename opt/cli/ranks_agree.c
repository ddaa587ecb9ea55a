/* Ranks that agree before they train: one all-gather of each rank's command line, a digest of
 * the data it loaded and its error so far, so that a difference between the ranks becomes one
 * line naming the option instead of a silently different result, Open MPI's noise, an MPI error
 * or a hang (verify/ERRORS.md, "Ranks that disagree"). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/dataset.h"
#include "ref/models/checkpoint.h"
#include "ref/core/memory.h"
#include "opt/cli/commands.h"

int ranks_launched(void)
{
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized) {
        int size = 1;
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        return size;
    }
    /* Before MPI_Init, the launcher's environment says how many copies it started: Open MPI's
     * mpiexec sets OMPI_COMM_WORLD_SIZE, MPICH's Hydra (and Slurm's PMI) PMI_SIZE. */
    const char *names[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const char *value = getenv(names[i]);
        if (value && atoi(value) > 1)
            return atoi(value);
    }
    return 1;
}

uint64_t dataset_digest(const dataset *d)
{
    /* The checkpoint's digest of the same data: one definition of "the same data" for both. */
    if (d->kind == DATASET_SNAPSHOTS)
        return checkpoint_snapshot_digest(&d->snapshots);
    return checkpoint_event_digest(&d->events, d->events.features, d->events.feature_width);
}

/* One rank's record as gathered: a fixed header, then its error message and its arguments, each
 * NUL-terminated. */
typedef struct record_header {
    int32_t code;    /* its error so far (TF_OK: none) */
    int32_t argc;    /* arguments after the record's message */
    uint64_t digest; /* dataset_digest() of what it loaded (0: nothing loaded) */
    uint64_t memory_limit; /* --memory-limit, given before the command (0: none) */
} record_header;

/* A rank's view of a gathered record: where its message, command and arguments start. */
typedef struct record {
    record_header header;
    const char *message;
    const char *command; /* the subcommand ("" before ranks_agree_on_command()) */
    const char **argv;   /* [header.argc] */
} record;

/* The subcommand this process runs, as ranks_agree_on_command() was given it; every record carries
 * it, so that ranks running different commands never agree. */
static const char *this_command = "";

/* The value the last "--name VALUE" or "--name=VALUE" of @p argv gives option @p name (length
 * @p length): its value, "" for a flag without one, NULL when the option is absent. A value is the
 * next argument unless that starts with "--" (flags such as --blocks take none). */
static const char *option_value(int argc, const char **argv, const char *name, size_t length)
{
    const char *found = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, name, length) != 0 || (a[length] != '\0' && a[length] != '='))
            continue;
        if (a[length] == '=')
            found = a + length + 1;
        else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0)
            found = argv[++i];
        else
            found = "";
    }
    return found;
}

/* The length of the option name that argument @p a starts ("--lr" of "--lr=0.1"); 0 when it is a
 * value or a stray word. */
static size_t option_length(const char *a)
{
    if (strncmp(a, "--", 2) != 0)
        return 0;
    const char *equals = strchr(a, '=');
    return equals ? (size_t)(equals - a) : strlen(a);
}

/* How option @p name's value reads in the message: the value, the name for a flag given, "no
 * NAME" when absent. */
static const char *shown(const char *name, const char *value, char *text, size_t size)
{
    if (value && *value)
        return value;
    snprintf(text, size, "%s%s", value ? "" : "no ", name);
    return text;
}

/* The first option of @p a's arguments whose value differs in @p b's: set @p err and return 1. */
static int first_difference(const record *a, int rank_a, const record *b, int rank_b, tf_error *err)
{
    for (int i = 0; i < a->header.argc; i++) {
        const size_t length = option_length(a->argv[i]);
        if (length == 0)
            continue;
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(length < sizeof name ? length : sizeof name - 1), a->argv[i]);
        const char *mine = option_value(a->header.argc, a->argv, a->argv[i], length);
        const char *theirs = option_value(b->header.argc, b->argv, a->argv[i], length);
        if (theirs && strcmp(mine, theirs) == 0)
            continue;
        char text_a[160], text_b[160];
        tf_error_set(err, TF_ERR_INPUT, "ranks disagree on %s: rank %d has %s, rank %d has %s (every rank must "
                                        "be given the same options)",
                     name, rank_a, shown(name, mine, text_a, sizeof text_a), rank_b,
                     shown(name, theirs, text_b, sizeof text_b));
        return 1;
    }
    return 0;
}

static int compare_words(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The words of @p r's arguments that are no option and no option's value (the techniques of verify
 * and demo, info's dataset), sorted, each once, into @p words [r->header.argc]; their count. A
 * word after an option without '=' is taken as its value, as option_value() takes it. */
static int words_of(const record *r, const char **words)
{
    int count = 0;
    for (int i = 0; i < r->header.argc; i++) {
        const char *a = r->argv[i];
        if (option_length(a) > 0 || (i > 0 && option_length(r->argv[i - 1]) > 0 && !strchr(r->argv[i - 1], '=')))
            continue;
        words[count++] = a;
    }
    qsort(words, (size_t)count, sizeof *words, compare_words);
    int unique = 0;
    for (int k = 0; k < count; k++)
        if (unique == 0 || strcmp(words[unique - 1], words[k]) != 0)
            words[unique++] = words[k];
    return unique;
}

/* "a b c", or "none", of @p words [count]. */
static const char *word_text(const char **words, int count, char *text, size_t size)
{
    size_t used = 0;
    snprintf(text, size, "none");
    for (int k = 0; k < count && used < size; k++)
        used += (size_t)snprintf(text + used, size - used, "%s%s", k ? " " : "", words[k]);
    return text;
}

/* When the words of @p a and @p b differ (verify's techniques, say: the ranks would run different
 * rows and wait in each other's collectives for ever), set @p err and return 1. */
static int words_differ(const record *a, const record *b, int rank_b, tf_error *err)
{
    const char **mine = calloc((size_t)a->header.argc + 1, sizeof *mine);
    const char **theirs = calloc((size_t)b->header.argc + 1, sizeof *theirs);
    if (!mine || !theirs) {
        free(mine);
        free(theirs);
        tf_error_set(err, TF_ERR_SYSTEM, "ranks: out of memory comparing the command lines");
        return 1;
    }
    const int m = words_of(a, mine), t = words_of(b, theirs);
    int differ = m != t;
    for (int k = 0; !differ && k < m; k++)
        differ = strcmp(mine[k], theirs[k]) != 0;
    if (differ) {
        char text_a[256], text_b[256];
        tf_error_set(err, TF_ERR_INPUT, "ranks disagree on the arguments besides options: rank 0 has %s, rank %d has "
                                        "%s (every rank must be given the same arguments)",
                     word_text(mine, m, text_a, sizeof text_a), rank_b, word_text(theirs, t, text_b, sizeof text_b));
    }
    free(mine);
    free(theirs);
    return differ;
}

/* Unpack the gathered @p buffer (@p size records at @p offsets) into @p records. */
static int unpack(const char *buffer, const int *offsets, int size, record *records, tf_error *err)
{
    for (int r = 0; r < size; r++) {
        const char *p = buffer + offsets[r];
        memcpy(&records[r].header, p, sizeof records[r].header);
        p += sizeof records[r].header;
        records[r].message = p;
        p += strlen(p) + 1;
        records[r].command = p;
        p += strlen(p) + 1;
        records[r].argv = calloc((size_t)records[r].header.argc + 1, sizeof *records[r].argv);
        if (!records[r].argv)
            return tf_error_set(err, TF_ERR_SYSTEM, "ranks: out of memory comparing the command lines");
        for (int i = 0; i < records[r].header.argc; i++) {
            records[r].argv[i] = p;
            p += strlen(p) + 1;
        }
    }
    return TF_OK;
}

/* Steps 0 and 1 of judge(): the command, the options and words, --memory-limit; 1 with @p err set
 * when some differ. */
static int lines_differ(const record *records, int size, tf_error *err)
{
    /* 0. The command: ranks running different ones would wait in each other's collectives. */
    for (int r = 1; r < size; r++)
        if (strcmp(records[r].command, records[0].command) != 0) {
            tf_error_set(err, TF_ERR_INPUT, "ranks disagree on the command: rank 0 runs %s, rank %d runs %s (an mpiexec "
                                            "job runs one twofold command on every rank)",
                         *records[0].command ? records[0].command : "none", r,
                         *records[r].command ? records[r].command : "none");
            return 1;
        }
    /* 1. Options: every rank's against rank 0's, both ways (an option only one of them has), and the
     *    words besides them; then --memory-limit, which twofold's main takes before the command's
     *    arguments. */
    for (int r = 1; r < size; r++)
        if (first_difference(&records[0], 0, &records[r], r, err) ||
            first_difference(&records[r], r, &records[0], 0, err) || words_differ(&records[0], &records[r], r, err))
            return 1;
    for (int r = 1; r < size; r++)
        if (records[r].header.memory_limit != records[0].header.memory_limit) {
            char limits[2][48];
            for (int k = 0; k < 2; k++) {
                const uint64_t limit = records[k ? r : 0].header.memory_limit;
                if (limit)
                    tf_format_bytes((double)limit, limits[k], sizeof limits[k]);
                else
                    snprintf(limits[k], sizeof limits[k], "no --memory-limit");
            }
            tf_error_set(err, TF_ERR_INPUT, "ranks disagree on --memory-limit: rank 0 has %s, rank %d has %s (every "
                                            "rank must be given the same options)",
                         limits[0], r, limits[1]);
            return 1;
        }
    return 0;
}

/* Compare the records: the same verdict, computed from the same gathered bytes on every rank;
 * @p what names the option whose file the digests are of ("--data"). */
static int judge(const record *records, int size, const char *what, tf_error *err)
{
    /* 0, 1. The command lines, unless a rank failed before it had a command (twofold's own option
     *    refused): that error (step 2) is the one to tell, not the words it could not read. */
    int early = 0;
    for (int r = 0; r < size; r++)
        early |= records[r].header.code != TF_OK && !records[r].command[0];
    if (!early && lines_differ(records, size, err))
        return err->code;
    /* 2. An error a rank already had (a bad option, a file it could not read): the lowest rank's,
     *    named by rank when not every rank had it. */
    int failed = 0, first = -1, code = TF_OK;
    for (int r = 0; r < size; r++)
        if (records[r].header.code != TF_OK) {
            failed++;
            first = first < 0 ? r : first;
            code = records[r].header.code > code ? records[r].header.code : code;
        }
    if (failed == size)
        return tf_error_set(err, code, "%s", records[first].message);
    if (failed)
        return tf_error_set(err, code, "rank %d of %d: %s", first, size, records[first].message);
    /* 3. The data: the same options can name different files on different machines. */
    for (int r = 1; r < size; r++)
        if (records[r].header.digest != records[0].header.digest)
            return tf_error_set(err, TF_ERR_INPUT, "ranks disagree on the data of %s: rank 0 loaded digest "
                                                   "%016llx, rank %d %016llx (give every rank the same file)",
                                what, (unsigned long long)records[0].header.digest, r,
                                (unsigned long long)records[r].header.digest);
    return TF_OK;
}

/* ranks_agree(), the digests being of the file of option @p what. */
static int agree(comm *group, int argc, char **argv, uint64_t digest, const char *what, tf_error *err)
{
    if (group->size <= 1)
        return err->code;
    /* This rank's record. */
    record_header header = {err->code, argc, digest, tf_memory_limit_total()};
    size_t bytes = sizeof header + strlen(err->message) + 1 + strlen(this_command) + 1;
    for (int i = 0; i < argc; i++)
        bytes += strlen(argv[i]) + 1;
    /* A command line is bounded by the system's ARG_MAX (a few MiB): its records fit MPI's int counts. */
    char *mine = malloc(bytes);
    int *lengths = calloc((size_t)group->size, sizeof *lengths), *offsets = calloc((size_t)group->size, sizeof *offsets);
    record *records = calloc((size_t)group->size, sizeof *records);
    char *all = NULL;
    int status = mine && lengths && offsets && records ? TF_OK : TF_ERR_SYSTEM;
    int length = (int)bytes;
    if (status == TF_OK) {
        char *p = mine;
        memcpy(p, &header, sizeof header);
        p += sizeof header;
        p = stpcpy(p, err->message) + 1;
        p = stpcpy(p, this_command) + 1;
        for (int i = 0; i < argc; i++)
            p = stpcpy(p, argv[i]) + 1;
        /* The one exchange: each record's length, then the records themselves. */
        if (MPI_Allgather(&length, 1, MPI_INT, lengths, 1, MPI_INT, group->world) != MPI_SUCCESS)
            status = TF_ERR_SYSTEM;
    }
    size_t total = 0;
    for (int r = 0; status == TF_OK && r < group->size; r++) {
        offsets[r] = (int)total;
        total += (size_t)lengths[r];
    }
    if (status == TF_OK && !(all = malloc(total)))
        status = TF_ERR_SYSTEM;
    if (status == TF_OK && MPI_Allgatherv(mine, length, MPI_CHAR, all, lengths, offsets, MPI_CHAR, group->world) !=
                               MPI_SUCCESS)
        status = TF_ERR_SYSTEM;
    if (status == TF_OK)
        status = unpack(all, offsets, group->size, records, err);
    if (status == TF_OK) {
        tf_error verdict;
        tf_error_clear(&verdict);
        status = judge(records, group->size, what, &verdict);
        *err = verdict;
    } else if (err->code == TF_OK) {
        tf_error_set(err, TF_ERR_SYSTEM, "ranks: could not compare the ranks' command lines (out of memory or MPI)");
    }
    for (int r = 0; records && r < group->size; r++)
        free(records[r].argv);
    free(records);
    free(all);
    free(offsets);
    free(lengths);
    free(mine);
    return status;
}

int ranks_agree(comm *group, int argc, char **argv, uint64_t digest, tf_error *err)
{
    return agree(group, argc, argv, digest, "--data", err);
}

int ranks_agree_on_file(comm *group, const char *option, int status, uint64_t digest, tf_error *err)
{
    if (!group || group->size <= 1)
        return status;
    /* No arguments to compare (the command's were): the status, its message and the digest. */
    return agree(group, 0, NULL, status == TF_OK ? digest : 0, option, err);
}

int ranks_agree_on_data(comm *group, int argc, char **argv, int loaded, dataset *d, tf_error *err)
{
    if (!group)
        return loaded;
    if (ranks_agree(group, argc, argv, loaded == TF_OK ? dataset_digest(d) : 0, err) != TF_OK) {
        if (loaded == TF_OK)
            dataset_free(d);
        return err->code;
    }
    return loaded;
}

int start_agreed_ranks(comm *group, int argc, char **argv, tf_error *err)
{
    if (err->code != TF_OK && ranks_launched() <= 1)
        return err->code;
    if (start_ranks(group, 1, err) != TF_OK)
        return TF_ERR_SYSTEM;
    if (ranks_agree(group, argc, argv, 0, err) != TF_OK)
        return finish_ranks(group, err->code, err);
    return TF_OK;
}

/* MPI started by ranks_agree_on_command() for the whole command (1), or not (0), and its ranks. */
static int command_started_mpi;
static comm command_group;

int ranks_agree_on_command(const char *command, int argc, char **argv, tf_error *err)
{
    this_command = command ? command : "";
    if (ranks_launched() <= 1 || !started_by_launcher())
        return err->code;
    char reason[256];
    if (comm_init(&command_group, NULL, NULL, 0, reason, sizeof reason, err) != TF_OK)
        return TF_ERR_SYSTEM;
    command_started_mpi = 1;
    if (ranks_agree(&command_group, argc, argv, 0, err) != TF_OK)
        return finish_ranks(&command_group, err->code, err);
    return TF_OK;
}

void ranks_finish_command(tf_error *err)
{
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    /* A one-process command (info, export, partition) ran whole on every rank: the ranks agree on
     * its status as the MPI commands do, so a failure is reported once, by the lowest failing rank. */
    if (command_started_mpi && initialized && !finalized)
        finish_ranks(&command_group, err->code, err);
}
