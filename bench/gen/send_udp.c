/* SPDX-License-Identifier: MIT */
/* benchgen send-udp: sends prepared messages one per datagram to a loopback address at a fixed
 * rate for a bounded time (bursts of about 1 ms worth through sendmmsg, sleeping in between, so
 * the sender does not spin on a core the receiver needs). Runs of equal-length datagrams go as
 * one UDP GSO send each (UDP_SEGMENT): one message per datagram still, but the sender pays one
 * send path per run instead of per datagram and can reach rates a plain sendmmsg cannot on a
 * small machine. The kernel splits each run for a receiver, unless the receiver asks for UDP GRO
 * (recd and sink-udp do), which gets the run whole with its segment size. Prints one JSON line. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "benchgen.h"

#define BATCH 512
#define GSO_SEGMENTS 64 /* the kernel's limit per GSO send (UDP_MAX_SEGMENTS) on every version */
#define GSO_BYTES 65000 /* and a GSO send must fit one IP packet */
#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#define MAX_RATE 20e6
#define MAX_SECONDS 600.0

typedef struct dgram {
    size_t off, len;
} dgram;

static const char usage[] =
    "usage: benchgen send-udp --to 127.0.0.1:PORT --file FILE --framing wire|lines --rate R\n"
    "                         --seconds S [--no-gso]\n"
    "Sends min(R x S, messages in FILE) datagrams, one binary frame or one line (without its\n"
    "newline) each, at R datagrams per second. Equal-length neighbours go as one UDP GSO send\n"
    "unless --no-gso is given or the kernel refuses it.\n";

/* Splits the file into datagrams; returns the count or -1 for a malformed file. */
static long long index_file(const bg_file *f, bool wire, dgram *out, size_t max)
{
    size_t n = 0, pos = 0;
    while (pos < f->len && n < max) {
        size_t len;
        if (wire) {
            if (f->len - pos < 8)
                return -1;
            const uint8_t *h = f->data + pos;
            uint32_t body = (uint32_t)h[4] | (uint32_t)h[5] << 8 | (uint32_t)h[6] << 16 |
                            (uint32_t)h[7] << 24;
            if (body > f->len - pos - 8)
                return -1;
            len = 8 + (size_t)body;
            out[n].off = pos;
            out[n].len = len;
        } else {
            const uint8_t *nl = memchr(f->data + pos, '\n', f->len - pos);
            len = nl ? (size_t)(nl - (f->data + pos)) + 1 : f->len - pos;
            out[n].off = pos;
            out[n].len = nl ? len - 1 : len;
        }
        pos += len;
        n++;
    }
    return (long long)n;
}

static void sleep_until(double t)
{
    struct timespec ts;
    ts.tv_sec = (time_t)floor(t);
    ts.tv_nsec = (long)((t - floor(t)) * 1e9);
    if (ts.tv_nsec >= 1000000000L)
        ts.tv_nsec = 999999999L;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* One sendmmsg call's worth: each message carries one datagram, or with GSO a run of up to
 * GSO_SEGMENTS equal-length neighbours and a UDP_SEGMENT control message. */
typedef struct send_batch {
    struct mmsghdr msgs[BATCH];
    struct iovec iov[BATCH * GSO_SEGMENTS];
    size_t count[BATCH]; /* datagrams in each message */
    union {
        char buf[CMSG_SPACE(sizeof(uint16_t))];
        struct cmsghdr align;
    } ctl[BATCH];
} send_batch;

/* Fills b with datagrams dg[0..k) as messages; returns how many messages. */
static int build_batch(send_batch *b, const bg_file *f, const dgram *dg, size_t k, bool gso)
{
    size_t i = 0, used = 0;
    int m = 0;
    while (i < k && m < BATCH) {
        size_t run = 1, len = dg[i].len;
        if (gso)
            while (i + run < k && run < GSO_SEGMENTS && dg[i + run].len == len &&
                   (run + 1) * len <= GSO_BYTES)
                run++;
        struct msghdr *h = &b->msgs[m].msg_hdr;
        memset(h, 0, sizeof *h);
        h->msg_iov = &b->iov[used];
        h->msg_iovlen = run;
        for (size_t j = 0; j < run; j++) {
            b->iov[used + j].iov_base = (void *)(f->data + dg[i + j].off);
            b->iov[used + j].iov_len = dg[i + j].len;
        }
        if (run > 1) {
            h->msg_control = b->ctl[m].buf;
            h->msg_controllen = sizeof b->ctl[m].buf;
            struct cmsghdr *cm = CMSG_FIRSTHDR(h);
            cm->cmsg_level = SOL_UDP;
            cm->cmsg_type = UDP_SEGMENT;
            cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
            uint16_t seg = (uint16_t)len;
            memcpy(CMSG_DATA(cm), &seg, sizeof seg);
        }
        b->count[m] = run;
        used += run;
        i += run;
        m++;
    }
    return m;
}

int bg_cmd_send_udp(int argc, char **argv)
{
    static const struct option opts[] = {
        {"to", required_argument, NULL, 't'},      {"file", required_argument, NULL, 'f'},
        {"framing", required_argument, NULL, 'F'}, {"rate", required_argument, NULL, 'r'},
        {"seconds", required_argument, NULL, 's'}, {"no-gso", no_argument, NULL, 'G'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
    const char *to = NULL, *path = NULL, *framing = NULL;
    double rate = 0, seconds = 0;
    bool gso = true;
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 't': to = optarg; break;
        case 'f': path = optarg; break;
        case 'F': framing = optarg; break;
        case 'r': rate = atof(optarg); break;
        case 's': seconds = atof(optarg); break;
        case 'G': gso = false; break;
        case 'h': fputs(usage, stdout); return 0;
        default: fputs(usage, stderr); return 2;
        }
    }
    bool wire = framing && strcmp(framing, "wire") == 0;
    if (!to || !path || !framing || (!wire && strcmp(framing, "lines") != 0) || !(rate >= 1) ||
        rate > MAX_RATE || !(seconds > 0) || seconds > MAX_SECONDS) {
        fputs(usage, stderr);
        return 2;
    }
    struct sockaddr_in addr;
    if (bg_loopback_addr(to, &addr) < 0)
        return 2;
    bg_file f;
    if (bg_file_map(&f, path) < 0)
        return 1;
    size_t want = (size_t)(rate * seconds);
    dgram *dg = malloc((want ? want : 1) * sizeof *dg);
    if (!dg)
        return 1;
    long long have = index_file(&f, wire, dg, want);
    if (have < 0) {
        fprintf(stderr, "benchgen send-udp: %s is not a sequence of %s\n", path,
                wire ? "binary frames" : "lines");
        return 1;
    }
    size_t total = (size_t)have;
    if (total < want)
        fprintf(stderr, "benchgen send-udp: only %zu messages in %s (wanted %zu)\n", total, path, want);

    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int sndbuf = 4 << 20;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    if (fd < 0 || connect(fd, (const struct sockaddr *)&addr, sizeof addr) < 0) {
        fprintf(stderr, "benchgen send-udp: %s\n", strerror(errno));
        return 3;
    }
    static send_batch batch;
    size_t burst = (size_t)(rate / 1000.0); /* about 1 ms worth per wake-up */
    if (burst < 1)
        burst = 1;
    size_t sent = 0;
    uint64_t bytes = 0, errors = 0;
    double t0 = bg_now(), limit = t0 + seconds * 3 + 5;
    while (sent < total) {
        double now = bg_now();
        if (now > limit) {
            fprintf(stderr, "benchgen send-udp: could not keep up; stopping at the time limit\n");
            break;
        }
        size_t due = (size_t)((now - t0) * rate) + 1;
        if (due > total)
            due = total;
        if (due < sent + burst && due < total) {
            sleep_until(t0 + (double)(sent + burst) / rate);
            continue;
        }
        int m = build_batch(&batch, &f, dg + sent, due - sent, gso);
        int r = sendmmsg(fd, batch.msgs, (unsigned)m, 0);
        if (r < 0) {
            if (errno == EAGAIN || errno == ENOBUFS || errno == EINTR) {
                struct pollfd p = {.fd = fd, .events = POLLOUT};
                poll(&p, 1, 10);
                continue;
            }
            if (errno == ECONNREFUSED) { /* an ICMP from an earlier datagram: count, go on */
                errors++;
                continue;
            }
            if (gso && (errno == EINVAL || errno == EIO || errno == ENOPROTOOPT)) {
                fprintf(stderr, "benchgen send-udp: the kernel refused UDP GSO (%s); sending one "
                                "datagram per message\n", strerror(errno));
                gso = false;
                continue;
            }
            fprintf(stderr, "benchgen send-udp: sendmmsg: %s\n", strerror(errno));
            return 3;
        }
        for (int i = 0; i < r; i++)
            for (size_t j = 0; j < batch.count[i]; j++, sent++)
                bytes += dg[sent].len;
    }
    double t1 = bg_now();
    printf("{\"t_first\":%.6f,\"t_sent\":%.6f,\"sent\":%zu,\"bytes\":%llu,\"rate_target\":%.0f,"
           "\"rate_achieved\":%.0f,\"refused\":%llu,\"gso\":%s}\n",
           t0, t1, sent, (unsigned long long)bytes, rate,
           t1 > t0 ? (double)sent / (t1 - t0) : 0.0, (unsigned long long)errors,
           gso ? "true" : "false");
    close(fd);
    free(dg);
    bg_file_unmap(&f);
    return 0;
}
