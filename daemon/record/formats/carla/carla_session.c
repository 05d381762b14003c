/* SPDX-License-Identifier: MIT */
/* CARLA sessions: each state is a simulation frame and each event an actor add / delete / parent
 * or a collision of it, written through librecd's CARLA writer (recd/carla.h) into the session's
 * batch, each frame in place (recd/reserve_sink.h). The writer holds one frame back
 * until the next state, so its duration is known; the part's last frame, written when the part
 * ends, keeps -1 as CARLA's own logs do. Every part is a log CARLA replays on its own: its frames
 * count from 1 and its time from 0, and the first frame of a part after the first holds the
 * world then (carla_live.c): an EventAdd for every live actor at its last position, and the
 * traffic lights' states and the weather last sent that the frame itself lacks. A session opened
 * with ring: true keeps its frames in memory instead, until a save (carla_ring.c). */
#include "carla_session.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "carla_state.h"
#include "record/session_ring.h"
#include "support/config_schema.h"
#include "support/log.h"

static void sync_frame(recd_session *s, carla_session *cs);

static int sink_write(void *ctx, const void *data, size_t len)
{
    return session_put(ctx, data, len);
}

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
    if (cs && s->ring) {
        carla_ring_end(s, cs, session_end);
        sync_frame(s, cs);
        return;
    }
    if (cs && cs->w) {
        char err[200];
        if (s->part && recd_carla_writer_finish(cs->w, err, sizeof err) < 0)
            log_err("session '%s': the last frame of part %u is lost: %s", s->key, s->part_no, err);
        if (s->part)
            carla_feed_frame(s, cs);
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
    carla_feed_part(s, cs);
    recd_carla_open o = cs->open;
    o.date = cs->open.date + (first ? 0 : (int64_t)f->elapsed);
    cs->sink = (recd_reserve_sink){sink_write, carla_frame_room, s};
    if ((rc = recd_carla_writer_new(&cs->w, &o, recd_reserve_sink_as_sink(&cs->sink))) < 0)
        return rc;
    cs->frame_base = first ? 0 : f->id - 1;
    cs->elapsed_base = first ? 0.0 : f->elapsed;
    return 0;
}

/* The live-actor table at its bound (recd_state_refusals_total). */
static const recd_m_state_kind carla_actors = {
    .what = "carla_actors",
    .bound = "limits.session_state or the process's share",
    .held = "CARLA live actors",
};

/* An event takes room in the frame the writer holds, and an add in the live table as well: the
 * room is checked before it is written, refused at the session's or the process's bound (every
 * later part would start with the live actors). The add's room in the table is held here. A ring
 * session's event takes room in the frame it collects too; its add is held when it leaves the
 * ring (carla_ring.c). */
static int hold_event(recd_session *s, session_input *in, const recd_carla_event *e, bool add,
                      char *why, size_t whylen)
{
    const carla_session *cs = cs_of(s);
    uint64_t room = s->ring ? 2 * (uint64_t)e->len + 8 : e->len;
    const char *limit = session_hold_over(s, room + (add ? actor_cost(e->len) : 0));
    if (!limit) {
        if (add)
            session_hold(s, actor_cost(e->len));
        return 0;
    }
    size_t nlive = cs->world.nlive;
    recd_metrics_state_refused(s->env->metrics, carla_actors.what);
    log_warn("session '%s': an event of %u bytes refused: its %zu live actors and the frame held "
             "back hold %llu bytes (%s)",
             s->key, e->len, nlive, (unsigned long long)s->held, limit);
    return session_refuse(in, RECD_M_TOO_LARGE, why, whylen,
                          "event for session '%s': its %zu live actors and the frame held back "
                          "hold %llu bytes, and this event would take them past %s: delete "
                          "actors, send smaller ones, or send a state between events",
                          s->key, nlive, (unsigned long long)s->held, limit);
}

/* The frame the writer holds back is held state until the next state writes it; a ring
 * session's collected frame and its checking writer's output as well, and the newest Position
 * packet the world holds (carla_live.c). */
static void sync_frame(recd_session *s, carla_session *cs)
{
    uint64_t now = cs->w ? recd_carla_writer_held_bytes(cs->w) : 0;
    now += cs->collect.len + cs->scratch.cap + cs->world.moves.cap;
    if (now > cs->frame_held)
        session_hold(s, now - cs->frame_held);
    else
        session_release(s, cs->frame_held - now);
    cs->frame_held = now;
}

static int carla_event(recd_session *s, carla_session *cs, session_input *in,
                       const recd_carla_event *e, char *why, size_t whylen)
{
    char err[200] = "";
    if (!cs->w)
        return session_refuse(in, RECD_M_SCHEMA, why, whylen,
                              "event for session '%s': before its first state", s->key);
    bool add = !s->ring && e->kind == RECD_CARLA_EVENT_ADD && e->len >= 4;
    int rc = hold_event(s, in, e, add, why, whylen);
    if (rc < 0)
        return rc;
    rc = recd_carla_writer_event(cs->w, e, err, sizeof err);
    if (rc == 0)
        rc = s->ring ? carla_ring_event(cs, e) : carla_live_event(&cs->world, s, e);
    if (rc < 0 && add)
        session_release(s, actor_cost(e->len));
    sync_frame(s, cs);
    if (rc == -EBADMSG)
        return session_refuse(in, RECD_M_SCHEMA, why, whylen, "session '%s': %s", s->key, err);
    if (rc == 0) {
        in->accepted = true;
        if (!s->ring)
            session_tally_input(s, in, false, 0); /* an event's time is its frame's */
        else if (in->save_now)
            session_ring_save_flagged(s);
    }
    return rc;
}

/* The first frame of a part after the first: the frame with the lights' states and the weather
 * it lacks, then an EventAdd for every live actor. */
static int write_first_frame(carla_session *cs, const recd_carla_frame *f, char *err,
                             size_t errlen)
{
    carla_first_frame ff;
    int rc = carla_live_first_frame(&cs->world, f, &ff);
    if (rc == 0)
        rc = recd_carla_writer_state(cs->w, &ff.f, err, errlen);
    carla_first_frame_free(&ff);
    return rc == 0 ? carla_live_readd(&cs->world, cs->w, err, errlen) : rc;
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
    if (m->type == RECD_MSG_EVENT)
        return carla_event(s, cs, in, m->carla_event, why, whylen);
    const recd_carla_frame *f = m->carla_state;
    if (!isfinite(f->elapsed) || f->elapsed < 0 || f->elapsed > 1e9)
        return session_refuse(in, RECD_M_SCHEMA, why, whylen,
                              "state for session '%s': elapsed must be 0 .. 1e9 seconds", s->key);
    if (s->ring) {
        rc = carla_ring_state(s, cs, f, err, sizeof err);
        sync_frame(s, cs);
        if (rc == -EBADMSG)
            return session_refuse(in, RECD_M_SCHEMA, why, whylen, "session '%s': %s", s->key, err);
        if (rc == 0) {
            in->accepted = true;
            if (in->save_now)
                session_ring_save_flagged(s);
        }
        return rc;
    }
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
    if (cs->replay_live)
        rc = write_first_frame(cs, &part_frame, err, sizeof err);
    else
        rc = recd_carla_writer_state(cs->w, &part_frame, err, sizeof err);
    cs->replay_live = false;
    carla_feed_frame(s, cs);
    if (rc == 0)
        carla_live_frame(&cs->world, s, f);
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
    carla_live_free(&cs->world);
    session_release(s, s->held);
    recd_buf_free(&cs->collect);
    recd_buf_free(&cs->scratch);
    free(cs->open.map);
    free(cs);
    s->format_data = NULL;
}


/* The documentation (and values) this format gives the core config keys that exist for it. */
static const row config_docs[] = {
    {.key = "limits.session_state",
     .doc = "State one session keeps because of what its peer sent (a CARLA session's live "
            "actors and their records, and its traffic lights' last states). A message that "
            "would take it over is refused. All sessions' state together may take at most half "
            "of limits.process_buffer, and one peer's sessions half of that."},
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
    .ring_save = carla_ring_save,
    .ring_dropped = carla_ring_dropped,
};
