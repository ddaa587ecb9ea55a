#include "ref/nn/compare.h"

#include <math.h>
#include <string.h>

double relative_error(const float *ours, const float *reference, int64_t n)
{
    double worst = 0;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs((double)ours[i] - (double)reference[i]) / fmax(1.0, fabs((double)reference[i]));
        worst = isnan(e) ? INFINITY : fmax(worst, e);
    }
    return worst;
}

int64_t differing_values(const float *a, const float *b, int64_t n)
{
    int64_t differing = 0;
    for (int64_t i = 0; i < n; i++)
        differing += memcmp(&a[i], &b[i], sizeof(float)) != 0;
    return differing;
}

int64_t differing_doubles(const double *a, const double *b, int64_t n)
{
    int64_t differing = 0;
    for (int64_t i = 0; i < n; i++)
        differing += memcmp(&a[i], &b[i], sizeof(double)) != 0;
    return differing;
}

double parameters_relative_error(const parameter_list *ours, const parameter_list *reference)
{
    double worst = 0;
    for (int64_t i = 0; i < reference->count; i++)
        worst = fmax(worst, relative_error(ours->items[i].value.data, reference->items[i].value.data,
                                           reference->items[i].value.size));
    return worst;
}

int64_t parameters_differing_values(const parameter_list *a, const parameter_list *b)
{
    int64_t differing = 0;
    for (int64_t i = 0; i < a->count; i++)
        differing += differing_values(a->items[i].value.data, b->items[i].value.data, a->items[i].value.size);
    return differing;
}
