/* SPDX-License-Identifier: MIT */
/* Reading a replay's table-free parts into sc2_replay: header, details, attributes, game
 * metadata, members and tracker-event counts (docs/formats/sc2replay.md). */
#include "formats/sc2/sc2_replay.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#define USER_DATA_MAGIC "MPQ\x1b"
#define ARCHIVE_MAGIC "MPQ\x1a"
#define SIGNATURE_TEXT "StarCraft II replay"
#define FILETIME_PER_DAY 864000000000LL

static const char *const tracker_kinds[SC2_TRACKER_KINDS] = {
    "player_stats", "unit_born", "unit_died",      "unit_owner_change", "unit_type_change",
    "upgrade",      "unit_init", "unit_done",      "unit_positions",    "player_setup",
};

const char *sc2_tracker_kind(int64_t id)
{
    return id >= 0 && id < SC2_TRACKER_KINDS ? tracker_kinds[id] : NULL;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

bool sc2_is_replay(const uint8_t *buf, size_t len)
{
    /* user data, then the header: struct (05), field count, tag 0 (00), blob (02) of 22 (2C) */
    size_t sig = sizeof SIGNATURE_TEXT - 1;
    return len >= 21 + sig && memcmp(buf, USER_DATA_MAGIC, 4) == 0 && buf[16] == 0x05 &&
           buf[18] == 0x00 && buf[19] == 0x02 && buf[20] == 0x2C &&
           memcmp(buf + 21, SIGNATURE_TEXT, sig) == 0;
}

static int damage(sc2_replay *r, const char *fmt, ...)
{
    if (r->damaged)
        return -EBADMSG;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, sizeof r->err, fmt, ap);
    va_end(ap);
    r->damaged = true;
    return -EBADMSG;
}

static void copy_blob(const sc2v_tree *t, const sc2v_node *n, char *out, size_t outlen)
{
    const uint8_t *data;
    size_t len;
    out[0] = 0;
    if (!sc2v_blob(t, n, &data, &len))
        return;
    if (len >= outlen)
        len = outlen - 1;
    memcpy(out, data, len);
    out[len] = 0;
    for (size_t i = 0; i < len; i++) /* a NUL inside would cut the text silently */
        if (out[i] == 0)
            out[i] = '?';
}

/* Clan tags and names are stored with markup: <sp/> for a space, HTML entities for <, >, &. */
static void unescape_name(const char *in, char *out, size_t outlen)
{
    static const struct { const char *from, *to; } subs[] = {
        {"<sp/>", " "}, {"&lt;", "<"},   {"&gt;", ">"},   {"&amp;", "&"},
        {"&quot;", "\""}, {"&apos;", "'"}, {"&#39;", "'"},
    };
    size_t o = 0;
    while (*in && o + 1 < outlen) {
        bool replaced = false;
        for (size_t k = 0; k < sizeof subs / sizeof subs[0]; k++) {
            size_t n = strlen(subs[k].from);
            if (strncmp(in, subs[k].from, n) == 0) {
                out[o++] = subs[k].to[0];
                in += n;
                replaced = true;
                break;
            }
        }
        if (!replaced)
            out[o++] = *in++;
    }
    out[o] = 0;
}

bool sc2_filetime_iso(int64_t filetime, char *out, size_t outlen)
{
    if (filetime <= 0)
        return false;
    time_t unix_s = (time_t)(filetime / 10000000 - 11644473600LL);
    struct tm tm;
    if (!gmtime_r(&unix_s, &tm))
        return false;
    return strftime(out, outlen, "%Y-%m-%dT%H:%M:%SZ", &tm) > 0;
}

/* Header only (no StormLib): version, base build, loops. 0 or -EBADMSG with r->err. */
static int sc2_replay_read_header(sc2_replay *r, const uint8_t *buf, size_t len)
{
    if (len < 16 || memcmp(buf, USER_DATA_MAGIC, 4) != 0)
        return damage(r, "no MPQ user-data block at byte 0");
    uint32_t header_size = le32(buf + 12);
    if (header_size > len - 16)
        return damage(r, "the replay header at byte 16 declares %u bytes, the file ends at byte %zu",
                      header_size, len);
    sc2v_tree t;
    sc2v_init(&t, buf + 16, header_size);
    size_t pos = 0;
    uint32_t root;
    int rc = sc2v_decode(&t, &pos, &root);
    if (rc < 0) {
        rc = rc == -ENOMEM ? rc
                           : damage(r, "replay header: %s at byte %zu", t.err[0] ? t.err : "too big",
                                    16 + t.err_off);
        sc2v_free(&t);
        return rc;
    }
    const sc2v_node *h = sc2v_at(&t, root);
    const sc2v_node *v = sc2v_field(&t, h, 1);
    r->major = sc2v_int(&t, sc2v_field(&t, v, 1), 0);
    r->minor = sc2v_int(&t, sc2v_field(&t, v, 2), 0);
    r->revision = sc2v_int(&t, sc2v_field(&t, v, 3), 0);
    r->build = sc2v_int(&t, sc2v_field(&t, v, 4), 0);
    r->base_build = sc2v_int(&t, sc2v_field(&t, v, 5), 0);
    r->loops = sc2v_int(&t, sc2v_field(&t, h, 3), 0);
    r->has_header = v != NULL;
    sc2v_free(&t);
    if (!r->has_header)
        return damage(r, "replay header at byte 16 has no version");
    return 0;
}

/* The archive header the user data points to; its declared size finds a cut file before StormLib. */
static int check_archive(sc2_replay *r, const uint8_t *buf, size_t len)
{
    uint32_t at = le32(buf + 8);
    if (at > len || len - at < 32)
        return damage(r, "the MPQ archive header at byte %u lies past the end of the file (%zu bytes)",
                      at, len);
    if (memcmp(buf + at, ARCHIVE_MAGIC, 4) != 0)
        return damage(r, "no MPQ archive header at byte %u", at);
    uint32_t archive_size = le32(buf + at + 8);
    r->mpq_format_version = (buf[at + 12] | buf[at + 13] << 8) + 1; /* stored from 0 */
    if ((uint64_t)at + archive_size > len)
        return damage(r,
                      "truncated: the MPQ archive at byte %u declares %u bytes (to byte %llu), the "
                      "file ends at byte %zu",
                      at, archive_size, (unsigned long long)at + archive_size, len);
    return 0;
}

static void read_player(const sc2v_tree *t, const sc2v_node *p, sc2_player *out)
{
    memset(out, 0, sizeof *out);
    copy_blob(t, sc2v_field(t, p, 0), out->name, sizeof out->name);
    unescape_name(out->name, out->name_plain, sizeof out->name_plain);
    const sc2v_node *toon = sc2v_field(t, p, 1);
    out->region = sc2v_int(t, sc2v_field(t, toon, 0), 0);
    /* 'S2': a fourcc (u32) in some builds, a blob in others; NULs and odd bytes dropped */
    const sc2v_node *pid = sc2v_field(t, toon, 1);
    uint8_t fourcc[4] = {0};
    const uint8_t *pid_bytes;
    size_t pid_len;
    if (sc2v_blob(t, pid, &pid_bytes, &pid_len))
        memcpy(fourcc, pid_bytes, pid_len < 4 ? pid_len : 4);
    else
        for (int k = 0; k < 4; k++)
            fourcc[k] = (uint8_t)(sc2v_int(t, pid, 0) >> (24 - 8 * k));
    size_t np = 0;
    for (int k = 0; k < 4; k++)
        if (fourcc[k] > 0x20 && fourcc[k] < 0x7f)
            out->program[np++] = (char)fourcc[k];
    out->realm = sc2v_int(t, sc2v_field(t, toon, 2), 0);
    out->toon_id = sc2v_int(t, sc2v_field(t, toon, 4), 0);
    copy_blob(t, sc2v_field(t, p, 2), out->race, sizeof out->race);
    const sc2v_node *color = sc2v_field(t, p, 3);
    for (int k = 0; k < 4; k++)
        out->argb[k] = (uint8_t)sc2v_int(t, sc2v_field(t, color, k), 0);
    out->control = sc2v_int(t, sc2v_field(t, p, 4), 0);
    out->team = sc2v_int(t, sc2v_field(t, p, 5), 0);
    out->handicap = sc2v_int(t, sc2v_field(t, p, 6), 0);
    out->result = sc2v_int(t, sc2v_field(t, p, 8), 0);
}

static int read_details(sc2_replay *r, const recd_buf *data)
{
    sc2v_tree t;
    sc2v_init(&t, data->data, data->len);
    size_t pos = 0;
    uint32_t root;
    int rc = sc2v_decode(&t, &pos, &root);
    if (rc < 0) {
        rc = rc == -ENOMEM ? rc
                           : damage(r, "replay.details: %s at byte %zu", t.err[0] ? t.err : "too big",
                                    t.err_off);
        sc2v_free(&t);
        return rc;
    }
    const sc2v_node *d = sc2v_at(&t, root);
    const sc2v_node *list = sc2v_field(&t, d, 0);
    while (list && list->kind == SC2V_OPTIONAL) /* the player list is optional in some builds */
        list = sc2v_first(&t, list);
    for (const sc2v_node *p = list && list->kind == SC2V_ARRAY ? sc2v_first(&t, list) : NULL;
         p && r->nplayers < SC2_MAX_PLAYERS; p = sc2v_next(&t, p))
        read_player(&t, p, &r->players[r->nplayers++]);
    copy_blob(&t, sc2v_field(&t, d, 1), r->map, sizeof r->map);
    r->time_utc = sc2v_int(&t, sc2v_field(&t, d, 5), 0);
    r->time_local_offset = sc2v_int(&t, sc2v_field(&t, d, 6), 0);
    if (r->time_local_offset > FILETIME_PER_DAY || r->time_local_offset < -FILETIME_PER_DAY) {
        /* an absolute local time (seen in 2.1.3); wrapping arithmetic, the values are hostile */
        r->time_local_offset = (int64_t)((uint64_t)r->time_local_offset - (uint64_t)r->time_utc);
        if (r->time_local_offset > FILETIME_PER_DAY || r->time_local_offset < -FILETIME_PER_DAY)
            r->time_local_offset = 0; /* neither an offset nor a time near the start */
    }
    r->has_details = true;
    sc2v_free(&t);
    return 0;
}

/* Little-endian: a preamble (4 bytes before base build 17326, 5 from it), a u32 count, then
 * entries of u32 namespace, u32 id, u8 scope and a 4-byte value stored back to front. */
static int read_attributes(sc2_replay *r, const recd_buf *data)
{
    size_t pos = r->base_build < 17326 ? 4 : 5;
    if (data->len < pos + 4)
        return damage(r, "replay.attributes.events: %zu bytes, too short for its count at byte %zu",
                      data->len, pos);
    uint32_t count = le32(data->data + pos);
    pos += 4;
    r->has_attributes = true;
    for (uint32_t k = 0; k < count; k++, pos += 13) {
        if (data->len - pos < 13)
            return damage(r, "replay.attributes.events: entry %u of %u cut at byte %zu", k, count,
                          pos);
        if (r->nattributes == SC2_MAX_ATTRIBUTES)
            return damage(r, "replay.attributes.events: more than %d entries at byte %zu",
                          SC2_MAX_ATTRIBUTES, pos);
        sc2_attribute *a = &r->attributes[r->nattributes++];
        const uint8_t *e = data->data + pos;
        a->ns = le32(e);
        a->id = le32(e + 4);
        a->scope = e[8];
        size_t n = 0;
        for (int b = 3; b >= 0; b--)
            if (e[9 + b] != 0 || n > 0)
                a->value[n++] = e[9 + b] >= 0x20 && e[9 + b] < 0x7f ? (char)e[9 + b] : '?';
        a->value[n] = 0;
    }
    /* Per-player attributes have the player's number (1..) as scope. */
    for (size_t k = 0; k < r->nattributes; k++) {
        const sc2_attribute *a = &r->attributes[k];
        if (a->scope < 1 || a->scope > r->nplayers)
            continue;
        sc2_player *p = &r->players[a->scope - 1];
        if (a->id == 3001)
            snprintf(p->race_code, sizeof p->race_code, "%s", a->value);
        else if (a->id == 500)
            snprintf(p->control_code, sizeof p->control_code, "%s", a->value);
    }
    return 0;
}

static int read_metadata(sc2_replay *r, const recd_buf *data)
{
    json_error_t jerr;
    json_t *root = json_loadb((const char *)data->data, data->len, 0, &jerr);
    if (!root || !json_is_object(root)) {
        json_decref(root);
        return damage(r, "replay.gamemetadata.json: %s at byte %d", root ? "not an object" : jerr.text,
                      root ? 0 : jerr.position);
    }
    r->has_metadata = true;
    const char *version = json_string_value(json_object_get(root, "GameVersion"));
    snprintf(r->metadata_version, sizeof r->metadata_version, "%s", version ? version : "");
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(root, "Players"), i, p) {
        json_int_t id = json_integer_value(json_object_get(p, "PlayerID"));
        if (id < 1 || (size_t)id > r->nplayers)
            continue;
        sc2_player *pl = &r->players[id - 1];
        json_t *mmr = json_object_get(p, "MMR"), *apm = json_object_get(p, "APM");
        if (json_is_number(mmr)) {
            pl->has_mmr = true;
            pl->mmr = (int64_t)json_number_value(mmr);
        }
        if (json_is_number(apm)) {
            pl->has_apm = true;
            pl->apm = json_number_value(apm);
        }
    }
    json_decref(root);
    return 0;
}

int sc2_tracker_walk(const uint8_t *buf, size_t len, sc2_tracker_fn fn, void *data, char *err,
                     size_t errlen)
{
    sc2v_tree t;
    sc2v_init(&t, buf, len);
    t.max_nodes = 1u << 20; /* one event; the largest real ones (unit positions) hold a few hundred */
    size_t pos = 0;
    int64_t loop = 0;
    uint64_t index = 0;
    int rc = 0;
    while (pos < len && rc == 0) {
        size_t start = pos;
        uint32_t delta, id, ev;
        sc2v_reset(&t);
        if ((rc = sc2v_decode(&t, &pos, &delta)) < 0 || (rc = sc2v_decode(&t, &pos, &id)) < 0 ||
            (rc = sc2v_decode(&t, &pos, &ev)) < 0) {
            if (rc != -ENOMEM)
                snprintf(err, errlen,
                         "replay.tracker.events: event %llu at byte %zu: %s at byte %zu",
                         (unsigned long long)index, start, t.err[0] ? t.err : "too many values",
                         t.err_off);
            rc = rc == -ENOMEM ? rc : -EBADMSG;
            break;
        }
        int64_t d = sc2v_int(&t, sc2v_at(&t, delta), -1);
        if (d < 0 || d > UINT32_MAX) {
            snprintf(err, errlen, "replay.tracker.events: event %llu at byte %zu has no game-loop delta",
                     (unsigned long long)index, start);
            rc = -EBADMSG;
            break;
        }
        loop += d;
        rc = fn(data, loop, sc2v_int(&t, sc2v_at(&t, id), -1), &t, sc2v_at(&t, ev));
        index++;
    }
    sc2v_free(&t);
    return rc;
}

static int count_event(void *data, int64_t loop, int64_t id, const sc2v_tree *t, const sc2v_node *ev)
{
    (void)loop, (void)t, (void)ev;
    sc2_replay *r = data;
    r->tracker_events++;
    if (id >= 0 && id < SC2_TRACKER_KINDS)
        r->tracker_counts[id]++;
    return 0;
}

enum { WANT_DETAILS, WANT_ATTRIBUTES, WANT_METADATA, WANT_TRACKER, WANT_COUNT };
static const char *const wanted[WANT_COUNT] = {"replay.details", "replay.attributes.events",
                                               "replay.gamemetadata.json", "replay.tracker.events"};

/* A member's outcome: absence is no damage; a cut or unreadable member is. true when read. */
static bool member_ok(sc2_replay *r, const sc2_extract *x, int i)
{
    if (x->status[i] == 0)
        return true;
    if (x->status[i] != -ENOENT && x->status[i] != -ECANCELED)
        damage(r, "%.*s", (int)x->data[i].len, (const char *)x->data[i].data);
    return false;
}

int sc2_replay_read(sc2_replay *r, const uint8_t *buf, size_t len, bool with_tracker)
{
    memset(r, 0, sizeof *r);
    int rc = sc2_replay_read_header(r, buf, len);
    if (rc < 0)
        return rc;
    if ((rc = check_archive(r, buf, len)) < 0)
        return rc;
    sc2_extract x;
    char err[sizeof r->err] = "";
    int xrc = sc2_mpq_extract(buf, len, wanted, with_tracker ? WANT_COUNT : WANT_TRACKER,
                              SC2_MEMBER_CAP, &x, err, sizeof err);
    if (xrc == -ENOMEM || xrc == -ELIBACC) { /* not the file's fault: no damage to report */
        if (xrc == -ELIBACC)
            snprintf(r->err, sizeof r->err, "%s", err);
        sc2_extract_free(&x);
        return xrc;
    }
    /* What arrived is decoded even when StormLib failed later: the damage is reported after. */
    recd_buf_append(&r->members, x.names.data ? (const char *)x.names.data : "", x.names.len);
    r->nmembers = x.nnames;
    rc = 0;
    if (member_ok(r, &x, WANT_DETAILS))
        rc = read_details(r, &x.data[WANT_DETAILS]);
    if (rc == 0 && member_ok(r, &x, WANT_ATTRIBUTES))
        rc = read_attributes(r, &x.data[WANT_ATTRIBUTES]);
    if (rc == 0 && member_ok(r, &x, WANT_METADATA))
        rc = read_metadata(r, &x.data[WANT_METADATA]);
    if (rc == 0 && with_tracker && member_ok(r, &x, WANT_TRACKER)) {
        r->has_tracker = true;
        rc = sc2_tracker_walk(x.data[WANT_TRACKER].data, x.data[WANT_TRACKER].len, count_event, r,
                              err, sizeof err);
        if (rc == -EBADMSG)
            damage(r, "%s", err);
    }
    if (xrc < 0)
        rc = damage(r, "%s", err);
    if (rc == 0 && !r->has_details)
        rc = damage(r, "the archive has no replay.details member");
    sc2_extract_free(&x);
    return r->damaged && rc == 0 ? -EBADMSG : rc;
}

int sc2_replay_member(const uint8_t *buf, size_t len, const char *name, recd_buf *out, char *err,
                      size_t errlen)
{
    sc2_replay *r = calloc(1, sizeof *r);
    if (!r)
        return -ENOMEM;
    int rc = sc2_replay_read_header(r, buf, len);
    if (rc == 0)
        rc = check_archive(r, buf, len);
    if (rc < 0) {
        snprintf(err, errlen, "%s", r->err);
        free(r);
        return rc;
    }
    free(r);
    sc2_extract x;
    const char *const names[1] = {name};
    rc = sc2_mpq_extract(buf, len, names, 1, SC2_MEMBER_CAP, &x, err, errlen);
    if (rc == 0) {
        rc = x.status[0];
        if (rc == 0 && out->len == 0) { /* hand the member over instead of copying it */
            recd_buf member = x.data[0];
            x.data[0] = *out;
            *out = member;
        } else if (rc == 0) {
            rc = recd_buf_append(out, x.data[0].data, x.data[0].len);
        }
        else if (rc != -ENOENT)
            snprintf(err, errlen, "%.*s", (int)x.data[0].len, (const char *)x.data[0].data);
    }
    sc2_extract_free(&x);
    return rc;
}

void sc2_replay_free(sc2_replay *r)
{
    recd_buf_free(&r->members);
}
