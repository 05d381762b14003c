/* SPDX-License-Identifier: MIT */
/* Slow HTTP clients on the metrics port must not starve health checks: with more hanging
 * clients than the endpoint takes (each renewed as soon as recd closes it), every GET /healthz
 * still gets its answer (docs/reliability.md, "Hostile peers"). */
#include "test_daemon_harness.h"

#include <poll.h>

#define HANGERS 24 /* more than the endpoint's 16 connections and its reserve */
#define BURST 24
#define PROBES 75

/* A connection to the metrics port, or -1. */
static int connect_metrics(const td_daemon *d)
{
    const char *colon = strrchr(d->metrics, ':');
    assert_non_null(colon);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)atoi(colon + 1));
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int hang(const td_daemon *d)
{
    int fd = connect_metrics(d);
    if (fd < 0)
        return -1;
    const char part[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n"; /* never finished */
    ssize_t w = send(fd, part, sizeof part - 1, MSG_NOSIGNAL);
    (void)w;
    return fd;
}

/* Reconnects every hanging client that recd has closed. */
static void renew(const td_daemon *d, int *fds)
{
    for (int i = 0; i < HANGERS; i++) {
        if (fds[i] >= 0) {
            struct pollfd p = {fds[i], POLLIN, 0};
            if (poll(&p, 1, 0) == 0)
                continue; /* still hanging */
            close(fds[i]);
        }
        fds[i] = hang(d);
    }
}

static void healthz_answers_past_hanging_clients(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, NULL);
    td_start(&d);
    int fds[HANGERS];
    for (int i = 0; i < HANGERS; i++)
        fds[i] = -1;
    renew(&d, fds);
    td_sleep_ms(200);
    int ok = 0;
    for (int i = 0; i < PROBES; i++) {
        renew(&d, fds);
        int status = 0;
        char *body = td_http_get(&d, "/healthz", &status);
        if (status == 200 && body && strstr(body, "\"status\":\"ok\"") != NULL)
            ok++;
        free(body);
        td_sleep_ms(100);
    }
    for (int i = 0; i < HANGERS; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    if (ok != PROBES) {
        td_dump_log(&d);
        fail_msg("/healthz answered %d of %d probes while %d clients hung", ok, PROBES, HANGERS);
    }
    td_stop(&d);
    td_cleanup(&d);
}

/* A probe accepted in the same loop iteration as a burst of newer clients, before recd read any
 * of them, must not be the one shed to make room for them (seen once in chaos_short). recd is
 * stopped while they all connect, so the whole burst waits in the accept queue behind the probe. */
static void healthz_answers_when_accepted_with_a_burst(void **state)
{
    (void)state;
    td_daemon d;
    td_setup(&d, NULL);
    td_start(&d);
    assert_int_equal(kill(d.pid, SIGSTOP), 0);
    int probe = connect_metrics(&d);
    assert_true(probe >= 0);
    const char req[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    assert_int_equal(send(probe, req, sizeof req - 1, MSG_NOSIGNAL), (ssize_t)(sizeof req - 1));
    int burst[BURST];
    for (int i = 0; i < BURST; i++)
        burst[i] = connect_metrics(&d); /* completed by the kernel, not yet accepted */
    assert_int_equal(kill(d.pid, SIGCONT), 0);
    char reply[4096];
    size_t got = 0;
    struct pollfd p = {probe, POLLIN, 0};
    while (got < sizeof reply - 1 && poll(&p, 1, (int)tu_scaled_ms(10000)) == 1) {
        ssize_t n = recv(probe, reply + got, sizeof reply - 1 - got, 0);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    reply[got] = '\0';
    close(probe);
    for (int i = 0; i < BURST; i++)
        if (burst[i] >= 0)
            close(burst[i]);
    if (strstr(reply, " 200 ") == NULL || strstr(reply, "\"status\":\"ok\"") == NULL) {
        td_dump_log(&d);
        fail_msg("the probe got \"%.200s\" after a burst of %d clients", reply, BURST);
    }
    td_stop(&d);
    td_cleanup(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        td_unit_test(healthz_answers_past_hanging_clients),
        td_unit_test(healthz_answers_when_accepted_with_a_burst),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
