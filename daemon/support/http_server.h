/* SPDX-License-Identifier: MIT */
/* The monitoring endpoint: a tiny HTTP/1.1 server on a libuv TCP handle (loopback by default) that
 * answers GET and HEAD for /metrics (Prometheus text format) and /healthz (JSON), one request per
 * connection.
 * Requests are parsed by http-parser, bounded in size and time, and answered with Connection: close.
 * With a header deadline and a health reserve (recd sets both), hanging clients cannot starve
 * health checks: a request must arrive within the deadline, a few connections beyond
 * max_connections are kept for /healthz alone, and when even those are taken, the oldest client
 * still sending its request (or answered but not gone) is closed to make room; one whose whole
 * request waits unread is kept, so a probe accepted just before a burst is not the one closed.
 * With opt.tls it speaks HTTPS (tls_server.h): only the transport changes, not the routes. */
#ifndef RECD_DAEMON_HTTP_SERVER_H
#define RECD_DAEMON_HTTP_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "metrics.h"

/* What /healthz answers: {"status":"ok","checks":[]} with 200, or with 503
 * {"status":"error","checks":[{"name":"writes","reason":"..."}, ...]}, one entry per failing check. */
typedef struct recd_health_report recd_health_report;

/* Adds a failing check to the report (called by the health function). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void recd_health_fail(recd_health_report *r, const char *check, const char *fmt, ...);

/* Calls recd_health_fail for each check that fails; none = healthy. */
typedef void (*recd_http_health_fn)(void *ctx, recd_health_report *r);

/* POST /sessions/KEY/save?last=DUR[&label=LABEL]: what the save callback is given. */
typedef struct recd_http_save_request {
    const char *key;           /* as in the path, not checked yet */
    const char *last;          /* the last= value ("30s"), or NULL */
    const char *label;         /* the label= value, or NULL */
    const char *authorization; /* the Authorization header's value, or NULL */
    bool peer_loopback;        /* the client connected from a loopback address */
    bool tls;                  /* the request came over HTTPS (opt.tls) */
    const char *client_cert;   /* HTTPS: the name of the client certificate that verified, or NULL */
} recd_http_save_request;

/* Answers a save: returns the HTTP status and writes the one-line text of the response. */
typedef int (*recd_http_save_fn)(void *ctx, const recd_http_save_request *req, char *text,
                                 size_t textlen);

/* A request none of the built-in routes took (the console's, installed by app): see route below. */
typedef struct recd_http_request {
    const char *method;        /* "GET", "HEAD", "POST", ... */
    const char *path;          /* as sent (not decoded), path_len bytes, not NUL-terminated */
    size_t path_len;
    const char *query;         /* after '?', query_len bytes ("" when none) */
    size_t query_len;
    const char *authorization; /* the Authorization header's value, or NULL */
    bool peer_loopback;        /* the client connected from a loopback address */
    const char *client_cert;   /* HTTPS: the name of the client certificate that verified, or NULL */
} recd_http_request;

/* The answer to one routed request: sent at once or later (work on the thread pool), or kept
 * open as a stream (Server-Sent Events). */
typedef struct recd_http_reply recd_http_reply;

/* Returns false when the route does not know the path (404). When it returns true it has called
 * recd_http_reply_send or recd_http_reply_stream, or will call recd_http_reply_send later (the
 * client then has the whole-connection deadline to wait). */
typedef bool (*recd_http_route_fn)(void *ctx, const recd_http_request *req, recd_http_reply *reply);

typedef struct recd_http_options {
    const recd_metrics *metrics;   /* rendered on GET /metrics; NULL = empty exposition */
    recd_http_health_fn health;    /* NULL = always healthy */
    void *health_ctx;
    void (*before_metrics)(void *ctx); /* refreshes sampled gauges before each render; NULL = none */
    void *metrics_ctx;
    recd_http_save_fn save;        /* POST /sessions/KEY/save; NULL = 404 */
    void *save_ctx;
    recd_http_route_fn route;      /* other paths (the console); NULL = 404 */
    void *route_ctx;
    size_t max_streams;            /* streams open at once, counted apart from max_connections;
                                    * 0 = 64. More: recd_http_reply_stream refuses */
    size_t max_stream_backlog;     /* bytes a stream's client has not taken yet; more and it is
                                    * closed. 0 = 256 KiB */
    size_t max_connections;        /* concurrent clients; 0 = 16. Extra ones are closed at once, */
    size_t health_reserve;         /* unless there is a reserve: this many more clients, answered
                                    * for GET /healthz only; when it is full too, the oldest client
                                    * still sending its request (or answered and not gone) is
                                    * closed instead. 0 = none */
    size_t max_request_bytes;      /* request line + headers + body; 0 = 8192. Larger: 431/413 */
    uint64_t header_timeout_ms;    /* the request must be complete within it; 0 = timeout_ms */
    uint64_t timeout_ms;           /* whole-connection deadline; 0 = 5000 */
    /* HTTPS: where the TLS context in force is kept (a reload replaces it; a connection keeps the
     * one it started with); NULL = plain HTTP. A client certificate is asked for when the context
     * has client CAs, never required; one that does not verify fails the handshake. */
    struct tls_server_ctx *const *tls;
} recd_http_options;

typedef struct recd_http_server recd_http_server;

/* Binds host:port (IPv4 or IPv6 literal, no brackets; port 0 = any free port) on loop and starts
 * listening. Returns 0 or a negative errno / libuv error; *out is set on success only. After a bind
 * or listen failure a handle is still closing: run the loop before uv_loop_close(). */
int recd_http_server_start(uv_loop_t *loop, const char *host, int port, const recd_http_options *opt,
                           recd_http_server **out);

/* The port actually bound (useful after port 0), or a negative error. */
int recd_http_server_port(const recd_http_server *s);

/* Stops listening, closes every client and frees the server once libuv has closed all handles; then
 * calls on_closed(ctx) if given. The loop must keep running until then. */
void recd_http_server_close(recd_http_server *s, void (*on_closed)(void *ctx), void *ctx);

/* Answers a routed request (once): status, Content-Type, extra header lines (each ending in
 * "\r\n", or NULL) and the body (not sent for HEAD). When the client has gone meanwhile it only
 * frees the reply. */
void recd_http_reply_send(recd_http_reply *r, int code, const char *content_type,
                          const char *headers, const void *body, size_t len);

/* Turns the reply into a stream: sends a 200 head with no length and keeps the connection open
 * with no deadline, counted apart from max_connections. on_gone(data) runs once when the
 * connection closes (client gone, backlog over, server closing); r is invalid after it.
 * 0, or -EBUSY when max_streams are open (nothing was sent: answer with recd_http_reply_send). */
int recd_http_reply_stream(recd_http_reply *r, const char *content_type, const char *headers,
                           void (*on_gone)(void *data), void *data);
/* Queues bytes on a stream. 0; -ENOBUFS when the client's backlog would pass max_stream_backlog
 * (the stream is closed, on_gone follows); -EPIPE when it is closing already. */
int recd_http_stream_write(recd_http_reply *r, const void *data, size_t len);

/* Streams open now, and streams closed because their client fell behind, since start. */
size_t recd_http_server_streams(const recd_http_server *s);
uint64_t recd_http_server_streams_dropped(const recd_http_server *s);

#endif
