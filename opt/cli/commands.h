/**
 * @file opt/cli/commands.h
 * @brief The `twofold` subcommands. Each receives the arguments after its own name.
 */
#ifndef TWOFOLD_OPT_CLI_COMMANDS_H
#define TWOFOLD_OPT_CLI_COMMANDS_H

#include "ref/error.h"

/** `twofold info DATASET`: print a dataset's statistics. */
int command_info(int argc, char **argv, tf_error *err);

/**
 * `twofold train --model M --data D`: train a snapshot model; hands over to
 * command_train_events() when M is an event model.
 */
int command_train(int argc, char **argv, tf_error *err);

/** `twofold train --model tgn|jodie --data D`: train a memory-based event model. */
int command_train_events(int argc, char **argv, tf_error *err);

/**
 * 1 if the train arguments name an event model (`--model tgn` or `--model jodie`), else 0.
 * @param argc   number of arguments after `train`
 * @param argv   the arguments
 * @param model  out: the value of the last --model option, or NULL when there is none
 */
int train_wants_event_model(int argc, char **argv, const char **model);

/** `twofold demo`: run every technique that exists on bundled data, ref against opt. */
int command_demo(int argc, char **argv, tf_error *err);

/** `twofold demo`'s rows for chapter 02 (opt/cli/demo_incremental.c): incremental aggregation against
 *  the reference's full recompute. */
int demo_technique_incremental(tf_error *err);

/** `twofold demo`'s rows for chapter 03 (opt/cli/demo_fusion.c): temporal fusion (ref, padded, fused) and
 *  spatial fusion. */
int demo_technique_fusion(tf_error *err);

#endif
