/* SPDX-License-Identifier: MIT */
/* Internal: the pieces of the tree-free JSON line readers (the formats' json fast_state hooks):
 * a number scanner equal to text_parse_number (short decimals exactly, without strtod), and token
 * reads over a line whose last byte is its closing '}'. Each reader declines what it is unsure of
 * and leaves it, and every error, to the jansson reader. */
#ifndef RECD_JSON_SCAN_H
#define RECD_JSON_SCAN_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/text.h"

/* Powers of ten that are exact doubles (10^22 < 2^53 * 2^22 is the last one). */
static const double exact_pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static inline bool is_digit(char c) { return (unsigned char)(c - '0') < 10; }

/* Adds the digits at p to *mant (decimal) and returns where they end; unsigned bytes, so the
 * loop needs no sign extension. */
static inline const char *add_digits(const char *p, uint64_t *mant)
{
    uint64_t m = *mant;
    for (unsigned dg; (dg = (unsigned)(unsigned char)*p - '0') <= 9; p++)
        m = m * 10 + dg;
    *mant = m;
    return p;
}

/* text_parse_number's answer as a value: the caller's results are then never addressed by a call,
 * so they stay in registers on the common path. */
typedef struct parsed_number {
    bool ok, is_int;
    int64_t i;
    double d;
} parsed_number;

static __attribute__((noinline, unused)) parsed_number parse_number_slowly(const char *s,
                                                                         size_t len)
{
    parsed_number n = {false, false, 0, 0};
    n.ok = text_parse_number(s, len, &n.is_int, &n.i, &n.d);
    return n;
}

static inline const char *number_end(const char *s, const char *p, bool *is_int, int64_t *i,
                                     double *d)
{
    parsed_number n = parse_number_slowly(s, (size_t)(p - s));
    *is_int = n.is_int;
    *i = n.i;
    *d = n.d;
    return n.ok ? p : NULL;
}

/* Reads the longest JSON number at p and returns where it ends, or NULL when the text there is no
 * number or not one this reader takes. No bound is checked: the text must end in a byte that no
 * number holds (the line's closing '}', or a NUL). What follows is the caller's to check. */
static inline __attribute__((always_inline)) const char *scan_number(const char *p, bool *is_int,
                                                                     int64_t *i, double *d)
{
    const char *s = p;
    bool neg = *p == '-';
    p += neg;
    /* mant takes every digit of the integer and fraction parts; it wraps past 19 digits, but it
     * is only used with at most 18 (the digit count, nd, decides). A leading 0 stands alone, and
     * a lone 0 needs no loop. */
    const char *start = p;
    unsigned first = (unsigned)(unsigned char)*p - '0';
    if (first > 9)
        return NULL;
    uint64_t mant = first;
    p++;
    if (first != 0)
        p = add_digits(p, &mant);
    else if (is_digit(*p)) /* a leading zero */
        return NULL;
    ptrdiff_t nd = p - start;
    if (*p != '.' && (*p | 0x20) != 'e') { /* an integer ('E' | 0x20 is 'e') */
        if (nd > 18) /* near or past the int64 range */
            return number_end(s, p, is_int, i, d);
        *is_int = true;
        *i = neg ? -(int64_t)mant : (int64_t)mant;
        return p;
    }
    int frac = 0;
    if (*p == '.') {
        const char *fs = ++p;
        unsigned f1 = (unsigned)(unsigned char)*p - '0';
        if (f1 > 9) /* a fraction has a digit */
            return NULL;
        mant = mant * 10 + f1;
        p = add_digits(p + 1, &mant);
        frac = (int)(p - fs);
        nd += frac;
    }
    int exp = 0;
    if ((*p | 0x20) == 'e') {
        p++;
        bool eneg = *p == '-';
        if (*p == '-' || *p == '+')
            p++;
        const char *es = p;
        for (; is_digit(*p); p++)
            if (exp < 100000)
                exp = exp * 10 + (*p - '0');
        if (p == es || p - s > 400) /* text_parse_number's length cap, and its answer */
            return NULL;
        if (eneg)
            exp = -exp;
    }
    /* Clinger's fast path: an integer below 2^53 times or over an exact power of ten is one
     * correctly rounded IEEE operation, so it equals strtod's result. Only an exponent with
     * leading zeros can make such a text long, and that was checked against the cap above. */
    int e10 = exp - frac;
    if (nd <= 15 && e10 >= -22 && e10 <= 22) {
        double v = (double)mant;
        v = e10 < 0 ? v / exact_pow10[-e10] : v * exact_pow10[e10];
        *is_int = false;
        *d = neg ? -v : v;
        return p;
    }
    return number_end(s, p, is_int, i, d);
}

/* The text read is a line whose last byte is its closing '}' (each reader checks that first). That
 * byte stops every scan for white space, digits or a number's signs and marks, so those scans need
 * no bound check as long as they start before it: they do, because each starts just after a byte
 * that was read as something else than that final '}' (an object member's '}' that is the final
 * byte is refused on the spot). Only the scans that can pass a '}' (strings, fixed words) check
 * the bound. */
typedef struct reader {
    const char *p, *end;
} reader;

/* JSON white space but '\n': a line with a line break inside goes to the jansson reader, which
 * refuses it ("a message must fit on one line"). */
static inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

static inline void skip_ws(reader *r)
{
    /* Most tokens follow the last directly: one compare says so (all JSON space is <= ' '). */
    while ((unsigned char)*r->p <= ' ' && is_space(*r->p))
        r->p++;
}

static inline bool eat(reader *r, char c)
{
    if (*r->p == c) { /* the usual case: no white space before it */
        r->p++;
        return true;
    }
    skip_ws(r);
    if (*r->p == c) {
        r->p++;
        return true;
    }
    return false;
}

/* Bytes that may stand in a plain string: printable ASCII but '"' and '\\'. */
#define PLAIN16(c) ((c) >= 0x20 && (c) < 0x7F && (c) != '"' && (c) != '\\')
#define PLAIN4(c) PLAIN16(c), PLAIN16((c) + 1), PLAIN16((c) + 2), PLAIN16((c) + 3)
#define PLAIN16X(c) PLAIN4(c), PLAIN4((c) + 4), PLAIN4((c) + 8), PLAIN4((c) + 12)
static const bool plain_byte[256] = {
    PLAIN16X(0x00), PLAIN16X(0x10), PLAIN16X(0x20), PLAIN16X(0x30),
    PLAIN16X(0x40), PLAIN16X(0x50), PLAIN16X(0x60), PLAIN16X(0x70),
};

/* Where the plain string body at p ends (its closing '"'), or NULL: an escape, a control or
 * non-ASCII byte, or no closing quote. Given the pointers, not the reader, so that no reader
 * needs an address and its position can stay in a register. */
static __attribute__((unused)) const char *plain_string_end(const char *p, const char *end)
{
    while (p < end && plain_byte[(unsigned char)*p])
        p++;
    return p < end && *p == '"' ? p : NULL;
}

/* A string of printable ASCII without escapes (every key and value the fast path accepts). */
static inline bool read_plain_string(reader *r, const char **s, size_t *n)
{
    skip_ws(r);
    if (*r->p != '"')
        return false;
    const char *e = plain_string_end(r->p + 1, r->end);
    if (!e)
        return false;
    *s = r->p + 1;
    *n = (size_t)(e - *s);
    r->p = e + 1;
    return true;
}

static inline __attribute__((always_inline)) bool read_number(reader *r, bool *is_int,
                                                              int64_t *i, double *d)
{
    skip_ws(r);
    const char *e = scan_number(r->p, is_int, i, d);
    if (!e)
        return false;
    r->p = e; /* a number must be followed by ',', ']' or '}': the caller checks */
    return true;
}

/* Any finite number, as the jansson readers take a JSON number for a double: an integer
 * converted, a real that overflows refused (jansson refuses it too). */
static inline bool read_finite(reader *r, double *v)
{
    bool is_int;
    int64_t i;
    if (!read_number(r, &is_int, &i, v))
        return false;
    if (is_int)
        *v = (double)i;
    return isfinite(*v);
}

/* a[0..n) equals b[0..n): words of eight or four bytes, the last one overlapping the one before,
 * so a key of a few bytes costs a few compares and no call. */
static inline bool same_bytes(const char *a, const char *b, size_t n)
{
    if (n >= 8) {
        uint64_t x, y;
        for (size_t k = 0; k + 8 < n; k += 8) {
            memcpy(&x, a + k, 8);
            memcpy(&y, b + k, 8);
            if (x != y)
                return false;
        }
        memcpy(&x, a + n - 8, 8);
        memcpy(&y, b + n - 8, 8);
        return x == y;
    }
    if (n >= 4) {
        uint32_t x0, y0, x1, y1;
        memcpy(&x0, a, 4);
        memcpy(&y0, b, 4);
        memcpy(&x1, a + n - 4, 4);
        memcpy(&y1, b + n - 4, 4);
        return x0 == y0 && x1 == y1;
    }
    return n == 0 || (a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1]);
}

/* The quoted key `key` (plain ASCII, from the table) next in the text: the canonical order
 * predicts most keys, and matching the prediction needs no scan of the string. */
static inline bool eat_expected_key(reader *r, const char *key, size_t kl)
{
    if ((size_t)(r->end - r->p) < kl + 2 || r->p[0] != '"' || r->p[kl + 1] != '"' ||
        !same_bytes(r->p + 1, key, kl))
        return false;
    r->p += kl + 2;
    return true;
}

static inline bool key_is(const char *key, const char *k, size_t kn)
{
    return strncmp(key, k, kn) == 0 && key[kn] == 0; /* k holds no NUL (plain string) */
}


#endif
