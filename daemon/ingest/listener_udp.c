/* SPDX-License-Identifier: MIT */
/* UDP input: datagrams read in recvmmsg batches into one large per-listener buffer, each decoded
 * on its own (all or nothing). A bad datagram is counted and dropped; UDP has no backpressure, so
 * loss shows in the sequence-number metrics. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#if defined(__linux__)
#include <linux/sock_diag.h>
#endif

#include "listener.h"
#include "support/log.h"

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    recd_listener *l = h->data;
    (void)suggested;
    /* One persistent buffer per listener; libuv fills it with a batch of datagrams. */
    *buf = uv_buf_init((char *)l->udp_buf, LISTENER_UDP_BUFFER);
}

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
    char err[512] = "";
    int rc = recd_wire_decode_datagram(&dc, data, len, err, sizeof err);
    listener_account_end(&in, len);
    if (rc < 0)
        drop(l, &in, listener_error_reason(&in, rc, err), err);
}

static void recv_cb(uv_udp_t *h, ssize_t nread, const uv_buf_t *buf, const struct sockaddr *addr,
                    unsigned flags)
{
    recd_listener *l = h->data;
    if (flags & UV_UDP_MMSG_FREE) { /* the end of a recvmmsg batch (the buffer is ours) */
        listener_tally_publish(l->ingest->metrics, RECD_M_UDP, &l->udp_tally);
        return;
    }
    if (nread < 0) {
        log_warn("%s: receive error: %s", l->bound, uv_strerror((int)nread));
        return;
    }
    if (nread == 0 || !addr || !l->ingest->taking_datagrams)
        return;
    process(l, (const uint8_t *)buf->base, (size_t)nread, addr, (flags & UV_UDP_PARTIAL) != 0);
    if (!(flags & UV_UDP_MMSG_CHUNK)) /* read on its own: no batch end follows */
        listener_tally_publish(l->ingest->metrics, RECD_M_UDP, &l->udp_tally);
}

static void drain(recd_listener *l)
{
    uv_os_fd_t fd;
    if (l->cfg.transport != RECD_WIRE_UDP || l->closing || uv_fileno(&l->h.handle, &fd) < 0)
        return;
    /* Whatever the kernel queued before the stop is recorded too (bounded: a sender that keeps
     * going cannot hold the shutdown). */
    size_t n = 0;
    for (; n < LISTENER_UDP_DRAIN_MAX; n++) {
        struct sockaddr_storage ss;
        socklen_t alen = sizeof ss;
        ssize_t r = recvfrom(fd, l->udp_buf, LISTENER_UDP_DATAGRAM_MAX, MSG_DONTWAIT | MSG_TRUNC,
                             (struct sockaddr *)&ss, &alen);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        bool truncated = (size_t)r > LISTENER_UDP_DATAGRAM_MAX;
        process(l, l->udp_buf, truncated ? LISTENER_UDP_DATAGRAM_MAX : (size_t)r,
                (const struct sockaddr *)&ss, truncated);
    }
    listener_tally_publish(l->ingest->metrics, RECD_M_UDP, &l->udp_tally);
    if (n)
        log_info("%s: %zu datagrams read from the socket queue at shutdown", l->bound, n);
}

/* The socket's count of datagrams the kernel dropped (the counter SO_RXQ_OVFL reports with each
 * datagram; libuv's recvmmsg hands over no control messages, so it is read with SO_MEMINFO). */
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

int listener_udp_start(recd_listener *l)
{
    l->h.handle.data = l;
    l->udp_buf = malloc(LISTENER_UDP_BUFFER);
    if (!l->udp_buf)
        return -ENOMEM;
    size_receive_buffer(l);
    (void)kernel_drops(l, &l->udp_kernel_drops); /* drops before recd owned it are not its own */
    return uv_udp_recv_start(&l->h.udp, alloc_cb, recv_cb);
}
