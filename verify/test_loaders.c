/* Loaders against independent oracles.
 *
 * Snapshot datasets: golden files written by PyTorch Geometric Temporal's own loaders
 * (verify/golden/make_loader_golden.py). Event files and the T-GCN pair: golden files from a
 * plain-Python reading of the same bundled files. Every comparison prints what it measured. */
#include <math.h>

#include "datasets/dataset.h"
#include "ref/core/io.h"
#include "ref/data/loaders.h"
#include "ref/data/npy.h"
#include "verify/testing.h"

/* Reads verify/golden/loaders/PREFIX_NAME.npy. */
static void golden(const char *prefix, const char *name, npy_array *out)
{
    char relative[256];
    snprintf(relative, sizeof relative, "verify/golden/loaders/%s_%s.npy", prefix, name);
    tf_error err;
    ck_assert_msg(npy_read(source_path(relative), out, &err) == TF_OK, "%s", err.message);
}

/* Loads a bundled dataset; whatever a test checks next, the data must pass its validator. */
static void load_bundled(const char *name, dataset *d)
{
    load_or_fail(name, d);
    tf_error err;
    int valid = d->kind == DATASET_SNAPSHOTS ? snapshot_seq_validate(&d->snapshots, name, &err)
                                             : event_stream_validate(&d->events, name, &err);
    ck_assert_msg(valid == TF_OK, "%s", err.message);
}

/* Largest |ours - golden| / max(1, |golden|) over n floats. */
static double max_relative_error(const float *ours, const float *golden_values, int64_t n)
{
    double worst = 0;
    for (int64_t i = 0; i < n; i++) {
        double scale = fabs(golden_values[i]) > 1 ? fabs(golden_values[i]) : 1;
        double error = fabs((double)ours[i] - (double)golden_values[i]) / scale;
        if (error > worst || isnan(error))
            worst = isnan(error) ? INFINITY : error;
    }
    return worst;
}

/* Every target of a dataset small enough to keep all of them in a golden file (NAME_targets.npy). */
static void check_all_targets(const char *name, const snapshot_seq *s)
{
    npy_array targets;
    golden(name, "targets", &targets);
    ck_assert_int_eq(targets.shape[0], s->num_snapshots);
    double worst = 0;
    for (int64_t t = 0; t < s->num_snapshots; t++) {
        double e = max_relative_error(s->snapshots[t].targets.data, (const float *)targets.data + t * s->num_nodes,
                                      s->num_nodes);
        worst = e > worst ? e : worst;
    }
    printf("%s: all %lld x %lld targets: max relative error %.3g\n", name, (long long)s->num_snapshots,
           (long long)s->num_nodes, worst);
    ck_assert(worst <= 1e-6);
    npy_free(&targets);
}

/* Compares one PyTorch Geometric Temporal dataset, loaded into @p d (the caller frees it), with its
 * golden files. Features and targets must be bitwise equal (both sides compute in double and round
 * once to float32) except where stated; edges equal as sets with the same weights; with
 * @p all_targets every target too (check_all_targets()). */
static void check_against_pygt(const char *name, int all_targets, dataset *d)
{
    load_bundled(name, d);
    const snapshot_seq *s = &d->snapshots;
    npy_array counts, head, last, targets_head, edges, weights, sums;
    golden(name, "edge_counts", &counts);
    golden(name, "features_head", &head);
    golden(name, "features_last", &last);
    golden(name, "targets_head", &targets_head);
    golden(name, "edges_first", &edges);
    golden(name, "weights_first", &weights);
    golden(name, "feature_sums", &sums);

    /* Snapshot count and edges per snapshot. */
    ck_assert_int_eq(counts.size, s->num_snapshots);
    int64_t count_mismatches = 0;
    for (int64_t t = 0; t < s->num_snapshots; t++)
        count_mismatches += ((int64_t *)counts.data)[t] != s->snapshots[t].graph.num_edges;
    printf("%s: %lld snapshots, edge counts per snapshot: %lld mismatches\n", name, (long long)s->num_snapshots,
           (long long)count_mismatches);
    ck_assert_int_eq(count_mismatches, 0);

    /* First three snapshots' features and targets, and the last snapshot's features. */
    int64_t n = s->num_nodes, f = s->feature_width;
    ck_assert_int_eq(head.shape[1], n);
    ck_assert_int_eq(head.shape[2], f);
    int64_t bit_differences = 0;
    double worst = 0;
    for (int t = 0; t < 3; t++) {
        const float *expected = (const float *)head.data + t * n * f;
        bit_differences += memcmp(expected, s->snapshots[t].features.data, (size_t)(n * f) * 4) != 0;
        double e = max_relative_error(s->snapshots[t].features.data, expected, n * f);
        worst = e > worst ? e : worst;
        const float *expected_targets = (const float *)targets_head.data + t * n;
        bit_differences += memcmp(expected_targets, s->snapshots[t].targets.data, (size_t)n * 4) != 0;
        e = max_relative_error(s->snapshots[t].targets.data, expected_targets, n);
        worst = e > worst ? e : worst;
    }
    const snapshot *final = &s->snapshots[s->num_snapshots - 1];
    bit_differences += memcmp(last.data, final->features.data, (size_t)(n * f) * 4) != 0;
    double e = max_relative_error(final->features.data, last.data, n * f);
    worst = e > worst ? e : worst;
    printf("%s: features/targets of snapshots 0-2 and last: max relative error %.3g, %lld arrays not bitwise equal\n",
           name, worst, (long long)bit_differences);
    ck_assert_msg(worst <= 1e-6, "features differ from PyTorch Geometric Temporal by %g", worst);

    /* Every snapshot's feature sum (catches an error in any snapshot, not only the ones above). */
    double worst_sum = 0;
    for (int64_t t = 0; t < s->num_snapshots; t++) {
        double sum = 0;
        for (int64_t i = 0; i < n * f; i++)
            sum += s->snapshots[t].features.data[i];
        float ours = (float)sum;
        double err_sum = max_relative_error(&ours, (const float *)sums.data + t, 1);
        worst_sum = err_sum > worst_sum ? err_sum : worst_sum;
    }
    printf("%s: per-snapshot feature sums: max relative error %.3g\n", name, worst_sum);
    ck_assert(worst_sum <= 1e-6);

    /* Snapshot 0's edges: build a CSR from the library's edge_index and compare bitwise. */
    int64_t num_edges = edges.shape[1];
    int32_t *src = malloc((size_t)num_edges * 4), *dst = malloc((size_t)num_edges * 4);
    for (int64_t k = 0; k < num_edges; k++) {
        src[k] = (int32_t)((int64_t *)edges.data)[k];
        dst[k] = (int32_t)((int64_t *)edges.data)[num_edges + k];
    }
    csr expected_graph;
    tf_error err;
    ck_assert(csr_from_edges(&expected_graph, n, num_edges, src, dst, weights.data, &err) == TF_OK);
    int same = csr_equal(&expected_graph, &s->snapshots[0].graph);
    printf("%s: snapshot 0 graph (%lld edges) %s the library's edge_index and edge_weight\n", name,
           (long long)num_edges, same ? "equals" : "DIFFERS FROM");
    ck_assert(same);
    csr_free(&expected_graph);
    free(src);
    free(dst);
    npy_free(&counts);
    npy_free(&head);
    npy_free(&last);
    npy_free(&targets_head);
    npy_free(&edges);
    npy_free(&weights);
    npy_free(&sums);
    if (all_targets)
        check_all_targets(name, s);
}

/* check_against_pygt() of @p name with every target (or, for montevideo_bus, whose targets are too
 * many for a golden file, without); loads it once. */
static void check_bundled_against_pygt(const char *name, int all_targets)
{
    dataset d;
    check_against_pygt(name, all_targets, &d);
    dataset_free(&d);
}

START_TEST(chickenpox_matches_pygt)
{
    dataset d;
    check_against_pygt("chickenpox", 1, &d);
    /* The first lagged feature row read straight from the raw FX series: vertex 0 of
     * snapshot 0 holds FX[0..3][0]; the target is FX[4][0]. */
    text raw;
    tf_error err;
    ck_assert(text_read_file(source_path("datasets/chickenpox.json.gz"), &raw, &err) == TF_OK);
    const char *fx = strstr(raw.data, "\"FX\": [[");
    ck_assert_ptr_nonnull(fx);
    fx += strlen("\"FX\": [");
    float first_column[5];
    for (int week = 0; week < 5; week++) {
        first_column[week] = strtof(fx + 1, NULL); /* the number after '[' */
        fx = strstr(fx + 1, "], [") + 3;
    }
    const snapshot *s0 = &d.snapshots.snapshots[0];
    printf("chickenpox: vertex 0, snapshot 0: features %g %g %g %g target %g; raw FX[0..4][0] %g %g %g %g %g\n",
           s0->features.data[0], s0->features.data[1], s0->features.data[2], s0->features.data[3], s0->targets.data[0],
           first_column[0], first_column[1], first_column[2], first_column[3], first_column[4]);
    for (int k = 0; k < 4; k++)
        ck_assert_float_eq(s0->features.data[k], first_column[k]);
    ck_assert_float_eq(s0->targets.data[0], first_column[4]);
    text_free(&raw);
    dataset_free(&d);
}
END_TEST

START_TEST(pedalme_matches_pygt) { check_bundled_against_pygt("pedalme", 1); }
END_TEST

START_TEST(england_covid_matches_pygt) { check_bundled_against_pygt("england_covid", 1); }
END_TEST

START_TEST(twitter_tennis_matches_pygt) { check_bundled_against_pygt("twitter_tennis", 1); }
END_TEST

START_TEST(montevideo_bus_matches_pygt) { check_bundled_against_pygt("montevideo_bus", 0); }
END_TEST

START_TEST(los_matches_numpy)
{
    dataset d;
    load_bundled("los", &d);
    npy_array head, targets_head, summary;
    golden("los", "features_head", &head);
    golden("los", "targets_head", &targets_head);
    golden("los", "summary", &summary);
    const snapshot_seq *s = &d.snapshots;
    const int64_t *expected = summary.data;
    printf("los: %lld snapshots (expected %lld), %lld vertices (%lld), %lld edges (%lld)\n",
           (long long)s->num_snapshots, (long long)expected[0], (long long)s->num_nodes, (long long)expected[1],
           (long long)s->snapshots[0].graph.num_edges, (long long)expected[2]);
    ck_assert_int_eq(s->num_snapshots, expected[0]);
    ck_assert_int_eq(s->num_nodes, expected[1]);
    ck_assert_int_eq(s->snapshots[0].graph.num_edges, expected[2]);
    double worst = 0;
    int64_t n = s->num_nodes, f = s->feature_width;
    for (int t = 0; t < 3; t++) {
        double e = max_relative_error(s->snapshots[t].features.data, (const float *)head.data + t * n * f, n * f);
        worst = e > worst ? e : worst;
        e = max_relative_error(s->snapshots[t].targets.data, (const float *)targets_head.data + t * n, n);
        worst = e > worst ? e : worst;
    }
    printf("los: features/targets of snapshots 0-2: max relative error %.3g\n", worst);
    ck_assert(worst <= 1e-6);
    npy_free(&head);
    npy_free(&targets_head);
    npy_free(&summary);
    dataset_free(&d);
}
END_TEST

/* Compares one bundled event file with its golden files; leaves the events in @p kept if not NULL
 * (the caller frees them), else frees them. */
static void check_events(const char *name, dataset *kept)
{
    dataset d;
    load_bundled(name, &d);
    const event_stream *e = &d.events;
    npy_array summary, head, times;
    golden(name, "summary", &summary);
    golden(name, "head", &head);
    golden(name, "times", &times);
    const int64_t *expected = summary.data;
    int64_t active = event_stream_active_nodes(e), pairs = event_stream_distinct_pairs(e);
    printf("%s: %lld events (expected %lld), %lld active vertices (%lld), %lld pairs (%lld), id space %lld (%lld)\n",
           name, (long long)e->num_events, (long long)expected[0], (long long)active, (long long)expected[1],
           (long long)pairs, (long long)expected[2], (long long)e->num_nodes, (long long)expected[3]);
    ck_assert_int_eq(e->num_events, expected[0]);
    ck_assert_int_eq(active, expected[1]);
    ck_assert_int_eq(pairs, expected[2]);
    ck_assert_int_eq(e->num_nodes, expected[3]);
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(e->src[i], ((int64_t *)head.data)[i]);
        ck_assert_int_eq(e->dst[i], ((int64_t *)head.data)[5 + i]);
    }
    const float *t = times.data;
    ck_assert_float_eq((float)e->time[0], t[0]);
    ck_assert_float_eq((float)e->time[1], t[1]);
    ck_assert_float_eq((float)e->time[e->num_events - 1], t[2]);
    tf_error err;
    ck_assert_msg(event_stream_validate(e, name, &err) == TF_OK, "%s", err.message);
    npy_free(&summary);
    npy_free(&head);
    npy_free(&times);
    if (kept)
        *kept = d;
    else
        dataset_free(&d);
}

START_TEST(event_files_match_python)
{
    dataset d;
    check_events("wikipedia", NULL);
    check_events("collegemsg", NULL);
    check_events("enron", NULL);
    check_events("bitcoin_otc", &d);
    check_events("bitcoin_alpha", NULL);
    /* bitcoin_otc's rating column becomes a one-column edge feature. */
    ck_assert_int_eq(d.events.feature_width, 1);
    printf("bitcoin_otc: first rating %g (file: 4)\n", d.events.features[0]);
    ck_assert_float_eq(d.events.features[0], 4.0f);
    dataset_free(&d);
}
END_TEST

/* The same content plain and gzipped loads to bit-identical data. */
START_TEST(gzip_is_transparent)
{
    text content;
    tf_error err;
    ck_assert(text_read_file(source_path("datasets/pedalme_london.json.gz"), &content, &err) == TF_OK);
    const char *plain = write_temporary("pedalme_plain.json", content.data, content.size);
    dataset from_gzip, from_plain;
    load_or_fail(source_path("datasets/pedalme_london.json.gz"), &from_gzip);
    load_or_fail(plain, &from_plain);
    int same = snapshot_seq_equal(&from_gzip.snapshots, &from_plain.snapshots);
    printf("pedalme: %zu bytes decompressed; plain and gzip loads %s\n", content.size, same ? "identical" : "DIFFER");
    ck_assert(same);
    text_free(&content);
    dataset_free(&from_gzip);
    dataset_free(&from_plain);
}
END_TEST

/* --lags changes the lagged formats the way the library's get_dataset(lags=) does. */
START_TEST(lags_option)
{
    dataset_options options = {8, NULL, NULL, NULL, NULL};
    dataset d;
    tf_error err;
    ck_assert(dataset_load("chickenpox", &options, &d, &err) == TF_OK);
    printf("chickenpox with 8 lags: %lld snapshots x %lld features (521 weeks - 8)\n",
           (long long)d.snapshots.num_snapshots, (long long)d.snapshots.feature_width);
    ck_assert_int_eq(d.snapshots.num_snapshots, 521 - 8);
    ck_assert_int_eq(d.snapshots.feature_width, 8);
    /* Snapshot 1's lag k equals snapshot 0's lag k+1: the window slides by one week. */
    for (int64_t v = 0; v < d.snapshots.num_nodes; v++)
        for (int k = 0; k < 7; k++)
            ck_assert_float_eq(d.snapshots.snapshots[1].features.data[v * 8 + k],
                               d.snapshots.snapshots[0].features.data[v * 8 + k + 1]);
    dataset_free(&d);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("loaders");
    TCase *pygt = tcase_create("pytorch_geometric_temporal");
    tcase_set_timeout(pygt, 120);
    tcase_add_test(pygt, chickenpox_matches_pygt);
    tcase_add_test(pygt, pedalme_matches_pygt);
    tcase_add_test(pygt, england_covid_matches_pygt);
    tcase_add_test(pygt, twitter_tennis_matches_pygt);
    tcase_add_test(pygt, montevideo_bus_matches_pygt);
    tcase_add_test(pygt, lags_option);
    suite_add_tcase(suite, pygt);
    TCase *other = tcase_create("other_formats");
    tcase_set_timeout(other, 120);
    tcase_add_test(other, los_matches_numpy);
    tcase_add_test(other, event_files_match_python);
    tcase_add_test(other, gzip_is_transparent);
    suite_add_tcase(suite, other);
    return run_suite(suite);
}
