/* twofold: the command line. One program, subcommands; errors become one line on stderr
 * and the exit status of their tf_error_code (2 for bad input, 3 when the machine failed). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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
    {"train", command_train, "train a snapshot or an event model (train --help lists them)"},
    {"export", command_export, "write a snapshot dataset as .npy files, the arrays train trains on (bench/peer/)"},
    {"partition", command_partition, "split a dataset among ranks (chapter 06's partitioners) and print its cost"},
    {"demo", command_demo, "every technique on bundled data: ref vs opt, error and speed"},
    {"verify", command_verify, "every technique's twins against their references on your data"},
    {"schedule", command_schedule, "DyGNeX schedules of training windows on ranks: predict, run, simulate"},
};

/* twofold's own options, before COMMAND. */
typedef struct global_options {
    uint64_t memory_limit;   /* --memory-limit (0: none) */
} global_options;

/* A size such as "512M", "8G" or "1000000", at least 1M: below 1 MiB nothing runs (the libraries'
 * own heap is about that), and a fraction of a byte such as "0.5" would round to 0, which means no
 * limit. */
static int parse_memory_limit(const char *value, void *field)
{
    if (!options_plain_number(value)) /* " 8G", 0x100000 */
        return 0;
    char *end;
    const double number = strtod(value, &end);
    double scale = 1;
    switch (*end) {
    case 'K': case 'k': scale = 1024.0; end++; break;
    case 'M': case 'm': scale = 1024.0 * 1024; end++; break;
    case 'G': case 'g': scale = 1024.0 * 1024 * 1024; end++; break;
    case 'T': case 't': scale = 1024.0 * 1024 * 1024 * 1024; end++; break;
    default: break;
    }
    if (end == value || *end != '\0' || !(number * scale >= 1024.0 * 1024) || number * scale > 1.8e19)
        return 0;
    const uint64_t limit = (uint64_t)(number * scale);
    memcpy(field, &limit, sizeof limit);
    return 1;
}

static const option_spec global_option_specs[] = {
    {"--memory-limit", OPTION_PARSED, OPTION_FIELD(global_options, memory_limit), .parse = parse_memory_limit,
     .expected = "a size of at least 1M, such as 512M or 8G", .value_name = "SIZE",
     .help = "a budget for the whole run (at least 1M, e.g. 8G): stop with one\n"
             "line when the memory in use would pass SIZE; under mpiexec -n R\n"
             "each rank has SIZE/R (the libraries' own start-up memory aside)"},
    {.name = NULL},
};

static const option_page global_pages[] = {
    {0, 23, "\n", "\n'twofold COMMAND --help' describes a command.\n\n" EXIT_STATUS_HELP},
    {0, 0, NULL, NULL},
};

static const option_table global_table = {
    .command = "",
    .options = global_option_specs,
    .pages = global_pages,
    .stop_at_word = 1,
};

static void print_usage(FILE *out)
{
    fputs("usage: twofold [--memory-limit SIZE] COMMAND [options]\n\ncommands:\n", out);
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    options_help(&global_table, -1, out);
}

/* The command named by argv[0] with its arguments; the error when there is none. */
static int run_command(int argc, char **argv, tf_error *err)
{
    for (size_t k = 0; k < sizeof commands / sizeof *commands; k++)
        if (strcmp(argv[0], commands[k].name) == 0)
            return commands[k].run(argc - 1, argv + 1, err);
    return tf_error_set(err, TF_ERR_INPUT, "unknown command \"%s\" (see twofold --help)", argv[0]);
}

int main(int argc, char **argv)
{
    tf_error err;
    tf_error_clear(&err);
    global_options options = {0};
    option_parse parsed;
    cli_models_init();
    const int read = options_parse(&global_table, argc - 1, argv + 1, &options, &parsed, &err);
    const int has_command = read == TF_OK && !parsed.help && parsed.rest < argc - 1;
    char **words = argv + 1 + (read == TF_OK ? parsed.rest : 0);
    /* An MPMD job (mpiexec -n 1 twofold info D : -n 1 twofold train ...) must run one command on every
     * rank: under a launcher the ranks compare their command lines before anything runs, --help, a
     * bad option of twofold's own and a missing command included (a rank that left without MPI
     * once left the others waiting in it). */
    const char *command = !has_command ? (read == TF_OK && parsed.help ? "--help" : "") : words[0];
    if (read == TF_OK && options.memory_limit) /* under mpiexec -n R each rank has 1/R of the run's budget */
        tf_set_memory_limit_shared(options.memory_limit, ranks_launched());
    if (ranks_agree_on_command(command, has_command ? argc - 2 - parsed.rest : 0, words + has_command, &err) == TF_OK) {
        if (parsed.help)
            print_usage(stdout);
        else if (!has_command)
            print_usage(stderr);
        else
            run_command(argc - 1 - parsed.rest, words, &err);
    }
    ranks_finish_command(&err);
    if (err.code != TF_OK) {
        /* Under mpiexec, finish_ranks() leaves the message to the one rank that reports it. */
        if (err.message[0])
            fprintf(stderr, "twofold: error: %s\n", err.message);
        return err.code;
    }
    return !has_command && !parsed.help ? TF_ERR_INPUT : 0;
}
