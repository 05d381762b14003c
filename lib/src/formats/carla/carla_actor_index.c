/* SPDX-License-Identifier: MIT */
/* Actor id -> slot: open addressing with linear probing; ids are never removed (a deleted actor's
 * slot is marked dead by its owner, and a re-added id gets a new slot). */
#include "formats/carla/carla_actor_index.h"

#include <errno.h>
#include <stdlib.h>

#define INDEX_MAX_IDS ((size_t)1 << 24)

static size_t hash_id(uint32_t id, size_t cap)
{
    return (size_t)((id * 2654435761u) & (uint32_t)(cap - 1));
}

bool carla_index_get(const carla_actor_index *x, uint32_t id, size_t *slot)
{
    if (!x->cap)
        return false;
    for (size_t i = hash_id(id, x->cap); x->used[i]; i = (i + 1) & (x->cap - 1))
        if (x->ids[i] == id) {
            *slot = x->slots[i];
            return true;
        }
    return false;
}

static void place(carla_actor_index *x, uint32_t id, size_t slot)
{
    size_t i = hash_id(id, x->cap);
    while (x->used[i] && x->ids[i] != id)
        i = (i + 1) & (x->cap - 1);
    if (!x->used[i])
        x->n++;
    x->used[i] = true;
    x->ids[i] = id;
    x->slots[i] = slot;
}

static int grow(carla_actor_index *x)
{
    size_t cap = x->cap ? x->cap * 2 : 256;
    if (cap / 2 > INDEX_MAX_IDS)
        return -E2BIG;
    carla_actor_index y = {calloc(cap, sizeof *y.ids), calloc(cap, sizeof *y.slots),
                           calloc(cap, sizeof *y.used), cap, 0};
    if (!y.ids || !y.slots || !y.used) {
        carla_index_free(&y);
        return -ENOMEM;
    }
    for (size_t i = 0; i < x->cap; i++)
        if (x->used[i])
            place(&y, x->ids[i], x->slots[i]);
    carla_index_free(x);
    *x = y;
    return 0;
}

int carla_index_put(carla_actor_index *x, uint32_t id, size_t slot)
{
    size_t old;
    if (!carla_index_get(x, id, &old) && (x->n + 1) * 2 > x->cap) {
        int rc = grow(x);
        if (rc < 0)
            return rc;
    }
    place(x, id, slot);
    return 0;
}

void carla_index_free(carla_actor_index *x)
{
    free(x->ids);
    free(x->slots);
    free(x->used);
    *x = (carla_actor_index){0};
}
