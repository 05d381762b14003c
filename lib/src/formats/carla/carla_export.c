/* SPDX-License-Identifier: MIT */
/* A CARLA log as messages: open, then per frame its state and its events, then close. Only logs
 * an import gives back byte for byte are exported: the messages are first written again and
 * compared with the file, so any layout recd cannot reproduce is refused with its offset. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/carla/carla_format.h"
#include "formats/carla/carla_schema.h"
#include "formats/carla/carla_world.h"
#include "formats/carla/carla_writer.h"
#include "base/why.h"

typedef int (*walk_fn)(void *ctx, recd_msg *m, char *err, size_t errlen);

static int deliver_event(walk_fn fn, void *ctx, const recd_carla_packet *p, unsigned width,
                         char *err, size_t errlen)
{
    size_t at = 0;
    for (uint32_t i = 0; i < p->count; i++) {
        size_t n = carla_rec_size(p->kind, width, p->data + at, p->len - at);
        recd_carla_event *e = malloc(sizeof *e);
        if (!e)
            return -ENOMEM;
        *e = (recd_carla_event){.kind = p->kind, .width = (uint8_t)width, .len = (uint32_t)n,
                                .data = p->data + at};
        recd_msg m;
        recd_msg_init(&m, RECD_MSG_EVENT, RECD_MSG_FMT_CARLA);
        m.carla_event = e;
        int rc = fn(ctx, &m, err, errlen);
        if (rc < 0)
            return rc;
        at += n;
    }
    return 0;
}

static bool is_event(const recd_carla_packet *p)
{
    return !p->raw && p->kind >= RECD_CARLA_EVENT_ADD && p->kind <= RECD_CARLA_COLLISION;
}

/* Opens a reader on buf and makes the open message, refusing logs recd does not write. */
static int open_log(carla_reader *r, const uint8_t *buf, size_t len, recd_msg *m, char *err,
                    size_t errlen)
{
    int rc = carla_reader_init(r, buf, len, NULL);
    if (rc < 0) {
        recd_why(err, errlen, "%s", r->err);
        return rc;
    }
    if (r->interim_ids) {
        recd_why(err, errlen, "ids 21-23 are numbered as ue4-dev numbered them from Nov 2023 to "
                 "Mar 2025; recd writes the 0.9.13, 0.9.15 and 0.9.16 tables only");
        return -EBADMSG;
    }
    if (memchr(r->hdr.map, 0, r->hdr.map_len)) {
        recd_why(err, errlen, "the map name holds a NUL byte");
        return -EBADMSG;
    }
    recd_carla_open o = {.date = r->hdr.date, .width = (uint8_t)r->width, .ids = r->ids,
                         .additional_data = r->additional_data};
    o.map = strndup((const char *)r->hdr.map, r->hdr.map_len);
    recd_msg_init(m, RECD_MSG_OPEN, RECD_MSG_FMT_CARLA);
    m->open.carla = o.map ? malloc(sizeof o) : NULL;
    if (!m->open.carla) {
        free(o.map);
        return -ENOMEM;
    }
    *m->open.carla = o;
    if (r->hdr.version != 1) {
        recd_msg_free(m);
        recd_why(err, errlen, "header version %u; CARLA writes 1", r->hdr.version);
        return -EBADMSG;
    }
    return 0;
}

/* Frame f (just read by r) as its state, then its events. */
static int deliver_frame(const carla_reader *r, const recd_carla_frame *f, walk_fn fn, void *ctx,
                         char *err, size_t errlen)
{
    recd_carla_frame *st = malloc(sizeof *st + f->count * sizeof *f->packets);
    if (!st)
        return -ENOMEM;
    *st = *f;
    st->packets = (recd_carla_packet *)(st + 1);
    st->count = 0;
    for (size_t i = 0; i < f->count; i++)
        if (!is_event(&f->packets[i]))
            st->packets[st->count++] = f->packets[i];
    double next;
    double computed = carla_reader_peek_elapsed(r, &next) ? next - f->elapsed : -1.0;
    st->has_duration = f64_to_bits(computed) != f64_to_bits(f->duration);
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_CARLA);
    m.carla_state = st;
    int rc = fn(ctx, &m, err, errlen);
    for (size_t i = 0; rc == 0 && i < f->count; i++)
        if (is_event(&f->packets[i]))
            rc = deliver_event(fn, ctx, &f->packets[i], r->width, err, errlen);
    return rc;
}

static int deliver_close(walk_fn fn, void *ctx, char *err, size_t errlen)
{
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_CLOSE, RECD_MSG_FMT_CARLA);
    return fn(ctx, &m, err, errlen);
}

static int walk(const uint8_t *buf, size_t len, walk_fn fn, void *ctx, char *err, size_t errlen)
{
    carla_reader r;
    recd_msg m;
    int rc = open_log(&r, buf, len, &m, err, errlen);
    if (rc < 0)
        return rc;
    rc = fn(ctx, &m, err, errlen);
    recd_carla_frame f;
    size_t at;
    while (rc == 0 && (rc = carla_reader_next(&r, &f, &at)) == 1)
        rc = deliver_frame(&r, &f, fn, ctx, err, errlen);
    if (rc == -EBADMSG && r.err[0])
        recd_why(err, errlen, "%s: run rectool repair to cut a torn frame", r.err);
    carla_reader_free(&r);
    return rc < 0 ? rc : deliver_close(fn, ctx, err, errlen);
}

/* Pass 1: the messages written again must give back the file. */
typedef struct compare {
    const uint8_t *buf;
    size_t len, at;
    bool differs;
    size_t diff_at;
    carla_writer w;
    bool opened;
} compare;

static int compare_write(void *ctx, const void *data, size_t len)
{
    compare *c = ctx;
    if (c->differs)
        return 0;
    const uint8_t *d = data;
    size_t room = c->len - c->at, n = len < room ? len : room;
    if (n == len && memcmp(c->buf + c->at, d, n) == 0) {
        c->at += len;
        return 0;
    }
    size_t i = 0; /* find the first differing byte (or the end of the file) */
    while (i < n && c->buf[c->at + i] == d[i])
        i++;
    c->differs = true;
    c->diff_at = c->at + i;
    return 0;
}

static int compare_msg(void *ctx, recd_msg *m, char *err, size_t errlen)
{
    compare *c = ctx;
    int rc = 0;
    if (m->type == RECD_MSG_OPEN) {
        rc = carla_writer_init(&c->w, m->open.carla, (recd_sink){compare_write, c});
        c->opened = rc == 0;
    } else if (m->type == RECD_MSG_STATE) {
        rc = carla_writer_state(&c->w, m->carla_state, err, errlen);
    } else if (m->type == RECD_MSG_EVENT) {
        rc = carla_writer_event(&c->w, m->carla_event, err, errlen);
    } else if (m->type == RECD_MSG_CLOSE) {
        rc = carla_writer_finish(&c->w, err, errlen);
    }
    recd_msg_free(m);
    return rc;
}

typedef struct deliver {
    recd_msg_fn on_msg;
    void *ctx;
} deliver;

static int deliver_msg(void *ctx, recd_msg *m, char *err, size_t errlen)
{
    deliver *d = ctx;
    int rc = d->on_msg(d->ctx, m, err, errlen);
    recd_msg_free(m);
    return rc;
}

int recd_carla__export_msgs(const uint8_t *buf, size_t len, recd_msg_fn on_msg, void *ctx,
                            char *err, size_t errlen)
{
    compare c = {.buf = buf, .len = len};
    int rc = walk(buf, len, compare_msg, &c, err, errlen);
    if (c.opened)
        carla_writer_free(&c.w);
    if (rc < 0)
        return rc;
    if (c.differs || c.at != len) {
        recd_why(err, errlen, "offset %zu: this log's layout (packet order, empty packets or a "
                 "count above 65535) is not one recd writes, so an import would not give it back "
                 "byte for byte", c.differs ? c.diff_at : c.at);
        return -EBADMSG;
    }
    deliver d = {on_msg, ctx};
    return walk(buf, len, deliver_msg, &d, err, errlen);
}

/* Whether a cut of rd that reads on from r's position finds a frame to keep (the first frame at
 * or after rd->from is before rd->to): else its error names the log's first and last times, and
 * the whole read knows them. Leaves r where it was. */
static bool cut_has_frame(carla_reader *r, const recd_seek_read *rd)
{
    size_t pos = r->pos, at;
    uint64_t frames = r->frames;
    recd_carla_frame f;
    bool found = false;
    while (carla_reader_next(r, &f, &at) == 1) {
        int64_t t = carla_elapsed_ms(f.elapsed);
        if (t >= rd->from) {
            found = rd->to < 0 || t < rd->to;
            break;
        }
    }
    r->pos = pos;
    r->frames = frames;
    return found;
}

/* From the frame of seek point p (or an earlier one whose time is r->from or later: a log's time
 * may go back) to the first frame at or after r->to when the log's times only go forward (or a
 * cut reads: it stops there itself). A cut first gets the world the frames before it leave, as
 * events (carla_world.h). Unlike the whole export, the log is not written again and compared:
 * layouts recd does not write are not refused. */
int recd_carla__export_from(const uint8_t *buf, size_t len, const recd_seek_point *p,
                            const recd_seek_read *rd, recd_msg_fn on_msg, void *ctx, char *err,
                            size_t errlen)
{
    carla_reader r;
    recd_msg m;
    int rc = open_log(&r, buf, len, &m, err, errlen);
    if (rc < 0)
        return rc;
    carla_world w = {0};
    rc = carla_world_read_to(rd->for_cut ? &w : NULL, &r, (size_t)p->offset, rd->from);
    if (rc == 1 && rd->for_cut && !cut_has_frame(&r, rd))
        rc = 0;
    if (rc != 1) { /* damage, or no frame to cut: the whole read says why */
        recd_msg_free(&m);
        carla_world_free(&w);
        carla_reader_free(&r);
        return rc == -ENOMEM ? rc : RECD_SEEK_READ_WHOLE;
    }
    deliver d = {on_msg, ctx};
    rc = deliver_msg(&d, &m, err, errlen);
    if (rc == 0 && rd->for_cut)
        rc = carla_world_emit_alive(&w, true, on_msg, ctx, err, errlen);
    carla_world_free(&w);
    bool stop_at_to = rd->to >= 0 && (rd->for_cut || r.times_sorted);
    recd_carla_frame f;
    size_t at;
    while (rc == 0 && (rc = carla_reader_next(&r, &f, &at)) == 1) {
        rc = deliver_frame(&r, &f, deliver_msg, &d, err, errlen);
        if (rc == 0 && stop_at_to && carla_elapsed_ms(f.elapsed) >= rd->to)
            break;
    }
    if (rc == -EBADMSG && r.err[0])
        recd_why(err, errlen, "%s: run rectool repair to cut a torn frame", r.err);
    carla_reader_free(&r);
    return rc < 0 ? rc : deliver_close(deliver_msg, &d, err, errlen);
}
