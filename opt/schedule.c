#include "opt/schedule.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt/train.h"
#include "ref/nn/adam.h"
#include "ref/core/clock.h"
#include "ref/core/memory.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* ---- the greedy twin --------------------------------------------------------------------------- */

/* One thread's scratch and its chunk's winner. */
typedef struct greedy_chunk {
    int64_t *tick, *position; /* [count] the candidate's free list, compacted (index 0: the sentinel) */
    int64_t *members;         /* [2G] the candidate being built: free-list indices, -1 for none */
    int64_t *best_members;    /* [2G] the chunk's winner */
    int64_t best_waste;       /* INT64_MAX: no winner */
} greedy_chunk;

/* Removes entry `at` of the compacted list of `*count` entries. */
static void remove_entry(greedy_chunk *c, int64_t *count, int64_t at)
{
    memmove(c->tick + at, c->tick + at + 1, (size_t)(*count - at - 1) * sizeof *c->tick);
    memmove(c->position + at, c->position + at + 1, (size_t)(*count - at - 1) * sizeof *c->position);
    (*count)--;
}

/*
 * Candidate `candidate` (0: the longest alone; c >= 1: the longest with free entry c) over the
 * free list `free_tick` [count]: its G - 1 pairs, abandoned once its partial waste reaches
 * the chunk's best. Keeps it when strictly better.
 */
static void greedy_candidate(greedy_chunk *c, const int64_t *free_tick, int64_t count, int64_t candidate, int ranks)
{
    const int64_t last = count - 1;
    int64_t length = 0;
    for (int64_t q = 0; q < last; q++)
        if (q != candidate || q == 0) {
            c->tick[length] = free_tick[q];
            c->position[length++] = q;
        }
    const int64_t target = free_tick[last] + (candidate > 0 ? free_tick[candidate] : 0);
    c->members[0] = last;
    c->members[1] = candidate > 0 ? candidate : -1;
    int64_t highest = target, sum = 0;
    for (int j = 1; j < ranks; j++) {
        /* GetGroupPair on the compacted list: the reference's scan without the skips */
        int64_t head = 0, tail = length - 1, best_head = 0, best_tail = 0, best_sum = 0;
        uint64_t closest = UINT64_MAX;
        while (head < tail) {
            const int64_t pair_sum = c->tick[head] + c->tick[tail];
            const uint64_t distance = pair_sum > target ? (uint64_t)(pair_sum - target) : (uint64_t)(target - pair_sum);
            if (distance < closest) {
                closest = distance;
                best_head = head, best_tail = tail, best_sum = pair_sum;
            }
            if (pair_sum < target)
                head++;
            else
                tail--;
        }
        c->members[2 * j] = best_tail > 0 ? c->position[best_tail] : -1;
        c->members[2 * j + 1] = best_head > 0 ? c->position[best_head] : -1;
        if (best_tail > 0)
            remove_entry(c, &length, best_tail);
        if (best_head > 0)
            remove_entry(c, &length, best_head);
        if (best_sum > highest)
            highest = best_sum;
        sum += best_sum;
        if ((int64_t)(j + 1) * highest - sum - target >= c->best_waste) {
            for (int rest = j + 1; rest < ranks; rest++)
                c->members[2 * rest] = c->members[2 * rest + 1] = -1;
            return; /* W_j already reaches the best: it cannot win */
        }
    }
    const int64_t waste = highest * ranks - sum - target;
    if (waste < c->best_waste) {
        c->best_waste = waste;
        memcpy(c->best_members, c->members, 2 * (size_t)ranks * sizeof *c->members);
    }
}

int opt_schedule_greedy(schedule *s, const double *times, int64_t groups, int ranks, tf_error *err)
{
    if (schedule_check_times(times, groups, err) != TF_OK || schedule_alloc(s, groups, ranks, 2, err) != TF_OK)
        return TF_ERR_INPUT;
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    const size_t n1 = (size_t)groups + 1, bins = 2 * (size_t)ranks;
    int64_t *ticks = tf_alloc(n1, sizeof *ticks, "greedy ticks", err);
    int64_t *ids = ticks ? tf_alloc(n1, sizeof *ids, "greedy ids", err) : NULL;
    int64_t *free_tick = ids ? tf_alloc(n1, sizeof *free_tick, "greedy free list", err) : NULL;
    int64_t *free_position = free_tick ? tf_alloc(n1, sizeof *free_position, "greedy free list", err) : NULL;
    greedy_chunk *chunks = free_position ? tf_alloc((size_t)threads, sizeof *chunks, "greedy chunks", err) : NULL;
    int status = chunks ? schedule_greedy_sort(times, groups, ticks, ids, err) : TF_ERR_INPUT;
    for (int t = 0; status == TF_OK && t < threads; t++)
        if (!(chunks[t].tick = tf_alloc(n1, sizeof(int64_t), "greedy scratch", err)) ||
            !(chunks[t].position = tf_alloc(n1, sizeof(int64_t), "greedy scratch", err)) ||
            !(chunks[t].members = tf_alloc(bins, sizeof(int64_t), "greedy scratch", err)) ||
            !(chunks[t].best_members = tf_alloc(bins, sizeof(int64_t), "greedy scratch", err)))
            status = TF_ERR_INPUT;
    if (status == TF_OK) {
        /* the free list: the sentinel, then the unplaced sorted positions ascending, compacted as
         * groups are placed */
        int64_t count = groups + 1, iteration = 0;
        for (int64_t p = 0; p <= groups; p++) {
            free_tick[p] = ticks[p];
            free_position[p] = p;
        }
        while (count - 1 > ranks) {
            const int64_t candidates = count - 1;
#pragma omp parallel num_threads(threads)
            {
                int t = 0;
#ifdef _OPENMP
                t = omp_get_thread_num();
#endif
                greedy_chunk *c = &chunks[t];
                c->best_waste = INT64_MAX;
                const int64_t from = candidates * t / threads, to = candidates * (t + 1) / threads;
                for (int64_t candidate = from; candidate < to; candidate++)
                    greedy_candidate(c, free_tick, count, candidate, ranks);
            }
            int winner = -1; /* chunk order, strict <: the first best candidate */
            for (int t = 0; t < threads; t++)
                if (chunks[t].best_waste != INT64_MAX && (winner < 0 || chunks[t].best_waste < chunks[winner].best_waste))
                    winner = t;
            const int64_t *best = chunks[winner].best_members;
            for (size_t b = 0; b < bins; b++)
                if (best[b] >= 0) {
                    const int64_t group = ids[free_position[best[b]] - 1];
                    s->iteration[group] = iteration;
                    s->rank[group] = (int32_t)(b / 2);
                }
            /* compact the free list: drop the placed entries (indices in best[]) */
            int64_t kept = 0;
            for (int64_t q = 0; q < count; q++) {
                int taken = 0;
                for (size_t b = 0; b < bins && !taken; b++)
                    taken = best[b] == q;
                if (!taken) {
                    free_tick[kept] = free_tick[q];
                    free_position[kept++] = free_position[q];
                }
            }
            count = kept;
            iteration++;
        }
        for (int64_t q = 1; q < count; q++) { /* the last <= G groups: one per rank */
            s->iteration[ids[free_position[q] - 1]] = iteration;
            s->rank[ids[free_position[q] - 1]] = (int32_t)(q - 1);
        }
        s->iterations = iteration + (count > 1);
        status = schedule_balance_ranks(s, times, err);
    }
    for (int t = 0; chunks && t < threads; t++) {
        free(chunks[t].tick);
        free(chunks[t].position);
        free(chunks[t].members);
        free(chunks[t].best_members);
    }
    free(chunks);
    free(ticks);
    free(ids);
    free(free_tick);
    free(free_position);
    if (status != TF_OK)
        schedule_free(s);
    return status;
}

/* ---- any method, and one schedule for every rank ------------------------------------------------ */

int opt_schedule_compute(schedule *s, schedule_method method, const double *times, int64_t groups, int ranks,
                         int per_rank, const train_schedule *steps, double alpha, const ilp_options *ilp,
                         ilp_report *report, tf_error *err)
{
    ilp_report unused;
    switch (method) {
    case SCHEDULE_ROUNDROBIN:
        return ref_schedule_roundrobin(s, steps, ranks, err);
    case SCHEDULE_LPT:
        return ref_schedule_lpt(s, times, groups, ranks, per_rank, err);
    case SCHEDULE_GREEDY:
        if (per_rank != 2)
            return tf_error_set(err, TF_ERR_INPUT, "greedy pairs at most 2 groups per rank and iteration (--per-rank "
                                                   "%d): use --method ilp", per_rank);
        return opt_schedule_greedy(s, times, groups, ranks, err);
    case SCHEDULE_ILP:
        return opt_schedule_ilp(s, times, groups, ranks, per_rank, alpha, ilp, report ? report : &unused, err);
    }
    return tf_error_set(err, TF_ERR_INPUT, "unknown schedule method %d", (int)method);
}

int opt_schedule_build(schedule *s, schedule_method method, const double *times, int64_t groups, comm *c, int per_rank,
                       const train_schedule *steps, double alpha, const ilp_options *ilp, ilp_report *report,
                       tf_error *err)
{
    memset(s, 0, sizeof *s);
    /* header: status, groups, ranks, per rank, iterations; then rank 0's message on failure */
    int64_t header[5] = {TF_OK, 0, 0, 0, 0};
    tf_error failure;
    tf_error_clear(&failure);
    if (c->rank == 0) {
        header[0] = opt_schedule_compute(s, method, times, groups, c->size, per_rank, steps, alpha, ilp, report,
                                         &failure);
        header[1] = s->groups, header[2] = s->ranks, header[3] = s->per_rank, header[4] = s->iterations;
    }
    if (c->size == 1) {
        if (header[0] != TF_OK && err)
            *err = failure;
        return (int)header[0];
    }
    if (comm_broadcast(c, header, sizeof header, 0, err) != TF_OK)
        return TF_ERR_SYSTEM;
    if (header[0] != TF_OK) {
        if (comm_broadcast(c, failure.message, sizeof failure.message, 0, err) != TF_OK)
            return TF_ERR_SYSTEM;
        return tf_error_set(err, (int)header[0], "%s", failure.message);
    }
    if (c->rank != 0 && schedule_alloc(s, header[1], (int)header[2], (int)header[3], err) != TF_OK)
        return TF_ERR_INPUT; /* rank 0 built it, so only memory can fail here */
    s->iterations = header[4];
    if (comm_broadcast(c, s->iteration, s->groups * (int64_t)sizeof *s->iteration, 0, err) != TF_OK ||
        comm_broadcast(c, s->rank, s->groups * (int64_t)sizeof *s->rank, 0, err) != TF_OK)
        return TF_ERR_SYSTEM;
    return TF_OK;
}

/* ---- measured times ------------------------------------------------------------------------------ */

static int compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of values [count] (sorts them). */
static double median(double *values, int count)
{
    qsort(values, (size_t)count, sizeof *values, compare_doubles);
    return count % 2 ? values[count / 2] : 0.5 * (values[count / 2 - 1] + values[count / 2]);
}

int opt_schedule_profile(trainer *tr, const snapshot_seq *seq, comm *c, int repeats, double *seconds, tf_error *err)
{
    const train_schedule windows = trainer_schedule(tr);
    if (repeats < 1 || repeats > 1000)
        return tf_error_set(err, TF_ERR_INPUT, "--repeats %d: expected 1..1000", repeats);
    double *samples = tf_alloc((size_t)repeats, sizeof *samples, "profile samples", err);
    if (!samples)
        return TF_ERR_INPUT;
    memset(seconds, 0, (size_t)windows.windows * sizeof *seconds);
    int status = TF_OK;
    for (int64_t w = c->rank; status == TF_OK && w < windows.windows; w += c->size) {
        for (int r = 0; status == TF_OK && r < repeats; r++) {
            double loss = 0;
            const double started = thread_cpu_seconds();
            status = trainer_train_window(tr, seq, &windows, w, 1.0f, &loss, err);
            samples[r] = thread_cpu_seconds() - started;
        }
        seconds[w] = median(samples, repeats);
    }
    free(samples);
    parameters_zero_grad(&tr->model.parameters);
    /* A failing rank still joins the sum, so no rank waits forever; the status then travels with it. */
    double failed = status != TF_OK;
    if (c->size > 1 && (comm_allreduce_sum_double(c, seconds, windows.windows, err) != TF_OK ||
                        comm_allreduce_sum_double(c, &failed, 1, err) != TF_OK))
        return TF_ERR_SYSTEM;
    if (status == TF_OK && failed > 0)
        return tf_error_set(err, TF_ERR_SYSTEM, "profiling failed on %.0f other rank(s)", failed);
    return status;
}

int opt_schedule_alpha(comm *c, int64_t floats, int repeats, double *seconds, tf_error *err)
{
    *seconds = 0;
    if (c->size == 1)
        return TF_OK;
    float *buffer = tf_alloc((size_t)floats, sizeof *buffer, "all-reduce probe", err);
    double *samples = buffer ? tf_alloc((size_t)repeats, sizeof *samples, "all-reduce probe", err) : NULL;
    int status = samples ? TF_OK : TF_ERR_INPUT;
    for (int r = 0; status == TF_OK && r < repeats; r++) {
        status = comm_barrier(c, err);
        const double started = wall_seconds();
        if (status == TF_OK)
            status = comm_allreduce_sum(c, buffer, floats, err);
        samples[r] = wall_seconds() - started;
    }
    if (status == TF_OK) {
        *seconds = median(samples, repeats);
        status = comm_broadcast(c, seconds, sizeof *seconds, 0, err);
    }
    free(buffer);
    free(samples);
    return status;
}

/* ---- the scheduled epoch ------------------------------------------------------------------------- */

/* The groups of s by iteration, ascending id within each (a counting sort over a_k): iteration i
 * holds order[start[i] .. start[i+1]-1]. start [iterations + 1] and order [groups] are allocated. */
static int iteration_index(const schedule *s, int64_t **start, int64_t **order, tf_error *err)
{
    *start = tf_alloc((size_t)s->iterations + 1, sizeof **start, "iteration index", err);
    *order = *start ? tf_alloc((size_t)s->groups, sizeof **order, "iteration index", err) : NULL;
    int64_t *next = *order ? tf_alloc((size_t)s->iterations, sizeof *next, "iteration index", err) : NULL;
    if (!next) {
        free(*start);
        free(*order);
        return TF_ERR_INPUT;
    }
    for (int64_t k = 0; k < s->groups; k++)
        (*start)[s->iteration[k] + 1]++;
    for (int64_t i = 0; i < s->iterations; i++) {
        (*start)[i + 1] += (*start)[i];
        next[i] = (*start)[i];
    }
    for (int64_t k = 0; k < s->groups; k++)
        (*order)[next[s->iteration[k]]++] = k;
    free(next);
    return TF_OK;
}

int opt_schedule_gradient(trainer *tr, comm *c, const snapshot_seq *seq, const schedule *s, float *sum,
                          tf_error *err)
{
    const train_schedule windows = trainer_schedule(tr);
    if (s->groups != windows.windows || s->ranks != c->size)
        return tf_error_set(err, TF_ERR_INPUT, "a schedule of %lld groups on %d ranks for %lld windows on %d ranks",
                            (long long)s->groups, s->ranks, (long long)windows.windows, c->size);
    parameter_list *list = &tr->model.parameters;
    const int64_t size = parameters_size(list);
    int64_t *start, *order;
    if (iteration_index(s, &start, &order, err) != TF_OK)
        return TF_ERR_INPUT;
    float *packed = c->size > 1 ? tf_alloc((size_t)size, sizeof(float), "gradient buffer", err) : NULL;
    int status = c->size > 1 && !packed ? TF_ERR_INPUT : TF_OK;
    memset(sum, 0, (size_t)size * sizeof *sum);
    for (int64_t i = 0; status == TF_OK && i < s->iterations; i++) {
        parameters_zero_grad(list);
        double loss = 0;
        for (int64_t q = start[i]; status == TF_OK && q < start[i + 1]; q++)
            if (s->rank[order[q]] == c->rank)
                status = trainer_train_window(tr, seq, &windows, order[q], 1.0f, &loss, err);
        if (status == TF_OK)
            status = opt_trainer_sum_gradients(list, packed, c, tr->model.kernels, NULL, err);
        for (int64_t p = 0, at = 0; status == TF_OK && p < list->count; p++)
            for (int64_t v = 0; v < list->items[p].grad.size; v++)
                sum[at++] += list->items[p].grad.data[v];
    }
    parameters_zero_grad(list);
    free(start);
    free(order);
    free(packed);
    return status;
}

int opt_schedule_epoch(trainer *tr, comm *c, const snapshot_seq *seq, const schedule *s, double *group_seconds,
                       epoch_report *report, tf_error *err)
{
    memset(report, 0, sizeof *report);
    const train_schedule windows = trainer_schedule(tr);
    if (s->groups != windows.windows || s->ranks != c->size)
        return tf_error_set(err, TF_ERR_INPUT, "a schedule of %lld groups on %d ranks for %lld windows on %d ranks",
                            (long long)s->groups, s->ranks, (long long)windows.windows, c->size);
    parameter_list *list = &tr->model.parameters;
    int64_t *start, *order;
    if (iteration_index(s, &start, &order, err) != TF_OK)
        return TF_ERR_INPUT;
    float *packed = c->size > 1 ? tf_alloc((size_t)parameters_size(list), sizeof(float), "gradient buffer", err) : NULL;
    int status = c->size > 1 && !packed ? TF_ERR_INPUT : TF_OK;
    double loss_sum = 0; /* of this rank's windows */
    for (int64_t i = 0; status == TF_OK && i < s->iterations; i++) {
        parameters_zero_grad(list);
        /* B_i counts the iteration's groups on all ranks: the same float as the reference's */
        const float scale = 1.0f / (float)(start[i + 1] - start[i]);
        for (int64_t q = start[i]; status == TF_OK && q < start[i + 1]; q++) {
            const int64_t k = order[q];
            if (s->rank[k] != c->rank)
                continue;
            const double started = group_seconds ? thread_cpu_seconds() : 0;
            status = trainer_train_window(tr, seq, &windows, k, scale, &loss_sum, err);
            if (group_seconds)
                group_seconds[k] += thread_cpu_seconds() - started;
        }
        if (status == TF_OK)
            status = opt_trainer_sum_gradients(list, packed, c, tr->model.kernels, NULL, err);
        if (status == TF_OK) {
            trainer_apply_gradient(tr);
            report->steps++;
        }
    }
    free(start);
    free(order);
    free(packed);
    if (status == TF_OK && c->size > 1)
        status = comm_allreduce_sum_double(c, &loss_sum, 1, err);
    if (status != TF_OK)
        return status;
    trainer_close_epoch(tr, &windows, loss_sum, report);
    return opt_trainer_evaluate(tr, c, seq, tr->train_snapshots, seq->num_snapshots - tr->train_snapshots,
                                &report->test_mse, err);
}
