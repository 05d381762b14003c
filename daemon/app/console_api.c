/* SPDX-License-Identifier: MIT */
/* The console's routing and its live-state answers: /api/sessions, a session's latest samples
 * and /api/process (docs/http-api.md). Everything here runs on the loop thread and reads the
 * registry as it is; nothing blocks. */
#include "console.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/statvfs.h>

#include <jansson.h>

#include "record/session_formats.h"
#include "record/session_live.h"
#include "server.h"
#include "support/clock.h"
#include "support/log.h"

/* Sends o (taking it) as the answer, or 500 when it is NULL or cannot be written. */
static void send_object(recd_http_reply *r, json_t *o)
{
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!text) {
        console_send_error(r, 500, "out of memory");
        return;
    }
    console_send_json(r, 200, text);
    free(text);
}

/* The peer that opened a session, as its address (an IPv6 peer is counted by its /64). */
static json_t *peer_json(const recd_session *s)
{
    char text[INET6_ADDRSTRLEN + 16];
    const peer_entry *p = s->peer;
    if (!p || !p->key.family)
        return json_null();
    if (p->key.family == AF_INET && inet_ntop(AF_INET, p->key.addr, text, sizeof text))
        return json_string(text);
    if (p->key.family == AF_INET6 && inet_ntop(AF_INET6, p->key.addr, text, INET6_ADDRSTRLEN)) {
        strcat(text, "/64");
        return json_string(text);
    }
    uint32_t uid;
    memcpy(&uid, p->key.addr, sizeof uid);
    snprintf(text, sizeof text, "uid %u", uid);
    return json_string(text);
}

static const char *session_state(const recd_session *s)
{
    return s->closing ? "closing" : s->dormant ? "dormant" : s->write_failing ? "write_failing" : "open";
}

/* The session's counts in drops_by [first, end), named as the metrics' labels: only those seen. */
static json_t *drops_by_json(const recd_session *s, size_t first, size_t end,
                            const char *(*name)(size_t))
{
    json_t *o = json_object();
    for (size_t i = first; o && s->drops_by && i < end; i++)
        if (s->drops_by[i])
            json_object_set_new(o, name(i - first), json_integer((json_int_t)s->drops_by[i]));
    return o ? o : json_object();
}

static const char *reason_name(size_t i) { return recd_metrics_reason_name((recd_m_reason)i); }
static const char *drop_name(size_t i) { return recd_metrics_drop_name((recd_m_drop)i); }

static json_t *session_json(recd_server *srv, const recd_session *s, uint64_t now)
{
    const session_live *l = s->view;
    const recd_config *cfg = &srv->cfg;
    json_t *o = json_pack("{s:s, s:s, s:o, s:s, s:I, s:I, s:I}", "key", s->key, "format",
                          recd_msg_format_name(s->format), "peer", peer_json(s), "state",
                          session_state(s), "started_ms", (json_int_t)s->start_epoch_ms,
                          "idle_ms", (json_int_t)(now - s->last_input_ms), "samples",
                          (json_int_t)s->inputs);
    if (!o)
        return NULL;
    json_object_set_new(o, "rate", json_real(l ? l->rate : 0.0));
    json_object_set_new(o, "identity", s->identity[0] ? json_string(s->identity) : json_null());
    json_object_set_new(o, "bytes", json_pack("{s:I, s:I, s:I}", "queued", (json_int_t)s->queued_total,
                                              "written", (json_int_t)s->written_total, "lost",
                                              (json_int_t)s->lost_total));
    json_object_set_new(o, "part", s->part ? json_pack("{s:s, s:I, s:I}", "name", s->part->name,
                                                       "number", (json_int_t)s->part_no,
                                                       "size", (json_int_t)s->part_written)
                                           : json_null());
    json_object_set_new(o, "buffer", json_pack("{s:I, s:I, s:I}", "used", (json_int_t)s->buffered,
                                               "limit", (json_int_t)cfg->limits.session_buffer,
                                               "held", (json_int_t)s->held));
    json_t *refused_by = drops_by_json(s, 0, RECD_M_REASONS, reason_name);
    json_t *dropped_by = drops_by_json(s, RECD_M_REASONS, SESSION_DROP_SLOTS, drop_name);
    json_object_set_new(o, "drops", json_pack("{s:I, s:I, s:o, s:o}", "refused",
                                              (json_int_t)s->refused, "actors_over",
                                              (json_int_t)(l ? l->actors_over : 0), "refused_by",
                                              refused_by, "dropped_by", dropped_by));
    json_object_set_new(o, "ring", json_pack("{s:b, s:b}", "can_save", s->ops->ring_save != NULL,
                                             "active", s->ring != NULL));
    return o;
}

static void serve_sessions(recd_server *srv, recd_http_reply *r)
{
    json_t *list = json_array();
    uint64_t now = uv_now(srv->loop);
    const recd_session *s;
    LIST_FOREACH(s, &srv->sessions.live, live)
        if (list)
            json_array_append_new(list, session_json(srv, s, now));
    json_t *o = list ? json_pack("{s:o, s:I, s:I}", "sessions", list, "open",
                                 (json_int_t)srv->sessions.live_count, "dormant",
                                 (json_int_t)srv->sessions.dormant_count)
                     : NULL;
    send_object(r, o);
}

static void serve_latest(recd_server *srv, const char *key, recd_http_reply *r)
{
    uint64_t version;
    char *text = console_latest_json(srv, key, &version);
    if (!text) {
        console_send_error(r, 404, "no such session");
        return;
    }
    console_send_json(r, 200, text);
    free(text);
}

static json_t *disk_json(recd_server *srv)
{
    struct statvfs v;
    json_t *o = json_pack("{s:s}", "root", srv->cfg.output.root);
    if (o && srv->root_fd >= 0 && fstatvfs(srv->root_fd, &v) == 0) {
        json_object_set_new(o, "total", json_integer((json_int_t)((uint64_t)v.f_blocks * v.f_frsize)));
        json_object_set_new(o, "free", json_integer((json_int_t)((uint64_t)v.f_bavail * v.f_frsize)));
    }
    if (o)
        json_object_set_new(o, "retention",
                            json_pack("{s:I, s:I, s:I}", "max_age_ms",
                                      (json_int_t)srv->cfg.retention.max_age_ms, "max_total_size",
                                      (json_int_t)srv->cfg.retention.max_total_size,
                                      "max_files_per_session",
                                      (json_int_t)srv->cfg.retention.max_files_per_session));
    return o;
}

static json_t *listeners_json(recd_server *srv)
{
    json_t *a = json_array();
    const recd_listener *l;
    LIST_FOREACH(l, &srv->ingest.listeners, link)
        if (a && !l->closing)
            json_array_append_new(a, json_string(l->bound[0] ? l->bound : l->cfg.url));
    return a;
}

/* The process's drops and refusals by reason, as the metrics count them. */
static json_t *drops_json(recd_server *srv)
{
    json_t *dropped = json_object(), *refused = json_object();
    for (size_t i = 0; dropped && i < RECD_M_DROPS; i++)
        json_object_set_new(dropped, recd_metrics_drop_name((recd_m_drop)i),
                            json_integer((json_int_t)recd_metric_value(srv->metrics.samples_dropped_total, i)));
    for (size_t i = 0; refused && i < RECD_M_REASONS; i++)
        json_object_set_new(refused, recd_metrics_reason_name((recd_m_reason)i),
                            json_integer((json_int_t)recd_metric_value(srv->metrics.decode_errors_total, i)));
    return json_pack("{s:o, s:o}", "samples_dropped", dropped ? dropped : json_object(), "messages_refused",
                     refused ? refused : json_object());
}

static void serve_process(console *c, recd_http_reply *r)
{
    recd_server *srv = c->server;
    recd_metrics_refresh_process(&srv->metrics);
    ingest_nats_refresh_metrics(&srv->ingest);
    char warnings[8192];
    size_t nw = recd_log_recent(warnings, sizeof warnings);
    json_t *warn = json_loadb(warnings, nw, 0, NULL);
    json_t *o = json_pack("{s:o, s:i, s:o, s:I, s:I, s:I, s:I}", "listeners", listeners_json(srv),
                          "http_port", srv->metrics_port, "disk", disk_json(srv),
                          "fleet_partitions_owned",
                          (json_int_t)recd_metric_value(srv->metrics.nats_partitions_owned, 0),
                          "buffered", (json_int_t)srv->sessions.env.buffered, "ring_bytes",
                          (json_int_t)srv->sessions.env.ring_bytes, "bytes_lost",
                          (json_int_t)srv->sessions.bytes_lost);
    if (o) {
        json_object_set_new(o, "warnings", warn ? warn : json_array());
        json_object_set_new(o, "drops", drops_json(srv));
        json_object_set_new(o, "console", json_pack("{s:I, s:I, s:I, s:I}", "streams",
                                                     (json_int_t)recd_http_server_streams(srv->http),
                                                     "streams_dropped",
                                                     (json_int_t)recd_http_server_streams_dropped(srv->http),
                                                     "jobs", (json_int_t)c->jobs, "refused",
                                                     (json_int_t)c->refused));
    } else {
        json_decref(warn);
    }
    send_object(r, o);
}

/* /api/sessions/KEY[/latest|/stream] */
static bool route_session(console *c, const recd_http_request *req, const char *rest, size_t len,
                          recd_http_reply *r)
{
    const char *slash = memchr(rest, '/', len);
    char key[RECD_SESSION_KEY_MAX + 1];
    if (!slash || console_url_decode(rest, (size_t)(slash - rest), key, sizeof key) <= 0) {
        console_send_error(r, 404, "no such session");
        return true;
    }
    size_t tail = len - (size_t)(slash - rest);
    if (tail == 7 && memcmp(slash, "/latest", 7) == 0)
        serve_latest(c->server, key, r);
    else if (tail == 7 && memcmp(slash, "/stream", 7) == 0)
        return console_route_stream(c, req, key, r);
    else
        console_send_error(r, 404, "not found");
    return true;
}

/* Whether the request carries the token, or came with a client certificate that verified. */
static bool credentialed(recd_server *srv, const recd_http_request *req)
{
    const char *token = srv->cfg.auth.token;
    if (req->client_cert)
        return true;
    return token && req->authorization && strncmp(req->authorization, "Bearer ", 7) == 0 &&
           strcmp(req->authorization + 7, token) == 0;
}

/* Read-only answers as metrics.console says; NULL when allowed, else why not. */
static const char *refusal(recd_server *srv, const recd_http_request *req)
{
    switch ((recd_console_access)srv->cfg.metrics.console) {
    case RECD_CONSOLE_OPEN: return NULL;
    case RECD_CONSOLE_TOKEN:
        return credentialed(srv, req)
                   ? NULL
                   : "the console answers clients with auth.token or a client certificate";
    case RECD_CONSOLE_LOOPBACK:
        return req->peer_loopback || credentialed(srv, req)
                   ? NULL
                   : "the console answers loopback clients, others with auth.token or a "
                     "client certificate";
    case RECD_CONSOLE_OFF: break;
    }
    return "";
}

static bool console_route(void *ctx, const recd_http_request *req, recd_http_reply *r)
{
    console *c = ctx;
    static const char api[] = "/api/";
    const char *why = refusal(c->server, req);
    if (why && !why[0]) {
        console_send_error(r, 404, "not found (metrics.console: off)");
        return true;
    }
    if (why) {
        console_send_error(r, 403, why);
        return true;
    }
    if (req->path_len < sizeof api - 1 || memcmp(req->path, api, sizeof api - 1) != 0)
        return console_route_pages(c, req, r);
    const char *p = req->path + 4;
    size_t n = req->path_len - 4;
    if (n == 9 && memcmp(p, "/sessions", 9) == 0)
        serve_sessions(c->server, r);
    else if (n > 10 && memcmp(p, "/sessions/", 10) == 0)
        return route_session(c, req, p + 10, n - 10, r);
    else if (n >= 11 && memcmp(p, "/recordings", 11) == 0 && (n == 11 || p[11] == '/'))
        return console_route_files(c, req, p + 11, n - 11, r);
    else if (n == 8 && memcmp(p, "/process", 8) == 0)
        serve_process(c, r);
    else
        console_send_error(r, 404, "not found");
    return true;
}

static void timer_closed(uv_handle_t *h)
{
    console *c = h->data;
    c->timer_closed = true;
    console_maybe_free(c);
}

int console_start(recd_server *s, recd_http_options *opt)
{
    console *c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    c->server = s;
    LIST_INIT(&c->viewers);
    uv_timer_init(s->loop, &c->stream_timer);
    c->stream_timer.data = c;
    s->console = c;
    opt->route = console_route;
    opt->route_ctx = c;
    return 0;
}

void console_stop(recd_server *s)
{
    console *c = s->console;
    if (!c)
        return;
    s->console = NULL;
    c->closing = true;
    uv_timer_stop(&c->stream_timer);
    uv_close((uv_handle_t *)&c->stream_timer, timer_closed);
}
