/* SPDX-License-Identifier: MIT */
/* recd_msg -> one binary frame: header, session key, optional seq and time, per-type payload.
 * The body length is patched in at the end; on any error the output is rolled back. A payload is
 * written by the message format's wire hooks (wire_formats.h). */
#include <errno.h>
#include <string.h>

#include "base/bytes.h"
#include "wire/wire_formats.h"
#include "wire/wire_internal.h"

static int put(recd_buf *out, const void *p, size_t n) { return recd_buf_append(out, p, n); }

static int put_u8(recd_buf *out, uint8_t v) { return put(out, &v, 1); }

static int put_u64(recd_buf *out, uint64_t v)
{
    uint8_t b[8];
    st_le64(b, v);
    return put(out, b, 8);
}

static uint8_t frame_type(recd_msg_type t)
{
    switch (t) {
    case RECD_MSG_OPEN: return WIRE_T_OPEN;
    case RECD_MSG_STATE: return WIRE_T_STATE;
    case RECD_MSG_EVENT: return WIRE_T_EVENT;
    case RECD_MSG_FLUSH: return WIRE_T_FLUSH;
    case RECD_MSG_CLOSE: return WIRE_T_CLOSE;
    case RECD_MSG_SAVE: return WIRE_T_SAVE;
    default: return 0;
    }
}

static bool token_valid(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7F)
            return false;
    return true;
}

static int put_open(const wire_format *ops, const recd_msg *m, recd_buf *out)
{
    if (!ops)
        return -EINVAL;
    size_t tlen = m->open.auth ? strlen(m->open.auth) : 0;
    if (tlen > 255 || !token_valid(m->open.auth, tlen))
        return -EINVAL; /* the binary token length is one byte */
    int rc = put_u8(out, ops->code);
    if (rc == 0)
        rc = put_u64(out, m->open.has_start_time ? (uint64_t)m->open.start_time_ms : 0);
    if (rc == 0)
        rc = put_u8(out, (uint8_t)tlen);
    if (rc == 0)
        rc = put(out, m->open.auth, tlen);
    if (rc == 0 && ops->open_write)
        rc = ops->open_write(m, out);
    return rc;
}

/* The time a STATE or EVENT carries, as its format's hooks say. */
static int message_time(const wire_format *ops, const recd_msg *m, uint64_t *t)
{
    *t = 0;
    if (ops && ops->msg_time(m, t) < 0) /* no entry: the payload is refused below */
        return -EINVAL;
    return *t > INT64_MAX ? -EINVAL : 0;
}

static int put_body(const wire_format *ops, const recd_msg *m, recd_buf *out)
{
    switch (m->type) {
    case RECD_MSG_OPEN: return put_open(ops, m, out);
    case RECD_MSG_STATE: return ops ? ops->state_write(m, out) : -EINVAL;
    case RECD_MSG_EVENT: return ops && ops->event_write ? ops->event_write(m, out) : -EINVAL;
    case RECD_MSG_FLUSH:
        if (!m->flush.has_end_tick)
            return 0;
        return m->flush.end_tick > INT64_MAX ? -EINVAL : put_u64(out, m->flush.end_tick);
    case RECD_MSG_CLOSE:
        return m->close.has_end_time ? put_u64(out, (uint64_t)m->close.end_time_ms) : 0;
    case RECD_MSG_SAVE: {
        size_t n = strnlen(m->save.label, sizeof m->save.label);
        uint8_t head[5] = {(uint8_t)m->save.last_ms, (uint8_t)(m->save.last_ms >> 8),
                           (uint8_t)(m->save.last_ms >> 16), (uint8_t)(m->save.last_ms >> 24),
                           (uint8_t)n};
        if (!m->save.last_ms || !recd_session_key_valid(m->save.label, n))
            return -EINVAL;
        int rc = put(out, head, sizeof head);
        return rc ? rc : put(out, m->save.label, n);
    }
    default: return -EINVAL;
    }
}

int wire_binary_encode(const recd_msg *m, size_t max_frame, bool omit_key, bool with_time,
                       recd_buf *out)
{
    uint8_t type = frame_type(m->type);
    bool timed = with_time && (m->type == RECD_MSG_STATE || m->type == RECD_MSG_EVENT);
    size_t klen = strnlen(m->session, sizeof m->session);
    uint64_t time = 0;
    const wire_format *ops = wire_format_of_msg(m);
    if (!type || (!omit_key && !recd_session_key_valid(m->session, klen)))
        return -EINVAL;
    if ((m->has_seq && m->seq > INT64_MAX) || (timed && message_time(ops, m, &time) < 0))
        return -EINVAL;
    if (m->type == RECD_MSG_EVENT && !(ops && ops->event_write))
        return -EINVAL;
    size_t start = out->len;
    uint8_t hdr[RECD_WIRE_HEADER_SIZE] = {RECD_WIRE_MAGIC, RECD_WIRE_VERSION, type,
                                          (uint8_t)((m->has_seq ? WIRE_F_SEQ : 0) |
                                                    (timed ? WIRE_F_TIME : 0) |
                                                    (m->type == RECD_MSG_OPEN && m->open.resume
                                                         ? WIRE_F_RESUME
                                                         : 0) |
                                                    (m->type == RECD_MSG_OPEN && m->open.ring
                                                         ? WIRE_F_RING
                                                         : 0) |
                                                    (m->save_now && (m->type == RECD_MSG_STATE ||
                                                                     m->type == RECD_MSG_EVENT)
                                                         ? WIRE_F_SAVE
                                                         : 0)),
                                          0, 0, 0, 0};
    int rc = put(out, hdr, sizeof hdr);
    if (rc == 0)
        rc = put_u8(out, omit_key ? 0 : (uint8_t)klen);
    if (rc == 0 && !omit_key)
        rc = put(out, m->session, klen);
    if (rc == 0 && m->has_seq)
        rc = put_u64(out, m->seq);
    if (rc == 0 && timed)
        rc = put_u64(out, time);
    if (rc == 0)
        rc = put_body(ops, m, out);
    size_t body = rc == 0 ? out->len - start - RECD_WIRE_HEADER_SIZE : 0;
    if (rc == 0 && (body > wire_max_frame(max_frame) || body > UINT32_MAX))
        rc = -EMSGSIZE;
    if (rc < 0) {
        out->len = start;
        return rc;
    }
    st_le32(out->data + start + 4, (uint32_t)body);
    return 0;
}
