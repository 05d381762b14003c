/* SPDX-License-Identifier: MIT */
/* recd end to end for "a sample that was accepted is written, or the sender hears why"
 * (docs/reliability.md, "Round 3: accepted means written"): Recap input the encoder would refuse
 * once its tick is fed (a tick further from the first than a file spans, an event before the
 * session's first state, an event newer than the session's format version) is refused on arrival
 * with an error reply, counted by reason, and what was accepted before it is in the file. */
#include "test_daemon_harness.h"

static void send_open(recd_client *c, const char *session, uint8_t version)
{
    recd_synth_params p = {recd_synth_format_find("recap"), RECD_SYNTH_SCENARIO_MIXED, 1000, 7};
    recd_synth_recap_gen *g;
    assert_int_equal(recd_synth_recap_gen_new(&p, &g), 0);
    recd_recap_header h;
    recd_synth_recap_gen_header(g, &h);
    h.frame_count = 0;
    h.end_ms = 0;
    if (version)
        h.version = version;
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_OPEN, RECD_MSG_FMT_RECAP);
    snprintf(m.session, sizeof m.session, "%s", session);
    assert_int_equal(recd_msg_set_recap_open(&m, &h), 0);
    td_send(c, &m);
    recd_msg_free(&m);
    recd_synth_recap_gen_free(g);
}

/* A state at tick that moves every tick (so each one is written as a tick with actions). Returns
 * the send's result: after a refusal the connection may be gone. */
static int send_state(recd_client *c, const char *session, uint64_t tick, double x)
{
    recd_recap_state st;
    memset(&st, 0, sizeof st);
    st.pos[0] = x;
    st.pos[1] = 64.0;
    st.health = 20.0f;
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_RECAP);
    snprintf(m.session, sizeof m.session, "%s", session);
    assert_int_equal(recd_msg_set_recap_state(&m, tick, &st), 0);
    int rc = recd_client_send(c, &m);
    recd_msg_free(&m);
    return rc;
}

static int send_chat(recd_client *c, const char *session, uint64_t tick)
{
    static const char text[] = "hello";
    recd_recap_value v = {.blob = {(const uint8_t *)text, sizeof text - 1}};
    recd_recap_event ev = {RECD_RECAP_CHAT_MESSAGE, 1, &v};
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_EVENT, RECD_MSG_FMT_RECAP);
    snprintf(m.session, sizeof m.session, "%s", session);
    assert_int_equal(recd_msg_set_recap_event(&m, tick, &ev), 0);
    int rc = recd_client_send(c, &m);
    recd_msg_free(&m);
    return rc;
}

typedef struct file_counts {
    size_t ticks, events;
} file_counts;

static int count_tick(void *ctx, uint64_t tick, const recd_recap_state *st,
                      const recd_recap_event *ev, size_t n)
{
    (void)tick;
    (void)st;
    (void)ev;
    file_counts *fc = ctx;
    fc->ticks++;
    fc->events += n;
    return 0;
}

/* The session's only file: verifies; its ticks with actions and its events. */
static file_counts verified(const td_daemon *d, const char *session)
{
    size_t len;
    uint8_t *data = td_read_only_recording(d, "recap", session, &len);
    file_counts fc = {0, 0};
    recd_recap_callbacks cb = {NULL, count_tick, NULL, NULL, &fc};
    recd_recap_decode_result res;
    assert_int_equal(recd_recap_decode(data, len, NULL, &cb, &res, NULL), 0);
    free(data);
    return fc;
}

/* Closes the client and checks that recd answered with an error holding want. */
static void expect_refusal(const td_daemon *d, recd_client *c, const char *want)
{
    char err[512] = "";
    int rc = td_close_client_rc(c, err, sizeof err);
    if (rc >= 0 || !strstr(err, want)) {
        td_dump_log(d);
        fail_msg("wanted an error reply holding \"%s\"; got rc %d, \"%s\"", want, rc, err);
    }
}

/* Row 6: ten ticks, then thirty states 2^32 ticks later. The first of those is refused with an
 * error (counted as tick_range); the ten are in the file, which verifies. */
static void test_a_tick_jump_past_a_file_is_refused(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, NULL);
    td_start(&d);
    recd_client *c = td_connect(d.tcp);
    send_open(c, "jump", 0);
    for (uint64_t t = 0; t < 10; t++)
        assert_int_equal(send_state(c, "jump", t, (double)t), 0);
    for (uint64_t t = 0; t < 30; t++)
        if (send_state(c, "jump", (1ull << 32) + t, 100.0 + (double)t) < 0)
            break;
    expect_refusal(&d, c, "a Recap session spans at most");
    assert_true(td_metric(&d, "recd_decode_errors_total{reason=\"tick_range\"}") == 1);
    td_stop(&d);
    file_counts fc = verified(&d, "jump");
    assert_int_equal(fc.ticks, 10);
    td_cleanup(&d);
}

/* Row 10: chat events at ticks before the session's first state are refused at the first of them
 * (counted as no_state), not accepted and dropped: recd_samples_total counts none of them. */
static void test_events_before_the_first_state_are_refused(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, NULL);
    td_start(&d);
    recd_client *c = td_connect(d.tcp);
    send_open(c, "early", 0);
    for (uint64_t t = 0; t < 5; t++)
        if (send_chat(c, "early", t) < 0)
            break;
    for (uint64_t t = 5; t < 10; t++)
        if (send_state(c, "early", t, (double)t) < 0)
            break;
    expect_refusal(&d, c, "before the session's first state");
    assert_true(td_metric(&d, "recd_decode_errors_total{reason=\"no_state\"}") == 1);
    assert_true(td_metric(&d, "recd_samples_total{transport=\"tcp\",format=\"recap\"}") == 0);
    td_stop(&d);
    td_cleanup(&d);
}

/* Events after the first state are taken as before, in a tick of their own or with a state, and
 * all of them are in the file. */
static void test_events_after_the_first_state_are_written(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, NULL);
    td_start(&d);
    recd_client *c = td_connect(d.tcp);
    send_open(c, "later", 0);
    assert_int_equal(send_state(c, "later", 0, 0.0), 0);
    assert_int_equal(send_chat(c, "later", 0), 0);
    assert_int_equal(send_chat(c, "later", 3), 0); /* a tick with events only */
    assert_int_equal(send_chat(c, "later", 5), 0); /* events before the tick's state */
    assert_int_equal(send_state(c, "later", 5, 5.0), 0);
    td_send_close(c, "later", RECD_MSG_FMT_RECAP);
    td_close_client(c);
    td_stop(&d);
    file_counts fc = verified(&d, "later");
    assert_int_equal(fc.ticks, 3);
    assert_int_equal(fc.events, 3);
    td_cleanup(&d);
}

/* An event newer than the session's header version (BLOCK_CHANGES needs version 4) would make the
 * encoder refuse its whole tick: it is refused on arrival, and the tick's state is written. */
static void test_an_event_newer_than_the_header_is_refused(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, NULL);
    td_start(&d);
    recd_client *c = td_connect(d.tcp);
    send_open(c, "old", 3);
    assert_int_equal(send_state(c, "old", 0, 0.0), 0);
    assert_int_equal(send_state(c, "old", 1, 1.0), 0);
    recd_recap_value list = {.list = {0}};
    recd_recap_event ev = {RECD_RECAP_BLOCK_CHANGES, 1, &list};
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_EVENT, RECD_MSG_FMT_RECAP);
    snprintf(m.session, sizeof m.session, "old");
    assert_int_equal(recd_msg_set_recap_event(&m, 1, &ev), 0);
    (void)recd_client_send(c, &m);
    recd_msg_free(&m);
    expect_refusal(&d, c, "needs Recap format version 4");
    td_stop(&d);
    file_counts fc = verified(&d, "old");
    assert_int_equal(fc.ticks, 2);
    td_cleanup(&d);
}

static bool log_has(const td_daemon *d, const char *text)
{
    size_t n;
    uint8_t *log = tu_read_file(d->log, &n);
    if (!log)
        return false;
    bool found = memmem(log, n, text, strlen(text)) != NULL;
    free(log);
    return found;
}

/* Over UDP there is no reply: the refused datagram is counted by reason and in its session's own
 * count, which is logged with the key when the session closes; the session goes on. */
static void test_a_datagram_session_counts_its_refusals(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, NULL);
    td_start(&d);
    recd_client *c = td_connect(d.udp);
    send_open(c, "udp-jump", 0);
    for (uint64_t t = 0; t < 3; t++)
        assert_int_equal(send_state(c, "udp-jump", t, (double)t), 0);
    assert_int_equal(recd_client_flush(c), 0); /* the far state in a datagram of its own */
    assert_int_equal(send_state(c, "udp-jump", 1ull << 32, 50.0), 0);
    assert_int_equal(recd_client_flush(c), 0);
    for (uint64_t t = 3; t < 5; t++)
        assert_int_equal(send_state(c, "udp-jump", t, (double)t), 0);
    assert_int_equal(recd_client_flush(c), 0);
    if (td_wait_metric(&d, "recd_decode_errors_total{reason=\"tick_range\"}", 1, 10000) != 1) {
        td_dump_log(&d);
        fail_msg("the far tick was not refused as tick_range");
    }
    td_send_close(c, "udp-jump", RECD_MSG_FMT_RECAP);
    td_close_client(c);
    td_stop(&d);
    if (!log_has(&d, "session 'udp-jump': 1 of its samples were refused or dropped")) {
        td_dump_log(&d);
        fail_msg("the session's refusal is not logged with its key");
    }
    file_counts fc = verified(&d, "udp-jump");
    assert_int_equal(fc.ticks, 5);
    td_cleanup(&d);
}

int main(void)
{
    td_require_recd();
    const struct CMUnitTest tests[] = {
        td_unit_test(test_a_tick_jump_past_a_file_is_refused),
        td_unit_test(test_events_before_the_first_state_are_refused),
        td_unit_test(test_events_after_the_first_state_are_written),
        td_unit_test(test_an_event_newer_than_the_header_is_refused),
        td_unit_test(test_a_datagram_session_counts_its_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
