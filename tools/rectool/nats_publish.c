/* SPDX-License-Identifier: MIT */
/* JetStream publishing for rectool send (nats_publish.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nats_publish.h"
#include "recd/fleet.h"
#include "recd/wire.h"

bool rt_nats_url(const char *url) { return strncmp(url, "nats://", 7) == 0; }

#ifndef RECTOOL_HAVE_NATS

int rt_nats_open(rt_nats **out, const char *url, const rt_nats_options *opt, char *err,
                 size_t errlen)
{
    (void)url;
    (void)opt;
    *out = NULL;
    snprintf(err, errlen, "this rectool was built without NATS support (libnats-dev)");
    return -ENOTSUP;
}
int rt_nats_send(rt_nats *n, const recd_msg *m, char *err, size_t errlen)
{
    (void)n, (void)m, (void)err, (void)errlen;
    return -ENOTSUP;
}
int rt_nats_flush(rt_nats *n, char *err, size_t errlen)
{
    (void)n, (void)err, (void)errlen;
    return -ENOTSUP;
}
uint64_t rt_nats_bytes(const rt_nats *n) { return (void)n, 0; }
uint64_t rt_nats_lost(const rt_nats *n) { return (void)n, 0; }
int rt_nats_close(rt_nats *n, char *err, size_t errlen) { return rt_nats_flush(n, err, errlen); }

#else

#include <nats/nats.h>
#include <pthread.h>

struct rt_nats {
    natsConnection *nc;
    int64_t ack_wait_ms;
    jsCtx *js;
    recd_fleet_url url;
    uint32_t partitions;
    recd_buf frame;
    uint64_t bytes;
    pthread_mutex_t lock; /* the ack error handler runs on a libnats thread */
    uint64_t lost;
    uint64_t reported; /* lost messages already reported by rt_nats_flush */
    char first_error[200];
};

static void on_pub_error(jsCtx *js, jsPubAckErr *pae, void *closure)
{
    (void)js;
    rt_nats *n = closure;
    pthread_mutex_lock(&n->lock);
    if (!n->lost)
        snprintf(n->first_error, sizeof n->first_error, "%s on %s", 
                 pae->ErrText ? pae->ErrText : natsStatus_GetText(pae->Err),
                 natsMsg_GetSubject(pae->Msg));
    n->lost++;
    pthread_mutex_unlock(&n->lock);
}

int rt_nats_open(rt_nats **out, const char *url, const rt_nats_options *opt, char *err,
                 size_t errlen)
{
    *out = NULL;
    rt_nats *n = calloc(1, sizeof *n);
    if (!n)
        return -ENOMEM;
    pthread_mutex_init(&n->lock, NULL);
    int rc = recd_fleet_url_parse(url, &n->url, err, errlen);
    if (rc < 0) {
        free(n);
        return rc;
    }
    n->partitions = opt && opt->partitions ? opt->partitions : RECD_FLEET_DEFAULT_PARTITIONS;
    char server[300];
    snprintf(server, sizeof server, strchr(n->url.host, ':') ? "nats://[%s]:%u" : "nats://%s:%u",
             n->url.host, n->url.port);
    natsOptions *o = NULL;
    natsStatus s = natsOptions_Create(&o);
    if (s == NATS_OK)
        s = natsOptions_SetURL(o, server);
    if (s == NATS_OK) /* published while reconnecting: kept up to this, then an error */
        s = natsOptions_SetReconnectBufSize(o, (int)(opt && opt->buffer_bytes ? opt->buffer_bytes
                                                                                : 8 << 20));
    if (s == NATS_OK)
        s = natsOptions_SetMaxReconnect(o, 60);
    if (s == NATS_OK)
        s = natsConnection_Connect(&n->nc, o);
    natsOptions_Destroy(o);
    jsOptions jo;
    if (s == NATS_OK)
        s = jsOptions_Init(&jo);
    if (s == NATS_OK) {
        jo.PublishAsync.MaxPending = opt && opt->max_in_flight ? opt->max_in_flight : 1024;
        jo.PublishAsync.ErrHandler = on_pub_error;
        jo.PublishAsync.ErrHandlerClosure = n;
        jo.PublishAsync.StallWait = opt && opt->stall_ms ? opt->stall_ms : 10000;
        n->ack_wait_ms = jo.PublishAsync.StallWait;
        s = natsConnection_JetStream(&n->js, n->nc, &jo);
    }
    if (s != NATS_OK) {
        snprintf(err, errlen, "%s: %s", server, natsStatus_GetText(s));
        rt_nats_close(n, NULL, 0);
        return -ECONNREFUSED;
    }
    *out = n;
    return 0;
}

int rt_nats_send(rt_nats *n, const recd_msg *m, char *err, size_t errlen)
{
    char subject[RECD_FLEET_SUBJECT_MAX];
    size_t klen = strnlen(m->session, sizeof m->session);
    int rc = recd_fleet_subject(n->url.prefix, m->session, klen, n->partitions, subject,
                                sizeof subject);
    if (rc < 0) {
        snprintf(err, errlen, "no subject for session '%s': %s", m->session, recd_strerror(rc));
        return rc;
    }
    n->frame.len = 0;
    if ((rc = recd_wire_encode(m, RECD_WIRE_BINARY, 0, &n->frame)) < 0) {
        snprintf(err, errlen, "cannot encode a message: %s", recd_strerror(rc));
        return rc;
    }
    natsStatus s = js_PublishAsync(n->js, subject, n->frame.data, (int)n->frame.len, NULL);
    if (s != NATS_OK) {
        snprintf(err, errlen, "publishing to %s: %s (%s)", subject, natsStatus_GetText(s),
                 nats_GetLastError(NULL));
        return -EIO;
    }
    n->bytes += n->frame.len;
    return 0;
}

int rt_nats_flush(rt_nats *n, char *err, size_t errlen)
{
    if (!n->js)
        return 0;
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MaxWait = n->ack_wait_ms;
    natsStatus s = js_PublishAsyncComplete(n->js, &po);
    if (s != NATS_OK) {
        /* Still unconfirmed after the wait: every one of them counts as lost. */
        natsMsgList pending = {0};
        if (js_PublishAsyncGetPendingList(&pending, n->js) == NATS_OK) {
            pthread_mutex_lock(&n->lock);
            n->lost += (uint64_t)pending.Count;
            if (!n->first_error[0])
                snprintf(n->first_error, sizeof n->first_error, "no ack: %s",
                         natsStatus_GetText(s));
            pthread_mutex_unlock(&n->lock);
            natsMsgList_Destroy(&pending);
        }
    }
    pthread_mutex_lock(&n->lock);
    uint64_t lost = n->lost, fresh = n->lost - n->reported;
    n->reported = n->lost;
    pthread_mutex_unlock(&n->lock);
    if (fresh) {
        if (err)
            snprintf(err, errlen, "%llu messages were not confirmed by JetStream (first: %s)",
                     (unsigned long long)lost, n->first_error);
        return -EIO;
    }
    return 0;
}

uint64_t rt_nats_bytes(const rt_nats *n) { return n->bytes; }
uint64_t rt_nats_lost(const rt_nats *n) { return n->lost; }

int rt_nats_close(rt_nats *n, char *err, size_t errlen)
{
    if (!n)
        return 0;
    int rc = rt_nats_flush(n, err, errlen);
    jsCtx_Destroy(n->js);
    natsConnection_Destroy(n->nc);
    recd_buf_free(&n->frame);
    pthread_mutex_destroy(&n->lock);
    free(n);
    return rc;
}

#endif
