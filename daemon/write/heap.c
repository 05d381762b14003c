/* SPDX-License-Identifier: MIT */
/* The process heap's policy: what stays mapped and when it is given back (see heap.h). */
#include "heap.h"

#include <limits.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#define MMAP_THRESHOLD (4u << 20)
#define HEAP_TRIM_MIN (16u << 20) /* a load that never buffered this much leaves the heap alone */

void heap_configure(uint64_t keep_bytes)
{
#if defined(__GLIBC__)
    /* By default glibc maps each 64-128 KiB batch separately (page faults, then munmap with a TLB
     * flush) until its dynamic threshold catches up, and setting this threshold fixes the trim
     * threshold at 128 KiB unless it is set too. */
    mallopt(M_MMAP_THRESHOLD, (int)MMAP_THRESHOLD);
    mallopt(M_TRIM_THRESHOLD, keep_bytes > INT_MAX ? INT_MAX : (int)keep_bytes);
#else
    (void)keep_bytes;
#endif
}

bool heap_release_due(heap_release *h, uint64_t buffered, uint64_t now_ms, uint64_t *pad)
{
    if (!h->started)
        *h = (heap_release){.window_start_ms = now_ms, .started = true};
    if (buffered > h->window_peak)
        h->window_peak = buffered;
    if (h->window_peak > h->sized_for)
        h->sized_for = h->window_peak;
    if (now_ms - h->window_start_ms < HEAP_WINDOW_MS)
        return false;
    uint64_t peak = h->window_peak;
    h->window_start_ms = now_ms;
    h->window_peak = buffered;
    /* A load that holds steady, or eases off slowly, keeps its memory: trimming under load would
     * only have the next batches fault the same pages in again. A small heap is not worth it. */
    if (h->sized_for < HEAP_TRIM_MIN || peak > h->sized_for / 4)
        return false;
    h->sized_for = peak;
    *pad = 2 * peak; /* batch buffers are pooled at their full size whatever they hold */
    return true;
}

bool heap_free_release_due(heap_release *h, alloc_stats st, uint64_t now_ms, uint64_t *pad)
{
    if (!h->free_started || st.free < h->window_min_free)
        h->window_min_free = st.free;
    if (!h->free_started || st.in_use > h->window_max_used)
        h->window_max_used = st.in_use;
    if (!h->free_started) {
        h->free_window_start_ms = now_ms;
        h->free_started = true;
    }
    if (now_ms - h->free_window_start_ms < HEAP_WINDOW_MS)
        return false;
    uint64_t min_free = h->window_min_free, max_used = h->window_max_used;
    h->free_window_start_ms = now_ms;
    h->window_min_free = st.free;
    h->window_max_used = st.in_use;
    /* Free memory the whole window never needed, beyond as much as is in use. */
    if (min_free < HEAP_TRIM_MIN || min_free <= max_used)
        return false;
    *pad = max_used;
    return true;
}

void heap_trim(uint64_t pad)
{
#if defined(__GLIBC__)
    malloc_trim(pad > SIZE_MAX ? SIZE_MAX : (size_t)pad);
#else
    (void)pad;
#endif
}
