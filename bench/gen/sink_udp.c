/* SPDX-License-Identifier: MIT */
/* benchgen sink-udp: the raw UDP socket-to-file limit. Binds 127.0.0.1:PORT, drains datagrams
 * with recvmmsg in batches (socat reads one datagram per syscall and is no fair limit) and
 * appends them back to back to a file through a large buffer, until SIGTERM or SIGINT. It asks
 * for UDP GRO, as recd does, so runs of equal-length datagrams arrive joined for both. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "benchgen.h"

#define BATCH 256
#define DGRAM_MAX 65536
#define OUT_BUFFER (1u << 20)

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
    (void)sig;
    stopping = 1;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Datagrams in one slot: several when the kernel joined a run of them (UDP GRO). */
static unsigned joined_count(struct mmsghdr *m)
{
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m->msg_hdr); c; c = CMSG_NXTHDR(&m->msg_hdr, c))
        if (c->cmsg_level == IPPROTO_UDP && c->cmsg_type == UDP_GRO) {
            int seg;
            memcpy(&seg, CMSG_DATA(c), sizeof seg);
            if (seg > 0)
                return (m->msg_len + (unsigned)seg - 1) / (unsigned)seg;
        }
    return 1;
}

int bg_cmd_sink_udp(int argc, char **argv)
{
    static const struct option opts[] = {{"listen", required_argument, NULL, 'l'},
                                         {"out", required_argument, NULL, 'o'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *listen_at = NULL, *out = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'l': listen_at = optarg; break;
        case 'o': out = optarg; break;
        case 'h': puts("usage: benchgen sink-udp --listen 127.0.0.1:PORT --out FILE"); return 0;
        default: return 2;
        }
    }
    struct sockaddr_in addr;
    if (!listen_at || !out || bg_loopback_addr(listen_at, &addr) < 0) {
        fputs("usage: benchgen sink-udp --listen 127.0.0.1:PORT --out FILE\n", stderr);
        return 2;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: recvmmsg returns EINTR and we stop */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int rcvbuf = 8 << 20; /* what recd asks for; the kernel caps it at net.core.rmem_max */
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    int on = 1;
    setsockopt(fd, IPPROTO_UDP, UDP_GRO, &on, sizeof on);
    if (fd < 0 || bind(fd, (const struct sockaddr *)&addr, sizeof addr) < 0) {
        fprintf(stderr, "benchgen sink-udp: bind: %s\n", strerror(errno));
        return 3;
    }
    int ofd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    uint8_t *bufs = malloc((size_t)BATCH * DGRAM_MAX);
    uint8_t *obuf = malloc(OUT_BUFFER + DGRAM_MAX);
    if (ofd < 0 || !bufs || !obuf) {
        fprintf(stderr, "benchgen sink-udp: %s\n", ofd < 0 ? strerror(errno) : "out of memory");
        return 3;
    }
    static struct mmsghdr msgs[BATCH];
    static struct iovec iov[BATCH];
    static union {
        struct cmsghdr align;
        char bytes[CMSG_SPACE(sizeof(int))];
    } control[BATCH];
    size_t olen = 0;
    unsigned long long datagrams = 0, bytes = 0;
    while (!stopping) {
        for (int i = 0; i < BATCH; i++) {
            iov[i].iov_base = bufs + (size_t)i * DGRAM_MAX;
            iov[i].iov_len = DGRAM_MAX;
            memset(&msgs[i].msg_hdr, 0, sizeof msgs[i].msg_hdr);
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
            msgs[i].msg_hdr.msg_control = control[i].bytes;
            msgs[i].msg_hdr.msg_controllen = sizeof control[i].bytes;
        }
        int n = recvmmsg(fd, msgs, BATCH, MSG_WAITFORONE, NULL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "benchgen sink-udp: recvmmsg: %s\n", strerror(errno));
            return 3;
        }
        for (int i = 0; i < n; i++) {
            datagrams += joined_count(&msgs[i]);
            memcpy(obuf + olen, iov[i].iov_base, msgs[i].msg_len);
            olen += msgs[i].msg_len;
            bytes += msgs[i].msg_len;
            if (olen >= OUT_BUFFER) {
                if (write_all(ofd, obuf, olen) < 0)
                    return 3;
                olen = 0;
            }
        }
    }
    if (write_all(ofd, obuf, olen) < 0 || close(ofd) < 0)
        return 3;
    printf("{\"datagrams\":%llu,\"bytes\":%llu}\n", datagrams, bytes);
    free(bufs);
    free(obuf);
    close(fd);
    return 0;
}
