/* SPDX-License-Identifier: MIT */
/* text_put_i64/u64/f32/f64, the appenders the JSON writers use instead of snprintf: the same
 * text as printf's %lld/%llu and as text_format_f32/f64, appended after what the buffer holds. */
#include "testutil.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/bytes.h"
#include "base/text.h"

/* Appends after a prefix so that a writer that ignores out->len shows up. */
static void expect_text(recd_buf *b, const char *want)
{
    assert_int_equal(b->len, 3 + strlen(want));
    if (memcmp(b->data, "ab,", 3) != 0 || memcmp(b->data + 3, want, strlen(want)) != 0)
        fail_msg("appended \"%.*s\", want \"%s\"", (int)b->len - 3, (const char *)b->data + 3, want);
}

static void check_i64(int64_t v)
{
    recd_buf b = {0};
    char want[32];
    snprintf(want, sizeof want, "%" PRId64, v);
    assert_int_equal(recd_buf_append(&b, "ab,", 3), 0);
    assert_int_equal(text_put_i64(&b, v), 0);
    expect_text(&b, want);
    recd_buf_free(&b);
}

static void check_u64(uint64_t v)
{
    recd_buf b = {0};
    char want[32];
    snprintf(want, sizeof want, "%" PRIu64, v);
    assert_int_equal(recd_buf_append(&b, "ab,", 3), 0);
    assert_int_equal(text_put_u64(&b, v), 0);
    expect_text(&b, want);
    recd_buf_free(&b);
}

static void test_integers(void **state)
{
    (void)state;
    static const int64_t fixed[] = {0, 1, -1, 9, 10, -10, 99, 100, 101, 999, 1000, INT32_MAX,
                                    INT32_MIN, (int64_t)UINT32_MAX, INT64_MAX, INT64_MIN,
                                    INT64_MIN + 1};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        check_i64(fixed[i]);
        check_u64((uint64_t)fixed[i]);
    }
    /* Every power of ten and its neighbours: where the digit count changes. */
    for (uint64_t p = 1; p <= UINT64_C(10000000000000000000); p *= 10) {
        check_u64(p - 1);
        check_u64(p);
        check_u64(p + 1);
        if (p <= (uint64_t)INT64_MAX) {
            check_i64((int64_t)p);
            check_i64(-(int64_t)p);
            check_i64((int64_t)p - 1);
        }
        if (p == UINT64_C(10000000000000000000))
            break;
    }
    check_u64(UINT64_MAX);
    tu_rng r = {.s = 0xa11ce5ULL};
    for (int i = 0; i < 100000; i++) {
        uint64_t x = tu_rand(&r) >> (tu_rand(&r) % 64);
        check_u64(x);
        check_i64((int64_t)x);
        check_i64(-(int64_t)(x >> 1));
    }
}

static void check_f32(float f)
{
    recd_buf b = {0};
    char want[32];
    assert_int_equal(text_format_f32(f, want), 0);
    assert_int_equal(recd_buf_append(&b, "ab,", 3), 0);
    assert_int_equal(text_put_f32(&b, f), 0);
    expect_text(&b, want);
    recd_buf_free(&b);
}

static void check_f64(double d)
{
    recd_buf b = {0};
    char want[40];
    assert_int_equal(text_format_f64(d, want), 0);
    assert_int_equal(recd_buf_append(&b, "ab,", 3), 0);
    assert_int_equal(text_put_f64(&b, d), 0);
    expect_text(&b, want);
    recd_buf_free(&b);
}

static void test_floats(void **state)
{
    (void)state;
    /* The fast text and the search fallback (tiny and huge magnitudes) both land in the buffer. */
    static const double fixed[] = {0.0, -0.0, 1.0, -1.5, 0.1, 1e-300, 5e-324, DBL_MAX, 1e22, 1e23,
                                   FLT_MAX, FLT_MIN, FLT_TRUE_MIN, 123456.789, -3.4e38};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        check_f64(fixed[i]);
        if (fabs(fixed[i]) <= FLT_MAX)
            check_f32((float)fixed[i]);
    }
    for (int e = -1074; e <= 1023; e += 7)
        check_f64(ldexp(1.2345678901234567, e));
    for (int e = -149; e <= 127; e++)
        check_f32((float)ldexp(1.2345678, e));

    recd_buf b = {0};
    assert_int_equal(recd_buf_append(&b, "x", 1), 0);
    assert_int_equal(text_put_f32(&b, NAN), -EINVAL);
    assert_int_equal(text_put_f64(&b, INFINITY), -EINVAL);
    assert_int_equal(b.len, 1); /* nothing appended on failure */
    recd_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integers),
        cmocka_unit_test(test_floats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
