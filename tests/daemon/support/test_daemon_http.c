/* SPDX-License-Identifier: MIT */
/* Tests for daemon/support/http_server.c: a real libuv loop serving on 127.0.0.1 port 0, driven
 * by a plain blocking socket client in another thread (metrics, health, 404/405/400/431, split
 * requests, timeouts and the connection cap). */
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
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "support/http_server.h"
#include "support/metrics.h"

typedef struct response {
    int status;
    char headers[2048];
    char body[65536];
    size_t body_len;
    int closed; /* the server closed without answering */
} response;

static atomic_int healthy = 1;

static void health(void *ctx, recd_health_report *r)
{
    (void)ctx;
    if (!atomic_load(&healthy)) {
        recd_health_fail(r, "writes", "a write failed 3 s ago");
        recd_health_fail(r, "quote\"d", "line\nbreak");
    }
}

#define HEALTH_OK "{\"status\":\"ok\",\"checks\":[]}\n"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int connect_to(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int send_all(int fd, const char *data, size_t len)
{
    while (len) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
        if (n <= 0)
            return -1;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Reads until EOF and splits the response; fills r->closed when nothing came back. */
static void read_response(int fd, response *r)
{
    static char raw[70000];
    size_t len = 0;
    for (;;) {
        ssize_t n = recv(fd, raw + len, sizeof raw - 1 - len, 0);
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    raw[len] = '\0';
    memset(r, 0, sizeof *r);
    if (len == 0) {
        r->closed = 1;
        return;
    }
    sscanf(raw, "HTTP/1.1 %d", &r->status);
    char *end = strstr(raw, "\r\n\r\n");
    if (!end)
        return;
    size_t hlen = (size_t)(end - raw);
    snprintf(r->headers, sizeof r->headers, "%.*s", (int)hlen, raw);
    r->body_len = len - hlen - 4;
    memcpy(r->body, end + 4, r->body_len);
    r->body[r->body_len] = '\0';
}

/* cmocka's asserts may only run on the test thread, so the client thread records its first failure
 * and the test thread reports it. */
static char client_failure[512];

#define CHECK(cond)                                                                                                  \
    do {                                                                                                             \
        if (!(cond)) {                                                                                               \
            if (!client_failure[0])                                                                                  \
                snprintf(client_failure, sizeof client_failure, "line %d: %s", __LINE__, #cond);                     \
            return;                                                                                                  \
        }                                                                                                            \
    } while (0)

static void request(int port, const char *req, response *r)
{
    memset(r, 0, sizeof *r);
    int fd = connect_to(port);
    CHECK(fd >= 0);
    if (send_all(fd, req, strlen(req)) < 0) {
        close(fd);
        CHECK(!"send failed");
    }
    read_response(fd, r);
    close(fd);
}

static size_t content_length(const response *r)
{
    const char *h = strstr(r->headers, "Content-Length: ");
    return h ? (size_t)strtoul(h + 16, NULL, 10) : (size_t)-1;
}

/* ---- the server side: a loop in the test thread, the client in another ---- */

typedef struct harness {
    uv_loop_t loop;
    uv_async_t done;
    recd_http_server *server;
    int port;
    void (*client)(struct harness *);
    recd_daemon_metrics metrics;
    int closed;
} harness;

static void on_server_closed(void *ctx) { ((harness *)ctx)->closed = 1; }

static void on_done(uv_async_t *a)
{
    harness *h = a->data;
    recd_http_server_close(h->server, on_server_closed, h);
    uv_close((uv_handle_t *)a, NULL);
}

static void *client_main(void *arg)
{
    harness *h = arg;
    h->client(h);
    uv_async_send(&h->done);
    return NULL;
}

static void run_with_client(void (*client)(harness *), size_t max_conns, uint64_t timeout_ms)
{
    harness h;
    memset(&h, 0, sizeof h);
    client_failure[0] = '\0';
    h.client = client;
    assert_int_equal(uv_loop_init(&h.loop), 0);
    assert_int_equal(recd_daemon_metrics_init(&h.metrics), 0);
    recd_metric_set(h.metrics.sessions_open, 0, 3);
    recd_http_options opt = {.metrics = h.metrics.registry, .health = health, .max_connections = max_conns,
                             .timeout_ms = timeout_ms};
    assert_int_equal(recd_http_server_start(&h.loop, "127.0.0.1", 0, &opt, &h.server), 0);
    h.port = recd_http_server_port(h.server);
    assert_true(h.port > 0);
    assert_int_equal(uv_async_init(&h.loop, &h.done, on_done), 0);
    h.done.data = &h;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, client_main, &h), 0);
    uv_run(&h.loop, UV_RUN_DEFAULT);
    pthread_join(t, NULL);
    if (client_failure[0])
        fail_msg("client: %s", client_failure);
    assert_true(h.closed);
    assert_int_equal(uv_loop_close(&h.loop), 0);
    recd_daemon_metrics_free(&h.metrics);
}

static void endpoints_client(harness *h)
{
    response r;
    request(h->port, "GET /metrics HTTP/1.1\r\nHost: localhost\r\nAccept: */*\r\n\r\n", &r);
    CHECK((r.status) == (200));
    CHECK(strstr(r.headers, "Content-Type: text/plain; version=0.0.4") != NULL);
    CHECK((strstr(r.headers, "Connection: close")) != NULL);
    CHECK((content_length(&r)) == (r.body_len));
    CHECK((strstr(r.body, "# TYPE recd_sessions_open gauge\nrecd_sessions_open 3\n")) != NULL);
    CHECK((strstr(r.body, "recd_samples_total{transport=\"tcp\",format=\"recap\"} 0\n")) != NULL);

    request(h->port, "GET /healthz HTTP/1.1\r\n\r\n", &r);
    CHECK((r.status) == (200));
    CHECK(strcmp(r.body, HEALTH_OK) == 0);
    CHECK(strstr(r.headers, "Content-Type: application/json") != NULL);
    CHECK((content_length(&r)) == (strlen(HEALTH_OK)));

    atomic_store(&healthy, 0);
    request(h->port, "GET /healthz HTTP/1.1\r\n\r\n", &r);
    atomic_store(&healthy, 1);
    CHECK((r.status) == (503));
    CHECK(strcmp(r.body, "{\"status\":\"error\",\"checks\":[{\"name\":\"writes\",\"reason\":\"a write "
                         "failed 3 s ago\"},{\"name\":\"quote\\\"d\",\"reason\":\"line\\u000abreak\"}]}\n") == 0);

    request(h->port, "GET /metrics?name=x HTTP/1.0\r\n\r\n", &r);
    CHECK((r.status) == (200));

    request(h->port, "GET /nope HTTP/1.1\r\n\r\n", &r);
    CHECK((r.status) == (404));
    request(h->port, "GET /metricsx HTTP/1.1\r\n\r\n", &r);
    CHECK((r.status) == (404));
    request(h->port, "GET http://localhost/healthz HTTP/1.1\r\n\r\n", &r);
    CHECK((r.status) == (200));

    request(h->port, "POST /metrics HTTP/1.1\r\nContent-Length: 2\r\n\r\nab", &r);
    CHECK((r.status) == (405));
    CHECK((strstr(r.headers, "Allow: GET, HEAD")) != NULL);
    /* HEAD: GET's status and headers (Content-Length included), no body. */
    request(h->port, "HEAD /healthz HTTP/1.1\r\n\r\n", &r);
    CHECK((r.status) == (200));
    CHECK((r.body_len) == (0));
    CHECK((content_length(&r)) == (strlen(HEALTH_OK)));
    request(h->port, "HEAD /metrics HTTP/1.1\r\n\r\n", &r);
    CHECK((r.status) == (200));
    CHECK((r.body_len) == (0));
    CHECK(content_length(&r) > 100);
    request(h->port, "HEAD /nope HTTP/1.1\r\n\r\n", &r);
    CHECK((r.status) == (404));
    CHECK((r.body_len) == (0));

    request(h->port, "HELLO\r\n\r\n", &r);
    CHECK((r.status) == (400));
    request(h->port, "GET /metrics HTTP/1.1\r\nNo colon here\r\n\r\n", &r);
    CHECK((r.status) == (400));
    request(h->port, "GET metrics HTTP/1.1\r\n\r\n", &r);
    CHECK((r.status) == (400));

    /* Oversized headers. */
    static char big[12000];
    strcpy(big, "GET /metrics HTTP/1.1\r\nX-Junk: ");
    memset(big + strlen(big), 'a', 10000);
    strcat(big, "\r\n\r\n");
    request(h->port, big, &r);
    CHECK((r.status) == (431));

    /* An oversized body. */
    strcpy(big, "GET /metrics HTTP/1.1\r\nContent-Length: 9000\r\n\r\n");
    memset(big + strlen(big), 'b', 9000);
    request(h->port, big, &r);
    CHECK((r.status) == (413));

    /* A long URL. */
    strcpy(big, "GET /");
    memset(big + 5, 'u', 2000);
    strcpy(big + 2005, " HTTP/1.1\r\n\r\n");
    request(h->port, big, &r);
    CHECK((r.status) == (414));

    /* A request arriving in pieces. */
    int fd = connect_to(h->port);
    CHECK(fd >= 0);
    const char *parts[] = {"GE", "T /hea", "lthz HTTP/1.1\r", "\nHost: a\r\n", "\r\n"};
    for (size_t i = 0; i < 5; i++) {
        CHECK(send_all(fd, parts[i], strlen(parts[i])) == 0);
        usleep(20000);
    }
    read_response(fd, &r);
    close(fd);
    CHECK((r.status) == (200));
    CHECK(strcmp(r.body, HEALTH_OK) == 0);

    /* Pipelined requests: only the first is answered. */
    request(h->port, "GET /healthz HTTP/1.1\r\n\r\nGET /metrics HTTP/1.1\r\n\r\n", &r);
    CHECK((r.status) == (200));
    CHECK(strcmp(r.body, HEALTH_OK) == 0);
}

static void endpoints(void **state)
{
    (void)state;
    run_with_client(endpoints_client, 0, 0);
}

static void idle_timeout_client(harness *h)
{
    response r;
    /* An idle client is dropped after the timeout (4 s here: wide margins, since ctest runs this
     * beside CPU-heavy tests). */
    double t0 = now_s();
    int idle = connect_to(h->port);
    CHECK(idle >= 0);
    read_response(idle, &r);
    close(idle);
    CHECK(r.closed);
    double waited = now_s() - t0;
    CHECK(waited > 3.0 && waited < 15.0);
}

static void idle_timeout(void **state)
{
    (void)state;
    run_with_client(idle_timeout_client, 2, 4000);
}

static void connection_limit_client(harness *h)
{
    response r;
    /* With two clients connected, a third is closed at once: long before the 120 s idle timeout,
     * whatever else the machine is doing. */
    int a = connect_to(h->port), b = connect_to(h->port);
    CHECK(a >= 0 && b >= 0);
    usleep(50000);
    double t0 = now_s();
    int c = connect_to(h->port);
    CHECK(c >= 0);
    read_response(c, &r);
    close(c);
    CHECK(r.closed);
    CHECK(now_s() - t0 < 60.0);
    close(a);
    close(b);
    usleep(50000);
    request(h->port, "GET /healthz HTTP/1.1\r\n\r\n", &r);
    CHECK((r.status) == (200));
}

static void connection_limit(void **state)
{
    (void)state;
    run_with_client(connection_limit_client, 2, 120000);
}

static void start_errors(void **state)
{
    (void)state;
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    recd_http_server *s = NULL, *t = NULL;
    assert_int_equal(recd_http_server_start(&loop, "localhost", 0, NULL, &s), -EINVAL);
    assert_int_equal(recd_http_server_start(&loop, "127.0.0.1", 70000, NULL, &s), -EINVAL);
    assert_null(s);
    assert_int_equal(recd_http_server_start(&loop, "127.0.0.1", 0, NULL, &s), 0);
    int port = recd_http_server_port(s);
    assert_true(port > 0);
    assert_int_equal(recd_http_server_start(&loop, "127.0.0.1", port, NULL, &t), UV_EADDRINUSE);
    assert_null(t);
    int v6 = recd_http_server_start(&loop, "::1", 0, NULL, &t);
    if (v6 == 0) {
        assert_true(recd_http_server_port(t) > 0);
        recd_http_server_close(t, NULL, NULL);
    } else {
        print_message("IPv6 loopback unavailable (%s): skipped\n", uv_strerror(v6));
    }
    recd_http_server_close(s, NULL, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(endpoints),
        cmocka_unit_test(idle_timeout), cmocka_unit_test(connection_limit),
        cmocka_unit_test(start_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
