#include "ref/schedule.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref/nn/adam.h"
#include "ref/core/memory.h"

static const char *const method_names[] = {"roundrobin", "lpt", "greedy", "ilp"};

const char *schedule_method_name(schedule_method method) { return method_names[method]; }

int schedule_method_parse(const char *name, schedule_method *method, tf_error *err)
{
    for (int m = SCHEDULE_ROUNDROBIN; m <= SCHEDULE_ILP; m++)
        if (strcmp(name, method_names[m]) == 0) {
            *method = (schedule_method)m;
            return TF_OK;
        }
    return tf_error_set(err, TF_ERR_INPUT, "schedule method \"%s\": expected roundrobin, lpt, greedy or ilp", name);
}

int schedule_alloc(schedule *s, int64_t groups, int ranks, int per_rank, tf_error *err)
{
    memset(s, 0, sizeof *s);
    if (groups < 1 || ranks < 1 || per_rank < 1)
        return tf_error_set(err, TF_ERR_INPUT, "a schedule of %lld group(s) on %d rank(s), %d per rank: expected at "
                                               "least 1 of each", (long long)groups, ranks, per_rank);
    s->groups = groups;
    s->ranks = ranks;
    s->per_rank = per_rank;
    s->iteration = tf_alloc((size_t)groups, sizeof *s->iteration, "schedule iterations", err);
    s->rank = s->iteration ? tf_alloc((size_t)groups, sizeof *s->rank, "schedule ranks", err) : NULL;
    if (!s->rank) {
        schedule_free(s);
        return TF_ERR_INPUT;
    }
    return TF_OK;
}

void schedule_free(schedule *s)
{
    free(s->iteration);
    free(s->rank);
    memset(s, 0, sizeof *s);
}

int schedule_copy(schedule *to, const schedule *from, tf_error *err)
{
    if (schedule_alloc(to, from->groups, from->ranks, from->per_rank, err) != TF_OK)
        return TF_ERR_INPUT;
    to->iterations = from->iterations;
    memcpy(to->iteration, from->iteration, (size_t)from->groups * sizeof *to->iteration);
    memcpy(to->rank, from->rank, (size_t)from->groups * sizeof *to->rank);
    return TF_OK;
}

int schedule_check_times(const double *times, int64_t groups, tf_error *err)
{
    if (groups < 1)
        return tf_error_set(err, TF_ERR_INPUT, "no groups to schedule: expected at least 1");
    for (int64_t k = 0; k < groups; k++)
        if (!isfinite(times[k]) || times[k] < 0)
            return tf_error_set(err, TF_ERR_INPUT, "group %lld has time %g: expected a finite number >= 0",
                                (long long)k, times[k]);
    return TF_OK;
}

/* ---- groups in (iteration, rank, id) order ------------------------------------------------- */

typedef struct placed {
    int64_t iteration, group;
    int32_t rank;
} placed;

static int compare_placed(const void *a, const void *b)
{
    const placed *x = a, *y = b;
    if (x->iteration != y->iteration)
        return x->iteration < y->iteration ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->group > y->group) - (x->group < y->group);
}

/* The groups of @p s sorted by (iteration, rank, id): each bin is a run, each run ascending. */
static placed *sorted_placement(const schedule *s, tf_error *err)
{
    placed *p = tf_alloc((size_t)s->groups, sizeof *p, "schedule order", err);
    if (!p)
        return NULL;
    for (int64_t k = 0; k < s->groups; k++)
        p[k] = (placed){s->iteration[k], k, s->rank[k]};
    qsort(p, (size_t)s->groups, sizeof *p, compare_placed);
    return p;
}

int schedule_validate(const schedule *s, tf_error *err)
{
    if (s->groups < 1 || s->ranks < 1 || s->per_rank < 1 || s->iterations < 1 || s->iterations > s->groups)
        return tf_error_set(err, TF_ERR_INPUT, "schedule of %lld group(s), %lld iteration(s), %d rank(s), %d per rank: "
                                               "expected 1 <= iterations <= groups and at least one rank and one per rank",
                            (long long)s->groups, (long long)s->iterations, s->ranks, s->per_rank);
    for (int64_t k = 0; k < s->groups; k++) {
        if (s->iteration[k] < 0 || s->iteration[k] >= s->iterations)
            return tf_error_set(err, TF_ERR_INPUT, "schedule: group %lld in iteration %lld, expected 0..%lld",
                                (long long)k, (long long)s->iteration[k], (long long)s->iterations - 1);
        if (s->rank[k] < 0 || s->rank[k] >= s->ranks)
            return tf_error_set(err, TF_ERR_INPUT, "schedule: group %lld on rank %d, expected 0..%d", (long long)k,
                                s->rank[k], s->ranks - 1);
    }
    placed *p = sorted_placement(s, err);
    if (!p)
        return TF_ERR_INPUT;
    int status = TF_OK;
    int64_t next_iteration = 0; /* every iteration 0..m-1 must appear: the runs meet them in order */
    for (int64_t start = 0, end; status == TF_OK && start < s->groups; start = end) {
        for (end = start; end < s->groups && p[end].iteration == p[start].iteration && p[end].rank == p[start].rank;)
            end++;
        if (p[start].iteration > next_iteration)
            status = tf_error_set(err, TF_ERR_INPUT, "schedule: iteration %lld is empty", (long long)next_iteration);
        else if (end - start > s->per_rank)
            status = tf_error_set(err, TF_ERR_INPUT, "schedule: iteration %lld gives rank %d %lld groups, at most %d "
                                                     "allowed", (long long)p[start].iteration, p[start].rank,
                                  (long long)(end - start), s->per_rank);
        next_iteration = p[start].iteration + 1;
    }
    free(p);
    return status;
}

int64_t schedule_groups_in_iteration(const schedule *s, int64_t i)
{
    int64_t count = 0;
    for (int64_t k = 0; k < s->groups; k++)
        count += s->iteration[k] == i;
    return count;
}

void schedule_evaluate(const schedule *s, const double *times, double alpha, schedule_cost *out)
{
    memset(out, 0, sizeof *out);
    double total = 0, longest = 0;
    for (int64_t k = 0; k < s->groups; k++) {
        total += times[k];
        longest = fmax(longest, times[k]);
    }
    out->lower_bound = fmax(longest, total / s->ranks);
    /* Bins are runs of the (iteration, rank, id) order; their loads add in ascending id. */
    placed *p = sorted_placement(s, NULL);
    double *busy = calloc((size_t)s->ranks, sizeof *busy);
    if (!p || !busy) { /* evaluation is for reports: without memory, say nothing rather than fail */
        free(p);
        free(busy);
        out->critical_path = out->objective = out->imbalance = NAN;
        return;
    }
    double iteration_max = 0;
    for (int64_t start = 0, end; start < s->groups; start = end) {
        double load = 0;
        for (end = start; end < s->groups && p[end].iteration == p[start].iteration && p[end].rank == p[start].rank;
             end++)
            load += times[p[end].group];
        busy[p[start].rank] += load;
        iteration_max = fmax(iteration_max, load);
        if (end == s->groups || p[end].iteration != p[start].iteration) {
            out->critical_path += iteration_max;
            iteration_max = 0;
        }
    }
    out->objective = out->critical_path + alpha * (double)s->iterations;
    out->busy_max = busy[0];
    out->busy_min = busy[0];
    for (int j = 1; j < s->ranks; j++) {
        out->busy_max = fmax(out->busy_max, busy[j]);
        out->busy_min = fmin(out->busy_min, busy[j]);
    }
    out->imbalance = out->busy_min > 0 ? out->busy_max / out->busy_min : INFINITY;
    out->efficiency = out->critical_path > 0 ? total / ((double)s->ranks * out->critical_path) : 1;
    free(p);
    free(busy);
}

/* ---- the balance pass ------------------------------------------------------------------------ */

/* A key and an index: sorted by key, ties by index, so the order is total and deterministic. */
typedef struct keyed {
    double key;
    int64_t index;
} keyed;

static int compare_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

int schedule_balance_ranks(schedule *s, const double *times, tf_error *err)
{
    const int g = s->ranks;
    placed *p = sorted_placement(s, err);
    double *busy = tf_alloc((size_t)g, sizeof *busy, "rank totals", err);
    keyed *bins = tf_alloc((size_t)g, sizeof *bins, "bins", err);
    keyed *ranks = tf_alloc((size_t)g, sizeof *ranks, "ranks", err);
    int32_t *new_rank = tf_alloc((size_t)g, sizeof *new_rank, "rank map", err);
    int status = p && busy && bins && ranks && new_rank ? TF_OK : TF_ERR_INPUT;
    for (int64_t start = 0, end; status == TF_OK && start < s->groups; start = end) {
        /* one iteration: p[start .. end-1] */
        for (end = start; end < s->groups && p[end].iteration == p[start].iteration;)
            end++;
        for (int j = 0; j < g; j++)
            bins[j] = (keyed){0, j};
        for (int64_t q = start; q < end; q++)
            bins[p[q].rank].key -= times[p[q].group]; /* minus the load: ascending key = heaviest first */
        for (int j = 0; j < g; j++)
            ranks[j] = (keyed){busy[j], j};
        qsort(bins, (size_t)g, sizeof *bins, compare_keyed);
        qsort(ranks, (size_t)g, sizeof *ranks, compare_keyed);
        for (int j = 0; j < g; j++) {
            new_rank[bins[j].index] = (int32_t)ranks[j].index;
            busy[ranks[j].index] -= bins[j].key;
        }
        for (int64_t q = start; q < end; q++)
            s->rank[p[q].group] = new_rank[p[q].rank];
    }
    free(p);
    free(busy);
    free(bins);
    free(ranks);
    free(new_rank);
    return status;
}

/* ---- round-robin and LPT ----------------------------------------------------------------------- */

int ref_schedule_roundrobin(schedule *s, const train_schedule *steps, int ranks, tf_error *err)
{
    if (ranks < 1)
        return tf_error_set(err, TF_ERR_INPUT, "%d ranks: expected at least 1", ranks);
    const int per_rank = (int)((steps->batch + ranks - 1) / ranks);
    if (schedule_alloc(s, steps->windows, ranks, per_rank, err) != TF_OK)
        return TF_ERR_INPUT;
    for (int64_t step = 0; step < steps->steps; step++)
        for (int64_t slot = 0; slot < steps->batch; slot++) {
            const int64_t w = train_schedule_window(steps, step, slot);
            if (w >= 0) {
                s->iteration[w] = step;
                s->rank[w] = (int32_t)(slot % ranks);
            }
        }
    s->iterations = steps->steps;
    return TF_OK;
}

/* Group ids sorted by time, descending (ties: lower id first). */
static int64_t *longest_first(const double *times, int64_t groups, tf_error *err)
{
    keyed *order = tf_alloc((size_t)groups, sizeof *order, "group order", err);
    int64_t *ids = order ? tf_alloc((size_t)groups, sizeof *ids, "group order", err) : NULL;
    if (!ids) {
        free(order);
        return NULL;
    }
    for (int64_t k = 0; k < groups; k++)
        order[k] = (keyed){-times[k], k};
    qsort(order, (size_t)groups, sizeof *order, compare_keyed);
    for (int64_t k = 0; k < groups; k++)
        ids[k] = order[k].index;
    free(order);
    return ids;
}

int ref_schedule_lpt(schedule *s, const double *times, int64_t groups, int ranks, int per_rank, tf_error *err)
{
    if (schedule_check_times(times, groups, err) != TF_OK || schedule_alloc(s, groups, ranks, per_rank, err) != TF_OK)
        return TF_ERR_INPUT;
    int64_t *ids = longest_first(times, groups, err);
    if (!ids) {
        schedule_free(s);
        return TF_ERR_INPUT;
    }
    for (int64_t q = 0; q < groups; q++) {
        s->iteration[ids[q]] = q / ranks;
        s->rank[ids[q]] = (int32_t)(q % ranks);
    }
    s->iterations = (groups + ranks - 1) / ranks;
    free(ids);
    int status = schedule_balance_ranks(s, times, err);
    if (status != TF_OK)
        schedule_free(s);
    return status;
}

/* ---- DyGNeX-G ---------------------------------------------------------------------------------- */

typedef struct greedy_pair {
    int64_t sum;        /* ticks */
    int64_t head, tail; /* positions in the free list; head 0 is the sentinel; tail 0: an empty bin */
} greedy_pair;

/*
 * GetGroupPair over the free list `tick` [count] (position 0 the zero sentinel, the rest
 * ascending) skipping positions marked in `taken` [count]: the pair whose sum is closest to
 * `target`, the first met on ties. No free group left: an empty bin (sum 0, tail 0).
 */
static greedy_pair greedy_pair_scan(const int64_t *tick, const char *taken, int64_t count, int64_t target)
{
    greedy_pair best = {0, 0, 0};
    int64_t head = 0, tail = count - 1;
    while (tail > 0 && taken[tail])
        tail--;
    uint64_t closest = UINT64_MAX;
    while (head < tail) {
        const int64_t sum = tick[head] + tick[tail];
        const uint64_t distance = sum > target ? (uint64_t)(sum - target) : (uint64_t)(target - sum);
        if (distance < closest) {
            closest = distance;
            best = (greedy_pair){sum, head, tail};
        }
        if (sum < target)
            do
                head++;
            while (taken[head]);
        else
            do
                tail--;
            while (tail > head && taken[tail]);
    }
    return best;
}

int schedule_greedy_sort(const double *times, int64_t groups, int64_t *ticks, int64_t *ids, tf_error *err)
{
    keyed *order = tf_alloc((size_t)groups, sizeof *order, "greedy order", err);
    if (!order)
        return TF_ERR_INPUT;
    double longest = 0;
    for (int64_t k = 0; k < groups; k++)
        longest = fmax(longest, times[k]);
    for (int64_t k = 0; k < groups; k++)
        order[k] = (keyed){longest > 0 ? (double)llround(times[k] / longest * SCHEDULE_GREEDY_TICKS) : 0, k};
    qsort(order, (size_t)groups, sizeof *order, compare_keyed); /* ascending (t, id) */
    ticks[0] = 0;
    for (int64_t p = 1; p <= groups; p++) {
        ticks[p] = (int64_t)order[p - 1].key;
        ids[p - 1] = order[p - 1].index;
    }
    free(order);
    return TF_OK;
}

int ref_schedule_greedy(schedule *s, const double *times, int64_t groups, int ranks, tf_error *err)
{
    if (schedule_check_times(times, groups, err) != TF_OK || schedule_alloc(s, groups, ranks, 2, err) != TF_OK)
        return TF_ERR_INPUT;
    int64_t *ticks = NULL, *ids = NULL, *free_tick = NULL, *free_group = NULL, *best_members = NULL, *members = NULL;
    char *used = NULL, *taken = NULL;
    int status = TF_ERR_INPUT; /* until every allocation and the sort succeeded */
    const size_t n1 = (size_t)groups + 1, bins = 2 * (size_t)ranks;
    if ((ticks = tf_alloc(n1, sizeof *ticks, "greedy ticks", err)) && (ids = tf_alloc(n1, sizeof *ids, "greedy ids", err)) &&
        (free_tick = tf_alloc(n1, sizeof *free_tick, "greedy free list", err)) &&
        (free_group = tf_alloc(n1, sizeof *free_group, "greedy free list", err)) &&
        (used = tf_alloc(n1, 1, "greedy flags", err)) && (taken = tf_alloc(n1, 1, "greedy flags", err)) &&
        (best_members = tf_alloc(bins, sizeof *best_members, "greedy bins", err)) &&
        (members = tf_alloc(bins, sizeof *members, "greedy bins", err)) &&
        schedule_greedy_sort(times, groups, ticks, ids, err) == TF_OK) {
        /* sorted position p = 1..n holds group ids[p-1]; position 0 is the sentinel */
        int64_t remaining = groups, iteration = 0;
        while (remaining > ranks) {
            /* the free list: the sentinel, then the unplaced positions ascending */
            int64_t count = 0;
            for (int64_t p = 0; p <= groups; p++)
                if (!used[p]) {
                    free_tick[count] = ticks[p];
                    free_group[count++] = p;
                }
            const int64_t last = count - 1;
            int64_t best_waste = INT64_MAX;
            /* candidate 0: the longest alone; candidate c >= 1: the longest with free position c */
            for (int64_t c = 0; c < last; c++) {
                memset(taken, 0, (size_t)count);
                taken[last] = 1;
                if (c > 0)
                    taken[c] = 1;
                const int64_t target = free_tick[last] + (c > 0 ? free_tick[c] : 0);
                members[0] = last;
                members[1] = c > 0 ? c : -1;
                int64_t highest = target, sum = 0;
                for (int j = 1; j < ranks; j++) {
                    greedy_pair pair = greedy_pair_scan(free_tick, taken, count, target);
                    members[2 * j] = pair.tail > 0 ? pair.tail : -1;
                    members[2 * j + 1] = pair.head > 0 ? pair.head : -1;
                    taken[pair.tail] = pair.tail > 0;
                    taken[pair.head] = pair.head > 0;
                    if (pair.sum > highest)
                        highest = pair.sum;
                    sum += pair.sum;
                }
                const int64_t waste = highest * ranks - sum - target; /* Eq. 9 without alpha */
                if (waste < best_waste) {
                    best_waste = waste;
                    memcpy(best_members, members, bins * sizeof *members);
                }
            }
            for (size_t b = 0; b < bins; b++)
                if (best_members[b] >= 0) {
                    const int64_t position = free_group[best_members[b]];
                    used[position] = 1;
                    s->iteration[ids[position - 1]] = iteration;
                    s->rank[ids[position - 1]] = (int32_t)(b / 2);
                    remaining--;
                }
            iteration++;
        }
        int32_t bin = 0; /* the last <= G groups: one per rank */
        for (int64_t p = 1; p <= groups; p++)
            if (!used[p]) {
                s->iteration[ids[p - 1]] = iteration;
                s->rank[ids[p - 1]] = bin++;
            }
        s->iterations = iteration + (bin > 0);
        status = TF_OK;
    }
    free(ticks);
    free(ids);
    free(free_tick);
    free(free_group);
    free(used);
    free(taken);
    free(best_members);
    free(members);
    if (status == TF_OK)
        status = schedule_balance_ranks(s, times, err);
    if (status != TF_OK)
        schedule_free(s);
    return status;
}

/* ---- the exhaustive optimum ---------------------------------------------------------------- */

typedef struct search {
    const double *times;   /* [n] descending */
    int64_t n;
    int ranks, per_rank;
    int64_t max_iterations;
    double alpha;
    int iterations;                          /* opened */
    int bins_open[SCHEDULE_OPTIMAL_MAX_GROUPS];
    double load[SCHEDULE_OPTIMAL_MAX_GROUPS][SCHEDULE_OPTIMAL_MAX_GROUPS];
    int count[SCHEDULE_OPTIMAL_MAX_GROUPS][SCHEDULE_OPTIMAL_MAX_GROUPS];
    int at_iteration[SCHEDULE_OPTIMAL_MAX_GROUPS], at_bin[SCHEDULE_OPTIMAL_MAX_GROUPS];
    double best;
    int best_iteration[SCHEDULE_OPTIMAL_MAX_GROUPS], best_bin[SCHEDULE_OPTIMAL_MAX_GROUPS];
} search;

/* Sum of iteration maxima plus alpha per opened iteration. */
static double partial_cost(const search *q)
{
    double cost = 0;
    for (int i = 0; i < q->iterations; i++) {
        double highest = 0;
        for (int b = 0; b < q->bins_open[i]; b++)
            highest = fmax(highest, q->load[i][b]);
        cost += highest + q->alpha;
    }
    return cost;
}

/* Place group k (descending order) in every distinct way and recurse. */
static void search_from(search *q, int64_t k)
{
    const double cost = partial_cost(q);
    if (cost >= q->best)
        return;
    if (k == q->n) {
        q->best = cost;
        memcpy(q->best_iteration, q->at_iteration, sizeof q->at_iteration);
        memcpy(q->best_bin, q->at_bin, sizeof q->at_bin);
        return;
    }
    const int ranks = q->ranks < SCHEDULE_OPTIMAL_MAX_GROUPS ? q->ranks : SCHEDULE_OPTIMAL_MAX_GROUPS;
    for (int i = 0; i <= q->iterations && i < q->max_iterations; i++) {
        const int opening = i == q->iterations;
        if (opening) {
            q->iterations++;
            q->bins_open[i] = 0;
        }
        for (int b = 0; b <= q->bins_open[i] && b < ranks; b++) {
            const int new_bin = b == q->bins_open[i];
            if (new_bin) {
                q->bins_open[i]++;
                q->load[i][b] = 0;
                q->count[i][b] = 0;
            }
            if (q->count[i][b] < q->per_rank) {
                q->load[i][b] += q->times[k];
                q->count[i][b]++;
                q->at_iteration[k] = i;
                q->at_bin[k] = b;
                search_from(q, k + 1);
                q->count[i][b]--;
                q->load[i][b] -= q->times[k];
                if (q->count[i][b] == 0)
                    q->load[i][b] = 0; /* exact again after the add and subtract */
            }
            if (new_bin)
                q->bins_open[i]--;
        }
        if (opening)
            q->iterations--;
    }
}

int ref_schedule_optimal(schedule *s, const double *times, int64_t groups, int ranks, int per_rank, double alpha,
                         tf_error *err)
{
    if (schedule_check_times(times, groups, err) != TF_OK)
        return TF_ERR_INPUT;
    if (groups > SCHEDULE_OPTIMAL_MAX_GROUPS)
        return tf_error_set(err, TF_ERR_INPUT, "exhaustive search of %lld groups: at most %d", (long long)groups,
                            SCHEDULE_OPTIMAL_MAX_GROUPS);
    if (!(alpha >= 0) || !isfinite(alpha))
        return tf_error_set(err, TF_ERR_INPUT, "alpha %g: expected a finite number >= 0", alpha);
    if (schedule_alloc(s, groups, ranks, per_rank, err) != TF_OK)
        return TF_ERR_INPUT;
    int64_t *ids = longest_first(times, groups, err);
    search *q = ids ? tf_alloc(1, sizeof *q, "search", err) : NULL;
    double *sorted = q ? tf_alloc((size_t)groups, sizeof *sorted, "search", err) : NULL;
    int status = sorted ? TF_OK : TF_ERR_INPUT;
    if (status == TF_OK) {
        for (int64_t k = 0; k < groups; k++)
            sorted[k] = times[ids[k]];
        q->times = sorted;
        q->n = groups;
        q->ranks = ranks;
        q->per_rank = per_rank;
        q->max_iterations = (groups + ranks - 1) / ranks;
        q->alpha = alpha;
        q->best = INFINITY;
        search_from(q, 0);
        int iterations = 0;
        for (int64_t k = 0; k < groups; k++) {
            s->iteration[ids[k]] = q->best_iteration[k];
            s->rank[ids[k]] = q->best_bin[k];
            iterations = q->best_iteration[k] + 1 > iterations ? q->best_iteration[k] + 1 : iterations;
        }
        s->iterations = iterations;
        status = schedule_balance_ranks(s, times, err);
    }
    free(ids);
    free(q);
    free(sorted);
    if (status != TF_OK)
        schedule_free(s);
    return status;
}

/* ---- the reference epoch ----------------------------------------------------------------------- */

static int compare_ids(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int ref_schedule_epoch(trainer *tr, const snapshot_seq *seq, const schedule *s, epoch_report *report, tf_error *err)
{
    memset(report, 0, sizeof *report);
    const train_schedule windows = trainer_schedule(tr);
    if (s->groups != windows.windows)
        return tf_error_set(err, TF_ERR_INPUT, "a schedule of %lld groups for %lld windows", (long long)s->groups,
                            (long long)windows.windows);
    placed *p = sorted_placement(s, err);
    if (!p)
        return TF_ERR_INPUT;
    /* p in (iteration, rank, id) order; one process runs an iteration in ascending id */
    int64_t *ids = tf_alloc((size_t)s->groups, sizeof *ids, "iteration groups", err);
    double loss_sum = 0;
    int status = ids ? TF_OK : TF_ERR_INPUT;
    for (int64_t start = 0, end; status == TF_OK && start < s->groups; start = end) {
        for (end = start; end < s->groups && p[end].iteration == p[start].iteration;)
            end++;
        const int64_t in_iteration = end - start;
        for (int64_t q = 0; q < in_iteration; q++)
            ids[q] = p[start + q].group;
        qsort(ids, (size_t)in_iteration, sizeof *ids, compare_ids);
        parameters_zero_grad(&tr->model.parameters);
        const float scale = 1.0f / (float)in_iteration;
        for (int64_t q = 0; status == TF_OK && q < in_iteration; q++)
            status = trainer_train_window(tr, seq, &windows, ids[q], scale, &loss_sum, err);
        if (status == TF_OK) {
            trainer_apply_gradient(tr);
            report->steps++;
        }
    }
    free(p);
    free(ids);
    if (status != TF_OK)
        return status;
    trainer_close_epoch(tr, &windows, loss_sum, report);
    return trainer_evaluate(tr, seq, tr->train_snapshots, seq->num_snapshots - tr->train_snapshots, &report->test_mse,
                            NULL, err);
}
