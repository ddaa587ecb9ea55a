/**
 * @file ref/data/loaders.h
 * @brief Parsers for every dataset format twofold reads, from bytes already in memory.
 *
 * Each parser takes the file content (a #text, see io.h, which also undoes gzip) and a
 * `source` name used in error messages, so the same function serves files, tests and
 * fuzzers. On error nothing is left allocated and the message names the source, the line
 * (or, for JSON, the path such as `$.FX[12][3]`) and what was expected.
 *
 * Snapshot formats reproduce PyTorch Geometric Temporal's loaders number for number: same
 * lags, same standardization (computed in double, stored as float32, as that library does
 * with numpy then torch.FloatTensor), same targets, same edge order.
 */
#ifndef TWOFOLD_REF_LOADERS_H
#define TWOFOLD_REF_LOADERS_H

#include "ref/core/error.h"
#include "ref/data/events.h"
#include "ref/core/io.h"
#include "ref/data/snapshot.h"

/** The PyTorch Geometric Temporal JSON layouts, told apart by their keys. */
typedef enum pygt_layout {
    PYGT_CHICKENPOX,       /**< `edges`, `FX` [T][N]: static graph, unit weights, lags 4 */
    PYGT_PEDALME,          /**< `edges`, `weights`, `X` [T][N]: static weighted graph, lags 4 */
    PYGT_ENGLAND_COVID,    /**< `edge_mapping`, `time_periods`, `y` [T][N]: graph per day, standardized, lags 8 */
    PYGT_TWITTER_TENNIS,   /**< `time_periods`, "0".."T-1" {edges, weights, X, y}: one-hot features, log targets */
    PYGT_MONTEVIDEO_BUS,   /**< networkx node-link `nodes`, `links`: static graph, standardized, lags 4 */
} pygt_layout;

/** Name of a layout as PyTorch Geometric Temporal calls the dataset, e.g. "chickenpox". */
const char *pygt_layout_name(pygt_layout layout);

/** The library's default number of lags for @p layout (0 for twitter_tennis, which has none). */
int pygt_default_lags(pygt_layout layout);

/**
 * Parse a PyTorch Geometric Temporal JSON dataset into snapshots.
 * @param content  the file's bytes
 * @param source   name for error messages (the path)
 * @param lags     number of lagged features, or 0 for the layout's default (twitter_tennis,
 *                 whose features are not lagged, takes only 0)
 * @param out      out: the snapshots; free with snapshot_seq_free()
 * @param layout   out: which layout was recognized (may be NULL)
 * @param err      out: what went wrong, with the JSON path
 */
int load_pygt_json(const text *content, const char *source, int lags, snapshot_seq *out,
                   pygt_layout *layout, tf_error *err);

/** Default lags for the T-GCN CSV pair (T-GCN-PyTorch's seq_len). */
#define TGCN_DEFAULT_LAGS 12

/**
 * Parse the T-GCN CSV pair (martinwhl/T-GCN-PyTorch's data/ layout): @p speed has a header
 * of N sensor ids then one row of N readings per time step; @p adjacency is an N x N matrix
 * of edge weights (row i, column j nonzero = edge i -> j). Readings are divided by their
 * maximum, as T-GCN-PyTorch does; features are the previous @p lags steps (0 = 12), the
 * target the next step.
 */
int load_tgcn_csv(const text *speed, const char *speed_source, const text *adjacency,
                  const char *adjacency_source, int lags, snapshot_seq *out, tf_error *err);

/**
 * Per-snapshot class labels for a loaded snapshot sequence (`twofold train --labels FILE`, node
 * classification: ref/models/classify_task.h): one labelled vertex per line, `snapshot vertex
 * class` as whole numbers separated by blanks; blank and comment lines (`#`) are skipped. A vertex
 * a snapshot does not list is unlabelled; a listed one must be present at that snapshot and listed
 * once. The classes are 0 .. the largest given, at least 2 of them. Replaces any labels @p seq had;
 * on an error (one line: FILE:LINE: what was expected) @p seq is left without labels.
 */
int load_snapshot_labels(const text *content, const char *source, snapshot_seq *seq, tf_error *err);

/**
 * Parse a whitespace-separated event file: one event per line, `src dst time` and
 * optionally an integer `label` as fourth column (all lines alike). Blank lines and comment
 * lines (first non-blank character `#`, as SNAP's files start) are skipped. Timestamps must
 * not decrease.
 */
int load_events_text(const text *content, const char *source, event_stream *out, tf_error *err);

/** How load_events_csv_columns() chooses a CSV's edge features, and what it says it chose. */
typedef struct event_csv_columns {
    /** in: header names to take as edge features, separated by commas (`--edge-columns`), or
     * "none"; NULL for the rule (see load_events_csv_columns()) */
    const char *edge_columns;
    /** out: JODIE's users-and-items layout: the number of user ids, added to every item id;
     * 0 for one id space */
    int64_t users;
    /** out: one line naming the columns taken as edge features and the columns ignored */
    char report[1024];
} event_csv_columns;

/**
 * Parse a comma-separated event file whose header names the columns, ignoring ASCII case: a
 * source column (from, src, source, u, user, user_id), a destination column (to, dst, target,
 * i, item, item_id), a time column (time, ts, timestamp, t), optionally a label (label,
 * state_label). Edge features are the columns @p columns->edge_columns names, or without it
 * (or with @p columns NULL) those named `feat...` (bitcoin's `feature`, the rating) or
 * `f<digits>`. Every other column is ignored, so an index column such as TGN's `idx` or an
 * unnamed pandas index cannot leak into the model.
 *
 * JODIE's layout, `user_id,item_id,timestamp,state_label,comma_separated_list_of_features`,
 * is read too: the last header name stands for all the fields that follow on each line (taken
 * as features, by the rule or by that name in `edge_columns`). When the header names users
 * and items (user/user_id and item/item_id) they are two id spaces, as in JODIE: item ids are
 * moved after the user ids (item + largest user id + 1), as TGN's preprocessing does.
 *
 * Lines before the header that are blank or comments (`#`), and such lines after it, are
 * skipped; a UTF-8 byte order mark is ignored. Timestamps must not decrease.
 * @param content  the file's bytes
 * @param source   name for error messages and the report (the path)
 * @param columns  in/out: the choice of features and the report (may be NULL)
 * @param out      out: the events; free with event_stream_free()
 * @param err      out: what went wrong, with the line
 */
int load_events_csv_columns(const text *content, const char *source, event_csv_columns *columns,
                            event_stream *out, tf_error *err);

/** load_events_csv_columns() with the rule for edge features and no report. */
int load_events_csv(const text *content, const char *source, event_stream *out, tf_error *err);

#endif
