/* The technique table's entry of chapter 04, Sven's redundancy-free dispatch.
 *
 * The reference: event-model training in one process (ref/train_events.h).
 * The twins: the distributed trainer (opt/train_events.h) in its four modes, sven, naive, depcache
 * and depcomm, on the ranks of the group (one process without MPI when there is none). A step is
 * one batch of an epoch (training, validation, test); before each, every twin adopts the
 * reference's parameters from before that batch (lockstep), and after it the union of the ranks'
 * node memory, mailbox and both timestamps, and the batch's scores, must be **bitwise** the
 * reference's: the error is the number of values that differ. The twins' times include the
 * parameter broadcast and the memory gather of lockstep, so the row shows bytes instead of a
 * speed: each mode's bytes per epoch (all ranks, comm-layer counts), the lower bound of a
 * partitioned memory (each unique remote row once), and the redundancy eta_1, eta_2.
 * The sweeps of bench/dispatch.c run it with their own parameters (verify/techniques/dispatch.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt/train_events.h"
#include "ref/core/memory.h"
#include "ref/nn/compare.h"
#include "verify/techniques/dispatch.h"

typedef struct dispatch_state {
    comm local;                         /* the group when the engine gives none */
    comm *group;
    event_stream events;                /* the prefix (owned) */
    event_model_config config;
    event_train_options options;
    event_trainer ref;                  /* the reference; runs on rank 0 */
    opt_event_trainer twin[4];           /* one per mode, on every rank */
    int twins_created;
    event_batch_spec *slots;            /* [steps] one epoch */
    int64_t steps;
    float *before;                      /* [P] the reference's parameters before the current batch */
    float *ref_scores;                  /* [2B] */
    float *twin_scores[4];              /* [2B] */
    node_memory gathered[4];            /* rank 0: each twin's memory union after the current batch */
    dispatch_traffic traffic[4];        /* each twin's epoch, summed over ranks */
    technique_twin descriptions[4];
} dispatch_state;

static void lockstep_teardown(void *state)
{
    dispatch_state *s = state;
    if (!s)
        return;
    event_trainer_free(&s->ref);
    for (int k = 0; k < 4; k++) {
        opt_event_trainer_free(&s->twin[k]);
        node_memory_free(&s->gathered[k]);
        free(s->twin_scores[k]);
    }
    free(s->slots);
    free(s->before);
    free(s->ref_scores);
    event_stream_free(&s->events);
    free(s);
}

static int lockstep_setup(const technique_context *context, const dataset *data, int variant, void **state, int *twins,
                          tf_error *err)
{
    if (data->kind != DATASET_EVENTS)
        return tf_error_set(err, TECHNIQUE_SKIP, "needs an event stream; %s is a snapshot sequence", data->name);
    const dispatch_params defaults = {"hash", DISPATCH_EVENTS, DISPATCH_BATCH, DISPATCH_WIDTH};
    const dispatch_params *p = context->params ? context->params : &defaults;
    dispatch_state *s = tf_alloc(1, sizeof *s, "dispatch technique", err);
    if (!(*state = s))
        return err->code;
    if (context->group) {
        s->group = context->group;
    } else {
        comm_init_local(&s->local);
        s->group = &s->local;
    }
    const event_stream *all = &data->events;
    if (event_stream_copy_prefix(all, p->events < all->num_events ? p->events : all->num_events, &s->events, err) !=
        TF_OK)
        return err->code;
    event_model_config_default(&s->config, (event_model_kind)variant);
    s->config.memory_width = s->config.time_width = s->config.embedding_width = p->width;
    s->config.edge_width = s->events.feature_width;
    event_train_options_default(&s->options);
    s->options.batch_size = p->batch;
    if (event_trainer_create(&s->ref, &s->events, s->events.features, &s->config, &s->options, err) != TF_OK)
        return err->code;
    const int64_t P = parameters_size(&s->ref.model.parameters), B = p->batch;
    s->steps = event_trainer_epoch_batches(&s->ref, NULL);
    if (!(s->slots = tf_alloc((size_t)s->steps, sizeof *s->slots, "batch slots", err)) ||
        !(s->before = tf_alloc((size_t)P, sizeof(float), "parameters", err)) ||
        !(s->ref_scores = tf_alloc((size_t)(2 * B), sizeof(float), "scores", err)))
        return err->code;
    event_trainer_epoch_batches(&s->ref, s->slots);
    for (int k = 0; k < 4; k++) {
        if (opt_event_trainer_create(&s->twin[k], &s->events, s->events.features, &s->config, &s->options,
                                        (dispatch_mode)k, p->placement, s->group, err) != TF_OK ||
            !(s->twin_scores[k] = tf_alloc((size_t)(2 * B), sizeof(float), "scores", err)))
            return err->code;
        if (s->group->rank == 0 &&
            node_memory_create_mailbox(&s->gathered[k], s->events.num_nodes, s->config.memory_width,
                                       event_model_mail_width(&s->ref.model), s->config.mails, err) != TF_OK)
            return err->code;
        s->descriptions[k] = (technique_twin){dispatch_mode_name((dispatch_mode)k), TECHNIQUE_BITWISE, 0};
    }
    *twins = 4;
    return TF_OK;
}

static const technique_twin *lockstep_twin(const void *state, int index)
{
    return &((const dispatch_state *)state)->descriptions[index];
}

static int64_t lockstep_steps(const void *state) { return ((const dispatch_state *)state)->steps; }

/* Rank 0: keep the parameters this batch starts from, then run it. */
static int lockstep_run_ref(void *state, int64_t step, tf_error *err)
{
    dispatch_state *s = state;
    parameters_pack_values(&s->ref.model.parameters, s->before);
    double loss;
    return event_trainer_run_batch(&s->ref, &s->slots[step], &loss, s->ref_scores, err);
}

/* Every rank: take the reference's parameters (rank 0 has them), run the batch, gather the
 * memory on rank 0; at the last step, sum the epoch's traffic. */
static int lockstep_run_twin(void *state, int twin, int64_t step, tf_error *err)
{
    dispatch_state *s = state;
    opt_event_trainer *tr = &s->twin[twin];
    if (s->group->rank == 0)
        parameters_unpack_values(&tr->base.model.parameters, s->before);
    double loss;
    if (opt_event_trainer_adopt_parameters(tr, 0, err) != TF_OK ||
        opt_event_trainer_run_batch(tr, &s->slots[step], &loss, s->twin_scores[twin], err) != TF_OK ||
        opt_event_trainer_gather_memory(tr, s->group->rank == 0 ? &s->gathered[twin] : NULL, err) != TF_OK)
        return err->code;
    if (step + 1 == s->steps)
        return opt_event_trainer_traffic(tr, &s->traffic[twin], 1, err);
    return TF_OK;
}

/* Rank 0 only, no collective: values of the memory union (every mailbox slot with its mail_ts, and
 * each ring's next slot: APAN's M mails) and the scores whose bits differ. */
static double lockstep_compare(void *state, int twin, int64_t step)
{
    const dispatch_state *s = state;
    const node_memory *a = &s->gathered[twin], *b = &s->ref.memory;
    int64_t rings = 0;
    for (int64_t v = 0; v < a->num_nodes; v++)
        rings += a->mail_next[v] != b->mail_next[v];
    return (double)(differing_values(a->memory, b->memory, a->num_nodes * a->memory_width) +
                    differing_values(a->mail, b->mail, a->num_nodes * a->mails * a->mail_width) +
                    differing_doubles(a->memory_time, b->memory_time, a->num_nodes) +
                    differing_doubles(a->mail_time, b->mail_time, a->num_nodes * a->mails) + rings +
                    differing_values(s->twin_scores[twin], s->ref_scores, 2 * s->slots[step].size));
}

static void lockstep_corrupt(void *state, int twin)
{
    dispatch_state *s = state;
    if (s->group->rank == 0) /* the gathered union lives on rank 0 */
        s->gathered[twin].memory[0] = technique_spoiled(s->gathered[twin].memory[0]);
}

static void lockstep_describe(const void *state, const double *seconds, char *text, size_t size)
{
    (void)seconds;
    const dispatch_state *s = state;
    const dispatch_traffic *sven = &s->traffic[DISPATCH_SVEN];
    size_t used = (size_t)snprintf(text, size, "%d rank(s), memory bytes/epoch:", s->group->size);
    for (int k = 0; k < 4 && used < size; k++) {
        const dispatch_bytes *b = &s->traffic[k].bytes;
        used += (size_t)snprintf(text + used, size - used, " %s %.3g", dispatch_mode_name((dispatch_mode)k),
                                 (double)(b->dispatch_rows + b->updates + b->update_gradients + b->aggregation));
    }
    if (used < size)
        snprintf(text + used, size - used, ", bound %.3g; eta_1 %.2f eta_2 %.2f",
                 (double)dispatch_traffic_lower_bound(sven, &s->ref.model),
                 dispatch_eta(sven->counts.entries, sven->counts.unique),
                 dispatch_eta(sven->counts.writes, sven->counts.written_per_trainer));
}

static const technique_case dispatch_demo[] = {
    {0, "wikipedia", "wikipedia, first 20,000 events"},
    {1, "events:nodes=200,events=20000,repeat=0.8,seed=1", "generated, repeat 0.8"},
    {0, NULL, NULL},
};

const technique technique_dispatch = {
    .name = "dispatch",
    .stem = "dispatch",
    .chapter = "04",
    .title = "Sven dispatch",
    .needs = "an event stream",
    .variants = event_model_kind_names, /* one row per event model, in its kind's order */
    .distributed = 1,
    .demo = dispatch_demo,
    .setup = lockstep_setup,
    .twin = lockstep_twin,
    .steps = lockstep_steps,
    .run_ref = lockstep_run_ref,
    .run_twin = lockstep_run_twin,
    .compare = lockstep_compare,
    .corrupt = lockstep_corrupt,
    .describe = lockstep_describe,
    .teardown = lockstep_teardown,
};
