/* SPDX-License-Identifier: MIT */
/* Generic string text (base/text.h): UTF-8 validation, JSON string escaping, base64, and the
 * printable copy of hostile text for error messages. */
#include "base/text.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* No byte of s[0..len) has its top bit set: 32 bytes OR-ed a step as two 16-byte vectors (gcc
 * and clang), then 8-byte words, the tail as one overlapping word, and one test at the end. */
static bool all_ascii(const uint8_t *s, size_t len)
{
    uint64_t acc = 0, w;
    size_t i = 0;
#if defined(__GNUC__)
    typedef uint64_t u64x2 __attribute__((vector_size(16)));
    u64x2 a = {0, 0}, b = {0, 0}, x, y;
    for (; len - i >= 32; i += 32) {
        memcpy(&x, s + i, 16);
        memcpy(&y, s + i + 16, 16);
        a |= x;
        b |= y;
    }
    a |= b;
    acc = a[0] | a[1];
#endif
    for (; len - i >= 8; i += 8) {
        memcpy(&w, s + i, 8);
        acc |= w;
    }
    if (i < len && len >= 8) {
        memcpy(&w, s + len - 8, 8);
        acc |= w;
    } else {
        for (; i < len; i++)
            acc |= s[i];
    }
    return (acc & 0x8080808080808080ull) == 0;
}

bool text_utf8_valid(const uint8_t *s, size_t len)
{
    if (all_ascii(s, len)) /* NDJSON lines nearly always are */
        return true;
    size_t i = 0;
    while (i < len) {
        /* ASCII 32 and then eight bytes at a time: NDJSON lines are nearly all ASCII. */
        uint64_t w[4], word;
        if (len - i >= 32 &&
            (memcpy(w, s + i, 32), ((w[0] | w[1] | w[2] | w[3]) & 0x8080808080808080ull) == 0)) {
            i += 32;
            continue;
        }
        if (len - i >= 8 && (memcpy(&word, s + i, 8), (word & 0x8080808080808080ull) == 0)) {
            i += 8;
            continue;
        }
        uint8_t c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t n;
        uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) {
            n = 1;
            cp = c & 0x1Fu;
        } else if (c >= 0xE0 && c <= 0xEF) {
            n = 2;
            cp = c & 0x0Fu;
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 3;
            cp = c & 0x07u;
        } else {
            return false;
        }
        if (len - i <= n)
            return false;
        for (size_t k = 1; k <= n; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (s[i + k] & 0x3Fu);
        }
        if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += n + 1;
    }
    return true;
}

int text_puts(recd_buf *out, const char *s) { return recd_buf_append(out, s, strlen(s)); }

int text_put_json_string(recd_buf *out, const char *s, size_t len)
{
    if (len && !s)
        return -EINVAL;
    if (!text_utf8_valid((const uint8_t *)s, len))
        return -EINVAL;
    int rc = recd_buf_reserve(out, len + 2);
    if (rc < 0)
        return rc;
    rc = recd_buf_append(out, "\"", 1);
    size_t run = 0; /* bytes copied verbatim in one go */
    for (size_t i = 0; i < len && rc == 0; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') {
            run++;
            continue;
        }
        rc = recd_buf_append(out, s + i - run, run);
        run = 0;
        if (rc < 0)
            break;
        char esc[8];
        switch (c) {
        case '"': rc = text_puts(out, "\\\""); break;
        case '\\': rc = text_puts(out, "\\\\"); break;
        case '\n': rc = text_puts(out, "\\n"); break;
        case '\r': rc = text_puts(out, "\\r"); break;
        case '\t': rc = text_puts(out, "\\t"); break;
        default:
            snprintf(esc, sizeof esc, "\\u%04x", c);
            rc = text_puts(out, esc);
        }
    }
    if (rc == 0 && run)
        rc = recd_buf_append(out, s + len - run, run);
    if (rc == 0)
        rc = recd_buf_append(out, "\"", 1);
    return rc;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int text_base64_append(recd_buf *out, const uint8_t *data, size_t len)
{
    int rc = recd_buf_reserve(out, (len + 2) / 3 * 4);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)data[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)data[i + 1] << 8;
        if (i + 2 < len)
            v |= data[i + 2];
        char q[4] = {b64[v >> 18], b64[(v >> 12) & 63], i + 1 < len ? b64[(v >> 6) & 63] : '=',
                     i + 2 < len ? b64[v & 63] : '='};
        recd_buf_append(out, q, 4);
    }
    return 0;
}

static int b64_index(char c)
{
    const char *p = c ? strchr(b64, c) : NULL;
    return p ? (int)(p - b64) : -1;
}

bool text_base64_decode(const char *s, size_t len, recd_buf *out)
{
    if (len % 4)
        return false;
    if (recd_buf_reserve(out, len / 4 * 3) < 0)
        return false;
    for (size_t i = 0; i < len; i += 4) {
        int pad = (s[i + 3] == '=') + (s[i + 2] == '=' && s[i + 3] == '=');
        if (pad && i + 4 != len)
            return false;
        int a = b64_index(s[i]), b = b64_index(s[i + 1]);
        int c = pad >= 2 ? 0 : b64_index(s[i + 2]);
        int d = pad >= 1 ? 0 : b64_index(s[i + 3]);
        if (a < 0 || b < 0 || c < 0 || d < 0)
            return false;
        uint32_t v = ((uint32_t)a << 18) | ((uint32_t)b << 12) | ((uint32_t)c << 6) | (uint32_t)d;
        /* Canonical: the bits dropped by padding must be zero. */
        if ((pad == 1 && (v & 0xFF)) || (pad == 2 && (v & 0xFFFF)))
            return false;
        uint8_t bytes[3] = {(uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
        recd_buf_append(out, bytes, (size_t)(3 - pad));
    }
    return true;
}

void text_safe_excerpt(const char *s, size_t len, char out[48])
{
    size_t n = len > 40 ? 40 : len;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        out[i] = (c >= 0x20 && c < 0x7F) ? (char)c : '?';
    }
    if (len > 40) {
        memcpy(out + n, "...", 4);
    } else {
        out[n] = 0;
    }
}
