/* SPDX-License-Identifier: MIT */
/* Tests for the record layer (daemon/record/) on a fake writer, with no sockets and no files: a
 * .rec session from open to close (its file header and blocks, the binary frames' direct path,
 * the close, the freed session and the app's "gone" callback), backpressure as the layers above
 * see it (sessions_over_limit and the "room" callback), flushing by size, what the format table
 * lets each format take, and the table itself. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "fake_writer.h"
#include "record_fixture.h"
#include "record/session_formats.h"
#include "record/session_live.h"
#include "record/sessions.h"
#include "recd/samp_rec.h"

typedef struct fixture {
    record_fixture r;
    int room_calls, gone_calls;
} fixture;

static void on_room(void *data) { ((fixture *)data)->room_calls++; }
static void on_gone(void *data) { ((fixture *)data)->gone_calls++; }

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    record_fixture_configure(&f->r);
    record_fixture_start(&f->r, (sessions_events){.room = on_room, .gone = on_gone, .data = f});
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    record_fixture_stop(&f->r);
    free(f);
    return 0;
}

static int send_msg(fixture *f, recd_msg *m) { return record_fixture_send(&f->r, m); }

/* A message with nothing but its type, format and session. */
static int send_simple(fixture *f, const char *key, recd_msg_type type, recd_msg_format format)
{
    recd_msg m;
    recd_msg_init(&m, type, format);
    snprintf(m.session, sizeof m.session, "%s", key);
    int rc = send_msg(f, &m);
    recd_msg_free(&m);
    return rc;
}

static int open_session(fixture *f, const char *key, recd_msg_format format)
{
    return send_simple(f, key, RECD_MSG_OPEN, format);
}

/* A binary frame's on-foot sample, through the direct path (no recd_msg). */
static int send_block(fixture *f, const char *key, uint32_t time_ms, uint8_t fill)
{
    return record_fixture_send_block(&f->r, key, time_ms, fill);
}

static void rec_session_from_open_to_close(void **state)
{
    fixture *f = *state;
    assert_int_equal(open_session(f, "p1", RECD_MSG_FMT_SAMP_ONFOOT), 0);
    assert_int_equal(f->r.reg.live_count, 1);
    assert_int_equal(send_block(f, "p1", 100, 0xAB), 0);
    assert_true(f->r.in.accepted);
    assert_int_equal(send_block(f, "p1", 150, 0xCD), 0);

    /* One part: the file header, then two blocks with their times. */
    assert_int_equal(fake_writer_files(), 1);
    fake_file *file = fake_writer_file(0);
    assert_int_equal(file->bytes.len, RECD_REC_HEADER_SIZE + 2 * RECD_REC_ONFOOT_BLOCK_SIZE);
    const uint8_t *b1 = file->bytes.data + RECD_REC_HEADER_SIZE;
    const uint8_t *b2 = b1 + RECD_REC_ONFOOT_BLOCK_SIZE;
    assert_int_equal(b1[0] | b1[1] << 8, 100);
    assert_int_equal(b1[4], 0xAB);
    assert_int_equal(b2[0] | b2[1] << 8, 150);
    assert_int_equal(b2[RECD_REC_ONFOOT_BLOCK_SIZE - 1], 0xCD);
    assert_int_equal(f->r.reg.env.buffered, file->bytes.len);

    /* Close: the part ends, the session leaves the table at once and is freed once written. */
    assert_int_equal(send_simple(f, "p1", RECD_MSG_CLOSE, RECD_MSG_FMT_NONE), 0);
    assert_true(file->ended);
    assert_int_equal(f->r.reg.table.count, 0);
    assert_int_equal(f->r.reg.live_count, 1);
    assert_int_equal(f->gone_calls, 0);
    assert_int_equal(fake_writer_run(), 1);
    assert_int_equal(f->r.reg.live_count, 0);
    assert_int_equal(f->gone_calls, 1);
    assert_int_equal(f->r.reg.env.buffered, 0);
    assert_int_equal(send_block(f, "p1", 200, 0), -EBADMSG);
    assert_int_equal(f->r.in.reason, RECD_M_UNKNOWN_SESSION);
}

static void backpressure_and_room(void **state)
{
    fixture *f = *state;
    f->r.cfg.limits.session_buffer = 3 * RECD_REC_ONFOOT_BLOCK_SIZE;
    assert_int_equal(open_session(f, "busy", RECD_MSG_FMT_SAMP_ONFOOT), 0);
    assert_int_equal(open_session(f, "calm", RECD_MSG_FMT_SAMP_ONFOOT), 0);
    for (uint32_t t = 0; t < 5; t++) {
        f->r.in.over_key[0] = 0;
        assert_int_equal(send_block(f, "busy", t, 1), 0);
    }
    assert_string_equal(f->r.in.over_key, "busy");
    assert_true(sessions_over_limit(&f->r.reg, "busy"));
    assert_false(sessions_over_limit(&f->r.reg, "calm"));
    assert_false(sessions_over_limit(&f->r.reg, ""));

    /* The writer catches up: the app layer hears "room" and finds the limit clear. */
    int before = f->room_calls;
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_FLUSH, RECD_MSG_FMT_NONE);
    snprintf(m.session, sizeof m.session, "busy");
    assert_int_equal(send_msg(f, &m), 0);
    recd_msg_free(&m);
    assert_int_equal(fake_writer_run(), 1);
    assert_int_equal(f->room_calls, before + 1);
    assert_false(sessions_over_limit(&f->r.reg, "busy"));

    /* The process limit counts every session. */
    f->r.cfg.limits.process_buffer = 1;
    assert_int_equal(send_block(f, "calm", 1, 1), 0);
    assert_true(f->r.in.over_process);
    assert_true(sessions_over_limit(&f->r.reg, ""));
}

static void flush_by_size(void **state)
{
    fixture *f = *state;
    f->r.cfg.flush.buffer_size = 4 * RECD_REC_ONFOOT_BLOCK_SIZE;
    assert_int_equal(open_session(f, "big", RECD_MSG_FMT_SAMP_ONFOOT), 0);
    for (uint32_t t = 0; t < 3; t++)
        assert_int_equal(send_block(f, "big", t, 2), 0);
    assert_int_equal(fake_writer_jobs(), 0);
    assert_int_equal(send_block(f, "big", 3, 2), 0); /* header + 4 blocks reach the size */
    assert_int_equal(fake_writer_jobs(), 1);
    fake_writer_run();
    assert_int_equal(f->r.reg.env.buffered, 0);
}

static void what_each_format_takes(void **state)
{
    fixture *f = *state;
    assert_int_equal(open_session(f, "foot", RECD_MSG_FMT_SAMP_ONFOOT), 0);
    /* .rec sessions have no events. */
    assert_int_equal(send_simple(f, "foot", RECD_MSG_EVENT, RECD_MSG_FMT_RECAP), -EBADMSG);
    assert_int_equal(f->r.in.reason, RECD_M_SCHEMA);
    assert_non_null(strstr(f->r.why, "have no events"));
    /* A state of another format is refused. */
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_SAMP_VEHICLE);
    snprintf(m.session, sizeof m.session, "foot");
    assert_int_equal(send_msg(f, &m), -EBADMSG);
    recd_msg_free(&m);
    /* A decoded on-foot state goes through the table to the .rec encoder. */
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_SAMP_ONFOOT);
    snprintf(m.session, sizeof m.session, "foot");
    m.onfoot.time_ms = 40;
    m.onfoot.health = 77;
    assert_int_equal(send_msg(f, &m), 0);
    recd_msg_free(&m);
    fake_file *file = fake_writer_file(0);
    assert_non_null(file);
    assert_int_equal(file->bytes.len, RECD_REC_HEADER_SIZE + RECD_REC_ONFOOT_BLOCK_SIZE);
    assert_int_equal(file->bytes.data[RECD_REC_HEADER_SIZE + 38], 77);
    /* Reopening as another format is refused; a Recap open needs its header. */
    assert_int_equal(open_session(f, "foot", RECD_MSG_FMT_RECAP), -EBADMSG);
    assert_int_equal(open_session(f, "cap", RECD_MSG_FMT_RECAP), -EBADMSG);
    assert_non_null(strstr(f->r.why, "without its header"));
    assert_int_equal(open_session(f, "none", RECD_MSG_FMT_NONE), -EBADMSG);
}

/* The console's view takes a bounded share of a burst: a fast-lane session one state a period, a
 * decoded one no more states in a loop pass than its actors and one, yet every actor of a tick. */
static session_live *view_of(fixture *f, const char *key)
{
    recd_session *s = session_table_get(&f->r.reg.table, key);
    assert_non_null(s);
    assert_non_null(s->view);
    return s->view;
}

static void console_view_takes_a_bounded_share(void **state)
{
    fixture *f = *state;
    /* One loop pass (uv_now does not move): the fast lane keeps the first state only. */
    assert_int_equal(open_session(f, "fast", RECD_MSG_FMT_SAMP_ONFOOT), 0);
    for (uint32_t i = 0; i < 50; i++)
        assert_int_equal(send_block(f, "fast", 100 + i, (uint8_t)i), 0);
    assert_int_equal(view_of(f, "fast")->version, 1);
    assert_int_equal(view_of(f, "fast")->actors, 1);

    /* The decoded path: one actor, fifty states in the pass, at most two taken. */
    assert_int_equal(open_session(f, "slow", RECD_MSG_FMT_SAMP_ONFOOT), 0);
    for (uint32_t i = 0; i < 50; i++) {
        recd_msg m;
        recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_SAMP_ONFOOT);
        snprintf(m.session, sizeof m.session, "slow");
        m.onfoot.time_ms = 100 + i;
        assert_int_equal(send_msg(f, &m), 0);
        recd_msg_free(&m);
    }
    assert_true(view_of(f, "slow")->version <= 2);
    assert_int_equal(view_of(f, "slow")->actors, 1);

    /* A period later the gate opens again. */
    recd_session *s = session_table_get(&f->r.reg.table, "fast");
    s->live_ms -= SESSION_LIVE_PERIOD_MS;
    assert_int_equal(send_block(f, "fast", 200, 1), 0);
    assert_int_equal(view_of(f, "fast")->version, 2);
}

/* Refusals of messages for a live session are counted on it by reason (the console's drops). */
static void refusals_counted_per_session(void **state)
{
    fixture *f = *state;
    assert_int_equal(open_session(f, "foot", RECD_MSG_FMT_SAMP_ONFOOT), 0);
    recd_session *s = session_table_get(&f->r.reg.table, "foot");
    assert_non_null(s);
    assert_null(s->drops_by); /* nothing refused: nothing allocated */
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_SAMP_VEHICLE);
    snprintf(m.session, sizeof m.session, "foot");
    assert_int_equal(send_msg(f, &m), -EBADMSG);
    recd_msg_free(&m);
    assert_int_equal(send_simple(f, "foot", RECD_MSG_EVENT, RECD_MSG_FMT_RECAP), -EBADMSG);
    assert_int_equal(open_session(f, "foot", RECD_MSG_FMT_RECAP), -EBADMSG); /* its key, another format */
    assert_non_null(s->drops_by);
    assert_int_equal(s->drops_by[RECD_M_SCHEMA], 3);
    for (size_t i = 0; i < SESSION_DROP_SLOTS; i++)
        if (i != RECD_M_SCHEMA)
            assert_int_equal(s->drops_by[i], 0);
    /* A refusal for a key no session has is nobody's. */
    assert_int_equal(send_simple(f, "nobody", RECD_MSG_EVENT, RECD_MSG_FMT_RECAP), -EBADMSG);
    assert_int_equal(s->drops_by[RECD_M_UNKNOWN_SESSION], 0);
}

static void format_table(void **state)
{
    (void)state;
    const recd_msg_format recorded[] = {RECD_MSG_FMT_SAMP_ONFOOT, RECD_MSG_FMT_SAMP_VEHICLE,
                                        RECD_MSG_FMT_RECAP};
    for (size_t i = 0; i < sizeof recorded / sizeof *recorded; i++) {
        const session_format *ops = session_format_for(recorded[i]);
        assert_non_null(ops);
        assert_non_null(ops->sample);
        assert_non_null(ops->end_part);
    }
    assert_ptr_equal(session_format_for(RECD_MSG_FMT_SAMP_ONFOOT),
                     session_format_for(RECD_MSG_FMT_SAMP_VEHICLE));
    assert_true(session_format_for(RECD_MSG_FMT_RECAP)->events);
    assert_false(session_format_for(RECD_MSG_FMT_SAMP_ONFOOT)->events);
    assert_null(session_format_for(RECD_MSG_FMT_NONE));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(rec_session_from_open_to_close, setup, teardown),
        cmocka_unit_test_setup_teardown(backpressure_and_room, setup, teardown),
        cmocka_unit_test_setup_teardown(flush_by_size, setup, teardown),
        cmocka_unit_test_setup_teardown(what_each_format_takes, setup, teardown),
        cmocka_unit_test_setup_teardown(console_view_takes_a_bounded_share, setup, teardown),
        cmocka_unit_test_setup_teardown(refusals_counted_per_session, setup, teardown),
        cmocka_unit_test(format_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
