/* SPDX-License-Identifier: MIT */
/* recd/version.h and the umbrella recd/recd.h: the version macros agree with each other and with
 * what the library reports at run time, and recd.h compiles as the first librecd include. */
#include "recd/recd.h"

#include <stdio.h>
#include <string.h>

#include "testutil.h"

static void test_macros_agree(void **state)
{
    (void)state;
    char text[32];
    snprintf(text, sizeof text, "%d.%d.%d", RECD_VERSION_MAJOR, RECD_VERSION_MINOR,
             RECD_VERSION_PATCH);
    assert_string_equal(text, RECD_VERSION_STRING);
    assert_int_equal(RECD_VERSION_NUMBER,
                     RECD_VERSION_MAJOR * 10000 + RECD_VERSION_MINOR * 100 + RECD_VERSION_PATCH);
}

static void test_library_matches_header(void **state)
{
    (void)state;
    assert_string_equal(recd_version_string(), RECD_VERSION_STRING);
    assert_int_equal(recd_version_number(), RECD_VERSION_NUMBER);
    assert_string_equal(recd_version(), RECD_VERSION_STRING);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_macros_agree),
        cmocka_unit_test(test_library_matches_header),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
