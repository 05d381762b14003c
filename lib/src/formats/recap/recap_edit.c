/* SPDX-License-Identifier: MIT */
/* How the edit operations treat .recap files: times are ticks (50 ms). A cut starts the new file
 * with the full state the player had at its first tick, keeps the states and events of the range
 * and ends it exactly at its last tick; concat continues each file's ticks after the previous
 * one's frame count. Ticks always start at 0 in a file, so a cut moves the header's start time
 * instead. Retime and transform do not apply: the clock is the game's fixed tick, and events hold
 * world positions (blocks placed, explosions) that no transform can move consistently. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "formats/format_edit.h"
#include "base/why.h"
#include "recd/recap.h"

/* Health is 0..20 in the game; plots show 0..100 like every other format. */
#define RECAP_HEALTH_TO_PERCENT 5.0
#define RECAP_TICKS_PER_SECOND 20.0

/* Which compressor wrote the members is packing, like where they end: diff ignores both. */
static void recap_clear_packing(recd_msg *m)
{
    if (m->type == RECD_MSG_OPEN && m->open.recap)
        m->open.recap->header.compressor = RECD_GZIP_ZLIB;
}

static int64_t recap_time_of(const recd_msg *m)
{
    if (m->type == RECD_MSG_STATE && m->recap_state)
        return (int64_t)m->recap_state->tick;
    if (m->type == RECD_MSG_EVENT && m->recap_event)
        return (int64_t)m->recap_event->tick;
    return -1;
}

/* Hands on a copy of m with its tick (or a flush's end tick) moved to t. */
static int emit_at(const recd_msg *m, int64_t t, recd_msg_fn emit, void *ctx, char *err,
                   size_t errlen)
{
    recd_msg c;
    int rc = recd_msg_copy(&c, m);
    if (rc < 0)
        return rc;
    if (c.type == RECD_MSG_STATE)
        c.recap_state->tick = (uint64_t)t;
    else if (c.type == RECD_MSG_EVENT)
        c.recap_event->tick = (uint64_t)t;
    else if (c.type == RECD_MSG_FLUSH)
        c.flush.end_tick = (uint64_t)t;
    rc = emit(ctx, &c, err, errlen);
    recd_msg_free(&c);
    return rc;
}

static int emit_flush(uint64_t end_tick, recd_msg_fn emit, void *ctx, char *err, size_t errlen)
{
    recd_msg f;
    recd_msg_init(&f, RECD_MSG_FLUSH, RECD_MSG_FMT_RECAP);
    f.flush.has_end_tick = true;
    f.flush.end_tick = end_tick;
    return emit(ctx, &f, err, errlen);
}

/* The open message with the header's start moved by `ticks` and its totals left to be counted. */
static int emit_open(const recd_msg *open, int64_t ticks, recd_msg_fn emit, void *ctx, char *err,
                     size_t errlen)
{
    recd_msg c;
    int rc = recd_msg_copy(&c, open);
    if (rc < 0)
        return rc;
    recd_msg_recap_open *r = c.open.recap;
    r->header.start_ms = recd_recap_time_after(r->header.start_ms, ticks);
    r->has_start_time = true;
    r->has_end_time = false;
    r->has_frame_count = false;
    r->header.frame_count = 0;
    rc = emit(ctx, &c, err, errlen);
    recd_msg_free(&c);
    return rc;
}

static uint64_t recap_frames(const recd_edit_msgs *l)
{
    return l->v[0].open.recap->header.frame_count;
}

/* A cut in progress, fed the open and then every state, event and flush in file order: the one
 * rule for both feeds, a loaded list (its messages outlive the cut) and a ranged read's stream
 * (the cut owns each message and frees it once emitted, so the range is never held whole). */
struct recd_edit_cutter {
    recd_cut_opts o;
    recd_msg_fn emit;
    void *ctx;
    bool opened, started, past_end;
    int64_t end; /* first tick not kept */
    uint64_t last_flush;
    const recd_msg *carried; /* the last state before the range: a lent one, or &own_carried */
    recd_msg own_carried;
    bool owns_carried;
};

#define CUT_KEPT 1 /* cut_step's value when it kept the message it was given */

static recd_edit_cutter *recap_cut_start(const recd_cut_opts *o, recd_msg_fn emit, void *ctx)
{
    recd_edit_cutter *c = calloc(1, sizeof *c);
    if (c) {
        c->o = *o;
        c->emit = emit;
        c->ctx = ctx;
        c->last_flush = (uint64_t)o->from;
    }
    return c;
}

static int cut_open(recd_edit_cutter *c, const recd_msg *m, char *err, size_t errlen)
{
    if (m->type != RECD_MSG_OPEN || !m->open.recap) {
        recd_why(err, errlen, "a cut reads the recording's open first");
        return -EPROTO;
    }
    c->opened = true;
    int64_t frames = (int64_t)m->open.recap->header.frame_count;
    c->end = c->o.to < 0 || c->o.to > frames ? frames : c->o.to;
    if (c->o.from >= c->end) {
        recd_why(err, errlen, "no tick in [%lld, %lld): the file has %lld ticks",
                (long long)c->o.from, (long long)c->o.to, (long long)frames);
        return -EINVAL;
    }
    if (c->o.keep_time && c->o.from > 0) {
        recd_why(err, errlen, "a .recap file's ticks always start at 0 (its header's start time "
                             "moves instead): keep-time does not apply");
        return -EINVAL;
    }
    return emit_open(m, c->o.from, c->emit, c->ctx, err, errlen);
}

/* m becomes the state the range starts with unless a later one before `from` comes. */
static void cut_carry(recd_edit_cutter *c, const recd_msg *m, recd_msg *owned)
{
    if (c->owns_carried)
        recd_msg_free(&c->own_carried);
    c->owns_carried = owned != NULL;
    if (owned) {
        c->own_carried = *owned;
        c->carried = &c->own_carried;
    } else {
        c->carried = m;
    }
}

/* The carried state at `from`, as the new file's first tick. */
static int cut_emit_carried(recd_edit_cutter *c, char *err, size_t errlen)
{
    if (!c->carried) {
        recd_why(err, errlen, "no state at or before tick %lld", (long long)c->o.from);
        return -EBADMSG;
    }
    if (!c->owns_carried)
        return emit_at(c->carried, c->o.from, c->emit, c->ctx, err, errlen);
    c->own_carried.recap_state->tick = (uint64_t)c->o.from; /* ours: no copy needed */
    return c->emit(c->ctx, &c->own_carried, err, errlen);
}

/* One message m (owned: m itself when the cut owns it, else NULL): CUT_KEPT when the cut keeps
 * owned, 0, or a negative errno. */
static int cut_step(recd_edit_cutter *c, const recd_msg *m, recd_msg *owned, char *err,
                    size_t errlen)
{
    if (!c->opened)
        return cut_open(c, m, err, errlen);
    if (c->past_end)
        return 0;
    if (m->type == RECD_MSG_FLUSH) {
        uint64_t e = m->flush.end_tick;
        if (!c->started || e <= c->last_flush || e >= (uint64_t)c->end)
            return 0;
        c->last_flush = e;
        return c->emit(c->ctx, m, err, errlen);
    }
    int64_t t = recap_time_of(m);
    if (t < 0)
        return 0;
    if (t < c->o.from) {
        if (m->type != RECD_MSG_STATE)
            return 0;
        cut_carry(c, m, owned);
        return owned ? CUT_KEPT : 0;
    }
    if (t >= c->end) {
        c->past_end = true;
        return 0;
    }
    if (!c->started) {
        c->started = true;
        /* The first tick of the new file needs the full state the player had then. */
        if (!(m->type == RECD_MSG_STATE && t == c->o.from)) {
            int rc = cut_emit_carried(c, err, errlen);
            if (rc < 0)
                return rc;
        }
    }
    return c->emit(c->ctx, m, err, errlen);
}

static int recap_cut_take(recd_edit_cutter *c, recd_msg *m, char *err, size_t errlen)
{
    int rc = cut_step(c, m, m, err, errlen);
    if (rc != CUT_KEPT)
        recd_msg_free(m);
    return rc < 0 ? rc : 0;
}

static int recap_cut_finish(recd_edit_cutter *c, int rc, char *err, size_t errlen)
{
    if (rc == 0 && !c->opened) {
        recd_why(err, errlen, "a cut reads the recording's open first");
        rc = -EPROTO;
    }
    if (rc == 0 && !c->started)
        rc = cut_emit_carried(c, err, errlen);
    if (rc == 0)
        rc = emit_flush((uint64_t)c->end, c->emit, c->ctx, err, errlen); /* the file ends there */
    if (rc == 0) {
        recd_msg close;
        recd_msg_init(&close, RECD_MSG_CLOSE, RECD_MSG_FMT_RECAP);
        rc = c->emit(c->ctx, &close, err, errlen);
    }
    if (c->owns_carried)
        recd_msg_free(&c->own_carried);
    free(c);
    return rc;
}

static int recap_cut(const recd_edit_msgs *in, const recd_cut_opts *o, recd_msg_fn emit,
                     void *ctx, char *err, size_t errlen)
{
    recd_edit_cutter *c = recap_cut_start(o, emit, ctx);
    if (!c)
        return -ENOMEM;
    int rc = 0;
    for (size_t i = 0; rc >= 0 && i < in->n && !c->past_end; i++)
        rc = cut_step(c, &in->v[i], NULL, err, errlen);
    return recap_cut_finish(c, rc < 0 ? rc : 0, err, errlen);
}

static int recap_concat(const recd_edit_msgs *in, size_t n, int64_t gap, recd_msg_fn emit,
                        void *ctx, char *err, size_t errlen)
{
    int rc = emit_open(&in[0].v[0], 0, emit, ctx, err, errlen);
    int64_t offset = 0;
    for (size_t k = 0; rc == 0 && k < n; k++) {
        int64_t frames = (int64_t)recap_frames(&in[k]);
        uint64_t last_flush = 0;
        for (size_t i = 1; rc == 0 && i < in[k].n; i++) {
            const recd_msg *m = &in[k].v[i];
            if (m->type == RECD_MSG_FLUSH) {
                last_flush = offset + m->flush.end_tick;
                rc = emit_at(m, (int64_t)last_flush, emit, ctx, err, errlen);
            } else if (m->type == RECD_MSG_STATE || m->type == RECD_MSG_EVENT) {
                rc = emit_at(m, offset + recap_time_of(m), emit, ctx, err, errlen);
            }
        }
        if (rc == 0 && last_flush != (uint64_t)(offset + frames))
            rc = emit_flush((uint64_t)(offset + frames), emit, ctx, err, errlen);
        offset += frames + (gap > 0 ? gap : 0);
        if (offset > (int64_t)UINT32_MAX) {
            recd_why(err, errlen, "%lld ticks do not fit the header's frame count",
                     (long long)offset);
            return -ERANGE;
        }
    }
    if (rc == 0) {
        recd_msg c;
        recd_msg_init(&c, RECD_MSG_CLOSE, RECD_MSG_FMT_RECAP);
        rc = emit(ctx, &c, err, errlen);
    }
    return rc;
}

static bool recap_track_point(const recd_msg *m, recd_track_point *p)
{
    const recd_msg_recap_state *s = m->recap_state;
    const recd_recap_state *st = &s->state;
    p->actor = 0;
    p->kind = RECD_TRACK_PLAYER;
    p->t = (double)s->tick / RECAP_TICKS_PER_SECOND;
    /* Minecraft: x east, y up, z south. */
    p->x = st->pos[0];
    p->y = -st->pos[2];
    p->z = st->pos[1];
    p->speed = sqrt(st->vel[0] * st->vel[0] + st->vel[1] * st->vel[1] + st->vel[2] * st->vel[2]) *
               RECAP_TICKS_PER_SECOND;
    p->health = st->health * RECAP_HEALTH_TO_PERCENT;
    p->armour = NAN;
    p->vehicle_health = NAN;
    return isfinite(p->x) && isfinite(p->y);
}

const struct recd_format_edit recd_recap__edit = {
    .time_unit = "tick",
    .unit_ms = RECD_RECAP_TICK_MS,
    .unit_name = "tick",
    .place = RECD_EDIT_PLACE_TIME,
    .no_retime = "its clock is the game's fixed tick",
    .no_transform = "its events hold world positions a transform cannot move",
    .time_of = recap_time_of,
    .cut = recap_cut,
    .cut_start = recap_cut_start,
    .cut_take = recap_cut_take,
    .cut_finish = recap_cut_finish,
    .concat = recap_concat,
    .track_point = recap_track_point,
    .clear_packing = recap_clear_packing,
};
