/* SPDX-License-Identifier: MIT */
/* recd under systemd's conventions without systemd: sockets passed by socket activation
 * (LISTEN_FDS) are adopted and record; the notify socket receives READY=1 once listening,
 * WATCHDOG=1 at half of WATCHDOG_USEC, RELOADING=1 with MONOTONIC_USEC then READY=1 on SIGHUP,
 * and STOPPING=1 on SIGTERM. */
#include <sys/un.h>

#include "test_daemon_harness.h"

typedef struct notify_sock {
    int fd;
    char path[700];
    recd_buf seen; /* every message received, '|' separated */
} notify_sock;

static void notify_release(void *obj)
{
    notify_sock *n = obj;
    if (n->fd >= 0)
        close(n->fd);
    recd_buf_free(&n->seen);
    free(n);
}

/* A notify socket in dir, released by td_teardown when the test does not get to notify_release. */
static notify_sock *notify_open(const char *dir)
{
    notify_sock *n = calloc(1, sizeof *n);
    assert_non_null(n);
    n->fd = -1;
    td_hold(n, notify_release);
    snprintf(n->path, sizeof n->path, "%s/notify.sock", dir);
    n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    assert_true(n->fd >= 0);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    assert_true(strlen(n->path) < sizeof a.sun_path);
    strcpy(a.sun_path, n->path);
    assert_int_equal(bind(n->fd, (struct sockaddr *)&a, sizeof a), 0);
    return n;
}

/* Waits until a message containing want arrives (messages before it are kept in seen);
 * timeout_ms is a base time, scaled under sanitizers. */
static bool notify_wait(notify_sock *n, const char *want, unsigned timeout_ms)
{
    uint64_t deadline = td_deadline(timeout_ms);
    for (;;) {
        recd_buf_append(&n->seen, "", 1);
        n->seen.len--;
        if (n->seen.data && strstr((const char *)n->seen.data, want))
            return true;
        uint64_t now = td_now_ms();
        if (now >= deadline)
            return false;
        struct timeval tv = {0, 50000};
        setsockopt(n->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        char msg[2048];
        ssize_t r = recv(n->fd, msg, sizeof msg - 1, 0);
        if (r > 0) {
            recd_buf_append(&n->seen, msg, (size_t)r);
            recd_buf_append(&n->seen, "|", 1);
        }
    }
}

static void test_activation_and_notify(void **state)
{
    (void)state;
    const char *recd = td_require_recd();
    td_daemon d;
    td_setup(&d, "");
    char yaml[2048];
    snprintf(yaml, sizeof yaml, "listen: []\noutput:\n  root: %s\nmetrics:\n  listen: 127.0.0.1:0\n", d.out);
    td_rewrite_config(&d, yaml);
    notify_sock *n = notify_open(d.dir);
    uint16_t tcp_port, udp_port;
    int tcp = td_loopback_socket(SOCK_STREAM, &tcp_port);
    int udp = td_loopback_socket(SOCK_DGRAM, &udp_port);

    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        /* Move the sockets out of the way, then to fds 3 and 4 as systemd does. */
        int t = fcntl(tcp, F_DUPFD, 10), u = fcntl(udp, F_DUPFD, 10);
        int o = open(d.ports, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(d.log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (t < 0 || u < 0 || o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0 || dup2(t, 3) < 0 ||
            dup2(u, 4) < 0)
            _exit(127);
        char pidtext[32];
        snprintf(pidtext, sizeof pidtext, "%d", (int)getpid());
        setenv("LISTEN_FDS", "2", 1);
        setenv("LISTEN_PID", pidtext, 1);
        setenv("LISTEN_FDNAMES", "ingest:ingest", 1);
        setenv("NOTIFY_SOCKET", n->path, 1);
        setenv("WATCHDOG_USEC", "200000", 1);
        setenv("WATCHDOG_PID", pidtext, 1);
        execl(recd, "recd", "--config", d.config, "--print-ports", (char *)NULL);
        _exit(127);
    }
    td_set_pid(&d, pid);
    close(tcp);
    close(udp);
    if (!notify_wait(n, "READY=1", TD_START_TIMEOUT_MS)) {
        td_dump_log(&d);
        fail_msg("no READY=1 (got '%.*s')", (int)n->seen.len, (const char *)n->seen.data);
    }
    /* Watchdog keep-alives every 100 ms. */
    n->seen.len = 0;
    assert_true(notify_wait(n, "WATCHDOG=1|WATCHDOG=1|", 3000));
    snprintf(d.tcp, sizeof d.tcp, "tcp://127.0.0.1:%u", tcp_port);
    snprintf(d.udp, sizeof d.udp, "udp://127.0.0.1:%u", udp_port);
    td_read_ports(&d); /* metrics address (the listeners are the adopted ones) */

    td_rec_session a, b;
    td_rec_session_init(&a, "activated-tcp", recd_synth_format_find("samp-onfoot"), RECD_SYNTH_SCENARIO_WALK, 20000, 51);
    td_rec_session_init(&b, "activated-udp", recd_synth_format_find("samp-vehicle"), RECD_SYNTH_SCENARIO_DRIVE, 20000, 52);
    td_send_rec_session(d.tcp, &a, 1763213398000);
    td_send_rec_session(d.udp, &b, 1763213398000);

    /* The file now names the adopted sockets: the reload binds nothing and applies. */
    snprintf(yaml, sizeof yaml,
             "listen:\n  - tcp://127.0.0.1:%u\n  - udp://127.0.0.1:%u\noutput:\n  root: %s\n"
             "metrics:\n  listen: 127.0.0.1:0\n",
             (unsigned)tcp_port, (unsigned)udp_port, d.out);
    td_rewrite_config(&d, yaml);
    n->seen.len = 0;
    kill(pid, SIGHUP);
    assert_true(notify_wait(n, "RELOADING=1", 10000));
    assert_non_null(strstr((const char *)n->seen.data, "MONOTONIC_USEC="));
    assert_true(notify_wait(n, "READY=1", 10000));
    if (td_wait_metric(&d, "recd_config_reloads_total{result=\"ok\"}", 1, 10000) < 1) {
        td_dump_log(&d);
        fail_msg("a reload naming the adopted sockets was not applied");
    }

    n->seen.len = 0;
    kill(pid, SIGTERM);
    assert_true(notify_wait(n, "STOPPING=1", 10000));
    assert_int_equal(td_signal_wait(&d, 0), 0);
    td_expect_single_file(&d, "samp-onfoot", "activated-tcp", &a.expect);
    td_expect_single_file(&d, "samp-vehicle", "activated-udp", &b.expect);
    td_rec_session_free(&a);
    td_rec_session_free(&b);
    td_unhold(n);
    notify_release(n);
    td_cleanup(&d);
}

int main(void)
{
    td_require_recd();
    const struct CMUnitTest tests[] = {
        td_unit_test(test_activation_and_notify),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
