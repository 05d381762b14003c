/* SPDX-License-Identifier: MIT */
/* Tests for daemon/write/buffer_pool.c: small buffers grow normally, large ones move into a pooled
 * slot with their bytes intact, released slots are reused last-in first-out, an outgrown slot
 * moves into malloc'd memory, the malloc'd idle list stays bounded, a large size hint gets a slot
 * up front, and slabs are resident (pre-faulted) and huge-page aligned when mapped. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "write/buffer_pool.h"

static void fill(recd_buf *b, buffer_pool *p, size_t n, uint8_t seed)
{
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(buffer_pool_reserve(p, b, 1), 0);
        b->data[b->len] = (uint8_t)(seed + b->len * 7); /* by position: checkable after moves */
        b->len++;
    }
}

static void check(const recd_buf *b, size_t n, uint8_t seed)
{
    assert_int_equal(b->len, n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(b->data[i], (uint8_t)(seed + i * 7));
}

static void small_then_pooled(void **state)
{
    (void)state;
    buffer_pool p;
    memset(&p, 0, sizeof p);
    recd_buf b = {0};
    fill(&b, &p, 1000, 3);
    assert_true(b.cap < BUFFER_POOL_MIN);
    fill(&b, &p, BUFFER_POOL_MIN, 3); /* crosses the threshold: one move, bytes kept */
    check(&b, 1000 + BUFFER_POOL_MIN, 3);
    assert_true(b.cap >= BUFFER_POOL_SIZE);
    uint8_t *pooled = b.data;
    assert_int_equal(p.nslabs, 1);
    assert_int_equal(p.nfree, BUFFER_POOL_SLAB_SLOTS - 1);
    buffer_pool_release(&p, &b);
    assert_null(b.data);
    assert_int_equal(p.nfree, BUFFER_POOL_SLAB_SLOTS);
    assert_int_equal(p.count, 0);

    /* The next large batch gets the same memory back. */
    recd_buf c = {0};
    assert_int_equal(buffer_pool_reserve(&p, &c, BUFFER_POOL_MIN * 2), 0);
    assert_ptr_equal(c.data, pooled);
    assert_int_equal(p.nfree, BUFFER_POOL_SLAB_SLOTS - 1);
    fill(&c, &p, 500, 9);
    check(&c, 500, 9);
    /* Past the pooled size it moves into malloc'd memory, bytes kept, and the slot is free. */
    fill(&c, &p, BUFFER_POOL_SIZE, 9);
    assert_true(c.cap >= 500 + BUFFER_POOL_SIZE);
    check(&c, 500 + BUFFER_POOL_SIZE, 9);
    assert_int_equal(p.nfree, BUFFER_POOL_SLAB_SLOTS);
    buffer_pool_release(&p, &c);
    assert_int_equal(p.count, 1); /* a malloc'd pooled size goes to the idle list */

    recd_buf small = {0};
    fill(&small, &p, 10, 1);
    buffer_pool_release(&p, &small); /* small buffers are freed, not pooled */
    assert_int_equal(p.count, 1);
    buffer_pool_free(&p);
}

static void bounded(void **state)
{
    (void)state;
    buffer_pool p;
    memset(&p, 0, sizeof p);
    recd_buf many[BUFFER_POOL_SLOTS + 8];
    memset(many, 0, sizeof many);
    for (size_t i = 0; i < BUFFER_POOL_SLOTS + 8; i++)
        assert_int_equal(buffer_pool_reserve(&p, &many[i], BUFFER_POOL_MIN), 0);
    for (size_t i = 0; i < BUFFER_POOL_SLOTS + 8; i++)
        for (size_t j = 0; j < i; j++)
            assert_ptr_not_equal(many[i].data, many[j].data);
    assert_int_equal(p.nslabs, (BUFFER_POOL_SLOTS + 8 + BUFFER_POOL_SLAB_SLOTS - 1) / BUFFER_POOL_SLAB_SLOTS);
    for (size_t i = 0; i < BUFFER_POOL_SLOTS + 8; i++)
        buffer_pool_release(&p, &many[i]);
    assert_int_equal(p.nfree, p.nslabs * BUFFER_POOL_SLAB_SLOTS);
    assert_true(p.count <= BUFFER_POOL_SLOTS);
    assert_true(p.bytes <= BUFFER_POOL_MAX_BYTES);
    buffer_pool_free(&p);
    assert_int_equal(p.count, 0);
}

static void prepare_sizes_large_hints_from_the_pool(void **state)
{
    (void)state;
    buffer_pool p;
    memset(&p, 0, sizeof p);
    recd_buf b = {0};
    /* Nothing idle: a new pooled-size buffer, so the batch never grows by copies. */
    buffer_pool_prepare(&p, &b, BUFFER_POOL_MIN * 2);
    assert_non_null(b.data);
    assert_int_equal(b.len, 0);
    assert_int_equal(b.cap, BUFFER_POOL_SIZE);
    assert_int_equal(p.nfree, BUFFER_POOL_SLAB_SLOTS - 1);
    uint8_t *fresh = b.data;
    fill(&b, &p, BUFFER_POOL_SIZE, 7);
    assert_ptr_equal(b.data, fresh); /* filled to the pooled size without moving */
    check(&b, BUFFER_POOL_SIZE, 7);
    buffer_pool_release(&p, &b);
    assert_int_equal(p.nfree, BUFFER_POOL_SLAB_SLOTS); /* and recycled like any slot */
    buffer_pool_free(&p);

    memset(&p, 0, sizeof p);
    buffer_pool_prepare(&p, &b, BUFFER_POOL_SIZE * 2); /* above it: a pooled one, grown later */
    assert_int_equal(b.cap, BUFFER_POOL_SIZE);
    buffer_pool_release(&p, &b);
    buffer_pool_free(&p);

    memset(&p, 0, sizeof p);
    buffer_pool_prepare(&p, &b, 300); /* a small hint is an ordinary allocation */
    assert_true(b.cap >= 300 && b.cap < BUFFER_POOL_MIN);
    buffer_pool_release(&p, &b);

    recd_buf big = {0};
    assert_int_equal(buffer_pool_reserve(&p, &big, BUFFER_POOL_MIN), 0);
    uint8_t *pooled = big.data;
    buffer_pool_release(&p, &big);
    size_t free_slots = p.nfree;
    recd_buf c = {0};
    fill(&c, &p, 10, 5); /* not empty: left as it is */
    buffer_pool_prepare(&p, &c, BUFFER_POOL_MIN * 2);
    assert_int_equal(p.nfree, free_slots);
    check(&c, 10, 5);
    buffer_pool_release(&p, &c);
    recd_buf d = {0};
    buffer_pool_prepare(&p, &d, BUFFER_POOL_MIN * 2);
    assert_ptr_equal(d.data, pooled);
    assert_int_equal(d.len, 0);
    assert_int_equal(p.nfree, free_slots - 1);
    fill(&d, &p, BUFFER_POOL_MIN, 2);
    check(&d, BUFFER_POOL_MIN, 2);
    buffer_pool_release(&p, &d);
    buffer_pool_free(&p);
}

/* A slab is mapped whole, aligned for huge pages, and resident before the first byte is written:
 * the load that follows takes no page faults in it. */
static void slabs_are_prefaulted(void **state)
{
    (void)state;
    buffer_pool p;
    memset(&p, 0, sizeof p);
    assert_int_equal(buffer_pool_preload(&p), 0);
    assert_int_equal(buffer_pool_preload(&p), 0); /* once */
    assert_int_equal(p.nslabs, 1);
    assert_int_equal((uintptr_t)p.slabs[0] % (2u << 20), 0);
    long page = sysconf(_SC_PAGESIZE);
    size_t pages = BUFFER_POOL_SLAB / (size_t)page;
    unsigned char *vec = malloc(pages);
    assert_non_null(vec);
    assert_int_equal(mincore(p.slabs[0], BUFFER_POOL_SLAB, vec), 0);
    for (size_t i = 0; i < pages; i++)
        assert_true(vec[i] & 1);
    free(vec);
    recd_buf b = {0};
    buffer_pool_prepare(&p, &b, BUFFER_POOL_MIN);
    assert_ptr_equal(b.data, p.slabs[0]); /* the first slot of the preloaded slab */
    buffer_pool_release(&p, &b);
    buffer_pool_free(&p);
    assert_int_equal(p.nslabs, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(small_then_pooled),
        cmocka_unit_test(bounded),
        cmocka_unit_test(prepare_sizes_large_hints_from_the_pool),
        cmocka_unit_test(slabs_are_prefaulted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
