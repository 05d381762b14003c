/* SPDX-License-Identifier: MIT */
/* The base helpers every text writer shares: recd_buf_printf (short and long text, appended),
 * recd_why (error text into a buffer that may be absent) and recd__array_room (doubling). */
#include "testutil.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf_grow.h"
#include "base/why.h"
#include "recd/buf_printf.h"

static void printf_appends(void **state)
{
    (void)state;
    recd_buf b = {0};
    assert_int_equal(recd_buf_printf(&b, "a=%d", 7), 0);
    assert_int_equal(recd_buf_printf(&b, ",%s", "b"), 0);
    assert_int_equal(b.len, 5);
    assert_memory_equal(b.data, "a=7,b", 5);
    /* longer than the stack buffer: formatted into the grown buffer */
    char long_text[2000];
    memset(long_text, 'x', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = 0;
    assert_int_equal(recd_buf_printf(&b, "[%s]", long_text), 0);
    assert_int_equal(b.len, 5 + 2 + sizeof long_text - 1);
    assert_int_equal(b.data[5], '[');
    assert_int_equal(b.data[b.len - 1], ']');
    assert_int_equal(b.data[b.len - 2], 'x');
    recd_buf_free(&b);
}

static void why_may_be_absent(void **state)
{
    (void)state;
    recd_why(NULL, 10, "nothing %d", 1);
    char why[8] = "keep";
    recd_why(why, 0, "nothing");
    assert_string_equal(why, "keep");
    recd_why(why, sizeof why, "cut at %d bytes", 8);
    assert_string_equal(why, "cut at ");
}

static void array_doubles(void **state)
{
    (void)state;
    int *a = NULL;
    size_t cap = 0;
    for (size_t n = 0; n < 100; n++) {
        int *grown = recd__array_room(a, &cap, n, sizeof *a, 16);
        assert_non_null(grown);
        a = grown;
        a[n] = (int)n;
        assert_true(cap == 16 || cap == 32 || cap == 64 || cap == 128);
    }
    assert_int_equal(cap, 128);
    assert_int_equal(a[99], 99);
    size_t huge = SIZE_MAX / 2 + 1;
    assert_null(recd__array_room(a, &huge, huge, sizeof *a, 16));
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(printf_appends),
        cmocka_unit_test(why_may_be_absent),
        cmocka_unit_test(array_doubles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
