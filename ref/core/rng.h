/**
 * @file ref/core/rng.h
 * @brief Seeded pseudo-random numbers: xoshiro256** seeded through splitmix64.
 *
 * Every random choice in twofold (generators, initial weights, negative sampling) draws
 * from an explicit `rng` value, never from a global, so a seed fully determines a run and
 * independent streams (one per rank, one per purpose) never interfere. xoshiro256** is
 * Blackman and Vigna's generator (2018): 256 bits of state, passes BigCrush, four lines
 * of code. splitmix64 spreads a small seed over the state, as its authors recommend.
 */
#ifndef TWOFOLD_REF_RNG_H
#define TWOFOLD_REF_RNG_H

#include <stdint.h>

/** Generator state; copy it to fork a reproducible stream. */
typedef struct rng {
    uint64_t state[4];   /**< never all zero */
} rng;

/** Seed @p r from @p seed (any value, 0 included). */
void rng_seed(rng *r, uint64_t seed);

/**
 * Seed @p r for event @p index of stream @p stream under @p seed: the draws of one event (batch
 * number q of a run, call number c of a ledger) never depend on which rank or thread makes
 * them, or on the events drawn before it. splitmix64 of the seed, then of the stream, then of
 * the index.
 */
void rng_seed_keyed(rng *r, uint64_t seed, uint64_t stream, uint64_t index);

/** Next 64 random bits. */
uint64_t rng_next(rng *r);

/** Uniform double in [0, 1) with 53 random bits. */
double rng_uniform(rng *r);

/** Uniform integer in [0, n), without modulo bias. @p n must be > 0. */
uint64_t rng_below(rng *r, uint64_t n);

/** Standard normal sample (Box-Muller; uses one pair per call, discarding the second). */
double rng_normal(rng *r);

#endif
