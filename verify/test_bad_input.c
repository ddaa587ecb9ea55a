/* Bad input: every case gives TF_ERR_INPUT (exit code 2 on the command line) and one line
 * naming the file, the line or JSON path, and what was expected. Valgrind runs this suite in
 * CI, so an error path that leaks or reads out of bounds fails there. */
#include <sys/stat.h>
#include <zlib.h>

#include "datasets/dataset.h"
#include "ref/data/loaders.h"
#include "ref/core/memory.h"
#include "verify/testing.h"

/* Parse `content` as PyTorch Geometric Temporal JSON named `source`. */
static int parse_json(const char *content, const char *source, tf_error *err)
{
    text t;
    ck_assert(text_from_bytes(content, strlen(content), &t, err) == TF_OK);
    snapshot_seq s;
    int status = load_pygt_json(&t, source, 0, &s, NULL, err);
    if (status == TF_OK)
        snapshot_seq_free(&s);
    text_free(&t);
    return status;
}

/* Labels for 3 snapshots of 4 vertices, vertex 3 absent at snapshot 2; checks that a refused file
 * leaves no labels behind and an accepted one has as many classes as its largest + 1. */
static int parse_labels(const char *content, tf_error *err)
{
    text t;
    ck_assert(text_from_bytes(content, strlen(content), &t, err) == TF_OK);
    snapshot_seq s;
    ck_assert(snapshot_seq_alloc(&s, 3, 4, 1, 1, err) == TF_OK);
    s.snapshots[2].present[3] = 0;
    int status = load_snapshot_labels(&t, "labels.txt", &s, err);
    ck_assert(status == TF_OK ? s.num_classes >= 2 && s.snapshots[0].labels != NULL
                              : s.num_classes == 0 && s.snapshots[0].labels == NULL);
    if (status == TF_OK)
        ck_assert_int_eq(snapshot_seq_validate(&s, "labels.txt", err), TF_OK);
    snapshot_seq_free(&s);
    text_free(&t);
    return status;
}

static int parse_events_text(const char *content, tf_error *err)
{
    text t;
    ck_assert(text_from_bytes(content, strlen(content), &t, err) == TF_OK);
    event_stream e;
    int status = load_events_text(&t, "events.txt", &e, err);
    if (status == TF_OK)
        event_stream_free(&e);
    text_free(&t);
    return status;
}

static int parse_events_csv(const char *content, tf_error *err)
{
    text t;
    ck_assert(text_from_bytes(content, strlen(content), &t, err) == TF_OK);
    event_stream e;
    int status = load_events_csv(&t, "events.csv", &e, err);
    if (status == TF_OK)
        event_stream_free(&e);
    text_free(&t);
    return status;
}

static int parse_tgcn(const char *speed, const char *adjacency, tf_error *err)
{
    text s, a;
    ck_assert(text_from_bytes(speed, strlen(speed), &s, err) == TF_OK);
    ck_assert(text_from_bytes(adjacency, strlen(adjacency), &a, err) == TF_OK);
    snapshot_seq seq;
    int status = load_tgcn_csv(&s, "x_speed.csv", &a, "x_adj.csv", 2, &seq, err);
    if (status == TF_OK)
        snapshot_seq_free(&seq);
    text_free(&s);
    text_free(&a);
    return status;
}

/* A small valid chickenpox-layout file: 3 vertices, 6 weeks. */
#define CHICKENPOX_OK                                                                                           \
    "{\"edges\": [[0, 1], [1, 2], [2, 0]],\n"                                                                     \
    " \"FX\": [[1, 2, 3], [4, 5, 6], [7, 8, 9], [1, 1, 1], [2, 2, 2], [3, 3, 3]]}\n"

START_TEST(valid_baseline_parses)
{
    /* The mutations below start from this file; make sure it is itself accepted. */
    tf_error err;
    ck_assert_msg(parse_json(CHICKENPOX_OK, "ok.json", &err) == TF_OK, "%s", err.message);
    ck_assert_msg(parse_events_text("1 2 0\n2 3 1\n", &err) == TF_OK, "%s", err.message);
    ck_assert_msg(parse_events_csv("from,to,feature,time\n1,2,3,0\n", &err) == TF_OK, "%s", err.message);
    ck_assert_msg(parse_tgcn("a,b\n1,2\n3,4\n5,6\n", "0,1\n1,0\n", &err) == TF_OK, "%s", err.message);
    printf("baselines parse\n");
}
END_TEST

START_TEST(truncated_json)
{
    tf_error err;
    char truncated[sizeof CHICKENPOX_OK];
    memcpy(truncated, CHICKENPOX_OK, sizeof CHICKENPOX_OK);
    truncated[60] = '\0'; /* cut inside the second line */
    EXPECT_INPUT_ERROR(parse_json(truncated, "cut.json", &err), &err, "cut.json:2:", "truncated JSON");
}
END_TEST

START_TEST(malformed_json)
{
    tf_error err;
    EXPECT_INPUT_ERROR(parse_json("{\"edges\": [[0, 1]],\n\n \"FX\": [[1, 2]] \"x\"}", "bad.json", &err), &err,
                       "bad.json:3:", "malformed JSON");
    EXPECT_INPUT_ERROR(parse_json("[1, 2, 3]", "array.json", &err), &err, "array.json", "$", "expected an object");
    EXPECT_INPUT_ERROR(parse_json("{\"nothing\": 1}", "unknown.json", &err), &err, "unknown.json",
                       "no known PyTorch Geometric Temporal layout");
    EXPECT_INPUT_ERROR(parse_json(CHICKENPOX_OK "}", "trailing.json", &err), &err, "trailing.json:3:",
                       "after the JSON value");
}
END_TEST

START_TEST(wrong_types)
{
    tf_error err;
    EXPECT_INPUT_ERROR(parse_json("{\"edges\": [[0, 1]], \"FX\": [[1, \"two\"], [3, 4], [5, 6], [7, 8], [9, 10]]}",
                                  "types.json", &err),
                       &err, "types.json", "$.FX[0][1]", "expected a number, found a string");
    EXPECT_INPUT_ERROR(parse_json("{\"edges\": {\"a\": 1}, \"FX\": [[1], [2], [3], [4], [5]]}", "edges.json", &err),
                       &err, "edges.json", "$.edges", "expected an array, found an object");
    EXPECT_INPUT_ERROR(parse_json("{\"time_periods\": \"many\"}", "tennis.json", &err), &err, "tennis.json",
                       "$.time_periods", "expected a number");
    EXPECT_INPUT_ERROR(parse_json("{\"edges\": [[0, 1.5]], \"FX\": [[1, 2], [3, 4], [5, 6], [7, 8], [9, 10]]}",
                                  "fraction.json", &err),
                       &err, "fraction.json", "$.edges[0][1]", "expected an integer");
    EXPECT_INPUT_ERROR(parse_events_text("1 2 0\n2 x 1\n", &err), &err, "events.txt:2:", "field 2", "integer vertex id");
    EXPECT_INPUT_ERROR(parse_events_csv("from,to,feature,time\n1,2,3,0\n1,2,good,1\n", &err), &err, "events.csv:3:",
                       "field 3", "expected a number");
}
END_TEST

START_TEST(ragged_rows)
{
    tf_error err;
    EXPECT_INPUT_ERROR(parse_json("{\"edges\": [[0, 1]], \"FX\": [[1, 2], [3, 4], [5], [7, 8], [9, 10]]}",
                                  "ragged.json", &err),
                       &err, "ragged.json", "$.FX[2]", "ragged rows: 1 numbers, expected 2");
    EXPECT_INPUT_ERROR(parse_json("{\"edges\": [[0, 1, 2]], \"FX\": [[1, 2], [3, 4], [5, 6], [7, 8], [9, 10]]}",
                                  "edge.json", &err),
                       &err, "edge.json", "$.edges[0]", "expected an edge [source, target]");
    EXPECT_INPUT_ERROR(parse_events_text("1 2 0\n2 3 1 7\n", &err), &err, "events.txt:2:", "4 fields, expected 3");
    EXPECT_INPUT_ERROR(parse_events_csv("from,to,time\n1,2,0\n1,2\n", &err), &err, "events.csv:3:",
                       "2 fields, expected 3");
    EXPECT_INPUT_ERROR(parse_tgcn("a,b\n1,2\n3\n5,6\n", "0,1\n1,0\n", &err), &err, "x_speed.csv:3:",
                       "1 fields, expected 2");
    EXPECT_INPUT_ERROR(parse_tgcn("a,b\n1,2\n3,4\n5,6\n", "0,1\n", &err), &err, "x_adj.csv", "1 rows, expected 2");
    EXPECT_INPUT_ERROR(
        parse_json("{\"edges\": [[0, 1]], \"weights\": [1, 2], \"X\": [[1, 2], [3, 4], [5, 6], [7, 8], [9, 10]]}",
                   "weights.json", &err),
        &err, "weights.json", "$.weights", "2 weights, expected one per edge (1)");
}
END_TEST

START_TEST(ids_out_of_range)
{
    tf_error err;
    EXPECT_INPUT_ERROR(parse_json("{\"edges\": [[0, 5]], \"FX\": [[1, 2], [3, 4], [5, 6], [7, 8], [9, 10]]}",
                                  "range.json", &err),
                       &err, "range.json", "$.edges[0][1]", "vertex id 5 out of range", "0..1");
    EXPECT_INPUT_ERROR(parse_events_text("1 2 0\n-3 2 1\n", &err), &err, "events.txt:2:", "vertex id -3 out of range");
    EXPECT_INPUT_ERROR(parse_events_text("1 99999999999 0\n", &err), &err, "events.txt:1:", "out of range");
    EXPECT_INPUT_ERROR(parse_events_text("1 99999999999999999999999 0\n", &err), &err, "events.txt:1:",
                       "integer vertex id");
    EXPECT_INPUT_ERROR(
        parse_json("{\"nodes\": [{\"bus_stop\": 7, \"X\": {\"y\": [1, 2, 3, 4, 5]}, \"y\": [1, 2, 3, 4, 5]}],"
                   " \"links\": [{\"source\": 7, \"target\": 8, \"weight\": 1.0}]}",
                   "bus.json", &err),
        &err, "bus.json", "$.links[0].target", "bus stop 8 is not in $.nodes");
}
END_TEST

START_TEST(non_finite_values)
{
    tf_error err;
    EXPECT_INPUT_ERROR(parse_json("{\"edges\": [[0, 1]],\n \"FX\": [[1, NaN]]}", "nan.json", &err), &err,
                       "nan.json:2:", "NaN and Infinity are not JSON numbers");
    EXPECT_INPUT_ERROR(parse_json("{\"edges\": [[0, 1]], \"FX\": [[1, 2], [3, 1e999], [5, 6], [7, 8], [9, 10]]}",
                                  "huge.json", &err),
                       &err, "huge.json", "$.FX[1][1]", "expected a finite number");
    EXPECT_INPUT_ERROR(parse_events_csv("from,to,feature,time\n1,2,nan,0\n", &err), &err, "events.csv:2:",
                       "expected a finite number");
    EXPECT_INPUT_ERROR(parse_events_text("1 2 inf\n", &err), &err, "events.txt:1:", "expected a finite timestamp");
    EXPECT_INPUT_ERROR(parse_tgcn("a,b\n1,2\n3,-inf\n5,6\n", "0,1\n1,0\n", &err), &err, "x_speed.csv:3:",
                       "expected a finite number");
    /* Finite in double but not in float32, where twofold stores it: it would become inf. */
    EXPECT_INPUT_ERROR(parse_json("{\"edges\": [[0, 1]], \"weights\": [1e300], \"X\": [[1, 2], [3, 4], [5, 6], [7, 8],"
                                  " [9, 1]]}",
                                  "big.json", &err),
                       &err, "big.json", "$.weights[0]", "float32 range");
    EXPECT_INPUT_ERROR(parse_events_csv("from,to,f0,time\n1,2,1e300,0\n", &err), &err, "events.csv:2:", "float32 range");
    EXPECT_INPUT_ERROR(parse_tgcn("a,b\n1,2\n3,4\n5,6\n", "0,1e39\n1,0\n", &err), &err, "x_adj.csv:1:",
                       "float32 range");
}
END_TEST

START_TEST(unsorted_timestamps)
{
    tf_error err;
    EXPECT_INPUT_ERROR(parse_events_text("1 2 10\n2 3 20\n3 4 15\n", &err), &err, "events.txt:3:", "timestamp 15",
                       "earlier than the previous", "sorted by time");
    EXPECT_INPUT_ERROR(parse_events_csv("from,to,time\n1,2,5\n2,3,4.5\n", &err), &err, "events.csv:3:",
                       "sorted by time");
}
END_TEST

START_TEST(empty_files)
{
    tf_error err;
    EXPECT_INPUT_ERROR(parse_json("", "empty.json", &err), &err, "empty.json", "file is empty");
    EXPECT_INPUT_ERROR(parse_events_text("", &err), &err, "events.txt", "file is empty");
    EXPECT_INPUT_ERROR(parse_events_text("\n\n  \n", &err), &err, "events.txt", "no events");
    EXPECT_INPUT_ERROR(parse_events_csv("", &err), &err, "events.csv", "file is empty");
    EXPECT_INPUT_ERROR(parse_events_csv("from,to,time\n", &err), &err, "events.csv", "no events");
    EXPECT_INPUT_ERROR(parse_tgcn("", "0\n", &err), &err, "x_speed.csv", "file is empty");
    const char *path = write_temporary("empty.json", "", 0);
    dataset d;
    EXPECT_INPUT_ERROR(dataset_load(path, NULL, &d, &err), &err, "empty.json", "file is empty");
}
END_TEST

START_TEST(missing_files)
{
    tf_error err;
    dataset d;
    EXPECT_INPUT_ERROR(dataset_load("/nonexistent/graph.json", NULL, &d, &err), &err, "/nonexistent/graph.json",
                       "cannot open", "No such file");
    EXPECT_INPUT_ERROR(dataset_load("chickenpx", NULL, &d, &err), &err, "chickenpx", "no such file or bundled dataset",
                       "chickenpox");
    /* A T-GCN speed file whose adjacency partner is missing names the partner. */
    const char *speed = write_temporary("lonely_speed.csv", "a,b\n1,2\n", 8);
    EXPECT_INPUT_ERROR(dataset_load(speed, NULL, &d, &err), &err, "lonely_adj.csv", "No such file");
    EXPECT_INPUT_ERROR(dataset_load(temporary_directory(), NULL, &d, &err), &err, "unknown format");
    char directory_json[300];
    snprintf(directory_json, sizeof directory_json, "%s/folder.json", temporary_directory());
    mkdir(directory_json, 0700);
    EXPECT_INPUT_ERROR(dataset_load(directory_json, NULL, &d, &err), &err, "folder.json", "is a directory");
    const char *odd = write_temporary("graph.xml", "<graph/>", 8);
    EXPECT_INPUT_ERROR(dataset_load(odd, NULL, &d, &err), &err, "graph.xml", "unknown format");
}
END_TEST

START_TEST(truncated_gzip)
{
    /* Compress a valid file, keep the first 60 %: zlib must report the stream as cut. */
    char compressed[1024];
    uLongf size = sizeof compressed;
    const char *plain = CHICKENPOX_OK CHICKENPOX_OK CHICKENPOX_OK;
    gzFile out;
    char path[300];
    snprintf(path, sizeof path, "%s/cut.json.gz", temporary_directory());
    out = gzopen(path, "wb");
    gzwrite(out, plain, (unsigned)strlen(plain));
    gzclose(out);
    FILE *file = fopen(path, "rb");
    size = fread(compressed, 1, sizeof compressed, file);
    fclose(file);
    const char *cut = write_temporary("cut2.json.gz", compressed, size * 6 / 10);
    dataset d;
    tf_error err;
    EXPECT_INPUT_ERROR(dataset_load(cut, NULL, &d, &err), &err, "cut2.json.gz", "gzip data truncated or corrupt");
}
END_TEST

START_TEST(semantic_errors)
{
    tf_error err;
    /* Fewer time steps than lags. */
    EXPECT_INPUT_ERROR(parse_json("{\"edges\": [[0, 1]], \"FX\": [[1, 2], [3, 4]]}", "short.json", &err), &err,
                       "short.json", "2 time steps, expected more than the 4 lags");
    /* A constant series has no standard score: montevideo_bus divides by the standard
     * deviation without england_covid's 1e-10, where numpy would produce NaN silently. */
    EXPECT_INPUT_ERROR(
        parse_json("{\"nodes\": [{\"bus_stop\": 7, \"X\": {\"y\": [1, 2, 3, 4, 5]}, \"y\": [1, 2, 3, 4, 5]},"
                   " {\"bus_stop\": 8, \"X\": {\"y\": [3, 3, 3, 3, 3]}, \"y\": [1, 2, 3, 4, 6]}],"
                   " \"links\": [{\"source\": 7, \"target\": 8, \"weight\": 1.0}]}",
                   "constant.json", &err),
        &err, "constant.json", "$.nodes[*].X.y", "vertex 1 is constant over time");
    /* A tiny file announcing ten million snapshots fails before allocating them. */
    EXPECT_INPUT_ERROR(parse_json("{\"time_periods\": 10000000, \"0\": {\"X\": [[0, 0]], \"edges\": [],"
                                  " \"weights\": []}}",
                                  "announce.json", &err),
                       &err, "announce.json", "$.time_periods", "only 2 members");
    EXPECT_INPUT_ERROR(parse_json("{\"time_periods\": 2, \"0\": {\"X\": [[0, 0]], \"edges\": [], \"weights\": [],"
                                  " \"y\": [1]}, \"x\": 1}",
                                  "missing.json", &err),
                       &err, "missing.json", "missing key \"1\"");
    /* twitter_tennis transitivity must fit its 11 one-hot classes. */
    EXPECT_INPUT_ERROR(parse_json("{\"time_periods\": 1, \"0\": {\"edges\": [], \"weights\": [], \"X\": [[1, 1.5]],"
                                  " \"y\": [0]}}",
                                  "tennis.json", &err),
                       &err, "tennis.json", "$.0.X[0]", "transitivity 1.5");
    /* A CSV event file needs to say which column is which. */
    EXPECT_INPUT_ERROR(parse_events_csv("from,to,when\n1,2,0\n", &err), &err, "events.csv:1:", "lacks a time column");
    EXPECT_INPUT_ERROR(parse_events_csv("from,src,time\n1,2,0\n", &err), &err, "events.csv:1:", "\"src\"",
                       "already has");
    EXPECT_INPUT_ERROR(parse_tgcn("a,b\n0,0\n0,0\n0,0\n", "0,1\n1,0\n", &err), &err, "x_speed.csv",
                       "no positive reading");
    EXPECT_INPUT_ERROR(parse_tgcn("a,,b\n1,2,3\n", "0,1,0\n1,0,0\n0,0,1\n", &err), &err, "x_speed.csv:1:",
                       "sensor id 2 is empty");
}
END_TEST

/* A label file (`twofold train --labels`): each refusal names the file, the line and what was
 * expected. */
START_TEST(label_files)
{
    tf_error err;
    ck_assert_int_eq(parse_labels("# snapshot vertex class\n0 0 1\n\n1 2 0\n2 0 4\n", &err), TF_OK);
    EXPECT_INPUT_ERROR(parse_labels("0 0 1\n0 1\n", &err), &err, "labels.txt:2:", "2 fields, expected 3");
    EXPECT_INPUT_ERROR(parse_labels("0 0 1\n1 x 1\n", &err), &err, "labels.txt:2:", "vertex \"x\", expected a whole");
    EXPECT_INPUT_ERROR(parse_labels("0 0 1.5\n", &err), &err, "labels.txt:1:", "class \"1.5\"");
    EXPECT_INPUT_ERROR(parse_labels("3 0 1\n", &err), &err, "labels.txt:1:", "snapshot 3, expected 0..2");
    EXPECT_INPUT_ERROR(parse_labels("0 4 1\n", &err), &err, "labels.txt:1:", "vertex 4, expected 0..3");
    EXPECT_INPUT_ERROR(parse_labels("0 1 -1\n", &err), &err, "labels.txt:1:", "class -1, expected 0..65535");
    EXPECT_INPUT_ERROR(parse_labels("2 3 1\n", &err), &err, "labels.txt:1:", "vertex 3 is absent at snapshot 2");
    EXPECT_INPUT_ERROR(parse_labels("0 1 1\n# again\n0 1 0\n", &err), &err, "labels.txt:3:", "labelled again");
    EXPECT_INPUT_ERROR(parse_labels("# nothing\n", &err), &err, "labels.txt: no labels", "2 or more classes");
    EXPECT_INPUT_ERROR(parse_labels("0 1 0\n1 1 0\n", &err), &err, "every label is class 0");
}
END_TEST

START_TEST(too_large_for_memory)
{
    tf_error err;
    dataset d;
    /* The user's cap: twitter_tennis does not fit in 1 MiB. */
    tf_set_memory_limit(1 << 20);
    int status = dataset_load("twitter_tennis", NULL, &d, &err);
    tf_set_memory_limit(0);
    EXPECT_INPUT_ERROR(status, &err, "too large for memory", "--memory-limit");
    /* A generator asked for more than any machine has is refused before it allocates. */
    EXPECT_INPUT_ERROR(dataset_load("powerlaw:nodes=2000000000,edges=1e15,snapshots=1000", NULL, &d, &err), &err,
                       "too large for memory", "the generated graph");
    EXPECT_INPUT_ERROR(dataset_load("events:nodes=1000,events=1e15", NULL, &d, &err), &err, "too large for memory");
    /* Bad generator specs are input errors too. */
    EXPECT_INPUT_ERROR(dataset_load("powerlaw:nodes=10,colour=red", NULL, &d, &err), &err, "unknown parameter",
                       "colour", "nodes, edges");
    EXPECT_INPUT_ERROR(dataset_load("powerlaw:nodes=10.5", NULL, &d, &err), &err, "nodes=10.5", "whole number");
    EXPECT_INPUT_ERROR(dataset_load("communities:nodes=10,colour=red", NULL, &d, &err), &err, "unknown parameter",
                       "colour", "nodes, edges, snapshots, classes, change, homophily");
    EXPECT_INPUT_ERROR(dataset_load("communities:classes=2.5", NULL, &d, &err), &err, "classes=2.5", "whole number");
    EXPECT_INPUT_ERROR(dataset_load("communities:nodes=2000000000,edges=1e15,snapshots=1000", NULL, &d, &err), &err,
                       "too large for memory", "the generated graph");
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("bad_input");
    TCase *cases = tcase_create("bad_input");
    tcase_set_timeout(cases, 120);
    tcase_add_test(cases, valid_baseline_parses);
    tcase_add_test(cases, truncated_json);
    tcase_add_test(cases, malformed_json);
    tcase_add_test(cases, wrong_types);
    tcase_add_test(cases, ragged_rows);
    tcase_add_test(cases, ids_out_of_range);
    tcase_add_test(cases, non_finite_values);
    tcase_add_test(cases, unsorted_timestamps);
    tcase_add_test(cases, empty_files);
    tcase_add_test(cases, missing_files);
    tcase_add_test(cases, truncated_gzip);
    tcase_add_test(cases, semantic_errors);
    tcase_add_test(cases, too_large_for_memory);
    tcase_add_test(cases, label_files);
    suite_add_tcase(suite, cases);
    return run_suite(suite);
}
