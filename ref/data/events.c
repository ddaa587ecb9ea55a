#include "ref/data/events.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"

int event_stream_alloc(event_stream *es, int64_t num_events, int64_t feature_width,
                       int has_labels, tf_error *err)
{
    memset(es, 0, sizeof *es);
    if (num_events < 0 || feature_width < 0)
        return tf_error_set(err, TF_ERR_INPUT, "event stream: negative size");
    es->num_events = num_events;
    es->feature_width = feature_width;
    size_t n = (size_t)num_events;
    int ok = (es->src = tf_alloc(n, sizeof *es->src, "event sources", err)) &&
             (es->dst = tf_alloc(n, sizeof *es->dst, "event destinations", err)) &&
             (es->time = tf_alloc(n, sizeof *es->time, "event timestamps", err));
    if (ok && feature_width > 0) {
        if ((size_t)feature_width > SIZE_MAX / (n ? n : 1)) {
            tf_error_set(err, TF_ERR_INPUT, "too large for memory: event features overflow");
            ok = 0;
        } else {
            ok = (es->features = tf_alloc(n * (size_t)feature_width, sizeof *es->features,
                                          "event features", err)) != NULL;
        }
    }
    if (ok && has_labels)
        ok = (es->label = tf_alloc(n, sizeof *es->label, "event labels", err)) != NULL;
    if (!ok) {
        event_stream_free(es);
        return TF_ERR_INPUT;
    }
    return TF_OK;
}

void event_stream_free(event_stream *es)
{
    free(es->src);
    free(es->dst);
    free(es->time);
    free(es->features);
    free(es->label);
    memset(es, 0, sizeof *es);
}

int event_stream_copy_prefix(const event_stream *es, int64_t count, event_stream *out, tf_error *err)
{
    if (count < 0 || count > es->num_events)
        return tf_error_set(err, TF_ERR_INPUT, "the first %lld events of a stream of %lld", (long long)count,
                            (long long)es->num_events);
    if (event_stream_alloc(out, count, es->feature_width, es->label != NULL, err) != TF_OK)
        return TF_ERR_INPUT;
    out->num_nodes = es->num_nodes;
    const size_t n = (size_t)count;
    memcpy(out->src, es->src, n * sizeof *es->src);
    memcpy(out->dst, es->dst, n * sizeof *es->dst);
    memcpy(out->time, es->time, n * sizeof *es->time);
    if (es->feature_width > 0)
        memcpy(out->features, es->features, n * (size_t)es->feature_width * sizeof *es->features);
    if (es->label)
        memcpy(out->label, es->label, n * sizeof *es->label);
    return TF_OK;
}

int event_stream_validate(const event_stream *es, const char *source, tf_error *err)
{
    for (int64_t i = 0; i < es->num_events; i++) {
        if (es->src[i] < 0 || es->src[i] >= es->num_nodes || es->dst[i] < 0 ||
            es->dst[i] >= es->num_nodes)
            return tf_error_set(err, TF_ERR_INPUT, "%s: event %lld: vertex id outside 0..%lld",
                                source, (long long)i, (long long)es->num_nodes - 1);
        if (!isfinite(es->time[i]))
            return tf_error_set(err, TF_ERR_INPUT, "%s: event %lld: timestamp is not finite",
                                source, (long long)i);
        if (fabs(es->time[i]) > EVENT_TIME_LIMIT)
            return tf_error_set(err, TF_ERR_INPUT, "%s: event %lld: timestamp %g is beyond +-%.3g: time "
                                "differences in float32 would overflow", source, (long long)i, es->time[i],
                                (double)EVENT_TIME_LIMIT);
        if (i > 0 && es->time[i] < es->time[i - 1])
            return tf_error_set(err, TF_ERR_INPUT,
                                "%s: event %lld: timestamp %.17g is earlier than the previous %.17g;"
                                " events must be sorted by time",
                                source, (long long)i, es->time[i], es->time[i - 1]);
        for (int64_t f = 0; f < es->feature_width; f++)
            if (!isfinite(es->features[i * es->feature_width + f]))
                return tf_error_set(err, TF_ERR_INPUT, "%s: event %lld: feature %lld is not finite",
                                    source, (long long)i, (long long)f);
    }
    return TF_OK;
}

int64_t event_stream_active_nodes(const event_stream *es)
{
    uint8_t *seen = calloc((size_t)es->num_nodes + 1, 1);
    if (!seen)
        return -1;
    int64_t count = 0;
    for (int64_t i = 0; i < es->num_events; i++) {
        count += !seen[es->src[i]];
        seen[es->src[i]] = 1;
        count += !seen[es->dst[i]];
        seen[es->dst[i]] = 1;
    }
    free(seen);
    return count;
}

static int compare_pairs(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int64_t event_stream_distinct_pairs(const event_stream *es)
{
    if (es->num_events == 0)
        return 0;
    uint64_t *pairs = malloc((size_t)es->num_events * sizeof *pairs);
    if (!pairs)
        return -1;
    for (int64_t i = 0; i < es->num_events; i++)
        pairs[i] = ((uint64_t)(uint32_t)es->src[i] << 32) | (uint32_t)es->dst[i];
    qsort(pairs, (size_t)es->num_events, sizeof *pairs, compare_pairs);
    int64_t distinct = 1;
    for (int64_t i = 1; i < es->num_events; i++)
        distinct += pairs[i] != pairs[i - 1];
    free(pairs);
    return distinct;
}
