/* SPDX-License-Identifier: MIT */
/* The format-table entry of StarCraft II replays: read-only (msg_format NONE), recognised by the
 * header's signature, summarised by describe and exported as the common event stream. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "formats/sc2/sc2_events.h"
#include "formats/sc2/sc2_replay.h"
#include "recd/format.h"

/* Members whose decoding needs per-build tables, which recd does not ship. */
static const char *const table_members[] = {"replay.game.events", "replay.message.events",
                                            "replay.initData"};

static int sc2_sniff(const uint8_t *head, size_t len, recd_sniff_result *out)
{
    if (!sc2_is_replay(head, len))
        return RECD_SNIFF_NONE;
    out->standard = true;
    out->kind = "sc2replay";
    out->description = "StarCraft II replay (read-only: info and export)";
    return RECD_SNIFF_SIGNATURE;
}

static const char *result_name(int64_t result)
{
    switch (result) {
    case 1: return "win";
    case 2: return "loss";
    case 3: return "tie";
    default: return "undecided";
    }
}

/* details' control is 2 for people and 3 for the AI; early WoL files hold other values, where the
 * lobby attribute 500 (Humn/Comp) decides. */
static const char *control_name(const sc2_player *p)
{
    if (p->control == 3 || strcmp(p->control_code, "Comp") == 0)
        return "computer";
    return "human";
}

static json_t *player_json(const sc2_player *p)
{
    char color[8], toon[64];
    snprintf(color, sizeof color, "#%02x%02x%02x", p->argb[1], p->argb[2], p->argb[3]);
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(p->name));
    json_object_set_new(o, "name_plain", json_string(p->name_plain));
    json_object_set_new(o, "race", json_string(p->race));
    if (p->race_code[0])
        json_object_set_new(o, "race_code", json_string(p->race_code));
    json_object_set_new(o, "result", json_string(result_name(p->result)));
    json_object_set_new(o, "team", json_integer(p->team));
    json_object_set_new(o, "control", json_string(control_name(p)));
    json_object_set_new(o, "color", json_string(color));
    json_object_set_new(o, "handicap", json_integer(p->handicap));
    if (p->toon_id) {
        snprintf(toon, sizeof toon, "%lld-%s-%lld-%lld", (long long)p->region, p->program,
                 (long long)p->realm, (long long)p->toon_id);
        json_object_set_new(o, "toon", json_string(toon));
    }
    if (p->has_mmr)
        json_object_set_new(o, "mmr", json_integer(p->mmr));
    if (p->has_apm)
        json_object_set_new(o, "apm", json_real(p->apm));
    return o;
}

/* json_string refuses invalid UTF-8 (names from hostile files): fall back to a plain marker. */
static json_t *text(const char *s)
{
    json_t *v = json_string(s);
    return v ? v : json_string("(not UTF-8)");
}

/* The lobby attributes whose meaning is known, by scope ("global" or the player's number). */
static json_t *attributes_json(const sc2_replay *r)
{
    static const struct { uint32_t id; const char *name; } known[] = {
        {500, "controller"},   {2001, "team_size"}, {3000, "game_speed"},       {3001, "race"},
        {3002, "color"},       {3007, "participant_role"}, {3009, "game_mode"},
    };
    json_t *o = json_object();
    for (size_t i = 0; i < r->nattributes; i++) {
        const sc2_attribute *a = &r->attributes[i];
        const char *name = NULL;
        for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
            if (known[k].id == a->id)
                name = known[k].name;
        if (!name)
            continue;
        char scope[16];
        if (a->scope == 16)
            snprintf(scope, sizeof scope, "global");
        else
            snprintf(scope, sizeof scope, "%u", a->scope);
        json_t *s = json_object_get(o, scope);
        if (!s)
            json_object_set_new(o, scope, s = json_object());
        json_object_set_new(s, name, text(a->value));
    }
    return o;
}

static json_t *replay_json(const sc2_replay *r)
{
    json_t *o = json_object();
    char version[96], when[40];
    json_object_set_new(o, "format", json_string("sc2replay"));
    if (r->has_header) {
        snprintf(version, sizeof version, "%lld.%lld.%lld.%lld", (long long)r->major,
                 (long long)r->minor, (long long)r->revision, (long long)r->build);
        json_object_set_new(o, "version", json_string(version));
        json_object_set_new(o, "base_build", json_integer(r->base_build));
        json_object_set_new(o, "game_loops", json_integer(r->loops));
        json_object_set_new(o, "duration_s", json_real((double)r->loops / SC2_LOOPS_PER_SECOND));
    }
    if (r->mpq_format_version)
        json_object_set_new(o, "mpq_format_version", json_integer(r->mpq_format_version));
    if (r->has_details) {
        json_object_set_new(o, "map", text(r->map));
        if (sc2_filetime_iso(r->time_utc, when, sizeof when))
            json_object_set_new(o, "time_utc", json_string(when));
        json_object_set_new(o, "time_local_offset_s", json_integer((r->time_local_offset + (r->time_local_offset < 0 ? -5000000 : 5000000)) / 10000000));
        json_t *players = json_array();
        for (size_t i = 0; i < r->nplayers; i++) {
            json_t *p = player_json(&r->players[i]);
            json_object_set_new(p, "name", text(r->players[i].name));
            json_object_set_new(p, "name_plain", text(r->players[i].name_plain));
            json_object_set_new(p, "race", text(r->players[i].race));
            json_array_append_new(players, p);
        }
        json_object_set_new(o, "players", players);
    }
    json_t *members = json_array();
    const char *m = (const char *)r->members.data;
    for (size_t i = 0; i < r->nmembers; i++, m += strlen(m) + 1)
        json_array_append_new(members, text(m));
    json_object_set_new(o, "members", members);
    if (r->has_tracker) {
        json_t *counts = json_object();
        for (int k = 0; k < SC2_TRACKER_KINDS; k++)
            json_object_set_new(counts, sc2_tracker_kind(k), json_integer((json_int_t)r->tracker_counts[k]));
        json_object_set_new(o, "tracker_counts", counts);
        json_object_set_new(o, "tracker_events", json_integer((json_int_t)r->tracker_events));
    }
    if (r->has_attributes) {
        json_object_set_new(o, "attributes", attributes_json(r));
        json_object_set_new(o, "attributes_total", json_integer((json_int_t)r->nattributes));
    }
    if (r->has_metadata)
        json_object_set_new(o, "game_metadata_version", text(r->metadata_version));
    json_t *skipped = json_array();
    m = (const char *)r->members.data;
    for (size_t i = 0; i < r->nmembers; i++, m += strlen(m) + 1)
        for (size_t k = 0; k < sizeof table_members / sizeof table_members[0]; k++)
            if (strcmp(m, table_members[k]) == 0)
                json_array_append_new(skipped, json_string(m));
    if (json_array_size(skipped) > 0) {
        json_object_set_new(o, "skipped", skipped);
        json_object_set_new(o, "skipped_note",
                            json_string("these members need per-build protocol tables, which "
                                        "recd does not ship (--protocol-dir is not implemented)"));
    } else {
        json_decref(skipped);
    }
    if (r->damaged)
        json_object_set_new(o, "error", text(r->err));
    return o;
}

static int read_replay(const uint8_t *buf, size_t len, bool with_tracker, sc2_replay **out)
{
    *out = malloc(sizeof **out);
    if (!*out)
        return -ENOMEM;
    return sc2_replay_read(*out, buf, len, with_tracker);
}

static void release(sc2_replay *r)
{
    if (r) {
        sc2_replay_free(r);
        free(r);
    }
}

static int sc2_describe(const uint8_t *buf, size_t len, recd_buf *out, char *err, size_t errlen)
{
    sc2_replay *r;
    int rc = read_replay(buf, len, true, &r);
    if (rc == -ENOMEM) {
        release(r);
        return rc;
    }
    json_t *o = replay_json(r);
    char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(o);
    int arc = s ? recd_buf_append(out, s, strlen(s)) : -ENOMEM;
    free(s);
    if (rc < 0)
        snprintf(err, errlen, "%s", r->err);
    release(r);
    return arc < 0 ? arc : rc;
}

static int sc2_verify(const uint8_t *buf, size_t len, recd_format_verdict *out, recd_report *report)
{
    (void)report;
    sc2_replay *r;
    int rc = read_replay(buf, len, true, &r);
    if (rc == -ENOMEM) {
        release(r);
        return rc;
    }
    if (rc == -ELIBACC) { /* StormLib is missing: an error, not a verdict on the file */
        snprintf(out->fallback, sizeof out->fallback, "%.250s", r->err);
        release(r);
        return rc;
    }
    out->units = (uint64_t)(r->loops > 0 ? r->loops : 0);
    out->valid = rc == 0;
    if (rc == 0)
        snprintf(out->summary, sizeof out->summary, "sc2replay %lld.%lld.%lld.%lld, %lld game loops",
                 (long long)r->major, (long long)r->minor, (long long)r->revision,
                 (long long)r->build, (long long)r->loops);
    else
        snprintf(out->fallback, sizeof out->fallback, "%.250s", r->err);
    release(r);
    return rc;
}

static int sc2_export_events(const uint8_t *buf, size_t len, recd_replay_event_fn on_event,
                             void *data, char *err, size_t errlen)
{
    recd_buf tracker = {0};
    int rc = sc2_replay_member(buf, len, "replay.tracker.events", &tracker, err, errlen);
    if (rc == -ENOENT) {
        rc = 0; /* before 2.0.8 replays have no tracker events: an empty stream */
    } else if (rc == 0) {
        rc = sc2_tracker_export(tracker.data, tracker.len, on_event, data, err, errlen);
    }
    recd_buf_free(&tracker);
    return rc;
}

const recd_format recd_format__sc2replay = {
    .name = "sc2replay",
    .extension = "SC2Replay",
    .description = "StarCraft II replay (read-only)",
    .unit = "loops",
    .msg_format = RECD_MSG_FMT_NONE,
    .sniff = sc2_sniff,
    .verify = sc2_verify,
    .export_events = sc2_export_events,
    .describe = sc2_describe,
};
