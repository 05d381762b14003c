/* SPDX-License-Identifier: MIT */
/* UDP input: datagrams read in recvmmsg batches, each decoded on its own (all or nothing). The
 * socket asks for UDP GRO, so a run of equal-length datagrams from one sender can arrive as one
 * buffer with its segment size, split here: one receive and one kernel buffer for up to 64 KiB of
 * datagrams instead of one each. A bad datagram is counted and dropped; UDP has no backpressure,
 * so loss shows in the sequence-number metrics and in the kernel's drop count. */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#if defined(__linux__)
#include <linux/sock_diag.h>
#endif

#include "listener.h"
#include "support/log.h"

#define UDP_SLOTS 20          /* datagrams (or GRO runs) per recvmmsg */
#define UDP_CALLS_PER_WAKE 32 /* then the loop serves its other handles */

struct listener_udp_rx {
    struct mmsghdr msgs[UDP_SLOTS];
    struct iovec iov[UDP_SLOTS];
    struct sockaddr_storage from[UDP_SLOTS];
    union { /* aligned for cmsghdr */
        struct cmsghdr align;
        char bytes[CMSG_SPACE(sizeof(int))];
    } control[UDP_SLOTS];
    uint8_t data[UDP_SLOTS][LISTENER_UDP_DATAGRAM_MAX];
};

static void drop(recd_listener *l, session_input *in, recd_m_reason reason, const char *why)
{
    recd_metrics_decode_error(l->ingest->metrics, reason);
    log_warn("%s: datagram dropped: %s", session_input_peer(in), why);
}

static void process(recd_listener *l, const uint8_t *data, size_t len, const struct sockaddr *addr,
                    bool truncated)
{
    recd_ingest *g = l->ingest;
    session_input in = {.sessions = g->sessions,
                        .transport = RECD_M_UDP,
                        .datagram = true,
                        .peer_addr = addr, /* formatted only if a line is logged */
                        .tally = &l->udp_tally};
    if (truncated || len > g->cfg->limits.max_frame) {
        char why[128];
        snprintf(why, sizeof why, "%s than limits.max_frame (%llu bytes)",
                 truncated ? "truncated: larger" : "larger",
                 (unsigned long long)g->cfg->limits.max_frame);
        drop(l, &in, RECD_M_TOO_LARGE, why);
        return;
    }
    recd_wire_decoder_config dc = {.encoding = l->cfg.encoding,
                                   .max_frame = (size_t)g->cfg->limits.max_frame,
                                   .format_of = session_format_of,
                                   .on_msg = listener_on_msg,
                                   .ctx = &in,
                                   .on_rec_state = listener_on_rec_state};
    char err[512];
    err[0] = 0; /* not the whole array: this runs for every datagram */
    recd_wire_reason noted;
    int rc = recd_wire_decode_datagram_noted(&dc, data, len, err, sizeof err, &noted);
    listener_account_end(&in, len);
    if (rc < 0)
        drop(l, &in, listener_error_reason(&in, rc, noted), err);
}

/* The sender's segment size when the kernel joined datagrams (UDP GRO), else 0. */
static size_t gro_segment(struct msghdr *mh)
{
#if defined(UDP_GRO)
    for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c))
        if (c->cmsg_level == IPPROTO_UDP && c->cmsg_type == UDP_GRO &&
            c->cmsg_len >= CMSG_LEN(sizeof(int))) {
            int size;
            memcpy(&size, CMSG_DATA(c), sizeof size);
            return size > 0 ? (size_t)size : 0;
        }
#else
    (void)mh;
#endif
    return 0;
}

/* One slot: a datagram, or a GRO run split back into the datagrams that were sent. */
static size_t process_slot(recd_listener *l, struct mmsghdr *m, const uint8_t *data)
{
    struct msghdr *mh = &m->msg_hdr;
    const struct sockaddr *from = (const struct sockaddr *)mh->msg_name;
    bool truncated = (mh->msg_flags & MSG_TRUNC) != 0;
    size_t len = m->msg_len, seg = gro_segment(mh);
    if (len > LISTENER_UDP_DATAGRAM_MAX)
        len = LISTENER_UDP_DATAGRAM_MAX;
    if (!seg || seg >= len) {
        process(l, data, len, from, truncated);
        return 1;
    }
    size_t n = 0;
    for (size_t off = 0; off < len; off += seg, n++) {
        size_t part = len - off < seg ? len - off : seg;
        process(l, data + off, part, from, truncated && off + part == len);
    }
    recd_metric_add(l->ingest->metrics->udp_joined_datagrams_total, 0, n);
    return n;
}

/* Reads what is queued, in at most max_calls recvmmsg calls; returns the datagrams read. */
static size_t read_queued(recd_listener *l, int fd, size_t max_calls)
{
    listener_udp_rx *rx = l->udp_rx;
    size_t datagrams = 0;
    for (size_t call = 0; call < max_calls;) {
        for (unsigned i = 0; i < UDP_SLOTS; i++) { /* the kernel overwrote them */
            struct msghdr *mh = &rx->msgs[i].msg_hdr;
            mh->msg_namelen = sizeof rx->from[i];
            mh->msg_controllen = sizeof rx->control[i];
            mh->msg_flags = 0;
        }
        int n = recvmmsg(fd, rx->msgs, UDP_SLOTS, MSG_DONTWAIT, NULL);
        if (n < 0 && errno == EINTR)
            continue;
        call++;
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                log_warn("%s: receive error: %s", l->bound, strerror(errno));
            break;
        }
        if (l->ingest->taking_datagrams)
            for (int i = 0; i < n; i++)
                datagrams += process_slot(l, &rx->msgs[i], rx->data[i]);
        listener_tally_publish(l->ingest->metrics, RECD_M_UDP, &l->udp_tally);
        if (n < (int)UDP_SLOTS)
            break;
    }
    return datagrams;
}

static void on_readable(uv_poll_t *h, int status, int events)
{
    recd_listener *l = h->data;
    uv_os_fd_t fd;
    if (status < 0) {
        log_warn("%s: receive error: %s", l->bound, uv_strerror(status));
        return;
    }
    if ((events & UV_READABLE) && !l->closing && uv_fileno(&l->h.handle, &fd) == 0)
        (void)read_queued(l, fd, UDP_CALLS_PER_WAKE);
}

static void drain(recd_listener *l)
{
    uv_os_fd_t fd;
    if (l->cfg.transport != RECD_WIRE_UDP || l->closing || uv_fileno(&l->h.handle, &fd) < 0)
        return;
    /* Whatever the kernel queued before the stop is recorded too (bounded: a sender that keeps
     * going cannot hold the shutdown). */
    size_t n = read_queued(l, fd, LISTENER_UDP_DRAIN_MAX / UDP_SLOTS);
    if (n)
        log_info("%s: %zu datagrams read from the socket queue at shutdown", l->bound, n);
}

/* The socket's count of datagrams the kernel dropped (the counter SO_RXQ_OVFL would attach to
 * each datagram), read with SO_MEMINFO from the sweep: nothing is spent on it per datagram. */
static bool kernel_drops(recd_listener *l, uint32_t *drops)
{
#if defined(SO_MEMINFO)
    uv_os_fd_t fd;
    uint32_t mem[SK_MEMINFO_VARS];
    socklen_t len = sizeof mem;
    if (l->cfg.transport != RECD_WIRE_UDP || l->closing || uv_fileno(&l->h.handle, &fd) < 0 ||
        getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mem, &len) < 0 || len <= SK_MEMINFO_DROPS * sizeof *mem)
        return false;
    *drops = mem[SK_MEMINFO_DROPS];
    return true;
#else
    (void)l;
    (void)drops;
    return false;
#endif
}

void ingest_count_udp_drops(recd_ingest *g)
{
    recd_listener *l;
    LIST_FOREACH(l, &g->listeners, link) {
        uint32_t now;
        if (!kernel_drops(l, &now))
            continue;
        recd_metric_add(g->metrics->udp_kernel_drops_total, 0, (uint32_t)(now - l->udp_kernel_drops));
        l->udp_kernel_drops = now;
    }
}

void ingest_drain_datagrams(recd_ingest *g)
{
    recd_listener *l;
    LIST_FOREACH(l, &g->listeners, link)
        drain(l);
    ingest_count_udp_drops(g);
}

/* limits.udp_receive_buffer: SO_RCVBUFFORCE passes net.core.rmem_max when recd may (root or
 * CAP_NET_ADMIN), else SO_RCVBUF gets what the kernel allows. */
static void size_receive_buffer(recd_listener *l)
{
    uint64_t want64 = l->ingest->cfg->limits.udp_receive_buffer;
    int want = want64 > INT_MAX / 2 ? INT_MAX / 2 : (int)want64, got = 0;
    socklen_t len = sizeof got;
    uv_os_fd_t fd;
    if (uv_fileno(&l->h.handle, &fd) < 0)
        return;
#if defined(SO_RCVBUFFORCE)
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &want, sizeof want) < 0)
#endif
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &want, sizeof want);
    if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &len) < 0)
        return;
    /* Linux reports twice the size asked (the other half is its bookkeeping). */
    if (got / 2 < want)
        log_warn("%s: receive buffer is %d bytes, not limits.udp_receive_buffer's %d (raise "
                 "net.core.rmem_max); bursts may be dropped by the kernel",
                 l->cfg.url, got / 2, want);
}


/* Asks the kernel to join runs of datagrams (UDP GRO); without it each slot holds one datagram. */
static void ask_for_gro(int fd)
{
#if defined(UDP_GRO)
    int on = 1;
    if (setsockopt(fd, IPPROTO_UDP, UDP_GRO, &on, sizeof on) < 0)
        log_debug("UDP GRO not available (%s): one datagram per receive", strerror(errno));
#else
    (void)fd;
#endif
}

int listener_udp_start(recd_listener *l)
{
    uv_os_fd_t fd;
    l->h.handle.data = l;
    int rc = uv_fileno(&l->h.handle, &fd);
    if (rc < 0)
        return rc;
    listener_udp_rx *rx = malloc(sizeof *rx);
    if (!rx)
        return -ENOMEM;
    for (unsigned i = 0; i < UDP_SLOTS; i++) {
        rx->iov[i] = (struct iovec){.iov_base = rx->data[i], .iov_len = sizeof rx->data[i]};
        rx->msgs[i].msg_hdr = (struct msghdr){.msg_name = &rx->from[i],
                                              .msg_iov = &rx->iov[i],
                                              .msg_iovlen = 1,
                                              .msg_control = rx->control[i].bytes};
    }
    l->udp_rx = rx;
    size_receive_buffer(l);
    ask_for_gro(fd);
    (void)kernel_drops(l, &l->udp_kernel_drops); /* drops before recd owned it are not its own */
    /* libuv's receive path hands over no control messages (GRO's segment size), so a poll
     * handle reads the socket; the udp handle keeps it (bind, address, close). */
    if ((rc = uv_poll_init_socket(l->h.handle.loop, &l->udp_poll, fd)) < 0)
        return rc;
    l->udp_poll.data = l;
    l->udp_polling = true;
    return uv_poll_start(&l->udp_poll, UV_READABLE, on_readable);
}

static void on_poll_closed(uv_handle_t *h)
{
    recd_listener *l = h->data;
    uv_close(&l->h.handle, l->udp_closed);
}

void listener_udp_close(recd_listener *l, uv_close_cb done)
{
    if (!l->udp_polling) {
        uv_close(&l->h.handle, done);
        return;
    }
    /* libuv runs close callbacks newest first, so the socket's close waits for the reader's. */
    l->udp_polling = false;
    l->udp_closed = done;
    uv_close((uv_handle_t *)&l->udp_poll, on_poll_closed);
}
