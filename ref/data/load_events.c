/* Event files (space-separated, and CSV with a header) -> event_stream. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/data/loaders.h"
#include "ref/core/memory.h"

/* JODIE's header names its trailing features with this one column name; each data line then
 * has as many more fields as there are features. */
static const char jodie_feature_list[] = "comma_separated_list_of_features";

/* Where each quantity sits in a line. */
typedef struct column_map {
    char delimiter;   /* ',' or ' ' (whitespace runs) */
    long width;       /* fields per data line */
    long src, dst, time, label;   /* column indices; label -1 if absent */
    long list_from;   /* JODIE layout: fields from this index to the end are the feature list; -1 if not */
    int list_taken;   /* JODIE layout: 1 if that list is taken as edge features */
    long named;       /* columns the header names (the CSV header's width; 0 for text files) */
    const unsigned char *feature;   /* [named]: 1 for a named column taken as an edge feature; NULL = none */
} column_map;

/* 1 if field k of a data line is an edge feature. Columns that are neither a role nor a
 * feature are ignored: not parsed, not stored. */
static int is_feature_column(const column_map *m, long k)
{
    if (m->list_from >= 0 && k >= m->list_from)
        return m->list_taken;
    return m->feature && k < m->named && m->feature[k];
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
        } else if (k == m->time || is_feature_column(m, k)) {
            double value;
            int parsed = parse_double(field_begin, field_end, &value);
            if (parsed == 0 && k != m->time && fabs(value) > FLT_MAX)
                parsed = -2; /* a feature is stored as float32: it would become infinity */
            /* A time is kept as a double, but the models take differences of times in float32:
             * beyond EVENT_TIME_LIMIT they overflow and every score turns NaN (ref/data/events.h). */
            if (parsed == 0 && k == m->time && fabs(value) > EVENT_TIME_LIMIT)
                return tf_error_set(err, TF_ERR_INPUT, "%s:%ld: timestamp \"%s\" is beyond +-%.3g, expected a time "
                                                       "the models can take differences of in float32",
                                    source, line, field, (double)EVENT_TIME_LIMIT);
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

/* Counts the data lines (neither blank nor a comment) after the first `skip` lines. */
static int64_t count_data_lines(const text *content, long skip)
{
    int64_t count = 0;
    line_cursor cursor = line_cursor_start(content);
    const char *begin, *end;
    while (line_cursor_next(&cursor, &begin, &end))
        if (cursor.number > skip && !line_is_blank_or_comment(begin, end))
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
        feature_width += k != m->src && k != m->dst && k != m->time && k != m->label && is_feature_column(m, k);
    if (event_stream_alloc(out, count, feature_width, m->label >= 0, err) != TF_OK) {
        tf_error_prefix(err, "%s", source);
        return TF_ERR_INPUT;
    }
    line_cursor cursor = line_cursor_start(content);
    const char *begin, *end;
    int64_t i = 0;
    while (line_cursor_next(&cursor, &begin, &end)) {
        if (cursor.number <= skip || line_is_blank_or_comment(begin, end))
            continue;
        if (parse_event(m, begin, end, source, cursor.number, out, i++, err) != TF_OK) {
            event_stream_free(out);
            return TF_ERR_INPUT;
        }
    }
    return TF_OK;
}

/* Moves cursor to the first data line (neither blank nor a comment); 0 if there is none. */
static int first_data_line(line_cursor *cursor, const char **begin, const char **end)
{
    while (line_cursor_next(cursor, begin, end))
        if (!line_is_blank_or_comment(*begin, *end))
            return 1;
    return 0;
}

int load_events_text(const text *content, const char *source, event_stream *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    line_cursor cursor = line_cursor_start(content);
    const char *begin, *end;
    if (!first_data_line(&cursor, &begin, &end))
        return tf_error_set(err, TF_ERR_INPUT, "%s: %s, expected lines of src dst time", source,
                            content->size == 0 ? "file is empty" : "no events");
    /* The first data line decides between `src dst time` and `src dst time label`. */
    long width = count_fields(begin, end, ' ');
    if (width != 3 && width != 4)
        return tf_error_set(err, TF_ERR_INPUT, "%s:%ld: %ld fields, expected 3 (src dst time) or 4 (src dst time label)",
                            source, cursor.number, width);
    column_map m = {' ', width, 0, 1, 2, width == 4 ? 3 : -1, -1, 0, 0, NULL};
    return parse_events(content, source, &m, 0, out, err);
}

/* 1 if [a, a_end) and [b, b_end) hold the same text, ignoring ASCII case (headers come as From,
 * TIME, ...). */
static int same_text(const char *a, const char *a_end, const char *b, const char *b_end)
{
    if (a_end - a != b_end - b)
        return 0;
    for (; a < a_end; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
        char y = *b >= 'A' && *b <= 'Z' ? (char)(*b - 'A' + 'a') : *b;
        if (x != y)
            return 0;
    }
    return 1;
}

/* 1 if [begin, end) equals `name`, ignoring case. */
static int same_name(const char *begin, const char *end, const char *name)
{
    return same_text(begin, end, name, name + strlen(name));
}

/* 1 if the header field [begin, end) equals one of the names, ignoring case. */
static int header_is(const char *begin, const char *end, const char *const *names)
{
    for (; *names; names++)
        if (same_name(begin, end, *names))
            return 1;
    return 0;
}

/* The documented rule for a header without --edge-columns: a column is an edge feature when its
 * name starts with "feat" (bitcoin's `feature`, feat_0, features) or is f<digits> (f0, f12).
 * Anything else, such as TGN's `idx` (the event's own index) or pandas' unnamed row index, is
 * ignored: taking it would hand the model the answer or noise. */
static int feature_by_rule(const char *begin, const char *end)
{
    if (end - begin >= 4 && same_name(begin, begin + 4, "feat"))
        return 1;
    if (end - begin < 2 || (*begin != 'f' && *begin != 'F'))
        return 0;
    for (const char *p = begin + 1; p < end; p++)
        if (*p < '0' || *p > '9')
            return 0;
    return 1;
}

/* Appends printf-style text to out [size] while it fits (the report is a summary). */
static void append(char *out, size_t size, const char *format, ...) __attribute__((format(printf, 3, 4)));
static void append(char *out, size_t size, const char *format, ...)
{
    size_t used = strlen(out);
    if (used + 1 >= size)
        return;
    va_list args;
    va_start(args, format);
    vsnprintf(out + used, size - used, format, args);
    va_end(args);
}

/* Appends the names of the header's columns [header, header_end) that are edge features
 * (feature 1) or ignored (feature 0): the first few, then the count; or "none". */
static void append_columns(char *out, size_t size, const column_map *m, const char *header, const char *header_end,
                           int feature)
{
    enum { SHOWN = 8 };
    long listed = 0;
    const char *position = header, *field_begin, *field_end;
    for (long k = 0; next_field(&position, header_end, ',', &field_begin, &field_end); k++) {
        if (k == m->src || k == m->dst || k == m->time || k == m->label || is_feature_column(m, k) != feature)
            continue;
        if (listed < SHOWN) {
            char name[40];
            if (field_begin == field_end)
                append(out, size, "%s(unnamed column %ld)", listed ? ", " : "", k + 1);
            else
                append(out, size, "%s%s", listed ? ", " : "", quote_field(field_begin, field_end, name, sizeof name));
            if (k == m->list_from)
                append(out, size, " (%ld values)", m->width - m->list_from);
        }
        listed++;
    }
    if (listed > SHOWN)
        append(out, size, ", ... (%ld columns)", listed);
    if (listed == 0)
        append(out, size, "none");
}

/* Marks the columns --edge-columns names (a comma-separated list of header names, or "none")
 * in feature [m->named]; the JODIE list column stands for all its values. */
static int choose_named_columns(const char *list, const char *source, const char *header, const char *header_end,
                                column_map *m, unsigned char *feature, tf_error *err)
{
    if (strcmp(list, "none") == 0)
        return TF_OK;
    const char *list_end = list + strlen(list), *position = list, *name_begin, *name_end;
    while (next_field(&position, list_end, ',', &name_begin, &name_end)) {
        char name[32];
        quote_field(name_begin, name_end, name, sizeof name);
        if (name_begin == name_end)
            return tf_error_set(err, TF_ERR_INPUT, "option --edge-columns: \"%s\" has an empty name, expected header "
                                "names separated by commas (or none)", list);
        long found = 0;
        const char *header_position = header, *field_begin, *field_end;
        for (long k = 0; next_field(&header_position, header_end, ',', &field_begin, &field_end); k++) {
            if (!same_text(field_begin, field_end, name_begin, name_end))
                continue;
            if (k == m->src || k == m->dst || k == m->time || k == m->label)
                return tf_error_set(err, TF_ERR_INPUT,
                                    "option --edge-columns: column \"%s\" of %s is the %s column, not an edge feature",
                                    name, source,
                                    k == m->src ? "source" : k == m->dst ? "destination" : k == m->time ? "time" : "label");
            if (k == m->list_from)
                m->list_taken = 1;
            else
                feature[k] = 1;
            found++;
        }
        if (found == 0)
            return tf_error_set(err, TF_ERR_INPUT, "option --edge-columns: %s has no column \"%s\" (its header: %.*s)",
                                source, name, (int)(header_end - header > 200 ? 200 : header_end - header), header);
    }
    return TF_OK;
}

/* The header's roles into m (src, dst, time, label; named = its width), and in *users_and_items
 * whether source and destination are named as users (bit 0) and items (bit 1). A role named twice,
 * or source, destination or time missing, is an error on the header's line. */
static int read_header_roles(const char *header, const char *header_end, const char *source, long header_line,
                             column_map *m, int *users_and_items, tf_error *err)
{
    /* JODIE's names (user_id, item_id, state_label) and TGN's (u, i, ts) are among these. */
    static const char *const src_names[] = {"from", "src", "source", "u", "user", "user_id", NULL};
    static const char *const dst_names[] = {"to", "dst", "target", "i", "item", "item_id", NULL};
    static const char *const time_names[] = {"time", "ts", "timestamp", "t", NULL};
    static const char *const label_names[] = {"label", "state_label", NULL};
    static const char *const user_names[] = {"user", "user_id", NULL};
    static const char *const item_names[] = {"item", "item_id", NULL};
    *users_and_items = 0;
    const char *position = header, *field_begin, *field_end;
    for (long k = 0; next_field(&position, header_end, ',', &field_begin, &field_end); k++) {
        long *role = header_is(field_begin, field_end, src_names)     ? &m->src
                     : header_is(field_begin, field_end, dst_names)   ? &m->dst
                     : header_is(field_begin, field_end, time_names)  ? &m->time
                     : header_is(field_begin, field_end, label_names) ? &m->label
                                                                      : NULL;
        if (role && *role >= 0) {
            char name[32];
            return tf_error_set(err, TF_ERR_INPUT, "%s:%ld: column \"%s\" names a role a previous column already has",
                                source, header_line, quote_field(field_begin, field_end, name, sizeof name));
        }
        if (role)
            *role = k;
        if (role == &m->src && header_is(field_begin, field_end, user_names))
            *users_and_items |= 1;
        if (role == &m->dst && header_is(field_begin, field_end, item_names))
            *users_and_items |= 2;
        m->named = k + 1;
    }
    if (m->src >= 0 && m->dst >= 0 && m->time >= 0)
        return TF_OK;
    /* SNAP's own bitcoin CSVs have no header: say so rather than only what is missing. */
    double number;
    position = header;
    next_field(&position, header_end, ',', &field_begin, &field_end);
    int looks_like_data = parse_double(field_begin, field_end, &number) == 0;
    return tf_error_set(err, TF_ERR_INPUT,
                        "%s:%ld: header lacks a %s column, expected from/src/source/u/user_id, to/dst/target/i/"
                        "item_id and time/ts/timestamp/t%s",
                        source, header_line, m->src < 0 ? "source" : m->dst < 0 ? "destination" : "time",
                        looks_like_data ? " (this line looks like data: add a header line)" : "");
}

/* JODIE's layout: the last header column, named jodie_feature_list, stands for all the fields that
 * follow; m->width is then the first data line's (after @p cursor). */
static int find_feature_list(const char *header, const char *header_end, line_cursor cursor, const char *source,
                             column_map *m, tf_error *err)
{
    const char *position = header, *field_begin, *field_end;
    for (long k = 0; next_field(&position, header_end, ',', &field_begin, &field_end); k++)
        if (k == m->named - 1 && same_name(field_begin, field_end, jodie_feature_list))
            m->list_from = k;
    m->width = m->named;
    const char *begin, *end;
    if (m->list_from < 0 || !first_data_line(&cursor, &begin, &end))
        return TF_OK;
    m->width = count_fields(begin, end, ',');
    if (m->width < m->list_from)
        return tf_error_set(err, TF_ERR_INPUT, "%s:%ld: %ld fields, expected at least %ld (the header's columns "
                            "before %s)", source, cursor.number, m->width, m->list_from, jodie_feature_list);
    return TF_OK;
}

/* Which named columns are edge features, into feature [m->named]: those --edge-columns names
 * (@p chosen), or by the rule (feature_by_rule()). */
static int choose_feature_columns(const char *chosen, const char *source, const char *header, const char *header_end,
                                  column_map *m, unsigned char *feature, tf_error *err)
{
    if (chosen)
        return choose_named_columns(chosen, source, header, header_end, m, feature, err);
    const char *position = header, *field_begin, *field_end;
    for (long k = 0; next_field(&position, header_end, ',', &field_begin, &field_end); k++)
        if (k == m->list_from)
            m->list_taken = 1;
        else
            feature[k] = k != m->src && k != m->dst && k != m->time && k != m->label &&
                         feature_by_rule(field_begin, field_end);
    return TF_OK;
}

/* JODIE keeps users and items in separate id spaces: user 0 and item 0 are different vertices.
 * One id space puts the items after the users, as TGN's preprocessing of JODIE's files does
 * (item + largest user id + 1). *users out: the user ids. */
static int separate_users_and_items(event_stream *out, const char *source, int64_t *users, tf_error *err)
{
    int64_t items = 0;
    for (int64_t i = 0; i < out->num_events; i++) {
        *users = out->src[i] + 1 > *users ? out->src[i] + 1 : *users;
        items = out->dst[i] + 1 > items ? out->dst[i] + 1 : items;
    }
    if (*users + items > INT32_MAX) {
        event_stream_free(out);
        return tf_error_set(err, TF_ERR_INPUT, "%s: %lld user ids and %lld item ids, expected at most %d together",
                            source, (long long)*users, (long long)items, INT32_MAX);
    }
    for (int64_t i = 0; i < out->num_events; i++)
        out->dst[i] += (int32_t)*users;
    out->num_nodes = *users + items;
    return TF_OK;
}

/* The one-line summary of the columns taken and ignored, into columns->report. */
static void report_columns(event_csv_columns *columns, const column_map *m, const char *header,
                           const char *header_end, const char *source, int64_t users)
{
    char *report = columns->report;
    size_t size = sizeof columns->report;
    snprintf(report, size, "%s: edge feature columns: ", source);
    append_columns(report, size, m, header, header_end, 1);
    append(report, size, "; ignored columns: ");
    append_columns(report, size, m, header, header_end, 0);
    if (columns->edge_columns)
        append(report, size, " (as --edge-columns chose)");
    else
        append(report, size, " (the rule: names feat..., f<digits>, %s; or choose with --edge-columns)",
               jodie_feature_list);
    if (users)
        append(report, size, "; users and items: item ids follow the %lld user ids", (long long)users);
}

int load_events_csv_columns(const text *content, const char *source, event_csv_columns *columns,
                            event_stream *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    if (columns) {
        columns->users = 0;
        columns->report[0] = '\0';
    }
    if (content->size == 0)
        return tf_error_set(err, TF_ERR_INPUT, "%s: file is empty, expected a header such as from,to,time", source);
    column_map m = {',', 0, -1, -1, -1, -1, -1, 0, 0, NULL};
    line_cursor cursor = line_cursor_start(content);
    const char *header, *header_end;
    if (!first_data_line(&cursor, &header, &header_end))
        return tf_error_set(err, TF_ERR_INPUT, "%s: only comments, expected a header such as from,to,time", source);
    const long header_line = cursor.number;
    int users_and_items; /* the header names users and items: two id spaces */
    if (read_header_roles(header, header_end, source, header_line, &m, &users_and_items, err) != TF_OK ||
        find_feature_list(header, header_end, cursor, source, &m, err) != TF_OK)
        return TF_ERR_INPUT;
    unsigned char *feature = tf_alloc((size_t)m.named, 1, "the header's columns", err);
    if (!feature) {
        tf_error_prefix(err, "%s", source);
        return TF_ERR_INPUT;
    }
    int status = choose_feature_columns(columns ? columns->edge_columns : NULL, source, header, header_end, &m,
                                        feature, err);
    m.feature = feature;
    if (status == TF_OK)
        status = parse_events(content, source, &m, header_line, out, err);
    int64_t users = 0;
    if (status == TF_OK && users_and_items == 3)
        status = separate_users_and_items(out, source, &users, err);
    if (status == TF_OK && columns) {
        columns->users = users;
        report_columns(columns, &m, header, header_end, source, users);
    }
    free(feature);
    return status;
}

int load_events_csv(const text *content, const char *source, event_stream *out, tf_error *err)
{
    return load_events_csv_columns(content, source, NULL, out, err);
}
