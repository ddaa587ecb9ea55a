#include "opt/async_straggler.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ref/core/rng.h"

void straggler_none(straggler *s)
{
    memset(s, 0, sizeof *s);
    s->rank = STRAGGLER_NONE;
    s->probability = 1;
    s->seed = 1;
}

/* A number in (low, high] ending exactly at `end` (':' or the string's end). */
static int parse_number(const char *text, char terminator, double low, double high, double *out, const char **next)
{
    char *end;
    errno = 0;
    *out = strtod(text, &end);
    if (end == text || errno != 0 || *end != terminator || !(*out > low && *out <= high))
        return 0;
    *next = end + (terminator != '\0');
    return 1;
}

int straggler_parse(const char *text, straggler *out, tf_error *err)
{
    straggler_none(out);
    const char *p = text;
    int each = strncmp(p, "each:", 5) == 0, ok = 1;
    if (each) {
        p += 5;
    } else {
        char *end;
        errno = 0;
        long rank = strtol(p, &end, 10);
        ok = end != p && *end == ':' && errno == 0 && rank >= 0 && rank < 1000000;
        out->rank = (int)rank;
        p = end + 1;
    }
    const char *colon = ok ? strchr(p, ':') : NULL;
    if (ok)
        ok = parse_number(p, colon ? ':' : '\0', 0, 60000, &out->milliseconds, &p);
    if (ok && colon)
        ok = parse_number(p, '\0', 0, 1, &out->probability, &p);
    if (ok && each && !colon)
        ok = 0; /* every rank delayed at every step is no straggler at all */
    if (!ok)
        return tf_error_set(err, TF_ERR_INPUT,
                            "straggler \"%s\": expected RANK:MS or RANK:MS:P (rank >= 0, MS in (0, 60000], "
                            "P in (0, 1]) or each:MS:P",
                            text);
    if (each)
        out->rank = STRAGGLER_EACH;
    return TF_OK;
}

int straggler_is_delayed(const straggler *s, int rank, int64_t epoch, int64_t step)
{
    if (s->rank == STRAGGLER_NONE || (s->rank >= 0 && s->rank != rank))
        return 0;
    if (s->probability >= 1)
        return 1;
    rng r;
    rng_seed(&r, s->seed ^ 0x9e3779b97f4a7c15ull * (uint64_t)(rank + 1) ^ 0xbf58476d1ce4e5b9ull * (uint64_t)(epoch + 1) ^
                     0x94d049bb133111ebull * (uint64_t)(step + 1));
    return rng_uniform(&r) < s->probability;
}

void straggler_wait(const straggler *s, int rank, int64_t epoch, int64_t step)
{
    if (!straggler_is_delayed(s, rank, epoch, step))
        return;
    struct timespec left = {(time_t)(s->milliseconds / 1000),
                            (long)((s->milliseconds - 1000 * (double)(time_t)(s->milliseconds / 1000)) * 1e6)};
    while (nanosleep(&left, &left) != 0 && errno == EINTR)
        ;
}

const char *straggler_name(const straggler *s, char *buffer, int size)
{
    if (s->rank == STRAGGLER_NONE)
        snprintf(buffer, (size_t)size, "none");
    else if (s->rank == STRAGGLER_EACH)
        snprintf(buffer, (size_t)size, "each:%g:%g", s->milliseconds, s->probability);
    else if (s->probability < 1)
        snprintf(buffer, (size_t)size, "%d:%g:%g", s->rank, s->milliseconds, s->probability);
    else
        snprintf(buffer, (size_t)size, "%d:%g", s->rank, s->milliseconds);
    return buffer;
}
