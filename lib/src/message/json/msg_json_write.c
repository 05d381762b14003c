/* SPDX-License-Identifier: MIT */
/* recd_msg_to_json: one message as one JSON line. Written by hand (not through jansson) so that
 * floats get the shortest text that reads back to the same f32 bits. A format's open key, states
 * and events are written by its entry in the JSON format table (msg_json_formats.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "message/json/msg_json_formats.h"
#include "base/json_text.h"
#include "base/text.h"
#include "message/json/msg_json.h"

static int put_open(recd_buf *out, const recd_msg *m)
{
    const char *fmt = recd_msg_format_name(m->format);
    if (!*fmt)
        return -EINVAL;
    int rc = json_text_put_key(out, "format");
    if (rc == 0)
        rc = text_put_json_string(out, fmt, strlen(fmt));
    if (rc == 0 && m->open.has_start_time) {
        rc = json_text_put_key(out, "start_time");
        if (rc == 0)
            rc = text_put_i64(out, m->open.start_time_ms);
    }
    if (rc == 0 && m->open.auth) {
        rc = json_text_put_key(out, "auth");
        if (rc == 0)
            rc = text_put_json_string(out, m->open.auth, strlen(m->open.auth));
    }
    if (rc == 0 && m->open.resume && (rc = json_text_put_key(out, "resume")) == 0)
        rc = text_puts(out, "true");
    if (rc == 0 && m->open.ring && (rc = json_text_put_key(out, "ring")) == 0)
        rc = text_puts(out, "true");
    const recd_format *f = msg_json_format_of(m->format);
    if (rc == 0 && f && f->json->open_write)
        rc = f->json->open_write(m, out);
    return rc;
}

static int put_body(recd_buf *out, const recd_msg *m, unsigned omit)
{
    const recd_format *f = msg_json_format_of_msg(m);
    const struct recd_format_json *e = f ? f->json : NULL;
    switch (m->type) {
    case RECD_MSG_OPEN: return put_open(out, m);
    case RECD_MSG_STATE: return e && e->state_write ? e->state_write(m, out) : -EINVAL;
    case RECD_MSG_EVENT:
        return e && e->event_write ? e->event_write(m, !(omit & MSG_OMIT_TICK), out) : -EINVAL;
    case RECD_MSG_SAVE: {
        size_t n = strnlen(m->save.label, sizeof m->save.label);
        if (!m->save.last_ms || !recd_session_key_valid(m->save.label, n))
            return -EINVAL;
        int rc = json_text_put_key(out, "last_ms");
        if (rc == 0)
            rc = text_put_i64(out, m->save.last_ms);
        if (rc == 0)
            rc = json_text_put_key(out, "label");
        return rc == 0 ? text_put_json_string(out, m->save.label, n) : rc;
    }
    case RECD_MSG_CLOSE:
        if (m->close.has_end_time) {
            int rc = json_text_put_key(out, "end_time");
            return rc == 0 ? text_put_i64(out, m->close.end_time_ms) : rc;
        }
        return 0;
    case RECD_MSG_FLUSH:
        if (m->flush.has_end_tick) {
            if (m->flush.end_tick > INT64_MAX)
                return -EINVAL;
            int rc = json_text_put_key(out, "end_tick");
            return rc == 0 ? text_put_i64(out, (int64_t)m->flush.end_tick) : rc;
        }
        return 0;
    default: return -EINVAL;
    }
}

int msg_json_object(const recd_msg *m, recd_buf *out, unsigned omit)
{
    const char *type = recd_msg_type_name(m->type);
    if (!*type)
        return -EINVAL;
    size_t start = out->len;
    int rc = text_puts(out, "{");
    if (rc == 0 && !(omit & MSG_OMIT_TYPE)) {
        rc = text_puts(out, "\"type\":\"");
        if (rc == 0)
            rc = text_puts(out, type);
        if (rc == 0)
            rc = text_puts(out, "\"");
    }
    if (rc == 0 && m->session[0]) {
        size_t klen = strnlen(m->session, sizeof m->session);
        if (!recd_session_key_valid(m->session, klen))
            rc = -EINVAL;
        else if ((rc = json_text_put_key(out, "session")) == 0)
            rc = text_put_json_string(out, m->session, klen);
    }
    if (rc == 0 && m->has_seq) {
        if (m->seq > INT64_MAX)
            rc = -EINVAL;
        else if ((rc = json_text_put_key(out, "seq")) == 0)
            rc = text_put_i64(out, (int64_t)m->seq);
    }
    if (rc == 0 && m->save_now && (m->type == RECD_MSG_STATE || m->type == RECD_MSG_EVENT) &&
        (rc = json_text_put_key(out, "save")) == 0)
        rc = text_puts(out, "true");
    if (rc == 0)
        rc = put_body(out, m, omit);
    if (rc == 0)
        rc = text_puts(out, "}");
    if (rc < 0) {
        out->len = start;
        return rc;
    }
    if (out->data[start + 1] == ',') { /* no "type" went first: drop the comma of the next key */
        memmove(out->data + start + 1, out->data + start + 2, out->len - start - 2);
        out->len--;
    }
    return 0;
}

int recd_msg_to_json(const recd_msg *m, recd_buf *out)
{
    size_t start = out->len;
    int rc = msg_json_object(m, out, 0);
    if (rc == 0 && (rc = text_puts(out, "\n")) < 0)
        out->len = start;
    return rc;
}
