/* SPDX-License-Identifier: MIT */
/* Monitoring HTTP endpoint on libuv + http-parser (see http_server.h). */
#include "http_server.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <http_parser.h>

#include "recd/message.h"
#include "tls_server.h"

#define URL_MAX 1024
#define AUTH_MAX 300 /* "Bearer " and a token of at most 256 bytes */
#define READ_CHUNK 4096
#define PEEK_MAX 8192
#define STREAM_SNDBUF 16384 /* a stream's kernel send buffer (Linux doubles it) */ /* the default max_request_bytes: a request's end lies within it */

typedef struct conn conn;

struct recd_http_server {
    uv_tcp_t listener;
    uv_loop_t *loop;
    recd_http_options opt;
    http_parser_settings settings;
    LIST_HEAD(conn_list, conn) conns; /* open clients, to close them on shutdown */
    size_t nconns;
    size_t nclosing; /* of them, closing (their handles are not closed yet) */
    size_t nstreams; /* of them, open streams: not counted against max_connections */
    uint64_t streams_dropped; /* streams closed because their client fell behind */
    size_t open_handles; /* listener + client handles still to be closed */
    bool closing;
    void (*on_closed)(void *ctx);
    void *on_closed_ctx;
};

struct conn {
    uv_tcp_t tcp;
    uv_timer_t timer;
    http_parser parser;
    recd_http_server *srv;
    LIST_ENTRY(conn) link;
    char url[URL_MAX + 1];
    size_t url_len;
    bool url_too_long;
    bool headers_done;
    bool has_body;   /* decides between 413 (body) and 431 (headers) for an oversized request */
    bool complete;   /* the parser saw the whole request */
    bool responded;  /* a response is being written: ignore further input */
    bool written;    /* ... and it is out: waiting for the client to close */
    bool closing;
    bool reserve;    /* taken beyond max_connections: answers GET /healthz only */
    bool loopback;   /* the peer's address is a loopback one */
    bool in_auth;    /* the header being read is Authorization */
    char auth[AUTH_MAX + 1]; /* its value ("" none; cut values are refused by the token check) */
    size_t auth_len;
    int handles;     /* 2 while tcp and timer are open */
    size_t received;
    char rbuf[READ_CHUNK];
    uv_write_t write_req;
    uv_shutdown_t shutdown_req;
    recd_buf response;
    tls_conn *tls;    /* HTTPS only */
    bool held;       /* a route has the reply and will send it: not freed before it does */
    bool dead;       /* closed while held: freed by recd_http_reply_send */
    bool streaming;  /* the reply is a stream (recd_http_reply_stream) */
    size_t backlog;  /* stream bytes queued and not yet taken by the kernel */
    void (*on_gone)(void *data);
    void *gone_data;
};

/* A routed request's reply is its connection. */
struct recd_http_reply {
    conn c;
};

static void server_handle_closed(recd_http_server *s)
{
    if (--s->open_handles > 0)
        return;
    void (*cb)(void *) = s->on_closed;
    void *ctx = s->on_closed_ctx;
    free(s);
    if (cb)
        cb(ctx);
}

static void conn_handle_closed(uv_handle_t *h)
{
    conn *c = h->data;
    if (--c->handles > 0)
        return;
    recd_http_server *s = c->srv;
    LIST_REMOVE(c, link);
    s->nconns--;
    s->nclosing--;
    recd_buf_free(&c->response);
    tls_conn_free(c->tls);
    c->tls = NULL;
    void (*gone)(void *) = c->streaming ? c->on_gone : NULL;
    void *gone_data = c->gone_data;
    if (c->held)
        c->dead = true; /* its route still has the reply */
    else
        free(c);
    if (gone)
        gone(gone_data);
    server_handle_closed(s);
}

static void http_conn_close(conn *c)
{
    if (c->closing)
        return;
    c->closing = true;
    c->srv->nclosing++;
    if (c->streaming)
        c->srv->nstreams--;
    uv_close((uv_handle_t *)&c->tcp, conn_handle_closed);
    uv_close((uv_handle_t *)&c->timer, conn_handle_closed);
}

/* After our FIN the connection stays open until the client closes (or the deadline passes): closing
 * with unread request bytes would send a RST, which can destroy the response in flight. */
static void on_shutdown(uv_shutdown_t *req, int status)
{
    if (status < 0)
        http_conn_close(req->data);
}

static void on_written(uv_write_t *req, int status)
{
    conn *c = req->data;
    if (status < 0 || c->closing) {
        http_conn_close(c);
        return;
    }
    c->written = true;
    /* Half-close so the client sees the end of the response; its input until EOF is discarded. */
    c->shutdown_req.data = c;
    if (uv_shutdown(&c->shutdown_req, (uv_stream_t *)&c->tcp, on_shutdown) < 0)
        http_conn_close(c);
}

static void on_timeout(uv_timer_t *t)
{
    http_conn_close(t->data);
}

static const char *status_text(int code)
{
    switch (code) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Error";
    }
}

struct recd_health_report {
    recd_buf json; /* the entries of "checks", comma separated */
    size_t failing;
    int err;
};

static void json_string(recd_buf *b, const char *s, int *err)
{
    char esc[8];
    if (recd_buf_append(b, "\"", 1) < 0)
        *err = -ENOMEM;
    for (; *s && !*err; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') {
            esc[0] = '\\';
            esc[1] = (char)ch;
            *err = recd_buf_append(b, esc, 2) < 0 ? -ENOMEM : 0;
        } else if (ch < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", ch);
            *err = recd_buf_append(b, esc, 6) < 0 ? -ENOMEM : 0;
        } else {
            *err = recd_buf_append(b, s, 1) < 0 ? -ENOMEM : 0;
        }
    }
    if (!*err && recd_buf_append(b, "\"", 1) < 0)
        *err = -ENOMEM;
}

void recd_health_fail(recd_health_report *r, const char *check, const char *fmt, ...)
{
    char reason[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    const char *sep = r->failing++ ? "," : "";
    if (recd_buf_append(&r->json, sep, strlen(sep)) < 0 || recd_buf_append(&r->json, "{\"name\":", 8) < 0)
        r->err = -ENOMEM;
    if (!r->err)
        json_string(&r->json, check, &r->err);
    if (!r->err && recd_buf_append(&r->json, ",\"reason\":", 10) < 0)
        r->err = -ENOMEM;
    if (!r->err)
        json_string(&r->json, reason, &r->err);
    if (!r->err && recd_buf_append(&r->json, "}", 1) < 0)
        r->err = -ENOMEM;
}

/* HTTPS: the response as TLS records, close_notify after them; the handshake's last records
 * (if any wait) go first. */
static int seal_response(conn *c)
{
    recd_buf sealed = {0};
    int rc = tls_conn_take_output(c->tls, &sealed);
    if (rc == 0)
        rc = tls_conn_write(c->tls, c->response.data, c->response.len);
    tls_conn_shutdown(c->tls);
    if (rc == 0)
        rc = tls_conn_take_output(c->tls, &sealed);
    recd_buf_free(&c->response);
    c->response = sealed;
    return rc;
}

static void respond_with(conn *c, int code, const char *content_type, const char *headers,
                         const void *body, size_t body_len)
{
    if (c->responded || c->closing)
        return;
    c->responded = true;
    char head[1536];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s%sConnection: close\r\n\r\n",
                     code, status_text(code), content_type, body_len, code == 405 ? "Allow: GET, HEAD\r\n" : "",
                     headers ? headers : "");
    /* HEAD: the same headers as GET, without the body. */
    bool head_only = c->parser.method == HTTP_HEAD;
    if (n < 0 || (size_t)n >= sizeof head || recd_buf_append(&c->response, head, (size_t)n) < 0 ||
        (!head_only && recd_buf_append(&c->response, body, body_len) < 0)) {
        http_conn_close(c);
        return;
    }
    if (c->tls && seal_response(c) < 0) {
        http_conn_close(c);
        return;
    }
    /* The request is in: the rest of the connection gets the whole-connection deadline. */
    uv_timer_start(&c->timer, on_timeout, c->srv->opt.timeout_ms, 0);
    uv_buf_t buf = uv_buf_init((char *)c->response.data, (unsigned)c->response.len);
    c->write_req.data = c;
    if (uv_write(&c->write_req, (uv_stream_t *)&c->tcp, &buf, 1, on_written) < 0)
        http_conn_close(c);
}

static void respond(conn *c, int code, const char *content_type, const void *body, size_t body_len)
{
    respond_with(c, code, content_type, NULL, body, body_len);
}

static void respond_text(conn *c, int code, const char *text)
{
    respond(c, code, "text/plain; charset=utf-8", text, strlen(text));
}

static void serve_metrics(conn *c)
{
    recd_buf body = {0};
    if (c->srv->opt.before_metrics)
        c->srv->opt.before_metrics(c->srv->opt.metrics_ctx);
    if (recd_metrics_render(c->srv->opt.metrics, &body) < 0) {
        recd_buf_free(&body);
        respond_text(c, 500, "metrics unavailable\n");
        return;
    }
    respond(c, 200, RECD_METRICS_CONTENT_TYPE, body.data ? body.data : (const uint8_t *)"", body.len);
    recd_buf_free(&body);
}

static void serve_health(conn *c)
{
    recd_health_report r = {{0}, 0, 0};
    if (c->srv->opt.health)
        c->srv->opt.health(c->srv->opt.health_ctx, &r);
    recd_buf body = {0};
    const char *status = r.failing ? "{\"status\":\"error\",\"checks\":[" : "{\"status\":\"ok\",\"checks\":[";
    if (r.err || recd_buf_append(&body, status, strlen(status)) < 0 ||
        recd_buf_append(&body, r.json.data ? r.json.data : (const uint8_t *)"", r.json.len) < 0 ||
        recd_buf_append(&body, "]}\n", 3) < 0)
        respond_text(c, 503, "{\"status\":\"error\",\"checks\":[{\"name\":\"memory\",\"reason\":\"out of memory\"}]}\n");
    else
        respond(c, r.failing ? 503 : 200, "application/json", body.data, body.len);
    recd_buf_free(&body);
    recd_buf_free(&r.json);
}

/* The value of name= in the query: 1 found, 0 absent, -1 longer than cap - 1 bytes (out then
 * holds its first cap - 1 bytes). */
static int query_value(const char *q, size_t qlen, const char *name, char *out, size_t cap)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < qlen;) {
        size_t end = i;
        while (end < qlen && q[end] != '&')
            end++;
        if (end - i > n && memcmp(q + i, name, n) == 0 && q[i + n] == '=') {
            size_t vlen = end - i - n - 1, copy = vlen < cap ? vlen : cap - 1;
            memcpy(out, q + i + n + 1, copy);
            out[copy] = 0;
            return vlen < cap ? 1 : -1;
        }
        i = end + 1;
    }
    return 0;
}

/* POST /sessions/KEY/save?last=DUR[&label=LABEL], answered by the save callback. */
static bool route_save(conn *c, const char *path, size_t plen, const char *query, size_t qlen)
{
    static const char prefix[] = "/sessions/", suffix[] = "/save";
    size_t pl = sizeof prefix - 1, sl = sizeof suffix - 1;
    if (plen <= pl + sl || memcmp(path, prefix, pl) != 0 || memcmp(path + plen - sl, suffix, sl) != 0)
        return false;
    if (!c->srv->opt.save || c->reserve)
        return false;
    if (c->parser.method != HTTP_POST) {
        respond_text(c, 405, "method not allowed: POST\n");
        return true;
    }
    /* A label names a file like a session key does. One longer than any key is passed on cut to
     * RECD_SESSION_KEY_MAX + 1 bytes, still too long, so that the callback refuses it with the
     * label rule instead of it being dropped for a default name. */
    char key[RECD_SESSION_KEY_MAX + 1], last[32], label[RECD_SESSION_KEY_MAX + 2], text[300];
    size_t klen = plen - pl - sl;
    if (klen >= sizeof key) {
        respond_text(c, 404, "no such session\n");
        return true;
    }
    memcpy(key, path + pl, klen);
    key[klen] = 0;
    bool has_last = query_value(query, qlen, "last", last, sizeof last) > 0;
    bool has_label = query_value(query, qlen, "label", label, sizeof label) != 0;
    const char *const *names;
    size_t named = c->tls ? tls_conn_names(c->tls, &names) : 0;
    recd_http_save_request req = {key, has_last ? last : NULL, has_label ? label : NULL,
                                  c->auth_len ? c->auth : NULL, c->loopback, c->tls != NULL,
                                  named ? names[0] : NULL};
    int code = c->srv->opt.save(c->srv->opt.save_ctx, &req, text, sizeof text - 1);
    size_t n = strnlen(text, sizeof text - 2);
    text[n] = '\n';
    text[n + 1] = 0;
    respond_text(c, code, text);
    return true;
}

/* Any other path, through the route app installed (the console). */
static bool route_other(conn *c, const char *path, size_t plen, const char *query, size_t qlen)
{
    recd_http_server *s = c->srv;
    if (!s->opt.route)
        return false;
    const char *const *names;
    size_t named = c->tls ? tls_conn_names(c->tls, &names) : 0;
    recd_http_request req = {http_method_str(c->parser.method), path, plen, query, qlen,
                             c->auth_len ? c->auth : NULL, c->loopback, named ? names[0] : NULL};
    c->held = true;
    if (!s->opt.route(s->opt.route_ctx, &req, (recd_http_reply *)c)) {
        c->held = false;
        return false;
    }
    if (c->held) /* answered later: the whole-connection deadline runs meanwhile */
        uv_timer_start(&c->timer, on_timeout, s->opt.timeout_ms, 0);
    return true;
}

void recd_http_reply_send(recd_http_reply *r, int code, const char *content_type,
                          const char *headers, const void *body, size_t len)
{
    conn *c = &r->c;
    c->held = false;
    if (c->dead) {
        free(c);
        return;
    }
    respond_with(c, code, content_type, headers, body, len);
}

typedef struct stream_chunk {
    uv_write_t req;
    conn *c;
    size_t len;
    char data[];
} stream_chunk;

static void on_stream_written(uv_write_t *req, int status)
{
    stream_chunk *w = req->data;
    w->c->backlog -= w->len;
    if (status < 0)
        http_conn_close(w->c);
    free(w);
}

static int queue_stream_chunk(conn *c, const void *data, size_t len)
{
    if (c->backlog + len > c->srv->opt.max_stream_backlog) {
        c->srv->streams_dropped++;
        http_conn_close(c);
        return -ENOBUFS;
    }
    stream_chunk *w = malloc(sizeof *w + len);
    if (!w) {
        http_conn_close(c);
        return -ENOMEM;
    }
    w->c = c;
    w->len = len;
    memcpy(w->data, data, len);
    w->req.data = w;
    c->backlog += len;
    uv_buf_t b = uv_buf_init(w->data, (unsigned)len);
    if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &b, 1, on_stream_written) < 0) {
        c->backlog -= len;
        free(w);
        http_conn_close(c);
        return -EPIPE;
    }
    return 0;
}

/* HTTPS: a stream chunk goes out as the TLS records that carry it. */
static int queue_sealed_chunk(conn *c, const void *data, size_t len)
{
    recd_buf sealed = {0};
    int rc = tls_conn_write(c->tls, data, len);
    if (rc == 0)
        rc = tls_conn_take_output(c->tls, &sealed);
    if (rc == 0)
        rc = queue_stream_chunk(c, sealed.data, sealed.len);
    else
        http_conn_close(c);
    recd_buf_free(&sealed);
    return rc;
}

int recd_http_stream_write(recd_http_reply *r, const void *data, size_t len)
{
    conn *c = &r->c;
    if (c->closing)
        return -EPIPE;
    return c->tls ? queue_sealed_chunk(c, data, len) : queue_stream_chunk(c, data, len);
}

int recd_http_reply_stream(recd_http_reply *r, const char *content_type, const char *headers,
                           void (*on_gone)(void *data), void *data)
{
    conn *c = &r->c;
    recd_http_server *s = c->srv;
    if (s->nstreams >= s->opt.max_streams || c->closing || c->dead)
        return -EBUSY;
    char head[1536];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nCache-Control: no-store\r\n%s"
                     "Connection: close\r\n\r\n", content_type, headers ? headers : "");
    if (n < 0 || (size_t)n >= sizeof head)
        return -EINVAL;
    c->held = false;
    c->responded = true;
    c->streaming = true;
    c->on_gone = on_gone;
    c->gone_data = data;
    s->nstreams++;
    uv_timer_stop(&c->timer); /* a stream has no deadline; its backlog bounds it */
    /* What the kernel holds for a client that does not read is bounded too. */
    int sndbuf = STREAM_SNDBUF;
    uv_send_buffer_size((uv_handle_t *)&c->tcp, &sndbuf);
    recd_http_stream_write(r, head, (size_t)n);
    return 0;
}

size_t recd_http_server_streams(const recd_http_server *s)
{
    return s ? s->nstreams : 0;
}

uint64_t recd_http_server_streams_dropped(const recd_http_server *s)
{
    return s ? s->streams_dropped : 0;
}

static void route(conn *c)
{
    struct http_parser_url u;
    http_parser_url_init(&u);
    if (c->url_len == 0 || http_parser_parse_url(c->url, c->url_len, 0, &u) != 0 ||
        !(u.field_set & (1 << UF_PATH))) {
        respond_text(c, 400, "bad request\n");
        return;
    }
    const char *path = c->url + u.field_data[UF_PATH].off;
    size_t plen = u.field_data[UF_PATH].len;
    bool is_metrics = plen == 8 && memcmp(path, "/metrics", 8) == 0;
    bool is_health = plen == 8 && memcmp(path, "/healthz", 8) == 0;
    const char *query = (u.field_set & (1 << UF_QUERY)) ? c->url + u.field_data[UF_QUERY].off : "";
    size_t qlen = (u.field_set & (1 << UF_QUERY)) ? u.field_data[UF_QUERY].len : 0;
    if (route_save(c, path, plen, query, qlen))
        return;
    if (c->parser.method != HTTP_GET && c->parser.method != HTTP_HEAD) {
        respond_text(c, 405, "method not allowed\n");
        return;
    }
    if (c->reserve && !is_health) {
        respond_text(c, 503, "busy: too many clients\n");
        return;
    }
    if (!is_metrics && !is_health) {
        if (!route_other(c, path, plen, query, qlen))
            respond_text(c, 404, "not found\n");
        return;
    }
    if (is_metrics) {
        serve_metrics(c);
        return;
    }
    serve_health(c);
}

static int on_url(http_parser *p, const char *at, size_t len)
{
    conn *c = p->data;
    if (len > URL_MAX - c->url_len) {
        c->url_too_long = true;
        return 0;
    }
    memcpy(c->url + c->url_len, at, len);
    c->url_len += len;
    c->url[c->url_len] = '\0';
    return 0;
}

static int on_header_field(http_parser *p, const char *at, size_t len)
{
    conn *c = p->data;
    c->in_auth = len == 13 && strncasecmp(at, "Authorization", 13) == 0;
    return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t len)
{
    conn *c = p->data;
    if (!c->in_auth)
        return 0;
    if (len > AUTH_MAX - c->auth_len)
        len = AUTH_MAX - c->auth_len; /* cut: no token is that long, so it will not match */
    memcpy(c->auth + c->auth_len, at, len);
    c->auth_len += len;
    c->auth[c->auth_len] = 0;
    return 0;
}

static int on_headers_complete(http_parser *p)
{
    conn *c = p->data;
    c->headers_done = true;
    c->has_body = (p->content_length > 0 && p->content_length != ULLONG_MAX) || (p->flags & F_CHUNKED);
    return 0;
}

static int on_message_complete(http_parser *p)
{
    conn *c = p->data;
    c->complete = true;
    http_parser_pause(p, 1); /* one request per connection: ignore anything pipelined after it */
    return 0;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    conn *c = h->data;
    *buf = uv_buf_init(c->rbuf, sizeof c->rbuf);
}

/* Request bytes (as read, or as TLS decrypted them). */
static int on_plain(void *ctx, const uint8_t *data, size_t len)
{
    conn *c = ctx;
    if (c->responded || c->closing)
        return 0;
    const char *base = (const char *)data;
    size_t nread = len;
    c->received += nread;
    size_t parsed = http_parser_execute(&c->parser, &c->srv->settings, base, nread);
    enum http_errno e = HTTP_PARSER_ERRNO(&c->parser);
    /* Bytes of this request so far; whatever is pipelined after a complete request is not counted. */
    size_t request_bytes = c->received - (size_t)nread + parsed;
    if (c->url_too_long) {
        respond_text(c, 414, "uri too long\n");
    } else if (request_bytes > c->srv->opt.max_request_bytes) {
        respond_text(c, c->headers_done && c->has_body ? 413 : 431, "request too large\n");
    } else if (c->complete) {
        route(c);
    } else if (e != HPE_OK && e != HPE_PAUSED) {
        respond_text(c, e == HPE_HEADER_OVERFLOW ? 431 : 400, "bad request\n");
    } else if (parsed != nread) {
        respond_text(c, 400, "bad request\n");
    }
    return 0;
}

/* Writes what TLS has for the client before the response (handshake records, an alert). */
static void on_tls_written(uv_write_t *req, int status)
{
    recd_buf *b = req->data;
    (void)status; /* a failed write shows as a read error or the deadline */
    recd_buf_free(b);
    free(req);
}

static void send_tls_output(conn *c)
{
    uv_write_t *req = calloc(1, sizeof *req + sizeof(recd_buf));
    recd_buf *b = req ? (recd_buf *)(req + 1) : NULL;
    if (!req || tls_conn_take_output(c->tls, b) < 0 || !b->len) {
        if (b)
            recd_buf_free(b);
        free(req);
        return;
    }
    req->data = b;
    uv_buf_t buf = uv_buf_init((char *)b->data, (unsigned)b->len);
    if (uv_write(req, (uv_stream_t *)&c->tcp, &buf, 1, on_tls_written) < 0) {
        recd_buf_free(b);
        free(req);
        http_conn_close(c);
    }
}

/* HTTPS: the handshake, then the request's plaintext. A failed handshake sends its alert. */
static void read_tls(conn *c, const uint8_t *data, size_t len)
{
    char why[300];
    bool closed;
    int rc = tls_conn_feed(c->tls, data, len, on_plain, c, &closed, why, sizeof why);
    if (rc == TLS_FEED_ESTABLISHED)
        rc = tls_conn_feed(c->tls, NULL, 0, on_plain, c, &closed, why, sizeof why);
    if (!c->responded && tls_conn_has_output(c->tls))
        send_tls_output(c);
    if ((rc < 0 || closed) && !c->responded)
        http_conn_close(c);
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    conn *c = stream->data;
    if (nread < 0) { /* EOF or error: before a response the client gave up, after it we are done */
        http_conn_close(c);
        return;
    }
    if (nread == 0 || c->responded || c->closing)
        return;
    if (c->tls)
        read_tls(c, (const uint8_t *)buf->base, (size_t)nread);
    else
        on_plain(c, (const uint8_t *)buf->base, (size_t)nread);
}

/* Whether the end of o's request already waits in the kernel, unread: a probe accepted in the
 * same loop pass as a burst of newer clients is answered in that pass, so it is not to be shed.
 * A peek of each open connection, and only when a new one finds the endpoint and its reserve
 * full: bounded by the endpoint's connections, never per request. */
static bool request_waiting(const conn *o)
{
    static char peek[PEEK_MAX];
    uv_os_fd_t fd;
    if (o->tls)
        return false; /* encrypted: what waits cannot be read without taking it */
    if (uv_fileno((const uv_handle_t *)&o->tcp, &fd) < 0)
        return false;
    ssize_t n = recv(fd, peek, sizeof peek, MSG_PEEK | MSG_DONTWAIT);
    if (n <= 0)
        return false;
    if (o->received > 0 && n >= 2 && memcmp(peek, "\r\n", 2) == 0)
        return true; /* the blank line that ends the headers, after what was read */
    return memmem(peek, (size_t)n, "\r\n\r\n", 4) != NULL;
}

/* Whether o may be closed for a new client: it is still sending its request (and the request's
 * end is not waiting unread), or was answered and has not closed yet. */
static bool sheddable(const conn *o)
{
    if (o->closing || (o->responded && !o->written))
        return false;
    return o->responded || !request_waiting(o);
}

/* The oldest client other than c that may be closed for c; NULL when there is none (c is then
 * closed itself). */
static conn *oldest_sheddable(recd_http_server *s, const conn *c)
{
    conn *oldest = NULL, *o;
    LIST_FOREACH(o, &s->conns, link) /* newest first */
        if (o != c && sheddable(o))
            oldest = o;
    return oldest;
}

static void on_connection(uv_stream_t *listener, int status)
{
    recd_http_server *s = listener->data;
    if (status < 0 || s->closing)
        return;
    conn *c = calloc(1, sizeof *c);
    if (!c)
        return; /* out of memory: libuv leaves the connection queued and stops accepting */
    c->srv = s;
    uv_tcp_init(s->loop, &c->tcp);
    uv_timer_init(s->loop, &c->timer);
    c->tcp.data = c;
    c->timer.data = c;
    c->handles = 2;
    LIST_INSERT_HEAD(&s->conns, c, link);
    s->nconns++;
    s->open_handles++;
    if (uv_accept(listener, (uv_stream_t *)&c->tcp) < 0) {
        http_conn_close(c);
        return;
    }
    size_t open = s->nconns - s->nclosing - s->nstreams;
    if (open > s->opt.max_connections + s->opt.health_reserve) {
        conn *old = s->opt.health_reserve ? oldest_sheddable(s, c) : NULL;
        if (!old) {
            http_conn_close(c);
            return;
        }
        http_conn_close(old);
        open--;
    }
    c->reserve = open > s->opt.max_connections;
    struct sockaddr_storage peer;
    int plen = sizeof peer;
    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&peer, &plen) == 0)
        c->loopback = (peer.ss_family == AF_INET &&
                       (ntohl(((struct sockaddr_in *)&peer)->sin_addr.s_addr) >> 24) == 127) ||
                      (peer.ss_family == AF_INET6 &&
                       IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)&peer)->sin6_addr));
    /* HTTPS without a context (none loaded) is closed: never plain HTTP on that port. */
    if (s->opt.tls && (!*s->opt.tls || !(c->tls = tls_conn_new(*s->opt.tls, false)))) {
        http_conn_close(c);
        return;
    }
    http_parser_init(&c->parser, HTTP_REQUEST);
    c->parser.data = c;
    if (uv_timer_start(&c->timer, on_timeout, s->opt.header_timeout_ms, 0) < 0 ||
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) < 0)
        http_conn_close(c);
}

int recd_http_server_start(uv_loop_t *loop, const char *host, int port, const recd_http_options *opt,
                           recd_http_server **out)
{
    if (!loop || !host || !out || port < 0 || port > 65535)
        return -EINVAL;
    struct sockaddr_storage addr;
    memset(&addr, 0, sizeof addr);
    if (uv_ip4_addr(host, port, (struct sockaddr_in *)&addr) != 0 &&
        uv_ip6_addr(host, port, (struct sockaddr_in6 *)&addr) != 0)
        return -EINVAL;

    recd_http_server *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    s->loop = loop;
    if (opt)
        s->opt = *opt;
    if (!s->opt.max_connections)
        s->opt.max_connections = 16;
    if (!s->opt.max_streams)
        s->opt.max_streams = 64;
    if (!s->opt.max_stream_backlog)
        s->opt.max_stream_backlog = 256 * 1024;
    if (!s->opt.max_request_bytes)
        s->opt.max_request_bytes = 8192;
    if (!s->opt.timeout_ms)
        s->opt.timeout_ms = 5000;
    if (!s->opt.header_timeout_ms || s->opt.header_timeout_ms > s->opt.timeout_ms)
        s->opt.header_timeout_ms = s->opt.timeout_ms;
    http_parser_settings_init(&s->settings);
    s->settings.on_url = on_url;
    s->settings.on_header_field = on_header_field;
    s->settings.on_header_value = on_header_value;
    s->settings.on_headers_complete = on_headers_complete;
    s->settings.on_message_complete = on_message_complete;

    int r = uv_tcp_init(loop, &s->listener);
    if (r < 0) {
        free(s);
        return r;
    }
    s->listener.data = s;
    s->open_handles = 1;
    r = uv_tcp_bind(&s->listener, (const struct sockaddr *)&addr, 0);
    if (r == 0)
        r = uv_listen((uv_stream_t *)&s->listener, 64, on_connection);
    if (r < 0) {
        recd_http_server_close(s, NULL, NULL);
        return r;
    }
    *out = s;
    return 0;
}

int recd_http_server_port(const recd_http_server *s)
{
    struct sockaddr_storage addr;
    int len = sizeof addr;
    if (!s)
        return -EINVAL;
    int r = uv_tcp_getsockname(&s->listener, (struct sockaddr *)&addr, &len);
    if (r < 0)
        return r;
    if (addr.ss_family == AF_INET)
        return ntohs(((struct sockaddr_in *)&addr)->sin_port);
    if (addr.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&addr)->sin6_port);
    return -EAFNOSUPPORT;
}

static void on_listener_closed(uv_handle_t *h)
{
    server_handle_closed(h->data);
}

void recd_http_server_close(recd_http_server *s, void (*on_closed)(void *ctx), void *ctx)
{
    if (!s || s->closing)
        return;
    s->closing = true;
    s->on_closed = on_closed;
    s->on_closed_ctx = ctx;
    conn *c;
    LIST_FOREACH(c, &s->conns, link)
        http_conn_close(c);
    uv_close((uv_handle_t *)&s->listener, on_listener_closed);
}
