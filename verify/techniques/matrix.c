/* The model x technique matrix of verify/techniques/matrix.h: every model of the table through every
 * entry that runs one, a cell per pair, the reasons of the cells that did not run printed once each. */
#include "verify/techniques/matrix.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "verify/techniques/table.h"

/* The most distinct reasons one matrix prints. */
#define MATRIX_MAX_REASONS 48

typedef enum cell_verdict { CELL_EQUAL, CELL_NOT_APPLICABLE, CELL_NOT_YET, CELL_WRONG } cell_verdict;

/* One cell: what its variants gave. */
typedef struct matrix_cell {
    cell_verdict verdict;
    int ran, variants;     /* variants run and equal (or wrong), of those the entry has for the model */
    int any_fp;            /* a twin that ran is judged fp (else every one was bitwise) */
    double error;          /* the worst fp error of the variants that ran */
    int amplified;         /* a variant past its tolerance with its logic proven (engine_result::amplified) */
    int incomparable;      /* a reordered variant past it where the reference's own one-ulp spread is larger
                              (engine_result::incomparable) */
    const char *reason;    /* why a variant did not run (the first such), or NULL */
} matrix_cell;

/* The reasons printed under the matrix, each once; a cell names one by its index + 1. */
typedef struct reason_list {
    char text[MATRIX_MAX_REASONS][TF_ERROR_MESSAGE_SIZE];
    int count;
} reason_list;

static int reason_number(reason_list *list, const char *reason)
{
    for (int k = 0; k < list->count; k++)
        if (strcmp(list->text[k], reason) == 0)
            return k + 1;
    if (list->count == MATRIX_MAX_REASONS)
        return 0;
    snprintf(list->text[list->count], sizeof list->text[0], "%s", reason);
    return ++list->count;
}

/* Whether model k lacks a property variant v of t needs: its reason, and *not_yet when the technique
 * would apply. NULL: it has them all. */
static const char *missing_property(const technique *t, int v, model_kind k, int *not_yet)
{
    const unsigned needs = t->model_needs ? t->model_needs[v] : 0;
    for (int p = 0; p < MODEL_PROPERTIES; p++)
        if (needs & (1u << p)) {
            const char *why = model_lacks(k, (model_property)p, not_yet);
            if (why)
                return why;
        }
    return NULL;
}

/* A variant's skip or missing property into the cell: the first reason is the cell's. */
static void note_reason(matrix_cell *cell, const char *why, int not_yet, char *kept)
{
    if (cell->reason)
        return;
    snprintf(kept, TF_ERROR_MESSAGE_SIZE, "%s", why);
    cell->reason = kept;
    cell->verdict = not_yet ? CELL_NOT_YET : CELL_NOT_APPLICABLE;
}

/* Fold one engine result (a variant that ran) into its cell. */
static void fold_result(matrix_cell *cell, const engine_result *r)
{
    cell->ran++;
    cell->amplified |= r->amplified != 0;
    cell->incomparable |= r->incomparable != 0;
    for (int k = 0; k < r->twins; k++)
        if (r->twin[k].equality == TECHNIQUE_FP) {
            cell->any_fp = 1;
            cell->error = isnan(r->error[k]) ? INFINITY : fmax(cell->error, r->error[k]);
        }
}

/* Every variant of @p t that model @p k takes, into @p cell; a WRONG variant's row is printed. */
static int run_cell(const technique *t, model_kind k, const dataset *data, const char *spoil,
                    const engine_options *options, matrix_cell *cell, char *kept, int *wrong, tf_error *err)
{
    const int printing = !options->group || options->group->rank == 0;
    memset(cell, 0, sizeof *cell);
    for (int v = 0; t->variants[v]; v++) {
        if (t->models == TECHNIQUE_VARIANT_MODEL && v != (int)k)
            continue;
        cell->variants++;
        int not_yet = 0;
        const char *why = missing_property(t, v, k, &not_yet);
        if (why) {
            note_reason(cell, why, not_yet, kept);
            continue;
        }
        engine_options cell_options = *options;
        cell_options.corrupt = technique_named(t, spoil);
        cell_options.model = t->models == TECHNIQUE_ON_MODEL ? &k : NULL;
        engine_result r;
        int status = engine_run(t, data, NULL, v, &cell_options, &r, err);
        if (status == TECHNIQUE_SKIP) {
            note_reason(cell, r.reason, 0, kept);
            continue;
        }
        if (status != TF_OK)
            return status;
        fold_result(cell, &r);
        if (r.wrong) {
            (*wrong)++;
            if (printing) {
                char label[96];
                snprintf(label, sizeof label, "%s, %s", data->name, model_kind_name(k));
                engine_print_row(stdout, t, v, label, &r);
            }
        }
    }
    return TF_OK;
}

/* A cell's text: the error and the variants that ran, n/a or not yet, WRONG; with a reason's number. */
static void cell_text(const matrix_cell *cell, int wrong, int reason, char *text, size_t size)
{
    char note[16] = "";
    if (reason)
        snprintf(note, sizeof note, " [%d]", reason);
    if (wrong)
        snprintf(text, size, "WRONG");
    else if (cell->ran == 0)
        snprintf(text, size, "%s%s", cell->verdict == CELL_NOT_YET ? "not yet" : "n/a", note);
    else if (cell->any_fp)
        snprintf(text, size, "%.1e %d/%d%s%s%s", cell->error, cell->ran, cell->variants, cell->amplified ? " amp" : "",
                 cell->incomparable ? " nc" : "", note);
    else
        snprintf(text, size, "bitwise %d/%d%s", cell->ran, cell->variants, note);
}

#define CELL_WIDTH 19

int technique_matrix_run(const unsigned char *chosen, const dataset *data, const char *spoil,
                         const engine_options *options, matrix_tally *tally, tf_error *err)
{
    static reason_list reasons; /* large: not on the stack */
    const int printing = !options->group || options->group->rank == 0;
    const technique *columns[TECHNIQUE_TABLE_MAX];
    int count = 0;
    memset(tally, 0, sizeof *tally);
    reasons.count = 0;
    for (int c = 0; c < TECHNIQUE_TABLE_MAX && technique_table[c]; c++)
        if ((!chosen || chosen[c]) && technique_table[c]->models != TECHNIQUE_NO_MODEL)
            columns[count++] = technique_table[c];
    if (count == 0)
        return TF_OK;
    static char lines[MODEL_COUNT][TECHNIQUE_TABLE_MAX][CELL_WIDTH + 8];
    for (int k = 0; k < MODEL_COUNT; k++)
        for (int c = 0; c < count; c++) {
            matrix_cell cell;
            char kept[TF_ERROR_MESSAGE_SIZE];
            int wrong = 0;
            int status = run_cell(columns[c], (model_kind)k, data, spoil, options, &cell, kept, &wrong, err);
            if (status != TF_OK)
                return status;
            const int reason = cell.reason ? reason_number(&reasons, cell.reason) : 0;
            cell_text(&cell, wrong, reason, lines[k][c], sizeof lines[k][c]);
            tally->cells++;
            tally->wrong += wrong != 0;
            tally->equal += !wrong && cell.ran > 0;
            tally->amplified += !wrong && cell.ran > 0 && cell.amplified;
            tally->incomparable += !wrong && cell.ran > 0 && cell.incomparable;
            tally->not_applicable += cell.ran == 0 && cell.verdict == CELL_NOT_APPLICABLE;
            tally->not_yet += cell.ran == 0 && cell.verdict == CELL_NOT_YET;
        }
    if (!printing) {
        memset(tally, 0, sizeof *tally);
        return TF_OK;
    }
    printf("\nmodel x technique on %s: the worst error of the variants that ran and how many of the entry's ran, "
           "bitwise, n/a (the technique does not apply), not yet (it would, not built), WRONG; amp: past the "
           "tolerance with the twin's logic bitwise the reference's (equal logic, rounding amplified by the data); "
           "nc: past the tolerance, reordered by design, where a one-ulp change of the reference's own inputs moves "
           "the reference further (not comparable); [n]: the reason below\n",
           data->name);
    printf("  %-10s", "model");
    for (int c = 0; c < count; c++)
        printf(" %-*s", CELL_WIDTH, columns[c]->name);
    printf("\n");
    for (int k = 0; k < MODEL_COUNT; k++) {
        printf("  %-10s", model_names[k]);
        for (int c = 0; c < count; c++)
            printf(" %-*s", CELL_WIDTH, lines[k][c]);
        printf("\n");
    }
    for (int r = 0; r < reasons.count; r++)
        printf("  [%d] %s\n", r + 1, reasons.text[r]);
    char amplified[96] = "";
    if (tally->amplified || tally->incomparable)
        snprintf(amplified, sizeof amplified, " (%d of them amp, %d nc)", tally->amplified, tally->incomparable);
    printf("# matrix: %d model(s) x %d technique(s): %d equal%s, %d not applicable, %d not built yet, #wrong %d\n",
           MODEL_COUNT, count, tally->equal, amplified, tally->not_applicable, tally->not_yet, tally->wrong);
    fflush(stdout);
    return TF_OK;
}
