/* SPDX-License-Identifier: MIT */
/* systemd integration without libsystemd: the readiness/watchdog notify protocol (one datagram to
 * $NOTIFY_SOCKET), watchdog discovery (WATCHDOG_USEC/WATCHDOG_PID) and socket activation
 * (LISTEN_FDS/LISTEN_PID/LISTEN_FDNAMES). Everything is a no-op when not started by systemd. */
#ifndef RECD_DAEMON_SD_NOTIFY_H
#define RECD_DAEMON_SD_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>

#if defined(__GNUC__)
#define RECD_SD_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define RECD_SD_PRINTF(a, b)
#endif

#define RECD_SD_LISTEN_FDS_START 3 /* socket activation hands over fds 3, 4, ... */
#define RECD_SD_STATE_MAX 2048     /* longest notify message we send */


int recd_sd_notify_ready(void);                  /* READY=1: config loaded, listeners bound */
int recd_sd_notify_reloading(void);              /* RELOADING=1 + MONOTONIC_USEC=now; then READY=1 */
int recd_sd_notify_stopping(void);               /* STOPPING=1: first thing on SIGTERM */
int recd_sd_notify_watchdog(void);               /* WATCHDOG=1: keep-alive from the event loop */
int recd_sd_notify_extend_timeout(uint64_t usec); /* EXTEND_TIMEOUT_USEC=: a long final flush */
/* STATUS=...: free text for `systemctl status`; line breaks become spaces. */
int recd_sd_notify_status(const char *fmt, ...) RECD_SD_PRINTF(1, 2);

/* Watchdog period requested by systemd (WatchdogSec=). Returns 1 and sets *usec when the watchdog is
 * on for this process, 0 when it is off (unset, or WATCHDOG_PID names another process), -EINVAL
 * when a variable is malformed. Send WATCHDOG=1 about every *usec / 2. */
int recd_sd_watchdog_usec(uint64_t *usec);

typedef struct recd_sd_listen_fd {
    int fd;
    int family;    /* AF_INET, AF_INET6, AF_UNIX; 0 when the fd is not a socket */
    int socktype;  /* SOCK_STREAM, SOCK_DGRAM, ...; 0 when the fd is not a socket */
    char name[256]; /* FileDescriptorName= of the socket unit, "unknown" when not given */
} recd_sd_listen_fd;

#define RECD_SD_LISTEN_FDS_MAX 1024

/* Sockets passed by socket activation. Returns their number (0 when not socket-activated or
 * LISTEN_PID is another process) and a malloc'd array in *fds (NULL when 0), or a negative errno:
 * -EINVAL for malformed variables or a name count that does not match, -EBADF when a passed fd is
 * not open. The fds get FD_CLOEXEC. unset_env removes the variables so children do not see them. */
int recd_sd_listen_fds(bool unset_env, recd_sd_listen_fd **fds);

#endif
