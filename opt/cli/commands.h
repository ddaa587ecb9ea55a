/**
 * @file opt/cli/commands.h
 * @brief The `twofold` subcommands. Each receives the arguments after its own name.
 */
#ifndef TWOFOLD_OPT_CLI_COMMANDS_H
#define TWOFOLD_OPT_CLI_COMMANDS_H

#include "datasets/dataset.h"
#include "opt/comm.h"
#include "ref/core/error.h"
#include "verify/techniques/table.h"

/** `twofold info DATASET`: print a dataset's statistics. */
int command_info(int argc, char **argv, tf_error *err);

/** `twofold export --data D --out DIR`: a snapshot dataset as .npy files (opt/cli/cmd_export.c). */
int command_export(int argc, char **argv, tf_error *err);

/**
 * `twofold train --model M --data D`: train a snapshot model (tgcn, gconvgru, gclstm, evolvegcn)
 * or an event model (tgn, jodie); opt/cli/train.h tells how.
 */
int command_train(int argc, char **argv, tf_error *err);

/** `twofold partition --data D --ranks R --method M`: split a dataset and print what it costs. */
int command_partition(int argc, char **argv, tf_error *err);

/** `twofold demo [TECHNIQUE...]`: the data, the reference models, and every technique's demo rows, ref
 *  against twin; started alone, it starts itself again under mpiexec on 2 ranks (opt/cli/cmd_demo.c). */
int command_demo(int argc, char **argv, tf_error *err);

/** The technique-table entries a command names (verify, demo): all when none is. */
typedef struct technique_words {
    unsigned char chosen[TECHNIQUE_TABLE_MAX]; /**< chosen[k]: entry k was named (technique_choose()) */
    int any;                                   /**< 1: some were named */
} technique_words;

/** Mark the entries @p word names (a name or a stem) in @p w, or refuse it as "COMMAND: no
 *  technique called ..." (opt/cli/cmd_verify.c). */
int technique_word(const char *command, technique_words *w, const char *word, tf_error *err);

/** `twofold verify [TECHNIQUE...] --data D`: every twin of the technique table against its
 *  reference on the user's data, untimed; exit status 1 when one is not equal. */
int command_verify(int argc, char **argv, tf_error *err);

/** `twofold schedule (--data D | --times T,...) --ranks R`: DyGNeX schedules, predicted, measured
 *  (--run) and simulated (--simulate). */
int command_schedule(int argc, char **argv, tf_error *err);

/** The most groups the greedy schedules (`schedule`, with --simulate for each rank count, and
 * `train --schedule greedy`): it took 0.6 s for 1,024 groups, 4.4 s for 2,048 and 27 s for 4,096
 * on this project's 2-core machine (load 4), 66 s for 4,096 at load 7: about the cube of the
 * groups. 4,096 (the default --snapshots) is where a run stops being a matter of seconds. */
#define GREEDY_GROUPS_MAX 4096

/** TF_OK when greedy may schedule @p groups (at most #GREEDY_GROUPS_MAX), else TF_ERR_INPUT with
 *  the line `COMMAND: greedy on N groups is more than its limit …; give OPTION roundrobin, …`:
 *  the one check `schedule` and `train --schedule greedy` share. */
int greedy_groups_within_limit(const char *command, const char *option, int64_t groups, tf_error *err);

/**
 * Start MPI (a single process without mpiexec) and the threads of each rank (one, unless
 * OMP_NUM_THREADS says more); rank 0 prints the set-up unless @p quiet.
 */
int start_ranks(comm *group, int quiet, tf_error *err);

/**
 * End a run started by start_ranks(). Every rank offers its status; when some failed and all
 * arrive, the lowest failing rank keeps its message and every other rank gets the same code with
 * an empty message (main prints none), so a bad input prints one line, not one per rank, and
 * every rank exits with it; a system failure (exit 3: a full disk under the writing rank) is
 * offered the same way. A rank that failed while others still wait in a collective of training
 * (they do not arrive within a few seconds), or on an MPI failure, prints one line naming itself
 * (`rank N of R: …`) and exits with its status, so mpiexec ends the others (no MPI_Abort, whose
 * page of Open MPI's text buried the line). A rank with a failed status and no message of its own
 * (it stopped because another failed) does not report. Then MPI is shut down.
 * @return the run's status (the worst of the ranks')
 */
int finish_ranks(comm *group, int status, tf_error *err);

/** 1 if a launcher started this process (Open MPI's mpiexec sets OMPI_COMM_WORLD_SIZE, MPICH's
 *  Hydra and Slurm's PMI PMI_SIZE, a PMIx launcher PMIX_RANK), even as one rank of one. */
int started_by_launcher(void);

/**
 * How many ranks this process was launched among: MPI's world size when MPI is running, else
 * the launcher's environment (OMPI_COMM_WORLD_SIZE of Open MPI, PMI_SIZE of MPICH or Slurm),
 * else 1. Lets a single-process run refuse to be started R times by `mpiexec -n R`.
 */
int ranks_launched(void);

/** The digest of a loaded dataset's contents the checkpoints record (checkpoint_snapshot_digest(),
 *  checkpoint_event_digest()); the ranks compare it in ranks_agree(). */
uint64_t dataset_digest(const dataset *d);

/**
 * At start-up, before any collective of training: every rank's arguments, the digest of the
 * data it loaded and its error so far, in one all-gather (after the records' lengths), compared
 * the same way on every rank. A difference in an option becomes "ranks disagree on --lr: rank 0
 * has 0.01, rank 1 has 0.02"; else a rank's error becomes every rank's (prefixed with its rank
 * when only some had it); else differing data digests are reported. On one rank: nothing to
 * compare.
 * @param group  the ranks (start_ranks())
 * @param argc   arguments of the subcommand, as the user gave them
 * @param argv   the arguments
 * @param digest dataset_digest() of what this rank loaded; 0 when it loaded nothing
 * @param err    in: this rank's error so far (code TF_OK when none); out: the same verdict on
 *               every rank
 * @return 0 when the ranks agree and none failed, else the verdict's code
 */
int ranks_agree(comm *group, int argc, char **argv, uint64_t digest, tf_error *err);

/**
 * After every rank read the file of option @p option (`--edge-features`, `--placement file:`): its
 * error, else the digest of what it read, compared as ranks_agree() compares the data's, so that a
 * rank that could not read it is one line ("rank 1 of 2: FILE: cannot open ...") and different
 * contents under the same name are "ranks disagree on the data of --edge-features: ...". Every
 * rank must call it. Without ranks (@p group NULL or of one) it only passes @p status on.
 * @param group  the ranks, or NULL
 * @param option the option that named the file
 * @param status this rank's reading of it (its message in @p err when not TF_OK)
 * @param digest tf_digest() of what it read, when @p status is TF_OK
 * @param err    as for ranks_agree()
 * @return TF_OK when every rank read the same, else the verdict's code
 */
int ranks_agree_on_file(comm *group, const char *option, int status, uint64_t digest, tf_error *err);

/**
 * ranks_agree() right after a train command loaded its data: the digest of @p d when it loaded,
 * and @p d freed when the ranks do not agree. Without ranks (@p group NULL) it only passes
 * @p loaded on.
 * @param group  the ranks, or NULL for the reference
 * @param argc   arguments of the subcommand, as the user gave them
 * @param argv   the arguments
 * @param loaded dataset_load()'s status (or a later error about the data)
 * @param d      the data, valid when @p loaded is TF_OK
 * @param err    as for ranks_agree()
 * @return TF_OK when the data may be used, else the error's code (@p d then holds nothing)
 */
int ranks_agree_on_data(comm *group, int argc, char **argv, int loaded, dataset *d, tf_error *err);

/**
 * Start the ranks of a subcommand other than train (verify, demo, schedule) and have them agree on
 * their command lines before any other collective, so that a bad option under mpiexec is one line
 * from one rank. Without mpiexec a parse error returns at once and MPI is not started.
 * @param group the ranks, started on TF_OK
 * @param argc  arguments of the subcommand
 * @param argv  the arguments
 * @param err   in: the parse's error (code TF_OK when none); out: the verdict
 * @return TF_OK with @p group started, else the exit status (the ranks already finished)
 */
int start_agreed_ranks(comm *group, int argc, char **argv, tf_error *err);

/**
 * Under a launcher that started R > 1 processes, before any command runs: start MPI and compare
 * every rank's command (its name, options, other words and --memory-limit) as ranks_agree() does,
 * so that an MPMD job giving ranks different commands ("mpiexec -n 1 twofold info D : -n 1 twofold
 * train ...") is refused with one line on every launch instead of leaving some ranks waiting for
 * the others in MPI for ever. The command's own ranks_agree() calls then compare the same
 * @p command. Started alone (or as one rank), nothing happens.
 * @param command the subcommand's name
 * @param argc    its arguments
 * @param argv    the arguments
 * @param err     in: the error so far; out: the verdict (already reported and MPI finished when
 *                it is not TF_OK, with the message left to main on the one rank that prints it)
 * @return TF_OK when the command may run
 */
int ranks_agree_on_command(const char *command, int argc, char **argv, tf_error *err);

/** After the command: where ranks_agree_on_command() started MPI and the command left it running
 *  (a one-process command such as info or export under mpiexec), the ranks agree on @p err as
 *  finish_ranks() does (one line from the lowest failing rank, every rank with the worst status),
 *  then MPI ends. */
void ranks_finish_command(tf_error *err);

/** Exit status of demo and verify when a twin is not equal to its reference. */
#define EXIT_WRONG 1

/** The exit statuses (ref/core/error.h), as the --help of every command that writes or reads files lists them. */
#define EXIT_STATUS_HELP                                                                                    \
    "Exit status: 0 done; 2 bad input (one line naming the file, option or path); 3 the machine\n"         \
    "failed (disk full, I/O error, MPI or CUDA): a file that a failed write was to replace is left\n"       \
    "as it was.\n"

#endif
