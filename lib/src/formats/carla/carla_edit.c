/* SPDX-License-Identifier: MIT */
/* How the edit operations treat CARLA logs: times are milliseconds of the frames' elapsed game
 * time. A cut keeps the frames of its range, renumbered from 1 and (unless keep-time) rebased to
 * elapsed 0, and starts with an EventAdd for every actor alive at the cut (at its latest
 * position) and an EventParent for every attachment, so that the piece replays on its own.
 * concat continues frame ids and elapsed time, ending each input's actors with EventDel before
 * the next input adds its own. Retime and transform do not apply (reasons below). Plots:
 * carla_track.c. The rules: docs/editing.md. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/carla/carla_actor_index.h"
#include "formats/carla/carla_format.h"
#include "formats/format_edit.h"
#include "base/why.h"

#define CARLA_MAX_MS 1e15 /* elapsed seconds beyond 1e12 are no simulation time */

static double carla_exact_ms(const recd_msg *m)
{
    if (m->type != RECD_MSG_STATE || !m->carla_state)
        return -1;
    double ms = m->carla_state->elapsed * 1000.0;
    return ms >= 0 && ms < CARLA_MAX_MS ? ms : -1;
}

static int64_t carla_time_of(const recd_msg *m)
{
    double ms = carla_exact_ms(m);
    return ms >= 0 ? (int64_t)llround(ms) : -1;
}

/* ---- the actors alive at a point of the log ----------------------------------------------- */

typedef struct edit_actor {
    uint32_t id;
    bool alive;
    uint8_t width;
    uint8_t *add; /* owned copy of its EventAdd record */
    uint32_t add_len;
    bool has_pos;
    uint8_t pos[48]; /* latest location and rotation: 6 numbers of the width */
    bool has_parent;
    uint32_t parent;
} edit_actor;

typedef struct edit_world {
    edit_actor *a; /* in the order they were added */
    size_t n, cap;
    carla_actor_index x;
} edit_world;

static edit_actor *world_find(edit_world *w, uint32_t id)
{
    size_t slot;
    if (!carla_index_get(&w->x, id, &slot) || !w->a[slot].alive)
        return NULL;
    return &w->a[slot];
}

static void world_free(edit_world *w)
{
    for (size_t i = 0; i < w->n; i++)
        free(w->a[i].add);
    free(w->a);
    carla_index_free(&w->x);
    memset(w, 0, sizeof *w);
}

static int world_event(edit_world *w, const recd_carla_event *e)
{
    if (e->len < 4)
        return 0;
    uint32_t id = ld_le32(e->data);
    if (e->kind == RECD_CARLA_EVENT_DEL) {
        edit_actor *a = world_find(w, id);
        if (a) {
            a->alive = false;
            free(a->add);
            a->add = NULL;
        }
    } else if (e->kind == RECD_CARLA_EVENT_PARENT && e->len >= 8) {
        edit_actor *a = world_find(w, id);
        if (a) {
            a->has_parent = true;
            a->parent = ld_le32(e->data + 4);
        }
    } else if (e->kind == RECD_CARLA_EVENT_ADD && e->len >= 5 + 6u * e->width) {
        edit_actor *old = world_find(w, id);
        if (old) { /* added again without a delete: the new record wins */
            old->alive = false;
            free(old->add);
            old->add = NULL;
        }
        if (w->n == w->cap) {
            size_t cap = w->cap ? w->cap * 2 : 64;
            edit_actor *v = realloc(w->a, cap * sizeof *v);
            if (!v)
                return -ENOMEM;
            w->a = v;
            w->cap = cap;
        }
        edit_actor *a = &w->a[w->n];
        memset(a, 0, sizeof *a);
        a->add = malloc(e->len);
        if (!a->add)
            return -ENOMEM;
        memcpy(a->add, e->data, e->len);
        a->add_len = e->len;
        a->id = id;
        a->width = e->width;
        a->alive = true;
        int rc = carla_index_put(&w->x, id, w->n);
        if (rc < 0) {
            free(a->add);
            return rc;
        }
        w->n++;
    }
    return 0;
}

/* Each Position record of the frame becomes its actor's latest position. */
static void world_positions(edit_world *w, const recd_carla_frame *f)
{
    size_t rec = 4 + 6u * f->width;
    for (size_t i = 0; i < f->count; i++) {
        const recd_carla_packet *p = &f->packets[i];
        if (p->raw || p->kind != RECD_CARLA_POSITION || (size_t)p->count * rec != p->len)
            continue;
        for (uint32_t k = 0; k < p->count; k++) {
            const uint8_t *r = p->data + (size_t)k * rec;
            edit_actor *a = world_find(w, ld_le32(r));
            if (a && a->width == f->width) {
                memcpy(a->pos, r + 4, 6u * f->width);
                a->has_pos = true;
            }
        }
    }
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

/* The first frame of a cut: every living actor added where it stands, then its attachment. */
static int emit_alive(edit_world *w, recd_msg_fn emit, void *ctx, char *err, size_t errlen)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < w->n; i++) {
        edit_actor *a = &w->a[i];
        if (!a->alive)
            continue;
        if (a->has_pos)
            memcpy(a->add + 5, a->pos, 6u * a->width);
        rc = emit_event(RECD_CARLA_EVENT_ADD, a->width, a->add, a->add_len, emit, ctx, err,
                        errlen);
    }
    for (size_t i = 0; rc == 0 && i < w->n; i++) {
        edit_actor *a = &w->a[i];
        if (!a->alive || !a->has_parent || !world_find(w, a->parent))
            continue;
        uint8_t rec[8];
        st_le32(rec, a->id);
        st_le32(rec + 4, a->parent);
        rc = emit_event(RECD_CARLA_EVENT_PARENT, a->width, rec, 8, emit, ctx, err, errlen);
    }
    return rc;
}

/* The end of an input in a concat: every actor still alive is deleted. */
static int emit_deletes(edit_world *w, recd_msg_fn emit, void *ctx, char *err, size_t errlen)
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

/* A copy of state m as frame `id` at `elapsed`; its VisualTime and PlatformTime move by as much
 * as its elapsed time. */
static int emit_frame(const recd_msg *m, uint64_t id, double elapsed, recd_msg_fn emit, void *ctx,
                      char *err, size_t errlen)
{
    recd_msg c;
    int rc = recd_msg_copy(&c, m);
    if (rc < 0)
        return rc;
    recd_carla_frame *f = c.carla_state;
    double shift = elapsed - f->elapsed;
    for (size_t i = 0; shift != 0 && i < f->count; i++) {
        recd_carla_packet *p = &f->packets[i];
        if (!p->raw && p->len == 8 &&
            (p->kind == RECD_CARLA_VISUAL_TIME || p->kind == RECD_CARLA_PLATFORM_TIME)) {
            uint8_t *v = (uint8_t *)p->data; /* the copy owns its bytes */
            st_le64(v, f64_to_bits(f64_from_bits(ld_le64(v)) + shift));
        }
    }
    f->id = id;
    f->elapsed = elapsed;
    rc = emit(ctx, &c, err, errlen);
    recd_msg_free(&c);
    return rc;
}

static int emit_close(recd_msg_fn emit, void *ctx, char *err, size_t errlen)
{
    recd_msg c;
    recd_msg_init(&c, RECD_MSG_CLOSE, RECD_MSG_FMT_CARLA);
    return emit(ctx, &c, err, errlen);
}

/* ---- cut ------------------------------------------------------------------------------------ */

static int carla_cut(const recd_edit_msgs *in, const recd_cut_opts *o, recd_msg_fn emit,
                     void *ctx, char *err, size_t errlen)
{
    edit_world w = {0};
    uint64_t frames = 0;
    double base = 0;
    int64_t first = -1, last = -1;
    int rc = emit(ctx, &in->v[0], err, errlen);
    for (size_t i = 1; rc == 0 && i < in->n; i++) {
        const recd_msg *m = &in->v[i];
        if (m->type == RECD_MSG_EVENT) {
            if (frames == 0)
                rc = world_event(&w, m->carla_event);
            else
                rc = emit(ctx, m, err, errlen);
            continue;
        }
        if (m->type != RECD_MSG_STATE)
            continue;
        int64_t t = carla_time_of(m);
        if (first < 0)
            first = t;
        last = t > last ? t : last;
        if (t < o->from) {
            world_positions(&w, m->carla_state);
            continue;
        }
        if (o->to >= 0 && t >= o->to)
            break;
        if (frames == 0)
            base = o->keep_time ? 0.0 : m->carla_state->elapsed;
        rc = emit_frame(m, ++frames, m->carla_state->elapsed - base, emit, ctx, err, errlen);
        if (rc == 0 && frames == 1)
            rc = emit_alive(&w, emit, ctx, err, errlen);
    }
    world_free(&w);
    if (rc == 0 && frames == 0) {
        char to[24] = "the end";
        if (o->to >= 0)
            snprintf(to, sizeof to, "%lld", (long long)o->to);
        recd_why(err, errlen,
                 "no frame in [%lld, %s) ms: the log's frames run from %lld to %lld ms; cut inside that",
                (long long)o->from, to, (long long)first, (long long)last);
        return -EINVAL;
    }
    return rc == 0 ? emit_close(emit, ctx, err, errlen) : rc;
}

/* ---- concat --------------------------------------------------------------------------------- */

static int carla_concat(const recd_edit_msgs *in, size_t n, int64_t gap, recd_msg_fn emit,
                        void *ctx, char *err, size_t errlen)
{
    const char *map = in[0].v[0].open.carla->map;
    for (size_t k = 1; k < n; k++)
        if (strcmp(in[k].v[0].open.carla->map, map) != 0) {
            recd_why(err, errlen, "input %zu is recorded in map %s, input 1 in %s: a log replays "
                     "in one map", k + 1, in[k].v[0].open.carla->map, map);
            return -EINVAL;
        }
    int rc = emit(ctx, &in[0].v[0], err, errlen);
    uint64_t frames = 0;
    double end = 0, step = 0; /* the last written frame's elapsed and the step before it */
    for (size_t k = 0; rc == 0 && k < n; k++) {
        edit_world w = {0};
        double offset = 0;
        bool started = false;
        for (size_t i = 1; rc == 0 && i < in[k].n; i++) {
            const recd_msg *m = &in[k].v[i];
            if (m->type == RECD_MSG_EVENT) {
                rc = world_event(&w, m->carla_event);
                if (rc == 0)
                    rc = emit(ctx, m, err, errlen);
                continue;
            }
            if (m->type != RECD_MSG_STATE)
                continue;
            double e = m->carla_state->elapsed;
            if (!started && frames > 0)
                offset = end + (gap >= 0 ? (double)gap / 1000.0 : step) - e;
            double t = e + offset;
            if (started)
                step = t - end; /* within one input only: gap < 0 repeats its last step */
            started = true;
            rc = emit_frame(m, ++frames, t, emit, ctx, err, errlen);
            end = t;
        }
        if (rc == 0 && k + 1 < n)
            rc = emit_deletes(&w, emit, ctx, err, errlen);
        world_free(&w);
    }
    return rc == 0 ? emit_close(emit, ctx, err, errlen) : rc;
}

const struct recd_format_edit recd_carla__edit = {
    .time_unit = "ms",
    .unit_ms = 1,
    .unit_name = "frame",
    .place = RECD_EDIT_PLACE_FRAME,
    .no_retime = "CARLA's replayer already plays a log at any speed (its time factor), and "
                 "frames hold animation and wall-clock packets no resampling can interpolate",
    .no_transform = "a log replays inside its map: moved actors would leave the map's roads, "
                    "and map actors (traffic lights, signs) stay where the map has them",
    .time_of = carla_time_of,
    .exact_ms = carla_exact_ms,
    .cut = carla_cut,
    .concat = carla_concat,
    .track = recd_carla__track,
    .track_points = recd_carla__track_points,
};
