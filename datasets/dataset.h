/**
 * @file datasets/dataset.h
 * @brief One entry point for all data: a bundled name, a file path, or a generator spec.
 *
 * Every subcommand's `--data` goes through dataset_load(), which accepts
 *  - a bundled dataset name: `chickenpox`, `pedalme`, `england_covid`, `twitter_tennis`,
 *    `montevideo_bus`, `los`, `wikipedia`, `collegemsg`, `enron`, `bitcoin_otc`,
 *    `bitcoin_alpha` (looked up in the directory named by the TWOFOLD_DATASETS environment
 *    variable, else the source tree's datasets/);
 *  - a file path, its format told by its extension (a trailing .gz is ignored):
 *    `.json` PyTorch Geometric Temporal, `NAME_speed.csv` the T-GCN pair (with NAME_adj.csv
 *    beside it), other `.csv` events with a header (JODIE's layout too; see
 *    load_events_csv_columns() for which columns become edge features), `.txt`
 *    whitespace-separated events;
 *  - a generator spec: `powerlaw:nodes=N,edges=E,snapshots=T,churn=C,arrival=A,exponent=G,
 *    features=F,seed=S`, `communities:nodes=N,edges=E,snapshots=T,classes=C,change=X,homophily=H,
 *    features=F,noise=S,labelled=L,seed=S` (labelled, for node classification) or
 *    `events:nodes=N,events=M,repeat=R,exponent=G,features=F,seed=S`
 *    (every key optional; see datasets/generate.h for meanings and defaults).
 */
#ifndef TWOFOLD_DATASETS_DATASET_H
#define TWOFOLD_DATASETS_DATASET_H

#include <stdio.h>

#include "datasets/generate.h"
#include "ref/core/error.h"
#include "ref/data/events.h"
#include "ref/data/snapshot.h"

/** Whether a dataset is a snapshot sequence or an event stream. */
typedef enum dataset_kind {
    DATASET_SNAPSHOTS,   /**< discrete time: `snapshots` is filled */
    DATASET_EVENTS,      /**< continuous time: `events` is filled */
} dataset_kind;

/** A loaded dataset. Owns its data; free with dataset_free(). */
typedef struct dataset {
    dataset_kind kind;        /**< which member below holds the data */
    char name[64];            /**< short name, e.g. "chickenpox" or "powerlaw" */
    char format[160];         /**< how it was read, e.g. "PyTorch Geometric Temporal JSON (chickenpox), lags 4" */
    char source[4096];        /**< the file path or generator spec it came from */
    snapshot_seq snapshots;   /**< the data when kind == DATASET_SNAPSHOTS */
    event_stream events;      /**< the data when kind == DATASET_EVENTS */
} dataset;

/** Options that change how data is read. Zero-initialize for the defaults. */
typedef struct dataset_options {
    int lags;                   /**< lagged feature count for lagged formats; 0 = format default */
    progress_fn progress;       /**< progress callback for generators (NULL = none) */
    void *progress_context;     /**< passed to @ref progress */
    /** event CSVs: the header names to take as edge features, comma-separated, or "none";
     * NULL for the rule (columns named feat... or f<digits>; see load_events_csv_columns()) */
    const char *edge_columns;
    /** where to write one line saying which columns of an event CSV became edge features and
     * which were ignored (NULL = nowhere) */
    FILE *notes;
} dataset_options;

/** Load @p spec (name, path or generator spec) into @p out. @p options may be NULL. */
int dataset_load(const char *spec, const dataset_options *options, dataset *out, tf_error *err);

/**
 * Replace the class labels of the snapshot dataset @p d with those of the file at @p path
 * (load_snapshot_labels(): `snapshot vertex class` lines; `twofold train --labels`). An event
 * stream is refused.
 */
int dataset_attach_labels(dataset *d, const char *path, tf_error *err);

/** Release @p d's data and zero it. */
void dataset_free(dataset *d);

/** The statistics `twofold info` prints and datasets/README.md tabulates. */
typedef struct dataset_summary {
    int64_t vertices;            /**< snapshots: size of the id space; events: vertices in >= 1 event */
    int64_t id_space;            /**< num_nodes (events: largest id + 1) */
    int64_t steps;               /**< number of snapshots or of events */
    snapshot_edge_stats edges;   /**< snapshots: edges per snapshot */
    int64_t present_min;         /**< snapshots: fewest vertices present in one snapshot */
    int64_t present_max;         /**< snapshots: most vertices present in one snapshot */
    int64_t distinct_pairs;      /**< events: distinct (src, dst) pairs */
    double first_time;           /**< events: first timestamp */
    double last_time;            /**< events: last timestamp */
    int64_t feature_width;       /**< node feature columns (snapshots) or edge feature columns (events) */
    int64_t target_width;        /**< snapshots: target columns; events: 0 */
    int has_labels;              /**< events: 1 if the file carries labels */
} dataset_summary;

/** Compute @p d's summary. */
int dataset_summarize(const dataset *d, dataset_summary *out, tf_error *err);

/** A dataset shipped in datasets/. */
typedef struct bundled_dataset {
    const char *name;           /**< what users type: "chickenpox" */
    const char *file;           /**< file in the datasets directory */
    const char *description;    /**< one line for listings */
} bundled_dataset;

/** The bundled datasets, terminated by an entry with name == NULL. */
extern const bundled_dataset bundled_datasets[];

/** Directory searched for bundled names: $TWOFOLD_DATASETS, else the source tree's datasets/. */
const char *dataset_directory(void);

#endif
