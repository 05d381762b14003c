/* SPDX-License-Identifier: MIT */
/* MPQ archives read through the StormLib worker (sc2_mpq_worker.c): one worker per process,
 * forked on the first replay and kept for the next ones, because a fork per replay cost about as
 * much as decoding it. A worker that crashes, stalls, answers out of turn or meets a damaged
 * archive is killed and the next replay gets a fresh one, so damage cannot reach a later replay
 * through a worker that saw it; every worker is also retired after WORKER_REQUESTS replays. */
#include "formats/sc2/sc2_mpq.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "formats/sc2/sc2_mpq_worker.h"

#define WORKER_REQUESTS 64
#define READ_CHUNK (256u << 10)

static int timeout_ms = SC2_MPQ_TIMEOUT_MS;

void sc2_mpq_set_timeout_ms(int ms)
{
    timeout_ms = ms > 0 ? ms : SC2_MPQ_TIMEOUT_MS;
}

static struct {
    pid_t pid;   /* 0: no worker */
    pid_t owner; /* the process that forked it: a fork of that process must not use it */
    int fd;
    unsigned served;
} worker = {0, 0, -1, 0};
static pthread_mutex_t worker_lock = PTHREAD_MUTEX_INITIALIZER;

int sc2_mpq_worker_pid(void)
{
    pthread_mutex_lock(&worker_lock);
    int pid = worker.owner == getpid() ? (int)worker.pid : 0;
    pthread_mutex_unlock(&worker_lock);
    return pid;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int worker_end(bool let_exit, int64_t deadline);

/* At exit the worker is ended and reaped, so that its CPU time is counted as this process's
 * child's (time, getrusage) and no orphan outlives a short tool run. A worker busy in another
 * thread is left to end on its own when the socket closes. */
static void worker_end_at_exit(void)
{
    if (pthread_mutex_trylock(&worker_lock) != 0)
        return;
    if (worker.pid && worker.owner == getpid()) {
        shutdown(worker.fd, SHUT_RDWR); /* the worker reads the end of its input and exits */
        worker_end(true, now_ms() + 1000);
    }
    pthread_mutex_unlock(&worker_lock);
}

static int worker_start(void)
{
    static bool exit_hook;
    if (!exit_hook)
        exit_hook = atexit(worker_end_at_exit) == 0;
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0)
        return -errno;
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        return -e;
    }
    if (pid == 0) {
        close(fds[0]);
        sc2_mpq_worker_main(fds[1]);
    }
    close(fds[1]);
    worker.pid = pid;
    worker.owner = getpid();
    worker.fd = fds[0];
    worker.served = 0;
    return 0;
}

/* Ends the worker and returns its wait status. A worker that closed its end mid-reply is
 * exiting: it gets until the deadline to finish, so that its own exit status or signal is the one
 * reported; any other is killed at once. */
static int worker_end(bool let_exit, int64_t deadline)
{
    int wstatus = 0;
    if (worker.pid > 0 && worker.owner == getpid()) {
        if (!let_exit)
            kill(worker.pid, SIGKILL);
        for (;;) {
            pid_t r = waitpid(worker.pid, &wstatus, let_exit ? WNOHANG : 0);
            if (r == worker.pid || (r < 0 && errno != EINTR))
                break;
            if (r == 0 && now_ms() < deadline) {
                nanosleep(&(struct timespec){0, 1000000}, NULL);
            } else if (r == 0) {
                let_exit = false;
                kill(worker.pid, SIGKILL);
            }
        }
    }
    if (worker.fd >= 0)
        close(worker.fd);
    worker.pid = 0;
    worker.fd = -1;
    return wstatus;
}

static int send_until(int fd, const void *data, size_t len, int64_t deadline)
{
    const uint8_t *p = data;
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
            return -EPIPE;
        int64_t left = deadline - now_ms();
        struct pollfd pfd = {fd, POLLOUT, 0};
        if (left <= 0 || (poll(&pfd, 1, (int)left) == 0))
            return -ETIMEDOUT;
    }
    return 0;
}

static int send_request(const uint8_t *buf, size_t len, const char *const *wanted,
                        size_t nwanted, size_t cap, int64_t deadline)
{
    uint8_t head[SC2_MPQ_REQUEST_HEAD + SC2_MPQ_MAX_WANTED * (4 + SC2_MPQ_NAME_BYTES)] = {'Q'};
    sc2_mpq_put32(head + 1, (uint32_t)len);
    sc2_mpq_put32(head + 5, (uint32_t)nwanted);
    sc2_mpq_put32(head + 9, (uint32_t)cap);
    sc2_mpq_put32(head + 13, (uint32_t)(timeout_ms / 1000 + 2)); /* outlasts our own deadline */
    size_t at = SC2_MPQ_REQUEST_HEAD;
    for (size_t i = 0; i < nwanted; i++) {
        size_t n = strlen(wanted[i]);
        sc2_mpq_put32(head + at, (uint32_t)n);
        memcpy(head + at + 4, wanted[i], n);
        at += 4 + n;
    }
    int rc = send_until(worker.fd, head, at, deadline);
    return rc < 0 ? rc : send_until(worker.fd, buf, len, deadline);
}

/* Reads records up to the one that completes the reply. 0, -EPIPE when the worker closed its end
 * first, -EPROTO when it sent more than the reply, -ETIMEDOUT, -EFBIG past max bytes, -ENOMEM. */
static int read_reply(recd_buf *in, size_t max, int64_t deadline)
{
    size_t scan = 0;
    for (;;) {
        while (in->len - scan >= SC2_MPQ_RECORD_HEAD) {
            uint32_t body = sc2_mpq_le32(in->data + scan + 9);
            if (body > in->len - scan - SC2_MPQ_RECORD_HEAD)
                break;
            if (in->data[scan] == 'Z') /* and nothing after it: a reply is one request's */
                return in->len == scan + SC2_MPQ_RECORD_HEAD + body ? 0 : -EPROTO;
            scan += SC2_MPQ_RECORD_HEAD + body;
        }
        int64_t left = deadline - now_ms();
        if (left <= 0)
            return -ETIMEDOUT;
        struct pollfd p = {worker.fd, POLLIN, 0};
        int n = poll(&p, 1, (int)left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -ETIMEDOUT;
        if (in->len >= max)
            return -EFBIG;
        int rc = recd_buf_reserve(in, READ_CHUNK);
        if (rc < 0)
            return rc;
        ssize_t got = read(worker.fd, in->data + in->len, READ_CHUNK);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return got < 0 && errno != ECONNRESET ? -errno : -EPIPE;
        in->len += (size_t)got;
    }
}

/* One request and its reply. A kept worker that ends before it acknowledged the request died
 * idle (killed from outside): it is replaced once without blaming the replay. */
static int ask_worker(const uint8_t *buf, size_t len, const char *const *wanted, size_t nwanted,
                      size_t cap, recd_buf *in, int *wstatus)
{
    int64_t deadline = now_ms() + timeout_ms;
    size_t max = nwanted * (cap + 512) + SC2_MPQ_MAX_NAMES * 300 + 4096;
    if (worker.pid && worker.owner != getpid()) { /* inherited through a fork: not ours */
        close(worker.fd);
        worker.pid = 0;
        worker.fd = -1;
    }
    struct pollfd idle = {worker.fd, POLLIN, 0};
    if (worker.pid && poll(&idle, 1, 0) != 0)
        worker_end(false, 0); /* it spoke out of turn, or died while idle */
    int rc;
    for (int attempt = 0;; attempt++) {
        bool fresh = worker.pid == 0;
        if (fresh && (rc = worker_start()) < 0)
            return rc;
        rc = send_request(buf, len, wanted, nwanted, cap, deadline);
        if (rc == 0)
            rc = read_reply(in, max, deadline);
        if (rc == -EPIPE && !fresh && in->len < SC2_MPQ_RECORD_HEAD && attempt == 0) { /* no 'A' */
            worker_end(false, deadline);
            continue;
        }
        break;
    }
    if (rc < 0)
        *wstatus = worker_end(rc == -EPIPE, deadline);
    return rc;
}

/* Takes the records apart; true when the worker said the reply is complete. *clean stays true
 * while the archive opened and every wanted member was read or absent. */
static bool parse_records(const recd_buf *in, size_t nwanted, sc2_extract *out, char *err,
                          size_t errlen, int *rc, bool *clean)
{
    size_t pos = 0;
    while (in->len - pos >= SC2_MPQ_RECORD_HEAD) {
        const uint8_t *h = in->data + pos;
        uint32_t index = sc2_mpq_le32(h + 1), len = sc2_mpq_le32(h + 9);
        int32_t status = (int32_t)sc2_mpq_le32(h + 5);
        if (len > in->len - pos - SC2_MPQ_RECORD_HEAD)
            break; /* cut by the worker's end */
        const uint8_t *body = h + SC2_MPQ_RECORD_HEAD;
        pos += SC2_MPQ_RECORD_HEAD + len;
        if (h[0] == 'Z')
            return true;
        if (h[0] == 'N' && recd_buf_append(&out->names, body, len) == 0 &&
            recd_buf_append(&out->names, "", 1) == 0)
            out->nnames++;
        if (h[0] == 'E') {
            snprintf(err, errlen, "%.*s", (int)len, (const char *)body);
            *rc = -EBADMSG;
            *clean = false;
        }
        if (h[0] == 'D' && index < nwanted) {
            out->status[index] = status;
            if (status != 0 && status != -ENOENT)
                *clean = false;
            recd_buf_reset(&out->data[index]);
            if (recd_buf_append(&out->data[index], body, len) < 0)
                *rc = -ENOMEM;
        }
    }
    return false;
}

int sc2_mpq_extract(const uint8_t *buf, size_t len, const char *const *wanted, size_t nwanted,
                    size_t cap, sc2_extract *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (nwanted > SC2_MPQ_MAX_WANTED || cap > UINT32_MAX)
        return -EINVAL;
    if (len > UINT32_MAX)
        return -EFBIG;
    for (size_t i = 0; i < nwanted; i++) {
        if (strlen(wanted[i]) >= SC2_MPQ_NAME_BYTES)
            return -EINVAL;
        out->status[i] = -ECANCELED;
    }
    int rc = sc2_mpq_worker_load(err, errlen);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&worker_lock);
    recd_buf in = {0};
    int wstatus = 0, parse_rc = 0;
    rc = ask_worker(buf, len, wanted, nwanted, cap, &in, &wstatus);
    bool clean = true;
    bool done = parse_records(&in, nwanted, out, err, errlen, &parse_rc, &clean);
    if (rc == 0 && (!clean || ++worker.served >= WORKER_REQUESTS))
        worker_end(false, 0); /* damage may have touched it: the next replay gets a fresh one */
    pthread_mutex_unlock(&worker_lock);
    recd_buf_free(&in);
    if (rc == -ENOMEM || parse_rc == -ENOMEM)
        return -ENOMEM;
    if (parse_rc < 0)
        return parse_rc;
    if (rc == -EPROTO) {
        snprintf(err, errlen, "the StormLib worker sent more than one reply (killed; the next "
                 "replay gets a fresh one)");
        return -EBADMSG;
    }
    if (rc == -ETIMEDOUT || !done) {
        const char *where =
            out->nnames ? "the damaged MPQ archive" : "the damaged MPQ archive's tables";
        for (size_t i = 0; i < nwanted; i++)
            if (out->status[i] == -ECANCELED) {
                where = wanted[i];
                break;
            }
        if (rc == -ETIMEDOUT)
            snprintf(err, errlen, "StormLib did not finish reading %s within %d ms (damaged "
                     "compressed data?)", where, timeout_ms);
        else
            snprintf(err, errlen, "StormLib stopped on %s (%s %d)", where,
                     WIFSIGNALED(wstatus) ? "signal" : "exit status",
                     WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : WEXITSTATUS(wstatus));
        return -EBADMSG;
    }
    return rc < 0 ? rc : 0;
}

void sc2_extract_free(sc2_extract *x)
{
    recd_buf_free(&x->names);
    for (size_t i = 0; i < SC2_MPQ_MAX_WANTED; i++)
        recd_buf_free(&x->data[i]);
}
