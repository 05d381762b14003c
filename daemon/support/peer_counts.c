/* SPDX-License-Identifier: MIT */
/* Counts per peer (see peer_counts.h). */
#include "peer_counts.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PEER_BUCKETS 1024u

void peer_key_from_sockaddr(const struct sockaddr *sa, peer_key *key)
{
    memset(key, 0, sizeof *key);
    if (!sa)
        return;
    if (sa->sa_family == AF_INET) {
        key->family = AF_INET;
        memcpy(key->addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    } else if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(a)) { /* a dual-stack listener's IPv4 client */
            key->family = AF_INET;
            memcpy(key->addr, a->s6_addr + 12, 4);
            return;
        }
        /* One host usually has a whole /64: counting per address would let it take any share. */
        key->family = AF_INET6;
        memcpy(key->addr, a->s6_addr, 8);
    }
}

void peer_key_from_uid(uid_t uid, peer_key *key)
{
    memset(key, 0, sizeof *key);
    key->family = AF_UNIX;
    memcpy(key->addr, &uid, sizeof uid);
}

bool peer_key_equal(const peer_key *a, const peer_key *b)
{
    return a->family == b->family && memcmp(a->addr, b->addr, sizeof a->addr) == 0;
}

const char *peer_key_name(const peer_key *key, char *buf, size_t cap)
{
    char text[INET6_ADDRSTRLEN] = "?";
    if (key->family == AF_UNIX) {
        uid_t uid;
        memcpy(&uid, key->addr, sizeof uid);
        snprintf(buf, cap, "uid %lu", (unsigned long)uid);
    } else if (key->family == AF_INET || key->family == AF_INET6) {
        inet_ntop(key->family, key->addr, text, sizeof text);
        snprintf(buf, cap, "%s%s", text, key->family == AF_INET6 ? "/64" : "");
    } else {
        snprintf(buf, cap, "an unknown peer");
    }
    return buf;
}

static size_t bucket_of(const peer_key *key)
{
    uint64_t h = 1469598103934665603ull ^ key->family; /* FNV-1a */
    for (size_t i = 0; i < sizeof key->addr; i++)
        h = (h ^ key->addr[i]) * 1099511628211ull;
    return (size_t)(h % PEER_BUCKETS);
}

static peer_entry **find(const peer_counts *pc, const peer_key *key)
{
    peer_entry **e = &pc->buckets[bucket_of(key)];
    while (*e && !peer_key_equal(&(*e)->key, key))
        e = &(*e)->next;
    return e;
}

peer_entry *peer_counts_ref(peer_counts *pc, const peer_key *key)
{
    if (!key->family)
        return NULL;
    if (!pc->buckets && !(pc->buckets = calloc(PEER_BUCKETS, sizeof *pc->buckets)))
        return NULL;
    peer_entry **e = find(pc, key);
    if (!*e) {
        if (!(*e = calloc(1, sizeof **e)))
            return NULL;
        (*e)->key = *key;
        pc->entries++;
    }
    (*e)->refs++;
    return *e;
}

void peer_counts_unref(peer_counts *pc, peer_entry *entry)
{
    if (!entry || --entry->refs > 0)
        return;
    peer_entry **e = find(pc, &entry->key);
    if (*e == entry)
        *e = entry->next;
    free(entry);
    pc->entries--;
}

peer_entry *peer_counts_find(const peer_counts *pc, const peer_key *key)
{
    if (!key->family || !pc->buckets)
        return NULL;
    return *find(pc, key);
}

uint32_t peer_counts_add(peer_counts *pc, const peer_key *key)
{
    peer_entry *e = peer_counts_ref(pc, key);
    return e ? e->refs : 0;
}

void peer_counts_remove(peer_counts *pc, const peer_key *key)
{
    peer_counts_unref(pc, peer_counts_find(pc, key));
}

uint32_t peer_counts_get(const peer_counts *pc, const peer_key *key)
{
    const peer_entry *e = peer_counts_find(pc, key);
    return e ? e->refs : 0;
}

void peer_counts_free(peer_counts *pc)
{
    if (!pc->buckets)
        return;
    for (size_t i = 0; i < PEER_BUCKETS; i++) {
        while (pc->buckets[i]) {
            peer_entry *e = pc->buckets[i];
            pc->buckets[i] = e->next;
            free(e);
        }
    }
    free(pc->buckets);
    pc->buckets = NULL;
    pc->entries = 0;
}
