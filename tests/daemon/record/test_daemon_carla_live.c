/* SPDX-License-Identifier: MIT */
/* What a CARLA part's or save's first frame holds (record/formats/carla/carla_live.c): the
 * lights' last states and the last weather that the frame itself lacks, the actors a delete
 * forgets, and a frame that already carries everything left as it is (the same bytes as
 * before). Counted nowhere (no session). */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "record/formats/carla/carla_state.h"

static void light(uint8_t *r, uint32_t id, uint8_t state)
{
    memset(r, 0, CARLA_LIGHT_RECORD);
    memcpy(r, &id, 4); /* little-endian host, as the CI machines */
    r[9] = state;
}

static recd_carla_packet lights_packet(uint8_t *buf, const uint32_t *ids, const uint8_t *states,
                                       uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        light(buf + i * CARLA_LIGHT_RECORD, ids[i], states[i]);
    return (recd_carla_packet){.kind = RECD_CARLA_STATE, .count = n,
                               .len = n * CARLA_LIGHT_RECORD, .data = buf};
}

static recd_carla_packet weather_packet(uint8_t *buf, float cloudiness)
{
    memset(buf, 0, CARLA_WEATHER_RECORD);
    memcpy(buf, &cloudiness, 4);
    return (recd_carla_packet){.kind = RECD_CARLA_WEATHER, .count = 1,
                               .len = CARLA_WEATHER_RECORD, .data = buf};
}

/* The world after a frame with lights 2, 3, 4 (states 0, 1, 2) and weather 7, then a frame that
 * turns light 3 green. */
static void seen(carla_live *w)
{
    uint8_t lb[3 * CARLA_LIGHT_RECORD], wb[CARLA_WEATHER_RECORD], lb2[CARLA_LIGHT_RECORD];
    recd_carla_packet p[2] = {lights_packet(lb, (uint32_t[]){2, 3, 4}, (uint8_t[]){0, 1, 2}, 3),
                              weather_packet(wb, 7.0f)};
    recd_carla_frame f = {.id = 1, .width = 4, .count = 2, .packets = p};
    carla_live_frame(w, NULL, &f);
    recd_carla_packet q = lights_packet(lb2, (uint32_t[]){3}, (uint8_t[]){2}, 1);
    recd_carla_frame g = {.id = 2, .width = 4, .count = 1, .packets = &q};
    carla_live_frame(w, NULL, &g);
}

static void a_first_frame_gets_the_lights_and_weather_it_lacks(void **state)
{
    (void)state;
    carla_live w = {0};
    seen(&w);
    uint8_t lb[CARLA_LIGHT_RECORD];
    recd_carla_packet own = lights_packet(lb, (uint32_t[]){4}, (uint8_t[]){0}, 1);
    recd_carla_frame f = {.id = 3, .width = 4, .count = 1, .packets = &own};
    carla_first_frame ff;
    assert_int_equal(carla_live_first_frame(&w, &f, &ff), 0);
    assert_int_equal(ff.f.count, 3);
    assert_ptr_equal(ff.f.packets[0].data, lb); /* its own records first, unchanged */
    const recd_carla_packet *added = &ff.f.packets[1];
    assert_int_equal(added->kind, RECD_CARLA_STATE);
    assert_int_equal(added->count, 2); /* lights 2 and 3; 4 is the frame's own */
    for (uint32_t i = 0; i < 2; i++) {
        uint32_t id;
        memcpy(&id, added->data + i * CARLA_LIGHT_RECORD, 4);
        uint8_t st = added->data[i * CARLA_LIGHT_RECORD + 9];
        assert_true((id == 2 && st == 0) || (id == 3 && st == 2));
    }
    assert_int_equal(ff.f.packets[2].kind, RECD_CARLA_WEATHER);
    float cloudiness;
    memcpy(&cloudiness, ff.f.packets[2].data, 4);
    assert_true(cloudiness == 7.0f);
    carla_first_frame_free(&ff);
    carla_live_free(&w);
}

static void a_frame_with_everything_is_left_as_it_is(void **state)
{
    (void)state;
    carla_live w = {0};
    seen(&w);
    uint8_t lb[3 * CARLA_LIGHT_RECORD], wb[CARLA_WEATHER_RECORD];
    recd_carla_packet p[2] = {lights_packet(lb, (uint32_t[]){4, 3, 2}, (uint8_t[]){1, 1, 1}, 3),
                              weather_packet(wb, 1.0f)};
    recd_carla_frame f = {.id = 3, .width = 4, .count = 2, .packets = p};
    carla_first_frame ff;
    assert_int_equal(carla_live_first_frame(&w, &f, &ff), 0);
    assert_null(ff.packets);
    assert_ptr_equal(ff.f.packets, p);
    assert_int_equal(ff.f.count, 2);
    carla_first_frame_free(&ff);
    /* A world that never saw lights or weather adds nothing either. */
    carla_live none = {0};
    recd_carla_frame empty = {.id = 1, .width = 4};
    assert_int_equal(carla_live_first_frame(&none, &empty, &ff), 0);
    assert_null(ff.packets);
    assert_int_equal(ff.f.count, 0);
    carla_live_free(&w);
}

static void a_deleted_actor_takes_its_light_along(void **state)
{
    (void)state;
    carla_live w = {0};
    seen(&w);
    uint8_t add[5 + 24 + 4 + 2 + 2] = {0};
    uint32_t id = 3;
    memcpy(add, &id, 4);
    recd_carla_event e = {RECD_CARLA_EVENT_ADD, 4, sizeof add, add, NULL};
    assert_int_equal(carla_live_event(&w, NULL, &e), 0);
    assert_int_equal(w.nlive, 1);
    recd_carla_event del = {RECD_CARLA_EVENT_DEL, 4, 4, add, NULL};
    assert_int_equal(carla_live_event(&w, NULL, &del), 0);
    assert_int_equal(w.nlive, 0);
    assert_int_equal(w.nlights, 2);
    carla_live copy;
    assert_int_equal(carla_live_copy(&copy, &w), 0);
    assert_int_equal(copy.nlights, 2);
    assert_true(copy.has_weather);
    carla_live_free(&copy);
    carla_live_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_first_frame_gets_the_lights_and_weather_it_lacks),
        cmocka_unit_test(a_frame_with_everything_is_left_as_it_is),
        cmocka_unit_test(a_deleted_actor_takes_its_light_along),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
