/* SPDX-License-Identifier: MIT */
/* Fair shares (docs/reliability.md, "Round 3: fair shares"): one peer, here every socket bound to
 * 127.0.0.2, opens as many sessions as recd lets it over TCP or UDP, or fills buffers with bytes
 * that are not written yet; a sender from 127.0.0.1 must still record byte for byte, and the
 * hog's refusals name the limit. */
#include "test_daemon_harness.h"

#define HOG_ADDR "127.0.0.2"
#define DEFAULT_MAX_SESSIONS 10000
#define DEFAULT_SHARE (DEFAULT_MAX_SESSIONS / 2)
#define HOG_OPENS (DEFAULT_MAX_SESSIONS + 50) /* more than the whole limit */

/* A socket of type bound to the hog's address; skips the test when the host has no 127.0.0.2. */
static int hog_socket(int type)
{
    int fd = socket(AF_INET, type, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    assert_int_equal(inet_pton(AF_INET, HOG_ADDR, &a.sin_addr), 1);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        int e = errno;
        close(fd);
        fprintf(stderr, "skipped: cannot bind %s: %s\n", HOG_ADDR, strerror(e));
        skip();
    }
    unsigned ms = tu_scaled_ms(10000);
    struct timeval tv = {ms / 1000, (long)(ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    return fd;
}

static int hog_connect(const char *url, int type)
{
    int fd = hog_socket(type);
    struct sockaddr_in a;
    td_addr_of(url, &a);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        int e = errno;
        close(fd);
        fail_msg("connect from %s: %s", HOG_ADDR, strerror(e));
    }
    return fd;
}

static size_t open_line(char *buf, size_t cap, const char *prefix, unsigned i)
{
    int n = snprintf(buf, cap, "{\"type\":\"open\",\"session\":\"%s%u\",\"format\":\"samp-onfoot\"}\n",
                     prefix, i);
    assert_true(n > 0 && (size_t)n < cap);
    return (size_t)n;
}

/* Sends opens for prefix0 .. prefix(n-1) on a stream until recd stops reading; then reads to EOF
 * and returns whether an error reply came, copied to why. */
static bool stream_opens(int fd, const char *prefix, unsigned n, char *why, size_t cap)
{
    recd_buf out = {0};
    char line[160];
    for (unsigned i = 0; i < n; i++) {
        size_t len = open_line(line, sizeof line, prefix, i);
        assert_int_equal(recd_buf_append(&out, line, len), 0);
    }
    size_t sent = 0;
    while (sent < out.len) {
        ssize_t w = send(fd, out.data + sent, out.len - sent, MSG_NOSIGNAL);
        if (w <= 0)
            break; /* refused: recd answered and closed */
        sent += (size_t)w;
    }
    recd_buf_free(&out);
    shutdown(fd, SHUT_WR);
    recd_buf in = {0};
    char chunk[4096];
    ssize_t r;
    while ((r = read(fd, chunk, sizeof chunk)) > 0)
        recd_buf_append(&in, chunk, (size_t)r);
    close(fd);
    int rc = recd_wire_decode_error(in.data, in.len, why, cap);
    recd_buf_free(&in);
    return rc == 1;
}

static double refused_as(const td_daemon *d, const char *reason)
{
    char series[128];
    snprintf(series, sizeof series, "recd_decode_errors_total{reason=\"%s\"}", reason);
    return td_metric(d, series);
}

/* Good senders from 127.0.0.1: whole sessions over url, each file equal to what was sent. */
static void honest_sessions(const td_daemon *d, const char *url, const char *prefix, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        char key[64];
        snprintf(key, sizeof key, "%s%u", prefix, i);
        td_rec_session s;
        td_rec_session_init(&s, key, RECD_SYNTH_FORMAT_SAMP_ONFOOT, RECD_SYNTH_SCENARIO_WALK, 3000,
                            40 + i);
        td_send_rec_session(url, &s, 1700000000000 + i);
        uint64_t deadline = td_deadline(20000);
        for (;;) {
            td_files f = td_session_files(d, "samp-onfoot", key);
            bool done = f.count == 1 && f.parts == 0;
            td_files_free(&f);
            if (done || td_now_ms() > deadline)
                break;
            td_sleep_ms(50);
        }
        td_expect_single_file(d, "samp-onfoot", key, &s.expect);
        td_rec_session_free(&s);
    }
}

/* Row 7 of issue 35: one connection opens every session recd allows and goes away; others must
 * still get in, and the hog's refusal names its share. */
static void a_hog_cannot_take_every_session_over_tcp(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, NULL); /* the defaults: limits.max_sessions 10000, the share half of it */
    td_start(&d);
    char why[512] = "";
    bool replied = stream_opens(hog_connect(d.tcp, SOCK_STREAM), "hog", HOG_OPENS, why, sizeof why);
    double open = td_metric(&d, "recd_sessions_open");
    if (!replied || !strstr(why, "limits.max_sessions_per_peer")) {
        td_dump_log(&d);
        fail_msg("the hog opened %.0f sessions and got %s'%s', not a refusal naming "
                 "limits.max_sessions_per_peer",
                 open, replied ? "" : "no reply ", why);
    }
    assert_true(strstr(why, HOG_ADDR) != NULL);
    assert_int_equal((int)open, DEFAULT_SHARE);
    /* A new connection from the hog is refused too, while its sessions are held. */
    replied = stream_opens(hog_connect(d.tcp, SOCK_STREAM), "again", 1, why, sizeof why);
    assert_true(replied && strstr(why, "limits.max_sessions_per_peer"));
    assert_true(refused_as(&d, "max_sessions_per_peer") >= 2);
    honest_sessions(&d, d.tcp, "honest", 5);
    td_stop(&d);
    td_cleanup(&d);
}

/* The same over UDP: the hog's opens are datagrams from 127.0.0.2. */
static void a_hog_cannot_take_every_session_over_udp(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, NULL);
    td_start(&d);
    int fd = hog_connect(d.udp, SOCK_DGRAM);
    char line[160];
    for (unsigned i = 0; i < HOG_OPENS; i++) {
        size_t len = open_line(line, sizeof line, "udphog", i);
        assert_int_equal(send(fd, line, len, 0), (ssize_t)len);
        if (i % 64 == 63)
            td_sleep_ms(1); /* keep the kernel's queue short */
    }
    close(fd);
    /* Every datagram was taken, refused or dropped by the kernel (counted). */
    uint64_t deadline = td_deadline(30000);
    double open, refused, kernel;
    do {
        open = td_metric(&d, "recd_sessions_open");
        refused = td_metric(&d, "recd_decode_errors_total");
        kernel = td_metric(&d, "recd_udp_kernel_drops_total");
        if (open + refused + kernel >= HOG_OPENS)
            break;
        td_sleep_ms(50);
    } while (td_now_ms() < deadline);
    if (open > DEFAULT_SHARE || refused_as(&d, "max_sessions_per_peer") < 1) {
        td_dump_log(&d);
        fail_msg("the hog holds %.0f sessions (its share is %d); %.0f opens refused, %.0f as its "
                 "share",
                 open, DEFAULT_SHARE, refused, refused_as(&d, "max_sessions_per_peer"));
    }
    honest_sessions(&d, d.udp, "honest", 3);
    td_stop(&d);
    td_cleanup(&d);
}

int main(void)
{
    td_require_recd();
    const struct CMUnitTest tests[] = {
        td_unit_test(a_hog_cannot_take_every_session_over_tcp),
        td_unit_test(a_hog_cannot_take_every_session_over_udp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
