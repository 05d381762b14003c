/* SPDX-License-Identifier: MIT */
/* recd end to end for the buffer limits of a Recap state (docs/reliability.md, "Sessions" ->
 * "Limits"): a state with large item data, held until its tick is written, counts toward the
 * session and process limits, and a state over the session's limit is refused with an error. */
#include "test_daemon_harness.h"

#define ITEM_DATA_BYTES 20000 /* 47 items: 940 kB, under the 1 MiB default session limit */

/* td_connect() with frames up to 1 MiB, like the daemon's DAEMON_YAML. */
static recd_client *connect_large(const char *url)
{
    recd_client *c = NULL;
    char err[256] = "";
    recd_client_options opt = {.close_timeout_ms = tu_scaled_ms(TD_CLIENT_CLOSE_TIMEOUT_MS),
                               .max_frame = 1u << 20};
    int rc = recd_client_connect(&c, url, &opt, err, sizeof err);
    if (rc < 0)
        fail_msg("connect %s: %s (%s)", url, err, recd_strerror(rc));
    td_hold(c, td_release_client);
    return c;
}

static void send_open(recd_client *c, const char *session)
{
    recd_recap_header h;
    recd_recap_header_init(&h);
    h.name = recd_recap_str("state-limits");
    h.player_name = recd_recap_str("Hoarder");
    h.player_uuid = recd_recap_str("fb293873-1e80-4240-bda9-04ec7e540318");
    h.world_name = recd_recap_str("world");
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_OPEN, RECD_MSG_FMT_RECAP);
    snprintf(m.session, sizeof m.session, "%s", session);
    assert_int_equal(recd_msg_set_recap_open(&m, &h), 0);
    td_send(c, &m);
    recd_msg_free(&m);
}

/* A state for tick whose 47 items each carry data_bytes of opaque data. 0 when sent. */
static int send_heavy_state(recd_client *c, const char *session, uint64_t tick, size_t data_bytes)
{
    uint8_t *data = malloc(data_bytes);
    assert_non_null(data);
    memset(data, 0x5a, data_bytes);
    recd_recap_state st;
    memset(&st, 0, sizeof st);
    st.pos[1] = 64.0;
    st.health = 20.0f;
    recd_recap_item heavy = {recd_recap_str("minecraft:shulker_box"), 1, 0, {data, data_bytes}};
    for (unsigned k = 0; k < RECD_RECAP_EQUIPMENT_SLOTS; k++)
        st.equipment[k] = heavy;
    for (unsigned k = 0; k < RECD_RECAP_INVENTORY_SLOTS; k++)
        st.inventory[k] = heavy;
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_RECAP);
    snprintf(m.session, sizeof m.session, "%s", session);
    assert_int_equal(recd_msg_set_recap_state(&m, tick, &st), 0);
    int rc = recd_client_send(c, &m);
    recd_msg_free(&m);
    free(data);
    return rc;
}

/* n chat messages of 60 kB for tick. */
static void send_chat(recd_client *c, const char *session, uint64_t tick, unsigned n)
{
    char *text = malloc(60001);
    assert_non_null(text);
    memset(text, 'a', 60000);
    text[60000] = 0;
    recd_recap_value msg = {.blob = recd_recap_str(text)};
    recd_recap_event ev = {RECD_RECAP_CHAT_MESSAGE, 1, &msg};
    for (unsigned i = 0; i < n; i++) {
        recd_msg m;
        recd_msg_init(&m, RECD_MSG_EVENT, RECD_MSG_FMT_RECAP);
        snprintf(m.session, sizeof m.session, "%s", session);
        assert_int_equal(recd_msg_set_recap_event(&m, tick, &ev), 0);
        td_send(c, &m);
        recd_msg_free(&m);
    }
    free(text);
}

typedef struct decoded {
    size_t ticks, heavy_ticks, events; /* heavy: items of ITEM_DATA_BYTES */
} decoded;

static int count_ticks(void *ctx, uint64_t tick, const recd_recap_state *st,
                       const recd_recap_event *ev, size_t n)
{
    (void)tick;
    (void)ev;
    decoded *out = ctx;
    out->ticks++;
    out->events += n;
    if (st && st->inventory[40].data.len == ITEM_DATA_BYTES)
        out->heavy_ticks++;
    return 0;
}

/* The only file of the session, which must verify, decoded. */
static decoded verified_file(const td_daemon *d, const char *session)
{
    size_t len;
    uint8_t *data = td_read_only_recording(d, "recap", session, &len);
    decoded ticks = {0};
    recd_recap_callbacks cb = {NULL, count_ticks, NULL, NULL, &ticks};
    recd_recap_decode_result res;
    assert_int_equal(recd_recap_decode(data, len, NULL, &cb, &res, NULL), 0);
    free(data);
    return ticks;
}

/* A message may be as large as a session's buffer (1 MiB by default), not larger. */
#define DAEMON_YAML "limits:\n  max_frame: 1MiB\nflush:\n  interval: 1h\n"

/* A flush message: the tick being collected is encoded and everything is written. */
static void send_flush(recd_client *c, const char *session)
{
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_FLUSH, RECD_MSG_FMT_RECAP);
    snprintf(m.session, sizeof m.session, "%s", session);
    td_send(c, &m);
    recd_msg_free(&m);
    assert_int_equal(recd_client_flush(c), 0);
}

/* recd started with DAEMON_YAML, and a client that opened "hoarder" with a heavy state at tick 0. */
static recd_client *start_hoarding(td_daemon *d)
{
    td_setup(d, DAEMON_YAML);
    td_start(d);
    recd_client *c = connect_large(d->tcp);
    send_open(c, "hoarder");
    assert_int_equal(send_heavy_state(c, "hoarder", 0, ITEM_DATA_BYTES), 0);
    return c;
}

/* A 940 kB state for a tick still being collected shows in recd_buffered_bytes (what the
 * limits are checked against); once it is written nothing is left in the count. */
static void test_a_pending_state_counts_toward_the_limits(void **state)
{
    (void)state;
    td_daemon d;
    recd_client *c = start_hoarding(&d);
    assert_int_equal(recd_client_flush(c), 0);
    double want = 47.0 * ITEM_DATA_BYTES;
    if (td_wait_metric(&d, "recd_buffered_bytes", want, 10000) < want) {
        td_dump_log(&d);
        fail_msg("a pending state of 940 kB of items is not counted in recd_buffered_bytes (%.0f)",
                 td_metric(&d, "recd_buffered_bytes"));
    }
    send_flush(c, "hoarder");
    uint64_t deadline = td_deadline(10000);
    while (td_metric(&d, "recd_buffered_bytes") > 0 && td_now_ms() < deadline)
        td_sleep_ms(25);
    if (td_metric(&d, "recd_buffered_bytes") > 0) {
        td_dump_log(&d);
        fail_msg("%.0f bytes still counted after the tick was written",
                 td_metric(&d, "recd_buffered_bytes"));
    }
    td_send_close(c, "hoarder", RECD_MSG_FMT_RECAP);
    td_close_client(c);
    td_stop(&d);
    decoded f = verified_file(&d, "hoarder");
    assert_int_equal(f.ticks, 1);
    assert_int_equal(f.heavy_ticks, 1);
    td_cleanup(&d);
}

/* A 990 kB state that would take its tick (180 kB of events already) over the 1 MiB session
 * limit: refused with an error naming the tick and the limit; what was taken before it is written
 * into a file that verifies. */
static void test_a_state_over_the_session_limit_is_refused(void **state)
{
    (void)state;
    td_daemon d;
    recd_client *c = start_hoarding(&d);
    send_chat(c, "hoarder", 1, 3);
    send_heavy_state(c, "hoarder", 1, ITEM_DATA_BYTES + 1000); /* fails once refused */
    char err[512] = "";
    assert_true(td_close_client_rc(c, err, sizeof err) < 0);
    if (!strstr(err, "the state for tick 1 holds") || !strstr(err, "1048576 bytes"))
        fail_msg("unexpected error: %s", err);
    assert_true(td_metric(&d, "recd_decode_errors_total{reason=\"too_large\"}") == 1);
    td_stop(&d);
    decoded f = verified_file(&d, "hoarder"); /* tick 1: its events, and tick 0's items */
    assert_int_equal(f.ticks, 2);
    assert_int_equal(f.heavy_ticks, 2);
    assert_int_equal(f.events, 3);
    td_cleanup(&d);
}

int main(void)
{
    td_require_recd();
    const struct CMUnitTest tests[] = {
        td_unit_test(test_a_pending_state_counts_toward_the_limits),
        td_unit_test(test_a_state_over_the_session_limit_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
