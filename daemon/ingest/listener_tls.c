/* SPDX-License-Identifier: MIT */
/* TLS on stream connections (tls:// listeners): the handshake and its deadline, decryption of
 * what is read into the connection's wire decoder, the client certificate's identity (checked
 * against identities once the handshake ends), and the records sent back (handshake messages,
 * alerts, error replies). A failed or overdue handshake is counted in
 * recd_connections_dropped_total and costs what an idle connection costs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "listener.h"
#include "support/identity.h"
#include "support/log.h"
#include "support/tls_server.h"

int stream_tls_start(recd_conn *c)
{
    recd_ingest *g = c->ingest;
    if (!g->tls)
        return -ENOTCONN;
    c->tls = tls_conn_new(g->tls, true);
    if (!c->tls)
        return -ENOMEM;
    uint64_t limit = g->cfg->tls.handshake_timeout_ms ? g->cfg->tls.handshake_timeout_ms
                                                       : g->cfg->limits.frame_timeout_ms;
    c->handshake_until_ms = uv_now(g->loop) + limit;
    return 0;
}

void stream_tls_free(recd_conn *c)
{
    tls_conn_free(c->tls);
    c->tls = NULL;
}

/* Counts and logs a connection TLS gives up on: the caller sends the alert that waits and
 * closes it. */
static int tls_drop(recd_conn *c, recd_m_conn_drop reason, const char *why)
{
    recd_metrics_conn_dropped(c->ingest->metrics, reason);
    log_warn("%s: %s; closing the connection", c->peer, why);
    return STREAM_TLS_DROP;
}

/* The handshake just ended: the client certificate's names become the connection's identity,
 * when a pattern of identities (if any) takes one of them. False: dropped. */
static bool take_identity(recd_conn *c)
{
    recd_ingest *g = c->ingest;
    const char *const *names;
    size_t n = tls_conn_names(c->tls, &names);
    bool asked = tls_server_ctx_wants_client_cert(g->tls) || n > 0;
    const char *name = n ? names[0] : NULL;
    const recd_identity_rule *rule = NULL;
    if (n && g->cfg->identity_count) {
        rule = identity_rule_of(g->cfg, names, n, &name);
        if (!rule) {
            char why[200];
            snprintf(why, sizeof why, "client certificate '%.64s' matches no pattern of identities",
                     names[0]);
            (void)tls_drop(c, RECD_M_CONN_DROP_TLS_IDENTITY, why);
            return false;
        }
    }
    if (name) {
        snprintf(c->identity, sizeof c->identity, "%s", name);
        c->in.identity = c->identity;
    }
    recd_metrics_tls_connection(g->metrics, rule ? rule->pattern : NULL, asked && n > 0);
    log_debug("%s: %s established%s%s", c->peer, tls_conn_version(c->tls),
              name ? ", identity " : "", name ? name : "");
    return true;
}

/* The decoder's verdict kept apart from TLS's own: both may say -EPROTO. */
typedef struct plain_relay {
    int (*fn)(void *ctx, const uint8_t *p, size_t n);
    void *ctx;
    int rc;
} plain_relay;

static int relay(void *r_, const uint8_t *p, size_t n)
{
    plain_relay *r = r_;
    r->rc = r->fn(r->ctx, p, n);
    return r->rc;
}

int stream_tls_read(recd_conn *c, const uint8_t *data, size_t len,
                    int (*on_plain)(void *ctx, const uint8_t *p, size_t n), void *ctx)
{
    char why[400] = "";
    plain_relay r = {on_plain, ctx, 0};
    bool closed = false, was_established = tls_conn_established(c->tls);
    int rc = tls_conn_feed(c->tls, data, len, relay, &r, &closed, why, sizeof why);
    if (rc == TLS_FEED_ESTABLISHED) {
        if (!take_identity(c))
            return STREAM_TLS_DROP;
        was_established = true;
        rc = tls_conn_feed(c->tls, NULL, 0, relay, &r, &closed, why, sizeof why);
    }
    if (r.rc < 0)
        return r.rc; /* the decoder refused what came in: a protocol error, answered */
    if ((rc == -EPROTO || rc == -ENOMEM) && !was_established)
        return tls_drop(c, RECD_M_CONN_DROP_TLS_HANDSHAKE, why[0] ? why : "out of memory in TLS");
    if (rc == -EPROTO || rc == -ENOMEM) { /* a broken record: the stream cannot go on */
        recd_metrics_decode_error(c->ingest->metrics, RECD_M_FRAMING);
        log_warn("%s: %s; closing the connection", c->peer, why[0] ? why : "out of memory in TLS");
        return STREAM_TLS_DROP;
    }
    return rc == 0 && closed ? STREAM_TLS_EOF : rc;
}

bool stream_tls_close_notify(recd_conn *c)
{
    tls_conn_shutdown(c->tls);
    return tls_conn_has_output(c->tls);
}

int stream_tls_take_output(recd_conn *c, recd_buf *out)
{
    return tls_conn_take_output(c->tls, out);
}

int stream_tls_seal(recd_conn *c, recd_buf *buf, bool closing)
{
    if (!tls_conn_established(c->tls))
        return -ENOTCONN;
    int rc = tls_conn_write(c->tls, buf->data, buf->len);
    if (rc < 0)
        return rc;
    if (closing)
        tls_conn_shutdown(c->tls);
    recd_buf_reset(buf);
    return tls_conn_take_output(c->tls, buf);
}

bool stream_tls_overdue(recd_conn *c, uint64_t now_ms)
{
    if (!c->tls || tls_conn_established(c->tls) || now_ms < c->handshake_until_ms)
        return false;
    recd_metrics_conn_dropped(c->ingest->metrics, RECD_M_CONN_DROP_TLS_TIMEOUT);
    log_info("%s: TLS handshake not done within tls.handshake_timeout; closing the connection",
             c->peer);
    return true;
}
