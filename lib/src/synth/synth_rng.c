/* SPDX-License-Identifier: MIT */
/* The synthetic generators' PRNG: xoshiro256** seeded through splitmix64. Our own code, so a seed
 * gives the same sequence on every platform (rand() and random() differ between libcs). */
#include "synth/synth_internal.h"

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void recd_synth_rng_seed(recd_synth_rng *r, uint64_t seed)
{
    uint64_t sm = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&sm);
}

uint64_t recd_synth_rng_next(recd_synth_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double recd_synth_rng_unit(recd_synth_rng *r)
{
    return (double)(recd_synth_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

double recd_synth_rng_range(recd_synth_rng *r, double lo, double hi)
{
    return lo + (hi - lo) * recd_synth_rng_unit(r);
}

/* Lemire's multiply-and-reject: no modulo bias. */
uint32_t recd_synth_rng_below(recd_synth_rng *r, uint32_t n)
{
    if (n == 0)
        return 0;
    uint64_t m = (recd_synth_rng_next(r) >> 32) * n;
    uint32_t low = (uint32_t)m;
    if (low < n) {
        uint32_t threshold = (uint32_t)(-n) % n;
        while (low < threshold) {
            m = (recd_synth_rng_next(r) >> 32) * n;
            low = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

bool recd_synth_rng_chance(recd_synth_rng *r, double p)
{
    return recd_synth_rng_unit(r) < p;
}

int synth_pick_weighted(recd_synth_rng *r, const unsigned *weights, int n)
{
    unsigned total = 0;
    for (int i = 0; i < n; i++)
        total += weights[i];
    unsigned x = recd_synth_rng_below(r, total);
    for (int i = 0; i < n; i++) {
        if (x < weights[i])
            return i;
        x -= weights[i];
    }
    return n - 1;
}
