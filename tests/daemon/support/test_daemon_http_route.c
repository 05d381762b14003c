/* SPDX-License-Identifier: MIT */
/* Tests for the route callback of daemon/support/http_server.c (what the web console uses): an
 * answer sent at once with extra headers, one sent later, one sent after its client left (the
 * reply is freed, nothing is written), a stream that delivers its events, a stream whose client
 * does not read (closed at max_stream_backlog, counted, on_gone called) and max_streams. A real
 * libuv loop in the test thread; the client is a blocking socket in another thread. */
#include "testutil.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "support/http_server.h"

static char client_failure[512];
#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            if (!client_failure[0])                                                                \
                snprintf(client_failure, sizeof client_failure, "line %d: %s", __LINE__, #cond);  \
            return;                                                                                \
        }                                                                                          \
    } while (0)

typedef struct harness {
    uv_loop_t loop;
    uv_async_t done;
    uv_timer_t later; /* sends the deferred reply */
    recd_http_server *server;
    int port;
    recd_http_reply *pending;
    recd_http_reply *stream;
    atomic_int gone;  /* streams whose on_gone ran */
    atomic_int streams_open;
    int closed;
} harness;

static harness *H;

static void send_later(uv_timer_t *t)
{
    harness *h = t->data;
    if (h->pending)
        recd_http_reply_send(h->pending, 200, "text/plain", NULL, "later\n", 6);
    h->pending = NULL;
}

static void stream_gone(void *data)
{
    harness *h = data;
    h->stream = NULL;
    atomic_fetch_add(&h->gone, 1);
    atomic_fetch_sub(&h->streams_open, 1);
}

static bool route(void *ctx, const recd_http_request *req, recd_http_reply *reply)
{
    harness *h = ctx;
    if (req->path_len == 4 && memcmp(req->path, "/now", 4) == 0) {
        recd_http_reply_send(reply, 200, "application/json", "X-Test: yes\r\n", "{}", 2);
        return true;
    }
    if (req->path_len == 6 && memcmp(req->path, "/later", 6) == 0) {
        h->pending = reply;
        uv_timer_start(&h->later, send_later, 300, 0);
        return true;
    }
    if (req->path_len == 7 && memcmp(req->path, "/stream", 7) == 0) {
        if (recd_http_reply_stream(reply, "text/event-stream", NULL, stream_gone, h) < 0) {
            recd_http_reply_send(reply, 503, "text/plain", NULL, "busy\n", 5);
            return true;
        }
        atomic_fetch_add(&h->streams_open, 1);
        h->stream = reply;
        recd_http_stream_write(reply, "data: 1\n\n", 9);
        return true;
    }
    return false;
}

static int connect_send(int port, const char *req)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    int small = 4096;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || send(fd, req, strlen(req), MSG_NOSIGNAL) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static size_t read_all(int fd, char *buf, size_t cap)
{
    size_t len = 0;
    ssize_t n;
    while (len < cap - 1 && (n = recv(fd, buf + len, cap - 1 - len, 0)) > 0)
        len += (size_t)n;
    buf[len] = 0;
    return len;
}

/* Stream writes are made on the loop thread: the client asks for them through this async. */
static uv_async_t flood;
static void on_flood(uv_async_t *a)
{
    harness *h = a->data;
    static char chunk[8192];
    memset(chunk, 'x', sizeof chunk);
    for (int i = 0; i < 200 && h->stream; i++)
        if (recd_http_stream_write(h->stream, chunk, sizeof chunk) < 0)
            break;
}

static void client(harness *h)
{
    char buf[65536];
    int fd = connect_send(h->port, "GET /now HTTP/1.1\r\n\r\n");
    CHECK(fd >= 0);
    read_all(fd, buf, sizeof buf);
    close(fd);
    CHECK(strncmp(buf, "HTTP/1.1 200", 12) == 0);
    CHECK(strstr(buf, "X-Test: yes\r\n") && strstr(buf, "\r\n\r\n{}"));

    fd = connect_send(h->port, "GET /later HTTP/1.1\r\n\r\n");
    read_all(fd, buf, sizeof buf);
    close(fd);
    CHECK(strncmp(buf, "HTTP/1.1 200", 12) == 0 && strstr(buf, "\r\n\r\nlater\n"));

    /* The client leaves before the deferred answer: the reply is only freed (ASan watches). */
    fd = connect_send(h->port, "GET /later HTTP/1.1\r\n\r\n");
    close(fd);
    usleep(500 * 1000);

    fd = connect_send(h->port, "GET /nope HTTP/1.1\r\n\r\n");
    read_all(fd, buf, sizeof buf);
    close(fd);
    CHECK(strncmp(buf, "HTTP/1.1 404", 12) == 0);

    /* A stream: its head and first event arrive; then max_streams (2) holds. */
    int s1 = connect_send(h->port, "GET /stream HTTP/1.1\r\n\r\n");
    ssize_t n = recv(s1, buf, sizeof buf - 1, 0);
    CHECK(n > 0);
    buf[n] = 0;
    CHECK(strncmp(buf, "HTTP/1.1 200", 12) == 0 && strstr(buf, "text/event-stream"));
    if (!strstr(buf, "data: 1\n\n")) {
        n = recv(s1, buf, sizeof buf - 1, 0);
        CHECK(n > 0);
    }
    int s2 = connect_send(h->port, "GET /stream HTTP/1.1\r\n\r\n");
    CHECK(recv(s2, buf, sizeof buf - 1, 0) > 0);
    int s3 = connect_send(h->port, "GET /stream HTTP/1.1\r\n\r\n");
    read_all(s3, buf, sizeof buf);
    close(s3);
    CHECK(strncmp(buf, "HTTP/1.1 503", 12) == 0);
    /* /healthz is not held back by the open streams. */
    fd = connect_send(h->port, "GET /healthz HTTP/1.1\r\n\r\n");
    read_all(fd, buf, sizeof buf);
    close(fd);
    CHECK(strncmp(buf, "HTTP/1.1 200", 12) == 0);

    /* The newest stream (s2) gets 1.6 MB it never reads: closed at the backlog, and counted. */
    uv_async_send(&flood);
    for (int i = 0; i < 100 && atomic_load(&h->gone) < 1; i++)
        usleep(50 * 1000);
    CHECK(atomic_load(&h->gone) == 1);
    close(s1);
    close(s2);
    for (int i = 0; i < 100 && atomic_load(&h->streams_open) > 0; i++)
        usleep(50 * 1000);
    CHECK(atomic_load(&h->streams_open) == 0);
}

static void on_server_closed(void *ctx) { ((harness *)ctx)->closed = 1; }

static void on_done(uv_async_t *a)
{
    harness *h = a->data;
    recd_http_server_close(h->server, on_server_closed, h);
    uv_close((uv_handle_t *)a, NULL);
    uv_close((uv_handle_t *)&flood, NULL);
    uv_close((uv_handle_t *)&h->later, NULL);
}

static void *client_main(void *arg)
{
    harness *h = arg;
    client(h);
    uv_async_send(&h->done);
    return NULL;
}

static void routes_and_streams(void **state)
{
    (void)state;
    static harness h;
    memset(&h, 0, sizeof h);
    H = &h;
    assert_int_equal(uv_loop_init(&h.loop), 0);
    recd_http_options opt = {.route = route, .route_ctx = &h, .max_streams = 2,
                             .max_stream_backlog = 64 * 1024, .timeout_ms = 3000};
    assert_int_equal(recd_http_server_start(&h.loop, "127.0.0.1", 0, &opt, &h.server), 0);
    h.port = recd_http_server_port(h.server);
    uv_timer_init(&h.loop, &h.later);
    h.later.data = &h;
    uv_async_init(&h.loop, &h.done, on_done);
    h.done.data = &h;
    uv_async_init(&h.loop, &flood, on_flood);
    flood.data = &h;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, client_main, &h), 0);
    uv_run(&h.loop, UV_RUN_DEFAULT);
    pthread_join(t, NULL);
    if (client_failure[0])
        fail_msg("client: %s", client_failure);
    assert_true(h.closed);
    assert_int_equal(h.pending, NULL);
    assert_int_equal(uv_loop_close(&h.loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(routes_and_streams)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
