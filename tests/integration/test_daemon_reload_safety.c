/* SPDX-License-Identifier: MIT */
/* Reloads are all or nothing and cannot weaken recd in silence (docs/reliability.md, round 3):
 * SIGHUP with a half-written file (cut before auth:), an empty file, a file without a listen list
 * or one whose new listener cannot bind is refused with a warning, counted, and changes nothing;
 * `auth: {token: none}` and `listen: []` say it on purpose and apply. A lowered limits.max_frame
 * holds on TCP and Unix connections opened before the reload, from their next message. */
#include <sys/un.h>

#include "test_daemon_harness.h"

#define TOKEN "reload-safety-token-0123456789"

/* The test's config: port-0 TCP, UDP and Unix listeners (unless listen is given), the output
 * root, metrics, then extra sections. */
static void config_text(const td_daemon *d, const char *listen, const char *extra, char *out, size_t cap)
{
    char own[1200];
    if (!listen) {
        snprintf(own, sizeof own, "listen:\n  - tcp://127.0.0.1:0\n  - udp://127.0.0.1:0\n  - unix://%s/in.sock\n",
                 d->dir);
        listen = own;
    }
    snprintf(out, cap, "%soutput:\n  root: %s\nmetrics:\n  listen: 127.0.0.1:0\n%s", listen, d->out,
             extra ? extra : "");
}

static void write_config(td_daemon *d, const char *listen, const char *extra)
{
    char text[4096];
    config_text(d, listen, extra, text, sizeof text);
    td_rewrite_config(d, text);
}

static bool log_has(const td_daemon *d, const char *text)
{
    size_t n;
    uint8_t *log = tu_read_file(d->log, &n);
    if (!log)
        return false;
    recd_buf b = {0};
    recd_buf_append(&b, log, n);
    recd_buf_append(&b, "", 1);
    bool found = strstr((const char *)b.data, text) != NULL;
    recd_buf_free(&b);
    free(log);
    return found;
}

static void expect_metric(const td_daemon *d, const char *series, double want)
{
    double v = td_wait_metric(d, series, want, 10000);
    if (v < want) {
        td_dump_log(d);
        fail_msg("%s is %g, expected %g", series, v, want);
    }
}

/* Reloads counted so far, whatever their result (ok, failed, refused). */
static double reloads_done(const td_daemon *d)
{
    static const char *const results[] = {"ok", "failed", "refused"};
    double sum = 0;
    for (size_t i = 0; i < sizeof results / sizeof *results; i++) {
        char series[96];
        snprintf(series, sizeof series, "recd_config_reloads_total{result=\"%s\"}", results[i]);
        double v = td_metric(d, series);
        sum += v > 0 ? v : 0;
    }
    return sum;
}

/* SIGHUP, then waits until recd has dealt with it (counted it under any result). */
static void hup(td_daemon *d)
{
    double before = reloads_done(d);
    kill(d->pid, SIGHUP);
    uint64_t deadline = td_deadline(10000);
    while (reloads_done(d) <= before) {
        if (td_now_ms() > deadline) {
            td_dump_log(d);
            fail_msg("SIGHUP was never counted in recd_config_reloads_total");
        }
        td_sleep_ms(25);
    }
}

/* SIGHUP, then the reload must be counted under result (ok, failed, refused) nth times. */
static void reload(td_daemon *d, const char *result, double nth)
{
    char series[96];
    snprintf(series, sizeof series, "recd_config_reloads_total{result=\"%s\"}", result);
    hup(d);
    expect_metric(d, series, nth);
}

/* After hup(): the reload was refused for reason (its nth refusal), with a warning. */
static void expect_refused(td_daemon *d, const char *reason, double nth)
{
    char series[96], line[96];
    snprintf(series, sizeof series, "recd_config_reloads_total{result=\"refused\"}");
    expect_metric(d, series, nth);
    snprintf(series, sizeof series, "recd_config_reloads_refused_total{reason=\"%s\"}", reason);
    expect_metric(d, series, 1);
    snprintf(line, sizeof line, "<4>reload refused (%s), keeping the running configuration", reason);
    if (!log_has(d, line)) {
        td_dump_log(d);
        fail_msg("no warning '%s' in the log", line);
    }
}

static int unix_connect(const td_daemon *d)
{
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    int n = snprintf(a.sun_path, sizeof a.sun_path, "%.90s/in.sock", d->dir);
    assert_true(n > 0 && (size_t)n < sizeof a.sun_path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    unsigned ms = tu_scaled_ms(10000);
    struct timeval tv = {ms / 1000, (long)(ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    return fd;
}

static void send_all(int fd, const void *data, size_t len)
{
    const uint8_t *p = data;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w <= 0)
            return; /* recd may answer and stop reading early */
        p += w;
        len -= (size_t)w;
    }
}

/* Sends data, ends the write side and reads to EOF: the error reply's text, or "" for none. */
static void finish(int fd, const void *data, size_t len, char *reply, size_t cap)
{
    send_all(fd, data, len);
    shutdown(fd, SHUT_WR);
    recd_buf in = {0};
    char chunk[4096];
    ssize_t r;
    while ((r = read(fd, chunk, sizeof chunk)) > 0)
        recd_buf_append(&in, chunk, (size_t)r);
    close(fd);
    reply[0] = 0;
    if (in.len && recd_wire_decode_error(in.data, in.len, reply, cap) != 1)
        snprintf(reply, cap, "(%zu bytes that are not an error reply)", in.len);
    recd_buf_free(&in);
}

static void open_without_token(const td_daemon *d, const char *session, char *reply, size_t cap)
{
    char line[160];
    int n = snprintf(line, sizeof line, "{\"type\":\"open\",\"session\":\"%s\",\"format\":\"samp-onfoot\"}\n", session);
    finish(td_raw_connect(d->tcp), line, (size_t)n, reply, cap);
}

/* A session sent without a token reaches its file. */
static void record_without_token(td_daemon *d, td_rec_session *s, const char *session, uint64_t seed)
{
    td_rec_session_init(s, session, recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 3000, seed);
    td_send_rec_session(d->tcp, s, 1763213398000);
}

/* Row 12: a file cut before auth: keeps the token; `token: none` turns it off on purpose. */
static void test_half_written_file_keeps_the_token(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "auth:\n  token: " TOKEN "\n");
    td_start(&d);
    char full[4096];
    config_text(&d, NULL, "log:\n  level: info\nauth:\n  token: " TOKEN "\n", full, sizeof full);
    *strstr(full, "auth:") = 0; /* the writer was here when SIGHUP came */
    td_rewrite_config(&d, full);
    hup(&d);
    char reply[512];
    open_without_token(&d, "intruder", reply, sizeof reply);
    if (!strstr(reply, "auth token"))
        fail_msg("an open without the token after a half-written file's reload got '%s'", reply[0] ? reply : "no error");
    assert_false(log_has(&d, "auth.token changed"));
    expect_refused(&d, "auth_off", 1);

    write_config(&d, NULL, "auth:\n  token: none\n");
    reload(&d, "ok", 1);
    assert_true(log_has(&d, "reload: auth.token changed"));
    td_rec_session s;
    record_without_token(&d, &s, "open-now", 21);
    td_stop(&d);
    td_expect_single_file(&d, "samp-onfoot", "open-now", &s.expect);
    td_rec_session_free(&s);
    td_cleanup(&d);
}

/* Row 12: an empty file and a file without a listen list keep the listeners; `listen: []`
 * closes them on purpose. */
static void test_empty_file_keeps_the_listeners(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "");
    td_start(&d);
    td_rewrite_config(&d, "");
    hup(&d);
    if (log_has(&d, "stopped listening") || log_has(&d, "listening on tcp://127.0.0.1:7070"))
        fail_msg("an empty file moved the listeners");
    expect_refused(&d, "empty_file", 1);
    td_rewrite_config(&d, "# being written\n");
    hup(&d);
    expect_refused(&d, "empty_file", 2);
    /* Cut after the listen list's place: the output and metrics are there, the listeners not. */
    char text[2048];
    snprintf(text, sizeof text, "output:\n  root: %s\nmetrics:\n  listen: 127.0.0.1:0\n", d.out);
    td_rewrite_config(&d, text);
    hup(&d);
    if (log_has(&d, "stopped listening") || log_has(&d, "listening on tcp://127.0.0.1:7070"))
        fail_msg("a file without a listen list moved the listeners");
    expect_refused(&d, "default_listeners", 3);
    td_rec_session s;
    record_without_token(&d, &s, "still-here", 22);

    write_config(&d, "listen: []\n", NULL);
    reload(&d, "ok", 1);
    uint64_t deadline = td_deadline(10000);
    while (!log_has(&d, "reload: no listeners now") && td_now_ms() < deadline)
        td_sleep_ms(25);
    assert_true(log_has(&d, "stopped listening on tcp://"));
    assert_true(log_has(&d, "reload: no listeners now"));
    td_stop(&d);
    td_expect_single_file(&d, "samp-onfoot", "still-here", &s.expect);
    td_rec_session_free(&s);
    td_cleanup(&d);
}

/* A 2 KiB line on a new connection: refused for its content under the running 64 KiB limit, or
 * for its size under a lower one. */
static void junk_line(char *line, size_t len)
{
    memset(line, 'x', len);
    memcpy(line, "{\"type\":\"junk\",\"pad\":\"", 22);
    memcpy(line + len - 3, "\"}\n", 3);
}

/* Rule 9: a reload whose new listener cannot bind is refused whole: its other changes (a lower
 * limits.max_frame here) do not apply either. */
static void test_unbindable_listener_refuses_the_whole_reload(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "");
    td_start(&d);
    uint16_t busy;
    int holder = td_loopback_socket(SOCK_STREAM, &busy);
    assert_true(holder >= 0);
    char listen[1200];
    snprintf(listen, sizeof listen,
             "listen:\n  - tcp://127.0.0.1:0\n  - udp://127.0.0.1:0\n  - unix://%s/in.sock\n  - tcp://127.0.0.1:%u\n",
             d.dir, (unsigned)busy);
    write_config(&d, listen, "limits:\n  max_frame: 1KiB\n");
    hup(&d);
    close(holder);
    char line[2048], reply[512];
    junk_line(line, sizeof line);
    finish(td_raw_connect(d.tcp), line, sizeof line, reply, sizeof reply);
    if (!reply[0] || strstr(reply, "longer than the limit"))
        fail_msg("the max_frame of a reload whose listener failed applied: '%s'", reply);
    expect_refused(&d, "listen_failed", 1);
    td_stop(&d);
    td_cleanup(&d);
}

/* The binary open frame of session key (no token). */
static size_t binary_open(uint8_t *buf, const char *key)
{
    size_t klen = strlen(key), n = td_frame_header(buf, 1, (uint32_t)(1 + klen + 1 + 8 + 1));
    buf[n++] = (uint8_t)klen;
    memcpy(buf + n, key, klen);
    n += klen;
    buf[n++] = 1; /* samp-onfoot */
    memset(buf + n, 0, 8); /* start time: now */
    n += 8;
    buf[n++] = 0; /* no token */
    return n;
}

/* Row 13: limits.max_frame lowered from 64 KiB to 1 KiB holds on TCP (NDJSON) and Unix (binary)
 * connections opened before the reload, from their next message. */
static void test_lower_max_frame_reaches_open_connections(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "");
    td_start(&d);
    int tcp = td_raw_connect(d.tcp), unx = unix_connect(&d);
    const char open_line[] = "{\"type\":\"open\",\"session\":\"before-tcp\",\"format\":\"samp-onfoot\"}\n";
    send_all(tcp, open_line, sizeof open_line - 1);
    uint8_t frame[64];
    send_all(unx, frame, binary_open(frame, "before-unix"));
    expect_metric(&d, "recd_sessions_open", 2); /* both connections are read with the old limit */

    write_config(&d, NULL, "limits:\n  max_frame: 1KiB\n");
    reload(&d, "ok", 1);

    enum { BIG = 14000 };
    char *line = malloc(BIG);
    assert_non_null(line);
    junk_line(line, BIG);
    char tcp_reply[512], unix_reply[512];
    finish(tcp, line, BIG, tcp_reply, sizeof tcp_reply);
    memset(line, 0, BIG);
    td_frame_header((uint8_t *)line, 3, BIG - RECD_WIRE_HEADER_SIZE);
    finish(unx, line, BIG, unix_reply, sizeof unix_reply);
    free(line);
    bool tcp_ok = strstr(tcp_reply, "line longer than the limit of 1024 bytes") != NULL;
    bool unix_ok = strstr(unix_reply, "exceeds the limit of 1024") != NULL;
    if (!tcp_ok || !unix_ok)
        fail_msg("on connections opened before the reload, a 14 KB line (TCP) got '%s' and a 14 KB frame "
                 "(Unix) got '%s'",
                 tcp_reply, unix_reply);
    expect_metric(&d, "recd_decode_errors_total{reason=\"too_large\"}", 2);
    td_stop(&d);
    td_cleanup(&d);
}

int main(void)
{
    td_require_recd();
    const struct CMUnitTest tests[] = {
        td_unit_test(test_half_written_file_keeps_the_token),
        td_unit_test(test_empty_file_keeps_the_listeners),
        td_unit_test(test_unbindable_listener_refuses_the_whole_reload),
        td_unit_test(test_lower_max_frame_reaches_open_connections),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
