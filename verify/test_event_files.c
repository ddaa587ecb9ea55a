/* Event files as users bring them (verify/ERRORS.md, Event files): which CSV columns become edge
 * features (by name, or as --edge-columns lists them; never an index column), JODIE's
 * users-and-items layout, SNAP's # comments, headers in any case, a UTF-8 byte order mark, and
 * memory errors that name the file. Every file here is a few lines written by the test; each case
 * prints what it loaded. */
#include "datasets/dataset.h"
#include "ref/data/loaders.h"
#include "ref/core/memory.h"
#include "verify/testing.h"

/* Parses `content` as an event CSV named `source` with --edge-columns `chosen` (NULL = the
 * rule) into out and columns; returns the status. */
static int parse_csv(const char *content, const char *source, const char *chosen, event_stream *out,
                     event_csv_columns *columns, tf_error *err)
{
    text t;
    ck_assert(text_from_bytes(content, strlen(content), &t, err) == TF_OK);
    columns->edge_columns = chosen;
    int status = load_events_csv_columns(&t, source, columns, out, err);
    text_free(&t);
    return status;
}

/* Prints what an event stream holds: the report line, then events, id space, features. */
static void print_loaded(const char *what, const event_stream *es, const event_csv_columns *columns)
{
    printf("%s\n  %s\n  %lld events, ids 0..%lld, %lld edge feature columns, labels %s\n", what,
           columns ? columns->report : "(no report)", (long long)es->num_events, (long long)es->num_nodes - 1,
           (long long)es->feature_width, es->label ? "yes" : "no");
}

/* TGN's ml_*.csv: a pandas index column without a name, u, i, ts, label, and idx, the event's
 * own index. Before the fix both unnamed and idx were features: the model saw the answer. */
START_TEST(index_columns_are_not_features)
{
    const char *ml = ",u,i,ts,label,idx\n0,1,8,0.0,0,1\n1,2,9,1.0,0,2\n2,1,9,2.0,1,3\n";
    tf_error err;
    event_stream es;
    event_csv_columns columns;
    ck_assert_msg(parse_csv(ml, "ml_x.csv", NULL, &es, &columns, &err) == TF_OK, "%s", err.message);
    print_loaded("ml_x.csv by the rule:", &es, &columns);
    ck_assert_int_eq(es.feature_width, 0);
    ck_assert_ptr_null(es.features);
    ck_assert_int_eq(es.label[2], 1);
    ck_assert_ptr_nonnull(strstr(columns.report, "edge feature columns: none"));
    ck_assert_ptr_nonnull(strstr(columns.report, "ignored columns: (unnamed column 1), idx"));
    event_stream_free(&es);

    /* Asked for by name, idx is a feature (then it is the user's choice). */
    ck_assert_msg(parse_csv(ml, "ml_x.csv", "IDX", &es, &columns, &err) == TF_OK, "%s", err.message);
    print_loaded("ml_x.csv --edge-columns IDX:", &es, &columns);
    ck_assert_int_eq(es.feature_width, 1);
    for (int64_t i = 0; i < es.num_events; i++)
        ck_assert_float_eq(es.features[i], (float)(i + 1));
    ck_assert_ptr_nonnull(strstr(columns.report, "edge feature columns: idx; ignored columns: (unnamed column 1)"));
    event_stream_free(&es);
}
END_TEST

/* The rule: names starting with feat, and f<digits>; nothing else (a lone "f", "weight"). */
START_TEST(features_by_name)
{
    const char *csv = "from,weight,feature,to,f,F12,time,feat_b,foo\n"
                      "1,9,0.5,2,9,1.5,0,2.5,x\n"
                      "2,9,0.25,3,9,1.25,1,2.25,y\n";
    tf_error err;
    event_stream es;
    event_csv_columns columns;
    ck_assert_msg(parse_csv(csv, "named.csv", NULL, &es, &columns, &err) == TF_OK, "%s", err.message);
    print_loaded("named.csv by the rule:", &es, &columns);
    ck_assert_int_eq(es.feature_width, 3);
    const float expected[] = {0.5f, 1.5f, 2.5f, 0.25f, 1.25f, 2.25f}; /* feature, F12, feat_b in file order */
    for (int i = 0; i < 6; i++)
        ck_assert_float_eq(es.features[i], expected[i]);
    ck_assert_ptr_nonnull(strstr(columns.report, "ignored columns: weight, f, foo"));
    event_stream_free(&es);

    /* --edge-columns takes exactly its list, in file order, and "none" takes nothing. */
    ck_assert_msg(parse_csv(csv, "named.csv", "weight,f", &es, &columns, &err) == TF_OK, "%s", err.message);
    print_loaded("named.csv --edge-columns weight,f:", &es, &columns);
    ck_assert_int_eq(es.feature_width, 2);
    ck_assert_float_eq(es.features[0], 9.0f);
    event_stream_free(&es);
    ck_assert_msg(parse_csv(csv, "named.csv", "none", &es, &columns, &err) == TF_OK, "%s", err.message);
    print_loaded("named.csv --edge-columns none:", &es, &columns);
    ck_assert_int_eq(es.feature_width, 0);
    event_stream_free(&es);

    /* Wrong lists: one line naming the option, the file and what was expected. */
    EXPECT_INPUT_ERROR(parse_csv(csv, "named.csv", "colour", &es, &columns, &err), &err, "option --edge-columns",
                       "named.csv has no column \"colour\"", "its header: from,weight");
    EXPECT_INPUT_ERROR(parse_csv(csv, "named.csv", "feature,time", &es, &columns, &err), &err,
                       "column \"time\" of named.csv is the time column");
    EXPECT_INPUT_ERROR(parse_csv(csv, "named.csv", "feature,,f", &es, &columns, &err), &err, "empty name");
}
END_TEST

/* JODIE's own file: user_id,item_id,timestamp,state_label,comma_separated_list_of_features, the
 * last name standing for every remaining field. Users and items are separate id spaces. */
START_TEST(jodie_layout)
{
    const char *jodie = "user_id,item_id,timestamp,state_label,comma_separated_list_of_features\n"
                        "0,0,0.0,0,0.1,0.2,0.3\n"
                        "2,1,1.0,1,0.4,0.5,0.6\n"
                        "1,0,2.0,0,0.7,0.8,0.9\n";
    tf_error err;
    event_stream es;
    event_csv_columns columns;
    ck_assert_msg(parse_csv(jodie, "jodie.csv", NULL, &es, &columns, &err) == TF_OK, "%s", err.message);
    print_loaded("jodie.csv by the rule:", &es, &columns);
    /* 3 users (0..2), so item 0 is vertex 3 and item 1 vertex 4. */
    ck_assert_int_eq(columns.users, 3);
    ck_assert_int_eq(es.num_nodes, 5);
    ck_assert_int_eq(es.src[1], 2);
    ck_assert_int_eq(es.dst[0], 3);
    ck_assert_int_eq(es.dst[1], 4);
    ck_assert_int_eq(es.dst[2], 3);
    ck_assert_int_eq(es.label[1], 1);
    ck_assert_int_eq(es.feature_width, 3);
    ck_assert_float_eq(es.features[1 * 3 + 2], 0.6f);
    ck_assert_ptr_nonnull(strstr(columns.report, "comma_separated_list_of_features (3 values)"));
    ck_assert_ptr_nonnull(strstr(columns.report, "item ids follow the 3 user ids"));
    event_stream_free(&es);

    ck_assert_msg(parse_csv(jodie, "jodie.csv", "none", &es, &columns, &err) == TF_OK, "%s", err.message);
    print_loaded("jodie.csv --edge-columns none:", &es, &columns);
    ck_assert_int_eq(es.feature_width, 0);
    event_stream_free(&es);

    EXPECT_INPUT_ERROR(parse_csv("user_id,item_id,timestamp,state_label,comma_separated_list_of_features\n"
                                 "0,0,0.0,0,0.1\n1,0,1.0,0\n",
                                 "jodie.csv", NULL, &es, &columns, &err),
                       &err, "jodie.csv:3:", "4 fields, expected 5");
}
END_TEST

/* SNAP's comment lines, a header in capitals, and a byte order mark at the start. */
START_TEST(comments_case_and_byte_order_mark)
{
    tf_error err;
    event_stream es;
    event_csv_columns columns;
    text t;
    const char *snap = "# Directed graph: CollegeMsg.txt\n# FromNodeId\tToNodeId\tTime\n1 2 10\n# a note\n2 3 11\n";
    ck_assert(text_from_bytes(snap, strlen(snap), &t, &err) == TF_OK);
    ck_assert_msg(load_events_text(&t, "snap.txt", &es, &err) == TF_OK, "%s", err.message);
    text_free(&t);
    print_loaded("snap.txt with # comments:", &es, NULL);
    ck_assert_int_eq(es.num_events, 2);
    ck_assert_int_eq(es.dst[1], 3);
    event_stream_free(&es);

    ck_assert_msg(parse_csv("# exported\nFROM,To,TIME,Feature\n1,2,0,0.5\n2,3,1,0.25\n", "upper.csv", NULL, &es,
                            &columns, &err) == TF_OK,
                  "%s", err.message);
    print_loaded("upper.csv, a comment then FROM,To,TIME,Feature:", &es, &columns);
    ck_assert_int_eq(es.num_events, 2);
    ck_assert_int_eq(es.feature_width, 1);
    ck_assert_float_eq(es.features[1], 0.25f);
    event_stream_free(&es);

    ck_assert_msg(parse_csv("\xEF\xBB\xBF" "from,to,time\n1,2,0\n2,3,1\n", "bom.csv", NULL, &es, &columns, &err) ==
                      TF_OK,
                  "%s", err.message);
    print_loaded("bom.csv, starting with EF BB BF:", &es, &columns);
    ck_assert_int_eq(es.num_events, 2);
    event_stream_free(&es);
    const char *bom_text = "\xEF\xBB\xBF" "1 2 0\n";
    ck_assert(text_from_bytes(bom_text, strlen(bom_text), &t, &err) == TF_OK);
    ck_assert_msg(load_events_text(&t, "bom.txt", &es, &err) == TF_OK, "%s", err.message);
    text_free(&t);
    print_loaded("bom.txt, starting with EF BB BF:", &es, NULL);
    event_stream_free(&es);

    /* SNAP's bitcoin CSVs have no header: the message says the first line looks like data. */
    EXPECT_INPUT_ERROR(parse_csv("6,2,4,1289241911.7\n", "soc-sign-bitcoinotc.csv", NULL, &es, &columns, &err), &err,
                       "soc-sign-bitcoinotc.csv:1:", "lacks a source column", "looks like data");
}
END_TEST

/* Through dataset_load: the report line goes to options.notes, --edge-columns applies to event
 * CSVs only, and a memory error names the file. */
START_TEST(dataset_notes_and_named_errors)
{
    const char *ml = ",u,i,ts,label,idx\n0,1,8,0.0,0,1\n1,2,9,1.0,0,2\n";
    const char *path = write_temporary("ml_y.csv", ml, strlen(ml));
    FILE *stream = tmpfile();
    ck_assert_ptr_nonnull(stream);
    dataset_options options = {0, NULL, NULL, NULL, stream};
    tf_error err;
    dataset d;
    ck_assert_msg(dataset_load(path, &options, &d, &err) == TF_OK, "%s", err.message);
    char notes[1100] = "";
    rewind(stream);
    ck_assert_uint_gt(fread(notes, 1, sizeof notes - 1, stream), 0);
    fclose(stream);
    printf("dataset_load %s wrote: %s", path, notes);
    ck_assert_ptr_nonnull(strstr(notes, "ml_y.csv: edge feature columns: none; ignored columns: (unnamed column 1), idx"));
    ck_assert_int_eq(d.events.feature_width, 0);
    dataset_free(&d);

    options.notes = NULL;
    options.edge_columns = "idx";
    EXPECT_INPUT_ERROR(dataset_load("wikipedia", &options, &d, &err), &err, "option --edge-columns",
                       "wikipedia.txt.gz is not an event CSV");
    EXPECT_INPUT_ERROR(dataset_load("events:nodes=10,events=20", &options, &d, &err), &err, "option --edge-columns",
                       "is generated");

    /* A T-GCN speed header of 200 sensors: its first block of rows (1024 x 200 doubles, 1.6 MB)
     * is over a 1 MiB limit. Before, the message named no file. */
    char speed[2048] = "";
    for (int k = 0; k < 200; k++)
        strcat(speed, k ? ",s" : "s");
    strcat(speed, "\n");
    text s, a;
    ck_assert(text_from_bytes(speed, strlen(speed), &s, &err) == TF_OK);
    ck_assert(text_from_bytes("0\n", 2, &a, &err) == TF_OK);
    snapshot_seq seq;
    tf_set_memory_limit(1 << 20);
    int status = load_tgcn_csv(&s, "wide_speed.csv", &a, "wide_adj.csv", 2, &seq, &err);
    tf_set_memory_limit(0);
    text_free(&s);
    text_free(&a);
    EXPECT_INPUT_ERROR(status, &err, "wide_speed.csv (200 columns)", "CSV values");
}
END_TEST

/* Times the models cannot take differences of in float32 (verify/ERRORS.md, Event files):
 * 1e39 is a finite double but overflows float, so every time difference became infinity and
 * the test AP a silent 0.5000; a first event at -1e300 made training "diverge". Both formats
 * refuse them with file:line; a time just inside EVENT_TIME_LIMIT still loads. */
START_TEST(times_beyond_float_range)
{
    printf("EVENT_TIME_LIMIT = %.6g (FLT_MAX / 2)\n", (double)EVENT_TIME_LIMIT);
    tf_error err;
    event_stream es;
    text t;
    const char *inside = "0 1 0\n1 2 1e38\n";
    ck_assert(text_from_bytes(inside, strlen(inside), &t, &err) == TF_OK);
    ck_assert_msg(load_events_text(&t, "inside.txt", &es, &err) == TF_OK, "%s", err.message);
    text_free(&t);
    printf("inside.txt: last time %.6g loads\n", es.time[1]);
    ck_assert_msg(event_stream_validate(&es, "inside.txt", &err) == TF_OK, "%s", err.message);
    es.time[1] = 1e39; /* as a generator or another loader could leave it */
    EXPECT_INPUT_ERROR(event_stream_validate(&es, "crafted", &err), &err, "crafted: event 1", "1e+39", "float32");
    event_stream_free(&es);

    const char *far = "0 1 0\n1 2 1e39\n";
    ck_assert(text_from_bytes(far, strlen(far), &t, &err) == TF_OK);
    EXPECT_INPUT_ERROR(load_events_text(&t, "far.txt", &es, &err), &err, "far.txt:2: timestamp \"1e39\" is beyond",
                       "float32");
    text_free(&t);

    event_csv_columns columns;
    EXPECT_INPUT_ERROR(parse_csv("from,to,time\n0,1,-1e300\n1,2,0\n", "early.csv", NULL, &es, &columns, &err), &err,
                       "early.csv:2: timestamp \"-1e300\" is beyond", "float32");
}
END_TEST

int main(void)
{
    const named_test tests[] = {
        {"index_columns_are_not_features", index_columns_are_not_features},
        {"features_by_name", features_by_name},
        {"jodie_layout", jodie_layout},
        {"comments_case_and_byte_order_mark", comments_case_and_byte_order_mark},
        {"dataset_notes_and_named_errors", dataset_notes_and_named_errors},
        {"times_beyond_float_range", times_beyond_float_range},
    };
    return run_suite(suite_of("event_files", tests, sizeof tests / sizeof *tests, 60));
}
