/* twofold train: train a snapshot model on a dataset, printing loss per epoch. */
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "datasets/dataset.h"
#include "opt/cli/cli.h"
#include "opt/async.h"
#include "opt/cli/commands.h"
#include "opt/incremental_inputs.h"
#include "opt/kernels.h"
#include "opt/train_partition.h"
#include "opt/profile.h"
#include "opt/train.h"
#include "ref/models/checkpoint.h"
#include "ref/core/clock.h"
#include "ref/async.h"
#include "ref/async_embeddings.h"
#include "ref/core/io.h"
#include "ref/core/memory.h"
#include "ref/data/npy.h"
#include "ref/train.h"

#ifdef TWOFOLD_HAVE_CUDA
#include "cuda/kernels.h"
#endif

static const char train_usage[] =
    "usage: twofold train --model MODEL --data DATASET [options]\n"
    "\n"
    "Train a snapshot model with a temporal train/test split; print the train loss and the\n"
    "test MSE after every epoch. The same options and seed give the same result, bit for bit.\n"
    "\n"
    "  --model M          tgcn, gconvgru, gclstm or evolvegcn; the event models tgn and jodie\n"
    "                     take other options: twofold train --model tgn --help\n"
    "  --data D           bundled name, file or generator spec (see twofold info --help)\n"
    "  --epochs E         epochs to train (default 50; with --load, the total to reach)\n"
    "  --lr X             Adam learning rate (default 0.01)\n"
    "  --hidden H         state width (default 32; EvolveGCN-O's is the feature width)\n"
    "  --k K              Chebyshev order of gconvgru and gclstm (default 2)\n"
    "  --window W         snapshots per window, state from zero in each (default 0: the whole split)\n"
    "  --stride S         snapshots between window starts (default: the window, no overlap)\n"
    "  --batch B          windows per optimizer step, gradients averaged (default 1)\n"
    "  --blocks           cut the epoch's windows into B consecutive blocks, step k taking the\n"
    "                     k-th window of each (ReInc's placement: under mpiexec -n B each rank\n"
    "                     walks its own block of consecutive snapshots)\n"
    "  --train-ratio R    fraction of snapshots for training (default 0.8)\n"
    "  --seed S           initial parameters (default 1)\n"
    "  --lags L           lagged features for lagged formats (default: the format's own)\n"
    "  --save DIR         write a checkpoint at the end: parameters as NAME.npy (PyTorch\n"
    "                     names), Adam state and epoch; checked before training, and a kill\n"
    "                     at any instant leaves a complete checkpoint --load finds\n"
    "                     (DIR.partial and DIR.previous are the save's own names; saves to\n"
    "                     one DIR take turns; not a symbolic link, ., or ..)\n"
    "  --load DIR         start from a checkpoint (resumes epoch and Adam state if present;\n"
    "                     model, data, window, stride and split must be this run's)\n"
    "  --dump-outputs DIR write predictions.npy and targets.npy [snapshots][vertices][targets]\n"
    "  --impl I           ref (default: the reference, one thread) or opt (the optimized twin:\n"
    "                     BLAS and OpenMP kernels; under mpiexec -n R, windows shared by R ranks,\n"
    "                     gradients all-reduced; use --batch >= R so every rank has a window;\n"
    "                     OMP_NUM_THREADS=T shares a rank's windows among T threads, best with\n"
    "                     OMP_WAIT_POLICY=passive and --batch >= R x T)\n"
    "  --device D         cpu (default) or cuda: with --impl opt, run the heavy kernels on this\n"
    "                     rank's GPU (staging host data each call); without a GPU, says so and\n"
    "                     runs the CPU kernels\n"
    "  --incremental      tgcn or gconvgru with --impl opt: take the aggregation of X_t\n"
    "                     (T-GCN's A^ X_t; GConvGRU's Chebyshev terms L^ X_t, ..., with --k 2\n"
    "                     or more) from ReInc's incremental engine behind its cache instead\n"
    "                     of recomputing it in every window (gclstm has none: its input term\n"
    "                     is X_t W)\n"
    "  --cache F          with --incremental: cache size as a fraction of all snapshots'\n"
    "                     aggregations (default 1; 0 = no cache)\n"
    "  --cache-policy P   with --incremental: reinc (default, ReInc's F/S - I) or lru\n"
    "  --split S          window (default: a step's windows shared among the ranks) or vertex\n"
    "                     (chapter 06: every rank runs every window on the rows of its vertices;\n"
    "                     needs --impl opt and --partition)\n"
    "  --partition M      with --split vertex: hash, pts, metis, dynahb, dgc, or pss-ts (T-GCN in\n"
    "                     exchange mode); see twofold partition --help\n"
    "  --mode M           with --split vertex: exchange (default: products fetch halo rows from\n"
    "                     their owners) or cache (DynaHB: each rank keeps its vertices' receptive\n"
    "                     field once; no feature bytes)\n"
    "  --partition-seed S METIS's seed (default 1)\n"
    "  --schedule M       with --impl opt: group the windows into steps and place them on the\n"
    "                     ranks by a DyGNeX schedule: roundrobin (one window per rank and step),\n"
    "                     lpt, greedy or ilp (twofold schedule --help explains them)\n"
    "  --per-rank L       with --schedule: windows per rank and step (default 2)\n"
    "  --cost C           with --schedule: window times measured (default) or linear:A,B,C\n"
    "  --ilp-seconds S, --ilp-gap G   with --schedule ilp: time limit (10) and gap (0.02)\n"
    "  --batching B       snapshot (default: windows of all vertices) or hybrid (tgcn: DynaHB's\n"
    "                     batches of N_V target vertices x N_S snapshots; --window sets N_S,\n"
    "                     default 20 % of the training snapshots; --batch batches per step)\n"
    "  --targets N        with hybrid: target vertices per batch (default 5 % of the vertices)\n"
    "  --balanced-groups G  with hybrid: load-sorted groups every batch samples from (default 10)\n"
    "  --adjust A         with hybrid: fixed (default) or dqn (a DQN picks among nine sizes)\n"
    "  --adjust-every K   with --adjust dqn: steps per decision (default 10)\n"
    "  --reservoir T      with hybrid: keep and reuse batches (DynaHB's reservoir), built ahead by\n"
    "                     T generator threads with --impl opt (at most 1 with fixed sizes, 9 with dqn)\n"
    "  --optimizer O      adam (default) or sgd (p - lr g)\n"
    "  --profile          after the epochs, print where their time went by kernel family (dense\n"
    "                     and sparse products, cells, activations, loss, Adam, copies,\n"
    "                     communication): calls, seconds, FLOPs and bytes by the formulas of\n"
    "                     opt/profile.h, the rates achieved, this core's SGEMM (at the run's\n"
    "                     shapes) and STREAM peaks measured then, and the epochs' roofline bound;\n"
    "                     under mpiexec, rank 0's own counters\n"
    "\n"
    "Asynchronous and stale updates (chapter 05):\n"
    "  --sync S           allreduce (default: one gradient all-reduce per step) or average\n"
    "                     (DynaHB: every rank trains its own replica with its own Adam, and the\n"
    "                     parameters are averaged every K steps and at each epoch's end)\n"
    "  --every K          with --sync average: steps between averages (K >= 1)\n"
    "  --staleness N      0 (default) or 1: apply each step's all-reduced gradient one step late\n"
    "                     (Sven Eq. 13), so its all-reduce overlaps the next step's compute\n"
    "  --stale-embeddings S\n"
    "                     DGC's stale aggregation: on the MPI ranks with --split vertex --mode\n"
    "                     exchange, or simulated serially (--impl ref) on the ranks of\n"
    "                     --replicas (vertex v on rank v mod R): off, zero, static:C,\n"
    "                     adaptive (theta grows as the loss falls, the paper's text; default of the\n"
    "                     rule) or adaptive-printed (Eq. 6 as printed: theta shrinks); prints the\n"
    "                     exchange bytes it saves\n"
    "  --replicas R       with --impl ref: the ranks --sync average or --stale-embeddings simulate\n"
    "                     serially (default 1)\n"
    "\n"
    "Testing options:\n"
    "  --straggler RANK:MS[:P] | each:MS:P\n"
    "                     with --impl opt: rank RANK sleeps MS milliseconds after its gradient of\n"
    "                     every step (with probability P), or every rank with probability P;\n"
    "                     draws are keyed by seed, rank, epoch and step, so results do not change\n"
    "\n"
    "Run distributed: mpiexec -n 2 twofold train --impl opt --batch 2 --model tgcn --data chickenpox\n";

/* Parsed command line. */
typedef struct train_command {
    const char *data, *save, *load, *dump;
    int lags;
    int optimized; /* --impl opt */
    int gpu;       /* --device cuda */
    int incremental; /* --incremental */
    int profile;     /* --profile */
    incremental_inputs_options inputs;
    train_scheduling scheduling; /* --schedule */
    train_batching batching;     /* --batching hybrid */
    model_config config;
    train_options options;
    async_options async; /* --sync, --every, --staleness, --straggler */
    int replicas;        /* --replicas: ranks simulated serially by the reference */
    int stale_embeddings; /* --stale-embeddings given */
    stale_schedule stale; /* its schedule */
    vertex_split split;   /* --split vertex and its options (chapter 06) */
    int argc;             /* the arguments as given: the ranks compare them (ranks_agree()) */
    char **argv;
} train_command;

/* Which epoch function a run uses: the plain trainers, or one of chapter 05's. */
static int wants_async(const train_command *c)
{
    return c->async.mode == SYNC_AVERAGE || c->async.staleness != 0 || c->async.straggler.rank != STRAGGLER_NONE;
}

/* The rules of --split vertex (chapter 06): what it needs and what it cannot run with. */
static int vertex_split_check(const vertex_split *split, const train_command *c, tf_error *err)
{
    if (!split->on) {
        if (split->have_method || split->have_mode)
            return tf_error_set(err, TF_ERR_INPUT, "train: --partition and --mode configure --split vertex: add it");
        return TF_OK;
    }
    if (!c->optimized)
        return tf_error_set(err, TF_ERR_INPUT, "train: --split vertex is the optimized twin's: add --impl opt");
    if (!split->have_method)
        return tf_error_set(err, TF_ERR_INPUT, "train: --split vertex needs --partition (hash, pts, metis, dynahb, dgc "
                                               "or pss-ts)");
    if (c->scheduling.enabled || c->batching.hybrid || wants_async(c) || c->replicas > 1 ||
        c->options.optimizer != OPTIMIZER_ADAM)
        return tf_error_set(err, TF_ERR_INPUT, "train: --split vertex takes synchronous Adam steps over every window: "
                                               "drop --schedule, --batching hybrid, --sync average, --staleness, "
                                               "--straggler, --replicas and --optimizer sgd");
    if (c->stale_embeddings && split->mode != PARTITION_EXCHANGE)
        return tf_error_set(err, TF_ERR_INPUT, "train: stale embeddings change what the exchange mode sends: use "
                                               "--split vertex --mode exchange");
    if (c->stale_embeddings && c->load)
        return tf_error_set(err, TF_ERR_INPUT, "train: --stale-embeddings keeps caches a checkpoint does not hold: "
                                               "drop --load");
    if (c->incremental || c->options.batching == BATCH_ACROSS_BLOCKS || c->gpu || c->dump)
        return tf_error_set(err, TF_ERR_INPUT, "train: --split vertex runs every window on every rank's own rows on "
                                               "the CPU kernels: drop %s",
                            c->incremental ? "--incremental" : c->gpu ? "--device cuda" : c->dump ? "--dump-outputs"
                                                                                                   : "--blocks");
    return partition_training_supported(split->method, split->mode, c->config.kind, err) == TF_OK ? TF_OK
                                                                                                  : TF_ERR_INPUT;
}

static int parse_arguments(int argc, char **argv, train_command *c, int *help, tf_error *err)
{
    memset(c, 0, sizeof *c);
    train_options_default(&c->options);
    c->config.hidden = 32;
    c->config.chebyshev_k = 2;
    c->split.mode = PARTITION_EXCHANGE;
    c->split.seed = 1;
    incremental_inputs_options_default(&c->inputs);
    train_scheduling_default(&c->scheduling);
    train_batching_default(&c->batching);
    async_options_default(&c->async);
    c->replicas = 1;
    c->argc = argc;
    c->argv = argv;
    int have_model = 0, have_cache = 0, have_every = 0, have_staleness = 0, have_replicas = 0, have_k = 0;
    for (int i = 0; i < argc; i++) {
        const char *value = NULL;
        int64_t number;
        int matched = 0;
        if (cli_is_help(argv[i])) {
            *help = 1;
            return TF_OK;
        }
#define OPTION(name) ((matched = cli_option(argc, argv, &i, name, &value, err)) != 0)
        if (OPTION("--model")) {
            if (matched < 0 || model_kind_parse(value, &c->config.kind, err) != TF_OK)
                return TF_ERR_INPUT;
            have_model = 1;
        } else if (OPTION("--data")) {
            c->data = value;
        } else if (OPTION("--epochs")) {
            if (matched < 0 || cli_parse_int("--epochs", value, 0, 100000000, &c->options.epochs, err) != TF_OK)
                return TF_ERR_INPUT;
        } else if (OPTION("--lr")) {
            char *end;
            if (matched < 0)
                return TF_ERR_INPUT;
            c->options.learning_rate = strtod(value, &end);
            if (end == value || *end || !(c->options.learning_rate > 0 && c->options.learning_rate < 1e3))
                return tf_error_set(err, TF_ERR_INPUT, "option --lr: \"%s\", expected a positive number", value);
        } else if (OPTION("--train-ratio")) {
            char *end;
            if (matched < 0)
                return TF_ERR_INPUT;
            c->options.train_ratio = strtod(value, &end);
            if (end == value || *end || !(c->options.train_ratio > 0 && c->options.train_ratio < 1))
                return tf_error_set(err, TF_ERR_INPUT, "option --train-ratio: \"%s\", expected a fraction in (0, 1)",
                                    value);
        } else if (OPTION("--hidden")) {
            if (matched < 0 || cli_parse_int("--hidden", value, 1, 65536, &c->config.hidden, err) != TF_OK)
                return TF_ERR_INPUT;
        } else if (OPTION("--k")) {
            if (matched < 0 || cli_parse_int("--k", value, 1, 16, &number, err) != TF_OK)
                return TF_ERR_INPUT;
            c->config.chebyshev_k = (int)number;
            have_k = 1;
        } else if (OPTION("--window")) {
            if (matched < 0 || cli_parse_int("--window", value, 0, INT64_MAX, &c->options.window, err) != TF_OK)
                return TF_ERR_INPUT;
        } else if (OPTION("--stride")) {
            if (matched < 0 || cli_parse_int("--stride", value, 1, INT64_MAX, &c->options.stride, err) != TF_OK)
                return TF_ERR_INPUT;
        } else if (OPTION("--batch")) {
            if (matched < 0 || cli_parse_int("--batch", value, 1, INT64_MAX, &c->options.batch, err) != TF_OK)
                return TF_ERR_INPUT;
        } else if (strcmp(argv[i], "--blocks") == 0) {
            c->options.batching = BATCH_ACROSS_BLOCKS;
        } else if (OPTION("--split")) {
            if (matched < 0)
                return TF_ERR_INPUT;
            if (strcmp(value, "window") != 0 && strcmp(value, "vertex") != 0)
                return tf_error_set(err, TF_ERR_INPUT, "option --split: \"%s\", expected window or vertex", value);
            c->split.on = strcmp(value, "vertex") == 0;
        } else if (OPTION("--partition")) {
            if (matched < 0 || partition_method_parse(value, &c->split.method, err) != TF_OK)
                return TF_ERR_INPUT;
            c->split.have_method = 1;
        } else if (OPTION("--mode")) {
            if (matched < 0)
                return TF_ERR_INPUT;
            if (strcmp(value, "cache") != 0 && strcmp(value, "exchange") != 0)
                return tf_error_set(err, TF_ERR_INPUT, "option --mode: \"%s\", expected cache or exchange", value);
            c->split.mode = strcmp(value, "cache") == 0 ? PARTITION_CACHE : PARTITION_EXCHANGE;
            c->split.have_mode = 1;
        } else if (OPTION("--partition-seed")) {
            if (matched < 0 || cli_parse_int("--partition-seed", value, 0, INT64_MAX, &number, err) != TF_OK)
                return TF_ERR_INPUT;
            c->split.seed = (uint64_t)number;
        } else if (strcmp(argv[i], "--incremental") == 0) {
            c->incremental = 1;
        } else if (strcmp(argv[i], "--profile") == 0) {
            c->profile = 1;
        } else if (OPTION("--cache")) {
            char *end;
            if (matched < 0)
                return TF_ERR_INPUT;
            c->inputs.capacity = strtod(value, &end);
            if (end == value || *end || !(c->inputs.capacity >= 0 && c->inputs.capacity <= 1))
                return tf_error_set(err, TF_ERR_INPUT, "option --cache: \"%s\", expected a fraction in [0, 1]", value);
            have_cache = 1;
        } else if (OPTION("--cache-policy")) {
            if (matched < 0 || cache_policy_parse(value, &c->inputs.policy, err) != TF_OK)
                return TF_ERR_INPUT;
            have_cache = 1;
        } else if (OPTION("--optimizer")) {
            if (matched < 0 || optimizer_kind_parse(value, &c->options.optimizer, err) != TF_OK)
                return TF_ERR_INPUT;
        } else if (OPTION("--sync")) {
            if (matched < 0 || sync_mode_parse(value, &c->async.mode, err) != TF_OK)
                return TF_ERR_INPUT;
        } else if (OPTION("--every")) {
            if (matched < 0 || cli_parse_int("--every", value, 1, INT64_MAX, &c->async.every, err) != TF_OK)
                return TF_ERR_INPUT;
            have_every = 1;
        } else if (OPTION("--staleness")) {
            if (matched < 0)
                return TF_ERR_INPUT;
            if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0)
                return tf_error_set(err, TF_ERR_INPUT, "option --staleness: \"%s\", expected 0 or 1 (Sven bounds "
                                                       "staleness to one step)",
                                    value);
            c->async.staleness = value[0] - '0';
            have_staleness = 1;
        } else if (OPTION("--stale-embeddings")) {
            if (matched < 0 || stale_schedule_parse(value, &c->stale, err) != TF_OK)
                return TF_ERR_INPUT;
            c->stale_embeddings = 1;
        } else if (OPTION("--replicas")) {
            if (matched < 0 || cli_parse_int("--replicas", value, 1, 1024, &number, err) != TF_OK)
                return TF_ERR_INPUT;
            c->replicas = (int)number;
            have_replicas = 1;
        } else if (OPTION("--straggler")) {
            if (matched < 0 || straggler_parse(value, &c->async.straggler, err) != TF_OK)
                return TF_ERR_INPUT;
        } else if (OPTION("--seed")) {
            if (matched < 0 || cli_parse_int("--seed", value, 0, INT64_MAX, &number, err) != TF_OK)
                return TF_ERR_INPUT;
            c->options.seed = (uint64_t)number;
        } else if (OPTION("--lags")) {
            if (matched < 0 || cli_parse_int("--lags", value, 1, 100000, &number, err) != TF_OK)
                return TF_ERR_INPUT;
            c->lags = (int)number;
        } else if (OPTION("--save")) {
            c->save = value;
        } else if (OPTION("--load")) {
            c->load = value;
        } else if (OPTION("--dump-outputs")) {
            c->dump = value;
        } else if (OPTION("--device")) {
            if (matched < 0)
                return TF_ERR_INPUT;
            if (strcmp(value, "cpu") != 0 && strcmp(value, "cuda") != 0)
                return tf_error_set(err, TF_ERR_INPUT, "option --device: \"%s\", expected cpu or cuda", value);
            c->gpu = strcmp(value, "cuda") == 0;
        } else if (OPTION("--impl")) {
            if (matched < 0)
                return TF_ERR_INPUT;
            if (strcmp(value, "ref") != 0 && strcmp(value, "opt") != 0)
                return tf_error_set(err, TF_ERR_INPUT, "option --impl: \"%s\", expected ref or opt", value);
            c->optimized = strcmp(value, "opt") == 0;
        } else if ((matched = train_scheduling_option(argc, argv, &i, &c->scheduling, err)) != 0) {
            /* --schedule and its options (cmd_train_schedule.c) */
        } else if ((matched = train_batching_option(argc, argv, &i, &c->batching, err)) != 0) {
            /* --batching hybrid and its options (cmd_train_schedule.c) */
        } else {
            return tf_error_set(err, TF_ERR_INPUT, "train: unexpected argument %s (see twofold train --help)", argv[i]);
        }
#undef OPTION
        if (matched < 0)
            return TF_ERR_INPUT;
    }
    if (!have_model || !c->data)
        return tf_error_set(err, TF_ERR_INPUT, "train: --model and --data are required (see twofold train --help)");
    if (have_cache && !c->incremental)
        return tf_error_set(err, TF_ERR_INPUT, "train: --cache and --cache-policy configure --incremental: add it");
    if (c->incremental && c->config.kind == MODEL_GCLSTM)
        return tf_error_set(err, TF_ERR_INPUT, "train: --incremental serves the aggregation of X_t, and GC-LSTM has "
                                               "none (its input term is X_t W; it convolves H only): use --model tgcn "
                                               "or gconvgru");
    if (c->incremental && c->config.kind != MODEL_TGCN && c->config.kind != MODEL_GCONVGRU)
        return tf_error_set(err, TF_ERR_INPUT, "train: --incremental serves the aggregation of X_t of T-GCN and "
                                               "GConvGRU (%s convolves with a weight that evolves): use --model tgcn "
                                               "or gconvgru",
                            model_kind_name(c->config.kind));
    if (have_k && c->config.kind != MODEL_GCONVGRU && c->config.kind != MODEL_GCLSTM)
        return tf_error_set(err, TF_ERR_INPUT, "train: --k is the Chebyshev order of gconvgru and gclstm; %s has none: "
                                               "drop it",
                            model_kind_name(c->config.kind));
    if (c->incremental && c->config.kind == MODEL_GCONVGRU && c->config.chebyshev_k < 2)
        return tf_error_set(err, TF_ERR_INPUT, "train: --incremental with gconvgru serves the Chebyshev terms L^ X_t "
                                               "..; with --k 1 the basis is X_t itself: use --k 2 or more");
    if (c->incremental && !c->optimized)
        return tf_error_set(err, TF_ERR_INPUT, "train: --incremental is the optimized twin's: add --impl opt");
    if (train_scheduling_check(&c->scheduling, c->optimized, c->incremental, err) != TF_OK)
        return TF_ERR_INPUT;
    const train_command_view view = {c->config.kind, c->scheduling.enabled, c->incremental, c->optimized,
                                     c->options.window, c->options.batch, c->options.seed};
    if (train_batching_check(&c->batching, &view, err) != TF_OK)
        return TF_ERR_INPUT;
    if (c->gpu && !c->optimized)
        return tf_error_set(err, TF_ERR_INPUT, "train: --device cuda runs the optimized twin: add --impl opt");
    if (vertex_split_check(&c->split, c, err) != TF_OK)
        return TF_ERR_INPUT;
    if (have_every && c->async.mode != SYNC_AVERAGE)
        return tf_error_set(err, TF_ERR_INPUT, "train: --every sets the averaging interval of --sync average: add it");
    if (have_staleness && c->async.mode == SYNC_AVERAGE)
        return tf_error_set(err, TF_ERR_INPUT,
                            "train: choose one kind of staleness: --staleness applies to --sync allreduce");
    if (have_replicas && c->optimized)
        return tf_error_set(err, TF_ERR_INPUT, "train: --replicas simulates ranks serially in the reference; under "
                                               "--impl opt the ranks are mpiexec's");
    if (have_replicas && c->async.mode != SYNC_AVERAGE && !c->stale_embeddings)
        return tf_error_set(err, TF_ERR_INPUT, "train: --replicas sets the ranks --sync average or --stale-embeddings "
                                               "simulate: add one");
    if ((c->scheduling.enabled || c->batching.hybrid) && (wants_async(c) || c->stale_embeddings || have_replicas))
        return tf_error_set(err, TF_ERR_INPUT, "train: --schedule and --batching hybrid take synchronous steps: drop "
                                               "--sync average, --staleness, --straggler, --stale-embeddings and "
                                               "--replicas");
    if (c->stale_embeddings && c->optimized && !c->split.on)
        return tf_error_set(err, TF_ERR_INPUT, "train: stale embeddings change what the exchange mode sends: use "
                                               "--split vertex --mode exchange (or --impl ref --replicas R for the "
                                               "serial simulation)");
    if (c->stale_embeddings && (c->async.mode == SYNC_AVERAGE || c->async.staleness))
        return tf_error_set(err, TF_ERR_INPUT, "train: choose one kind of staleness: --stale-embeddings with "
                                               "synchronous parameters");
    if (c->stale_embeddings && c->incremental)
        return tf_error_set(err, TF_ERR_INPUT, "train: --stale-embeddings and --incremental both change where T-GCN's "
                                               "aggregation comes from: choose one");
    if (c->async.straggler.rank != STRAGGLER_NONE && !c->optimized)
        return tf_error_set(err, TF_ERR_INPUT, "train: a straggler delays an MPI rank: use --impl opt");
    if ((c->save || c->load) && c->async.mode == SYNC_AVERAGE && c->replicas > 1)
        return tf_error_set(err, TF_ERR_INPUT, "train: --sync average keeps one Adam state per rank; a checkpoint "
                                               "holds one: save from a synchronous run");
    if (c->profile && (c->split.on || c->stale_embeddings || c->replicas > 1))
        return tf_error_set(err, TF_ERR_INPUT, "train: --profile wraps the kernels of one model trained by windows: "
                                               "drop %s",
                            c->split.on ? "--split vertex" : c->stale_embeddings ? "--stale-embeddings" : "--replicas");
    c->async.straggler.seed = c->options.seed;
#ifndef TWOFOLD_HAVE_CUDA
    if (c->gpu)
        return tf_error_set(err, TF_ERR_INPUT, "train: --device cuda: this twofold was built without CUDA (no nvcc "
                                               "at configure time, or -DTWOFOLD_CUDA=OFF)");
#endif
    return TF_OK;
}

/* A --load whose save was interrupted reads the complete checkpoint left beside it
 * (ref/models/checkpoint.h): say which, so the user knows where the epochs come from. */
static void note_interrupted_save(const char *load)
{
    char located[4096];
    if (checkpoint_interrupted(load, located))
        printf("note: the last save to %s was interrupted; loading the complete checkpoint %s\n", load, located);
}

/* predictions.npy and targets.npy for every snapshot, the model run in its windows. */
static int dump_outputs(const trainer *tr, const snapshot_seq *seq, const char *directory, tf_error *err)
{
    if (mkdir(directory, 0755) != 0 && errno != EEXIST)
        return tf_error_set(err, TF_ERR_INPUT, "%s: cannot create: %s", directory, strerror(errno));
    const int64_t t = seq->num_snapshots, n = seq->num_nodes, out = seq->target_width;
    tensor predictions, targets;
    int64_t shape[3] = {t, n, out};
    if (tensor_alloc(&predictions, 3, shape, err) != TF_OK)
        return TF_ERR_INPUT;
    if (tensor_alloc(&targets, 3, shape, err) != TF_OK) {
        tensor_free(&predictions);
        return TF_ERR_INPUT;
    }
    double train_mse, test_mse;
    char path[4096];
    int status = trainer_evaluate(tr, seq, 0, tr->train_snapshots, &train_mse, predictions.data, err);
    if (status == TF_OK)
        status = trainer_evaluate(tr, seq, tr->train_snapshots, t - tr->train_snapshots, &test_mse,
                                  predictions.data + tr->train_snapshots * n * out, err);
    for (int64_t s = 0; s < t; s++)
        memcpy(targets.data + s * n * out, seq->snapshots[s].targets.data, (size_t)(n * out) * sizeof(float));
    if (status == TF_OK)
        status = format_path(path, sizeof path, err, "%s/predictions.npy", directory);
    if (status == TF_OK)
        status = npy_write_tensor(path, &predictions, err);
    if (status == TF_OK)
        status = format_path(path, sizeof path, err, "%s/targets.npy", directory);
    if (status == TF_OK)
        status = npy_write_tensor(path, &targets, err);
    if (status == TF_OK)
        printf("wrote %s/predictions.npy and targets.npy [%lld][%lld][%lld] (snapshots 0..%lld train)\n", directory,
               (long long)t, (long long)n, (long long)out, (long long)tr->train_snapshots - 1);
    tensor_free(&predictions);
    tensor_free(&targets);
    return status;
}

static int train(const train_command *c, comm *group, tf_error *err);

int command_train(int argc, char **argv, tf_error *err)
{
    /* Event models (tgn, jodie) have their own trainer and options: hand over to
     * cmd_train_events.c. A name that is neither kind is reported here, listing both. */
    const char *model_name;
    model_kind kind;
    if (train_wants_event_model(argc, argv, &model_name))
        return command_train_events(argc, argv, err);
    if (model_name && model_kind_parse(model_name, &kind, NULL) != TF_OK)
        return tf_error_set(err, TF_ERR_INPUT,
                            "model \"%s\" is not one of tgcn, gconvgru, gclstm, evolvegcn (snapshot models), "
                            "tgn, jodie (event models)",
                            model_name);
    /* The snapshot models. */
    train_command c;
    int help = 0;
    const int parsed = parse_arguments(argc, argv, &c, &help, err);
    if (parsed == TF_OK && help) {
        fputs(train_usage, stdout);
        return TF_OK;
    }
    /* Under mpiexec -n R > 1 every rank starts MPI, even one with a bad option or --impl ref,
     * so that the ranks can compare their command lines and fail together with one line
     * (ranks_agree()) instead of leaving the others waiting in MPI_Init. */
    const int launched = ranks_launched();
    /* A save that cannot work is reported now, not after the training it would lose. */
    const int ready = parsed == TF_OK && c.save ? checkpoint_check_target(c.save, err) : parsed;
    if (launched <= 1 && ready != TF_OK)
        return TF_ERR_INPUT;
    if (launched <= 1 && !c.optimized)
        return train(&c, NULL, err);
    if (ready == TF_OK && !c.optimized)
        tf_error_set(err, TF_ERR_INPUT, "train: --impl ref runs one process, and mpiexec -n %d would start %d "
                                        "copies of the same run writing one --save: what runs distributed is "
                                        "--impl opt (windows shared by the ranks, gradients all-reduced)",
                     launched, launched);
    comm group;
    if (start_ranks(&group, err->code != TF_OK, err) != TF_OK)
        return TF_ERR_SYSTEM;
    if (err->code != TF_OK) /* this rank will not train: agree on the error and stop */
        return finish_ranks(&group, ranks_agree(&group, argc, argv, 0, err), err);
    if (c.split.on) {
        const train_vertex_split_request request = {c.data,    c.save,  c.load, c.lags, &c.config, &c.options,
                                                    &c.split, c.stale_embeddings ? &c.stale : NULL, argc, argv};
        return finish_ranks(&group, train_vertex_split(&request, &group, err), err);
    }
    return finish_ranks(&group, train(&c, &group, err), err);
}

/* Training proper; `group` is NULL for the reference, the ranks for the optimized twin. */
static int train(const train_command *cp, comm *group, tf_error *err)
{
    train_command c = *cp;
    const int speaks = !group || group->rank == 0; /* only rank 0 prints and writes files */
    cli_progress_state progress = {0, ""};
    dataset_options data_options = {c.lags, cli_progress, &progress, NULL, NULL};
    dataset d;
    int loaded = dataset_load(c.data, &data_options, &d, err);
    if (loaded == TF_OK && d.kind != DATASET_SNAPSHOTS) {
        dataset_free(&d);
        loaded = tf_error_set(err, TF_ERR_INPUT, "train: %s is an event stream; model %s needs snapshots", c.data,
                              model_kind_name(c.config.kind));
    }
    /* The ranks compare options and data before their first collective (ranks_agree()). */
    if ((loaded = ranks_agree_on_data(group, c.argc, c.argv, loaded, &d, err)) != TF_OK)
        return loaded;
    const snapshot_seq *seq = &d.snapshots;
    /* The reference's --sync average trains R replicas serially (ref/async.h); its replica 0 is
     * the model reported, saved and dumped. Every other run trains one trainer. */
    const int simulate = !group && c.async.mode == SYNC_AVERAGE;
    trainer single;
    replica_set replicas;
    memset(&single, 0, sizeof single);
    memset(&replicas, 0, sizeof replicas);
    int status = simulate ? replica_set_create(&replicas, seq, &c.config, &c.options, c.replicas, c.async.every, err)
                          : trainer_create(&single, seq, &c.config, &c.options, err);
    trainer *tr = simulate ? replicas.replicas : &single;
    if (status != TF_OK) {
        simulate ? replica_set_free(&replicas) : trainer_free(&single);
        dataset_free(&d);
        return status;
    }
    if (c.load && speaks)
        note_interrupted_save(c.load);
    if (c.load) /* only one replica: checked with the options */
        status = trainer_load(tr, c.load, err);
    async_trainer async;
    memset(&async, 0, sizeof async);
    /* --stale-embeddings: the model runs on the simulation's kernels (ref/async_embeddings.h). */
    stale_simulation stale;
    memset(&stale, 0, sizeof stale);
    int32_t *owner = NULL;
    if (status == TF_OK && c.stale_embeddings) {
        if (!(owner = tf_alloc((size_t)seq->num_nodes, sizeof(int32_t), "owners", err)))
            status = TF_ERR_INPUT;
        for (int64_t v = 0; status == TF_OK && v < seq->num_nodes; v++)
            owner[v] = (int32_t)(v % c.replicas);
        if (status == TF_OK)
            status = stale_simulation_create(&stale, seq, owner, c.replicas, &c.stale, &ref_kernels, err);
        if (status == TF_OK)
            tr->model.kernels = &stale.table;
    }
    const int asynchronous = group && wants_async(&c);
    if (status == TF_OK && asynchronous && group->size > 1 && c.async.mode == SYNC_AVERAGE && (c.save || c.load))
        status = tf_error_set(err, TF_ERR_INPUT, "train: --sync average keeps one Adam state per rank; a checkpoint "
                                                 "holds one: save from a synchronous run");
#ifdef TWOFOLD_HAVE_CUDA
    cuda_context gpu;
    memset(&gpu, 0, sizeof gpu);
#endif
    if (status == TF_OK && group) {
        status = asynchronous ? opt_async_create(&async, tr, group, &c.async, err)
                              : opt_trainer_parallel(tr, group, err);
#ifdef TWOFOLD_HAVE_CUDA
        int devices = c.gpu ? cuda_device_count() : 0;
        if (status == TF_OK && c.gpu && devices == 0 && speaks)
            printf("--device cuda: no GPU present (or no driver); running the CPU kernels\n");
        if (status == TF_OK && devices > 0)
            status = cuda_context_create(&gpu, group->local_rank % devices, err);
        if (status == TF_OK && devices > 0) {
            cuda_kernels_bind(&gpu);
            tr->model.kernels = &cuda_kernels;
            if (speaks)
                printf("--device cuda: kernels on %s (compute capability %d.%d), one GPU per rank among %d\n",
                       gpu.name, gpu.compute_major, gpu.compute_minor, devices);
        }
#endif
        if (status == TF_OK && c.scheduling.enabled)
            status = train_scheduling_start(&c.scheduling, tr, seq, group, tr->epoch > 0, err);
        else if (status == TF_OK && speaks && group->size > c.options.batch)
            printf("note: %lld window(s) per step for %d ranks: %d rank(s) idle in every step (use --batch %d)\n",
                   (long long)c.options.batch, group->size, group->size - (int)c.options.batch, group->size);
    }
    incremental_inputs inputs;
    memset(&inputs, 0, sizeof inputs);
    if (status == TF_OK && c.incremental) {
        double built = wall_seconds();
        status = incremental_inputs_create(&inputs, seq, tr, group, &c.inputs, err);
        if (status == TF_OK)
            tr->model.inputs = &inputs.source;
        if (status == TF_OK && speaks)
            printf("incremental inputs (%s): deltas of %lld snapshots built in %.3f s; cache %s, %.0f%% of the "
                   "aggregations; threshold %g entries per edge, refresh every %lld snapshots\n",
                   inputs.kind == AGGREGATOR_CHEBYSHEV ? "GConvGRU's Chebyshev terms of X_t" : "T-GCN's A^ X_t",
                   (long long)seq->num_snapshots, wall_seconds() - built, cache_policy_name(c.inputs.policy),
                   100 * c.inputs.capacity, c.inputs.engine.threshold, (long long)c.inputs.engine.refresh_interval);
    }
    if (status == TF_OK && c.batching.hybrid)
        status = train_batching_start(&c.batching, tr, seq, group, err);
    if (status == TF_OK && speaks) {
        const int64_t train = tr->train_snapshots, window = c.options.window ? c.options.window : train;
        printf("model %s (state width %lld, %lld parameters), data %s: %lld snapshots x %lld vertices x %lld "
               "features\n",
               model_kind_name(c.config.kind), (long long)model_state_width(&tr->model),
               (long long)parameters_size(&tr->model.parameters), d.name, (long long)seq->num_snapshots,
               (long long)seq->num_nodes, (long long)seq->feature_width);
        char per_step[64];
        snprintf(per_step, sizeof per_step,
                 c.scheduling.enabled ? "steps from --schedule" : c.batching.hybrid ? "%lld hybrid batches per step"
                                                                                    : "%lld per step",
                 (long long)c.options.batch);
        printf("train snapshots 0..%lld, test %lld..%lld; windows of %lld, stride %lld, %s; Adam lr %g; "
               "seed %llu%s\n",
               (long long)train - 1, (long long)train, (long long)seq->num_snapshots - 1, (long long)window,
               (long long)(c.options.stride ? c.options.stride : window), per_step,
               c.options.learning_rate, (unsigned long long)c.options.seed, tr->epoch ? " (resumed)" : "");
        if (tr->epoch)
            printf("resuming after epoch %lld from %s\n", (long long)tr->epoch, c.load);
        if (c.load && tr->epoch >= c.options.epochs)
            printf("note: --epochs %lld is the total to reach and the checkpoint is at epoch %lld: no epoch to "
                   "train; give --epochs above %lld to train on\n",
                   (long long)c.options.epochs, (long long)tr->epoch, (long long)tr->epoch);
        if (c.stale_embeddings) {
            char name[64];
            printf("stale embeddings: %s on %d simulated rank(s), vertex v on rank v mod %d\n",
                   stale_schedule_name(&c.stale, name, sizeof name), c.replicas, c.replicas);
        }
        if (wants_async(&c)) {
            char slow[64];
            const int ranks = group ? group->size : c.replicas;
            if (c.async.mode == SYNC_AVERAGE)
                printf("sync: average every %lld step(s) and at each epoch's end over %d %s, weighted by windows "
                       "trained; %s optimizer per replica",
                       (long long)c.async.every, ranks, group ? "rank(s)" : "replica(s) simulated serially",
                       optimizer_kind_name(c.options.optimizer));
            else
                printf("sync: gradient all-reduce with staleness %d", c.async.staleness);
            printf("; straggler %s\n", straggler_name(&c.async.straggler, slow, sizeof slow));
        }
    }
    /* --profile: the model runs on a table that counts every kernel call (opt/profile.h), for the
     * epochs only; the collectives are counted by the comm. */
    const kernels *unprofiled = tr->model.kernels;
    const uint64_t comm_calls = group ? group->allreduce_calls : 0, comm_bytes = group ? group->bytes_sent : 0;
    const double comm_seconds = group ? group->allreduce_seconds : 0;
    double epoch_seconds = 0;
    if (c.profile)
        tr->model.kernels = profile_wrap(unprofiled);
    double started = wall_seconds();
    int64_t first_epoch = tr->epoch;
    while (status == TF_OK && tr->epoch < c.options.epochs) {
        epoch_report report;
        double epoch_started = wall_seconds();
        if (c.scheduling.enabled)
            status = train_scheduling_epoch(&c.scheduling, tr, group, seq, &report, err);
        else if (c.batching.hybrid)
            status = train_batching_epoch(&c.batching, tr, group, seq, &report, err);
        else if (asynchronous)
            status = opt_async_epoch(&async, seq, &report, err);
        else if (group)
            status = opt_trainer_epoch(tr, group, seq, &report, err);
        else if (simulate)
            status = ref_local_average_epoch(&replicas, seq, &report, err);
        else if (c.async.staleness)
            status = ref_delayed_epoch(tr, seq, &report, err);
        else if (c.stale_embeddings)
            status = ref_stale_embeddings_epoch(&stale, tr, seq, &report, err);
        else
            status = trainer_epoch(tr, seq, &report, err);
        if (status == TF_OK) /* stop at the first epoch that overflowed: its state could not be loaded again */
            status = trainer_check_finite(tr, &report, err);
        epoch_seconds += wall_seconds() - epoch_started;
        if (status != TF_OK)
            break;
        if (!speaks)
            continue;
        printf("epoch %4lld  train loss %.6f  test MSE %.6f  (%.3f s)\n", (long long)report.epoch, report.train_loss,
               report.test_mse, wall_seconds() - epoch_started);
        fflush(stdout);
        cli_progress(&progress, "training epochs", tr->epoch - first_epoch, c.options.epochs - first_epoch);
    }
    tr->model.kernels = unprofiled;
    if (c.profile && group)
        profile_add(PROFILE_COMMUNICATION, (int64_t)(group->allreduce_calls - comm_calls),
                    group->allreduce_seconds - comm_seconds, (double)(group->bytes_sent - comm_bytes));
    if (status == TF_OK) {
        double test_mse;
        const int64_t test = seq->num_snapshots - tr->train_snapshots;
        status = group ? opt_trainer_evaluate(tr, group, seq, tr->train_snapshots, test, &test_mse, err)
                       : trainer_evaluate(tr, seq, tr->train_snapshots, test, &test_mse, NULL, err);
        if (status == TF_OK && speaks)
            printf("final test MSE %.6f after %lld epochs (%.2f s)\n", test_mse, (long long)tr->epoch,
                   wall_seconds() - started);
    }
    if (status == TF_OK && c.scheduling.enabled)
        status = train_scheduling_finish(&c.scheduling, group, err);
    if (status == TF_OK)
        train_batching_finish(&c.batching, group);
    if (status == TF_OK && group && speaks)
        printf("communication: rank 0 sent %.0f bytes in %llu collectives\n", (double)group->bytes_sent,
               (unsigned long long)group->calls);
    if (status == TF_OK && c.stale_embeddings) {
        const stale_stats *st = &stale.stats;
        const double fresh = st->bytes_fresh ? (double)st->bytes_fresh : 1;
        char name[64];
        printf("stale embeddings %s on %d simulated rank(s): %llu of the exchange mode's %llu bytes sent, %.2f%% "
               "saved (exact reuse %.2f%%, stale reuse %.2f%%, bitmaps -%.2f%%); worst d/theta %.4f\n",
               stale_schedule_name(&c.stale, name, sizeof name), c.replicas, (unsigned long long)st->bytes_sent,
               (unsigned long long)st->bytes_fresh, 100.0 * (1.0 - (double)st->bytes_sent / fresh),
               100.0 * (double)st->bytes_exact / fresh, 100.0 * (double)st->bytes_stale / fresh,
               100.0 * (double)st->bytes_bitmap / fresh, st->worst_ratio);
    }
    if (status == TF_OK && asynchronous && speaks)
        printf("rank 0 spent %.3f s in the steps' exchanges (all-reduce waits or averages)\n", async.blocked_seconds);
    if (status == TF_OK && c.incremental && speaks)
        printf("incremental inputs (rank 0): cache hit rate %.3f (%lld hits, %lld misses, %lld evicted); engine: %lld "
               "full recomputes (%lld above the threshold), %lld deltas\n",
               incremental_cache_hit_rate(&inputs.cache), (long long)inputs.cache.stats.hits,
               (long long)inputs.cache.stats.misses, (long long)inputs.cache.stats.evicted,
               (long long)inputs.engine.stats.full, (long long)inputs.engine.stats.fallbacks,
               (long long)inputs.engine.stats.incremental);
    if (status == TF_OK && c.profile && speaks && tr->epoch == first_epoch) {
        printf("profile: no epoch ran (--epochs %lld, and the run started at epoch %lld): nothing to profile\n",
               (long long)c.options.epochs, (long long)first_epoch);
    } else if (status == TF_OK && c.profile && speaks) {
        profile_peaks peaks;
        char whose[96];
        snprintf(whose, sizeof whose, "--impl %s%s, %s", c.optimized ? "opt" : "ref", c.gpu ? " --device cuda" : "",
                 group && group->size > 1 ? "rank 0's own (each rank counts its own)" : "this process's");
        status = profile_measure_peaks(profile_counters_now(), &peaks, err);
        if (status == TF_OK)
            profile_print(stdout, profile_counters_now(), &peaks, epoch_seconds, tr->epoch - first_epoch, whose);
    }
    if (status == TF_OK && c.save && speaks) {
        status = trainer_save(tr, c.save, err);
        if (status == TF_OK)
            printf("saved checkpoint %s\n", c.save);
    }
    if (status == TF_OK && c.dump && speaks)
        status = dump_outputs(tr, seq, c.dump, err);
    simulate ? replica_set_free(&replicas) : trainer_free(&single);
    opt_async_free(&async);
    train_scheduling_free(&c.scheduling);
    train_batching_free(&c.batching);
    stale_simulation_free(&stale);
    free(owner);
    incremental_inputs_free(&inputs);
#ifdef TWOFOLD_HAVE_CUDA
    cuda_context_destroy(&gpu);
#endif
    dataset_free(&d);
    return status;
}
