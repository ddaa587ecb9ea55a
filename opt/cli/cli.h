/**
 * @file opt/cli/cli.h
 * @brief Small helpers shared by the `twofold` subcommands: option values several tables take,
 *        progress.
 *
 * Each subcommand is a function `int command_NAME(int argc, char **argv, tf_error *err)`
 * that receives the arguments after its name and returns a #tf_error_code; `main` prints
 * the error and exits with the code. Its options come from its table (opt/cli/options.h).
 */
#ifndef TWOFOLD_OPT_CLI_CLI_H
#define TWOFOLD_OPT_CLI_CLI_H

#include <stdint.h>

#include "opt/cli/options.h"
#include "ref/core/error.h"

/** The words of --partition and --method: every partitioner of chapter 06 (#partition_method). */
extern const option_choice partition_method_choices[];

/** The words of a snapshot model (#model_kind), from the model table (ref/models/model.h); filled by
 *  cli_models_init(). */
extern option_choice snapshot_model_choices[];

/** Fill the option words that come from the model table: main() calls it before any command. */
void cli_models_init(void);

/** What --cost accepts (cli_parse_cost()). */
#define CLI_COST_EXPECTED "measured or linear:A,B,C (seconds per row, per edge, per group)"

/** An OPTION_PARSED hook for --cost: "measured" or a cost model (ref/schedule_cost.h); @p field is
 *  the `const char *` that keeps the text. 1 when valid. */
int cli_parse_cost(const char *value, void *field);

/** 1 if argv[index] is --help or -h. */
int cli_is_help(const char *argument);

/**
 * A #progress_fn that draws "stage: done/total (pct%), ETA" on stderr, overwriting the line,
 * but only when stderr is a terminal (logs and pipes stay clean). @p context must point to
 * a cli_progress_state.
 */
void cli_progress(void *context, const char *stage, int64_t done, int64_t total);

/** State for cli_progress(): when the current stage started. Zero-initialize. */
typedef struct cli_progress_state {
    double started;          /**< wall-clock seconds at the first report of the stage */
    char stage[64];          /**< the stage being reported */
} cli_progress_state;

#endif
