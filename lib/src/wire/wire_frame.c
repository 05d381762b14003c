/* SPDX-License-Identifier: MIT */
/* Wire basics: encoding and transport names, the frame header rules every binary reader applies,
 * and the text helpers for error messages. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/bytes.h"
#include "wire/wire_internal.h"

const char *recd_wire_encoding_name(recd_wire_encoding e)
{
    switch (e) {
    case RECD_WIRE_AUTO: return "auto";
    case RECD_WIRE_BINARY: return "binary";
    case RECD_WIRE_NDJSON: return "ndjson";
    default: return "?";
    }
}

int recd_wire_encoding_parse(const char *name, recd_wire_encoding *out)
{
    for (int e = RECD_WIRE_AUTO; e <= RECD_WIRE_NDJSON; e++) {
        if (name && strcmp(name, recd_wire_encoding_name((recd_wire_encoding)e)) == 0) {
            *out = (recd_wire_encoding)e;
            return 0;
        }
    }
    return -EINVAL;
}

const char *recd_wire_transport_name(recd_wire_transport t)
{
    switch (t) {
    case RECD_WIRE_TCP: return "tcp";
    case RECD_WIRE_UDP: return "udp";
    case RECD_WIRE_UNIX: return "unix";
    case RECD_WIRE_NATS: return "nats";
    default: return "?";
    }
}

static bool type_known(uint8_t t) { return t >= WIRE_T_OPEN && t <= WIRE_T_SAVE; }

int wire_header_check(const uint8_t *p, size_t avail, size_t max_frame, bool error_ok,
                      wire_header *h, char *why, size_t whylen)
{
    if (avail >= 1 && p[0] != RECD_WIRE_MAGIC) {
        recd_why(why, whylen, "bad magic byte 0x%02X (a binary frame starts with 0xD7)", p[0]);
        return -EPROTO;
    }
    if (avail >= 2 && p[1] != RECD_WIRE_VERSION) {
        recd_why(why, whylen, "unsupported protocol version %u (this side speaks %u)", p[1],
                 RECD_WIRE_VERSION);
        return -EPROTO;
    }
    if (avail >= 3 && !type_known(p[2])) {
        if (p[2] == WIRE_T_ERROR && !error_ok)
            recd_why(why, whylen, "error frames only travel from server to client");
        else if (p[2] != WIRE_T_ERROR)
            recd_why(why, whylen, "unknown frame type %u", p[2]);
        if (p[2] != WIRE_T_ERROR || !error_ok)
            return -EPROTO;
    }
    if (avail >= 4) {
        uint8_t f = p[3];
        if (f & ~WIRE_F_KNOWN) {
            recd_why(why, whylen, "unknown flag bits 0x%02X", (unsigned)(f & ~WIRE_F_KNOWN));
            return -EPROTO;
        }
        if (p[2] == WIRE_T_ERROR && f) {
            recd_why(why, whylen, "an error frame has no flags");
            return -EPROTO;
        }
        if ((f & (WIRE_F_RESUME | WIRE_F_RING)) && p[2] != WIRE_T_OPEN) {
            recd_why(why, whylen, "only open frames carry the resume and ring flags");
            return -EPROTO;
        }
        if ((f & WIRE_F_TIME) && p[2] != WIRE_T_STATE && p[2] != WIRE_T_EVENT) {
            recd_why(why, whylen, "only state and event frames carry a time");
            return -EPROTO;
        }
        if ((f & WIRE_F_SAVE) && p[2] != WIRE_T_STATE && p[2] != WIRE_T_EVENT) {
            recd_why(why, whylen, "only state and event frames carry the save flag");
            return -EPROTO;
        }
    }
    if (avail >= RECD_WIRE_HEADER_SIZE) {
        uint32_t body = ld_le32(p + 4);
        if (body > wire_max_frame(max_frame)) {
            recd_why(why, whylen, "frame body of %lu bytes exceeds the limit of %lu",
                     (unsigned long)body, (unsigned long)wire_max_frame(max_frame));
            return -EMSGSIZE;
        }
        if (h) {
            h->type = p[2];
            h->flags = p[3];
            h->body_len = body;
        }
    }
    return 0;
}

size_t wire_error_sanitize(const char *in, char *out, size_t outlen)
{
    size_t n = 0;
    if (!out || !outlen)
        return 0;
    for (; in && in[n] && n < WIRE_ERROR_TEXT_MAX && n + 1 < outlen; n++) {
        unsigned char c = (unsigned char)in[n];
        out[n] = (c >= 0x20 && c < 0x7F) ? (char)c : '?';
    }
    out[n] = 0;
    return n;
}
