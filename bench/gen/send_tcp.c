/* SPDX-License-Identifier: MIT */
/* benchgen send-tcp: replays prepared files over one or more TCP connections to a loopback
 * address as fast as the receiver takes them (non-blocking sockets, one poll loop), optionally
 * ends every connection with a sentinel line, then half-closes and waits for the receiver to
 * close. Prints one JSON line with monotonic timestamps for the harness, one per pass when the
 * files are replayed more than once on the same connections (--passes, the warm runs). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "benchgen.h"

#define MAX_CONNS 64
#define MAX_FILES_PER_CONN 8
#define CHUNK (256u * 1024u)

typedef struct conn {
    int fd;
    bg_file files[MAX_FILES_PER_CONN + 1]; /* the last slot holds the sentinel, if any */
    size_t nfiles, cur, off;
    bool sending, eof;
} conn;

static const char usage[] =
    "usage: benchgen send-tcp --to 127.0.0.1:PORT --conn FILE[,FILE...] [--conn ...]\n"
    "                         [--sentinel TEXT] [--wait-close SECONDS] [--passes N]\n"
    "Each --conn is one connection sending its files in order. --sentinel appends TEXT and a\n"
    "newline to every connection. The receiver must close within --wait-close (default 120 s)\n"
    "after our half-close. --passes N sends every connection's files (and sentinel) N times on\n"
    "the same connections: after each pass but the last it prints that pass's JSON line and\n"
    "waits for a line on standard input before starting the next.\n";

static int add_conn(conn *c, char *list)
{
    memset(c, 0, sizeof *c);
    c->fd = -1;
    for (char *save = NULL, *p = strtok_r(list, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        if (c->nfiles == MAX_FILES_PER_CONN) {
            fprintf(stderr, "benchgen send-tcp: at most %d files per connection\n",
                    MAX_FILES_PER_CONN);
            return -1;
        }
        if (bg_file_map(&c->files[c->nfiles], p) < 0)
            return -1;
        c->nfiles++;
    }
    return 0;
}

static int connect_one(conn *c, const struct sockaddr_in *to)
{
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->fd < 0 || connect(c->fd, (const struct sockaddr *)to, sizeof *to) < 0) {
        fprintf(stderr, "benchgen send-tcp: connect: %s\n", strerror(errno));
        return -1;
    }
    int fl = fcntl(c->fd, F_GETFL);
    fcntl(c->fd, F_SETFL, fl | O_NONBLOCK);
    c->sending = true;
    return 0;
}

/* Sends what the socket takes now; once everything is sent, clears c->sending and, on the last
 * pass, half-closes. 0, or -1 on a send error. */
static int pump(conn *c, uint64_t *bytes, bool last_pass)
{
    while (c->cur < c->nfiles) {
        const bg_file *f = &c->files[c->cur];
        if (c->off >= f->len) {
            c->cur++;
            c->off = 0;
            continue;
        }
        size_t n = f->len - c->off;
        if (n > CHUNK)
            n = CHUNK;
        ssize_t w = send(c->fd, f->data + c->off, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            if (errno == EINTR)
                continue;
            fprintf(stderr, "benchgen send-tcp: send: %s\n", strerror(errno));
            return -1;
        }
        c->off += (size_t)w;
        *bytes += (uint64_t)w;
    }
    c->sending = false;
    if (last_pass)
        shutdown(c->fd, SHUT_WR);
    return 0;
}

/* After the half-close: drain whatever the receiver says (an error reply) until it closes. */
static void drain(conn *c, size_t *reply_bytes)
{
    char buf[4096];
    for (;;) {
        ssize_t r = recv(c->fd, buf, sizeof buf, 0);
        if (r > 0) {
            if (*reply_bytes == 0)
                fprintf(stderr, "benchgen send-tcp: receiver replied: %.*s\n", (int)(r > 200 ? 200 : r),
                        buf);
            *reply_bytes += (size_t)r;
            continue;
        }
        if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
            c->eof = true;
        return;
    }
}

int bg_cmd_send_tcp(int argc, char **argv)
{
    static const struct option opts[] = {{"to", required_argument, NULL, 't'},
                                         {"conn", required_argument, NULL, 'c'},
                                         {"sentinel", required_argument, NULL, 's'},
                                         {"wait-close", required_argument, NULL, 'w'},
                                         {"passes", required_argument, NULL, 'p'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    static conn conns[MAX_CONNS];
    size_t n = 0;
    const char *to = NULL, *sentinel = NULL;
    double wait_close = 120;
    long passes = 1;
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 't': to = optarg; break;
        case 'c':
            if (n == MAX_CONNS) {
                fprintf(stderr, "benchgen send-tcp: at most %d connections\n", MAX_CONNS);
                return 2;
            }
            if (add_conn(&conns[n++], optarg) < 0)
                return 1;
            break;
        case 's': sentinel = optarg; break;
        case 'w': wait_close = atof(optarg); break;
        case 'p': passes = strtol(optarg, NULL, 10); break;
        case 'h': fputs(usage, stdout); return 0;
        default: fputs(usage, stderr); return 2;
        }
    }
    struct sockaddr_in addr;
    if (!to || n == 0 || !(wait_close > 0 && wait_close <= 3600) || passes < 1 || passes > 100) {
        fputs(usage, stderr);
        return 2;
    }
    if (bg_loopback_addr(to, &addr) < 0)
        return 2;
    char *sent_line = NULL;
    if (sentinel) {
        size_t l = strlen(sentinel);
        sent_line = malloc(l + 1);
        if (!sent_line)
            return 1;
        memcpy(sent_line, sentinel, l);
        sent_line[l] = '\n';
        for (size_t i = 0; i < n; i++) {
            conns[i].files[conns[i].nfiles].data = (const uint8_t *)sent_line;
            conns[i].files[conns[i].nfiles].len = l + 1;
            conns[i].nfiles++;
        }
    }
    for (size_t i = 0; i < n; i++)
        if (connect_one(&conns[i], &addr) < 0)
            return 3;

    uint64_t bytes = 0;
    size_t replied = 0;
    long pass = 1;
    double t_first = bg_now(), t_sent = 0, deadline = 0;
    double cpu_first = bg_cpu_seconds(); /* mapping the streams before t_first is not sending */
    size_t sending = n, open = n;
    struct pollfd pfd[MAX_CONNS];
    while (open > 0) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (conns[i].eof)
                continue;
            pfd[k].fd = conns[i].fd;
            pfd[k].events = conns[i].sending ? POLLOUT | POLLIN : POLLIN;
            pfd[k].revents = 0;
            k++;
        }
        if (poll(pfd, k, 100) < 0 && errno != EINTR) {
            perror("benchgen send-tcp: poll");
            return 3;
        }
        for (size_t i = 0; i < n; i++) {
            conn *cc = &conns[i];
            if (cc->eof)
                continue;
            if (cc->sending) {
                if (pump(cc, &bytes, pass == passes) < 0)
                    return 3;
                if (!cc->sending && --sending == 0) {
                    t_sent = bg_now();
                    deadline = t_sent + wait_close;
                }
            }
            drain(cc, &replied);
            if (cc->eof)
                open--;
        }
        if (sending == 0 && pass < passes) {
            /* The harness times each pass from its first byte: it says when the receiver has
             * stored this one. Replies are not read meanwhile; an error shows in the next send. */
            printf("{\"pass\":%ld,\"t_first\":%.6f,\"t_sent\":%.6f,\"bytes\":%llu,\"conns\":%zu,"
                   "\"cpu_s\":%.3f}\n",
                   pass, t_first, t_sent, (unsigned long long)bytes, n, bg_cpu_seconds() - cpu_first);
            fflush(stdout);
            char line[64];
            if (!fgets(line, sizeof line, stdin)) {
                fprintf(stderr, "benchgen send-tcp: standard input ended before pass %ld\n", pass + 1);
                return 3;
            }
            pass++;
            for (size_t i = 0; i < n; i++) {
                conns[i].cur = conns[i].off = 0;
                conns[i].sending = true;
            }
            sending = n;
            bytes = 0;
            t_first = bg_now();
            cpu_first = bg_cpu_seconds();
            continue;
        }
        if (sending == 0 && bg_now() > deadline) {
            fprintf(stderr, "benchgen send-tcp: receiver did not close within %.0f s\n", wait_close);
            break;
        }
    }
    double t_closed = bg_now();
    printf("{\"pass\":%ld,\"t_first\":%.6f,\"t_sent\":%.6f,\"t_closed\":%.6f,\"bytes\":%llu,"
           "\"conns\":%zu,\"reply_bytes\":%zu,\"unclosed\":%zu,\"cpu_s\":%.3f}\n",
           pass, t_first, t_sent, t_closed, (unsigned long long)bytes, n, replied, open,
           bg_cpu_seconds() - cpu_first);
    for (size_t i = 0; i < n; i++) {
        close(conns[i].fd);
        for (size_t f = 0; f < conns[i].nfiles - (sentinel ? 1 : 0); f++)
            bg_file_unmap(&conns[i].files[f]);
    }
    free(sent_line);
    return replied || open ? 1 : 0;
}
