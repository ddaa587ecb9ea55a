#include "ref/models/node_memory.h"

#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"

int node_memory_create(node_memory *m, int64_t num_nodes, int64_t memory_width, int64_t mail_width, tf_error *err)
{
    memset(m, 0, sizeof *m);
    if (num_nodes < 1 || memory_width < 1 || mail_width < 1)
        return tf_error_set(err, TF_ERR_INPUT, "node memory: %lld vertices, widths %lld and %lld; expected >= 1",
                            (long long)num_nodes, (long long)memory_width, (long long)mail_width);
    m->num_nodes = num_nodes;
    m->memory_width = memory_width;
    m->mail_width = mail_width;
    size_t n = (size_t)num_nodes;
    if (!(m->memory = tf_alloc(n, (size_t)memory_width * sizeof(float), "node memory", err)) ||
        !(m->memory_time = tf_alloc(n, sizeof(double), "node memory timestamps", err)) ||
        !(m->mail = tf_alloc(n, (size_t)mail_width * sizeof(float), "node mailboxes", err)) ||
        !(m->mail_time = tf_alloc(n, sizeof(double), "node mailbox timestamps", err))) {
        node_memory_free(m);
        return TF_ERR_INPUT;
    }
    return TF_OK;
}

void node_memory_free(node_memory *m)
{
    free(m->memory);
    free(m->memory_time);
    free(m->mail);
    free(m->mail_time);
    memset(m, 0, sizeof *m);
}

void node_memory_reset(node_memory *m)
{
    size_t n = (size_t)m->num_nodes;
    memset(m->memory, 0, n * (size_t)m->memory_width * sizeof(float));
    memset(m->memory_time, 0, n * sizeof(double));
    memset(m->mail, 0, n * (size_t)m->mail_width * sizeof(float));
    memset(m->mail_time, 0, n * sizeof(double));
}

void node_memory_gather(const node_memory *m, const int32_t *vertices, int64_t count, float *memory,
                        double *memory_time, float *mail, double *mail_time)
{
    const int64_t dm = m->memory_width, dmsg = m->mail_width;
    for (int64_t k = 0; k < count; k++) {
        int64_t v = vertices[k];
        if (memory)
            memcpy(memory + k * dm, m->memory + v * dm, (size_t)dm * sizeof(float));
        if (memory_time)
            memory_time[k] = m->memory_time[v];
        if (mail)
            memcpy(mail + k * dmsg, m->mail + v * dmsg, (size_t)dmsg * sizeof(float));
        if (mail_time)
            mail_time[k] = m->mail_time[v];
    }
}

void node_memory_write(node_memory *m, int32_t vertex, const float *memory, double memory_time, const float *mail,
                       double mail_time)
{
    const int64_t v = vertex, dm = m->memory_width, dmsg = m->mail_width;
    memcpy(m->memory + v * dm, memory, (size_t)dm * sizeof(float));
    memcpy(m->mail + v * dmsg, mail, (size_t)dmsg * sizeof(float));
    m->memory_time[v] = memory_time;
    m->mail_time[v] = mail_time;
}
