/* `twofold demo`'s row for chapter 03: temporal fusion on twitter_tennis's vertex lifetimes,
 * the per-sequence reference against zero-padded and fused batches (validated before timed,
 * opt/fusion_measure.h). */
#include <stdio.h>

#include "commands.h"
#include "dataset.h"
#include "fusion_measure.h"
#include "kernels_cpu.h"

int demo_technique_fusion(tf_error *err)
{
    dataset tennis;
    if (dataset_load("twitter_tennis", NULL, &tennis, err) != TF_OK)
        return err->code;
    sequence_set set;
    fusion_measurement m;
    opt_set_threads(1);
    int status = sequence_set_from_snapshots(&tennis.snapshots, 1, &set, err);
    if (status == TF_OK)
        status = fusion_measure(&set, TIME_ENCODER_GRU, 16, 16, 1, 7, &m, err);
    if (status == TF_OK && !m.valid)
        printf("  03  temporal fusion (DGC)     %-34s WRONG: error %.1e padded, %.1e fused (not timed)\n",
               "twitter_tennis lifetimes, GRU", m.padded_error, m.fused_error);
    else if (status == TF_OK)
        printf("  03  temporal fusion (DGC)     %-34s %-9.1e fused %.1fx faster than padded, %.1fx than ref; "
               "computed/useful steps %.2f fused, %.2f padded\n",
               "twitter_tennis lifetimes, GRU", m.fused_error > m.padded_error ? m.fused_error : m.padded_error,
               m.padded_seconds / m.fused_seconds, m.ref_seconds / m.fused_seconds, m.fused_computed_per_useful,
               m.padded_computed_per_useful);
    if (status == TF_OK)
        sequence_set_free(&set);
    dataset_free(&tennis);
    return status;
}
