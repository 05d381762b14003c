/* SPDX-License-Identifier: MIT */
/* JSON text of replay strings (UTF-8, else Latin-1), payload bytes as hex, and f32 numbers. */
#include "formats/rf2/rf2_json.h"

#include <errno.h>
#include <string.h>

#include "base/text.h"

int rf2_json_text(recd_buf *out, const uint8_t *p, size_t len)
{
    if (len == 0) /* also text a cut header never reached (p NULL) */
        return text_puts(out, "\"\"");
    const uint8_t *nul = memchr(p, 0, len);
    if (nul)
        len = (size_t)(nul - p);
    if (text_utf8_valid(p, len))
        return text_put_json_string(out, (const char *)p, len);
    recd_buf utf8 = {0};
    int rc = recd_buf_reserve(&utf8, len * 2);
    for (size_t i = 0; rc == 0 && i < len; i++) {
        if (p[i] < 0x80) {
            utf8.data[utf8.len++] = p[i];
        } else {
            utf8.data[utf8.len++] = (uint8_t)(0xC0 | (p[i] >> 6));
            utf8.data[utf8.len++] = (uint8_t)(0x80 | (p[i] & 0x3F));
        }
    }
    if (rc == 0)
        rc = text_put_json_string(out, utf8.data ? (const char *)utf8.data : "", utf8.len);
    recd_buf_free(&utf8);
    return rc;
}

int rf2_json_hex(recd_buf *out, const uint8_t *p, size_t len)
{
    static const char digits[] = "0123456789abcdef";
    if (len > (SIZE_MAX - 2) / 2)
        return -ENOMEM;
    int rc = recd_buf_reserve(out, len * 2 + 2);
    if (rc < 0)
        return rc;
    out->data[out->len++] = '"';
    for (size_t i = 0; i < len; i++) {
        out->data[out->len++] = (uint8_t)digits[p[i] >> 4];
        out->data[out->len++] = (uint8_t)digits[p[i] & 15];
    }
    out->data[out->len++] = '"';
    return 0;
}

int rf2_json_f32(recd_buf *out, float f)
{
    char text[32];
    if (text_format_f32(f, text) < 0)
        return text_puts(out, "null");
    return text_puts(out, text);
}
