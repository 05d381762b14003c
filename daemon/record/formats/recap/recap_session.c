/* SPDX-License-Identifier: MIT */
/* Recap sessions: the sample path and the format's session descriptor. States and events of one
 * tick are collected and written together once a later tick starts (or the tick has waited a
 * whole flush interval): to the session's part (recap_part.c), or to its instant-replay ring
 * (recap_ring.c) when it has one. Ticks without a time are stamped on arrival (elapsed / 50 ms).
 * Every byte on its way to the file counts toward the buffer limits (the tick being collected,
 * its state included, and the encoder's buffers), and a tick never outgrows the session's limit
 * or what a reader takes in one gzip member. A tick's collection clock stands still while recd
 * holds its sender back. */
#include "recap_session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recap_config.h"
#include "recap_state.h"
#include "recd/formats/recap/recap_slot_mask.h"
#include "recd/formats/recap/recap_state_block.h"
#include "support/log.h"

static int recap_open(recd_session *s, const recd_msg *open, char *why, size_t whylen)
{
    if (!open->open.recap) {
        snprintf(why, whylen, "open of recap session '%s' without its header", s->key);
        return -EBADMSG;
    }
    session_recap *r = calloc(1, sizeof *r);
    if (!r)
        return -ENOMEM;
    int rc = recd_msg_copy(&r->open, open);
    if (rc < 0) {
        free(r);
        return rc;
    }
    const recd_msg_recap_open *ro = r->open.open.recap;
    if (ro->has_start_time)
        s->start_epoch_ms = ro->header.start_ms;
    s->format_data = r;
    return 0;
}

static void recap_free(recd_session *s)
{
    session_recap *r = recap_of(s);
    s->format_data = NULL;
    if (!r)
        return;
    recap_group_clear(s, r);
    recd_recap__state_block_free(r->spare);
    free(r->events);
    recd_buf_free(&r->carry);
    recd_msg_free(&r->open);
    recd_recap_encoder_free(r->enc);
    session_account(s, -(int64_t)r->encoder_held);
    recd_buf_free(&r->member);
    recd_buf_free(&r->restart_header);
    recd_buf_free(&r->restart_member);
    recd_buf_free(&r->ring_base);
    free(r);
}

static bool recap_pending(const recd_session *s)
{
    const session_recap *r = recap_of(s);
    return r->have_group || r->estimate > 0;
}

static uint64_t recap_encoder_bytes(const recd_session *s) { return recap_of(s)->estimate; }

/* A part's members are compressed by the writer: this session's ratio so far is assumed for what
 * is still queued or in the encoder (1:2 before its first member). */
static uint64_t recap_part_size(const recd_session *s)
{
    double pending = (double)(s->part_pending + recap_of(s)->estimate);
    pending *= s->packed_in ? (double)s->packed_out / (double)s->packed_in : 0.5;
    return s->part_written + (uint64_t)pending;
}

/* A tick still being collected is written once no message has joined it for a whole interval,
 * or once it has been open for two: a client that pauses in the middle of a tick for less than an
 * interval keeps its tick whole, and none stays unwritten for long. The returned clock is the one
 * flush.interval counts from for that rule. */
static uint64_t group_since(const session_recap *r, uint64_t interval_ms)
{
    if (!r->have_group)
        return 0;
    uint64_t cap = r->group_since_ms + interval_ms;
    uint64_t since = r->group_last_ms < cap ? r->group_last_ms : cap;
    return since ? since : 1;
}


/* Gives the collected tick to the session's part, or to its ring (instant replay: the tick goes
 * to memory, until a save). */
static void recap_feed_group(recd_session *s)
{
    session_recap *r = recap_of(s);
    if (!r->have_group)
        return;
    if (s->ring)
        recap_ring_put(s, r);
    else
        recap_part_feed(s);
}

/* Keeps m: moved out of the decoder's message when allowed (a Recap state is a few KiB of
 * items), else deep-copied. */
static int keep(recd_msg *dst, const recd_msg *m, recd_msg *movable)
{
    if (movable != m)
        return recd_msg_copy(dst, m);
    recd_msg_move(dst, movable);
    return 0;
}

/* An upper bound of one value's encoded size (recap.md section 5). */
static uint64_t value_bytes(const recd_recap_field *f, const recd_recap_value *v)
{
    switch (f->type) {
    case RECD_RECAP_T_STR:
    case RECD_RECAP_T_TEXT:
    case RECD_RECAP_T_BYTES: return 4 + v->blob.len;
    case RECD_RECAP_T_ITEM: return 8 + v->item.key.len + v->item.data.len;
    case RECD_RECAP_T_LIST: {
        uint64_t n = 2;
        for (size_t r = 0; r < v->list.count; r++)
            for (size_t i = 0; i < f->elem_count; i++)
                n += value_bytes(&f->elem[i], &v->list.values[r * f->elem_count + i]);
        return n;
    }
    default: return 8;
    }
}

/* An upper bound of a checked event's encoded size. */
static uint64_t event_bytes(const recd_recap_event *ev)
{
    const recd_recap_tag_info *info = recd_recap_tag_info_get(ev->tag);
    uint64_t n = 1;
    for (size_t i = 0; info && i < ev->field_count; i++)
        n += value_bytes(&info->fields[i], &ev->fields[i]);
    return n;
}

/* An upper bound of a state's encoded size: its fixed fields and its items (up to 47 of 64 KiB),
 * 8 bytes per slot and the lengths. librecd counted the items' bytes when it made the state. */
static uint64_t state_bytes(const recd_msg_recap_state *m)
{
    return 64 + 8 * (RECD_RECAP_EQUIPMENT_SLOTS + RECD_RECAP_INVENTORY_SLOTS) +
           recd_recap__state_extent(m)->item_bytes;
}

/* A tick is written whole, so it must fit the session's limit: paused for its own bytes, a
 * connection could not send the rest of it. */
static uint64_t tick_most_bytes(const recd_session *s)
{
    uint64_t most = s->env->cfg->limits.session_buffer;
    return most < RECAP_TICK_MAX_BYTES ? most : RECAP_TICK_MAX_BYTES;
}

/* The tick's state, which counts toward the limits until it is given to the encoder. */
static int add_state(recd_session *s, session_input *in, const recd_msg *m, recd_msg *movable,
                     char *why, size_t whylen)
{
    session_recap *r = recap_of(s);
    uint64_t old = 0;
    if (r->state.type == RECD_MSG_STATE) {
        if (!r->group_stamped)
            return session_refuse(in, RECD_M_SCHEMA, why, whylen,
                                  "session '%s': a second state for tick %llu", s->key,
                                  (unsigned long long)r->group_tick);
        old = state_bytes(r->state.recap_state); /* stamped: the latest state wins */
    }
    uint64_t bytes = state_bytes(m->recap_state);
    uint64_t most = tick_most_bytes(s);
    if (r->group_bytes - old + bytes > most)
        return session_refuse(in, RECD_M_TOO_LARGE, why, whylen,
                              "session '%s': the state for tick %llu holds %llu bytes of items, and "
                              "the tick would hold more than %llu bytes (limits.session_buffer, and "
                              "at most %u MiB, what a Recap reader takes at once): send smaller "
                              "item data",
                              s->key, (unsigned long long)r->group_tick, (unsigned long long)bytes,
                              (unsigned long long)most, (unsigned)(RECAP_TICK_MAX_BYTES >> 20));
    if (old) {
        recd_msg_free(&r->state);
        recap_group_account(s, r, -(int64_t)old);
    }
    int rc = keep(&r->state, m, movable);
    if (rc == 0)
        recap_group_account(s, r, (int64_t)bytes);
    return rc;
}

/* output.part_manifest: a message the tick took (its part is known once the tick is fed); one
 * that replaced the tick's state adds its sequence number but no sample. */
static void group_tally(session_recap *r, const session_input *in, bool replaced)
{
    r->group_samples += !replaced;
    if (!in->has_seq)
        return;
    if (!r->group_has_seq)
        r->group_first_seq = in->seq;
    r->group_last_seq = in->seq;
    r->group_has_seq = true;
}

static int add_to_group(recd_session *s, session_input *in, const recd_msg *m, recd_msg *movable,
                        char *why, size_t whylen)
{
    session_recap *r = recap_of(s);
    if (m->type == RECD_MSG_STATE) {
        bool replaces = r->state.type == RECD_MSG_STATE;
        int rc = add_state(s, in, m, movable, why, whylen);
        if (rc == 0)
            group_tally(r, in, replaces);
        return rc;
    }
    uint64_t bytes = event_bytes(&m->recap_event->event);
    uint64_t most = tick_most_bytes(s);
    if (r->group_bytes + bytes > most)
        return session_refuse(in, RECD_M_TOO_LARGE, why, whylen,
                              "session '%s': tick %llu would hold more than %llu bytes of events "
                              "and state (limits.session_buffer, and at most %u MiB, what a Recap reader "
                              "takes at once): spread them over more ticks",
                              s->key, (unsigned long long)r->group_tick, (unsigned long long)most,
                              (unsigned)(RECAP_TICK_MAX_BYTES >> 20));
    if (r->nevents == r->capevents) {
        size_t cap = r->capevents ? r->capevents * 2 : 4;
        recd_msg *e = realloc(r->events, cap * sizeof *e);
        if (!e)
            return -ENOMEM;
        r->events = e;
        r->capevents = cap;
    }
    int rc = keep(&r->events[r->nevents], m, movable);
    if (rc == 0) {
        r->nevents++;
        recap_group_account(s, r, (int64_t)bytes);
        group_tally(r, in, false);
    }
    return rc;
}

/* A session spans fewer ticks than a part's u32 frame count holds (about 6.8 years at 50 ms):
 * the encoder refuses a tick further from the part's first, and a part never starts before the
 * session's first tick, so this bound, checked on arrival, keeps every tick writable. */
#define RECAP_TICK_SPAN_MAX ((uint64_t)UINT32_MAX - 2)

/* Whether the tick being collected, or what came before it, gives an event a state to build on:
 * the first frame of a part is a full state, so an event before the session's first state could
 * never be written. */
static bool has_base_state(const recd_session *s, const session_recap *r)
{
    /* A ring session that kept a tick kept a state (recap_ring_put()). */
    return r->enc || r->carry.len || (r->have_group && r->state.type == RECD_MSG_STATE) ||
           (s->ring && r->started);
}

/* What the encoder would refuse once the tick is fed, refused now while the sender can be told
 * (a tick given to the encoder later is past any reply): a tick too far from the session's first,
 * an event before the first state, an event newer than the session's format version. */
static int check_writable(recd_session *s, session_input *in, const recd_msg *m, uint64_t tick,
                          char *why, size_t whylen)
{
    session_recap *r = recap_of(s);
    uint64_t first = r->started ? r->first_tick : r->have_group ? r->group_tick : tick;
    if (tick - first > RECAP_TICK_SPAN_MAX) {
        s->refused++;
        return session_refuse(in, RECD_M_TICK_RANGE, why, whylen,
                              "session '%s': tick %llu is %llu ticks after the session's first "
                              "tick %llu; a Recap session spans at most %llu ticks",
                              s->key, (unsigned long long)tick, (unsigned long long)(tick - first),
                              (unsigned long long)first, (unsigned long long)RECAP_TICK_SPAN_MAX);
    }
    if (m->type == RECD_MSG_STATE)
        return 0;
    if (!has_base_state(s, r)) {
        s->refused++;
        return session_refuse(in, RECD_M_NO_STATE, why, whylen,
                              "session '%s': event for tick %llu before the session's first state "
                              "(a Recap file starts with a full state: send the first tick's state "
                              "before its events)",
                              s->key, (unsigned long long)tick);
    }
    const recd_recap_tag_info *ti = recd_recap_tag_info_get(m->recap_event->event.tag);
    uint8_t version = r->open.open.recap->header.version;
    if (ti && ti->min_version > (version ? version : RECD_RECAP_VERSION)) {
        s->refused++;
        return session_refuse(in, RECD_M_SCHEMA, why, whylen,
                              "session '%s': event %s needs Recap format version %u, and the "
                              "session's header says version %u",
                              s->key, ti->name, (unsigned)ti->min_version, (unsigned)version);
    }
    return 0;
}

static int recap_msg(recd_session *s, session_input *in, const recd_msg *m,
                     const recd_wire_meta *meta, uint64_t now_ms, char *why, size_t whylen)
{
    session_recap *r = recap_of(s);
    bool has_time = meta->has_time;
    bool is_state = m->type == RECD_MSG_STATE;
    if (!is_state) {
        int rc = recd_recap_event_check(&m->recap_event->event);
        if (rc < 0)
            return session_refuse(in, RECD_M_SCHEMA, why, whylen,
                                  "event for session '%s': invalid action: %s", s->key,
                                  recd_strerror(rc));
    }
    uint64_t tick = is_state ? m->recap_state->tick : m->recap_event->tick;
    if (!has_time)
        tick = (now_ms - s->start_mono_ms) / RECD_RECAP_TICK_MS;
    uint64_t floor = r->have_group ? r->group_tick : r->started ? r->last_fed + 1 : 0;
    bool late = false;
    if (tick < floor) {
        /* The tick just written may still get a message: the client paused in the middle of it
         * for longer than the flush rule waits. It is the client's data and in order, so it is
         * kept, in the next tick (50 ms late), rather than refused. */
        late = has_time && r->started && tick == r->last_fed && (!r->have_group || r->group_late);
        if (has_time && !late)
            return session_refuse(in, RECD_M_SCHEMA, why, whylen,
                                  "session '%s': tick %llu comes after tick %llu (ticks only move "
                                  "forward)",
                                  s->key, (unsigned long long)tick,
                                  (unsigned long long)(floor ? floor - 1 : 0));
        if (late && !r->have_group)
            log_warn("session '%s': tick %llu went on after it was written (the client paused "
                     "in it for over flush.interval): the rest is kept in tick %llu; send a tick's "
                     "messages together, or raise flush.interval",
                     s->key, (unsigned long long)tick, (unsigned long long)floor);
        tick = floor; /* a stamped sample just after its tick was written */
    }
    int rc = check_writable(s, in, m, tick, why, whylen);
    if (rc < 0)
        return rc;
    if (r->have_group && tick != r->group_tick)
        recap_feed_group(s);
    if (!r->have_group) {
        r->have_group = true;
        r->inputs_before_group = s->inputs - 1; /* this sample is counted already */
        r->group_tick = tick;
        r->group_stamped = !has_time || late; /* a later state for this tick supersedes */
        r->group_late = late;
        r->group_since_ms = now_ms;
    }
    rc = add_to_group(s, in, m, meta->movable, why, whylen);
    if (rc < 0)
        return rc;
    r->ring_save_due |= in->save_now && s->ring; /* once the tick is complete (recap_ring.c) */
    r->group_last_ms = now_ms;
    session_note_pending(s, now_ms);
    in->accepted = true;
    return 0;
}

/* Whether recd itself holds the session's sender back now (its input paused, TCP and Unix, as
 * session_dispatch.c decides): then a tick still being collected must not be written by the
 * clock, or the rest of it, sent once the sender is let go, would be split off into the next
 * tick. The clock stops only while writes under way will let the sender go on, so a stopped
 * clock can never hold recd still:
 * - its writes fail (they are retried; the tick would not reach the file sooner anyway);
 * - the session is over limits.session_buffer: a tick holds at most that (tick_most_bytes()),
 *   so the excess is queued or encoded output, which the flush hands to the writer;
 * - the process is over limits.process_buffer while the ticks being collected in every session
 *   take no more than that together; when they alone fill it, no write would ever release
 *   them, so the clock runs and they are written (the rest of such a tick, sent later, is kept
 *   in the next tick, as for a client that pauses mid-tick). */
static bool group_clock_held(const recd_session *s)
{
    const session_env *env = s->env;
    const recd_config *cfg = env->cfg;
    if (s->write_failing || s->buffered > cfg->limits.session_buffer)
        return true;
    return env->buffered > cfg->limits.process_buffer &&
           env->collecting <= cfg->limits.process_buffer;
}

static void recap_flush(recd_session *s, uint64_t now_ms)
{
    session_recap *r = recap_of(s);
    /* A tick still being collected is written by the rule of group_since(), so the rest of it
     * (sent in the same burst) is not split off by a timer; its clock stands still while recd
     * holds the sender back, and starts again from the first check after it lets go, so the
     * sender has a whole interval to send the rest. */
    uint64_t interval = s->env->cfg->flush.interval_ms;
    if (r->have_group && now_ms - group_since(r, interval) >= interval) {
        bool held = group_clock_held(s);
        if (held || r->group_held) {
            r->group_held = held;
            r->group_since_ms = r->group_last_ms = now_ms;
        } else {
            recap_feed_group(s);
        }
    }
    recap_take_member(s);
}

/* A tick still being collected keeps the clock of its first message. */
static uint64_t recap_pending_since(const recd_session *s)
{
    return group_since(recap_of(s), s->env->cfg->flush.interval_ms);
}

static int recap_flush_message(recd_session *s, const recd_msg *m, char *why, size_t whylen)
{
    session_recap *r = recap_of(s);
    recap_feed_group(s);
    if (!m->flush.has_end_tick || !r->started)
        return 0;
    if (m->flush.end_tick <= r->last_fed) {
        snprintf(why, whylen, "session '%s': flush.end_tick %llu must be after the last tick %llu",
                 s->key, (unsigned long long)m->flush.end_tick, (unsigned long long)r->last_fed);
        return -EBADMSG;
    }
    uint64_t last = m->flush.end_tick - 1;
    if (last > r->last_fed && r->enc) {
        int rc = recap_part_skip_to(s, last);
        if (rc < 0) {
            snprintf(why, whylen, "session '%s': flush.end_tick %llu: %s", s->key,
                     (unsigned long long)m->flush.end_tick, recd_strerror(rc));
            return -EBADMSG;
        }
    }
    r->last_fed = last;
    return 0;
}

static void recap_close_message(recd_session *s, const recd_msg *m)
{
    session_recap *r = recap_of(s);
    if (!m->close.has_end_time)
        return;
    r->has_close_end = true;
    r->close_end_ms = m->close.end_time_ms;
}

static void recap_end_part(recd_session *s, bool session_end)
{
    recap_feed_group(s);
    recap_close_part(s, session_end);
}

/* The last tick's state block, for the decoder to read the next state into (one block per live
 * session instead of a malloc and free a tick: a block of about 2 KiB is too large for malloc's
 * per-thread cache). */
static void *recap_lend_state(recd_session *s)
{
    session_recap *r = recap_of(s);
    recd_msg_recap_state *b = r->spare;
    r->spare = NULL;
    return b;
}

const session_format recap_session_format = {
    .formats = {RECD_MSG_FMT_RECAP},
    .events = true,
    .open = recap_open,
    .sample = recap_msg,
    .flush_message = recap_flush_message,
    .close_message = recap_close_message,
    .flush = recap_flush,
    .pending_since = recap_pending_since,
    .encoder_bytes = recap_encoder_bytes,
    .part_size = recap_part_size,
    .pending = recap_pending,
    .idle = recap_part_idle,
    .lend_state = recap_lend_state,
    .end_part = recap_end_part,
    .free = recap_free,
    .files_what = "Recap files (.recap)",
    .config_rows = recap_config_rows,
    .config_row_count = RECAP_CONFIG_ROWS,
    .options_offset = RECAP_OPTIONS_OFFSET,
    .options_size = sizeof(recap_config),
    .ring_save = recap_ring_save,
    .ring_dropped = recap_ring_dropped,
};
