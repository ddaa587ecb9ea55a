#include "ref/models/node_memory.h"

#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"

int node_memory_create(node_memory *m, int64_t num_nodes, int64_t memory_width, int64_t mail_width, tf_error *err)
{
    return node_memory_create_mailbox(m, num_nodes, memory_width, mail_width, 1, err);
}

int node_memory_create_mailbox(node_memory *m, int64_t num_nodes, int64_t memory_width, int64_t mail_width,
                               int64_t mails, tf_error *err)
{
    memset(m, 0, sizeof *m);
    if (num_nodes < 1 || memory_width < 1 || mail_width < 1 || mails < 1)
        return tf_error_set(err, TF_ERR_INPUT,
                            "node memory: %lld vertices, widths %lld and %lld, %lld mails; expected >= 1",
                            (long long)num_nodes, (long long)memory_width, (long long)mail_width, (long long)mails);
    m->num_nodes = num_nodes;
    m->memory_width = memory_width;
    m->mail_width = mail_width;
    m->mails = mails;
    size_t n = (size_t)num_nodes, M = (size_t)mails;
    if (!(m->memory = tf_alloc(n, (size_t)memory_width * sizeof(float), "node memory", err)) ||
        !(m->memory_time = tf_alloc(n, sizeof(double), "node memory timestamps", err)) ||
        !(m->mail = tf_alloc(n * M, (size_t)mail_width * sizeof(float), "node mailboxes", err)) ||
        !(m->mail_time = tf_alloc(n * M, sizeof(double), "node mailbox timestamps", err)) ||
        !(m->mail_next = tf_alloc(n, sizeof(int32_t), "node mailbox positions", err))) {
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
    free(m->mail_next);
    memset(m, 0, sizeof *m);
}

void node_memory_reset(node_memory *m)
{
    size_t n = (size_t)m->num_nodes, M = (size_t)m->mails;
    memset(m->memory, 0, n * (size_t)m->memory_width * sizeof(float));
    memset(m->memory_time, 0, n * sizeof(double));
    memset(m->mail, 0, n * M * (size_t)m->mail_width * sizeof(float));
    memset(m->mail_time, 0, n * M * sizeof(double));
    memset(m->mail_next, 0, n * sizeof(int32_t));
}

void node_memory_gather(const node_memory *m, const int32_t *vertices, int64_t count, float *memory,
                        double *memory_time, float *mail, double *mail_time)
{
    const int64_t dm = m->memory_width, box = m->mails * m->mail_width, M = m->mails;
    for (int64_t k = 0; k < count; k++) {
        int64_t v = vertices[k];
        if (memory)
            memcpy(memory + k * dm, m->memory + v * dm, (size_t)dm * sizeof(float));
        if (memory_time)
            memory_time[k] = m->memory_time[v];
        if (mail)
            memcpy(mail + k * box, m->mail + v * box, (size_t)box * sizeof(float));
        if (mail_time)
            memcpy(mail_time + k * M, m->mail_time + v * M, (size_t)M * sizeof(double));
    }
}

void node_memory_deliver(node_memory *m, int32_t vertex, const float *mail, double time)
{
    const int64_t v = vertex, dmsg = m->mail_width, slot = v * m->mails + m->mail_next[v];
    memcpy(m->mail + slot * dmsg, mail, (size_t)dmsg * sizeof(float));
    m->mail_time[slot] = time;
    m->mail_next[v] = (int32_t)((m->mail_next[v] + 1) % m->mails);
}

void node_memory_store(node_memory *m, int32_t vertex, const float *memory, double time)
{
    const int64_t v = vertex, dm = m->memory_width;
    memcpy(m->memory + v * dm, memory, (size_t)dm * sizeof(float));
    m->memory_time[v] = time;
}

void node_memory_write(node_memory *m, int32_t vertex, const float *memory, double memory_time, const float *mail,
                       double mail_time)
{
    node_memory_store(m, vertex, memory, memory_time);
    node_memory_deliver(m, vertex, mail, mail_time);
}
