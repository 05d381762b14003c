/* SPDX-License-Identifier: MIT */
/* The JetStream publisher's packs waiting to be published, one per session with frames pending:
 * found by session key, and kept oldest first so that the linger time is checked at the head. */
#ifndef RECD_WIRE_CLIENT_NATS_PACKS_H
#define RECD_WIRE_CLIENT_NATS_PACKS_H

#include "recd/fleet.h"
#include "recd/fleet_pack.h"

#define NATS_PACK_BUCKETS 4096u

typedef struct nats_pack {
    struct nats_pack *chain;        /* same bucket */
    struct nats_pack *older, *newer;
    uint64_t opened_ms;             /* when its first frame came */
    fleet_packer pk;
    size_t key_len;
    char key[RECD_SESSION_KEY_MAX + 1];
    char subject[RECD_FLEET_SUBJECT_MAX];
} nats_pack;

typedef struct nats_packs {
    nats_pack *buckets[NATS_PACK_BUCKETS];
    nats_pack *oldest, *newest;
    uint64_t bytes; /* held by all packs: the caller adds what it appends */
} nats_packs;

nats_pack *nats_packs_find(nats_packs *t, const char *key, size_t key_len);
/* A new, started pack for key, the newest; NULL when out of memory. */
nats_pack *nats_packs_add(nats_packs *t, const char *key, size_t key_len, uint64_t now_ms);
/* Unlinks and frees p (its bytes leave t->bytes). */
void nats_packs_remove(nats_packs *t, nats_pack *p);
void nats_packs_free(nats_packs *t);

#endif
