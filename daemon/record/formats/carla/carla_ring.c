/* SPDX-License-Identifier: MIT */
/* Instant replay for CARLA sessions, their part of the ring (record/session_ring.c). Each frame,
 * its state and the events after it, becomes one ring entry once the next state completes it,
 * at its elapsed time. A writer that writes nowhere checks every state and event on arrival as a
 * part's writer would, so a save never meets one it refuses. The frames that leave the ring
 * move the session's world (carla_live.c): the live actors, light states and weather at the
 * ring's oldest frame. A save writes a CARLA log of its own, as a rotated part is: frames from 1,
 * time from 0, and a first frame that holds the world at that frame (the ring's world moved
 * through the frames before it), so the saved log replays alone. */
#include "carla_state.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/session_ring.h"
#include "record/sessions.h"
#include "support/log.h"

/* An entry: a frame head, its packets (each a packet head and its bytes), then its events (each
 * an event head and its record), host order. The head: u64 id, f64 elapsed, f64 duration,
 * u8 has_duration, u8 width, u16 0, u32 packets, u32 events. */
#define FRAME_HEAD 36
#define EVENTS_AT 32
#define PACKET_HEAD 12 /* u8 kind, u8 raw, u16 0, u32 count, u32 len */
#define EVENT_HEAD 8   /* u8 kind, u8 width, u16 0, u32 len */

typedef struct ring_frame {
    recd_carla_frame f;
    recd_carla_packet *packets;
    const uint8_t *events, *end;
    uint32_t nevents;
} ring_frame;

static uint32_t get32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static double frame_elapsed(const uint8_t *d)
{
    double v;
    memcpy(&v, d + 8, 8);
    return v;
}

/* The entry's time in the ring: its elapsed milliseconds. */
static uint64_t frame_time_ms(const uint8_t *d) { return (uint64_t)(frame_elapsed(d) * 1000.0); }

static int collect_frame(recd_buf *b, const recd_carla_frame *f)
{
    uint8_t h[FRAME_HEAD] = {0};
    uint32_t n = (uint32_t)f->count;
    memcpy(h, &f->id, 8);
    memcpy(h + 8, &f->elapsed, 8);
    memcpy(h + 16, &f->duration, 8);
    h[24] = f->has_duration;
    h[25] = f->width;
    memcpy(h + 28, &n, 4);
    recd_buf_reset(b);
    int rc = recd_buf_append(b, h, sizeof h);
    for (size_t i = 0; rc == 0 && i < f->count; i++) {
        const recd_carla_packet *p = &f->packets[i];
        uint8_t ph[PACKET_HEAD] = {p->kind, p->raw};
        memcpy(ph + 4, &p->count, 4);
        memcpy(ph + 8, &p->len, 4);
        rc = recd_buf_append(b, ph, sizeof ph);
        if (rc == 0 && p->len)
            rc = recd_buf_append(b, p->data, p->len);
    }
    if (rc < 0)
        recd_buf_reset(b);
    return rc;
}

int carla_ring_event(carla_session *cs, const recd_carla_event *e)
{
    recd_buf *b = &cs->collect;
    if (b->len < FRAME_HEAD)
        return -EBADMSG; /* not reached: the checking writer takes no event before a state */
    uint8_t eh[EVENT_HEAD] = {e->kind, e->width};
    memcpy(eh + 4, &e->len, 4);
    size_t at = b->len;
    int rc = recd_buf_append(b, eh, sizeof eh);
    if (rc == 0 && e->len)
        rc = recd_buf_append(b, e->data, e->len);
    if (rc < 0) {
        b->len = at;
        return rc;
    }
    uint32_t n = get32(b->data + EVENTS_AT) + 1;
    memcpy(b->data + EVENTS_AT, &n, 4);
    return 0;
}

/* Unpacks an entry's frame (its packets point into d; free rf->packets) and finds its events. */
static int read_frame(const uint8_t *d, size_t len, ring_frame *rf)
{
    memset(rf, 0, sizeof *rf);
    if (len < FRAME_HEAD)
        return -EINVAL;
    memcpy(&rf->f.id, d, 8);
    memcpy(&rf->f.elapsed, d + 8, 8);
    memcpy(&rf->f.duration, d + 16, 8);
    rf->f.has_duration = d[24];
    rf->f.width = d[25];
    uint32_t n = get32(d + 28);
    rf->nevents = get32(d + EVENTS_AT);
    if (n && !(rf->packets = malloc(n * sizeof *rf->packets)))
        return -ENOMEM;
    size_t at = FRAME_HEAD;
    for (uint32_t i = 0; i < n; i++) {
        if (len - at < PACKET_HEAD || len - at - PACKET_HEAD < get32(d + at + 8)) {
            free(rf->packets);
            rf->packets = NULL;
            return -EINVAL;
        }
        recd_carla_packet *p = &rf->packets[i];
        *p = (recd_carla_packet){.kind = d[at], .raw = d[at + 1], .count = get32(d + at + 4),
                                 .len = get32(d + at + 8), .data = d + at + PACKET_HEAD};
        at += PACKET_HEAD + p->len;
    }
    rf->f.packets = rf->packets;
    rf->f.count = n;
    rf->events = d + at;
    rf->end = d + len;
    return 0;
}

/* The next event of the frame (false at its end). */
static bool next_event(ring_frame *rf, recd_carla_event *e)
{
    size_t left = (size_t)(rf->end - rf->events);
    if (left < EVENT_HEAD || left - EVENT_HEAD < get32(rf->events + 4))
        return false;
    *e = (recd_carla_event){rf->events[0], rf->events[1], get32(rf->events + 4),
                            rf->events + EVENT_HEAD, NULL};
    rf->events += EVENT_HEAD + e->len;
    return true;
}

/* The frame at d moves the world w, as it moves a part's (frame, then its events). s: the
 * session whose ring's world it is: an add is held within its bounds, else left out (logged once,
 * counted as refused state); NULL for the copy one save makes. */
static int apply_frame(carla_live *w, recd_session *s, const uint8_t *d, size_t len)
{
    ring_frame rf;
    int rc = read_frame(d, len, &rf);
    if (rc < 0)
        return rc;
    carla_live_frame(w, s, &rf.f);
    recd_carla_event e;
    while (rc == 0 && next_event(&rf, &e)) {
        bool add = s && e.kind == RECD_CARLA_EVENT_ADD && e.len >= 4;
        const char *limit = add ? session_hold_over(s, actor_cost(e.len)) : NULL;
        if (limit) {
            recd_metrics_state_refused(s->env->metrics, s->ops->state_kind->what);
            if (!w->warned)
                log_warn("session '%s': an actor that left the ring is not kept for a later "
                         "save's first frame: its %zu live actors are at %s",
                         s->key, w->nlive, limit);
            w->warned = true;
            continue;
        }
        if (add)
            session_hold(s, actor_cost(e.len));
        rc = carla_live_event(w, s, &e);
        if (rc < 0 && add)
            session_release(s, actor_cost(e.len));
    }
    free(rf.packets);
    return rc;
}

void carla_ring_dropped(recd_session *s, const session_ring_entry *e)
{
    carla_session *cs = cs_of(s);
    if (apply_frame(&cs->world, s, e->data, e->len) < 0)
        log_warn("session '%s': out of memory keeping what a frame that left the ring changed: a "
                 "later save may not know some of its actors", s->key);
}

/* The collected frame is complete: it goes to the ring. One the ring cannot take (no memory,
 * counted by the ring) moves the world itself, as the ring holds nothing before it. */
static void put_collected(recd_session *s, carla_session *cs)
{
    recd_buf *b = &cs->collect;
    uint32_t samples = 1 + get32(b->data + EVENTS_AT);
    int rc;
    uint8_t *e = session_ring_add(s, frame_time_ms(b->data), b->len, samples, &rc);
    if (e) {
        memcpy(e, b->data, b->len);
    } else {
        if (rc < 0) {
            uint64_t id;
            memcpy(&id, b->data, 8);
            log_warn("session '%s': frame %llu dropped: %s", s->key, (unsigned long long)id,
                     recd_strerror(rc));
            recd_metric_add(s->env->metrics->samples_dropped_total, RECD_M_DROP_UNWRITABLE,
                            samples);
            session_count_drop(s, RECD_M_DROP_UNWRITABLE, samples);
        }
        (void)apply_frame(&cs->world, s, b->data, b->len);
    }
    recd_buf_reset(b);
}

static int scratch_write(void *ctx, const void *data, size_t len)
{
    (void)ctx, (void)data, (void)len;
    return 0;
}

/* The checking writer's frames land here and are forgotten. */
static uint8_t *scratch_reserve(void *ctx, size_t len)
{
    recd_buf *b = ctx;
    if (recd_buf_reserve(b, len) < 0)
        return NULL;
    return b->data;
}

int carla_ring_state(recd_session *s, carla_session *cs, const recd_carla_frame *f, char *err,
                     size_t errlen)
{
    if (cs->ring_any && f->elapsed < cs->ring_elapsed) {
        snprintf(err, errlen, "state: elapsed %g is before the previous state's %g (a ring keeps "
                 "frames in time order)", f->elapsed, cs->ring_elapsed);
        return -EBADMSG;
    }
    if (cs->collect.len)
        put_collected(s, cs);
    int rc;
    if (!cs->w) {
        recd_buf_reset(&cs->scratch);
        cs->sink = (recd_reserve_sink){scratch_write, scratch_reserve, &cs->scratch};
        rc = recd_carla_writer_new(&cs->w, &cs->open, recd_reserve_sink_as_sink(&cs->sink));
        if (rc < 0)
            return rc;
    }
    rc = recd_carla_writer_state(cs->w, f, err, errlen);
    if (rc == 0)
        rc = collect_frame(&cs->collect, f);
    if (rc < 0) { /* its events have no frame: refused until the next state */
        recd_carla_writer_free(cs->w);
        cs->w = NULL;
        return rc;
    }
    cs->ring_any = true;
    cs->ring_elapsed = f->elapsed;
    return 0;
}

void carla_ring_end(recd_session *s, carla_session *cs, bool session_end)
{
    if (cs->collect.len && !session_end)
        put_collected(s, cs);
    recd_buf_free(&cs->collect);
    recd_buf_free(&cs->scratch);
    recd_carla_writer_free(cs->w);
    cs->w = NULL;
}

static int save_write(void *ctx, const void *data, size_t len)
{
    return session_put(ctx, data, len);
}

/* One frame of a save, rebased to its first: the first also holds the world then. */
static int write_frame(recd_carla_writer *w, const uint8_t *d, size_t len, uint64_t id_base,
                       double elapsed_base, carla_live *first, uint64_t *samples,
                       char *err, size_t errlen)
{
    ring_frame rf;
    int rc = read_frame(d, len, &rf);
    if (rc < 0)
        return rc;
    rf.f.id = rf.f.id >= id_base ? rf.f.id - id_base : rf.f.id;
    rf.f.elapsed -= elapsed_base;
    if (first) {
        carla_first_frame ff;
        rc = carla_live_first_frame(first, &rf.f, &ff);
        if (rc == 0)
            rc = recd_carla_writer_state(w, &ff.f, err, errlen);
        carla_first_frame_free(&ff);
        if (rc == 0)
            rc = carla_live_readd(first, w, err, errlen);
    } else {
        rc = recd_carla_writer_state(w, &rf.f, err, errlen);
    }
    recd_carla_event e;
    while (rc == 0 && next_event(&rf, &e))
        rc = recd_carla_writer_event(w, &e, err, errlen);
    *samples += 1 + rf.nevents;
    free(rf.packets);
    return rc;
}

/* Writes the frames from first on (then the collected one, when there is one) as a log named
 * label, its first frame holding the world. The frames written, or a negative errno. */
static int write_save(recd_session *s, const session_ring_entry *first, carla_live *world,
                      const char *label, uint64_t *samples, char *err, size_t errlen)
{
    carla_session *cs = cs_of(s);
    const uint8_t *d0 = first ? first->data : cs->collect.data;
    uint64_t id0;
    memcpy(&id0, d0, 8);
    double elapsed0 = frame_elapsed(d0);
    int rc = session_start_part(s, s->start_epoch_ms + (int64_t)(elapsed0 * 1000.0), 0);
    if (rc < 0)
        return rc;
    if ((rc = session_ring_name_part(s, label)) < 0) {
        session_end_part(s, NULL, 0);
        return rc;
    }
    recd_carla_open o = cs->open;
    o.date = cs->open.date + (int64_t)elapsed0;
    carla_feed_part(s, cs);
    recd_reserve_sink sink = {save_write, carla_frame_room, s};
    recd_carla_writer *w;
    if ((rc = recd_carla_writer_new(&w, &o, recd_reserve_sink_as_sink(&sink))) < 0) {
        session_end_part(s, NULL, 0);
        return rc;
    }
    int frames = 0;
    carla_live *at_first = world;
    for (const session_ring_entry *e = first; e && rc == 0; e = e->next, frames++) {
        uint64_t before = *samples;
        rc = write_frame(w, e->data, e->len, id0 - 1, elapsed0, at_first, samples, err, errlen);
        carla_feed_frame(s, cs);
        session_tally_add(s, *samples - before, false, 0, 0, true, e->time_ms);
        at_first = NULL;
    }
    if (rc == 0 && cs->collect.len) {
        uint64_t before = *samples;
        rc = write_frame(w, cs->collect.data, cs->collect.len, id0 - 1, elapsed0, at_first,
                         samples, err, errlen);
        carla_feed_frame(s, cs);
        session_tally_add(s, *samples - before, false, 0, 0, true, frame_time_ms(cs->collect.data));
        frames++;
    }
    if (rc == 0)
        rc = recd_carla_writer_finish(w, err, errlen);
    carla_feed_frame(s, cs);
    recd_carla_writer_free(w);
    session_end_part(s, NULL, 0);
    session_flush(s);
    return rc < 0 ? rc : frames;
}

int carla_ring_save(recd_session *s, uint32_t last_ms, const char *label, char *why,
                    size_t whylen)
{
    carla_session *cs = cs_of(s);
    uint64_t newest = 0;
    const session_ring_entry *first = session_ring_from(s, UINT64_MAX, &newest);
    bool collecting = cs->w && cs->collect.len;
    if (!first && !collecting) {
        snprintf(why, whylen, "save of session '%s': its ring holds no frame yet", s->key);
        return -EBADMSG;
    }
    uint64_t latest = collecting ? frame_time_ms(cs->collect.data) : newest;
    uint64_t from = latest > last_ms ? latest - last_ms : 0;
    /* The world at the save's first frame: the ring's, moved through the frames before it. */
    carla_live world;
    int rc = carla_live_copy(&world, &cs->world);
    for (; rc == 0 && first && first->time_ms < from; first = first->next)
        rc = apply_frame(&world, NULL, first->data, first->len);
    uint64_t samples = 0;
    char err[200] = "";
    if (rc == 0)
        rc = write_save(s, first, &world, label, &samples, err, sizeof err);
    carla_live_free(&world);
    if (rc < 0) {
        snprintf(why, whylen, "save of session '%s': %s", s->key,
                 rc == -ENAMETOOLONG ? "the label makes the path too long"
                 : err[0]            ? err
                                     : recd_strerror(rc));
        return rc == -ENOMEM ? rc : -EBADMSG;
    }
    log_info("session '%s': instant replay '%s' saved: %d frames (%llu samples), %u ms asked",
             s->key, label, rc, (unsigned long long)samples, last_ms);
    return 0;
}
