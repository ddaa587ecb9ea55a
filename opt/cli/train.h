/**
 * @file opt/cli/train.h
 * @brief `twofold train` inside: the command line every model shares, and the run of a snapshot
 *        model as a short driver over a table of technique hooks.
 *
 * One option table (opt/cli/cmd_train_options.c) parses a #train_command for every model; its
 * masks say which options a model takes. command_train() then starts the ranks once and hands the
 * command to one of three runs: train_events() (tgn, jodie; opt/cli/cmd_train_events.c),
 * train_vertex_split() (--split vertex; opt/cli/cmd_train_partition.c) or train_snapshots() (the
 * rest, opt/cli/cmd_train.c).
 *
 * train_snapshots() loads the data, makes the trainer, then calls the hooks of every
 * #train_technique the command line switches on, in the order of train_techniques[]: each adds
 * its set-up, its lines, its epochs or its summary. A technique is one hook struct, its state in
 * #train_run and its options in the table; the driver does not name it.
 */
#ifndef TWOFOLD_OPT_CLI_TRAIN_H
#define TWOFOLD_OPT_CLI_TRAIN_H

#include "datasets/dataset.h"
#include "opt/async.h"
#include "opt/cli/cli.h"
#include "opt/cli/options.h"
#include "opt/comm.h"
#include "opt/dispatch_batch.h"
#include "opt/incremental_inputs.h"
#include "opt/minibatch.h"
#include "opt/partition_part.h"
#include "opt/schedule.h"
#include "opt/schedule_hybrid_train.h"
#include "ref/async.h"
#include "ref/async_embeddings.h"
#include "ref/partition.h"
#include "ref/train.h"
#include "ref/train_events.h"

#ifdef TWOFOLD_HAVE_CUDA
#include "cuda/kernels.h"
#endif

/** The models `--model` names, in its order: the snapshot models (a #model_kind each, from the
 *  model table), then the event models (#event_model_kind after TRAIN_TGN). Bit m of a mask is model m. */
typedef enum train_model {
    TRAIN_TGN = MODEL_COUNT,   /**< EVENT_MODEL_TGN */
    TRAIN_JODIE,               /**< EVENT_MODEL_JODIE */
    TRAIN_APAN,                /**< EVENT_MODEL_APAN */
    TRAIN_MODELS               /**< how many --model words there are */
} train_model;

/** The mask of one model. */
#define TRAIN_MODEL(m) (1u << (m))
/** The snapshot models' mask: every line of the model table. */
#define SNAPSHOT_MODELS (TRAIN_MODEL(MODEL_COUNT) - 1u)
/** The event models' mask. */
#define EVENT_MODELS (TRAIN_MODEL(TRAIN_TGN) | TRAIN_MODEL(TRAIN_JODIE) | TRAIN_MODEL(TRAIN_APAN))

/** `--split vertex` and its options (chapter 06). */
typedef struct vertex_split {
    int on;                    /**< --split vertex */
    partition_method method;   /**< --partition */
    int partition_given;       /**< --partition was given */
    partition_mode mode;       /**< --mode (default exchange) */
    uint64_t seed;             /**< --partition-seed */
} vertex_split;

/** `--schedule M` and its options (chapter 07). */
typedef struct train_scheduling {
    int enabled;              /**< --schedule given */
    schedule_method method;   /**< its method */
    int64_t per_rank;         /**< --per-rank L (default 2) */
    const char *cost;         /**< --cost: "measured" (default) or "linear:A,B,C" */
    int64_t repeats;          /**< measured runs per window (3) */
    ilp_options ilp;          /**< --ilp-seconds, --ilp-gap */
} train_scheduling;

/** `--batching hybrid` and its options (DynaHB's hybrid batches). */
typedef struct train_batching {
    int hybrid;               /**< --batching hybrid */
    hybrid_options options;   /**< --adjust, --targets, --balanced-groups, --adjust-every; window, batch, seed */
    int threads;              /**< --reservoir T (0: batches built when needed) */
} train_batching;

/** The options of the event models (tgn, jodie). */
typedef struct train_events_options {
    event_model_config config;   /**< --memory-dim, --time-dim, --embedding-dim, --heads, --neighbours */
    event_train_options options; /**< --epochs, --lr, --batch, --seed, --negatives, --staleness */
    const char *edge_features;   /**< --edge-features FILE.npy or "none" (NULL: the dataset's own) */
    const char *edge_columns;    /**< --edge-columns LIST (NULL: the loader's rule) */
    const char *placement;       /**< --placement (NULL: hash) */
    dispatch_mode mode;          /**< --dispatch (sven by default) */
    int prefetch;                /**< --prefetch D, or -1 when not given */
    int micro_batches;           /**< --micro-batches N, or 0 when not given */
} train_events_options;

/** A `twofold train` command line, parsed. The fields of the models not named keep their defaults. */
typedef struct train_command {
    int model;                     /**< --model: a #train_model */
    const char *data;              /**< --data */
    const char *labels;            /**< --labels (NULL when absent) */
    const char *save;              /**< --save (NULL when absent) */
    const char *load;              /**< --load (NULL when absent) */
    int optimized;                 /**< --impl opt */
    int argc;                      /**< the arguments as given: the ranks compare them (ranks_agree()) */
    char **argv;                   /**< the arguments */
    /* the snapshot models */
    model_config config;           /**< --hidden, --k (the kind from --model) */
    train_options options;         /**< --epochs, --lr, --window, --stride, --batch, --blocks, --seed ... */
    int blocks;                    /**< --blocks */
    int lags;                      /**< --lags (0: the format's own) */
    const char *dump;              /**< --dump-outputs DIR (NULL when absent) */
    int gpu;                       /**< --device cuda */
    int incremental;               /**< --incremental */
    incremental_inputs_options inputs; /**< --cache, --cache-policy */
    int profile;                   /**< --profile */
    async_options async;           /**< --sync, --every, --staleness, --straggler */
    int replicas;                  /**< --replicas: ranks the reference simulates serially */
    int replicas_given;            /**< --replicas was given */
    int stale_embeddings;          /**< --stale-embeddings given */
    stale_schedule stale;          /**< its rule */
    vertex_split split;            /**< --split vertex */
    train_scheduling scheduling;   /**< --schedule */
    train_batching batching;       /**< --batching hybrid */
    minibatch_options minibatch;   /**< --minibatch N (size 0: off), --fanout */
    /* the event models */
    train_events_options events;   /**< their options */
} train_command;

/** 1 for tgn and jodie. */
int train_is_event_model(const train_command *c);

/** Parse the arguments of `twofold train` (opt/cli/cmd_train_options.c): the table, then the rules
 *  it cannot state. *@p help is set (and nothing else checked) for --help. */
int train_parse(int argc, char **argv, train_command *c, int *help, tf_error *err);

/** Print `twofold train --help` for the model of @p c (the snapshot models' page without one). */
void train_print_help(const train_command *c);

/** The refusal "train: WHAT needs NEEDED" in the table's wording. */
int train_needs(const char *what, const char *needed, tf_error *err);

/** 1 when the run takes chapter 05's asynchronous steps (--sync average, --staleness 1, a straggler). */
int train_wants_async(const train_command *c);

/**
 * Load the data of a snapshot model on this rank (the progress line on rank 0) and have the ranks
 * agree on it and on their command lines (ranks_agree_on_data(); nothing to agree on without
 * @p group). @p d holds nothing unless TF_OK is returned.
 */
int train_load_snapshots(const train_command *c, comm *group, cli_progress_state *progress, dataset *d,
                         tf_error *err);

/** Print, on rank 0, that a --load reads the complete checkpoint an interrupted save left beside it. */
void note_interrupted_save(const char *load);

/** The rules of --split vertex (opt/cli/cmd_train_partition.c): what it needs, what it cannot run with. */
int vertex_split_check(const train_command *c, tf_error *err);

/** The event models' run (opt/cli/cmd_train_events.c); @p group NULL for the reference. */
int train_events(const train_command *c, comm *group, tf_error *err);

/** Vertex-partitioned training on the ranks of @p group (opt/cli/cmd_train_partition.c). */
int train_vertex_split(const train_command *c, comm *group, tf_error *err);

/** The snapshot models' run (opt/cli/cmd_train.c); @p group NULL for the reference. */
int train_snapshots(const train_command *c, comm *group, tf_error *err);

/** What --schedule keeps while it runs. */
typedef struct scheduling_state {
    schedule plan;            /**< the schedule every rank runs */
    double *group_seconds;    /**< [windows] busy thread CPU seconds of each window, summed over epochs */
    int64_t epochs_run;       /**< epochs trained under the plan */
} scheduling_state;

/** What --batching hybrid keeps while it runs. */
typedef struct batching_state {
    hybrid_run run;           /**< the hybrid run */
    int started;              /**< run holds a started hybrid run */
    opt_reservoir *reservoir; /**< the threaded reservoir (--impl opt --reservoir T) */
} batching_state;

/** What --profile keeps while it runs. */
typedef struct profile_state {
    const kernels *unprofiled;   /**< the kernels the counting table wraps */
    uint64_t comm_calls;         /**< the ranks' all-reduce calls before the epochs */
    uint64_t comm_bytes;         /**< bytes sent before the epochs */
    double comm_seconds;         /**< all-reduce seconds before the epochs */
} profile_state;

/** One run of a snapshot model: what the driver made and what each technique keeps. */
typedef struct train_run {
    const train_command *c;      /**< the command */
    comm *group;                 /**< the ranks; NULL for the reference */
    int speaks;                  /**< 1 on the rank that prints and writes files (rank 0, or the reference) */
    dataset data;                /**< the loaded data */
    const snapshot_seq *seq;     /**< its snapshots */
    trainer single;              /**< the trainer, unless a technique made its own */
    trainer *tr;                 /**< the trainer every hook trains (single, or a technique's) */
    cli_progress_state progress; /**< the progress line on stderr */
    int64_t first_epoch;         /**< the epoch the run started at (a checkpoint's) */
    double epoch_seconds;        /**< wall seconds inside the epochs */
    replica_set replicas;        /**< --sync average simulated by the reference */
    async_trainer async;         /**< chapter 05's steps on the ranks */
    stale_simulation stale;      /**< --stale-embeddings simulated by the reference */
    int32_t *owner;              /**< [num_nodes] its rank of each vertex */
    incremental_inputs inputs;   /**< --incremental */
    scheduling_state scheduling; /**< --schedule */
    batching_state batching;     /**< --batching hybrid */
    profile_state profile;       /**< --profile */
    minibatch_stats minibatch;   /**< --minibatch: rank 0's counts over the epochs */
#ifdef TWOFOLD_HAVE_CUDA
    cuda_context gpu;            /**< --device cuda */
#endif
} train_run;

/**
 * One technique of `twofold train` on a snapshot model: its hooks, each optional (NULL). The
 * driver calls them in the order of train_techniques[]: check while parsing; then, for a run that
 * switches the technique on, create (the first one that has it makes the trainer), join (the
 * first makes it one of the ranks), start, describe, epoch (the first one trains every epoch),
 * stop, report and free.
 */
typedef struct train_technique {
    const char *name;   /**< for a reader: "scheduling", "incremental" ... */
    /** The rules of its options the table cannot state; an input error names the fix. */
    int (*check)(const train_command *c, tf_error *err);
    /** 1 when this run uses it (@p group NULL for the reference). */
    int (*on)(const train_command *c, const comm *group);
    /** Make r->tr in its own way (instead of trainer_create() into r->single). */
    int (*create)(train_run *r, tf_error *err);
    /** Make the loaded trainer one of the ranks (instead of opt_trainer_parallel()). */
    int (*join)(train_run *r, tf_error *err);
    /** Set up, after the trainer is made, loaded and on the ranks; rank 0 may print a line. */
    int (*start)(train_run *r, tf_error *err);
    /** Rank 0's lines on the set-up, after the model's. */
    void (*describe)(const train_run *r);
    /** One epoch (instead of opt_trainer_epoch() or trainer_epoch()). */
    int (*epoch)(train_run *r, epoch_report *report, tf_error *err);
    /** After the last epoch, before the final evaluation. */
    void (*stop)(train_run *r);
    /** After the final evaluation: its summary (every rank calls it; rank 0 prints). */
    int (*report)(train_run *r, tf_error *err);
    /** Release what it holds (called for every technique, on or not: a zeroed state frees nothing). */
    void (*free)(train_run *r);
} train_technique;

/** The techniques of a snapshot run, in hook order, NULL-ended (opt/cli/cmd_train_techniques.c). */
extern const train_technique *const train_techniques[];

/** --schedule (opt/cli/cmd_train_schedule.c). */
extern const train_technique train_scheduling_technique;

/** --batching hybrid (opt/cli/cmd_train_schedule.c). */
extern const train_technique train_batching_technique;

/** --minibatch (opt/cli/cmd_train_minibatch.c). */
extern const train_technique train_minibatch_technique;

#endif
