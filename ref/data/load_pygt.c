/* PyTorch Geometric Temporal JSON datasets -> snapshot_seq.
 *
 * Each layout mirrors the matching loader in torch_geometric_temporal/dataset/ (chickenpox.py,
 * pedalme.py, encovid.py, twitter_tennis.py, montevideo_bus.py): the arithmetic is done in
 * double like numpy's and rounded to float32 at the end like torch.FloatTensor. Reading typed
 * values out of the JSON, with a path in every error, is ref/data/load_pygt_json.c's job. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/data/load_pygt_json.h"
#include "ref/data/loaders.h"
#include "ref/core/memory.h"

const char *pygt_layout_name(pygt_layout layout)
{
    switch (layout) {
    case PYGT_CHICKENPOX: return "chickenpox";
    case PYGT_PEDALME: return "pedalme";
    case PYGT_ENGLAND_COVID: return "england_covid";
    case PYGT_TWITTER_TENNIS: return "twitter_tennis";
    case PYGT_MONTEVIDEO_BUS: return "montevideo_bus";
    }
    return "unknown";
}

int pygt_default_lags(pygt_layout layout)
{
    switch (layout) {
    case PYGT_ENGLAND_COVID: return 8;
    case PYGT_TWITTER_TENNIS: return 0;
    default: return 4;
    }
}

/* ---- shared snapshot construction ------------------------------------------------------ */

/* numpy's (x - x.mean(axis=0)) / (x.std(axis=0) + epsilon) over series [steps][columns], in place.
 * numpy reduces axis 0 of a C-ordered array row after row, so plain sequential sums in
 * double reproduce its rounding. A column with zero spread has no standard score: numpy
 * would silently produce NaN, twofold reports it. */
static int standardize_columns(const pygt_json_context *c, const char *path, double *series, int64_t steps,
                               int64_t columns, double epsilon)
{
    for (int64_t v = 0; v < columns; v++) {
        double sum = 0;
        for (int64_t t = 0; t < steps; t++)
            sum += series[t * columns + v];
        double mean = sum / (double)steps;
        double squares = 0;
        for (int64_t t = 0; t < steps; t++) {
            double d = series[t * columns + v] - mean;
            squares += d * d;
        }
        double scale = sqrt(squares / (double)steps) + epsilon;
        if (scale == 0)
            return tf_error_set(c->err, TF_ERR_INPUT, "%s: %s: vertex %lld is constant over time, its standard score is undefined",
                                c->source, path, (long long)v);
        for (int64_t t = 0; t < steps; t++)
            series[t * columns + v] = (series[t * columns + v] - mean) / scale;
    }
    return TF_OK;
}

/* Snapshot i gets features series[i .. i+lags-1] (one column per lag) and target
 * series[i+lags], for i in 0 .. steps-lags-1: the `stacked[i:i+lags, :].T` of the library. */
static int lagged_snapshots(const pygt_json_context *c, const char *path, const double *series, int64_t steps,
                            int64_t num_nodes, int lags, snapshot_seq *out)
{
    if (steps <= lags)
        return tf_error_set(c->err, TF_ERR_INPUT, "%s: %s: %lld time steps, expected more than the %d lags",
                            c->source, path, (long long)steps, lags);
    if (snapshot_seq_alloc(out, steps - lags, num_nodes, lags, 1, c->err) != TF_OK)
        return TF_ERR_INPUT;
    for (int64_t i = 0; i < out->num_snapshots; i++) {
        snapshot *s = &out->snapshots[i];
        for (int64_t v = 0; v < num_nodes; v++) {
            for (int k = 0; k < lags; k++)
                s->features.data[v * lags + k] = (float)series[(i + k) * num_nodes + v];
            s->targets.data[v] = (float)series[(i + lags) * num_nodes + v];
        }
    }
    return TF_OK;
}

/* Give every snapshot the same edges src, dst, weights [count] (weights NULL: all ones). */
static int static_edges(snapshot_seq *out, int64_t count, const int32_t *src, const int32_t *dst,
                        const float *weights, tf_error *err)
{
    for (int64_t t = 0; t < out->num_snapshots; t++)
        if (snapshot_seq_set_edges(out, t, count, src, dst, weights, err) != TF_OK)
            return TF_ERR_INPUT;
    return TF_OK;
}

/* ---- the layouts ------------------------------------------------------------------------ */

/* chickenpox (`FX`, unit weights) and pedalme (`X`, `weights`): a static graph and one
 * [T][N] series that is both features (lagged) and target. */
static int load_static_series(const pygt_json_context *c, const cJSON *root, const char *series_key,
                              int has_weights, int lags, snapshot_seq *out)
{
    char path[64];
    snprintf(path, sizeof path, "$.%s", series_key);
    int64_t steps, num_nodes, count = 0;
    double *series = NULL;
    int32_t *src = NULL, *dst = NULL;
    float *weights = NULL;
    const cJSON *item = pygt_json_member(c, root, "$", series_key);
    int status = item ? pygt_json_matrix(c, item, path, &steps, &num_nodes, &series) : TF_ERR_INPUT;
    /* Its columns are the vertices: an empty series would make every edge's id "out of range in 0..-1". */
    if (status == TF_OK && (steps < 1 || num_nodes < 1))
        status = tf_error_set(c->err, TF_ERR_INPUT, "%s: %s: %lld x %lld, expected a row per snapshot and a column per "
                                                    "vertex (at least 1 x 1)",
                              c->source, path, (long long)steps, (long long)num_nodes);
    if (status == TF_OK && (item = pygt_json_member(c, root, "$", "edges")))
        status = pygt_json_edges(c, item, "$.edges", num_nodes, &count, &src, &dst);
    else
        status = TF_ERR_INPUT;
    if (status == TF_OK && has_weights)
        status = (item = pygt_json_member(c, root, "$", "weights"))
                     ? pygt_json_weights(c, item, "$.weights", count, &weights)
                     : TF_ERR_INPUT;
    if (status == TF_OK)
        status = lagged_snapshots(c, path, series, steps, num_nodes, lags, out);
    if (status == TF_OK)
        status = static_edges(out, count, src, dst, weights, c->err);
    free(series);
    free(src);
    free(dst);
    free(weights);
    return status;
}

/* england_covid: standardized case counts, and the graph of day i for snapshot i (the
 * library pairs snapshot i with edge_index[i], not with the target's day i+lags). */
static int load_england_covid(const pygt_json_context *c, const cJSON *root, int lags, snapshot_seq *out)
{
    const cJSON *periods = pygt_json_member(c, root, "$", "time_periods");
    const cJSON *y = periods ? pygt_json_member(c, root, "$", "y") : NULL;
    const cJSON *mapping = y ? pygt_json_member(c, root, "$", "edge_mapping") : NULL;
    const cJSON *indices = mapping ? pygt_json_member(c, mapping, "$.edge_mapping", "edge_index") : NULL;
    const cJSON *all_weights = indices ? pygt_json_member(c, mapping, "$.edge_mapping", "edge_weight") : NULL;
    double period_count;
    if (!all_weights || pygt_json_number(c, periods, "$.time_periods", &period_count) != TF_OK)
        return TF_ERR_INPUT;
    int64_t steps, num_nodes;
    double *series;
    if (pygt_json_matrix(c, y, "$.y", &steps, &num_nodes, &series) != TF_OK)
        return TF_ERR_INPUT;
    int status = TF_OK;
    if (period_count != (double)steps)
        status = tf_error_set(c->err, TF_ERR_INPUT, "%s: $.time_periods: is %g, expected the %lld rows of $.y",
                              c->source, period_count, (long long)steps);
    if (status == TF_OK)
        status = standardize_columns(c, "$.y", series, steps, num_nodes, 1e-10);
    if (status == TF_OK)
        status = lagged_snapshots(c, "$.y", series, steps, num_nodes, lags, out);
    for (int64_t t = 0; status == TF_OK && t < out->num_snapshots; t++) {
        char key[32], path[96];
        snprintf(key, sizeof key, "%lld", (long long)t);
        snprintf(path, sizeof path, "$.edge_mapping.edge_index.%s", key);
        int64_t count;
        int32_t *src = NULL, *dst = NULL;
        float *weights = NULL;
        const cJSON *item = pygt_json_member(c, indices, "$.edge_mapping.edge_index", key);
        status = item ? pygt_json_edges(c, item, path, num_nodes, &count, &src, &dst) : TF_ERR_INPUT;
        if (status == TF_OK) {
            snprintf(path, sizeof path, "$.edge_mapping.edge_weight.%s", key);
            item = pygt_json_member(c, all_weights, "$.edge_mapping.edge_weight", key);
            status = item ? pygt_json_weights(c, item, path, count, &weights) : TF_ERR_INPUT;
        }
        if (status == TF_OK)
            status = snapshot_seq_set_edges(out, t, count, src, dst, weights, c->err);
        free(src);
        free(dst);
        free(weights);
    }
    free(series);
    if (status != TF_OK)
        snapshot_seq_free(out);
    return status;
}

/* twitter_tennis's encode_features: one-hot of min(ceil(log(degree + 1)), 4) in 5 columns,
 * then one-hot of floor(10 * transitivity) in 11 columns. */
#define TENNIS_DEGREE_CLASSES 5
#define TENNIS_TRANSITIVITY_CLASSES 11
/* raw [num_nodes][2] (degree, transitivity) -> features [num_nodes][16] (zeroed before). */
static int tennis_encode(const pygt_json_context *c, const char *path, const double *raw, int64_t num_nodes,
                         float *features)
{
    const int64_t width = TENNIS_DEGREE_CLASSES + TENNIS_TRANSITIVITY_CLASSES;
    for (int64_t v = 0; v < num_nodes; v++) {
        double degree = raw[2 * v], transitivity = raw[2 * v + 1];
        double degree_class = fmin(ceil(log(degree + 1.0)), TENNIS_DEGREE_CLASSES - 1);
        double transitivity_class = floor(transitivity * 10);
        /* The degree itself, not its class: log of a degree below -1 is NaN, and fmin() returns the
         * other operand for NaN, which made -5 the top class. */
        if (!(degree >= 0) || !isfinite(degree) || !(transitivity_class >= 0) ||
            transitivity_class >= TENNIS_TRANSITIVITY_CLASSES)
            return tf_error_set(c->err, TF_ERR_INPUT,
                                "%s: %s[%lld]: degree %g and transitivity %g, expected degree >= 0 and transitivity in [0, 1.1)",
                                c->source, path, (long long)v, degree, transitivity);
        features[v * width + (int64_t)degree_class] = 1.0f;
        features[v * width + TENNIS_DEGREE_CLASSES + (int64_t)transitivity_class] = 1.0f;
    }
    return TF_OK;
}

/* Finds the step objects "0" .. "steps-1" in one pass over the root's members and checks
 * that each has an `X` with as many rows as step 0's, before anything is allocated: a file
 * announcing more steps or vertices than it holds then fails fast, not after allocating
 * what it announced. *items is allocated [steps] (caller frees); num_nodes [1] gets the
 * rows of $.0.X. */
static int tennis_index_steps(const pygt_json_context *c, const cJSON *root, int64_t steps, const cJSON ***items,
                              int64_t *num_nodes)
{
    *items = NULL;
    int64_t members = cJSON_GetArraySize(root);
    if (steps > members)
        return tf_error_set(c->err, TF_ERR_INPUT, "%s: $.time_periods: is %lld, but the file has only %lld members",
                            c->source, (long long)steps, (long long)members);
    const cJSON **found = tf_alloc((size_t)steps, sizeof *found, "snapshot index", c->err);
    if (!found)
        return TF_ERR_INPUT;
    const cJSON *member;
    cJSON_ArrayForEach(member, root) {
        int64_t t;
        const char *key = member->string;
        if (parse_int64(key, key + strlen(key), &t) == 0 && t >= 0 && t < steps)
            found[t] = member;
    }
    int status = TF_OK;
    for (int64_t t = 0; status == TF_OK && t < steps; t++) {
        char key[32], path[48], x_path[64];
        snprintf(key, sizeof key, "%lld", (long long)t);
        snprintf(path, sizeof path, "$.%s", key);
        snprintf(x_path, sizeof x_path, "$.%s.X", key);
        if (!found[t]) {
            status = tf_error_set(c->err, TF_ERR_INPUT, "%s: $: missing key \"%s\"", c->source, key);
            break;
        }
        const cJSON *x = pygt_json_member(c, found[t], path, "X");
        int64_t rows = 0;
        if (!x || pygt_json_array(c, x, x_path, &rows) != TF_OK)
            status = TF_ERR_INPUT;
        else if (t == 0)
            *num_nodes = rows;
        else if (rows != *num_nodes)
            status = tf_error_set(c->err, TF_ERR_INPUT, "%s: %s: %lld rows, expected %lld like $.0.X", c->source,
                                  x_path, (long long)rows, (long long)*num_nodes);
    }
    if (status != TF_OK) {
        free(found);
        return status;
    }
    *items = found;
    return TF_OK;
}

/* twitter_tennis: per-snapshot graphs and raw [degree, transitivity] features, encoded;
 * target log(1 + y) of the next snapshot (the last one predicts itself). */
static int load_twitter_tennis(const pygt_json_context *c, const cJSON *root, snapshot_seq *out)
{
    double period_count;
    const cJSON *periods = pygt_json_member(c, root, "$", "time_periods");
    if (!periods || pygt_json_number(c, periods, "$.time_periods", &period_count) != TF_OK)
        return TF_ERR_INPUT;
    if (period_count < 1 || period_count != floor(period_count) || period_count > 1e7)
        return tf_error_set(c->err, TF_ERR_INPUT, "%s: $.time_periods: is %g, expected a positive integer",
                            c->source, period_count);
    int64_t steps = (int64_t)period_count, num_nodes = 0;
    const cJSON **step_items = NULL;
    int status = tennis_index_steps(c, root, steps, &step_items, &num_nodes);
    if (status == TF_OK)
        status = snapshot_seq_alloc(out, steps, num_nodes, TENNIS_DEGREE_CLASSES + TENNIS_TRANSITIVITY_CLASSES, 1,
                                    c->err);
    for (int64_t t = 0; status == TF_OK && t < steps; t++) {
        char key[32], step_path[48], path[64];
        snprintf(key, sizeof key, "%lld", (long long)t);
        snprintf(step_path, sizeof step_path, "$.%s", key);
        const cJSON *step = step_items[t];
        const cJSON *x = pygt_json_member(c, step, step_path, "X");
        if (!x)
            status = TF_ERR_INPUT;
        int64_t rows, cols;
        double *raw = NULL;
        snprintf(path, sizeof path, "$.%s.X", key);
        if (status == TF_OK)
            status = pygt_json_matrix(c, x, path, &rows, &cols, &raw);
        if (status == TF_OK && cols != 2)
            status = tf_error_set(c->err, TF_ERR_INPUT, "%s: %s: %lld x %lld, expected %lld x 2 (degree, transitivity)",
                                  c->source, path, (long long)rows, (long long)cols, (long long)num_nodes);
        if (status == TF_OK)
            status = tennis_encode(c, path, raw, num_nodes, out->snapshots[t].features.data);
        free(raw);

        int64_t count;
        int32_t *src = NULL, *dst = NULL;
        float *weights = NULL;
        const cJSON *item;
        snprintf(path, sizeof path, "$.%s.edges", key);
        if (status == TF_OK)
            status = (item = pygt_json_member(c, step, step_path, "edges"))
                         ? pygt_json_edges(c, item, path, num_nodes, &count, &src, &dst)
                         : TF_ERR_INPUT;
        snprintf(path, sizeof path, "$.%s.weights", key);
        if (status == TF_OK)
            status = (item = pygt_json_member(c, step, step_path, "weights"))
                         ? pygt_json_weights(c, item, path, count, &weights)
                         : TF_ERR_INPUT;
        if (status == TF_OK)
            status = snapshot_seq_set_edges(out, t, count, src, dst, weights, c->err);
        free(src);
        free(dst);
        free(weights);
    }
    for (int64_t t = 0; status == TF_OK && t < steps; t++) {
        int64_t next = t + 1 < steps ? t + 1 : steps - 1;
        char key[32], step_path[48], path[64];
        snprintf(key, sizeof key, "%lld", (long long)next);
        snprintf(step_path, sizeof step_path, "$.%s", key);
        snprintf(path, sizeof path, "$.%s.y", key);
        const cJSON *y = pygt_json_member(c, step_items[next], step_path, "y");
        int64_t length;
        double *counts = NULL;
        status = y ? pygt_json_vector(c, y, path, &length, &counts) : TF_ERR_INPUT;
        if (status == TF_OK && length != num_nodes)
            status = tf_error_set(c->err, TF_ERR_INPUT, "%s: %s: %lld values, expected one per vertex (%lld)",
                                  c->source, path, (long long)length, (long long)num_nodes);
        for (int64_t v = 0; status == TF_OK && v < num_nodes; v++) {
            if (!(counts[v] >= 0) || !isfinite(counts[v])) /* a count, as the message says (-0.5 passed a > -1 check) */
                status = tf_error_set(c->err, TF_ERR_INPUT, "%s: %s[%lld]: %g, expected a count >= 0", c->source,
                                      path, (long long)v, counts[v]);
            else
                out->snapshots[t].targets.data[v] = (float)log(1.0 + counts[v]);
        }
        free(counts);
    }
    free(step_items);
    if (status != TF_OK)
        snapshot_seq_free(out);
    return status;
}

/* montevideo_bus: networkx node-link JSON; vertex order is the order of `nodes`, links name
 * vertices by `bus_stop`; features and targets are the standardized `X.y` and `y`. */
static int load_montevideo_bus(const pygt_json_context *c, const cJSON *root, int lags, snapshot_seq *out)
{
    const cJSON *nodes = pygt_json_member(c, root, "$", "nodes");
    const cJSON *links = nodes ? pygt_json_member(c, root, "$", "links") : NULL;
    int64_t num_nodes = 0, num_links = 0, steps = 0;
    if (!links || pygt_json_array(c, nodes, "$.nodes", &num_nodes) != TF_OK ||
        pygt_json_array(c, links, "$.links", &num_links) != TF_OK)
        return TF_ERR_INPUT;
    double *stop_ids = tf_alloc((size_t)num_nodes, sizeof *stop_ids, "bus stop ids", c->err);
    double *feature_series = NULL, *target_series = NULL;
    int status = stop_ids ? TF_OK : TF_ERR_INPUT;
    int64_t v = 0;
    const cJSON *node;
    cJSON_ArrayForEach(node, nodes) {
        if (status != TF_OK)
            break;
        char path[96];
        snprintf(path, sizeof path, "$.nodes[%lld]", (long long)v);
        const cJSON *stop = pygt_json_member(c, node, path, "bus_stop");
        const cJSON *x = stop ? pygt_json_member(c, node, path, "X") : NULL;
        const cJSON *xy = x ? pygt_json_member(c, x, path, "y") : NULL;
        const cJSON *y = xy ? pygt_json_member(c, node, path, "y") : NULL;
        if (!y) {
            status = TF_ERR_INPUT;
            break;
        }
        snprintf(path, sizeof path, "$.nodes[%lld].bus_stop", (long long)v);
        status = pygt_json_number(c, stop, path, &stop_ids[v]);
        for (int64_t u = 0; status == TF_OK && u < v; u++)
            if (stop_ids[u] == stop_ids[v])
                status = tf_error_set(c->err, TF_ERR_INPUT, "%s: %s: bus stop %g appears twice", c->source, path,
                                      stop_ids[v]);
        for (int which = 0; status == TF_OK && which < 2; which++) {
            snprintf(path, sizeof path, which == 0 ? "$.nodes[%lld].X.y" : "$.nodes[%lld].y", (long long)v);
            int64_t length;
            double *values;
            status = pygt_json_vector(c, which == 0 ? xy : y, path, &length, &values);
            if (status != TF_OK)
                break;
            if (v == 0 && which == 0) {
                steps = length;
                feature_series = tf_alloc((size_t)(steps * num_nodes), sizeof(double), "bus series", c->err);
                target_series = feature_series ? tf_alloc((size_t)(steps * num_nodes), sizeof(double), "bus series", c->err) : NULL;
                if (!target_series)
                    status = TF_ERR_INPUT;
            }
            if (status == TF_OK && length != steps)
                status = tf_error_set(c->err, TF_ERR_INPUT, "%s: %s: %lld values, expected %lld like $.nodes[0].X.y",
                                      c->source, path, (long long)length, (long long)steps);
            double *series = which == 0 ? feature_series : target_series;
            for (int64_t t = 0; status == TF_OK && t < steps; t++)
                series[t * num_nodes + v] = values[t];
            free(values);
        }
        v++;
    }

    int32_t *src = NULL, *dst = NULL;
    float *weights = NULL;
    if (status == TF_OK) {
        src = tf_alloc((size_t)num_links, sizeof *src, "edge sources", c->err);
        dst = src ? tf_alloc((size_t)num_links, sizeof *dst, "edge targets", c->err) : NULL;
        weights = dst ? tf_alloc((size_t)num_links, sizeof *weights, "edge weights", c->err) : NULL;
        status = weights ? TF_OK : TF_ERR_INPUT;
    }
    int64_t e = 0;
    const cJSON *link;
    cJSON_ArrayForEach(link, links) {
        if (status != TF_OK)
            break;
        char path[96];
        static const char *keys[3] = {"source", "target", "weight"};
        double values[3];
        for (int k = 0; status == TF_OK && k < 3; k++) {
            snprintf(path, sizeof path, "$.links[%lld]", (long long)e);
            const cJSON *item = pygt_json_member(c, link, path, keys[k]);
            snprintf(path, sizeof path, "$.links[%lld].%s", (long long)e, keys[k]);
            status = item ? pygt_json_number(c, item, path, &values[k]) : TF_ERR_INPUT;
            if (status == TF_OK && k < 2) {
                int64_t found = -1;
                for (int64_t u = 0; u < num_nodes && found < 0; u++)
                    if (stop_ids[u] == values[k])
                        found = u;
                if (found < 0)
                    status = tf_error_set(c->err, TF_ERR_INPUT, "%s: %s: bus stop %g is not in $.nodes", c->source,
                                          path, values[k]);
                (k == 0 ? src : dst)[e] = (int32_t)found;
            }
        }
        if (status == TF_OK)
            weights[e] = (float)values[2];
        e++;
    }
    if (status == TF_OK && num_nodes == 0)
        status = tf_error_set(c->err, TF_ERR_INPUT, "%s: $.nodes: is empty, expected bus stops", c->source);
    if (status == TF_OK)
        status = standardize_columns(c, "$.nodes[*].X.y", feature_series, steps, num_nodes, 0.0);
    if (status == TF_OK)
        status = standardize_columns(c, "$.nodes[*].y", target_series, steps, num_nodes, 0.0);
    if (status == TF_OK)
        status = lagged_snapshots(c, "$.nodes[*].X.y", feature_series, steps, num_nodes, lags, out);
    /* The features came from X.y; the targets come from y, lagged the same way. */
    for (int64_t t = 0; status == TF_OK && t < out->num_snapshots; t++)
        for (int64_t u = 0; u < num_nodes; u++)
            out->snapshots[t].targets.data[u] = (float)target_series[(t + lags) * num_nodes + u];
    if (status == TF_OK)
        status = static_edges(out, num_links, src, dst, weights, c->err);
    free(stop_ids);
    free(feature_series);
    free(target_series);
    free(src);
    free(dst);
    free(weights);
    if (status != TF_OK)
        snapshot_seq_free(out);
    return status;
}

/* ---- entry point ---------------------------------------------------------------------- */

int load_pygt_json(const text *content, const char *source, int lags, snapshot_seq *out,
                   pygt_layout *layout, tf_error *err)
{
    memset(out, 0, sizeof *out);
    cJSON *root = pygt_json_parse(content, source, err);
    if (!root)
        return TF_ERR_INPUT;
    pygt_json_context c = {source, err};
    pygt_layout found = PYGT_CHICKENPOX;
    int status = TF_OK;
    if (!cJSON_IsObject(root))
        status = pygt_json_fail(&c, "$", "an object", root);
    else if (cJSON_GetObjectItemCaseSensitive(root, "FX"))
        found = PYGT_CHICKENPOX;
    else if (cJSON_GetObjectItemCaseSensitive(root, "edge_mapping"))
        found = PYGT_ENGLAND_COVID;
    else if (cJSON_GetObjectItemCaseSensitive(root, "links"))
        found = PYGT_MONTEVIDEO_BUS;
    else if (cJSON_GetObjectItemCaseSensitive(root, "time_periods"))
        found = PYGT_TWITTER_TENNIS;
    else if (cJSON_GetObjectItemCaseSensitive(root, "X"))
        found = PYGT_PEDALME;
    else
        status = tf_error_set(err, TF_ERR_INPUT,
                              "%s: $: no known PyTorch Geometric Temporal layout, expected one of the keys "
                              "FX (chickenpox), X (pedalme), edge_mapping (england_covid), time_periods "
                              "(twitter_tennis), links (montevideo_bus)",
                              source);
    if (status == TF_OK && lags != 0 && found == PYGT_TWITTER_TENNIS)
        status = tf_error_set(err, TF_ERR_INPUT,
                              "%s: lags %d asked for, but the twitter_tennis layout has no lagged features (each "
                              "snapshot's features are given as they are)",
                              source, lags);
    if (status == TF_OK) {
        if (lags == 0)
            lags = pygt_default_lags(found);
        if (lags < 1 && found != PYGT_TWITTER_TENNIS)
            status = tf_error_set(err, TF_ERR_INPUT, "%s: lags is %d, expected at least 1", source, lags);
    }
    if (status == TF_OK) {
        switch (found) {
        case PYGT_CHICKENPOX: status = load_static_series(&c, root, "FX", 0, lags, out); break;
        case PYGT_PEDALME: status = load_static_series(&c, root, "X", 1, lags, out); break;
        case PYGT_ENGLAND_COVID: status = load_england_covid(&c, root, lags, out); break;
        case PYGT_TWITTER_TENNIS: status = load_twitter_tennis(&c, root, out); break;
        case PYGT_MONTEVIDEO_BUS: status = load_montevideo_bus(&c, root, lags, out); break;
        }
        if (status != TF_OK)
            snapshot_seq_free(out);
        else if (layout)
            *layout = found;
    }
    cJSON_Delete(root);
    return status;
}
