/* Sven's Re-FlexBiCut with this project's substitute for BiCut (ref/partition_bicut.h). */
#include "ref/partition_bicut.h"

#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"

int bicut_demand_alloc(bicut_demand *d, int ranks, int64_t num_nodes, tf_error *err)
{
    d->ranks = ranks;
    d->num_nodes = num_nodes;
    d->batches = 0;
    d->weight = tf_alloc((size_t)ranks * (size_t)num_nodes, sizeof *d->weight, "placement demand", err);
    return d->weight ? TF_OK : TF_ERR_INPUT;
}

void bicut_demand_free(bicut_demand *d)
{
    free(d->weight);
    memset(d, 0, sizeof *d);
}

/* Adds 1 to row [N] (ω(j, ·)) at v the first time v is seen in slice `stamp_value` (stamp [N]). */
static void demand_once(int64_t *row, int64_t *stamp, int64_t stamp_value, int32_t v)
{
    if (stamp[v] != stamp_value) {
        stamp[v] = stamp_value;
        row[v]++;
    }
}

int partition_event_demand(const event_stream *es, const temporal_csr *history, int64_t first, int64_t end,
                           int64_t local_batch, int ranks, int neighbours, bicut_demand *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    if (ranks < 1 || local_batch < 1 || neighbours < 0 || first < 0 || end > es->num_events || first > end)
        return tf_error_set(err, TF_ERR_INPUT, "demand of events %lld..%lld in batches of %lld on %d ranks with %d "
                                               "neighbours: expected a range inside 0..%lld, batch and ranks >= 1",
                            (long long)first, (long long)end, (long long)local_batch, ranks, neighbours,
                            (long long)es->num_events);
    if (bicut_demand_alloc(out, ranks, es->num_nodes, err) != TF_OK)
        return TF_ERR_INPUT;
    int64_t *fetched = tf_alloc((size_t)es->num_nodes, sizeof *fetched, "demand marks", err);
    int64_t *written = fetched ? tf_alloc((size_t)es->num_nodes, sizeof *written, "demand marks", err) : NULL;
    int32_t *recent = written ? tf_alloc((size_t)(neighbours > 0 ? neighbours : 1), sizeof *recent, "neighbours", err)
                              : NULL;
    if (!recent) {
        free(fetched);
        free(written);
        bicut_demand_free(out);
        return TF_ERR_INPUT;
    }
    int64_t slice = 0; /* stamps: one value per (batch, trainer) slice */
    for (int64_t start = first; start < end; start += local_batch) {
        const int j = (int)(((start - first) / local_batch) % ranks);
        int64_t *row = out->weight + (int64_t)j * es->num_nodes;
        slice++;
        const int64_t stop = start + local_batch < end ? start + local_batch : end;
        out->batches += j == 0;
        for (int64_t e = start; e < stop; e++) {
            const int32_t roots[2] = {es->src[e], es->dst[e]};
            for (int r = 0; r < 2; r++) {
                demand_once(row, fetched, slice, roots[r]);
                demand_once(row, written, slice, roots[r]); /* the write-back of a positive root */
                const int found = temporal_csr_recent(history, roots[r], es->time[e], neighbours, recent, NULL, NULL);
                for (int i = 0; i < found; i++)
                    demand_once(row, fetched, slice, recent[i]);
            }
        }
    }
    free(fetched);
    free(written);
    free(recent);
    return TF_OK;
}

/* S(v) = sum_k ω(k, v). */
static int64_t total_demand(const bicut_demand *d, int64_t v)
{
    int64_t sum = 0;
    for (int k = 0; k < d->ranks; k++)
        sum += d->weight[(int64_t)k * d->num_nodes + v];
    return sum;
}

void bicut_costs(const bicut_demand *d, const int32_t *owner, int64_t *received, int64_t *served)
{
    memset(received, 0, (size_t)d->ranks * sizeof *received);
    memset(served, 0, (size_t)d->ranks * sizeof *served); /* the same array as received: both add into it */
    for (int64_t v = 0; v < d->num_nodes; v++) {
        const int64_t s = total_demand(d, v);
        for (int k = 0; k < d->ranks; k++)
            if (k != owner[v])
                received[k] += d->weight[(int64_t)k * d->num_nodes + v];
        served[owner[v]] += s - d->weight[(int64_t)owner[v] * d->num_nodes + v];
    }
}

int64_t bicut_balance_cost(const bicut_demand *d, const int32_t *owner)
{
    int64_t worst = 0;
    for (int k = 0; k < d->ranks; k++) {
        int64_t cap = 0;
        for (int64_t v = 0; v < d->num_nodes; v++)
            cap += owner[v] == k ? total_demand(d, v) - d->weight[(int64_t)k * d->num_nodes + v]
                                 : d->weight[(int64_t)k * d->num_nodes + v];
        worst = cap > worst ? cap : worst;
    }
    return worst;
}

int64_t bicut_literal_cost(const bicut_demand *d, const int32_t *owner)
{
    int64_t worst = 0;
    for (int k = 0; k < d->ranks; k++) {
        int64_t local = 0;
        for (int64_t v = 0; v < d->num_nodes; v++)
            local += owner[v] == k ? d->weight[(int64_t)k * d->num_nodes + v] : 0;
        if (local > worst)
            worst = local;
    }
    return worst;
}

int64_t bicut_residual_max(const bicut_demand *d, const int32_t *owner)
{
    if (d->ranks < 2)
        return 0;
    int64_t largest = 0, smallest = INT64_MAX;
    for (int i = 0; i < d->ranks; i++)
        for (int j = 0; j < d->ranks; j++) {
            if (i == j)
                continue;
            int64_t c = 0; /* rows i serves j */
            for (int64_t v = 0; v < d->num_nodes; v++)
                c += owner[v] == i ? d->weight[(int64_t)j * d->num_nodes + v] : 0;
            largest = c > largest ? c : largest;
            smallest = c < smallest ? c : smallest;
        }
    return largest - smallest;
}

/* The better of two cap pairs after a move: (max, min) compared lexicographically. Comparing the
 * whole cap vectors sorted in decreasing order lexicographically is the same as comparing the two
 * changed entries so, because the others are common to both. @return 1 if (x1, x2) < (y1, y2). */
static int pair_below(int64_t x1, int64_t x2, int64_t y1, int64_t y2)
{
    const int64_t x_high = x1 > x2 ? x1 : x2, x_low = x1 > x2 ? x2 : x1;
    const int64_t y_high = y1 > y2 ? y1 : y2, y_low = y1 > y2 ? y2 : y1;
    return x_high < y_high || (x_high == y_high && x_low < y_low);
}

/* Contested vertices in the order (-S(v), id). */
typedef struct demand_item {
    int64_t demand;
    int64_t id;
} demand_item;

static int by_decreasing_demand(const void *a, const void *b)
{
    const demand_item *x = a, *y = b;
    if (x->demand != y->demand)
        return x->demand > y->demand ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* Partition stage: majority demanders, then the greedy (ζ, sum cap), then round-robin. owner [N] out,
 * cap [R] out, order [N] scratch. */
static void place_initially(const bicut_demand *d, int32_t *owner, int64_t *cap, demand_item *order)
{
    const int64_t n = d->num_nodes;
    const int ranks = d->ranks;
    memset(cap, 0, (size_t)ranks * sizeof *cap);
    int64_t undemanded = 0, contested = 0;
    for (int64_t v = 0; v < n; v++) {
        const int64_t s = total_demand(d, v);
        owner[v] = -1;
        for (int k = 0; k < ranks; k++)
            if (2 * d->weight[(int64_t)k * n + v] > s)
                owner[v] = k; /* the exact cut of t_k against the others */
        if (s == 0)
            owner[v] = (int32_t)(undemanded++ % ranks);
        else if (owner[v] < 0)
            order[contested++] = (demand_item){s, v};
        if (owner[v] >= 0)
            for (int k = 0; k < ranks; k++)
                cap[k] += k == owner[v] ? s - d->weight[(int64_t)k * n + v] : d->weight[(int64_t)k * n + v];
    }
    qsort(order, (size_t)contested, sizeof *order, by_decreasing_demand);
    for (int64_t i = 0; i < contested; i++) {
        const int64_t v = order[i].id, s = order[i].demand;
        /* After placing v on b: cap_k + ω(k, v) for k != b, cap_b + S - ω(b, v). */
        int64_t first = -1, second = -1;
        int top = -1;
        int64_t sum = 0;
        for (int k = 0; k < ranks; k++) {
            const int64_t value = cap[k] + d->weight[(int64_t)k * n + v];
            sum += cap[k];
            if (value > first) {
                second = first;
                first = value;
                top = k;
            } else if (value > second)
                second = value;
        }
        int best = 0;
        int64_t best_zeta = 0, best_sum = 0;
        for (int b = 0; b < ranks; b++) {
            const int64_t others = b == top ? second : first, mine = cap[b] + s - d->weight[(int64_t)b * n + v];
            const int64_t zeta = others > mine ? others : mine;
            const int64_t total = sum + 2 * (s - d->weight[(int64_t)b * n + v]);
            if (b == 0 || zeta < best_zeta || (zeta == best_zeta && total < best_sum)) {
                best = b;
                best_zeta = zeta;
                best_sum = total;
            }
        }
        owner[v] = best;
        for (int k = 0; k < ranks; k++)
            cap[k] += k == best ? s - d->weight[(int64_t)k * n + v] : d->weight[(int64_t)k * n + v];
    }
}

static int64_t largest(const int64_t *values, int count)
{
    int64_t top = 0;
    for (int k = 0; k < count; k++)
        top = values[k] > top ? values[k] : top;
    return top;
}

int ref_reflexbicut(const bicut_demand *d, int32_t *owner, bicut_stats *stats, tf_error *err)
{
    const int64_t n = d->num_nodes;
    const int ranks = d->ranks;
    bicut_stats local;
    memset(&local, 0, sizeof local);
    int64_t *cap = tf_alloc((size_t)ranks, sizeof *cap, "placement caps", err);
    demand_item *order = cap ? tf_alloc((size_t)n, sizeof *order, "placement order", err) : NULL;
    int status = order ? TF_OK : TF_ERR_INPUT;
    int64_t trace_capacity = 0;
    if (status == TF_OK) {
        place_initially(d, owner, cap, order);
        local.initial_cost = largest(cap, ranks);
    }
    const int64_t move_cap = 100 * n;
    int moved = status == TF_OK;
    while (status == TF_OK && moved) {
        moved = 0;
        for (int64_t v = 0; status == TF_OK && v < n; v++) {
            const int a = owner[v];
            const int64_t s = total_demand(d, v), a_after = cap[a] + 2 * d->weight[(int64_t)a * n + v] - s;
            int best = -1;
            int64_t best_a = 0, best_b = 0;
            for (int b = 0; b < ranks; b++) {
                if (b == a)
                    continue;
                const int64_t b_after = cap[b] + s - 2 * d->weight[(int64_t)b * n + v];
                if (pair_below(a_after, b_after, cap[a], cap[b]) &&
                    (best < 0 || pair_below(a_after, b_after, best_a, best_b))) {
                    best = b;
                    best_a = a_after;
                    best_b = b_after;
                }
            }
            if (best < 0)
                continue;
            if (local.moves >= move_cap) {
                local.hit_move_cap = 1;
                moved = 0;
                break;
            }
            owner[v] = best;
            cap[a] = best_a;
            cap[best] = best_b;
            if (local.moves == trace_capacity) {
                trace_capacity = trace_capacity ? 2 * trace_capacity : 64;
                int64_t *grown = tf_realloc(local.trace, (size_t)trace_capacity, sizeof *grown, "placement trace", err);
                if (!grown) {
                    status = TF_ERR_INPUT;
                    break;
                }
                local.trace = grown;
            }
            local.trace[local.moves++] = largest(cap, ranks);
            moved = 1;
        }
    }
    local.final_cost = status == TF_OK ? largest(cap, ranks) : 0;
    free(cap);
    free(order);
    if (stats)
        *stats = local;
    else
        free(local.trace);
    if (status != TF_OK && stats)
        bicut_stats_free(stats);
    return status;
}

void bicut_stats_free(bicut_stats *s)
{
    free(s->trace);
    memset(s, 0, sizeof *s);
}
