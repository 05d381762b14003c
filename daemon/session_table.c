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

/* A keyed 64-bit mix over the key bytes (splitmix64 finaliser per 8-byte word). */
static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
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

/* A key of n bytes as words: 8 bytes at a time, the last word overlapping the one before it, so
 * no load reaches past the key. */
static uint64_t hash_key(const session_table *t, const char *key, size_t n)
{
    uint64_t h = t->seed_mixed;
    if (n >= 8) {
        for (size_t i = 0; i + 8 < n; i += 8)
            h = mix(h ^ load64(key + i)) + n;
        return mix(h ^ load64(key + n - 8)) + n;
    }
    uint64_t w = 0;
    if (n >= 4)
        w = load32(key) | (uint64_t)load32(key + n - 4) << 32;
    else
        for (size_t j = 0; j < n; j++)
            w |= (uint64_t)(uint8_t)key[j] << (8 * j);
    return mix(h ^ w) + n;
}

/* Compared inline the same way: a call to memcmp for a dozen bytes cost more than the compare. */
static bool same_key(const recd_session *s, const char *key, size_t n)
{
    if (s->key_len != n)
        return false;
    const char *a = s->key;
    if (n >= 8) {
        for (size_t i = 0; i + 8 < n; i += 8)
            if (load64(a + i) != load64(key + i))
                return false;
        return load64(a + n - 8) == load64(key + n - 8);
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
    if (getrandom(&t->seed, sizeof t->seed, GRND_NONBLOCK) != (ssize_t)sizeof t->seed)
        t->seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    t->seed_mixed = mix(t->seed);
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
