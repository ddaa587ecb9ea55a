/* twofold train on a snapshot model: the techniques a command line switches on, each one hook struct
 * (opt/cli/train.h), and their order. --schedule and --batching hybrid are in cmd_train_schedule.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt/cli/train.h"
#include "opt/kernels.h"
#include "opt/profile.h"
#include "opt/train.h"
#include "ref/core/clock.h"
#include "ref/core/memory.h"
#include "ref/partition.h"

/* ---- the ranks: data-parallel steps under mpiexec ------------------------------------------------ */

static int ranks_on(const train_command *c, const comm *group)
{
    (void)c;
    return group != NULL;
}

static int ranks_start(train_run *r, tf_error *err)
{
    (void)err;
    const train_command *c = r->c;
    if (!c->scheduling.enabled && r->speaks && r->group->size > c->options.batch)
        printf("note: %lld window(s) per step for %d ranks: %d rank(s) idle in every step (use --batch %d)\n",
               (long long)c->options.batch, r->group->size, r->group->size - (int)c->options.batch, r->group->size);
    return TF_OK;
}

static int ranks_report(train_run *r, tf_error *err)
{
    (void)err;
    if (r->speaks)
        printf("communication: rank 0 sent %.0f bytes in %llu collectives\n", (double)r->group->bytes_sent,
               (unsigned long long)r->group->calls);
    return TF_OK;
}

static const train_technique ranks_technique = {
    .name = "ranks", .on = ranks_on, .start = ranks_start, .report = ranks_report,
};

/* ---- --device cuda ------------------------------------------------------------------------------ */

/* A twofold built without CUDA refuses --device cuda before anything runs. */
static int device_check(const train_command *c, tf_error *err)
{
#ifndef TWOFOLD_HAVE_CUDA
    if (c->gpu)
        return tf_error_set(err, TF_ERR_INPUT, "train: --device cuda: this twofold was built without CUDA (no nvcc "
                                               "at configure time, or -DTWOFOLD_CUDA=OFF)");
#else
    (void)c;
    (void)err;
#endif
    return TF_OK;
}

static int device_on(const train_command *c, const comm *group) { return group && c->gpu; }

static int device_start(train_run *r, tf_error *err)
{
#ifdef TWOFOLD_HAVE_CUDA
    const int devices = cuda_device_count();
    if (devices == 0 && r->speaks)
        printf("--device cuda: no GPU present (or no driver); running the CPU kernels\n");
    if (devices == 0)
        return TF_OK;
    if (cuda_context_create(&r->gpu, r->group->local_rank % devices, err) != TF_OK)
        return err->code;
    cuda_kernels_bind(&r->gpu);
    r->tr->model.kernels = &cuda_kernels;
    if (r->speaks)
        printf("--device cuda: kernels on %s (compute capability %d.%d), one GPU per rank among %d\n", r->gpu.name,
               r->gpu.compute_major, r->gpu.compute_minor, devices);
#else
    (void)r;
    (void)err;
#endif
    return TF_OK;
}

static void device_free(train_run *r)
{
#ifdef TWOFOLD_HAVE_CUDA
    cuda_context_destroy(&r->gpu);
#else
    (void)r;
#endif
}

static const train_technique device_technique = {
    .name = "device", .check = device_check, .on = device_on, .start = device_start, .free = device_free,
};

/* ---- chapter 05: --sync average, --staleness, --straggler ----------------------------------------- */

/* Rank 0's line on how the steps synchronize (the ranks, or the reference's simulation of them). */
static void describe_sync(const train_run *r)
{
    const train_command *c = r->c;
    char slow[64];
    const int ranks = r->group ? r->group->size : c->replicas;
    if (c->async.mode == SYNC_AVERAGE)
        printf("sync: average every %lld step(s) and at each epoch's end over %d %s, weighted by windows trained; "
               "%s optimizer per replica",
               (long long)c->async.every, ranks, r->group ? "rank(s)" : "replica(s) simulated serially",
               optimizer_kind_name(c->options.optimizer));
    else
        printf("sync: gradient all-reduce with staleness %d", c->async.staleness);
    printf("; straggler %s\n", straggler_name(&c->async.straggler, slow, sizeof slow));
}

static int async_on(const train_command *c, const comm *group) { return group && train_wants_async(c); }

/* --sync average and a checkpoint: each rank's replica has its own Adam state, a checkpoint one. The
 * line names the option given: "save from a synchronous run" told a user who gave --load to do
 * what they had done. */
static int refuse_checkpoint(const train_command *c, tf_error *err)
{
    return tf_error_set(err, TF_ERR_INPUT, "train: --sync average keeps one Adam state per rank and a checkpoint "
                        "holds one: drop %s", c->load ? "--load (resume with --sync allreduce)"
                                                      : "--save (save from a synchronous run)");
}

static int async_join(train_run *r, tf_error *err)
{
    const train_command *c = r->c;
    if (r->group->size > 1 && c->async.mode == SYNC_AVERAGE && (c->save || c->load))
        return refuse_checkpoint(c, err);
    return opt_async_create(&r->async, r->tr, r->group, &c->async, err);
}

static int async_epoch(train_run *r, epoch_report *report, tf_error *err)
{
    return opt_async_epoch(&r->async, r->seq, report, err);
}

static int async_report(train_run *r, tf_error *err)
{
    (void)err;
    if (r->speaks)
        printf("rank 0 spent %.3f s in the steps' exchanges (all-reduce waits or averages)\n",
               r->async.blocked_seconds);
    return TF_OK;
}

static void async_free(train_run *r) { opt_async_free(&r->async); }

static const train_technique async_technique = {
    .name = "async", .on = async_on, .join = async_join, .describe = describe_sync, .epoch = async_epoch,
    .report = async_report, .free = async_free,
};

/* --sync average in the reference: R replicas trained serially (ref/async.h); replica 0 is the model
 * reported, saved and dumped. */
static int replicas_check(const train_command *c, tf_error *err)
{
    if (c->replicas_given && c->async.mode != SYNC_AVERAGE && !c->stale_embeddings)
        return tf_error_set(err, TF_ERR_INPUT, "train: --replicas sets the ranks --sync average or --stale-embeddings "
                                               "simulate: add one");
    if ((c->save || c->load) && c->async.mode == SYNC_AVERAGE && c->replicas > 1)
        return refuse_checkpoint(c, err);
    return TF_OK;
}

static int replicas_on(const train_command *c, const comm *group) { return !group && c->async.mode == SYNC_AVERAGE; }

static int replicas_create(train_run *r, tf_error *err)
{
    const train_command *c = r->c;
    if (replica_set_create(&r->replicas, r->seq, &c->config, &c->options, c->replicas, c->async.every, err) != TF_OK)
        return TF_ERR_INPUT;
    r->tr = r->replicas.replicas;
    return TF_OK;
}

static int replicas_epoch(train_run *r, epoch_report *report, tf_error *err)
{
    return ref_local_average_epoch(&r->replicas, r->seq, report, err);
}

static void replicas_free(train_run *r) { replica_set_free(&r->replicas); }

static const train_technique replicas_technique = {
    .name = "replicas", .check = replicas_check, .on = replicas_on, .create = replicas_create,
    .describe = describe_sync, .epoch = replicas_epoch, .free = replicas_free,
};

/* --staleness 1 in the reference: each step applies the previous step's gradient. */
static int delayed_gradient_on(const train_command *c, const comm *group) { return !group && c->async.staleness; }

static int delayed_gradient_epoch(train_run *r, epoch_report *report, tf_error *err)
{
    return ref_delayed_epoch(r->tr, r->seq, report, err);
}

static const train_technique delayed_gradient_technique = {
    .name = "delayed gradient", .on = delayed_gradient_on, .describe = describe_sync, .epoch = delayed_gradient_epoch,
};

/* ---- --stale-embeddings: DGC's rule simulated serially (ref/async_embeddings.h) -------------------- */

static int stale_embeddings_check(const train_command *c, tf_error *err)
{
    if (!c->stale_embeddings)
        return TF_OK;
    if (!model_has(c->config.kind, MODEL_VERTEX_ROWS)) /* its rows stale on other ranks: a vertex split */
        return tf_error_set(err, TF_ERR_INPUT, "train: stale embeddings are a vertex split's, which does not take %s "
                                               "yet (see --split vertex)",
                            model_kind_name(c->config.kind));
    if (!model_has(c->config.kind, MODEL_STALE_PRODUCTS)) /* the rows it decides are graph products' operands */
        return tf_error_set(err, TF_ERR_INPUT, "train: stale embeddings do not take %s yet: %s",
                            model_kind_name(c->config.kind), model_lacks(c->config.kind, MODEL_STALE_PRODUCTS, NULL));
    if (c->optimized && !c->split.on)
        return tf_error_set(err, TF_ERR_INPUT, "train: stale embeddings change what the exchange mode sends: use "
                                               "--split vertex --mode exchange (or --impl ref --replicas R for the "
                                               "serial simulation)");
    if (c->async.mode == SYNC_AVERAGE || c->async.staleness)
        return tf_error_set(err, TF_ERR_INPUT, "train: choose one kind of staleness: --stale-embeddings with "
                                               "synchronous parameters");
    if (c->incremental)
        return tf_error_set(err, TF_ERR_INPUT, "train: --stale-embeddings and --incremental both change where T-GCN's "
                                               "aggregation comes from: choose one");
    return TF_OK;
}

static int stale_embeddings_on(const train_command *c, const comm *group)
{
    (void)group;
    return c->stale_embeddings;
}

/* The model runs on the simulation's kernels, vertex v on rank v mod R. */
static int stale_embeddings_start(train_run *r, tf_error *err)
{
    const int ranks = r->c->replicas;
    if (!(r->owner = tf_alloc((size_t)r->seq->num_nodes, sizeof(int32_t), "owners", err)))
        return TF_ERR_INPUT;
    partition_hash(r->seq->num_nodes, ranks, r->owner);
    if (stale_simulation_create(&r->stale, r->seq, r->owner, ranks, &r->c->stale, &ref_kernels, err) != TF_OK)
        return err->code;
    r->tr->model.kernels = &r->stale.table;
    return TF_OK;
}

static void stale_embeddings_describe(const train_run *r)
{
    char name[64];
    printf("stale embeddings: %s on %d simulated rank(s), vertex v on rank v mod %d\n",
           stale_schedule_name(&r->c->stale, name, sizeof name), r->c->replicas, r->c->replicas);
}

static int stale_embeddings_epoch(train_run *r, epoch_report *report, tf_error *err)
{
    return ref_stale_embeddings_epoch(&r->stale, r->tr, r->seq, report, err);
}

static int stale_embeddings_report(train_run *r, tf_error *err)
{
    (void)err;
    const stale_stats *st = &r->stale.stats;
    const double fresh = st->bytes_fresh ? (double)st->bytes_fresh : 1;
    char name[64];
    printf("stale embeddings %s on %d simulated rank(s): %llu of the exchange mode's %llu bytes sent, %.2f%% saved "
           "(exact reuse %.2f%%, stale reuse %.2f%%, bitmaps -%.2f%%); worst d/theta %.4f\n",
           stale_schedule_name(&r->c->stale, name, sizeof name), r->c->replicas, (unsigned long long)st->bytes_sent,
           (unsigned long long)st->bytes_fresh, 100.0 * (1.0 - (double)st->bytes_sent / fresh),
           100.0 * (double)st->bytes_exact / fresh, 100.0 * (double)st->bytes_stale / fresh,
           100.0 * (double)st->bytes_bitmap / fresh, st->worst_ratio);
    return TF_OK;
}

static void stale_embeddings_free(train_run *r)
{
    stale_simulation_free(&r->stale);
    free(r->owner);
    r->owner = NULL;
}

static const train_technique stale_embeddings_technique = {
    .name = "stale embeddings", .check = stale_embeddings_check, .on = stale_embeddings_on,
    .start = stale_embeddings_start, .describe = stale_embeddings_describe, .epoch = stale_embeddings_epoch,
    .report = stale_embeddings_report, .free = stale_embeddings_free,
};

/* ---- --incremental: ReInc's engine serves the aggregation of X_t (opt/incremental_inputs.h) -------- */

static int incremental_check(const train_command *c, tf_error *err)
{
    if (c->incremental && model_info_of(c->config.kind)->inputs == MODEL_INPUTS_CHEBYSHEV && c->config.chebyshev_k < 2)
        return tf_error_set(err, TF_ERR_INPUT, "train: --incremental with gconvgru serves the Chebyshev terms L^ X_t "
                                               "..; with --k 1 the basis is X_t itself: use --k 2 or more");
    return TF_OK;
}

static int incremental_on(const train_command *c, const comm *group)
{
    (void)group;
    return c->incremental && !c->minibatch.size; /* --minibatch serves each mini-batch itself */
}

static int incremental_start(train_run *r, tf_error *err)
{
    const incremental_inputs_options *o = &r->c->inputs;
    const double built = wall_seconds();
    if (incremental_inputs_create(&r->inputs, r->seq, r->tr, r->group, o, err) != TF_OK)
        return err->code;
    r->tr->model.inputs = &r->inputs.source;
    if (r->speaks)
        printf("incremental inputs (%s): deltas of %lld snapshots built in %.3f s; cache %s, %.0f%% of the "
               "aggregations; threshold %g entries per edge, refresh every %lld snapshots\n",
               r->inputs.kind == AGGREGATOR_CHEBYSHEV ? "GConvGRU's Chebyshev terms of X_t" : "T-GCN's A^ X_t",
               (long long)r->seq->num_snapshots, wall_seconds() - built, cache_policy_name(o->policy),
               100 * o->capacity, o->engine.threshold, (long long)o->engine.refresh_interval);
    return TF_OK;
}

static int incremental_report(train_run *r, tf_error *err)
{
    (void)err;
    const incremental_inputs *in = &r->inputs;
    if (r->speaks)
        printf("incremental inputs (rank 0): cache hit rate %.3f (%lld hits, %lld misses, %lld evicted); engine: %lld "
               "full recomputes (%lld above the threshold), %lld deltas\n",
               incremental_cache_hit_rate(&in->cache), (long long)in->cache.stats.hits,
               (long long)in->cache.stats.misses, (long long)in->cache.stats.evicted, (long long)in->engine.stats.full,
               (long long)in->engine.stats.fallbacks, (long long)in->engine.stats.incremental);
    return TF_OK;
}

static void incremental_free(train_run *r) { incremental_inputs_free(&r->inputs); }

static const train_technique incremental_technique = {
    .name = "incremental", .check = incremental_check, .on = incremental_on, .start = incremental_start,
    .report = incremental_report, .free = incremental_free,
};

/* ---- --profile: the epochs' kernels counted (opt/profile.h) ----------------------------------------- */

static int profile_check(const train_command *c, tf_error *err)
{
    if (c->profile && (c->split.on || c->stale_embeddings || c->replicas > 1))
        return tf_error_set(err, TF_ERR_INPUT, "train: --profile wraps the kernels of one model trained by windows: "
                                               "drop %s",
                            c->split.on ? "--split vertex" : c->stale_embeddings ? "--stale-embeddings" : "--replicas");
    return TF_OK;
}

static int profile_on(const train_command *c, const comm *group)
{
    (void)group;
    return c->profile;
}

/* Last of the starts: the model runs on a table that counts every kernel call, for the epochs only;
 * the collectives are counted by the comm. */
static int profile_start(train_run *r, tf_error *err)
{
    (void)err;
    profile_state *p = &r->profile;
    p->unprofiled = r->tr->model.kernels;
    p->comm_calls = r->group ? r->group->allreduce_calls : 0;
    p->comm_bytes = r->group ? r->group->bytes_sent : 0;
    p->comm_seconds = r->group ? r->group->allreduce_seconds : 0;
    r->tr->model.kernels = profile_wrap(p->unprofiled);
    return TF_OK;
}

static void profile_stop(train_run *r)
{
    const profile_state *p = &r->profile;
    r->tr->model.kernels = p->unprofiled;
    if (r->group)
        profile_add(PROFILE_COMMUNICATION, (int64_t)(r->group->allreduce_calls - p->comm_calls),
                    r->group->allreduce_seconds - p->comm_seconds, (double)(r->group->bytes_sent - p->comm_bytes));
}

static int profile_report(train_run *r, tf_error *err)
{
    const train_command *c = r->c;
    const int64_t epochs = r->tr->epoch - r->first_epoch;
    if (!r->speaks)
        return TF_OK;
    if (epochs == 0) {
        printf("profile: no epoch ran (--epochs %lld, and the run started at epoch %lld): nothing to profile\n",
               (long long)c->options.epochs, (long long)r->first_epoch);
        return TF_OK;
    }
    profile_peaks peaks;
    char whose[96];
    snprintf(whose, sizeof whose, "--impl %s%s, %s", c->optimized ? "opt" : "ref", c->gpu ? " --device cuda" : "",
             r->group && r->group->size > 1 ? "rank 0's own (each rank counts its own)" : "this process's");
    if (profile_measure_peaks(profile_counters_now(), &peaks, err) != TF_OK)
        return err->code;
    profile_print(stdout, profile_counters_now(), &peaks, r->epoch_seconds, epochs, whose);
    return TF_OK;
}

static const train_technique profile_technique = {
    .name = "profile", .check = profile_check, .on = profile_on, .start = profile_start, .stop = profile_stop,
    .report = profile_report,
};

/* The order of the hooks: the GPU's kernels before any technique's start; --schedule, --batching
 * hybrid, chapter 05's steps and the stale embeddings train the epoch in that order (they exclude
 * each other); the schedule's and the batches' summaries come before the ranks' communication line;
 * the profile wraps the kernels last. */
const train_technique *const train_techniques[] = {
    &device_technique,
    &train_scheduling_technique,
    &train_batching_technique,
    &ranks_technique,
    &async_technique,
    &replicas_technique,
    &delayed_gradient_technique,
    &stale_embeddings_technique,
    &incremental_technique,
    &train_minibatch_technique,
    &profile_technique,
    NULL,
};
