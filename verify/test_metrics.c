/* Average precision and ROC AUC against values worked out by hand, ties included. */
#include <math.h>

#include "ref/nn/metrics.h"
#include "verify/testing.h"

static void metrics_of(const float *scores, const uint8_t *labels, int64_t n, double *ap, double *auc)
{
    tf_error err;
    ck_assert_msg(ref_average_precision(scores, labels, n, ap, &err) == TF_OK, "%s", err.message);
    ck_assert_msg(ref_roc_auc(scores, labels, n, auc, &err) == TF_OK, "%s", err.message);
}

static void expect(const char *what, const float *scores, const uint8_t *labels, int64_t n, double ap_expected,
                   double auc_expected)
{
    double ap, auc;
    metrics_of(scores, labels, n, &ap, &auc);
    printf("%-44s AP %.6f (by hand %.6f)  AUC %.6f (by hand %.6f)\n", what, ap, ap_expected, auc, auc_expected);
    ck_assert(fabs(ap - ap_expected) < 1e-12);
    ck_assert(fabs(auc - auc_expected) < 1e-12);
}

START_TEST(crafted_rankings)
{
    /* Scores 0.9 (+), 0.8 (-), 0.7 (+), 0.6 (-). Thresholds from the top:
     *   0.9: TP 1, FP 0 -> precision 1,   recall 1/2
     *   0.8: TP 1, FP 1 -> precision 1/2, recall 1/2 (recall unchanged: adds nothing)
     *   0.7: TP 2, FP 1 -> precision 2/3, recall 1
     * AP = 1/2 * 1 + 1/2 * 2/3 = 5/6. AUC: pairs (0.9, 0.8) (0.9, 0.6) (0.7, 0.6) right,
     * (0.7, 0.8) wrong: 3/4. */
    const float scores[] = {0.6f, 0.9f, 0.7f, 0.8f}; /* given in another order than ranked */
    const uint8_t labels[] = {0, 1, 1, 0};
    expect("two positives, two negatives, interleaved", scores, labels, 4, 5.0 / 6.0, 0.75);

    /* Ties. 0.5 (+), 0.5 (-), 0.2 (+): the first threshold takes both 0.5s at once:
     *   0.5: TP 1, FP 1 -> precision 1/2, recall 1/2
     *   0.2: TP 2, FP 1 -> precision 2/3, recall 1
     * AP = 1/2 * 1/2 + 1/2 * 2/3 = 7/12. AUC: (0.5+, 0.5-) a tie, 1/2; (0.2+, 0.5-) wrong:
     * 1/2 of 2 pairs = 1/4. Whichever of the tied items comes first must not matter. */
    const float tied[] = {0.5f, 0.5f, 0.2f};
    const uint8_t tied_labels[] = {1, 0, 1}, tied_swapped[] = {0, 1, 1};
    expect("tie between a positive and a negative", tied, tied_labels, 3, 7.0 / 12.0, 0.25);
    expect("same, tied items in the other order", tied, tied_swapped, 3, 7.0 / 12.0, 0.25);

    /* Everything tied: one threshold, precision = P / n = 2/5 at recall 1; AUC one half. */
    const float flat[] = {1, 1, 1, 1, 1};
    const uint8_t flat_labels[] = {1, 0, 0, 1, 0};
    expect("all scores equal", flat, flat_labels, 5, 0.4, 0.5);

    /* Perfect and reversed rankings. Reversed: 0.1 (+) and 0.2 (+) below 0.3, 0.4 (-):
     * thresholds 0.4 (P 0), 0.3 (P 0), 0.2: TP 1, FP 2 -> 1/3 at recall 1/2; 0.1: 2/4 at recall 1.
     * AP = 1/2 * 1/3 + 1/2 * 1/2 = 5/12, AUC 0. */
    const float ranked[] = {0.4f, 0.3f, 0.2f, 0.1f};
    const uint8_t perfect[] = {1, 1, 0, 0}, reversed[] = {0, 0, 1, 1};
    expect("perfect ranking", ranked, perfect, 4, 1.0, 1.0);
    expect("reversed ranking", ranked, reversed, 4, 5.0 / 12.0, 0.0);
}
END_TEST

START_TEST(undefined_and_bad_input)
{
    const float scores[] = {0.3f, 0.1f};
    const uint8_t positives[] = {1, 1}, negatives[] = {0, 0};
    double ap_all_positive, auc_all_positive, ap, auc;
    metrics_of(scores, positives, 2, &ap_all_positive, &auc_all_positive);
    ck_assert(ap_all_positive == 1.0 && isnan(auc_all_positive)); /* no negative: AUC undefined */
    metrics_of(scores, negatives, 2, &ap, &auc);
    ck_assert(isnan(ap) && isnan(auc)); /* no positive: both undefined */
    printf("no negatives: AP %g AUC %g; no positives: AP %g AUC %g\n", ap_all_positive, auc_all_positive, ap, auc);
    const float diverged[] = {0.3f, NAN};
    tf_error err;
    EXPECT_INPUT_ERROR(ref_average_precision(diverged, positives, 2, &ap, &err), &err, "score 1 is nan", "finite");
    EXPECT_INPUT_ERROR(ref_roc_auc(diverged, positives, 2, &auc, &err), &err, "score 1 is nan");
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("metrics");
    TCase *cases = tcase_create("metrics");
    tcase_add_test(cases, crafted_rankings);
    tcase_add_test(cases, undefined_and_bad_input);
    suite_add_tcase(suite, cases);
    return run_suite(suite);
}
