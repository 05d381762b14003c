/* SPDX-License-Identifier: MIT */
/* The console's view of a live session's latest samples and events (see session_live.h). */
#include "session_live.h"

#include <stdlib.h>
#include <string.h>

#include "recd/track_point.h"
#include "session.h"

static session_live *live_of(recd_session *s)
{
    if (!s->view)
        s->view = calloc(1, sizeof *s->view);
    return s->view;
}

/* The slot of p's actor: found, added, or NULL when the table is full. The table is kept in
 * actor order: a lookup is a bisection, after a try of the slot after the last one found (a frame
 * lists its actors in the same order each time), so a frame of many actors, or of more than the
 * table holds, is not a scan per actor. */
static recd_track_point *actor_slot(session_live *l, int64_t actor)
{
    if (l->next_slot < l->actors && l->pts[l->next_slot].actor == actor)
        return &l->pts[l->next_slot++];
    size_t lo = 0, hi = l->actors; /* the first slot whose actor is not below actor */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->pts[mid].actor < actor)
            lo = mid + 1;
        else
            hi = mid;
    }
    l->next_slot = lo + 1;
    if (lo < l->actors && l->pts[lo].actor == actor)
        return &l->pts[lo];
    if (l->actors == SESSION_LIVE_ACTORS)
        return NULL;
    if (l->actors == l->actors_cap) {
        size_t cap = l->actors_cap ? l->actors_cap * 2 : 1;
        recd_track_point *p = realloc(l->pts, cap * sizeof *p);
        if (!p)
            return NULL;
        l->pts = p;
        l->actors_cap = cap;
    }
    memmove(&l->pts[lo + 1], &l->pts[lo], (l->actors - lo) * sizeof *l->pts);
    l->actors++;
    l->pts[lo].actor = actor;
    return &l->pts[lo];
}

/* Samples a second over the last second or so. */
static void note_rate(recd_session *s, session_live *l, uint64_t now_ms)
{
    if (!l->rate_window_ms) {
        l->rate_window_ms = now_ms;
        l->rate_inputs = s->inputs;
    } else if (now_ms >= l->rate_window_ms + 1000) {
        l->rate = (double)(s->inputs - l->rate_inputs) * 1000.0 / (double)(now_ms - l->rate_window_ms);
        l->rate_window_ms = now_ms;
        l->rate_inputs = s->inputs;
    }
}

static int keep_point(void *data, const recd_track_point *p)
{
    session_live *l = data;
    l->pass_points++;
    recd_track_point *slot = actor_slot(l, p->actor);
    if (!slot) {
        l->actors_over++;
        return 0;
    }
    *slot = *p;
    return 0;
}

static void note_state(recd_session *s, const recd_msg *m, uint64_t now_ms)
{
    session_live *l = live_of(s);
    bool first = s->live_ms != now_ms;
    s->live_ms = now_ms;
    if (!l)
        return;
    if (first) {
        note_rate(s, l, now_ms);
        l->pass_points = 0;
    }
    if (l->pass_points > l->actors)
        return; /* the pass has given each known actor a point, and a new one a chance */
    uint64_t over = l->actors_over;
    size_t actors = l->actors;
    recd_track_points_of(m, keep_point, l);
    if (l->actors != actors || l->actors_over != over || actors) {
        l->updated_ms = now_ms;
        l->version++;
    }
}

static void note_event(recd_session *s, const recd_msg *m, uint64_t now_ms)
{
    session_live *l = live_of(s);
    if (!l)
        return;
    l->events_total++;
    if (now_ms >= l->ev_window_ms + 1000) {
        l->ev_window_ms = now_ms;
        l->ev_window_n = 0;
    }
    if (l->ev_window_n >= SESSION_LIVE_EVENTS_PER_S) {
        l->events_skipped++;
        return;
    }
    l->ev_window_n++;
    recd_buf json = {0};
    if (recd_msg_to_json(m, &json) < 0 || !json.len) {
        recd_buf_free(&json);
        l->events_skipped++;
        return;
    }
    size_t n = json.len < SESSION_LIVE_EVENT_BYTES ? json.len : SESSION_LIVE_EVENT_BYTES;
    while (n && (json.data[n - 1] == '\n' || json.data[n - 1] == '\r'))
        n--;
    char *line = malloc(n + 1);
    if (line) {
        memcpy(line, json.data, n);
        line[n] = 0;
        size_t at = (l->ev_head + l->ev_count) % SESSION_LIVE_EVENTS;
        if (l->ev_count == SESSION_LIVE_EVENTS) {
            free(l->events[l->ev_head]);
            l->ev_head = (l->ev_head + 1) % SESSION_LIVE_EVENTS;
        } else {
            l->ev_count++;
        }
        l->events[at] = line;
        l->version++;
    }
    recd_buf_free(&json);
}

void session_live_note(recd_session *s, const recd_msg *m, uint64_t now_ms)
{
    if (m->type == RECD_MSG_EVENT)
        note_event(s, m, now_ms);
    else if (m->type == RECD_MSG_STATE && session_live_due(s->live_ms, now_ms))
        note_state(s, m, now_ms);
}

void session_live_note_fast(recd_session *s, const recd_wire_rec_state *st, uint64_t now_ms)
{
    recd_msg m;
    if (recd_wire_rec_state_msg(st, &m) == 0)
        note_state(s, &m, now_ms);
    else
        s->live_ms = now_ms;
}

void session_live_free(recd_session *s)
{
    session_live *l = s->view;
    if (!l)
        return;
    for (size_t i = 0; i < l->ev_count; i++)
        free(l->events[(l->ev_head + i) % SESSION_LIVE_EVENTS]);
    free(l->pts);
    free(l);
    s->view = NULL;
}
