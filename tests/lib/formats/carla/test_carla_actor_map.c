/* SPDX-License-Identifier: MIT */
/* The CARLA queries' actor map (carla_query_common.c): found through its id index, an erase moves
 * the last entry into the freed slot and leaves a stale index entry that must never answer.
 * Checked against a plain array under a long mix of adds, replacements and erases. */
#include "testutil.h"

#include <stdlib.h>

#include "formats/carla/carla_query.h"

static void test_erase_moves_last(void **state)
{
    (void)state;
    actor_map m = {0};
    for (uint32_t id = 1; id <= 3; id++) {
        actor_name a = {id, (uint8_t)id, NULL, 0};
        assert_int_equal(carla_actor_set(&m, &a), 0);
    }
    carla_actor_erase(&m, 1); /* 3 moves into slot 0 */
    assert_null(carla_actor_find(&m, 1));
    assert_int_equal(carla_actor_find(&m, 3)->type, 3);
    assert_int_equal(carla_actor_find(&m, 2)->type, 2);
    actor_name again = {1, 9, NULL, 0};
    assert_int_equal(carla_actor_set(&m, &again), 0);
    assert_int_equal(carla_actor_find(&m, 1)->type, 9);
    carla_actor_erase(&m, 1); /* the last slot: nothing moves */
    assert_null(carla_actor_find(&m, 1));
    carla_actor_erase(&m, 1); /* already gone */
    assert_int_equal(m.n, 2);
    actor_name replaced = {2, 7, NULL, 0};
    assert_int_equal(carla_actor_set(&m, &replaced), 0);
    assert_int_equal(carla_actor_find(&m, 2)->type, 7);
    assert_int_equal(m.n, 2);
    carla_actor_map_free(&m);
}

static void test_matches_linear_search(void **state)
{
    (void)state;
    enum { IDS = 300 };
    int ref[IDS]; /* the type each id holds, or -1 */
    for (int i = 0; i < IDS; i++)
        ref[i] = -1;
    actor_map m = {0};
    srand(7);
    for (int step = 0; step < 20000; step++) {
        uint32_t id = (uint32_t)(rand() % IDS);
        if (rand() % 3 == 0) {
            carla_actor_erase(&m, id);
            ref[id] = -1;
        } else {
            actor_name a = {id, (uint8_t)(step & 0xff), NULL, 0};
            assert_int_equal(carla_actor_set(&m, &a), 0);
            ref[id] = step & 0xff;
        }
        uint32_t probe = (uint32_t)(rand() % IDS);
        actor_name *got = carla_actor_find(&m, probe);
        if (ref[probe] < 0)
            assert_null(got);
        else
            assert_int_equal(got->type, ref[probe]);
    }
    size_t alive = 0;
    for (int i = 0; i < IDS; i++)
        alive += ref[i] >= 0;
    assert_int_equal(m.n, alive);
    carla_actor_map_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_erase_moves_last),
        cmocka_unit_test(test_matches_linear_search),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
