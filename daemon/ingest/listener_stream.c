/* SPDX-License-Identifier: MIT */
/* TCP and Unix stream connections: accept (within limits.max_connections and
 * limits.max_connections_per_peer, making room by shedding the connection idle longest that holds
 * no session), read into the connection's wire decoder, pause and resume reading for
 * backpressure (unfinished frames count toward limits.process_buffer), close connections past
 * their deadlines, and on a protocol violation answer with one error reply naming the problem,
 * half-close and drain (docs/wire.md 5.1). Everything decoded before the bad message stays
 * accepted. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "listener.h"
#include "recd/wire_lend.h"
#include "support/log.h"
#include "support/peer_name.h"

/* What follows an error reply: reading and discarding until EOF (the client may still be sending:
 * closing with unread input would reset the connection and lose the reply), or an immediate close
 * (an idle connection has sent nothing to discard). */
typedef enum after_reply { AFTER_REPLY_DRAIN, AFTER_REPLY_CLOSE } after_reply;

typedef struct reply_req {
    uv_write_t req;
    uv_shutdown_t shut;
    recd_conn *conn;
    after_reply then;
    recd_buf buf;
} reply_req;

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
static void read_cb(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf);

/* A Unix socket's client is known by its uid (the kernel's word for it, which it cannot forge):
 * the peer its shares are counted for. */
static void key_of_unix_client(recd_conn *c)
{
#if defined(SO_PEERCRED)
    uv_os_fd_t fd;
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (uv_fileno(&c->h.handle, &fd) == 0 &&
        getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && len == sizeof cred)
        peer_key_from_uid(cred.uid, &c->key);
#else
    (void)c;
#endif
}

static void name_peer(recd_conn *c, const recd_listener *l)
{
    if (l->cfg.transport == RECD_WIRE_UNIX) {
        snprintf(c->peer, sizeof c->peer, "unix:%.80s", l->cfg.path);
        key_of_unix_client(c);
        return;
    }
    struct sockaddr_storage ss;
    int len = sizeof ss;
    int rc = uv_tcp_getpeername(&c->h.tcp, (struct sockaddr *)&ss, &len);
    const struct sockaddr *sa = rc == 0 ? (const struct sockaddr *)&ss : NULL;
    recd_peer_name(sa, l->cfg.tls ? "tls " : "tcp ", c->peer, sizeof c->peer);
    peer_key_from_sockaddr(sa, &c->key);
}

bool ingest_over_process_limit(const recd_ingest *g)
{
    return session_env_used(&g->sessions->env) + g->partial_bytes > g->cfg->limits.process_buffer;
}

/* The decoder's unfinished frame is no longer held against the limits. */
static void release_partial(recd_conn *c)
{
    recd_ingest *g = c->ingest;
    if (!c->partial_bytes)
        return;
    g->partial_bytes -= c->partial_bytes;
    c->partial_bytes = 0;
    c->partial_since_ms = 0;
    g->resume_due = true;
}

/* Counts the connection out of the limits (once). */
static void leave_limits(recd_conn *c)
{
    recd_ingest *g = c->ingest;
    release_partial(c);
    if (c->paused) {
        c->paused = false;
        g->paused_count--;
    }
    if (c->live) {
        c->live = false;
        g->live_conns--;
        peer_counts_remove(&g->peers, &c->key);
    }
}

static void on_conn_closed(uv_handle_t *h)
{
    recd_conn *c = h->data;
    recd_ingest *g = c->ingest;
    TAILQ_REMOVE(&g->conns, c, link);
    recd_wire_decoder_free(c->dec);
    stream_tls_free(c);
    free(c);
    g->conn_count--;
    if (g->on.conn_gone)
        g->on.conn_gone(g->on.data);
}

static void stream_conn_close(recd_conn *c)
{
    if (uv_is_closing(&c->h.handle))
        return;
    c->closing = true;
    leave_limits(c);
    uv_close(&c->h.handle, on_conn_closed);
}

static void drop_count(recd_ingest *g, recd_m_conn_drop reason)
{
    recd_metrics_conn_dropped(g->metrics, reason);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    reply_req *r = req->data;
    if (status < 0)
        stream_conn_close(r->conn);
    recd_buf_free(&r->buf);
    free(r);
}

static void on_reply_written(uv_write_t *req, int status)
{
    reply_req *r = (reply_req *)req;
    recd_conn *c = r->conn;
    if (status >= 0 && !c->closing && r->then == AFTER_REPLY_DRAIN) {
        /* Our FIN tells the client the reply is complete; its input is discarded until EOF. */
        r->shut.data = r;
        if (uv_shutdown(&r->shut, &c->h.stream, on_shutdown) == 0)
            return;
    }
    stream_conn_close(c);
    recd_buf_free(&r->buf);
    free(r);
}

/* Sends one error reply naming the problem; the decoder is done with. */
static void answer_error(recd_conn *c, const char *err, after_reply then)
{
    recd_ingest *g = c->ingest;
    recd_wire_encoding enc = c->dec ? recd_wire_decoder_encoding(c->dec) : RECD_WIRE_AUTO;
    release_partial(c);
    recd_wire_decoder_free(c->dec);
    c->dec = NULL;
    c->draining = true;
    c->drain_until_ms = uv_now(g->loop) + INGEST_ERROR_DRAIN_MS;
    if (c->paused) {
        c->paused = false;
        g->paused_count--;
    }
    if (!uv_is_active(&c->h.handle) && uv_read_start(&c->h.stream, alloc_cb, read_cb) < 0) {
        stream_conn_close(c);
        return;
    }
    reply_req *r = calloc(1, sizeof *r);
    if (!r || recd_wire_encode_error(enc == RECD_WIRE_AUTO ? RECD_WIRE_NDJSON : enc, err, &r->buf) < 0) {
        if (r)
            recd_buf_free(&r->buf);
        free(r);
        stream_conn_close(c);
        return;
    }
    if (c->tls && stream_tls_seal(c, &r->buf, true) < 0) { /* no reply before the handshake */
        recd_buf_free(&r->buf);
        free(r);
        stream_conn_close(c);
        return;
    }
    r->conn = c;
    r->then = then;
    uv_buf_t b = uv_buf_init((char *)r->buf.data, (unsigned)r->buf.len);
    if (uv_write(&r->req, &c->h.stream, &b, 1, on_reply_written) < 0) {
        recd_buf_free(&r->buf);
        free(r);
        stream_conn_close(c);
    }
}

/* A protocol violation: counted, logged, answered; the connection is drained and closed. */
static void protocol_error(recd_conn *c, int rc, const char *err)
{
    recd_wire_reason noted = c->dec ? recd_wire_decoder_reason(c->dec) : RECD_WIRE_REASON_NONE;
    recd_metrics_decode_error(c->ingest->metrics, listener_error_reason(&c->in, rc, noted));
    log_warn("%s: %s; closing the connection", c->peer, err);
    answer_error(c, err, AFTER_REPLY_DRAIN);
}

static void pause_reading(recd_conn *c)
{
    recd_ingest *g = c->ingest;
    if (c->paused || c->closing || c->draining)
        return;
    uv_read_stop(&c->h.stream);
    c->paused = true;
    g->paused_count++;
    memcpy(c->blocked_on, c->in.over_process ? "" : c->in.over_key, sizeof c->blocked_on);
    recd_metric_add(g->metrics->backpressure_events_total, 0, 1);
    log_debug("%s: reading paused: %s over its buffer limit", c->peer,
              c->blocked_on[0] ? "a session is" : "the process is");
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    recd_conn *c = h->data;
    (void)suggested;
    /* Checked before each read, so the process limit is overshot by one read at most, not one
     * per connection: read_cb gets UV_ENOBUFS and pauses. */
    if (!c->draining && ingest_over_process_limit(c->ingest)) {
        *buf = uv_buf_init(NULL, 0);
        return;
    }
    /* One shared buffer: every read is decoded completely before the loop reads again. */
    *buf = uv_buf_init((char *)c->ingest->read_buf, INGEST_READ_BUFFER);
}

static void reset_input(session_input *in)
{
    in->reason_set = false;
    in->lookup_missed = false;
    in->over_key[0] = 0;
    in->over_process = false;
}

/* The decoder's unfinished frame after a read: its bytes count toward the process limit and its
 * age toward limits.frame_timeout. */
static void track_partial(recd_conn *c, uint64_t now)
{
    recd_ingest *g = c->ingest;
    size_t pending = recd_wire_decoder_pending(c->dec);
    uint64_t start = c->fed - pending;
    if (pending == 0)
        c->partial_since_ms = 0;
    else if (c->partial_since_ms == 0 || start != c->partial_start)
        c->partial_since_ms = now ? now : 1;
    c->partial_start = start;
    if (pending < c->partial_bytes)
        g->resume_due = true;
    g->partial_bytes = g->partial_bytes - c->partial_bytes + pending;
    c->partial_bytes = pending;
}

/* What TLS has for the peer (handshake records, an alert), written as it is; then closes the
 * connection with close_after. */
typedef struct raw_write {
    uv_write_t req;
    recd_conn *conn;
    bool close_after;
    recd_buf buf;
} raw_write;

static void on_raw_written(uv_write_t *req, int status)
{
    raw_write *w = (raw_write *)req;
    if (status < 0 || w->close_after)
        stream_conn_close(w->conn);
    recd_buf_free(&w->buf);
    free(w);
}

static void send_tls_output(recd_conn *c, bool close_after)
{
    raw_write *w = c->closing ? NULL : calloc(1, sizeof *w);
    if (!w || stream_tls_take_output(c, &w->buf) < 0 || !w->buf.len) {
        if (w)
            recd_buf_free(&w->buf);
        free(w);
        if (close_after)
            stream_conn_close(c);
        return;
    }
    w->conn = c;
    w->close_after = close_after;
    uv_buf_t b = uv_buf_init((char *)w->buf.data, (unsigned)w->buf.len);
    if (uv_write(&w->req, &c->h.stream, &b, 1, on_raw_written) < 0) {
        recd_buf_free(&w->buf);
        free(w);
        stream_conn_close(c);
    }
}

/* Bytes for the decoder (as read, or as TLS decrypted them). */
typedef struct plain_feed {
    recd_conn *conn;
    char err[512];
} plain_feed;

static int feed_plain(void *ctx, const uint8_t *data, size_t len)
{
    plain_feed *f = ctx;
    recd_conn *c = f->conn;
    int rc = recd_wire_decoder_feed(c->dec, data, len, f->err, sizeof f->err);
    c->fed += (uint64_t)len;
    listener_account_end(&c->in, c->fed - recd_wire_decoder_pending(c->dec));
    listener_tally_publish(c->ingest->metrics, c->in.transport, &c->tally);
    return rc;
}

/* The client ended its input (EOF, or TLS close_notify, answered with ours): what the decoder
 * holds must be complete. */
static void end_of_input(recd_conn *c)
{
    char err[512] = "";
    reset_input(&c->in);
    int rc = recd_wire_decoder_finish(c->dec, err, sizeof err);
    listener_account_end(&c->in, c->fed);
    listener_tally_publish(c->ingest->metrics, c->in.transport, &c->tally);
    if (rc < 0)
        protocol_error(c, rc, err);
    else if (c->tls && stream_tls_close_notify(c)) {
        uv_read_stop(&c->h.stream); /* nothing more is taken */
        send_tls_output(c, true);
    }
    else
        stream_conn_close(c);
}

static void read_cb(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    recd_conn *c = stream->data;
    recd_ingest *g = c->ingest;
    if (c->closing)
        return;
    if (c->draining) { /* after an error reply: discard until the client closes */
        if (nread < 0)
            stream_conn_close(c);
        return;
    }
    if (nread > 0) {
        uint64_t now = uv_now(g->loop);
        c->last_read_ms = now;
        TAILQ_REMOVE(&g->conns, c, link);
        TAILQ_INSERT_TAIL(&g->conns, c, link);
        reset_input(&c->in);
        if (c->max_frame != g->cfg->limits.max_frame) { /* a reload changed it: from now on */
            c->max_frame = g->cfg->limits.max_frame;
            recd_wire_decoder_set_max_frame(c->dec, (size_t)c->max_frame);
        }
        plain_feed f = {.conn = c};
        int rc = c->tls ? stream_tls_read(c, (const uint8_t *)buf->base, (size_t)nread, feed_plain, &f)
                        : feed_plain(&f, (const uint8_t *)buf->base, (size_t)nread);
        if (c->tls && rc != STREAM_TLS_EOF)
            send_tls_output(c, rc == STREAM_TLS_DROP);
        if (rc == STREAM_TLS_DROP)
            return;
        if (rc == STREAM_TLS_EOF) {
            end_of_input(c);
            return;
        }
        if (rc < 0) {
            protocol_error(c, rc, f.err);
            return;
        }
        track_partial(c, now);
        if (c->in.over_process || c->in.over_key[0])
            pause_reading(c);
        return;
    }
    if (nread == UV_ENOBUFS) { /* alloc_cb: the process is over its limit */
        reset_input(&c->in);
        c->in.over_process = true;
        pause_reading(c);
        return;
    }
    if (nread == UV_EOF) {
        end_of_input(c);
        return;
    }
    if (nread < 0) {
        log_debug("%s: read error: %s", c->peer, uv_strerror((int)nread));
        stream_conn_close(c);
    }
}

/* Resumes reading when its limits allow it. */
static void try_resume(recd_conn *c)
{
    recd_ingest *g = c->ingest;
    if (!c->paused || c->closing)
        return;
    if (ingest_over_process_limit(g) || sessions_over_limit(g->sessions, c->blocked_on))
        return;
    if (uv_read_start(&c->h.stream, alloc_cb, read_cb) < 0) {
        stream_conn_close(c);
        return;
    }
    c->paused = false;
    g->paused_count--;
    c->last_read_ms = uv_now(g->loop); /* waiting on our limits is not idleness */
    log_debug("%s: reading resumed", c->peer);
}

void ingest_resume_paused(recd_ingest *g)
{
    recd_conn *next;
    g->resume_due = false;
    for (recd_conn *c = TAILQ_FIRST(&g->conns); c && g->paused_count; c = next) {
        next = TAILQ_NEXT(c, link);
        try_resume(c);
    }
}

void ingest_close_conns(recd_ingest *g)
{
    recd_conn *next;
    for (recd_conn *c = TAILQ_FIRST(&g->conns); c; c = next) {
        next = TAILQ_NEXT(c, link);
        stream_conn_close(c);
    }
}

void ingest_sweep(recd_ingest *g, uint64_t now)
{
    const recd_config *cfg = g->cfg;
    char why[160];
    recd_conn *next;
    for (recd_conn *c = TAILQ_FIRST(&g->conns); c; c = next) {
        next = TAILQ_NEXT(c, link);
        if (c->closing)
            continue;
        if (c->draining) {
            if (now >= c->drain_until_ms)
                stream_conn_close(c);
            continue;
        }
        if (stream_tls_overdue(c, now)) {
            stream_conn_close(c);
            continue;
        }
        if (c->partial_since_ms && now - c->partial_since_ms >= cfg->limits.frame_timeout_ms) {
            drop_count(g, RECD_M_CONN_DROP_FRAME_TIMEOUT);
            snprintf(why, sizeof why, "a frame or line started %llu ms ago is still incomplete "
                     "(limits.frame_timeout)", (unsigned long long)(now - c->partial_since_ms));
            log_warn("%s: %s; closing the connection", c->peer, why);
            answer_error(c, why, AFTER_REPLY_DRAIN);
            continue;
        }
        if (cfg->limits.idle_timeout_ms && !c->paused && c->sessions_held == 0 &&
            now - c->last_read_ms >= cfg->limits.idle_timeout_ms) {
            drop_count(g, RECD_M_CONN_DROP_IDLE);
            log_info("%s: no session and no input for %llu ms (limits.idle_timeout); closing the "
                     "connection", c->peer, (unsigned long long)(now - c->last_read_ms));
            answer_error(c, "closed: idle without a session (limits.idle_timeout)", AFTER_REPLY_CLOSE);
        }
    }
    if (g->resume_due && g->paused_count)
        ingest_resume_paused(g);
    g->resume_due = false;
    ingest_count_udp_drops(g);
}

/* The connection to give up for a new one: one that already got its error reply, else the one
 * idle longest that holds no session and is not paused by our limits; of one peer when key is
 * given. NULL when every one is busy. */
static recd_conn *shed_candidate(recd_ingest *g, const peer_key *key, const recd_conn *newcomer)
{
    recd_conn *idle = NULL;
    recd_conn *c;
    TAILQ_FOREACH(c, &g->conns, link) {
        if (c == newcomer || c->closing || !c->live || (key && !peer_key_equal(&c->key, key)))
            continue;
        if (c->draining)
            return c;
        if (!idle && c->sessions_held == 0 && !c->paused)
            idle = c;
    }
    return idle;
}

/* Makes room for c by shedding another connection; false when there is none to shed. */
static bool make_room(recd_conn *c, const peer_key *key, const char *limit)
{
    recd_ingest *g = c->ingest;
    recd_conn *victim = shed_candidate(g, key, c);
    if (!victim)
        return false;
    drop_count(g, RECD_M_CONN_DROP_SHED);
    if (victim->draining) {
        stream_conn_close(victim);
        return true;
    }
    log_info("%s: closed to make room for %s (%s)", victim->peer, c->peer, limit);
    char why[128];
    snprintf(why, sizeof why, "closed: idle without a session, and %s was reached", limit);
    answer_error(victim, why, AFTER_REPLY_CLOSE);
    leave_limits(victim);
    return true;
}

static void refuse(recd_conn *c, const char *limit, unsigned value)
{
    drop_count(c->ingest, RECD_M_CONN_DROP_REFUSED);
    log_warn("%s: connection refused: %u connections are open and none is idle (%s)", c->peer,
             value, limit);
    char why[128];
    snprintf(why, sizeof why, "connection refused: %s (%u) reached", limit, value);
    answer_error(c, why, AFTER_REPLY_DRAIN); /* a new client may be sending already */
    leave_limits(c);
}

static void on_connection(uv_stream_t *server, int status)
{
    recd_listener *l = server->data;
    recd_ingest *g = l->ingest;
    if (status < 0) {
        log_warn("%s: accept failed: %s", l->bound, uv_strerror(status));
        return;
    }
    recd_conn *c = calloc(1, sizeof *c);
    if (!c) {
        log_crit("out of memory accepting a connection on %s", l->bound);
        return;
    }
    c->ingest = g;
    int rc = l->cfg.transport == RECD_WIRE_UNIX ? uv_pipe_init(g->loop, &c->h.pipe, 0)
                                                      : uv_tcp_init(g->loop, &c->h.tcp);
    if (rc < 0) {
        free(c);
        return;
    }
    c->h.handle.data = c;
    /* Linked first so the close callback can always unlink it. */
    TAILQ_INSERT_TAIL(&g->conns, c, link);
    g->conn_count++;
    if ((rc = uv_accept(server, &c->h.stream)) < 0) {
        stream_conn_close(c);
        return;
    }
    name_peer(c, l);
    if (!g->accepting) {
        drop_count(g, RECD_M_CONN_DROP_REFUSED);
        stream_conn_close(c);
        return;
    }
    c->last_read_ms = uv_now(g->loop);
    c->live = true;
    g->live_conns++;
    c->in.key = c->key; /* its sessions count toward the same peer's shares */
    if (peer_counts_add(&g->peers, &c->key) == 0)
        c->key.family = 0; /* not counted (unknown peer, or no memory): never uncounted either */
    c->in.sessions = g->sessions;
    c->in.transport = l->cfg.transport == RECD_WIRE_UNIX ? RECD_M_UNIX : RECD_M_TCP;
    c->in.peer = c->peer;
    c->in.tally = &c->tally;
    recd_wire_decoder_config dc = {.encoding = l->cfg.encoding,
                                   .max_frame = (size_t)g->cfg->limits.max_frame,
                                   .format_of = session_format_of,
                                   .on_msg = listener_on_msg,
                                   .ctx = &c->in,
                                   .on_rec_state = listener_on_rec_state};
    if (recd_wire_decoder_new(&c->dec, &dc) < 0) {
        stream_conn_close(c);
        return;
    }
    recd_wire__decoder_set_lend(c->dec, session_lend_state);
    c->max_frame = g->cfg->limits.max_frame;
    if (l->cfg.tls && stream_tls_start(c) < 0) {
        log_err("%s: TLS cannot start (%s); closing the connection", c->peer,
                g->tls ? "out of memory" : "no TLS context");
        stream_conn_close(c);
        return;
    }
    unsigned max_total = g->cfg->limits.max_connections;
    unsigned max_peer = g->cfg->limits.max_connections_per_peer;
    if (g->live_conns > max_total && !make_room(c, NULL, "limits.max_connections")) {
        refuse(c, "limits.max_connections", max_total);
        return;
    }
    if (c->key.family && peer_counts_get(&g->peers, &c->key) > max_peer &&
        !make_room(c, &c->key, "limits.max_connections_per_peer")) {
        refuse(c, "limits.max_connections_per_peer", max_peer);
        return;
    }
    if (uv_read_start(&c->h.stream, alloc_cb, read_cb) < 0) {
        stream_conn_close(c);
        return;
    }
    if (l->cfg.transport == RECD_WIRE_TCP)
        uv_tcp_nodelay(&c->h.tcp, 1);
    c->reading = true;
    log_debug("%s: connected", c->peer);
}

int listener_stream_start(recd_listener *l)
{
    l->h.handle.data = l;
    return uv_listen(&l->h.stream, LISTENER_BACKLOG, on_connection);
}
