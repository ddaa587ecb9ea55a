#include "ref/core/rng.h"

#include <math.h>

/* SplitMix64: advances the state x [1] and returns the next output (seeds xoshiro). */
static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rotate_left(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void rng_seed(rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->state[i] = splitmix64(&seed);
}

void rng_seed_keyed(rng *r, uint64_t seed, uint64_t stream, uint64_t index)
{
    uint64_t x = seed;
    uint64_t key = splitmix64(&x) ^ stream;
    key = splitmix64(&key) ^ index;
    rng_seed(r, splitmix64(&key));
}

uint64_t rng_next(rng *r)
{
    uint64_t *s = r->state;
    uint64_t result = rotate_left(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotate_left(s[3], 45);
    return result;
}

double rng_uniform(rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

uint64_t rng_below(rng *r, uint64_t n)
{
    /* Reject the top partial block of 2^64 so every residue is equally likely. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = rng_next(r);
    while (x >= limit);
    return x % n;
}

double rng_normal(rng *r)
{
    double u1 = rng_uniform(r), u2 = rng_uniform(r);
    return sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}
