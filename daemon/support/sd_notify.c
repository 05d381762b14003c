/* SPDX-License-Identifier: MIT */
/* Direct implementation of systemd's notify, watchdog and socket-activation conventions (see
 * sd_notify.h and docs/configuration.md for why libsystemd is not used). */
#include "sd_notify.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int recd_sd_notify(const char *state)
{
    const char *path = getenv("NOTIFY_SOCKET");
    if (!path || !*path)
        return 0;
    if (!state)
        return -EINVAL;
    if (path[0] != '/' && path[0] != '@')
        return -EAFNOSUPPORT; /* e.g. vsock: addresses, which recd never runs under */

    struct sockaddr_un sa;
    size_t plen = strlen(path);
    if (plen >= sizeof sa.sun_path)
        return -ENAMETOOLONG;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, path, plen);
    if (path[0] == '@')
        sa.sun_path[0] = '\0';
    socklen_t salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen);

    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    size_t len = strlen(state);
    ssize_t sent;
    do
        sent = sendto(fd, state, len, MSG_NOSIGNAL, (const struct sockaddr *)&sa, salen);
    while (sent < 0 && errno == EINTR);
    int err = (sent < 0) ? -errno : 0;
    close(fd);
    if (err)
        return err;
    return ((size_t)sent == len) ? 1 : -EMSGSIZE;
}

static int notify_va(const char *fmt, va_list ap)
{
    char msg[RECD_SD_STATE_MAX];
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    if (n < 0)
        return -EINVAL;
    if ((size_t)n >= sizeof msg)
        return -EMSGSIZE;
    return recd_sd_notify(msg);
}

/* Sends "KEY=VALUE\n..." to $NOTIFY_SOCKET (a path, or '@' for the abstract namespace).
 * Returns 1 when sent, 0 when $NOTIFY_SOCKET is unset, or a negative errno. */
static int recd_sd_notifyf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = notify_va(fmt, ap);
    va_end(ap);
    return r;
}

int recd_sd_notify_ready(void) { return recd_sd_notify("READY=1"); }
int recd_sd_notify_stopping(void) { return recd_sd_notify("STOPPING=1"); }
int recd_sd_notify_watchdog(void) { return recd_sd_notify("WATCHDOG=1"); }

int recd_sd_notify_reloading(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    unsigned long long usec = (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000u;
    return recd_sd_notifyf("RELOADING=1\nMONOTONIC_USEC=%llu", usec);
}

int recd_sd_notify_extend_timeout(uint64_t usec)
{
    return recd_sd_notifyf("EXTEND_TIMEOUT_USEC=%llu", (unsigned long long)usec);
}

int recd_sd_notify_status(const char *fmt, ...)
{
    char text[RECD_SD_STATE_MAX - 16];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    /* A line break would start a new KEY=VALUE assignment. */
    for (char *p = text; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    return recd_sd_notifyf("STATUS=%s", text);
}

/* Parses a whole decimal string; 0 or -EINVAL. */
static int parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s)
        return -EINVAL;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -EINVAL;
        uint64_t d = (uint64_t)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -EINVAL;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* 1 when the variable names this process, 0 when it is unset or names another, -EINVAL when bad. */
static int pid_matches(const char *var, int required)
{
    const char *s = getenv(var);
    if (!s)
        return required ? 0 : 1;
    uint64_t pid;
    if (parse_u64(s, &pid) < 0 || pid == 0)
        return -EINVAL;
    return pid == (uint64_t)getpid();
}

int recd_sd_watchdog_usec(uint64_t *usec)
{
    const char *s = getenv("WATCHDOG_USEC");
    if (!s)
        return 0;
    uint64_t v;
    if (parse_u64(s, &v) < 0 || v == 0)
        return -EINVAL;
    int mine = pid_matches("WATCHDOG_PID", 0);
    if (mine <= 0)
        return mine;
    if (usec)
        *usec = v;
    return 1;
}

static void unset_listen_env(void)
{
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_FDNAMES");
}

/* Splits LISTEN_FDNAMES (colon-separated) into the entries; -EINVAL when the count differs. */
static int apply_names(const char *names, recd_sd_listen_fd *fds, size_t count)
{
    for (size_t i = 0; i < count; i++)
        snprintf(fds[i].name, sizeof fds[i].name, "unknown");
    if (!names)
        return 0;
    const char *p = names;
    for (size_t i = 0; i < count; i++) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len >= sizeof fds[i].name)
            return -EINVAL;
        memcpy(fds[i].name, p, len);
        fds[i].name[len] = '\0';
        if (!end) {
            if (i + 1 != count)
                return -EINVAL;
            return 0;
        }
        p = end + 1;
    }
    return -EINVAL; /* more names than fds */
}

int recd_sd_listen_fds(bool unset_env, recd_sd_listen_fd **out)
{
    *out = NULL;
    int r = pid_matches("LISTEN_PID", 1);
    if (r <= 0)
        goto done;
    uint64_t n;
    if (parse_u64(getenv("LISTEN_FDS"), &n) < 0 || n > RECD_SD_LISTEN_FDS_MAX) {
        r = -EINVAL;
        goto done;
    }
    if (n == 0) {
        r = 0;
        goto done;
    }
    recd_sd_listen_fd *fds = calloc((size_t)n, sizeof *fds);
    if (!fds) {
        r = -ENOMEM;
        goto done;
    }
    r = apply_names(getenv("LISTEN_FDNAMES"), fds, (size_t)n);
    for (size_t i = 0; r == 0 && i < n; i++) {
        int fd = RECD_SD_LISTEN_FDS_START + (int)i;
        int flags = fcntl(fd, F_GETFD);
        if (flags < 0 || fcntl(fd, F_SETFD, flags | FD_CLOEXEC) < 0) {
            r = -EBADF;
            break;
        }
        fds[i].fd = fd;
        socklen_t len = sizeof fds[i].socktype;
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &fds[i].socktype, &len) < 0)
            fds[i].socktype = 0;
        len = sizeof fds[i].family;
        if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &fds[i].family, &len) < 0)
            fds[i].family = 0;
    }
    if (r < 0) {
        free(fds);
        goto done;
    }
    *out = fds;
    r = (int)n;
done:
    if (unset_env)
        unset_listen_env();
    return r;
}
