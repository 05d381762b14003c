/* SPDX-License-Identifier: MIT */
/* The allocator's figures at a bounded cost: a read that took t is not repeated for 200 t (so a
 * 20 ms walk with 100,000 sessions comes at most every 4 s), a cheap one at every ask, and the
 * figures follow what the process allocates. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "support/alloc_stats.h"

static void slow_reads_are_repeated_less_often(void **state)
{
    (void)state;
    assert_int_equal(alloc_stats_interval_ms(0), 0);
    assert_int_equal(alloc_stats_interval_ms(50000), 10);       /* 0.05 ms */
    assert_int_equal(alloc_stats_interval_ms(5900000), 1180);   /* 5.9 ms */
    assert_int_equal(alloc_stats_interval_ms(20000000), 4000);  /* 20 ms */
}

static void figures_follow_the_heap(void **state)
{
    (void)state;
    alloc_stats before = alloc_stats_read();
#if defined(__GLIBC__) && !defined(TU_SANITIZED)
    assert_true(before.known);
    void *p = malloc(3u << 20);
    assert_non_null(p);
    memset(p, 1, 3u << 20);
    alloc_stats after = alloc_stats_read(); /* the last read was cheap: read again */
    assert_true(after.in_use >= before.in_use + (3u << 20));
    free(p);
#else
    (void)before;
    skip(); /* no glibc allocator statistics here */
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(slow_reads_are_repeated_less_often),
        cmocka_unit_test(figures_follow_the_heap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
