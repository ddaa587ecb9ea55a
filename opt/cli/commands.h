/**
 * @file opt/cli/commands.h
 * @brief The `twofold` subcommands. Each receives the arguments after its own name.
 */
#ifndef TWOFOLD_OPT_CLI_COMMANDS_H
#define TWOFOLD_OPT_CLI_COMMANDS_H

#include "datasets/dataset.h"
#include "opt/comm.h"
#include "opt/partition_part.h"
#include "opt/schedule.h"
#include "opt/schedule_hybrid_train.h"
#include "ref/async_embeddings.h"
#include "ref/core/error.h"
#include "ref/partition.h"
#include "ref/train.h"

/** `twofold info DATASET`: print a dataset's statistics. */
int command_info(int argc, char **argv, tf_error *err);

/** `twofold export --data D --out DIR`: a snapshot dataset as .npy files (opt/cli/cmd_export.c). */
int command_export(int argc, char **argv, tf_error *err);

/**
 * `twofold train --model M --data D`: train a snapshot model; hands over to
 * command_train_events() when M is an event model.
 */
int command_train(int argc, char **argv, tf_error *err);

/** `twofold train --model tgn|jodie --data D`: train a memory-based event model. */
int command_train_events(int argc, char **argv, tf_error *err);

/**
 * 1 if the train arguments name an event model (`--model tgn` or `--model jodie`), else 0.
 * @param argc   number of arguments after `train`
 * @param argv   the arguments
 * @param model  out: the value of the last --model option, or NULL when there is none
 */
int train_wants_event_model(int argc, char **argv, const char **model);

/** `twofold partition --data D --ranks R --method M`: split a dataset and print what it costs. */
int command_partition(int argc, char **argv, tf_error *err);

/** What `twofold train --split vertex` was asked (chapter 06). */
typedef struct vertex_split {
    int on;                    /**< --split vertex */
    partition_method method;   /**< --partition */
    int have_method;           /**< --partition was given */
    partition_mode mode;       /**< --mode (default exchange) */
    int have_mode;             /**< --mode was given */
    uint64_t seed;             /**< --partition-seed */
} vertex_split;

/** The parts of a `twofold train` command the vertex split uses. */
typedef struct train_vertex_split_request {
    const char *data;                 /**< --data */
    const char *save;                 /**< --save (NULL when absent) */
    const char *load;                 /**< --load (NULL when absent) */
    int lags;                         /**< --lags */
    const model_config *config;       /**< the model */
    const train_options *options;     /**< the training */
    const vertex_split *split;        /**< the split */
    const stale_schedule *stale;      /**< --stale-embeddings (NULL when absent): DGC's rule on the exchange */
    int argc;                         /**< the train arguments as given (compared by ranks_agree()) */
    char **argv;                      /**< the arguments */
} train_vertex_split_request;

/** Vertex-partitioned training on the ranks of @p group (opt/cli/cmd_train_partition.c). */
int train_vertex_split(const train_vertex_split_request *request, comm *group, tf_error *err);
/** `twofold train --schedule M` (opt/cli/cmd_train_schedule.c): a DyGNeX schedule in place of
 *  the trainer's steps and round-robin placement. */
typedef struct train_scheduling {
    int enabled;              /**< --schedule given */
    schedule_method method;   /**< its method */
    int64_t per_rank;         /**< --per-rank L (default 2) */
    const char *cost;         /**< --cost: "measured" (default) or "linear:A,B,C" */
    int64_t repeats;          /**< measured runs per window (3) */
    ilp_options ilp;          /**< --ilp-seconds, --ilp-gap */
    int options_given;        /**< one of the options above was given */
    schedule plan;            /**< the schedule every rank runs (train_scheduling_start()) */
    double *group_seconds;    /**< [windows] busy thread CPU seconds of each window, summed over epochs */
    int64_t epochs_run;       /**< epochs trained under the plan */
} train_scheduling;

/** Defaults: off, L = 2, measured, 3 repeats, ILP 10 s and 2 %. */
void train_scheduling_default(train_scheduling *s);
/** If argv[*i] is one of the options above, parse it: 1, 0 (not one of them) or -1 with @p err set. */
int train_scheduling_option(int argc, char **argv, int *i, train_scheduling *s, tf_error *err);
/** The options' consistency with --impl opt and --incremental; an input error names the fix. */
int train_scheduling_check(const train_scheduling *s, int optimized, int incremental, tf_error *err);
/** Times (measured or modelled), alpha, the schedule built on rank 0 and broadcast; rank 0 prints. */
int train_scheduling_start(train_scheduling *s, trainer *tr, const snapshot_seq *seq, comm *group, int resumed,
                           tf_error *err);
/** One epoch under the plan (opt_schedule_epoch()), busy times accumulated. */
int train_scheduling_epoch(train_scheduling *s, trainer *tr, comm *group, const snapshot_seq *seq,
                           epoch_report *report, tf_error *err);
/** Rank 0 prints the measured busy imbalance and efficiency of the epochs run (every rank calls it). */
int train_scheduling_finish(train_scheduling *s, comm *group, tf_error *err);
/** Release the plan and the busy times. */
void train_scheduling_free(train_scheduling *s);

/** What train_batching_check() needs from the rest of the train command line. */
typedef struct train_command_view {
    model_kind kind;   /**< --model */
    int scheduled;     /**< --schedule given */
    int incremental;   /**< --incremental given */
    int optimized;     /**< --impl opt */
    int64_t window;    /**< --window (hybrid: N_S; 0 = the default) */
    int64_t batch;     /**< --batch (hybrid: batches per step) */
    uint64_t seed;     /**< --seed */
} train_command_view;

/** `twofold train --batching hybrid` (opt/cli/cmd_train_schedule.c): DynaHB's hybrid batches. */
typedef struct train_batching {
    int hybrid;               /**< --batching hybrid */
    hybrid_options options;   /**< --adjust, --targets, --balanced-groups, --adjust-every; window, batch, seed */
    int threads;              /**< --reservoir T (0: batches built when needed) */
    int options_given;        /**< one of --adjust, --targets, --balanced-groups, --reservoir was given */
    int every_given;          /**< --adjust-every was given */
    hybrid_run run;           /**< once started */
    int started;              /**< run holds a started hybrid run */
    opt_reservoir *reservoir; /**< the threaded reservoir (--impl opt --reservoir T) */
} train_batching;

/** Defaults: snapshot batches. */
void train_batching_default(train_batching *b);
/** If argv[*i] is one of the options above, parse it: 1, 0 (not one of them) or -1 with @p err set. */
int train_batching_option(int argc, char **argv, int *i, train_batching *b, tf_error *err);
/** The options' consistency with the rest of the command line (an input error names the fix); takes
 *  the window (N_S), batch and seed from it. */
int train_batching_check(train_batching *b, const train_command_view *c, tf_error *err);
/** The hybrid run (and reservoir) for the trainer; rank 0 prints the sizes. */
int train_batching_start(train_batching *b, trainer *tr, const snapshot_seq *seq, comm *group, tf_error *err);
/** One hybrid epoch: the reference's (@p group NULL) or the data-parallel twin's. */
int train_batching_epoch(train_batching *b, trainer *tr, comm *group, const snapshot_seq *seq, epoch_report *report,
                         tf_error *err);
/** Rank 0 prints the steps, the work and (with the DQN) the steps per size. */
void train_batching_finish(const train_batching *b, const comm *group);
/** Release the run and the reservoir. */
void train_batching_free(train_batching *b);

/** `twofold demo [TECHNIQUE...]`: the data, the reference models, and every technique's demo rows, ref
 *  against twin; started alone, it starts itself again under mpiexec on 2 ranks (opt/cli/cmd_demo.c). */
int command_demo(int argc, char **argv, tf_error *err);

/** `twofold verify [TECHNIQUE...] --data D`: every twin of the technique table against its
 *  reference on the user's data, untimed; exit status 1 when one is not equal. */
int command_verify(int argc, char **argv, tf_error *err);

/** `twofold schedule (--data D | --times T,...) --ranks R`: DyGNeX schedules, predicted, measured
 *  (--run) and simulated (--simulate). */
int command_schedule(int argc, char **argv, tf_error *err);

/**
 * Start MPI (a single process without mpiexec) and the threads of each rank (one, unless
 * OMP_NUM_THREADS says more); rank 0 prints the set-up unless @p quiet.
 */
int start_ranks(comm *group, int quiet, tf_error *err);

/**
 * End a run started by start_ranks(). Every rank offers its status; when some failed and all
 * arrive, the lowest failing rank keeps its message and every other rank gets the same code with
 * an empty message (main prints none), so a bad input prints one line, not one per rank, and
 * every rank exits with it. A rank that failed while others still wait in a collective of
 * training (they do not arrive within a few seconds), or on an MPI failure, reports its error
 * and aborts them all. Then MPI is shut down.
 * @return the run's status (the worst of the ranks')
 */
int finish_ranks(comm *group, int status, tf_error *err);

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

/** Exit status of demo and verify when a twin is not equal to its reference. */
#define EXIT_WRONG 1

#endif
