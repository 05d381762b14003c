/* SPDX-License-Identifier: MIT */
/* Internal: generic text helpers of the JSON and CSV encodings and of anything else that writes
 * text: exact number text (shortest round-trip f32/f64, integers, a strict JSON-syntax number
 * reader), base64, JSON string escaping, UTF-8 checks, and appending to a recd_buf. No knowledge
 * of messages or formats. Defined in text.c, number_text.c, float_text.c and f32_text.c. */
#ifndef RECD_BASE_TEXT_H
#define RECD_BASE_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf_grow.h"
#include "recd/common.h"

/* ---- numbers (number_text.c, f32_text.c) ---------------------------------------------------- */

/* Parses a JSON-syntax number (no spaces); *is_int tells integer syntax. false when malformed or an
 * integer outside int64. */
bool text_parse_number(const char *s, size_t len, bool *is_int, int64_t *i, double *d);
/* Shortest decimal text that reads back as exactly f, always with a '.' or an exponent
 * ("-0.0", "1.5", "1e-45"). -EINVAL for NaN/Inf. buf must hold 32 bytes. */
int text_format_f32(float f, char buf[32]);
/* A %g precision of at least prec that prints every integer digit of d (1000.0, not 1e+03). */
int text_g_precision(double d, int prec);
/* Shortest decimal text that reads back as exactly d ("-0.0" included). -EINVAL for NaN/Inf.
 * buf must hold 40 bytes. */
int text_format_f64(double d, char buf[40]);
/* Append the decimal text of an integer, or text_format_f32/f64's text, straight into out
 * (no printf, no copy); -EINVAL for NaN/Inf. */
int text_put_i64(recd_buf *out, int64_t v);
int text_put_u64(recd_buf *out, uint64_t v);
int text_put_f32(recd_buf *out, float f);
int text_put_f64(recd_buf *out, double d);
/* Checks a parsed double fits f32 (finite, |d| <= FLT_MAX) and converts it. */
bool text_double_to_f32(double d, float *out);

/* ---- strings (text.c) ----------------------------------------------------------------------- */

/* Standard base64 with padding. */
int text_base64_append(recd_buf *out, const uint8_t *data, size_t len);
/* Decodes into out (appending); false when s is not canonical padded base64. */
bool text_base64_decode(const char *s, size_t len, recd_buf *out);
/* Appends s[0..len) as a JSON string literal; -EINVAL when s is not valid UTF-8. */
int text_put_json_string(recd_buf *out, const char *s, size_t len);
bool text_utf8_valid(const uint8_t *s, size_t len);
/* Copies s for an error message: at most 40 bytes, control and non-ASCII bytes as '?'. */
void text_safe_excerpt(const char *s, size_t len, char out[48]);
int text_puts(recd_buf *out, const char *s);

/* Inline, as the JSON writers call them for every key and punctuation byte of an export (a hot
 * path): the capacity check inline, the growth out of line (base/buf_grow.h). */
/* Room for n more bytes in out. */
static inline int text_room(recd_buf *out, size_t n)
{
    return out->cap - out->len >= n ? 0 : recd__buf_grow(out, n);
}
/* One byte appended, without a strlen and a call per byte. */
static inline int text_putc(recd_buf *out, char c)
{
    if (out->len == out->cap) {
        int rc = recd__buf_grow(out, 1);
        if (rc < 0)
            return rc;
    }
    out->data[out->len++] = (uint8_t)c;
    return 0;
}

#endif
