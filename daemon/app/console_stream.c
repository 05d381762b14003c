/* SPDX-License-Identifier: MIT */
/* GET /api/sessions/KEY/stream: a session's latest samples as Server-Sent Events, at most
 * CONSOLE_STREAM_HZ a second, sent only when they changed (and a comment now and then so a gone
 * client is noticed). A viewer's memory is its entry here and the HTTP server's bounded backlog:
 * a client that does not read is closed by the server and counted (streams_dropped). */
#include "console.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recd/message.h"
#include "server.h"

#define KEEPALIVE_MS 10000u

struct console_viewer {
    LIST_ENTRY(console_viewer) link;
    console *c;
    recd_http_reply *reply;
    uint64_t version;      /* of the view last sent; UINT64_MAX before the first */
    uint64_t last_sent_ms;
    bool ended;            /* the session is gone and was said to be */
    char key[RECD_SESSION_KEY_MAX + 1];
};

static void viewer_gone(void *data)
{
    console_viewer *v = data;
    console *c = v->c;
    LIST_REMOVE(v, link);
    c->viewer_count--;
    free(v);
    if (!c->viewer_count && !c->closing)
        uv_timer_stop(&c->stream_timer);
    console_maybe_free(c);
}

/* One event: "event: NAME\ndata: TEXT\n\n" (TEXT is one line of JSON). */
static void send_event(console_viewer *v, const char *name, const char *text, uint64_t now)
{
    size_t len = strlen(name) + strlen(text) + 20;
    char *ev = malloc(len);
    if (!ev)
        return;
    int n = snprintf(ev, len, "event: %s\ndata: %s\n\n", name, text);
    v->last_sent_ms = now;
    recd_http_stream_write(v->reply, ev, (size_t)n); /* may close it: v is freed later, by libuv */
    free(ev);
}

static void update(console_viewer *v, uint64_t now)
{
    uint64_t version;
    if (v->ended)
        return;
    char *text = console_latest_json(v->c->server, v->key, &version);
    if (!text) {
        v->ended = true;
        send_event(v, "end", "{\"reason\":\"the session is closed\"}", now);
        return;
    }
    if (version != v->version) {
        v->version = version;
        send_event(v, "latest", text, now);
    } else if (now - v->last_sent_ms >= KEEPALIVE_MS) {
        v->last_sent_ms = now;
        recd_http_stream_write(v->reply, ": keepalive\n\n", 13);
    }
    free(text);
}

static void on_tick(uv_timer_t *t)
{
    console *c = t->data;
    uint64_t now = uv_now(c->server->loop);
    console_viewer *v, *next;
    /* A write may close a stream; its on_gone runs later (the handle's close callback). */
    for (v = LIST_FIRST(&c->viewers); v; v = next) {
        next = LIST_NEXT(v, link);
        update(v, now);
    }
}

bool console_route_stream(console *c, const recd_http_request *req, const char *key,
                          recd_http_reply *reply)
{
    if (strcmp(req->method, "GET") != 0) {
        console_send_error(reply, 405, "a stream is read with GET");
        return true;
    }
    if (!session_table_get(&c->server->sessions.table, key)) {
        console_send_error(reply, 404, "no such session");
        return true;
    }
    console_viewer *v = calloc(1, sizeof *v);
    if (!v) {
        console_send_error(reply, 503, "out of memory");
        return true;
    }
    v->c = c;
    v->reply = reply;
    v->version = UINT64_MAX;
    snprintf(v->key, sizeof v->key, "%s", key);
    if (recd_http_reply_stream(reply, "text/event-stream", CONSOLE_SECURITY_HEADERS, viewer_gone, v) < 0) {
        free(v);
        c->refused++;
        console_send_error(reply, 503, "too many streams open: try again later");
        return true;
    }
    LIST_INSERT_HEAD(&c->viewers, v, link);
    c->viewer_count++;
    if (!uv_is_active((uv_handle_t *)&c->stream_timer))
        uv_timer_start(&c->stream_timer, on_tick, 0, 1000 / CONSOLE_STREAM_HZ);
    return true;
}
