/* SPDX-License-Identifier: MIT */
/* The incremental stream decoder: detects the encoding, cuts the byte stream into frames or lines
 * without rescanning (a partial message is copied once, complete ones are decoded in place),
 * delivers messages in order and stops for good at the first protocol error. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "wire/wire_formats.h"
#include "wire/wire_internal.h"

#define KEEP_BUFFER_BYTES 4096u /* larger partial-message buffers are released once used */
#define MIN_BUFFER_BYTES 256u   /* a partial sample frame fits the first allocation */

struct recd_wire_decoder {
    recd_wire_decoder_config cfg;
    size_t max_frame;
    recd_wire_encoding enc;
    wire_env env;
    recd_buf pending; /* the start of the current frame or line, when it is incomplete */
    uint64_t offset;  /* stream offset of the current frame or line */
    uint64_t units;   /* frames or lines completed */
    int failed;
    char failure[320];
};

int recd_wire_decoder_new(recd_wire_decoder **out, const recd_wire_decoder_config *cfg)
{
    *out = NULL;
    if (!cfg || cfg->encoding > RECD_WIRE_NDJSON)
        return -EINVAL;
    recd_wire_decoder *d = calloc(1, sizeof *d);
    if (!d)
        return -ENOMEM;
    d->cfg = *cfg;
    d->max_frame = wire_max_frame(cfg->max_frame);
    d->enc = cfg->encoding;
    d->env.format_of = cfg->format_of;
    d->env.ctx = cfg->ctx;
    *out = d;
    return 0;
}

void recd_wire_decoder_free(recd_wire_decoder *d)
{
    if (!d)
        return;
    recd_buf_free(&d->pending);
    wire_sessions_free(&d->env.local);
    free(d);
}

void recd_wire__decoder_set_lend(recd_wire_decoder *d, recd_wire_lend_fn lend) { d->env.lend = lend; }

void recd_wire_decoder_set_max_frame(recd_wire_decoder *d, size_t max_frame)
{
    d->max_frame = wire_max_frame(max_frame);
}

recd_wire_encoding recd_wire_decoder_encoding(const recd_wire_decoder *d) { return d->enc; }
size_t recd_wire_decoder_pending(const recd_wire_decoder *d) { return d->pending.len; }

recd_wire_reason recd_wire_decoder_reason(const recd_wire_decoder *d)
{
    return d->failed ? d->env.noted : RECD_WIRE_REASON_NONE;
}

static const char *unit_name(const recd_wire_decoder *d)
{
    return d->enc == RECD_WIRE_NDJSON ? "line" : "frame";
}

/* Records the first error, prefixed with where it happened. */
static int fail(recd_wire_decoder *d, int rc, const char *why)
{
    snprintf(d->failure, sizeof d->failure, "%s %llu at byte %llu: %s", unit_name(d),
             (unsigned long long)(d->units + 1), (unsigned long long)d->offset, why);
    d->failed = rc;
    return rc;
}

static int report(const recd_wire_decoder *d, char *err, size_t errlen)
{
    recd_why(err, errlen, "%s", d->failure);
    return d->failed;
}

/* Hands one decoded message over and advances past its bytes. */
static int deliver(recd_wire_decoder *d, recd_msg *m, bool has_time, size_t consumed)
{
    char why[256];
    why[0] = '\0'; /* not `= ""`: that zeroes all 256 bytes for every message */
    int rc = wire_env_after(&d->env, m, why, sizeof why);
    if (rc == 0 && d->cfg.on_msg) {
        recd_wire_meta meta = {d->enc, has_time, d->units + 1, d->offset,
                               wire_msg_movable(m, d->enc == RECD_WIRE_BINARY)};
        rc = d->cfg.on_msg(d->cfg.ctx, m, &meta, why, sizeof why);
        if (rc < 0 && !why[0])
            snprintf(why, sizeof why, "rejected by the receiver: %s", recd_strerror(rc));
    }
    recd_msg_free(m); /* returns at once when the receiver took it */
    if (rc < 0)
        return fail(d, rc, why);
    d->units++;
    d->offset += consumed;
    return 0;
}

/* The block path: a bare-block state goes to on_rec_state as its block. */
static int deliver_rec(recd_wire_decoder *d, const recd_wire_rec_state *st, bool has_time,
                       size_t consumed)
{
    char why[256];
    why[0] = '\0'; /* 16 stores per sample otherwise, queued behind the batch's cache misses */
    recd_wire_meta meta = {d->enc, has_time, d->units + 1, d->offset, NULL};
    int rc = d->cfg.on_rec_state(d->cfg.ctx, st, &meta, why, sizeof why);
    if (rc < 0) {
        if (!why[0])
            snprintf(why, sizeof why, "rejected by the receiver: %s", recd_strerror(rc));
        return fail(d, rc, why);
    }
    d->units++;
    d->offset += consumed;
    return 0;
}

/* A whole frame whose header h was checked. */
static int process_frame(recd_wire_decoder *d, const wire_header *h, const uint8_t *frame,
                         size_t total)
{
    char why[256];
    recd_msg m;
    bool has_time;
    if (h->type == WIRE_T_STATE && d->cfg.on_rec_state) {
        recd_wire_rec_state st;
        int rc = wire_binary_block_state(&d->env, h, frame + RECD_WIRE_HEADER_SIZE,
                                         total - RECD_WIRE_HEADER_SIZE, &st, &m, &has_time, why,
                                         sizeof why);
        if (rc < 0)
            return fail(d, rc, why);
        if (rc == 1)
            return deliver_rec(d, &st, has_time, total);
        if (rc == 2)
            return deliver(d, &m, has_time, total);
    }
    int rc = wire_binary_decode(&d->env, h, frame + RECD_WIRE_HEADER_SIZE,
                                total - RECD_WIRE_HEADER_SIZE, &m, &has_time, why, sizeof why);
    if (rc < 0)
        return fail(d, rc, why);
    return deliver(d, &m, has_time, total);
}

static int check_header(recd_wire_decoder *d, const uint8_t *p, size_t avail, wire_header *h)
{
    char why[256];
    int rc = wire_header_check(p, avail, d->max_frame, false, h, why, sizeof why);
    return rc < 0 ? fail(d, rc, why) : 0;
}

static void release_pending(recd_wire_decoder *d)
{
    if (d->pending.cap > KEEP_BUFFER_BYTES)
        recd_buf_free(&d->pending);
    else
        recd_buf_reset(&d->pending);
}

static int buffer(recd_wire_decoder *d, const uint8_t *p, size_t n)
{
    int rc = recd_buf_append(&d->pending, p, n);
    return rc < 0 ? fail(d, rc, "out of memory") : 0;
}

/* Appends n bytes of an unfinished frame of `whole` bytes (its header's size while that is
 * incomplete). The buffer grows to twice the bytes received, so the copying stays linear, and
 * never past the frame: a header alone does not allocate the size it announces, so what the
 * decoder holds stays within twice what was received (plus MIN_BUFFER_BYTES). A frame whose
 * first half has arrived gets its whole size at once: no realloc copies it when the rest comes. */
static int buffer_frame(recd_wire_decoder *d, const uint8_t *p, size_t n, size_t whole)
{
    recd_buf *b = &d->pending;
    size_t need = b->len + n;
    if (need > b->cap) {
        size_t cap = need > whole / 2 ? whole : 2 * need;
        cap = cap < MIN_BUFFER_BYTES ? MIN_BUFFER_BYTES : cap;
        cap = cap > whole ? whole : cap;
        cap = cap < need ? need : cap;
        uint8_t *grown = realloc(b->data, cap);
        if (!grown)
            return fail(d, -ENOMEM, "out of memory");
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len = need;
    return 0;
}

static int feed_binary(recd_wire_decoder *d, const uint8_t *data, size_t len)
{
    wire_header h;
    int rc;
    while (len) {
        if (d->pending.len == 0) {
            /* Whole frames straight from the caller's bytes. */
            while (len >= RECD_WIRE_HEADER_SIZE) {
                if ((rc = check_header(d, data, RECD_WIRE_HEADER_SIZE, &h)) < 0)
                    return rc;
                size_t total = RECD_WIRE_HEADER_SIZE + (size_t)h.body_len;
                if (len < total)
                    break;
                if ((rc = process_frame(d, &h, data, total)) < 0)
                    return rc;
                data += total;
                len -= total;
            }
            if (!len)
                return 0;
            size_t avail = len < RECD_WIRE_HEADER_SIZE ? len : RECD_WIRE_HEADER_SIZE;
            if ((rc = check_header(d, data, avail, &h)) < 0)
                return rc;
            return buffer_frame(d, data, len,
                                avail == RECD_WIRE_HEADER_SIZE
                                    ? RECD_WIRE_HEADER_SIZE + (size_t)h.body_len
                                    : RECD_WIRE_HEADER_SIZE);
        }
        /* Complete the buffered header, then the buffered body. */
        size_t take;
        if (d->pending.len < RECD_WIRE_HEADER_SIZE) {
            take = RECD_WIRE_HEADER_SIZE - d->pending.len;
            take = take < len ? take : len;
            if ((rc = buffer_frame(d, data, take, RECD_WIRE_HEADER_SIZE)) < 0)
                return rc;
            data += take;
            len -= take;
            if ((rc = check_header(d, d->pending.data, d->pending.len, &h)) < 0)
                return rc;
            if (d->pending.len < RECD_WIRE_HEADER_SIZE)
                return 0;
        }
        size_t total = RECD_WIRE_HEADER_SIZE + (size_t)ld_le32(d->pending.data + 4);
        take = total - d->pending.len;
        take = take < len ? take : len;
        if ((rc = buffer_frame(d, data, take, total)) < 0)
            return rc;
        data += take;
        len -= take;
        if (d->pending.len == total) {
            wire_header_check(d->pending.data, RECD_WIRE_HEADER_SIZE, d->max_frame, false, &h,
                              NULL, 0); /* checked when it arrived: this only reads it back */
            rc = process_frame(d, &h, d->pending.data, total);
            release_pending(d);
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

static int process_line(recd_wire_decoder *d, const uint8_t *line, size_t n, size_t consumed)
{
    char why[256];
    recd_msg m;
    int rc = wire_ndjson_decode(&d->env, line, n, &m, why, sizeof why);
    if (rc < 0)
        return fail(d, rc, why);
    if (rc == 1) { /* blank line */
        d->units++;
        d->offset += consumed;
        return 0;
    }
    return deliver(d, &m, true, consumed);
}

static int line_too_long(recd_wire_decoder *d)
{
    char why[96];
    snprintf(why, sizeof why, "line longer than the limit of %lu bytes", (unsigned long)d->max_frame);
    return fail(d, -EMSGSIZE, why);
}

static int feed_ndjson(recd_wire_decoder *d, const uint8_t *data, size_t len)
{
    int rc;
    while (len) {
        const uint8_t *nl = memchr(data, '\n', len);
        size_t piece = nl ? (size_t)(nl - data) : len;
        if (d->pending.len > d->max_frame || piece > d->max_frame - d->pending.len) /* lowered */
            return line_too_long(d);
        if (!nl)
            return buffer(d, data, len);
        if (d->pending.len == 0) {
            rc = process_line(d, data, piece, piece + 1);
        } else {
            if ((rc = buffer(d, data, piece)) < 0)
                return rc;
            rc = process_line(d, d->pending.data, d->pending.len, d->pending.len + 1);
            release_pending(d);
        }
        if (rc < 0)
            return rc;
        data += piece + 1;
        len -= piece + 1;
    }
    return 0;
}

static bool json_start(uint8_t c) { return c == '{' || c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

int recd_wire_decoder_feed(recd_wire_decoder *d, const uint8_t *data, size_t len, char *err,
                           size_t errlen)
{
    if (d->failed)
        return report(d, err, errlen);
    if (!len)
        return 0;
    if (d->enc == RECD_WIRE_AUTO) {
        if (data[0] == RECD_WIRE_MAGIC) {
            d->enc = RECD_WIRE_BINARY;
        } else if (json_start(data[0])) {
            d->enc = RECD_WIRE_NDJSON;
        } else {
            char why[160];
            snprintf(why, sizeof why,
                     "the stream starts with byte 0x%02X: neither a binary frame (0xD7) nor an "
                     "NDJSON line ('{')",
                     data[0]);
            fail(d, -EPROTO, why);
            return report(d, err, errlen);
        }
    }
    int rc = d->enc == RECD_WIRE_BINARY ? feed_binary(d, data, len) : feed_ndjson(d, data, len);
    return rc < 0 ? report(d, err, errlen) : 0;
}

int recd_wire_decoder_finish(recd_wire_decoder *d, char *err, size_t errlen)
{
    if (d->failed)
        return report(d, err, errlen);
    if (!d->pending.len)
        return 0;
    char why[300];
    if (d->enc == RECD_WIRE_NDJSON) {
        /* The last line may lack its newline; a cut line fails to parse and is reported as such. */
        recd_msg m;
        char inner[240];
        int rc = wire_ndjson_decode(&d->env, d->pending.data, d->pending.len, &m, inner,
                                    sizeof inner);
        if (rc == 1)
            rc = 0;
        else if (rc == 0)
            rc = deliver(d, &m, true, d->pending.len);
        else {
            snprintf(why, sizeof why, "stream ended inside an unterminated line (%s)", inner);
            rc = fail(d, rc == -ENOMEM ? rc : -EPROTO, why);
        }
        release_pending(d);
        return rc < 0 ? report(d, err, errlen) : 0;
    }
    if (d->pending.len < RECD_WIRE_HEADER_SIZE)
        snprintf(why, sizeof why, "stream ended inside a frame header (%lu of 8 bytes)",
                 (unsigned long)d->pending.len);
    else
        snprintf(why, sizeof why, "stream ended inside a frame (%lu of %lu bytes)",
                 (unsigned long)d->pending.len,
                 (unsigned long)(RECD_WIRE_HEADER_SIZE + ld_le32(d->pending.data + 4)));
    fail(d, -EPROTO, why);
    return report(d, err, errlen);
}
