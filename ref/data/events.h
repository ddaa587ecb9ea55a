/**
 * @file ref/data/events.h
 * @brief A continuous-time dynamic graph: a time-ordered stream of interaction events.
 *
 * Event i says "src[i] interacted with dst[i] at time[i]", optionally with a row of edge
 * features and an integer label. Timestamps never decrease (the loaders reject a file that
 * goes back in time), so event order is time order and the event index breaks ties — the
 * rule later techniques rely on ("largest event index wins").
 *
 * Vertex ids are kept as they appear in the file (Wikipedia's start at 1); num_nodes is
 * the largest id plus one, so arrays indexed by vertex may have unused rows.
 */
#ifndef TWOFOLD_REF_EVENTS_H
#define TWOFOLD_REF_EVENTS_H

#include <float.h>
#include <stdint.h>

#include "ref/core/error.h"

/**
 * The largest timestamp magnitude an event may have. The models feed time differences (an event's
 * time minus a vertex's last update) to float32 time encoders; two times within FLT_MAX / 2 of
 * zero always differ by at most FLT_MAX, so no difference overflows to infinity (and on to NaN
 * scores). 1.7e38: far beyond any clock, Unix seconds or nanoseconds alike.
 */
#define EVENT_TIME_LIMIT (FLT_MAX / 2)

/** The stream. Owns its arrays; free with event_stream_free(). */
typedef struct event_stream {
    int64_t num_events;      /**< number of events */
    int64_t num_nodes;       /**< largest vertex id + 1 */
    int32_t *src;            /**< [num_events] source vertex */
    int32_t *dst;            /**< [num_events] destination vertex */
    double *time;            /**< [num_events] timestamps, non-decreasing */
    int64_t feature_width;   /**< columns of `features`; 0 when the events carry none */
    float *features;         /**< [num_events][feature_width] edge features, or NULL */
    int32_t *label;          /**< [num_events] labels, or NULL when the file has none */
} event_stream;

/**
 * Allocate arrays for @p num_events events (zeroed), with @p feature_width feature columns
 * (0 = none) and a label array if @p has_labels. num_nodes is left 0 for the caller.
 */
int event_stream_alloc(event_stream *es, int64_t num_events, int64_t feature_width,
                       int has_labels, tf_error *err);

/** Release @p es's arrays and zero it. Safe on a zeroed stream. */
void event_stream_free(event_stream *es);

/**
 * An owned copy of the first @p count events of @p es (features and labels too); num_nodes is
 * kept, so vertex ids mean the same in the copy. For tests and bounded runs.
 * @return 0, or TF_ERR_INPUT (a count outside 0..num_events, no memory)
 */
int event_stream_copy_prefix(const event_stream *es, int64_t count, event_stream *out, tf_error *err);

/**
 * Check the invariants every consumer relies on: ids in 0..num_nodes-1, non-decreasing
 * timestamps within ±EVENT_TIME_LIMIT, finite features. @p source names the data in the message.
 */
int event_stream_validate(const event_stream *es, const char *source, tf_error *err);

/** Number of distinct vertices that take part in at least one event. */
int64_t event_stream_active_nodes(const event_stream *es);

/** Number of distinct (src, dst) pairs. */
int64_t event_stream_distinct_pairs(const event_stream *es);

#endif
