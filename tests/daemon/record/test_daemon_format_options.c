/* SPDX-License-Identifier: MIT */
/* The check of the formats' options in recd_config's format_options
 * (session_formats_options_check): the daemon's own list passes, and options that leave the bytes,
 * overlap another format's, or rows that write outside their format's range are refused. */
#include "testutil.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "record/session_formats.h"
#include "support/config_schema.h"

#define BASE offsetof(recd_config, format_options)

static const row row_at_8 = {.key = "a.x", .type = T_U32, .offset = BASE + 8};

static session_format fmt(recd_msg_format f, size_t off, size_t size)
{
    session_format s = {.formats = {f}, .options_offset = off, .options_size = size};
    return s;
}

static int check(const session_format *a, const session_format *b, char *why)
{
    const session_format *list[] = {a, b};
    return session_formats_options_check(list, 2, why, 160);
}

static void daemon_list_passes(void **state)
{
    (void)state;
    assert_int_equal(session_formats_install_config(), 0);
}

static void disjoint_ranges_pass(void **state)
{
    (void)state;
    char why[160] = "";
    session_format a = fmt(RECD_MSG_FMT_RECAP, 0, 16), b = fmt(RECD_MSG_FMT_CARLA, 16, 8);
    assert_int_equal(check(&a, &b, why), 0);
    b = fmt(RECD_MSG_FMT_CARLA, 0, 0); /* no options */
    assert_int_equal(check(&a, &b, why), 0);
}

static void overlap_refused(void **state)
{
    (void)state;
    char why[160] = "";
    session_format a = fmt(RECD_MSG_FMT_RECAP, 0, 16), b = fmt(RECD_MSG_FMT_CARLA, 12, 8);
    assert_int_equal(check(&a, &b, why), -EINVAL);
    assert_string_equal(why, "carla's options overlap recap's");
}

static void outside_refused(void **state)
{
    (void)state;
    char why[160] = "";
    session_format a = fmt(RECD_MSG_FMT_RECAP, RECD_CONFIG_FORMAT_OPTIONS - 4, 8);
    session_format b = fmt(RECD_MSG_FMT_CARLA, 0, 0);
    assert_int_equal(check(&a, &b, why), -EINVAL);
    assert_non_null(strstr(why, "recap's options [60, 68) do not fit format_options (64 bytes)"));
    a = fmt(RECD_MSG_FMT_RECAP, SIZE_MAX, 2); /* no wrap-around */
    assert_int_equal(check(&a, &b, why), -EINVAL);
}

static void row_outside_own_range_refused(void **state)
{
    (void)state;
    char why[160] = "";
    session_format a = fmt(RECD_MSG_FMT_RECAP, 0, 8), b = fmt(RECD_MSG_FMT_CARLA, 8, 8);
    a.config_rows = &row_at_8;
    a.config_row_count = 1;
    assert_int_equal(check(&a, &b, why), -EINVAL);
    assert_string_equal(why, "recap has a config row outside its options");
    a.options_size = 16;
    b.options_offset = 16;
    assert_int_equal(check(&a, &b, why), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(daemon_list_passes),
        cmocka_unit_test(disjoint_ranges_pass),
        cmocka_unit_test(overlap_refused),
        cmocka_unit_test(outside_refused),
        cmocka_unit_test(row_outside_own_range_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
