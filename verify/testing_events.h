/* What the distributed event-trainer tests share (verify/test_dispatch_mpi.c,
 * verify/test_async_pipeline_mpi.c): a workload, the first events of a dataset with small widths
 * and a learning rate that moves the parameters, and the count of node-memory values whose bits
 * differ. Header-only, test-only. */
#ifndef TWOFOLD_VERIFY_TESTING_EVENTS_H
#define TWOFOLD_VERIFY_TESTING_EVENTS_H

#include "datasets/dataset.h"
#include "ref/models/node_memory.h"
#include "ref/train_events.h"
#include "verify/testing.h"

/* The memory, time and embedding widths: small, so that many ranks and batches run in seconds. */
#define WORKLOAD_WIDTH 4

/* The data and the model of a check. */
typedef struct workload {
    const char *label;           /* what the lines say */
    dataset data;                /* the whole dataset */
    event_stream events;         /* the events used (a prefix) */
    event_model_config config;
    event_train_options options;
} workload;

/* The first @p events events of dataset @p spec, model @p kind at WORKLOAD_WIDTH, batches of
 * @p batch. Free with workload_free(). */
static inline void workload_load(workload *w, const char *label, const char *spec, int64_t events,
                                 event_model_kind kind, int64_t batch)
{
    tf_error err;
    w->label = label;
    ck_assert_msg(dataset_load(spec, NULL, &w->data, &err) == TF_OK, "%s", err.message);
    const event_stream *all = &w->data.events;
    ck_assert(event_stream_copy_prefix(all, events < all->num_events ? events : all->num_events, &w->events, &err) ==
              TF_OK);
    event_model_config_default(&w->config, kind);
    w->config.memory_width = w->config.time_width = w->config.embedding_width = WORKLOAD_WIDTH;
    w->config.edge_width = w->events.feature_width;
    event_train_options_default(&w->options);
    w->options.batch_size = batch;
    w->options.learning_rate = 1e-2; /* parameters that move: a wrong gradient shows in the next batch */
}

static inline void workload_free(workload *w)
{
    event_stream_free(&w->events);
    dataset_free(&w->data);
}

/* Values of two memories of one shape whose bits differ (memory, every mail, both timestamps, ring
 * positions). */
static inline int64_t memory_differences(const node_memory *a, const node_memory *b)
{
    int64_t ring = 0;
    for (int64_t v = 0; v < a->num_nodes; v++)
        ring += a->mail_next[v] != b->mail_next[v];
    return differing_values(a->memory, b->memory, a->num_nodes * a->memory_width) +
           differing_values(a->mail, b->mail, a->num_nodes * a->mails * a->mail_width) +
           differing_doubles(a->memory_time, b->memory_time, a->num_nodes) +
           differing_doubles(a->mail_time, b->mail_time, a->num_nodes * a->mails) + ring;
}

#endif
