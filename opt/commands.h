/**
 * @file commands.h
 * @brief The `twofold` subcommands. Each receives the arguments after its own name.
 */
#ifndef TWOFOLD_COMMANDS_H
#define TWOFOLD_COMMANDS_H

#include "error.h"

/** `twofold info DATASET`: print a dataset's statistics. */
int command_info(int argc, char **argv, tf_error *err);

/** `twofold train --model M --data D`: train a snapshot model. */
int command_train(int argc, char **argv, tf_error *err);

/** `twofold demo`: run every technique that exists on bundled data, ref against opt. */
int command_demo(int argc, char **argv, tf_error *err);

#endif
