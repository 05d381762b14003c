/* SPDX-License-Identifier: MIT */
/* TCP and Unix stream connections: accept, read into the connection's wire decoder, pause and
 * resume reading for backpressure, and on a protocol violation answer with one error reply naming
 * the problem and close. Everything decoded before the bad message stays accepted. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "listener.h"
#include "support/log.h"
#include "support/peer_name.h"

typedef struct reply_req {
    uv_write_t req;
    recd_conn *conn;
    recd_buf buf;
} reply_req;

static void peer_name(recd_conn *c, const recd_listener *l)
{
    if (l->cfg.transport == RECD_WIRE_UNIX) {
        snprintf(c->peer, sizeof c->peer, "unix:%.80s", l->cfg.path);
        return;
    }
    struct sockaddr_storage ss;
    int len = sizeof ss;
    int rc = uv_tcp_getpeername(&c->h.tcp, (struct sockaddr *)&ss, &len);
    recd_peer_name(rc == 0 ? (const struct sockaddr *)&ss : NULL, "tcp ", c->peer, sizeof c->peer);
}

static void on_conn_closed(uv_handle_t *h)
{
    recd_conn *c = h->data;
    recd_ingest *g = c->ingest;
    LIST_REMOVE(c, link);
    recd_wire_decoder_free(c->dec);
    free(c);
    g->conn_count--;
    if (g->on.conn_gone)
        g->on.conn_gone(g->on.data);
}

void stream_conn_close(recd_conn *c)
{
    if (uv_is_closing(&c->h.handle))
        return;
    c->closing = true;
    if (c->paused) {
        c->paused = false;
        c->ingest->paused_count--;
    }
    uv_close(&c->h.handle, on_conn_closed);
}

static void on_reply_written(uv_write_t *req, int status)
{
    reply_req *r = (reply_req *)req;
    (void)status;
    stream_conn_close(r->conn);
    recd_buf_free(&r->buf);
    free(r);
}

/* One error reply naming the problem, then close. */
static void protocol_error(recd_conn *c, int rc, const char *err)
{
    recd_metrics_decode_error(c->ingest->metrics, listener_error_reason(&c->in, rc, err));
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
        stream_conn_close(c);
        return;
    }
    r->conn = c;
    uv_buf_t b = uv_buf_init((char *)r->buf.data, (unsigned)r->buf.len);
    if (uv_write(&r->req, &c->h.stream, &b, 1, on_reply_written) < 0) {
        recd_buf_free(&r->buf);
        free(r);
        stream_conn_close(c);
    }
}

static void pause_reading(recd_conn *c)
{
    recd_ingest *g = c->ingest;
    if (c->paused || c->closing)
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
        listener_tally_publish(c->ingest->metrics, c->in.transport, &c->tally);
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
        listener_tally_publish(c->ingest->metrics, c->in.transport, &c->tally);
        if (rc < 0)
            protocol_error(c, rc, err);
        else
            stream_conn_close(c);
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
    if (sessions_over_limit(g->sessions, c->blocked_on))
        return;
    if (uv_read_start(&c->h.stream, alloc_cb, read_cb) < 0) {
        stream_conn_close(c);
        return;
    }
    c->paused = false;
    g->paused_count--;
    log_debug("%s: reading resumed", c->peer);
}

void ingest_resume_paused(recd_ingest *g)
{
    recd_conn *next;
    for (recd_conn *c = LIST_FIRST(&g->conns); c && g->paused_count; c = next) {
        next = LIST_NEXT(c, link);
        try_resume(c);
    }
}

void ingest_close_conns(recd_ingest *g)
{
    recd_conn *next;
    for (recd_conn *c = LIST_FIRST(&g->conns); c; c = next) {
        next = LIST_NEXT(c, link);
        stream_conn_close(c);
    }
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
    LIST_INSERT_HEAD(&g->conns, c, link);
    g->conn_count++;
    if ((rc = uv_accept(server, &c->h.stream)) < 0) {
        stream_conn_close(c);
        return;
    }
    peer_name(c, l);
    if (g->conn_count > g->cfg->limits.max_connections || !g->accepting) {
        log_warn("%s: connection refused: %u connections are open (limits.max_connections)",
                 c->peer, g->cfg->limits.max_connections);
        stream_conn_close(c);
        return;
    }
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
    if (recd_wire_decoder_new(&c->dec, &dc) < 0 ||
        uv_read_start(&c->h.stream, alloc_cb, read_cb) < 0) {
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
