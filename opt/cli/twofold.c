/* twofold: the command line. One program, subcommands; errors become one line on stderr
 * and the exit status of their tf_error_code (2 for bad input). */
#include <stdio.h>
#include <string.h>

#include "opt/cli/cli.h"
#include "opt/cli/commands.h"
#include "ref/core/memory.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv, tf_error *err);
    const char *summary;
} command;

static const command commands[] = {
    {"info", command_info, "print a dataset's statistics"},
    {"train", command_train, "train a snapshot (tgcn, gconvgru, gclstm, evolvegcn) or event model (tgn, jodie)"},
    {"export", command_export, "write a snapshot dataset as .npy files, the arrays train trains on (bench/peer/)"},
    {"partition", command_partition, "split a dataset among ranks (chapter 06's partitioners) and print its cost"},
    {"demo", command_demo, "every technique on bundled data: ref vs opt, error and speed"},
    {"verify", command_verify, "every technique's twins against their references on your data"},
    {"schedule", command_schedule, "DyGNeX schedules of training windows on ranks: predict, run, simulate"},
};

static void print_usage(FILE *out)
{
    fputs("usage: twofold [--memory-limit SIZE] COMMAND [options]\n\ncommands:\n", out);
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fputs("\n  --memory-limit SIZE  a budget for the whole run (at least 1M, e.g. 8G): stop with one\n"
          "                       line when the memory in use would pass SIZE\n"
          "\n'twofold COMMAND --help' describes a command.\n",
          out);
}

int main(int argc, char **argv)
{
    tf_error err;
    tf_error_clear(&err);
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *value;
        int matched = cli_option(argc, argv, &i, "--memory-limit", &value, &err);
        if (matched > 0) {
            uint64_t limit;
            if (cli_parse_size("--memory-limit", value, &limit, &err) != TF_OK)
                break;
            /* Below 1 MiB nothing runs (the libraries' own heap is about that), and a
             * fraction of a byte such as "0.5" would round to 0, which means no limit. */
            if (limit < ((uint64_t)1 << 20)) {
                tf_error_set(&err, TF_ERR_INPUT, "option --memory-limit: \"%s\" is under 1M, expected a size such as 512M or 8G",
                             value);
                break;
            }
            tf_set_memory_limit(limit);
        } else if (matched == 0 && cli_is_help(argv[i])) {
            print_usage(stdout);
            return 0;
        } else {
            if (matched == 0)
                tf_error_set(&err, TF_ERR_INPUT, "unknown option %s (see twofold --help)", argv[i]);
            break;
        }
    }
    if (err.code == TF_OK && i >= argc) {
        print_usage(stderr);
        return TF_ERR_INPUT;
    }
    if (err.code == TF_OK) {
        const command *found = NULL;
        for (size_t k = 0; k < sizeof commands / sizeof *commands; k++)
            if (strcmp(argv[i], commands[k].name) == 0)
                found = &commands[k];
        if (!found)
            tf_error_set(&err, TF_ERR_INPUT, "unknown command \"%s\" (see twofold --help)", argv[i]);
        else
            found->run(argc - i - 1, argv + i + 1, &err);
    }
    if (err.code != TF_OK) {
        /* Under mpiexec, finish_ranks() leaves the message to the one rank that reports it. */
        if (err.message[0])
            fprintf(stderr, "twofold: error: %s\n", err.message);
        return err.code;
    }
    return 0;
}
