/* SPDX-License-Identifier: MIT */
/* recd end to end for session ownership (docs/reliability.md, "sessions"): a session takes
 * messages only from the connection that opened it; an open with resume and the token moves it to
 * a new connection; with auth.token set, a session's datagrams carry its open with the token. */
#include "test_daemon_harness.h"

#define TOKEN "0123456789abcdef-owner"
#define START_MS 1763213398000

static const char *const auth_yaml = "auth:\n  token: " TOKEN "\n";

static void send_open_as(recd_client *c, const char *session, const char *token, bool resume)
{
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_OPEN, RECD_MSG_FMT_SAMP_ONFOOT);
    snprintf(m.session, sizeof m.session, "%s", session);
    m.open.has_start_time = true;
    m.open.start_time_ms = START_MS;
    m.open.auth = (char *)token; /* not freed: the message is only encoded */
    m.open.resume = resume;
    td_send(c, &m);
}

static uint64_t send_states(recd_client *c, td_rec_session *s, uint64_t n, bool udp)
{
    recd_msg m;
    uint64_t sent = 0;
    while (sent < n && td_rec_session_next(s, &m)) {
        td_send(c, &m);
        if (udp && ++sent % 64 == 0) /* UDP has no backpressure: keep the kernel queue short */
            td_sleep_ms(1);
        sent += !udp;
    }
    return sent;
}

static void wait_metric_at_least(const td_daemon *d, const char *series, double n)
{
    if (td_wait_metric(d, series, n, 10000) < n) {
        td_dump_log(d);
        fail_msg("%s did not reach %.0f", series, n);
    }
}

#define NOT_OWNER "recd_decode_errors_total{reason=\"not_owner\"}"

/* A client without the token sends a state and a close for a session another connection opened
 * with it, over TCP and over UDP: refused and counted; the owner goes on undisturbed. */
static void test_frames_from_another_connection_are_refused(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, auth_yaml);
    td_start(&d);
    td_rec_session owner, intruder;
    td_rec_session_init(&owner, "victim", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 20000, 31);
    td_rec_session_init(&intruder, "victim", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 20000, 32);
    recd_client *a = td_connect(d.tcp);
    send_open_as(a, "victim", TOKEN, false);
    uint64_t taken = send_states(a, &owner, 100, false);
    assert_int_equal(recd_client_flush(a), 0);
    wait_metric_at_least(&d, "recd_samples_total{transport=\"tcp\",format=\"samp-onfoot\"}", (double)taken);

    recd_client *b = td_connect(d.tcp);
    send_states(b, &intruder, 5, false);
    td_send_close(b, "victim", RECD_MSG_FMT_SAMP_ONFOOT);
    char err[512] = "";
    assert_true(td_close_client_rc(b, err, sizeof err) < 0);
    if (!strstr(err, "belongs to another connection"))
        fail_msg("unexpected refusal: %s", err);
    wait_metric_at_least(&d, NOT_OWNER, 1);

    recd_client *u = td_connect(d.udp);
    send_states(u, &intruder, 5, true);
    td_send_close(u, "victim", RECD_MSG_FMT_SAMP_ONFOOT);
    td_close_client(u);
    wait_metric_at_least(&d, NOT_OWNER, 2);

    send_states(a, &owner, UINT64_MAX, false);
    td_send_close(a, "victim", RECD_MSG_FMT_SAMP_ONFOOT);
    td_close_client(a);
    td_stop(&d);
    td_expect_single_file(&d, "samp-onfoot", "victim", &owner.expect);
    td_rec_session_free(&owner);
    td_rec_session_free(&intruder);
    td_cleanup(&d);
}

/* With auth.token set, a UDP session takes a datagram only after its open with the token in the
 * same datagram (the client repeats it); a datagram without it is dropped and counted. */
static void test_udp_datagrams_carry_the_token(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, auth_yaml);
    td_start(&d);
    td_rec_session owner, intruder;
    td_rec_session_init(&owner, "udp-victim", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 30000, 41);
    td_rec_session_init(&intruder, "udp-victim", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 30000, 42);
    recd_client *a = td_connect(d.udp);
    send_open_as(a, "udp-victim", TOKEN, false);
    uint64_t taken = send_states(a, &owner, 300, true);
    assert_int_equal(recd_client_flush(a), 0);
    wait_metric_at_least(&d, "recd_samples_total{transport=\"udp\",format=\"samp-onfoot\"}", (double)taken);

    recd_client *b = td_connect(d.udp);
    send_states(b, &intruder, 5, true);
    td_send_close(b, "udp-victim", RECD_MSG_FMT_SAMP_ONFOOT);
    td_close_client(b);
    wait_metric_at_least(&d, NOT_OWNER, 1);

    taken += send_states(a, &owner, UINT64_MAX, true);
    td_send_close(a, "udp-victim", RECD_MSG_FMT_SAMP_ONFOOT);
    td_close_client(a);
    wait_metric_at_least(&d, "recd_samples_total{transport=\"udp\",format=\"samp-onfoot\"}", (double)taken);
    td_stop(&d);
    td_expect_single_file(&d, "samp-onfoot", "udp-victim", &owner.expect);
    td_rec_session_free(&owner);
    td_rec_session_free(&intruder);
    td_cleanup(&d);
}

/* After a reconnect, an open with resume and the token takes the session over: the old
 * connection's frames are refused from then on, a resume without the token is refused, and the
 * file holds the session once. */
static void test_resume_moves_a_session(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, auth_yaml);
    td_start(&d);
    td_rec_session s;
    td_rec_session_init(&s, "moving", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 20000, 51);
    recd_client *a = td_connect(d.tcp);
    send_open_as(a, "moving", TOKEN, false);
    uint64_t taken = send_states(a, &s, 150, false);
    assert_int_equal(recd_client_flush(a), 0);
    wait_metric_at_least(&d, "recd_samples_total{transport=\"tcp\",format=\"samp-onfoot\"}", (double)taken);

    recd_client *thief = td_connect(d.tcp);
    send_open_as(thief, "moving", NULL, true);
    char err[512] = "";
    assert_true(td_close_client_rc(thief, err, sizeof err) < 0);
    if (!strstr(err, "missing auth token"))
        fail_msg("unexpected refusal: %s", err);

    recd_client *b = td_connect(d.unix_url);
    send_open_as(b, "moving", TOKEN, true);
    taken += send_states(b, &s, UINT64_MAX, false);
    assert_int_equal(recd_client_flush(b), 0);
    wait_metric_at_least(&d, "recd_samples_total{transport=\"unix\",format=\"samp-onfoot\"}",
                         (double)(taken - 150));

    td_send_close(a, "moving", RECD_MSG_FMT_SAMP_ONFOOT); /* the old connection lost it */
    assert_true(td_close_client_rc(a, err, sizeof err) < 0);
    if (!strstr(err, "belongs to another connection"))
        fail_msg("unexpected refusal: %s", err);

    td_send_close(b, "moving", RECD_MSG_FMT_SAMP_ONFOOT);
    td_close_client(b);
    td_stop(&d);
    td_expect_single_file(&d, "samp-onfoot", "moving", &s.expect);
    td_rec_session_free(&s);
    td_cleanup(&d);
}

int main(void)
{
    td_require_recd();
    const struct CMUnitTest tests[] = {
        td_unit_test(test_frames_from_another_connection_are_refused),
        td_unit_test(test_udp_datagrams_carry_the_token),
        td_unit_test(test_resume_moves_a_session),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
