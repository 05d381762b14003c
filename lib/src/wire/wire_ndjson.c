/* SPDX-License-Identifier: MIT */
/* NDJSON on the wire: one recd_msg JSON line per message, read and written by the message
 * module's own JSON mapping; this file adds only the wire rules (UTF-8 check, session
 * continuation, the session's format for state and event lines, the line length bound). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "base/text.h"
#include "base/why.h"
#include "wire/wire_internal.h"

static bool blank(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return false;
    return true;
}

static int fill_session(wire_env *env, recd_msg *m, char *why, size_t whylen)
{
    if (m->session[0])
        return 0;
    if (env->datagram) {
        recd_why(why, whylen, "%s: \"session\" is required in a datagram",
                 recd_msg_type_name(m->type));
        return -EBADMSG;
    }
    if (!env->prev[0]) {
        recd_why(why, whylen, "%s: no \"session\" and no earlier line on this connection named one",
                 recd_msg_type_name(m->type));
        return -EBADMSG;
    }
    memcpy(m->session, env->prev, sizeof m->session);
    return 0;
}

/* A state or event line that did not parse with the format guessed from its keys: say so when its
 * session is unknown, else parse it as its session's format for the error that matters. */
static int retry_with_session_format(wire_env *env, const uint8_t *line, size_t len, recd_msg *m,
                                     char *why, size_t whylen, int rc)
{
    json_t *root = json_loadb((const char *)line, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
    json_t *type = root ? json_object_get(root, "type") : NULL;
    json_t *session = root ? json_object_get(root, "session") : NULL;
    if (!root)
        env->noted = RECD_WIRE_REASON_SYNTAX;
    const char *t = json_is_string(type) ? json_string_value(type) : "";
    char key[RECD_SESSION_KEY_MAX + 1] = "";
    bool usable = strcmp(t, "state") == 0 || strcmp(t, "event") == 0;
    if (usable && json_is_string(session)) {
        size_t klen = json_string_length(session);
        usable = recd_session_key_valid(json_string_value(session), klen);
        if (usable)
            memcpy(key, json_string_value(session), klen + 1);
    } else if (usable) {
        usable = !session && !env->datagram && env->prev[0];
        memcpy(key, env->prev, sizeof key);
    }
    char tname[8];
    snprintf(tname, sizeof tname, "%s", t);
    json_decref(root);
    if (!usable)
        return rc;
    void *handle;
    recd_msg_format f = wire_env_format(env, key, strlen(key), &handle);
    if (f == RECD_MSG_FMT_NONE) {
        recd_why(why, whylen, "%s for unknown session '%s' (no open seen for it)", tname, key);
        env->noted = RECD_WIRE_REASON_UNKNOWN_SESSION;
        return -EBADMSG;
    }
    return recd_msg_from_json((const char *)line, len, f, m, why, whylen);
}

int wire_ndjson_decode(wire_env *env, const uint8_t *line, size_t len, recd_msg *m, char *why,
                       size_t whylen)
{
    if (blank(line, len))
        return 1;
    if (!text_utf8_valid(line, len)) {
        recd_why(why, whylen, "invalid UTF-8");
        env->noted = RECD_WIRE_REASON_SYNTAX;
        return -EBADMSG;
    }
    /* The session (and so its format) is only known after parsing: parse with the format inferred
     * from the keys, and again with the session's own format only when they differ. */
    int rc = recd_msg_from_json((const char *)line, len, RECD_MSG_FMT_NONE, m, why, whylen);
    if (rc == -EBADMSG)
        rc = retry_with_session_format(env, line, len, m, why, whylen, rc);
    if (rc < 0)
        return rc;
    if ((rc = fill_session(env, m, why, whylen)) < 0) {
        recd_msg_free(m);
        return rc;
    }
    if (m->type == RECD_MSG_OPEN)
        return 0;
    void *handle;
    recd_msg_format f = wire_env_format(env, m->session, strlen(m->session), &handle);
    if (m->type == RECD_MSG_FLUSH || m->type == RECD_MSG_CLOSE || m->type == RECD_MSG_SAVE) {
        m->format = f;
        return 0;
    }
    if (f == RECD_MSG_FMT_NONE) {
        recd_why(why, whylen, "%s for unknown session '%s' (no open seen for it)",
                 recd_msg_type_name(m->type), m->session);
        env->noted = RECD_WIRE_REASON_UNKNOWN_SESSION;
        recd_msg_free(m);
        return -EBADMSG;
    }
    if (f == m->format)
        return 0;
    char session[sizeof m->session];
    memcpy(session, m->session, sizeof session);
    recd_msg_free(m);
    rc = recd_msg_from_json((const char *)line, len, f, m, why, whylen);
    if (rc == 0)
        memcpy(m->session, session, sizeof session);
    return rc;
}

int wire_ndjson_encode(const recd_msg *m, size_t max_frame, bool omit_key, recd_buf *out)
{
    size_t klen = strnlen(m->session, sizeof m->session);
    if (!omit_key && !recd_session_key_valid(m->session, klen))
        return -EINVAL;
    recd_msg view = *m; /* shallow: recd_msg_to_json only reads */
    if (omit_key)
        view.session[0] = 0;
    size_t start = out->len;
    int rc = recd_msg_to_json(&view, out);
    if (rc < 0)
        return rc;
    if (out->len - start - 1 > wire_max_frame(max_frame)) {
        out->len = start;
        return -EMSGSIZE;
    }
    return 0;
}
