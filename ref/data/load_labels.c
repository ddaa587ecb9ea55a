/* Class labels per snapshot (snapshot vertex class lines) -> snapshot_seq labels, for node classification. */
#include <stdlib.h>

#include "ref/core/io.h"
#include "ref/data/loaders.h"

/* One line's three whole numbers into value [3], each in range for seq; the label not yet set. */
static int parse_label_line(const char *begin, const char *end, const char *source, long line, const snapshot_seq *seq,
                            int64_t value[3], tf_error *err)
{
    static const char *const names[3] = {"snapshot", "vertex", "class"};
    const long fields = count_fields(begin, end, ' ');
    if (fields != 3)
        return tf_error_set(err, TF_ERR_INPUT, "%s:%ld: %ld fields, expected 3 (snapshot vertex class)", source, line,
                            fields);
    const char *position = begin, *field, *stop;
    for (int k = 0; k < 3 && next_field(&position, end, ' ', &field, &stop); k++) {
        char quoted[64];
        if (parse_int64(field, stop, &value[k]) != 0)
            return tf_error_set(err, TF_ERR_INPUT, "%s:%ld: %s \"%s\", expected a whole number", source, line, names[k],
                                quote_field(field, stop, quoted, sizeof quoted));
    }
    if (value[0] < 0 || value[0] >= seq->num_snapshots)
        return tf_error_set(err, TF_ERR_INPUT, "%s:%ld: snapshot %lld, expected 0..%lld (the data has %lld snapshots)",
                            source, line, (long long)value[0], (long long)seq->num_snapshots - 1,
                            (long long)seq->num_snapshots);
    if (value[1] < 0 || value[1] >= seq->num_nodes)
        return tf_error_set(err, TF_ERR_INPUT, "%s:%ld: vertex %lld, expected 0..%lld (the data has %lld vertices)",
                            source, line, (long long)value[1], (long long)seq->num_nodes - 1,
                            (long long)seq->num_nodes);
    if (value[2] < 0 || value[2] > 65535)
        return tf_error_set(err, TF_ERR_INPUT, "%s:%ld: class %lld, expected 0..65535", source, line,
                            (long long)value[2]);
    const snapshot *s = &seq->snapshots[value[0]];
    if (!s->present[value[1]])
        return tf_error_set(err, TF_ERR_INPUT, "%s:%ld: vertex %lld is absent at snapshot %lld, expected a present "
                            "vertex (an absent one has no label)", source, line, (long long)value[1],
                            (long long)value[0]);
    if (s->labels[value[1]] != SNAPSHOT_UNLABELLED)
        return tf_error_set(err, TF_ERR_INPUT, "%s:%ld: vertex %lld of snapshot %lld labelled again, expected each "
                            "vertex once per snapshot", source, line, (long long)value[1], (long long)value[0]);
    return TF_OK;
}

/* Drops the labels of seq (after an error). */
static void drop_labels(snapshot_seq *seq)
{
    for (int64_t t = 0; t < seq->num_snapshots; t++) {
        free(seq->snapshots[t].labels);
        seq->snapshots[t].labels = NULL;
    }
    seq->num_classes = 0;
}

int load_snapshot_labels(const text *content, const char *source, snapshot_seq *seq, tf_error *err)
{
    if (snapshot_seq_alloc_labels(seq, 2, err) != TF_OK) { /* every vertex unlabelled; the count comes last */
        drop_labels(seq);
        return TF_ERR_INPUT;
    }
    line_cursor cursor = line_cursor_start(content);
    const char *begin, *end;
    int64_t largest = -1, given = 0;
    while (line_cursor_next(&cursor, &begin, &end)) {
        if (line_is_blank_or_comment(begin, end))
            continue;
        int64_t value[3];
        if (parse_label_line(begin, end, source, cursor.number, seq, value, err) != TF_OK) {
            drop_labels(seq);
            return TF_ERR_INPUT;
        }
        seq->snapshots[value[0]].labels[value[1]] = (int32_t)value[2];
        largest = value[2] > largest ? value[2] : largest;
        given++;
    }
    if (largest < 1) {
        drop_labels(seq);
        return tf_error_set(err, TF_ERR_INPUT, "%s: %s, expected lines of snapshot vertex class with 2 or more classes",
                            source, given == 0 ? "no labels" : "every label is class 0");
    }
    seq->num_classes = largest + 1;
    return TF_OK;
}
