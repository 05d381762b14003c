/* SPDX-License-Identifier: MIT */
/* Shortest round-trip number text without printf or strtod. The rule is the one the search in
 * number_text.c defines: for precision 1, 2, ... (never fewer digits than the integer part when
 * 1 <= |v| < 1e16), take v correctly rounded to that many significant digits and stop at the
 * first text that reads back as v; then lay it out like %g and add ".0" when it has neither '.'
 * nor an exponent. Here "reads back as v" is decided exactly: the first 19 decimal digits of v and
 * of the two midpoints to its neighbours come from 128-bit fixed-point arithmetic, and a rounded
 * candidate is compared with the midpoints digit by digit (ties go to the even significand, as
 * strtod does). Values whose fixed point does not fit 128 bits get -ERANGE, and the caller uses
 * the search (for every value on targets without __int128). Most f32 values (1e-10 .. 1e18) take
 * f32_shortest instead: the same rule on one 64-bit decimal scale for v and both midpoints, about
 * a third of the instructions; bench/float_text/f32_exhaustive checks it against this algorithm
 * for every f32. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/bytes.h"
#include "base/float_text.h"

const char text_digit_pairs[201] = "00010203040506070809101112131415161718192021222324252627282930"
                                  "31323334353637383940414243444546474849505152535455565758596061"
                                  "62636465666768697071727374757677787980818283848586878889909192"
                                  "93949596979899";

#ifdef __SIZEOF_INT128__
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
 * through double first (see text_format_f32_search). */
static int shortest_text(bool neg, uint64_t m, int e, bool lower_closer, int max_prec, bool is_f32,
                         char *buf)
{
    uint64_t lo_mant = 4 * m - (lower_closer ? 1 : 2), hi_mant = 4 * m + 2;
    exact_dec v, lo, hi;
    if (!exact_digits(m, e, &v) || !exact_digits(lo_mant, e - 2, &lo) ||
        !exact_digits(hi_mant, e - 2, &hi))
        return -ERANGE;
    bool even = (m & 1) == 0;
    /* text_g_precision: at least the digits of v rounded to an integer when 1 <= |v| < 1e16. */
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


/* t (< 10^9) as exactly nine digits, leading zeros included, without divisions: y holds
 * t / 10^8 with 57 fraction bits, and each step multiplies the fraction by 100 to bring the next
 * two digits above bit 57. The constant is 2^57 / 10^8 rounded up, by e < 0.25, so y runs ahead
 * of the true value by at most t * e < 2^28 units: 100^4 times that is below 0.17 of a unit of
 * the last pair, and at each step it is less than the gap (>= 1/10^8 of the step's value) to the
 * next integer, so no digit is ever off. The fraction times 100 stays below 2^64. */
static inline void nine_digits(uint32_t t, char *out)
{
    const uint64_t frac = (UINT64_C(1) << 57) - 1;
    uint64_t y = (uint64_t)t * UINT64_C(1441151881);
    out[0] = (char)('0' + (y >> 57));
    y = (y & frac) * 100;
    memcpy(out + 1, text_digit_pairs + 2 * (y >> 57), 2);
    y = (y & frac) * 100;
    memcpy(out + 3, text_digit_pairs + 2 * (y >> 57), 2);
    y = (y & frac) * 100;
    memcpy(out + 5, text_digit_pairs + 2 * (y >> 57), 2);
    y = (y & frac) * 100;
    memcpy(out + 7, text_digit_pairs + 2 * (y >> 57), 2);
}

/* layout for f32 texts straight into buf (32 bytes): the p-digit candidate t (< 10^p <= 10^16)
 * at exp10 x. The fixed-size copies may write digits past the text's end; all stay in buf. */
static int f32_layout(char *buf, bool neg, uint64_t t, int p, int x)
{
    char all[48] = {0}; /* the copies below read past the digits: keep those bytes defined */
    if (t < 1000000000) {
        nine_digits((uint32_t)t, all + 9);
    } else {
        nine_digits((uint32_t)(t / 1000000000), all);
        nine_digits((uint32_t)(t % 1000000000), all + 9);
    }
    const char *d = all + 18 - p;
    int n = p;
    while (n > 1 && d[n - 1] == '0')
        n--;
    char *s = buf;
    *s = '-';
    s += neg;
    if (x >= -4 && x < p) {
        if (x < 0) {
            memcpy(s, "0.0000", 6);
            s += 1 - x;
            memcpy(s, d, 16); /* n <= 9 here */
            s += n;
        } else if (n > x + 1) { /* here p <= 9, so x <= 7 */
            memcpy(s, d, 16);
            s += x + 1;
            *s++ = '.';
            memcpy(s, d + x + 1, 16);
            s += n - x - 1;
        } else {
            memcpy(s, d, 16);
            s += n;
            for (int i = n; i <= x; i++)
                *s++ = '0';
            *s++ = '.';
            *s++ = '0';
        }
    } else {
        *s++ = d[0];
        if (n > 1) {
            *s = '.';
            memcpy(s + 1, d + 1, 16);
            s += n;
        }
        *s++ = 'e';
        *s++ = x < 0 ? '-' : '+';
        unsigned ax = (unsigned)(x < 0 ? -x : x); /* below 50 for an f32 */
        memcpy(s, text_digit_pairs + 2 * ax, 2);
        s += 2;
    }
    *s = 0;
    return (int)(s - buf);
}

/* The biased exponents f32_shortest covers: 10^-10 <= 2^(be - 127) < 10^18, where the scale
 * 10^s below needs 0 <= s <= 27 (5^27 is the largest power of five in 64 bits). */
#define F32_FAST_BE_MIN 94
#define F32_FAST_BE_MAX 186

/* shortest_text for a normal f32 in the range above, from one decimal scale shared by v and
 * the midpoints lo and hi. V, L and H are floor(value * 10^s) in 64 bits with a flag for a
 * nonzero remainder. value * 10^s = X * 5^s * 2^(e - 2 + s) for the integers X = 4m and
 * 4m - 1 or 2, 4m + 2; shifting X and 5^s so that the powers of two come to 2^64 makes the
 * 128-bit product's high half the floor and its low half the remainder, exactly. Candidates are
 * multiples of a power of ten on that scale, so comparing them with lo and hi is comparing
 * integers. */
static int f32_shortest(bool neg, uint32_t field, int be, char *buf)
{
    uint32_t m = field | (UINT32_C(1) << 23);
    /* floor((be - 127) * log10(2)), so 10^est <= v < 2 * 10^(est + 1); the offset of 64 keeps
     * the shifted number positive. */
    int est = (((be - 127) * 78913 + (64 << 18)) >> 18) - 64;
    int s = 17 - est; /* so 10^17 <= V < 2 * 10^18 */
    uint64_t f = pow5_table[s];
    int z = __builtin_clzll(f);
    f <<= z;
    /* X * 5^s * 2^(be - 152 + s) = (X << b) * (5^s << z) / 2^64; b is 32..35, X < 2^26. */
    int b = 64 + be - 152 + s - z;
    uint64_t xv = (uint64_t)m << (b + 2), step = UINT64_C(1) << b;
    uint64_t xl = xv - (field == 0 ? step : 2 * step), xh = xv + 2 * step;
    u128 pv = (u128)xv * f, pl = (u128)xl * f, ph = (u128)xh * f;
    uint64_t V = (uint64_t)(pv >> 64), L = (uint64_t)(pl >> 64), H = (uint64_t)(ph >> 64);
    bool v_rest = (uint64_t)pv != 0, l_rest = (uint64_t)pl != 0, h_rest = (uint64_t)ph != 0;
    int nd = V >= pow10_table[18] ? 19 : 18; /* V's digits */
    int x = nd - 1 - s;                      /* v's exp10 */
    bool even = (m & 1) == 0;
    /* The candidates c that read back as v are exactly lo_min <= c <= hi_max: lo and hi
     * themselves only for an even m (ties go to the even significand). */
    uint64_t lo_min = L + (l_rest || !even), hi_max = H - (!h_rest && !even);
    uint64_t width = hi_max - lo_min;

    /* A p-digit candidate is a multiple of 10^(nd - p), so no precision whose unit has no
     * multiple in [lo_min, hi_max] can answer: start at the first that has one. A width of
     * 10^k or more holds a multiple of 10^k. */
    int k = ((64 - __builtin_clzll(width)) * 1233) >> 12; /* about log10 of 2^bits */
    if (width < pow10_table[k])
        k--;
    /* Is there a multiple of 10^(k + 1)? Stops by k + 1 = 19: hi_max < 10^19 and lo_min > 0. */
    while (hi_max % pow10_table[k + 1] <= width)
        k++;
    int p_min = nd - k > 1 ? nd - k : 1;

    /* text_g_precision: never fewer digits than v rounded to an integer when 1 <= v < 1e16. Only
     * needed when it can exceed p_min or 9. Rounding is half to even on the exact value:
     * rem + 1 > half exactly when rem > half, or rem == half and a tie goes up. */
    int int_digits = 0;
    if (x >= 0 && x < 16 && (x + 2 > p_min || x >= 8)) {
        uint64_t unit = pow10_table[s], t = V / unit, rem = V - t * unit;
        t += rem + (v_rest || (t & 1)) > unit / 2;
        int_digits = t == pow10_table[x + 1] ? x + 2 : x + 1;
    }
    int max_p = int_digits > 9 ? int_digits : 9;
    int p = p_min > int_digits ? p_min : int_digits;
    uint64_t t;
    if (p > max_p) { /* nothing is inside: the last precision is the answer */
        p = max_p;
        uint64_t unit = pow10_table[nd - p], rem;
        t = V / unit;
        rem = V - t * unit;
        t += rem + (v_rest || (t & 1)) > unit / 2;
    } else {
        for (;;) {
            uint64_t unit = pow10_table[nd - p], rem;
            t = V / unit;
            rem = V - t * unit;
            t += rem + (v_rest || (t & 1)) > unit / 2;
            if (t * unit - lo_min <= width) { /* inside */
                /* Through double, a candidate within half a double ulp of a midpoint lands on
                 * it and ties to the even float, failing an odd m. On this scale that half ulp
                 * is below 2^61 * 2^-53 = 256, and a midpoint at least unit / 10^6 (>= 1000)
                 * away from every multiple of unit is safe; closer ones go to the search. */
                if (!even && (rem != 0 || v_rest)) {
                    if (p > 9)
                        return -ERANGE;
                    uint64_t near = pow10_table[nd - p - 6], l_off = L % unit, h_off = H % unit;
                    if (l_off < near || l_off >= unit - near || h_off < near ||
                        h_off >= unit - near)
                        return -ERANGE;
                }
                break;
            }
            if (p == max_p)
                break;
            p++;
        }
    }
    if (t == pow10_table[p]) { /* rounding carried into a new digit */
        t = pow10_table[p - 1];
        x++;
    }
    return f32_layout(buf, neg, t, p, x);
}
#endif

int float_text_f64(double d, char buf[40])
{
    uint64_t bits = f64_to_bits(d);
    bool neg = bits >> 63;
    uint64_t field = bits & ((UINT64_C(1) << 52) - 1);
    int be = (int)(bits >> 52) & 0x7ff;
    if (be == 0x7ff)
        return -EINVAL;
    if (be == 0 && field == 0) {
        strcpy(buf, neg ? "-0.0" : "0.0");
        return neg ? 4 : 3;
    }
#ifdef __SIZEOF_INT128__
    if (be == 0)
        return shortest_text(neg, field, -1074, false, 17, false, buf);
    return shortest_text(neg, field | (UINT64_C(1) << 52), be - 1075, field == 0 && be > 1, 17,
                         false, buf);
#else
    return -ERANGE; /* no 128-bit integers (32-bit targets): the search does it all */
#endif
}

/* f32 text by the 19-digit algorithm; with_fast_path tries f32_shortest first where it applies. */
static int f32_text(float f, bool with_fast_path, char buf[32])
{
    uint32_t bits = f32_to_bits(f);
    bool neg = bits >> 31;
    uint32_t field = bits & ((UINT32_C(1) << 23) - 1);
    int be = (int)(bits >> 23) & 0xff;
    if (be == 0xff)
        return -EINVAL;
#ifdef __SIZEOF_INT128__
    if (with_fast_path && be >= F32_FAST_BE_MIN && be <= F32_FAST_BE_MAX)
        return f32_shortest(neg, field, be, buf);
#else
    (void)with_fast_path;
#endif
    if (be == 0 && field == 0) {
        strcpy(buf, neg ? "-0.0" : "0.0");
        return neg ? 4 : 3;
    }
#ifdef __SIZEOF_INT128__
    if (be == 0)
        return shortest_text(neg, field, -149, false, 9, true, buf);
    return shortest_text(neg, field | (UINT32_C(1) << 23), be - 150, field == 0 && be > 1, 9, true,
                         buf);
#else
    return -ERANGE;
#endif
}

int float_text_f32(float f, char buf[32]) { return f32_text(f, true, buf); }

int float_text_f32_wide(float f, char buf[32]) { return f32_text(f, false, buf); }
