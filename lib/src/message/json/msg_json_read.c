/* SPDX-License-Identifier: MIT */
/* recd_msg_from_json: one JSON line (hostile input) into a recd_msg. A .rec state takes the
 * tree-free reader (msg_json_fast.c); the rest is parsed by jansson, which checks UTF-8, and
 * this file checks keys, types and ranges and names the offending field. */
#include <errno.h>
#include <string.h>

#include "message/json/msg_json_fast.h"
#include "message/msg_fields.h"
#include "formats/carla/carla_msg.h"
#include "message/msg_recap.h"

#define COMMON_KEYS "type", "session", "seq"

static bool key_in(const char *key, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(key, *list) == 0)
            return true;
    return false;
}

/* The first key of obj that is not in allowed, or NULL. */
static const char *unknown_key(const json_t *obj, const char *const *allowed)
{
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)obj, key, val)
    {
        (void)val;
        if (!key_in(key, allowed))
            return key;
    }
    return NULL;
}

static int err_unknown_key(const char *where, const char *key, char *err, size_t errlen)
{
    char safe[48];
    msg_safe_text(key, strlen(key), safe);
    msg_err(err, errlen, "%s: unknown key \"%s\"", where, safe);
    return -EBADMSG;
}

static int read_rec_group_member(const msg_field *f, const json_t *j, const char *type,
                                 msg_value *v, char *err, size_t errlen)
{
    char why[96], path[48];
    if (msg_read_value(f, j, false, v, why, sizeof why))
        return 0;
    msg_field_path(f, path, sizeof path);
    msg_err(err, errlen, "%s.%s: %s", type, path, why);
    return -EBADMSG;
}

/* Reads group `key` (fields [g, end) share it) from its JSON value. */
static int read_rec_group(const msg_field *fields, size_t g, size_t end, const json_t *j,
                          msg_value *vals, char *err, size_t errlen)
{
    const msg_field *f = &fields[g];
    if (f->index >= 0) {
        if (!json_is_array(j) || json_array_size(j) != (size_t)f->count) {
            msg_err(err, errlen, "state.%s: expected an array of %d numbers, got %s", f->key,
                    f->count, json_is_array(j) ? "another length" : msg_json_type_name(j));
            return -EBADMSG;
        }
        for (size_t i = g; i < end; i++) {
            int rc = read_rec_group_member(&fields[i], json_array_get(j, (size_t)fields[i].index),
                                           "state", &vals[i], err, errlen);
            if (rc < 0)
                return rc;
        }
        return 0;
    }
    if (f->sub) {
        if (!json_is_object(j)) {
            msg_err(err, errlen, "state.%s: expected an object, got %s", f->key,
                    msg_json_type_name(j));
            return -EBADMSG;
        }
        const char *subs[MSG_REC_MAX_FIELDS + 1];
        size_t ns = 0;
        for (size_t i = g; i < end; i++)
            subs[ns++] = fields[i].sub;
        subs[ns] = NULL;
        const char *bad = unknown_key(j, subs);
        if (bad) {
            char where[64];
            snprintf(where, sizeof where, "state.%s", f->key);
            return err_unknown_key(where, bad, err, errlen);
        }
        for (size_t i = g; i < end; i++) {
            json_t *m = json_object_get(j, fields[i].sub);
            if (!m) {
                msg_err(err, errlen, "state.%s: missing key \"%s\"", f->key, fields[i].sub);
                return -EBADMSG;
            }
            int rc = read_rec_group_member(&fields[i], m, "state", &vals[i], err, errlen);
            if (rc < 0)
                return rc;
        }
        return 0;
    }
    return read_rec_group_member(f, j, "state", &vals[g], err, errlen);
}

/* The first field of key's group, or n. The search starts at `from`, a group boundary, and wraps:
 * a line in the canonical field order finds each key at once instead of after a dozen strcmp. */
static size_t find_group(const msg_field *fields, size_t n, const char *key, size_t from)
{
    for (size_t i = from; i < n; i++)
        if (strcmp(fields[i].key, key) == 0)
            return i;
    for (size_t i = 0; i < from; i++)
        if (strcmp(fields[i].key, key) == 0)
            return i;
    return n;
}

static int read_rec_state(const json_t *root, recd_msg *out, char *err, size_t errlen)
{
    static const char *const common_keys[] = {COMMON_KEYS, NULL};
    static const char *const player_keys[] = {COMMON_KEYS, "vehicle_model", "seat", NULL};
    const char *const *extra = out->format == RECD_MSG_FMT_SAMP_VEHICLE &&
                                       out->player.rec_type == RECD_REC_TYPE_VEHICLE
                                   ? player_keys
                                   : common_keys;
    size_t n;
    const msg_field *fields = msg_rec_fields(out->format, &n);
    msg_value vals[MSG_REC_MAX_FIELDS];
    memset(vals, 0, sizeof vals);

    const char *key;
    json_t *val;
    size_t next = 0; /* where the last key's group ended: keys mostly come in field order */
    json_object_foreach((json_t *)root, key, val)
    {
        size_t g = find_group(fields, n, key, next);
        if (g == n) {
            if (key_in(key, extra))
                continue;
            return err_unknown_key("state", key, err, errlen);
        }
        size_t end = g;
        while (end < n && strcmp(fields[end].key, key) == 0)
            end++;
        next = end < n ? end : 0;
        int rc = read_rec_group(fields, g, end, val, vals, err, errlen);
        if (rc < 0)
            return rc;
    }
    int alt_seen[3] = {0, 0, 0};
    const char *alt_key[3] = {NULL, NULL, NULL};
    for (size_t i = 0; i < n; i++) {
        if (fields[i].alt) {
            alt_seen[fields[i].alt] |= vals[i].set;
            alt_key[fields[i].alt] = fields[i].key;
        } else if (!vals[i].set) {
            msg_err(err, errlen, "state: missing key \"%s\" (%s)", fields[i].key,
                    recd_msg_format_name(out->format));
            return -EBADMSG;
        }
    }
    if (alt_key[1] && alt_seen[1] + alt_seen[2] != 1) {
        msg_err(err, errlen, "state: needs exactly one of \"%s\" and \"%s\"", alt_key[1], alt_key[2]);
        return -EBADMSG;
    }
    msg_rec_unflatten(vals, out);
    return 0;
}

static recd_msg_format infer_state_format(const json_t *root)
{
    if (json_object_get(root, "tick"))
        return RECD_MSG_FMT_RECAP;
    if (json_object_get(root, "frame") && json_object_get(root, "elapsed"))
        return RECD_MSG_FMT_CARLA;
    if (json_object_get(root, "vehicle_id"))
        return RECD_MSG_FMT_SAMP_VEHICLE;
    return RECD_MSG_FMT_SAMP_ONFOOT;
}

static int read_int64(const json_t *root, const char *type, const char *key, int64_t min,
                      int64_t *out, bool *present, char *err, size_t errlen);

/* An optional integer key of a samp-player vehicle state, within [min, max]. */
static int read_player_int(const json_t *root, const char *key, int64_t min, int64_t max,
                           int64_t *v, bool *present, char *err, size_t errlen)
{
    int rc = read_int64(root, "state", key, min, v, present, err, errlen);
    if (rc == 0 && *present && *v > max) {
        msg_err(err, errlen, "state.%s: %lld is above %lld", key, (long long)*v, (long long)max);
        return -EBADMSG;
    }
    return rc;
}

/* A samp-player state: a vehicle state when it has "vehicle_id" (which may add "vehicle_model"
 * and "seat"), else an on-foot one. */
static int read_player_state(const json_t *root, recd_msg *out, char *err, size_t errlen)
{
    bool vehicle = json_object_get(root, "vehicle_id") != NULL;
    out->format = vehicle ? RECD_MSG_FMT_SAMP_VEHICLE : RECD_MSG_FMT_SAMP_ONFOOT;
    out->player.rec_type = vehicle ? RECD_REC_TYPE_VEHICLE : RECD_REC_TYPE_ONFOOT;
    int rc = read_rec_state(root, out, err, errlen);
    if (rc == 0 && vehicle) {
        int64_t v;
        bool has;
        if ((rc = read_player_int(root, "vehicle_model", 400, 611, &v, &has, err, errlen)) < 0)
            return rc;
        out->player.has_model = has;
        out->player.vehicle_model = has ? (uint16_t)v : 0;
        if ((rc = read_player_int(root, "seat", 0, 3, &v, &has, err, errlen)) < 0)
            return rc;
        out->player.has_seat = has;
        out->player.seat = has ? (uint8_t)v : 0;
    }
    out->format = RECD_MSG_FMT_SAMP_PLAYER;
    return rc;
}

static int read_int64(const json_t *root, const char *type, const char *key, int64_t min,
                      int64_t *out, bool *present, char *err, size_t errlen)
{
    json_t *j = json_object_get(root, key);
    *present = j != NULL;
    if (!j)
        return 0;
    if (!json_is_integer(j)) {
        msg_err(err, errlen, "%s.%s: expected an integer, got %s", type, key, msg_json_type_name(j));
        return -EBADMSG;
    }
    json_int_t v = json_integer_value(j);
    if (v < min) {
        msg_err(err, errlen, "%s.%s: %lld is below %lld", type, key, (long long)v, (long long)min);
        return -EBADMSG;
    }
    *out = v;
    return 0;
}

/* save: last_ms (1 .. 2^32-1) and label (a session key's rules), both required. */
static int read_save(const json_t *root, recd_msg *out, recd_msg_format session_format, char *err,
                     size_t errlen)
{
    static const char *const keys[] = {COMMON_KEYS, "last_ms", "label", NULL};
    const char *bad = unknown_key(root, keys);
    if (bad)
        return err_unknown_key("save", bad, err, errlen);
    out->format = session_format;
    int64_t last;
    bool has;
    int rc = read_int64(root, "save", "last_ms", 1, &last, &has, err, errlen);
    if (rc < 0)
        return rc;
    if (!has) {
        msg_err(err, errlen, "save: missing key \"last_ms\"");
        return -EBADMSG;
    }
    if (last > UINT32_MAX) {
        msg_err(err, errlen, "save.last_ms: %lld does not fit u32", (long long)last);
        return -EBADMSG;
    }
    json_t *label = json_object_get(root, "label");
    if (!json_is_string(label) ||
        !recd_session_key_valid(json_string_value(label), json_string_length(label))) {
        msg_err(err, errlen, "save.label: %s",
                label ? "not 1..64 bytes of A-Z a-z 0-9 . _ - (not starting with '.')" : "missing");
        return -EBADMSG;
    }
    out->save.last_ms = (uint32_t)last;
    memcpy(out->save.label, json_string_value(label), json_string_length(label) + 1);
    return 0;
}

static bool auth_token_valid(const char *s, size_t len)
{
    if (len == 0 || len > RECD_AUTH_TOKEN_MAX)
        return false;
    for (size_t i = 0; i < len; i++)
        if (s[i] <= 0x20 || s[i] >= 0x7F)
            return false;
    return true;
}

static int read_open(const json_t *root, recd_msg *out, char *err, size_t errlen)
{
    static const char *const allowed[] = {COMMON_KEYS, "format", "start_time", "auth", "resume",
                                          "ring", "recap", "carla", NULL};
    const char *bad = unknown_key(root, allowed);
    if (bad)
        return err_unknown_key("open", bad, err, errlen);
    json_t *fmt = json_object_get(root, "format");
    if (!fmt) {
        msg_err(err, errlen, "open: missing key \"format\"");
        return -EBADMSG;
    }
    if (!json_is_string(fmt)) {
        msg_err(err, errlen, "open.format: expected a string, got %s", msg_json_type_name(fmt));
        return -EBADMSG;
    }
    out->format = recd_msg_format_parse(json_string_value(fmt));
    if (out->format == RECD_MSG_FMT_NONE || strlen(json_string_value(fmt)) != json_string_length(fmt)) {
        char safe[48];
        msg_safe_text(json_string_value(fmt), json_string_length(fmt), safe);
        msg_err(err, errlen, "open.format: \"%s\" is not samp-onfoot, samp-vehicle, recap, carla or "
                             "samp-player", safe);
        return -EBADMSG;
    }
    int rc = read_int64(root, "open", "start_time", INT64_MIN, &out->open.start_time_ms,
                        &out->open.has_start_time, err, errlen);
    if (rc < 0)
        return rc;
    json_t *auth = json_object_get(root, "auth");
    if (auth) {
        if (!json_is_string(auth)) {
            msg_err(err, errlen, "open.auth: expected a string, got %s", msg_json_type_name(auth));
            return -EBADMSG;
        }
        size_t alen = json_string_length(auth);
        if (!auth_token_valid(json_string_value(auth), alen)) {
            msg_err(err, errlen, "open.auth: must be 1..%d printable ASCII bytes without spaces",
                    RECD_AUTH_TOKEN_MAX);
            return -EBADMSG;
        }
        out->open.auth = strdup(json_string_value(auth));
        if (!out->open.auth)
            return -ENOMEM;
    }
    json_t *resume = json_object_get(root, "resume");
    if (resume && !json_is_boolean(resume)) {
        msg_err(err, errlen, "open.resume: expected true or false, got %s", msg_json_type_name(resume));
        return -EBADMSG;
    }
    out->open.resume = resume && json_is_true(resume);
    json_t *ring = json_object_get(root, "ring");
    if (ring && !json_is_boolean(ring)) {
        msg_err(err, errlen, "open.ring: expected true or false, got %s", msg_json_type_name(ring));
        return -EBADMSG;
    }
    out->open.ring = ring && json_is_true(ring);
    json_t *carla = json_object_get(root, "carla");
    if (out->format != RECD_MSG_FMT_CARLA && carla) {
        msg_err(err, errlen, "open.carla: only allowed with format carla");
        return -EBADMSG;
    }
    if (out->format == RECD_MSG_FMT_CARLA) {
        char cwhy[200];
        if (!carla) {
            msg_err(err, errlen, "open: missing key \"carla\" (format carla: map, date, width, ids)");
            return -EBADMSG;
        }
        rc = recd__carla_open_from_json(carla, &out->open.carla, cwhy, sizeof cwhy);
        if (rc == -EBADMSG)
            msg_err(err, errlen, "open.carla%s", cwhy);
        if (rc == 0 && json_object_get(root, "recap")) {
            msg_err(err, errlen, "open.recap: only allowed with format recap");
            return -EBADMSG;
        }
        return rc;
    }
    json_t *recap = json_object_get(root, "recap");
    if (out->format != RECD_MSG_FMT_RECAP) {
        if (recap) {
            msg_err(err, errlen, "open.recap: only allowed with format recap");
            return -EBADMSG;
        }
        return 0;
    }
    if (!recap) {
        msg_err(err, errlen, "open: missing key \"recap\" (format recap)");
        return -EBADMSG;
    }
    char why[200];
    rc = msg_recap_open_from_json(recap, &out->open.recap, why, sizeof why);
    if (rc == -EBADMSG)
        msg_err(err, errlen, "open.recap%s%s", why[0] == ':' ? "" : ".", why);
    return rc;
}

static int read_body(const json_t *root, recd_msg_format session_format, recd_msg *out, char *err,
                     size_t errlen)
{
    static const char *const common[] = {COMMON_KEYS, NULL};
    static const char *const close_keys[] = {COMMON_KEYS, "end_time", NULL};
    static const char *const flush_keys[] = {COMMON_KEYS, "end_tick", NULL};
    int64_t tick = 0;
    const char *bad;
    char why[200];
    int rc;
    switch (out->type) {
    case RECD_MSG_OPEN: return read_open(root, out, err, errlen);
    case RECD_MSG_STATE:
        if (session_format == RECD_MSG_FMT_SAMP_PLAYER)
            return read_player_state(root, out, err, errlen);
        out->format = session_format ? session_format : infer_state_format(root);
        if (out->format == RECD_MSG_FMT_CARLA) {
            rc = recd__carla_state_from_json(root, &out->carla_state, why, sizeof why);
            if (rc == -EBADMSG)
                msg_err(err, errlen, "state%s", why);
            return rc;
        }
        if (out->format != RECD_MSG_FMT_RECAP)
            return read_rec_state(root, out, err, errlen);
        rc = msg_recap_state_from_json(root, common, &out->recap_state, why, sizeof why);
        if (rc == -EBADMSG)
            msg_err(err, errlen, "state%s%s", why[0] == ':' ? "" : ".", why);
        return rc;
    case RECD_MSG_EVENT:
        if (session_format == RECD_MSG_FMT_CARLA ||
            (!session_format && json_object_get(root, "kind"))) {
            out->format = RECD_MSG_FMT_CARLA;
            rc = recd__carla_event_from_json(root, &out->carla_event, why, sizeof why);
            if (rc == -EBADMSG)
                msg_err(err, errlen, "event%s", why);
            return rc;
        }
        if (session_format && session_format != RECD_MSG_FMT_RECAP) {
            msg_err(err, errlen, "event: only recap and carla sessions have events");
            return -EBADMSG;
        }
        out->format = RECD_MSG_FMT_RECAP;
        rc = msg_recap_event_from_json(root, common, &out->recap_event, why, sizeof why);
        if (rc == -EBADMSG)
            msg_err(err, errlen, "event%s%s", why[0] == ':' ? "" : ".", why);
        return rc;
    case RECD_MSG_CLOSE:
        bad = unknown_key(root, close_keys);
        if (bad)
            return err_unknown_key("close", bad, err, errlen);
        out->format = session_format;
        return read_int64(root, "close", "end_time", INT64_MIN, &out->close.end_time_ms,
                          &out->close.has_end_time, err, errlen);
    case RECD_MSG_SAVE: return read_save(root, out, session_format, err, errlen);
    case RECD_MSG_FLUSH:
        bad = unknown_key(root, flush_keys);
        if (bad)
            return err_unknown_key("flush", bad, err, errlen);
        out->format = session_format;
        rc = read_int64(root, "flush", "end_tick", 0, &tick, &out->flush.has_end_tick, err, errlen);
        out->flush.end_tick = (uint64_t)tick;
        return rc;
    default: return -EBADMSG;
    }
}

static int read_common(const json_t *root, recd_msg *out, char *err, size_t errlen)
{
    json_t *type = json_object_get(root, "type");
    if (!type) {
        msg_err(err, errlen, "missing key \"type\"");
        return -EBADMSG;
    }
    if (!json_is_string(type)) {
        msg_err(err, errlen, "type: expected a string, got %s", msg_json_type_name(type));
        return -EBADMSG;
    }
    const char *t = json_string_value(type);
    for (int i = RECD_MSG_OPEN; i <= RECD_MSG_SAVE; i++)
        if (strcmp(t, recd_msg_type_name((recd_msg_type)i)) == 0 &&
            strlen(t) == json_string_length(type))
            out->type = (recd_msg_type)i;
    if (out->type == RECD_MSG_NONE) {
        char safe[48];
        msg_safe_text(t, json_string_length(type), safe);
        msg_err(err, errlen, "type: \"%s\" is not open, state, event, flush, close or save", safe);
        return -EBADMSG;
    }
    const char *tn = recd_msg_type_name(out->type);
    json_t *session = json_object_get(root, "session");
    if (session) {
        if (!json_is_string(session)) {
            msg_err(err, errlen, "%s.session: expected a string, got %s", tn,
                    msg_json_type_name(session));
            return -EBADMSG;
        }
        size_t klen = json_string_length(session);
        if (!recd_session_key_valid(json_string_value(session), klen)) {
            char safe[48];
            msg_safe_text(json_string_value(session), klen, safe);
            msg_err(err, errlen,
                    "%s.session: \"%s\" is not a valid session key (1..%d bytes of A-Z a-z 0-9 . _ -, "
                    "not starting with '.')",
                    tn, safe, RECD_SESSION_KEY_MAX);
            return -EBADMSG;
        }
        memcpy(out->session, json_string_value(session), klen);
        out->session[klen] = 0;
    }
    int64_t seq = 0;
    int rc = read_int64(root, tn, "seq", 0, &seq, &out->has_seq, err, errlen);
    out->seq = (uint64_t)seq;
    return rc;
}

static size_t without_line_end(const char *line, size_t len)
{
    if (len && line[len - 1] == '\n')
        len--;
    if (len && line[len - 1] == '\r')
        len--;
    return len;
}

int recd_msg_from_json(const char *line, size_t len, recd_msg_format session_format, recd_msg *out,
                       char *err, size_t errlen)
{
    /* The hot line (a .rec state) needs no tree; everything else, and every error, goes through
     * jansson so the messages stay what docs/protocol.md shows. */
    size_t body = without_line_end(line, len);
    if (!memchr(line, '\n', body) && msg_json_fast_state(line, body, session_format, out))
        return 0;
    return msg_from_json_jansson(line, len, session_format, out, err, errlen);
}

int msg_from_json_jansson(const char *line, size_t len, recd_msg_format session_format,
                          recd_msg *out, char *err, size_t errlen)
{
    recd_msg_init(out, RECD_MSG_NONE, RECD_MSG_FMT_NONE);
    len = without_line_end(line, len);
    if (memchr(line, '\n', len)) {
        msg_err(err, errlen, "a message must fit on one line");
        return -EBADMSG;
    }
    json_error_t jerr;
    json_t *root = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
    if (!root) {
        msg_err(err, errlen, "invalid JSON at column %d: %s", jerr.column, jerr.text);
        return -EBADMSG;
    }
    int rc = msg_from_json_value(root, session_format, out, err, errlen);
    json_decref(root);
    return rc;
}

int msg_from_json_value(const json_t *root, recd_msg_format session_format, recd_msg *out,
                        char *err, size_t errlen)
{
    recd_msg_init(out, RECD_MSG_NONE, RECD_MSG_FMT_NONE);
    int rc;
    if (!json_is_object(root)) {
        msg_err(err, errlen, "a message must be a JSON object, got %s", msg_json_type_name(root));
        rc = -EBADMSG;
    } else {
        rc = read_common(root, out, err, errlen);
        if (rc == 0)
            rc = read_body(root, session_format, out, err, errlen);
    }
    if (rc == -ENOMEM)
        msg_err(err, errlen, "out of memory");
    if (rc < 0)
        recd_msg_free(out);
    return rc;
}
