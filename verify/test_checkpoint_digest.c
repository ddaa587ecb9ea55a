/* The checkpoints' data digest tells data apart that differs only in the signs of two floats
 * (verify/ERRORS.md, Checkpoints). FNV-1a's step over 8-byte words carried
 * a change of bit k only into bits k and above, so flipping bit 63 of two words (the signs of two
 * float features, or two targets) gave the same digest: a checkpoint resumed on other data
 * silently and ranks with different data agreed. */
#include "ref/models/checkpoint.h"
#include "verify/testing.h"

/* An event stream of 8 events with 2 feature columns, filled with distinct values. */
static void make_events(event_stream *es)
{
    tf_error err;
    ck_assert(event_stream_alloc(es, 8, 2, 1, &err) == TF_OK);
    es->num_nodes = 4;
    for (int64_t i = 0; i < es->num_events; i++) {
        es->src[i] = (int32_t)(i % 4);
        es->dst[i] = (int32_t)((i + 1) % 4);
        es->time[i] = (double)i;
        es->label[i] = (int32_t)(i % 2);
        es->features[2 * i] = 0.5f + (float)i;
        es->features[2 * i + 1] = -0.25f * (float)i;
    }
}

START_TEST(two_sign_flips_in_events)
{
    event_stream a, b;
    make_events(&a);
    make_events(&b);
    /* Negate the first feature of lines 2 and 6 (bit 31 of the float; two floats make one word,
     * so bit 63 is the second column's sign: negate that on two lines as well). */
    b.features[2 * 2] = -b.features[2 * 2];
    b.features[2 * 6] = -b.features[2 * 6];
    uint64_t da = checkpoint_event_digest(&a, a.features, 2), db = checkpoint_event_digest(&b, b.features, 2);
    printf("events: digest %016llx; first column negated on 2 lines: %016llx\n", (unsigned long long)da,
           (unsigned long long)db);
    ck_assert_msg(da != db, "negating a feature on two lines kept the digest");
    event_stream_free(&b);
    make_events(&b);
    b.features[2 * 3 + 1] = -b.features[2 * 3 + 1]; /* the sign is bit 63 of the word (line 3) */
    b.features[2 * 5 + 1] = -b.features[2 * 5 + 1];
    db = checkpoint_event_digest(&b, b.features, 2);
    printf("events: second column (bit 63 of a word) negated on 2 lines: %016llx\n", (unsigned long long)db);
    ck_assert_msg(da != db, "negating bit 63 of two words kept the digest");
    ck_assert(checkpoint_event_digest(&a, a.features, 2) == da); /* and it is a function of the data */
    event_stream_free(&a);
    event_stream_free(&b);
}
END_TEST

START_TEST(two_sign_flips_in_snapshots)
{
    snapshot_seq a, b;
    tf_error err;
    snapshot_seq *seqs[2] = {&a, &b};
    for (int s = 0; s < 2; s++) {
        ck_assert(snapshot_seq_alloc(seqs[s], 2, 3, 2, 1, &err) == TF_OK);
        for (int64_t t = 0; t < 2; t++)
            for (int64_t i = 0; i < 6; i++)
                seqs[s]->snapshots[t].features.data[i] = 1.0f + (float)(t * 6 + i);
    }
    /* The sign of the second float of a word: bit 63, in two snapshots. */
    b.snapshots[0].features.data[1] = -b.snapshots[0].features.data[1];
    b.snapshots[1].features.data[3] = -b.snapshots[1].features.data[3];
    uint64_t da = checkpoint_snapshot_digest(&a), db = checkpoint_snapshot_digest(&b);
    printf("snapshots: digest %016llx; a feature negated in each of 2 snapshots: %016llx\n",
           (unsigned long long)da, (unsigned long long)db);
    ck_assert_msg(da != db, "negating two features kept the digest");
    snapshot_seq_free(&a);
    snapshot_seq_free(&b);
}
END_TEST

int main(void)
{
    const named_test tests[] = {{"two_sign_flips_in_events", two_sign_flips_in_events},
                                {"two_sign_flips_in_snapshots", two_sign_flips_in_snapshots}};
    return run_suite(suite_of("checkpoint_digest", tests, sizeof tests / sizeof *tests, 30));
}
