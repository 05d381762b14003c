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

typedef struct recd_http_options {
    const recd_metrics *metrics;   /* rendered on GET /metrics; NULL = empty exposition */
    recd_http_health_fn health;    /* NULL = always healthy */
    void *health_ctx;
    void (*before_metrics)(void *ctx); /* refreshes sampled gauges before each render; NULL = none */
    void *metrics_ctx;
    recd_http_save_fn save;        /* POST /sessions/KEY/save; NULL = 404 */
    void *save_ctx;
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

#endif
