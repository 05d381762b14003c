/* SPDX-License-Identifier: MIT */
/* The actors alive at a point of a CARLA log, as cuts and concats need them (carla_world.h). */
#include "formats/carla/carla_world.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/carla/carla_schema.h"

carla_actor *carla_world_find(carla_world *w, uint32_t id)
{
    size_t slot;
    if (!carla_index_get(&w->x, id, &slot) || !w->a[slot].alive)
        return NULL;
    return &w->a[slot];
}

void carla_world_free(carla_world *w)
{
    for (size_t i = 0; i < w->n; i++)
        free(w->a[i].add);
    free(w->a);
    carla_index_free(&w->x);
    memset(w, 0, sizeof *w);
}

static void actor_dies(carla_actor *a)
{
    a->alive = false;
    free(a->add);
    a->add = NULL;
}

static int actor_added(carla_world *w, const recd_carla_event *e, uint32_t id)
{
    carla_actor *old = carla_world_find(w, id);
    if (old) /* added again without a delete: the new record wins */
        actor_dies(old);
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 64;
        carla_actor *v = realloc(w->a, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        w->a = v;
        w->cap = cap;
    }
    carla_actor *a = &w->a[w->n];
    memset(a, 0, sizeof *a);
    a->add = malloc(e->len);
    if (!a->add)
        return -ENOMEM;
    memcpy(a->add, e->data, e->len);
    a->add_len = e->len;
    a->id = id;
    a->width = e->width;
    a->alive = true;
    a->added_in = w->frames;
    int rc = carla_index_put(&w->x, id, w->n);
    if (rc < 0) {
        free(a->add);
        return rc;
    }
    w->n++;
    return 0;
}

int carla_world_event(carla_world *w, const recd_carla_event *e)
{
    if (e->len < 4)
        return 0;
    uint32_t id = ld_le32(e->data);
    if (e->kind == RECD_CARLA_EVENT_DEL) {
        carla_actor *a = carla_world_find(w, id);
        if (a)
            actor_dies(a);
    } else if (e->kind == RECD_CARLA_EVENT_PARENT && e->len >= 8) {
        carla_actor *a = carla_world_find(w, id);
        if (a) {
            a->has_parent = true;
            a->parent = ld_le32(e->data + 4);
        }
    } else if (e->kind == RECD_CARLA_EVENT_ADD && e->len >= 5 + 6u * e->width) {
        return actor_added(w, e, id);
    }
    return 0;
}

void carla_world_positions(carla_world *w, const recd_carla_frame *f)
{
    size_t rec = 4 + 6u * f->width;
    w->frames++;
    for (size_t i = 0; i < f->count; i++) {
        const recd_carla_packet *p = &f->packets[i];
        if (p->raw || p->kind != RECD_CARLA_POSITION || (size_t)p->count * rec != p->len)
            continue;
        for (uint32_t k = 0; k < p->count; k++) {
            const uint8_t *r = p->data + (size_t)k * rec;
            carla_actor *a = carla_world_find(w, ld_le32(r));
            if (a && a->width == f->width) {
                memcpy(a->pos, r + 4, 6u * f->width);
                a->has_pos = true;
            }
        }
    }
}

size_t carla_world_positions_back(carla_world *w, const uint8_t *records, uint32_t count,
                                  uint8_t width, uint64_t frame)
{
    size_t rec = 4 + 6u * width, set = 0;
    for (uint32_t k = count; k-- > 0;) { /* the last record of an actor in a packet wins */
        const uint8_t *r = records + (size_t)k * rec;
        carla_actor *a = carla_world_find(w, ld_le32(r));
        if (a && !a->has_pos && a->added_in <= frame && a->width == width) {
            memcpy(a->pos, r + 4, 6u * width);
            a->has_pos = true;
            set++;
        }
    }
    return set;
}

static int emit_event(uint8_t kind, uint8_t width, const uint8_t *data, uint32_t len,
                      recd_msg_fn emit, void *ctx, char *err, size_t errlen)
{
    recd_carla_event e = {.kind = kind, .width = width, .len = len, .data = data};
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_EVENT, RECD_MSG_FMT_CARLA);
    m.carla_event = &e;
    return emit(ctx, &m, err, errlen); /* emit copies what it keeps; nothing to free here */
}

int carla_world_emit_alive(carla_world *w, bool every_parent, recd_msg_fn emit, void *ctx,
                           char *err, size_t errlen)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < w->n; i++) {
        carla_actor *a = &w->a[i];
        if (!a->alive)
            continue;
        if (a->has_pos)
            memcpy(a->add + 5, a->pos, 6u * a->width);
        rc = emit_event(RECD_CARLA_EVENT_ADD, a->width, a->add, a->add_len, emit, ctx, err,
                        errlen);
    }
    for (size_t i = 0; rc == 0 && i < w->n; i++) {
        carla_actor *a = &w->a[i];
        if (!a->alive || !a->has_parent || (!every_parent && !carla_world_find(w, a->parent)))
            continue;
        uint8_t rec[8];
        st_le32(rec, a->id);
        st_le32(rec + 4, a->parent);
        rc = emit_event(RECD_CARLA_EVENT_PARENT, a->width, rec, 8, emit, ctx, err, errlen);
    }
    return rc;
}

int carla_world_emit_deletes(carla_world *w, recd_msg_fn emit, void *ctx, char *err,
                             size_t errlen)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < w->n; i++) {
        if (!w->a[i].alive)
            continue;
        uint8_t rec[4];
        st_le32(rec, w->a[i].id);
        rc = emit_event(RECD_CARLA_EVENT_DEL, w->a[i].width, rec, 4, emit, ctx, err, errlen);
    }
    return rc;
}

/* ---- the world before a frame, read without decoding every position ------------------------- */

typedef struct position_packet {
    const uint8_t *records;
    uint32_t count;
    uint8_t width;
    uint64_t frame;
} position_packet;

/* Position packets a frame holds that carla_world_positions would read. */
static bool position_packet_of(const recd_carla_packet *p, uint8_t width)
{
    return !p->raw && p->kind == RECD_CARLA_POSITION &&
           (size_t)p->count * (4 + 6u * width) == p->len;
}

static int frame_events(carla_world *w, const recd_carla_frame *f, unsigned width)
{
    for (size_t i = 0; i < f->count; i++) {
        const recd_carla_packet *p = &f->packets[i];
        if (p->raw || p->kind < RECD_CARLA_EVENT_ADD || p->kind > RECD_CARLA_EVENT_PARENT)
            continue;
        size_t at = 0;
        for (uint32_t k = 0; k < p->count; k++) {
            size_t n = carla_rec_size(p->kind, width, p->data + at, p->len - at);
            recd_carla_event e = {.kind = p->kind, .width = (uint8_t)width, .len = (uint32_t)n,
                                  .data = p->data + at};
            int rc = carla_world_event(w, &e);
            if (rc < 0)
                return rc;
            at += n;
        }
    }
    return 0;
}

/* The living actors without a position yet: the earliest frame whose positions could set one
 * (UINT64_MAX: none), and a bit per id mod 64 (most records are of other actors). */
static uint64_t missing_positions(const carla_world *w, uint64_t *id_bits)
{
    uint64_t oldest = UINT64_MAX;
    *id_bits = 0;
    for (size_t i = 0; i < w->n; i++) {
        const carla_actor *a = &w->a[i];
        if (!a->alive || a->has_pos)
            continue;
        oldest = a->added_in < oldest ? a->added_in : oldest;
        *id_bits |= 1ull << (a->id & 63);
    }
    return oldest;
}

/* Sets each living actor's latest position from the packets, read from the last backwards (the
 * last record of an actor wins), until every actor that could have one has one. Actors that
 * never move (traffic lights, a spectator) have none: for them every packet's ids are read. */
static void positions_backwards(carla_world *w, const position_packet *v, size_t n)
{
    uint64_t bits, oldest = missing_positions(w, &bits);
    for (size_t k = n; k-- > 0 && v[k].frame >= oldest;) {
        size_t rec = 4 + 6u * v[k].width;
        bool any = false;
        for (uint32_t j = 0; j < v[k].count && !any; j++)
            any = bits >> (ld_le32(v[k].records + (size_t)j * rec) & 63) & 1;
        if (any && carla_world_positions_back(w, v[k].records, v[k].count, v[k].width, v[k].frame))
            oldest = missing_positions(w, &bits);
    }
}

int carla_world_read_to(carla_world *w, carla_reader *r, size_t stop, int64_t from)
{
    position_packet *v = NULL;
    size_t n = 0, cap = 0;
    recd_carla_frame f;
    size_t at;
    int rc;
    while ((rc = carla_reader_next_world(r, &f, &at)) == 1) {
        if (at >= stop || carla_elapsed_ms(f.elapsed) >= from) {
            r->pos = at;
            r->frames--;
            break;
        }
        if (!w)
            continue;
        for (size_t i = 0; i < f.count; i++) {
            if (!position_packet_of(&f.packets[i], f.width))
                continue;
            if (n == cap) {
                size_t grown = cap ? cap * 2 : 1024;
                position_packet *nv = realloc(v, grown * sizeof *nv);
                if (!nv) {
                    free(v);
                    return -ENOMEM;
                }
                v = nv;
                cap = grown;
            }
            v[n++] = (position_packet){f.packets[i].data, f.packets[i].count, f.width, w->frames};
        }
        w->frames++;
        if ((rc = frame_events(w, &f, r->width)) < 0)
            break;
    }
    if (rc == 1 && w)
        positions_backwards(w, v, n);
    free(v);
    return rc;
}
