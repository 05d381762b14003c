/* SPDX-License-Identifier: MIT */
/* The blocking recd client: connects by URL (TCP, UDP, Unix stream), batches encoded messages
 * (streams: up to batch_bytes; UDP: several whole frames per datagram), and on close reads the
 * server's error reply, if any, before the connection goes away. nats:// URLs go to the JetStream
 * publisher (client_nats.c); tls:// is TCP with its bytes through client_tls.c. */
#include "recd/client.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "wire/client_nats.h"
#include "wire/client_tls.h"
#include "wire/wire_internal.h"

#define DEFAULT_BATCH (64u * 1024u)
#define DEFAULT_DATAGRAM 1400u
#define DEFAULT_CLOSE_TIMEOUT_MS 5000u
#define REPLY_MAX (8u * 1024u) /* an error reply is one short frame or line */

struct recd_client {
    int fd;
    recd_wire_transport transport;
    recd_wire_encoding enc;
    size_t batch_bytes, datagram_bytes, max_frame;
    unsigned close_timeout_ms;
    recd_buf queue; /* stream: bytes to send; UDP: the datagram being built */
    recd_buf frame; /* UDP: the frame being added */
    /* UDP with a token: the last open with one, as a resume, which starts every datagram of its
     * session (the daemon wants the token in each: docs/wire.md, "Ownership and resume"). */
    recd_buf udp_open;
    char udp_open_key[RECD_SESSION_KEY_MAX + 1];
    char last_session[RECD_SESSION_KEY_MAX + 1];
    int broken; /* first send error, sticky */
    uint64_t bytes_sent;
    client_nats *nats; /* nats://: every call goes there instead */
    client_tls *tls;   /* tls://: the stream's bytes go through it */
};

static int fail_errno(char *err, size_t errlen, const char *what, const char *target)
{
    int e = errno;
    recd_why(err, errlen, "%s %s: %s", what, target, strerror(e));
    return -e;
}

static int connect_inet(recd_client *c, const recd_wire_url *u, char *err, size_t errlen)
{
    char port[8];
    snprintf(port, sizeof port, "%u", (unsigned)u->port);
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = u->transport == RECD_WIRE_UDP ? SOCK_DGRAM : SOCK_STREAM;
    int gai = getaddrinfo(u->host, port, &hints, &res);
    if (gai != 0) {
        recd_why(err, errlen, "cannot resolve %s: %s", u->host, gai_strerror(gai));
        return -EHOSTUNREACH;
    }
    int rc = -ECONNREFUSED;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            rc = fail_errno(err, errlen, "socket for", u->host);
            continue;
        }
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
            if (u->transport == RECD_WIRE_TCP) {
                int one = 1; /* we batch ourselves; Nagle would only add latency */
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            }
            c->fd = fd;
            rc = 0;
            break;
        }
        char target[RECD_WIRE_HOST_MAX + 16];
        snprintf(target, sizeof target, "%s port %u", u->host, (unsigned)u->port);
        rc = fail_errno(err, errlen, "cannot connect to", target);
        close(fd);
    }
    freeaddrinfo(res);
    return rc;
}

static int connect_unix(recd_client *c, const recd_wire_url *u, char *err, size_t errlen)
{
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    if (strlen(u->path) >= sizeof sa.sun_path) {
        recd_why(err, errlen, "socket path too long: %s", u->path);
        return -ENAMETOOLONG;
    }
    memcpy(sa.sun_path, u->path, strlen(u->path));
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return fail_errno(err, errlen, "socket for", u->path);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        int rc = fail_errno(err, errlen, "cannot connect to", u->path);
        close(fd);
        return rc;
    }
    c->fd = fd;
    return 0;
}

static int connect_nats(recd_client **out, const char *url, const recd_client_options *opt,
                        char *err, size_t errlen)
{
    recd_client *c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    c->fd = -1;
    c->transport = RECD_WIRE_NATS;
    c->enc = RECD_WIRE_BINARY;
    int rc = client_nats_open(&c->nats, url, opt ? opt->max_frame : 0, err, errlen);
    if (rc < 0) {
        free(c);
        return rc;
    }
    *out = c;
    return 0;
}

/* tcp://, udp:// or unix://: the schemes recd_wire_url_parse reads (nats:// and tls:// go
 * elsewhere). */
static bool has_socket_scheme(const char *url)
{
    static const char *const schemes[] = {"tcp://", "udp://", "unix://"};
    for (size_t i = 0; url && i < sizeof schemes / sizeof schemes[0]; i++)
        if (strncmp(url, schemes[i], strlen(schemes[i])) == 0)
            return true;
    return false;
}

/* url as recd_wire_url_parse reads it: tls:// URLs are taken apart into tls first. */
static int parse_url(const char *url, recd_wire_url *u, client_tls_url *tls, char *err,
                     size_t errlen)
{
    char why[200];
    int rc = client_tls_url_is(url) ? client_tls_url_parse(url, tls, why, sizeof why) : 0;
    if (rc == 0)
        rc = recd_wire_url_parse(tls->tcp_url[0] ? tls->tcp_url : url, u, why, sizeof why);
    if (rc < 0) {
        if (!has_socket_scheme(url) && !client_tls_url_is(url))
            snprintf(why, sizeof why,
                     "the URL must start with tcp://, tls://, udp://, unix:// or nats://");
        recd_why(err, errlen, "bad URL '%s': %s", url ? url : "", why);
        return -EINVAL;
    }
    return 0;
}

static void free_client(recd_client *c)
{
    client_tls_free(c->tls);
    if (c->fd >= 0)
        close(c->fd);
    recd_buf_free(&c->queue);
    recd_buf_free(&c->frame);
    recd_buf_free(&c->udp_open);
    free(c);
}

static int connect_url(recd_client **out, const char *url, const recd_wire_url *u,
                       const client_tls_url *tls, const recd_client_options *opt, char *err,
                       size_t errlen)
{
    if (u->transport != RECD_WIRE_UNIX && u->port == 0) {
        recd_why(err, errlen, "bad URL '%s': port 0 cannot be connected to", url);
        return -EINVAL;
    }
    int rc = tls->tcp_url[0] ? client_tls_load(err, errlen) : 0;
    if (rc < 0)
        return rc;
    recd_client *c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    c->fd = -1;
    c->transport = u->transport;
    c->enc = u->encoding == RECD_WIRE_AUTO ? RECD_WIRE_BINARY : u->encoding;
    c->batch_bytes = opt && opt->batch_bytes ? opt->batch_bytes : DEFAULT_BATCH;
    c->datagram_bytes = opt && opt->datagram_bytes ? opt->datagram_bytes : DEFAULT_DATAGRAM;
    if (c->datagram_bytes > RECD_CLIENT_MAX_DATAGRAM)
        c->datagram_bytes = RECD_CLIENT_MAX_DATAGRAM;
    c->max_frame = wire_max_frame(opt ? opt->max_frame : 0);
    c->close_timeout_ms = opt && opt->close_timeout_ms ? opt->close_timeout_ms
                                                       : DEFAULT_CLOSE_TIMEOUT_MS;
    rc = u->transport == RECD_WIRE_UNIX ? connect_unix(c, u, err, errlen)
                                        : connect_inet(c, u, err, errlen);
    if (rc == 0 && tls->tcp_url[0])
        rc = client_tls_start(&c->tls, c->fd, tls, u->host, c->close_timeout_ms, err, errlen);
    if (rc < 0) {
        free_client(c);
        return rc;
    }
    *out = c;
    return 0;
}

int recd_client_connect(recd_client **out, const char *url, const recd_client_options *opt,
                        char *err, size_t errlen)
{
    *out = NULL;
    if (client_nats_url(url))
        return connect_nats(out, url, opt, err, errlen);
    recd_wire_url u;
    static const client_tls_url no_tls;
    client_tls_url *tls = malloc(sizeof *tls);
    if (!tls)
        return -ENOMEM;
    *tls = no_tls;
    int rc = parse_url(url, &u, tls, err, errlen);
    if (rc == 0)
        rc = connect_url(out, url, &u, tls, opt, err, errlen);
    free(tls);
    return rc;
}

recd_wire_encoding recd_client_encoding(const recd_client *c) { return c->enc; }
recd_wire_transport recd_client_transport(const recd_client *c) { return c->transport; }
uint64_t recd_client_bytes_sent(const recd_client *c)
{
    return c->nats ? client_nats_bytes(c->nats) : c->bytes_sent;
}

static int send_all(recd_client *c, const uint8_t *p, size_t n)
{
    if (c->tls) {
        int rc = client_tls_send(c->tls, p, n);
        if (rc < 0)
            return c->broken = rc;
        c->bytes_sent += n;
        return 0;
    }
    while (n) {
        ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return c->broken = -errno;
        }
        p += w;
        n -= (size_t)w;
        c->bytes_sent += (uint64_t)w;
    }
    return 0;
}

static int send_datagram(recd_client *c)
{
    if (!c->queue.len)
        return 0;
    for (;;) {
        ssize_t w = send(c->fd, c->queue.data, c->queue.len, MSG_NOSIGNAL);
        if (w >= 0)
            break;
        if (errno != EINTR)
            return c->broken = -errno;
    }
    c->bytes_sent += c->queue.len;
    recd_buf_reset(&c->queue);
    return 0;
}

int recd_client_flush(recd_client *c)
{
    if (c->nats)
        return client_nats_flush(c->nats);
    if (c->broken)
        return c->broken;
    if (c->transport == RECD_WIRE_UDP)
        return send_datagram(c);
    int rc = send_all(c, c->queue.data, c->queue.len);
    recd_buf_reset(&c->queue);
    return rc;
}

static int encode(recd_client *c, const recd_msg *m, bool omit_key, bool timed, recd_buf *out)
{
    if (c->enc == RECD_WIRE_NDJSON)
        return timed ? wire_ndjson_encode(m, c->max_frame, false, out) : -EINVAL;
    return wire_binary_encode(m, c->max_frame, omit_key, timed, out);
}

/* Keeps an open that carries a token, as a resume, to start the session's datagrams with. */
static int keep_udp_open(recd_client *c, const recd_msg *m)
{
    recd_buf_reset(&c->udp_open);
    c->udp_open_key[0] = 0;
    if (!m->open.auth)
        return 0;
    recd_msg resume = *m; /* shallow: encoded at once, never freed */
    resume.open.resume = true;
    resume.has_seq = false;
    int rc = encode(c, &resume, false, true, &c->udp_open);
    if (rc == 0)
        memcpy(c->udp_open_key, m->session, sizeof c->udp_open_key);
    return rc;
}

static int queue_datagram_frame(recd_client *c, const recd_msg *m, bool timed)
{
    recd_buf_reset(&c->frame);
    int rc = encode(c, m, false, timed, &c->frame);
    if (rc < 0)
        return rc;
    if (c->frame.len > RECD_CLIENT_MAX_DATAGRAM)
        return -EMSGSIZE;
    if (m->type == RECD_MSG_OPEN && (rc = keep_udp_open(c, m)) < 0)
        return rc;
    if (c->queue.len && c->queue.len + c->frame.len > c->datagram_bytes &&
        (rc = send_datagram(c)) < 0)
        return rc;
    if (!c->queue.len && c->udp_open.len && m->type != RECD_MSG_OPEN &&
        strcmp(m->session, c->udp_open_key) == 0 &&
        (rc = recd_buf_append(&c->queue, c->udp_open.data, c->udp_open.len)) < 0)
        return rc;
    if ((rc = recd_buf_append(&c->queue, c->frame.data, c->frame.len)) < 0)
        return rc;
    return c->queue.len >= c->datagram_bytes ? send_datagram(c) : 0;
}

static int queue_message(recd_client *c, const recd_msg *m, bool timed)
{
    if (c->broken)
        return c->broken;
    size_t klen = strnlen(m->session, sizeof m->session);
    if (!recd_session_key_valid(m->session, klen))
        return -EINVAL;
    if (c->nats) /* a stream keeps no arrival time worth stamping: always timed */
        return timed ? client_nats_publish(c->nats, m) : -EINVAL;
    if (c->transport == RECD_WIRE_UDP)
        return queue_datagram_frame(c, m, timed);
    bool same = strcmp(m->session, c->last_session) == 0;
    int rc = encode(c, m, same, timed, &c->queue);
    if (rc < 0)
        return rc;
    memcpy(c->last_session, m->session, klen + 1);
    return c->queue.len >= c->batch_bytes ? recd_client_flush(c) : 0;
}

int recd_client_send(recd_client *c, const recd_msg *m) { return queue_message(c, m, true); }

int recd_client_send_untimed(recd_client *c, const recd_msg *m)
{
    if (c->enc != RECD_WIRE_BINARY || (m->type != RECD_MSG_STATE && m->type != RECD_MSG_EVENT))
        return -EINVAL;
    return queue_message(c, m, false);
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Keeps the first REPLY_MAX bytes of what the server sends. */
static int keep_reply(recd_buf *reply, const uint8_t *p, size_t n)
{
    size_t keep = REPLY_MAX - reply->len;
    keep = n < keep ? n : keep;
    return keep ? recd_buf_append(reply, p, keep) : 0;
}

/* Reads until the server closes (or the timeout); keeps the first REPLY_MAX bytes. */
static int read_reply(recd_client *c, recd_buf *reply)
{
    long long deadline = now_ms() + c->close_timeout_ms;
    uint8_t chunk[4096];
    for (;;) {
        ssize_t r;
        if (c->tls) {
            if ((r = client_tls_recv(c->tls, chunk, sizeof chunk, deadline)) <= 0)
                return (int)r;
            if (keep_reply(reply, chunk, (size_t)r) < 0)
                return -ENOMEM;
            continue;
        }
        long long left = deadline - now_ms();
        if (left <= 0)
            return -ETIMEDOUT;
        struct pollfd p = {c->fd, POLLIN, 0};
        int n = poll(&p, 1, (int)left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            return -ETIMEDOUT;
        r = recv(c->fd, chunk, sizeof chunk, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        if (r == 0)
            return 0;
        if (keep_reply(reply, chunk, (size_t)r) < 0)
            return -ENOMEM;
    }
}

/* What a TLS failure was (the server's alert when client_tls_explain found one), or "". */
static const char *tls_reason(const recd_client *c)
{
    return c->tls ? client_tls_why(c->tls) : "";
}

/* A stream's end: close_notify (TLS), shut the write side, read the server's verdict. */
static int close_stream(recd_client *c, int sent, char *err, size_t errlen)
{
    if (c->tls && sent == 0)
        client_tls_close_write(c->tls);
    shutdown(c->fd, SHUT_WR);
    recd_buf reply = {0};
    int rd = read_reply(c, &reply), rc = sent;
    if (c->tls && rd < 0 && rd != -ETIMEDOUT)
        client_tls_explain(c->tls);
    char msg[WIRE_ERROR_TEXT_MAX + 1];
    int er = recd_wire_decode_error(reply.data, reply.len, msg, sizeof msg);
    if (er == 1) {
        recd_why(err, errlen, "server error: %s", msg);
        rc = -EPROTO;
    } else if (er < 0) {
        recd_why(err, errlen, "server sent %lu bytes that are not an error reply",
                 (unsigned long)reply.len);
        rc = -EPROTO;
    } else if (sent < 0 && tls_reason(c)[0]) {
        recd_why(err, errlen, "send failed: TLS: %s", tls_reason(c));
    } else if (sent < 0) {
        recd_why(err, errlen, "send failed: %s", strerror(-sent));
    } else if (rd < 0 && rd != -ETIMEDOUT && tls_reason(c)[0]) {
        recd_why(err, errlen, "TLS: %s", tls_reason(c)); /* e.g. an alert about our certificate */
        rc = rd;
    } else if (rd == -ETIMEDOUT) {
        recd_why(err, errlen, "server did not close the connection within %u ms",
                 c->close_timeout_ms);
        rc = rd;
    } else if (rd < 0) { /* a reset: the server did not read everything we sent */
        recd_why(err, errlen, "connection ended abnormally: %s", strerror(-rd));
        rc = rd;
    }
    recd_buf_free(&reply);
    return rc;
}

int recd_client_close(recd_client *c, char *err, size_t errlen)
{
    if (!c)
        return 0;
    if (err && errlen)
        err[0] = 0;
    if (c->nats) {
        int rc = client_nats_close(c->nats, err, errlen);
        free(c);
        return rc;
    }
    int sent = recd_client_flush(c);
    int rc = sent;
    if (c->tls && sent < 0)
        client_tls_explain(c->tls);
    if (c->transport != RECD_WIRE_UDP)
        rc = close_stream(c, sent, err, errlen);
    else if (sent < 0)
        recd_why(err, errlen, "send failed: %s", strerror(-sent));
    free_client(c);
    return rc;
}
