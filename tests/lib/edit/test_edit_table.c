/* SPDX-License-Identifier: MIT */
/* The format table's edit hooks are consistent: every recorded format can be edited (a time unit,
 * cut and concat), retime and transform hooks come complete or not at all, and an entry that can
 * be plotted has a track (per state, or for the whole file). */
#include "testutil.h"

#include <string.h>

#include "formats/format_edit.h"
#include "recd/carla.h"
#include "recd/edit.h"
#include "recd/format.h"

static void test_edit_hooks_complete(void **state)
{
    (void)state;
    for (size_t i = 0; i < recd_format_count(); i++) {
        const recd_format *f = recd_format_at(i);
        const struct recd_format_edit *e = f->edit;
        if (!e) {
            assert_false(recd_format_is_recorded(f)); /* what recd writes, rectool can edit */
            assert_null(recd_edit_time_unit(f));
            assert_int_equal(recd_edit_unit_ms(f), 0);
            continue;
        }
        assert_string_equal(recd_edit_time_unit(f), e->time_unit);
        assert_int_equal(recd_edit_unit_ms(f), e->unit_ms);
        assert_true(e->unit_ms >= 1);
        assert_true(e->unit_name && e->unit_name[0]);
        if (recd_format_is_recorded(f)) {
            assert_non_null(e->time_of);
            assert_non_null(e->cut);
            assert_non_null(e->concat);
            assert_true(e->track_point || e->track); /* carla: a whole-file track, every actor */
        }
        /* A streamed cut comes whole, beside the list cut (its rule is the same). */
        bool streams = e->cut_start != NULL;
        assert_true((e->cut_take != NULL) == streams && (e->cut_finish != NULL) == streams);
        if (streams)
            assert_non_null(e->cut);
        if (!e->interpolate)
            assert_true(e->no_retime && e->no_retime[0]); /* a refusal says why */
        if (!e->transform)
            assert_true(e->no_transform && e->no_transform[0]);
        bool retime = e->interpolate != NULL;
        assert_true((e->set_time != NULL) == retime && (e->same_controls != NULL) == retime &&
                    (e->scale_velocity != NULL) == retime);
        assert_true((e->position != NULL) == (e->transform != NULL));
        assert_true(e->track_point || e->track);
    }
    assert_string_equal(recd_edit_time_unit(recd_format_find("samp-onfoot")), "ms");
    assert_string_equal(recd_edit_time_unit(recd_format_find("samp-vehicle")), "ms");
    assert_string_equal(recd_edit_time_unit(recd_format_find("recap")), "tick");
    assert_string_equal(recd_edit_time_unit(recd_format_find("carla")), "ms");
    assert_int_equal(recd_edit_unit_ms(recd_format_find("samp-onfoot")), 1);
    assert_int_equal(recd_edit_unit_ms(recd_format_find("recap")), 50);
    assert_int_equal(recd_edit_unit_ms(recd_format_find("carla")), 1);
    assert_int_equal(recd_edit_unit_ms(NULL), 0);
}

/* recd_edit_msg_time_ms: the edit entry's time x unit_ms; CARLA's seconds truncated (not rounded
 * as time_of does), and nothing for messages without a time of their own. */
static void test_msg_time_ms(void **state)
{
    (void)state;
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_SAMP_VEHICLE);
    m.vehicle.time_ms = 1234;
    assert_int_equal(recd_edit_msg_time_ms(&m), 1234);
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_SAMP_PLAYER);
    m.player.rec_type = RECD_REC_TYPE_ONFOOT;
    m.onfoot.time_ms = 77;
    assert_int_equal(recd_edit_msg_time_ms(&m), 77);

    recd_msg_recap_state rs = {.tick = 40};
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_RECAP);
    m.recap_state = &rs;
    assert_int_equal(recd_edit_msg_time_ms(&m), 40 * 50);
    recd_msg_recap_event re = {.tick = 41};
    recd_msg_init(&m, RECD_MSG_EVENT, RECD_MSG_FMT_RECAP);
    m.recap_event = &re;
    assert_int_equal(recd_edit_msg_time_ms(&m), 41 * 50);

    recd_carla_frame fr = {.id = 1, .elapsed = 0.0166};
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_CARLA);
    m.carla_state = &fr;
    assert_int_equal(recd_edit_msg_time_ms(&m), 16);
    assert_int_equal(recd_format_find("carla")->edit->time_of(&m), 17);
    fr.elapsed = -1;
    assert_int_equal(recd_edit_msg_time_ms(&m), -1);

    recd_msg_init(&m, RECD_MSG_OPEN, RECD_MSG_FMT_RECAP);
    assert_int_equal(recd_edit_msg_time_ms(&m), -1);
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_NONE);
    assert_int_equal(recd_edit_msg_time_ms(&m), -1);
    assert_int_equal(recd_edit_msg_time_ms(NULL), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edit_hooks_complete),
        cmocka_unit_test(test_msg_time_ms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
