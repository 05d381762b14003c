/* SPDX-License-Identifier: MIT */
/* The allocator's figures, read at a bounded cost (alloc_stats.h). */
#include "alloc_stats.h"

#include <time.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#define ALLOC_STATS_SHARE 200u /* a read may take 1/200 of the time until the next one */

uint64_t alloc_stats_interval_ms(uint64_t read_ns)
{
    return read_ns / 1000u * ALLOC_STATS_SHARE / 1000u;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

alloc_stats alloc_stats_read(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    static alloc_stats last;
    static uint64_t read_ns, interval_ms;
    uint64_t t0 = mono_ns();
    if (last.known && (t0 - read_ns) / 1000000u < interval_ms)
        return last;
    struct mallinfo2 mi = mallinfo2();
    last = (alloc_stats){.in_use = (uint64_t)mi.uordblks + (uint64_t)mi.hblkhd,
                         .free = (uint64_t)mi.fordblks,
                         .known = true};
    read_ns = t0;
    interval_ms = alloc_stats_interval_ms(mono_ns() - t0);
    return last;
#else
    return (alloc_stats){0, 0, false};
#endif
}
