/* Two fp-equal runs compared (bench/drift_compare.h). */
#include "bench/drift_compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double drift_relative(double ours, double reference) { return fabs(ours - reference) / fmax(1.0, fabs(reference)); }

int64_t drift_kink_crossings(trainer *a, trainer *b, const snapshot_seq *seq, const train_schedule *s, int64_t step,
                             int64_t number, int64_t rows, int64_t print, const char *label_a, const char *label_b,
                             tf_error *err)
{
    const int64_t n = seq->num_nodes, width = a->model.config.hidden, out = a->model.config.out_features;
    int64_t crossings = 0;
    for (int64_t slot = 0; slot < s->batch; slot++) {
        const int64_t w = train_schedule_window(s, step, slot);
        if (w < 0)
            continue;
        int64_t first, count;
        train_schedule_span(s, w, &first, &count);
        const int64_t size = count * n * width;
        float *predictions = malloc((size_t)(count * n * out) * sizeof(float)), *states = malloc((size_t)size * sizeof(float));
        window_tape tape;
        int status = predictions && states ? model_forward(&a->model, seq, first, count, &tape, predictions, err)
                                           : tf_error_set(err, TF_ERR_INPUT, "out of memory");
        if (status == TF_OK) {
            memcpy(states, tape.states, (size_t)size * sizeof(float));
            window_tape_free(&a->model, &tape);
            status = model_forward(&b->model, seq, first, count, &tape, predictions, err);
        }
        for (int64_t i = 0; status == TF_OK && i < size; i++)
            if (i / width % n < rows && (states[i] > 0) != (tape.states[i] > 0) && ++crossings <= print)
                printf("  step %lld, window %lld: H[snapshot %lld][vertex %lld][unit %lld] is %.9g on %s, "
                       "%.9g on %s: opposite sides of the ReLU\n", (long long)number, (long long)w,
                       (long long)(first + i / (n * width)), (long long)(i / width % n), (long long)(i % width),
                       states[i], label_a, tape.states[i], label_b);
        if (status == TF_OK)
            window_tape_free(&b->model, &tape);
        free(predictions);
        free(states);
        if (status != TF_OK)
            return -1;
    }
    return crossings;
}

int drift_nearest_kink(trainer *a, const snapshot_seq *seq, const train_schedule *s, int64_t step, float *value,
                       int64_t place[3], tf_error *err)
{
    const int64_t n = seq->num_nodes, width = model_state_width(&a->model), out = a->model.config.out_features;
    *value = INFINITY;
    for (int64_t slot = 0; slot < s->batch; slot++) {
        const int64_t w = train_schedule_window(s, step, slot);
        if (w < 0)
            continue;
        int64_t first, count;
        train_schedule_span(s, w, &first, &count);
        float *predictions = malloc((size_t)(count * n * out) * sizeof(float));
        window_tape tape;
        if (!predictions) {
            tf_error_set(err, TF_ERR_INPUT, "out of memory");
            return -1;
        }
        if (model_forward(&a->model, seq, first, count, &tape, predictions, err) != TF_OK) {
            free(predictions);
            return -1;
        }
        for (int64_t i = 0; i < count * n * width; i++)
            if (fabsf(tape.states[i]) < *value) {
                *value = fabsf(tape.states[i]);
                place[0] = first + i / (n * width), place[1] = i / width % n, place[2] = i % width;
            }
        window_tape_free(&a->model, &tape);
        free(predictions);
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
