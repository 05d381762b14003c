/* SPDX-License-Identifier: MIT */
/* recd against hostile input: random bytes, truncated and oversized frames, invalid UTF-8,
 * unknown sessions, missing auth and hostile session keys ("../", absolute paths, NUL, very long)
 * over TCP, Unix and UDP. The daemon stays up, answers stream clients with one error reply and
 * closes them, counts every rejection in /metrics, writes nothing outside its root, and a good
 * session running at the same time ends byte-identical. */
#include "test_daemon_harness.h"

#include "recd/wire.h"

#define AUTH_TOKEN "0123456789abcdef0123"

static int tcp_connect(const char *url)
{
    recd_wire_url u;
    char err[128];
    assert_int_equal(recd_wire_url_parse(url, &u, err, sizeof err), 0);
    int fd = socket(AF_INET, u.transport == RECD_WIRE_UDP ? SOCK_DGRAM : SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(u.port);
    inet_pton(AF_INET, u.host, &a.sin_addr);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

/* Sends bytes on a fresh TCP connection, ends the write side and returns the error reply. */
static void raw_exchange(const td_daemon *d, const void *data, size_t len, char *reply, size_t cap)
{
    int fd = tcp_connect(d->tcp);
    const uint8_t *p = data;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w <= 0)
            break; /* the daemon may close early */
        p += w;
        len -= (size_t)w;
    }
    shutdown(fd, SHUT_WR);
    recd_buf in = {0};
    char chunk[4096];
    ssize_t r;
    struct timeval tv = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    while ((r = read(fd, chunk, sizeof chunk)) > 0)
        recd_buf_append(&in, chunk, (size_t)r);
    close(fd);
    int rc = recd_wire_decode_error(in.data, in.len, reply, cap);
    if (rc != 1)
        fail_msg("expected an error reply, got %zu bytes (rc %d)", in.len, rc);
    recd_buf_free(&in);
}

static void udp_send(const td_daemon *d, const void *data, size_t len)
{
    int fd = tcp_connect(d->udp);
    assert_true(send(fd, data, len, 0) == (ssize_t)len);
    close(fd);
}

/* An open frame with an arbitrary key (the client refuses to build hostile ones). */
static void open_frame(recd_buf *out, const uint8_t *key, size_t klen)
{
    uint8_t body[300];
    size_t n = 0;
    body[n++] = (uint8_t)klen;
    memcpy(body + n, key, klen);
    n += klen;
    body[n++] = 1; /* samp-onfoot */
    memset(body + n, 0, 8); /* start time: now */
    n += 8;
    body[n++] = 0; /* no token */
    uint8_t hdr[8] = {RECD_WIRE_MAGIC, RECD_WIRE_VERSION, 1, 0, (uint8_t)n, (uint8_t)(n >> 8), 0, 0};
    recd_buf_append(out, hdr, 8);
    recd_buf_append(out, body, n);
}

static double errors(const td_daemon *d, const char *reason)
{
    char series[96];
    snprintf(series, sizeof series, "recd_decode_errors_total{reason=\"%s\"}", reason);
    return td_metric(d, series);
}

static void expect_errors(const td_daemon *d, const char *reason, double at_least)
{
    char series[96];
    snprintf(series, sizeof series, "recd_decode_errors_total{reason=\"%s\"}", reason);
    double v = td_wait_metric(d, series, at_least, 5000);
    if (v < at_least) {
        td_dump_log(d);
        fail_msg("%s: %g, expected at least %g", series, v, at_least);
    }
}

static void test_hostile_streams_and_datagrams(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, "limits:\n  max_frame: 4KiB\n  session_buffer: 64KiB\nauth:\n  token: " AUTH_TOKEN "\n");
    td_start(&d);

    /* A good session keeps streaming through everything below. */
    td_rec_session good;
    td_rec_session_init(&good, "good", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_MIXED, 60000, 77);
    recd_client *gc = td_connect(d.tcp);
    recd_msg m;
    recd_msg_init(&m, RECD_MSG_OPEN, RECD_MSG_FMT_SAMP_ONFOOT);
    snprintf(m.session, sizeof m.session, "good");
    m.open.has_start_time = true;
    m.open.start_time_ms = 1763213398000;
    m.open.auth = (char *)AUTH_TOKEN;
    td_send(gc, &m);
    for (int i = 0; i < 50 && td_rec_session_next(&good, &m); i++)
        td_send(gc, &m);
    assert_int_equal(recd_client_flush(gc), 0);

    char reply[1100];
    tu_rng rng = {2026};
    uint8_t junk[3000];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (uint8_t)tu_rand(&rng);
    junk[0] = 0x00; /* neither 0xD7 nor '{' */
    raw_exchange(&d, junk, sizeof junk, reply, sizeof reply);
    assert_non_null(strstr(reply, "neither a binary frame"));
    expect_errors(&d, "framing", 1);

    /* Binary stream: a valid open with the token, then a frame cut in half at EOF. */
    recd_buf b = {0};
    recd_msg_init(&m, RECD_MSG_OPEN, RECD_MSG_FMT_SAMP_ONFOOT);
    snprintf(m.session, sizeof m.session, "cut");
    m.open.auth = (char *)AUTH_TOKEN;
    assert_int_equal(recd_wire_encode(&m, RECD_WIRE_BINARY, 0, &b), 0);
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_SAMP_ONFOOT);
    snprintf(m.session, sizeof m.session, "cut");
    m.onfoot.health = 100;
    size_t before = b.len;
    assert_int_equal(recd_wire_encode(&m, RECD_WIRE_BINARY, 0, &b), 0);
    raw_exchange(&d, b.data, before + (b.len - before) / 2, reply, sizeof reply);
    assert_non_null(strstr(reply, "stream ended inside a frame"));
    expect_errors(&d, "framing", 2);

    /* Oversized frame: the header announces more than limits.max_frame. */
    uint8_t big[8] = {RECD_WIRE_MAGIC, RECD_WIRE_VERSION, 2, 0, 0, 0, 1, 0};
    raw_exchange(&d, big, sizeof big, reply, sizeof reply);
    expect_errors(&d, "too_large", 1);

    /* NDJSON: invalid UTF-8, an unknown session, a missing token. */
    const char bad_utf8[] = "{\"type\":\"open\",\"session\":\"u\xff\",\"format\":\"samp-onfoot\"}\n";
    raw_exchange(&d, bad_utf8, sizeof bad_utf8 - 1, reply, sizeof reply);
    assert_non_null(strstr(reply, "UTF-8"));
    expect_errors(&d, "syntax", 1);
    const char unknown[] = "{\"type\":\"close\",\"session\":\"nobody\"}\n";
    raw_exchange(&d, unknown, sizeof unknown - 1, reply, sizeof reply);
    assert_non_null(strstr(reply, "unknown session"));
    expect_errors(&d, "unknown_session", 1);
    const char noauth[] = "{\"type\":\"open\",\"session\":\"intruder\",\"format\":\"samp-onfoot\"}\n";
    raw_exchange(&d, noauth, sizeof noauth - 1, reply, sizeof reply);
    assert_non_null(strstr(reply, "auth token"));
    expect_errors(&d, "auth", 1);

    /* Hostile session keys, binary and NDJSON. */
    char longkey[300];
    memset(longkey, 'k', sizeof longkey);
    const struct {
        const char *key;
        size_t len;
    } keys[] = {{"../escape", 9}, {"/etc/passwd", 11}, {"a\0b", 3}, {longkey, 255}, {".hidden", 7},
                {"..", 2}, {"a/b", 3}};
    double schema = 0;
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        b.len = 0;
        open_frame(&b, (const uint8_t *)keys[i].key, keys[i].len);
        raw_exchange(&d, b.data, b.len, reply, sizeof reply);
        assert_non_null(strstr(reply, "invalid"));
        expect_errors(&d, "schema", ++schema);
    }
    const char json_key[] = "{\"type\":\"open\",\"session\":\"../../x\",\"format\":\"samp-onfoot\"}\n";
    raw_exchange(&d, json_key, sizeof json_key - 1, reply, sizeof reply);
    expect_errors(&d, "schema", ++schema);

    /* UDP: junk, a state for an unknown session, a hostile key; each datagram is dropped. */
    double framing = errors(&d, "framing");
    udp_send(&d, junk, 1000);
    expect_errors(&d, "framing", framing + 1);
    b.len = 0;
    recd_msg_init(&m, RECD_MSG_STATE, RECD_MSG_FMT_SAMP_ONFOOT);
    snprintf(m.session, sizeof m.session, "ghost");
    assert_int_equal(recd_wire_encode(&m, RECD_WIRE_BINARY, 0, &b), 0);
    double unknown_before = errors(&d, "unknown_session");
    udp_send(&d, b.data, b.len);
    expect_errors(&d, "unknown_session", unknown_before + 1);
    b.len = 0;
    open_frame(&b, (const uint8_t *)"../../udp", 9);
    udp_send(&d, b.data, b.len);
    expect_errors(&d, "schema", schema + 1);
    uint8_t huge[6000];
    memset(huge, '{', sizeof huge);
    udp_send(&d, huge, sizeof huge);
    expect_errors(&d, "too_large", 2);
    recd_buf_free(&b);

    /* The good session goes on and ends exactly as sent. */
    while (td_rec_session_next(&good, &m))
        td_send(gc, &m);
    td_send_close(gc, "good", RECD_MSG_FMT_SAMP_ONFOOT);
    td_close_client(gc);
    int status = 0;
    char *health = td_http_get(&d, "/healthz", &status);
    assert_int_equal(status, 200);
    free(health);
    td_stop(&d);
    td_expect_single_file(&d, "samp-onfoot", "good", &good.expect);

    /* Nothing but the good session's file and the cut session's empty directory. */
    td_files all = td_list(&d);
    for (size_t i = 0; i < all.count; i++)
        if (strncmp(all.items[i].path, "samp-onfoot/good/", 17) != 0)
            fail_msg("unexpected output file %s", all.items[i].path);
    td_files_free(&all);
    struct stat st;
    char escaped[700];
    snprintf(escaped, sizeof escaped, "%s/escape", d.dir);
    assert_int_not_equal(stat(escaped, &st), 0);
    td_rec_session_free(&good);
    td_cleanup(&d);
}

int main(void)
{
    td_require_recd();
    const struct CMUnitTest tests[] = {
        td_unit_test(test_hostile_streams_and_datagrams),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
