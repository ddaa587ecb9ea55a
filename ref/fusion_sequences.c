#include "ref/fusion_sequences.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"
#include "ref/core/rng.h"

void sequence_set_free(sequence_set *set)
{
    free(set->offsets);
    free(set->vertex);
    free(set->first_snapshot);
    memset(set, 0, sizeof *set);
}

static int sequence_set_alloc(sequence_set *set, int64_t count, int with_origin, tf_error *err)
{
    memset(set, 0, sizeof *set);
    set->count = count;
    set->offsets = tf_alloc((size_t)count + 1, sizeof *set->offsets, "sequence offsets", err);
    if (set->offsets && with_origin) {
        set->vertex = tf_alloc((size_t)count, sizeof *set->vertex, "sequence vertices", err);
        set->first_snapshot =
            set->vertex ? tf_alloc((size_t)count, sizeof *set->first_snapshot, "sequence first snapshots", err) : NULL;
    }
    if (!set->offsets || (with_origin && !set->first_snapshot)) {
        sequence_set_free(set);
        return err->code;
    }
    return TF_OK;
}

int sequence_set_from_lengths(const int64_t *lengths, int64_t count, sequence_set *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    if (count < 1)
        return tf_error_set(err, TF_ERR_INPUT, "sequence set: need at least one sequence, got %lld", (long long)count);
    for (int64_t s = 0; s < count; s++)
        if (lengths[s] < 1)
            return tf_error_set(err, TF_ERR_INPUT, "sequence set: sequence %lld has length %lld, must be >= 1",
                                (long long)s, (long long)lengths[s]);
    if (sequence_set_alloc(out, count, 0, err) != TF_OK)
        return err->code;
    for (int64_t s = 0; s < count; s++) {
        out->offsets[s + 1] = out->offsets[s] + lengths[s];
        if (lengths[s] > out->max_length)
            out->max_length = lengths[s];
    }
    out->total_steps = out->offsets[count];
    return TF_OK;
}

/* Sequences from alive [num_snapshots][num_nodes] (1: alive): each maximal run of alive snapshots
 * of one vertex, ordered by first snapshot, then vertex. */
static int sequences_from_alive(const uint8_t *alive, int64_t num_snapshots, int64_t num_nodes, const char *what,
                                sequence_set *out, tf_error *err)
{
    int64_t count = 0;
    for (int64_t t = 0; t < num_snapshots; t++)
        for (int64_t v = 0; v < num_nodes; v++)
            count += alive[t * num_nodes + v] && (t == 0 || !alive[(t - 1) * num_nodes + v]);
    if (count == 0)
        return tf_error_set(err, TF_ERR_INPUT, "%s: no vertex is alive in any snapshot, so there is no sequence", what);
    if (sequence_set_alloc(out, count, 1, err) != TF_OK)
        return err->code;
    int64_t s = 0;
    for (int64_t t = 0; t < num_snapshots; t++)
        for (int64_t v = 0; v < num_nodes; v++) {
            if (!alive[t * num_nodes + v] || (t > 0 && alive[(t - 1) * num_nodes + v]))
                continue;
            int64_t length = 0;
            while (t + length < num_snapshots && alive[(t + length) * num_nodes + v])
                length++;
            out->vertex[s] = (int32_t)v;
            out->first_snapshot[s] = (int32_t)t;
            out->offsets[s + 1] = out->offsets[s] + length;
            if (length > out->max_length)
                out->max_length = length;
            s++;
        }
    out->total_steps = out->offsets[count];
    return TF_OK;
}

int sequence_set_from_snapshots(const snapshot_seq *seq, int require_edge, sequence_set *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    const int64_t T = seq->num_snapshots, N = seq->num_nodes;
    uint8_t *alive = tf_alloc((size_t)(T * N), 1, "vertex lifetimes", err);
    if (!alive)
        return err->code;
    for (int64_t t = 0; t < T; t++) {
        const snapshot *snap = &seq->snapshots[t];
        uint8_t *row = alive + t * N;
        if (require_edge) {
            /* in-edges by destination: a vertex with a row of edges, or appearing as a source */
            for (int64_t v = 0; v < N; v++) {
                if (snap->graph.row_ptr[v + 1] > snap->graph.row_ptr[v])
                    row[v] = 1;
                for (int64_t e = snap->graph.row_ptr[v]; e < snap->graph.row_ptr[v + 1]; e++)
                    row[snap->graph.col[e]] = 1;
            }
            for (int64_t v = 0; v < N; v++)
                row[v] = row[v] && snap->present[v];
        } else {
            memcpy(row, snap->present, (size_t)N);
        }
    }
    int status = sequences_from_alive(alive, T, N, "snapshot lifetimes", out, err);
    free(alive);
    return status;
}

int sequence_set_from_events(const event_stream *events, int64_t num_snapshots, sequence_set *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    if (num_snapshots < 1)
        return tf_error_set(err, TF_ERR_INPUT, "event lifetimes: need at least one snapshot, got %lld",
                            (long long)num_snapshots);
    if (events->num_events < 1)
        return tf_error_set(err, TF_ERR_INPUT, "event lifetimes: the event stream is empty");
    const int64_t N = events->num_nodes;
    uint8_t *alive = tf_alloc((size_t)(num_snapshots * N), 1, "vertex lifetimes", err);
    if (!alive)
        return err->code;
    const double first = events->time[0], span = events->time[events->num_events - 1] - first;
    for (int64_t i = 0; i < events->num_events; i++) {
        /* equal time spans; the last timestamp closes the last snapshot */
        int64_t t = span > 0 ? (int64_t)((events->time[i] - first) / span * (double)num_snapshots) : 0;
        if (t >= num_snapshots)
            t = num_snapshots - 1;
        alive[t * N + events->src[i]] = 1;
        alive[t * N + events->dst[i]] = 1;
    }
    int status = sequences_from_alive(alive, num_snapshots, N, "event lifetimes", out, err);
    free(alive);
    return status;
}

const char *length_distribution_name(length_distribution kind)
{
    switch (kind) {
    case LENGTHS_UNIFORM: return "uniform";
    case LENGTHS_HEAVY_TAILED: return "heavy-tailed";
    case LENGTHS_EQUAL: return "all equal";
    case LENGTHS_ONE: return "all length 1";
    }
    return "unknown";
}

int sequence_set_generate(length_distribution kind, int64_t count, int64_t max_length, uint64_t seed,
                          sequence_set *out, tf_error *err)
{
    memset(out, 0, sizeof *out);
    if (count < 1 || max_length < 1)
        return tf_error_set(err, TF_ERR_INPUT, "generated lengths: count %lld and max length %lld must be >= 1",
                            (long long)count, (long long)max_length);
    int64_t *lengths = tf_alloc((size_t)count, sizeof *lengths, "sequence lengths", err);
    if (!lengths)
        return err->code;
    rng r;
    rng_seed(&r, seed);
    for (int64_t s = 0; s < count; s++) {
        switch (kind) {
        case LENGTHS_UNIFORM: lengths[s] = 1 + (int64_t)rng_below(&r, (uint64_t)max_length); break;
        case LENGTHS_HEAVY_TAILED: {
            /* P(length >= k) = k^-1.2: two thirds are 1 or 2, a few reach the cap */
            double u = 1.0 - rng_uniform(&r); /* in (0, 1] */
            double length = floor(pow(u, -1.0 / 1.2));
            lengths[s] = length >= (double)max_length ? max_length : (int64_t)length;
            break;
        }
        case LENGTHS_EQUAL: lengths[s] = max_length; break;
        case LENGTHS_ONE: lengths[s] = 1; break;
        default:
            free(lengths);
            return tf_error_set(err, TF_ERR_INPUT, "generated lengths: unknown distribution %d", kind);
        }
    }
    int status = sequence_set_from_lengths(lengths, count, out, err);
    free(lengths);
    return status;
}
