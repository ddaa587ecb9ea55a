/* The project's exp-based sigmoid and tanh (ref/nn/activation.h) against the C library's, in one
 * run so that the ratio means something on a noisy machine:
 *
 *   build/bench/bench_activation [COUNT [REPEATS]]     (default 65536 elements, 2000 repeats)
 *
 * Each loop is y = f(x) in place over COUNT floats spread over [-8, 8] (where a gate's
 * pre-activations live), run REPEATS times; the best of three runs of each is kept. Prints
 * elements per second and the speed-up of ref/nn/activation.h over libm. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/nn/activation.h"
#include "ref/core/clock.h"

static void libm_sigmoid(float *v, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        v[i] = 1.0f / (1.0f + expf(-v[i]));
}

static void libm_tanh(float *v, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        v[i] = tanhf(v[i]);
}

static void own_sigmoid(float *v, int64_t n)
{
#pragma omp simd
    for (int64_t i = 0; i < n; i++)
        v[i] = tf_sigmoidf(v[i]);
}

static void own_tanh(float *v, int64_t n)
{
#pragma omp simd
    for (int64_t i = 0; i < n; i++)
        v[i] = tf_tanhf(v[i]);
}

/* Best elements per second of three runs; the input is restored before each pass so every pass
 * sees the same spread of values. */
static double rate(void (*f)(float *, int64_t), const float *input, float *work, int64_t n, int repeats)
{
    double best = 0.0;
    for (int run = 0; run < 3; run++) {
        double seconds = 0.0;
        for (int r = 0; r < repeats; r++) {
            memcpy(work, input, (size_t)n * sizeof *work);
            double started = wall_seconds();
            f(work, n);
            seconds += wall_seconds() - started;
        }
        double per_second = (double)n * repeats / seconds;
        if (per_second > best)
            best = per_second;
    }
    return best;
}

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? (int64_t)strtod(argv[1], NULL) : 65536;
    int repeats = argc > 2 ? atoi(argv[2]) : 2000;
    if (n < 1 || repeats < 1) {
        fprintf(stderr, "bench_activation: COUNT and REPEATS must be positive\n");
        return 2;
    }
    float *input = malloc((size_t)n * sizeof *input);
    float *work = malloc((size_t)n * sizeof *work);
    if (!input || !work) {
        fprintf(stderr, "bench_activation: out of memory for %lld floats\n", (long long)n);
        return 1;
    }
    for (int64_t i = 0; i < n; i++)
        input[i] = -8.0f + 16.0f * (float)i / (float)n;
    struct {
        const char *name;
        void (*libm)(float *, int64_t);
        void (*own)(float *, int64_t);
    } rows[] = {{"sigmoid", libm_sigmoid, own_sigmoid}, {"tanh", libm_tanh, own_tanh}};
    printf("%-8s %16s %16s %8s\n", "function", "libm elem/s", "own elem/s", "speed-up");
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        double libm = rate(rows[r].libm, input, work, n, repeats);
        double own = rate(rows[r].own, input, work, n, repeats);
        printf("%-8s %16.3e %16.3e %7.2fx\n", rows[r].name, libm, own, own / libm);
    }
    free(input);
    free(work);
    return 0;
}
