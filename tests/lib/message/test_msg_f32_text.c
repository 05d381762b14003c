/* SPDX-License-Identifier: MIT */
/* text_f32_cached, f32 text through the per-thread memo: every answer equals the uncached text
 * (float_text_f32, else the search), before the thread has a memo, from the memo, from a
 * slot another value took over, or from another thread's memo; NaN and infinities are refused
 * every time. */
#include "testutil.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "base/bytes.h"
#include "base/float_text.h"

static void uncached(float f, char want[32])
{
    int n = float_text_f32(f, want);
    if (n == -ERANGE)
        assert_int_equal(text_format_f32_search(f, want), 0);
    else
        assert_true(n > 0);
}

/* 0 when text_f32_cached gives f the uncached text; 1 otherwise (so threads can count). */
static int differs(float f)
{
    char want[32], got[32];
    uncached(f, want);
    memset(got, 'x', sizeof got);
    int n = text_f32_cached(f, got);
    if (n != (int)strlen(want) || memcmp(got, want, strlen(want)) != 0) {
        print_error("bits %08x: \"%.*s\" (%d), want \"%s\"\n", f32_to_bits(f), n > 0 ? n : 0, got,
                    n, want);
        return 1;
    }
    return 0;
}

/* Values that fill and refill the 4,096 slots: each is asked for three times, far apart, so
 * most come back after their slot was taken by another. */
static int check_random(uint64_t seed, int count)
{
    tu_rng r = {seed};
    int bad = 0;
    float vals[512] = {0};
    for (int i = 0; i < count; i++) {
        uint32_t bits = (uint32_t)tu_rand(&r);
        if (i % 3 == 0) /* telemetry magnitudes, some repeated */
            bits = f32_to_bits((float)tu_rand_double(&r, -5000.0, 5000.0));
        float f = f32_from_bits(bits);
        if (!isfinite(f))
            continue;
        vals[i % 512] = f;
        bad += differs(f);
        bad += differs(vals[(i * 7) % 512]);
        bad += differs(f);
    }
    return bad;
}

static void test_memo_gives_the_uncached_text(void **state)
{
    (void)state;
    static const float fixed[] = {1.0f, -1.0f, 0.1f, 1e-45f, -1e-45f, FLT_MIN, FLT_MAX, -FLT_MAX,
                                  1e15f, -999999986991104.0f, 16777216.0f, 3.4028235e38f,
                                  7.994152f, -90.000114f, -6.14717e-05f, 0.0f, -0.0f};
    for (int round = 0; round < 3; round++)
        for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
            assert_int_equal(differs(fixed[i]), 0);
    assert_int_equal(check_random(0x5eed, 200000), 0);
}

static void test_non_finite_refused(void **state)
{
    (void)state;
    char buf[32];
    for (int round = 0; round < 2; round++) {
        assert_int_equal(text_f32_cached(NAN, buf), -EINVAL);
        assert_int_equal(text_f32_cached(INFINITY, buf), -EINVAL);
        assert_int_equal(text_f32_cached(-INFINITY, buf), -EINVAL);
    }
}

static void *thread_main(void *arg)
{
    uint64_t seed = *(const uint64_t *)arg;
    return (void *)(intptr_t)check_random(seed, 60000);
}

/* Each thread has its own memo: four at once, each over its own values, all right. */
static void test_threads(void **state)
{
    (void)state;
    pthread_t t[4];
    uint64_t seeds[4] = {1, 2, 3, 4};
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, thread_main, &seeds[i]), 0);
    for (int i = 0; i < 4; i++) {
        void *bad = NULL;
        assert_int_equal(pthread_join(t[i], &bad), 0);
        assert_int_equal((intptr_t)bad, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memo_gives_the_uncached_text),
        cmocka_unit_test(test_non_finite_refused),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
