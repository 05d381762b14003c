/* SPDX-License-Identifier: MIT */
/* recd_client's tls:// without a TLS server: the URL's options are parsed strictly (unknown,
 * repeated and empty ones, key= without cert=, a bad servername are errors); a CA file that does
 * not load fails the connect with -ENOENT; a peer that answers the handshake with garbage fails it
 * with -EPROTO, and one that never answers with -ETIMEDOUT after close_timeout_ms. The handshakes
 * with recd itself are tests/clients/test_tls_clients.py's. */
#include "testutil.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "recd/client.h"
#include "wire/client_tls.h"

static void test_url(void **state)
{
    (void)state;
    char err[300];
    client_tls_url u;
    assert_int_equal(client_tls_url_parse("tls://h.example:7443?ca=/a%20b.pem&cert=c.pem&key=k+1"
                                          "&servername=recd.example&encoding=ndjson",
                                          &u, err, sizeof err),
                     0);
    assert_string_equal(u.tcp_url, "tcp://h.example:7443?encoding=ndjson");
    assert_string_equal(u.ca, "/a b.pem");
    assert_string_equal(u.cert, "c.pem");
    assert_string_equal(u.key, "k+1");
    assert_string_equal(u.servername, "recd.example");
    assert_int_equal(client_tls_url_parse("tls://[::1]:7443", &u, err, sizeof err), 0);
    assert_string_equal(u.tcp_url, "tcp://[::1]:7443");
    assert_string_equal(u.ca, "");

    static const struct {
        const char *url, *why;
    } bad[] = {
        {"tls://h:1?insecure=1", "unknown option 'insecure'"},
        {"tls://h:1?verify=0", "unknown option 'verify'"},
        {"tls://h:1?ca=a&ca=b", "ca is given twice"},
        {"tls://h:1?encoding=binary&encoding=ndjson", "encoding is given twice"},
        {"tls://h:1?cert=", "cert= needs a value"},
        {"tls://h:1?key=k.pem", "key= without cert="},
        {"tls://h:1?servername=a%2Fb", "invalid character"},
        {"tcp://h:1", "must start with tls://"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        assert_int_equal(client_tls_url_parse(bad[i].url, &u, err, sizeof err), -EINVAL);
        if (!strstr(err, bad[i].why))
            fail_msg("%s: '%s' does not say '%s'", bad[i].url, err, bad[i].why);
    }
    recd_client *c = NULL;
    assert_int_equal(recd_client_connect(&c, "tls://127.0.0.1:1?insecure=1", NULL, err, sizeof err),
                     -EINVAL);
    assert_null(c);
    assert_int_equal(recd_client_connect(&c, "tls://127.0.0.1?ca=x", NULL, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "PORT"));
}

/* A loopback listener; the connect completes from its backlog. */
static int listen_loopback(uint16_t *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(fd, 4), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

static void *answer_garbage(void *arg)
{
    int fd = accept(*(int *)arg, NULL, NULL);
    static const char junk[] = "HTTP/1.1 400 Bad Request\r\n\r\nnot TLS at all";
    if (fd >= 0) {
        ssize_t w = write(fd, junk, sizeof junk - 1);
        (void)w;
        close(fd);
    }
    return NULL;
}

static int connect_to(uint16_t port, const char *query, unsigned timeout_ms, char *err,
                      size_t errlen)
{
    char url[512];
    snprintf(url, sizeof url, "tls://127.0.0.1:%u%s", port, query);
    recd_client_options o = {.close_timeout_ms = timeout_ms};
    recd_client *c = NULL;
    int rc = recd_client_connect(&c, url, &o, err, errlen);
    if (rc == 0)
        recd_client_close(c, NULL, 0);
    return rc;
}

static void test_handshake_failures(void **state)
{
    (void)state;
    char err[500];
    uint16_t port;
    int lfd = listen_loopback(&port);
    int rc = connect_to(port, "?ca=/nonexistent/ca.pem", 5000, err, sizeof err);
    if (rc == -ENOTSUP || rc == -ELIBACC) {
        close(lfd);
        skip(); /* built without libssl, or it cannot be loaded */
    }
    assert_int_equal(rc, -ENOENT);
    assert_non_null(strstr(err, "cannot read the CA file /nonexistent/ca.pem"));
    close(lfd); /* its backlog holds that connection: the next peer must meet a fresh one */
    lfd = listen_loopback(&port);

    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, answer_garbage, &lfd), 0);
    assert_int_equal(connect_to(port, "", tu_scaled_ms(10000), err, sizeof err), -EPROTO);
    pthread_join(t, NULL);
    assert_non_null(strstr(err, "TLS handshake failed"));

    /* Nobody accepts: the handshake waits for an answer that never comes. */
    assert_int_equal(connect_to(port, "", 200, err, sizeof err), -ETIMEDOUT);
    assert_non_null(strstr(err, "did not answer in time"));
    close(lfd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_url),
        cmocka_unit_test(test_handshake_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
