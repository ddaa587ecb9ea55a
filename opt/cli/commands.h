/**
 * @file opt/cli/commands.h
 * @brief The `twofold` subcommands. Each receives the arguments after its own name.
 */
#ifndef TWOFOLD_OPT_CLI_COMMANDS_H
#define TWOFOLD_OPT_CLI_COMMANDS_H

#include "opt/comm.h"
#include "opt/partition_part.h"
#include "ref/error.h"
#include "ref/partition.h"
#include "ref/train.h"

/** `twofold info DATASET`: print a dataset's statistics. */
int command_info(int argc, char **argv, tf_error *err);

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
} train_vertex_split_request;

/** Vertex-partitioned training on the ranks of @p group (opt/cli/cmd_train_partition.c). */
int train_vertex_split(const train_vertex_split_request *request, comm *group, tf_error *err);

/** `twofold demo`: the data, the reference models, and every technique's demo rows, ref against twin. */
int command_demo(int argc, char **argv, tf_error *err);

/** `twofold verify [TECHNIQUE...] --data D`: every twin of the technique table against its
 *  reference on the user's data, untimed; exit status 1 when one is not equal. */
int command_verify(int argc, char **argv, tf_error *err);

/**
 * Start MPI (a single process without mpiexec) and the threads of each rank (one, unless
 * OMP_NUM_THREADS says more); rank 0 prints the set-up unless @p quiet.
 */
int start_ranks(comm *group, int quiet, tf_error *err);

/**
 * End a run started by start_ranks(): when @p status is an error on several ranks, report it
 * and abort them all (the others may wait in a collective); else shut MPI down. @return status.
 */
int finish_ranks(comm *group, int status, const tf_error *err);

/** Exit status of demo and verify when a twin is not equal to its reference. */
#define EXIT_WRONG 1

#endif
