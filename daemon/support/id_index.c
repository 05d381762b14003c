/* SPDX-License-Identifier: MIT */
/* The id -> position map (id_index.h). */
#include "id_index.h"

#include <errno.h>
#include <stdlib.h>

static size_t home_of(const id_index *ix, uint32_t id)
{
    return (size_t)(((uint64_t)id * 0x9E3779B97F4A7C15ull) >> 32) & (ix->nslots - 1);
}

/* The slot holding id, or the empty one where it would go. nslots must not be 0. */
static size_t slot_for(const id_index *ix, uint32_t id)
{
    size_t i = home_of(ix, id);
    while (ix->slots[i].pos_plus1 && ix->slots[i].id != id)
        i = (i + 1) & (ix->nslots - 1);
    return i;
}

int64_t id_index_find(const id_index *ix, uint32_t id)
{
    if (!ix->nslots)
        return -1;
    const id_index_slot *s = &ix->slots[slot_for(ix, id)];
    return s->pos_plus1 ? (int64_t)s->pos_plus1 - 1 : -1;
}

static int grow(id_index *ix)
{
    size_t n = ix->nslots ? ix->nslots * 2 : 64;
    id_index_slot *slots = calloc(n, sizeof *slots);
    if (!slots)
        return -ENOMEM;
    id_index old = *ix;
    ix->slots = slots;
    ix->nslots = n;
    for (size_t i = 0; i < old.nslots; i++)
        if (old.slots[i].pos_plus1)
            ix->slots[slot_for(ix, old.slots[i].id)] = old.slots[i];
    free(old.slots);
    return 0;
}

int id_index_put(id_index *ix, uint32_t id, uint32_t pos)
{
    if (pos == UINT32_MAX)
        return -ERANGE;
    if ((ix->count + 1) * 2 > ix->nslots && grow(ix) < 0)
        return -ENOMEM;
    id_index_slot *s = &ix->slots[slot_for(ix, id)];
    if (!s->pos_plus1)
        ix->count++;
    s->id = id;
    s->pos_plus1 = pos + 1;
    return 0;
}

void id_index_del(id_index *ix, uint32_t id)
{
    if (!ix->nslots)
        return;
    size_t mask = ix->nslots - 1, i = slot_for(ix, id);
    if (!ix->slots[i].pos_plus1)
        return;
    ix->count--;
    /* Close the hole: an entry after it moves back when the hole lies on its probe path
     * (from its home slot to where it is, cyclically). */
    for (size_t j = (i + 1) & mask; ix->slots[j].pos_plus1; j = (j + 1) & mask) {
        size_t home = home_of(ix, ix->slots[j].id);
        if (((j - home) & mask) >= ((j - i) & mask)) {
            ix->slots[i] = ix->slots[j];
            i = j;
        }
    }
    ix->slots[i].pos_plus1 = 0;
}

void id_index_free(id_index *ix)
{
    free(ix->slots);
    *ix = (id_index){0};
}
