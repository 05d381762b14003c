/* SPDX-License-Identifier: MIT */
/* The fast number text (base/float_text.c) against the printf/strtod search it replaces: the same
 * bytes for edge cases and for 2*10^6 random f32/f64 values in a normal build (10^5 under
 * AddressSanitizer, which is several times slower; $RECD_FLOAT_TEXT_COUNT overrides: `make soak`
 * runs 10^8). */
#include "testutil.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "base/text.h"
#include "base/float_text.h"

#ifdef TU_SANITIZED
#define DEFAULT_COUNT 100000u
#else
#define DEFAULT_COUNT 2000000u
#endif

static unsigned long fast_answers, fallbacks, checked;

static void check_f64(double d)
{
    char want[40], got[40], fast[40];
    if (!isfinite(d))
        return;
    assert_int_equal(text_format_f64_search(d, want), 0);
    int n = float_text_f64(d, fast);
    if (n >= 0) {
        fast_answers++;
        assert_int_equal((size_t)n, strlen(fast));
        if (strcmp(fast, want) != 0)
            fail_msg("f64 %a (bits %016llx): fast \"%s\", search \"%s\"", d,
                     (unsigned long long)f64_to_bits(d), fast, want);
    } else {
        assert_int_equal(n, -ERANGE);
        fallbacks++;
    }
    /* The wrapper is the fast path or the search itself: a sample is enough. */
    if (checked % 16 == 0 && (text_format_f64(d, got) != 0 || strcmp(got, want) != 0))
        fail_msg("f64 %a: text_format_f64 \"%s\", search \"%s\"", d, got, want);
    checked++;
}

static void check_f32(float f)
{
    char want[32], got[32], fast[32];
    if (!isfinite(f))
        return;
    assert_int_equal(text_format_f32_search(f, want), 0);
    int n = float_text_f32(f, fast);
    if (n >= 0) {
        fast_answers++;
        assert_int_equal((size_t)n, strlen(fast));
        if (strcmp(fast, want) != 0)
            fail_msg("f32 %a (bits %08x): fast \"%s\", search \"%s\"", (double)f,
                     (unsigned)f32_to_bits(f), fast, want);
    } else {
        assert_int_equal(n, -ERANGE);
        fallbacks++;
    }
    /* The wrapper is the fast path or the search itself: a sample is enough. */
    if (checked % 16 == 0 && (text_format_f32(f, got) != 0 || strcmp(got, want) != 0))
        fail_msg("f32 %a: text_format_f32 \"%s\", search \"%s\"", (double)f, got, want);
    checked++;
}

/* d and its neighbours a few ulps away, both signs; the same for its nearest float. */
static void check_around(double d)
{
    if (!isfinite(d))
        return;
    double a = d, b = d;
    for (int k = 0; k < 3; k++) {
        check_f64(a);
        check_f64(-a);
        check_f64(b);
        a = nextafter(a, INFINITY);
        b = nextafter(b, -INFINITY);
    }
    if (fabs(d) <= FLT_MAX) {
        float fa = (float)d, fb = fa;
        for (int k = 0; k < 3; k++) {
            check_f32(fa);
            check_f32(-fa);
            check_f32(fb);
            fa = nextafterf(fa, INFINITY);
            fb = nextafterf(fb, -INFINITY);
        }
    }
}

static void test_edge_cases(void **state)
{
    (void)state;
    check_f64(0.0);
    check_f64(-0.0);
    check_f32(0.0f);
    check_f32(-0.0f);
    static const double fixed[] = {DBL_MAX, DBL_MIN, DBL_TRUE_MIN, FLT_MAX, FLT_MIN, FLT_TRUE_MIN,
                                   0.1, 0.2, 0.3, 1.0 / 3, 2.0 / 3, 9.5, 99.5, 0.5, 1.5, 2.5,
                                   999999.5, 9999999999999999.0, 1e16, 1e15, 1e17, 1e23, 5e-324,
                                   4.35, 1.005, 0.0001, 0.00001, 123456789.0, 16777217.0,
                                   9007199254740993.0, 3.4028235677973366e+38};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        check_around(fixed[i]);
    for (int e = -1074; e <= 1023; e++)
        check_around(ldexp(1.0, e));
    /* Every binary exponent with long significands: where the one-multiplication expansion
     * (mant * 5^s in 128 bits) stops fitting and the digit-by-digit one takes over. */
    for (int e = -1074; e <= 1023; e++) {
        check_f64(ldexp(0x1.fffffffffffffp0, e));
        check_f64(ldexp(0x1.5555555555555p0, e));
        check_f64(ldexp(0x1.0000000000001p0, e));
    }
    for (int e = -149; e <= 127; e++) {
        check_f32((float)ldexp(0x1.fffffep0, e));
        check_f32((float)ldexp(0x1.555556p0, e));
        check_f32((float)ldexp(0x1.000002p0, e));
    }
    for (int e = -323; e <= 308; e++) {
        char t[32];
        snprintf(t, sizeof t, "1e%d", e);
        check_around(strtod(t, NULL));
        snprintf(t, sizeof t, "9.999999e%d", e);
        check_around(strtod(t, NULL));
        float f = strtof(t, NULL);
        if (isfinite(f))
            check_f32(f);
    }
    /* Subnormals: every small one and a spread of the rest. */
    for (uint64_t m = 1; m < 2000; m++) {
        check_f64(f64_from_bits(m));
        check_f32(f32_from_bits((uint32_t)m));
    }
    for (uint64_t m = 1; m < (UINT64_C(1) << 52); m = m * 3 + 1)
        check_f64(f64_from_bits(m));
    for (uint32_t m = 1; m < (1u << 23); m = m * 3 + 1)
        check_f32(f32_from_bits(m));
    /* Integers at and around the digit and 2^53 limits. */
    for (int k = 0; k <= 53; k++) {
        double p = ldexp(1.0, k);
        check_around(p - 1);
        check_around(p + 1);
    }
    for (double p = 1; p <= 1e22; p *= 10) {
        check_around(p - 1);
        check_around(p - 0.5);
        check_around(p + 0.5);
    }
}

/* f32 values where the f32 path's decisions change: the first and last significands of every
 * binary exponent (the fast range ends at 94 and 186), floats around each power of ten and just
 * below it (rounding carries into a new digit), integers and halves (the integer-digits rule;
 * every f32 integer up to 2^16 and a stride to 2^24), and around 1e16 where that rule stops. */
static void test_f32_edges(void **state)
{
    (void)state;
    for (uint32_t be = 0; be < 255; be++) {
        for (uint32_t field = 0; field < 4; field++) {
            check_f32(f32_from_bits(be << 23 | field));
            check_f32(f32_from_bits(be << 23 | (0x7fffff - field)));
        }
    }
    for (int e = -46; e <= 39; e++) {
        char t[32];
        snprintf(t, sizeof t, "1e%d", e);
        float p = strtof(t, NULL), a = p, b = p;
        for (int k = 0; k < 8 && isfinite(a); k++) {
            check_f32(a);
            check_f32(b);
            a = nextafterf(a, INFINITY);
            b = nextafterf(b, 0.0f);
        }
        snprintf(t, sizeof t, "9.9999995e%d", e);
        check_f32(strtof(t, NULL));
        snprintf(t, sizeof t, "9.999999e%d", e);
        check_f32(strtof(t, NULL));
    }
    for (uint32_t n = 1; n <= 65536; n++)
        check_f32((float)n);
    for (uint32_t n = 65536; n <= (1u << 24); n += 97)
        check_f32((float)n);
    for (uint32_t n = 0; n < 20000; n++)
        check_f32((float)n + 0.5f);
    for (float f = 9.999e15f, g = 1.0001e16f; f < g; f = nextafterf(f, INFINITY))
        check_f32(f);
}

static void test_random_values(void **state)
{
    (void)state;
    unsigned long count = DEFAULT_COUNT;
    const char *env = getenv("RECD_FLOAT_TEXT_COUNT");
    if (env && *env)
        count = strtoul(env, NULL, 10);
    tu_rng r = {.s = 0x5eed0f10a7ULL};
    fast_answers = fallbacks = checked = 0;
    for (unsigned long i = 0; i < count; i++) {
        uint64_t x = tu_rand(&r);
        double d;
        float f;
        switch (i % 8) {
        case 0: /* any f64 bit pattern */
            d = f64_from_bits(x);
            if (isfinite(d))
                check_f64(d);
            break;
        case 1: /* any f32 bit pattern */
            f = f32_from_bits((uint32_t)x);
            if (isfinite(f))
                check_f32(f);
            break;
        case 2: /* f64 with magnitudes telemetry has: 2^-40 .. 2^60 */
            d = ldexp((double)(x >> 11) / 9007199254740992.0 + 1.0, (int)((x & 127) % 101) - 40);
            check_f64(x & 1024 ? -d : d);
            break;
        case 3: /* f32 with the same magnitudes */
            f = (float)ldexp((double)(x >> 40) / 16777216.0 + 1.0, (int)((x & 127) % 101) - 40);
            check_f32(x & 1024 ? -f : f);
            break;
        case 4: /* short decimals, like sensor readings: digits / 10^k */
            d = (double)(x % 100000000u) / pow(10.0, (double)((x >> 32) % 12));
            check_f64(d);
            check_f32((float)d);
            break;
        case 5: /* integers up to 2^53 */
            d = (double)(x >> (11 + (x & 63) % 53));
            check_f64(d);
            check_f32((float)d);
            break;
        case 6: /* near 1e16 and other powers of ten */
            d = pow(10.0, (double)((x & 63) % 40) - 10.0) * (1.0 + ((double)((x >> 8) & 0xffff) - 32768.0) * 1e-15);
            check_f64(d);
            check_f32((float)d);
            break;
        default: /* within a few ulps of a random power of two */
            d = ldexp(1.0, (int)((x & 0xfff) % 2000) - 1000);
            for (int k = (int)((x >> 16) % 4); k > 0; k--)
                d = x & (1 << 20) ? nextafter(d, 0) : nextafter(d, INFINITY);
            check_f64(d);
            f = (float)ldexp(1.0, (int)((x & 0xfff) % 250) - 125);
            for (int k = (int)((x >> 24) % 4); k > 0; k--)
                f = x & (1 << 21) ? nextafterf(f, 0) : nextafterf(f, INFINITY);
            check_f32(f);
            break;
        }
    }
    printf("float text: %lu values checked, %lu by the fast path, %lu by the search fallback\n",
           checked, fast_answers, fallbacks);
#ifdef __SIZEOF_INT128__
    /* The fast path must carry the common magnitudes, not the fallback. */
    assert_true(fast_answers > checked / 2);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edge_cases),
        cmocka_unit_test(test_f32_edges),
        cmocka_unit_test(test_random_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
