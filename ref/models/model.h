/**
 * @file ref/models/model.h
 * @brief The snapshot models of #model_table (T-GCN, GConvGRU, GC-LSTM, EvolveGCN-O and the papers'
 *        own forms) with a linear head, run forward and backward over a window of consecutive snapshots.
 *
 * Every model is a recurrent cell followed by the head used in PyTorch Geometric Temporal's
 * examples, y^ = Linear(ReLU(H)). Where that library has the cell, it is the library's, with the
 * same parameters under the same names (chapters/01a-snapshot-models.md has the equations). A model runs over a *window*:
 * snapshots first .. first+count-1, its state (H, and C for GC-LSTM, the evolving weight
 * for EvolveGCN-O) starting fresh at the window's first snapshot, and its backward is
 * back-propagation through time truncated at the window's start.
 *
 * Usage:
 *
 *     model m;  model_create(&m, &config, seed, &err);
 *     window_tape tape;
 *     model_forward(&m, seq, first, count, &tape, predictions, &err);   // [count][N][out]
 *     model_window_loss(seq, first, count, predictions, 1.0f, dpredictions);
 *     model_backward(&m, seq, &tape, dpredictions, &err);   // adds into m.parameters' gradients
 *     window_tape_free(&m, &tape);
 *
 * A window's tape and the scratch of its forward and backward come from the model's workspace
 * (ref/core/workspace.h), taken back by window_tape_free(): after the first window a training step
 * allocates nothing. So one model holds one window's tape at a time (its forward, its backward,
 * window_tape_free(), then the next window); models in different threads each have their own.
 */
#ifndef TWOFOLD_REF_MODEL_H
#define TWOFOLD_REF_MODEL_H

#include <stdint.h>

#include "ref/core/error.h"
#include "ref/nn/kernels.h"
#include "ref/nn/parameters.h"
#include "ref/nn/propagate.h"
#include "ref/nn/recurrent.h"
#include "ref/data/snapshot.h"
#include "ref/core/workspace.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What a model is trained to do (--task); a checkpoint records it (ref/models/checkpoint.h). */
typedef enum train_task {
    TASK_REGRESSION, /**< predict each vertex's targets, MSE (the default; PyG-T's examples) */
    TASK_LINK,       /**< link prediction on snapshots: H_t scores t + 1's edges (ref/models/link_task.h) */
    TASK_CLASSIFY,   /**< node classification: the head's C logits, cross-entropy (ref/models/classify_task.h) */
} train_task;

/** "regression", "link" or "classify" (what --task takes); "unknown" for another value. */
const char *train_task_name(int64_t task);

/**
 * The snapshot models, in the order of #model_table (and of a checkpoint's kind number: a new model
 * goes at the end). A model is one file ref/models/model_NAME.c (its #model_ops) plus one line of
 * #model_table and one word of #model_names; everything else (the CLI, checkpoints, `twofold verify`,
 * the techniques, the benchmarks) reads the table.
 */
typedef enum model_kind {
    MODEL_TGCN,        /**< T-GCN: GCN on X_t feeding a GRU (Zhao et al., 2019), PyG Temporal's one-layer form */
    MODEL_GCONVGRU,    /**< GConvGRU: Chebyshev convolutions inside every GRU gate (Seo et al., 2018) */
    MODEL_GCLSTM,      /**< GC-LSTM: LSTM whose hidden-state term is a Chebyshev convolution (Chen et al., 2022) */
    MODEL_EVOLVEGCN,   /**< EvolveGCN-O: a GRU evolves the GCN weight (Pareja et al., 2020) */
    MODEL_TGCN2,       /**< T-GCN with the paper's two-layer GCN in every gate (Zhao et al., 2019) */
    MODEL_WDGCN,       /**< WD-GCN: a GCN layer, then an LSTM per vertex (Manessi et al., 2020) */
    MODEL_GCONVLSTM,   /**< GConvLSTM (ReInc's GCRN-M2): Chebyshev convolutions in every LSTM gate (Seo et al., 2018) */
    MODEL_MPNNLSTM,    /**< MPNN-LSTM: a two-layer GCN, then a two-layer LSTM per vertex (Panagopoulos et al., 2021) */
    MODEL_GCRNM1,      /**< GCRN-M1: pairs of a Chebyshev convolution then an LSTM, stacked (Seo et al., 2018) */
    MODEL_DCRNN,       /**< DCRNN: a GRU whose gates are diffusion convolutions on two random walks (Li et al., 2018) */
    MODEL_CDGCN,       /**< CD-GCN: WD-GCN's GCN and LSTM with concatenation skips, stacked (Manessi et al., 2020) */
    MODEL_GATLSTM,     /**< GAT-LSTM: a graph attention layer, then an LSTM per vertex (DyGNeX's fourth model) */
    MODEL_DYSAT,       /**< DySAT: graph attention per snapshot, then temporal self-attention (Sankar et al., 2020) */
    MODEL_COUNT        /**< how many there are */
} model_kind;

/** Shape of a model. */
typedef struct model_config {
    model_kind kind;        /**< which model */
    int64_t in_features;    /**< F: node feature width of the data */
    int64_t hidden;         /**< H: state width (EvolveGCN-O ignores it: its weight is F x F) */
    int64_t out_features;   /**< target width of the data */
    int chebyshev_k;        /**< K, Chebyshev order of the models that take it (#MODEL_TAKES_K; >= 1) */
    int layers;             /**< L, stacked pairs of a stacked model (#MODEL_TAKES_LAYERS); 0: the table's default */
} model_config;

struct model_ops;

/**
 * Where a model takes its input-side aggregation of X_t from (#model_info::inputs): the A^ X_t of
 * the GCN models' first layer (T-GCN's and the two-layer T-GCN's gates, WD-GCN's and MPNN-LSTM's
 * GCN, CD-GCN's X_t columns of every pair's aggregation), the Chebyshev basis terms T_1 .. T_{K-1}
 * of X_t that GConvGRU's three and GConvLSTM's four x-gates share, and GCRN-M1's first pair reads,
 * or DCRNN's diffusion terms of X_t on both walks. All come before any weight multiply, so
 * they hold no parameter and any source of the same numbers will do: the reference recomputes
 * them (inputs = NULL); the incremental twin (opt/incremental_inputs.h) serves them from ReInc's
 * cache and delta engine. GC-LSTM and EvolveGCN-O have no such term and ignore it.
 */
typedef struct input_aggregations {
    /** Write snapshot @p t's aggregation into @p out: T-GCN's A^ X_t [num_nodes][in_features],
     *  GConvGRU's T_1 .. T_{K-1} [K - 1][num_nodes][in_features], or DCRNN's on both walks
     *  [2][K - 1][num_nodes][in_features]. */
    int (*get)(void *context, int64_t t, float *out, tf_error *err);
    void *context; /**< passed to get() */
} input_aggregations;

/** The sparse operators the models use. */
typedef enum operator_kind {
    OPERATOR_GCN,        /**< symmetric GCN normalization with self loops (T-GCN, EvolveGCN-O) */
    OPERATOR_CHEBYSHEV,  /**< the scaled Laplacian (GConvGRU, GC-LSTM) */
    OPERATOR_WALK_FORWARD,  /**< DCRNN's forward random walk (ref_propagation_walk(), WALK_FORWARD); a source
                                 that serves it serves the next too */
    OPERATOR_WALK_BACKWARD, /**< DCRNN's backward walk: the transpose of WALK_BACKWARD_TRANSPOSED as an
                                 operator of the reversed graph (ref_propagation_transpose()) */
} operator_kind;

/**
 * Where the models take snapshot t's sparse operator from, the twin of #input_aggregations for
 * every model: NULL (the reference) builds it from the snapshot's own graph. A vertex-partitioned
 * twin (opt/partition_part.h) serves operators over one rank's rows whose coefficients come from
 * the whole snapshot (full-graph degrees and lambda_max). What build() fills belongs to the model
 * (freed with ref_propagation_free()); its graph and halo are borrowed from the source.
 */
typedef struct operator_source {
    /** Fill @p out with operator @p kind of snapshot @p t. */
    int (*build)(void *context, int64_t t, operator_kind kind, propagation *out, tf_error *err);
    void *context; /**< passed to build() */
} operator_source;

/** A model: its shape, its parameters (PyTorch names) and its functions. */
typedef struct model {
    model_config config;                /**< the shape it was created with */
    parameter_list parameters;          /**< every trainable tensor and its gradient */
    const struct model_ops *ops;        /**< forward/backward of this kind */
    const kernels *kernels;             /**< the compute kernels it runs on (ref_kernels by default) */
    const input_aggregations *inputs;   /**< T-GCN's and GConvGRU's input aggregations; NULL = recompute (the reference) */
    const operator_source *operators;   /**< the operators' source; NULL = from each snapshot's graph */
    workspace *scratch;                 /**< a window's tape and scratch (model_scratch()), owned */
} model;

/** What a window's forward keeps for its backward. */
typedef struct window_tape {
    int64_t first;      /**< first snapshot of the window */
    int64_t count;      /**< snapshots in the window */
    float *states;      /**< [count][N][width] the cell's output H_t at each snapshot */
    float *activated;   /**< [count][N][width] ReLU(H_t), the head's input */
    void *steps;        /**< [count] model-specific records of the cell (ref/models/model_*.c) */
} window_tape;

/** Name used on the command line: model_names[kind], or "unknown". */
const char *model_kind_name(model_kind kind);

/** Parse a command-line model name. @return 0, or TF_ERR_INPUT listing the known names. */
int model_kind_parse(const char *name, model_kind *kind, tf_error *err);

/**
 * Create a model with freshly initialized parameters, as PyTorch would initialize them
 * (Glorot for graph-convolution weights, uniform(+-1/sqrt(fan_in)) for Linear and GRU),
 * drawn from @p seed.
 */
int model_create(model *m, const model_config *config, uint64_t seed, tf_error *err);

/** Release the parameters. */
void model_free(model *m);

/**
 * Forward over snapshots first .. first+count-1 of @p seq from a fresh state.
 * @param m            the model
 * @param seq          the snapshots (features width = in_features, targets = out_features)
 * @param first        first snapshot of the window
 * @param count        snapshots in the window (>= 1)
 * @param tape         out: what the backward needs; free with window_tape_free()
 * @param predictions  [count][num_nodes][out_features] out
 * @param err          out: a window outside the sequence, shapes that do not match, no memory
 */
int model_forward(const model *m, const snapshot_seq *seq, int64_t first, int64_t count, window_tape *tape,
                  float *predictions, tf_error *err);

/**
 * Backward through the window recorded in @p tape, given dpredictions [count][N][out] =
 * d loss / d predictions. Adds into every parameter's gradient. Fails only when scratch
 * memory cannot be allocated.
 */
int model_backward(model *m, const snapshot_seq *seq, const window_tape *tape, const float *dpredictions,
                   tf_error *err);

/**
 * Backward of the cell alone, given dstates [count][N][model_state_width()] = d loss / d H: what a
 * task that reads the states, not the head's predictions, calls (ref/models/link_task.h). The head's
 * gradients are left as they are.
 */
int model_backward_states(model *m, const snapshot_seq *seq, const window_tape *tape, const float *dstates,
                          tf_error *err);

/** Release a tape, and everything taken with model_scratch() since the window began. */
void window_tape_free(const model *m, window_tape *tape);

/**
 * @p count items of @p size bytes from the model's workspace for the current window: the tape,
 * the predictions, the scratch of forward and backward. Valid until window_tape_free();
 * **not initialized**. @return NULL with TF_ERR_INPUT in @p err as tf_alloc().
 */
void *model_scratch(const model *m, size_t count, size_t size, const char *what, tf_error *err);

/** model_scratch(), zeroed. */
void *model_scratch_zeroed(const model *m, size_t count, size_t size, const char *what, tf_error *err);

/**
 * The training loss of a window: the mean over its snapshots of the mean squared error over
 * the vertices present in each snapshot, from predictions [count][num_nodes][target_width].
 * Writes dpredictions [count][num_nodes][target_width] = scale * d loss / d predictions (zero
 * for absent vertices) unless it is NULL. @return the loss.
 */
double model_window_loss(const snapshot_seq *seq, int64_t first, int64_t count, const float *predictions,
                         float scale, float *dpredictions);

/**
 * Forward and backward of @p m over snapshots first .. first+count-1 of @p seq with the loss over
 * chosen vertices only: the mean over the snapshots of the MSE over the chosen vertices present
 * in each, by @p m's kernels, scaled by @p scale for the gradients (added to the model's). The
 * chosen vertices are @p vertices [num_chosen], or 0 .. num_chosen-1 when @p vertices is NULL
 * (targets placed first, as a sampled view places them). DynaHB's batch oracle and ReInc's
 * mini-batch windows both train this way (ref/schedule_hybrid.h, ref/minibatch.h).
 * @return as model_forward(); @p loss out (unscaled).
 */
int model_window_gradient_over(model *m, const snapshot_seq *seq, int64_t first, int64_t count,
                               const int32_t *vertices, int64_t num_chosen, float scale, double *loss,
                               tf_error *err);

/** model_window_loss() computed by @p m's kernels (their mse_loss): what the trainers call. */
double model_window_loss_of(const model *m, const snapshot_seq *seq, int64_t first, int64_t count,
                            const float *predictions, float scale, float *dpredictions);

/**
 * The GCN operator of snapshot @p t of @p seq the models use (symmetric normalization with self
 * loops), from the model's operator source when it has one, prepared by the model's kernels. For
 * ref/models/model_*.c.
 */
int model_gcn_operator(const model *m, propagation *p, const snapshot_seq *seq, int64_t t, tf_error *err);

/** The scaled Laplacian of snapshot @p t (Chebyshev models), as model_gcn_operator(). */
int model_chebyshev_operator(const model *m, propagation *p, const snapshot_seq *seq, int64_t t, tf_error *err);

/**
 * The graph an attention layer reads at snapshot @p t (GAT-LSTM, DySAT): its structure only, for
 * attention computes its own coefficients. From the model's operator source when it has one (a
 * vertex split's rows, in-edges in the whole graph's order, and the halo whose rows of X_t the layer
 * fetches: ref/nn/graph_attention.h), else the snapshot's own graph without coefficients; prepared
 * by the model's kernels. Freed with the window's tape, as the operators are.
 */
int model_attention_graph(const model *m, propagation *p, const snapshot_seq *seq, int64_t t, tf_error *err);

/**
 * The Chebyshev basis of X_t, T_0 .. T_{K-1} [K][num_nodes][in_features], into @p basis: T_0 = X_t, and
 * the rest from the model's #input_aggregations when it has one (served: they depend on t only), else
 * by the recurrence on @p p, snapshot @p t's scaled Laplacian. For the models whose x-convolutions
 * read X_t (ref/models/model_*.c).
 */
int model_chebyshev_inputs(const model *m, const propagation *p, const snapshot_seq *seq, int64_t t, float *basis,
                           tf_error *err);

/**
 * The start of an LSTM cell's backward at snapshot @p t of a window of @p count, every array [nh]:
 * dstate = the head's gradient dstates_t + what snapshot t + 1 sent (dprevious), dcell = what t + 1
 * sent the cell (dprevious_cell), or zero at the window's last snapshot; then dprevious and
 * dprevious_cell zeroed, for the gradients this snapshot sends to t - 1.
 */
void model_lstm_carry(const float *dstates_t, int64_t t, int64_t count, int64_t nh, float *dstate, float *dcell,
                      float *dprevious, float *dprevious_cell);

/**
 * One snapshot of the per-vertex LSTM of a stacked model (WD-GCN, GAT-LSTM), on @p m's kernels: from
 * the graph layer's output @p input [n][h], the previous state and cell [n][h], with torch.nn.LSTM's
 * parameters @p lstm [4] (weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0), writes cell [n][h],
 * state [n][h] and the gates [n][4h]; @p preactivation [n][4h] is scratch.
 */
void model_lstm_forward_step(const model *m, const parameter *lstm, const float *input, const float *previous,
                             const float *previous_cell, int64_t n, int64_t h, float *preactivation, float *cell,
                             float *state, float *gates);

/**
 * Backward of model_lstm_forward_step(), given d loss / d state and d loss / d cell [n][h]: writes
 * dpreactivation [n][4h] and dprevious_cell [n][h], adds into dinput, dprevious [n][h] and the
 * parameters' gradients.
 */
void model_lstm_backward_step(const model *m, parameter *lstm, const float *input, const float *previous,
                              const float *previous_cell, const float *gates, const float *cell, const float *dstate,
                              const float *dcell, int64_t n, int64_t h, float *dpreactivation, float *dinput,
                              float *dprevious, float *dprevious_cell);

/**
 * The graph layer of a stacked "graph layer, ReLU, per-vertex LSTM" model: WD-GCN's GCN or GAT-LSTM's
 * attention. The skeleton around it (ref/models/model_wdgcn.c) is the same for both: the layer runs on
 * each snapshot with its parameters shared by all, its output Z_t goes through a ReLU into
 * torch.nn.LSTM's cell, one per vertex, whose four parameters follow the layer's.
 */
typedef struct graph_lstm_layer {
    const char *title; /**< the model's title, for allocation failures */
    int lstm;          /**< index of the LSTM's weight_ih_l0 (the layer's parameters come before it) */
    size_t tape_size;  /**< bytes of what the layer's forward keeps per snapshot (zeroed before it runs) */
    /** Add and initialize the layer's parameters. */
    int (*create)(model *m, rng *r, tf_error *err);
    /** Z_t of snapshot @p t, before the ReLU, into @p convolved [N][H]; @p graph is the snapshot's
     *  operator record (freed with the window's tape), @p tape the layer's record. */
    int (*forward)(const model *m, const snapshot_seq *seq, int64_t t, propagation *graph, void *tape,
                   float *convolved, tf_error *err);
    /** Given d loss / d Z_t [N][H] (through the ReLU), add into the layer's parameters' gradients. */
    int (*backward)(model *m, const snapshot_seq *seq, const propagation *graph, const void *tape,
                    const float *dlayer, tf_error *err);
} graph_lstm_layer;

/** What the skeleton keeps of one snapshot (its models' model_ops::step_size is its size). */
typedef struct graph_lstm_step {
    propagation graph; /**< the snapshot's operator, first (model_ops::step_size) */
    void *layer;       /**< the graph layer's record (graph_lstm_layer::tape_size bytes) */
    float *convolved;  /**< [N][H] ReLU(Z_t), the LSTM's input */
    float *gates;      /**< [N][4H] i, f, g, o after their nonlinearities */
    float *cell;       /**< [N][H] C' */
} graph_lstm_step;

/** model_ops::create of a graph_lstm_layer model: the layer's parameters, then the LSTM's. */
int graph_lstm_create(const graph_lstm_layer *layer, model *m, rng *r, tf_error *err);
/** model_ops::forward of a graph_lstm_layer model. */
int graph_lstm_forward(const graph_lstm_layer *layer, const model *m, const snapshot_seq *seq, window_tape *tape,
                       tf_error *err);
/** model_ops::backward of a graph_lstm_layer model. */
int graph_lstm_backward(const graph_lstm_layer *layer, model *m, const snapshot_seq *seq, const window_tape *tape,
                        const float *dstates, tf_error *err);

/** Width of the cell's output H (the head's input): hidden, or F for EvolveGCN-O. */
int64_t model_state_width(const model *m);

/**
 * The functions a model kind provides (ref/models/model_*.c): its recurrent cell. The linear head
 * every model shares lives in model.c.
 */
typedef struct model_ops {
    /** Add and initialize the cell's parameters (in PyTorch's state_dict order). */
    int (*create)(model *m, rng *r, tf_error *err);
    /** Run the cell over the window, writing @p tape->states and the records in @p tape->steps
     *  (model_forward() allocates them, zeroed, before it calls this). */
    int (*forward)(const model *m, const snapshot_seq *seq, window_tape *tape, tf_error *err);
    /** Backward of the cell, given dstates [count][N][width]; adds into parameter gradients. */
    int (*backward)(model *m, const snapshot_seq *seq, const window_tape *tape, const float *dstates, tf_error *err);
    /** Size of the model's record of one snapshot, @p tape->steps holding @p tape->count of them.
     *  Every record begins with its snapshot's operator (a #propagation), or #operators of them,
     *  which window_tape_free() frees; the rest of a record is model_scratch() memory. */
    size_t step_size;
    /** How many operators begin each record: 1, or DCRNN's 2 (its two walks). */
    int operators;
} model_ops;

/** Which options of a model's shape it takes (#model_info::takes): --hidden, --k, --layers. */
enum model_takes {
    MODEL_TAKES_HIDDEN = 1,   /**< a state of --hidden H columns (without it the state is F wide) */
    MODEL_TAKES_K = 2,        /**< a Chebyshev order --k K */
    MODEL_TAKES_LAYERS = 4,   /**< --layers L stacked pairs */
};

/** What aggregation of X_t a model can take from an #input_aggregations source (--incremental). */
typedef enum model_inputs {
    MODEL_INPUTS_NONE,        /**< none: #model_info::lacks or not_yet [#MODEL_SERVED_INPUTS] says why */
    MODEL_INPUTS_GCN,         /**< A^ X_t, one term */
    MODEL_INPUTS_CHEBYSHEV,   /**< T_1 .. T_{K-1} of X_t (K >= 2) */
    MODEL_INPUTS_DIFFUSION,   /**< DCRNN's T_1 .. T_{K-1} of X_t on the forward, then the backward walk (K >= 2) */
} model_inputs;

/**
 * What one vertex of one snapshot costs a model, from its equations (#model_info::cost): what the
 * partitioners weigh (ref/partition.h's traffic, ref/partition_chunks.h's chunk costs).
 */
typedef struct model_cost {
    double flops;          /**< the dense multiply-adds of one vertex, forward plus a backward of about twice it */
    int64_t forward;       /**< floats a halo row is fetched for in its aggregations (F for A^ X_t) */
    int64_t backward;      /**< floats of gradient a halo row is given back (0 where only X_t is aggregated) */
    int64_t temporal;      /**< floats of state crossing ranks between snapshots: width x (1 GRU, 2 LSTM) x 2 ways */
    int reads_window;      /**< 1: its time encoder reads a vertex's rows at every earlier snapshot of the window
                                (DySAT's attention), each `temporal` floats; 0: only the previous one (a recurrence) */
} model_cost;

/**
 * A property of a model's structure that a technique relies on. A model has it when its table line
 * says so (#model_info::has); otherwise the line says why not: in #model_info::lacks when the
 * technique does not apply to such a model, in #model_info::not_yet when it would and is not built
 * for it (a new line that says nothing has none of them, so no technique runs it unchecked). `twofold verify`'s model x technique
 * matrix prints these reasons (verify/techniques/matrix.h); the commands refuse with them.
 */
typedef enum model_property {
    MODEL_SERVED_INPUTS,  /**< an aggregation of X_t ahead of every parameter, which --incremental serves (chapter 02) */
    MODEL_VERTEX_ROWS,    /**< --split vertex trains it (chapter 06's partition parts), so DGC's stale rows have owners */
    MODEL_ONE_HOP,        /**< its graph convolution reads X_t only, one hop, as the A^ X_t it is served (T-GCN, WD-GCN): what
                               hybrid batches, pss-ts and cache mode's smaller part rely on */
    MODEL_VERTEX_CELL,    /**< its recurrence is a cell per vertex (#model_info::lane_cell: torch's LSTM, T-GCN's GRU,
                               GCRN's LSTM with peepholes; or a stack of LSTMs, #model_info::vertex_lstm), fed a
                               sequence that does not depend on the recurrence: DGC's fused lanes run it (chapter 03) */
    MODEL_STALE_PRODUCTS, /**< what its vertex split exchanges are the operands of graph products y = P x
                               (ref/nn/propagate.h), the rows DGC's stale aggregation decides and its serial
                               simulation replays (chapter 05, ref/async_embeddings.h) */
    MODEL_PROPERTIES      /**< how many there are */
} model_property;

/** One line of the model table: what the rest of twofold needs to know of a model besides its functions. */
typedef struct model_info {
    const char *title;         /**< its name in the papers: "T-GCN" */
    const char *summary;       /**< one line for `twofold train --help` */
    const model_ops *ops;      /**< its cell (ref/models/model_NAME.c) */
    unsigned takes;            /**< #model_takes: the shape options it takes */
    operator_kind graph_operator; /**< the sparse operator it propagates with, as a vertex split serves it
                                       (DCRNN: the forward walk, and with it the backward one) */
    model_inputs inputs;       /**< what --incremental can serve it */
    unsigned has;              /**< the #model_property bits (1 << p) it has: the techniques built for it */
    const char *lacks[MODEL_PROPERTIES];   /**< for a property it has not: why a technique needing it does not apply */
    const char *not_yet[MODEL_PROPERTIES]; /**< for a property it has not: why it would apply and is not built yet */
    const char *peer;          /**< PyTorch Geometric Temporal's class of the same cell, NULL where it has none */
    int layers;                /**< with #MODEL_TAKES_LAYERS: the default of --layers */
    /** The width of the cell's output where it is not --hidden (MPNN-LSTM's [H1 | H2], CD-GCN's
     *  F + 2 L H); NULL: --hidden, or F without #MODEL_TAKES_HIDDEN. */
    int64_t (*state_width)(const model_config *config);
    /** Its cost per vertex and snapshot at shape @p config (every model has one). */
    void (*cost)(const model_config *config, model_cost *out);
    /** With #MODEL_VERTEX_CELL: the cell the fused lanes run per vertex. */
    time_encoder_kind lane_cell;
    /** With #MODEL_VERTEX_CELL, where its per-vertex LSTMs are stacked: the input width of LSTM
     *  @p layer (from 0), 0 past the last, and in @p below the column of that input where the layer
     *  below's output H starts (-1 for layer 0, and where a graph convolution of the layer below's
     *  states comes in between). NULL: one cell reading an H-wide input (T-GCN's: one per gate). */
    int64_t (*vertex_lstm)(const model_config *config, int layer, int64_t *below);
} model_info;

/** The model table, indexed by #model_kind (ref/models/model.c). */
extern const model_info model_table[MODEL_COUNT];

/** Whether model @p kind has @p property (#model_property). */
int model_has(model_kind kind, model_property property);

/** Why model @p kind lacks @p property, NULL when it has it; *@p applies (unless NULL) is set to 1 when
 *  the reason is one of #model_info::not_yet (it would apply), 0 otherwise. */
const char *model_lacks(model_kind kind, model_property property, int *applies);

/** The --model words, indexed by #model_kind and ended by NULL: "tgcn", "gconvgru", ... (a checkpoint
 *  names its model by the same word). */
extern const char *const model_names[MODEL_COUNT + 1];

/** The table's line of @p kind (a valid #model_kind). */
const model_info *model_info_of(model_kind kind);

/** T-GCN's functions (ref/models/model_tgcn.c). */
extern const model_ops tgcn_ops;
/** GConvGRU's functions (ref/models/model_gconvgru.c). */
extern const model_ops gconvgru_ops;
/** GC-LSTM's functions (ref/models/model_gclstm.c). */
extern const model_ops gclstm_ops;
/** EvolveGCN-O's functions (ref/models/model_evolvegcn.c). */
extern const model_ops evolvegcn_ops;
/** The two-layer T-GCN's functions (ref/models/model_tgcn.c: the same cell with two GCN layers). */
extern const model_ops tgcn2_ops;
/** WD-GCN's functions (ref/models/model_wdgcn.c). */
extern const model_ops wdgcn_ops;
/** GConvLSTM's functions (ref/models/model_gconvlstm.c). */
extern const model_ops gconvlstm_ops;
/** MPNN-LSTM's functions (ref/models/model_mpnnlstm.c). */
extern const model_ops mpnnlstm_ops;
/** GCRN-M1's functions (ref/models/model_gcrnm1.c). */
extern const model_ops gcrnm1_ops;
/** DCRNN's functions (ref/models/model_dcrnn.c). */
extern const model_ops dcrnn_ops;
/** CD-GCN's functions (ref/models/model_cdgcn.c). */
extern const model_ops cdgcn_ops;
/** GAT-LSTM's functions (ref/models/model_gatlstm.c). */
extern const model_ops gatlstm_ops;
/** DySAT's functions (ref/models/model_dysat.c). */
extern const model_ops dysat_ops;

#ifdef __cplusplus
}
#endif

#endif
