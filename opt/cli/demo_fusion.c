/* `twofold demo`'s rows for chapter 03 on twitter_tennis: temporal fusion on its vertex
 * lifetimes (the per-sequence reference against zero-padded and fused batches) and spatial
 * fusion of 16 chunks, each validated before it is timed (opt/fusion_measure.h). */
#include <stdio.h>

#include "datasets/dataset.h"
#include "opt/cli/commands.h"
#include "opt/fusion_measure.h"
#include "opt/kernels.h"

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
        status = fusion_measure(&set, TIME_ENCODER_GRU, 16, 16, 3, 7, &m, err); /* best of 3 */
    /* the columns of command_demo()'s technique table: ch, technique, data, max error, speed */
    const char *row = "  %-3s %-27s %-34s %-9s %s\n";
    char error[32], speed[160];
    if (status == TF_OK) {
        snprintf(error, sizeof error, "%.1e", m.fused_error > m.padded_error ? m.fused_error : m.padded_error);
        if (m.valid)
            snprintf(speed, sizeof speed,
                     "fused %.1fx faster than padded, %.1fx than ref; computed/useful steps %.2f fused, %.2f padded",
                     m.padded_seconds / m.fused_seconds, m.ref_seconds / m.fused_seconds, m.fused_computed_per_useful,
                     m.padded_computed_per_useful);
        else
            snprintf(speed, sizeof speed, "WRONG: not equal to the reference, not timed");
        printf(row, "03", "temporal fusion (DGC)", "twitter_tennis lifetimes, GRU", error, speed);
    }
    spatial_measurement spatial;
    if (status == TF_OK)
        status = fusion_measure_spatial(&tennis.snapshots, 16, 0.6, &spatial, err);
    if (status == TF_OK) {
        snprintf(error, sizeof error, "%s", spatial.valid ? "bitwise" : "WRONG");
        if (spatial.valid)
            snprintf(speed, sizeof speed, "%.1f%% fewer bytes loaded (%lld groups under a cap of 0.6 of the data)",
                     100.0 * (1.0 - (double)spatial.fused_bytes / (double)spatial.unfused_bytes),
                     (long long)spatial.groups);
        else
            snprintf(speed, sizeof speed, "%lld chunk rows differ from loading the chunk alone",
                     (long long)spatial.differing_rows);
        printf(row, "03", "spatial fusion (DGC)", "twitter_tennis, 16 chunks", error, speed);
    }
    if (status == TF_OK)
        sequence_set_free(&set);
    dataset_free(&tennis);
    return status;
}
