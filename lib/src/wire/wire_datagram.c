/* SPDX-License-Identifier: MIT */
/* Datagram input: a datagram is all or nothing. One with several frames or lines is decoded once
 * to check every one (opens inside it count for the states after them) and, only when all are
 * good, decoded again to deliver, so a receiver never applies half a datagram. One with a single
 * frame or line is decoded and delivered in one pass. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/bytes.h"
#include "wire/wire_formats.h"
#include "wire/wire_internal.h"

typedef struct walk {
    const recd_wire_decoder_config *cfg;
    recd_wire_encoding enc;
    size_t max_frame;
    wire_env env;
    bool deliver;
    uint64_t index, offset; /* current frame or line */
    char *err;
    size_t errlen;
} walk;

static int fail(walk *w, int rc, const char *why)
{
    recd_why(w->err, w->errlen, "datagram %s %llu at byte %llu: %s",
             w->enc == RECD_WIRE_NDJSON ? "line" : "frame", (unsigned long long)w->index,
             (unsigned long long)w->offset, why);
    return rc;
}

static int use(walk *w, recd_msg *m, bool has_time)
{
    char why[256];
    why[0] = '\0'; /* not `= ""`: that zeroes all 256 bytes for every datagram */
    int rc = wire_env_after(&w->env, m, why, sizeof why);
    if (rc == 0 && w->deliver && w->cfg->on_msg) {
        recd_wire_meta meta = {w->enc, has_time, w->index, w->offset,
                               wire_msg_movable(m, w->enc == RECD_WIRE_BINARY)};
        rc = w->cfg->on_msg(w->cfg->ctx, m, &meta, why, sizeof why);
        if (rc < 0 && !why[0])
            snprintf(why, sizeof why, "rejected by the receiver: %s", recd_strerror(rc));
    }
    recd_msg_free(m);
    return rc < 0 ? fail(w, rc, why) : 0;
}

/* The block path (see recd_wire_decoder_config.on_rec_state): 1 when the frame was a block state
 * and was taken (or checked, in the check pass), 0 when it still needs decoding. */
static int try_rec(walk *w, const wire_header *h, const uint8_t *body)
{
    char why[256];
    why[0] = '\0';
    if (h->type != WIRE_T_STATE || !w->cfg->on_rec_state)
        return 0;
    recd_wire_rec_state st;
    bool timed;
    int rc = wire_binary_block_state(&w->env, h, body, h->body_len, &st, NULL, &timed, why,
                                     sizeof why);
    if (rc <= 0)
        return rc < 0 ? fail(w, rc, why) : 0;
    if (!w->deliver)
        return 1;
    recd_wire_meta meta = {w->enc, timed, w->index, w->offset, NULL};
    rc = w->cfg->on_rec_state(w->cfg->ctx, &st, &meta, why, sizeof why);
    if (rc < 0 && !why[0])
        snprintf(why, sizeof why, "rejected by the receiver: %s", recd_strerror(rc));
    return rc < 0 ? fail(w, rc, why) : 1;
}

static int walk_binary(walk *w, const uint8_t *data, size_t len)
{
    char why[256];
    size_t pos = 0;
    while (pos < len) {
        w->index++;
        w->offset = pos;
        size_t avail = len - pos;
        wire_header h;
        int rc = wire_header_check(data + pos, avail < 8 ? avail : 8, w->max_frame, false, &h, why,
                                   sizeof why);
        if (rc < 0)
            return fail(w, rc, why);
        if (avail < RECD_WIRE_HEADER_SIZE || avail - RECD_WIRE_HEADER_SIZE < h.body_len) {
            snprintf(why, sizeof why, "truncated frame (%lu bytes left in the datagram)",
                     (unsigned long)avail);
            return fail(w, -EPROTO, why);
        }
        const uint8_t *body = data + pos + RECD_WIRE_HEADER_SIZE;
        pos += RECD_WIRE_HEADER_SIZE + (size_t)h.body_len;
        if ((rc = try_rec(w, &h, body)) != 0) {
            if (rc < 0)
                return rc;
            continue;
        }
        recd_msg m;
        bool has_time;
        rc = wire_binary_decode(&w->env, &h, body, h.body_len, &m, &has_time, why, sizeof why);
        if (rc < 0)
            return fail(w, rc, why);
        if ((rc = use(w, &m, has_time)) < 0)
            return rc;
    }
    return 0;
}

static int walk_ndjson(walk *w, const uint8_t *data, size_t len)
{
    char why[256];
    size_t pos = 0;
    while (pos < len) {
        w->index++;
        w->offset = pos;
        const uint8_t *nl = memchr(data + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (data + pos)) : len - pos;
        if (n > w->max_frame) {
            snprintf(why, sizeof why, "line longer than the limit of %lu bytes",
                     (unsigned long)w->max_frame);
            return fail(w, -EMSGSIZE, why);
        }
        recd_msg m;
        int rc = wire_ndjson_decode(&w->env, data + pos, n, &m, why, sizeof why);
        if (rc < 0)
            return fail(w, rc, why);
        if (rc == 0 && (rc = use(w, &m, true)) < 0)
            return rc;
        pos += n + (nl ? 1 : 0);
    }
    return 0;
}

static int run(walk *w, const uint8_t *data, size_t len)
{
    w->index = w->offset = 0;
    memset(w->env.prev, 0, sizeof w->env.prev);
    w->env.prev_len = 0;
    wire_sessions_clear(&w->env.local);
    return w->enc == RECD_WIRE_BINARY ? walk_binary(w, data, len) : walk_ndjson(w, data, len);
}

/* True when the datagram holds one frame or line: nothing can be half applied, so the checking
 * pass is skipped (most game servers send one sample per datagram). */
static bool single_message(const walk *w, const uint8_t *data, size_t len)
{
    if (w->enc == RECD_WIRE_BINARY)
        return len >= RECD_WIRE_HEADER_SIZE && RECD_WIRE_HEADER_SIZE + (uint64_t)ld_le32(data + 4) == len;
    const uint8_t *nl = memchr(data, '\n', len);
    return !nl || nl == data + len - 1;
}

int recd_wire_decode_datagram(const recd_wire_decoder_config *cfg, const uint8_t *data, size_t len,
                              char *err, size_t errlen)
{
    recd_wire_reason noted;
    return recd_wire_decode_datagram_noted(cfg, data, len, err, errlen, &noted);
}

int recd_wire_decode_datagram_noted(const recd_wire_decoder_config *cfg, const uint8_t *data,
                                    size_t len, char *err, size_t errlen, recd_wire_reason *noted)
{
    *noted = RECD_WIRE_REASON_NONE;
    if (!cfg || cfg->encoding > RECD_WIRE_NDJSON)
        return -EINVAL;
    if (!len)
        return 0;
    walk w = {cfg, cfg->encoding, wire_max_frame(cfg->max_frame), {0}, false, 0, 0, err, errlen};
    w.env.format_of = cfg->format_of;
    w.env.ctx = cfg->ctx;
    w.env.datagram = true;
    if (w.enc == RECD_WIRE_AUTO) {
        uint8_t c = data[0];
        if (c == RECD_WIRE_MAGIC)
            w.enc = RECD_WIRE_BINARY;
        else if (c == '{' || c == ' ' || c == '\t' || c == '\r' || c == '\n')
            w.enc = RECD_WIRE_NDJSON;
        else {
            recd_why(err, errlen,
                     "datagram starts with byte 0x%02X: neither a binary frame (0xD7) nor an "
                     "NDJSON line ('{')",
                     c);
            return -EPROTO;
        }
    }
    w.deliver = single_message(&w, data, len);
    int rc = run(&w, data, len);
    if (rc == 0 && !w.deliver) {
        w.deliver = true;
        rc = run(&w, data, len);
    }
    wire_sessions_free(&w.env.local);
    if (rc < 0)
        *noted = w.env.noted;
    return rc;
}
