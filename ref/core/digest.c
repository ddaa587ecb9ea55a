#include "ref/core/digest.h"

#include <string.h>

/* splitmix64's finalizer (ref/core/digest.h). */
static uint64_t mix(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

uint64_t tf_digest(uint64_t hash, const void *bytes, size_t size)
{
    const unsigned char *b = bytes;
    size_t i = 0;
    for (; i + 8 <= size; i += 8) {
        uint64_t word;
        memcpy(&word, b + i, sizeof word); /* any alignment */
        hash = mix(hash ^ word);
    }
    for (; i < size; i++)
        hash = mix(hash ^ b[i]);
    return hash;
}
