/* SPDX-License-Identifier: MIT */
/* The item slot table of the Recap encoder and decoder: 47 canonical item encodings packed into
 * one buffer. Replacing an item appends its bytes; the buffer is repacked (dropping replaced bytes)
 * only when it runs out of room, so steady play costs no allocations and an idle session holds
 * its inventory in a single block. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/recap/recap_internal.h"

/* Moves every held slot but skip into a new buffer of cap bytes (cap >= what they hold). */
static int repack(recap_slots *t, int skip, uint32_t cap)
{
    uint8_t *b = NULL;
    if (cap) {
        b = malloc(cap);
        if (!b)
            return -ENOMEM;
    }
    uint32_t used = 0;
    for (int j = 0; j < RECAP_SLOTS; j++) {
        if (j == skip || t->len[j] == 0)
            continue;
        memcpy(b + used, t->bytes + t->off[j], t->len[j]);
        t->off[j] = used;
        used += t->len[j];
    }
    if (skip >= 0) {
        t->live -= t->len[skip];
        t->len[skip] = 0;
        t->held &= ~(UINT64_C(1) << skip);
    }
    free(t->bytes);
    t->bytes = b;
    t->used = used;
    t->cap = cap;
    return 0;
}

int recap_slots_set(recap_slots *t, int i, const uint8_t *enc, size_t len)
{
    if (i < 0 || i >= RECAP_SLOTS)
        return -EINVAL;
    uint32_t old = t->len[i];
    if (len <= 1) {
        t->live -= old;
        t->len[i] = 0;
        t->held &= ~(UINT64_C(1) << i);
        return 0;
    }
    if (len > UINT32_MAX / 2 - t->live)
        return -EOVERFLOW;
    if (len <= old) { /* fits where the old item was (held already: old > len > 1) */
        memmove(t->bytes + t->off[i], enc, len);
        t->live -= old - (uint32_t)len;
        t->len[i] = (uint32_t)len;
        return 0;
    }
    if (t->cap - t->used < len) {
        uint32_t need = t->live - old + (uint32_t)len;
        int rc = repack(t, i, need + need / 4 + 32); /* slack for the next few changes */
        if (rc)
            return rc;
        old = 0;
    }
    memcpy(t->bytes + t->used, enc, len);
    t->held |= UINT64_C(1) << i;
    t->off[i] = t->used;
    t->len[i] = (uint32_t)len;
    t->used += (uint32_t)len;
    t->live += (uint32_t)len - old;
    return 0;
}

bool recap_slots_equals(const recap_slots *t, int i, const uint8_t *enc, size_t len)
{
    if (len <= 1)
        return t->len[i] == 0;
    return t->len[i] == len && memcmp(t->bytes + t->off[i], enc, len) == 0;
}

const uint8_t *recap_slots_enc(const recap_slots *t, int i)
{
    return t->len[i] ? t->bytes + t->off[i] : NULL;
}

void recap_slots_item(const recap_slots *t, int i, recd_recap_item *it)
{
    memset(it, 0, sizeof(*it));
    if (t->len[i] == 0)
        return;
    /* Stored encodings are canonical and already validated: a view needs no checks. */
    const uint8_t *p = t->bytes + t->off[i];
    size_t klen = p[0];
    it->key.data = p + 1;
    it->key.len = klen;
    it->count = p[1 + klen];
    it->flags = p[2 + klen];
    it->data.len = ld_be16(p + 3 + klen);
    it->data.data = p + 5 + klen;
}

void recap_slots_clear(recap_slots *t)
{
    memset(t->len, 0, sizeof(t->len));
    t->held = 0;
    t->used = t->live = 0;
}

void recap_slots_compact(recap_slots *t)
{
    if (t->cap != t->live)
        repack(t, -1, t->live); /* on failure the table stays as it was, only larger */
}

void recap_slots_free(recap_slots *t)
{
    free(t->bytes);
    memset(t, 0, sizeof(*t));
}
