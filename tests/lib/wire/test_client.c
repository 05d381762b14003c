/* SPDX-License-Identifier: MIT */
/* The blocking client against a plain socket server in a thread (TCP on 127.0.0.1, UDP, Unix in a
 * temporary directory): what the server decodes equals what was sent, in both encodings; UDP
 * packs several frames per datagram; a server's error reply surfaces in recd_client_close(). */
#include "testutil.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "recd/client.h"
#include "test_wire_samples.h"

typedef struct server {
    recd_wire_transport transport;
    int lfd;
    char url[300];
    pthread_t thread;
    ws_sink sink;
    size_t resumes; /* opens the client repeated as resumes (UDP, with a token) */
    size_t expect; /* UDP: messages to wait for */
    size_t datagrams, multi_frame_datagrams;
    int rc;
    char err[320];
    struct {
        char key[RECD_SESSION_KEY_MAX + 1];
        recd_msg_format format;
    } sessions[16];
    size_t nsessions;
} server;

/* The server's session registry, as a daemon keeps it across datagrams. */
static recd_msg_format registry_format(void *ctx, const char *key, size_t len, void **handle)
{
    server *s = ctx;
    (void)handle;
    for (size_t i = 0; i < s->nsessions; i++)
        if (strlen(s->sessions[i].key) == len && memcmp(s->sessions[i].key, key, len) == 0)
            return s->sessions[i].format;
    return RECD_MSG_FMT_NONE;
}

static int server_on_msg(void *ctx, const recd_msg *m, const recd_wire_meta *meta, char *err,
                         size_t errlen)
{
    server *s = ctx;
    if (m->type == RECD_MSG_OPEN && m->open.resume) { /* UDP: a token's open starts a datagram */
        s->resumes++;
        return 0;
    }
    int rc = ws_on_msg(&s->sink, m, meta, err, errlen);
    if (rc == 0 && m->type == RECD_MSG_OPEN && s->nsessions < 16) {
        strcpy(s->sessions[s->nsessions].key, m->session);
        s->sessions[s->nsessions++].format = m->format;
    }
    return rc;
}

static void serve_stream(server *s)
{
    /* No cmocka asserts in this thread: a failure is reported through s->rc and s->err. */
    int fd = accept(s->lfd, NULL, NULL);
    recd_wire_decoder_config cfg = {.encoding = RECD_WIRE_AUTO, .format_of = registry_format,
                                    .on_msg = server_on_msg, .ctx = s};
    recd_wire_decoder *d;
    if (fd < 0 || recd_wire_decoder_new(&d, &cfg) < 0) {
        s->rc = -EIO;
        snprintf(s->err, sizeof s->err, "server setup failed");
        if (fd >= 0)
            close(fd);
        return;
    }
    uint8_t buf[1000]; /* small reads: frames arrive split */
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR)
            continue;
        s->rc = n > 0 ? recd_wire_decoder_feed(d, buf, (size_t)n, s->err, sizeof s->err)
                      : recd_wire_decoder_finish(d, s->err, sizeof s->err);
        if (s->rc < 0 || n <= 0)
            break;
    }
    if (s->rc < 0) {
        /* Reply, stop writing, and drain until the client closes so the reply is not reset. */
        recd_buf reply = {0};
        recd_wire_encoding enc = recd_wire_decoder_encoding(d);
        if (recd_wire_encode_error(enc == RECD_WIRE_NDJSON ? enc : RECD_WIRE_BINARY, s->err,
                                   &reply) == 0)
            (void)!send(fd, reply.data, reply.len, MSG_NOSIGNAL);
        shutdown(fd, SHUT_WR);
        struct pollfd p = {fd, POLLIN, 0};
        while (poll(&p, 1, 3000) > 0 && recv(fd, buf, sizeof buf, 0) > 0)
            ;
        recd_buf_free(&reply);
    }
    recd_wire_decoder_free(d);
    close(fd);
}

static void serve_datagrams(server *s)
{
    static uint8_t buf[65536];
    recd_wire_decoder_config cfg = {.encoding = RECD_WIRE_AUTO, .format_of = registry_format,
                                    .on_msg = server_on_msg, .ctx = s};
    struct pollfd p = {s->lfd, POLLIN, 0};
    while (s->sink.count < s->expect && poll(&p, 1, 3000) > 0) {
        ssize_t n = recv(s->lfd, buf, sizeof buf, 0);
        if (n <= 0)
            continue;
        size_t before = s->sink.count;
        s->rc = recd_wire_decode_datagram(&cfg, buf, (size_t)n, s->err, sizeof s->err);
        if (s->rc < 0)
            break;
        s->datagrams++;
        s->multi_frame_datagrams += s->sink.count - before > 1;
    }
}

static void *server_main(void *arg)
{
    server *s = arg;
    if (s->transport == RECD_WIRE_UDP)
        serve_datagrams(s);
    else
        serve_stream(s);
    return NULL;
}

/* Binds the server's socket; server_run() starts its thread, so fields the thread reads (expect,
 * the sink's failure) are set in between, before it can see them. */
static void server_open(server *s, recd_wire_transport t, const char *query)
{
    memset(s, 0, sizeof *s);
    s->transport = t;
    if (t == RECD_WIRE_UNIX) {
        struct sockaddr_un sa = {0};
        sa.sun_family = AF_UNIX;
        const char *dir = tu_tmpdir();
        assert_non_null(dir);
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s/recd.sock", dir);
        s->lfd = socket(AF_UNIX, SOCK_STREAM, 0);
        assert_int_equal(bind(s->lfd, (struct sockaddr *)&sa, sizeof sa), 0);
        assert_int_equal(listen(s->lfd, 4), 0);
        snprintf(s->url, sizeof s->url, "unix://%s%s", sa.sun_path, query);
    } else {
        struct sockaddr_in sa = {0};
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        s->lfd = socket(AF_INET, t == RECD_WIRE_UDP ? SOCK_DGRAM : SOCK_STREAM, 0);
        assert_int_equal(bind(s->lfd, (struct sockaddr *)&sa, sizeof sa), 0);
        socklen_t sl = sizeof sa;
        assert_int_equal(getsockname(s->lfd, (struct sockaddr *)&sa, &sl), 0);
        if (t == RECD_WIRE_TCP)
            assert_int_equal(listen(s->lfd, 4), 0);
        snprintf(s->url, sizeof s->url, "%s://127.0.0.1:%u%s", t == RECD_WIRE_UDP ? "udp" : "tcp",
                 (unsigned)ntohs(sa.sin_port), query);
    }
}

static void server_run(server *s)
{
    assert_int_equal(pthread_create(&s->thread, NULL, server_main, s), 0);
}

static void server_stop(server *s)
{
    pthread_join(s->thread, NULL);
    close(s->lfd);
}

/* Sends every sample message and checks that the server saw exactly them. */
static void send_all_and_compare(recd_wire_transport t, const char *query,
                                 const recd_client_options *opt)
{
    ws_set set;
    ws_build(&set);
    recd_buf want = {0};
    ws_json(&set, &want);
    server s;
    server_open(&s, t, query);
    s.expect = set.n;
    server_run(&s);
    recd_client *c;
    char err[320] = "";
    int rc = recd_client_connect(&c, s.url, opt, err, sizeof err);
    if (rc < 0)
        fail_msg("connect %s: %s", s.url, err);
    for (size_t i = 0; i < set.n; i++)
        assert_int_equal(recd_client_send(c, &set.m[i]), 0);
    assert_int_equal(recd_client_flush(c), 0);
    assert_true(recd_client_bytes_sent(c) > 0);
    rc = recd_client_close(c, err, sizeof err);
    if (rc < 0)
        fail_msg("close: %s", err);
    server_stop(&s);
    if (s.rc < 0)
        fail_msg("server: %s", s.err);
    assert_int_equal(s.sink.count, set.n);
    assert_int_equal(s.sink.json.len, want.len);
    assert_memory_equal(s.sink.json.data, want.data, want.len);
    if (t == RECD_WIRE_UDP) {
        assert_true(s.datagrams > 1);
        assert_true(s.multi_frame_datagrams >= 1);
    } else {
        assert_int_equal(s.resumes, 0); /* only datagrams repeat a token's open */
    }
    recd_buf_free(&s.sink.json);
    recd_buf_free(&want);
    ws_free(&set);
}

static void tcp_binary(void **state)
{
    (void)state;
    send_all_and_compare(RECD_WIRE_TCP, "", NULL);
}

static void tcp_ndjson_small_batches(void **state)
{
    (void)state;
    recd_client_options o = {100, 0, 0, 0}; /* a send every couple of messages */
    send_all_and_compare(RECD_WIRE_TCP, "?encoding=ndjson", &o);
}

static void unix_binary(void **state)
{
    (void)state;
    send_all_and_compare(RECD_WIRE_UNIX, "?encoding=binary", NULL);
}

static void udp_packed(void **state)
{
    (void)state;
    recd_client_options o = {0, 400, 0, 0};
    send_all_and_compare(RECD_WIRE_UDP, "", &o);
}

static void udp_ndjson(void **state)
{
    (void)state;
    recd_client_options o = {0, 900, 0, 0};
    send_all_and_compare(RECD_WIRE_UDP, "?encoding=ndjson", &o);
}

static void server_error_reaches_close(void **state)
{
    (void)state;
    const char *queries[] = {"", "?encoding=ndjson"};
    for (int q = 0; q < 2; q++) {
        ws_set set;
        ws_build(&set);
        server s;
        server_open(&s, RECD_WIRE_TCP, queries[q]);
        s.sink.fail_at = 3;
        s.sink.fail_why = "auth failed for \"foot-1\"";
        server_run(&s);
        recd_client *c;
        char err[400] = "";
        assert_int_equal(recd_client_connect(&c, s.url, NULL, err, sizeof err), 0);
        for (size_t i = 0; i < set.n; i++)
            assert_int_equal(recd_client_send(c, &set.m[i]), 0);
        assert_int_equal(recd_client_close(c, err, sizeof err), -EPROTO);
        server_stop(&s);
        if (!strstr(err, "server error: frame 3 at byte ") && !strstr(err, "server error: line 3 at byte "))
            fail_msg("close said: %s", err);
        assert_non_null(strstr(err, "auth failed for \"foot-1\""));
        assert_int_equal(s.sink.count, 2);
        recd_buf_free(&s.sink.json);
        ws_free(&set);
    }
}

static void untimed_states(void **state)
{
    (void)state;
    ws_set set;
    ws_build(&set);
    server s;
    server_open(&s, RECD_WIRE_TCP, "");
    server_run(&s);
    recd_client *c;
    char err[320];
    assert_int_equal(recd_client_connect(&c, s.url, NULL, err, sizeof err), 0);
    assert_int_equal(recd_client_send(c, &set.m[0]), 0);
    assert_int_equal(recd_client_send_untimed(c, &set.m[1]), 0);
    assert_int_equal(recd_client_send_untimed(c, &set.m[0]), -EINVAL);
    assert_int_equal(recd_client_close(c, err, sizeof err), 0);
    server_stop(&s);
    assert_int_equal(s.sink.count, 2);
    assert_int_equal(s.sink.untimed, 1);
    recd_buf_free(&s.sink.json);
    ws_free(&set);
}

static void urls(void **state)
{
    (void)state;
    recd_wire_url u;
    char err[200];
    assert_int_equal(recd_wire_url_parse("tcp://127.0.0.1:7070", &u, err, sizeof err), 0);
    assert_int_equal(u.transport, RECD_WIRE_TCP);
    assert_string_equal(u.host, "127.0.0.1");
    assert_int_equal(u.port, 7070);
    assert_int_equal(u.encoding, RECD_WIRE_AUTO);
    assert_int_equal(recd_wire_url_parse("udp://[::1]:9?encoding=ndjson", &u, err, sizeof err), 0);
    assert_int_equal(u.transport, RECD_WIRE_UDP);
    assert_string_equal(u.host, "::1");
    assert_int_equal(u.port, 9);
    assert_int_equal(u.encoding, RECD_WIRE_NDJSON);
    assert_int_equal(recd_wire_url_parse("unix:///run/recd/recd.sock", &u, err, sizeof err), 0);
    assert_int_equal(u.transport, RECD_WIRE_UNIX);
    assert_string_equal(u.path, "/run/recd/recd.sock");
    assert_int_equal(recd_wire_url_parse("tcp://localhost:0", &u, err, sizeof err), 0);
    const char *bad[] = {"http://x:1", "tcp://x", "tcp://:80", "tcp://x:65536", "tcp://x:8a",
                         "tcp://::1:80", "tcp://[::1]80", "unix://", "tcp://x:1?enc=ndjson",
                         "tcp://x:1?encoding=xml", "tcp://a b:1", NULL};
    for (size_t i = 0; bad[i]; i++) {
        err[0] = 0;
        if (recd_wire_url_parse(bad[i], &u, err, sizeof err) != -EINVAL || !err[0])
            fail_msg("%s was accepted", bad[i]);
    }
    recd_client *c;
    assert_int_equal(recd_client_connect(&c, "tcp://127.0.0.1:0", NULL, err, sizeof err), -EINVAL);
    assert_int_equal(recd_client_connect(&c, "tcp:/x", NULL, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "bad URL"));
}

static void connection_refused(void **state)
{
    (void)state;
    /* A port that was just free: nothing listens there. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    socklen_t sl = sizeof sa;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    close(fd);
    char url[64], err[200] = "";
    snprintf(url, sizeof url, "tcp://127.0.0.1:%u", (unsigned)ntohs(sa.sin_port));
    recd_client *c = NULL;
    assert_int_equal(recd_client_connect(&c, url, NULL, err, sizeof err), -ECONNREFUSED);
    assert_null(c);
    assert_non_null(strstr(err, "cannot connect to 127.0.0.1 port"));
    assert_int_equal(recd_client_connect(&c, "unix:///nonexistent/recd.sock", NULL, err, sizeof err),
                     -ENOENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tcp_binary),
        cmocka_unit_test(tcp_ndjson_small_batches),
        cmocka_unit_test(unix_binary),
        cmocka_unit_test(udp_packed),
        cmocka_unit_test(udp_ndjson),
        cmocka_unit_test(server_error_reaches_close),
        cmocka_unit_test(untimed_states),
        cmocka_unit_test(urls),
        cmocka_unit_test(connection_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
