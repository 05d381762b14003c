/* SPDX-License-Identifier: MIT */
/* Plots of CARLA logs: the route of every vehicle and walker (the actors that drive or walk;
 * traffic lights, signs, sensors and the spectator have none of their own), read frame by frame
 * straight from the file so that every layout librecd reads can be drawn. Unreal's left-handed
 * centimetres become metres with y pointing north; speed is the distance between an actor's
 * consecutive positions over their time. A plot of a time range starts at the range's seek point:
 * the frames before it are walked for their events only, as the whole read walks them, and the
 * actors' last positions and speeds are then taken from their latest Position packets, read
 * backwards (docs/formats/carla.md, section 6). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf_grow.h"
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
    uint32_t id;
    bool alive;
    recd_track_kind kind;
    uint64_t added; /* the frame that added it: its positions count from that frame on */
    bool has_last;
    double x, y, z, t, speed;
} track_actor;

/* A Position packet of a frame before the seek point, kept to settle the actors' last positions
 * once the seek point is reached. */
typedef struct kept_positions {
    const uint8_t *records;
    uint32_t count;
    uint64_t frame;
    double t;
} kept_positions;

typedef struct track_state {
    track_actor *a;
    size_t n, cap;
    carla_actor_index x;
    unsigned width;
    uint64_t frame; /* frames read so far */
    bool keeping;   /* before the seek point: Position packets are kept, not drawn */
    kept_positions *kept;
    size_t kept_n, kept_cap;
    recd_track_fn on_point;
    void *data;
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
    track_actor *grown = recd__array_room(s->a, &s->cap, s->n, sizeof *s->a, 64);
    if (!grown)
        return -ENOMEM;
    s->a = grown;
    s->a[s->n] = (track_actor){.id = id, .alive = true, .added = s->frame,
                               .kind = r[4] == ACTOR_VEHICLE ? RECD_TRACK_VEHICLE : RECD_TRACK_ONFOOT};
    int rc = carla_index_put(&s->x, id, s->n);
    if (rc == 0)
        s->n++;
    return rc;
}

/* Calls fn(s, record, size) for each record of an event packet. */
static int each_record(track_state *s, const recd_carla_packet *p,
                       int (*fn)(track_state *, const uint8_t *, size_t))
{
    size_t at = 0;
    for (uint32_t i = 0; i < p->count && at < p->len; i++) {
        size_t n = carla_rec_size(p->kind, s->width, p->data + at, p->len - at);
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

/* A Position record in metres, y pointing north; false when a number is not finite. */
static bool record_position(const track_state *s, const uint8_t *r, double v[3])
{
    v[0] = carla_vat(r + 4, s->width, 0) / CM_PER_M;
    v[1] = -carla_vat(r + 4, s->width, 1) / CM_PER_M;
    v[2] = carla_vat(r + 4, s->width, 2) / CM_PER_M;
    return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

/* The speed of a move from (x, y, z) at t0 to (x1, y1, z1) at t1 (t1 > t0). */
static double speed_of(const double p1[3], double t1, double x, double y, double z, double t0)
{
    return sqrt((p1[0] - x) * (p1[0] - x) + (p1[1] - y) * (p1[1] - y) +
                (p1[2] - z) * (p1[2] - z)) / (t1 - t0);
}

static int on_positions(track_state *s, const recd_carla_packet *p, double t)
{
    size_t rec = 4 + 6u * s->width;
    for (uint32_t k = 0; k < p->count; k++) {
        const uint8_t *r = p->data + (size_t)k * rec;
        uint32_t id = ld_le32(r);
        track_actor *a = actor_of(s, id);
        double v[3];
        if (!a || !record_position(s, r, v))
            continue;
        if (a->has_last && t > a->t)
            a->speed = speed_of(v, t, a->x, a->y, a->z, a->t);
        a->has_last = true;
        a->x = v[0], a->y = v[1], a->z = v[2], a->t = t;
        recd_track_point pt = {.actor = id, .kind = a->kind, .t = t, .x = v[0], .y = v[1],
                               .z = v[2], .speed = a->speed, .health = NAN, .armour = NAN,
                               .vehicle_health = NAN};
        int rc = s->on_point(s->data, &pt);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* An empty packet is not kept: every entry then stands for at least one 28-byte record, so the
 * list stays smaller than the log. */
static int keep_positions(track_state *s, const recd_carla_packet *p, double t)
{
    if (p->count == 0)
        return 0;
    kept_positions *grown = recd__array_room(s->kept, &s->kept_cap, s->kept_n, sizeof *s->kept,
                                             1024);
    if (!grown)
        return -ENOMEM;
    s->kept = grown;
    s->kept[s->kept_n++] = (kept_positions){p->data, p->count, s->frame, t};
    return 0;
}

/* One frame at track time t: actors added in it have their first position in it, a deleted one
 * its last. Before the seek point the positions are kept instead of drawn. */
static int track_frame(track_state *s, const recd_carla_frame *f, double t)
{
    int rc = 0;
    size_t rec = 4 + 6u * s->width;
    for (size_t i = 0; rc >= 0 && i < f->count; i++)
        if (!f->packets[i].raw && f->packets[i].kind == RECD_CARLA_EVENT_ADD)
            rc = each_record(s, &f->packets[i], on_add);
    for (size_t i = 0; rc == 0 && i < f->count; i++) {
        const recd_carla_packet *p = &f->packets[i];
        if (p->raw || p->kind != RECD_CARLA_POSITION || !isfinite(t) ||
            (size_t)p->count * rec != p->len)
            continue;
        rc = s->keeping ? keep_positions(s, p, t) : on_positions(s, p, t);
    }
    for (size_t i = 0; rc == 0 && i < f->count; i++)
        if (!f->packets[i].raw && f->packets[i].kind == RECD_CARLA_EVENT_DEL)
            rc = each_record(s, &f->packets[i], on_delete);
    s->frame++;
    return rc;
}

/* ---- the actors at the seek point: their kept positions read backwards ---------------------- */

typedef struct settling {
    bool done;        /* its speed is known, or no earlier record can change it */
    double later[3];  /* the record after the one read next, going back */
    double later_t;
} settling;

/* The living actors still settling: the earliest frame that may hold a record of theirs
 * (UINT64_MAX: none), and a bit per id mod 64 (most packets are of other actors). */
static uint64_t unsettled(const track_state *s, const settling *v, uint64_t *id_bits)
{
    uint64_t oldest = UINT64_MAX;
    *id_bits = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (!s->a[i].alive || v[i].done)
            continue;
        oldest = s->a[i].added < oldest ? s->a[i].added : oldest;
        *id_bits |= 1ull << (s->a[i].id & 63);
    }
    return oldest;
}

/* One record of actor a (slot i), earlier than every record read so far: the first read is its
 * last position; going on back, the first pair of records whose time goes forward gives the
 * speed on_positions last computed (none: it stays 0, as it was when the actor was added). */
static bool settle_record(track_state *s, size_t i, settling *v, const double p[3], double t)
{
    track_actor *a = &s->a[i];
    if (!a->has_last) {
        a->has_last = true;
        a->x = p[0], a->y = p[1], a->z = p[2], a->t = t;
    } else if (v->later_t > t) {
        a->speed = speed_of(v->later, v->later_t, p[0], p[1], p[2], t);
        v->done = true;
        return true;
    }
    memcpy(v->later, p, sizeof v->later);
    v->later_t = t;
    return false;
}

/* Leaves every living actor as reading the kept packets forward would have: its last position
 * and time, and its speed. Reads from the last packet back, as far as some actor still needs an
 * earlier record (an actor that never moved: back to the frame that added it). */
static int settle_positions(track_state *s)
{
    settling *v = calloc(s->n ? s->n : 1, sizeof *v);
    if (!v)
        return -ENOMEM;
    size_t rec = 4 + 6u * s->width;
    uint64_t bits, oldest = unsettled(s, v, &bits);
    for (size_t k = s->kept_n; k-- > 0 && s->kept[k].frame >= oldest;) {
        const kept_positions *p = &s->kept[k];
        bool any = false, settled = false;
        for (uint32_t j = 0; j < p->count && !any; j++)
            any = bits >> (ld_le32(p->records + (size_t)j * rec) & 63) & 1;
        for (uint32_t j = p->count; any && j-- > 0;) { /* a packet's last record is the latest */
            const uint8_t *r = p->records + (size_t)j * rec;
            size_t slot;
            double pos[3];
            if (!carla_index_get(&s->x, ld_le32(r), &slot) || !s->a[slot].alive || v[slot].done ||
                p->frame < s->a[slot].added || !record_position(s, r, pos))
                continue;
            settled |= settle_record(s, slot, &v[slot], pos, p->t);
        }
        if (settled)
            oldest = unsettled(s, v, &bits);
    }
    free(v);
    free(s->kept);
    s->kept = NULL;
    s->kept_n = s->kept_cap = 0;
    return 0;
}

/* ---- reads ---------------------------------------------------------------------------------- */

/* Where a read starts drawing and stops: the frames before the one at offset seek_at (or before
 * the first whose time is from_ms or later: a log's time may go back) are walked without drawing;
 * the read stops at the first frame later than stop_ms (< 0: at the end). */
typedef struct track_span {
    size_t seek_at;
    int64_t from_ms, stop_ms;
    double from_s; /* a frame past the times the seek compares (ms -1) may still be in range */
} track_span;

/* The log's frames through track_frame, times relative to its first frame. 0 at the end, or a
 * negative errno (-EBADMSG: err says where), or on_point's value. *drawn: whether a frame was
 * drawn (a failure before cannot have delivered a point). */
static int track_log(carla_reader *r, const track_span *span, recd_track_fn on_point, void *data,
                     bool *drawn, char *err, size_t errlen)
{
    track_state s = {.width = r->width, .keeping = span->seek_at > r->pos, .on_point = on_point,
                     .data = data};
    recd_carla_frame f;
    size_t at;
    bool first = true;
    double start = 0;
    int rc;
    /* Only the events and Position packets are read: a track needs nothing else. */
    while ((rc = carla_reader_next_world(r, &f, &at)) == 1) {
        if (first)
            start = f.elapsed;
        first = false;
        int64_t ms = carla_elapsed_ms(f.elapsed);
        double t = f.elapsed - start;
        if (s.keeping &&
            (at >= span->seek_at || ms >= span->from_ms || (ms < 0 && t >= span->from_s))) {
            s.keeping = false;
            if ((rc = settle_positions(&s)) < 0)
                break;
        }
        if (!s.keeping && span->stop_ms >= 0 && ms > span->stop_ms)
            break;
        *drawn |= !s.keeping;
        rc = track_frame(&s, &f, t);
        if (rc != 0)
            break;
    }
    if (rc == -EBADMSG)
        recd_why(err, errlen, "offset %llu: %s", (unsigned long long)r->err_offset, r->err);
    free(s.a);
    free(s.kept);
    carla_index_free(&s.x);
    return rc == 1 ? 0 : rc;
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
    track_span whole = {0, 0, -1, 0};
    bool drawn = false;
    rc = track_log(&r, &whole, on_point, data, &drawn, err, errlen);
    carla_reader_free(&r);
    return rc;
}

/* Milliseconds of elapsed game time a bound of track time is: the frame times the seek compares
 * are rounded, so the bound is widened by `margin` ms; -1 when out of range. */
static int64_t bound_ms(double start, double s, double margin)
{
    double ms = (start + s) * 1000.0 + margin;
    if (!(ms < CARLA_MAX_MS))
        return -1;
    return ms > 0 ? (int64_t)(margin < 0 ? floor(ms) : ceil(ms)) : 0;
}

int recd_carla__track_range(const recd_format *f, const uint8_t *buf, size_t len,
                            const uint8_t *index, size_t ilen, double from_s, double to_s,
                            recd_track_fn on_point, void *data, char *err, size_t errlen)
{
    carla_reader r;
    double start;
    if (carla_reader_init(&r, buf, len, NULL) < 0)
        return 0; /* the whole read says why */
    if (!carla_reader_peek_elapsed(&r, &start) || carla_elapsed_ms(start) < 0) {
        carla_reader_free(&r);
        return 0;
    }
    track_span span = {0, bound_ms(start, from_s, -2.0), -1, from_s};
    recd_seek_point p;
    int rc = span.from_ms > 0 ? recd_format_seek(f, buf, len, index, ilen, span.from_ms, &p) : -1;
    if (rc == -ENOMEM) {
        carla_reader_free(&r);
        return rc;
    }
    if (rc == 0)
        span.seek_at = (size_t)p.offset;
    else
        span.from_ms = 0; /* no point at or before from: draw from the first frame */
    if (to_s >= 0 && r.times_sorted) /* else a later frame may still be in the range */
        span.stop_ms = bound_ms(start, to_s, 2.0);
    bool drawn = false;
    rc = track_log(&r, &span, on_point, data, &drawn, err, errlen);
    carla_reader_free(&r);
    if (rc < 0 && !drawn && rc != -ENOMEM)
        return 0; /* damage before the range: the whole read reports it as it always has */
    return rc < 0 ? rc : 1; /* on_point may stop the read (> 0) as it stops the whole one */
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
