/* SPDX-License-Identifier: MIT */
/* A Recap tick still being collected while recd holds its sender back (backpressure): the flush
 * timer must not write half of it, or the rest, sent once the sender goes on, lands in the next
 * tick. And the stopped clock must never hold recd still: when the ticks being collected alone
 * fill limits.process_buffer, they are written. On the fake writer, so the test decides when
 * writes complete. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "fake_writer.h"
#include "record_fixture.h"
#include "recd/gzip_members.h"
#include "recd/recap.h"
#include "record/sessions.h"

#define INTERVAL_MS 20

typedef struct fixture {
    record_fixture r;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    record_fixture_configure(&f->r);
    f->r.cfg.flush.interval_ms = INTERVAL_MS;
    record_fixture_start(&f->r, (sessions_events){.data = f});
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sessions_close_all(&f->r.reg, "test end");
    fake_writer_run();
    assert_int_equal(f->r.reg.env.collecting, 0);
    record_fixture_stop(&f->r);
    free(f);
    return 0;
}

static int send_msg(fixture *f, recd_msg *m)
{
    int rc = record_fixture_send(&f->r, m);
    if (rc < 0)
        fail_msg("refused: %s", f->r.why);
    return rc;
}

static void send_open(fixture *f, const char *key)
{
    recd_recap_header h;
    recd_recap_header_init(&h);
    h.name = recd_recap_str("held");
    h.player_name = recd_recap_str("Patience");
    h.start_ms = INT64_C(1700000000000);
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_OPEN, RECD_MSG_FMT_RECAP);
    snprintf(m.session, sizeof m.session, "%s", key);
    assert_int_equal(recd_msg_set_recap_open(&m, &h), 0);
    send_msg(f, &m);
    recd_msg_free(&m);
}

static void send_state(fixture *f, const char *key, uint64_t tick)
{
    recd_recap_state st;
    memset(&st, 0, sizeof st);
    st.pos[0] = (double)tick;
    st.pos[1] = 64.0;
    st.health = 20.0f;
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_RECAP);
    snprintf(m.session, sizeof m.session, "%s", key);
    assert_int_equal(recd_msg_set_recap_state(&m, tick, &st), 0);
    send_msg(f, &m);
    recd_msg_free(&m);
}

static void send_chat(fixture *f, const char *key, uint64_t tick, const char *text)
{
    recd_recap_value msg = {.blob = recd_recap_str(text)};
    recd_recap_event ev = {RECD_RECAP_CHAT_MESSAGE, 1, &msg};
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_EVENT, RECD_MSG_FMT_RECAP);
    snprintf(m.session, sizeof m.session, "%s", key);
    assert_int_equal(recd_msg_set_recap_event(&m, tick, &ev), 0);
    send_msg(f, &m);
    recd_msg_free(&m);
}

static void send_close(fixture *f, const char *key)
{
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_CLOSE, RECD_MSG_FMT_NONE);
    snprintf(m.session, sizeof m.session, "%s", key);
    send_msg(f, &m);
    recd_msg_free(&m);
}

/* Lets the flush timer find every tick due: waits out three intervals and runs the timer. */
static void timer_after_intervals(fixture *f)
{
    uv_sleep(3 * INTERVAL_MS);
    uv_update_time(&f->r.loop);
    sessions_tick(&f->r.reg, uv_now(&f->r.loop));
}

/* ---- the file the fake writer holds, decoded -------------------------------------------- */

typedef struct tick_events {
    uint64_t tick[16];
    size_t events[16];
    size_t count;
} tick_events;

static int on_tick(void *ctx, uint64_t tick, const recd_recap_state *st, const recd_recap_event *ev,
                   size_t n)
{
    (void)st;
    (void)ev;
    tick_events *t = ctx;
    if (n && t->count < 16) {
        t->tick[t->count] = tick;
        t->events[t->count++] = n;
    }
    return 0;
}

/* Which ticks of file i carried events, and how many (the members in one gzip member). */
static tick_events events_of(size_t i)
{
    fake_file *file = fake_writer_file(i);
    assert_non_null(file);
    recd_buf whole = {0};
    assert_int_equal(recd_buf_append(&whole, file->bytes.data, file->bytes.len), 0);
    recd_gzip_deflater *d = recd_gzip_deflater_new();
    assert_non_null(d);
    assert_int_equal(recd_gzip_member_write(d, 6, file->members.data, file->members.len, &whole), 0);
    recd_gzip_deflater_free(d);
    tick_events t = {0};
    recd_recap_callbacks cb = {NULL, on_tick, NULL, NULL, &t};
    recd_recap_decode_result res;
    recd_recap_decode(whole.data, whole.len, NULL, &cb, &res, NULL);
    assert_true(res.header_valid);
    recd_buf_free(&whole);
    return t;
}

/* ---- tests -------------------------------------------------------------------------------- */

/* Tick 1 has one chat message when recd holds the sender back (over its session limit, the
 * writer busy) for several flush intervals; the second message of tick 1 comes after it is let
 * go. Both must be in tick 1. Before the clock stopped, the timer wrote tick 1 with one message
 * and the second went into tick 2. */
static void a_held_back_tick_is_not_split(void **state)
{
    fixture *f = *state;
    send_open(f, "held");
    send_state(f, "held", 0);
    send_chat(f, "held", 1, "first half of tick 1"); /* tick 0 goes to the encoder */

    const uint64_t limit = f->r.cfg.limits.session_buffer;
    f->r.cfg.limits.session_buffer = 1; /* the sender is held back until the writer catches up */
    assert_true(sessions_over_limit(&f->r.reg, "held"));
    timer_after_intervals(f);
    timer_after_intervals(f);
    assert_true(f->r.reg.env.collecting > 0); /* tick 1 is still being collected */

    /* Let go: the writer catches up, and the sender goes on with tick 1 at once. */
    fake_writer_run();
    f->r.cfg.limits.session_buffer = limit;
    assert_false(sessions_over_limit(&f->r.reg, "held"));
    timer_after_intervals(f); /* the first check after the hold: the clock starts again */
    send_chat(f, "held", 1, "second half of tick 1");
    send_state(f, "held", 2);
    send_close(f, "held");
    fake_writer_run();

    tick_events t = events_of(0);
    if (t.count != 1 || t.tick[0] != 1 || t.events[0] != 2)
        fail_msg("tick 1 was split: %zu ticks with events, the first tick %llu with %zu", t.count,
                 (unsigned long long)t.tick[0], t.events[0]);
}

/* While a write is under way, a process over limits.process_buffer holds its ticks too (the
 * write lets the senders go on); but ticks being collected that alone fill the process limit are
 * written by the timer, or every sender would wait for good. */
static void ticks_that_fill_the_process_limit_are_written(void **state)
{
    fixture *f = *state;
    send_open(f, "a");
    send_open(f, "b");
    send_state(f, "a", 0);
    send_state(f, "b", 0);
    send_chat(f, "a", 1, "tick 1 of a");
    send_chat(f, "b", 1, "tick 1 of b");
    const uint64_t collecting = f->r.reg.env.collecting;
    assert_true(collecting > 0);
    assert_true(f->r.reg.env.buffered > collecting); /* headers and tick 0 wait for the writer */

    /* Over the process limit, the ticks alone under it: held while the writer works. */
    f->r.cfg.limits.process_buffer = collecting;
    assert_true(sessions_over_limit(&f->r.reg, ""));
    timer_after_intervals(f);
    assert_int_equal(f->r.reg.env.collecting, collecting);
    fake_writer_run();
    assert_false(sessions_over_limit(&f->r.reg, "")); /* what is left is the ticks: the senders go on */

    /* The ticks alone over the process limit: no write would release them, so they are written. */
    f->r.cfg.limits.process_buffer = collecting - 1;
    assert_true(sessions_over_limit(&f->r.reg, ""));
    timer_after_intervals(f);
    timer_after_intervals(f);
    assert_int_equal(f->r.reg.env.collecting, 0);
    fake_writer_run();
    assert_false(sessions_over_limit(&f->r.reg, ""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_held_back_tick_is_not_split, setup, teardown),
        cmocka_unit_test_setup_teardown(ticks_that_fill_the_process_limit_are_written, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
