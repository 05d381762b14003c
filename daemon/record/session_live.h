/* SPDX-License-Identifier: MIT */
/* What the web console shows of a live session: its latest samples as track points (one per
 * actor, through the format's edit hooks in librecd, so no format is named here) and its latest
 * events as JSON lines. Taken at most every SESSION_LIVE_PERIOD_MS (every sample of the loop
 * pass that opens the gate, so a tick's actors arrive together, but only until the pass has
 * given as many points as the actors it knows and one: one frame of a many-actor format, never
 * every sample of a burst), bounded in actors and events;
 * allocated with the first sample kept and freed with the session. */
#ifndef RECD_DAEMON_SESSION_LIVE_H
#define RECD_DAEMON_SESSION_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/edit.h"
#include "recd/message.h"
#include "recd/wire.h"

#define SESSION_LIVE_PERIOD_MS 100u /* 10 updates a second at most */
#define SESSION_LIVE_ACTORS 64u     /* actors shown per session; more are counted */
#define SESSION_LIVE_EVENTS 16u     /* latest events kept per session */
#define SESSION_LIVE_EVENT_BYTES 512u /* an event's JSON; longer ones are cut */
#define SESSION_LIVE_EVENTS_PER_S 20u /* events turned into JSON a second; more are counted */

struct recd_session;

typedef struct session_live {
    uint64_t updated_ms; /* monotonic time of the last sample kept */
    uint64_t version;    /* grows with every change: a stream sends when it moved */
    size_t actors, actors_cap;
    recd_track_point *pts;    /* latest point of each actor */
    size_t next_slot;         /* where the next actor of a frame is likely to be (actor_slot) */
    uint64_t actors_over;     /* samples of actors beyond SESSION_LIVE_ACTORS */
    char *events[SESSION_LIVE_EVENTS]; /* a ring of JSON lines, oldest at ev_head */
    size_t ev_head, ev_count;
    uint64_t events_total, events_skipped; /* seen; not kept (over the rate) */
    uint64_t rate_window_ms, rate_inputs; /* the samples-a-second estimate, once a second */
    double rate;
    uint64_t ev_window_ms;
    uint32_t ev_window_n;
    uint64_t pass_points; /* points taken in the loop pass that opened the gate */
} session_live;

/* Whether a sample arriving at now_ms is to be kept: the gate opened at least a period after the
 * last one, or this is the same loop pass (one cached time) as the last one kept. */
static inline bool session_live_due(uint64_t last_ms, uint64_t now_ms)
{
    return now_ms == last_ms || now_ms >= last_ms + SESSION_LIVE_PERIOD_MS;
}

/* A decoded state or event (dispatch calls it when due, and for every event). */
void session_live_note(struct recd_session *s, const recd_msg *m, uint64_t now_ms);
/* Whether a fast-lane state arriving at now_ms is to be kept: a whole period after the last one
 * (a fast-lane session is one actor, so one state a period is its whole view). */
static inline bool session_live_due_fast(uint64_t last_ms, uint64_t now_ms)
{
    return now_ms >= last_ms + SESSION_LIVE_PERIOD_MS;
}
/* A fast-lane state: decoded here, only when due. */
void session_live_note_fast(struct recd_session *s, const recd_wire_rec_state *st, uint64_t now_ms);
void session_live_free(struct recd_session *s);

#endif
