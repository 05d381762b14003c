/* SPDX-License-Identifier: MIT */
/* A live session's latest samples and events as JSON (GET /api/sessions/KEY/latest and the
 * stream's events), from the record layer's view of it (record/session_live.h). */
#include "console.h"

#include <math.h>
#include <stdlib.h>

#include <jansson.h>

#include "record/session_live.h"
#include "server.h"

/* A number, or null for NaN (JSON has none). */
static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *point_json(const recd_track_point *p)
{
    json_t *o = json_pack("{s:I, s:i}", "actor", (json_int_t)p->actor, "kind", (int)p->kind);
    if (!o)
        return NULL;
    json_object_set_new(o, "t", num(p->t));
    json_object_set_new(o, "x", num(p->x));
    json_object_set_new(o, "y", num(p->y));
    json_object_set_new(o, "z", num(p->z));
    json_object_set_new(o, "speed", num(p->speed));
    json_object_set_new(o, "health", num(p->health));
    json_object_set_new(o, "armour", num(p->armour));
    json_object_set_new(o, "vehicle_health", num(p->vehicle_health));
    return o;
}

static json_t *events_json(const session_live *l)
{
    json_t *a = json_array();
    for (size_t i = 0; a && l && i < l->ev_count; i++) {
        json_t *ev = json_loads(l->events[(l->ev_head + i) % SESSION_LIVE_EVENTS], 0, NULL);
        json_array_append_new(a, ev ? ev : json_string(l->events[(l->ev_head + i) % SESSION_LIVE_EVENTS]));
    }
    return a;
}

char *console_latest_json(recd_server *srv, const char *key, uint64_t *version)
{
    recd_session *s = session_table_get(&srv->sessions.table, key);
    if (!s)
        return NULL;
    const session_live *l = s->view;
    json_t *pts = json_array();
    for (size_t i = 0; pts && l && i < l->actors; i++)
        json_array_append_new(pts, point_json(&l->pts[i]));
    uint64_t now = uv_now(srv->loop);
    json_t *o = json_pack("{s:s, s:s, s:o, s:o, s:I, s:I, s:I}", "key", s->key, "format",
                          recd_msg_format_name(s->format), "samples", pts ? pts : json_array(),
                          "events", events_json(l), "age_ms",
                          (json_int_t)(l && l->updated_ms ? now - l->updated_ms : 0), "events_total",
                          (json_int_t)(l ? l->events_total : 0), "version",
                          (json_int_t)(l ? l->version : 0));
    *version = l ? l->version : 0;
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return text;
}
