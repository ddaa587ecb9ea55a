/* The option tables of the subcommands (opt/cli/options.h): one parser, one help printer and one
 * wording per kind of bad input, for every table. */
#include "opt/cli/options.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "opt/cli/cli.h"
#include "ref/core/io.h"

/* ---- looking options up --------------------------------------------------------------------------- */

/* 1 if option @p s applies to model @p model (-1: not named yet, so every option may). */
static int applies(const option_spec *s, int model)
{
    return s->models == 0 || model < 0 || (s->models >> model & 1u);
}

/* The index of the option called @p name (its first @p length characters) that applies to
 * @p model; -1 when there is none. *@p named is set to an option of that name that does not apply,
 * or -1. */
static int find(const option_table *t, const char *name, size_t length, int model, int *named)
{
    *named = -1;
    for (int k = 0; t->options[k].name; k++) {
        const option_spec *s = &t->options[k];
        if (s->kind == OPTION_SECTION || strlen(s->name) != length || strncmp(s->name, name, length) != 0)
            continue;
        if (applies(s, model))
            return k;
        *named = k;
    }
    return -1;
}

/* The help page that describes @p model (-1: the first). */
static const option_page *page_of(const option_table *t, int model)
{
    for (const option_page *p = t->pages; model >= 0 && p->head; p++)
        if (p->models == 0 || (p->models >> model & 1u))
            return p;
    return t->pages;
}

/* The name of model @p model of table @p t. */
static const char *model_name(const option_table *t, int model)
{
    for (const option_choice *m = t->models; m->word; m++)
        if (m->value == model)
            return m->word;
    return "?";
}

/* "twofold train --help", or "twofold train --model jodie --help" when the model has its own page;
 * "twofold --help" for twofold's own options. */
static const char *help_hint(const option_table *t, int model, char *text, size_t size)
{
    if (model >= 0 && page_of(t, model) != t->pages)
        snprintf(text, size, "twofold %s %s %s --help", t->command, t->model_option, model_name(t, model));
    else
        snprintf(text, size, "twofold %s%s--help", t->command, t->command[0] ? " " : "");
    return text;
}

/* "train: " in front of a refusal; nothing for twofold's own options (main adds "twofold: error: "). */
static const char *prefix(const option_table *t, char *text, size_t size)
{
    snprintf(text, size, "%s%s", t->command, t->command[0] ? ": " : "");
    return text;
}

/* "a, b or c" of the words of @p choices; with @p mask, only those whose value is a bit of it
 * (the models of a mask: "gconvgru and gclstm", @p last " and "). */
static void word_list(const option_choice *choices, int masked, unsigned mask, const char *last, char *text,
                      size_t size)
{
    int count = 0, written = 0;
    for (const option_choice *c = choices; c->word; c++)
        count += !masked || (mask >> c->value & 1u);
    text[0] = '\0';
    for (const option_choice *c = choices; c->word; c++) {
        if (masked && !(mask >> c->value & 1u))
            continue;
        const size_t used = strlen(text);
        snprintf(text + used, size - used, "%s%s", written == 0 ? "" : written == count - 1 ? last : ", ", c->word);
        written++;
    }
}

/* ---- values ------------------------------------------------------------------------------------- */

int options_bad_value(const char *name, const char *value, const char *expected, tf_error *err)
{
    return tf_error_set(err, TF_ERR_INPUT, "option %s: \"%s\", expected %s", name, value, expected);
}

/* A bound as a reader writes it: 1000000, not 1e+06. */
static void format_bound(double value, char *text, size_t size)
{
    if (value == floor(value) && fabs(value) < 1e15)
        snprintf(text, size, "%.0f", value);
    else
        snprintf(text, size, "%g", value);
}

/* What a valid value of @p s is: "a whole number in 1..16", "a number in (0, 1)", "ref or opt". */
static void expected_text(const option_spec *s, char *text, size_t size)
{
    char low[32], high[32];
    switch (s->kind) {
    case OPTION_WHOLE:
        snprintf(text, size, "a whole number in %lld..%lld", (long long)s->min, (long long)s->max);
        break;
    case OPTION_NUMBER:
        format_bound(s->low, low, sizeof low);
        format_bound(s->high, high, sizeof high);
        snprintf(text, size, "a number in %c%s, %s%c", s->ends & OPTION_LOW_OPEN ? '(' : '[', low, high,
                 s->ends & OPTION_HIGH_OPEN ? ')' : ']');
        break;
    case OPTION_CHOICE:
        word_list(s->choices, 0, 0, " or ", text, size);
        break;
    default:
        snprintf(text, size, "%s", s->expected ? s->expected : "a value");
    }
}

int options_plain_number(const char *text)
{
    const char *digits = text + (text[0] == '-' || text[0] == '+');
    if (!isdigit((unsigned char)digits[0]) && !(digits[0] == '.' && isdigit((unsigned char)digits[1])))
        return 0; /* white space, "inf", "nan", nothing */
    return strpbrk(text, "xX \t\n\v\f\r") == NULL; /* no hexadecimal, no white space within */
}

int options_plain_numbers(const char *text)
{
    for (const char *p = text; *p; p++) {
        const int starts = p == text || p[-1] == ',' || p[-1] == ':'; /* a field of "linear:A,B,C" */
        const char *word = p + (starts && (*p == '-' || *p == '+'));
        if (isspace((unsigned char)*p) || *p == 'x' || *p == 'X' ||
            (starts && (strncasecmp(word, "inf", 3) == 0 || strncasecmp(word, "nan", 3) == 0)))
            return 0;
    }
    return 1;
}

/* 1 if @p value is a number in the range of @p s, stored in *@p out. */
static int read_number(const option_spec *s, const char *value, double *out)
{
    char *end;
    if (!options_plain_number(value))
        return 0;
    const double x = strtod(value, &end);
    if (end == value || *end != '\0')
        return 0;
    const int above = s->ends & OPTION_LOW_OPEN ? x > s->low : x >= s->low;
    const int below = s->ends & OPTION_HIGH_OPEN ? x < s->high : x <= s->high;
    *out = x;
    return above && below; /* a NaN is neither */
}

/* 1 if @p value is one of the words of @p s, its value stored in *@p out. */
static int read_choice(const option_spec *s, const char *value, int *out)
{
    for (const option_choice *c = s->choices; c->word; c++)
        if (strcmp(c->word, value) == 0) {
            *out = c->value;
            return 1;
        }
    return 0;
}

/* Parse @p value of option @p s into its field of @p command. */
static int read_value(const option_spec *s, const char *value, void *command, tf_error *err)
{
    char *field = (char *)command + s->field.offset;
    int64_t whole;
    double number;
    int choice, valid = 1;
    switch (s->kind) {
    case OPTION_TEXT:
        if (value[0] == '\0') /* "--data=" or --data "": no name, no file */
            return tf_error_set(err, TF_ERR_INPUT, "option %s needs a value (it was empty)", s->name);
        memcpy(field, &value, sizeof value);
        break;
    case OPTION_WHOLE:
        valid = parse_int64(value, value + strlen(value), &whole) == 0 && whole >= s->min && whole <= s->max;
        if (valid && s->field.size == sizeof(int32_t)) {
            const int32_t narrow = (int32_t)whole;
            memcpy(field, &narrow, sizeof narrow);
        } else if (valid) {
            memcpy(field, &whole, sizeof whole);
        }
        break;
    case OPTION_NUMBER:
        if ((valid = read_number(s, value, &number)))
            memcpy(field, &number, sizeof number);
        break;
    case OPTION_CHOICE:
        if ((valid = read_choice(s, value, &choice)))
            memcpy(field, &choice, sizeof choice);
        break;
    default:
        valid = s->parse(value, field);
    }
    if (valid)
        return TF_OK;
    char expected[512];
    expected_text(s, expected, sizeof expected);
    return options_bad_value(s->name, value, expected, err);
}

/* ---- the arguments --------------------------------------------------------------------------------- */

/* Mark option @p k of @p t given, in @p parsed and in its `given` field. */
static void mark_given(const option_table *t, int k, void *command, option_parse *parsed)
{
    const option_spec *s = &t->options[k];
    const int one = 1;
    parsed->given[k] = 1;
    if (s->kind == OPTION_FLAG)
        memcpy((char *)command + s->field.offset, &one, sizeof one);
    if (s->given.size)
        memcpy((char *)command + s->given.offset, &one, sizeof one);
}

/* The value of the option at argv[*i] (after '=' or the next argument, consumed); NULL with @p err
 * set when it has none. A next argument that starts with "--" is the next option, not a value:
 * `--data --epochs 3` forgot the data (a value that starts so is given as --data=--name). */
static const char *value_of(int argc, char **argv, int *i, size_t length, tf_error *err)
{
    if (argv[*i][length] == '=')
        return argv[*i] + length + 1;
    if (*i + 1 < argc && strncmp(argv[*i + 1], "--", 2) != 0)
        return argv[++*i];
    if (*i + 1 < argc)
        tf_error_set(err, TF_ERR_INPUT, "option %.*s needs a value (%s that follows it is an option)", (int)length,
                     argv[*i], argv[*i + 1]);
    else
        tf_error_set(err, TF_ERR_INPUT, "option %.*s needs a value", (int)length, argv[*i]);
    return NULL;
}

/* The refusal of an option that exists but not for @p model. */
static int not_for_model(const option_table *t, const option_spec *s, int model, tf_error *err)
{
    unsigned mask = 0;
    for (const option_spec *o = t->options; o->name; o++)
        if (strcmp(o->name, s->name) == 0)
            mask |= o->models;
    char models[256];
    word_list(t->models, 1, mask, " and ", models, sizeof models);
    /* a reason about other models would mislead (--heads's on JODIE, given for GAT-LSTM) */
    const char *why = s->why && (!s->why_for || (s->why_for & (1u << model))) ? s->why : NULL;
    return tf_error_set(err, TF_ERR_INPUT, "%s: %s applies to %s, not %s%s%s%s", t->command, s->name, models,
                        model_name(t, model), why ? " (" : "", why ? why : "", why ? ")" : "");
}

/* One argument, argv[*i] (and its value): an option of @p t, or a word. */
static int read_argument(const option_table *t, int argc, char **argv, int *i, void *command, option_parse *parsed,
                         tf_error *err)
{
    const char *argument = argv[*i];
    char hint[128], who[64];
    if (argument[0] == '\0') /* "" from an empty variable: say so, not "unexpected argument  (see" */
        return tf_error_set(err, TF_ERR_INPUT, "%san empty argument \"\" (see %s)", prefix(t, who, sizeof who),
                            help_hint(t, parsed->model, hint, sizeof hint));
    if (strncmp(argument, "--", 2) != 0) {
        if (t->word)
            return t->word(command, argument, err);
        return tf_error_set(err, TF_ERR_INPUT, "%sunexpected argument %s (see %s)", prefix(t, who, sizeof who),
                            argument, help_hint(t, parsed->model, hint, sizeof hint));
    }
    const char *equals = strchr(argument, '=');
    const size_t length = equals ? (size_t)(equals - argument) : strlen(argument);
    int named;
    const int k = find(t, argument, length, parsed->model, &named);
    if (k < 0 && named >= 0)
        return not_for_model(t, &t->options[named], parsed->model, err);
    if (k < 0)
        return tf_error_set(err, TF_ERR_INPUT, "%sunknown option %.*s (see %s)", prefix(t, who, sizeof who),
                            (int)length, argument, help_hint(t, parsed->model, hint, sizeof hint));
    const option_spec *s = &t->options[k];
    if (s->kind == OPTION_FLAG && equals)
        return tf_error_set(err, TF_ERR_INPUT, "option %s takes no value", s->name);
    const char *value = s->kind == OPTION_FLAG ? "" : value_of(argc, argv, i, length, err);
    if (!value || (s->kind != OPTION_FLAG && read_value(s, value, command, err) != TF_OK))
        return TF_ERR_INPUT;
    mark_given(t, k, command, parsed);
    return TF_OK;
}

/* The model option, read before the others: it decides which of them apply. */
static int read_model(const option_table *t, int argc, char **argv, void *command, option_parse *parsed,
                      tf_error *err)
{
    parsed->model = -1;
    if (!t->model_option)
        return TF_OK;
    const size_t length = strlen(t->model_option);
    int named, k = find(t, t->model_option, length, -1, &named);
    const char *first = NULL;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], t->model_option, length) != 0 || (argv[i][length] != '\0' && argv[i][length] != '='))
            continue;
        const char *value = value_of(argc, argv, &i, length, err);
        if (!value || read_value(&t->options[k], value, command, err) != TF_OK)
            return TF_ERR_INPUT;
        /* The model decides which options apply: two of them leave the reader (and the ranks'
         * comparison of options) guessing which one the run meant. */
        if (first && strcmp(first, value) != 0)
            return tf_error_set(err, TF_ERR_INPUT, "%s: %s given twice, %s and %s: give one", t->command,
                                t->model_option, first, value);
        first = value;
        memcpy(&parsed->model, (char *)command + t->options[k].field.offset, sizeof parsed->model);
    }
    return TF_OK;
}

/* ---- rules between options ------------------------------------------------------------------------ */

/* 1 if the field of choice option @p s holds the value of its word @p word. */
static int chosen(const option_spec *s, const void *command, const char *word)
{
    int stored, wanted;
    memcpy(&stored, (const char *)command + s->field.offset, sizeof stored);
    return read_choice(s, word, &wanted) && stored == wanted;
}

/* 1 if condition @p text holds: "--incremental" (given), "--impl opt --dispatch sven" (each option's
 * field holds that word's value, given or by default). */
static int holds(const option_table *t, const void *command, const option_parse *parsed, const char *text)
{
    char words[128];
    snprintf(words, sizeof words, "%s", text);
    char *save = NULL, *name = strtok_r(words, " ", &save);
    while (name) {
        char *value = strtok_r(NULL, " ", &save);
        int named, k = find(t, name, strlen(name), parsed->model, &named);
        if (k < 0)
            return 0;
        if (!value || strncmp(value, "--", 2) == 0) {
            if (!parsed->given[k])
                return 0;
            name = value;
            continue;
        }
        if (!chosen(&t->options[k], command, value))
            return 0;
        name = strtok_r(NULL, " ", &save);
    }
    return 1;
}

/* The required options (each name once), as "--a, --b and --c"; 1 when one of them is missing. */
static int required_options(const option_table *t, const option_parse *parsed, char *text, size_t size)
{
    const char *names[16];
    int count = 0, missing = 0;
    for (int k = 0; t->options[k].name && count < 16; k++) {
        const option_spec *s = &t->options[k];
        int seen = 0;
        for (int j = 0; j < count; j++)
            seen |= strcmp(names[j], s->name) == 0;
        if (!s->required || !applies(s, parsed->model) || seen)
            continue;
        names[count++] = s->name;
        missing |= !options_given(t, parsed, s->name);
    }
    text[0] = '\0';
    for (int j = 0; j < count; j++) {
        const size_t used = strlen(text);
        snprintf(text + used, size - used, "%s%s", j == 0 ? "" : j == count - 1 ? " and " : ", ", names[j]);
    }
    return missing ? count : 0;
}

/* The required options, then what each given option configures or needs. */
static int check_rules(const option_table *t, const void *command, const option_parse *parsed, tf_error *err)
{
    char required[256], hint[128];
    const int count = required_options(t, parsed, required, sizeof required);
    if (count)
        return tf_error_set(err, TF_ERR_INPUT, "%s: %s %s required (see %s)", t->command, required,
                            count > 1 ? "are" : "is", help_hint(t, parsed->model, hint, sizeof hint));
    for (int k = 0; t->options[k].name; k++) {
        const option_spec *s = &t->options[k];
        if (!parsed->given[k])
            continue;
        if (s->configures && !holds(t, command, parsed, s->configures))
            return tf_error_set(err, TF_ERR_INPUT, "%s: %s configures %s: add it", t->command, s->name, s->configures);
        char what[96];
        snprintf(what, sizeof what, "%s%s%s", s->name, s->when ? " " : "", s->when ? s->when : "");
        if (s->needs && (!s->when || chosen(s, command, s->when)) && !holds(t, command, parsed, s->needs))
            return options_needs(t, what, s->needs, err);
    }
    return TF_OK;
}

int options_needs(const option_table *t, const char *what, const char *needed, tf_error *err)
{
    return tf_error_set(err, TF_ERR_INPUT, "%s: %s needs %s", t->command, what, needed);
}

int options_parse(const option_table *t, int argc, char **argv, void *command, option_parse *parsed, tf_error *err)
{
    memset(parsed, 0, sizeof *parsed);
    parsed->rest = argc;
    if (read_model(t, argc, argv, command, parsed, err) != TF_OK)
        return TF_ERR_INPUT;
    for (int i = 0; i < argc; i++) {
        if (t->stop_at_word && argv[i][0] != '-') {
            parsed->rest = i;
            break;
        }
        if (cli_is_help(argv[i])) { /* at its place: an earlier bad option is still said */
            parsed->help = 1;
            return TF_OK;
        }
        if (read_argument(t, argc, argv, &i, command, parsed, err) != TF_OK)
            return TF_ERR_INPUT;
    }
    return check_rules(t, command, parsed, err);
}

int options_given(const option_table *t, const option_parse *parsed, const char *name)
{
    for (int k = 0; t->options[k].name; k++)
        if (parsed->given[k] && strcmp(t->options[k].name, name) == 0)
            return 1;
    return 0;
}

/* ---- --help ----------------------------------------------------------------------------------- */

/* One option's lines: "  --name VALUE" and its help from the table's column on. */
static void print_option(const option_page *page, const option_spec *s, FILE *out)
{
    if (s->kind == OPTION_SECTION) {
        fprintf(out, "%s\n", s->help);
        return;
    }
    char left[96];
    snprintf(left, sizeof left, "  %s%s%s", s->name, s->value_name ? " " : "", s->value_name ? s->value_name : "");
    const int width = (int)strlen(left);
    fputs(left, out);
    if (width + 1 > page->column)
        fprintf(out, "\n%*s", page->column, "");
    else
        fprintf(out, "%*s", page->column - width, "");
    for (const char *line = s->help; *line;) {
        const char *end = strchr(line, '\n');
        const int length = end ? (int)(end - line) : (int)strlen(line);
        fprintf(out, "%.*s\n", length, line);
        if (!end)
            break;
        line = end + 1;
        fprintf(out, "%*s", page->column, "");
    }
}

void options_help(const option_table *t, int model, FILE *out)
{
    const option_page *page = page_of(t, model);
    fputs(page->head, out);
    for (const option_spec *s = t->options; s->name; s++)
        if (s->help && (page->models == 0 || s->models == 0 || (s->models & page->models)))
            print_option(page, s, out);
    if (page->tail)
        fputs(page->tail, out);
}
