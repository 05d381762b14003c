/* SPDX-License-Identifier: MIT */
/* Binary frame body -> recd_msg: session key (or continuation), seq, time and the per-type
 * payload, every length checked against the body. The header was checked by wire_header_check.
 * A payload is read by the session format's wire hooks (wire_formats.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "wire/wire_formats.h"
#include "wire/wire_internal.h"

typedef struct reader {
    const uint8_t *p;
    size_t len, pos;
} reader;

static size_t left(const reader *r) { return r->len - r->pos; }

static bool take(reader *r, size_t n, const uint8_t **out)
{
    if (left(r) < n)
        return false;
    *out = r->p + r->pos;
    r->pos += n;
    return true;
}

/* Printable copy of untrusted bytes for an error message. */
static void safe_copy(const uint8_t *s, size_t n, char out[48])
{
    size_t k = n > 40 ? 40 : n;
    for (size_t i = 0; i < k; i++)
        out[i] = (s[i] >= 0x20 && s[i] < 0x7F && s[i] != '\'') ? (char)s[i] : '?';
    strcpy(out + k, n > k ? "..." : "");
}

static int truncated(const char *what, char *why, size_t whylen)
{
    recd_why(why, whylen, "%s: body ends inside the payload", what);
    return -EBADMSG;
}

/* The key's bytes against the key rules: 0, or -EBADMSG with why written. */
static int check_key(const char *key, size_t len, char *why, size_t whylen)
{
    if (recd_session_key_valid(key, len)) /* NUL is not a key byte */
        return 0;
    char safe[48];
    safe_copy((const uint8_t *)key, len, safe);
    recd_why(why, whylen,
             "session key '%s' (%zu bytes) is invalid: 1..%d bytes of A-Z a-z 0-9 . _ -, "
             "not starting with '.'",
             safe, len, RECD_SESSION_KEY_MAX);
    return -EBADMSG;
}

/* The frame's session key, not copied: *key points at its bytes in the frame, or at the previous
 * frame's key for key_len 0. Its bytes are checked unless the caller checks them itself (check
 * false); the previous frame's key was checked when it was read. */
static int read_key(const wire_env *env, reader *r, bool check, const char **key,
                    size_t *key_len, char *why, size_t whylen)
{
    const uint8_t *klen, *k;
    if (!take(r, 1, &klen))
        return truncated("frame", why, whylen);
    if (*klen == 0) {
        if (env->datagram) {
            recd_why(why, whylen, "key_len 0: a frame in a datagram must name its session");
            return -EBADMSG;
        }
        if (!env->prev[0]) {
            recd_why(why, whylen, "key_len 0 but no earlier frame on this connection named a session");
            return -EBADMSG;
        }
        *key = env->prev;
        *key_len = env->prev_len;
        return 0;
    }
    if (!take(r, *klen, &k))
        return truncated("session key", why, whylen);
    if (check && check_key((const char *)k, *klen, why, whylen) < 0)
        return -EBADMSG; /* *key stays unset: the caller copies only a key it was given */
    *key = (const char *)k;
    *key_len = *klen;
    return 0;
}

static bool token_valid(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] <= 0x20 || s[i] >= 0x7F)
            return false;
    return true;
}

static int read_open(reader *r, recd_msg *m, char *why, size_t whylen)
{
    const uint8_t *fmt, *start, *tlen, *tok;
    if (!take(r, 1, &fmt) || !take(r, 8, &start) || !take(r, 1, &tlen))
        return truncated("open", why, whylen);
    const wire_format *ops = wire_format_by_code(*fmt);
    if (!ops) {
        char codes[256];
        wire_format_codes_text(codes, sizeof codes);
        recd_why(why, whylen, "open: unknown format %u (%s)", *fmt, codes);
        return -EBADMSG;
    }
    m->format = ops->format;
    int64_t st = (int64_t)ld_le64(start);
    m->open.has_start_time = st != 0;
    m->open.start_time_ms = st;
    if (!take(r, *tlen, &tok))
        return truncated("open.auth", why, whylen);
    if (*tlen) {
        if (!token_valid(tok, *tlen)) {
            recd_why(why, whylen, "open.auth: must be printable ASCII without spaces");
            return -EBADMSG;
        }
        if (!(m->open.auth = malloc((size_t)*tlen + 1)))
            return -ENOMEM;
        memcpy(m->open.auth, tok, *tlen);
        m->open.auth[*tlen] = 0;
    }
    return ops->open_read(r->p + r->pos, left(r), m, why, whylen);
}

/* save: u32 last_ms (1 or more), u8 label_len, label (a session key's rules). */
static int read_save(reader *r, recd_msg *m, char *why, size_t whylen)
{
    const uint8_t *last, *llen, *label;
    if (!take(r, 4, &last) || !take(r, 1, &llen) || !take(r, *llen, &label))
        return truncated("save", why, whylen);
    if (left(r)) {
        recd_why(why, whylen, "save: %lu bytes after the label", (unsigned long)left(r));
        return -EBADMSG;
    }
    m->save.last_ms = ld_le32(last);
    if (m->save.last_ms == 0) {
        recd_why(why, whylen, "save: last_ms is 0");
        return -EBADMSG;
    }
    if (*llen > RECD_SESSION_KEY_MAX || !recd_session_key_valid((const char *)label, *llen)) {
        recd_why(why, whylen, "save: the label is not 1..64 bytes of A-Z a-z 0-9 . _ - (not "
                              "starting with '.')");
        return -EBADMSG;
    }
    memcpy(m->save.label, label, *llen);
    m->save.label[*llen] = 0;
    return 0;
}

static int read_optional_u64(reader *r, const char *what, uint64_t *v, bool *has, char *why,
                             size_t whylen)
{
    const uint8_t *p;
    *has = false;
    if (left(r) == 0)
        return 0;
    if (left(r) != 8 || !take(r, 8, &p)) {
        recd_why(why, whylen, "%s: payload is %lu bytes (0 or 8 expected)", what,
                 (unsigned long)left(r));
        return -EBADMSG;
    }
    *v = ld_le64(p);
    *has = true;
    return 0;
}

static int unknown_session(wire_env *env, const char *what, const char *session, char *why,
                           size_t whylen)
{
    env->noted = RECD_WIRE_REASON_UNKNOWN_SESSION;
    recd_why(why, whylen, "%s for unknown session '%s' (no open seen for it)", what, session);
    return -EBADMSG;
}

static int read_payload(wire_env *env, reader *r, uint64_t time, recd_msg *m, size_t key_len,
                        char *why, size_t whylen)
{
    uint64_t v;
    bool has;
    int rc;
    void *handle;
    const wire_format *ops;
    switch (m->type) {
    case RECD_MSG_OPEN: return read_open(r, m, why, whylen);
    case RECD_MSG_STATE:
        m->format = wire_env_format(env, m->session, key_len, &handle);
        if (!(ops = wire_format_of(m->format)))
            return unknown_session(env, "state", m->session, why, whylen);
        return ops->state_read(r->p + r->pos, left(r), time, m, why, whylen);
    case RECD_MSG_EVENT:
        m->format = wire_env_format(env, m->session, key_len, &handle);
        if (!(ops = wire_format_of(m->format)))
            return unknown_session(env, "event", m->session, why, whylen);
        if (!ops->event_read) {
            char names[128];
            wire_format_event_names(names, sizeof names);
            recd_why(why, whylen, "event for %s session '%s': only %s sessions have events",
                     recd_msg_format_name(m->format), m->session, names);
            return -EBADMSG;
        }
        return ops->event_read(r->p + r->pos, left(r), time, m, why, whylen);
    case RECD_MSG_FLUSH:
        m->format = wire_env_format(env, m->session, key_len, &handle);
        rc = read_optional_u64(r, "flush", &v, &has, why, whylen);
        if (rc == 0 && has && v > INT64_MAX) {
            recd_why(why, whylen, "flush: end_tick above 2^63-1");
            rc = -EBADMSG;
        }
        m->flush.has_end_tick = has;
        m->flush.end_tick = has ? v : 0;
        return rc;
    case RECD_MSG_CLOSE:
        m->format = wire_env_format(env, m->session, key_len, &handle);
        rc = read_optional_u64(r, "close", &v, &has, why, whylen);
        m->close.has_end_time = has;
        m->close.end_time_ms = has ? (int64_t)v : 0;
        return rc;
    case RECD_MSG_SAVE:
        m->format = wire_env_format(env, m->session, key_len, &handle);
        return read_save(r, m, why, whylen);
    default: return -EPROTO;
    }
}

/* Everything before the payload: key (or continuation), seq and time. */
typedef struct frame_head {
    const char *key;
    size_t key_len;
    bool has_seq, timed;
    uint64_t seq, time;
} frame_head;

/* Reads it; check_key_bytes as read_key()'s check. */
static int read_head(const wire_env *env, const wire_header *h, reader *r, bool check_key_bytes,
                     frame_head *fh, char *why, size_t whylen)
{
    const uint8_t *p;
    *fh = (frame_head){0};
    int rc = read_key(env, r, check_key_bytes, &fh->key, &fh->key_len, why, whylen);
    if (rc < 0)
        return rc;
    if (h->flags & WIRE_F_SEQ) {
        fh->has_seq = true;
        if (!take(r, 8, &p))
            return truncated("seq", why, whylen);
        if ((fh->seq = ld_le64(p)) > INT64_MAX) {
            recd_why(why, whylen, "seq above 2^63-1");
            return -EBADMSG;
        }
    }
    if (h->flags & WIRE_F_TIME) {
        fh->timed = true;
        if (!take(r, 8, &p))
            return truncated("time", why, whylen);
        if ((fh->time = ld_le64(p)) > INT64_MAX) {
            recd_why(why, whylen, "time above 2^63-1");
            return -EBADMSG;
        }
    }
    return 0;
}

/* Bytes that may be read from the frame's key on (the previous key is a whole buffer). */
static size_t readable_from_key(const wire_env *env, const frame_head *fh, const reader *r)
{
    if (fh->key == env->prev)
        return sizeof env->prev;
    return (size_t)(r->p + r->len - (const uint8_t *)fh->key);
}

static int check_type(const wire_header *h, char *why, size_t whylen)
{
    if (h->type >= WIRE_T_OPEN && h->type <= WIRE_T_SAVE)
        return 0;
    recd_why(why, whylen, "frame type %u is not a client message", h->type);
    return -EPROTO;
}

/* What a frame's decoding returns once its payload was read with rc: m is freed on failure. */
static int payload_read(wire_env *env, recd_msg *m, int rc, char *why, size_t whylen)
{
    if (rc == -EILSEQ) { /* a payload's text is not UTF-8 (wire_recap.c) */
        env->noted = RECD_WIRE_REASON_SYNTAX;
        rc = -EBADMSG;
    }
    if (rc < 0)
        recd_msg_free(m);
    if (rc == -ENOMEM)
        recd_why(why, whylen, "out of memory");
    return rc;
}

int wire_binary_decode(wire_env *env, const wire_header *h, const uint8_t *body, size_t len,
                       recd_msg *m, bool *has_time, char *why, size_t whylen)
{
    static const recd_msg_type types[] = {RECD_MSG_NONE, RECD_MSG_OPEN, RECD_MSG_STATE,
                                          RECD_MSG_EVENT, RECD_MSG_FLUSH, RECD_MSG_CLOSE,
                                          RECD_MSG_SAVE};
    int rc = check_type(h, why, whylen);
    if (rc < 0)
        return rc;
    recd_msg_init(m, types[h->type], RECD_MSG_FMT_NONE);
    reader r = {body, len, 0};
    frame_head fh;
    rc = read_head(env, h, &r, true, &fh, why, whylen);
    if (fh.key)
        wire_key_copy(m->session, fh.key, fh.key_len, readable_from_key(env, &fh, &r));
    m->has_seq = fh.has_seq;
    m->seq = fh.seq;
    m->save_now = (h->flags & WIRE_F_SAVE) != 0;
    /* Only a state or event can lack a time that the receiver then has to stamp. */
    *has_time = fh.timed || (m->type != RECD_MSG_STATE && m->type != RECD_MSG_EVENT);
    if (rc == 0)
        rc = read_payload(env, &r, fh.time, m, fh.key_len, why, whylen);
    if (rc == 0 && m->type == RECD_MSG_OPEN)
    {
        m->open.resume = (h->flags & WIRE_F_RESUME) != 0;
        m->open.ring = (h->flags & WIRE_F_RING) != 0;
    }
    return payload_read(env, m, rc, why, whylen);
}

/* A STATE frame of a session whose format has no block path, its head read and its key vouched
 * for by the receiver: decoded as wire_binary_decode would, without reading the head or looking
 * the session up again. */
static int state_after_head(wire_env *env, const wire_header *h, reader *r, const frame_head *fh,
                            recd_msg_format f, const wire_format *ops, void *handle, recd_msg *m,
                            bool *has_time, char *why, size_t whylen)
{
    recd_msg_init(m, RECD_MSG_STATE, f);
    wire_key_copy(m->session, fh->key, fh->key_len, readable_from_key(env, fh, r));
    m->has_seq = fh->has_seq;
    m->seq = fh->seq;
    m->save_now = (h->flags & WIRE_F_SAVE) != 0;
    *has_time = fh->timed;
    /* The session's spare block, when its format reads into one (wire_lend.h). */
    void *lent = ops->state_read_lent && env->lend ? env->lend(env->ctx, handle) : NULL;
    int rc = lent ? ops->state_read_lent(r->p + r->pos, left(r), fh->time, lent, m, why, whylen)
                  : ops->state_read(r->p + r->pos, left(r), fh->time, m, why, whylen);
    return payload_read(env, m, rc, why, whylen);
}

int wire_binary_block_state(wire_env *env, const wire_header *h, const uint8_t *body, size_t len,
                          recd_wire_rec_state *out, recd_msg *m, bool *has_time, char *why,
                          size_t whylen)
{
    reader r = {body, len, 0};
    frame_head fh;
    /* The key's bytes are checked only when the receiver does not vouch for them (below), but
     * its error still comes first, as on the recd_msg path. */
    int rc = read_head(env, h, &r, false, &fh, why, whylen);
    if (rc < 0) {
        if (fh.key && check_key(fh.key, fh.key_len, why, whylen) < 0)
            return -EBADMSG;
        return rc;
    }
    /* The lookup reads the key where it lies in the frame: a copy read back at once stalls on
     * store forwarding behind every store still waiting for its cache line. */
    void *handle;
    recd_msg_format f = wire_env_format(env, fh.key, fh.key_len, &handle);
    const wire_format *ops = wire_format_of(f);
    /* A handle is the receiver's own record of a session it holds, opened under a key that was
     * checked then: these bytes equal that key. Checking them again was 7 % of this path. The
     * length is still bounded here: the copies below must not depend on the receiver. */
    bool vouched = handle && ops && fh.key_len <= RECD_SESSION_KEY_MAX;
    if (!vouched && (rc = check_key(fh.key, fh.key_len, why, whylen)) < 0)
        return rc;
    if (!ops) {
        char key[RECD_SESSION_KEY_MAX + 1];
        wire_key_copy(key, fh.key, fh.key_len, 0);
        return unknown_session(env, "state", key, why, whylen);
    }
    if (!ops->block_len) {
        if (!m || !vouched)
            return 0;
        rc = state_after_head(env, h, &r, &fh, f, ops, handle, m, has_time, why, whylen);
        return rc < 0 ? rc : 2;
    }
    const uint8_t *fields = r.p + r.pos;
    if ((rc = wire_block_check(ops, fields, left(&r), fh.time, why, whylen)) < 0)
        return rc;
    *out = (recd_wire_rec_state){
        .key = fh.key,
        .key_len = fh.key_len,
        .handle = handle,
        .format = f,
        .has_seq = fh.has_seq,
        .save_now = (h->flags & WIRE_F_SAVE) != 0,
        .seq = fh.seq,
        .time_ms = (uint32_t)fh.time,
        .fields = fields,
        .block_len = ops->block_len,
    };
    *has_time = fh.timed;
    wire_env_note_session(env, fh.key, fh.key_len, readable_from_key(env, &fh, &r));
    return 1;
}

int recd_wire_rec_state_msg(const recd_wire_rec_state *s, recd_msg *m)
{
    const wire_format *ops = wire_format_of(s->format);
    if (!ops || !ops->block_len || !s->fields || s->block_len != ops->block_len ||
        !s->key || !recd_session_key_valid(s->key, s->key_len))
        return -EINVAL;
    recd_msg_init(m, RECD_MSG_STATE, s->format);
    memcpy(m->session, s->key, s->key_len);
    m->session[s->key_len] = 0;
    m->has_seq = s->has_seq;
    m->save_now = s->save_now;
    m->seq = s->seq;
    ops->block_decode(s->time_ms, s->fields, m);
    return 0;
}
