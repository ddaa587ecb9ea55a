/* DGC's stale fetcher: the exchange policy and its caches (opt/async_embeddings.h). */
#include "opt/async_embeddings.h"

#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"

/* The caches of forward transfer `key`, created (empty) on first use. */
static stale_link_caches *link_for(stale_fetcher *f, exchange_key key, int64_t width, tf_error *err)
{
    const int64_t t = key.snapshot, call = key.call;
    if (t < 0 || t >= f->num_snapshots || call < 0) {
        tf_error_set(err, TF_ERR_INPUT, "stale fetcher: transfer (snapshot %lld, product %lld) outside 0..%lld",
                     (long long)t, (long long)call, (long long)f->num_snapshots - 1);
        return NULL;
    }
    if (call >= f->call_count[t]) {
        stale_link_caches *grown = realloc(f->links[t], (size_t)(call + 1) * sizeof *grown);
        if (!grown) {
            tf_error_set(err, TF_ERR_SYSTEM, "stale fetcher: out of memory");
            return NULL;
        }
        f->links[t] = grown;
        for (int64_t c = f->call_count[t]; c <= call; c++) {
            stale_link_caches *l = &grown[c];
            memset(l, 0, sizeof *l);
            const size_t ranks = (size_t)f->group->size;
            l->send_count = tf_alloc(2 * ranks, sizeof(int64_t), "stale caches", err);
            l->send = l->send_count ? tf_alloc(2 * ranks, sizeof(float *), "stale caches", err) : NULL;
            f->call_count[t] = c + 1; /* freed by stale_fetcher_free whatever happens next */
            if (!l->send)
                return NULL;
            l->receive_count = l->send_count + ranks;
            l->receive = l->send + ranks;
            for (size_t p = 0; p < 2 * ranks; p++)
                l->send_count[p] = -1;
        }
    }
    stale_link_caches *l = &f->links[t][call];
    if (l->width == 0)
        l->width = width;
    if (l->width != width) {
        tf_error_set(err, TF_ERR_INPUT, "stale fetcher: product %lld of snapshot %lld has width %lld, %lld when first "
                                        "seen: the model's products changed between epochs",
                     (long long)call, (long long)t, (long long)width, (long long)l->width);
        return NULL;
    }
    return l;
}

/* The cache [count][width] of one side of one peer, allocated on first use; NULL with *first = 1
 * unknown. *first = 1 when it had never been used. */
static float *side_cache(int64_t *counts, float **caches, int peer, int64_t count, int64_t width, int *first,
                         tf_error *err)
{
    *first = counts[peer] < 0;
    if (*first) {
        if (!(caches[peer] = tf_alloc((size_t)(count * width > 0 ? count * width : 1), sizeof(float), "stale cache",
                                      err)))
            return NULL;
        counts[peer] = count;
    }
    if (counts[peer] != count) {
        tf_error_set(err, TF_ERR_INPUT, "stale fetcher: %lld rows with peer %d, %lld when first seen", (long long)count,
                     peer, (long long)counts[peer]);
        return NULL;
    }
    return caches[peer];
}

/* Whether a transfer takes the stale rule at all: training forwards of training snapshots. */
static int stale_applies(const stale_fetcher *f, exchange_key key)
{
    return f->training && key.direction == EXCHANGE_FORWARD && key.snapshot < f->train_snapshots;
}

/* exchange_policy::pack */
static int pack_rows(void *context, exchange_key key, int peer, const int32_t *vertices, const float *rows,
                     int64_t count, int64_t width, void *message, int64_t capacity, int64_t *bytes, tf_error *err)
{
    (void)vertices, (void)capacity;
    stale_fetcher *f = context;
    const size_t row_bytes = (size_t)width * sizeof(float);
    if (!stale_applies(f, key)) { /* as the plain exchange sends it */
        memcpy(message, rows, (size_t)count * row_bytes);
        *bytes = count * (int64_t)row_bytes;
        return TF_OK;
    }
    stale_link_caches *l = link_for(f, key, width, err);
    int first;
    float *cache = l ? side_cache(l->send_count, l->send, peer, count, width, &first, err) : NULL;
    if (!cache)
        return TF_ERR_INPUT;
    const int send_all = first || f->epoch <= 1 || f->schedule.kind == STALE_OFF;
    const int64_t bitmap = send_all ? 0 : (count + 7) / 8;
    unsigned char *out = message;
    stale_decide_rows(rows, NULL, cache, count, width, f->fraction, send_all, send_all ? NULL : out, &f->stats);
    int64_t at = bitmap;
    for (int64_t i = 0; i < count; i++)
        if (send_all || (out[i / 8] >> (i % 8) & 1)) {
            memcpy(out + at, rows + i * width, row_bytes);
            at += (int64_t)row_bytes;
        }
    *bytes = at;
    return TF_OK;
}

/* exchange_policy::unpack */
static int unpack_rows(void *context, exchange_key key, int peer, const int32_t *vertices, const void *message,
                       int64_t bytes, float *rows, int64_t count, int64_t width, tf_error *err)
{
    (void)vertices;
    stale_fetcher *f = context;
    const size_t row_bytes = (size_t)width * sizeof(float);
    const unsigned char *in = message;
    if (!stale_applies(f, key)) {
        if (bytes != count * (int64_t)row_bytes)
            return tf_error_set(err, TF_ERR_INPUT, "stale fetcher: %lld bytes from rank %d, expected %lld rows of %lld",
                                (long long)bytes, peer, (long long)count, (long long)width);
        memcpy(rows, message, (size_t)bytes);
        return TF_OK;
    }
    stale_link_caches *l = link_for(f, key, width, err);
    int first;
    float *cache = l ? side_cache(l->receive_count, l->receive, peer, count, width, &first, err) : NULL;
    if (!cache)
        return TF_ERR_INPUT;
    const int send_all = first || f->epoch <= 1 || f->schedule.kind == STALE_OFF;
    int64_t at = send_all ? 0 : (count + 7) / 8;
    for (int64_t i = 0; i < count; i++) {
        const int fresh = send_all || (in[i / 8] >> (i % 8) & 1);
        if (fresh) {
            if (at + (int64_t)row_bytes > bytes)
                break;
            memcpy(cache + i * width, in + at, row_bytes);
            at += (int64_t)row_bytes;
        }
        memcpy(rows + i * width, cache + i * width, row_bytes);
    }
    if (at != bytes)
        return tf_error_set(err, TF_ERR_INPUT, "stale fetcher: %lld bytes from rank %d do not match its bitmap (%lld)",
                            (long long)bytes, peer, (long long)at);
    return TF_OK;
}

int stale_fetcher_attach(stale_fetcher *f, partition_trainer *pt, const stale_schedule *schedule, tf_error *err)
{
    memset(f, 0, sizeof *f);
    if (pt->mode != PARTITION_EXCHANGE)
        return tf_error_set(err, TF_ERR_INPUT, "stale embeddings change what the exchange mode sends: the trainer runs "
                                               "in %s mode",
                            partition_mode_name(pt->mode));
    f->group = pt->group;
    f->schedule = *schedule;
    f->num_snapshots = pt->part.local.num_snapshots;
    f->train_snapshots = pt->base.train_snapshots;
    f->call_count = tf_alloc((size_t)f->num_snapshots, sizeof(int64_t), "stale fetcher", err);
    f->links = f->call_count ? tf_alloc((size_t)f->num_snapshots, sizeof(stale_link_caches *), "stale fetcher", err)
                             : NULL;
    if (!f->links) {
        stale_fetcher_free(f);
        return TF_ERR_INPUT;
    }
    pt->exchange.policy = (exchange_policy){pack_rows, unpack_rows, 0, f};
    return TF_OK;
}

void stale_fetcher_free(stale_fetcher *f)
{
    for (int64_t t = 0; f->links && t < f->num_snapshots; t++) {
        for (int64_t c = 0; c < f->call_count[t]; c++) {
            stale_link_caches *l = &f->links[t][c];
            for (int p = 0; l->send && p < 2 * f->group->size; p++)
                free(l->send[p]);
            free(l->send);
            free(l->send_count);
        }
        free(f->links[t]);
    }
    free(f->links);
    free(f->call_count);
    memset(f, 0, sizeof *f);
}

void stale_fetcher_begin_epoch(stale_fetcher *f)
{
    f->epoch++;
    f->fraction = f->epoch >= 2 ? stale_threshold_fraction(&f->schedule, f->first_loss, f->previous_loss) : 0;
    f->training = 1;
}

void stale_fetcher_end_epoch(stale_fetcher *f, double train_loss)
{
    f->training = 0;
    if (f->epoch == 1)
        f->first_loss = train_loss;
    f->previous_loss = train_loss;
}

int opt_stale_embeddings_epoch(stale_fetcher *f, partition_trainer *pt, epoch_report *report, tf_error *err)
{
    stale_fetcher_begin_epoch(f);
    /* The evaluation at the epoch's end reads snapshots after the split: fresh by that alone. */
    int status = opt_partition_trainer_epoch(pt, report, err);
    stale_fetcher_end_epoch(f, status == TF_OK ? report->train_loss : 0);
    return status;
}

int stale_fetcher_compare_caches(stale_fetcher *f, int64_t *differing, int64_t *compared, tf_error *err)
{
    comm *c = f->group;
    const int ranks = c->size;
    const int64_t t_count = f->num_snapshots;
    int64_t *calls = tf_alloc((size_t)(ranks * t_count + 4 * ranks), sizeof(int64_t), "cache comparison", err);
    if (!calls)
        return TF_ERR_INPUT;
    int64_t *counts = calls + ranks * t_count, *offsets = counts + ranks, *receive_counts = offsets + ranks,
            *receive_offsets = receive_counts + ranks;
    uint64_t *outer = comm_charge(c, &c->check_bytes); /* a check, not traffic */
    int status = comm_allgather_counts(c, f->call_count, t_count, calls, err);
    double totals[2] = {0, 0};
    float *out = NULL, *in = NULL;
    for (int64_t t = 0; status == TF_OK && t < t_count; t++) {
        int64_t most = 0;
        for (int p = 0; p < ranks; p++)
            most = calls[p * t_count + t] > most ? calls[p * t_count + t] : most;
        for (int64_t call = 0; status == TF_OK && call < most; call++) {
            const stale_link_caches *l = call < f->call_count[t] ? &f->links[t][call] : NULL;
            int64_t send_total = 0, receive_total = 0;
            for (int p = 0; p < ranks; p++) {
                counts[p] = l && l->send_count[p] > 0 ? l->send_count[p] * l->width : 0;
                receive_counts[p] = l && l->receive_count[p] > 0 ? l->receive_count[p] * l->width : 0;
                offsets[p] = send_total, receive_offsets[p] = receive_total;
                send_total += counts[p], receive_total += receive_counts[p];
            }
            free(out);
            free(in);
            out = tf_alloc((size_t)(send_total + 1), sizeof(float), "cache comparison", err);
            in = out ? tf_alloc((size_t)(receive_total + 1), sizeof(float), "cache comparison", err) : NULL;
            if (!in) {
                status = TF_ERR_INPUT;
                break;
            }
            for (int p = 0; p < ranks; p++)
                if (counts[p] > 0)
                    memcpy(out + offsets[p], l->send[p], (size_t)counts[p] * sizeof(float));
            status = comm_alltoallv(c, out, counts, offsets, in, receive_counts, receive_offsets, sizeof(float), err);
            for (int p = 0; status == TF_OK && p < ranks; p++)
                for (int64_t k = 0; k < receive_counts[p]; k++) {
                    totals[0] += memcmp(in + receive_offsets[p] + k, l->receive[p] + k, sizeof(float)) != 0;
                    totals[1] += 1;
                }
        }
    }
    free(out);
    free(in);
    free(calls);
    if (status == TF_OK)
        status = comm_allreduce_sum_double(c, totals, 2, err);
    comm_charge(c, outer);
    *differing = (int64_t)totals[0];
    *compared = (int64_t)totals[1];
    return status;
}
