/* What the bench programs share (bench/benchmark.h): their one-line option errors. */
#include "bench/benchmark.h"

#include <stdio.h>
#include <stdlib.h>

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
