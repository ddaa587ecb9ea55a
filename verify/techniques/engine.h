/**
 * @file verify/techniques/engine.h
 * @brief What "equal" means, run: the struct each technique supplies and the one engine that checks
 *        and times it. `twofold demo`, `twofold verify`, the bench program and verify/test_technique
 *        all go through it (the table itself: verify/techniques/table.h).
 *
 * Each technique supplies one #technique: how to set up its inputs on a dataset, how to run
 * its reference and its twin(s), how to compare a twin's answer with the reference's, and how
 * much work a run does. The engine does the rest, in the project's one order (llm.c's dev/cuda
 * habit, nccl-tests' `#wrong` count):
 *
 *  1. **validate**: run the reference, run each twin, compare. A run may have several steps
 *     (snapshots, epochs); they are compared step by step, so drift along a chain shows;
 *  2. **time**: only when every twin was within its tolerance. The reference's validating run is
 *     its one timed run (it is the oracle); each twin's validating run is its first timed run,
 *     and a twin whose technique can restart it is run again (best kept) while a run takes
 *     under a second, up to the requested repeats;
 *  3. **print** a row: the worst error against its tolerance, and the speed, or `WRONG` and no
 *     speed. A footer counts the wrong rows (\c \#wrong); a caller exits 1 when it is not zero.
 *     An fp twin outside its tolerance is run again on the reference's kernels
 *     (technique::logic): when it then has the reference's bits at every step, the row says
 *     "equal logic, rounding amplified by the data" (its logic is proven the reference's; what is
 *     left is the opt kernels' rounding grown by the data). Where the twin adds in another order
 *     than the reference by design (ranks, schedules), its bits cannot match: then, if a one-ulp
 *     change of the reference's inputs moves the reference by more than the tolerance
 *     (technique::spread), and the twin is within #SPREAD_MARGIN times that spread, the row is "not
 *     comparable", an estimate stated as one. Else WRONG. A reference whose own answer is not finite
 *     (run_ref returns #TECHNIQUE_DIVERGED) makes the row "not comparable" too, with its words.
 *
 * engine_run() does 1 and 2 for one (technique, variant, data); engine_run_rows() runs a list of
 * them and prints the rows and the footer: the one loop the program and the bench program share.
 *
 * "Equal" is one of two things (chapters/00-overview.md, "What equal means"): **bitwise** (every
 * value has the same bits: the error reported is the count of values that differ, and must be 0)
 * or **fp** (the worst |twin - ref| / max(1, |ref|), or a technique's stated variant of it, at most
 * the tolerance: 1e-5 for float32 on the CPU).
 *
 * Adding a technique: write its entry in verify/techniques/STEM.c (STEM: the stem of its ref/ and
 * opt/ files) and add one line to technique_table[] (verify/techniques/table.c). An entry that runs a
 * snapshot model says so (technique::models, and what each variant needs of a model:
 * technique::model_needs) and gets a column of `twofold verify`'s model x technique matrix
 * (verify/techniques/matrix.h). Its full
 * benchmark, if it has one, is a sweep in bench/STEM.c that calls engine_run() for every point.
 *
 * Under MPI (`mpiexec -n R`) a technique marked `distributed` sets up and runs its twin on every
 * rank of the #comm (the reference and the comparison run on rank 0 only); other techniques run on
 * rank 0 alone. Rank 0 prints.
 *
 * Ownership: a technique's state is allocated by its setup() and released by its teardown(); the
 * dataset is borrowed and must outlive the state.
 */
#ifndef TWOFOLD_VERIFY_TECHNIQUES_ENGINE_H
#define TWOFOLD_VERIFY_TECHNIQUES_ENGINE_H

#include <stdint.h>
#include <stdio.h>

#include "datasets/dataset.h"
#include "opt/comm.h"
#include "ref/core/error.h"
#include "ref/models/model.h"
#include "ref/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The most twins one technique compares with its reference. */
#define TECHNIQUE_MAX_TWINS 4

/** The CPU tolerance of "fp" equality: max |twin - ref| / max(1, |ref|). */
#define TECHNIQUE_CPU_TOLERANCE 1e-5

/** Returned by a technique's setup() when it does not apply to the data (e.g. snapshots wanted,
 *  an event stream given): the engine prints the reason and counts the row as skipped, not wrong. */
#define TECHNIQUE_SKIP 77

/** Returned by a technique's run_ref() when the reference's own answer is not finite (features
 *  near float's range: its training overflows), with the error saying where: no twin can be held to
 *  an answer of inf and NaN, so the row says "not comparable" with that message rather than WRONG
 *  (the twin is not at fault). The engine goes on with the remaining steps, as the ranks of a
 *  distributed twin are in its collectives. technique_reference_finite() makes it. */
#define TECHNIQUE_DIVERGED 78

/** How one twin's answer is judged. */
typedef enum technique_equality {
    TECHNIQUE_BITWISE,   /**< every value has the reference's bits; the error is the count that differ */
    TECHNIQUE_FP,        /**< the worst relative error is at most the tolerance */
} technique_equality;

/** One optimized twin of a technique. */
typedef struct technique_twin {
    const char *name;               /**< what rows call it: "opt", "padded", "fused lanes" */
    technique_equality equality;    /**< bitwise or fp */
    double tolerance;               /**< fp: the bound on the error (0 for bitwise) */
} technique_twin;

/** How an entry runs on the snapshot models of the table: the axis of `twofold verify`'s model x technique
 *  matrix (verify/techniques/matrix.h). */
typedef enum technique_models {
    TECHNIQUE_NO_MODEL,       /**< it runs no snapshot model (aggregations, chunk loads, event models): rows only */
    TECHNIQUE_ON_MODEL,       /**< setup() runs the model technique_context::model names (NULL: its own default) */
    TECHNIQUE_VARIANT_MODEL,  /**< its variants are the models, in #model_table order (`train`) */
} technique_models;

/** Where a run stands: which twin, which step. */
typedef struct technique_context {
    comm *group;       /**< the ranks (NULL: one process without MPI) */
    int threads;       /**< OpenMP threads the twins may use */
    const void *params; /**< the caller's technique-specific parameters (NULL = the technique's defaults) */
    const model_kind *model; /**< #TECHNIQUE_ON_MODEL: the model of a matrix cell; NULL: the entry's own */
} technique_context;

/** A row `twofold demo` shows: which variant, on which data. */
typedef struct technique_case {
    int variant;         /**< index into technique::variants */
    const char *data;    /**< dataset spec for dataset_load() */
    const char *label;   /**< the data column of the row */
} technique_case;

/**
 * A technique: the struct each one supplies (nccl-tests' per-collective struct). Functions that
 * can fail return a #tf_error_code with @p err set; setup() may return #TECHNIQUE_SKIP.
 */
typedef struct technique {
    const char *name;        /**< unique in the table: "incremental", "fusion_temporal" */
    const char *stem;        /**< the stem of its files and chapter: "fusion" (`twofold verify fusion`
                                  runs every entry of the stem) */
    const char *chapter;     /**< "02" */
    const char *title;       /**< the row's technique column: "ReInc incremental" */
    const char *needs;       /**< one line: the data it runs on ("a snapshot sequence") */
    const char *const *variants; /**< NULL-terminated: "sum", "max", ...; a run picks one by index */
    int distributed;         /**< 1: the twin runs on every rank of the group */

    const technique_case *demo; /**< the rows `twofold demo` shows, terminated by an entry with data == NULL */

    technique_models models;  /**< how it runs on the models of the table */
    /** [variant] what each variant needs of a model: bits 1 << #model_property; a model that lacks one is
     *  not run, and its matrix cell gives the model table's reason. NULL: nothing. */
    const unsigned *model_needs;

    /**
     * Build the inputs of @p variant on @p data (or on what context->params gives) into a new
     * state: everything the runs read, allocated once and not timed. Sets *twins to how many
     * twins the state has (their descriptions: twin()).
     */
    int (*setup)(const technique_context *context, const dataset *data, int variant, void **state, int *twins,
                 tf_error *err);
    /** The twins of @p state: descriptions for twin 0 .. twins-1. */
    const technique_twin *(*twin)(const void *state, int index);
    /** How many steps a run has (snapshots, epochs; 1 for a one-shot technique). */
    int64_t (*steps)(const void *state);
    /** Steps at the start that are not timed (a warm-up both sides do alike); usually 0. */
    int64_t untimed_steps;
    /** The reference's step @p step (into the state's reference buffers). */
    int (*run_ref)(void *state, int64_t step, tf_error *err);
    /** Twin @p twin's step @p step. */
    int (*run_twin)(void *state, int twin, int64_t step, tf_error *err);
    /** Compare twin @p twin's answer at @p step with the reference's: the error as #technique_equality
     *  says (a count of differing values, or the worst relative error; NaN counts as infinite). */
    double (*compare)(void *state, int twin, int64_t step);
    /** Spoil twin @p twin's latest answer on purpose: add 1 + |v| to one value v of it (any v
     *  changes, by at least 1 relative to max(1, |v|)), so a test can show the check fails. */
    void (*corrupt)(void *state, int twin);
    /** Twin @p twin's logic alone: run it again from the start with the reference's kernels in place of
     *  its own, beside a fresh reference, over every step (spoiled after each as in the validating run
     *  when @p corrupt), and count the values whose bits differ from the reference's
     *  (verify/techniques/logic.h): the count on rank 0, 0 on the others, -1 with @p err set on
     *  failure. Sets *reordered to 1 when the twin adds in another order than the reference by
     *  design on this run (windows summed on several ranks, or regrouped by a schedule), so its bits
     *  cannot match. Called when rank 0 found an fp twin outside its tolerance, on every rank of a
     *  distributed technique. NULL: never run. */
    double (*logic)(void *state, int twin, int corrupt, int *reordered, tf_error *err);
    /** The reference's own spread over @p steps steps: how far it moves when its inputs move by one
     *  ulp (verify/techniques/spread.h), in compare()'s measure; -1 with @p err set on failure.
     *  Called on rank 0 only for a reordered twin (technique::logic) whose bits differ: a spread above
     *  the tolerance makes the row "not comparable" rather than WRONG. NULL: never measured. */
    double (*spread)(void *state, int64_t steps, tf_error *err);
    /** Make twin @p twin ready to run all steps again (NULL: a twin is timed once only). */
    int (*restart)(void *state, int twin, tf_error *err);
    /** The work of one run (all timed steps), in the unit @p unit names ("edges", "steps"),
     *  for a rate column; its formula is written in the technique's file. NULL: no rate. */
    double (*work)(const void *state, const char **unit);
    /** Write the row's closing words (counts the technique wants beside the speed) into @p text.
     *  @p seconds: the reference's time then each twin's (0 when not timed). NULL: none. */
    void (*describe)(const void *state, const double *seconds, char *text, size_t size);
    /** Release the state (safe on a state whose setup failed half way). */
    void (*teardown)(void *state);
} technique;

/** What to do with a technique. */
typedef struct engine_options {
    int timed;         /**< 0: validate only (twofold verify); 1: validate, then time */
    int repeats;       /**< timed runs of a twin at most (best kept); at least 1 */
    int threads;       /**< OpenMP threads of the twins */
    comm *group;       /**< the ranks, or NULL */
    int corrupt;       /**< 1: spoil every twin answer before it is compared (technique::corrupt) */
    const model_kind *model; /**< the model a #TECHNIQUE_ON_MODEL entry runs (technique_context::model); NULL: its own */
    int rates;         /**< engine_run_rows(): under each timed row, the work rates (the bench program) */
    /** Called on rank 0 after the runs, before the state is released, so a sweep can read numbers
     *  it tabulates through what the entry's header exposes (NULL: not called). */
    void (*inspect)(void *context, const void *state);
    void *inspect_context; /**< passed to inspect */
} engine_options;

/** What the engine measured for one (technique, variant, data). */
typedef struct engine_result {
    int skipped;                              /**< 1: the technique does not apply (why: `reason`) */
    char reason[TF_ERROR_MESSAGE_SIZE];        /**< why it was skipped */
    int twins;                                /**< how many twins ran */
    technique_twin twin[TECHNIQUE_MAX_TWINS]; /**< their descriptions */
    double error[TECHNIQUE_MAX_TWINS];        /**< each twin's worst error over all steps */
    int64_t worst_step[TECHNIQUE_MAX_TWINS];  /**< the step where it was worst */
    int wrong;                                /**< twins outside their tolerance and not #amplified */
    int amplified;                            /**< fp twins outside it whose logic is the reference's
                                                   (technique::logic found no bit differing) */
    double logic[TECHNIQUE_MAX_TWINS];        /**< technique::logic's count of differing values, or -1
                                                   when it did not run */
    int reordered[TECHNIQUE_MAX_TWINS];       /**< technique::logic's *reordered */
    int incomparable;                         /**< reordered fp twins outside it where the reference's own
                                                   spread exceeds it too: not comparable on this data */
    double spread;                            /**< technique::spread, when measured (else 0; infinite when the
                                                   reference diverged) */
    char diverged[TF_ERROR_MESSAGE_SIZE];     /**< non-empty: the first step whose reference answer was not
                                                   finite (#TECHNIQUE_DIVERGED), in its words */
    int64_t steps;                            /**< steps compared */
    double seconds[1 + TECHNIQUE_MAX_TWINS];  /**< reference, then twins (timed runs only; 0 when not timed) */
    double work;                              /**< technique::work of a run, or 0 */
    const char *work_unit;                    /**< its unit */
    char note[256];                           /**< technique::describe's words */
} engine_result;

/**
 * Validate (and, when options->timed, time) variant @p variant of @p t on @p data, with
 * @p params passed to its setup. On every rank of options->group for a distributed technique, on
 * rank 0 alone otherwise (other ranks return at once with a zeroed result). @return 0 (the result
 * says whether the twins were right), #TECHNIQUE_SKIP, or a #tf_error_code when something failed.
 */
int engine_run(const technique *t, const dataset *data, const void *params, int variant,
               const engine_options *options, engine_result *result, tf_error *err);

/** What technique::corrupt writes in place of a value v: v + 1 + |v|. */
float technique_spoiled(float value);

/**
 * The two trainers of an entry that trains a model of the table and compares parameters after each
 * epoch (`incremental_train`, `minibatch`): @p context's model (T-GCN when it names none) with
 * @p hidden units and K 2 (3 for DCRNN, whose diffusion closure starts at T_2), its widths from
 * @p seq; SGD (chapter 01, "What verify compares"), windows of @p window with stride @p stride, 2
 * per step, @p epochs epochs. @p ref and
 * @p twin are made alike; pass them zeroed, and trainer_free() both whatever the outcome. A model
 * the data cannot take is #TECHNIQUE_SKIP naming why.
 */
int technique_sgd_trainers(const technique_context *context, const snapshot_seq *seq, int64_t hidden, int64_t window,
                           int64_t stride, int64_t epochs, trainer *ref, trainer *twin, tf_error *err);

/**
 * #TECHNIQUE_DIVERGED, with @p err naming the first value and the step, when one of @p n values of the
 * reference's answer @p what ("gradient", "parameter x") after step @p step is not finite; else TF_OK.
 */
int technique_reference_finite(const float *values, int64_t n, const char *what, int64_t step, tf_error *err);

/** technique_reference_finite() over every parameter of the reference's @p parameters. */
int technique_reference_parameters_finite(const parameter_list *parameters, int64_t step, tf_error *err);

/** Print one row for @p result: chapter, technique and variant, @p data_label, error, speed or WRONG. */
void engine_print_row(FILE *out, const technique *t, int variant, const char *data_label, const engine_result *result);

/** One row of a table run: a variant of a technique on some data. */
typedef struct engine_row {
    const technique *technique;   /**< the table entry */
    int variant;               /**< index into technique::variants */
    const char *data;          /**< dataset spec for dataset_load(), loaded by every rank that runs the row */
    const dataset *loaded;     /**< the data, already loaded (borrowed), instead of `data`; or NULL */
    const char *label;         /**< the row's data column */
    int corrupt;               /**< 1: spoil the twins' answers (engine_options::corrupt): the row must say WRONG */
} engine_row;

/** What a table run counted (on the rank that prints; zeros elsewhere). */
typedef struct engine_tally {
    int rows;      /**< rows printed */
    int skipped;   /**< of which the technique did not apply to the data */
    int wrong;     /**< of which a twin was not equal to the reference */
    int amplified; /**< of which the twins' logic is the reference's and the data amplified the kernels' rounding
                        beyond the tolerance (engine_result::amplified) */
    int incomparable; /**< of which the data amplified rounding beyond the tolerance (engine_result::incomparable) */
} engine_tally;

/**
 * The one loop over the table: run @p rows [count] in order with engine_run() and @p options
 * (its `corrupt` taken from each row), and on rank 0 of options->group (or always, without a
 * group) print the header, each row as it finishes (with its work rates when options->rates) and
 * the footer with the \c \#wrong count to stdout. Consecutive rows with the same `data` share one
 * load. Every rank of the group must call it with the same rows.
 * @return TF_OK (the tally says whether a twin was wrong), or a #tf_error_code with @p err set
 *         when a row could not run (its data did not load, a technique failed).
 */
int engine_run_rows(const engine_row *rows, int count, const engine_options *options, engine_tally *tally,
                    tf_error *err);

#ifdef __cplusplus
}
#endif

#endif
