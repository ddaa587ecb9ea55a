/* `twofold demo`'s rows for chapter 02: the aggregation of every snapshot by the reference's
 * full recompute and by the incremental engine with its defaults (deltas, a full recompute
 * above the threshold), on bundled data and on a generated graph at 1 % churn. The deltas
 * are built beforehand (once per dataset, like a delta-mode loader) and not timed; snapshot 0
 * is a full recompute for both, so the times are of snapshots 1 onwards. The error is
 * aggregation_error() (relative to the summed terms); a row outside its tolerance prints
 * WRONG instead of a speed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/dataset.h"
#include "opt/cli/cli.h"
#include "opt/cli/commands.h"
#include "opt/incremental.h"
#include "opt/kernels.h"
#include "ref/clock.h"
#include "ref/incremental.h"
#include "ref/memory.h"

static int demo_row(const char *spec, const char *label, aggregator kind, tf_error *err)
{
    dataset d;
    if (dataset_load(spec, NULL, &d, err) != TF_OK)
        return err->code;
    const snapshot_seq *seq = &d.snapshots;
    const int64_t cells = seq->num_nodes * seq->feature_width;
    snapshot_delta *deltas = NULL;
    incremental_aggregation a;
    memset(&a, 0, sizeof a);
    float *reference = tf_alloc((size_t)cells, sizeof(float), "demo aggregation", err);
    int status = reference ? snapshot_delta_chain_build(&deltas, seq, kind, err) : TF_ERR_INPUT;
    if (status == TF_OK)
        status = opt_incremental_create(&a, kind, seq->num_nodes, seq->feature_width, NULL, err);
    double ref_seconds = 0, opt_seconds = 0, worst = 0;
    for (int64_t t = 0; status == TF_OK && t < seq->num_snapshots; t++) {
        const snapshot *s = &seq->snapshots[t];
        double started = wall_seconds();
        status = ref_aggregate(&s->graph, s->features.data, seq->feature_width, kind, reference, err);
        ref_seconds += t > 0 ? wall_seconds() - started : 0;
        started = wall_seconds();
        opt_incremental_seek(&a, seq, deltas, t);
        opt_seconds += t > 0 ? wall_seconds() - started : 0;
        double e = aggregation_error(&s->graph, s->features.data, seq->feature_width, kind, a.value, reference);
        if (e < 0)
            status = tf_error_set(err, TF_ERR_SYSTEM, "demo: out of memory");
        worst = e > worst ? e : worst;
    }
    if (status == TF_OK) {
        char technique[40], error[32], speed[200];
        snprintf(technique, sizeof technique, "ReInc incremental %s", aggregator_name(kind));
        snprintf(error, sizeof error, "%.1e", worst);
        /* Within the fp bound (linear) or exactly equal (max, min), or no speed is shown. */
        int valid = kind == AGGREGATOR_MAX || kind == AGGREGATOR_MIN ? worst == 0 : worst <= 1e-5;
        if (valid)
            snprintf(speed, sizeof speed, "%.1fx ref's full recompute; %lld deltas, %lld full (%lld above the threshold)",
                     ref_seconds / opt_seconds, (long long)a.stats.incremental, (long long)a.stats.full,
                     (long long)a.stats.fallbacks);
        else
            snprintf(speed, sizeof speed, "WRONG: not equal to the reference, no speed shown");
        printf("  %-3s %-27s %-34s %-9s %s\n", "02", technique, label, error, speed);
    }
    free(reference);
    snapshot_delta_chain_free(deltas, seq->num_snapshots);
    opt_incremental_free(&a);
    dataset_free(&d);
    return status;
}

int demo_technique_incremental(tf_error *err)
{
    static const char *generated = "powerlaw:nodes=100000,edges=1000000,snapshots=5,churn=0.01,features=16,degrees=0,seed=1";
    opt_set_threads(1);
    if (demo_row("twitter_tennis", "twitter_tennis, 120 snapshots", AGGREGATOR_SUM, err) != TF_OK ||
        demo_row("twitter_tennis", "twitter_tennis, 120 snapshots", AGGREGATOR_MAX, err) != TF_OK ||
        demo_row(generated, "powerlaw 10^6 edges, 1% churn", AGGREGATOR_SUM, err) != TF_OK ||
        demo_row(generated, "powerlaw 10^6 edges, 1% churn", AGGREGATOR_SYMMETRIC, err) != TF_OK)
        return err->code;
    return TF_OK;
}
