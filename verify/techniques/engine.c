/* The engine of verify/techniques/engine.h: validate, then time, then print. */
#include "verify/techniques/engine.h"

#include <math.h>
#include <string.h>

#include "opt/kernels.h"
#include "ref/core/clock.h"
#include "verify/techniques/spread.h"

/* float32's unit of rounding, 2^-24: a row's error in these units is how far the data grew the
 * kernels' last-bit differences. */
#define ROUNDING_UNIT 5.9604644775390625e-08

/* Whether this process takes part in t's runs: every rank for a distributed technique. */
static int takes_part(const technique *t, const comm *group)
{
    return t->distributed || !group || group->rank == 0;
}

static int speaks(const comm *group)
{
    return !group || group->rank == 0;
}

/* The spoiled value of technique::corrupt: v + 1 + |v| differs from v by at least 1 relative
 * to max(1, |v|), so no tolerance below 1 accepts it. */
float technique_spoiled(float value)
{
    return value + 1.0f + fabsf(value);
}

int technique_reference_finite(const float *values, int64_t n, const char *what, int64_t step, tf_error *err)
{
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(values[i]))
            return tf_error_set(err, TECHNIQUE_DIVERGED, "the reference's %s is %g at value %lld of %lld after step %lld "
                                "(the data drives it beyond float's range)", what, (double)values[i], (long long)i,
                                (long long)n, (long long)step);
    return TF_OK;
}

int technique_reference_parameters_finite(const parameter_list *parameters, int64_t step, tf_error *err)
{
    for (int64_t k = 0; k < parameters->count; k++) {
        char what[160];
        snprintf(what, sizeof what, "parameter %s", parameters->items[k].name);
        if (technique_reference_finite(parameters->items[k].value.data, parameters->items[k].value.size, what, step,
                                       err) != TF_OK)
            return err->code;
    }
    return TF_OK;
}

int technique_sgd_trainers(const technique_context *context, const snapshot_seq *seq, int64_t hidden, int64_t window,
                           int64_t stride, int64_t epochs, trainer *ref, trainer *twin, tf_error *err)
{
    const model_kind kind = context->model ? *context->model : MODEL_TGCN;
    /* K = 2, but 3 for DCRNN, so that the closure of its diffusions' T_2 runs when they are served
     * (opt/incremental_walks.h) */
    model_config config = {kind, 0, hidden, 0, model_info_of(kind)->inputs == MODEL_INPUTS_DIFFUSION ? 3 : 2, 0};
    train_options options;
    train_options_default(&options);
    options.window = window;
    options.stride = stride;
    options.batch = 2;
    options.epochs = epochs;
    options.optimizer = OPTIMIZER_SGD;
    /* a trainer_create() that fails has released what it made: zeroed, trainer_free() passes it by */
    if (trainer_create(ref, seq, &config, &options, err) != TF_OK) { /* the data's shape, not a failure */
        memset(ref, 0, sizeof *ref);
        char why[TF_ERROR_MESSAGE_SIZE];
        snprintf(why, sizeof why, "%s", err->message);
        return tf_error_set(err, TECHNIQUE_SKIP, "cannot train on this data: %.900s", why);
    }
    if (trainer_create(twin, seq, &config, &options, err) != TF_OK) {
        memset(twin, 0, sizeof *twin);
        return err->code;
    }
    return TF_OK;
}

/* A twin's error folded into its worst: a bitwise twin adds its differing values up over the
 * steps, an fp twin keeps the largest (NaN already counts as infinite). */
static void fold_error(engine_result *r, int twin, int64_t step, double error)
{
    if (r->twin[twin].equality == TECHNIQUE_BITWISE) {
        if (error > 0 && r->error[twin] == 0)
            r->worst_step[twin] = step;
        r->error[twin] += error;
    } else if (error > r->error[twin] || isnan(error)) {
        r->error[twin] = isnan(error) ? INFINITY : error;
        r->worst_step[twin] = step;
    }
}

static int twin_is_outside(const engine_result *r, int twin)
{
    return r->twin[twin].equality == TECHNIQUE_BITWISE ? r->error[twin] != 0
                                                       : !(r->error[twin] <= r->twin[twin].tolerance);
}

/* An fp twin outside its tolerance whose logic, run again on the reference's kernels, has the
 * reference's bits at every step: the rest is the opt kernels' rounding, grown by the data, so
 * the row says so with both numbers instead of WRONG. */
static int twin_is_amplified(const engine_result *r, int twin)
{
    return r->twin[twin].equality == TECHNIQUE_FP && twin_is_outside(r, twin) && r->logic[twin] == 0 &&
           !r->diverged[0];
}

/* A reordered fp twin (technique::logic) outside its tolerance whose bits differ, on data where a
 * one-ulp change of the reference's own inputs moves the reference by more than that tolerance:
 * its bits cannot match the reference's, and no float computation can be held to the tolerance
 * there, so the row says "not comparable", with both numbers, instead of WRONG — as long as the
 * twin's error is of the spread's order (within SPREAD_MARGIN of it): one far past what a one-ulp
 * change does to the reference is WRONG on any data. */
static int twin_is_incomparable(const engine_result *r, int twin)
{
    if (r->diverged[0]) /* the reference's answer was inf or NaN: nothing to hold a twin to */
        return twin_is_outside(r, twin);
    return r->twin[twin].equality == TECHNIQUE_FP && twin_is_outside(r, twin) && !twin_is_amplified(r, twin) &&
           r->reordered[twin] && r->spread > r->twin[twin].tolerance && r->error[twin] <= SPREAD_MARGIN * r->spread;
}

static int twin_is_wrong(const engine_result *r, int twin)
{
    return twin_is_outside(r, twin) && !twin_is_amplified(r, twin) && !twin_is_incomparable(r, twin);
}

/* After validating: each fp twin rank 0 found outside its tolerance runs again on the reference's
 * kernels (technique::logic), on every rank of a distributed run (rank 0 tells them which); where
 * a reordered twin's bits differ, rank 0 measures the reference's spread (technique::spread). */
static int check_logic(const technique *t, void *state, const engine_options *options, engine_result *r,
                       tf_error *err)
{
    double outside[TECHNIQUE_MAX_TWINS] = {0};
    for (int k = 0; k < r->twins; k++) {
        r->logic[k] = -1;
        outside[k] = speaks(options->group) && r->twin[k].equality == TECHNIQUE_FP && twin_is_outside(r, k) &&
                     !r->diverged[0];
    }
    if (!t->logic)
        return TF_OK;
    if (t->distributed && options->group && options->group->size > 1 &&
        comm_allreduce_sum_double(options->group, outside, r->twins, err) != TF_OK)
        return err->code;
    int unproven = 0;
    for (int k = 0; k < r->twins; k++) {
        if (outside[k] > 0 && (r->logic[k] = t->logic(state, k, options->corrupt, &r->reordered[k], err)) < 0)
            return err->code;
        unproven += outside[k] > 0 && r->logic[k] != 0 && r->reordered[k];
    }
    if (!unproven || !t->spread || !speaks(options->group))
        return TF_OK;
    r->spread = t->spread(state, r->steps, err);
    return r->spread < 0 ? err->code : TF_OK;
}

/* The validating pass: every step, reference then each twin, compared at once. Rank 0 runs the
 * reference and compares; in a distributed technique the other ranks run only the twins. The
 * timed steps' seconds go into r->seconds. */
static int validate(const technique *t, void *state, const comm *group, int corrupt, engine_result *r,
                    tf_error *err)
{
    const int is_root = speaks(group);
    for (int64_t step = 0; step < r->steps; step++) {
        const int timed = step >= t->untimed_steps;
        if (is_root) {
            double started = wall_seconds();
            const int status = t->run_ref(state, step, err);
            if (status == TECHNIQUE_DIVERGED) { /* the first such step's words; the steps go on */
                if (!r->diverged[0])
                    snprintf(r->diverged, sizeof r->diverged, "%s", err->message);
                r->spread = INFINITY;
                tf_error_clear(err);
            } else if (status != TF_OK) {
                return err->code;
            }
            r->seconds[0] += timed ? wall_seconds() - started : 0;
        }
        for (int k = 0; k < r->twins; k++) {
            double started = wall_seconds();
            if (t->run_twin(state, k, step, err) != TF_OK)
                return err->code;
            r->seconds[1 + k] += timed ? wall_seconds() - started : 0;
            if (corrupt)
                t->corrupt(state, k);
            if (is_root)
                fold_error(r, k, step, t->compare(state, k, step));
        }
    }
    return TF_OK;
}

/* A timed run of twin k alone over all steps; its time replaces the best when shorter. */
static int time_again(const technique *t, void *state, int k, engine_result *r, tf_error *err)
{
    if (t->restart(state, k, err) != TF_OK)
        return err->code;
    double seconds = 0;
    for (int64_t step = 0; step < r->steps; step++) {
        double started = wall_seconds();
        if (t->run_twin(state, k, step, err) != TF_OK)
            return err->code;
        seconds += step >= t->untimed_steps ? wall_seconds() - started : 0;
    }
    r->seconds[1 + k] = fmin(r->seconds[1 + k], seconds);
    return TF_OK;
}

/* Rank 0's verdict (wrong, amplified and not comparable counts: whether to time) reaches every
 * rank of a distributed run. */
static int share_verdict(comm *group, engine_result *r, tf_error *err)
{
    if (!group || group->size == 1)
        return TF_OK;
    double values[3] = {group->rank == 0 ? r->wrong : 0, group->rank == 0 ? r->amplified : 0,
                        group->rank == 0 ? r->incomparable : 0};
    if (comm_allreduce_sum_double(group, values, 3, err) != TF_OK)
        return err->code;
    r->wrong = (int)values[0];
    r->amplified = (int)values[1];
    r->incomparable = (int)values[2];
    return TF_OK;
}

int engine_run(const technique *t, const dataset *data, const void *params, int variant,
               const engine_options *options, engine_result *result, tf_error *err)
{
    memset(result, 0, sizeof *result);
    if (!takes_part(t, options->group))
        return TF_OK;
    opt_set_threads(options->threads);
    technique_context context = {options->group, options->threads, params, options->model};
    void *state = NULL;
    int twins = 0;
    int status = t->setup(&context, data, variant, &state, &twins, err);
    if (status == TECHNIQUE_SKIP) {
        result->skipped = 1;
        snprintf(result->reason, sizeof result->reason, "%s", err->message);
        tf_error_clear(err); /* not an error: the row says why */
        t->teardown(state);
        return TECHNIQUE_SKIP;
    }
    if (status == TF_OK && (twins < 1 || twins > TECHNIQUE_MAX_TWINS))
        status = tf_error_set(err, TF_ERR_SYSTEM, "%s: %d twins, expected 1 to %d", t->name, twins,
                              TECHNIQUE_MAX_TWINS);
    if (status == TF_OK && options->corrupt && !t->corrupt)
        status = tf_error_set(err, TF_ERR_SYSTEM, "%s: no corrupt() to spoil its twins with", t->name);
    if (status != TF_OK) {
        t->teardown(state);
        return status;
    }
    result->twins = twins;
    for (int k = 0; k < twins; k++)
        result->twin[k] = *t->twin(state, k);
    result->steps = t->steps(state);
    status = validate(t, state, options->group, options->corrupt, result, err);
    if (status == TF_OK)
        status = check_logic(t, state, options, result, err);
    for (int k = 0; status == TF_OK && k < twins; k++) {
        result->wrong += speaks(options->group) && twin_is_wrong(result, k);
        result->amplified += speaks(options->group) && twin_is_amplified(result, k);
        result->incomparable += speaks(options->group) && twin_is_incomparable(result, k);
    }
    if (status == TF_OK && t->distributed)
        status = share_verdict(options->group, result, err);
    /* every twin within its tolerance */
    const int judged = result->wrong == 0 && result->amplified == 0 && result->incomparable == 0;
    /* Repeats are decided by each rank's own clock, so a distributed twin (whose ranks must
     * call the same collectives) is timed once. */
    const int repeatable = t->restart && !(t->distributed && options->group && options->group->size > 1);
    if (status == TF_OK && options->timed && judged && repeatable) {
        /* Twins alternate, so a burst of load from elsewhere tends to hit all of them alike. */
        for (int repeat = 1; status == TF_OK && repeat < options->repeats; repeat++)
            for (int k = 0; status == TF_OK && k < twins; k++)
                if (result->seconds[1 + k] < 1.0)
                    status = time_again(t, state, k, result, err);
    }
    if (status == TF_OK && (!options->timed || !judged))
        memset(result->seconds, 0, sizeof result->seconds); /* no speed for an answer not shown equal */
    if (status == TF_OK && t->work)
        result->work = t->work(state, &result->work_unit);
    if (status == TF_OK && t->describe && judged)
        t->describe(state, result->seconds, result->note, sizeof result->note);
    if (status == TF_OK && options->inspect && speaks(options->group))
        options->inspect(options->inspect_context, state);
    t->teardown(state);
    return status;
}

/* The columns of every row table: ch, technique, data, error, then speed or the check. */
#define ROW_FORMAT "  %-3s %-30s %-31s %-9s %s\n"

static void print_header(FILE *out, int timed)
{
    fprintf(out, ROW_FORMAT, "ch", "technique", "data", "max error", timed ? "speed" : "check");
}

/* The error column: "bitwise" when every twin is bitwise and equal, the count of differing
 * values when a bitwise twin is not, else the largest fp error. */
static void error_column(const engine_result *r, char *text, size_t size)
{
    double worst_fp = -1, differing = 0;
    for (int k = 0; k < r->twins; k++) {
        if (r->twin[k].equality == TECHNIQUE_BITWISE)
            differing += r->error[k];
        else
            worst_fp = fmax(worst_fp, r->error[k]);
    }
    if (differing > 0)
        snprintf(text, size, "%.0f diff", differing);
    else if (worst_fp < 0)
        snprintf(text, size, "bitwise");
    else
        snprintf(text, size, "%.1e", worst_fp);
}

/* The last column of an untimed row (and the detail line of a wrong one): each twin's verdict
 * against its tolerance. */
static void check_column(const engine_result *r, char *text, size_t size)
{
    size_t used = 0;
    for (int k = 0; k < r->twins && used < size; k++) {
        const technique_twin *w = &r->twin[k];
        const char *separator = k ? "; " : "";
        if (w->equality == TECHNIQUE_BITWISE && r->error[k] == 0)
            used += (size_t)snprintf(text + used, size - used, "%s%s: bitwise equal", separator, w->name);
        else if (w->equality == TECHNIQUE_BITWISE)
            used += (size_t)snprintf(text + used, size - used, "%s%s: %.0f values differ (bitwise expected), first at "
                                     "step %lld", separator, w->name, r->error[k], (long long)r->worst_step[k]);
        else if (twin_is_amplified(r, k))
            used += (size_t)snprintf(text + used, size - used, "%s%s: %.1e > %.0e, %.3g units of float32's rounding; "
                                     "bitwise the reference on the reference's kernels", separator, w->name,
                                     r->error[k], w->tolerance, r->error[k] / ROUNDING_UNIT);
        else if (twin_is_incomparable(r, k))
            used += isinf(r->spread) ? (size_t)snprintf(text + used, size - used, "%s%s: %.1e, not comparable (the "
                                                        "reference diverges)", separator, w->name, r->error[k])
                                     : (size_t)snprintf(text + used, size - used, "%s%s: %.1e, not comparable (the "
                                                        "reference's own spread %.1e > %.0e)", separator, w->name,
                                                        r->error[k], r->spread, w->tolerance);
        else if (!twin_is_wrong(r, k))
            used += (size_t)snprintf(text + used, size - used, "%s%s: ok %.1e <= %.0e", separator, w->name,
                                     r->error[k], w->tolerance);
        else if (r->reordered[k] && r->spread > w->tolerance) /* past the spread's order too */
            used += (size_t)snprintf(text + used, size - used, "%s%s: WRONG %.1e > %.0e, and > %dx the reference's own "
                                     "spread %.1e, worst at step %lld", separator, w->name, r->error[k], w->tolerance,
                                     SPREAD_MARGIN, r->spread, (long long)r->worst_step[k]);
        else
            used += (size_t)snprintf(text + used, size - used, "%s%s: WRONG %.1e > %.0e, worst at step %lld", separator,
                                     w->name, r->error[k], w->tolerance, (long long)r->worst_step[k]);
    }
    if (used < size)
        snprintf(text + used, size - used, " over %lld step(s)", (long long)r->steps);
}

void engine_print_row(FILE *out, const technique *t, int variant, const char *data_label, const engine_result *r)
{
    char title[64], error[32], last[512];
    if (t->variants[1])
        snprintf(title, sizeof title, "%s %s", t->title, t->variants[variant]);
    else
        snprintf(title, sizeof title, "%s", t->title);
    if (r->skipped) {
        fprintf(out, ROW_FORMAT, t->chapter, title, data_label, "-", r->reason);
        return;
    }
    error_column(r, error, sizeof error);
    if (r->wrong) { /* WRONG, and on a line of its own each twin's verdict: never a speed */
        check_column(r, last, sizeof last);
        fprintf(out, ROW_FORMAT, t->chapter, title, data_label, error, "WRONG: not equal to the reference");
        fprintf(out, ROW_FORMAT, "", "", "", "", last);
        return;
    }
    if (r->incomparable) { /* neither ok nor WRONG: the reference's spread and each twin's verdict */
        check_column(r, last, sizeof last);
        char why[TF_ERROR_MESSAGE_SIZE + 64];
        if (r->diverged[0])
            snprintf(why, sizeof why, "not comparable: %s", r->diverged);
        else if (isinf(r->spread))
            snprintf(why, sizeof why, "not comparable: the reference's training diverges (its loss grows more than "
                     "1e6-fold or is not finite)");
        else
            snprintf(why, sizeof why, "not comparable: a one-ulp change of the reference's inputs moves it by %.1e",
                     r->spread);
        fprintf(out, ROW_FORMAT, t->chapter, title, data_label, error, why);
        fprintf(out, ROW_FORMAT, "", "", "", "", last);
        return;
    }
    if (r->amplified) { /* neither ok nor WRONG: the twin's logic is proven, and its error grown by the data */
        check_column(r, last, sizeof last);
        char why[160];
        double worst = 0;
        for (int k = 0; k < r->twins; k++)
            worst = twin_is_amplified(r, k) ? fmax(worst, r->error[k]) : worst;
        if (isfinite(worst))
            snprintf(why, sizeof why, "equal logic, rounding amplified %.3gx by the data", worst / ROUNDING_UNIT);
        else
            snprintf(why, sizeof why, "equal logic, rounding amplified without bound by the data (values not finite)");
        fprintf(out, ROW_FORMAT, t->chapter, title, data_label, error, why);
        fprintf(out, ROW_FORMAT, "", "", "", "", last);
        return;
    }
    if (r->seconds[0] == 0) /* untimed: the verdicts */
        check_column(r, last, sizeof last);
    else if (r->note[0])
        snprintf(last, sizeof last, "%s", r->note);
    else
        snprintf(last, sizeof last, "%.1fx ref", r->seconds[0] / r->seconds[1]);
    fprintf(out, ROW_FORMAT, t->chapter, title, data_label, error, last);
}

/* The work rates of a timed row, on a line of its own under it (the bench program's). */
static void print_rates(FILE *out, const engine_result *r)
{
    if (!r->wrong && r->work > 0 && r->seconds[1] > 0)
        fprintf(out, "      work %.4g %s: ref %.3g %s/s, %s %.3g %s/s\n", r->work, r->work_unit, r->work / r->seconds[0],
                r->work_unit, r->twin[0].name, r->work / r->seconds[1], r->work_unit);
}

/* The data of @p row into @p d, unless @p d already holds it (*held: the spec @p d was loaded
 * from, NULL when @p d holds nothing): consecutive rows on the same data share one load. */
static int row_data(const engine_row *row, dataset *d, const char **held, tf_error *err)
{
    if (*held && strcmp(*held, row->data) == 0)
        return TF_OK;
    if (*held)
        dataset_free(d);
    *held = NULL;
    if (dataset_load(row->data, NULL, d, err) != TF_OK)
        return err->code;
    *held = row->data;
    return TF_OK;
}

int engine_run_rows(const engine_row *rows, int count, const engine_options *options, engine_tally *tally,
                    tf_error *err)
{
    const int printing = speaks(options->group);
    memset(tally, 0, sizeof *tally);
    if (printing)
        print_header(stdout, options->timed);
    dataset loaded;
    const char *held = NULL; /* the spec `loaded` holds */
    int status = TF_OK;
    for (int k = 0; status == TF_OK && k < count; k++) {
        const engine_row *row = &rows[k];
        if (!takes_part(row->technique, options->group))
            continue; /* rank 0 runs it alone: nothing to load here */
        if (!row->loaded && (status = row_data(row, &loaded, &held, err)) != TF_OK)
            break;
        engine_options row_options = *options;
        row_options.corrupt = row->corrupt;
        engine_result r;
        status = engine_run(row->technique, row->loaded ? row->loaded : &loaded, NULL, row->variant, &row_options,
                            &r, err);
        if (status == TECHNIQUE_SKIP)
            status = TF_OK;
        if (status != TF_OK || !printing)
            continue;
        engine_print_row(stdout, row->technique, row->variant, row->label, &r);
        if (options->rates)
            print_rates(stdout, &r);
        fflush(stdout);
        tally->rows++;
        tally->skipped += r.skipped;
        tally->wrong += r.wrong != 0;
        tally->amplified += r.wrong == 0 && r.incomparable == 0 && r.amplified != 0;
        tally->incomparable += r.wrong == 0 && r.incomparable != 0;
    }
    if (held)
        dataset_free(&loaded);
    char counts[256] = "";
    if (tally->amplified)
        snprintf(counts, sizeof counts, ", %d equal in logic (the data amplifies the kernels' rounding beyond the "
                 "tolerance)", tally->amplified);
    if (tally->incomparable)
        snprintf(counts + strlen(counts), sizeof counts - strlen(counts), ", %d not comparable (the data amplifies "
                 "rounding beyond the tolerance, or drives the reference beyond float's range)", tally->incomparable);
    if (status == TF_OK && printing)
        fprintf(stdout, "# %d row(s), %d skipped (the technique does not apply to the data)%s, #wrong %d\n",
                tally->rows, tally->skipped, counts, tally->wrong);
    return status;
}
