/* SPDX-License-Identifier: MIT */
/* Exact number text shared by the JSON and CSV encodings: the shortest decimal that reads back
 * to the same f32/f64 bits, and a strict JSON-syntax number reader for CSV cells. Locale-proof:
 * the text always uses '.', whatever LC_NUMERIC says. The printf/strtod search here defines the
 * text; float_text.c computes the same text fast and falls back to the search only for
 * magnitudes its fixed point does not cover. */
#include <errno.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "base/text.h"
#include "base/float_text.h"

/* The locale may print ',' as the decimal point; JSON and our CSV always use '.'. */
static void use_dot_decimal(char *s)
{
    const char *dp = localeconv()->decimal_point;
    if (!dp || (dp[0] == '.' && dp[1] == 0))
        return;
    size_t dl = strlen(dp);
    char *p = strstr(s, dp);
    if (!p || dl == 0)
        return;
    *p = '.';
    memmove(p + 1, p + dl, strlen(p + dl) + 1);
}

int text_g_precision(double d, int prec)
{
    double a = fabs(d);
    if (a < 1.0 || a >= 1e16)
        return prec;
    char tmp[40];
    int digits = snprintf(tmp, sizeof tmp, "%.0f", a);
    return digits > prec ? digits : prec;
}

int text_format_f32_search(float f, char buf[32])
{
    if (!isfinite(f))
        return -EINVAL;
    uint32_t want = f32_to_bits(f);
    for (int prec = 1; prec <= 9; prec++) {
        snprintf(buf, 32, "%.*g", text_g_precision(f, prec), (double)f);
        /* Readers may go through double first (jansson does), so both paths must agree. */
        float via_double;
        if (f32_to_bits(strtof(buf, NULL)) == want &&
            text_double_to_f32(strtod(buf, NULL), &via_double) && f32_to_bits(via_double) == want)
            break;
    }
    use_dot_decimal(buf);
    if (!strpbrk(buf, ".eE"))
        strcat(buf, ".0");
    return 0;
}

bool text_double_to_f32(double d, float *out)
{
    /* Doubles up to half an ulp above FLT_MAX round to FLT_MAX ("3.4028235e+38" is such a
     * double); set it directly, as the cast is only defined inside the float range. */
    static const double round_limit = 3.4028235677973366e+38; /* FLT_MAX + 2^103 */
    if (!isfinite(d) || d >= round_limit || d <= -round_limit)
        return false;
    if (d > FLT_MAX || d < -FLT_MAX)
        *out = d > 0 ? FLT_MAX : -FLT_MAX;
    else
        *out = (float)d;
    return true;
}

int text_format_f64_search(double d, char buf[40])
{
    if (!isfinite(d))
        return -EINVAL;
    uint64_t want = f64_to_bits(d);
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, 40, "%.*g", text_g_precision(d, prec), d);
        if (f64_to_bits(strtod(buf, NULL)) == want)
            break;
    }
    use_dot_decimal(buf);
    if (!strpbrk(buf, ".eE"))
        strcat(buf, ".0");
    return 0;
}

int text_format_f64(double d, char buf[40])
{
    int rc = float_text_f64(d, buf);
    if (rc == -ERANGE)
        return text_format_f64_search(d, buf);
    return rc < 0 ? rc : 0;
}

/* The decimal digits of v, written backwards ending at end; returns where they start. */
static char *u64_digits(uint64_t v, char *end)
{
    char *p = end;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        p -= 2;
        memcpy(p, text_digit_pairs + 2 * r, 2);
    }
    if (v >= 10) {
        p -= 2;
        memcpy(p, text_digit_pairs + 2 * v, 2);
    } else {
        *--p = (char)('0' + v);
    }
    return p;
}

/* A sign and up to 20 digits, written backwards into the first half of a scratch array and copied
 * to out as one fixed-size block (the second half keeps the copy inside the array), so a number
 * costs neither a call to recd_buf_append nor a memcpy of a variable length. */
#define INT_TEXT_MAX 21

static int put_int_text(recd_buf *out, uint64_t magnitude, bool negative)
{
    int rc = text_room(out, INT_TEXT_MAX);
    if (rc < 0)
        return rc;
    char num[2 * INT_TEXT_MAX], *end = num + INT_TEXT_MAX;
    char *p = u64_digits(magnitude, end);
    if (negative)
        *--p = '-';
    memcpy(out->data + out->len, p, INT_TEXT_MAX); /* p >= num: the copy ends inside num */
    out->len += (size_t)(end - p);
    return 0;
}

int text_put_u64(recd_buf *out, uint64_t v) { return put_int_text(out, v, false); }

int text_put_i64(recd_buf *out, int64_t v)
{
    return put_int_text(out, v < 0 ? 0 - (uint64_t)v : (uint64_t)v, v < 0);
}

int text_put_f64(recd_buf *out, double d)
{
    int rc = recd_buf_reserve(out, 40);
    if (rc < 0)
        return rc;
    char *dst = (char *)out->data + out->len;
    int n = float_text_f64(d, dst);
    if (n == -ERANGE && (n = text_format_f64_search(d, dst)) == 0)
        n = (int)strlen(dst);
    if (n < 0)
        return n;
    out->len += (size_t)n;
    return 0;
}

static size_t digits(const char *s, size_t i, size_t len)
{
    size_t n = 0;
    while (i + n < len && s[i + n] >= '0' && s[i + n] <= '9')
        n++;
    return n;
}

bool text_parse_number(const char *s, size_t len, bool *is_int, int64_t *i, double *d)
{
    size_t p = 0;
    bool neg = p < len && s[p] == '-';
    p += neg;
    size_t nd = digits(s, p, len);
    if (nd == 0 || (nd > 1 && s[p] == '0'))
        return false;
    size_t int_end = p + nd;
    p = int_end;
    *is_int = true;
    if (p < len && s[p] == '.') {
        size_t fd = digits(s, p + 1, len);
        if (fd == 0)
            return false;
        p += 1 + fd;
        *is_int = false;
    }
    if (p < len && (s[p] == 'e' || s[p] == 'E')) {
        p++;
        if (p < len && (s[p] == '+' || s[p] == '-'))
            p++;
        size_t ed = digits(s, p, len);
        if (ed == 0)
            return false;
        p += ed;
        *is_int = false;
    }
    if (p != len || len > 400)
        return false;
    if (*is_int) {
        uint64_t mag = 0;
        for (size_t k = neg; k < int_end; k++) {
            unsigned dg = (unsigned)(s[k] - '0');
            if (mag > (UINT64_MAX - dg) / 10)
                return false;
            mag = mag * 10 + dg;
        }
        if (neg ? mag > (uint64_t)INT64_MAX + 1 : mag > (uint64_t)INT64_MAX)
            return false;
        *i = neg ? (mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag) : (int64_t)mag;
        return true;
    }
    /* strtod follows the locale's decimal point; hand it the text in that form. */
    char tmp[416];
    const char *dp = localeconv()->decimal_point;
    size_t dl = dp ? strlen(dp) : 0;
    size_t o = 0;
    for (size_t k = 0; k < len; k++) {
        if (s[k] == '.' && dl > 0 && !(dl == 1 && dp[0] == '.')) {
            memcpy(tmp + o, dp, dl < 8 ? dl : 8);
            o += dl < 8 ? dl : 8;
        } else {
            tmp[o++] = s[k];
        }
    }
    tmp[o] = 0;
    *d = strtod(tmp, NULL);
    return true;
}

