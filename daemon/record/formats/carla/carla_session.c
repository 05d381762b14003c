/* SPDX-License-Identifier: MIT */
/* CARLA sessions: each state is a simulation frame and each event an actor add / delete / parent
 * or a collision of it, written through librecd's CARLA writer (recd/carla.h) into the session's
 * batch, each frame in place (recd/reserve_sink.h). The writer holds one frame back
 * until the next state, so its duration is known; the part's last frame, written when the part
 * ends, keeps -1 as CARLA's own logs do. Every part is a log CARLA replays on its own: its frames
 * count from 1 and its time from 0, and a part after the first starts with an EventAdd for every
 * actor alive at that point, at its last position (its add record, moved by every Position
 * record since). */
#include "carla_session.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "recd/carla.h"
#include "recd/reserve_sink.h"
#include "support/id_index.h"
#include "support/config_schema.h"
#include "support/log.h"

typedef struct live_actor {
    uint32_t id;
    uint8_t width;
    uint32_t len;
    uint8_t *record; /* its EventAdd record */
} live_actor;

typedef struct carla_session {
    recd_carla_open open;
    recd_carla_writer *w; /* the current part's; NULL between parts */
    recd_reserve_sink sink; /* the writer's: into the session's batch, frames in place */
    uint64_t frame_base;  /* subtracted from frame ids in this part */
    double elapsed_base;  /* and from elapsed times */
    bool replay_live;     /* this part begins with the live actors' EventAdds */
    live_actor *live;
    size_t nlive, cap;
    /* Where each live actor is in live. An episode adds and deletes actors by the thousand: a
     * scan per event would be quadratic in the live count. */
    id_index index;
    uint64_t frame_held; /* the writer's held frame, as held state (sync_frame()) */
} carla_session;

static carla_session *cs_of(recd_session *s) { return s->format_data; }
static void sync_frame(recd_session *s, carla_session *cs);

/* What a live actor costs: its record, its entry, and about as much again for the allocator's
 * header and its index slot. */
static uint64_t actor_cost(uint32_t len) { return (uint64_t)len + sizeof(live_actor) + 32; }

static int sink_write(void *ctx, const void *data, size_t len)
{
    return session_put(ctx, data, len);
}

/* A frame is written straight into the session's batch: one copy from the writer's held frame. */
static uint8_t *sink_reserve(void *ctx, size_t len) { return session_reserve(ctx, len); }

static int carla_open(recd_session *s, const recd_msg *m, char *why, size_t whylen)
{
    if (!m->open.carla) {
        snprintf(why, whylen, "open of session '%s': format carla needs its carla object", s->key);
        return -EBADMSG;
    }
    carla_session *cs = calloc(1, sizeof *cs);
    if (!cs)
        return -ENOMEM;
    cs->open = *m->open.carla;
    cs->open.map = strdup(m->open.carla->map ? m->open.carla->map : "");
    if (!cs->open.map) {
        free(cs);
        return -ENOMEM;
    }
    s->format_data = cs;
    return 0;
}

static void end_part(recd_session *s, bool session_end)
{
    carla_session *cs = cs_of(s);
    if (cs && cs->w) {
        char err[200];
        if (s->part && recd_carla_writer_finish(cs->w, err, sizeof err) < 0)
            log_err("session '%s': the last frame of part %u is lost: %s", s->key, s->part_no, err);
        recd_carla_writer_free(cs->w);
        cs->w = NULL;
        sync_frame(s, cs);
        cs->replay_live = !session_end;
    }
    if (s->part)
        session_end_part(s, NULL, 0);
}

static int start_part(recd_session *s, carla_session *cs, const recd_carla_frame *f)
{
    bool first = s->part_no == 0;
    int64_t start = s->start_epoch_ms + (first ? 0 : (int64_t)(f->elapsed * 1000.0));
    int rc = session_start_part(s, start, 0);
    if (rc < 0)
        return rc;
    recd_carla_open o = cs->open;
    o.date = cs->open.date + (first ? 0 : (int64_t)f->elapsed);
    cs->sink = (recd_reserve_sink){sink_write, sink_reserve, s};
    if ((rc = recd_carla_writer_new(&cs->w, &o, recd_reserve_sink_as_sink(&cs->sink))) < 0)
        return rc;
    cs->frame_base = first ? 0 : f->id - 1;
    cs->elapsed_base = first ? 0.0 : f->elapsed;
    return 0;
}

static live_actor *find_live(carla_session *cs, uint32_t id)
{
    int64_t k = id_index_find(&cs->index, id);
    return k < 0 ? NULL : &cs->live[k];
}

/* Drops the live actor a (freeing its record); the last one takes its place. */
static void drop_live(recd_session *s, carla_session *cs, live_actor *a)
{
    size_t k = (size_t)(a - cs->live), last = cs->nlive - 1;
    id_index_del(&cs->index, a->id);
    session_release(s, actor_cost(a->len));
    free(a->record);
    if (k != last) {
        *a = cs->live[last];
        (void)id_index_put(&cs->index, a->id, (uint32_t)k); /* replaces: needs no memory */
    }
    cs->nlive--;
}

/* Keeps the set of live actors: an add stores its record (its cost held already), a delete
 * drops it. */
static int track_actor(recd_session *s, carla_session *cs, const recd_carla_event *e)
{
    if (e->len < 4)
        return 0;
    uint32_t id = (uint32_t)e->data[0] | (uint32_t)e->data[1] << 8 | (uint32_t)e->data[2] << 16 |
                  (uint32_t)e->data[3] << 24;
    live_actor *a = find_live(cs, id);
    if (e->kind == RECD_CARLA_EVENT_DEL) {
        if (a)
            drop_live(s, cs, a);
        return 0;
    }
    if (e->kind != RECD_CARLA_EVENT_ADD)
        return 0;
    uint8_t *copy = malloc(e->len);
    if (!copy)
        return -ENOMEM;
    memcpy(copy, e->data, e->len);
    if (!a) {
        if (cs->nlive == cs->cap) {
            size_t cap = cs->cap ? cs->cap * 2 : 32;
            live_actor *n = realloc(cs->live, cap * sizeof *n);
            if (!n) {
                free(copy);
                return -ENOMEM;
            }
            cs->live = n;
            cs->cap = cap;
        }
        if (cs->nlive >= UINT32_MAX || id_index_put(&cs->index, id, (uint32_t)cs->nlive) < 0) {
            free(copy);
            return -ENOMEM;
        }
        a = &cs->live[cs->nlive++];
    } else {
        session_release(s, actor_cost(a->len));
        free(a->record);
    }
    *a = (live_actor){id, e->width, e->len, copy};
    return 0;
}

/* A frame's Position records move the live actors: each keeps its last location and rotation in
 * its EventAdd record (id u32, type u8, location, rotation: docs/formats/carla.md), so a later
 * part re-adds it where it was, not where it was first added. One index lookup per record. */
static void track_positions(carla_session *cs, const recd_carla_frame *f)
{
    size_t vecs = 6u * f->width, rec = 4 + vecs;
    for (size_t p = 0; p < f->count; p++) {
        const recd_carla_packet *pk = &f->packets[p];
        if (pk->raw || pk->kind != RECD_CARLA_POSITION || (size_t)pk->count * rec > pk->len)
            continue;
        for (uint32_t i = 0; i < pk->count; i++) {
            const uint8_t *r = pk->data + (size_t)i * rec;
            uint32_t id = (uint32_t)r[0] | (uint32_t)r[1] << 8 | (uint32_t)r[2] << 16 |
                          (uint32_t)r[3] << 24;
            live_actor *a = find_live(cs, id);
            if (a && a->width == f->width && a->len >= 5 + vecs)
                memcpy(a->record + 5, r + 4, vecs);
        }
    }
}

/* The live-actor table at its bound (recd_state_refusals_total). */
static const recd_m_state_kind carla_actors = {
    .what = "carla_actors",
    .bound = "limits.session_state or the process's share",
    .held = "CARLA live actors",
};

/* An event takes room in the frame the writer holds, and an add in the live table as well: the
 * room is checked before it is written, refused at the session's or the process's bound (every
 * later part would start with the live actors). The add's room in the table is held here. */
static int hold_event(recd_session *s, session_input *in, const recd_carla_event *e, bool add,
                      char *why, size_t whylen)
{
    const carla_session *cs = cs_of(s);
    const char *limit = session_hold_over(s, e->len + (add ? actor_cost(e->len) : 0));
    if (!limit) {
        if (add)
            session_hold(s, actor_cost(e->len));
        return 0;
    }
    recd_metrics_state_refused(s->env->metrics, carla_actors.what);
    log_warn("session '%s': an event of %u bytes refused: its %zu live actors and the frame held "
             "back hold %llu bytes (%s)",
             s->key, e->len, cs->nlive, (unsigned long long)s->held, limit);
    return session_refuse(in, RECD_M_TOO_LARGE, why, whylen,
                          "event for session '%s': its %zu live actors and the frame held back "
                          "hold %llu bytes, and this event would take them past %s: delete "
                          "actors, send smaller ones, or send a state between events",
                          s->key, cs->nlive, (unsigned long long)s->held, limit);
}

/* The frame the writer holds back is held state until the next state writes it. */
static void sync_frame(recd_session *s, carla_session *cs)
{
    uint64_t now = cs->w ? recd_carla_writer_held_bytes(cs->w) : 0;
    if (now > cs->frame_held)
        session_hold(s, now - cs->frame_held);
    else
        session_release(s, cs->frame_held - now);
    cs->frame_held = now;
}

static int carla_sample(recd_session *s, session_input *in, const recd_msg *m,
                        const recd_wire_meta *meta, uint64_t now_ms, char *why, size_t whylen)
{
    (void)meta;
    (void)now_ms;
    carla_session *cs = cs_of(s);
    char err[200] = "";
    int rc;
    if (m->format != RECD_MSG_FMT_CARLA)
        return session_refuse(in, RECD_M_SCHEMA, why, whylen, "%s for session '%s': not a carla message",
                              recd_msg_type_name(m->type), s->key);
    if (m->type == RECD_MSG_EVENT) {
        if (!cs->w)
            return session_refuse(in, RECD_M_SCHEMA, why, whylen,
                                  "event for session '%s': before its first state", s->key);
        const recd_carla_event *e = m->carla_event;
        bool add = e->kind == RECD_CARLA_EVENT_ADD && e->len >= 4;
        if ((rc = hold_event(s, in, e, add, why, whylen)) < 0)
            return rc;
        rc = recd_carla_writer_event(cs->w, e, err, sizeof err);
        if (rc == 0)
            rc = track_actor(s, cs, e);
        if (rc < 0 && add)
            session_release(s, actor_cost(e->len));
        sync_frame(s, cs);
        if (rc == -EBADMSG)
            return session_refuse(in, RECD_M_SCHEMA, why, whylen, "session '%s': %s", s->key, err);
        if (rc == 0) {
            in->accepted = true;
            session_tally_input(s, in, false, 0); /* an event's time is its frame's */
        }
        return rc;
    }
    const recd_carla_frame *f = m->carla_state;
    if (!isfinite(f->elapsed) || f->elapsed < 0 || f->elapsed > 1e9)
        return session_refuse(in, RECD_M_SCHEMA, why, whylen,
                              "state for session '%s': elapsed must be 0 .. 1e9 seconds", s->key);
    if (cs->w && f->elapsed < cs->elapsed_base)
        return session_refuse(in, RECD_M_SCHEMA, why, whylen,
                              "state for session '%s': elapsed %g is before this part's start %g",
                              s->key, f->elapsed, cs->elapsed_base);
    uint64_t span = cs->w ? (uint64_t)((f->elapsed - cs->elapsed_base) * 1000.0) : 0;
    if (s->part && session_should_rotate(s, 0, span))
        end_part(s, false);
    if (!s->part && (rc = start_part(s, cs, f)) < 0) {
        if (rc == -ENOMEM)
            return rc;
        log_err("session '%s': frame dropped: no output file", s->key);
        return 0;
    }
    recd_carla_frame part_frame = *f;
    part_frame.id = f->id >= cs->frame_base ? f->id - cs->frame_base : f->id;
    part_frame.elapsed = f->elapsed - cs->elapsed_base;
    rc = recd_carla_writer_state(cs->w, &part_frame, err, sizeof err);
    for (size_t i = 0; rc == 0 && cs->replay_live && i < cs->nlive; i++) {
        recd_carla_event e = {RECD_CARLA_EVENT_ADD, cs->live[i].width, cs->live[i].len,
                              cs->live[i].record, NULL};
        rc = recd_carla_writer_event(cs->w, &e, err, sizeof err);
    }
    cs->replay_live = false;
    if (rc == 0)
        track_positions(cs, f);
    sync_frame(s, cs);
    if (rc == -EBADMSG)
        return session_refuse(in, RECD_M_SCHEMA, why, whylen, "session '%s': %s", s->key, err);
    if (rc == 0) {
        in->accepted = true;
        session_tally_input(s, in, true, (uint64_t)(f->elapsed * 1000.0));
    }
    return rc;
}

static void carla_free(recd_session *s)
{
    carla_session *cs = cs_of(s);
    if (!cs)
        return;
    recd_carla_writer_free(cs->w);
    for (size_t i = 0; i < cs->nlive; i++)
        free(cs->live[i].record);
    session_release(s, s->held);
    free(cs->live);
    id_index_free(&cs->index);
    free(cs->open.map);
    free(cs);
    s->format_data = NULL;
}


/* The documentation (and values) this format gives the core config keys that exist for it. */
static const row config_docs[] = {
    {.key = "limits.session_state",
     .doc = "State one session keeps because of what its peer sent (a CARLA session's live actors and "
            "their records). A message that would take it over is refused. All sessions' state together "
            "may take at most half of limits.process_buffer, and one peer's sessions half of that."},
};

const session_format carla_session_format = {
    .config_rows = config_docs,
    .config_row_count = sizeof config_docs / sizeof config_docs[0],
    .formats = {RECD_MSG_FMT_CARLA},
    .events = true,
    .open = carla_open,
    .sample = carla_sample,
    .end_part = end_part,
    .free = carla_free,
    .files_what = "CARLA recorder logs (.log)",
    .state_kind = &carla_actors,
};
