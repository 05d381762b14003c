/* SPDX-License-Identifier: MIT */
/* recd_msg_to_json: one message as one JSON line. Written by hand (not through jansson) so that
 * floats get the shortest text that reads back to the same f32 bits. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "message/msg_fields.h"
#include "formats/carla/carla_msg.h"
#include "message/msg_recap.h"

static int put_int(recd_buf *out, int64_t v) { return msg_buf_put_i64(out, v); }

/* ,"key": in one append. */
static int put_key(recd_buf *out, const char *key)
{
    size_t n = strlen(key);
    int rc = recd_buf_reserve(out, n + 4);
    if (rc < 0)
        return rc;
    char *p = (char *)out->data + out->len;
    p[0] = ',';
    p[1] = '"';
    memcpy(p + 2, key, n);
    p[n + 2] = '"';
    p[n + 3] = ':';
    out->len += n + 4;
    return 0;
}

/* Adjacent fields of one group share the key text (often the same pointer). */
static bool same_key(const char *a, const char *b) { return a == b || (a[0] == b[0] && strcmp(a, b) == 0); }

static int put_value(recd_buf *out, const msg_field *f, const msg_value *v)
{
    if (f->type == MF_F32)
        return msg_buf_put_f32(out, v->f) < 0 ? -EINVAL : 0;
    if (v->i < msg_field_min(f) || v->i > msg_field_max(f))
        return -EINVAL;
    if (f->type == MF_BOOL)
        return msg_buf_puts(out, v->i ? "true" : "false");
    return put_int(out, v->i);
}

/* Fields that share a key form a group: a JSON array (index >= 0) or object (sub != NULL). */
static int put_rec_fields(recd_buf *out, const recd_msg *m)
{
    size_t n;
    const msg_field *fields = msg_rec_fields(m->format, &n);
    if (!fields)
        return -EINVAL;
    msg_value vals[MSG_REC_MAX_FIELDS];
    msg_rec_flatten(m, vals);
    int rc = 0;
    bool next_first = true; /* the key of fields[i] differs from the one before */
    for (size_t i = 0; i < n && rc == 0; i++) {
        const msg_field *f = &fields[i];
        bool first = next_first;
        bool last = i + 1 == n || !same_key(fields[i + 1].key, f->key);
        next_first = last;
        if (!vals[i].set)
            continue;
        if (first)
            rc = put_key(out, f->key);
        if (rc == 0 && first && f->index >= 0)
            rc = recd_buf_append(out, "[", 1);
        if (rc == 0 && first && f->sub)
            rc = recd_buf_append(out, "{", 1);
        if (rc == 0 && !first)
            rc = recd_buf_append(out, ",", 1);
        if (rc == 0 && f->sub) {
            rc = recd_buf_append(out, "\"", 1);
            if (rc == 0)
                rc = msg_buf_puts(out, f->sub);
            if (rc == 0)
                rc = recd_buf_append(out, "\":", 2);
        }
        if (rc == 0)
            rc = put_value(out, f, &vals[i]);
        if (rc == 0 && last && f->index >= 0)
            rc = recd_buf_append(out, "]", 1);
        if (rc == 0 && last && f->sub)
            rc = recd_buf_append(out, "}", 1);
    }
    return rc;
}

static int put_open(recd_buf *out, const recd_msg *m)
{
    const char *fmt = recd_msg_format_name(m->format);
    if (!*fmt)
        return -EINVAL;
    int rc = put_key(out, "format");
    if (rc == 0)
        rc = msg_json_append_string(out, fmt, strlen(fmt));
    if (rc == 0 && m->open.has_start_time) {
        rc = put_key(out, "start_time");
        if (rc == 0)
            rc = put_int(out, m->open.start_time_ms);
    }
    if (rc == 0 && m->open.auth) {
        rc = put_key(out, "auth");
        if (rc == 0)
            rc = msg_json_append_string(out, m->open.auth, strlen(m->open.auth));
    }
    if (rc == 0 && m->open.resume && (rc = put_key(out, "resume")) == 0)
        rc = msg_buf_puts(out, "true");
    if (rc == 0 && m->open.ring && (rc = put_key(out, "ring")) == 0)
        rc = msg_buf_puts(out, "true");
    if (rc == 0 && m->format == RECD_MSG_FMT_RECAP) {
        if (!m->open.recap)
            return -EINVAL;
        rc = put_key(out, "recap");
        if (rc == 0)
            rc = msg_recap_open_to_json(m->open.recap, out);
    }
    if (rc == 0 && m->format == RECD_MSG_FMT_CARLA) {
        if (!m->open.carla)
            return -EINVAL;
        rc = put_key(out, "carla");
        if (rc == 0)
            rc = recd__carla_open_to_json(m->open.carla, out);
    }
    return rc;
}

static int put_body(recd_buf *out, const recd_msg *m, unsigned omit)
{
    switch (m->type) {
    case RECD_MSG_OPEN: return put_open(out, m);
    case RECD_MSG_STATE:
        if (m->format == RECD_MSG_FMT_RECAP)
            return m->recap_state ? msg_recap_state_to_json(m->recap_state, out) : -EINVAL;
        if (m->format == RECD_MSG_FMT_CARLA)
            return m->carla_state ? recd__carla_state_to_json(m->carla_state, out) : -EINVAL;
        return put_rec_fields(out, m);
    case RECD_MSG_EVENT:
        if (m->format == RECD_MSG_FMT_CARLA)
            return m->carla_event ? recd__carla_event_to_json(m->carla_event, out) : -EINVAL;
        return m->recap_event ? msg_recap_event_to_json(m->recap_event, !(omit & MSG_OMIT_TICK), out)
                              : -EINVAL;
    case RECD_MSG_SAVE: {
        size_t n = strnlen(m->save.label, sizeof m->save.label);
        if (!m->save.last_ms || !recd_session_key_valid(m->save.label, n))
            return -EINVAL;
        int rc = put_key(out, "last_ms");
        if (rc == 0)
            rc = put_int(out, m->save.last_ms);
        if (rc == 0)
            rc = put_key(out, "label");
        return rc == 0 ? msg_json_append_string(out, m->save.label, n) : rc;
    }
    case RECD_MSG_CLOSE:
        if (m->close.has_end_time) {
            int rc = put_key(out, "end_time");
            return rc == 0 ? put_int(out, m->close.end_time_ms) : rc;
        }
        return 0;
    case RECD_MSG_FLUSH:
        if (m->flush.has_end_tick) {
            if (m->flush.end_tick > INT64_MAX)
                return -EINVAL;
            int rc = put_key(out, "end_tick");
            return rc == 0 ? put_int(out, (int64_t)m->flush.end_tick) : rc;
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
    int rc = msg_buf_puts(out, "{");
    if (rc == 0 && !(omit & MSG_OMIT_TYPE)) {
        rc = msg_buf_puts(out, "\"type\":\"");
        if (rc == 0)
            rc = msg_buf_puts(out, type);
        if (rc == 0)
            rc = msg_buf_puts(out, "\"");
    }
    if (rc == 0 && m->session[0]) {
        size_t klen = strnlen(m->session, sizeof m->session);
        if (!recd_session_key_valid(m->session, klen))
            rc = -EINVAL;
        else if ((rc = put_key(out, "session")) == 0)
            rc = msg_json_append_string(out, m->session, klen);
    }
    if (rc == 0 && m->has_seq) {
        if (m->seq > INT64_MAX)
            rc = -EINVAL;
        else if ((rc = put_key(out, "seq")) == 0)
            rc = put_int(out, (int64_t)m->seq);
    }
    if (rc == 0)
        rc = put_body(out, m, omit);
    if (rc == 0)
        rc = msg_buf_puts(out, "}");
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
    if (rc == 0 && (rc = msg_buf_puts(out, "\n")) < 0)
        out->len = start;
    return rc;
}
