/* SPDX-License-Identifier: MIT */
/* The error reply a server sends before it closes a stream, in both encodings, and the client's
 * reader for it. Messages are reduced to printable ASCII so hostile input never echoes back raw.
 * Also the kind of a decoder's error (recd/wire_reason.h), for a receiver's counters. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "base/bytes.h"
#include "recd/wire_reason.h"
#include "wire/wire_internal.h"

int recd_wire_encode_error(recd_wire_encoding enc, const char *message, recd_buf *out)
{
    char text[WIRE_ERROR_TEXT_MAX + 1];
    size_t n = wire_error_sanitize(message, text, sizeof text);
    size_t start = out->len;
    int rc;
    if (enc == RECD_WIRE_NDJSON) {
        static const char head[] = "{\"type\":\"error\",\"message\":\"";
        rc = recd_buf_append(out, head, sizeof head - 1);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            if (text[i] == '"' || text[i] == '\\')
                rc = recd_buf_append(out, "\\", 1);
            if (rc == 0)
                rc = recd_buf_append(out, &text[i], 1);
        }
        if (rc == 0)
            rc = recd_buf_append(out, "\"}\n", 3);
    } else if (enc == RECD_WIRE_BINARY) {
        uint8_t hdr[RECD_WIRE_HEADER_SIZE + 3] = {RECD_WIRE_MAGIC, RECD_WIRE_VERSION, WIRE_T_ERROR};
        st_le32(hdr + 4, (uint32_t)(3 + n));
        hdr[8] = 0; /* key_len: the error concerns the connection */
        st_le16(hdr + 9, (uint16_t)n);
        rc = recd_buf_append(out, hdr, sizeof hdr);
        if (rc == 0)
            rc = recd_buf_append(out, text, n);
    } else {
        return -EINVAL;
    }
    if (rc < 0)
        out->len = start;
    return rc;
}

static int decode_binary(const uint8_t *p, size_t len, char *msg, size_t msglen)
{
    wire_header h;
    if (wire_header_check(p, len, 0, true, &h, NULL, 0) < 0)
        return -EPROTO;
    if (len < RECD_WIRE_HEADER_SIZE)
        return -EAGAIN;
    if (h.type != WIRE_T_ERROR)
        return -EPROTO;
    if (len - RECD_WIRE_HEADER_SIZE < h.body_len)
        return -EAGAIN;
    const uint8_t *b = p + RECD_WIRE_HEADER_SIZE;
    if (h.body_len < 3 || (size_t)1 + b[0] + 2 > h.body_len)
        return -EPROTO;
    size_t off = 1 + (size_t)b[0];
    size_t n = ld_le16(b + off);
    if (off + 2 + n != h.body_len)
        return -EPROTO;
    char text[WIRE_ERROR_TEXT_MAX + 1];
    size_t k = n > WIRE_ERROR_TEXT_MAX ? WIRE_ERROR_TEXT_MAX : n;
    memcpy(text, b + off + 2, k);
    text[k] = 0;
    wire_error_sanitize(text, msg, msglen);
    return 1;
}

static int decode_line(const uint8_t *p, size_t len, char *msg, size_t msglen)
{
    const uint8_t *nl = memchr(p, '\n', len);
    if (!nl)
        return len > RECD_WIRE_DEFAULT_MAX_FRAME ? -EPROTO : -EAGAIN;
    json_t *root = json_loadb((const char *)p, (size_t)(nl - p), 0, NULL);
    json_t *type = root ? json_object_get(root, "type") : NULL;
    json_t *text = root ? json_object_get(root, "message") : NULL;
    int rc = -EPROTO;
    if (json_is_string(type) && strcmp(json_string_value(type), "error") == 0 &&
        json_is_string(text)) {
        wire_error_sanitize(json_string_value(text), msg, msglen);
        rc = 1;
    }
    json_decref(root);
    return rc;
}

int recd_wire_decode_error(const uint8_t *data, size_t len, char *msg, size_t msglen)
{
    if (msg && msglen)
        msg[0] = 0;
    if (len == 0)
        return 0;
    if (data[0] == RECD_WIRE_MAGIC)
        return decode_binary(data, len, msg, msglen);
    size_t i = 0;
    while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n'))
        i++;
    if (i == len)
        return -EAGAIN;
    return data[i] == '{' ? decode_line(data + i, len - i, msg, msglen) : -EPROTO;
}

recd_wire_reason recd_wire_reason_of(int rc, recd_wire_reason noted)
{
    if (noted != RECD_WIRE_REASON_NONE)
        return noted;
    switch (rc) {
    case -EPROTO: return RECD_WIRE_REASON_FRAMING;
    case -EMSGSIZE: return RECD_WIRE_REASON_TOO_LARGE;
    case -EBADMSG: return RECD_WIRE_REASON_SCHEMA;
    default: return RECD_WIRE_REASON_OTHER;
    }
}
