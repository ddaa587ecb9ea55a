/* twofold train: the option table of every model (opt/cli/options.h), its help pages, and the
 * rules between options that a table cannot state. */
#include <stdio.h>
#include <string.h>

#include "opt/async_pipeline.h"
#include "opt/cli/commands.h"
#include "opt/cli/train.h"
#include "ref/models/model.h"

/* --model's words, in train_model's order: the model table's, then tgn and jodie (train_table_fill()). */
static option_choice train_models[TRAIN_MODELS + 1];

static const option_choice implementations[] = {{"ref", 0}, {"opt", 1}, {NULL, 0}};
static const option_choice devices[] = {{"cpu", 0}, {"cuda", 1}, {NULL, 0}};
static const option_choice splits[] = {{"window", 0}, {"vertex", 1}, {NULL, 0}};
static const option_choice modes[] = {{"cache", PARTITION_CACHE}, {"exchange", PARTITION_EXCHANGE}, {NULL, 0}};
static const option_choice policies[] = {{"reinc", CACHE_REINC}, {"lru", CACHE_LRU}, {NULL, 0}};
static const option_choice optimizers[] = {{"adam", OPTIMIZER_ADAM}, {"sgd", OPTIMIZER_SGD}, {NULL, 0}};
static const option_choice tasks[] = {{"regression", TASK_REGRESSION}, {"link", TASK_LINK},
                                      {"classify", TASK_CLASSIFY},      {NULL, 0}};
static const option_choice syncs[] = {{"allreduce", SYNC_ALLREDUCE}, {"average", SYNC_AVERAGE}, {NULL, 0}};
static const option_choice schedules[] = {{"roundrobin", SCHEDULE_ROUNDROBIN}, {"lpt", SCHEDULE_LPT},
                                          {"greedy", SCHEDULE_GREEDY},         {"ilp", SCHEDULE_ILP},
                                          {NULL, 0}};
static const option_choice batchings[] = {{"snapshot", 0}, {"hybrid", 1}, {NULL, 0}};
static const option_choice adjusts[] = {{"fixed", 0}, {"dqn", 1}, {NULL, 0}};
static const option_choice negatives[] = {{"all", EVENT_NEGATIVES_ALL}, {"destinations", EVENT_NEGATIVES_DESTINATIONS},
                                          {NULL, 0}};
static const option_choice memory_updates[] = {{"entry", EVENT_MEMORY_PER_ENTRY}, {"vertex", EVENT_MEMORY_PER_VERTEX},
                                               {NULL, 0}};
static const option_choice dispatches[] = {{"sven", DISPATCH_SVEN}, {"naive", DISPATCH_NAIVE},
                                           {"depcache", DISPATCH_DEPCACHE}, {"depcomm", DISPATCH_DEPCOMM},
                                           {NULL, 0}};

/* ---- the values a hook parses ---------------------------------------------------------------------- */

/* Sven bounds the delay of a gradient to one step (both model families). */
#define STALENESS_EXPECTED "0 or 1 (Sven bounds staleness to one step)"

static int parse_staleness(const char *value, void *field)
{
    const int staleness = value[0] - '0';
    if ((value[0] != '0' && value[0] != '1') || value[1] != '\0')
        return 0;
    memcpy(field, &staleness, sizeof staleness);
    return 1;
}

static int parse_straggler(const char *value, void *field)
{
    return options_plain_numbers(value) && straggler_parse(value, field, NULL) == TF_OK;
}

static int parse_stale_schedule(const char *value, void *field)
{
    return options_plain_numbers(value) && stale_schedule_parse(value, field, NULL) == TF_OK;
}

static int parse_placement(const char *value, void *field)
{
    const placement_method *method;
    int64_t interval;
    const char *file;
    if (placement_parse(value, &method, &interval, &file, NULL) != TF_OK)
        return 0;
    memcpy(field, &value, sizeof value);
    return 1;
}

#define AT(member) OPTION_FIELD(train_command, member)
/* --fanout: 1 to MINIBATCH_MAX_HOPS positive whole numbers (ref/minibatch.h). */
#define FANOUT_EXPECTED "1 to 4 whole numbers >= 1 separated by commas, one per hop (e.g. 25,10)"
static int parse_fanout(const char *value, void *field)
{
    tf_error err;
    return minibatch_fanout_parse(value, field, &err) == TF_OK;
}

#define SNAPSHOT .models = SNAPSHOT_MODELS
#define EVENTS .models = EVENT_MODELS
/* Attention and its sampled neighbours: JODIE has neither (its embedding is the memory projected in
 * time), so these would be taken and ignored. TGN's embedding width is its own: JODIE's and APAN's
 * embeddings are their memory. APAN's mailbox holds M mails; TGN's and JODIE's one. */
#define ATTENTION_MODELS .models = TRAIN_MODEL(TRAIN_TGN) | TRAIN_MODEL(TRAIN_APAN), \
                         .why = "JODIE has no attention: its embedding is the memory projected in time", \
                         .why_for = TRAIN_MODEL(TRAIN_JODIE)
#define TGN_ONLY .models = TRAIN_MODEL(TRAIN_TGN), .why = "JODIE's and APAN's embeddings are as wide as the memory", \
                 .why_for = TRAIN_MODEL(TRAIN_JODIE) | TRAIN_MODEL(TRAIN_APAN)
#define APAN_ONLY .models = TRAIN_MODEL(TRAIN_APAN), .why = "TGN's and JODIE's mailboxes hold one mail", \
                  .why_for = TRAIN_MODEL(TRAIN_TGN) | TRAIN_MODEL(TRAIN_JODIE)

/* Every option of every model, in the order of both help pages: an option the two families take
 * with other fields, ranges or help has one entry for each (SNAPSHOT, EVENTS), side by side. */
static option_spec train_options_table[] = {
    /* its help lists the model table (train_table_fill()) */
    {"--model", OPTION_CHOICE, AT(model), .choices = train_models, .required = 1, SNAPSHOT, .value_name = "M"},
    {"--model", OPTION_CHOICE, AT(model), .choices = train_models, .required = 1, EVENTS, .value_name = "M",
     .help = "tgn (GRU memory, temporal attention), jodie (RNN memory, time\n"
             "projection) or apan (attention over a mailbox of M mails, mails\n"
             "delivered to the sampled neighbours)"},
    {"--data", OPTION_TEXT, AT(data), .required = 1, SNAPSHOT, .value_name = "D",
     .help = "bundled name, file or generator spec (see twofold info --help)"},
    {"--data", OPTION_TEXT, AT(data), .required = 1, EVENTS, .value_name = "D",
     .help = "an event stream: bundled name (wikipedia, collegemsg, enron, bitcoin_otc,\n"
             "bitcoin_alpha), file, or events: generator spec"},
    {"--labels", OPTION_TEXT, AT(labels), SNAPSHOT, .value_name = "FILE",
     .help = "class labels for --task classify, replacing the data's own: one line\n"
             "`snapshot vertex class` per labelled vertex (blank-separated whole\n"
             "numbers, # comments); a vertex a snapshot does not list is unlabelled"},
    {"--epochs", OPTION_WHOLE, AT(options.epochs), .min = 0, .max = 100000000, SNAPSHOT, .value_name = "E",
     .help = "epochs to train (default 50; with --load, the total to reach)"},
    {"--epochs", OPTION_WHOLE, AT(events.options.epochs), .min = 0, .max = 100000000, EVENTS, .value_name = "E",
     .help = "epochs (default 3; with --load, the total to reach)"},
    {"--lr", OPTION_NUMBER, AT(options.learning_rate), .low = 0, .high = 1e3, .ends = OPTION_LOW_OPEN | OPTION_HIGH_OPEN,
     SNAPSHOT, .value_name = "X", .help = "Adam learning rate (default 0.01)"},
    {"--lr", OPTION_NUMBER, AT(events.options.learning_rate), .low = 0, .high = 1e3,
     .ends = OPTION_LOW_OPEN | OPTION_HIGH_OPEN, EVENTS, .value_name = "X",
     .help = "Adam learning rate (default 1e-3; TGL uses 1e-4 with batches of 600)"},
    /* the models of --hidden, --k, --layers and --incremental come from the model table (train_table_fill()) */
    {"--hidden", OPTION_WHOLE, AT(config.hidden), .min = 1, .max = 65536, .value_name = "H",
     .why = "EvolveGCN-O's state is its weight matrix, as wide as the features",
     .help = "state width (default 32; EvolveGCN-O's is the feature width)"},
    {"--k", OPTION_WHOLE, AT(config.chebyshev_k), .min = 1, .max = 16, .value_name = "K",
     .help = "Chebyshev order of the Chebyshev models, DCRNN's diffusion terms per walk (default 2)"},
    {"--layers", OPTION_WHOLE, AT(config.layers), .min = 1, .max = 16, .value_name = "L",
     .help = "stacked pairs of a stacked model (gcrnm1, cdgcn: default 2, as ReInc stacks)"},
    {"--window", OPTION_WHOLE, AT(options.window), .min = 0, .max = INT64_MAX, SNAPSHOT, .value_name = "W",
     .help = "snapshots per window, state from zero in each (default 0: the whole split)"},
    {"--stride", OPTION_WHOLE, AT(options.stride), .min = 1, .max = INT64_MAX, SNAPSHOT, .value_name = "S",
     .help = "snapshots between window starts (default: the window, no overlap)"},
    {"--batch", OPTION_WHOLE, AT(options.batch), .min = 1, .max = INT64_MAX, SNAPSHOT, .value_name = "B",
     .help = "windows per optimizer step, gradients averaged (default 1)"},
    {"--batch", OPTION_WHOLE, AT(events.options.batch_size), .min = 1, .max = 100000000, EVENTS, .value_name = "B",
     .help = "events per batch (default 200)"},
    {"--blocks", OPTION_FLAG, AT(blocks), SNAPSHOT,
     .help = "cut the epoch's windows into B consecutive blocks, step k taking the\n"
             "k-th window of each (ReInc's placement: under mpiexec -n B each rank\n"
             "walks its own block of consecutive snapshots)"},
    {"--memory-dim", OPTION_WHOLE, AT(events.config.memory_width), .min = 1, .max = 65536, EVENTS, .value_name = "D",
     .help = "memory width (default 32; TGL's is 100)"},
    {"--time-dim", OPTION_WHOLE, AT(events.config.time_width), .min = 1, .max = 65536, EVENTS, .value_name = "D",
     .help = "width of the time encodings (default 32; TGL's is 100)"},
    {"--embedding-dim", OPTION_WHOLE, AT(events.config.embedding_width), .min = 1, .max = 65536, TGN_ONLY,
     .value_name = "D", .help = "TGN's attention output width (default 32; JODIE's is the memory width)"},
    {"--heads", OPTION_WHOLE, AT(events.config.heads), .min = 1, .max = 1024, ATTENTION_MODELS, .value_name = "H",
     .help = "attention heads (default 2)"},
    {"--neighbours", OPTION_WHOLE, AT(events.config.neighbours), .min = 1, .max = 100000, ATTENTION_MODELS,
     .value_name = "K", .help = "most recent neighbours per vertex (default 10): TGN attends over\n"
                                "them, APAN delivers the endpoints' mails to them"},
    {"--mails", OPTION_WHOLE, AT(events.config.mails), .min = 1, .max = 1024, APAN_ONLY, .value_name = "M",
     .help = "APAN's mails per mailbox, a ring in arrival order (default 10)"},
    {"--memory-update", OPTION_CHOICE, AT(events.config.memory_update), .choices = memory_updates, EVENTS,
     .value_name = "U",
     .help = "entry: a vertex's memory is updated once per batch entry at that entry's\n"
             "time (default, TGL's); vertex: once per vertex of the batch from its\n"
             "latest message at that message's time (the TGN paper's code, PyTorch\n"
             "Geometric's TGNMemory)"},
    {"--edge-features", OPTION_TEXT, AT(events.edge_features), EVENTS, .value_name = "F",
     .help = "edge features from F.npy, float32 [events][columns], instead of the\n"
             "dataset's own (bitcoin_*: the rating); 'none' uses no features"},
    {"--edge-columns", OPTION_TEXT, AT(events.edge_columns), EVENTS, .value_name = "L",
     .help = "for an event CSV, the header columns to take as edge features, comma-\n"
             "separated, or 'none' (default: those named feat... or f<digits>, and\n"
             "JODIE's feature list; other columns are ignored, and a line says which);\n"
             "not with --edge-features"},
    {"--negatives", OPTION_CHOICE, AT(events.options.negatives), .choices = negatives, EVENTS, .value_name = "N",
     .help = "all: negative destinations drawn from every vertex (default, TGL's);\n"
             "destinations: only from vertices that are some event's destination\n"
             "(TGN's code; on Wikipedia every negative is then an item)"},
    {"--train-ratio", OPTION_NUMBER, AT(options.train_ratio), .low = 0, .high = 1,
     .ends = OPTION_LOW_OPEN | OPTION_HIGH_OPEN, SNAPSHOT, .value_name = "R",
     .help = "fraction of snapshots for training (default 0.8)"},
    {"--seed", OPTION_WHOLE, AT(options.seed), .min = 0, .max = INT64_MAX, SNAPSHOT, .value_name = "S",
     .help = "initial parameters (default 1)"},
    {"--seed", OPTION_WHOLE, AT(events.options.seed), .min = 0, .max = INT64_MAX, EVENTS, .value_name = "S",
     .help = "initial parameters and training negatives (default 1)"},
    {"--lags", OPTION_WHOLE, AT(lags), .min = 1, .max = 100000, SNAPSHOT, .value_name = "L",
     .help = "lagged features for lagged formats (default: the format's own)"},
    {"--save", OPTION_TEXT, AT(save), .value_name = "DIR",
     .help = "write a checkpoint at the end: parameters as NAME.npy (PyTorch\n"
             "names; TGL's for tgn and jodie), Adam state and epoch (and an event\n"
             "model's seed); checked before training, and a kill at any instant\n"
             "leaves a complete checkpoint --load finds (DIR.partial and\n"
             "DIR.previous are the save's own names; saves to one DIR take turns;\n"
             "not a symbolic link, ., or ..)"},
    {"--load", OPTION_TEXT, AT(load), .value_name = "DIR",
     .help = "start from a checkpoint (resumes epoch and Adam state, and an event\n"
             "model's seed, if present); a snapshot model's model, data, window,\n"
             "stride and split must be this run's; an event model with nothing\n"
             "left to train evaluates the loaded parameters"},
    {"--dump-outputs", OPTION_TEXT, AT(dump), SNAPSHOT, .value_name = "DIR",
     .help = "write predictions.npy and targets.npy [snapshots][vertices][targets]"},
    {"--impl", OPTION_CHOICE, AT(optimized), .choices = implementations, SNAPSHOT, .value_name = "I",
     .help = "ref (default: the reference, one thread) or opt (the optimized twin:\n"
             "BLAS and OpenMP kernels; under mpiexec -n R, windows shared by R ranks,\n"
             "gradients all-reduced; use --batch >= R so every rank has a window;\n"
             "OMP_NUM_THREADS=T shares a rank's windows among T threads, best with\n"
             "OMP_WAIT_POLICY=passive and --batch >= R x T)"},
    {"--impl", OPTION_CHOICE, AT(optimized), .choices = implementations, EVENTS, .value_name = "I",
     .help = "ref (default: the reference, one process) or opt (the distributed twin:\n"
             "node memory partitioned over the ranks of mpiexec, BLAS products; the\n"
             "reference's memory, scores and gradients within fp for the same parameters;\n"
             "chapters 01 and 04)"},
    {"--dispatch", OPTION_CHOICE, AT(events.mode), .choices = dispatches, .needs = "--impl opt", EVENTS,
     .value_name = "M",
     .help = "with --impl opt, how node memory moves: sven (default: each unique row\n"
             "once, each winning write once), naive (one row per occurrence), depcache\n"
             "(a replica per rank, writes all-gathered), depcomm (owners run the memory\n"
             "updater per occurrence)"},
    {"--placement", OPTION_PARSED, AT(events.placement), .parse = parse_placement,
     .expected = "range, interval, interval:G with a whole G >= 1, hash, random, reflexbicut or file:PATH",
     .needs = "--impl opt", EVENTS, .value_name = "P",
     .help = "with --impl opt, which rank owns a vertex's row: hash (default), range,\n"
             "interval[:G] (blocks of G ids dealt round-robin, G = 16), random (seeded),\n"
             "reflexbicut (Sven's Re-FlexBiCut on the demand measured first, chapter 06)\n"
             "or file:PATH (an int64 .npy of one rank per vertex id)"},
    {"--staleness", OPTION_PARSED, AT(events.options.staleness), .parse = parse_staleness,
     .expected = STALENESS_EXPECTED, EVENTS, .value_name = "S",
     .help = "0 (default) or 1: each Adam step applies the previous batch's gradient\n"
             "(Sven Eq. 13; the last one where the training split ends); node memory is\n"
             "never stale. With --impl opt the gradient all-reduce of a batch overlaps\n"
             "the next batch (chapter 05)"},
    {"--prefetch", OPTION_WHOLE, AT(events.prefetch), .min = 0, .max = BATCH_QUEUE_MAX_DEPTH, .needs = "--impl opt",
     EVENTS, .value_name = "D",
     .help = "with --impl opt, build the next D batches' plans (negatives, entries,\n"
             "Algorithm 2, request lists) on a producer thread, D in 0..4 (default 0:\n"
             "each when it runs); bitwise the same training for every D"},
    {"--micro-batches", OPTION_WHOLE, AT(events.micro_batches), .min = 1, .max = MICROBATCH_MAX,
     .needs = "--impl opt --dispatch sven", EVENTS, .value_name = "N",
     .help = "with --impl opt --dispatch sven, cut each rank's part of a training batch\n"
             "into N micro-batches (1..8), the row fetch of one overlapping the compute\n"
             "of the one before; the same memory bit for bit, gradients summed in\n"
             "another order (equal within float rounding; N = 1: bitwise)"},
    {"--device", OPTION_CHOICE, AT(gpu), .choices = devices, .needs = "--impl opt", .when = "cuda", SNAPSHOT,
     .value_name = "D",
     .help = "cpu (default) or cuda: with --impl opt, run the heavy kernels on this\n"
             "rank's GPU (staging host data each call); without a GPU, says so and\n"
             "runs the CPU kernels"},
    {"--incremental", OPTION_FLAG, AT(incremental), .needs = "--impl opt",
     .why = "it serves the aggregation of X_t; GC-LSTM has none, its input term being X_t W, EvolveGCN "
            "convolves with a weight that evolves, attention (GAT-LSTM, DySAT) is not a fixed linear "
            "operator (its weights are computed from W X_t)",
     .help = "with --impl opt: take the aggregation of X_t (A^ X_t of the GCN\n"
             "models; the Chebyshev terms L^ X_t, ... or DCRNN's diffusions on\n"
             "both walks, with --k 2 or more) from ReInc's incremental engine\n"
             "behind its cache instead of recomputing it in every window (gclstm\n"
             "has none: its input term is X_t W)"},
    {"--cache", OPTION_NUMBER, AT(inputs.capacity), .low = 0, .high = 1, .configures = "--incremental", SNAPSHOT,
     .value_name = "F",
     .help = "with --incremental: cache size as a fraction of all snapshots'\n"
             "aggregations (default 1; 0 = no cache)"},
    {"--cache-policy", OPTION_CHOICE, AT(inputs.policy), .choices = policies, .configures = "--incremental", SNAPSHOT,
     .value_name = "P", .help = "with --incremental: reinc (default, ReInc's F/S - I) or lru"},
    {"--minibatch", OPTION_WHOLE, AT(minibatch.size), .min = 1, .max = INT32_MAX, SNAPSHOT, .value_name = "N",
     .help = "ReInc's training (chapter 02): mini-batches of N target vertices, each\n"
             "over a seeded sampled computational graph drawn at snapshot 0 and then\n"
             "changed only by the deltas restricted to it; every window of the epoch\n"
             "runs on one mini-batch before the next is sampled (sequence-first), the\n"
             "loss over its targets; evaluation on the full graphs. With --impl opt\n"
             "--incremental each mini-batch has its own engine and cache"},
    {"--fanout", OPTION_PARSED, AT(minibatch), .parse = parse_fanout, .expected = FANOUT_EXPECTED,
     .configures = "--minibatch", SNAPSHOT, .value_name = "F1,F2",
     .help = "with --minibatch: in-edges drawn per vertex at each hop, hop 1 first\n"
             "(default 25,10, ReInc's; the list's length is the number of hops)"},
    {"--split", OPTION_CHOICE, AT(split.on), .choices = splits, .needs = "--impl opt", .when = "vertex", SNAPSHOT,
     .value_name = "S",
     .help = "window (default: a step's windows shared among the ranks) or vertex\n"
             "(chapter 06: every rank runs every window on the rows of its vertices;\n"
             "needs --impl opt and --partition)"},
    {"--partition", OPTION_CHOICE, AT(split.method), .choices = partition_method_choices,
     .given = AT(split.partition_given), .configures = "--split vertex", SNAPSHOT, .value_name = "M",
     .help = "with --split vertex: hash, pts, metis, dynahb, dgc, or pss-ts (T-GCN in\n"
             "exchange mode); see twofold partition --help"},
    {"--mode", OPTION_CHOICE, AT(split.mode), .choices = modes, .configures = "--split vertex", SNAPSHOT,
     .value_name = "M",
     .help = "with --split vertex: exchange (default: products fetch halo rows from\n"
             "their owners) or cache (DynaHB: each rank keeps its vertices' receptive\n"
             "field once; no feature bytes)"},
    {"--partition-seed", OPTION_WHOLE, AT(split.seed), .min = 0, .max = INT64_MAX, .configures = "--split vertex",
     SNAPSHOT, .value_name = "S",
     .help = "METIS's seed (default 1)"},
    {"--schedule", OPTION_CHOICE, AT(scheduling.method), .choices = schedules, .given = AT(scheduling.enabled),
     .needs = "--impl opt", SNAPSHOT, .value_name = "M",
     .help = "with --impl opt: group the windows into steps and place them on the\n"
             "ranks by a DyGNeX schedule: roundrobin (one window per rank and step),\n"
             "lpt, greedy or ilp (twofold schedule --help explains them)"},
    {"--per-rank", OPTION_WHOLE, AT(scheduling.per_rank), .min = 1, .max = 64, .configures = "--schedule", SNAPSHOT,
     .value_name = "L", .help = "with --schedule: windows per rank and step (default 2)"},
    {"--cost", OPTION_PARSED, AT(scheduling.cost), .parse = cli_parse_cost, .expected = CLI_COST_EXPECTED,
     .configures = "--schedule", SNAPSHOT, .value_name = "C",
     .help = "with --schedule: window times measured (default) or linear:A,B,C"},
    {"--ilp-seconds", OPTION_NUMBER, AT(scheduling.ilp.seconds), .low = 1e-3, .high = 86400,
     .configures = "--schedule ilp", SNAPSHOT, .value_name = "S",
     .help = "with --schedule ilp: time limit (default 10)"},
    {"--ilp-gap", OPTION_NUMBER, AT(scheduling.ilp.gap), .low = 0, .high = 1, .ends = OPTION_HIGH_OPEN,
     .configures = "--schedule ilp", SNAPSHOT, .value_name = "G", .help = "with --schedule ilp: gap (default 0.02)"},
    {"--batching", OPTION_CHOICE, AT(batching.hybrid), .choices = batchings, SNAPSHOT, .value_name = "B",
     .help = "snapshot (default: windows of all vertices) or hybrid (tgcn: DynaHB's\n"
             "batches of N_V target vertices x N_S snapshots; --window sets N_S,\n"
             "default 20 % of the training snapshots; --batch batches per step)"},
    {"--targets", OPTION_WHOLE, AT(batching.options.fixed.targets), .min = 1, .max = INT32_MAX,
     .configures = "--batching hybrid", SNAPSHOT, .value_name = "N",
     .help = "with hybrid: target vertices per batch (default 5 % of the vertices)"},
    {"--balanced-groups", OPTION_WHOLE, AT(batching.options.balanced_groups), .min = 1, .max = 100000,
     .configures = "--batching hybrid", SNAPSHOT, .value_name = "G",
     .help = "with hybrid: load-sorted groups every batch samples from (default 10)"},
    {"--adjust", OPTION_CHOICE, AT(batching.options.adjust_dqn), .choices = adjusts, .configures = "--batching hybrid",
     SNAPSHOT, .value_name = "A", .help = "with hybrid: fixed (default) or dqn (a DQN picks among nine sizes)"},
    {"--adjust-every", OPTION_WHOLE, AT(batching.options.adjust_every), .min = 1, .max = 1000000,
     .configures = "--adjust dqn", SNAPSHOT, .value_name = "K",
     .help = "with --adjust dqn: steps per decision (default 10)"},
    {"--reservoir", OPTION_WHOLE, AT(batching.threads), .min = 0, .max = HYBRID_ACTIONS,
     .configures = "--batching hybrid", SNAPSHOT, .value_name = "T",
     .help = "with hybrid: keep and reuse batches (DynaHB's reservoir), built ahead by\n"
             "T generator threads with --impl opt (at most 1 with fixed sizes, 9 with dqn)"},
    {"--optimizer", OPTION_CHOICE, AT(options.optimizer), .choices = optimizers, SNAPSHOT, .value_name = "O",
     .help = "adam (default) or sgd (p - lr g)"},
    {"--task", OPTION_CHOICE, AT(options.task), .choices = tasks, SNAPSHOT, .value_name = "T",
     .help = "regression (default: each vertex's targets, MSE), link: the state H_t\n"
             "scores the edges of snapshot t + 1 (<H_u, H_v>) against as many sampled\n"
             "non-edges (seeded by --seed), BCE; each epoch prints the test AP and AUC\n"
             "(ref/models/link_task.h); or classify: the head gives each vertex C\n"
             "logits for the data's per-snapshot labels (communities:... or --labels),\n"
             "softmax cross-entropy over the labelled vertices; each epoch prints the\n"
             "test accuracy (ref/models/classify_task.h)"},
    {"--profile", OPTION_FLAG, AT(profile), .models = SNAPSHOT_MODELS | EVENT_MODELS,
     .help = "after the epochs, print where their time went by kernel family (dense\n"
             "and sparse products, cells, activations, loss, Adam, copies,\n"
             "communication): calls, seconds, FLOPs and bytes by the formulas of\n"
             "opt/profile.h, the rates achieved, this core's SGEMM (at the run's\n"
             "shapes) and STREAM peaks measured then, and the epochs' roofline bound;\n"
             "under mpiexec, rank 0's own counters"},
    {"", OPTION_SECTION, SNAPSHOT, .help = "\nAsynchronous and stale updates (chapter 05):"},
    {"--sync", OPTION_CHOICE, AT(async.mode), .choices = syncs, SNAPSHOT, .value_name = "S",
     .help = "allreduce (default: one gradient all-reduce per step) or average\n"
             "(DynaHB: every rank trains its own replica with its own Adam, and the\n"
             "parameters are averaged every K steps and at each epoch's end)"},
    {"--every", OPTION_WHOLE, AT(async.every), .min = 1, .max = INT64_MAX, .configures = "--sync average", SNAPSHOT,
     .value_name = "K", .help = "with --sync average: steps between averages (K >= 1)"},
    {"--staleness", OPTION_PARSED, AT(async.staleness), .parse = parse_staleness, .expected = STALENESS_EXPECTED,
     .needs = "--sync allreduce", SNAPSHOT, .value_name = "N",
     .help = "0 (default) or 1: apply each step's all-reduced gradient one step late\n"
             "(Sven Eq. 13), so its all-reduce overlaps the next step's compute"},
    {"--stale-embeddings", OPTION_PARSED, AT(stale), .parse = parse_stale_schedule,
     .expected = "off, zero, static:C (C a fraction of D_r in [0, 1]), adaptive or adaptive-printed",
     .given = AT(stale_embeddings), SNAPSHOT, .value_name = "S",
     .help = "DGC's stale aggregation: on the MPI ranks with --split vertex --mode\n"
             "exchange, or simulated serially (--impl ref) on the ranks of\n"
             "--replicas (vertex v on rank v mod R): off, zero, static:C,\n"
             "adaptive (theta grows as the loss falls, the paper's text; default of the\n"
             "rule) or adaptive-printed (Eq. 6 as printed: theta shrinks); prints the\n"
             "exchange bytes it saves"},
    {"--replicas", OPTION_WHOLE, AT(replicas), .min = 1, .max = 1024, .given = AT(replicas_given),
     .needs = "--impl ref", SNAPSHOT, .value_name = "R",
     .help = "with --impl ref: the ranks --sync average or --stale-embeddings simulate\n"
             "serially (default 1)"},
    {"", OPTION_SECTION, SNAPSHOT, .help = "\nTesting options:"},
    {"--straggler", OPTION_PARSED, AT(async.straggler), .parse = parse_straggler,
     .expected = "RANK:MS or RANK:MS:P (rank >= 0, MS in (0, 60000], P in (0, 1]) or each:MS:P",
     .needs = "--impl opt", SNAPSHOT, .value_name = "RANK:MS[:P] | each:MS:P",
     .help = "with --impl opt: rank RANK sleeps MS milliseconds after its gradient of\n"
             "every step (with probability P), or every rank with probability P;\n"
             "draws are keyed by seed, rank, epoch and step, so results do not change"},
    {.name = NULL},
};

static const option_page train_pages[] = {
    {SNAPSHOT_MODELS, 21,
     "usage: twofold train --model MODEL --data DATASET [options]\n"
     "\n"
     "Train a snapshot model with a temporal train/test split; print the train loss and the\n"
     "test MSE after every epoch. The same options and seed give the same result, bit for bit.\n"
     "\n",
     "\nRun distributed: mpiexec -n 2 twofold train --impl opt --batch 2 --model tgcn --data chickenpox\n"
     "\n" EXIT_STATUS_HELP},
    {EVENT_MODELS, 23,
     "usage: twofold train --model tgn|jodie|apan --data DATASET [options]\n"
     "\n"
     "Train a memory-based event model for link prediction. The events are split 70/15/15 in\n"
     "time; each event is scored against one negative destination drawn uniformly from the\n"
     "vertices; the loss is binary cross-entropy, the optimizer Adam. Every epoch starts from a\n"
     "zero node memory, trains on the first 70%, then runs validation and test forward only,\n"
     "continuing the memory, and prints their average precision (AP) and ROC AUC. The same\n"
     "options and seed give the same result, bit for bit.\n"
     "\n",
     "\nRun distributed: mpiexec -n 4 twofold train --model tgn --data wikipedia --impl opt --dispatch sven\n"
     "  --placement hash\n"
     "\n" EXIT_STATUS_HELP},
    {0, 0, NULL, NULL},
};

static const option_table train_table = {
    .command = "train",
    .options = train_options_table,
    .models = train_models,
    .model_option = "--model",
    .pages = train_pages,
};

/* ---- what comes from the model table ------------------------------------------------------------ */

/* The mask of the snapshot models whose table line passes @p takes. */
static unsigned snapshot_models_where(int (*takes)(const model_info *))
{
    unsigned mask = 0;
    for (int k = 0; k < MODEL_COUNT; k++)
        if (takes(&model_table[k]))
            mask |= TRAIN_MODEL(k);
    return mask;
}

static int has_hidden(const model_info *info) { return (info->takes & MODEL_TAKES_HIDDEN) != 0; }
static int has_k(const model_info *info) { return (info->takes & MODEL_TAKES_K) != 0; }
static int has_layers(const model_info *info) { return (info->takes & MODEL_TAKES_LAYERS) != 0; }
static int has_inputs(const model_info *info) { return info->inputs != MODEL_INPUTS_NONE; }

/* The snapshot options of @p name get the models the table gives them. */
static void option_models(const char *name, unsigned models)
{
    for (option_spec *s = train_options_table; s->name; s++)
        if (strcmp(s->name, name) == 0 && s->models == 0)
            s->models = models;
}

/* Fills --model's words and help, and the models of --hidden, --k, --layers and --incremental, from the model
 * table: adding a model to the table adds it here. Once, before the table is read. */
static void train_table_fill(void)
{
    static char model_help[2048];
    if (train_models[0].word)
        return;
    size_t used = 0;
    for (int k = 0; k < MODEL_COUNT; k++) {
        train_models[k] = (option_choice){model_names[k], k};
        used += (size_t)snprintf(model_help + used, sizeof model_help - used, "%-9s %s%s\n", model_names[k],
                                 model_table[k].summary, model_table[k].peer ? "" : "; not in PyG Temporal");
    }
    snprintf(model_help + used, sizeof model_help - used,
             "(chapter 01); the event models tgn, jodie and apan take other options:\n"
             "twofold train --model tgn --help");
    train_models[TRAIN_TGN] = (option_choice){"tgn", TRAIN_TGN};
    train_models[TRAIN_JODIE] = (option_choice){"jodie", TRAIN_JODIE};
    train_models[TRAIN_APAN] = (option_choice){"apan", TRAIN_APAN};
    train_models[TRAIN_MODELS] = (option_choice){NULL, 0};
    for (option_spec *s = train_options_table; s->name; s++)
        if (strcmp(s->name, "--model") == 0 && !s->help)
            s->help = model_help;
    option_models("--hidden", snapshot_models_where(has_hidden));
    option_models("--k", snapshot_models_where(has_k));
    option_models("--layers", snapshot_models_where(has_layers));
    option_models("--incremental", snapshot_models_where(has_inputs));
}

/* ---- the command line -------------------------------------------------------------------------- */

/* Every model's defaults. */
static void train_command_default(train_command *c, int argc, char **argv)
{
    memset(c, 0, sizeof *c);
    c->argc = argc;
    c->argv = argv;
    train_options_default(&c->options);
    c->config.hidden = 32;
    c->config.chebyshev_k = 2;
    c->split.mode = PARTITION_EXCHANGE;
    c->split.seed = 1;
    c->replicas = 1;
    incremental_inputs_options_default(&c->inputs);
    c->minibatch.hops = 2; /* ReInc's fan-out, 25,10 */
    c->minibatch.fanout[0] = 25;
    c->minibatch.fanout[1] = 10;
    async_options_default(&c->async);
    c->scheduling.per_rank = 2;
    c->scheduling.cost = "measured";
    c->scheduling.repeats = 3;
    ilp_options_default(&c->scheduling.ilp);
    hybrid_options_default(&c->batching.options);
    event_train_options_default(&c->events.options);
    event_model_config_default(&c->events.config, EVENT_MODEL_TGN);
    c->events.config.mails = 10; /* APAN's default; TGN and JODIE hold one mail whatever this says */
    c->events.prefetch = -1;
}

int train_is_event_model(const train_command *c) { return c->model >= TRAIN_TGN; }

int train_wants_async(const train_command *c)
{
    return c->async.mode == SYNC_AVERAGE || c->async.staleness != 0 || c->async.straggler.rank != STRAGGLER_NONE;
}

int train_needs(const char *what, const char *needed, tf_error *err)
{
    return options_needs(&train_table, what, needed, err);
}

/* The event models' rule the table cannot state. */
static int events_check(const train_command *c, tf_error *err)
{
    /* --edge-features replaces the file's own features, so columns chosen from the CSV would be
     * named in the loader's line and then not used: refuse the pair instead. */
    if (c->events.edge_columns && c->events.edge_features)
        return tf_error_set(err, TF_ERR_INPUT, "train: give one of --edge-columns and --edge-features (--edge-features "
                                               "%s replaces the columns --edge-columns %s takes from the CSV)",
                            c->events.edge_features, c->events.edge_columns);
    return TF_OK;
}

int train_parse(int argc, char **argv, train_command *c, int *help, tf_error *err)
{
    train_table_fill();
    train_command_default(c, argc, argv);
    option_parse parsed;
    if (options_parse(&train_table, argc, argv, c, &parsed, err) != TF_OK)
        return TF_ERR_INPUT;
    *help = parsed.help;
    if (*help)
        return TF_OK;
    if (train_is_event_model(c)) {
        c->events.config.kind = (event_model_kind)(c->model - TRAIN_TGN);
        return events_check(c, err);
    }
    c->config.kind = (model_kind)c->model;
    c->options.batching = c->blocks ? BATCH_ACROSS_BLOCKS : BATCH_CONSECUTIVE;
    c->async.straggler.seed = c->options.seed;
    if (vertex_split_check(c, err) != TF_OK)
        return TF_ERR_INPUT;
    if (c->options.task != TASK_REGRESSION && (c->split.on || c->scheduling.enabled || c->batching.hybrid ||
                                               train_wants_async(c) || c->replicas > 1 || c->stale_embeddings))
        return tf_error_set(err, TF_ERR_INPUT, "train: --task %s trains with the data-parallel trainer alone: drop "
                                               "--split vertex, --schedule, --batching hybrid, --sync average, "
                                               "--staleness, --straggler, --replicas and --stale-embeddings",
                            train_task_name(c->options.task));
    for (const train_technique *const *t = train_techniques; *t; t++)
        if ((*t)->check && (*t)->check(c, err) != TF_OK)
            return TF_ERR_INPUT;
    return TF_OK;
}

void train_print_help(const train_command *c)
{
    train_table_fill();
    options_help(&train_table, c->model, stdout);
}
