/* SPDX-License-Identifier: MIT */
/* Recycled large byte buffers for the writer's batches (see buffer_pool.h). */
#include "buffer_pool.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define HUGE_PAGE (2u << 20)
#define SLOTS_PER_SLAB BUFFER_POOL_SLAB_SLOTS

static bool is_slot(const buffer_pool *p, const uint8_t *d)
{
    for (size_t i = 0; i < p->nslabs; i++)
        if (d >= p->slabs[i] && d < p->slabs[i] + BUFFER_POOL_SLAB)
            return true;
    return false;
}

/* Faults a slab in now, in one call, rather than page by page under load. */
static void populate(uint8_t *slab)
{
#if defined(MADV_POPULATE_WRITE)
    if (madvise(slab, BUFFER_POOL_SLAB, MADV_POPULATE_WRITE) == 0)
        return;
#endif
    long page = sysconf(_SC_PAGESIZE);
    for (size_t off = 0; off < BUFFER_POOL_SLAB; off += page > 0 ? (size_t)page : 4096u)
        ((volatile uint8_t *)slab)[off] = 0;
}

/* Maps a slab aligned to a huge page (asking for huge pages with huge_pages), then stacks its slots. Not touched
 * here: under load, faulting 4 MiB in one go held the loop for milliseconds (an S4 run at
 * 1,000 sessions maps 18 slabs in its first second); left to the first writes, each 2 MiB huge
 * page costs one fault when it is first used. 0 or -ENOMEM (also at BUFFER_POOL_SLAB_MAX). */
static int add_slab(buffer_pool *p)
{
    if (p->nslabs == BUFFER_POOL_SLAB_MAX)
        return -ENOMEM;
    if (p->slots_cap < (p->nslabs + 1) * SLOTS_PER_SLAB) {
        size_t cap = (p->nslabs + 1) * SLOTS_PER_SLAB * 2;
        uint8_t **s = realloc(p->free_slots, cap * sizeof *s);
        if (!s)
            return -ENOMEM;
        p->free_slots = s;
        p->slots_cap = cap;
    }
    size_t span = BUFFER_POOL_SLAB + HUGE_PAGE;
    uint8_t *m = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return -ENOMEM;
    uint8_t *slab = (uint8_t *)(((uintptr_t)m + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    if (slab > m)
        munmap(m, (size_t)(slab - m));
    if (m + span > slab + BUFFER_POOL_SLAB)
        munmap(slab + BUFFER_POOL_SLAB, (size_t)(m + span - (slab + BUFFER_POOL_SLAB)));
#if defined(MADV_HUGEPAGE)
    if (p->huge_pages)
        (void)madvise(slab, BUFFER_POOL_SLAB, MADV_HUGEPAGE);
#endif
    p->slabs[p->nslabs++] = slab;
    p->slab_faults++;
    /* Stacked so that the slab's first slot is taken first. */
    for (size_t i = SLOTS_PER_SLAB; i-- > 0;)
        p->free_slots[p->nfree++] = slab + i * BUFFER_POOL_SIZE;
    return 0;
}

int buffer_pool_preload(buffer_pool *p)
{
    if (p->nslabs)
        return 0;
    int rc = add_slab(p);
    if (rc == 0)
        populate(p->slabs[0]);
    return rc;
}

/* An empty pooled buffer of at least need bytes: a slot when it fits, else an idle malloc'd one
 * (grown if need be), else a new one. Empty (no data) when out of memory. */
static recd_buf take_pooled(buffer_pool *p, size_t need)
{
    if (need <= BUFFER_POOL_SIZE && (p->nfree || add_slab(p) == 0))
        return (recd_buf){.data = p->free_slots[--p->nfree], .cap = BUFFER_POOL_SIZE};
    recd_buf big = {0};
    if (p->count) {
        big = p->idle[--p->count];
        p->bytes -= big.cap;
    }
    if (big.cap < need) {
        size_t cap = need > BUFFER_POOL_SIZE ? need : BUFFER_POOL_SIZE;
        uint8_t *d = realloc(big.data, cap);
        if (!d) {
            free(big.data);
            return (recd_buf){0};
        }
        big.data = d;
        big.cap = cap;
    }
    big.len = 0;
    return big;
}

/* Moves b's bytes into big, and gives b's memory back. */
static void move_into(buffer_pool *p, recd_buf *b, recd_buf big)
{
    if (b->len)
        memcpy(big.data, b->data, b->len);
    big.len = b->len;
    if (b->data && is_slot(p, b->data))
        p->free_slots[p->nfree++] = b->data;
    else
        free(b->data);
    *b = big;
}

int buffer_pool_reserve(buffer_pool *p, recd_buf *b, size_t extra)
{
    if (extra > SIZE_MAX - b->len)
        return -ENOMEM;
    size_t need = b->len + extra;
    if (need <= b->cap)
        return 0;
    if (b->cap >= BUFFER_POOL_SIZE && is_slot(p, b->data)) {
        /* An outgrown slot: the batch goes on in malloc'd memory, doubled like any buffer. */
        size_t cap = need > b->cap * 2 ? need : b->cap * 2;
        uint8_t *d = malloc(cap);
        if (!d)
            return -ENOMEM;
        move_into(p, b, (recd_buf){.data = d, .cap = cap});
        return 0;
    }
    if (need < BUFFER_POOL_MIN || b->cap >= BUFFER_POOL_SIZE)
        return recd_buf_reserve(b, extra); /* small, or already pooled: plain growth */
    recd_buf big = take_pooled(p, need);
    if (!big.data)
        return recd_buf_reserve(b, extra);
    move_into(p, b, big);
    return 0;
}

void buffer_pool_prepare(buffer_pool *p, recd_buf *b, size_t hint)
{
    if (b->len || hint <= b->cap)
        return;
    if (hint < BUFFER_POOL_MIN) {
        (void)recd_buf_reserve(b, hint);
        return;
    }
    recd_buf big = take_pooled(p, BUFFER_POOL_SIZE);
    if (!big.data)
        return;
    move_into(p, b, big);
}

void buffer_pool_release(buffer_pool *p, recd_buf *b)
{
    if (b->data && is_slot(p, b->data)) {
        p->free_slots[p->nfree++] = b->data;
    } else if (b->cap >= BUFFER_POOL_SIZE && p->count < BUFFER_POOL_SLOTS &&
               p->bytes + b->cap <= BUFFER_POOL_MAX_BYTES) {
        b->len = 0;
        p->idle[p->count++] = *b;
        p->bytes += b->cap;
    } else {
        free(b->data);
    }
    memset(b, 0, sizeof *b);
}

void buffer_pool_free(buffer_pool *p)
{
    for (size_t i = 0; i < p->count; i++)
        free(p->idle[i].data);
    for (size_t i = 0; i < p->nslabs; i++)
        munmap(p->slabs[i], BUFFER_POOL_SLAB);
    free(p->free_slots);
    memset(p, 0, sizeof *p);
}
