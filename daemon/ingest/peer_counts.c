/* SPDX-License-Identifier: MIT */
/* Connections per peer address (see peer_counts.h). */
#include "peer_counts.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#define PEER_BUCKETS 1024u

struct peer_count_entry {
    peer_count_entry *next;
    peer_key key;
    uint32_t count;
};

void peer_key_from_sockaddr(const struct sockaddr *sa, peer_key *key)
{
    memset(key, 0, sizeof *key);
    if (!sa)
        return;
    if (sa->sa_family == AF_INET) {
        key->family = AF_INET;
        memcpy(key->addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    } else if (sa->sa_family == AF_INET6) {
        key->family = AF_INET6;
        memcpy(key->addr, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
    }
}

bool peer_key_equal(const peer_key *a, const peer_key *b)
{
    return a->family == b->family && memcmp(a->addr, b->addr, sizeof a->addr) == 0;
}

static size_t bucket_of(const peer_key *key)
{
    uint64_t h = 1469598103934665603ull ^ key->family; /* FNV-1a */
    for (size_t i = 0; i < sizeof key->addr; i++)
        h = (h ^ key->addr[i]) * 1099511628211ull;
    return (size_t)(h % PEER_BUCKETS);
}

static peer_count_entry **find(const peer_counts *pc, const peer_key *key)
{
    peer_count_entry **e = &pc->buckets[bucket_of(key)];
    while (*e && !peer_key_equal(&(*e)->key, key))
        e = &(*e)->next;
    return e;
}

uint32_t peer_counts_add(peer_counts *pc, const peer_key *key)
{
    if (!key->family)
        return 0;
    if (!pc->buckets && !(pc->buckets = calloc(PEER_BUCKETS, sizeof *pc->buckets)))
        return 0;
    peer_count_entry **e = find(pc, key);
    if (!*e) {
        if (!(*e = calloc(1, sizeof **e)))
            return 0;
        (*e)->key = *key;
    }
    return ++(*e)->count;
}

void peer_counts_remove(peer_counts *pc, const peer_key *key)
{
    if (!key->family || !pc->buckets)
        return;
    peer_count_entry **e = find(pc, key);
    if (!*e || --(*e)->count > 0)
        return;
    peer_count_entry *gone = *e;
    *e = gone->next;
    free(gone);
}

uint32_t peer_counts_get(const peer_counts *pc, const peer_key *key)
{
    if (!key->family || !pc->buckets)
        return 0;
    peer_count_entry **e = find(pc, key);
    return *e ? (*e)->count : 0;
}

void peer_counts_free(peer_counts *pc)
{
    if (!pc->buckets)
        return;
    for (size_t i = 0; i < PEER_BUCKETS; i++) {
        while (pc->buckets[i]) {
            peer_count_entry *e = pc->buckets[i];
            pc->buckets[i] = e->next;
            free(e);
        }
    }
    free(pc->buckets);
    pc->buckets = NULL;
}
