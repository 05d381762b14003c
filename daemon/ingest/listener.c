/* SPDX-License-Identifier: MIT */
/* Listener setup and teardown: binding TCP, UDP and Unix sockets from the configuration, adopting
 * sockets passed by systemd, naming what is bound, and closing (see listener.h). */
#include "listener.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "support/log.h"
#include "support/peer_name.h"

static void describe(recd_listener *l)
{
    if (l->cfg.transport == RECD_WIRE_UNIX) {
        snprintf(l->bound, sizeof l->bound, "unix://%s", l->cfg.path);
        return;
    }
    bool udp = l->cfg.transport == RECD_WIRE_UDP;
    struct sockaddr_storage ss;
    int len = sizeof ss;
    int rc = udp ? uv_udp_getsockname(&l->h.udp, (struct sockaddr *)&ss, &len)
                 : uv_tcp_getsockname(&l->h.tcp, (struct sockaddr *)&ss, &len);
    recd_peer_name(rc == 0 ? (const struct sockaddr *)&ss : NULL, udp ? "udp://" : l->cfg.tls ? "tls://" : "tcp://",
                   l->bound, sizeof l->bound);
}

void ingest_init(recd_ingest *g, uv_loop_t *loop, const recd_config *cfg,
                 recd_daemon_metrics *metrics, recd_sessions *sessions, ingest_events on)
{
    memset(g, 0, sizeof *g);
    g->loop = loop;
    g->cfg = cfg;
    g->metrics = metrics;
    g->sessions = sessions;
    LIST_INIT(&g->listeners);
    LIST_INIT(&g->nats_sources);
    TAILQ_INIT(&g->conns);
    g->accepting = true;
    g->taking_datagrams = true;
    g->on = on;
}

static void on_sweep(uv_timer_t *t)
{
    recd_ingest *g = t->data;
    ingest_sweep(g, uv_now(g->loop));
}

int ingest_start(recd_ingest *g)
{
    int rc = uv_timer_init(g->loop, &g->sweep);
    if (rc < 0)
        return rc;
    g->sweep.data = g;
    g->sweeping = true;
    return uv_timer_start(&g->sweep, on_sweep, INGEST_SWEEP_MS, INGEST_SWEEP_MS);
}

void ingest_stop(recd_ingest *g)
{
    if (g->sweeping && !uv_is_closing((uv_handle_t *)&g->sweep))
        uv_close((uv_handle_t *)&g->sweep, NULL);
    g->sweeping = false;
}

void ingest_free(recd_ingest *g) { peer_counts_free(&g->peers); }

static int ip_addr(const recd_hostport *hp, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof *ss);
    if (hp->family == AF_INET6)
        return uv_ip6_addr(hp->host, hp->port, (struct sockaddr_in6 *)ss);
    return uv_ip4_addr(hp->host, hp->port, (struct sockaddr_in *)ss);
}

/* A stale socket file from an earlier run is replaced; a socket someone still listens on, or
 * anything that is not a socket, is an error. */
static int clear_unix_path(const char *path, char *why, size_t whylen)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return errno == ENOENT ? 0 : -errno;
    if (!S_ISSOCK(st.st_mode)) {
        snprintf(why, whylen, "%s exists and is not a socket", path);
        return -EEXIST;
    }
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    bool live = fd >= 0 && connect(fd, (const struct sockaddr *)&sa, sizeof sa) == 0;
    if (fd >= 0)
        close(fd);
    if (live) {
        snprintf(why, whylen, "another process is listening on %s", path);
        return -EADDRINUSE;
    }
    return unlink(path) < 0 ? -errno : 0;
}

static recd_listener *listener_new(recd_ingest *g, const recd_listen_config *cfg)
{
    recd_listener *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->ingest = g;
    l->cfg = *cfg;
    l->h.handle.data = l;
    return l;
}

static void link_listener(recd_listener *l)
{
    LIST_INSERT_HEAD(&l->ingest->listeners, l, link);
}

static void on_failed_close(uv_handle_t *h)
{
    recd_listener *l = h->data;
    free(l->udp_rx);
    free(l);
}

static void close_handles(recd_listener *l, uv_close_cb done)
{
    if (l->cfg.transport == RECD_WIRE_UDP)
        listener_udp_close(l, done);
    else
        uv_close(&l->h.handle, done);
}

static int open_stream(recd_listener *l, char *why, size_t whylen)
{
    recd_ingest *g = l->ingest;
    int rc;
    if (l->cfg.transport == RECD_WIRE_UNIX) {
        if ((rc = clear_unix_path(l->cfg.path, why, whylen)) < 0)
            return rc;
        if ((rc = uv_pipe_init(g->loop, &l->h.pipe, 0)) < 0)
            return rc;
        rc = uv_pipe_bind(&l->h.pipe, l->cfg.path);
        if (rc == 0)
            l->remove_path = true;
    } else {
        struct sockaddr_storage ss;
        if ((rc = ip_addr(&l->cfg.addr, &ss)) < 0)
            return rc;
        if ((rc = uv_tcp_init_ex(g->loop, &l->h.tcp, (unsigned)l->cfg.addr.family)) < 0)
            return rc;
        rc = uv_tcp_bind(&l->h.tcp, (const struct sockaddr *)&ss,
                         l->cfg.addr.family == AF_INET6 ? UV_TCP_IPV6ONLY : 0);
    }
    if (rc == 0)
        rc = listener_stream_start(l);
    return rc;
}

static int open_udp(recd_listener *l)
{
    struct sockaddr_storage ss;
    int rc = ip_addr(&l->cfg.addr, &ss);
    if (rc < 0)
        return rc;
    rc = uv_udp_init_ex(l->ingest->loop, &l->h.udp, (unsigned)l->cfg.addr.family | UV_UDP_RECVMMSG);
    if (rc < 0)
        return rc;
    rc = uv_udp_bind(&l->h.udp, (const struct sockaddr *)&ss,
                     l->cfg.addr.family == AF_INET6 ? UV_UDP_IPV6ONLY : 0);
    if (rc == 0)
        rc = listener_udp_start(l);
    return rc;
}

int listener_open(recd_ingest *g, const recd_listen_config *cfg, recd_listener **out, char *why,
                  size_t whylen)
{
    *out = NULL;
    why[0] = 0;
    if (cfg->nats)
        return listener_nats_open(g, cfg, out, why, whylen);
    recd_listener *l = listener_new(g, cfg);
    if (!l)
        return -ENOMEM;
    int rc = cfg->transport == RECD_WIRE_UDP ? open_udp(l) : open_stream(l, why, whylen);
    if (rc < 0) {
        if (!why[0])
            snprintf(why, whylen, "%s", uv_strerror(rc)); /* the caller names the URL */
        if (l->remove_path)
            unlink(l->cfg.path);
        if (l->h.handle.type != UV_UNKNOWN_HANDLE) /* initialised: libuv must close it */
            close_handles(l, on_failed_close);
        else
            free(l);
        return rc;
    }
    describe(l);
    link_listener(l);
    *out = l;
    return 0;
}

int listener_adopt(recd_ingest *g, const recd_sd_listen_fd *fd, recd_listener **out, char *why,
                   size_t whylen)
{
    *out = NULL;
    recd_listen_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.encoding = RECD_WIRE_AUTO;
    cfg.addr.family = fd->family;
    if (fd->socktype == SOCK_DGRAM && (fd->family == AF_INET || fd->family == AF_INET6))
        cfg.transport = RECD_WIRE_UDP;
    else if (fd->socktype == SOCK_STREAM && (fd->family == AF_INET || fd->family == AF_INET6))
        cfg.transport = RECD_WIRE_TCP;
    else if (fd->socktype == SOCK_STREAM && fd->family == AF_UNIX)
        cfg.transport = RECD_WIRE_UNIX;
    else {
        snprintf(why, whylen, "passed fd %d (%s) is not a TCP, UDP or Unix stream socket", fd->fd,
                 fd->name);
        return -EINVAL;
    }
    if (cfg.transport == RECD_WIRE_UNIX) {
        struct sockaddr_un sa;
        socklen_t len = sizeof sa;
        memset(&sa, 0, sizeof sa);
        if (getsockname(fd->fd, (struct sockaddr *)&sa, &len) == 0 && sa.sun_path[0])
            snprintf(cfg.path, sizeof cfg.path, "%.*s", (int)(sizeof cfg.path - 1), sa.sun_path);
        else
            snprintf(cfg.path, sizeof cfg.path, "(fd %d)", fd->fd);
    }
    recd_listener *l = listener_new(g, &cfg);
    if (!l)
        return -ENOMEM;
    l->activated = true;
    int rc;
    if (cfg.transport == RECD_WIRE_UDP) {
        rc = uv_udp_init_ex(g->loop, &l->h.udp, UV_UDP_RECVMMSG);
        if (rc == 0 && (rc = uv_udp_open(&l->h.udp, fd->fd)) == 0)
            rc = listener_udp_start(l);
    } else if (cfg.transport == RECD_WIRE_TCP) {
        rc = uv_tcp_init(g->loop, &l->h.tcp);
        if (rc == 0 && (rc = uv_tcp_open(&l->h.tcp, fd->fd)) == 0)
            rc = listener_stream_start(l);
    } else {
        rc = uv_pipe_init(g->loop, &l->h.pipe, 0);
        if (rc == 0 && (rc = uv_pipe_open(&l->h.pipe, fd->fd)) == 0)
            rc = listener_stream_start(l);
    }
    if (rc < 0) {
        snprintf(why, whylen, "passed fd %d (%s): %s", fd->fd, fd->name, uv_strerror(rc));
        if (l->h.handle.type != UV_UNKNOWN_HANDLE)
            close_handles(l, on_failed_close);
        else
            free(l);
        return rc;
    }
    describe(l);
    snprintf(l->cfg.url, sizeof l->cfg.url, "%.*s", (int)(sizeof l->cfg.url - 1), l->bound);
    link_listener(l);
    *out = l;
    return 0;
}

static void on_closed(uv_handle_t *h)
{
    recd_listener *l = h->data;
    if (l->remove_path)
        unlink(l->cfg.path);
    free(l->udp_rx);
    free(l);
}

void listener_close(recd_listener *l)
{
    if (l->closing)
        return;
    l->closing = true;
    LIST_REMOVE(l, link);
    log_info("stopped listening on %s", l->bound);
    if (l->nats) {
        listener_nats_retire(l);
        return;
    }
    close_handles(l, on_closed);
}

void ingest_close_listeners(recd_ingest *g)
{
    while (!LIST_EMPTY(&g->listeners))
        listener_close(LIST_FIRST(&g->listeners));
}

void ingest_close_stream_listeners(recd_ingest *g)
{
    recd_listener *next;
    for (recd_listener *l = LIST_FIRST(&g->listeners); l; l = next) {
        next = LIST_NEXT(l, link);
        if (l->cfg.transport != RECD_WIRE_UDP)
            listener_close(l);
    }
}
