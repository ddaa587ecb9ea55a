#include "opt/fusion_measure.h"

#include "ref/clock.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opt/cli/cli.h"
#include "ref/memory.h"
#include "ref/rng.h"

static double relative_error(const float *ours, const float *reference, int64_t n)
{
    double worst = 0;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs((double)ours[i] - (double)reference[i]) / fmax(1.0, fabs((double)reference[i]));
        worst = isnan(e) ? INFINITY : fmax(worst, e);
    }
    return worst;
}

/* Buffers of one run: outputs, input gradients, the four parameter gradients. */
typedef struct run_buffers {
    float *h, *dx, *gradient[4];
} run_buffers;

static void buffers_free(run_buffers *b)
{
    free(b->h), free(b->dx);
    for (int k = 0; k < 4; k++)
        free(b->gradient[k]);
}

static int buffers_alloc(run_buffers *b, int64_t total, int64_t in, int64_t hidden, const int64_t sizes[4],
                         tf_error *err)
{
    memset(b, 0, sizeof *b);
    b->h = tf_alloc((size_t)(total * hidden), sizeof(float), "fusion outputs", err);
    b->dx = b->h ? tf_alloc((size_t)(total * in), sizeof(float), "fusion input gradients", err) : NULL;
    for (int k = 0; k < 4 && b->dx; k++)
        if (!(b->gradient[k] = tf_alloc((size_t)sizes[k], sizeof(float), "fusion parameter gradients", err)))
            break;
    if (!b->gradient[3]) {
        buffers_free(b);
        return err->code;
    }
    return TF_OK;
}

static void buffers_zero_gradients(run_buffers *b, int64_t total, int64_t in, const int64_t sizes[4])
{
    memset(b->dx, 0, (size_t)(total * in) * sizeof(float));
    for (int k = 0; k < 4; k++)
        memset(b->gradient[k], 0, (size_t)sizes[k] * sizeof(float));
}

/* One forward + backward of a plan into b; seconds into *seconds. */
static int run_plan(const time_encoder *e, const sequence_set *set, const fusion_plan *plan, const float *x,
                    const float *dh_out, run_buffers *b, const int64_t sizes[4], double *seconds, tf_error *err)
{
    buffers_zero_gradients(b, set->total_steps, e->in, sizes);
    time_encoder_gradients g = {b->gradient[0], b->gradient[1], b->gradient[2], b->gradient[3]};
    fusion_tape tape;
    double started = wall_seconds();
    int status = opt_fusion_forward(e, set, plan, x, b->h, &tape, err);
    if (status == TF_OK)
        status = opt_fusion_backward(e, set, plan, &tape, dh_out, b->dx, &g, err);
    *seconds = wall_seconds() - started;
    fusion_tape_free(&tape);
    return status;
}

static double worst_error(const run_buffers *ours, const run_buffers *ref, int64_t total, int64_t in, int64_t hidden,
                          const int64_t sizes[4])
{
    double worst = fmax(relative_error(ours->h, ref->h, total * hidden), relative_error(ours->dx, ref->dx, total * in));
    for (int k = 0; k < 4; k++)
        worst = fmax(worst, relative_error(ours->gradient[k], ref->gradient[k], sizes[k]));
    return worst;
}

int fusion_measure(const sequence_set *set, time_encoder_kind kind, int64_t in, int64_t hidden, int repeats,
                   uint64_t seed, fusion_measurement *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    const int64_t G = time_encoder_gates(kind), total = set->total_steps;
    const int64_t sizes[4] = {G * hidden * in, G * hidden * hidden, G * hidden, G * hidden};
    float *weights[4] = {NULL, NULL, NULL, NULL}, *x = NULL, *dh_out = NULL;
    run_buffers ref = {0}, twin = {0};
    fusion_plan padded = {0}, lanes = {0};
    rng r;
    rng_seed(&r, seed);
    int status = TF_OK;
    for (int k = 0; k < 4 && status == TF_OK; k++) {
        weights[k] = tf_alloc((size_t)sizes[k], sizeof(float), "time encoder weights", err);
        status = weights[k] ? TF_OK : err->code;
        for (int64_t i = 0; status == TF_OK && i < sizes[k]; i++) /* torch's range, doubled */
            weights[k][i] = (float)((2.0 * rng_uniform(&r) - 1.0) * 2.0 / sqrt((double)hidden));
    }
    if (status == TF_OK) {
        x = tf_alloc((size_t)(total * in), sizeof(float), "fusion inputs", err);
        dh_out = x ? tf_alloc((size_t)(total * hidden), sizeof(float), "fusion output gradients", err) : NULL;
        status = dh_out ? TF_OK : err->code;
    }
    if (status == TF_OK) {
        for (int64_t i = 0; i < total * in; i++)
            x[i] = (float)(2.0 * rng_uniform(&r) - 1.0);
        for (int64_t i = 0; i < total * hidden; i++)
            dh_out[i] = (float)(2.0 * rng_uniform(&r) - 1.0);
        status = buffers_alloc(&ref, total, in, hidden, sizes, err);
    }
    if (status == TF_OK)
        status = buffers_alloc(&twin, total, in, hidden, sizes, err);
    if (status == TF_OK)
        status = opt_fusion_plan_padded(set, &padded, err);
    if (status == TF_OK)
        status = opt_fusion_plan_lanes(set, &lanes, err);
    time_encoder e = {kind, in, hidden, weights[0], weights[1], weights[2], weights[3]};
    if (status == TF_OK) { /* the reference, timed once */
        buffers_zero_gradients(&ref, total, in, sizes);
        time_encoder_gradients g = {ref.gradient[0], ref.gradient[1], ref.gradient[2], ref.gradient[3]};
        double started = wall_seconds();
        status = ref_fusion_forward(&e, set, x, ref.h, err);
        if (status == TF_OK)
            status = ref_fusion_backward(&e, set, x, dh_out, ref.dx, &g, err);
        out->ref_seconds = wall_seconds() - started;
    }
    /* Validate both twins before timing either; the validating runs count as the first timed
     * runs, and a twin is run again (up to `repeats` in all, best kept) only while one run
     * takes under a second, so long cases are not repeated for nothing. */
    double padded_seconds = 0, fused_seconds = 0;
    if (status == TF_OK) {
        status = run_plan(&e, set, &padded, x, dh_out, &twin, sizes, &padded_seconds, err);
        out->padded_error = worst_error(&twin, &ref, total, in, hidden, sizes);
    }
    if (status == TF_OK) {
        status = run_plan(&e, set, &lanes, x, dh_out, &twin, sizes, &fused_seconds, err);
        out->fused_error = worst_error(&twin, &ref, total, in, hidden, sizes);
    }
    out->valid = status == TF_OK && out->padded_error <= FUSION_TOLERANCE && out->fused_error <= FUSION_TOLERANCE;
    if (out->valid) {
        /* padded and fused alternate, so a burst of load from elsewhere on the machine tends
         * to hit both rather than one */
        double seconds;
        for (int k = 1; k < repeats && status == TF_OK; k++) {
            if (padded_seconds < 1.0) {
                status = run_plan(&e, set, &padded, x, dh_out, &twin, sizes, &seconds, err);
                padded_seconds = fmin(padded_seconds, seconds);
            }
            if (status == TF_OK && fused_seconds < 1.0) {
                status = run_plan(&e, set, &lanes, x, dh_out, &twin, sizes, &seconds, err);
                fused_seconds = fmin(fused_seconds, seconds);
            }
        }
        out->padded_seconds = padded_seconds;
        out->fused_seconds = fused_seconds;
    } else {
        out->ref_seconds = 0; /* no speed for a wrong answer */
    }
    out->sequences = set->count;
    out->useful_steps = total;
    out->max_length = set->max_length;
    out->lanes = lanes.num_lanes;
    out->padded_computed_per_useful = fusion_plan_computed_per_useful(&padded);
    out->fused_computed_per_useful = fusion_plan_computed_per_useful(&lanes);
    out->padded_occupancy = fusion_plan_occupancy(&padded);
    out->fused_occupancy = fusion_plan_occupancy(&lanes);
    for (int k = 0; k < 4; k++)
        free(weights[k]);
    free(x), free(dh_out);
    buffers_free(&ref);
    buffers_free(&twin);
    fusion_plan_free(&padded);
    fusion_plan_free(&lanes);
    return status;
}

int fusion_measure_spatial(const snapshot_seq *seq, int64_t num_chunks, double cap_fraction, spatial_measurement *out,
                           tf_error *err)
{
    memset(out, 0, sizeof *out);
    chunk_set chunks;
    fusion_groups groups = {0};
    if (chunk_set_contiguous(seq->num_nodes, num_chunks, &chunks, err) != TF_OK)
        return err->code;
    const int64_t whole = seq->num_snapshots * seq->num_nodes * seq->feature_width * (int64_t)sizeof(float);
    out->chunks = num_chunks;
    out->cap_bytes = (int64_t)(cap_fraction * (double)whole);
    int status = opt_fusion_spatial_groups(seq, &chunks, out->cap_bytes, &groups, err);
    const int64_t F = seq->feature_width;
    for (int64_t g = 0; status == TF_OK && g < groups.count; g++) {
        chunk_load fused;
        double started = wall_seconds();
        status = opt_fusion_load_group(seq, &chunks, &groups, g, &fused, err);
        if (status != TF_OK)
            break;
        out->fused_seconds += wall_seconds() - started;
        out->groups_over_cap += groups.offsets[g + 1] - groups.offsets[g] > 1 && fused.bytes > out->cap_bytes;
        for (int64_t k = groups.offsets[g]; status == TF_OK && k < groups.offsets[g + 1]; k++) {
            chunk_load alone;
            int64_t *rows = NULL, count = 0;
            started = wall_seconds();
            status = ref_fusion_load_chunk(seq, &chunks, groups.chunks[k], &alone, err);
            if (status != TF_OK)
                break;
            out->alone_seconds += wall_seconds() - started;
            status = opt_fusion_chunk_rows(seq, &chunks, groups.chunks[k], &fused, &rows, &count, err);
            for (int64_t t = 0; status == TF_OK && t < seq->num_snapshots; t++)
                for (int64_t i = 0; i < count; i++)
                    out->differing_rows += memcmp(fused.features + (t * fused.num_vertices + rows[i]) * F,
                                                  alone.features + (t * count + i) * F, (size_t)F * sizeof(float)) != 0;
            free(rows);
            chunk_load_free(&alone);
        }
        chunk_load_free(&fused);
    }
    out->groups = groups.count;
    out->unfused_bytes = groups.unfused_bytes;
    out->fused_bytes = groups.fused_bytes;
    out->valid = status == TF_OK && out->differing_rows == 0 && out->groups_over_cap == 0;
    if (!out->valid)
        out->alone_seconds = out->fused_seconds = 0; /* no time for a wrong answer */
    fusion_groups_free(&groups);
    chunk_set_free(&chunks);
    return status;
}
