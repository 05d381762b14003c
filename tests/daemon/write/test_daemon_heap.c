/* SPDX-License-Identifier: MIT */
/* Tests for daemon/write/heap.c: when the heap is trimmed (only once the load has fallen to a
 * quarter of what the heap was sized for, and never for small heaps), and, with glibc, that
 * freed batch memory stays mapped under the configured bound and goes back on a trim. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "write/heap.h"

#define MIB (1024u * 1024u)

/* Feeds one tick per 250 ms at the given load for ms; counts trims, last pad in *pad. */
static int run(heap_release *h, uint64_t *clock, uint64_t ms, uint64_t buffered, uint64_t *pad)
{
    int trims = 0;
    for (uint64_t end = *clock + ms; *clock < end; *clock += 250)
        if (heap_release_due(h, buffered, *clock, pad))
            trims++;
    return trims;
}

static void steady_load_keeps_its_memory(void **state)
{
    (void)state;
    heap_release h = {0};
    uint64_t clock = 1000, pad = 0;
    assert_int_equal(run(&h, &clock, 120000, 100 * MIB, &pad), 0);
    assert_int_equal(run(&h, &clock, 120000, 80 * MIB, &pad), 0); /* eased off, not fallen */
}

static void memory_goes_back_once_the_load_has_gone(void **state)
{
    (void)state;
    heap_release h = {0};
    uint64_t clock = 1000, pad = 99;
    assert_int_equal(run(&h, &clock, 30000, 140 * MIB, &pad), 0);
    /* The window holding the last busy tick still counts it; the next one trims, once. */
    assert_int_equal(run(&h, &clock, 2 * HEAP_WINDOW_MS, 0, &pad), 1);
    assert_int_equal(pad, 0);
    assert_int_equal(run(&h, &clock, 120000, 0, &pad), 0);
}

static void a_slow_decline_is_followed_at_a_quarter(void **state)
{
    (void)state;
    heap_release h = {0};
    uint64_t clock = 1000, pad = 0;
    assert_int_equal(run(&h, &clock, 20000, 100 * MIB, &pad), 0);
    assert_int_equal(run(&h, &clock, 20000, 60 * MIB, &pad), 0);
    assert_int_equal(run(&h, &clock, 20000, 30 * MIB, &pad), 0);
    assert_int_equal(run(&h, &clock, 20000, 20 * MIB, &pad), 1);
    assert_int_equal(pad, 40 * MIB); /* room for the pooled buffers the load still fills */
    /* Sized for 20 MiB now: a new peak resizes it, and a fall from that trims again. */
    assert_int_equal(run(&h, &clock, 20000, 200 * MIB, &pad), 0);
    assert_int_equal(run(&h, &clock, 30000, 40 * MIB, &pad), 1);
    assert_int_equal(pad, 80 * MIB);
}

static void small_heaps_are_left_alone(void **state)
{
    (void)state;
    heap_release h = {0};
    uint64_t clock = 1000, pad = 0;
    assert_int_equal(run(&h, &clock, 20000, 12 * MIB, &pad), 0);
    assert_int_equal(run(&h, &clock, 60000, 0, &pad), 0);
}

#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33) && !defined(TU_SANITIZED)
#define BATCHES 512 /* 36 MiB of 72 KiB batch buffers */

/* Heap bytes mapped after allocating, touching and freeing a round of batch buffers. */
static size_t heap_after_a_round(void)
{
    static void *b[BATCHES];
    for (size_t i = 0; i < BATCHES; i++) {
        b[i] = malloc(72 * 1024);
        assert_non_null(b[i]);
        memset(b[i], 1, 72 * 1024);
    }
    for (size_t i = BATCHES; i-- > 0;)
        free(b[i]);
    return mallinfo2().arena;
}

static void freed_batches_stay_mapped_until_trimmed(void **state)
{
    (void)state;
    heap_configure(128 * 1024); /* glibc's default: the freed round goes back at once */
    heap_trim(0);
    size_t base = mallinfo2().arena;
    assert_true(heap_after_a_round() < base + 8 * MIB);
    heap_configure(256 * MIB); /* limits.process_buffer's default */
    assert_true(heap_after_a_round() >= base + 30 * MIB);
    heap_trim(0);
    assert_true(mallinfo2().arena < base + 8 * MIB);
}
#else
static void freed_batches_stay_mapped_until_trimmed(void **state)
{
    (void)state;
    skip(); /* needs glibc's heap (mallinfo2), not a sanitizer's allocator */
}
#endif

/* The allocator's statistics walk the heap: read once a second while that is quick, and at
 * most half a percent of the time once it is not (20 ms with 100,000 sessions: every 4 s). */
static void slow_statistics_are_read_less_often(void **state)
{
    (void)state;
    assert_int_equal(heap_stats_interval_ms(0), 1000);
    assert_int_equal(heap_stats_interval_ms(50000), 1000);     /* 0.05 ms */
    assert_int_equal(heap_stats_interval_ms(5000000), 1000);   /* 5 ms: exactly the share */
    assert_int_equal(heap_stats_interval_ms(20000000), 4000);  /* 20 ms */
    assert_int_equal(heap_stats_interval_ms(100000000), 20000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(steady_load_keeps_its_memory),
        cmocka_unit_test(memory_goes_back_once_the_load_has_gone),
        cmocka_unit_test(a_slow_decline_is_followed_at_a_quarter),
        cmocka_unit_test(small_heaps_are_left_alone),
        cmocka_unit_test(freed_batches_stay_mapped_until_trimmed),
        cmocka_unit_test(slow_statistics_are_read_less_often),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
