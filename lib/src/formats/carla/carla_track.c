/* SPDX-License-Identifier: MIT */
/* Plots of CARLA logs: the route of every vehicle and walker (the actors that drive or walk;
 * traffic lights, signs, sensors and the spectator have none of their own), read frame by frame
 * straight from the file so that every layout librecd reads can be drawn. Unreal's left-handed
 * centimetres become metres with y pointing north; speed is the distance between an actor's
 * consecutive positions over their time. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/carla/carla_actor_index.h"
#include "formats/carla/carla_format.h"
#include "formats/carla/carla_reader.h"
#include "formats/carla/carla_schema.h"
#include "base/why.h"

#define CM_PER_M 100.0
#define ACTOR_VEHICLE 1
#define ACTOR_WALKER 2

typedef struct track_actor {
    bool alive;
    recd_track_kind kind;
    bool has_last;
    double x, y, z, t, speed;
} track_actor;

typedef struct track_state {
    track_actor *a;
    size_t n, cap;
    carla_actor_index x;
} track_state;

static track_actor *actor_of(track_state *s, uint32_t id)
{
    size_t slot;
    return carla_index_get(&s->x, id, &slot) && s->a[slot].alive ? &s->a[slot] : NULL;
}

static int on_add(track_state *s, const uint8_t *r, size_t len)
{
    if (len < 5)
        return 0;
    uint32_t id = ld_le32(r);
    track_actor *old = actor_of(s, id);
    if (old)
        old->alive = false;
    if (r[4] != ACTOR_VEHICLE && r[4] != ACTOR_WALKER)
        return 0;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        track_actor *v = realloc(s->a, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        s->a = v;
        s->cap = cap;
    }
    s->a[s->n] = (track_actor){.alive = true,
                               .kind = r[4] == ACTOR_VEHICLE ? RECD_TRACK_VEHICLE : RECD_TRACK_ONFOOT};
    int rc = carla_index_put(&s->x, id, s->n);
    if (rc == 0)
        s->n++;
    return rc;
}

/* Calls fn(s, record, size) for each record of an event packet. */
static int each_record(track_state *s, const recd_carla_packet *p, unsigned w,
                       int (*fn)(track_state *, const uint8_t *, size_t))
{
    size_t at = 0;
    for (uint32_t i = 0; i < p->count && at < p->len; i++) {
        size_t n = carla_rec_size(p->kind, w, p->data + at, p->len - at);
        if (n == 0)
            return 0;
        int rc = fn(s, p->data + at, n);
        if (rc < 0)
            return rc;
        at += n;
    }
    return 0;
}

static int on_delete(track_state *s, const uint8_t *r, size_t len)
{
    track_actor *a = len >= 4 ? actor_of(s, ld_le32(r)) : NULL;
    if (a)
        a->alive = false;
    return 0;
}

static int on_positions(track_state *s, const recd_carla_packet *p, unsigned w, double t,
                        recd_track_fn on_point, void *data)
{
    size_t rec = 4 + 6u * w;
    if ((size_t)p->count * rec != p->len)
        return 0;
    for (uint32_t k = 0; k < p->count; k++) {
        const uint8_t *r = p->data + (size_t)k * rec;
        uint32_t id = ld_le32(r);
        track_actor *a = actor_of(s, id);
        if (!a)
            continue;
        double x = carla_vat(r + 4, w, 0) / CM_PER_M, y = -carla_vat(r + 4, w, 1) / CM_PER_M,
               z = carla_vat(r + 4, w, 2) / CM_PER_M;
        if (!isfinite(x) || !isfinite(y) || !isfinite(z))
            continue;
        if (a->has_last && t > a->t)
            a->speed = sqrt((x - a->x) * (x - a->x) + (y - a->y) * (y - a->y) +
                            (z - a->z) * (z - a->z)) / (t - a->t);
        a->has_last = true;
        a->x = x, a->y = y, a->z = z, a->t = t;
        recd_track_point pt = {.actor = id, .kind = a->kind, .t = t, .x = x, .y = y, .z = z,
                               .speed = a->speed, .health = NAN, .armour = NAN,
                               .vehicle_health = NAN};
        int rc = on_point(data, &pt);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int recd_carla__track(const uint8_t *buf, size_t len, recd_track_fn on_point, void *data,
                      char *err, size_t errlen)
{
    carla_reader r;
    int rc = carla_reader_init(&r, buf, len, NULL);
    if (rc < 0) {
        recd_why(err, errlen, "%s", r.err);
        return rc;
    }
    track_state s = {0};
    recd_carla_frame f;
    size_t at;
    bool first = true;
    double start = 0;
    while ((rc = carla_reader_next(&r, &f, &at)) == 1) {
        if (first)
            start = f.elapsed;
        first = false;
        double t = f.elapsed - start;
        /* Actors added in a frame have their first position in it; a deleted one its last. */
        for (size_t i = 0; rc >= 0 && i < f.count; i++)
            if (!f.packets[i].raw && f.packets[i].kind == RECD_CARLA_EVENT_ADD)
                rc = each_record(&s, &f.packets[i], r.width, on_add);
        for (size_t i = 0; rc >= 0 && i < f.count; i++)
            if (!f.packets[i].raw && f.packets[i].kind == RECD_CARLA_POSITION && isfinite(t))
                rc = on_positions(&s, &f.packets[i], r.width, t, on_point, data);
        for (size_t i = 0; rc >= 0 && i < f.count; i++)
            if (!f.packets[i].raw && f.packets[i].kind == RECD_CARLA_EVENT_DEL)
                rc = each_record(&s, &f.packets[i], r.width, on_delete);
        if (rc != 1 && rc != 0)
            break;
        rc = 1;
    }
    if (rc == -EBADMSG)
        recd_why(err, errlen, "offset %llu: %s", (unsigned long long)r.err_offset, r.err);
    carla_reader_free(&r);
    free(s.a);
    carla_index_free(&s.x);
    return rc;
}

int recd_carla__track_points(const recd_msg *m, recd_track_fn on_point, void *data)
{
    const recd_carla_frame *f = m->carla_state;
    unsigned w = f ? f->width : 0;
    size_t rec = 4 + 6u * w;
    for (size_t i = 0; f && i < f->count; i++) {
        const recd_carla_packet *p = &f->packets[i];
        if (p->raw || p->kind != RECD_CARLA_POSITION || (size_t)p->count * rec != p->len)
            continue;
        for (uint32_t k = 0; k < p->count; k++) {
            const uint8_t *r = p->data + (size_t)k * rec;
            recd_track_point pt = {.actor = ld_le32(r), .kind = 0, .t = f->elapsed,
                                   .x = carla_vat(r + 4, w, 0) / CM_PER_M,
                                   .y = -carla_vat(r + 4, w, 1) / CM_PER_M,
                                   .z = carla_vat(r + 4, w, 2) / CM_PER_M, .speed = NAN,
                                   .health = NAN, .armour = NAN, .vehicle_health = NAN};
            if (!isfinite(pt.x) || !isfinite(pt.y))
                continue;
            int rc = on_point(data, &pt);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}
