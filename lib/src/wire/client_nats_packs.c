/* SPDX-License-Identifier: MIT */
/* The JetStream publisher's pending packs (client_nats_packs.h): a hash table by session key and
 * a list by age. */
#include "wire/client_nats_packs.h"

#include <stdlib.h>
#include <string.h>

static uint32_t bucket_of(const char *key, size_t key_len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < key_len; i++)
        h = (h ^ (uint8_t)key[i]) * 16777619u;
    return h % NATS_PACK_BUCKETS;
}

nats_pack *nats_packs_find(nats_packs *t, const char *key, size_t key_len)
{
    for (nats_pack *p = t->buckets[bucket_of(key, key_len)]; p; p = p->chain)
        if (p->key_len == key_len && memcmp(p->key, key, key_len) == 0)
            return p;
    return NULL;
}

nats_pack *nats_packs_add(nats_packs *t, const char *key, size_t key_len, uint64_t now_ms)
{
    nats_pack *p = calloc(1, sizeof *p);
    if (!p || key_len > RECD_SESSION_KEY_MAX || fleet_packer_start(&p->pk, key, key_len) < 0) {
        if (p)
            fleet_packer_free(&p->pk);
        free(p);
        return NULL;
    }
    memcpy(p->key, key, key_len);
    p->key_len = key_len;
    p->opened_ms = now_ms;
    uint32_t b = bucket_of(key, key_len);
    p->chain = t->buckets[b];
    t->buckets[b] = p;
    p->older = t->newest;
    if (t->newest)
        t->newest->newer = p;
    else
        t->oldest = p;
    t->newest = p;
    t->bytes += p->pk.buf.len;
    return p;
}

void nats_packs_remove(nats_packs *t, nats_pack *p)
{
    nats_pack **link = &t->buckets[bucket_of(p->key, p->key_len)];
    while (*link != p)
        link = &(*link)->chain;
    *link = p->chain;
    if (p->older)
        p->older->newer = p->newer;
    else
        t->oldest = p->newer;
    if (p->newer)
        p->newer->older = p->older;
    else
        t->newest = p->older;
    t->bytes -= p->pk.buf.len;
    fleet_packer_free(&p->pk);
    free(p);
}

void nats_packs_free(nats_packs *t)
{
    while (t->oldest)
        nats_packs_remove(t, t->oldest);
}
