/* SPDX-License-Identifier: MIT */
/* nats:// inputs (listener.h): the worker thread that talks to JetStream (connection,
 * stream, lease bucket, consumers, leases, pulls) and the loop-thread side that decodes,
 * dispatches and acknowledges once written. The two share only the per-partition queues, the
 * in-flight counts and a few flags, under one mutex. */

#include "listener.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/log.h"

#ifndef RECD_HAVE_NATS

int listener_nats_open(recd_ingest *g, const recd_listen_config *cfg, recd_listener **out,
                       char *why, size_t whylen)
{
    (void)g;
    *out = NULL;
    snprintf(why, whylen, "%s: this recd was built without NATS support (libnats-dev)", cfg->url);
    return -ENOTSUP;
}
void listener_nats_retire(recd_listener *l) { (void)l; }
void ingest_nats_progress(recd_ingest *g) { (void)g; }
void ingest_nats_session_freed(recd_ingest *g, const recd_session *s) { (void)g, (void)s; }
bool ingest_nats_unhealthy(recd_ingest *g, char *why, size_t whylen)
{
    (void)g, (void)why, (void)whylen;
    return false;
}
void ingest_nats_refresh_metrics(recd_ingest *g) { (void)g; }
void ingest_nats_close_all(recd_ingest *g) { (void)g; }

#else

#include <nats/nats.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "recd/fleet.h"

#define NATS_FETCH_MAX 256          /* messages asked for in one pull */
#define NATS_IDLE_WAIT_MS 20        /* worker pause when no partition gave anything */
#define NATS_PULL_WAIT_MS 10        /* the server holds an empty pull this long */
#define NATS_RETRY_MS 1000          /* after a failed connect or setup */
#define NATS_ACK_WAIT_MIN_MS 30000  /* JetStream redelivers what is unacknowledged this long */
#define NATS_API_WAIT_MS 3000       /* JetStream API and key-value requests */
#define NATS_TAKE_BATCH 64          /* messages the loop takes off a queue under one lock */

/* A message taken and not yet acknowledged (loop thread). */
typedef struct pending_ack {
    natsMsg *msg;
    uint64_t seq;             /* stream sequence */
    const recd_session *s;    /* the session it fed, or NULL: nothing to wait for */
    uint64_t input_no;        /* s->inputs after it */
    uint64_t mark;            /* s->queued_total once its input was queued (marked) */
    uint64_t lost_before;     /* s->lost_total when it was taken */
    bool marked;
} pending_ack;

typedef struct nats_partition {
    uint32_t no;
    /* worker thread */
    natsSubscription *sub;
    bool owned;
    bool draining; /* given up for a fair share: released once nothing of it is in flight */
    uint64_t lease_rev;
    uint64_t renewed_ms; /* last successful claim or renewal */
    /* shared, under src->lock */
    natsMsg **queue;     /* taken by the worker, not yet dispatched: a ring of max_in_flight */
    size_t qhead, qcount;
    uint32_t in_flight;  /* queued + pending */
    bool owned_shared;
    uint64_t lag;        /* num_pending of the last message pulled */
    /* loop thread */
    pending_ack *pending;
    size_t npending;
    uint64_t highest_taken; /* stream sequence */
    recd_wire_decoder *dec;
    session_input in;
    char peer[RECD_CONFIG_URL_MAX + 32];
    bool blocked; /* a buffer limit was hit: dispatch resumes on room */
    bool sample;  /* the message being taken is a state or an event */
    bool lag_seen;      /* a message of the batch being taken said its lag */
    uint64_t lag_taken; /* num_pending of the last one: published once per batch */
} nats_partition;

typedef struct nats_source {
    LIST_ENTRY(nats_source) link;
    recd_listener *l;
    recd_ingest *g;
    recd_fleet_url url;
    char server[300];
    char stream[RECD_FLEET_PREFIX_MAX + 8], bucket[RECD_FLEET_PREFIX_MAX + 16], instance[128];
    char *creds, *tls_ca, *tls_cert, *tls_key;
    uint32_t nparts, max_in_flight;
    uint64_t lease_ttl_ms, ack_wait_ms;
    nats_partition *parts;
    input_tally tally;
    bool retiring, closed;

    pthread_t worker;
    bool worker_started;
    uv_work_t reaper;      /* joins the stopping worker off the loop thread */
    unsigned closing_refs; /* loop only: the handle's close and the join, both needed to free */
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stop;           /* under lock */
    bool connected;      /* under lock */
    char last_error[256]; /* under lock */
    uint64_t renew_failures; /* under lock: not yet added to the metric */
    uint64_t down_since_ms;  /* under lock: monotonic, 0 while connected */

    /* worker only */
    natsConnection *nc;
    jsCtx *js;
    kvStore *kv;
} nats_source;

static uint64_t mono_ms(void) { return uv_hrtime() / 1000000u; }

/* ---- worker thread ----------------------------------------------------------------------- */

static void set_error(nats_source *src, const char *what, natsStatus s)
{
    pthread_mutex_lock(&src->lock);
    snprintf(src->last_error, sizeof src->last_error, "%s: %s", what, natsStatus_GetText(s));
    pthread_mutex_unlock(&src->lock);
}

static void set_connected(nats_source *src, bool up)
{
    pthread_mutex_lock(&src->lock);
    if (up != src->connected) {
        src->connected = up;
        src->down_since_ms = up ? 0 : mono_ms();
    }
    pthread_mutex_unlock(&src->lock);
}

static void on_disconnected(natsConnection *nc, void *closure)
{
    (void)nc;
    set_connected(closure, false);
}

static void on_reconnected(natsConnection *nc, void *closure)
{
    (void)nc;
    set_connected(closure, true);
}

static bool stopping(nats_source *src)
{
    pthread_mutex_lock(&src->lock);
    bool stop = src->stop;
    pthread_mutex_unlock(&src->lock);
    return stop;
}

static void worker_wait(nats_source *src, uint64_t ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)(ms / 1000);
    until.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&src->lock);
    if (!src->stop)
        pthread_cond_timedwait(&src->wake, &src->lock, &until);
    pthread_mutex_unlock(&src->lock);
}

static natsStatus connect_server(nats_source *src)
{
    natsOptions *o = NULL;
    natsStatus s = natsOptions_Create(&o);
    if (s == NATS_OK)
        s = natsOptions_SetURL(o, src->server);
    if (s == NATS_OK)
        s = natsOptions_SetMaxReconnect(o, -1); /* forever: the fleet waits for its engine */
    if (s == NATS_OK)
        s = natsOptions_SetReconnectWait(o, 500);
    if (s == NATS_OK)
        s = natsOptions_SetTimeout(o, 2000);
    if (s == NATS_OK)
        s = natsOptions_SetDisconnectedCB(o, on_disconnected, src);
    if (s == NATS_OK)
        s = natsOptions_SetReconnectedCB(o, on_reconnected, src);
    if (s == NATS_OK && src->creds)
        s = natsOptions_SetUserCredentialsFromFiles(o, src->creds, NULL);
    if (s == NATS_OK && (src->tls_ca || src->tls_cert))
        s = natsOptions_SetSecure(o, true);
    if (s == NATS_OK && src->tls_ca)
        s = natsOptions_LoadCATrustedCertificates(o, src->tls_ca);
    if (s == NATS_OK && src->tls_cert)
        s = natsOptions_LoadCertificatesChain(o, src->tls_cert, src->tls_key);
    if (s == NATS_OK)
        s = natsConnection_Connect(&src->nc, o);
    natsOptions_Destroy(o);
    if (s != NATS_OK) {
        set_error(src, "connect", s);
        return s;
    }
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = NATS_API_WAIT_MS;
    s = natsConnection_JetStream(&src->js, src->nc, &jo);
    if (s != NATS_OK)
        set_error(src, "JetStream context", s);
    return s;
}

/* The stream and the lease bucket, created when missing (a plain `nats-server -js` is enough). */
static natsStatus ensure_setup(nats_source *src)
{
    jsStreamInfo *si = NULL;
    jsErrCode jerr = 0;
    natsStatus s = js_GetStreamInfo(&si, src->js, src->stream, NULL, &jerr);
    if (s == NATS_NOT_FOUND) {
        char subject[RECD_FLEET_PREFIX_MAX + 8];
        snprintf(subject, sizeof subject, "%s.>", src->url.prefix);
        const char *subjects[] = {subject};
        jsStreamConfig sc;
        jsStreamConfig_Init(&sc);
        sc.Name = src->stream;
        sc.Subjects = subjects;
        sc.SubjectsLen = 1;
        sc.Storage = js_FileStorage;
        s = js_AddStream(&si, src->js, &sc, NULL, &jerr);
        if (s == NATS_OK)
            log_notice("%s: created JetStream stream %s on %s", src->l->cfg.url, src->stream, subject);
    }
    jsStreamInfo_Destroy(si);
    if (s != NATS_OK) {
        set_error(src, "stream", s);
        return s;
    }
    s = js_KeyValue(&src->kv, src->js, src->bucket);
    if (s == NATS_NOT_FOUND) {
        kvConfig kc;
        kvConfig_Init(&kc);
        kc.Bucket = src->bucket;
        kc.History = 1;
        kc.TTL = (int64_t)src->lease_ttl_ms * 1000000; /* ns: a lease nobody renews disappears */
        kc.StorageType = js_FileStorage;
        s = js_CreateKeyValue(&src->kv, src->js, &kc);
        if (s == NATS_OK)
            log_notice("%s: created the lease bucket %s (TTL %llu ms)", src->l->cfg.url, src->bucket,
                       (unsigned long long)src->lease_ttl_ms);
    }
    if (s != NATS_OK)
        set_error(src, "lease bucket", s);
    return s;
}

static void lease_key(const nats_partition *p, char *key, size_t cap)
{
    snprintf(key, cap, "p%u", p->no);
}

/* The partition's durable consumer (created when missing) and a pull subscription bound to it. */
static natsStatus subscribe(nats_source *src, nats_partition *p)
{
    char durable[32], filter[RECD_FLEET_PREFIX_MAX + 24];
    snprintf(durable, sizeof durable, "p%u", p->no);
    snprintf(filter, sizeof filter, "%s.%u.>", src->url.prefix, p->no);
    jsConsumerConfig cc;
    jsConsumerConfig_Init(&cc);
    cc.Durable = durable;
    cc.FilterSubject = filter;
    cc.AckPolicy = js_AckExplicit;
    cc.DeliverPolicy = js_DeliverAll;
    cc.AckWait = (int64_t)src->ack_wait_ms * 1000000;
    cc.MaxAckPending = (int64_t)src->max_in_flight;
    jsConsumerInfo *ci = NULL;
    jsErrCode jerr = 0;
    natsStatus s = js_GetConsumerInfo(&ci, src->js, src->stream, durable, NULL, &jerr);
    if (s == NATS_NOT_FOUND)
        s = js_AddConsumer(&ci, src->js, src->stream, &cc, NULL, &jerr);
    jsConsumerInfo_Destroy(ci);
    if (s != NATS_OK) {
        set_error(src, "consumer", s);
        return s;
    }
    jsSubOptions so;
    jsSubOptions_Init(&so);
    so.Stream = src->stream;
    so.Consumer = durable;
    s = js_PullSubscribe(&p->sub, src->js, filter, durable, NULL, &so, &jerr);
    if (s != NATS_OK)
        set_error(src, "pull subscription", s);
    return s;
}

/* Stops pulling p and says so to the loop thread; the lease itself is the caller's business. */
static void unsubscribe(nats_source *src, nats_partition *p)
{
    natsSubscription_Destroy(p->sub); /* local only: the durable consumer stays */
    p->sub = NULL;
    p->owned = false;
    pthread_mutex_lock(&src->lock);
    p->owned_shared = false;
    pthread_mutex_unlock(&src->lock);
}

static void drop_ownership(nats_source *src, nats_partition *p, const char *why)
{
    if (!p->owned)
        return;
    log_warn("%s: partition %u released: %s", src->l->cfg.url, p->no, why);
    unsubscribe(src, p);
}

static void count_renew_failure(nats_source *src)
{
    pthread_mutex_lock(&src->lock);
    src->renew_failures++;
    pthread_mutex_unlock(&src->lock);
}

/* Announces this instance (key i.NAME, expiring with the bucket's TTL) and counts the live ones:
 * each should own about partitions / instances. 1 when they cannot be counted. */
static uint32_t live_instances(nats_source *src)
{
    char key[160];
    snprintf(key, sizeof key, "i.%s", src->instance);
    uint64_t rev = 0;
    if (kvStore_PutString(&rev, src->kv, key, src->instance) != NATS_OK)
        return 1;
    kvKeysList keys = {0};
    if (kvStore_Keys(&keys, src->kv, NULL) != NATS_OK)
        return 1;
    uint32_t n = 0;
    for (int i = 0; i < keys.Count; i++)
        n += keys.Keys[i] && strncmp(keys.Keys[i], "i.", 2) == 0;
    kvKeysList_Destroy(&keys);
    return n ? n : 1;
}

static void release_partition(nats_source *src, nats_partition *p)
{
    unsubscribe(src, p);
    p->draining = false;
    char key[32];
    lease_key(p, key, sizeof key);
    kvStore_Delete(src->kv, key);
    log_info("%s: partition %u handed back for another instance", src->l->cfg.url, p->no);
}

/* More than a fair share: the highest partitions owned stop being pulled, and are released once
 * every message taken from them is acknowledged, so they never have two owners at once. */
static void rebalance(nats_source *src, uint32_t fair)
{
    uint32_t owned = 0;
    for (uint32_t i = 0; i < src->nparts; i++)
        owned += src->parts[i].owned && !src->parts[i].draining;
    for (uint32_t i = src->nparts; i-- > 0 && owned > fair;) {
        nats_partition *p = &src->parts[i];
        if (p->owned && !p->draining) {
            p->draining = true;
            owned--;
        }
    }
    for (uint32_t i = 0; i < src->nparts; i++) {
        nats_partition *p = &src->parts[i];
        if (!p->draining)
            continue;
        pthread_mutex_lock(&src->lock);
        bool idle = p->in_flight == 0;
        pthread_mutex_unlock(&src->lock);
        if (idle)
            release_partition(src, p);
    }
}

/* Renews the leases held, claims free ones up to a fair share and hands back the excess. */
static void tend_leases(nats_source *src)
{
    uint64_t now = mono_ms();
    uint32_t instances = live_instances(src);
    uint32_t fair = (src->nparts + instances - 1) / instances;
    uint32_t owned = 0;
    for (uint32_t i = 0; i < src->nparts; i++)
        owned += src->parts[i].owned;
    for (uint32_t i = 0; i < src->nparts && !stopping(src); i++) {
        nats_partition *p = &src->parts[i];
        char key[32];
        lease_key(p, key, sizeof key);
        if (p->owned) {
            uint64_t rev = 0;
            natsStatus s = kvStore_UpdateString(&rev, src->kv, key, src->instance, p->lease_rev);
            if (s == NATS_OK) {
                p->lease_rev = rev;
                p->renewed_ms = now;
                continue;
            }
            count_renew_failure(src);
            set_error(src, "lease renewal", s);
            /* Another owner may take it once the lease has expired: stop well before that. */
            if (s != NATS_TIMEOUT || now - p->renewed_ms > src->lease_ttl_ms * 2 / 3) {
                drop_ownership(src, p, "its lease could not be renewed");
                p->draining = false;
                owned--;
            }
            continue;
        }
        if (owned >= fair)
            continue;
        uint64_t rev = 0;
        natsStatus s = kvStore_CreateString(&rev, src->kv, key, src->instance);
        if (s != NATS_OK)
            continue; /* held by another instance (or the server is away) */
        p->lease_rev = rev;
        p->renewed_ms = now;
        if (subscribe(src, p) != NATS_OK) {
            kvStore_Delete(src->kv, key);
            continue;
        }
        p->owned = true;
        owned++;
        pthread_mutex_lock(&src->lock);
        p->owned_shared = true;
        pthread_mutex_unlock(&src->lock);
        log_info("%s: partition %u claimed by %s", src->l->cfg.url, p->no, src->instance);
    }
    if (!stopping(src))
        rebalance(src, fair);
}

/* Pulls what room allows from one partition and hands it to the loop. Returns messages taken. */
static int pull(nats_source *src, nats_partition *p)
{
    pthread_mutex_lock(&src->lock);
    uint32_t room = src->max_in_flight - p->in_flight;
    pthread_mutex_unlock(&src->lock);
    if (!room)
        return 0;
    jsFetchRequest req;
    jsFetchRequest_Init(&req);
    req.Batch = (int)(room < NATS_FETCH_MAX ? room : NATS_FETCH_MAX);
    /* A short wait, not NoWait: libnats 3.4 then waits for the whole batch until Expires. */
    req.Expires = (int64_t)NATS_PULL_WAIT_MS * 1000000;
    natsMsgList list = {0};
    natsStatus s = natsSubscription_FetchRequest(&list, p->sub, &req);
    if (s != NATS_OK && s != NATS_TIMEOUT && s != NATS_NOT_FOUND && list.Count == 0) {
        set_error(src, "pull", s);
        return 0;
    }
    int n = 0;
    pthread_mutex_lock(&src->lock);
    for (int i = 0; i < list.Count; i++) {
        if (!list.Msgs[i])
            continue;
        size_t at = (p->qhead + p->qcount) % src->max_in_flight;
        p->queue[at] = list.Msgs[i];
        list.Msgs[i] = NULL;
        p->qcount++;
        p->in_flight++;
        n++;
    }
    pthread_mutex_unlock(&src->lock);
    natsMsgList_Destroy(&list);
    /* Under the lock, and never once stopped: close_source closes the handle right after. */
    pthread_mutex_lock(&src->lock);
    if (n && !src->stop)
        uv_async_send(&src->l->h.async);
    pthread_mutex_unlock(&src->lock);
    return n;
}

static void release_leases(nats_source *src)
{
    uint64_t now = mono_ms();
    for (uint32_t i = 0; i < src->nparts; i++) {
        nats_partition *p = &src->parts[i];
        if (!p->owned)
            continue;
        unsubscribe(src, p);
        char key[32];
        lease_key(p, key, sizeof key);
        /* Only a lease still ours (renewed within its TTL) is deleted: another owner's stays. */
        if (src->kv && now - p->renewed_ms < src->lease_ttl_ms)
            kvStore_Delete(src->kv, key);
    }
    if (src->kv) {
        char key[160];
        snprintf(key, sizeof key, "i.%s", src->instance);
        kvStore_Delete(src->kv, key);
    }
}

static void *worker_main(void *arg)
{
    nats_source *src = arg;
    uint64_t next_lease = 0, setup_failures = 0;
    bool ready = false;
    while (!stopping(src)) {
        if (!src->nc) {
            if (connect_server(src) != NATS_OK) {
                jsCtx_Destroy(src->js);
                src->js = NULL;
                natsConnection_Destroy(src->nc);
                src->nc = NULL;
                worker_wait(src, NATS_RETRY_MS);
                continue;
            }
            set_connected(src, true);
        }
        if (!ready) {
            if (ensure_setup(src) != NATS_OK) {
                if (setup_failures++ % 30 == 0) {
                    pthread_mutex_lock(&src->lock);
                    log_warn("%s: %s (%s); retrying every %u ms", src->l->cfg.url,
                             src->last_error, nats_GetLastError(NULL), NATS_RETRY_MS);
                    pthread_mutex_unlock(&src->lock);
                }
                worker_wait(src, NATS_RETRY_MS);
                continue;
            }
            ready = true;
            log_info("%s: connected to %s, stream %s, %u partitions, instance %s", src->l->cfg.url,
                     src->server, src->stream, src->nparts, src->instance);
        }
        uint64_t now = mono_ms();
        if (now >= next_lease) {
            tend_leases(src);
            next_lease = now + src->lease_ttl_ms / 3;
        }
        bool retiring;
        pthread_mutex_lock(&src->lock);
        retiring = src->retiring;
        pthread_mutex_unlock(&src->lock);
        int got = 0;
        for (uint32_t i = 0; i < src->nparts && !retiring; i++)
            if (src->parts[i].owned && !src->parts[i].draining)
                got += pull(src, &src->parts[i]);
        if (!got)
            worker_wait(src, NATS_IDLE_WAIT_MS);
    }
    release_leases(src);
    kvStore_Destroy(src->kv);
    src->kv = NULL;
    jsCtx_Destroy(src->js);
    src->js = NULL;
    natsConnection_Destroy(src->nc);
    src->nc = NULL;
    return NULL;
}

/* ---- loop thread: dispatch ---------------------------------------------------------------- */

static nats_partition *partition_of_input(session_input *in)
{
    return (nats_partition *)(void *)((char *)in - offsetof(nats_partition, in));
}

/* One decoded message (recd_wire_msg_fn): dispatched like stream input. */
static int on_msg(void *ctx, const recd_msg *m, const recd_wire_meta *meta, char *err,
                  size_t errlen)
{
    session_input *in = ctx;
    in->accepted = false;
    in->lookup_missed = false;
    partition_of_input(in)->sample = m->type == RECD_MSG_STATE || m->type == RECD_MSG_EVENT;
    return session_dispatch(in, m, meta, err, errlen);
}

static int on_rec_state(void *ctx, const recd_wire_rec_state *st, const recd_wire_meta *meta,
                        char *err, size_t errlen)
{
    session_input *in = ctx;
    in->accepted = false;
    in->lookup_missed = false;
    partition_of_input(in)->sample = true;
    return session_dispatch_rec(in, st, meta, err, errlen);
}

static int new_decoder(nats_source *src, nats_partition *p)
{
    recd_wire_decoder_config dc = {.encoding = RECD_WIRE_BINARY,
                                   .max_frame = (size_t)src->g->cfg->limits.max_frame,
                                   .format_of = session_format_of,
                                   .on_msg = on_msg,
                                   .ctx = &p->in,
                                   .on_rec_state = on_rec_state};
    recd_wire_decoder_free(p->dec);
    p->dec = NULL;
    return recd_wire_decoder_new(&p->dec, &dc);
}

static void ack(nats_source *src, natsMsg *msg)
{
    natsStatus s = natsMsg_Ack(msg, NULL);
    if (s == NATS_OK)
        recd_metric_add(src->g->metrics->nats_acked_total, 0, 1);
    else
        log_debug("%s: acknowledgement failed (%s): the message will come again and be dropped as "
                  "a duplicate",
                  src->l->cfg.url, natsStatus_GetText(s));
    natsMsg_Destroy(msg);
}

static void settle(nats_source *src, nats_partition *p, uint32_t n)
{
    pthread_mutex_lock(&src->lock);
    p->in_flight -= n;
    pthread_cond_signal(&src->wake); /* room again: the worker may pull */
    pthread_mutex_unlock(&src->lock);
}

/* True when the message's stream sequence was taken already (a redelivery). */
static bool seen(const nats_partition *p, uint64_t seq, bool *pending)
{
    *pending = false;
    if (seq > p->highest_taken)
        return false;
    for (size_t i = 0; i < p->npending; i++)
        if (p->pending[i].seq == seq)
            *pending = true;
    return true;
}

/* Decodes and dispatches one message, then holds it until written (or acks it now). */
static void take(nats_source *src, nats_partition *p, natsMsg *msg)
{
    recd_daemon_metrics *metrics = src->g->metrics;
    jsMsgMetaData *md = NULL;
    uint64_t seq = 0;
    if (natsMsg_GetMetaData(&md, msg) == NATS_OK) {
        seq = md->Sequence.Stream;
        if (md->NumDelivered > 1)
            recd_metric_add(metrics->nats_redeliveries_total, 0, 1);
        p->lag_taken = md->NumPending;
        p->lag_seen = true;
        jsMsgMetaData_Destroy(md);
    }
    bool in_pending;
    if (seq && seen(p, seq, &in_pending)) {
        recd_metric_add(metrics->nats_duplicates_dropped_total, 0, 1);
        if (in_pending) /* the first delivery's acknowledgement settles it */
            natsMsg_Destroy(msg);
        else
            ack(src, msg);
        settle(src, p, 1);
        return;
    }
    if (seq)
        p->highest_taken = seq;
    const uint8_t *data = (const uint8_t *)natsMsg_GetData(msg);
    size_t len = (size_t)natsMsg_GetDataLength(msg);
    char err[512] = "";
    p->in.touched = NULL;
    p->in.reason_set = false;
    int rc = p->dec ? 0 : new_decoder(src, p);
    if (rc == 0)
        rc = recd_wire_decoder_feed(p->dec, data, len, err, sizeof err);
    if (rc == 0 && recd_wire_decoder_pending(p->dec) > 0) {
        rc = -EPROTO;
        snprintf(err, sizeof err, "a message of %zu bytes ends inside a frame", len);
    }
    if (rc < 0) {
        /* Counted and acknowledged: bad input never blocks its partition. */
        recd_metrics_decode_error(metrics, listener_error_reason(&p->in, rc, err));
        log_warn("%s: stream message %llu dropped: %s", p->peer, (unsigned long long)seq,
                 err[0] ? err : recd_strerror(rc));
        new_decoder(src, p);
        p->in.touched = NULL;
        ack(src, msg);
        settle(src, p, 1);
        return;
    }
    if (p->in.accepted) {
        recd_m_format f = recd_metrics_format_of(p->in.acct_format);
        src->tally.bytes[f] += len;
        src->tally.samples[f] += p->sample;
    }
    pending_ack *e = &p->pending[p->npending++];
    memset(e, 0, sizeof *e);
    e->msg = msg;
    e->seq = seq;
    e->s = p->in.touched;
    if (e->s) {
        e->input_no = e->s->inputs;
        e->lost_before = e->s->lost_total;
    }
    p->in.touched = NULL;
    if (p->in.over_process || p->in.over_key[0])
        p->blocked = true;
}

/* Acknowledges every message of p whose bytes are in files now. */
static void ack_written(nats_source *src, nats_partition *p)
{
    if (!p->npending)
        return;
    size_t keep = 0;
    uint32_t done = 0;
    for (size_t i = 0; i < p->npending; i++) {
        pending_ack *e = &p->pending[i];
        bool durable = !e->s;
        if (e->s) {
            if (!e->marked && e->s->inputs_queued >= e->input_no) {
                e->mark = e->s->queued_total; /* no earlier than its bytes: safe */
                e->marked = true;
            }
            durable = e->marked && e->s->written_total >= e->mark;
            if (durable && e->s->lost_total != e->lost_before)
                log_warn("%s: stream message %llu acknowledged although its session lost bytes "
                         "(recd_lost_bytes_total)",
                         p->peer, (unsigned long long)e->seq);
        }
        if (durable) {
            ack(src, e->msg);
            done++;
        } else {
            p->pending[keep++] = *e;
        }
    }
    p->npending = keep;
    if (done)
        settle(src, p, done);
}

static void finish_if_done(nats_source *src);

/* Dispatches what the worker queued for p while the limits allow: a batch at a time is taken off
 * the ring under one lock, and what a limit stopped goes back in front of it. Nothing else takes
 * from the ring, and the worker cannot fill the slots freed (their messages are still in flight). */
static void drain_partition(nats_source *src, nats_partition *p)
{
    recd_ingest *g = src->g;
    natsMsg *batch[NATS_TAKE_BATCH];
    for (;;) {
        if (p->blocked || ingest_over_process_limit(g))
            return;
        size_t n = 0;
        pthread_mutex_lock(&src->lock);
        while (n < NATS_TAKE_BATCH && p->qcount) {
            batch[n++] = p->queue[p->qhead];
            p->qhead = (p->qhead + 1) % src->max_in_flight;
            p->qcount--;
        }
        pthread_mutex_unlock(&src->lock);
        if (!n)
            return;
        size_t done = 0;
        p->lag_seen = false;
        take(src, p, batch[done++]);
        while (done < n && !p->blocked && !ingest_over_process_limit(g))
            take(src, p, batch[done++]);
        size_t rest = n - done;
        pthread_mutex_lock(&src->lock);
        if (p->lag_seen)
            p->lag = p->lag_taken;
        for (size_t k = rest; k-- > 0;) {
            p->qhead = (p->qhead + src->max_in_flight - 1) % src->max_in_flight;
            p->queue[p->qhead] = batch[done + k];
            p->qcount++;
        }
        pthread_mutex_unlock(&src->lock);
        if (rest || n < NATS_TAKE_BATCH)
            return; /* what the worker queues meanwhile comes with its own uv_async_send */
    }
}

/* Dispatches what the worker queued, partition by partition, while the limits allow. */
static void drain_queues(nats_source *src)
{
    recd_ingest *g = src->g;
    for (uint32_t i = 0; i < src->nparts; i++) {
        nats_partition *p = &src->parts[i];
        if (p->blocked) {
            if (ingest_over_process_limit(g) || sessions_over_limit(g->sessions, p->in.over_key))
                continue;
            p->blocked = false;
            p->in.over_process = false;
            p->in.over_key[0] = '\0';
        }
        drain_partition(src, p);
        ack_written(src, p);
    }
    listener_tally_publish(g->metrics, RECD_M_NATS, &src->tally);
    finish_if_done(src);
}

static void on_async(uv_async_t *h)
{
    recd_listener *l = h->data;
    if (l->nats)
        drain_queues(l->nats);
}

/* ---- lifecycle ----------------------------------------------------------------------------- */

static void source_free(nats_source *src)
{
    for (uint32_t i = 0; src->parts && i < src->nparts; i++) {
        nats_partition *p = &src->parts[i];
        for (size_t k = 0; k < p->qcount; k++)
            natsMsg_Destroy(p->queue[(p->qhead + k) % src->max_in_flight]);
        for (size_t k = 0; k < p->npending; k++)
            natsMsg_Destroy(p->pending[k].msg);
        free(p->queue);
        free(p->pending);
        recd_wire_decoder_free(p->dec);
    }
    free(src->parts);
    free(src->creds);
    free(src->tls_ca);
    free(src->tls_cert);
    free(src->tls_key);
    pthread_mutex_destroy(&src->lock);
    pthread_cond_destroy(&src->wake);
    free(src);
}

/* The source and its listener go once both the handle is closed and the worker is joined. */
static void closing_done(nats_source *src)
{
    if (--src->closing_refs)
        return;
    recd_listener *l = src->l;
    source_free(src);
    free(l);
}

static void on_closed(uv_handle_t *h)
{
    recd_listener *l = h->data;
    if (l->nats)
        closing_done(l->nats);
    else
        free(l);
}

/* Threadpool: the worker releases its leases first, (partitions + 1) API requests that can each
 * take NATS_API_WAIT_MS when the server is away, which the loop thread must not wait for. */
static void join_worker(uv_work_t *req)
{
    nats_source *src = req->data;
    pthread_join(src->worker, NULL);
}

static void on_worker_joined(uv_work_t *req, int status)
{
    (void)status; /* never cancelled: the join ran */
    nats_source *src = req->data;
    src->worker_started = false;
    closing_done(src);
}

static void close_source(nats_source *src)
{
    if (src->closed)
        return;
    src->closed = true;
    LIST_REMOVE(src, link);
    pthread_mutex_lock(&src->lock);
    src->stop = true; /* from here on the worker sends nothing to the handle (pull) */
    pthread_cond_signal(&src->wake);
    pthread_mutex_unlock(&src->lock);
    src->closing_refs = 1;
    if (src->worker_started) {
        src->reaper.data = src;
        if (uv_queue_work(src->g->loop, &src->reaper, join_worker, on_worker_joined) == 0) {
            src->closing_refs++;
        } else {
            pthread_join(src->worker, NULL);
            src->worker_started = false;
        }
    }
    uv_close((uv_handle_t *)&src->l->h.async, on_closed);
}

static void finish_if_done(nats_source *src)
{
    if (!src->retiring || src->closed)
        return;
    for (uint32_t i = 0; i < src->nparts; i++) {
        nats_partition *p = &src->parts[i];
        pthread_mutex_lock(&src->lock);
        size_t queued = p->qcount;
        pthread_mutex_unlock(&src->lock);
        if (queued || p->npending)
            return;
    }
    close_source(src);
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static void default_names(nats_source *src, const recd_config *cfg)
{
    if (cfg->nats.stream) {
        snprintf(src->stream, sizeof src->stream, "%s", cfg->nats.stream);
    } else {
        snprintf(src->stream, sizeof src->stream, "RECD_%s", src->url.prefix);
        for (char *c = src->stream; *c; c++)
            if (*c == '.')
                *c = '_';
    }
    snprintf(src->bucket, sizeof src->bucket, "%s_leases", src->stream);
    if (cfg->nats.instance) {
        snprintf(src->instance, sizeof src->instance, "%s", cfg->nats.instance);
    } else {
        char host[64] = "recd";
        gethostname(host, sizeof host - 1);
        snprintf(src->instance, sizeof src->instance, "%s-%ld", host, (long)getpid());
        for (char *c = src->instance; *c; c++) /* a key token: no dots */
            if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                  (*c >= '0' && *c <= '9') || *c == '-'))
                *c = '_';
    }
}

static bool name_ok(const char *name)
{
    if (!*name)
        return false;
    for (const char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '_' || *c == '-'))
            return false;
    return true;
}

int listener_nats_open(recd_ingest *g, const recd_listen_config *cfg, recd_listener **out,
                       char *why, size_t whylen)
{
    *out = NULL;
    const recd_config *c = g->cfg;
    nats_source *src = calloc(1, sizeof *src);
    recd_listener *l = calloc(1, sizeof *l);
    if (!src || !l) {
        free(src);
        free(l);
        return -ENOMEM;
    }
    pthread_mutex_init(&src->lock, NULL);
    pthread_cond_init(&src->wake, NULL);
    l->ingest = g;
    l->cfg = *cfg;
    l->nats = src;
    src->l = l;
    src->g = g;
    int rc = recd_fleet_url_parse(cfg->url, &src->url, why, whylen);
    if (rc < 0)
        goto fail;
    snprintf(src->server, sizeof src->server,
             strchr(src->url.host, ':') ? "nats://[%s]:%u" : "nats://%s:%u", src->url.host,
             src->url.port);
    default_names(src, c);
    if (!name_ok(src->stream) || !name_ok(src->instance)) {
        snprintf(why, whylen, "%s: nats.stream and nats.instance may hold only A-Z a-z 0-9 _ -",
                 cfg->url);
        rc = -EINVAL;
        goto fail;
    }
    src->nparts = c->nats.partitions;
    src->max_in_flight = c->nats.max_in_flight;
    src->lease_ttl_ms = c->nats.lease_ttl_ms;
    /* Unacknowledged messages come again after this: well after a flush could have written them. */
    src->ack_wait_ms = c->flush.interval_ms * 10 > NATS_ACK_WAIT_MIN_MS ? c->flush.interval_ms * 10
                                                                         : NATS_ACK_WAIT_MIN_MS;
    src->creds = dup_or_null(c->nats.creds);
    src->tls_ca = dup_or_null(c->nats.tls_ca);
    src->tls_cert = dup_or_null(c->nats.tls_cert);
    src->tls_key = dup_or_null(c->nats.tls_key);
    src->parts = calloc(src->nparts, sizeof *src->parts);
    rc = -ENOMEM;
    if (!src->parts)
        goto fail;
    for (uint32_t i = 0; i < src->nparts; i++) {
        nats_partition *p = &src->parts[i];
        p->no = i;
        p->queue = calloc(src->max_in_flight, sizeof *p->queue);
        p->pending = calloc(src->max_in_flight, sizeof *p->pending);
        if (!p->queue || !p->pending)
            goto fail;
        snprintf(p->peer, sizeof p->peer, "%s partition %u", cfg->url, i);
        p->in.sessions = g->sessions;
        p->in.transport = RECD_M_NATS;
        p->in.peer = p->peer;
        p->in.tally = &src->tally;
    }
    pthread_mutex_lock(&src->lock);
    src->down_since_ms = mono_ms();
    snprintf(src->last_error, sizeof src->last_error, "not connected yet");
    pthread_mutex_unlock(&src->lock);
    if ((rc = uv_async_init(g->loop, &l->h.async, on_async)) < 0) {
        snprintf(why, whylen, "%s: %s", cfg->url, uv_strerror(rc));
        goto fail;
    }
    l->h.handle.data = l;
    if (pthread_create(&src->worker, NULL, worker_main, src) != 0) {
        snprintf(why, whylen, "%s: cannot start the NATS worker thread", cfg->url);
        l->nats = NULL;
        uv_close(&l->h.handle, on_closed);
        source_free(src);
        return -EAGAIN;
    }
    src->worker_started = true;
    snprintf(l->bound, sizeof l->bound, "%s", cfg->url);
    LIST_INSERT_HEAD(&g->listeners, l, link);
    LIST_INSERT_HEAD(&g->nats_sources, src, link);
    *out = l;
    return 0;
fail:
    if (!why[0])
        snprintf(why, whylen, "%s: %s", cfg->url, recd_strerror(rc));
    source_free(src);
    free(l);
    return rc;
}

void listener_nats_retire(recd_listener *l)
{
    nats_source *src = l->nats;
    pthread_mutex_lock(&src->lock);
    src->retiring = true; /* the worker pulls nothing more; leases go when it stops */
    pthread_mutex_unlock(&src->lock);
    drain_queues(src);
}

/* Called after every write completion: the scan is only marked due here, through the source's
 * own uv_async, which libuv coalesces into one drain_queues per loop iteration. */
void ingest_nats_progress(recd_ingest *g)
{
    nats_source *src;
    LIST_FOREACH(src, &g->nats_sources, link)
        uv_async_send(&src->l->h.async);
}

void ingest_nats_session_freed(recd_ingest *g, const recd_session *s)
{
    nats_source *src;
    LIST_FOREACH(src, &g->nats_sources, link) {
        for (uint32_t i = 0; i < src->nparts; i++) {
            nats_partition *p = &src->parts[i];
            if (p->in.touched == s)
                p->in.touched = NULL; /* freed while its message is dispatched: written */
            for (size_t k = 0; k < p->npending; k++)
                if (p->pending[k].s == s) {
                    /* Freed once everything it queued was written (or counted as lost). */
                    p->pending[k].s = NULL;
                }
        }
    }
}

bool ingest_nats_unhealthy(recd_ingest *g, char *why, size_t whylen)
{
    nats_source *src;
    LIST_FOREACH(src, &g->nats_sources, link) {
        if (src->retiring)
            continue;
        pthread_mutex_lock(&src->lock);
        bool up = src->connected;
        uint64_t since = src->down_since_ms;
        char err[sizeof src->last_error];
        memcpy(err, src->last_error, sizeof err);
        pthread_mutex_unlock(&src->lock);
        if (!up) {
            snprintf(why, whylen, "%s cannot reach its JetStream server %s for %llu s (%s)",
                     src->l->cfg.url, src->server,
                     (unsigned long long)((mono_ms() - since) / 1000), err);
            return true;
        }
    }
    return false;
}

void ingest_nats_refresh_metrics(recd_ingest *g)
{
    recd_daemon_metrics *m = g->metrics;
    int64_t owned = 0, connected = 0, lag = 0;
    uint64_t failures = 0;
    nats_source *src;
    LIST_FOREACH(src, &g->nats_sources, link) {
        pthread_mutex_lock(&src->lock);
        connected += src->connected;
        failures += src->renew_failures;
        src->renew_failures = 0;
        for (uint32_t i = 0; i < src->nparts; i++) {
            owned += src->parts[i].owned_shared;
            if (src->parts[i].owned_shared)
                lag += (int64_t)src->parts[i].lag;
        }
        pthread_mutex_unlock(&src->lock);
    }
    recd_metric_set(m->nats_connected, 0, connected);
    recd_metric_set(m->nats_partitions_owned, 0, owned);
    recd_metric_set(m->nats_consumer_lag_messages, 0, lag);
    if (failures)
        recd_metric_add(m->nats_lease_renew_failures_total, 0, failures);
}

void ingest_nats_close_all(recd_ingest *g)
{
    while (!LIST_EMPTY(&g->nats_sources)) {
        nats_source *src = LIST_FIRST(&g->nats_sources);
        for (uint32_t i = 0; i < src->nparts; i++)
            ack_written(src, &src->parts[i]);
        close_source(src);
    }
}

#endif
