/* SPDX-License-Identifier: MIT */
/* recd end to end for UDP sessions that meet bad luck or a hostile peer (issue 35, rows 4, 5 and
 * 11): a stray datagram with seq 2^63-1 does not turn the rest of the session into duplicates; a
 * sender that restarts and resumes its session numbering from 0 again is recorded; a sender that
 * pauses past rotation.idle_timeout goes on in a new part without a new open; and the dormant
 * sessions that allows are bounded (limits.max_dormant_sessions, limits.max_sessions,
 * rotation.forget_after). Every check reads the files, not only the metrics. */
#include "test_daemon_harness.h"

#define SAMPLES_UDP "recd_samples_total{transport=\"udp\",format=\"samp-onfoot\"}"

static void send_now(recd_client *c, const recd_msg *m)
{
    td_send(c, m);
    assert_int_equal(recd_client_flush(c), 0); /* one datagram each */
}

static void send_numbered(recd_client *c, recd_msg m, uint64_t seq)
{
    m.has_seq = true;
    m.seq = seq;
    send_now(c, &m);
}

static recd_msg open_of(const char *session, bool resume, bool has_seq, uint64_t seq)
{
    recd_msg o;
    recd_msg_init(&o, RECD_MSG_OPEN, RECD_MSG_FMT_SAMP_ONFOOT);
    snprintf(o.session, sizeof o.session, "%s", session);
    o.open.has_start_time = true;
    o.open.start_time_ms = 1763213398000;
    o.open.resume = resume;
    o.has_seq = has_seq;
    o.seq = seq;
    return o;
}

static void send_close(recd_client *c, const char *session, uint64_t seq)
{
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_CLOSE, RECD_MSG_FMT_SAMP_ONFOOT);
    snprintf(m.session, sizeof m.session, "%s", session);
    send_numbered(c, m, seq);
}

/* Sends the session's next n blocks numbered from seq on. */
static void send_blocks(recd_client *c, td_rec_session *s, unsigned n, uint64_t seq)
{
    recd_msg m;
    for (unsigned i = 0; i < n; i++) {
        assert_true(td_rec_session_next(s, &m));
        send_numbered(c, m, seq + i);
    }
}

static void wait_samples(const td_daemon *d, double want)
{
    double got = td_wait_metric(d, SAMPLES_UDP, want, 20000);
    if (got != want) {
        td_dump_log(d);
        fail_msg("%s is %g, expected %g", SAMPLES_UDP, got, want);
    }
}

static void expect_metric(const td_daemon *d, const char *series, double want)
{
    double got = td_wait_metric(d, series, want, 20000);
    if (got != want) {
        td_dump_log(d);
        fail_msg("%s is %g, expected %g", series, got, want);
    }
}

/* Row 4: one stray datagram numbered 2^63-1 amid a session. It is recorded (UDP cannot tell it
 * from the sender), and so is every sample after it: one epoch up, one back. */
static void test_a_stray_seq_does_not_poison_the_session(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "");
    td_start(&d);
    td_rec_session s;
    td_rec_session_init(&s, "stray", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 60000, 41);
    recd_client *c = td_connect(d.udp);
    recd_msg o = open_of("stray", false, true, 0);
    send_now(c, &o);
    send_blocks(c, &s, 25, 1);
    send_blocks(c, &s, 1, INT64_MAX); /* the stray */
    send_blocks(c, &s, 50, 26);
    send_close(c, "stray", 76);
    td_close_client(c);
    wait_samples(&d, 76);
    expect_metric(&d, "recd_udp_seq_epochs_total{reason=\"window\"}", 2);
    assert_true(td_metric(&d, "recd_udp_duplicates_total") == 0);
    assert_true(td_metric(&d, "recd_udp_gaps_total") == 0);
    td_stop(&d);
    td_expect_single_file(&d, "samp-onfoot", "stray", &s.expect); /* all 76 blocks */
    td_rec_session_free(&s);
    td_cleanup(&d);
}

/* Row 5: a sender restarts (a new socket), opens its session again with resume and numbers from
 * its start again: with the open numbered 0 like the first, and with unnumbered opens whose
 * samples start at 1 again. Both go on in the same file, nothing dropped. */
static void test_a_resume_restarts_the_numbering(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "");
    td_start(&d);
    td_rec_session a, b;
    td_rec_session_init(&a, "restart-a", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 60000, 42);
    td_rec_session_init(&b, "restart-b", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 60000, 43);
    recd_client *c = td_connect(d.udp);
    recd_msg o = open_of("restart-a", false, true, 0);
    send_now(c, &o);
    send_blocks(c, &a, 30, 1);
    o = open_of("restart-b", false, false, 0);
    send_now(c, &o);
    send_blocks(c, &b, 20, 1);
    td_close_client(c);
    wait_samples(&d, 50);

    c = td_connect(d.udp); /* the sender again, from another port */
    o = open_of("restart-a", true, true, 0);
    send_now(c, &o);
    send_blocks(c, &a, 30, 1);
    send_close(c, "restart-a", 31);
    o = open_of("restart-b", true, false, 0);
    send_now(c, &o);
    send_blocks(c, &b, 20, 1);
    send_close(c, "restart-b", 21);
    td_close_client(c);
    wait_samples(&d, 100);
    expect_metric(&d, "recd_udp_seq_epochs_total{reason=\"resume\"}", 2);
    assert_true(td_metric(&d, "recd_udp_duplicates_total") == 0);
    td_stop(&d);
    td_expect_single_file(&d, "samp-onfoot", "restart-a", &a.expect); /* 60 blocks */
    td_expect_single_file(&d, "samp-onfoot", "restart-b", &b.expect); /* 40 blocks */
    td_rec_session_free(&a);
    td_rec_session_free(&b);
    td_cleanup(&d);
}

static recd_rec_info probe(const uint8_t *data, size_t len)
{
    recd_rec_info info;
    assert_int_equal(recd_rec_probe(data, len, &info, NULL), 0);
    assert_int_equal(info.trailing_bytes, 0);
    return info;
}

/* The session's finalized parts, in order, put back on one clock, hold exactly the blocks sent. */
static void expect_parts(const td_daemon *d, const char *session, const td_rec_session *s,
                         size_t parts)
{
    td_files f = td_session_files(d, "samp-onfoot", session);
    if (f.count != parts || f.parts != 0) {
        td_dump_log(d);
        fail_msg("%s: %zu files (%zu .part), expected %zu parts", session, f.count, f.parts, parts);
    }
    recd_buf joined = {0};
    recd_buf_append(&joined, s->expect.data, RECD_REC_HEADER_SIZE);
    uint32_t offset = 0;
    for (size_t i = 0; i < f.count; i++) {
        size_t len;
        uint8_t *data = td_read_output(d, f.items[i].path, &len);
        recd_rec_info info = probe(data, len);
        for (uint64_t b = 0; b < info.block_count; b++) {
            uint8_t block[RECD_REC_ONFOOT_BLOCK_SIZE];
            memcpy(block, recd_rec_block_at(data, &info, b), sizeof block);
            recd_rec_onfoot foot;
            recd_rec_onfoot_decode(block, &foot);
            if (i > 0 && b == 0 && joined.len + sizeof block <= s->expect.len) {
                recd_rec_onfoot orig; /* where this part starts on the session clock */
                recd_rec_onfoot_decode(s->expect.data + joined.len, &orig);
                offset = orig.time_ms;
            }
            foot.time_ms += i > 0 ? offset : 0;
            recd_rec_onfoot_encode(&foot, block);
            recd_buf_append(&joined, block, sizeof block);
        }
        free(data);
    }
    td_files_free(&f);
    size_t got = joined.len, want = s->expect.len;
    bool same = got == want && memcmp(joined.data, s->expect.data, got) == 0;
    recd_buf_free(&joined);
    if (!same)
        fail_msg("%s: the parts hold %zu bytes of blocks, %s %zu were sent", session,
                 got - RECD_REC_HEADER_SIZE, got == want ? "unlike the" : "but",
                 want - RECD_REC_HEADER_SIZE);
}

/* Waits until the session's first file is finalized (it went dormant). */
static void wait_finalized(const td_daemon *d, const char *session, size_t files)
{
    uint64_t deadline = td_deadline(20000);
    for (;;) {
        td_files f = td_session_files(d, "samp-onfoot", session);
        bool done = f.count == files && f.parts == 0;
        td_files_free(&f);
        if (done)
            return;
        if (td_now_ms() > deadline) {
            td_dump_log(d);
            fail_msg("%s: %zu finalized files did not appear", session, files);
        }
        td_sleep_ms(50);
    }
}

/* Row 11: a UDP sender that sent its open once pauses for three times rotation.idle_timeout (the
 * old rule forgot the session after two), then goes on: a second part, nothing lost. */
static void test_a_udp_sender_survives_a_pause(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "rotation:\n  idle_timeout: 1s\nflush:\n  interval: 100ms\n");
    td_start(&d);
    td_rec_session s;
    td_rec_session_init(&s, "pauses", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 60000, 44);
    recd_client *c = td_connect(d.udp);
    recd_msg o = open_of("pauses", false, true, 0);
    send_now(c, &o);
    send_blocks(c, &s, 50, 1);
    wait_samples(&d, 50);
    wait_finalized(&d, "pauses", 1);
    /* Not a wait for luck: however late it runs, the session must be known after the pause. */
    td_sleep_ms(tu_scaled_ms(3000));
    send_blocks(c, &s, 50, 51);
    wait_samples(&d, 100);
    send_close(c, "pauses", 101);
    td_close_client(c);
    expect_metric(&d, "recd_sessions_open", 0);
    assert_true(td_metric(&d, "recd_decode_errors_total{reason=\"unknown_session\"}") == 0);
    td_stop(&d);
    expect_parts(&d, "pauses", &s, 2);
    td_rec_session_free(&s);
    td_cleanup(&d);
}

/* A UDP session with one sample, sent from its own socket. */
static void open_with_one_sample(const char *url, td_rec_session *s)
{
    recd_client *c = td_connect(url);
    recd_msg o = open_of(s->session, false, false, 0);
    send_now(c, &o);
    recd_msg m;
    assert_true(td_rec_session_next(s, &m));
    send_now(c, &m);
    td_close_client(c);
}

/* One more sample for a session from its own socket: true when recd took it. */
static bool one_more_sample(const td_daemon *d, td_rec_session *s)
{
    double before = td_metric(d, SAMPLES_UDP);
    double unknown = td_metric(d, "recd_decode_errors_total{reason=\"unknown_session\"}");
    recd_client *c = td_connect(d->udp);
    recd_msg m;
    assert_true(td_rec_session_next(s, &m));
    send_now(c, &m);
    td_close_client(c);
    uint64_t deadline = td_deadline(20000);
    for (;;) {
        if (td_metric(d, SAMPLES_UDP) > before)
            return true;
        if (td_metric(d, "recd_decode_errors_total{reason=\"unknown_session\"}") > unknown)
            return false;
        if (td_now_ms() > deadline)
            fail_msg("%s: the sample was neither taken nor refused", s->session);
        td_sleep_ms(25);
    }
}

/* Remembering idle sessions is state that peers grow: limits.max_dormant_sessions bounds it, the
 * session dormant longest going first. */
static void test_dormant_sessions_are_bounded(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "rotation:\n  idle_timeout: 1s\nflush:\n  interval: 100ms\n"
                 "limits:\n  max_dormant_sessions: 2\n");
    td_start(&d);
    const char *keys[] = {"idle-1", "idle-2", "idle-3"};
    td_rec_session s[3];
    for (int i = 0; i < 3; i++)
        td_rec_session_init(&s[i], keys[i], recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK,
                            60000, 50 + (uint64_t)i);
    /* One at a time, so that they go dormant in this order. */
    for (int i = 0; i < 3; i++) {
        open_with_one_sample(d.udp, &s[i]);
        wait_samples(&d, i + 1);
        wait_finalized(&d, keys[i], 1);
    }
    expect_metric(&d, "recd_sessions_forgotten_total{reason=\"limit\"}", 1);
    expect_metric(&d, "recd_sessions_dormant", 2);
    expect_metric(&d, "recd_sessions_open", 2);
    assert_false(one_more_sample(&d, &s[0])); /* idle-1 went first: unknown now */
    assert_true(one_more_sample(&d, &s[1]));  /* idle-2 goes on in a new part */
    assert_true(one_more_sample(&d, &s[2]));
    td_stop(&d);
    static const size_t files[] = {1, 2, 2};
    for (int i = 0; i < 3; i++) {
        td_files f = td_session_files(&d, "samp-onfoot", keys[i]);
        size_t count = f.count, parts = f.parts;
        td_files_free(&f);
        if (count != files[i] || parts != 0)
            fail_msg("%s: %zu files (%zu .part), expected %zu", keys[i], count, parts, files[i]);
        td_rec_session_free(&s[i]);
    }
    td_cleanup(&d);
}

/* A new open at limits.max_sessions takes the place of the session dormant longest (its file is
 * finalized already), instead of being refused while idle keys are kept. */
static void test_a_new_open_takes_a_dormant_place(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "rotation:\n  idle_timeout: 1s\nflush:\n  interval: 100ms\n"
                 "limits:\n  max_sessions: 2\n  max_sessions_per_peer: 2\n");
    td_start(&d);
    const char *keys[] = {"room-1", "room-2", "room-3"};
    td_rec_session s[3];
    for (int i = 0; i < 3; i++)
        td_rec_session_init(&s[i], keys[i], recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK,
                            60000, 70 + (uint64_t)i);
    open_with_one_sample(d.udp, &s[0]);
    wait_samples(&d, 1);
    wait_finalized(&d, keys[0], 1); /* room-1 is dormant */
    open_with_one_sample(d.udp, &s[1]);
    wait_samples(&d, 2);
    open_with_one_sample(d.udp, &s[2]); /* at the limit: room-1 makes way */
    wait_samples(&d, 3);
    expect_metric(&d, "recd_sessions_forgotten_total{reason=\"room\"}", 1);
    expect_metric(&d, "recd_sessions_open", 2);
    assert_false(one_more_sample(&d, &s[0]));
    td_stop(&d);
    for (int i = 0; i < 3; i++) {
        td_files f = td_session_files(&d, "samp-onfoot", keys[i]);
        size_t count = f.count, parts = f.parts;
        td_files_free(&f);
        if (count != 1 || parts != 0)
            fail_msg("%s: %zu files (%zu .part), expected 1", keys[i], count, parts);
        td_rec_session_free(&s[i]);
    }
    td_cleanup(&d);
}

/* A peer at its share (limits.max_sessions_per_peer) that opens again: its own session dormant
 * longest makes way, as at limits.max_sessions, instead of the open being refused. */
static void test_a_peer_at_its_share_takes_its_dormant_place(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "rotation:\n  idle_timeout: 1s\nflush:\n  interval: 100ms\n"
                 "limits:\n  max_sessions: 10\n  max_sessions_per_peer: 1\n");
    td_start(&d);
    const char *keys[] = {"mine-1", "mine-2"};
    td_rec_session s[2];
    for (int i = 0; i < 2; i++)
        td_rec_session_init(&s[i], keys[i], recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK,
                            60000, 80 + (uint64_t)i);
    open_with_one_sample(d.udp, &s[0]);
    wait_samples(&d, 1);
    wait_finalized(&d, keys[0], 1); /* mine-1 is dormant */
    open_with_one_sample(d.udp, &s[1]); /* at the peer's share: mine-1 makes way */
    wait_samples(&d, 2);
    expect_metric(&d, "recd_sessions_forgotten_total{reason=\"room\"}", 1);
    expect_metric(&d, "recd_sessions_open", 1);
    td_stop(&d);
    for (int i = 0; i < 2; i++) {
        td_files f = td_session_files(&d, "samp-onfoot", keys[i]);
        size_t count = f.count, parts = f.parts;
        td_files_free(&f);
        if (count != 1 || parts != 0)
            fail_msg("%s: %zu files (%zu .part), expected 1", keys[i], count, parts);
        td_rec_session_free(&s[i]);
    }
    td_cleanup(&d);
}

/* rotation.forget_after: a dormant session is forgotten after it, and a sample then is refused
 * as unknown_session (and counted). */
static void test_a_dormant_session_is_forgotten_in_time(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "rotation:\n  idle_timeout: 1s\n  forget_after: 1s\nflush:\n  interval: 100ms\n");
    td_start(&d);
    td_rec_session s;
    td_rec_session_init(&s, "forgotten", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 60000, 60);
    open_with_one_sample(d.udp, &s);
    wait_samples(&d, 1);
    expect_metric(&d, "recd_sessions_forgotten_total{reason=\"timeout\"}", 1);
    expect_metric(&d, "recd_sessions_dormant", 0);
    expect_metric(&d, "recd_sessions_open", 0);
    assert_false(one_more_sample(&d, &s));
    td_stop(&d);
    td_rec_session_free(&s);
    td_cleanup(&d);
}

int main(void)
{
    td_require_recd();
    const struct CMUnitTest tests[] = {
        td_unit_test(test_a_stray_seq_does_not_poison_the_session),
        td_unit_test(test_a_resume_restarts_the_numbering),
        td_unit_test(test_a_udp_sender_survives_a_pause),
        td_unit_test(test_dormant_sessions_are_bounded),
        td_unit_test(test_a_new_open_takes_a_dormant_place),
        td_unit_test(test_a_peer_at_its_share_takes_its_dormant_place),
        td_unit_test(test_a_dormant_session_is_forgotten_in_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
