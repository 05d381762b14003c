/* SPDX-License-Identifier: MIT */
/* nats:// inputs (listener.h): the worker thread that talks to JetStream (connection,
 * stream, lease bucket, consumers, leases, pulls, session records) and the loop-thread side that
 * decodes, dispatches and acknowledges once written, keeps a record of each session for its
 * takeover by another instance and opens the sessions of records read at a claim. The two share
 * only the per-partition queues, the record writes and reads, the in-flight counts and a few
 * flags, under one mutex. */

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
#define NATS_RECORDS_WAITING_MAX 65536u /* session record writes queued for the worker, at most */
#define NATS_RECORD_KEY_MAX (16 + RECD_SESSION_KEY_MAX)
#define NATS_RECORD_TRIES 5         /* a session record write is given up after these */
#define NATS_RECORD_HEAD 16         /* "rsr1", next part number (u32), stream sequence (u64), LE */

struct nats_source;

/* What another instance needs to take a nats-fed session over (loop thread): the session's open
 * message as it came (one wire frame), the number its next part gets and the highest stream
 * sequence of it that is written and acknowledged. Kept in the sessions bucket under key. */
typedef struct nats_record {
    LIST_ENTRY(nats_record) link;       /* the source's records */
    LIST_ENTRY(nats_record) dirty_link; /* changed since last stored (when dirty) */
    struct nats_source *src;            /* NULL once the source is gone */
    recd_session *s;
    uint32_t partition;
    uint32_t part_stored;  /* s->part_no last stored */
    uint64_t seq_written;  /* highest stream sequence of it written (or its open's) */
    uint64_t seq_stored;
    uint64_t dup_upto;     /* taken over: redeliveries up to this stream sequence are dropped */
    uint64_t seq_taken;    /* highest stream sequence of a message that fed it */
    bool dirty;
    bool closed_by_message; /* its record goes with it */
    bool keep;              /* closed to be taken over again: its record stays */
    size_t open_len;
    char key[NATS_RECORD_KEY_MAX];
    uint8_t open[];
} nats_record;

/* A write to the sessions bucket, for the worker (a put, or a delete when len is 0). */
typedef struct kv_request {
    struct kv_request *next;
    uint64_t no; /* requests are numbered in order */
    unsigned tries; /* failed while connected */
    bool del;
    size_t len;
    char key[NATS_RECORD_KEY_MAX];
    uint8_t val[];
} kv_request;

/* A session record read when a partition was claimed, for the loop thread. */
typedef struct taken_record {
    struct taken_record *next;
    bool closed; /* a closed session's mark: only seq says something */
    uint32_t part_no;
    uint64_t seq;
    char key[RECD_SESSION_KEY_MAX + 1];
    char kvkey[NATS_RECORD_KEY_MAX];
    size_t len;
    uint8_t open[];
} taken_record;

/* A session that ended for good: its record says "closed at stream sequence seq" until the
 * partition's messages up to seq are all acknowledged, so that a consumer started again at an
 * older ack floor does not open it again from its redelivered open (loop thread). */
typedef struct closed_mark {
    struct closed_mark *next;
    uint64_t seq;
    bool stored; /* in the bucket: deleted once the partition is acknowledged up to seq */
    char key[RECD_SESSION_KEY_MAX + 1];
    char kvkey[NATS_RECORD_KEY_MAX];
} closed_mark;

/* A message taken and not yet acknowledged (loop thread). */
typedef struct pending_ack {
    natsMsg *msg;
    uint64_t seq;             /* stream sequence */
    const recd_session *s;    /* the session it fed, or NULL: nothing to wait for */
    uint64_t input_no;        /* s->inputs after it */
    uint64_t wait_req;        /* session record writes up to this one are stored first */
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
    taken_record *takeovers; /* read at the claim: opened before any message is taken */
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
    struct nats_source *src;
    uint64_t cur_seq;          /* stream sequence of the message being taken */
    const uint8_t *cur_data;   /* and its bytes */
    size_t cur_len;
    const taken_record *replaying; /* the record whose open is being dispatched */
    bool dup_check;            /* sessions taken over here: their redeliveries are looked at */
    closed_mark *closed;       /* sessions of p that ended for good not long ago */
} nats_partition;

typedef struct nats_source {
    LIST_ENTRY(nats_source) link;
    recd_listener *l;
    recd_ingest *g;
    recd_fleet_url url;
    char server[300];
    char stream[RECD_FLEET_PREFIX_MAX + 8], bucket[RECD_FLEET_PREFIX_MAX + 16], instance[128];
    char sbucket[RECD_FLEET_PREFIX_MAX + 20];
    char *creds, *tls_ca, *tls_cert, *tls_key;
    uint32_t nparts, max_in_flight;
    uint64_t lease_ttl_ms, ack_wait_ms;
    nats_partition *parts;
    input_tally tally;
    bool retiring, closed;
    bool taking_stopped; /* loop: retired, nothing more is taken (what is queued stays unacknowledged) */

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
    kv_request *req_head, *req_tail; /* under lock: session record writes for the worker */
    size_t nreq;                     /* under lock */
    uint64_t req_done;               /* under lock: requests up to this number are settled */
    uint64_t record_failures;        /* under lock: not yet added to the metric */

    /* loop only */
    uint64_t req_no; /* the last request numbered */
    LIST_HEAD(, nats_record) records;
    LIST_HEAD(, nats_record) dirty;

    /* worker only */
    natsConnection *nc;
    jsCtx *js;
    kvStore *kv;
    kvStore *skv; /* the sessions bucket */
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
    if (s != NATS_OK) {
        set_error(src, "lease bucket", s);
        return s;
    }
    s = js_KeyValue(&src->skv, src->js, src->sbucket);
    if (s == NATS_NOT_FOUND) {
        kvConfig kc;
        kvConfig_Init(&kc);
        kc.Bucket = src->sbucket;
        kc.History = 1; /* no TTL: a record goes with its session's close */
        kc.StorageType = js_FileStorage;
        s = js_CreateKeyValue(&src->skv, src->js, &kc);
        if (s == NATS_OK)
            log_notice("%s: created the sessions bucket %s", src->l->cfg.url, src->sbucket);
    }
    if (s != NATS_OK)
        set_error(src, "sessions bucket", s);
    return s;
}

/* ---- session records, worker side ---- */

static void count_record_failure(nats_source *src)
{
    pthread_mutex_lock(&src->lock);
    src->record_failures++;
    pthread_mutex_unlock(&src->lock);
}

/* Writes the queued session records in order. One that fails stops the round and is tried again
 * at the next one (with the rest behind it), so a record never overtakes an older one. */
static void store_records(nats_source *src)
{
    pthread_mutex_lock(&src->lock);
    kv_request *list = src->req_head;
    src->req_head = src->req_tail = NULL;
    size_t n = src->nreq;
    src->nreq = 0;
    pthread_mutex_unlock(&src->lock);
    if (!list)
        return;
    uint64_t done = 0;
    while (list) {
        natsStatus s;
        uint64_t rev = 0;
        if (!src->skv)
            s = NATS_ERR;
        else if (list->del)
            s = kvStore_Delete(src->skv, list->key);
        else
            s = kvStore_Put(&rev, src->skv, list->key, list->val, (int)list->len);
        if (s != NATS_OK) {
            set_error(src, "session record", s);
            count_record_failure(src);
            pthread_mutex_lock(&src->lock);
            bool up = src->connected;
            pthread_mutex_unlock(&src->lock);
            /* Acknowledgements wait for it: given up after a few tries with the server there. */
            if (!up || ++list->tries < NATS_RECORD_TRIES)
                break;
            log_warn("%s: session record %s given up: %s", src->l->cfg.url, list->key,
                     natsStatus_GetText(s));
        }
        done = list->no;
        kv_request *next = list->next;
        free(list);
        list = next;
        n--;
    }
    pthread_mutex_lock(&src->lock);
    if (list) { /* back in front of what was queued meanwhile */
        kv_request *last = list;
        while (last->next)
            last = last->next;
        last->next = src->req_head;
        if (!src->req_head)
            src->req_tail = last;
        src->req_head = list;
        src->nreq += n;
    }
    if (done > src->req_done)
        src->req_done = done;
    if (done && !src->stop)
        uv_async_send(&src->l->h.async); /* acknowledgements waited for these */
    pthread_mutex_unlock(&src->lock);
}

/* "rsr1" with the part number and sequence, then the open frame; "rsc1" with the sequence only
 * for a closed session's mark. Keys are s.<partition>.<session key with '=' for '.'>. */
static taken_record *parse_record(nats_source *src, const char *key, const uint8_t *v, size_t len)
{
    const char *dot = key ? strchr(key, '.') : NULL;
    dot = dot ? strchr(dot + 1, '.') : NULL;
    bool closed = len == NATS_RECORD_HEAD && memcmp(v, "rsc1", 4) == 0;
    if (!dot || strlen(dot + 1) > RECD_SESSION_KEY_MAX || strlen(key) >= NATS_RECORD_KEY_MAX ||
        (!closed && (len <= NATS_RECORD_HEAD || memcmp(v, "rsr1", 4) != 0 ||
                     len - NATS_RECORD_HEAD > (size_t)src->g->cfg->limits.max_frame))) {
        log_warn("%s: session record %s ignored: not a record of this recd version (%zu bytes)",
                 src->l->cfg.url, key ? key : "?", len);
        return NULL;
    }
    size_t open_len = closed ? 0 : len - NATS_RECORD_HEAD;
    taken_record *t = calloc(1, sizeof *t + open_len);
    if (!t)
        return NULL;
    t->closed = closed;
    for (int i = 3; i >= 0; i--)
        t->part_no = t->part_no << 8 | v[4 + i];
    for (int i = 7; i >= 0; i--)
        t->seq = t->seq << 8 | v[8 + i];
    snprintf(t->kvkey, sizeof t->kvkey, "%s", key);
    snprintf(t->key, sizeof t->key, "%s", dot + 1);
    for (char *c = t->key; *c; c++)
        if (*c == '=')
            *c = '.';
    t->len = open_len;
    memcpy(t->open, v + NATS_RECORD_HEAD, open_len);
    return t;
}

static void free_taken(taken_record *t)
{
    while (t) {
        taken_record *next = t->next;
        free(t);
        t = next;
    }
}

/* Reads the session records of a partition just claimed and hands them to the loop thread, which
 * opens their sessions before it takes any message of the partition. */
static natsStatus load_records(nats_source *src, nats_partition *p)
{
    char filter[32];
    snprintf(filter, sizeof filter, "s.%u.>", p->no);
    kvWatchOptions o;
    kvWatchOptions_Init(&o);
    o.IgnoreDeletes = true;
    kvWatcher *w = NULL;
    natsStatus s = kvStore_Watch(&w, src->skv, filter, &o);
    taken_record *head = NULL, **tail = &head;
    size_t n = 0;
    while (s == NATS_OK) {
        kvEntry *e = NULL;
        s = kvWatcher_Next(&e, w, NATS_API_WAIT_MS);
        if (s != NATS_OK || !e)
            break; /* NULL: every record there was is read */
        taken_record *t = parse_record(src, kvEntry_Key(e), kvEntry_Value(e),
                                       (size_t)(kvEntry_ValueLen(e) > 0 ? kvEntry_ValueLen(e) : 0));
        kvEntry_Destroy(e);
        if (t) {
            *tail = t;
            tail = &t->next;
            n++;
        }
    }
    kvWatcher_Destroy(w);
    if (s != NATS_OK) {
        free_taken(head);
        set_error(src, "reading the session records", s);
        return s;
    }
    if (n)
        log_info("%s: partition %u: %zu sessions to take over", src->l->cfg.url, p->no, n);
    pthread_mutex_lock(&src->lock);
    taken_record **end = &p->takeovers;
    while (*end)
        end = &(*end)->next;
    *end = head;
    if (head && !src->stop)
        uv_async_send(&src->l->h.async);
    pthread_mutex_unlock(&src->lock);
    return NATS_OK;
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
    if (s == NATS_OK && ci->NumAckPending > 0) {
        /* The previous owner took messages it never acknowledged (it died): JetStream would give
         * them again only after the ack wait, behind newer ones. A consumer started again above
         * the ack floor gives them now, in order; what was acknowledged above the floor comes
         * again too and is dropped through its session's record. */
        uint64_t from = ci->AckFloor.Stream + 1;
        int64_t unacked = ci->NumAckPending;
        jsConsumerInfo_Destroy(ci);
        ci = NULL;
        s = js_DeleteConsumer(src->js, src->stream, durable, NULL, &jerr);
        if (s == NATS_OK || s == NATS_NOT_FOUND) {
            cc.DeliverPolicy = js_DeliverByStartSequence;
            cc.OptStartSeq = from;
            s = js_AddConsumer(&ci, src->js, src->stream, &cc, NULL, &jerr);
        }
        if (s == NATS_OK)
            log_info("%s: partition %u: %lld messages taken and not acknowledged before; read "
                     "again from stream sequence %llu",
                     src->l->cfg.url, p->no, (long long)unacked, (unsigned long long)from);
    } else if (s == NATS_NOT_FOUND) {
        s = js_AddConsumer(&ci, src->js, src->stream, &cc, NULL, &jerr);
    }
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
        if (load_records(src, p) != NATS_OK || subscribe(src, p) != NATS_OK) {
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
        store_records(src);
        int got = 0;
        for (uint32_t i = 0; i < src->nparts && !retiring; i++)
            if (src->parts[i].owned && !src->parts[i].draining)
                got += pull(src, &src->parts[i]);
        if (!got)
            worker_wait(src, NATS_IDLE_WAIT_MS);
    }
    store_records(src); /* the last ones (a shutdown's final sequences), one try */
    release_leases(src);
    kvStore_Destroy(src->skv);
    src->skv = NULL;
    kvStore_Destroy(src->kv);
    src->kv = NULL;
    jsCtx_Destroy(src->js);
    src->js = NULL;
    natsConnection_Destroy(src->nc);
    src->nc = NULL;
    return NULL;
}

/* ---- loop thread: session records ---------------------------------------------------------- */

/* s.<partition>.<session key with '.' as '='>: a key's dots would split it into tokens, and '='
 * (valid in a bucket key) never occurs in a session key. */
static void record_key(uint32_t partition, const char *key, char *out, size_t cap)
{
    int n = snprintf(out, cap, "s.%u.", partition);
    size_t at = n > 0 && (size_t)n < cap ? (size_t)n : 0;
    for (const char *c = key; *c && at + 1 < cap; c++)
        out[at++] = *c == '.' ? '=' : *c;
    out[at] = '\0';
}

/* Queues a write of the sessions bucket for the worker, numbered; dropped (and counted) when too
 * many wait already, which only happens while the server is away for long. */
static void send_request(nats_source *src, kv_request *r)
{
    r->next = NULL;
    pthread_mutex_lock(&src->lock);
    if (src->nreq >= NATS_RECORDS_WAITING_MAX) {
        src->record_failures++;
        pthread_mutex_unlock(&src->lock);
        log_debug("%s: session record %s dropped: %u writes wait already", src->l->cfg.url,
                  r->key, NATS_RECORDS_WAITING_MAX);
        free(r);
        return;
    }
    r->no = ++src->req_no;
    if (src->req_tail)
        src->req_tail->next = r;
    else
        src->req_head = r;
    src->req_tail = r;
    src->nreq++;
    pthread_cond_signal(&src->wake);
    pthread_mutex_unlock(&src->lock);
}

static void record_put(nats_source *src, nats_record *rec)
{
    kv_request *r = malloc(sizeof *r + NATS_RECORD_HEAD + rec->open_len);
    if (!r) {
        count_record_failure(src);
        return;
    }
    memset(r, 0, sizeof *r);
    memcpy(r->key, rec->key, sizeof r->key);
    uint32_t part = rec->s->part_no;
    uint8_t *v = r->val;
    memcpy(v, "rsr1", 4);
    for (int i = 0; i < 4; i++)
        v[4 + i] = (uint8_t)(part >> (8 * i));
    for (int i = 0; i < 8; i++)
        v[8 + i] = (uint8_t)(rec->seq_written >> (8 * i));
    memcpy(v + NATS_RECORD_HEAD, rec->open, rec->open_len);
    r->len = NATS_RECORD_HEAD + rec->open_len;
    rec->part_stored = part;
    rec->seq_stored = rec->seq_written;
    send_request(src, r);
}

static void record_delete(nats_source *src, const char *kvkey)
{
    kv_request *r = calloc(1, sizeof *r);
    if (!r) {
        count_record_failure(src);
        return;
    }
    snprintf(r->key, sizeof r->key, "%s", kvkey);
    r->del = true;
    send_request(src, r);
}

static closed_mark *find_mark(nats_partition *p, const char *key, size_t len)
{
    for (closed_mark *c = p->closed; c; c = c->next)
        if (strlen(c->key) == len && memcmp(c->key, key, len) == 0)
            return c;
    return NULL;
}

static void add_mark(nats_partition *p, const char *key, const char *kvkey, uint64_t seq)
{
    closed_mark *c = find_mark(p, key, strlen(key));
    if (!c) {
        if (!(c = calloc(1, sizeof *c)))
            return; /* its redelivered open could open it again: nothing worse */
        snprintf(c->key, sizeof c->key, "%s", key);
        snprintf(c->kvkey, sizeof c->kvkey, "%s", kvkey);
        c->next = p->closed;
        p->closed = c;
    }
    if (seq > c->seq)
        c->seq = seq;
}

/* The session of a record ended for good: its record becomes a mark, "closed at seq". */
static void record_close(nats_source *src, nats_partition *p, const nats_record *rec)
{
    uint64_t seq = rec->seq_taken > rec->seq_written ? rec->seq_taken : rec->seq_written;
    kv_request *r = calloc(1, sizeof *r + NATS_RECORD_HEAD);
    if (!r) {
        count_record_failure(src);
        return;
    }
    memcpy(r->key, rec->key, sizeof r->key);
    memcpy(r->val, "rsc1", 4);
    for (int i = 0; i < 8; i++)
        r->val[8 + i] = (uint8_t)(seq >> (8 * i));
    r->len = NATS_RECORD_HEAD;
    send_request(src, r);
    add_mark(p, rec->s->key, rec->key, seq);
}

/* Marks whose sequence the partition is acknowledged up to go: no message they stand for can
 * come again. Without a message taken past a mark it stays (in the bucket too). */
static void expire_marks(nats_source *src, nats_partition *p)
{
    if (!p->closed)
        return;
    uint64_t floor = p->highest_taken;
    for (size_t i = 0; i < p->npending; i++)
        if (p->pending[i].seq && p->pending[i].seq - 1 < floor)
            floor = p->pending[i].seq - 1;
    for (closed_mark **at = &p->closed; *at;) {
        closed_mark *c = *at;
        if (c->seq > floor) {
            at = &c->next;
            continue;
        }
        record_delete(src, c->kvkey);
        *at = c->next;
        free(c);
    }
}

static void free_marks(nats_partition *p)
{
    while (p->closed) {
        closed_mark *next = p->closed->next;
        free(p->closed);
        p->closed = next;
    }
}

/* A message of a session that ended for good here or on the previous owner, come again. */
static bool after_close(nats_source *src, nats_partition *p, const char *key, size_t len)
{
    const closed_mark *c = p->closed ? find_mark(p, key, len) : NULL;
    if (!c || p->cur_seq > c->seq)
        return false;
    recd_metric_add(src->g->metrics->nats_duplicates_dropped_total, 0, 1);
    return true;
}

static void record_mark(nats_record *rec)
{
    if (rec->dirty || !rec->src)
        return;
    if (rec->s->part_no == rec->part_stored && rec->seq_written == rec->seq_stored)
        return;
    rec->dirty = true;
    LIST_INSERT_HEAD(&rec->src->dirty, rec, dirty_link);
}

/* The records changed since they were last stored: once per pass over the queues, not per
 * message. */
static void store_dirty(nats_source *src)
{
    while (!LIST_EMPTY(&src->dirty)) {
        nats_record *rec = LIST_FIRST(&src->dirty);
        LIST_REMOVE(rec, dirty_link);
        rec->dirty = false;
        record_put(src, rec);
    }
}

static nats_record *record_of(nats_source *src, const recd_session *s)
{
    nats_record *rec = s ? s->input_record : NULL;
    return rec && rec->src == src ? rec : NULL;
}

/* An open was accepted from p: the session gets its record (unless it had one: a resume). A
 * session opened from another instance's record goes on with its part numbers, and what that
 * instance wrote of it is dropped when it comes again. */
static void record_open(nats_source *src, nats_partition *p, const recd_msg *m)
{
    recd_session *s = session_table_get(&src->g->sessions->table, m->session);
    if (!s || s->input_record)
        return;
    nats_record *rec = calloc(1, sizeof *rec + p->cur_len);
    if (!rec) {
        log_warn("session '%s': out of memory: no other instance can take it over", s->key);
        return;
    }
    rec->src = src;
    rec->s = s;
    rec->partition = p->no;
    memcpy(rec->open, p->cur_data, p->cur_len);
    rec->open_len = p->cur_len;
    record_key(p->no, s->key, rec->key, sizeof rec->key);
    rec->seq_written = p->cur_seq; /* the open itself is taken once its record is stored */
    const taken_record *t = p->replaying;
    if (t) {
        s->part_no = t->part_no;
        rec->dup_upto = t->seq;
        p->dup_check = true;
        recd_metric_add(src->g->metrics->nats_sessions_taken_over_total, 0, 1);
        log_info("session '%s' taken over from its record: its next part is %u, stream messages "
                 "up to %llu were written by another instance",
                 s->key, t->part_no, (unsigned long long)t->seq);
    }
    s->input_record = rec;
    LIST_INSERT_HEAD(&src->records, rec, link);
    for (closed_mark **at = &p->closed; *at; at = &(*at)->next)
        if (strcmp((*at)->key, s->key) == 0) { /* its key holds this record now */
            closed_mark *c = *at;
            *at = c->next;
            free(c);
            break;
        }
    record_put(src, rec);
}

/* A stream message of a session taken over here that the previous instance had written already. */
static bool redelivered(nats_source *src, nats_partition *p, const recd_session *s)
{
    const nats_record *rec = record_of(src, s);
    if (!rec || !rec->dup_upto || p->cur_seq > rec->dup_upto)
        return false;
    recd_metric_add(src->g->metrics->nats_duplicates_dropped_total, 0, 1);
    return true;
}

static int new_decoder(nats_source *src, nats_partition *p);

/* Opens the sessions of records read when p was claimed, through p's decoder (an open message as
 * it came), before any message of p is taken. */
static void take_over(nats_source *src, nats_partition *p)
{
    pthread_mutex_lock(&src->lock);
    taken_record *t = p->takeovers;
    p->takeovers = NULL;
    pthread_mutex_unlock(&src->lock);
    if (t && src->retiring) { /* not opened: the next owner takes them over */
        free_taken(t);
        return;
    }
    while (t) {
        if (t->closed) {
            add_mark(p, t->key, t->kvkey, t->seq);
            taken_record *next = t->next;
            free(t);
            t = next;
            continue;
        }
        char err[512] = "";
        p->replaying = t;
        p->cur_seq = t->seq;
        p->cur_data = t->open;
        p->cur_len = t->len;
        p->in.touched = NULL;
        p->in.reason_set = false;
        int rc = p->dec ? 0 : new_decoder(src, p);
        if (rc == 0)
            rc = recd_wire_decoder_feed(p->dec, t->open, t->len, err, sizeof err);
        if (rc == 0 && recd_wire_decoder_pending(p->dec) > 0) {
            rc = -EPROTO;
            snprintf(err, sizeof err, "its open message ends inside a frame");
        }
        if (rc < 0) {
            log_warn("%s: a session record could not be taken over: %s", p->peer,
                     err[0] ? err : recd_strerror(rc));
            new_decoder(src, p);
        }
        p->in.touched = NULL;
        p->replaying = NULL;
        taken_record *next = t->next;
        free(t);
        t = next;
    }
}

/* The open of a record being taken over: a session still open here from an earlier ownership of
 * the partition is closed first (its record stays), since the record may say another instance
 * went on with it meanwhile. Returns true when the open is to be dispatched. */
static bool replay_open(nats_source *src, const recd_msg *m)
{
    if (m->type != RECD_MSG_OPEN)
        return false;
    recd_session *s = session_table_get(&src->g->sessions->table, m->session);
    if (!s)
        return true;
    nats_record *rec = record_of(src, s);
    if (!rec) {
        log_info("session '%s' is not taken over from its record: it is open here already",
                 s->key);
        return false;
    }
    rec->keep = true;
    session_close(s, "taken over again from its record");
    return true;
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
    nats_partition *p = partition_of_input(in);
    nats_source *src = p->src;
    in->accepted = false;
    in->lookup_missed = false;
    p->sample = m->type == RECD_MSG_STATE || m->type == RECD_MSG_EVENT;
    if (p->replaying && !replay_open(src, m))
        return 0;
    if (!p->replaying && p->closed &&
        after_close(src, p, m->session, strnlen(m->session, RECD_SESSION_KEY_MAX)))
        return 0;
    nats_record *closing = NULL;
    if (!p->replaying && (p->dup_check || m->type == RECD_MSG_CLOSE)) {
        recd_session *s = session_table_find(&in->sessions->table, m->session,
                                             strnlen(m->session, RECD_SESSION_KEY_MAX));
        if (p->dup_check && redelivered(src, p, s))
            return 0;
        if (m->type == RECD_MSG_CLOSE && (closing = record_of(src, s)))
            closing->closed_by_message = true; /* its record goes with it */
    }
    int rc = session_dispatch(in, m, meta, err, errlen);
    if (closing && (rc < 0 || !in->accepted))
        closing->closed_by_message = false; /* refused: the session and its record stay */
    if (rc == 0 && in->accepted && m->type == RECD_MSG_OPEN)
        record_open(src, p, m);
    return rc;
}

static int on_rec_state(void *ctx, const recd_wire_rec_state *st, const recd_wire_meta *meta,
                        char *err, size_t errlen)
{
    session_input *in = ctx;
    nats_partition *p = partition_of_input(in);
    in->accepted = false;
    in->lookup_missed = false;
    p->sample = true;
    if (p->replaying)
        return 0;
    if (p->dup_check && redelivered(p->src, p, st->handle))
        return 0;
    if (!st->handle && p->closed && after_close(p->src, p, st->key, st->key_len))
        return 0;
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
    p->cur_seq = seq;
    p->cur_data = data;
    p->cur_len = len;
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
    e->wait_req = src->req_no; /* its session's record (an open's own, too) is stored first */
    if (e->s) {
        e->input_no = e->s->inputs;
        e->lost_before = e->s->lost_total;
        nats_record *rec = record_of(src, e->s);
        if (rec) {
            if (seq > rec->seq_taken)
                rec->seq_taken = seq;
            record_mark(rec); /* a new part */
        }
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
    pthread_mutex_lock(&src->lock);
    uint64_t stored = src->req_done;
    pthread_mutex_unlock(&src->lock);
    size_t keep = 0;
    uint32_t done = 0;
    for (size_t i = 0; i < p->npending; i++) {
        pending_ack *e = &p->pending[i];
        if (e->wait_req > stored) {
            p->pending[keep++] = *e;
            continue;
        }
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
            nats_record *rec = record_of(src, e->s);
            if (rec && e->seq > rec->seq_written) {
                rec->seq_written = e->seq;
                record_mark(rec);
            }
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
        if (src->taking_stopped) {
            ack_written(src, p);
            expire_marks(src, p);
            continue;
        }
        take_over(src, p);
        if (p->blocked) {
            if (ingest_over_process_limit(g) || sessions_over_limit(g->sessions, p->in.over_key))
                continue;
            p->blocked = false;
            p->in.over_process = false;
            p->in.over_key[0] = '\0';
        }
        drain_partition(src, p);
        ack_written(src, p);
        expire_marks(src, p);
    }
    store_dirty(src);
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
        free_taken(p->takeovers);
        free_marks(p);
        recd_wire_decoder_free(p->dec);
    }
    while (src->req_head) {
        kv_request *next = src->req_head->next;
        free(src->req_head);
        src->req_head = next;
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
    /* Records stay with their sessions (freed with them) but are no longer this source's. */
    while (!LIST_EMPTY(&src->records)) {
        nats_record *rec = LIST_FIRST(&src->records);
        LIST_REMOVE(rec, link);
        if (rec->dirty)
            LIST_REMOVE(rec, dirty_link);
        rec->dirty = false;
        rec->src = NULL;
    }
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
        if ((queued && !src->taking_stopped) || p->npending)
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
    snprintf(src->sbucket, sizeof src->sbucket, "%s_sessions", src->stream);
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
        p->src = src;
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
    /* What is queued now, or arrives from a pull under way, is left unacknowledged for the next
     * owner: the sessions it belongs to are closed from here on (a shutdown), and a state taken
     * after its session's close would be refused and acknowledged, lost. */
    if (!src->closed) {
        src->taking_stopped = true;
        finish_if_done(src);
    }
}

/* Called after every write completion: the scan is only marked due here, through the source's
 * own uv_async, which libuv coalesces into one drain_queues per loop iteration. */
void ingest_nats_progress(recd_ingest *g)
{
    nats_source *src;
    LIST_FOREACH(src, &g->nats_sources, link)
        uv_async_send(&src->l->h.async);
}

/* A session with a record is freed: the record goes with a close message, or when the session
 * ended here for good (forgotten when idle, opened again); at a shutdown, a reload or after its
 * partition went to another instance it stays, with the last sequence written, for the next
 * owner to take the session over. */
static void record_session_freed(nats_record *rec)
{
    nats_source *src = rec->src;
    const recd_session *s = rec->s;
    if (src) {
        nats_partition *p = &src->parts[rec->partition];
        for (size_t k = 0; k < p->npending; k++) /* written now */
            if (p->pending[k].s == s && p->pending[k].seq > rec->seq_written)
                rec->seq_written = p->pending[k].seq;
        LIST_REMOVE(rec, link);
        if (rec->dirty)
            LIST_REMOVE(rec, dirty_link);
        pthread_mutex_lock(&src->lock);
        bool owned = p->owned_shared;
        pthread_mutex_unlock(&src->lock);
        const recd_session *now = session_table_get(&src->g->sessions->table, s->key);
        bool replaced = now && now != s && now->input_record;
        /* keep or replaced: another session, here or elsewhere, has this key's record now. */
        if (!rec->keep && !replaced) {
            if (rec->closed_by_message || (owned && !src->retiring))
                record_close(src, p, rec);
            else if (s->part_no != rec->part_stored || rec->seq_written != rec->seq_stored)
                record_put(src, rec);
        }
    }
    ((recd_session *)(uintptr_t)s)->input_record = NULL;
    free(rec);
}

void ingest_nats_session_freed(recd_ingest *g, const recd_session *s)
{
    if (s->input_record)
        record_session_freed(s->input_record);
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
    uint64_t failures = 0, record_failures = 0;
    nats_source *src;
    LIST_FOREACH(src, &g->nats_sources, link) {
        pthread_mutex_lock(&src->lock);
        record_failures += src->record_failures;
        src->record_failures = 0;
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
    if (record_failures)
        recd_metric_add(m->nats_session_record_failures_total, 0, record_failures);
}

void ingest_nats_close_all(recd_ingest *g)
{
    while (!LIST_EMPTY(&g->nats_sources)) {
        nats_source *src = LIST_FIRST(&g->nats_sources);
        for (uint32_t i = 0; i < src->nparts; i++)
            ack_written(src, &src->parts[i]);
        store_dirty(src); /* the worker's last round stores them */
        close_source(src);
    }
}

#endif
