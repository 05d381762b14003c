/* SPDX-License-Identifier: MIT */
/* The web console (docs/http-api.md): a JSON API and pages on the metrics listener, installed
 * into the HTTP server as its route. console_api.c routes and answers the live state,
 * console_stream.c the Server-Sent Events, console_files.c the recordings under the output root
 * (on the thread pool), console_pages.c the pages embedded in the binary, console_latest.c a
 * session's latest samples as JSON, console_common.c what they share. */
#ifndef RECD_DAEMON_CONSOLE_H
#define RECD_DAEMON_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <uv.h>

#include "support/http_server.h"

struct recd_server;
struct recd_session;

#define CONSOLE_STREAM_HZ 10u          /* stream updates a second at most */
#define CONSOLE_MAX_JOBS 2u            /* file reads on the thread pool at once; more: 503 */
#define CONSOLE_MAX_FILE_BYTES (256u << 20) /* a recording read for a window */
#define CONSOLE_MAX_POINTS 5000u       /* points= of a window, at most */
#define CONSOLE_MAX_LISTED 5000u       /* recordings listed, at most */

/* Content-Security-Policy and friends, sent with every console answer. */
#define CONSOLE_SECURITY_HEADERS                                                                   \
    "Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self'; "          \
    "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "              \
    "frame-ancestors 'none'; form-action 'none'\r\n"                                               \
    "X-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n"                          \
    "Cross-Origin-Resource-Policy: same-origin\r\n"

typedef struct console_viewer console_viewer;

typedef struct console {
    struct recd_server *server;
    uv_timer_t stream_timer; /* sends the streams' updates */
    bool timer_running;
    LIST_HEAD(viewer_list, console_viewer) viewers;
    size_t viewer_count;
    size_t jobs;             /* file reads in flight */
    uint64_t refused;        /* requests answered 503: CONSOLE_MAX_JOBS reads, or max_streams */
    bool closing;
    bool timer_closed;
} console;

/* Sets opt's route to the console's. 0 or -ENOMEM. */
int console_start(struct recd_server *s, recd_http_options *opt);
/* Stops the stream timer (its handle closes on the loop); the HTTP server closes the streams. */
void console_stop(struct recd_server *s);

/* ---- between the console's files ---- */
/* Frees c once it is stopped and no stream or file read refers to it any more. */
void console_maybe_free(console *c);
void console_send_json(recd_http_reply *r, int code, const char *json);
void console_send_error(recd_http_reply *r, int code, const char *what);
/* The latest samples and events of the session named key, as a JSON object's text (malloc'd),
 * or NULL when there is no such session; *version is its view's version. */
char *console_latest_json(struct recd_server *s, const char *key, uint64_t *version);
bool console_route_stream(console *c, const recd_http_request *req, const char *key,
                          recd_http_reply *reply);
bool console_route_files(console *c, const recd_http_request *req, const char *rest,
                         size_t rest_len, recd_http_reply *reply);
bool console_route_pages(console *c, const recd_http_request *req, recd_http_reply *reply);
/* Percent-decodes src[0..len) into out (cap bytes with the NUL): its length, or -1 when it is
 * malformed, holds a NUL or does not fit. */
long console_url_decode(const char *src, size_t len, char *out, size_t cap);
/* The value of name= in a query, decoded: 1 found, 0 absent, -1 malformed or too long. */
int console_query(const recd_http_request *req, const char *name, char *out, size_t cap);

#endif
