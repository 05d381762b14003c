/* SPDX-License-Identifier: MIT */
/* Tests for daemon/support/sd_notify.c against real AF_UNIX datagram sockets (path and
 * abstract), plus watchdog discovery and LISTEN_FDS parsing with real sockets on fds 3 and 4. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "support/sd_notify.h"

/* A bound datagram socket standing in for systemd. */
static int notify_listener(const char *name, int abstract)
{
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    size_t len = strlen(name);
    assert_true(len < sizeof sa.sun_path);
    memcpy(sa.sun_path, name, len);
    if (abstract)
        sa.sun_path[0] = '\0';
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)), 0);
    struct timeval tv = {2, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

static void receive(int fd, char *buf, size_t cap)
{
    ssize_t n = recv(fd, buf, cap - 1, 0);
    assert_true(n > 0);
    buf[n] = '\0';
}

static void unset_is_noop(void **state)
{
    (void)state;
    unsetenv("NOTIFY_SOCKET");
    assert_int_equal(recd_sd_notify_ready(), 0);
    assert_int_equal(recd_sd_notify_status("x"), 0);
    setenv("NOTIFY_SOCKET", "", 1);
    assert_int_equal(recd_sd_notify_stopping(), 0);
    unsetenv("NOTIFY_SOCKET");
}

static void path_socket(void **state)
{
    (void)state;
    const char *dir = tu_tmpdir();
    assert_non_null(dir);
    char path[512];
    snprintf(path, sizeof path, "%s/notify", dir);
    int fd = notify_listener(path, 0);
    setenv("NOTIFY_SOCKET", path, 1);

    char buf[4096];
    assert_int_equal(recd_sd_notify_ready(), 1);
    receive(fd, buf, sizeof buf);
    assert_string_equal(buf, "READY=1");

    assert_int_equal(recd_sd_notify_reloading(), 1);
    receive(fd, buf, sizeof buf);
    assert_memory_equal(buf, "RELOADING=1\nMONOTONIC_USEC=", 27);
    assert_true(strlen(buf) > 27);
    for (const char *p = buf + 27; *p; p++)
        assert_true(*p >= '0' && *p <= '9');

    assert_int_equal(recd_sd_notify_status("%d sessions\nREADY=1", 3), 1);
    receive(fd, buf, sizeof buf);
    assert_string_equal(buf, "STATUS=3 sessions READY=1");

    assert_int_equal(recd_sd_notify_watchdog(), 1);
    receive(fd, buf, sizeof buf);
    assert_string_equal(buf, "WATCHDOG=1");
    assert_int_equal(recd_sd_notify_stopping(), 1);
    receive(fd, buf, sizeof buf);
    assert_string_equal(buf, "STOPPING=1");
    assert_int_equal(recd_sd_notify_extend_timeout(5000000), 1);
    receive(fd, buf, sizeof buf);
    assert_string_equal(buf, "EXTEND_TIMEOUT_USEC=5000000");

    close(fd);
    unlink(path);
    /* Nobody listening any more. */
    assert_true(recd_sd_notify_ready() < 0);
    unsetenv("NOTIFY_SOCKET");
}

static void abstract_socket(void **state)
{
    (void)state;
    char name[64];
    snprintf(name, sizeof name, "@recd-test-notify-%d", (int)getpid());
    int fd = notify_listener(name, 1);
    setenv("NOTIFY_SOCKET", name, 1);
    char buf[256];
    assert_int_equal(recd_sd_notify_ready(), 1);
    receive(fd, buf, sizeof buf);
    assert_string_equal(buf, "READY=1");
    close(fd);
    unsetenv("NOTIFY_SOCKET");
}

static void bad_addresses(void **state)
{
    (void)state;
    setenv("NOTIFY_SOCKET", "relative/path", 1);
    assert_int_equal(recd_sd_notify_ready(), -EAFNOSUPPORT);
    setenv("NOTIFY_SOCKET", "vsock:2:1234", 1);
    assert_int_equal(recd_sd_notify_ready(), -EAFNOSUPPORT);
    char longname[300] = "/";
    memset(longname + 1, 'a', 200);
    longname[201] = '\0';
    setenv("NOTIFY_SOCKET", longname, 1);
    assert_int_equal(recd_sd_notify_ready(), -ENAMETOOLONG);
    setenv("NOTIFY_SOCKET", "/nonexistent-dir-recd/notify", 1);
    assert_int_equal(recd_sd_notify_ready(), -ENOENT);
    unsetenv("NOTIFY_SOCKET");
}

static void watchdog(void **state)
{
    (void)state;
    uint64_t usec = 0;
    unsetenv("WATCHDOG_USEC");
    unsetenv("WATCHDOG_PID");
    assert_int_equal(recd_sd_watchdog_usec(&usec), 0);
    setenv("WATCHDOG_USEC", "10000000", 1);
    assert_int_equal(recd_sd_watchdog_usec(&usec), 1);
    assert_true(usec == 10000000);
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    setenv("WATCHDOG_PID", pid, 1);
    assert_int_equal(recd_sd_watchdog_usec(&usec), 1);
    snprintf(pid, sizeof pid, "%d", (int)getpid() + 1);
    setenv("WATCHDOG_PID", pid, 1);
    assert_int_equal(recd_sd_watchdog_usec(&usec), 0);
    setenv("WATCHDOG_PID", "x", 1);
    assert_int_equal(recd_sd_watchdog_usec(&usec), -EINVAL);
    unsetenv("WATCHDOG_PID");
    setenv("WATCHDOG_USEC", "0", 1);
    assert_int_equal(recd_sd_watchdog_usec(&usec), -EINVAL);
    setenv("WATCHDOG_USEC", "12s", 1);
    assert_int_equal(recd_sd_watchdog_usec(&usec), -EINVAL);
    setenv("WATCHDOG_USEC", "99999999999999999999999", 1);
    assert_int_equal(recd_sd_watchdog_usec(&usec), -EINVAL);
    unsetenv("WATCHDOG_USEC");
}

/* Puts real sockets on fds 3 and 4, as systemd would, keeping whatever was there. */
static int saved[2] = {-1, -1};

static void place_sockets(void)
{
    for (int i = 0; i < 2; i++) {
        saved[i] = fcntl(3 + i, F_DUPFD_CLOEXEC, 100);
        int s = socket(AF_INET, i == 0 ? SOCK_STREAM : SOCK_DGRAM, 0);
        assert_true(s >= 0);
        if (s != 3 + i) {
            assert_int_equal(dup2(s, 3 + i), 3 + i);
            close(s);
        }
    }
}

static void restore_fds(void)
{
    for (int i = 0; i < 2; i++) {
        close(3 + i);
        if (saved[i] >= 0) {
            dup2(saved[i], 3 + i);
            close(saved[i]);
        }
        saved[i] = -1;
    }
}

static void set_listen_env(const char *pid, const char *fds, const char *names)
{
    setenv("LISTEN_PID", pid, 1);
    setenv("LISTEN_FDS", fds, 1);
    if (names)
        setenv("LISTEN_FDNAMES", names, 1);
    else
        unsetenv("LISTEN_FDNAMES");
}

static void listen_fds(void **state)
{
    (void)state;
    recd_sd_listen_fd *fds = NULL;
    char me[32], other[32];
    snprintf(me, sizeof me, "%d", (int)getpid());
    snprintf(other, sizeof other, "%d", (int)getpid() + 1);

    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    assert_int_equal(recd_sd_listen_fds(false, &fds), 0);
    assert_null(fds);

    place_sockets();
    set_listen_env(me, "2", "ingest:ingest-udp");
    int n = recd_sd_listen_fds(true, &fds);
    assert_int_equal(n, 2);
    assert_non_null(fds);
    assert_int_equal(fds[0].fd, 3);
    assert_int_equal(fds[0].family, AF_INET);
    assert_int_equal(fds[0].socktype, SOCK_STREAM);
    assert_string_equal(fds[0].name, "ingest");
    assert_int_equal(fds[1].fd, 4);
    assert_int_equal(fds[1].socktype, SOCK_DGRAM);
    assert_string_equal(fds[1].name, "ingest-udp");
    assert_true(fcntl(3, F_GETFD) & FD_CLOEXEC);
    assert_null(getenv("LISTEN_PID"));
    assert_null(getenv("LISTEN_FDS"));
    assert_null(getenv("LISTEN_FDNAMES"));
    free(fds);

    /* Without names every fd is "unknown". */
    set_listen_env(me, "2", NULL);
    assert_int_equal(recd_sd_listen_fds(false, &fds), 2);
    assert_string_equal(fds[1].name, "unknown");
    free(fds);

    /* Meant for another process (e.g. inherited by a child): ignored. */
    set_listen_env(other, "2", NULL);
    assert_int_equal(recd_sd_listen_fds(false, &fds), 0);
    assert_null(fds);

    static const struct {
        const char *fds, *names;
        int rc;
    } bad[] = {
        {"x", NULL, -EINVAL},       {"", NULL, -EINVAL},         {"-1", NULL, -EINVAL},
        {"2", "one", -EINVAL},      {"2", "a:b:c", -EINVAL},     {"99999999999999999999", NULL, -EINVAL},
        {"5000", NULL, -EINVAL},    {"3", NULL, -EBADF},         {"0", NULL, 0},
    };
    close(5); /* fd 5 must not be open for the -EBADF case */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        set_listen_env(me, bad[i].fds, bad[i].names);
        fds = (recd_sd_listen_fd *)1;
        assert_int_equal(recd_sd_listen_fds(false, &fds), bad[i].rc);
        assert_null(fds);
    }
    set_listen_env("abc", "2", NULL);
    assert_int_equal(recd_sd_listen_fds(true, &fds), -EINVAL);
    assert_null(getenv("LISTEN_FDS"));
    restore_fds();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unset_is_noop), cmocka_unit_test(path_socket), cmocka_unit_test(abstract_socket),
        cmocka_unit_test(bad_addresses), cmocka_unit_test(watchdog),    cmocka_unit_test(listen_fds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
