/* SPDX-License-Identifier: MIT */
/* recd end to end for the buffer limits of a Recap tick (docs/reliability.md, "sessions"): the
 * events of the tick being collected count toward the session and process limits, and a tick
 * larger than a reader takes in one gzip member is refused, so every file recd writes verifies. */
#include "test_daemon_harness.h"

#define CHAT_BYTES 60000

static void send_open(recd_client *c, const char *session, const recd_recap_header *h)
{
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_OPEN, RECD_MSG_FMT_RECAP);
    snprintf(m.session, sizeof m.session, "%s", session);
    assert_int_equal(recd_msg_set_recap_open(&m, h), 0);
    td_send(c, &m);
    recd_msg_free(&m);
}

/* The open, a first state at tick 0, then n chat messages of CHAT_BYTES, all for tick 0. */
static void send_one_big_tick(recd_client *c, const char *session, unsigned n)
{
    recd_synth_params p = {recd_synth_format_find("recap"), RECD_SYNTH_SCENARIO_MIXED, 1000, 21};
    recd_synth_recap_gen *g;
    assert_int_equal(recd_synth_recap_gen_new(&p, &g), 0);
    recd_recap_header h;
    recd_synth_recap_gen_header(g, &h);
    send_open(c, session, &h);
    recd_synth_recap_tick t;
    assert_int_equal(recd_synth_recap_gen_next(g, &t), 1);
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_RECAP);
    snprintf(m.session, sizeof m.session, "%s", session);
    assert_int_equal(recd_msg_set_recap_state(&m, 0, t.state), 0);
    td_send(c, &m);
    recd_msg_free(&m);
    recd_synth_recap_gen_free(g);

    char *text = malloc(CHAT_BYTES + 1);
    assert_non_null(text);
    memset(text, 'a', CHAT_BYTES);
    text[CHAT_BYTES] = 0;
    recd_recap_value msg = {.blob = {(const uint8_t *)text, CHAT_BYTES}};
    recd_recap_event ev = {RECD_RECAP_CHAT_MESSAGE, 1, &msg};
    for (unsigned i = 0; i < n; i++) {
        recd_msg_init(&m, RECD_MSG_EVENT, RECD_MSG_FMT_RECAP);
        snprintf(m.session, sizeof m.session, "%s", session);
        assert_int_equal(recd_msg_set_recap_event(&m, 0, &ev), 0);
        int rc = recd_client_send(c, &m);
        recd_msg_free(&m);
        if (rc < 0)
            break; /* refused, and the connection is gone */
    }
    free(text);
}

static int count_events(void *ctx, uint64_t tick, const recd_recap_state *st,
                        const recd_recap_event *ev, size_t n)
{
    (void)tick;
    (void)st;
    (void)ev;
    *(size_t *)ctx += n;
    return 0;
}

/* The only file of the session: verifies, and holds how many events. */
static size_t verified_events(const td_daemon *d, const char *session)
{
    size_t len;
    uint8_t *data = td_read_only_recording(d, "recap", session, &len);
    size_t events = 0;
    recd_recap_callbacks cb = {NULL, count_events, NULL, NULL, &events};
    recd_recap_decode_result res;
    assert_int_equal(recd_recap_decode(data, len, NULL, &cb, &res, NULL), 0);
    free(data);
    return events;
}

/* 900 kB of events for one tick, still being collected, show in recd_buffered_bytes (the
 * process total the limits are checked against); all of them are written. */
static void test_a_tick_counts_toward_the_limits(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "flush:\n  interval: 1h\n");
    td_start(&d);
    recd_client *c = td_connect(d.tcp);
    send_one_big_tick(c, "chatty", 15);
    assert_int_equal(recd_client_flush(c), 0);
    if (td_wait_metric(&d, "recd_buffered_bytes", 15.0 * CHAT_BYTES, 10000) < 15.0 * CHAT_BYTES) {
        td_dump_log(&d);
        fail_msg("a tick of 900 kB of events is not counted in recd_buffered_bytes");
    }
    td_send_close(c, "chatty", RECD_MSG_FMT_RECAP);
    td_close_client(c);
    td_stop(&d);
    assert_int_equal(verified_events(&d, "chatty"), 15);
    td_cleanup(&d);
}

/* A tick over its session's limit, or over 16 MiB with a larger limit: refused with an error
 * naming the tick; what was taken is written into a file that verifies. */
static void refused_at(const char *yaml, unsigned sent, const char *limit, unsigned lo, unsigned hi)
{
    td_daemon d;
    td_setup(&d, yaml);
    td_start(&d);
    recd_client *c = td_connect(d.tcp);
    send_one_big_tick(c, "flood", sent);
    char err[512] = "";
    assert_true(td_close_client_rc(c, err, sizeof err) < 0);
    if (!strstr(err, "tick 0 would hold more than") || !strstr(err, limit))
        fail_msg("unexpected error: %s", err);
    assert_true(td_metric(&d, "recd_decode_errors_total{reason=\"too_large\"}") == 1);
    td_stop(&d);
    size_t events = verified_events(&d, "flood");
    if (events < lo || events > hi)
        fail_msg("%zu events written, wanted %u .. %u", events, lo, hi);
    td_cleanup(&d);
}

static void test_an_oversized_tick_is_refused(void **state)
{
    (void)state;
    refused_at("flush:\n  interval: 1h\n", 20, "1048576 bytes", 17, 17);
    refused_at("limits:\n  session_buffer: 64MiB\nflush:\n  interval: 1h\n", 300, "16777216 bytes",
               279, 279);
}

int main(void)
{
    td_require_recd();
    const struct CMUnitTest tests[] = {
        td_unit_test(test_a_tick_counts_toward_the_limits),
        td_unit_test(test_an_oversized_tick_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
