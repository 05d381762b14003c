/* TCP and Unix stream connections: accept, read into the connection's wire decoder, pause and
 * resume reading for backpressure, and on a protocol violation answer with one error reply naming
 * the problem and close. Everything decoded before the bad message stays accepted. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "listener.h"
#include "support/log.h"
#include "app/server.h"

typedef struct reply_req {
    uv_write_t req;
    recd_conn *conn;
    recd_buf buf;
} reply_req;

static recd_wire_encoding wire_encoding(recd_encoding e)
{
    return e == RECD_ENCODING_BINARY ? RECD_WIRE_BINARY
           : e == RECD_ENCODING_NDJSON ? RECD_WIRE_NDJSON
                                       : RECD_WIRE_AUTO;
}

static void peer_name(recd_conn *c, const recd_listener *l)
{
    if (l->cfg.transport == RECD_TRANSPORT_UNIX) {
        snprintf(c->peer, sizeof c->peer, "unix:%.80s", l->cfg.path);
        return;
    }
    struct sockaddr_storage ss;
    int len = sizeof ss;
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (uv_tcp_getpeername(&c->h.tcp, (struct sockaddr *)&ss, &len) == 0) {
        if (ss.ss_family == AF_INET6) {
            const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&ss;
            inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
            port = ntohs(a->sin6_port);
            snprintf(c->peer, sizeof c->peer, "tcp [%s]:%d", host, port);
            return;
        }
        const struct sockaddr_in *a = (const struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
        port = ntohs(a->sin_port);
    }
    snprintf(c->peer, sizeof c->peer, "tcp %s:%d", host, port);
}

static void on_conn_closed(uv_handle_t *h)
{
    recd_conn *c = h->data;
    recd_server *srv = c->srv;
    if (c->prev)
        c->prev->next = c->next;
    else if (srv->conns == c)
        srv->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    recd_wire_decoder_free(c->dec);
    free(c);
    srv->conn_count--;
    server_conn_gone(srv);
}

void conn_close(recd_conn *c)
{
    if (uv_is_closing(&c->h.handle))
        return;
    c->closing = true;
    if (c->paused) {
        c->paused = false;
        c->srv->paused_count--;
    }
    uv_close(&c->h.handle, on_conn_closed);
}

static void on_reply_written(uv_write_t *req, int status)
{
    reply_req *r = (reply_req *)req;
    (void)status;
    conn_close(r->conn);
    recd_buf_free(&r->buf);
    free(r);
}

/* One error reply naming the problem, then close. */
static void protocol_error(recd_conn *c, int rc, const char *err)
{
    recd_server *srv = c->srv;
    recd_metrics_decode_error(&srv->metrics, listener_error_reason(&c->in, rc, err));
    log_warn("%s: %s; closing the connection", c->peer, err);
    uv_read_stop(&c->h.stream);
    c->reading = false;
    c->closing = true;
    recd_wire_encoding enc = recd_wire_decoder_encoding(c->dec);
    reply_req *r = calloc(1, sizeof *r);
    if (!r || recd_wire_encode_error(enc == RECD_WIRE_AUTO ? RECD_WIRE_NDJSON : enc, err, &r->buf) < 0) {
        if (r)
            recd_buf_free(&r->buf);
        free(r);
        conn_close(c);
        return;
    }
    r->conn = c;
    uv_buf_t b = uv_buf_init((char *)r->buf.data, (unsigned)r->buf.len);
    if (uv_write(&r->req, &c->h.stream, &b, 1, on_reply_written) < 0) {
        recd_buf_free(&r->buf);
        free(r);
        conn_close(c);
    }
}

static void pause_reading(recd_conn *c)
{
    recd_server *srv = c->srv;
    if (c->paused || c->closing)
        return;
    uv_read_stop(&c->h.stream);
    c->paused = true;
    srv->paused_count++;
    memcpy(c->blocked_on, c->in.over_process ? "" : c->in.over_key, sizeof c->blocked_on);
    recd_metric_add(srv->metrics.backpressure_events_total, 0, 1);
    log_debug("%s: reading paused: %s over its buffer limit", c->peer,
              c->blocked_on[0] ? "a session is" : "the process is");
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    recd_conn *c = h->data;
    (void)suggested;
    /* One shared buffer: every read is decoded completely before the loop reads again. */
    *buf = uv_buf_init((char *)c->srv->read_buf, SERVER_READ_BUFFER);
}

static void reset_input(session_input *in)
{
    in->reason_set = false;
    in->lookup_missed = false;
    in->over_key[0] = 0;
    in->over_process = false;
}

static void read_cb(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    recd_conn *c = stream->data;
    char err[512] = "";
    if (c->closing)
        return;
    if (nread > 0) {
        reset_input(&c->in);
        int rc = recd_wire_decoder_feed(c->dec, (const uint8_t *)buf->base, (size_t)nread, err,
                                        sizeof err);
        c->fed += (uint64_t)nread;
        listener_account_end(&c->in, c->fed - recd_wire_decoder_pending(c->dec));
        listener_tally_publish(c->srv, c->in.transport, &c->tally);
        if (rc < 0)
            protocol_error(c, rc, err);
        else if (c->in.over_process || c->in.over_key[0])
            pause_reading(c);
        return;
    }
    if (nread == UV_EOF) {
        reset_input(&c->in);
        int rc = recd_wire_decoder_finish(c->dec, err, sizeof err);
        listener_account_end(&c->in, c->fed);
        listener_tally_publish(c->srv, c->in.transport, &c->tally);
        if (rc < 0)
            protocol_error(c, rc, err);
        else
            conn_close(c);
        return;
    }
    if (nread < 0) {
        log_debug("%s: read error: %s", c->peer, uv_strerror((int)nread));
        conn_close(c);
    }
}

void conn_try_resume(recd_conn *c)
{
    recd_server *srv = c->srv;
    const recd_config *cfg = &srv->cfg;
    if (!c->paused || c->closing)
        return;
    if (srv->buffered > cfg->limits.process_buffer)
        return;
    if (c->blocked_on[0]) {
        recd_session *s = session_table_get(&srv->table, c->blocked_on);
        if (s && s->buffered > cfg->limits.session_buffer)
            return;
    }
    if (uv_read_start(&c->h.stream, alloc_cb, read_cb) < 0) {
        conn_close(c);
        return;
    }
    c->paused = false;
    srv->paused_count--;
    log_debug("%s: reading resumed", c->peer);
}

static void on_connection(uv_stream_t *server, int status)
{
    recd_listener *l = server->data;
    recd_server *srv = l->srv;
    if (status < 0) {
        log_warn("%s: accept failed: %s", l->bound, uv_strerror(status));
        return;
    }
    recd_conn *c = calloc(1, sizeof *c);
    if (!c) {
        log_crit("out of memory accepting a connection on %s", l->bound);
        return;
    }
    c->srv = srv;
    int rc = l->cfg.transport == RECD_TRANSPORT_UNIX ? uv_pipe_init(srv->loop, &c->h.pipe, 0)
                                                      : uv_tcp_init(srv->loop, &c->h.tcp);
    if (rc < 0) {
        free(c);
        return;
    }
    c->h.handle.data = c;
    /* Linked first so the close callback can always unlink it. */
    c->next = srv->conns;
    if (srv->conns)
        srv->conns->prev = c;
    srv->conns = c;
    srv->conn_count++;
    if ((rc = uv_accept(server, &c->h.stream)) < 0) {
        conn_close(c);
        return;
    }
    peer_name(c, l);
    if (srv->conn_count > srv->cfg.limits.max_connections || srv->phase != SERVER_RUNNING) {
        log_warn("%s: connection refused: %u connections are open (limits.max_connections)",
                 c->peer, srv->cfg.limits.max_connections);
        conn_close(c);
        return;
    }
    c->in.srv = srv;
    c->in.transport = l->cfg.transport == RECD_TRANSPORT_UNIX ? RECD_M_UNIX : RECD_M_TCP;
    c->in.peer = c->peer;
    c->in.tally = &c->tally;
    recd_wire_decoder_config dc = {.encoding = wire_encoding(l->cfg.encoding),
                                   .max_frame = (size_t)srv->cfg.limits.max_frame,
                                   .format_of = session_format_of,
                                   .on_msg = listener_on_msg,
                                   .ctx = &c->in,
                                   .on_rec_state = listener_on_rec_state};
    if (recd_wire_decoder_new(&c->dec, &dc) < 0 ||
        uv_read_start(&c->h.stream, alloc_cb, read_cb) < 0) {
        conn_close(c);
        return;
    }
    if (l->cfg.transport == RECD_TRANSPORT_TCP)
        uv_tcp_nodelay(&c->h.tcp, 1);
    c->reading = true;
    log_debug("%s: connected", c->peer);
}

int listener_stream_start(recd_listener *l)
{
    l->h.handle.data = l;
    return uv_listen(&l->h.stream, LISTENER_BACKLOG, on_connection);
}
