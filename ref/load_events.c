/* Event files (space-separated and CSV with a header) -> event_stream. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/loaders.h"
#include "ref/memory.h"

/* Where each quantity sits in a line. Columns not listed as src/dst/time/label are features. */
typedef struct column_map {
    char delimiter;   /* ',' or ' ' (whitespace runs) */
    long width;       /* fields per line */
    long src, dst, time, label;   /* column indices; label -1 if absent */
} column_map;

static int is_feature_column(const column_map *m, long k)
{
    return k != m->src && k != m->dst && k != m->time && k != m->label;
}

/* Parses one line into event i of es. */
static int parse_event(const column_map *m, const char *begin, const char *end, const char *source, long line,
                       event_stream *es, int64_t i, tf_error *err)
{
    long fields = count_fields(begin, end, m->delimiter);
    if (fields != m->width)
        return tf_error_set(err, TF_ERR_INPUT, "%s:%ld: %ld fields, expected %ld", source, line, fields, m->width);
    const char *position = begin, *field_begin, *field_end;
    int64_t feature = 0;
    for (long k = 0; next_field(&position, end, m->delimiter, &field_begin, &field_end); k++) {
        char field[32];
        quote_field(field_begin, field_end, field, sizeof field);
        if (k == m->src || k == m->dst || k == m->label) {
            int64_t value;
            if (parse_int64(field_begin, field_end, &value) != 0)
                return tf_error_set(err, TF_ERR_INPUT, "%s:%ld: field %ld is \"%s\", expected an integer %s", source,
                                    line, k + 1, field, k == m->label ? "label" : "vertex id");
            if (k != m->label && (value < 0 || value >= INT32_MAX))
                return tf_error_set(err, TF_ERR_INPUT, "%s:%ld: vertex id %lld out of range, expected 0..%d", source,
                                    line, (long long)value, INT32_MAX - 1);
            if (k == m->label && (value < INT32_MIN || value > INT32_MAX))
                return tf_error_set(err, TF_ERR_INPUT, "%s:%ld: label %lld out of range for int32", source, line,
                                    (long long)value);
            if (k == m->src)
                es->src[i] = (int32_t)value;
            else if (k == m->dst)
                es->dst[i] = (int32_t)value;
            else
                es->label[i] = (int32_t)value;
        } else {
            double value;
            int parsed = parse_double(field_begin, field_end, &value);
            if (parsed == 0 && k != m->time && fabs(value) > FLT_MAX)
                parsed = -2; /* a feature is stored as float32: it would become infinity */
            if (parsed != 0)
                return tf_error_set(err, TF_ERR_INPUT, "%s:%ld: field %ld is \"%s\", expected a %s%s%s", source, line,
                                    k + 1, field, parsed == -2 ? "finite " : "", k == m->time ? "timestamp" : "number",
                                    parsed == -2 && k != m->time ? " (float32 range)" : "");
            if (k == m->time) {
                es->time[i] = value;
                if (i > 0 && value < es->time[i - 1])
                    return tf_error_set(err, TF_ERR_INPUT,
                                        "%s:%ld: timestamp %.17g is earlier than the previous event's %.17g; "
                                        "expected events sorted by time",
                                        source, line, value, es->time[i - 1]);
            } else {
                es->features[i * es->feature_width + feature++] = (float)value;
            }
        }
    }
    int64_t largest = es->src[i] > es->dst[i] ? es->src[i] : es->dst[i];
    if (largest + 1 > es->num_nodes)
        es->num_nodes = largest + 1;
    return TF_OK;
}

/* Counts the non-blank lines after the first `skip` lines. */
static int64_t count_data_lines(const text *content, long skip)
{
    int64_t count = 0;
    line_cursor cursor = line_cursor_start(content);
    const char *begin, *end;
    while (line_cursor_next(&cursor, &begin, &end))
        if (cursor.number > skip && count_fields(begin, end, ' ') > 0)
            count++;
    return count;
}

/* The shared second half of both loaders: allocate, parse every data line. */
static int parse_events(const text *content, const char *source, const column_map *m, long skip,
                        event_stream *out, tf_error *err)
{
    int64_t count = count_data_lines(content, skip);
    if (count == 0)
        return tf_error_set(err, TF_ERR_INPUT, "%s: no events, expected lines of src dst time", source);
    int64_t feature_width = 0;
    for (long k = 0; k < m->width; k++)
        feature_width += is_feature_column(m, k);
    if (event_stream_alloc(out, count, feature_width, m->label >= 0, err) != TF_OK) {
        tf_error_prefix(err, "%s", source);
        return TF_ERR_INPUT;
    }
    line_cursor cursor = line_cursor_start(content);
    const char *begin, *end;
    int64_t i = 0;
    while (line_cursor_next(&cursor, &begin, &end)) {
        if (cursor.number <= skip || count_fields(begin, end, ' ') == 0)
            continue;
        if (parse_event(m, begin, end, source, cursor.number, out, i++, err) != TF_OK) {
            event_stream_free(out);
            return TF_ERR_INPUT;
        }
    }
    return TF_OK;
}

int load_events_text(const text *content, const char *source, event_stream *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    if (content->size == 0)
        return tf_error_set(err, TF_ERR_INPUT, "%s: file is empty, expected lines of src dst time", source);
    /* The first data line decides between `src dst time` and `src dst time label`. */
    line_cursor cursor = line_cursor_start(content);
    const char *begin, *end;
    long width = 0;
    while (width == 0 && line_cursor_next(&cursor, &begin, &end))
        width = count_fields(begin, end, ' ');
    if (width != 3 && width != 4)
        return tf_error_set(err, TF_ERR_INPUT, "%s:%ld: %ld fields, expected 3 (src dst time) or 4 (src dst time label)",
                            source, cursor.number, width);
    column_map m = {' ', width, 0, 1, 2, width == 4 ? 3 : -1};
    return parse_events(content, source, &m, 0, out, err);
}

/* 1 if the header field [begin, end) equals one of the names. */
static int header_is(const char *begin, const char *end, const char *const *names)
{
    for (; *names; names++)
        if (strlen(*names) == (size_t)(end - begin) && memcmp(begin, *names, (size_t)(end - begin)) == 0)
            return 1;
    return 0;
}

int load_events_csv(const text *content, const char *source, event_stream *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    if (content->size == 0)
        return tf_error_set(err, TF_ERR_INPUT, "%s: file is empty, expected a header such as from,to,time", source);
    static const char *const src_names[] = {"from", "src", "source", "u", NULL};
    static const char *const dst_names[] = {"to", "dst", "target", "i", NULL};
    static const char *const time_names[] = {"time", "ts", "timestamp", "t", NULL};
    static const char *const label_names[] = {"label", NULL};
    column_map m = {',', 0, -1, -1, -1, -1};
    line_cursor cursor = line_cursor_start(content);
    const char *begin, *end;
    line_cursor_next(&cursor, &begin, &end);
    const char *position = begin, *field_begin, *field_end;
    for (long k = 0; next_field(&position, end, ',', &field_begin, &field_end); k++) {
        long *slot = header_is(field_begin, field_end, src_names)     ? &m.src
                     : header_is(field_begin, field_end, dst_names)   ? &m.dst
                     : header_is(field_begin, field_end, time_names)  ? &m.time
                     : header_is(field_begin, field_end, label_names) ? &m.label
                                                                      : NULL;
        if (slot && *slot >= 0) {
            char name[32];
            return tf_error_set(err, TF_ERR_INPUT, "%s:1: column \"%s\" names a role a previous column already has",
                                source, quote_field(field_begin, field_end, name, sizeof name));
        }
        if (slot)
            *slot = k;
        m.width = k + 1;
    }
    if (m.src < 0 || m.dst < 0 || m.time < 0)
        return tf_error_set(err, TF_ERR_INPUT,
                            "%s:1: header lacks a %s column, expected from/src/source/u, to/dst/target/i and "
                            "time/ts/timestamp/t",
                            source, m.src < 0 ? "source" : m.dst < 0 ? "destination" : "time");
    return parse_events(content, source, &m, 1, out, err);
}
