/* SPDX-License-Identifier: MIT */
/* Tests for librecd's one duration and size parser (recd/units.h): what it accepts, every message
 * it gives, overflow, and printing that reads back. */
#include "testutil.h"

#include <errno.h>
#include <string.h>

#include "recd/units.h"

/* The parser's longer messages, each checked for several inputs. */
#define WHY_NO_UNIT "a number alone is not a duration: add a unit, ms, s, m, h or d (e.g. 30s)"
#define WHY_FRACTION "fractions are not allowed; use a smaller unit (e.g. 1500ms, 90m)"
#define WHY_DURATION_UNIT "expected a unit after each number: ms, s, m, h or d (e.g. 250ms, 30s, 1h30m)"
#define WHY_UNIT_ORDER "units must go from the largest to the smallest, each once (e.g. 1h30m)"
#define WHY_SIZE_UNIT "expected a unit: B, KiB, MiB, GiB or TiB (e.g. 64KiB), or plain bytes"

struct refusal {
    const char *text;
    const char *why;
};

/* Each text is refused with -EINVAL and exactly its message, and the output is left alone. */
static void check_refusals(int (*parse)(const char *, uint64_t *, const char **),
                           const struct refusal *bad, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t v = 7;
        const char *why = NULL;
        assert_int_equal(parse(bad[i].text, &v, &why), -EINVAL);
        if (!why || strcmp(why, bad[i].why) != 0)
            fail_msg("'%s': got \"%s\", wanted \"%s\"", bad[i].text, why ? why : "(null)", bad[i].why);
        assert_true(v == 7);
    }
}

static void durations_parse(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        uint64_t ms;
    } ok[] = {
        {"250ms", 250}, {"1s", 1000}, {"5m", 300000}, {"2h", 7200000}, {"30d", 2592000000ull},
        {"0", 0},       {"0s", 0},    {"10 s", 10000}, {"18446744073709551615ms", UINT64_MAX},
        {"1h30m", 5400000}, {"1m500ms", 60500}, {"1d2h3m4s5ms", 93784005}, {"1h 30m", 5400000},
        {"0h0m", 0},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        uint64_t v = 1;
        const char *why = "unset";
        assert_int_equal(recd_parse_duration_ms(ok[i].text, &v, &why), 0);
        assert_true(v == ok[i].ms);
        assert_null(why);
    }
}

/* Each refusal with its exact message: recd.yaml, recd's flags and rectool print these. */
static void durations_reject(void **state)
{
    (void)state;
    static const struct refusal bad[] = {
        {"", "empty value"},
        {"1", WHY_NO_UNIT},
        {"30", WHY_NO_UNIT},
        {"s", "expected a number"},
        {" 1s", "expected a number"},
        {"1s ", "expected a number"},
        {"1.5s", WHY_FRACTION},
        {".5s", WHY_FRACTION},
        {"-1s", "negative values are not allowed"},
        {"1x", WHY_DURATION_UNIT},
        {"1 sec", WHY_DURATION_UNIT},
        {"5 minutes", WHY_DURATION_UNIT},
        {"1S", WHY_DURATION_UNIT},
        {"5M", WHY_DURATION_UNIT},
        {"1h30", WHY_DURATION_UNIT},
        {"0x10s", WHY_DURATION_UNIT},
        {"30m1h", WHY_UNIT_ORDER},
        {"1s1s", WHY_UNIT_ORDER},
        {"1h-30m", "negative values are not allowed"},
    };
    check_refusals(recd_parse_duration_ms, bad, sizeof bad / sizeof bad[0]);
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
    assert_string_equal(why, "value too large");
    assert_int_equal(recd_parse_duration_ms("18446744073709551616ms", &v, &why), -ERANGE);
    assert_string_equal(why, "number too large");
    assert_int_equal(recd_parse_duration_ms("213503982334d15h", &v, &why), -ERANGE); /* the sum overflows */
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
    static const struct refusal bad[] = {
        {"", "empty value"},
        {"KiB", "expected a number"},
        {"1.5MiB", WHY_FRACTION},
        {"-1", "negative values are not allowed"},
        {"64KB", WHY_SIZE_UNIT},
        {"64kb", WHY_SIZE_UNIT},
        {"64kib", WHY_SIZE_UNIT},
        {"64 K", WHY_SIZE_UNIT},
        {"1e6", WHY_SIZE_UNIT},
        {"64KiBs", WHY_SIZE_UNIT},
        {"64KiB ", WHY_SIZE_UNIT},
    };
    check_refusals(recd_parse_size, bad, sizeof bad / sizeof bad[0]);
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
