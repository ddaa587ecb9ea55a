/* Two fp-equal runs compared (bench/drift_compare.h). */
#include "bench/drift_compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double drift_relative(double ours, double reference) { return fabs(ours - reference) / fmax(1.0, fabs(reference)); }

/* The hidden states [count][N][width] of trainer @p a's forward over the window of slot @p slot of
 * step @p step (its span into *first and *count), copied into a buffer the caller frees; NULL with
 * *count = 0 when the step has no such window, NULL with @p err set on failure. */
static float *window_states(trainer *a, const snapshot_seq *seq, const train_schedule *s, int64_t step, int64_t slot,
                            int64_t *first, int64_t *count, tf_error *err)
{
    const int64_t w = train_schedule_window(s, step, slot);
    *count = 0;
    if (w < 0)
        return NULL;
    train_schedule_span(s, w, first, count);
    const int64_t n = seq->num_nodes, size = *count * n * model_state_width(&a->model);
    float *predictions = malloc((size_t)(*count * n * a->model.config.out_features) * sizeof(float));
    float *states = malloc((size_t)size * sizeof(float));
    window_tape tape;
    int status = predictions && states ? model_forward(&a->model, seq, *first, *count, &tape, predictions, err)
                                       : tf_error_set(err, TF_ERR_INPUT, "out of memory");
    if (status == TF_OK) {
        memcpy(states, tape.states, (size_t)size * sizeof(float));
        window_tape_free(&a->model, &tape);
    }
    free(predictions);
    if (status != TF_OK) {
        free(states);
        *count = -1;
        return NULL;
    }
    return states;
}

int64_t drift_kink_crossings(trainer *a, trainer *b, const snapshot_seq *seq, const train_schedule *s, int64_t step,
                             int64_t number, int64_t rows, int64_t print, const char *label_a, const char *label_b,
                             tf_error *err)
{
    const int64_t n = seq->num_nodes, width = model_state_width(&a->model);
    int64_t crossings = 0;
    for (int64_t slot = 0; slot < s->batch; slot++) {
        int64_t first = 0, count, count_b;
        float *states = window_states(a, seq, s, step, slot, &first, &count, err);
        float *other = states ? window_states(b, seq, s, step, slot, &first, &count_b, err) : NULL;
        for (int64_t i = 0; other && i < count * n * width; i++)
            if (i / width % n < rows && (states[i] > 0) != (other[i] > 0) && ++crossings <= print)
                printf("  step %lld, window %lld: H[snapshot %lld][vertex %lld][unit %lld] is %.9g on %s, "
                       "%.9g on %s: opposite sides of the ReLU\n", (long long)number,
                       (long long)train_schedule_window(s, step, slot), (long long)(first + i / (n * width)),
                       (long long)(i / width % n), (long long)(i % width), states[i], label_a, other[i], label_b);
        free(states);
        free(other);
        if (count < 0 || (states && !other))
            return -1;
    }
    return crossings;
}

int drift_nearest_kink(trainer *a, const snapshot_seq *seq, const train_schedule *s, int64_t step, float *value,
                       int64_t place[3], tf_error *err)
{
    const int64_t n = seq->num_nodes, width = model_state_width(&a->model);
    *value = INFINITY;
    for (int64_t slot = 0; slot < s->batch; slot++) {
        int64_t first = 0, count;
        float *states = window_states(a, seq, s, step, slot, &first, &count, err);
        if (count < 0)
            return -1;
        for (int64_t i = 0; states && i < count * n * width; i++)
            if (fabsf(states[i]) < *value) {
                *value = fabsf(states[i]);
                place[0] = first + i / (n * width), place[1] = i / width % n, place[2] = i % width;
            }
        free(states);
    }
    return 0;
}

double drift_worst_of(const trainer *a, const trainer *b, int values, int64_t *differ, int64_t *total,
                      const char **name)
{
    double worst = 0;
    *differ = *total = 0;
    for (int64_t i = 0; i < a->model.parameters.count; i++) {
        const parameter *p = &a->model.parameters.items[i], *q = &b->model.parameters.items[i];
        const float *x = values ? p->value.data : p->grad.data, *y = values ? q->value.data : q->grad.data;
        *total += p->value.size;
        for (int64_t k = 0; k < p->value.size; k++) {
            *differ += memcmp(&x[k], &y[k], sizeof(float)) != 0;
            if (drift_relative(y[k], x[k]) > worst) {
                worst = drift_relative(y[k], x[k]);
                *name = p->name;
            }
        }
    }
    return worst;
}
