/* SPDX-License-Identifier: MIT */
/* Exhaustive check of the f32 number text: for every finite f32 bit pattern in [FIRST, LAST]
 * (hex arguments, default all), the text msg_f32_text would write with today's
 * msg_float_text_f32 must equal the one it wrote with the algorithm before the f32 fast path
 * (kept below, renamed, as the reference). Where either returns -ERANGE, the final text is the
 * printf/strtod search's, so the other's text is compared with the search. Not part of
 * `make test` (it takes minutes); docs/performance.md has the result. Needs __int128. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "message/msg_float_text.h"

#ifndef __SIZEOF_INT128__
#error "f32_exhaustive needs __int128, as the algorithm it checks"
#endif

/* ---- msg_float_text.c's f32 text before the fast path (commit 1e0fb6a), renamed ---- */
/* 17 digits are the most a double needs; rounding at 17 needs the 18th digit and whether any
 * digit after it is nonzero. */
#define EXACT_DIGITS 19

typedef unsigned __int128 u128;

typedef struct {
    uint64_t d19; /* the first n digits as one 19-digit integer, zeros after (< 10^19 < 2^64) */
    int n;        /* digits kept, at most EXACT_DIGITS */
    int exp10;    /* the power of ten of the leading digit (never 0) */
    bool sticky;  /* a nonzero digit follows the first n */
} exact_dec;

static const uint64_t pow10_table[EXACT_DIGITS + 1] = {
    UINT64_C(1), UINT64_C(10), UINT64_C(100), UINT64_C(1000), UINT64_C(10000), UINT64_C(100000),
    UINT64_C(1000000), UINT64_C(10000000), UINT64_C(100000000), UINT64_C(1000000000),
    UINT64_C(10000000000), UINT64_C(100000000000), UINT64_C(1000000000000),
    UINT64_C(10000000000000), UINT64_C(100000000000000), UINT64_C(1000000000000000),
    UINT64_C(10000000000000000), UINT64_C(100000000000000000), UINT64_C(1000000000000000000),
    UINT64_C(10000000000000000000)};

/* 5^0 .. 5^27, the powers of five that fit 64 bits. */
static const uint64_t pow5_table[28] = {
    UINT64_C(1), UINT64_C(5), UINT64_C(25), UINT64_C(125), UINT64_C(625), UINT64_C(3125),
    UINT64_C(15625), UINT64_C(78125), UINT64_C(390625), UINT64_C(1953125), UINT64_C(9765625),
    UINT64_C(48828125), UINT64_C(244140625), UINT64_C(1220703125), UINT64_C(6103515625),
    UINT64_C(30517578125), UINT64_C(152587890625), UINT64_C(762939453125),
    UINT64_C(3814697265625), UINT64_C(19073486328125), UINT64_C(95367431640625),
    UINT64_C(476837158203125), UINT64_C(2384185791015625), UINT64_C(11920928955078125),
    UINT64_C(59604644775390625), UINT64_C(298023223876953125), UINT64_C(1490116119384765625),
    UINT64_C(7450580596923828125)};

/* exact_digits one digit at a time: any mant * 2^e2 whose integer part and fraction times 10
 * fit 128 bits. The slow path for magnitudes exact_digits_scaled does not cover. */
static bool exact_digits_by_digit(uint64_t mant, int e2, exact_dec *o)
{
    const int want = EXACT_DIGITS;
    uint8_t dig[EXACT_DIGITS];
    u128 ip, frac = 0, mask = 0;
    int fb = 0; /* bits in the fraction */
    if (e2 >= 0) {
        if (e2 > 71)
            return false;
        ip = (u128)mant << e2;
    } else {
        fb = -e2;
        if (fb > 123)
            return false;
        ip = fb >= 64 ? 0 : mant >> fb;
        mask = ((u128)1 << fb) - 1;
        frac = (u128)mant & mask;
    }
    int n = 0;
    o->sticky = false;
    if (ip) {
        uint8_t rev[40];
        int c = 0;
        if (ip >> 64 == 0) {
            for (uint64_t x = (uint64_t)ip; x; x /= 10)
                rev[c++] = (uint8_t)(x % 10);
        } else {
            for (; ip; ip /= 10)
                rev[c++] = (uint8_t)(ip % 10);
        }
        o->exp10 = c - 1;
        for (int i = c - 1; i >= 0; i--) {
            if (n < want)
                dig[n++] = rev[i];
            else if (rev[i])
                o->sticky = true;
        }
    } else if (fb <= 60) {
        /* The same digits in 64 bits, where most telemetry values fall (frac * 10 < 2^64). */
        uint64_t f64 = (uint64_t)frac, m64 = (uint64_t)mask;
        o->exp10 = -1;
        for (;;) {
            f64 *= 10;
            uint8_t d = (uint8_t)(f64 >> fb);
            f64 &= m64;
            if (d) {
                dig[n++] = d;
                break;
            }
            o->exp10--;
        }
        frac = f64;
    } else {
        /* No integer part, so the fraction is nonzero: skip its leading zeros. */
        o->exp10 = -1;
        for (;;) {
            frac *= 10;
            uint8_t d = (uint8_t)(frac >> fb);
            frac &= mask;
            if (d) {
                dig[n++] = d;
                break;
            }
            o->exp10--;
        }
    }
    if (fb <= 60) {
        uint64_t f64 = (uint64_t)frac, m64 = (uint64_t)mask;
        while (n < want && f64) {
            f64 *= 10;
            dig[n++] = (uint8_t)(f64 >> fb);
            f64 &= m64;
        }
        frac = f64;
    }
    while (n < want && frac) {
        frac *= 10;
        dig[n++] = (uint8_t)(frac >> fb);
        frac &= mask;
    }
    while (n < want)
        dig[n++] = 0;
    if (frac)
        o->sticky = true;
    o->n = want;
    o->d19 = 0;
    for (int i = 0; i < EXACT_DIGITS; i++)
        o->d19 = o->d19 * 10 + (i < want ? dig[i] : 0);
    return true;
}

/* floor(k * log10(2)) for |k| < 1600 (78913 / 2^18 is log10(2) to 6 digits). */
static int floor_log10_pow2(int k)
{
    return k >= 0 ? (int)(((int64_t)k * 78913) >> 18) : -(int)((((int64_t)-k * 78913) >> 18) + 1);
}

/* exact_digits with a single multiplication: the first 19 digits of v = mant * 2^e2 are
 * floor(v * 10^s) for s = 18 - exp10, and v * 10^s = mant * 5^s * 2^(e2 + s) is exact in 128
 * bits when mant * 5^s fits (or, for s < 0, when mant << e2 fits and 10^-s divides it out).
 * exp10 comes from the binary exponent: it is the estimate or one more. false when the numbers
 * do not fit (tiny or huge magnitudes), and exact_digits_by_digit decides. */
static bool exact_digits_scaled(uint64_t mant, int e2, exact_dec *o)
{
    int mant_bits = 64 - __builtin_clzll(mant);
    int est = floor_log10_pow2(mant_bits - 1 + e2); /* v >= 2^(mant_bits - 1 + e2) */
    int s = 18 - est;
    u128 scaled, rest;
    if (s >= 0) {
        if (s > 54)
            return false;
        u128 p5 = s <= 27 ? (u128)pow5_table[s] : (u128)pow5_table[27] * pow5_table[s - 27];
        int p5_bits = (p5 >> 64) ? 128 - __builtin_clzll((uint64_t)(p5 >> 64))
                                 : 64 - __builtin_clzll((uint64_t)p5);
        if (mant_bits + p5_bits > 128)
            return false;
        u128 prod = (u128)mant * p5;
        int shift = e2 + s;
        if (shift >= 0) {
            if (mant_bits + p5_bits + shift > 127) /* never: the result is below 10^20 */
                return false;
            scaled = prod << shift;
            rest = 0;
        } else {
            if (-shift > 127)
                return false;
            scaled = prod >> -shift;
            rest = prod & (((u128)1 << -shift) - 1);
        }
    } else {
        if (e2 < 0 || e2 > 71 || -s > 38)
            return false;
        u128 div = (u128)pow10_table[-s < 19 ? -s : 19];
        for (int k = 19; k < -s; k++)
            div *= 10;
        u128 whole = (u128)mant << e2;
        scaled = whole / div;
        rest = whole % div;
    }
    o->sticky = rest != 0;
    o->exp10 = est;
    if (scaled >= (u128)pow10_table[EXACT_DIGITS]) { /* the estimate was one short */
        o->sticky = o->sticky || scaled % 10 != 0;
        scaled /= 10;
        o->exp10++;
    }
    o->d19 = (uint64_t)scaled;
    o->n = EXACT_DIGITS;
    return true;
}

/* The leading want (<= EXACT_DIGITS) decimal digits of mant * 2^e2 (0 < mant < 2^56). false
 * when the integer part or the fraction times 10 would not fit 128 bits. */
static bool exact_digits(uint64_t mant, int e2, exact_dec *o)
{
    return exact_digits_scaled(mant, e2, o) || exact_digits_by_digit(mant, e2, o);
}

/* v rounded to n (< v->n) significant digits, half to even on the exact value as printf does:
 * the n-digit integer, and the exp10 of its first digit. */
static uint64_t round_digits(const exact_dec *v, int n, int *exp10)
{
    uint64_t unit = pow10_table[EXACT_DIGITS - n];
    uint64_t t = v->d19 / unit, r = v->d19 % unit, half = unit / 2;
    *exp10 = v->exp10;
    if (r > half || (r == half && (v->sticky || (t & 1)))) {
        if (++t == pow10_table[n]) {
            t = pow10_table[n - 1];
            (*exp10)++;
        }
    }
    return t;
}

/* true when v has no nonzero digit after its first n. */
static bool exact_at(const exact_dec *v, int n)
{
    return !v->sticky && v->d19 % pow10_table[EXACT_DIGITS - n] == 0;
}

/* Sign of (the n-digit integer t with exp10 e) - b. */
static int compare(uint64_t t, int n, int e, const exact_dec *b)
{
    if (e != b->exp10)
        return e < b->exp10 ? -1 : 1;
    uint64_t d19 = t * pow10_table[EXACT_DIGITS - n];
    if (d19 != b->d19)
        return d19 < b->d19 ? -1 : 1;
    return b->sticky ? -1 : 0;
}

/* true when the n-digit candidate at exp10 e may lie within a millionth of its last digit's unit
 * of b: b's six digits below that unit are all 0 or all 9 (or unknown). */
static bool near_tie(int n, int e, const exact_dec *b)
{
    int first = b->exp10 - (e - n + 1) + 1; /* b's index of the digit just below that unit */
    int end = first + 6;
    if (end > b->n || end <= 0) /* unknown, or all zeros before b's leading digit */
        return true;
    /* Indices below 0 are zeros before b's nonzero leading digit: then neither test holds. */
    uint64_t six = b->d19 / pow10_table[EXACT_DIGITS - end] % 1000000;
    return six == 0 || six == 999999;
}

/* The length of the digits lo and hi (same exp10, lo <= hi) share, less the zeros that end
 * them. hi - lo below 10^k means at most 19 - k shared digits; a carry can make it fewer. */
static int shared_prefix(const exact_dec *lo, const exact_dec *hi)
{
    uint64_t diff = hi->d19 - lo->d19;
    int k = diff ? ((64 - __builtin_clzll(diff)) * 1233) >> 12 : 0; /* about log10 of 2^bits */
    while (k < EXACT_DIGITS && diff >= pow10_table[k])
        k++;
    while (k > 0 && diff < pow10_table[k - 1])
        k--;
    int a = EXACT_DIGITS - k; /* k is now diff's digit count */
    while (a > 0 && lo->d19 / pow10_table[EXACT_DIGITS - a] != hi->d19 / pow10_table[EXACT_DIGITS - a])
        a--;
    uint64_t prefix = lo->d19 / pow10_table[EXACT_DIGITS - a];
    while (a > 0 && prefix % 10 == 0) {
        prefix /= 10;
        a--;
    }
    return a;
}

/* The p decimal digits of t as characters, two per division. */
static void digit_chars(uint64_t t, int p, char *d)
{
    int i = p;
    while (i >= 2) {
        unsigned r = (unsigned)(t % 100);
        t /= 100;
        d[--i] = (char)('0' + r % 10);
        d[--i] = (char)('0' + r / 10);
    }
    if (i)
        d[0] = (char)('0' + t);
}

/* Lays out p rounded digits (characters) at exp10 x like %.{p}g, then ".0" when there is no
 * '.' or 'e'. */
static int layout(char *buf, bool neg, const char *d, int p, int x)
{
    char *s = buf;
    int nd = p;
    while (nd > 1 && d[nd - 1] == '0')
        nd--;
    if (neg)
        *s++ = '-';
    if (x >= -4 && x < p) {
        if (x >= 0) {
            int whole = x + 1 < nd ? x + 1 : nd;
            memcpy(s, d, (size_t)whole);
            s += whole;
            for (int i = whole; i <= x; i++)
                *s++ = '0';
            *s++ = '.';
            if (nd > x + 1) {
                memcpy(s, d + x + 1, (size_t)(nd - x - 1));
                s += nd - x - 1;
            } else {
                *s++ = '0';
            }
        } else {
            *s++ = '0';
            *s++ = '.';
            for (int i = 0; i < -x - 1; i++)
                *s++ = '0';
            memcpy(s, d, (size_t)nd);
            s += nd;
        }
    } else {
        *s++ = d[0];
        if (nd > 1) {
            *s++ = '.';
            memcpy(s, d + 1, (size_t)(nd - 1));
            s += nd - 1;
        }
        *s++ = 'e';
        *s++ = x < 0 ? '-' : '+';
        int ax = x < 0 ? -x : x;
        if (ax >= 100) {
            *s++ = (char)('0' + ax / 100);
            ax %= 100;
        }
        *s++ = (char)('0' + ax / 10);
        *s++ = (char)('0' + ax % 10);
    }
    *s = 0;
    return (int)(s - buf);
}

/* m * 2^e with its neighbours' midpoints; lower_closer when the neighbour below is half as far
 * (m is a power of two above the smallest normal). is_f32 also checks the reader that goes
 * through double first (see msg_format_f32_search). */
static int shortest_text(bool neg, uint64_t m, int e, bool lower_closer, int max_prec, bool is_f32,
                         char *buf)
{
    uint64_t lo_mant = 4 * m - (lower_closer ? 1 : 2), hi_mant = 4 * m + 2;
    exact_dec v, lo, hi;
    if (!exact_digits(m, e, &v) || !exact_digits(lo_mant, e - 2, &lo) ||
        !exact_digits(hi_mant, e - 2, &hi))
        return -ERANGE;
    bool even = (m & 1) == 0;
    /* msg_g_precision: at least the digits of v rounded to an integer when 1 <= |v| < 1e16. */
    int int_digits = 0;
    int x = 0;
    if (v.exp10 >= 0 && v.exp10 < 16) {
        round_digits(&v, v.exp10 + 1, &x);
        int_digits = x + 1;
    }
    /* Every number in [lo, hi] shares the digits lo and hi agree on, so a candidate whose zeros
     * would have to cover a nonzero one of them cannot be inside: skip those precisions. */
    int p_min = lo.exp10 == hi.exp10 ? shared_prefix(&lo, &hi) : 0;
    int p = 0, last_p = 0;
    uint64_t t = 0;
    /* The precisions the loop would skip for p_min are not visited (the last one always is). */
    int first_prec = p_min > int_digits ? (p_min < max_prec ? p_min : max_prec) : 1;
    for (int prec = first_prec; prec <= max_prec; prec++) {
        p = prec > int_digits ? prec : int_digits;
        if (p == last_p || (p < p_min && prec < max_prec))
            continue;
        last_p = p;
        t = round_digits(&v, p, &x);
        int cl = compare(t, p, x, &lo), ch = compare(t, p, x, &hi);
        bool inside = (cl > 0 || (cl == 0 && even)) && (ch < 0 || (ch == 0 && even));
        /* Through double, a candidate within half a double ulp of a midpoint lands on it and then
         * ties to the even float: it fails for an odd significand. Such closeness is rare and
         * needs more digits than we keep, so hand it to the search. */
        if (inside && is_f32 && (m & 1) && !exact_at(&v, p)) {
            if (p > 9)
                return -ERANGE;
            if (near_tie(p, x, &lo) || near_tie(p, x, &hi))
                return -ERANGE;
        }
        if (inside)
            break;
    }
    char dg[EXACT_DIGITS];
    digit_chars(t, p, dg);
    return layout(buf, neg, dg, p, x);
}


static int old_float_text_f32(float f, char buf[32])
{
    uint32_t bits = f32_to_bits(f);
    bool neg = bits >> 31;
    uint32_t field = bits & ((UINT32_C(1) << 23) - 1);
    int be = (int)(bits >> 23) & 0xff;
    if (be == 0xff)
        return -EINVAL;
    if (be == 0 && field == 0) {
        strcpy(buf, neg ? "-0.0" : "0.0");
        return neg ? 4 : 3;
    }
    if (be == 0)
        return shortest_text(neg, field, -149, false, 9, true, buf);
    return shortest_text(neg, field | (UINT32_C(1) << 23), be - 150, field == 0 && be > 1, 9, true,
                         buf);
}

/* ---- the check ---- */

/* The final text for a fast-path answer n in buf: buf itself, or the search's. */
static const char *final_text(float f, int n, char *buf, char *search, bool *searched)
{
    if (n >= 0)
        return buf;
    if (!*searched) {
        if (msg_format_f32_search(f, search) != 0)
            return NULL;
        *searched = true;
    }
    return search;
}

int main(int argc, char **argv)
{
    uint64_t first = argc > 1 ? strtoull(argv[1], NULL, 16) : 0;
    uint64_t last = argc > 2 ? strtoull(argv[2], NULL, 16) : UINT32_MAX;
    uint64_t checked = 0, new_fallback = 0, old_fallback = 0, searched_n = 0, differ = 0;
    for (uint64_t b = first; b <= last; b++) {
        if (((b >> 23) & 0xff) == 0xff) { /* NaN and infinity: skip the whole exponent */
            b |= 0x7fffff;
            continue;
        }
        float f = f32_from_bits((uint32_t)b);
        char now[32], before[32], search[32];
        int n = msg_float_text_f32(f, now), o = old_float_text_f32(f, before);
        checked++;
        new_fallback += n == -ERANGE;
        old_fallback += o == -ERANGE;
        bool same;
        if (n >= 0 && o >= 0) {
            same = n == o && strcmp(now, before) == 0 && (size_t)n == strlen(now);
        } else if ((n < 0 && n != -ERANGE) || (o < 0 && o != -ERANGE)) {
            same = false;
        } else if (n < 0 && o < 0) {
            same = true; /* both the search */
        } else {
            bool did = false;
            const char *a = final_text(f, n, now, search, &did);
            const char *c = final_text(f, o, before, search, &did);
            searched_n++;
            same = a && c && strcmp(a, c) == 0 && (n < 0 || (size_t)n == strlen(now));
        }
        if (!same) {
            if (differ < 20)
                printf("DIFF bits %08" PRIx64 " (%a): now %d \"%s\", before %d \"%s\"\n", b,
                       (double)f, n, n >= 0 ? now : "-", o, o >= 0 ? before : "-");
            differ++;
        }
        if ((b & 0xfffffff) == 0xfffffff) {
            fprintf(stderr, "at %08" PRIx64 ": %" PRIu64 " checked, %" PRIu64 " differ\n", b,
                    checked, differ);
        }
    }
    printf("range %08" PRIx64 "..%08" PRIx64 ": %" PRIu64 " finite values, %" PRIu64
           " differ; -ERANGE now %" PRIu64 ", before %" PRIu64 "; %" PRIu64
           " compared with the search\n",
           first, last, checked, differ, new_fallback, old_fallback, searched_n);
    return differ ? 1 : 0;
}
