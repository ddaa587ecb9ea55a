#include "opt/cli/cli.h"

#include "ref/core/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ref/core/io.h"

int cli_option(int argc, char **argv, int *index, const char *name, const char **value, tf_error *err)
{
    const char *argument = argv[*index];
    size_t length = strlen(name);
    if (strncmp(argument, name, length) != 0)
        return 0;
    if (argument[length] == '=') {
        *value = argument + length + 1;
        return 1;
    }
    if (argument[length] != '\0')
        return 0;
    if (*index + 1 >= argc) {
        tf_error_set(err, TF_ERR_INPUT, "option %s needs a value", name);
        return -1;
    }
    *value = argv[++*index];
    return 1;
}

int cli_is_help(const char *argument) { return strcmp(argument, "--help") == 0 || strcmp(argument, "-h") == 0; }

int cli_parse_int(const char *name, const char *value, int64_t minimum, int64_t maximum, int64_t *out, tf_error *err)
{
    int64_t parsed;
    if (parse_int64(value, value + strlen(value), &parsed) != 0 || parsed < minimum || parsed > maximum)
        return tf_error_set(err, TF_ERR_INPUT, "option %s: \"%s\", expected a whole number in %lld..%lld", name, value,
                            (long long)minimum, (long long)maximum);
    *out = parsed;
    return TF_OK;
}

int cli_parse_number(const char *name, const char *value, double minimum, double below, double *out, tf_error *err)
{
    char *end;
    double parsed = strtod(value, &end);
    if (end == value || *end || !(parsed >= minimum && parsed < below))
        return tf_error_set(err, TF_ERR_INPUT, "option %s: \"%s\", expected a number in [%g, %g)", name, value, minimum,
                            below);
    *out = parsed;
    return TF_OK;
}

int cli_parse_size(const char *name, const char *value, uint64_t *out, tf_error *err)
{
    char *end;
    double number = strtod(value, &end);
    double scale = 1;
    switch (*end) {
    case 'K': case 'k': scale = 1024.0; end++; break;
    case 'M': case 'm': scale = 1024.0 * 1024; end++; break;
    case 'G': case 'g': scale = 1024.0 * 1024 * 1024; end++; break;
    case 'T': case 't': scale = 1024.0 * 1024 * 1024 * 1024; end++; break;
    default: break;
    }
    if (end == value || *end != '\0' || !(number > 0) || number * scale > 1.8e19)
        return tf_error_set(err, TF_ERR_INPUT, "option %s: \"%s\", expected a size such as 512M or 8G", name, value);
    *out = (uint64_t)(number * scale);
    return TF_OK;
}

void cli_progress(void *context, const char *stage, int64_t done, int64_t total)
{
    cli_progress_state *state = context;
    if (!isatty(STDERR_FILENO))
        return;
    double now = wall_seconds();
    if (strncmp(state->stage, stage, sizeof state->stage - 1) != 0) {
        snprintf(state->stage, sizeof state->stage, "%s", stage);
        state->started = now;
    }
    double elapsed = now - state->started;
    double remaining = done > 0 ? elapsed * (double)(total - done) / (double)done : 0;
    fprintf(stderr, "\r%s: %lld/%lld (%.0f%%), %.1f s elapsed, ETA %.1f s   ", stage, (long long)done,
            (long long)total, 100.0 * (double)done / (double)(total ? total : 1), elapsed, remaining);
    if (done >= total)
        fputc('\n', stderr);
    fflush(stderr);
}
