/* SPDX-License-Identifier: MIT */
/* The id -> position map behind a CARLA session's live actors: random puts, replacements and
 * deletions against a plain array as the reference (ids from a narrow range collide and probe;
 * sequential ids cluster), every id looked up after each step of a run, and growth from empty
 * past many thousand entries. */
#include "testutil.h"

#include <errno.h>
#include <stdlib.h>

#include "support/id_index.h"

#define RANGE 512u

static void check_all(const id_index *ix, const int64_t *ref, uint32_t base)
{
    size_t present = 0;
    for (uint32_t k = 0; k < RANGE; k++) {
        assert_int_equal(id_index_find(ix, base + k * 7919u), ref[k]);
        present += ref[k] >= 0;
    }
    assert_int_equal(ix->count, present);
    assert_true(ix->count * 2 <= ix->nslots || ix->nslots == 0);
}

static void random_against_reference(void **state)
{
    (void)state;
    tu_rng rng = {26};
    const uint32_t bases[] = {0, 0xFFFFF000u, 12345};
    for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++) {
        id_index ix = {0};
        int64_t ref[RANGE];
        for (size_t k = 0; k < RANGE; k++)
            ref[k] = -1;
        for (int step = 0; step < 20000; step++) {
            uint32_t k = (uint32_t)(tu_rand(&rng) % RANGE);
            uint32_t id = bases[b] + k * 7919u; /* distinct ids, wrapping past 2^32 */
            if (tu_rand(&rng) % 3 == 0) {
                id_index_del(&ix, id);
                ref[k] = -1;
            } else {
                uint32_t pos = (uint32_t)(tu_rand(&rng) % 100000);
                assert_int_equal(id_index_put(&ix, id, pos), 0);
                ref[k] = pos;
            }
            if (step % 97 == 0)
                check_all(&ix, ref, bases[b]);
        }
        check_all(&ix, ref, bases[b]);
        id_index_free(&ix);
        assert_int_equal(id_index_find(&ix, bases[b]), -1);
    }
}

static void many_sequential_ids(void **state)
{
    (void)state;
    id_index ix = {0};
    const uint32_t n = 50000;
    for (uint32_t id = 0; id < n; id++)
        assert_int_equal(id_index_put(&ix, id, id), 0);
    for (uint32_t id = 0; id < n; id += 2)
        id_index_del(&ix, id);
    id_index_del(&ix, n + 5); /* absent: nothing */
    for (uint32_t id = 0; id < n; id++)
        assert_int_equal(id_index_find(&ix, id), id % 2 ? (int64_t)id : -1);
    assert_int_equal(ix.count, n / 2);
    assert_int_equal(id_index_put(&ix, 1, UINT32_MAX), -ERANGE);
    assert_int_equal(id_index_find(&ix, 1), 1);
    id_index_free(&ix);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_against_reference),
        cmocka_unit_test(many_sequential_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
