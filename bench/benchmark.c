/* What the bench programs share (bench/benchmark.h): their one-line option errors, their CSV files. */
#include "bench/benchmark.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int bench_parse_count(const char *program, const char *name, const char *value, int maximum)
{
    char *end;
    long number = value ? strtol(value, &end, 10) : 0;
    if (!value || end == value || *end != '\0' || number < 1 || number > maximum) {
        if (program)
            fprintf(stderr, "%s: %s \"%s\", expected a whole number in 1..%d\n", program, name, value ? value : "",
                    maximum);
        return -1;
    }
    return (int)number;
}

int bench_csv_open(output_file *csv, const char *directory, const char *name, int append, tf_error *err)
{
    char path[4096];
    struct stat info;
    if (format_path(path, sizeof path, err, "%s/%s", directory, name) != TF_OK ||
        output_open(csv, NULL, path, err) != TF_OK)
        return err->code;
    if (!append || stat(path, &info) != 0)
        return TF_OK;
    text rows;
    if (text_read_file(path, &rows, err) != TF_OK) {
        output_discard(csv);
        return err->code;
    }
    output_write(csv, rows.data, rows.size);
    text_free(&rows);
    return TF_OK;
}

int bench_csv_close(output_file *csv, int keep, tf_error *err)
{
    if (!csv->stream)
        return 0;
    if (!keep) {
        output_discard(csv);
        return 0;
    }
    return output_commit(csv, err) == TF_OK ? 0 : -1;
}
