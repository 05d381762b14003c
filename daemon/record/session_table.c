/* SPDX-License-Identifier: MIT */
/* Seeded chained hash table of sessions keyed by session key (see session_table.h). */
#include "session_table.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "session.h"

#define INITIAL_BUCKETS 256u

/* splitmix64's finaliser: spreads the seed into the hash's keys. */
static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* The full 128-bit product of a and b, folded to 64 bits: every input bit reaches the result. */
static uint64_t fold_mul(uint64_t a, uint64_t b)
{
#ifdef __SIZEOF_INT128__
    __extension__ typedef unsigned __int128 u128;
    u128 p = (u128)a * b;
    return (uint64_t)p ^ (uint64_t)(p >> 64);
#else
    return mix(a ^ mix(b));
#endif
}

static uint64_t load64(const char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static uint32_t load32(const char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Keys longer than two words, folded two words per step into the start of their hash. */
__attribute__((noinline)) static uint64_t fold_long_key(const session_table *t, const char *key,
                                                       size_t n)
{
    uint64_t h = t->k[2];
    for (size_t i = 0; i + 16 < n; i += 16)
        h = fold_mul(load64(key + i) ^ t->k[0], load64(key + i + 8) ^ h);
    return h;
}

/* A keyed hash of a key of n bytes: its first and last words (overlapping for n < 16, so no load
 * reaches past the key), after the words between them for n > 16. One multiply for the usual
 * 8-16 byte key: the lookup runs once per sample, and two rounds of mix() were a quarter of its
 * instructions. The keys k[] are random per process, so hostile keys cannot be chosen to share a
 * bucket. */
static inline uint64_t hash_key(const session_table *t, const char *key, size_t n)
{
    uint64_t a, b, h = t->k[2];
    if (n >= 8) {
        if (n > 16)
            h = fold_long_key(t, key, n);
        a = load64(key + (n > 16 ? n - 16 : 0));
        b = load64(key + n - 8);
    } else if (n >= 4) {
        a = load32(key);
        b = load32(key + n - 4);
    } else {
        a = 0;
        for (size_t j = 0; j < n; j++)
            a |= (uint64_t)(uint8_t)key[j] << (8 * j);
        b = 0;
    }
    return fold_mul(a ^ t->k[0], b ^ t->k[1] ^ h ^ n);
}

/* Compared inline the same way: a call to memcmp for a dozen bytes cost more than the compare.
 * First and last words first, which is all of a key of up to 16 bytes. */
static bool same_key(const recd_session *s, const char *key, size_t n)
{
    if (s->key_len != n)
        return false;
    const char *a = s->key;
    if (n >= 8) {
        if (load64(a) != load64(key) || load64(a + n - 8) != load64(key + n - 8))
            return false;
        for (size_t i = 8; i + 8 < n; i += 8)
            if (load64(a + i) != load64(key + i))
                return false;
        return true;
    }
    if (n >= 4)
        return load32(a) == load32(key) && load32(a + n - 4) == load32(key + n - 4);
    for (size_t j = 0; j < n; j++)
        if (a[j] != key[j])
            return false;
    return true;
}

int session_table_init(session_table *t)
{
    memset(t, 0, sizeof *t);
    t->buckets = calloc(INITIAL_BUCKETS, sizeof *t->buckets);
    if (!t->buckets)
        return -ENOMEM;
    t->nbuckets = INITIAL_BUCKETS;
    uint64_t seed;
    if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) != (ssize_t)sizeof seed)
        seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    for (size_t i = 0; i < 3; i++)
        t->k[i] = mix(seed + (i + 1) * 0x9e3779b97f4a7c15ull);
    return 0;
}

void session_table_free(session_table *t)
{
    free(t->buckets);
    memset(t, 0, sizeof *t);
}

recd_session *session_table_find(session_table *t, const char *key, size_t n)
{
    if (t->last && same_key(t->last, key, n))
        return t->last;
    if (!t->buckets)
        return NULL;
    recd_session *s = t->buckets[hash_key(t, key, n) & (t->nbuckets - 1)];
    while (s && !same_key(s, key, n))
        s = s->hnext;
    if (s)
        t->last = s;
    return s;
}

recd_session *session_table_get(session_table *t, const char *key)
{
    return session_table_find(t, key, strnlen(key, RECD_SESSION_KEY_MAX + 1));
}

static int grow(session_table *t)
{
    size_t n = t->nbuckets * 2;
    recd_session **b = calloc(n, sizeof *b);
    if (!b)
        return -ENOMEM;
    for (size_t i = 0; i < t->nbuckets; i++) {
        recd_session *s = t->buckets[i];
        while (s) {
            recd_session *next = s->hnext;
            size_t k = hash_key(t, s->key, s->key_len) & (n - 1);
            s->hnext = b[k];
            b[k] = s;
            s = next;
        }
    }
    free(t->buckets);
    t->buckets = b;
    t->nbuckets = n;
    return 0;
}

int session_table_put(session_table *t, recd_session *s)
{
    if (t->count >= t->nbuckets && grow(t) < 0 && !t->buckets)
        return -ENOMEM; /* a failed grow still leaves a working (longer-chained) table */
    size_t k = hash_key(t, s->key, s->key_len) & (t->nbuckets - 1);
    s->hnext = t->buckets[k];
    t->buckets[k] = s;
    t->count++;
    return 0;
}

uint64_t session_table_hash(const session_table *t, const char *key, size_t len)
{
    return hash_key(t, key, len);
}

void session_table_remove(session_table *t, recd_session *s)
{
    if (t->last == s)
        t->last = NULL;
    recd_session **pp = &t->buckets[hash_key(t, s->key, s->key_len) & (t->nbuckets - 1)];
    while (*pp && *pp != s)
        pp = &(*pp)->hnext;
    if (*pp) {
        *pp = s->hnext;
        s->hnext = NULL;
        t->count--;
    }
}
