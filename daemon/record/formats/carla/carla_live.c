/* SPDX-License-Identifier: MIT */
/* What a CARLA log needs at its first frame to replay alone, kept as a session's frames go by:
 * the live actors (each EventAdd record, moved by every Position record since), every traffic
 * light's last State record and the last Weather record. A rotated part's first frame and a
 * ring save's first frame are written from it (carla_session.c, carla_ring.c). */
#include "carla_state.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "support/log.h"

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static live_actor *find_live(const carla_live *w, uint32_t id)
{
    int64_t k = id_index_find(&w->index, id);
    return k < 0 ? NULL : &w->live[k];
}

/* Drops the live actor a (freeing its record); the last one takes its place. */
static void drop_live(carla_live *w, recd_session *s, live_actor *a)
{
    size_t k = (size_t)(a - w->live), last = w->nlive - 1;
    id_index_del(&w->index, a->id);
    if (s)
        session_release(s, actor_cost(a->len));
    free(a->record);
    if (k != last) {
        *a = w->live[last];
        (void)id_index_put(&w->index, a->id, (uint32_t)k); /* replaces: needs no memory */
    }
    w->nlive--;
}

/* Forgets the light id (a deleted actor's). */
static void drop_light(carla_live *w, recd_session *s, uint32_t id)
{
    int64_t k = id_index_find(&w->light_index, id);
    if (k < 0)
        return;
    size_t last = w->nlights - 1;
    id_index_del(&w->light_index, id);
    if (s)
        session_release(s, CARLA_LIGHT_COST);
    if ((size_t)k != last) {
        uint8_t *at = w->lights + (size_t)k * CARLA_LIGHT_RECORD;
        memcpy(at, w->lights + last * CARLA_LIGHT_RECORD, CARLA_LIGHT_RECORD);
        (void)id_index_put(&w->light_index, le32(at), (uint32_t)k);
    }
    w->nlights--;
}

int carla_live_event(carla_live *w, recd_session *s, const recd_carla_event *e)
{
    if (e->len < 4)
        return 0;
    carla_live_settle(w); /* the held positions are of the actors before this event */
    uint32_t id = le32(e->data);
    live_actor *a = find_live(w, id);
    if (e->kind == RECD_CARLA_EVENT_DEL) {
        if (a)
            drop_live(w, s, a);
        drop_light(w, s, id);
        return 0;
    }
    if (e->kind != RECD_CARLA_EVENT_ADD)
        return 0;
    uint8_t *copy = malloc(e->len);
    if (!copy)
        return -ENOMEM;
    memcpy(copy, e->data, e->len);
    if (!a) {
        if (w->nlive == w->cap) {
            size_t cap = w->cap ? w->cap * 2 : 32;
            live_actor *n = realloc(w->live, cap * sizeof *n);
            if (!n) {
                free(copy);
                return -ENOMEM;
            }
            w->live = n;
            w->cap = cap;
        }
        if (w->nlive >= UINT32_MAX || id_index_put(&w->index, id, (uint32_t)w->nlive) < 0) {
            free(copy);
            return -ENOMEM;
        }
        a = &w->live[w->nlive++];
    } else {
        if (s)
            session_release(s, actor_cost(a->len));
        free(a->record);
    }
    *a = (live_actor){id, e->width, e->len, copy};
    return 0;
}

/* Position records move the live actors: each keeps its last location and rotation in its
 * EventAdd record (id u32, type u8, location, rotation: docs/formats/carla.md), so a later
 * log re-adds it where it was, not where it was first added. A sender lists a frame's records
 * in the same actor order every frame (CARLA and rectool generate both do), so the actor after
 * the one moved last is tried before the index. Inlined once per width: each copy is of a
 * known size. */
static inline void move_actors_of(carla_live *w, const uint8_t *r, uint32_t count, uint8_t width)
{
    size_t vecs = 6u * width, rec = 4 + vecs, next = 0;
    live_actor *live = w->live; /* in locals: the copies below could alias w for the compiler */
    size_t nlive = w->nlive;
    for (uint32_t i = 0; i < count; i++, r += rec) {
        uint32_t id = le32(r);
        if (next >= nlive || live[next].id != id) {
            int64_t k = id_index_find(&w->index, id);
            if (k < 0)
                continue;
            next = (size_t)k;
        }
        live_actor *a = &live[next++];
        if (a->width == width && a->len >= 5 + vecs)
            memcpy(a->record + 5, r + 4, vecs);
    }
}

void carla_live_settle(carla_live *w)
{
    if (w->moves_count == 0)
        return;
    if (w->moves_width == 4)
        move_actors_of(w, w->moves.data, w->moves_count, 4);
    else
        move_actors_of(w, w->moves.data, w->moves_count, 8);
    w->moves_count = 0;
}

/* Whether records (count of width) name the same actors in the same order as the held packet:
 * then moving the held one first would change nothing the new one does not overwrite. */
static bool same_actors(const carla_live *w, const uint8_t *records, uint32_t count,
                        uint8_t width)
{
    if (count != w->moves_count || width != w->moves_width)
        return false;
    size_t rec = 4 + 6u * width, at = 0, end = (size_t)count * rec;
    const uint8_t *held = w->moves.data;
    uint32_t differ = 0;
    /* Four records a step, their differences gathered without a branch each: usually none. */
    for (; at + 4 * rec <= end; at += 4 * rec)
        differ |= (le32(held + at) ^ le32(records + at)) |
                  (le32(held + at + rec) ^ le32(records + at + rec)) |
                  (le32(held + at + 2 * rec) ^ le32(records + at + 2 * rec)) |
                  (le32(held + at + 3 * rec) ^ le32(records + at + 3 * rec));
    for (; at < end; at += rec)
        differ |= le32(held + at) ^ le32(records + at);
    return differ == 0;
}

/* The packet is held as the newest; the one it does not replace record for record is moved in
 * first. Out of memory, it is moved in at once instead. */
static void track_positions(carla_live *w, const recd_carla_frame *f, const recd_carla_packet *pk)
{
    uint8_t width = f->width;
    size_t rec = 4 + 6u * width, len = (size_t)pk->count * rec;
    if ((width != 4 && width != 8) || len > pk->len || pk->count == 0)
        return;
    if (!same_actors(w, pk->data, pk->count, width))
        carla_live_settle(w);
    w->moves_count = 0;
    recd_buf_reset(&w->moves);
    if (recd_buf_append(&w->moves, pk->data, len) < 0) {
        if (width == 4)
            move_actors_of(w, pk->data, pk->count, 4);
        else
            move_actors_of(w, pk->data, pk->count, 8);
        return;
    }
    w->moves_count = pk->count;
    w->moves_width = width;
}

/* A light's State record is kept, the newest replacing the one before; a new light is held
 * within the session's bounds, else left out (logged once). *next is where the light after this
 * one is looked for first, as for positions (move_actors_of). */
static void track_light(carla_live *w, recd_session *s, const uint8_t *r, size_t *next)
{
    uint32_t id = le32(r);
    int64_t k = *next < w->nlights && le32(w->lights + *next * CARLA_LIGHT_RECORD) == id
                    ? (int64_t)*next
                    : id_index_find(&w->light_index, id);
    if (k >= 0) {
        memcpy(w->lights + (size_t)k * CARLA_LIGHT_RECORD, r, CARLA_LIGHT_RECORD);
        *next = (size_t)k + 1;
        return;
    }
    const char *limit = s ? session_hold_over(s, CARLA_LIGHT_COST) : NULL;
    if (limit) {
        if (!w->warned)
            log_warn("session '%s': the state of traffic light %u is not kept for a later part's "
                     "first frame: its %zu lights and %zu live actors are at %s",
                     s->key, id, w->nlights, w->nlive, limit);
        w->warned = true;
        return;
    }
    if (w->nlights == w->lights_cap) {
        size_t cap = w->lights_cap ? w->lights_cap * 2 : 16;
        uint8_t *n = realloc(w->lights, cap * CARLA_LIGHT_RECORD);
        if (!n)
            return; /* out of memory: a later part shows this light from its own next State */
        w->lights = n;
        w->lights_cap = cap;
    }
    if (w->nlights >= UINT32_MAX ||
        id_index_put(&w->light_index, id, (uint32_t)w->nlights) < 0)
        return;
    memcpy(w->lights + w->nlights * CARLA_LIGHT_RECORD, r, CARLA_LIGHT_RECORD);
    w->nlights++;
    if (s)
        session_hold(s, CARLA_LIGHT_COST);
}

void carla_live_frame(carla_live *w, recd_session *s, const recd_carla_frame *f)
{
    for (size_t p = 0; p < f->count; p++) {
        const recd_carla_packet *pk = &f->packets[p];
        if (pk->raw)
            continue;
        if (pk->kind == RECD_CARLA_POSITION) {
            track_positions(w, f, pk);
        } else if (pk->kind == RECD_CARLA_STATE &&
                   (size_t)pk->count * CARLA_LIGHT_RECORD == pk->len) {
            size_t next = 0;
            for (uint32_t i = 0; i < pk->count; i++)
                track_light(w, s, pk->data + (size_t)i * CARLA_LIGHT_RECORD, &next);
        } else if (pk->kind == RECD_CARLA_WEATHER && pk->count &&
                   (size_t)pk->count * CARLA_WEATHER_RECORD == pk->len) {
            memcpy(w->weather, pk->data + pk->len - CARLA_WEATHER_RECORD, CARLA_WEATHER_RECORD);
            w->has_weather = true;
        }
    }
}

int carla_live_copy(carla_live *dst, carla_live *src)
{
    memset(dst, 0, sizeof *dst);
    carla_live_settle(src);
    for (size_t i = 0; i < src->nlive; i++) {
        const live_actor *a = &src->live[i];
        recd_carla_event e = {RECD_CARLA_EVENT_ADD, a->width, a->len, a->record, NULL};
        if (carla_live_event(dst, NULL, &e) < 0) {
            carla_live_free(dst);
            return -ENOMEM;
        }
    }
    size_t next = 0;
    for (size_t i = 0; i < src->nlights; i++)
        track_light(dst, NULL, src->lights + i * CARLA_LIGHT_RECORD, &next);
    if (dst->nlights != src->nlights) {
        carla_live_free(dst);
        return -ENOMEM;
    }
    dst->has_weather = src->has_weather;
    memcpy(dst->weather, src->weather, sizeof dst->weather);
    return 0;
}

void carla_live_free(carla_live *w)
{
    for (size_t i = 0; i < w->nlive; i++)
        free(w->live[i].record);
    free(w->live);
    id_index_free(&w->index);
    free(w->lights);
    id_index_free(&w->light_index);
    recd_buf_free(&w->moves);
    memset(w, 0, sizeof *w);
}

int carla_live_first_frame(const carla_live *w, const recd_carla_frame *f, carla_first_frame *out)
{
    memset(out, 0, sizeof *out);
    out->f = *f;
    bool weather = w->has_weather;
    size_t missing = w->nlights;
    bool *sent = NULL;
    if (missing && !(sent = calloc(w->nlights, sizeof *sent)))
        return -ENOMEM;
    for (size_t p = 0; p < f->count; p++) {
        const recd_carla_packet *pk = &f->packets[p];
        if (pk->raw)
            continue;
        if (pk->kind == RECD_CARLA_WEATHER)
            weather = false;
        if (pk->kind != RECD_CARLA_STATE || (size_t)pk->count * CARLA_LIGHT_RECORD != pk->len)
            continue;
        for (uint32_t i = 0; i < pk->count && missing; i++) {
            const uint8_t *r = pk->data + (size_t)i * CARLA_LIGHT_RECORD;
            int64_t k = id_index_find(&w->light_index, le32(r));
            if (k >= 0 && !sent[k]) {
                sent[k] = true;
                missing--;
            }
        }
    }
    if (!missing && !weather) {
        free(sent);
        return 0;
    }
    out->packets = malloc((f->count + 2) * sizeof *out->packets);
    out->lights = missing ? malloc(missing * CARLA_LIGHT_RECORD) : NULL;
    if (!out->packets || (missing && !out->lights)) {
        free(sent);
        carla_first_frame_free(out);
        return -ENOMEM;
    }
    if (f->count)
        memcpy(out->packets, f->packets, f->count * sizeof *out->packets);
    size_t n = f->count, at = 0;
    for (size_t k = 0; k < w->nlights && missing; k++)
        if (!sent[k])
            memcpy(out->lights + CARLA_LIGHT_RECORD * at++, w->lights + k * CARLA_LIGHT_RECORD,
                   CARLA_LIGHT_RECORD);
    free(sent);
    if (at)
        out->packets[n++] = (recd_carla_packet){.kind = RECD_CARLA_STATE, .count = (uint32_t)at,
                                                .len = (uint32_t)(at * CARLA_LIGHT_RECORD),
                                                .data = out->lights};
    if (weather)
        out->packets[n++] = (recd_carla_packet){.kind = RECD_CARLA_WEATHER, .count = 1,
                                                .len = CARLA_WEATHER_RECORD, .data = w->weather};
    out->f.packets = out->packets;
    out->f.count = n;
    return 0;
}

void carla_first_frame_free(carla_first_frame *ff)
{
    free(ff->packets);
    free(ff->lights);
    ff->packets = NULL;
    ff->lights = NULL;
}

int carla_live_readd(carla_live *w, recd_carla_writer *wr, char *err, size_t errlen)
{
    int rc = 0;
    carla_live_settle(w);
    for (size_t i = 0; rc == 0 && i < w->nlive; i++) {
        recd_carla_event e = {RECD_CARLA_EVENT_ADD, w->live[i].width, w->live[i].len,
                              w->live[i].record, NULL};
        rc = recd_carla_writer_event(wr, &e, err, errlen);
    }
    return rc;
}
