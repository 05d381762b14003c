/* SPDX-License-Identifier: MIT */
/* recd_msg_from_json: one JSON line (hostile input) into a recd_msg. The hot line may take its
 * format's tree-free reader (the json hooks' fast_state); the rest is parsed by jansson, which
 * checks UTF-8, and this file checks keys, types and ranges and names the offending field. What a
 * format reads (its open key, states, events) comes from its descriptor's JSON hooks
 * (msg_json_formats.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "message/json/msg_json_formats.h"
#include "base/json_text.h"
#include "base/text.h"
#include "base/why.h"
#include "message/json/msg_json.h"
#include "recd/format_list.h"

#define COMMON_KEYS MSG_JSON_COMMON_KEYS

/* save: last_ms (1 .. 2^32-1) and label (a session key's rules), both required. */
static int read_save(const json_t *root, recd_msg *out, recd_msg_format session_format, char *err,
                     size_t errlen)
{
    static const char *const keys[] = {COMMON_KEYS, "last_ms", "label", NULL};
    const char *bad = json_text_unknown_key(root, keys);
    if (bad)
        return json_text_err_unknown_key("save", bad, err, errlen);
    out->format = session_format;
    int64_t last;
    bool has;
    int rc = json_text_read_int64(root, "save", "last_ms", 1, &last, &has, err, errlen);
    if (rc < 0)
        return rc;
    if (!has) {
        recd_why(err, errlen, "save: missing key \"last_ms\"");
        return -EBADMSG;
    }
    if (last > UINT32_MAX) {
        recd_why(err, errlen, "save.last_ms: %lld does not fit u32", (long long)last);
        return -EBADMSG;
    }
    json_t *label = json_object_get(root, "label");
    if (!json_is_string(label) ||
        !recd_session_key_valid(json_string_value(label), json_string_length(label))) {
        recd_why(err, errlen, "save.label: %s",
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

/* A format's own key of the open: its json hooks' open_key. */
static bool is_open_key(const char *key)
{
    for (size_t i = 0; i < recd_format__all_count(); i++) {
        const struct recd_format_json *j = recd_format__all_at(i)->json;
        if (j && j->open_key && strcmp(j->open_key, key) == 0)
            return true;
    }
    return false;
}

/* The first key of the open that neither every open nor any format may have, or NULL. */
static const char *unknown_open_key(const json_t *root)
{
    static const char *const allowed[] = {COMMON_KEYS, "format", "start_time", "auth", "resume",
                                          "ring", NULL};
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)root, key, val)
    {
        (void)val;
        if (!json_text_key_in(key, allowed) && !is_open_key(key))
            return key;
    }
    return NULL;
}

/* "open.format: \"x\" is not A, B or C": the message formats' names in their enum order. */
static int unknown_format_err(const char *safe, char *err, size_t errlen)
{
    char names[160] = "";
    size_t n = 0, count = 0;
    for (int f = RECD_MSG_FMT_NONE + 1; f < RECD_MSG_FORMAT_SLOTS; f++)
        count += recd_format__by_msg((recd_msg_format)f) != NULL;
    for (int f = RECD_MSG_FMT_NONE + 1, k = 0; f < RECD_MSG_FORMAT_SLOTS; f++) {
        const recd_format *d = recd_format__by_msg((recd_msg_format)f);
        if (!d)
            continue;
        const char *sep = k == 0 ? "" : (size_t)k + 1 == count ? " or " : ", ";
        int w = snprintf(names + n, sizeof names - n, "%s%s", sep, d->name);
        if (w > 0 && (size_t)w < sizeof names - n)
            n += (size_t)w;
        k++;
    }
    recd_why(err, errlen, "open.format: \"%s\" is not %s", safe, names);
    return -EBADMSG;
}

static int read_open(const json_t *root, recd_msg *out, char *err, size_t errlen)
{
    const char *bad = unknown_open_key(root);
    if (bad)
        return json_text_err_unknown_key("open", bad, err, errlen);
    json_t *fmt = json_object_get(root, "format");
    if (!fmt) {
        recd_why(err, errlen, "open: missing key \"format\"");
        return -EBADMSG;
    }
    if (!json_is_string(fmt)) {
        recd_why(err, errlen, "open.format: expected a string, got %s", json_text_type_name(fmt));
        return -EBADMSG;
    }
    out->format = recd_msg_format_parse(json_string_value(fmt));
    if (out->format == RECD_MSG_FMT_NONE || strlen(json_string_value(fmt)) != json_string_length(fmt)) {
        char safe[48];
        text_safe_excerpt(json_string_value(fmt), json_string_length(fmt), safe);
        return unknown_format_err(safe, err, errlen);
    }
    int rc = json_text_read_int64(root, "open", "start_time", INT64_MIN, &out->open.start_time_ms,
                        &out->open.has_start_time, err, errlen);
    if (rc < 0)
        return rc;
    json_t *auth = json_object_get(root, "auth");
    if (auth) {
        if (!json_is_string(auth)) {
            recd_why(err, errlen, "open.auth: expected a string, got %s", json_text_type_name(auth));
            return -EBADMSG;
        }
        size_t alen = json_string_length(auth);
        if (!auth_token_valid(json_string_value(auth), alen)) {
            recd_why(err, errlen, "open.auth: must be 1..%d printable ASCII bytes without spaces",
                     RECD_AUTH_TOKEN_MAX);
            return -EBADMSG;
        }
        out->open.auth = strdup(json_string_value(auth));
        if (!out->open.auth)
            return -ENOMEM;
    }
    json_t *resume = json_object_get(root, "resume");
    if (resume && !json_is_boolean(resume)) {
        recd_why(err, errlen, "open.resume: expected true or false, got %s", json_text_type_name(resume));
        return -EBADMSG;
    }
    out->open.resume = resume && json_is_true(resume);
    json_t *ring = json_object_get(root, "ring");
    if (ring && !json_is_boolean(ring)) {
        recd_why(err, errlen, "open.ring: expected true or false, got %s", json_text_type_name(ring));
        return -EBADMSG;
    }
    out->open.ring = ring && json_is_true(ring);
    /* Each format's own key: read for the open's format, refused for any other. Checked from
     * the end of the format list down (the order the error for two foreign keys has had). */
    const recd_format *f;
    for (size_t i = 0; (f = msg_json_format_back(i)) != NULL; i++) {
        const struct recd_format_json *e = f->json;
        if (!e->open_key)
            continue;
        if (f->msg_format == out->format) {
            if ((rc = e->open_read(root, out, err, errlen)) != 0)
                return rc;
        } else if (json_object_get(root, e->open_key)) {
            recd_why(err, errlen, "open.%s: only allowed with format %s", e->open_key, f->name);
            return -EBADMSG;
        }
    }
    return 0;
}

static bool msg_json_has_events(const recd_format *f)
{
    return f->json && f->json->event_read;
}

/* "event: only A and B sessions have events", the formats with events named from the list. */
static int event_formats_err(char *err, size_t errlen)
{
    char names[128] = "";
    size_t n = 0, count = 0;
    for (size_t i = 0; i < recd_format__all_count(); i++)
        count += msg_json_has_events(recd_format__all_at(i));
    for (size_t i = 0, k = 0; i < recd_format__all_count(); i++) {
        const recd_format *f = recd_format__all_at(i);
        if (!msg_json_has_events(f))
            continue;
        const char *sep = k == 0 ? "" : k + 1 == count ? " and " : ", ";
        int w = snprintf(names + n, sizeof names - n, "%s%s", sep, f->name);
        if (w > 0 && (size_t)w < sizeof names - n)
            n += (size_t)w;
        k++;
    }
    recd_why(err, errlen, "event: only %s sessions have events", names);
    return -EBADMSG;
}

static int read_body(const json_t *root, recd_msg_format session_format, recd_msg *out, char *err,
                     size_t errlen)
{
    static const char *const close_keys[] = {COMMON_KEYS, "end_time", NULL};
    static const char *const flush_keys[] = {COMMON_KEYS, "end_tick", NULL};
    int64_t tick = 0;
    const char *bad;
    const recd_format *f;
    int rc;
    switch (out->type) {
    case RECD_MSG_OPEN: return read_open(root, out, err, errlen);
    case RECD_MSG_STATE:
        /* An unknown session format reads a state as one without a session (by its keys). */
        if (!(f = msg_json_format_of(session_format)))
            f = msg_json_state_sniff(root);
        return f->json->state_read(root, out, err, errlen);
    case RECD_MSG_EVENT:
        f = session_format ? msg_json_format_of(session_format) : msg_json_event_sniff(root);
        if (!f || !f->json->event_read)
            return event_formats_err(err, errlen);
        return f->json->event_read(root, out, err, errlen);
    case RECD_MSG_CLOSE:
        bad = json_text_unknown_key(root, close_keys);
        if (bad)
            return json_text_err_unknown_key("close", bad, err, errlen);
        out->format = session_format;
        return json_text_read_int64(root, "close", "end_time", INT64_MIN, &out->close.end_time_ms,
                          &out->close.has_end_time, err, errlen);
    case RECD_MSG_SAVE: return read_save(root, out, session_format, err, errlen);
    case RECD_MSG_FLUSH:
        bad = json_text_unknown_key(root, flush_keys);
        if (bad)
            return json_text_err_unknown_key("flush", bad, err, errlen);
        out->format = session_format;
        rc = json_text_read_int64(root, "flush", "end_tick", 0, &tick, &out->flush.has_end_tick, err, errlen);
        out->flush.end_tick = (uint64_t)tick;
        return rc;
    default: return -EBADMSG;
    }
}

static int read_common(const json_t *root, recd_msg *out, char *err, size_t errlen)
{
    json_t *type = json_object_get(root, "type");
    if (!type) {
        recd_why(err, errlen, "missing key \"type\"");
        return -EBADMSG;
    }
    if (!json_is_string(type)) {
        recd_why(err, errlen, "type: expected a string, got %s", json_text_type_name(type));
        return -EBADMSG;
    }
    const char *t = json_string_value(type);
    for (int i = RECD_MSG_OPEN; i <= RECD_MSG_SAVE; i++)
        if (strcmp(t, recd_msg_type_name((recd_msg_type)i)) == 0 &&
            strlen(t) == json_string_length(type))
            out->type = (recd_msg_type)i;
    if (out->type == RECD_MSG_NONE) {
        char safe[48];
        text_safe_excerpt(t, json_string_length(type), safe);
        recd_why(err, errlen, "type: \"%s\" is not open, state, event, flush, close or save", safe);
        return -EBADMSG;
    }
    const char *tn = recd_msg_type_name(out->type);
    json_t *session = json_object_get(root, "session");
    if (session) {
        if (!json_is_string(session)) {
            recd_why(err, errlen, "%s.session: expected a string, got %s", tn,
                     json_text_type_name(session));
            return -EBADMSG;
        }
        size_t klen = json_string_length(session);
        if (!recd_session_key_valid(json_string_value(session), klen)) {
            char safe[48];
            text_safe_excerpt(json_string_value(session), klen, safe);
            recd_why(err, errlen,
                     "%s.session: \"%s\" is not a valid session key (1..%d bytes of A-Z a-z 0-9 . _ -, "
                     "not starting with '.')",
                     tn, safe, RECD_SESSION_KEY_MAX);
            return -EBADMSG;
        }
        memcpy(out->session, json_string_value(session), klen);
        out->session[klen] = 0;
    }
    int64_t seq = 0;
    int rc = json_text_read_int64(root, tn, "seq", 0, &seq, &out->has_seq, err, errlen);
    out->seq = (uint64_t)seq;
    json_t *save = json_object_get(root, "save");
    if (rc == 0 && save) {
        if (out->type != RECD_MSG_STATE && out->type != RECD_MSG_EVENT) {
            recd_why(err, errlen, "%s.save: only a state or an event carries the save flag", tn);
            return -EBADMSG;
        }
        if (!json_is_boolean(save)) {
            recd_why(err, errlen, "%s.save: expected true or false, got %s", tn,
                     json_text_type_name(save));
            return -EBADMSG;
        }
        out->save_now = json_is_true(save);
    }
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
    /* The hot line (a state its format's fast reader takes) needs no tree; everything else, and
     * every error, goes through jansson so the messages stay what docs/protocol.md shows. */
    size_t body = without_line_end(line, len);
    msg_json_fast_fn fast = msg_json_fast_reader(session_format);
    if (fast && fast(line, body, session_format, out)) /* it declines a line with a '\n' */
        return 0;
    return msg_from_json_jansson(line, len, session_format, out, err, errlen);
}

int msg_from_json_jansson(const char *line, size_t len, recd_msg_format session_format,
                          recd_msg *out, char *err, size_t errlen)
{
    recd_msg_init(out, RECD_MSG_NONE, RECD_MSG_FMT_NONE);
    len = without_line_end(line, len);
    if (memchr(line, '\n', len)) {
        recd_why(err, errlen, "a message must fit on one line");
        return -EBADMSG;
    }
    json_error_t jerr;
    json_t *root = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
    if (!root) {
        recd_why(err, errlen, "invalid JSON at column %d: %s", jerr.column, jerr.text);
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
        recd_why(err, errlen, "a message must be a JSON object, got %s", json_text_type_name(root));
        rc = -EBADMSG;
    } else {
        rc = read_common(root, out, err, errlen);
        if (rc == 0)
            rc = read_body(root, session_format, out, err, errlen);
    }
    if (rc == -ENOMEM)
        recd_why(err, errlen, "out of memory");
    if (rc < 0)
        recd_msg_free(out);
    return rc;
}
