/* SPDX-License-Identifier: MIT */
/* Ownership of Recap message parts: each open/state/event deep-copies its blobs, values and lists
 * into one storage block, so a message outlives the decoder callback or JSON document it came
 * from and is freed with one call. */
#include "formats/recap/recap_msg.h"

#include <errno.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "message/msg_formats.h"
#include "recd/formats/recap/recap_slot_mask.h"
#include "recd/formats/recap/recap_state_block.h"

/* A bump allocator over one malloc'd block sized by a first counting pass. */
typedef struct arena {
    uint8_t *base;
    size_t used, cap;
} arena;

static size_t align_up(size_t n) { return (n + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1); }

static void *arena_take(arena *a, size_t n)
{
    if (n == 0 || n > a->cap - a->used)
        return NULL;
    void *p = a->base + a->used;
    a->used += n;
    return p;
}

static recd_recap_blob copy_blob(arena *a, recd_recap_blob b)
{
    recd_recap_blob r = {NULL, 0};
    if (b.len == 0)
        return r;
    uint8_t *p = arena_take(a, b.len);
    memcpy(p, b.data, b.len);
    r.data = p;
    r.len = b.len;
    return r;
}

static size_t item_bytes(const recd_recap_item *it) { return it->key.len ? it->key.len + it->data.len : 0; }

static recd_recap_item copy_item(arena *a, const recd_recap_item *it)
{
    recd_recap_item r;
    memset(&r, 0, sizeof r);
    if (it->key.len == 0)
        return r; /* an empty slot: canonical zeros */
    r.key = copy_blob(a, it->key);
    r.count = it->count;
    r.flags = it->flags;
    r.data = copy_blob(a, it->data);
    return r;
}

/* ---- open ---------------------------------------------------------------------------------- */

void msg_recap_open_free(recd_msg_recap_open *o)
{
    if (!o)
        return;
    free(o->storage);
    free(o);
}

recd_msg_recap_open *msg_recap_open_clone(const recd_recap_header *h)
{
    recd_msg_recap_open *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    const recd_recap_blob *blobs[] = {&h->name, &h->player_name, &h->player_uuid, &h->world_name,
                                      &h->skin_texture, &h->skin_signature, &h->ext_unknown};
    size_t total = 0;
    for (size_t i = 0; i < sizeof blobs / sizeof blobs[0]; i++)
        total += blobs[i]->len;
    arena a = {NULL, 0, total};
    if (total && !(a.base = malloc(total))) {
        free(o);
        return NULL;
    }
    o->storage = a.base;
    o->header = *h;
    o->header.name = copy_blob(&a, h->name);
    o->header.player_name = copy_blob(&a, h->player_name);
    o->header.player_uuid = copy_blob(&a, h->player_uuid);
    o->header.world_name = copy_blob(&a, h->world_name);
    o->header.skin_texture = copy_blob(&a, h->skin_texture);
    o->header.skin_signature = copy_blob(&a, h->skin_signature);
    o->header.ext_unknown = copy_blob(&a, h->ext_unknown);
    o->has_start_time = o->has_end_time = o->has_frame_count = true;
    return o;
}

/* ---- state --------------------------------------------------------------------------------- */

void msg_recap_state_free(recd_msg_recap_state *s)
{
    free(s); /* its items' bytes are in the same block */
}

/* Makes a shallow copy of an item own its bytes; an empty slot becomes canonical zeros. */
static void own_item(arena *a, recd_recap_item *it)
{
    if (it->key.len == 0) {
        memset(it, 0, sizeof *it);
        return;
    }
    it->key = copy_blob(a, it->key);
    it->data = copy_blob(a, it->data);
}

/* A state message as librecd makes it: the public struct, its extent beside it (the struct's
 * layout is fixed: recap_slot_mask.h), then its items' bytes. */
typedef struct state_block {
    recd_msg_recap_state msg;
    recd_recap_state_extent ext;
    size_t cap; /* the block's bytes, for a reuse (recd_recap__state_keep) */
} state_block;

static state_block *block_of(recd_msg_recap_state *s) { return (state_block *)(void *)s; }

/* A block of size bytes: lent when it is large enough (else it is freed). */
static recd_msg_recap_state *state_block_alloc(size_t size, recd_msg_recap_state *lent)
{
    if (lent && block_of(lent)->cap >= size)
        return lent;
    free(lent);
    recd_msg_recap_state *s = malloc(size);
    if (s)
        block_of(s)->cap = size;
    return s;
}

const recd_recap_state_extent *recd_recap__state_extent(const recd_msg_recap_state *s)
{
    return &((const state_block *)(const void *)s)->ext;
}

recd_msg_recap_state *msg_recap_state_clone(uint64_t tick, const recd_recap_state *st)
{
    size_t total = 0;
    for (int i = 0; i < RECD_RECAP_EQUIPMENT_SLOTS; i++)
        total += item_bytes(&st->equipment[i]);
    for (int i = 0; i < RECD_RECAP_INVENTORY_SLOTS; i++)
        total += item_bytes(&st->inventory[i]);
    size_t head = align_up(sizeof(state_block));
    recd_msg_recap_state *s = state_block_alloc(head + total, NULL); /* the message, its items' bytes */
    if (!s)
        return NULL;
    s->tick = tick;
    s->state = *st;
    s->storage = NULL;
    arena a = {(uint8_t *)s + head, 0, total};
    uint64_t slots = 0;
    for (int i = 0; i < RECD_RECAP_EQUIPMENT_SLOTS; i++) {
        own_item(&a, &s->state.equipment[i]);
        slots |= (uint64_t)(s->state.equipment[i].key.len != 0) << i;
    }
    for (int i = 0; i < RECD_RECAP_INVENTORY_SLOTS; i++) {
        own_item(&a, &s->state.inventory[i]);
        slots |= (uint64_t)(s->state.inventory[i].key.len != 0) << (RECD_RECAP_EQUIPMENT_SLOTS + i);
    }
    block_of(s)->ext = (recd_recap_state_extent){slots, total};
    return s;
}

void msg_recap_state_zero_slots(recd_msg_recap_state *s, uint64_t slots)
{
    for (; slots; slots &= slots - 1) {
        int i = __builtin_ctzll(slots); /* the two arrays apart: no indexing past equipment */
        recd_recap_item *it = i < RECD_RECAP_EQUIPMENT_SLOTS
                                  ? &s->state.equipment[i]
                                  : &s->state.inventory[i - RECD_RECAP_EQUIPMENT_SLOTS];
        memset(it, 0, sizeof *it);
    }
}

recd_msg_recap_state *msg_recap_state_over_payload(uint64_t tick, const uint8_t *payload,
                                                   size_t len, recd_msg_recap_state *lent,
                                                   const uint8_t **copy,
                                                   recd_recap_state_extent **ext, uint64_t *stale)
{
    size_t head = align_up(sizeof(state_block));
    if (len > SIZE_MAX - head) {
        free(lent);
        return NULL;
    }
    recd_msg_recap_state *s = state_block_alloc(head + len, lent);
    if (!s)
        return NULL;
    s->tick = tick;
    /* A lent block's items are left for the reader, which writes over every one it reads and
     * zeroes the stale rest (every slot outside the last state's mask is zero already). */
    if (s == lent) {
        memset(&s->state, 0, offsetof(recd_recap_state, equipment));
        *stale = block_of(s)->ext.slots;
    } else {
        memset(&s->state, 0, sizeof s->state);
        *stale = 0;
    }
    s->storage = NULL;
    uint8_t *own = (uint8_t *)s + head;
    if (len)
        memcpy(own, payload, len);
    *copy = own;
    *ext = &block_of(s)->ext;
    **ext = (recd_recap_state_extent){RECD_RECAP_ALL_SLOTS, 0}; /* until the reader knows */
    return s;
}

/* Blocks above this (large item data) are not kept for a next state. */
#define KEEP_MAX 4096

void recd_recap__state_keep(recd_msg *m, recd_msg_recap_state **spare)
{
    recd_msg_recap_state *s = m->type == RECD_MSG_STATE && m->format == RECD_MSG_FMT_RECAP
                                  ? m->recap_state
                                  : NULL;
    if (!s || block_of(s)->cap > KEEP_MAX) {
        recd_msg_free(m);
        return;
    }
    /* It owns nothing now: recd_msg_free would only zero it, which its next move into it does. */
    m->type = RECD_MSG_NONE;
    m->recap_state = NULL;
    free(*spare);
    *spare = s;
}

void recd_recap__state_block_free(recd_msg_recap_state *s) { free(s); }

/* ---- event --------------------------------------------------------------------------------- */

void msg_recap_event_free(recd_msg_recap_event *e)
{
    if (!e)
        return;
    free(e->storage);
    free(e);
}

static size_t value_bytes(const recd_recap_field *f, const recd_recap_value *v)
{
    switch (f->type) {
    case RECD_RECAP_T_STR:
    case RECD_RECAP_T_TEXT:
    case RECD_RECAP_T_BYTES: return v->blob.len;
    case RECD_RECAP_T_ITEM: return item_bytes(&v->item);
    default: return 0;
    }
}

static recd_recap_value copy_value(arena *a, const recd_recap_field *f, const recd_recap_value *v)
{
    recd_recap_value r = *v;
    switch (f->type) {
    case RECD_RECAP_T_STR:
    case RECD_RECAP_T_TEXT:
    case RECD_RECAP_T_BYTES: r.blob = copy_blob(a, v->blob); break;
    case RECD_RECAP_T_ITEM: r.item = copy_item(a, &v->item); break;
    default: break;
    }
    return r;
}

recd_msg_recap_event *msg_recap_event_clone(uint64_t tick, const recd_recap_event *ev)
{
    const recd_recap_tag_info *ti = recd_recap_tag_info_get(ev->tag);
    if (!ti || ti->kind != RECD_RECAP_KIND_EVENT || ev->field_count != ti->field_count ||
        (ev->field_count && !ev->fields))
        return NULL;
    /* Pass 1: the top-level values, every list's rows, then all bytes. */
    size_t values = ti->field_count, bytes = 0;
    for (size_t i = 0; i < ti->field_count; i++) {
        const recd_recap_field *f = &ti->fields[i];
        const recd_recap_value *v = &ev->fields[i];
        if (f->type != RECD_RECAP_T_LIST) {
            bytes += value_bytes(f, v);
            continue;
        }
        if (v->list.count > 65535 || (v->list.count && !v->list.values))
            return NULL;
        values += v->list.count * f->elem_count;
        for (size_t r = 0; r < v->list.count * f->elem_count; r++)
            bytes += value_bytes(&f->elem[r % f->elem_count], &v->list.values[r]);
    }
    recd_msg_recap_event *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    size_t vbytes = align_up(values * sizeof(recd_recap_value));
    arena a = {NULL, 0, vbytes + bytes};
    if (a.cap && !(a.base = malloc(a.cap))) {
        free(e);
        return NULL;
    }
    e->storage = a.base;
    e->tick = tick;
    e->event.tag = ev->tag;
    e->event.field_count = ev->field_count;
    recd_recap_value *top = values ? arena_take(&a, vbytes) : NULL;
    recd_recap_value *rows = top ? top + ti->field_count : NULL;
    e->event.fields = top;
    for (size_t i = 0; i < ti->field_count; i++) {
        const recd_recap_field *f = &ti->fields[i];
        const recd_recap_value *v = &ev->fields[i];
        if (f->type != RECD_RECAP_T_LIST) {
            top[i] = copy_value(&a, f, v);
            continue;
        }
        size_t n = v->list.count * f->elem_count;
        top[i].list.count = v->list.count;
        top[i].list.values = n ? rows : NULL;
        for (size_t r = 0; r < n; r++)
            rows[r] = copy_value(&a, &f->elem[r % f->elem_count], &v->list.values[r]);
        rows += n;
    }
    return e;
}

/* ---- public builders ----------------------------------------------------------------------- */

int recd_msg_set_recap_open(recd_msg *m, const recd_recap_header *h)
{
    m->type = RECD_MSG_OPEN;
    m->format = RECD_MSG_FMT_RECAP;
    m->open.recap = msg_recap_open_clone(h);
    return m->open.recap ? 0 : -ENOMEM;
}

int recd_msg_set_recap_state(recd_msg *m, uint64_t tick, const recd_recap_state *s)
{
    m->type = RECD_MSG_STATE;
    m->format = RECD_MSG_FMT_RECAP;
    m->recap_state = msg_recap_state_clone(tick, s);
    return m->recap_state ? 0 : -ENOMEM;
}

int recd_msg_set_recap_event(recd_msg *m, uint64_t tick, const recd_recap_event *ev)
{
    const recd_recap_tag_info *ti = recd_recap_tag_info_get(ev->tag);
    if (!ti || ti->kind != RECD_RECAP_KIND_EVENT || ev->field_count != ti->field_count)
        return -EINVAL;
    m->type = RECD_MSG_EVENT;
    m->format = RECD_MSG_FMT_RECAP;
    m->recap_event = msg_recap_event_clone(tick, ev);
    return m->recap_event ? 0 : -ENOMEM;
}

/* ---- the message model's hooks (message/msg_formats.h) ------------------------------------ */

static void recap_open_free(recd_msg *m)
{
    msg_recap_open_free(m->open.recap);
}

static int recap_open_copy(recd_msg *dst, const recd_msg *src)
{
    const recd_msg_recap_open *o = src->open.recap;
    dst->open.recap = o ? msg_recap_open_clone(&o->header) : NULL;
    if (!dst->open.recap)
        return o ? -ENOMEM : 0;
    dst->open.recap->has_start_time = o->has_start_time;
    dst->open.recap->has_end_time = o->has_end_time;
    dst->open.recap->has_frame_count = o->has_frame_count;
    return 0;
}

static void recap_state_free(recd_msg *m)
{
    msg_recap_state_free(m->recap_state);
}

static int recap_state_copy(recd_msg *dst, const recd_msg *src)
{
    const recd_msg_recap_state *s = src->recap_state;
    dst->recap_state = s ? msg_recap_state_clone(s->tick, &s->state) : NULL;
    return dst->recap_state || !s ? 0 : -ENOMEM;
}

static void recap_event_free(recd_msg *m)
{
    msg_recap_event_free(m->recap_event);
}

static int recap_event_copy(recd_msg *dst, const recd_msg *src)
{
    const recd_msg_recap_event *e = src->recap_event;
    dst->recap_event = e ? msg_recap_event_clone(e->tick, &e->event) : NULL;
    return dst->recap_event || !e ? 0 : -ENOMEM;
}

/* Events without a format are Recap's: it had the only events before CARLA. */
const struct recd_format_model recd_recap__model = {
    .open_free = recap_open_free,
    .open_copy = recap_open_copy,
    .state_free = recap_state_free,
    .state_copy = recap_state_copy,
    .event_free = recap_event_free,
    .event_copy = recap_event_copy,
    .owns_unformatted_events = true,
};
