/* SPDX-License-Identifier: MIT */
/* Internal: actor id -> slot, a hash index for the passes that follow every actor of a log frame
 * by frame (edits, tracks). A log may hold 65535 positions a frame, so a linear search per record
 * would be quadratic. */
#ifndef RECD_CARLA_ACTOR_INDEX_H
#define RECD_CARLA_ACTOR_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct carla_actor_index {
    uint32_t *ids;
    size_t *slots;
    bool *used;
    size_t cap, n; /* cap: a power of two, or 0 */
} carla_actor_index;

/* The slot of id, or false. */
bool carla_index_get(const carla_actor_index *x, uint32_t id, size_t *slot);
/* Sets (or replaces) id's slot. -ENOMEM, or -E2BIG beyond 2^24 ids; replacing never fails. */
int carla_index_put(carla_actor_index *x, uint32_t id, size_t slot);
void carla_index_free(carla_actor_index *x);

#endif
