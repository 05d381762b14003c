/* SPDX-License-Identifier: MIT */
/* Tests for the instant-replay ring's memory bounds (daemon/record/session_ring.c) on a fake
 * writer: all rings together stay within ring.process_memory and one within
 * ring.session_memory, what a bound lets go is counted in recd_samples_dropped_total (what the
 * window lets go is not), a ring with no room at all drops its samples without closing the
 * connection, a save still writes the ring's whole content, and a closed ring gives its memory
 * back to the others. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "fake_writer.h"
#include "record_fixture.h"
#include "record/session_ring.h"
#include "record/sessions.h"
#include "recd/samp_rec.h"

#define BLOCK RECD_REC_ONFOOT_BLOCK_SIZE
#define COST SESSION_RING_ENTRY_COST(BLOCK) /* what one block takes of the bounds */

typedef struct fixture {
    record_fixture r;
} fixture;

static void on_event(void *data) { (void)data; }

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    record_fixture_configure(&f->r);
    record_fixture_start(&f->r, (sessions_events){.room = on_event, .gone = on_event, .data = f});
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sessions_close_all(&f->r.reg, "test end");
    fake_writer_run();
    assert_int_equal(f->r.reg.env.ring_bytes, 0);
    record_fixture_stop(&f->r);
    free(f);
    return 0;
}

static int send_simple(fixture *f, const char *key, recd_msg_type type, bool ring)
{
    recd_msg m;
    recd_msg_init(&m, type, type == RECD_MSG_OPEN ? RECD_MSG_FMT_SAMP_ONFOOT : RECD_MSG_FMT_NONE);
    snprintf(m.session, sizeof m.session, "%s", key);
    if (type == RECD_MSG_OPEN)
        m.open.ring = ring;
    int rc = record_fixture_send(&f->r, &m);
    recd_msg_free(&m);
    return rc;
}

static int send_block(fixture *f, const char *key, uint32_t time_ms, uint8_t fill)
{
    return record_fixture_send_block(&f->r, key, time_ms, fill);
}

static int64_t dropped(fixture *f, recd_m_drop reason)
{
    return recd_metric_value(f->r.metrics.samples_dropped_total, reason);
}

/* Blocks 0..n-1 at times from+i, fill (from+i) & 0xff: each must be taken. */
static void feed(fixture *f, const char *key, uint32_t from, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        assert_int_equal(send_block(f, key, from + i, (uint8_t)(from + i)), 0);
        assert_true(f->r.in.accepted);
    }
}

/* The last file the fake writer got holds n blocks, rebased to 0, sent at first, first+1... */
static void check_saved(size_t file, uint32_t first, uint32_t n)
{
    fake_file *ff = fake_writer_file(file);
    assert_non_null(ff);
    assert_true(ff->ended);
    assert_int_equal(ff->bytes.len, RECD_REC_HEADER_SIZE + (size_t)n * BLOCK);
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *b = ff->bytes.data + RECD_REC_HEADER_SIZE + (size_t)i * BLOCK;
        assert_int_equal(recd_rec_block_time(b), i);
        assert_int_equal(b[4], (uint8_t)(first + i));
    }
}

static void rings_stay_within_the_process_bound(void **state)
{
    fixture *f = *state;
    f->r.cfg.ring.window_ms = 86400000; /* the window lets nothing go here */
    f->r.cfg.ring.session_bytes = 256 * COST;
    f->r.cfg.ring.process_bytes = 300 * COST;
    assert_int_equal(send_simple(f, "a", RECD_MSG_OPEN, true), 0);
    assert_int_equal(send_simple(f, "b", RECD_MSG_OPEN, true), 0);
    assert_int_equal(send_simple(f, "c", RECD_MSG_OPEN, true), 0);

    /* a grows to its session bound; past it its oldest samples go, counted. */
    feed(f, "a", 0, 1000);
    assert_int_equal(f->r.reg.env.ring_bytes, 256 * COST);
    assert_int_equal(dropped(f, RECD_M_DROP_RING_SESSION_MEMORY), 1000 - 256);
    assert_int_equal(dropped(f, RECD_M_DROP_RING_PROCESS_MEMORY), 0);

    /* b gets what is left of the process bound (44 blocks), then its oldest go, counted. */
    feed(f, "b", 0, 100);
    assert_int_equal(f->r.reg.env.ring_bytes, 300 * COST);
    assert_int_equal(dropped(f, RECD_M_DROP_RING_PROCESS_MEMORY), 100 - 44);

    /* c has no room at all: its samples are dropped and counted, the connection goes on. */
    assert_int_equal(send_block(f, "c", 0, 1), 0);
    assert_false(f->r.in.accepted);
    assert_int_equal(dropped(f, RECD_M_DROP_RING_PROCESS_MEMORY), 100 - 44 + 1);
    assert_int_equal(f->r.reg.env.ring_bytes, 300 * COST);
    assert_int_equal(sessions_save(&f->r.reg, "c", 1000, "c-clip", f->r.why, sizeof f->r.why), -EBADMSG);
    assert_non_null(strstr(f->r.why, "holds no sample"));
    assert_int_equal(dropped(f, RECD_M_DROP_BUFFER_FULL), 0);

    /* The saves write what each ring holds: a's last 256 samples, b's last 44. */
    assert_int_equal(sessions_save(&f->r.reg, "a", 100000, "a-clip", f->r.why, sizeof f->r.why), 0);
    assert_int_equal(fake_writer_run(), 1);
    check_saved(0, 1000 - 256, 256);
    assert_int_equal(sessions_save(&f->r.reg, "b", 100000, "b-clip", f->r.why, sizeof f->r.why), 0);
    assert_int_equal(fake_writer_run(), 1);
    check_saved(1, 100 - 44, 44);

    /* b's close gives its memory back: c grows into it, still within the bound. */
    assert_int_equal(send_simple(f, "b", RECD_MSG_CLOSE, false), 0);
    fake_writer_run();
    assert_int_equal(f->r.reg.env.ring_bytes, 256 * COST);
    feed(f, "c", 1, 100);
    assert_int_equal(f->r.reg.env.ring_bytes, 300 * COST);
    assert_int_equal(dropped(f, RECD_M_DROP_RING_PROCESS_MEMORY), 100 - 44 + 1 + 100 - 44);
    assert_int_equal(sessions_save(&f->r.reg, "c", 100000, "c-clip", f->r.why, sizeof f->r.why), 0);
    assert_int_equal(fake_writer_run(), 1);
    check_saved(2, 101 - 44, 44);
}

static void the_window_drops_are_not_counted(void **state)
{
    fixture *f = *state;
    f->r.cfg.ring.window_ms = 100;
    assert_int_equal(send_simple(f, "w", RECD_MSG_OPEN, true), 0);
    feed(f, "w", 0, 1000);
    /* The ring holds times 899..999 (101 blocks) in 16 KiB (4 KiB doubled twice): no bound was
     * reached. */
    assert_int_equal(f->r.reg.env.ring_bytes, 16384);
    assert_int_equal(dropped(f, RECD_M_DROP_RING_SESSION_MEMORY), 0);
    assert_int_equal(dropped(f, RECD_M_DROP_RING_PROCESS_MEMORY), 0);
    assert_int_equal(sessions_save(&f->r.reg, "w", 100000, "w-clip", f->r.why, sizeof f->r.why), 0);
    assert_int_equal(fake_writer_run(), 1);
    check_saved(0, 899, 101);
}

/* A reload that lowers a bound: the ring written next gives back what is over it, its oldest
 * samples first, counted; an idle ring keeps its memory until its next sample. */
static void a_lowered_bound_shrinks_the_ring_written_next(void **state)
{
    fixture *f = *state;
    f->r.cfg.ring.window_ms = 86400000;
    f->r.cfg.ring.session_bytes = 256 * COST;
    f->r.cfg.ring.process_bytes = 1000 * COST;
    assert_int_equal(send_simple(f, "a", RECD_MSG_OPEN, true), 0);
    assert_int_equal(send_simple(f, "b", RECD_MSG_OPEN, true), 0);
    feed(f, "a", 0, 256);
    feed(f, "b", 0, 256);
    assert_int_equal(f->r.reg.env.ring_bytes, 512 * COST);
    assert_int_equal(dropped(f, RECD_M_DROP_RING_SESSION_MEMORY), 0);

    /* ring.session_memory down to 200 blocks: a's next sample takes it there (57 go: 56 for the
     * bound, then 1 for the new sample); b waits for its own next sample. */
    f->r.cfg.ring.session_bytes = 200 * COST;
    feed(f, "a", 256, 1);
    assert_int_equal(f->r.reg.env.ring_bytes, 456 * COST);
    assert_int_equal(dropped(f, RECD_M_DROP_RING_SESSION_MEMORY), 57);

    /* ring.process_memory down to 300 blocks: b gives back the 156 over it, and its next samples
     * take the place of its oldest. */
    f->r.cfg.ring.process_bytes = 300 * COST;
    feed(f, "b", 256, 1);
    assert_int_equal(f->r.reg.env.ring_bytes, 300 * COST);
    assert_int_equal(dropped(f, RECD_M_DROP_RING_PROCESS_MEMORY), 156 + 1);
    assert_int_equal(sessions_save(&f->r.reg, "b", 100000, "b-clip", f->r.why, sizeof f->r.why), 0);
    assert_int_equal(fake_writer_run(), 1);
    check_saved(0, 257 - 100, 100);

    /* Down to 150 blocks: a (200) goes to 50 and b, having nothing left, drops what it is sent. */
    f->r.cfg.ring.process_bytes = 150 * COST;
    feed(f, "a", 257, 1);
    assert_int_equal(f->r.reg.env.ring_bytes, 150 * COST);
    f->r.cfg.ring.process_bytes = 50 * COST;
    assert_int_equal(send_block(f, "b", 257, 1), 0);
    assert_false(f->r.in.accepted);
    assert_int_equal(f->r.reg.env.ring_bytes, 50 * COST);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(rings_stay_within_the_process_bound, setup, teardown),
        cmocka_unit_test_setup_teardown(the_window_drops_are_not_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(a_lowered_bound_shrinks_the_ring_written_next, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
