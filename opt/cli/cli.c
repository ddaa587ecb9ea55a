#include "opt/cli/cli.h"

#include "ref/core/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ref/core/io.h"
#include "ref/models/model.h"
#include "ref/partition.h"
#include "ref/schedule_cost.h"

int cli_is_help(const char *argument) { return strcmp(argument, "--help") == 0 || strcmp(argument, "-h") == 0; }

const option_choice partition_method_choices[] = {
    {"hash", PARTITION_HASH},     {"pts", PARTITION_PTS},           {"pss", PARTITION_PSS},
    {"pss-ts", PARTITION_PSS_TS}, {"metis", PARTITION_METIS},       {"dynahb", PARTITION_DYNAHB},
    {"dgc", PARTITION_DGC},       {"dgc-st", PARTITION_DGC_ST},     {"reflexbicut", PARTITION_REFLEXBICUT},
    {"interval", PARTITION_INTERVAL}, {NULL, 0},
};

option_choice snapshot_model_choices[MODEL_COUNT + 1];

void cli_models_init(void)
{
    for (int k = 0; k < MODEL_COUNT; k++)
        snapshot_model_choices[k] = (option_choice){model_names[k], k};
    snapshot_model_choices[MODEL_COUNT] = (option_choice){NULL, 0};
}

int cli_parse_cost(const char *value, void *field)
{
    cost_model unused;
    if (strcmp(value, "measured") != 0 &&
        (!options_plain_numbers(value) || cost_model_parse(value, &unused, NULL) != TF_OK))
        return 0;
    memcpy(field, &value, sizeof value);
    return 1;
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
