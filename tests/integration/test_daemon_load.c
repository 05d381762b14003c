/* SPDX-License-Identifier: MIT */
/* recd under load: 1,000 concurrent sessions over 20 connections end as 1,000 complete files
 * identical to what was sent, even with SIGTERM right after the senders finish; SIGTERM keeps
 * reading open connections to their end (or to shutdown.drain_timeout); backpressure pauses a
 * connection without losing a byte; and after a kill -9 in the middle of sending, a restart
 * recovers every .part into a valid file that lost at most what arrived within the flush
 * interval before the kill. */
#include <pthread.h>
#include <stdatomic.h>

#include "test_daemon_harness.h"

#define CONNS 20
#define SESSIONS 1000

static void test_thousand_sessions_then_sigterm(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "flush:\n  interval: 500ms\n");
    td_start(&d);
    td_rec_session *s = calloc(SESSIONS, sizeof *s);
    assert_non_null(s);
    recd_client *c[CONNS];
    for (int i = 0; i < CONNS; i++)
        c[i] = td_connect(i % 4 == 3 ? d.unix_url : d.tcp);
    for (int i = 0; i < SESSIONS; i++) {
        char key[32];
        snprintf(key, sizeof key, "load-%04d", i);
        td_rec_session_init(&s[i], key, i % 3 ? recd_synth_format_find("samp-onfoot") : recd_synth_format_find("samp-vehicle"),
                            i % 3 ? RECD_SYNTH_SCENARIO_WALK : RECD_SYNTH_SCENARIO_DRIVE, 8000, (uint64_t)i);
        td_send_open(c[i % CONNS], key, s[i].format, 1763213398000);
    }
    /* Round robin: every connection carries 50 sessions interleaved block by block. */
    bool more = true;
    while (more) {
        more = false;
        for (int i = 0; i < SESSIONS; i++) {
            recd_msg m;
            if (td_rec_session_next(&s[i], &m)) {
                td_send(c[i % CONNS], &m);
                more = true;
            }
        }
    }
    for (int i = 0; i < SESSIONS; i++)
        td_send_close(c[i % CONNS], s[i].session, s[i].format);
    for (int i = 0; i < CONNS; i++)
        td_close_client(c[i]); /* returns once recd has read everything and closed */
    td_stop(&d);               /* right away: the last samples are still in buffers */
    td_files all = td_list(&d);
    assert_int_equal(all.parts, 0);
    assert_int_equal(all.count, SESSIONS);
    td_files_free(&all);
    for (int i = 0; i < SESSIONS; i++) {
        td_expect_single_file(&d, recd_msg_format_name(s[i].format), s[i].session, &s[i].expect);
        td_rec_session_free(&s[i]);
    }
    free(s);
    td_cleanup(&d);
}

static void test_sigterm_drains_open_connections(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "shutdown:\n  drain_timeout: 30s\n");
    td_start(&d);
    td_rec_session s;
    td_rec_session_init(&s, "draining", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_MIXED, 120000, 12);
    recd_client *c = td_connect(d.tcp);
    td_send_open(c, "draining", RECD_MSG_FMT_SAMP_ONFOOT, 1763213398000);
    recd_msg m;
    for (int i = 0; i < 200 && td_rec_session_next(&s, &m); i++)
        td_send(c, &m);
    assert_int_equal(recd_client_flush(c), 0);
    kill(d.pid, SIGTERM);
    td_sleep_ms(300);
    /* Stopping: new connections are refused, but this one is still read to its end. */
    recd_client *late = NULL;
    char err[256];
    if (recd_client_connect(&late, d.tcp, NULL, err, sizeof err) == 0) {
        td_send_open(late, "late", RECD_MSG_FMT_SAMP_ONFOOT, 0);
        assert_true(recd_client_close(late, err, sizeof err) < 0);
    }
    while (td_rec_session_next(&s, &m))
        td_send(c, &m);
    td_send_close(c, "draining", RECD_MSG_FMT_SAMP_ONFOOT);
    td_close_client(c);
    assert_int_equal(td_signal_wait(&d, 0), 0); /* signal 0: just wait for the exit */
    td_expect_single_file(&d, "samp-onfoot", "draining", &s.expect);
    td_files late_files = td_session_files(&d, "samp-onfoot", "late");
    assert_int_equal(late_files.count, 0);
    td_files_free(&late_files);
    td_rec_session_free(&s);
    td_cleanup(&d);
}

static void test_drain_timeout_ends_a_stuck_connection(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "shutdown:\n  drain_timeout: 1s\n");
    td_start(&d);
    td_rec_session s;
    td_rec_session_init(&s, "stuck", recd_synth_format_find("samp-vehicle"), RECD_SYNTH_SCENARIO_DRIVE, 20000, 13);
    recd_client *c = td_connect(d.tcp);
    td_send_open(c, "stuck", RECD_MSG_FMT_SAMP_VEHICLE, 1763213398000);
    recd_msg m;
    while (td_rec_session_next(&s, &m))
        td_send(c, &m);
    assert_int_equal(recd_client_flush(c), 0);
    /* The client never closes: the daemon gives up after the drain timeout, keeping everything. */
    uint64_t t0 = td_now_ms();
    td_stop(&d);
    assert_true(td_now_ms() - t0 >= 900);
    char err[256];
    td_close_client_rc(c, err, sizeof err);
    td_expect_single_file(&d, "samp-vehicle", "stuck", &s.expect);
    td_rec_session_free(&s);
    td_cleanup(&d);
}

static void test_backpressure_pauses_without_loss(void **state)
{
    (void)state;
    td_daemon d;
    /* The smallest limits: a session may hold 64 KiB before its connection is paused. */
    td_setup(&d, "limits:\n  session_buffer: 64KiB\n  process_buffer: 1MiB\n  max_frame: 4KiB\n"
                 "flush:\n  buffer_size: 64KiB\n");
    td_start(&d);
    td_rec_session s[4];
    recd_client *c = td_connect(d.tcp);
    for (int i = 0; i < 4; i++) {
        char key[32];
        snprintf(key, sizeof key, "pressure-%d", i);
        td_rec_session_init(&s[i], key, recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_MIXED, 900000,
                            (uint64_t)(40 + i));
        td_send_open(c, key, RECD_MSG_FMT_SAMP_ONFOOT, 1763213398000);
    }
    /* Long runs of one session at a time: each fills its buffer faster than a job can start. */
    recd_msg m;
    bool more = true;
    while (more) {
        more = false;
        for (int i = 0; i < 4; i++)
            for (int k = 0; k < 2000 && td_rec_session_next(&s[i], &m); k++) {
                td_send(c, &m);
                more = true;
            }
    }
    for (int i = 0; i < 4; i++)
        td_send_close(c, s[i].session, RECD_MSG_FMT_SAMP_ONFOOT);
    td_close_client(c);
    double paused = td_metric(&d, "recd_backpressure_events_total");
    td_stop(&d);
    if (paused < 1) {
        td_dump_log(&d);
        fail_msg("no backpressure event for %zu bytes sent through 64 KiB session buffers",
                 (size_t)(s[0].expect.len * 4));
    }
    for (int i = 0; i < 4; i++) {
        td_expect_single_file(&d, "samp-onfoot", s[i].session, &s[i].expect);
        td_rec_session_free(&s[i]);
    }
    td_cleanup(&d);
}

/* ---- kill -9 ---------------------------------------------------------------------------------- */

#define CRASH_SESSIONS 40
#define CRASH_RECAP 8 /* the first sessions are Recap players */

typedef struct crash_sender {
    const char *url;
    td_rec_session rec[CRASH_SESSIONS];
    recd_synth_recap_gen *recap[CRASH_RECAP];
    _Atomic uint64_t sent[CRASH_SESSIONS]; /* blocks / ticks handed to the kernel */
    atomic_bool stop;
} crash_sender;

static void *sender_main(void *arg)
{
    crash_sender *cs = arg;
    recd_client *c = NULL;
    char err[256];
    if (recd_client_connect(&c, cs->url, NULL, err, sizeof err) < 0)
        return NULL;
    recd_msg m;
    for (int i = 0; i < CRASH_SESSIONS; i++) {
        if (i < CRASH_RECAP) {
            recd_recap_header h;
            recd_synth_recap_gen_header(cs->recap[i], &h);
            recd_msg_init(&m, RECD_MSG_OPEN, RECD_MSG_FMT_RECAP);
            snprintf(m.session, sizeof m.session, "crash-%02d", i);
            recd_msg_set_recap_open(&m, &h);
        } else {
            recd_msg_init(&m, RECD_MSG_OPEN, RECD_MSG_FMT_SAMP_ONFOOT);
            snprintf(m.session, sizeof m.session, "%s", cs->rec[i].session);
            m.open.has_start_time = true;
            m.open.start_time_ms = 1763213398000;
        }
        int rc = recd_client_send(c, &m);
        recd_msg_free(&m);
        if (rc < 0)
            goto out;
    }
    while (!atomic_load(&cs->stop)) {
        uint64_t pending[CRASH_SESSIONS] = {0};
        for (int i = 0; i < CRASH_SESSIONS; i++) {
            if (i < CRASH_RECAP) {
                recd_synth_recap_tick t;
                if (recd_synth_recap_gen_next(cs->recap[i], &t) != 1)
                    continue;
                recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_RECAP);
                snprintf(m.session, sizeof m.session, "crash-%02d", i);
                recd_msg_set_recap_state(&m, t.tick, t.state);
                int rc = recd_client_send(c, &m);
                recd_msg_free(&m);
                if (rc < 0)
                    goto out;
            } else if (td_rec_session_next(&cs->rec[i], &m)) {
                if (recd_client_send(c, &m) < 0)
                    goto out;
            } else {
                continue;
            }
            pending[i]++;
        }
        if (recd_client_flush(c) < 0)
            goto out;
        for (int i = 0; i < CRASH_SESSIONS; i++)
            atomic_fetch_add(&cs->sent[i], pending[i]);
        td_sleep_ms(2);
    }
out:
    recd_client_close(c, err, sizeof err);
    return NULL;
}

static uint64_t units_in(const uint8_t *data, size_t len)
{
    if (len >= 4 && memcmp(data, RECD_RECAP_MAGIC, 4) == 0) {
        recd_recap_decode_result res;
        recd_recap_verify(data, len, &res, NULL);
        return res.ticks;
    }
    recd_rec_info info;
    recd_rec_probe(data, len, &info, NULL);
    return info.block_count;
}

static void test_kill9_then_recovery(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "flush:\n  interval: 200ms\n");
    td_start(&d);
    crash_sender *cs = calloc(1, sizeof *cs);
    assert_non_null(cs);
    cs->url = d.tcp;
    for (int i = 0; i < CRASH_SESSIONS; i++) { /* generators are made here: asserts stay on this thread */
        char key[32];
        snprintf(key, sizeof key, "crash-%02d", i);
        if (i < CRASH_RECAP) {
            recd_synth_params p = {recd_synth_format_find("recap"), RECD_SYNTH_SCENARIO_MIXED, 600000, (uint64_t)i};
            assert_int_equal(recd_synth_recap_gen_new(&p, &cs->recap[i]), 0);
        } else {
            td_rec_session_init(&cs->rec[i], key, recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK,
                                600000, (uint64_t)i);
        }
    }
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, sender_main, cs), 0);
    td_sleep_ms(1500);
    uint64_t snapshot[CRASH_SESSIONS];
    for (int i = 0; i < CRASH_SESSIONS; i++)
        snapshot[i] = atomic_load(&cs->sent[i]);
    /* Everything in the snapshot had a whole second (scaled under sanitizers) to reach the disk:
     * 5 flush intervals. */
    td_sleep_ms(tu_scaled_ms(1000));
    assert_int_equal(td_signal_wait(&d, SIGKILL), 128 + SIGKILL);
    atomic_store(&cs->stop, true);
    pthread_join(th, NULL);

    td_files before = td_list(&d);
    assert_true(before.parts > 0); /* the kill left open recordings behind */
    td_files_free(&before);

    td_start(&d); /* recovery runs before the listeners open */
    td_stop(&d);
    td_files after = td_list(&d);
    assert_int_equal(after.parts, 0);
    uint64_t kept[CRASH_SESSIONS] = {0};
    for (size_t i = 0; i < after.count; i++) {
        size_t len;
        uint8_t *data = td_read_output(&d, after.items[i].path, &len);
        if (!td_valid_recording(data, len))
            fail_msg("%s is not a valid recording after recovery", after.items[i].path);
        const char *key = strstr(after.items[i].path, "crash-");
        assert_non_null(key);
        int idx = atoi(key + 6);
        assert_true(idx >= 0 && idx < CRASH_SESSIONS);
        kept[idx] += units_in(data, len);
        if (idx >= CRASH_RECAP) /* .rec: what was kept is exactly the start of what was sent */
            assert_memory_equal(data + 8, cs->rec[idx].expect.data + 8, len - 8);
        free(data);
    }
    for (int i = 0; i < CRASH_SESSIONS; i++) {
        if (kept[i] < snapshot[i])
            fail_msg("session %d: %llu units kept, but %llu were sent more than a second before "
                     "the kill", i, (unsigned long long)kept[i], (unsigned long long)snapshot[i]);
        if (i >= CRASH_RECAP)
            td_rec_session_free(&cs->rec[i]);
        else
            recd_synth_recap_gen_free(cs->recap[i]);
    }
    td_files_free(&after);
    free(cs);
    td_cleanup(&d);
}

int main(void)
{
    td_require_recd();
    const struct CMUnitTest tests[] = {
        td_unit_test(test_thousand_sessions_then_sigterm),
        td_unit_test(test_sigterm_drains_open_connections),
        td_unit_test(test_drain_timeout_ends_a_stuck_connection),
        td_unit_test(test_backpressure_pauses_without_loss),
        td_unit_test(test_kill9_then_recovery),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
