/**
 * @file ref/core/digest.h
 * @brief The project's 64-bit digest of bytes: tells one dataset, checkpoint or parameter state
 *        from another (checkpoints record it, MPI ranks compare it). Not for adversaries.
 *
 * Each 8-byte word (then each last byte) is XORed into the hash, which splitmix64's finalizer then
 * mixes: a bijection in which every input bit changes every output bit with probability about
 * 1/2. FNV-1a's step alone (XOR, then multiply) is not enough over whole words: a multiply only
 * carries a change of bit k into bits k and above, so flipping bit 63 of two words (the signs of
 * two floats) cancelled and other data got the same digest. A few ns a word: every run computes
 * its data's digest.
 */
#ifndef TWOFOLD_REF_DIGEST_H
#define TWOFOLD_REF_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Where a digest starts. */
#define TF_DIGEST_START 0xcbf29ce484222325ull

/**
 * Continue @p hash over @p size bytes.
 * @param hash   TF_DIGEST_START, or the digest so far
 * @param bytes  the bytes (any alignment)
 * @param size   their number
 * @return the digest with them
 */
uint64_t tf_digest(uint64_t hash, const void *bytes, size_t size);

#ifdef __cplusplus
}
#endif

#endif
