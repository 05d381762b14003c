/* SPDX-License-Identifier: MIT */
/* recd end to end for what a session promises (docs/reliability.md, "sessions"): a second open
 * of a live key is refused (or, by sessions.second_open, gets a file of its own); clamped times
 * are counted and logged once; a session whose name and its 999 suffixed variants are all taken
 * still gets a file. */
#include "test_daemon_harness.h"

#define START_MS 1763213398000

static void wait_samples(const td_daemon *d, uint64_t n)
{
    const char *series = "recd_samples_total{transport=\"tcp\",format=\"samp-onfoot\"}";
    if (td_wait_metric(d, series, (double)n, 10000) < (double)n) {
        td_dump_log(d);
        fail_msg("recd did not take %llu samples", (unsigned long long)n);
    }
}

/* Sends up to n states of s; the number sent. */
static uint64_t send_states(recd_client *c, td_rec_session *s, uint64_t n)
{
    recd_msg m;
    uint64_t sent = 0;
    while (sent < n && td_rec_session_next(s, &m)) {
        td_send(c, &m);
        sent++;
    }
    return sent;
}

/* A resend after a killed sender opens the live key again: refused, counted, and the live
 * session's file holds its own samples only. */
static void test_second_open_is_refused(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "");
    td_start(&d);
    td_rec_session live, resend;
    td_rec_session_init(&live, "dup", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 30000, 3);
    td_rec_session_init(&resend, "dup", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 30000, 4);
    recd_client *a = td_connect(d.tcp);
    td_send_open(a, "dup", RECD_MSG_FMT_SAMP_ONFOOT, START_MS);
    uint64_t taken = send_states(a, &live, 200);
    assert_int_equal(recd_client_flush(a), 0);
    wait_samples(&d, taken);

    recd_client *b = td_connect(d.tcp);
    td_send_open(b, "dup", RECD_MSG_FMT_SAMP_ONFOOT, START_MS);
    send_states(b, &resend, 100);
    char err[512] = "";
    assert_true(td_close_client_rc(b, err, sizeof err) < 0);
    if (!strstr(err, "open already"))
        fail_msg("unexpected refusal: %s", err);
    assert_true(td_metric(&d, "recd_decode_errors_total{reason=\"already_open\"}") == 1);

    send_states(a, &live, UINT64_MAX);
    td_send_close(a, "dup", RECD_MSG_FMT_SAMP_ONFOOT);
    td_close_client(a);
    td_stop(&d);
    td_expect_single_file(&d, "samp-onfoot", "dup", &live.expect);
    td_rec_session_free(&live);
    td_rec_session_free(&resend);
    td_cleanup(&d);
}

static bool file_equals(const td_daemon *d, const char *rel, const recd_buf *expect)
{
    size_t len;
    uint8_t *data = td_read_output(d, rel, &len);
    bool same = len == expect->len && memcmp(data, expect->data, len) == 0;
    free(data);
    return same;
}

/* With sessions.second_open: new_file the live session is finalized and the new open records
 * into a file of its own, even with the same start time. */
static void test_second_open_may_start_a_new_file(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "sessions:\n  second_open: new_file\n");
    td_start(&d);
    td_rec_session first, second;
    td_rec_session_init(&first, "dup", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 20000, 5);
    td_rec_session_init(&second, "dup", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 20000, 6);
    recd_client *a = td_connect(d.tcp);
    td_send_open(a, "dup", RECD_MSG_FMT_SAMP_ONFOOT, START_MS);
    uint64_t taken = send_states(a, &first, UINT64_MAX);
    td_close_client(a); /* a killed sender: no close message */
    wait_samples(&d, taken);

    recd_client *b = td_connect(d.tcp);
    td_send_open(b, "dup", RECD_MSG_FMT_SAMP_ONFOOT, START_MS);
    send_states(b, &second, UINT64_MAX);
    td_send_close(b, "dup", RECD_MSG_FMT_SAMP_ONFOOT);
    td_close_client(b);
    td_stop(&d);

    td_files f = td_session_files(&d, "samp-onfoot", "dup");
    if (f.count != 2 || f.parts != 0) {
        td_dump_log(&d);
        fail_msg("expected 2 finalized files, found %zu (%zu .part)", f.count, f.parts);
    }
    bool straight = file_equals(&d, f.items[0].path, &first.expect) &&
                    file_equals(&d, f.items[1].path, &second.expect);
    bool crossed = file_equals(&d, f.items[0].path, &second.expect) &&
                   file_equals(&d, f.items[1].path, &first.expect);
    assert_true(straight || crossed);
    td_files_free(&f);
    td_rec_session_free(&first);
    td_rec_session_free(&second);
    td_cleanup(&d);
}

static size_t count_in_log(const td_daemon *d, const char *needle)
{
    size_t n, hits = 0;
    uint8_t *text = tu_read_file(d->log, &n);
    assert_non_null(text);
    char *z = realloc(text, n + 1);
    assert_non_null(z);
    z[n] = 0;
    for (const char *p = z; (p = strstr(p, needle)); p++)
        hits++;
    free(z);
    return hits;
}

/* Samples earlier than the previous one are clamped (the default time_policy): each counted,
 * the first logged, and the total logged when the session closes. */
static void test_clamped_times_are_counted_and_logged_once(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "");
    td_start(&d);
    td_rec_session s;
    td_rec_session_init(&s, "clamps", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 10000, 9);
    recd_client *c = td_connect(d.tcp);
    td_send_open(c, "clamps", RECD_MSG_FMT_SAMP_ONFOOT, START_MS);
    recd_msg m;
    for (uint32_t i = 0; i < 20 && td_rec_session_next(&s, &m); i++) {
        m.onfoot.time_ms = i < 10 ? 1000 + i : 500 + i; /* the last 10 go back in time */
        td_send(c, &m);
    }
    td_send_close(c, "clamps", RECD_MSG_FMT_SAMP_ONFOOT);
    td_close_client(c);
    assert_true(td_wait_metric(&d, "recd_time_clamped_total", 10, 10000) == 10);
    td_stop(&d);
    assert_int_equal(count_in_log(&d, "is before the previous one"), 1);
    assert_int_equal(count_in_log(&d, "10 samples had their time raised"), 1);
    td_rec_session_free(&s);
    td_cleanup(&d);
}

/* The name of a session started at START_MS, NAME-1 .. NAME-999 all exist (a key opened and
 * closed 1,000 times with one start time): the next session still gets a file of its own. */
static void test_names_never_run_out(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "");
    char dir[2048], path[2200], name[64];
    snprintf(dir, sizeof dir, "%s/samp-onfoot", d.out);
    assert_true(mkdir(d.out, 0755) == 0 && mkdir(dir, 0755) == 0);
    snprintf(dir, sizeof dir, "%s/samp-onfoot/names", d.out);
    assert_int_equal(mkdir(dir, 0755), 0);
    time_t start = (time_t)(START_MS / 1000);
    struct tm tm;
    gmtime_r(&start, &tm);
    strftime(name, sizeof name, "%Y%m%dT%H%M%SZ", &tm);
    for (unsigned n = 0; n < 1000; n++) {
        if (n)
            snprintf(path, sizeof path, "%s/%s-%u.rec", dir, name, n);
        else
            snprintf(path, sizeof path, "%s/%s.rec", dir, name);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
        assert_true(fd >= 0);
        close(fd);
    }
    td_start(&d);
    td_rec_session s;
    td_rec_session_init(&s, "names", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 5000, 8);
    td_send_rec_session(d.tcp, &s, START_MS);
    td_stop(&d);
    td_files f = td_session_files(&d, "samp-onfoot", "names");
    size_t found = 0;
    for (size_t i = 0; i < f.count; i++)
        if (f.items[i].size && file_equals(&d, f.items[i].path, &s.expect))
            found++;
    if (f.count != 1001 || f.parts != 0 || found != 1) {
        td_dump_log(&d);
        fail_msg("%zu files (%zu .part), %zu with the session's data", f.count, f.parts, found);
    }
    td_files_free(&f);
    td_rec_session_free(&s);
    td_cleanup(&d);
}

int main(void)
{
    td_require_recd();
    const struct CMUnitTest tests[] = {
        td_unit_test(test_second_open_is_refused),
        td_unit_test(test_second_open_may_start_a_new_file),
        td_unit_test(test_clamped_times_are_counted_and_logged_once),
        td_unit_test(test_names_never_run_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
