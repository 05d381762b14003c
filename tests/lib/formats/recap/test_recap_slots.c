/* SPDX-License-Identifier: MIT */
/* The packed item slot table: random replacements checked against plain per-slot copies, in-place
 * shrinking, repacking when full, compaction to the live bytes, and clearing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/recap/recap_internal.h"
#include "testutil.h"

/* A canonical item encoding: key length, key, count, flags, data length (BE16), data. */
static size_t make_item(uint8_t *out, tu_rng *rng)
{
    size_t klen = 1 + tu_rand_below(rng, 40), dlen = tu_rand_below(rng, 4) ? 0 : tu_rand_below(rng, 300);
    size_t n = 0;
    out[n++] = (uint8_t)klen;
    for (size_t i = 0; i < klen; i++)
        out[n++] = (uint8_t)('a' + tu_rand_below(rng, 26));
    out[n++] = (uint8_t)(1 + tu_rand_below(rng, 64));
    out[n++] = (uint8_t)tu_rand_below(rng, 2);
    st_be16(out + n, (uint16_t)dlen);
    n += 2;
    for (size_t i = 0; i < dlen; i++)
        out[n++] = (uint8_t)tu_rand(rng);
    return n;
}

typedef struct model {
    uint8_t enc[RECAP_SLOTS][400];
    size_t len[RECAP_SLOTS];
} model;

static void check_same(const recap_slots *t, const model *m)
{
    uint32_t live = 0;
    for (int i = 0; i < RECAP_SLOTS; i++) {
        if (m->len[i] == 0) {
            assert_null(recap_slots_enc(t, i));
            assert_true(recap_slots_equals(t, i, (const uint8_t *)"\0", 1));
            continue;
        }
        live += (uint32_t)m->len[i];
        assert_true(recap_slots_equals(t, i, m->enc[i], m->len[i]));
        recd_recap_item it;
        recap_slots_item(t, i, &it);
        assert_int_equal(it.key.len, m->enc[i][0]);
        assert_memory_equal(it.key.data, m->enc[i] + 1, it.key.len);
        assert_int_equal(it.count, m->enc[i][1 + it.key.len]);
        assert_int_equal(it.data.len, ld_be16(m->enc[i] + 3 + it.key.len));
    }
    assert_int_equal(t->live, live);
    assert_true(t->used <= t->cap);
}

static void test_random_replacements(void **st)
{
    (void)st;
    tu_rng rng = {42};
    recap_slots t;
    memset(&t, 0, sizeof t);
    model *m = calloc(1, sizeof *m);
    assert_non_null(m);
    for (int step = 0; step < 20000; step++) {
        int i = (int)tu_rand_below(&rng, RECAP_SLOTS);
        if (tu_rand_below(&rng, 5) == 0) {
            assert_int_equal(recap_slots_set(&t, i, (const uint8_t *)"\0", 1), 0);
            m->len[i] = 0;
        } else {
            uint8_t buf[400];
            size_t n = make_item(buf, &rng);
            assert_int_equal(recap_slots_set(&t, i, buf, n), 0);
            memcpy(m->enc[i], buf, n);
            m->len[i] = n;
        }
        if (step % 997 == 0) {
            recap_slots_compact(&t);
            assert_int_equal(t.cap, t.live);
            assert_int_equal(t.used, t.live);
        }
        check_same(&t, m);
    }
    /* Repacking keeps the buffer near what is held, not everything ever written. */
    assert_true(t.cap <= t.live + t.live / 2 + 400 + 32);
    recap_slots_clear(&t);
    memset(m->len, 0, sizeof m->len);
    check_same(&t, m);
    recap_slots_compact(&t);
    assert_null(t.bytes);
    recap_slots_free(&t);
    free(m);
}

static void test_shrink_in_place(void **st)
{
    (void)st;
    recap_slots t;
    memset(&t, 0, sizeof t);
    static const uint8_t big[] = {5, 's', 't', 'o', 'n', 'e', 64, 0, 0, 0};
    static const uint8_t small[] = {3, 'a', 'x', 'e', 1, 1, 0, 0};
    assert_int_equal(recap_slots_set(&t, 3, big, sizeof big), 0);
    const uint8_t *where = recap_slots_enc(&t, 3);
    assert_int_equal(recap_slots_set(&t, 3, small, sizeof small), 0);
    assert_ptr_equal(recap_slots_enc(&t, 3), where); /* no new bytes for a smaller item */
    assert_true(recap_slots_equals(&t, 3, small, sizeof small));
    assert_int_equal(t.live, sizeof small);
    assert_int_equal(recap_slots_set(&t, RECAP_SLOTS, small, sizeof small), -EINVAL);
    recap_slots_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_replacements),
        cmocka_unit_test(test_shrink_in_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
