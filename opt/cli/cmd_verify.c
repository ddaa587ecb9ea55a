/* twofold verify: the technique table's engine (verify/techniques/) on the user's own data, no
 * timing: every twin against its reference, the error against its tolerance, exit status 1 when
 * one is not equal. Under `mpiexec -n R` the distributed twins run on R ranks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/dataset.h"
#include "opt/cli/commands.h"
#include "opt/cli/options.h"
#include "verify/techniques/matrix.h"
#include "verify/techniques/table.h"

/* Parsed arguments. */
typedef struct verify_command {
    const char *data;
    int64_t ranks;                              /* 0: any */
    technique_words techniques;                 /* the entries named */
} verify_command;

static const option_spec verify_options[] = {
    {"--data", OPTION_TEXT, OPTION_FIELD(verify_command, data), .required = 1, .value_name = "D",
     .help = "bundled name, file or generator spec (see twofold info --help)"},
    {"--ranks", OPTION_WHOLE, OPTION_FIELD(verify_command, ranks), .min = 1, .max = 1 << 20, .value_name = "R",
     .help = "refuse to run unless started on exactly R ranks"},
    {.name = NULL},
};

static const option_page verify_pages[] = {
    {0, 14,
     "usage: twofold verify [TECHNIQUE...] --data DATASET [--ranks R]\n"
     "\n"
     "Check every optimized twin of the named techniques (default: all) against its reference\n"
     "on DATASET (a bundled name, a file, or a generator spec such as\n"
     "powerlaw:nodes=20000,edges=200000,snapshots=20,churn=0.01), every variant, untimed.\n"
     "Each row prints the worst error over all steps beside its tolerance (bitwise, or fp:\n"
     "|twin - ref| / max(1, |ref|) <= 1e-5 on the CPU). A technique that does not apply to the\n"
     "data (snapshots wanted, events given) is skipped and says why. Exit status: 0 when every\n"
     "twin is equal, 1 when one is not, 2 for bad input, 3 when the machine failed (MPI, I/O).\n"
     "\n"
     "Then the model x technique matrix: every model of twofold train --help through every\n"
     "named entry that runs a model, one cell each: the worst error of its variants, n/a\n"
     "(the technique does not apply to such a model) or not yet (it would, not built), with\n"
     "the model table's reason printed under the matrix, or WRONG.\n"
     "\n"
     "Under mpiexec -n R the distributed twins run on R ranks (the references on rank 0).\n"
     "\n",
     "\n"
     "To see a check fail: TWOFOLD_BREAK_TWIN=NAME (a technique, or all) spoils one value of\n"
     "every answer of that technique's twins before it is compared; the rows must say WRONG.\n"
     "\n"
     "A TECHNIQUE is a name below, or a stem (of the entry's files and chapter), which names\n"
     "every entry of the stem.\n"
     "\n"
     "techniques:\n"},
    {0, 0, NULL, NULL},
};

int technique_word(const char *command, technique_words *w, const char *word, tf_error *err)
{
    if (!technique_choose(word, w->chosen))
        return tf_error_set(err, TF_ERR_INPUT, "%s: no technique called \"%s\" (see twofold verify --help)", command,
                            word);
    w->any = 1;
    return TF_OK;
}

/* A word that is no option names a technique. */
static int choose_technique(void *command, const char *word, tf_error *err)
{
    return technique_word("verify", &((verify_command *)command)->techniques, word, err);
}

static const option_table verify_table = {
    .command = "verify", .options = verify_options, .pages = verify_pages, .word = choose_technique};

static void print_usage(void)
{
    options_help(&verify_table, -1, stdout);
    for (const technique *const *t = technique_table; *t; t++)
        printf("  %-16s stem %-12s chapter %s, %s: needs %s\n", (*t)->name, (*t)->stem, (*t)->chapter, (*t)->title,
               (*t)->needs);
}

/* Every variant of every chosen technique on the data, untimed, through the table's loop; then every
 * model of the table through the chosen entries that run one (verify/techniques/matrix.h). */
static int verify_all(const verify_command *c, comm *group, tf_error *err)
{
    dataset d;
    /* Every rank loads its own; they compare what they loaded (one line for a file one rank could not
     * read, a refusal for different contents) before the first row's collectives. */
    const int loaded = dataset_load(c->data, NULL, &d, err);
    if (ranks_agree_on_data(group, 0, NULL, loaded, &d, err) != TF_OK)
        return err->code;
    if (group->rank == 0)
        printf("twofold verify: %s (%s), %d rank(s); no timing\n\n", d.name, d.format, group->size);
    engine_row rows[128];
    const unsigned char *chosen = c->techniques.any ? c->techniques.chosen : NULL;
    const char *spoil = getenv("TWOFOLD_BREAK_TWIN");
    const int count = technique_variant_rows(chosen, &d, spoil, rows, 128);
    engine_options options = {.timed = 0, .repeats = 1, .threads = 1, .group = group};
    engine_tally tally;
    matrix_tally cells = {0};
    int status = engine_run_rows(rows, count, &options, &tally, err);
    if (status == TF_OK)
        status = technique_matrix_run(chosen, &d, spoil, &options, &cells, err);
    dataset_free(&d);
    if (status == TF_OK && (tally.wrong || cells.wrong))
        return tf_error_set(err, EXIT_WRONG, "verify: %d row(s) and %d matrix cell(s) not equal to the reference",
                            tally.wrong, cells.wrong);
    return status;
}

int command_verify(int argc, char **argv, tf_error *err)
{
    verify_command c;
    memset(&c, 0, sizeof c);
    option_parse parsed;
    if (options_parse(&verify_table, argc, argv, &c, &parsed, err) == TF_OK && parsed.help) {
        print_usage();
        return TF_OK;
    }
    comm group;
    const int started = start_agreed_ranks(&group, argc, argv, err);
    if (started != TF_OK)
        return started;
    if (c.ranks && c.ranks != group.size) { /* every rank sees it: they finish together, one reports */
        tf_error_set(err, TF_ERR_INPUT, "verify: --ranks %lld, but this run has %d rank(s): start it as mpiexec -n %lld",
                     (long long)c.ranks, group.size, (long long)c.ranks);
        return finish_ranks(&group, err->code, err);
    }
    int status = verify_all(&c, &group, err);
    /* A wrong result is rank 0's verdict, reached after every rank finished: nothing to abort. */
    finish_ranks(&group, status == EXIT_WRONG ? TF_OK : status, err);
    return status;
}
