/**
 * @file opt/cli/options.h
 * @brief One declarative table of options per subcommand: parsing, `--help` and the wording of
 *        every refusal come from it.
 *
 * A subcommand describes each option once, as an #option_spec: its name, what its value is (a
 * flag, a text, a whole number or a number in a range, one word of a list, or a value a hook
 * parses), the field of the command's struct it writes (by offsetof), the models it applies to,
 * the option it configures or needs, and its help. options_parse() reads the arguments against
 * the table, options_help() prints the help, and each kind of bad input has one wording:
 *
 *     option --NAME needs a value [(--NEXT that follows it is an option) | (it was empty)]
 *     option --NAME takes no value
 *     option --NAME: "VALUE", expected WHAT             (WHAT: "a whole number in 1..16", "ref or opt")
 *     COMMAND: unknown option --NAME (see twofold COMMAND --help)
 *     COMMAND: unexpected argument WORD (see twofold COMMAND --help)
 *     COMMAND: an empty argument "" (see twofold COMMAND --help)
 *     COMMAND: --model given twice, MODEL and MODEL: give one
 *     COMMAND: --NAME applies to MODEL, MODEL and MODEL, not MODEL
 *     COMMAND: --A and --B are required (see twofold COMMAND --help)
 *     COMMAND: --NAME configures --OTHER [VALUE]: add it
 *     COMMAND: --NAME [VALUE] needs --OTHER VALUE
 *
 * The rules a table cannot state (two techniques that exclude each other, a value that depends
 * on the data) stay with the command, in its own words, and use options_needs() where they are
 * of the last kind. Options are `--name value` or `--name=value` (a value that starts with "--"
 * only in the second form); the last of a repeated option wins, but the model option must name
 * one model; a number is written in decimal (options_plain_number()); `--help` or `-h` anywhere
 * asks for the help.
 */
#ifndef TWOFOLD_OPT_CLI_OPTIONS_H
#define TWOFOLD_OPT_CLI_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ref/core/error.h"

/** What an option's value is, and so how it is parsed into its field. */
typedef enum option_kind {
    OPTION_FLAG,    /**< no value: an int field set to 1 */
    OPTION_TEXT,    /**< any text: a `const char *` field pointed at it (it stays in argv) */
    OPTION_WHOLE,   /**< a whole number in [min, max]: an int, int64_t or uint64_t field */
    OPTION_NUMBER,  /**< a number in [low, high], each end open or closed (#option_ends): a double */
    OPTION_CHOICE,  /**< one word of #option_spec.choices: an int or enum field takes its value */
    OPTION_PARSED,  /**< #option_spec.parse reads the value into the field */
    OPTION_SECTION, /**< no option: a heading between the options of `--help` */
} option_kind;

/** Which ends of an OPTION_NUMBER range are open (excluded). */
enum option_ends {
    OPTION_CLOSED = 0,        /**< [low, high] */
    OPTION_LOW_OPEN = 1,      /**< (low, ... */
    OPTION_HIGH_OPEN = 2,     /**< ..., high) */
};

/** One word an OPTION_CHOICE accepts and the value it stores. */
typedef struct option_choice {
    const char *word;   /**< e.g. "opt"; NULL ends a list */
    int value;          /**< e.g. 1, or an enum constant */
} option_choice;

/** Where a value goes: a field of the command's struct. */
typedef struct option_field {
    size_t offset;   /**< offsetof() the field */
    size_t size;     /**< sizeof the field; 0: no field */
} option_field;

/** The #option_field of @p member in struct type @p type. */
#define OPTION_FIELD(type, member) {offsetof(type, member), sizeof(((type *)0)->member)}

/** One option of a subcommand; a table is an array of them ended by one whose name is NULL. */
typedef struct option_spec {
    const char *name;              /**< "--lr" (a section's heading has none: see #help) */
    option_kind kind;              /**< what its value is */
    option_field field;            /**< where its value goes */
    int64_t min;                   /**< OPTION_WHOLE: the smallest value */
    int64_t max;                   /**< OPTION_WHOLE: the largest value */
    double low;                    /**< OPTION_NUMBER: the lower end of the range */
    double high;                   /**< OPTION_NUMBER: the upper end of the range */
    int ends;                      /**< OPTION_NUMBER: #option_ends, OPTION_CLOSED by default */
    const option_choice *choices;  /**< OPTION_CHOICE: the words, ended by a NULL word */
    /** OPTION_PARSED: parse @p value into @p field; 1 when it is valid, 0 when not. */
    int (*parse)(const char *value, void *field);
    const char *expected;          /**< OPTION_PARSED: what a valid value is, for the error line */
    option_field given;            /**< an int field set to 1 when the option is given (size 0: none) */
    unsigned models;               /**< the models it applies to (a mask of the table's models); 0: all */
    const char *why;               /**< why it applies to those models only (optional, for the error) */
    unsigned why_for;              /**< the refused models #why speaks of (a mask); 0: every one */
    const char *configures;        /**< "--incremental", "--batching hybrid": given without it, refused */
    const char *needs;             /**< "--impl opt": given without it, refused */
    const char *when;              /**< OPTION_CHOICE: #needs holds for this word only ("cuda" of --device) */
    int required;                  /**< the command cannot run without it */
    const char *value_name;        /**< the value in the help: "X" shows "--lr X" */
    const char *help;              /**< the help, lines separated by '\n'; a section's heading */
} option_spec;

/** The text of `--help` around the options, for the models of one family. */
typedef struct option_page {
    unsigned models;    /**< the models it describes (0: all); its options are those of any of them */
    int column;         /**< the column where the help of an option starts */
    const char *head;   /**< usage and description, printed before the options */
    const char *tail;   /**< printed after them (NULL: nothing) */
} option_page;

/** A subcommand's options. */
typedef struct option_table {
    const char *command;            /**< "train": the errors read "train: ...", the hints "twofold train --help" */
    const option_spec *options;     /**< the options, ended by a NULL name (a section's name is "") */
    const option_choice *models;    /**< the models: bit m of a mask is the word whose value is m; NULL: none */
    const char *model_option;       /**< the option that names the model ("--model"), read before the others */
    const option_page *pages;       /**< the help pages, the first one the default; ended by a NULL head */
    /** A word that is no option (a dataset, a technique): take it, or refuse it with @p err set.
     *  NULL: every such word is an unexpected argument. */
    int (*word)(void *command, const char *word, tf_error *err);
    int stop_at_word;               /**< 1: the first word ends the options (twofold's own, before COMMAND) */
} option_table;

/** Most options of one table. */
#define OPTIONS_MAX 128

/** What options_parse() found besides the fields it wrote. */
typedef struct option_parse {
    int help;                        /**< --help or -h was given: print options_help(), nothing else */
    int model;                       /**< index of the model named by the table's model option; -1 if none */
    int rest;                        /**< with stop_at_word: the index of the first word (argc: none) */
    unsigned char given[OPTIONS_MAX];/**< given[k]: the table's option k was given */
} option_parse;

/**
 * Read @p argv against table @p t into the struct @p command (already holding the defaults):
 * the model option first, then every argument in order, then the required options and what
 * each given option configures or needs. Stops at the first problem with @p err set in one of
 * the wordings above, or at `--help` with @p parsed->help set.
 * @return TF_OK or TF_ERR_INPUT
 */
int options_parse(const option_table *t, int argc, char **argv, void *command, option_parse *parsed, tf_error *err);

/** Print the help page of @p model (-1: the first page) on @p out: its head, each option that
 *  applies to one of its models with its help, its tail. */
void options_help(const option_table *t, int model, FILE *out);

/** 1 if option @p name of table @p t was given in @p parsed (for the rules a table cannot state). */
int options_given(const option_table *t, const option_parse *parsed, const char *name);

/**
 * The refusal of a rule a table cannot state in the table's own wording: "COMMAND: WHAT needs
 * NEEDED" (e.g. "train: --split vertex needs --impl opt").
 * @return TF_ERR_INPUT
 */
int options_needs(const option_table *t, const char *what, const char *needed, tf_error *err);

/**
 * "option NAME: "VALUE", expected WHAT": the one wording of a bad value, for a value checked
 * after parsing (a list read when the data is there).
 * @return TF_ERR_INPUT
 */
int options_bad_value(const char *name, const char *value, const char *expected, tf_error *err);

/**
 * 1 if @p text is a number written as a person writes one: an optional sign, then a digit or a
 * decimal point and a digit, no white space, no hexadecimal (0x10, 0x1p-4), no inf or nan: what
 * strtod() takes besides is refused. Every number an option reads passes it first.
 */
int options_plain_number(const char *text);

/**
 * 1 if no field of @p text (fields separated by ',' or ':', as in "linear:A,B,C" or "0:5:0.5")
 * holds white space, hexadecimal or inf or nan: for the values a hook hands to a library parser.
 */
int options_plain_numbers(const char *text);

#endif
