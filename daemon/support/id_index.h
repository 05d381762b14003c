/* SPDX-License-Identifier: MIT */
/* A map from 32-bit ids to array positions, for sets kept in a plain array that is searched by
 * id (a CARLA session's live actors): open addressing, at most half full, deletion by moving back
 * the entries after the hole, so lookups stay constant-time whatever a sender adds and deletes. */
#ifndef RECD_DAEMON_ID_INDEX_H
#define RECD_DAEMON_ID_INDEX_H

#include <stddef.h>
#include <stdint.h>

typedef struct id_index_slot {
    uint32_t id;
    uint32_t pos_plus1; /* 0: empty */
} id_index_slot;

typedef struct id_index {
    id_index_slot *slots;
    size_t nslots; /* a power of two, or 0 */
    size_t count;
} id_index;

/* The position stored for id, or -1. */
int64_t id_index_find(const id_index *ix, uint32_t id);
/* Stores pos for id (replacing an earlier one). 0 or -ENOMEM (then nothing changed). */
int id_index_put(id_index *ix, uint32_t id, uint32_t pos);
/* Forgets id; nothing when it is not there. */
void id_index_del(id_index *ix, uint32_t id);
void id_index_free(id_index *ix);

#endif
