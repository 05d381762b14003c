/* Seeded chained hash table of sessions keyed by session key (see session_table.h). */
#include "session_table.h"

#include <errno.h>
#include <stddef.h>
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

static uint64_t hash_key(uint64_t seed, const char *key, size_t n)
{
    uint64_t h = mix(seed);
    for (size_t i = 0; i < n; i += 8) {
        uint64_t w = 0;
        if (n - i >= 8) {
            for (size_t j = 0; j < 8; j++)
                w |= (uint64_t)(uint8_t)key[i + j] << (8 * j);
        } else {
            for (size_t j = 0; i + j < n; j++)
                w |= (uint64_t)(uint8_t)key[i + j] << (8 * j);
        }
        h = mix(h ^ w) + n;
    }
    return h;
}

/* Length first: most different keys differ there or in their first bytes. */
static bool same_key(const recd_session *s, const char *key, size_t n)
{
    return s->key_len == n && memcmp(s->key, key, n) == 0;
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
    return 0;
}

void session_table_free(session_table *t)
{
    free(t->buckets);
    memset(t, 0, sizeof *t);
}

recd_session *session_table_get(session_table *t, const char *key)
{
    size_t n = strnlen(key, RECD_SESSION_KEY_MAX + 1);
    if (t->last && same_key(t->last, key, n))
        return t->last;
    if (!t->buckets)
        return NULL;
    recd_session *s = t->buckets[hash_key(t->seed, key, n) & (t->nbuckets - 1)];
    while (s && !same_key(s, key, n))
        s = s->hnext;
    if (s)
        t->last = s;
    return s;
}

void session_table_prefetch(const session_table *t, const char *key, size_t n)
{
    if (!t->buckets || n > RECD_SESSION_KEY_MAX)
        return;
    const recd_session *s = t->buckets[hash_key(t->seed, key, n) & (t->nbuckets - 1)];
    if (!s)
        return;
    /* The lines a sample touches (session.h keeps them first). */
    for (size_t off = 0; off < offsetof(recd_session, prev); off += 64)
        __builtin_prefetch((const char *)s + off, 1);
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
            size_t k = hash_key(t->seed, s->key, s->key_len) & (n - 1);
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
    size_t k = hash_key(t->seed, s->key, s->key_len) & (t->nbuckets - 1);
    s->hnext = t->buckets[k];
    t->buckets[k] = s;
    t->count++;
    return 0;
}

void session_table_remove(session_table *t, recd_session *s)
{
    if (t->last == s)
        t->last = NULL;
    recd_session **pp = &t->buckets[hash_key(t->seed, s->key, s->key_len) & (t->nbuckets - 1)];
    while (*pp && *pp != s)
        pp = &(*pp)->hnext;
    if (*pp) {
        *pp = s->hnext;
        s->hnext = NULL;
        t->count--;
    }
}
