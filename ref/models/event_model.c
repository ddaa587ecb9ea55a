/* TGN, JODIE and APAN: parameters and the reference batch procedure (event_model.h has the math). */
#include "ref/models/event_model.h"
#include "ref/models/event_model_apan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/nn/layers.h"
#include "ref/nn/recurrent.h"
#include "ref/core/memory.h"
#include "ref/core/rng.h"
#include "ref/nn/time_encoding.h"
#include "ref/core/workspace.h"
#include "ref/nn/time_projection.h"

void event_model_config_default(event_model_config *config, event_model_kind kind)
{
    memset(config, 0, sizeof *config);
    config->kind = kind;
    config->memory_width = 32;
    config->time_width = 32;
    config->embedding_width = 32;
    config->edge_width = 0;
    config->heads = 2;
    config->neighbours = 10;
    config->mails = kind == EVENT_MODEL_APAN ? 10 : 1;
}

const char *const event_model_kind_names[] = {"tgn", "jodie", "apan", NULL};

const char *event_model_kind_name(event_model_kind kind) { return event_model_kind_names[kind]; }

const char *event_memory_update_name(event_memory_update rule)
{
    return rule == EVENT_MEMORY_PER_VERTEX ? "vertex" : "entry";
}

int event_model_kind_parse(const char *name, event_model_kind *kind, tf_error *err)
{
    for (int k = 0; event_model_kind_names[k]; k++)
        if (strcmp(name, event_model_kind_names[k]) == 0) {
            *kind = (event_model_kind)k;
            return TF_OK;
        }
    return tf_error_set(err, TF_ERR_INPUT, "event model \"%s\" is not one of tgn, jodie, apan", name);
}

int64_t event_model_mail_width(const event_model *m)
{
    return 2 * m->config.memory_width + m->config.edge_width;
}

/* ---- parameters ---------------------------------------------------------------------------- */

/* How a parameter starts: torch's defaults for each kind of module. */
typedef enum initial_values {
    INIT_UNIFORM,       /* uniform(-bound, bound): Linear 1/sqrt(fan_in), GRUCell/RNNCell 1/sqrt(H) */
    INIT_TIME_WEIGHT,   /* TGL's TimeEncode frequencies 10^(-9 i/(d-1)) */
    INIT_ZERO,          /* TimeEncode's phases, LayerNorm's bias */
    INIT_ONE,           /* LayerNorm's weight */
    INIT_NORMAL,        /* JODIE's NormalLinear(1, d): N(0, 1/sqrt(1)) */
} initial_values;

/* One row of the model's parameter table. */
typedef struct parameter_spec {
    char name[96];
    int64_t rows, columns;   /* columns 0: a vector of `rows` values */
    initial_values init;
    double bound;            /* INIT_UNIFORM's bound */
} parameter_spec;

enum { MAX_PARAMETERS = 32 };

typedef struct parameter_table {
    parameter_spec specs[MAX_PARAMETERS];
    int count;
} parameter_table;

static void table_add(parameter_table *t, const char *name, int64_t rows, int64_t columns, initial_values init,
                      double bound)
{
    parameter_spec *s = &t->specs[t->count++];
    snprintf(s->name, sizeof s->name, "%s", name);
    s->rows = rows;
    s->columns = columns;
    s->init = init;
    s->bound = bound;
}

/* A torch.nn.Linear(in, out) named PREFIX.weight [out][in] and PREFIX.bias [out]. */
static void table_add_linear(parameter_table *t, const char *prefix, int64_t in, int64_t out)
{
    char name[96];
    snprintf(name, sizeof name, "%s.weight", prefix);
    table_add(t, name, out, in, INIT_UNIFORM, 1.0 / sqrt((double)in));
    snprintf(name, sizeof name, "%s.bias", prefix);
    table_add(t, name, out, 0, INIT_UNIFORM, 1.0 / sqrt((double)in));
}

/* APAN's memory updater and embedding layer, in TGL's order (TransformerMemoryUpdater, then the
 * identity layer's LayerNorm). */
static void describe_apan(const event_model_config *c, parameter_table *t)
{
    const int64_t dm = c->memory_width, dt = c->time_width, dmsg = 2 * dm + c->edge_width;
    table_add(t, "memory_updater.time_enc.w.weight", dt, 1, INIT_TIME_WEIGHT, 0);
    table_add(t, "memory_updater.time_enc.w.bias", dt, 0, INIT_ZERO, 0);
    table_add_linear(t, "memory_updater.w_q", dm, dm);
    table_add_linear(t, "memory_updater.w_k", dmsg + dt, dm);
    table_add_linear(t, "memory_updater.w_v", dmsg + dt, dm);
    table_add(t, "memory_updater.layer_norm.weight", dm, 0, INIT_ONE, 0);
    table_add(t, "memory_updater.layer_norm.bias", dm, 0, INIT_ZERO, 0);
    table_add_linear(t, "memory_updater.mlp", dm, dm);
    table_add(t, "layers.l0h0.norm.weight", dm, 0, INIT_ONE, 0);
    table_add(t, "layers.l0h0.norm.bias", dm, 0, INIT_ZERO, 0);
}

/* TGN's and JODIE's memory updater: the recurrent cell (GRUCell or RNNCell) and its time encoder. */
static void describe_cell(const event_model_config *c, parameter_table *t)
{
    const int64_t dm = c->memory_width, dt = c->time_width, dmsg = 2 * dm + c->edge_width;
    const int64_t gates = c->kind == EVENT_MODEL_TGN ? 3 : 1;
    const double cell_bound = 1.0 / sqrt((double)dm);
    table_add(t, "memory_updater.updater.weight_ih", gates * dm, dmsg + dt, INIT_UNIFORM, cell_bound);
    table_add(t, "memory_updater.updater.weight_hh", gates * dm, dm, INIT_UNIFORM, cell_bound);
    table_add(t, "memory_updater.updater.bias_ih", gates * dm, 0, INIT_UNIFORM, cell_bound);
    table_add(t, "memory_updater.updater.bias_hh", gates * dm, 0, INIT_UNIFORM, cell_bound);
    table_add(t, "memory_updater.time_enc.w.weight", dt, 1, INIT_TIME_WEIGHT, 0);
    table_add(t, "memory_updater.time_enc.w.bias", dt, 0, INIT_ZERO, 0);
}

/* The whole model, in TGL's state_dict order: memory updater, embedding layer, edge predictor. */
static void describe_parameters(const event_model_config *c, parameter_table *t)
{
    const int64_t dm = c->memory_width, dt = c->time_width, de = c->edge_width, demb = c->embedding_width;
    t->count = 0;
    if (c->kind == EVENT_MODEL_APAN)
        describe_apan(c, t);
    else
        describe_cell(c, t);
    if (c->kind == EVENT_MODEL_TGN) {
        table_add(t, "layers.l0h0.time_enc.w.weight", dt, 1, INIT_TIME_WEIGHT, 0);
        table_add(t, "layers.l0h0.time_enc.w.bias", dt, 0, INIT_ZERO, 0);
        table_add_linear(t, "layers.l0h0.w_q", dm + dt, demb);
        table_add_linear(t, "layers.l0h0.w_k", dm + de + dt, demb);
        table_add_linear(t, "layers.l0h0.w_v", dm + de + dt, demb);
        table_add_linear(t, "layers.l0h0.w_out", demb + dm, demb);
        table_add(t, "layers.l0h0.layer_norm.weight", demb, 0, INIT_ONE, 0);
        table_add(t, "layers.l0h0.layer_norm.bias", demb, 0, INIT_ZERO, 0);
    } else if (c->kind == EVENT_MODEL_JODIE) {
        table_add(t, "layers.l0h0.norm.weight", dm, 0, INIT_ONE, 0);
        table_add(t, "layers.l0h0.norm.bias", dm, 0, INIT_ZERO, 0);
        table_add(t, "layers.l0h0t.time_emb.weight", dm, 1, INIT_NORMAL, 0);
        table_add(t, "layers.l0h0t.time_emb.bias", dm, 0, INIT_NORMAL, 0);
    }
    table_add_linear(t, "edge_predictor.src_fc", demb, demb);
    table_add_linear(t, "edge_predictor.dst_fc", demb, demb);
    table_add_linear(t, "edge_predictor.out_fc", demb, 1);
}

static void initialize(parameter *p, const parameter_spec *s, rng *r)
{
    float *values = p->value.data;
    for (int64_t i = 0; i < p->value.size; i++)
        switch (s->init) {
        case INIT_UNIFORM: values[i] = (float)((2.0 * rng_uniform(r) - 1.0) * s->bound); break;
        case INIT_ZERO: values[i] = 0.0f; break;
        case INIT_ONE: values[i] = 1.0f; break;
        case INIT_NORMAL: values[i] = (float)rng_normal(r); break;
        case INIT_TIME_WEIGHT: break;
        }
    if (s->init == INIT_TIME_WEIGHT)
        ref_time_encoding_init(values, NULL, p->value.size);
}

static parameter *find(const event_model *m, const char *name) { return parameters_find(&m->parameters, name); }

/* A torch module's two parameters, PREFIX.weight and PREFIX.bias. */
static void find_module(const event_model *m, const char *prefix, parameter **weight, parameter **bias)
{
    char name[96];
    snprintf(name, sizeof name, "%s.weight", prefix);
    *weight = find(m, name);
    snprintf(name, sizeof name, "%s.bias", prefix);
    *bias = find(m, name);
}

/* Point the named fields at the parameters (the list no longer grows, so pointers stay valid). */
static void bind_parameters(event_model *m)
{
    m->updater_weight_ih = find(m, "memory_updater.updater.weight_ih");
    m->updater_weight_hh = find(m, "memory_updater.updater.weight_hh");
    m->updater_bias_ih = find(m, "memory_updater.updater.bias_ih");
    m->updater_bias_hh = find(m, "memory_updater.updater.bias_hh");
    find_module(m, "memory_updater.time_enc.w", &m->memory_time_weight, &m->memory_time_bias);
    const event_model_config *c = &m->config;
    if (c->kind == EVENT_MODEL_TGN) {
        find_module(m, "layers.l0h0.time_enc.w", &m->attention_time_weight, &m->attention_time_bias);
        temporal_attention *a = &m->attention;
        a->node_width = c->memory_width;
        a->edge_width = c->edge_width;
        a->time_width = c->time_width;
        a->out_width = c->embedding_width;
        a->heads = c->heads;
        find_module(m, "layers.l0h0.w_q", &a->query_weight, &a->query_bias);
        find_module(m, "layers.l0h0.w_k", &a->key_weight, &a->key_bias);
        find_module(m, "layers.l0h0.w_v", &a->value_weight, &a->value_bias);
        find_module(m, "layers.l0h0.w_out", &a->output_weight, &a->output_bias);
        find_module(m, "layers.l0h0.layer_norm", &a->norm_weight, &a->norm_bias);
    } else if (c->kind == EVENT_MODEL_JODIE) {
        find_module(m, "layers.l0h0.norm", &m->norm_weight, &m->norm_bias);
        find_module(m, "layers.l0h0t.time_emb", &m->projection_weight, &m->projection_bias);
    } else {
        find_module(m, "layers.l0h0.norm", &m->norm_weight, &m->norm_bias);
        mailbox_attention *a = &m->mailbox;
        a->width = c->memory_width;
        a->mail_width = 2 * c->memory_width + c->edge_width + c->time_width;
        a->mails = c->mails;
        a->heads = c->heads;
        find_module(m, "memory_updater.w_q", &a->query_weight, &a->query_bias);
        find_module(m, "memory_updater.w_k", &a->key_weight, &a->key_bias);
        find_module(m, "memory_updater.w_v", &a->value_weight, &a->value_bias);
        find_module(m, "memory_updater.layer_norm", &a->norm_weight, &a->norm_bias);
        find_module(m, "memory_updater.mlp", &a->mlp_weight, &a->mlp_bias);
    }
    link_decoder *d = &m->decoder;
    d->width = c->embedding_width;
    find_module(m, "edge_predictor.src_fc", &d->source_weight, &d->source_bias);
    find_module(m, "edge_predictor.dst_fc", &d->destination_weight, &d->destination_bias);
    find_module(m, "edge_predictor.out_fc", &d->output_weight, &d->output_bias);
}

int event_model_create(event_model *m, const event_model_config *config, uint64_t seed, tf_error *err)
{
    memset(m, 0, sizeof *m);
    event_model_config c = *config;
    if (c.kind == EVENT_MODEL_JODIE) { /* JODIE's embedding is the projected memory; it samples nothing */
        c.embedding_width = c.memory_width;
        c.heads = 0;
        c.neighbours = 0;
    }
    if (c.kind == EVENT_MODEL_APAN) /* APAN's embedding is the normalized memory */
        c.embedding_width = c.memory_width;
    else
        c.mails = 1;
    if (c.kind != EVENT_MODEL_TGN && c.kind != EVENT_MODEL_JODIE && c.kind != EVENT_MODEL_APAN)
        return tf_error_set(err, TF_ERR_INPUT, "unknown event model kind %d", (int)c.kind);
    if (c.memory_update != EVENT_MEMORY_PER_ENTRY && c.memory_update != EVENT_MEMORY_PER_VERTEX)
        return tf_error_set(err, TF_ERR_INPUT, "unknown memory-update rule %d", (int)c.memory_update);
    if (c.memory_width < 1 || c.time_width < 1 || c.embedding_width < 1 || c.edge_width < 0)
        return tf_error_set(err, TF_ERR_INPUT,
                            "model %s: memory width %lld, time width %lld, embedding width %lld, edge features "
                            "%lld; expected widths >= 1 and edge features >= 0",
                            event_model_kind_name(c.kind), (long long)c.memory_width, (long long)c.time_width,
                            (long long)c.embedding_width, (long long)c.edge_width);
    if (c.kind == EVENT_MODEL_TGN && (c.heads < 1 || c.embedding_width % c.heads != 0 || c.neighbours < 1))
        return tf_error_set(err, TF_ERR_INPUT,
                            "model tgn: %lld heads, embedding width %lld, %d neighbours; expected heads >= 1 "
                            "dividing the embedding width and neighbours >= 1",
                            (long long)c.heads, (long long)c.embedding_width, c.neighbours);
    /* APAN's updater reads the whole ring at the batch's times; the per-vertex rule consumes one
     * message per vertex, which a ring of M mails does not have. */
    if (c.kind == EVENT_MODEL_APAN && c.memory_update != EVENT_MEMORY_PER_ENTRY)
        return tf_error_set(err, TF_ERR_INPUT, "model apan: --memory-update vertex consumes one message per vertex; "
                            "APAN's ring of mails is read whole at each entry's time: use entry");
    if (c.kind == EVENT_MODEL_APAN && (c.heads < 1 || c.memory_width % c.heads != 0 || c.neighbours < 1 || c.mails < 1))
        return tf_error_set(err, TF_ERR_INPUT,
                            "model apan: %lld heads, memory width %lld, %d neighbours, %lld mails; expected heads >= "
                            "1 dividing the memory width, neighbours >= 1 and mails >= 1",
                            (long long)c.heads, (long long)c.memory_width, c.neighbours, (long long)c.mails);
    m->config = c;
    m->kernels = &ref_kernels;
    parameter_table table;
    describe_parameters(&c, &table);
    for (int i = 0; i < table.count; i++) {
        const parameter_spec *s = &table.specs[i];
        int64_t shape[2] = {s->rows, s->columns};
        if (parameters_add(&m->parameters, s->name, s->columns ? 2 : 1, shape, err) < 0) {
            event_model_free(m);
            return TF_ERR_INPUT;
        }
    }
    bind_parameters(m);
    rng r;
    rng_seed(&r, seed);
    for (int i = 0; i < table.count; i++)
        initialize(&m->parameters.items[i], &table.specs[i], &r);
    return TF_OK;
}

void event_model_free(event_model *m)
{
    parameters_free(&m->parameters);
    memset(m, 0, sizeof *m);
}

/* ---- the batch: forward ---------------------------------------------------------------------- */

/* A zeroed array of the batch (of its tape, or the backward's scratch): from the tape's workspace,
 * taken back by event_tape_free(), or its own allocation, which the caller frees (tape_scratch_free()
 * for the backward's). Zeroed either way: the arrays are what tf_alloc() gave before workspaces. */
static void *tape_alloc(const event_tape *tape, size_t count, size_t size, const char *what, tf_error *err)
{
    return tape->scratch ? workspace_zeroed(tape->scratch, count, size, what, err) : tf_alloc(count, size, what, err);
}

/* tape_alloc() for an array every row of which the batch writes before it reads it (the updater's
 * inputs, cache and output): from a workspace not zeroed, since zeros would be overwritten unread
 * (most of an entry's bytes; the fast twin's distinct-row updater never reads the batch's own). */
static void *tape_alloc_written(const event_tape *tape, size_t count, size_t size, const char *what, tf_error *err)
{
    return tape->scratch ? workspace_alloc(tape->scratch, count, size, what, err) : tf_alloc(count, size, what, err);
}

static void tape_scratch_free(const event_tape *tape, void *array)
{
    if (!tape->scratch)
        free(array);
}

void event_tape_free(event_tape *tape)
{
    attention_tape_free(&tape->attention);
    mailbox_attention_tape_free(&tape->mailbox);
    if (tape->scratch) {
        workspace_reset(tape->scratch);
        memset(tape, 0, sizeof *tape);
        return;
    }
    void *arrays[] = {tape->vertex,        tape->time,           tape->neighbour_offset,  tape->neighbour_event,
                      tape->neighbour_delta, tape->memory,        tape->memory_time,      tape->updater_delta,
                      tape->updater_input, tape->updater_cache,  tape->updated,          tape->query_delta,
                      tape->query_time,    tape->neighbour_time,  tape->neighbour_edge,    tape->projection_delta,
                      tape->norm_output,   tape->norm_hat,       tape->norm_inverse_std, tape->embedding,
                      tape->positive_hidden, tape->negative_hidden, tape->message, tape->mail,
                      tape->mail_time,     tape->mail_delta,     tape->mail_input,       tape->recipient,
                      tape->delivery_vertex, tape->delivery_entry};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++)
        free(arrays[i]);
    memset(tape, 0, sizeof *tape);
}

/* The checks a batch must pass before anything is read. */
static int check_batch(const event_model *m, const temporal_csr *history, const event_batch *batch, tf_error *err)
{
    const event_model_config *c = &m->config;
    const event_stream *es = batch->events;
    if (batch->size < 1 || batch->first < 0 || batch->first + batch->size > es->num_events)
        return tf_error_set(err, TF_ERR_INPUT, "batch of %lld events from %lld is outside the stream of %lld events",
                            (long long)batch->size, (long long)batch->first, (long long)es->num_events);
    if ((c->edge_width > 0) != (batch->edge_features != NULL))
        return tf_error_set(err, TF_ERR_INPUT, "the model has %lld edge feature columns, but the batch %s",
                            (long long)c->edge_width, batch->edge_features ? "has edge features" : "has none");
    if (c->kind != EVENT_MODEL_JODIE && (!history || history->num_nodes != es->num_nodes))
        return tf_error_set(err, TF_ERR_INPUT, "model %s needs the temporal CSR of the batch's stream",
                            event_model_kind_name(c->kind));
    for (int64_t j = 0; j < batch->size; j++)
        if (batch->negatives[j] < 0 || batch->negatives[j] >= es->num_nodes)
            return tf_error_set(err, TF_ERR_INPUT, "negative destination %d of event %lld is outside 0..%lld",
                                batch->negatives[j], (long long)(batch->first + j), (long long)es->num_nodes - 1);
    return TF_OK;
}

/* Steps 1 and 2: the roots [src; dst; neg] at their events' times, then (TGN) the k most recent
 * neighbours of every root strictly before its time, appended as entries R, R+1, ... */
static int collect_entries(const event_model *m, const temporal_csr *history, const event_batch *batch,
                           event_tape *tape, tf_error *err)
{
    const event_stream *es = batch->events;
    const int64_t B = batch->size, R = 3 * B;
    const int64_t k = m->config.kind == EVENT_MODEL_TGN ? m->config.neighbours : 0;
    const size_t capacity = (size_t)(R + R * k);
    tape->batch_size = B;
    tape->roots = R;
    const char *what = "batch entries";
    if (!(tape->vertex = tape_alloc(tape, capacity, sizeof *tape->vertex, what, err)) ||
        !(tape->time = tape_alloc(tape, capacity, sizeof *tape->time, what, err)) ||
        !(tape->neighbour_offset = tape_alloc(tape, (size_t)R + 1, sizeof *tape->neighbour_offset, what, err)) ||
        !(tape->neighbour_event = tape_alloc(tape, (size_t)(R * k), sizeof *tape->neighbour_event, what, err)) ||
        !(tape->neighbour_delta = tape_alloc(tape, (size_t)(R * k), sizeof *tape->neighbour_delta, what, err)))
        return TF_ERR_INPUT;
    for (int64_t j = 0; j < B; j++) {
        int64_t event = batch->first + j;
        tape->vertex[j] = es->src[event];
        tape->vertex[B + j] = es->dst[event];
        tape->vertex[2 * B + j] = batch->negatives[j];
        tape->time[j] = tape->time[B + j] = tape->time[2 * B + j] = es->time[event];
    }
    int64_t E = 0;
    for (int64_t r = 0; r < R; r++) {
        tape->neighbour_offset[r] = E;
        if (k == 0)
            continue;
        int found = temporal_csr_recent(history, tape->vertex[r], tape->time[r], (int)k, tape->vertex + R + E,
                                        tape->neighbour_event + E, tape->time + R + E);
        for (int i = 0; i < found; i++)
            tape->neighbour_delta[E + i] = (float)(tape->time[r] - tape->time[R + E + i]);
        E += found;
    }
    tape->neighbour_offset[R] = E;
    tape->entries = R + E;
    return TF_OK;
}

int event_tape_alloc_entries(const event_model *m, event_tape *tape, int64_t entries, tf_error *err)
{
    const size_t N = (size_t)entries, dm = (size_t)m->config.memory_width;
    const size_t dmsg = (size_t)event_model_mail_width(m), din = dmsg + (size_t)m->config.time_width;
    tape->entries = entries;
    if ((!tape->vertex && !(tape->vertex = tape_alloc(tape, N, sizeof *tape->vertex, "batch entries", err))) ||
        (!tape->time && !(tape->time = tape_alloc(tape, N, sizeof *tape->time, "batch entries", err))) ||
        !(tape->memory = tape_alloc(tape, N * dm, sizeof(float), "batch memory rows", err)) ||
        !(tape->memory_time = tape_alloc(tape, N, sizeof(double), "batch memory rows", err)) ||
        !(tape->mail = tape_alloc(tape, N * (size_t)m->config.mails * dmsg, sizeof(float), "batch mail rows", err)) ||
        !(tape->mail_time = tape_alloc(tape, N * (size_t)m->config.mails, sizeof(double), "batch mail rows", err)) ||
        !(tape->updated = tape_alloc_written(tape, N * dm, sizeof(float), "updated memory", err)) ||
        !(tape->message = tape_alloc(tape, dmsg, sizeof(float), "message", err)))
        return TF_ERR_INPUT;
    if (m->config.kind == EVENT_MODEL_APAN)
        return event_model_apan_alloc_entries(m, tape, entries, err);
    if (!(tape->updater_delta = tape_alloc_written(tape, N, sizeof(float), "batch memory rows", err)) ||
        !(tape->updater_input = tape_alloc_written(tape, N * din, sizeof(float), "memory updater inputs", err)) ||
        (m->config.kind == EVENT_MODEL_TGN &&
         !(tape->updater_cache =
               tape_alloc_written(tape, N * (size_t)GRU_CACHE_WIDTH(dm), sizeof(float), "GRU cache", err))))
        return TF_ERR_INPUT;
    return TF_OK;
}

int event_model_collect(const event_model *m, const temporal_csr *history, const event_batch *batch,
                        event_tape *tape, tf_error *err)
{
    return event_model_collect_in(m, history, batch, NULL, tape, err);
}

int event_model_collect_in(const event_model *m, const temporal_csr *history, const event_batch *batch,
                           workspace *scratch, event_tape *tape, tf_error *err)
{
    memset(tape, 0, sizeof *tape);
    tape->scratch = m->config.kind == EVENT_MODEL_APAN ? NULL : scratch; /* APAN's allocates its own */
    int status = check_batch(m, history, batch, err);
    if (status == TF_OK)
        status = m->config.kind == EVENT_MODEL_APAN ? event_model_apan_collect(m, history, batch, tape, err)
                                                    : collect_entries(m, history, batch, tape, err);
    if (status == TF_OK)
        status = event_tape_alloc_entries(m, tape, tape->entries, err);
    if (status != TF_OK)
        event_tape_free(tape);
    return status;
}

int event_model_read_memory(const event_model *m, const node_memory *memory, event_tape *tape, tf_error *err)
{
    if (memory->memory_width != m->config.memory_width || memory->mail_width != event_model_mail_width(m) ||
        memory->mails != m->config.mails)
        return tf_error_set(err, TF_ERR_INPUT,
                            "node memory of widths %lld and %lld, %lld mails; the model needs widths %lld and %lld, "
                            "%lld mails",
                            (long long)memory->memory_width, (long long)memory->mail_width, (long long)memory->mails,
                            (long long)m->config.memory_width, (long long)event_model_mail_width(m),
                            (long long)m->config.mails);
    for (int64_t k = 0; k < tape->entries; k++)
        if (tape->vertex[k] < 0 || tape->vertex[k] >= memory->num_nodes)
            return tf_error_set(err, TF_ERR_INPUT, "vertex %d of batch entry %lld is outside the node memory of %lld "
                                "vertices", tape->vertex[k], (long long)k, (long long)memory->num_nodes);
    /* The naive read: every entry its own copy, so a vertex occurring five times is copied five times. */
    node_memory_gather(memory, tape->vertex, tape->entries, tape->memory, tape->memory_time, tape->mail,
                       tape->mail_time);
    return TF_OK;
}

double event_model_update_time(const event_model *m, const event_tape *tape, int64_t k)
{
    return m->config.memory_update == EVENT_MEMORY_PER_VERTEX ? tape->mail_time[k] : tape->time[k];
}

void event_model_update(const event_model *m, event_tape *tape)
{
    if (m->config.kind == EVENT_MODEL_APAN) {
        event_model_apan_update(m, tape);
        return;
    }
    const int64_t N = tape->entries, dm = m->config.memory_width, dt = m->config.time_width;
    const int64_t dmsg = event_model_mail_width(m), din = dmsg + dt;
    for (int64_t k = 0; k < N; k++) {
        tape->updater_delta[k] = (float)(event_model_update_time(m, tape, k) - tape->memory_time[k]);
        memcpy(tape->updater_input + k * din, tape->mail + k * dmsg, (size_t)dmsg * sizeof(float));
    }
    m->kernels->time_encoding_forward(tape->updater_delta, N, m->memory_time_weight->value.data,
                              m->memory_time_bias->value.data, dt, din, tape->updater_input + dmsg);
    const kernels *k = m->kernels;
    const float *x = tape->updater_input, *h = tape->memory, *w_ih = m->updater_weight_ih->value.data,
                *w_hh = m->updater_weight_hh->value.data, *b_ih = m->updater_bias_ih->value.data,
                *b_hh = m->updater_bias_hh->value.data;
    if (m->config.kind == EVENT_MODEL_TGN) {
        k->gru_cell_forward(x, h, w_ih, w_hh, b_ih, b_hh, N, din, dm, tape->updated, tape->updater_cache);
    } else { /* ref_rnn_cell_forward()'s steps, on the model's kernels */
        k->linear_forward(x, w_ih, b_ih, N, din, dm, tape->updated);
        k->linear_accumulate(h, w_hh, N, dm, dm, tape->updated);
        k->add_bias(tape->updated, b_hh, N, dm);
        k->tanh_forward(tape->updated, N * dm, tape->updated);
    }
}

/* Step 5, TGN: attention of every root over its sampled neighbours, h = s' for both. */
static int embed_tgn(const event_model *m, const event_batch *batch, event_tape *tape, tf_error *err)
{
    const int64_t R = tape->roots, E = tape->entries - R, dm = m->config.memory_width, dt = m->config.time_width,
                  de = m->config.edge_width;
    if (!(tape->query_delta = tape_alloc(tape, (size_t)R, sizeof(float), "attention time encodings", err)) ||
        !(tape->query_time = tape_alloc(tape, (size_t)(R * dt), sizeof(float), "attention time encodings", err)) ||
        !(tape->neighbour_time = tape_alloc(tape, (size_t)(E * dt), sizeof(float), "attention time encodings", err)) ||
        (de > 0 &&
         !(tape->neighbour_edge = tape_alloc(tape, (size_t)(E * de), sizeof(float), "neighbour edge features", err))))
        return TF_ERR_INPUT;
    const float *w = m->attention_time_weight->value.data, *b = m->attention_time_bias->value.data;
    m->kernels->time_encoding_forward(tape->query_delta, R, w, b, dt, dt, tape->query_time); /* phi(0) */
    m->kernels->time_encoding_forward(tape->neighbour_delta, E, w, b, dt, dt, tape->neighbour_time);
    for (int64_t e = 0; e < E && de > 0; e++)
        memcpy(tape->neighbour_edge + e * de, batch->edge_features + tape->neighbour_event[e] * de,
               (size_t)de * sizeof(float));
    return ref_temporal_attention_forward(m->kernels, &m->attention, R, tape->neighbour_offset, tape->updated,
                                          tape->query_time, tape->updated + R * dm, tape->neighbour_edge,
                                          tape->neighbour_time, tape->scratch, &tape->attention, tape->embedding, err);
}

/* Step 5, JODIE: z = LayerNorm(s') * (1 + W_tau delta~ + b_tau), delta~ = (t - t_u) / (t + 1), t_u the
 * time of u's latest event before the batch: mem_ts (= mail_ts) per entry, mail_ts per vertex, where
 * mem_ts lags one message behind. */
static int embed_jodie(const event_model *m, event_tape *tape, tf_error *err)
{
    const int64_t R = tape->roots, dm = m->config.memory_width;
    if (!(tape->projection_delta = tape_alloc(tape, (size_t)R, sizeof(float), "time projection", err)) ||
        !(tape->norm_output = tape_alloc(tape, (size_t)(R * dm), sizeof(float), "time projection", err)) ||
        !(tape->norm_hat = tape_alloc(tape, (size_t)(R * dm), sizeof(float), "time projection", err)) ||
        !(tape->norm_inverse_std = tape_alloc(tape, (size_t)R, sizeof(float), "time projection", err)))
        return TF_ERR_INPUT;
    const double *latest = m->config.memory_update == EVENT_MEMORY_PER_VERTEX ? tape->mail_time : tape->memory_time;
    for (int64_t r = 0; r < R; r++)
        tape->projection_delta[r] = (float)((tape->time[r] - latest[r]) / (tape->time[r] + 1.0));
    ref_layer_norm_forward(tape->updated, m->norm_weight->value.data, m->norm_bias->value.data, R, dm,
                           ATTENTION_NORM_EPSILON, tape->norm_output, tape->norm_hat, tape->norm_inverse_std);
    ref_time_projection_forward(tape->norm_output, tape->projection_delta, R, dm, m->projection_weight->value.data,
                                m->projection_bias->value.data, tape->embedding);
    return TF_OK;
}

/* Step 5, APAN: z = LayerNorm(s'), TGL's identity layer. */
static int embed_apan(const event_model *m, event_tape *tape, tf_error *err)
{
    const int64_t R = tape->roots, dm = m->config.memory_width;
    if (!(tape->norm_hat = tape_alloc(tape, (size_t)(R * dm), sizeof(float), "embedding norm", err)) ||
        !(tape->norm_inverse_std = tape_alloc(tape, (size_t)R, sizeof(float), "embedding norm", err)))
        return TF_ERR_INPUT;
    ref_layer_norm_forward(tape->updated, m->norm_weight->value.data, m->norm_bias->value.data, R, dm,
                           ATTENTION_NORM_EPSILON, tape->embedding, tape->norm_hat, tape->norm_inverse_std);
    return TF_OK;
}

int event_model_embed(const event_model *m, const event_batch *batch, event_tape *tape, float *scores, tf_error *err)
{
    const int64_t B = tape->batch_size, demb = m->config.embedding_width;
    if (!(tape->embedding = tape_alloc(tape, (size_t)(3 * B * demb), sizeof(float), "embeddings", err)) ||
        !(tape->positive_hidden = tape_alloc(tape, (size_t)(B * demb), sizeof(float), "decoder", err)) ||
        !(tape->negative_hidden = tape_alloc(tape, (size_t)(B * demb), sizeof(float), "decoder", err)))
        return TF_ERR_INPUT;
    int status = m->config.kind == EVENT_MODEL_TGN     ? embed_tgn(m, batch, tape, err)
                 : m->config.kind == EVENT_MODEL_JODIE ? embed_jodie(m, tape, err)
                                                       : embed_apan(m, tape, err);
    if (status != TF_OK)
        return status;
    /* Roots are [src; dst; neg]: positives pair rows j and B + j, negatives rows j and 2B + j. */
    const float *source = tape->embedding, *destination = source + B * demb, *negative = source + 2 * B * demb;
    ref_link_decoder_forward(m->kernels, &m->decoder, source, destination, B, tape->positive_hidden, scores);
    ref_link_decoder_forward(m->kernels, &m->decoder, source, negative, B, tape->negative_hidden, scores + B);
    return TF_OK;
}

int event_model_forward(const event_model *m, const node_memory *memory, const temporal_csr *history,
                        const event_batch *batch, event_tape *tape, float *scores, tf_error *err)
{
    return event_model_forward_in(m, memory, history, batch, NULL, tape, scores, err);
}

int event_model_forward_in(const event_model *m, const node_memory *memory, const temporal_csr *history,
                           const event_batch *batch, workspace *scratch, event_tape *tape, float *scores,
                           tf_error *err)
{
    if (memory->num_nodes < batch->events->num_nodes) {
        memset(tape, 0, sizeof *tape);
        return tf_error_set(err, TF_ERR_INPUT, "node memory of %lld vertices; the stream has %lld",
                            (long long)memory->num_nodes, (long long)batch->events->num_nodes);
    }
    int status = event_model_collect_in(m, history, batch, scratch, tape, err);
    if (status != TF_OK)
        return status;
    status = event_model_read_memory(m, memory, tape, err);
    if (status == TF_OK) {
        event_model_update(m, tape);
        status = event_model_embed(m, batch, tape, scores, err);
    }
    if (status != TF_OK)
        event_tape_free(tape);
    return status;
}

void event_model_loss_sums(const float *scores, int64_t count, int64_t batch_size, float *dscores, double sums[2])
{
    sums[0] = ref_bce_with_logits_sum(scores, count, 1.0f, batch_size, dscores);
    sums[1] = ref_bce_with_logits_sum(scores + count, count, 0.0f, batch_size, dscores ? dscores + count : NULL);
}

double event_model_loss(const float *scores, int64_t batch_size, float *dscores)
{
    double sums[2];
    event_model_loss_sums(scores, batch_size, batch_size, dscores, sums);
    return sums[0] / (double)batch_size + sums[1] / (double)batch_size;
}

/* ---- the batch: backward ---------------------------------------------------------------------- */

/* Step 5 backward, TGN: attention, then its time encoder (phi(0) for queries, phi(t - t_e) for
 * keys). dembedding [roots][embedding_width] in; dupdated [entries][memory_width] added into. */
static int backward_tgn(event_model *m, const event_tape *tape, const float *dembedding, float *dupdated,
                        tf_error *err)
{
    const int64_t R = tape->roots, E = tape->entries - R, dm = m->config.memory_width, dt = m->config.time_width;
    float *dquery_time = tape_alloc(tape, (size_t)(R * dt), sizeof(float), "attention time gradients", err);
    float *dneighbour_time =
        dquery_time ? tape_alloc(tape, (size_t)(E * dt), sizeof(float), "attention time gradients", err) : NULL;
    int status = dneighbour_time ? TF_OK : TF_ERR_INPUT;
    if (status == TF_OK)
        status = ref_temporal_attention_backward(m->kernels, &m->attention, &tape->attention, dembedding, dupdated,
                                                 dquery_time, dupdated + R * dm, dneighbour_time, err);
    if (status == TF_OK) {
        const float *w = m->attention_time_weight->value.data, *b = m->attention_time_bias->value.data;
        double *dw = m->attention_time_weight->sums, *db = m->attention_time_bias->sums;
        m->kernels->time_encoding_backward(tape->query_delta, R, w, b, dt, dt, dquery_time, dw, db);
        m->kernels->time_encoding_backward(tape->neighbour_delta, E, w, b, dt, dt, dneighbour_time, dw, db);
    }
    tape_scratch_free(tape, dquery_time);
    tape_scratch_free(tape, dneighbour_time);
    return status;
}

/* Step 5 backward, JODIE: time projection, then LayerNorm. dembedding [roots][embedding_width]
 * in; dupdated [entries][memory_width] added into. */
static int backward_jodie(event_model *m, const event_tape *tape, const float *dembedding, float *dupdated,
                          tf_error *err)
{
    const int64_t R = tape->roots, dm = m->config.memory_width;
    float *dnorm_output = tape_alloc(tape, (size_t)(R * dm), sizeof(float), "time projection gradients", err);
    if (!dnorm_output)
        return TF_ERR_INPUT;
    ref_time_projection_backward(tape->norm_output, tape->projection_delta, R, dm, m->projection_weight->value.data,
                                 m->projection_bias->value.data, dembedding, dnorm_output, m->projection_weight->sums,
                                 m->projection_bias->sums);
    ref_layer_norm_backward(tape->norm_hat, tape->norm_inverse_std, m->norm_weight->value.data, dnorm_output, R, dm,
                            dupdated, m->norm_weight->sums, m->norm_bias->sums);
    tape_scratch_free(tape, dnorm_output);
    return TF_OK;
}

int event_model_backward_updater(event_model *m, const event_tape *tape, const float *dupdated, tf_error *err)
{
    if (m->config.kind == EVENT_MODEL_APAN)
        return event_model_apan_backward_updater(m, tape, dupdated, err);
    const int64_t N = tape->entries, dm = m->config.memory_width, dt = m->config.time_width;
    const int64_t dmsg = event_model_mail_width(m), din = dmsg + dt;
    float *dinput = tape_alloc(tape, (size_t)(N * din), sizeof(float), "memory updater gradients", err);
    /* the cell's gate gradients: [2N][3 d_mem] (GRU) or [N][d_mem] (RNN) */
    const int64_t gates = m->config.kind == EVENT_MODEL_TGN ? 6 * dm : dm;
    float *scratch =
        dinput ? tape_alloc(tape, (size_t)(N * gates), sizeof(float), "memory updater gradients", err) : NULL;
    if (!scratch) {
        tape_scratch_free(tape, dinput);
        return TF_ERR_INPUT;
    }
    /* The cell's own backward for the gate gradients and dinput; its parameter gradients come
     * from the gate gradients, into the double sums (the cells' float ones are for the
     * snapshot models). GRU: scratch holds [N][3 d_mem] of the input map, then [N][3 d_mem] of
     * the recurrent one; RNN: one [N][d_mem] for both. */
    const float *x = tape->updater_input, *h = tape->memory, *w_ih = m->updater_weight_ih->value.data,
                *w_hh = m->updater_weight_hh->value.data;
    const kernels *k = m->kernels;
    if (m->config.kind == EVENT_MODEL_TGN) {
        k->gru_cell_backward(x, h, w_ih, w_hh, tape->updater_cache, dupdated, N, din, dm, scratch, dinput, NULL, NULL,
                             NULL, NULL, NULL);
        k->linear_backward_sums(x, w_ih, scratch, N, din, 3 * dm, NULL, m->updater_weight_ih->sums,
                                m->updater_bias_ih->sums);
        k->linear_backward_sums(h, w_hh, scratch + N * 3 * dm, N, dm, 3 * dm, NULL, m->updater_weight_hh->sums,
                                m->updater_bias_hh->sums);
    } else { /* ref_rnn_cell_backward()'s steps, on the model's kernels, dinput with the input map's sums */
        memset(scratch, 0, (size_t)(N * dm) * sizeof(float));
        k->tanh_backward(tape->updated, dupdated, N * dm, scratch);
        k->linear_backward_sums(x, w_ih, scratch, N, din, dm, dinput, m->updater_weight_ih->sums,
                                m->updater_bias_ih->sums);
        k->linear_backward_sums(h, w_hh, scratch, N, dm, dm, NULL, m->updater_weight_hh->sums,
                                m->updater_bias_hh->sums);
    }
    m->kernels->time_encoding_backward(tape->updater_delta, N, m->memory_time_weight->value.data,
                               m->memory_time_bias->value.data, dt, din, dinput + dmsg, m->memory_time_weight->sums,
                               m->memory_time_bias->sums);
    tape_scratch_free(tape, dinput);
    tape_scratch_free(tape, scratch);
    return TF_OK;
}

int event_model_backward_embedding(event_model *m, const event_tape *tape, const float *dscores, float *dupdated,
                                   tf_error *err)
{
    const int64_t B = tape->batch_size, R = tape->roots, demb = m->config.embedding_width;
    float *dembedding = tape_alloc(tape, (size_t)(R * demb), sizeof(float), "embedding gradients", err);
    float *dhidden = dembedding ? tape_alloc(tape, (size_t)(B * demb), sizeof(float), "decoder gradients", err) : NULL;
    int status = dhidden ? TF_OK : TF_ERR_INPUT;
    if (status == TF_OK) {
        const float *source = tape->embedding, *destination = source + B * demb, *negative = source + 2 * B * demb;
        float *dsource = dembedding, *ddestination = dsource + B * demb, *dnegative = dsource + 2 * B * demb;
        ref_link_decoder_backward(m->kernels, &m->decoder, source, destination, tape->positive_hidden, dscores, B, dhidden,
                                  dsource, ddestination);
        ref_link_decoder_backward(m->kernels, &m->decoder, source, negative, tape->negative_hidden, dscores + B, B, dhidden,
                                  dsource, dnegative);
        if (m->config.kind == EVENT_MODEL_TGN)
            status = backward_tgn(m, tape, dembedding, dupdated, err);
        else if (m->config.kind == EVENT_MODEL_JODIE)
            status = backward_jodie(m, tape, dembedding, dupdated, err);
        else /* APAN: z = LayerNorm(s') */
            ref_layer_norm_backward(tape->norm_hat, tape->norm_inverse_std, m->norm_weight->value.data, dembedding,
                                    R, m->config.memory_width, dupdated, m->norm_weight->sums, m->norm_bias->sums);
    }
    tape_scratch_free(tape, dembedding);
    tape_scratch_free(tape, dhidden);
    return status;
}

int event_model_backward(event_model *m, const event_tape *tape, const float *dscores, tf_error *err)
{
    const int64_t N = tape->entries, dm = m->config.memory_width;
    float *dupdated = tape_alloc(tape, (size_t)(N * dm), sizeof(float), "memory gradients", err);
    int status = dupdated ? event_model_backward_embedding(m, tape, dscores, dupdated, err) : TF_ERR_INPUT;
    if (status == TF_OK)
        status = event_model_backward_updater(m, tape, dupdated, err);
    if (status == TF_OK)
        parameters_round_sums(&m->parameters);
    tape_scratch_free(tape, dupdated);
    return status;
}

/* ---- the batch: write-back ------------------------------------------------------------------- */

void event_model_entry_message(const event_model *m, const event_tape *tape, const event_batch *batch, int64_t entry,
                               float *mail)
{
    const int64_t B = tape->batch_size, dm = m->config.memory_width, de = m->config.edge_width;
    const int64_t j = entry % B, other = entry < B ? B + j : j;
    memcpy(mail, tape->updated + entry * dm, (size_t)dm * sizeof(float));
    memcpy(mail + dm, tape->updated + other * dm, (size_t)dm * sizeof(float));
    if (de > 0)
        memcpy(mail + 2 * dm, batch->edge_features + (batch->first + j) * de, (size_t)de * sizeof(float));
}

void event_model_write_memory(const event_model *m, const event_tape *tape, const event_batch *batch,
                              node_memory *memory)
{
    if (m->config.kind == EVENT_MODEL_APAN) {
        event_model_apan_write_memory(m, tape, batch, memory);
        return;
    }
    const event_stream *es = batch->events;
    const int64_t B = tape->batch_size, dm = m->config.memory_width;
    /* The order of this loop *is* the conflict rule: events in increasing index, and within an
     * event the source before the destination; a later write overwrites an earlier one, so the
     * largest event index wins and the destination wins within its event. */
    for (int64_t j = 0; j < B; j++) {
        const int64_t event = batch->first + j;
        event_model_entry_message(m, tape, batch, j, tape->message);
        node_memory_write(memory, es->src[event], tape->updated + j * dm, event_model_update_time(m, tape, j),
                          tape->message, es->time[event]);
        event_model_entry_message(m, tape, batch, B + j, tape->message);
        node_memory_write(memory, es->dst[event], tape->updated + (B + j) * dm,
                          event_model_update_time(m, tape, B + j), tape->message, es->time[event]);
    }
}
