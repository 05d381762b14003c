/* SPDX-License-Identifier: MIT */
/* Tests for daemon/support/units.c: duration and size parsing, overflow, and printing. */
#include "testutil.h"

#include <errno.h>
#include <string.h>

#include "support/units.h"

static void durations_parse(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        uint64_t ms;
    } ok[] = {
        {"250ms", 250}, {"1s", 1000}, {"5m", 300000}, {"2h", 7200000}, {"30d", 2592000000ull},
        {"0", 0},       {"0s", 0},    {"10 s", 10000}, {"18446744073709551615ms", UINT64_MAX},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        uint64_t v = 1;
        const char *why = "unset";
        assert_int_equal(recd_parse_duration_ms(ok[i].text, &v, &why), 0);
        assert_true(v == ok[i].ms);
        assert_null(why);
    }
}

static void durations_reject(void **state)
{
    (void)state;
    static const char *const bad[] = {"", "1", "30", "s", "1.5s", "-1s", "1x", "1 sec", "1S", "1s ", " 1s", "1h30m",
                                      "0x10s"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t v = 7;
        const char *why = NULL;
        assert_int_equal(recd_parse_duration_ms(bad[i], &v, &why), -EINVAL);
        assert_non_null(why);
        assert_true(v == 7);
    }
    const char *why = NULL;
    uint64_t v;
    assert_int_equal(recd_parse_duration_ms("1.5s", &v, &why), -EINVAL);
    assert_non_null(strstr(why, "fraction"));
    assert_int_equal(recd_parse_duration_ms("30", &v, &why), -EINVAL);
    assert_non_null(strstr(why, "unit"));
}

static void durations_overflow(void **state)
{
    (void)state;
    uint64_t v;
    const char *why = NULL;
    assert_int_equal(recd_parse_duration_ms("18446744073709551616ms", &v, &why), -ERANGE);
    assert_int_equal(recd_parse_duration_ms("99999999999999999999999999d", &v, &why), -ERANGE);
    assert_int_equal(recd_parse_duration_ms("213503982335d", &v, &why), -ERANGE); /* * 86400000 overflows */
    assert_int_equal(recd_parse_duration_ms("213503982334d", &v, &why), 0);
    assert_true(v == 213503982334ull * 86400000ull);
    assert_int_equal(recd_parse_duration_ms("18446744073709552s", &v, &why), -ERANGE);
}

static void sizes_parse(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        uint64_t bytes;
    } ok[] = {
        {"64KiB", 65536},       {"1MiB", 1048576}, {"10GiB", 10737418240ull}, {"1000", 1000},
        {"0", 0},               {"1TiB", 1ull << 40}, {"512B", 512},          {"4 KiB", 4096},
        {"16777215TiB", 16777215ull << 40},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        uint64_t v = 1;
        assert_int_equal(recd_parse_size(ok[i].text, &v, NULL), 0);
        assert_true(v == ok[i].bytes);
    }
}

static void sizes_reject(void **state)
{
    (void)state;
    static const char *const bad[] = {"", "KiB", "64KB", "64kb", "64kib", "1.5MiB", "-1", "64 K", "1e6", "64KiBs"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t v = 7;
        const char *why = NULL;
        assert_int_equal(recd_parse_size(bad[i], &v, &why), -EINVAL);
        assert_non_null(why);
        assert_true(v == 7);
    }
    uint64_t v;
    const char *why;
    assert_int_equal(recd_parse_size("16777216TiB", &v, &why), -ERANGE);
    assert_int_equal(recd_parse_size("18446744073709551616", &v, &why), -ERANGE);
    assert_int_equal(recd_parse_size("18446744073709551615", &v, &why), 0);
    assert_true(v == UINT64_MAX);
}

static void formatting_round_trips(void **state)
{
    (void)state;
    char buf[64];
    recd_format_duration_ms(90000, buf, sizeof buf);
    assert_string_equal(buf, "90s");
    recd_format_duration_ms(3600000, buf, sizeof buf);
    assert_string_equal(buf, "1h");
    recd_format_duration_ms(1500, buf, sizeof buf);
    assert_string_equal(buf, "1500ms");
    recd_format_duration_ms(0, buf, sizeof buf);
    assert_string_equal(buf, "0");
    recd_format_size(65536, buf, sizeof buf);
    assert_string_equal(buf, "64KiB");
    recd_format_size(1000, buf, sizeof buf);
    assert_string_equal(buf, "1000");
    recd_format_size(1536, buf, sizeof buf);
    assert_string_equal(buf, "1536");
    recd_format_size(3ull << 40, buf, sizeof buf);
    assert_string_equal(buf, "3TiB");

    tu_rng rng = {42};
    for (int i = 0; i < 10000; i++) {
        uint64_t v = tu_rand(&rng) >> (tu_rand_below(&rng, 64));
        uint64_t back;
        recd_format_duration_ms(v, buf, sizeof buf);
        assert_int_equal(recd_parse_duration_ms(buf, &back, NULL), 0);
        assert_true(back == v);
        recd_format_size(v, buf, sizeof buf);
        assert_int_equal(recd_parse_size(buf, &back, NULL), 0);
        assert_true(back == v);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(durations_parse),    cmocka_unit_test(durations_reject), cmocka_unit_test(durations_overflow),
        cmocka_unit_test(sizes_parse),        cmocka_unit_test(sizes_reject),     cmocka_unit_test(formatting_round_trips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
