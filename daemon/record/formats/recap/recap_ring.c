/* SPDX-License-Identifier: MIT */
/* Instant replay for Recap sessions, their part of the ring (record/session_ring.c). Each
 * complete tick becomes one ring entry: a u32 (host order) with the length of its state frame,
 * then its state (when it had one) and its events as binary wire frames, as they were taken. A
 * tick that leaves the ring with a state leaves it behind (ring_base), so a save always knows the
 * state of its first tick: a save writes a Recap file of its own, its header starting at that
 * tick and its first member starting with that tick's FULL_STATE (the encoder writes one for
 * the first tick of every file), then the ticks after it as the encoder deltas them. */
#include "recap_state.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/session_ring.h"
#include "record/sessions.h"
#include "support/log.h"

static uint32_t state_len(const uint8_t *data)
{
    uint32_t n;
    memcpy(&n, data, 4);
    return n;
}

/* The tick's state and events as one entry's bytes, appended to b. */
static int encode_tick(const session_recap *r, recd_buf *b)
{
    uint32_t n = 0;
    int rc = recd_buf_append(b, &n, 4);
    if (rc == 0 && r->state.type == RECD_MSG_STATE)
        rc = recd_wire_encode(&r->state, RECD_WIRE_BINARY, SIZE_MAX / 2, b);
    n = (uint32_t)(b->len - 4);
    for (size_t i = 0; rc == 0 && i < r->nevents; i++)
        rc = recd_wire_encode(&r->events[i], RECD_WIRE_BINARY, SIZE_MAX / 2, b);
    if (rc == 0)
        memcpy(b->data, &n, 4);
    return rc;
}

void recap_ring_put(recd_session *s, session_recap *r)
{
    uint64_t tick = r->group_tick;
    if (!r->started && r->state.type != RECD_MSG_STATE) {
        log_warn("session '%s': tick %llu dropped: the first tick of a recording needs a state",
                 s->key, (unsigned long long)tick);
        recap_drop_group(s, r);
        return;
    }
    recd_buf b = {0};
    int rc = encode_tick(r, &b);
    uint8_t *e = NULL;
    if (rc == 0)
        e = session_ring_add(s, tick * RECD_RECAP_TICK_MS, b.len, (uint32_t)r->group_samples, &rc);
    if (e) {
        memcpy(e, b.data, b.len);
        if (!r->started) {
            r->started = true;
            r->first_tick = tick;
        }
    } else if (rc < 0) {
        log_warn("session '%s': tick %llu dropped: %s", s->key, (unsigned long long)tick,
                 recd_strerror(rc));
        recd_metric_add(s->env->metrics->samples_dropped_total, RECD_M_DROP_UNWRITABLE,
                        r->group_samples);
        session_count_drop(s, RECD_M_DROP_UNWRITABLE, r->group_samples);
    } /* else the ring dropped it and counted it */
    recd_buf_free(&b);
    r->last_fed = tick;
    recap_group_clear(s, r);
    if (r->ring_save_due) { /* a sample of this tick asked for a save: the tick is in it */
        r->ring_save_due = false;
        session_ring_save_flagged(s);
    }
}

void recap_ring_dropped(recd_session *s, const session_ring_entry *e)
{
    session_recap *r = recap_of(s);
    uint32_t n = state_len(e->data);
    if (!n)
        return;
    recd_buf_reset(&r->ring_base);
    if (recd_buf_append(&r->ring_base, e->data + 4, n) < 0) {
        recd_buf_free(&r->ring_base);
        log_warn("session '%s': out of memory keeping the state of the ring's oldest tick: a "
                 "save starts at the first tick that has a state of its own", s->key);
    }
}

/* One entry (or the kept base state) unpacked: its state, when it has one, and its events. */
typedef struct tick_msgs {
    recd_msg state;
    recd_msg *events;
    size_t n, cap;
} tick_msgs;

static recd_msg_format any_recap(void *ctx, const char *key, size_t len, void **handle)
{
    (void)ctx, (void)key, (void)len, (void)handle;
    return RECD_MSG_FMT_RECAP;
}

static int take_msg(void *ctx, const recd_msg *m, const recd_wire_meta *meta, char *err,
                    size_t errlen)
{
    (void)m, (void)err, (void)errlen;
    tick_msgs *t = ctx;
    if (meta->movable->type == RECD_MSG_STATE) {
        recd_msg_move(&t->state, meta->movable);
        return 0;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 8;
        recd_msg *ev = realloc(t->events, cap * sizeof *ev);
        if (!ev)
            return -ENOMEM;
        t->events = ev;
        t->cap = cap;
    }
    recd_msg_move(&t->events[t->n++], meta->movable);
    return 0;
}

static void tick_msgs_free(tick_msgs *t)
{
    recd_msg_free(&t->state);
    for (size_t i = 0; i < t->n; i++)
        recd_msg_free(&t->events[i]);
    free(t->events);
    memset(t, 0, sizeof *t);
}

static int unpack(const uint8_t *data, size_t len, tick_msgs *t)
{
    memset(t, 0, sizeof *t);
    recd_msg_init(&t->state, RECD_MSG_NONE, RECD_MSG_FMT_RECAP);
    if (!len)
        return 0;
    recd_wire_decoder_config dc = {.encoding = RECD_WIRE_BINARY,
                                   .max_frame = len,
                                   .format_of = any_recap,
                                   .on_msg = take_msg,
                                   .ctx = t};
    char err[256];
    int rc = recd_wire_decode_datagram(&dc, data, len, err, sizeof err);
    if (rc < 0)
        tick_msgs_free(t);
    return rc < 0 ? rc : 0;
}

/* Feeds one ring entry to the save's encoder; base: the state when the entry has none. */
static int feed_entry(recd_session *s, const session_ring_entry *e, const recd_recap_state *base)
{
    session_recap *r = recap_of(s);
    tick_msgs t;
    int rc = unpack(e->data + 4, e->len - 4, &t);
    if (rc < 0)
        return rc;
    recd_recap_event evbuf[8];
    recd_recap_event *evs = t.n <= 8 ? evbuf : malloc(t.n * sizeof *evs);
    if (!evs) {
        tick_msgs_free(&t);
        return -ENOMEM;
    }
    for (size_t i = 0; i < t.n; i++)
        evs[i] = t.events[i].recap_event->event;
    const recd_recap_state *st = t.state.type == RECD_MSG_STATE ? &t.state.recap_state->state : base;
    rc = recd_recap_encoder_tick(r->enc, e->time_ms / RECD_RECAP_TICK_MS, st, evs, t.n);
    if (evs != evbuf)
        free(evs);
    tick_msgs_free(&t);
    if (rc == 0 && recd_recap_encoder_pending(r->enc) > RECAP_MEMBER_SOFT_BYTES)
        recap_take_member(s);
    return rc;
}

/* The first entry of the save and the state it starts from: its own, else the one the ticks
 * before it left (unpacked into base), else the save begins at the first tick with a state. */
static const session_ring_entry *first_with_state(recd_session *s, const session_ring_entry *e,
                                                  tick_msgs *base)
{
    session_recap *r = recap_of(s);
    memset(base, 0, sizeof *base);
    recd_msg_init(&base->state, RECD_MSG_NONE, RECD_MSG_FMT_RECAP);
    if (state_len(e->data) || (r->ring_base.len && unpack(r->ring_base.data, r->ring_base.len, base) == 0 &&
                               base->state.type == RECD_MSG_STATE))
        return e;
    while (e && !state_len(e->data))
        e = e->next;
    return e;
}

/* Writes the entries from first on into a new part named label. The ticks written, or a
 * negative errno. */
static int write_ticks(recd_session *s, const session_ring_entry *first,
                       const recd_recap_state *base, const char *label, uint64_t *samples)
{
    session_recap *r = recap_of(s);
    uint64_t tick0 = first->time_ms / RECD_RECAP_TICK_MS;
    int64_t start = s->start_epoch_ms + (int64_t)((tick0 - r->first_tick) * RECD_RECAP_TICK_MS);
    int rc = recap_start_part_at(s, tick0, start);
    if (rc < 0)
        return rc;
    if ((rc = session_ring_name_part(s, label)) < 0) {
        recap_close_part(s, true);
        return rc;
    }
    int ticks = 0;
    for (const session_ring_entry *e = first; e && rc == 0; e = e->next, ticks++) {
        rc = feed_entry(s, e, e == first ? base : NULL);
        *samples += e->samples;
        session_tally_add(s, e->samples, false, 0, 0, true, e->time_ms);
    }
    recap_close_part(s, true);
    session_flush(s);
    return rc < 0 ? rc : ticks;
}

int recap_ring_save(recd_session *s, uint32_t last_ms, const char *label, char *why,
                    size_t whylen)
{
    session_recap *r = recap_of(s);
    if (r->have_group) /* the tick being collected, as a flush message would */
        recap_ring_put(s, r);
    uint64_t newest;
    const session_ring_entry *e = session_ring_from(s, last_ms, &newest);
    tick_msgs base;
    if (e)
        e = first_with_state(s, e, &base);
    if (!e) {
        snprintf(why, whylen, "save of session '%s': its ring holds no tick with a state yet",
                 s->key);
        return -EBADMSG;
    }
    uint64_t samples = 0;
    int rc = write_ticks(s, e, base.state.type == RECD_MSG_STATE ? &base.state.recap_state->state : NULL,
                         label, &samples);
    tick_msgs_free(&base);
    if (rc < 0) {
        snprintf(why, whylen, "save of session '%s': %s", s->key,
                 rc == -ENAMETOOLONG ? "the label makes the path too long" : recd_strerror(rc));
        return rc == -ENOMEM ? rc : -EBADMSG;
    }
    log_info("session '%s': instant replay '%s' saved: %d ticks (%llu samples), %llu ms (%u ms "
             "asked)", s->key, label, rc, (unsigned long long)samples,
             (unsigned long long)(newest - e->time_ms), last_ms);
    return 0;
}
