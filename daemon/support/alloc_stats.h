/* SPDX-License-Identifier: MIT */
/* The C library allocator's figures (glibc's mallinfo2), for the heap policy and the
 * recd_heap_bytes gauge. Reading them walks the heap's free lists on the calling thread, while the
 * allocator's lock is held: a few microseconds for a small heap, about 20 ms with 100,000
 * sessions. So a read that was slow is not repeated for 200 times as long, which keeps the walk
 * under half a percent of the loop's time whoever asks; a cheap one is repeated at every ask. */
#ifndef RECD_DAEMON_ALLOC_STATS_H
#define RECD_DAEMON_ALLOC_STATS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct alloc_stats {
    uint64_t in_use; /* bytes allocated, mapped chunks included */
    uint64_t free;   /* bytes free but still mapped in the heap */
    bool known;      /* false where the C library has no such figures */
} alloc_stats;

/* The figures as of now, or as of the last read when that one was slow (see above). Loop
 * thread. */
alloc_stats alloc_stats_read(void);

/* How long to go on with a read's figures when it took read_ns: 200 times as long. */
uint64_t alloc_stats_interval_ms(uint64_t read_ns);

#endif
