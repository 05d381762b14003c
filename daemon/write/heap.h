/* SPDX-License-Identifier: MIT */
/* How recd uses the process heap. Batch buffers (64-128 KiB, allocated and freed thousands of times
 * a second under load) live on glibc's heap, and memory they free stays mapped while the load may
 * need it again: giving it back to the kernel and faulting it in again for the next batches cost
 * recd's loop thread a tenth of its time in the 1,000-session benchmark (docs/performance.md). It
 * goes back once the load has fallen: each tick reports the bytes buffered, and when the highest
 * figure of a window is a quarter or less of what the heap was last sized for, the heap is
 * trimmed down to about twice that figure.
 * Memory that other things held (unfinished input frames, many short sessions, connections) goes
 * back by a second rule based on the heap in use, from the allocator's statistics: when the free
 * heap stayed above both HEAP_TRIM_MIN and the bytes in use for a whole window, the heap is
 * trimmed down to keep as much free as is in use. */
#ifndef RECD_DAEMON_HEAP_H
#define RECD_DAEMON_HEAP_H

#include <stdbool.h>
#include <stdint.h>

#include "support/alloc_stats.h"

#define HEAP_WINDOW_MS 10000u /* how long a level of load must last before the heap follows it */

typedef struct heap_release {
    uint64_t window_start_ms;
    uint64_t window_peak; /* most bytes buffered at a tick of this window */
    uint64_t sized_for;   /* the load the heap was last trimmed to or grew for */
    bool started;
    /* The rule on the heap in use: */
    uint64_t free_window_start_ms;
    uint64_t window_min_free; /* least free heap at a tick of this window */
    uint64_t window_max_used; /* most heap in use at a tick of this window */
    bool free_started;
} heap_release;

/* At start-up and on reload: allocations under 4 MiB come from the heap (not one mapping each),
 * and up to keep_bytes freed at the top of the heap stay mapped (limits.process_buffer: buffered
 * bytes never go past it, so the heap needs no more). No effect outside glibc. */
void heap_configure(uint64_t keep_bytes);

/* Called once per tick with the bytes buffered now. True when the heap should be trimmed: *pad is
 * then the free memory to keep at its top. */
bool heap_release_due(heap_release *h, uint64_t buffered, uint64_t now_ms, uint64_t *pad);

/* Called once per tick with the allocator's figures (alloc_stats_read()). True when the heap should be trimmed because
 * its free memory stayed above what is in use (and above HEAP_TRIM_MIN) for a whole window: *pad
 * is then the free memory to keep at its top. */
bool heap_free_release_due(heap_release *h, alloc_stats st, uint64_t now_ms, uint64_t *pad);

/* Gives free heap memory back to the kernel, keeping pad bytes at the top. */
void heap_trim(uint64_t pad);

#endif
