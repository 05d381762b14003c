/* SPDX-License-Identifier: MIT */
/* nats:// inputs, the worker thread (libnats): connects, creates the stream and the buckets when
 * missing, claims, renews and hands back partition leases for a fair share of the fleet, and
 * pulls messages into the partitions' queues for the loop thread. */

#ifdef RECD_HAVE_NATS

#include "nats_source.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support/log.h"

static void set_connected(nats_source *src, bool up)
{
    pthread_mutex_lock(&src->lock);
    if (up != src->connected) {
        src->connected = up;
        src->down_since_ms = up ? 0 : nats_mono_ms();
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

/* libnats runs connection callbacks on its own thread, after the event: the closed one comes last
 * of a connection's, and only once it has run may the source (their closure) be freed. */
static void on_closed(natsConnection *nc, void *closure)
{
    (void)nc;
    nats_source *src = closure;
    pthread_mutex_lock(&src->lock);
    src->nc_closed = true;
    pthread_cond_broadcast(&src->wake);
    pthread_mutex_unlock(&src->lock);
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
    if (!src->stop && !src->kicked)
        pthread_cond_timedwait(&src->wake, &src->lock, &until);
    src->kicked = false;
    pthread_mutex_unlock(&src->lock);
}

/* The connection (recd/nats_connect.h): reconnects forever, the fleet waits for its engine. */
static natsStatus connect_server(nats_source *src)
{
    recd_nats_tuning t = {.max_reconnect = -1,
                          .reconnect_wait_ms = 500,
                          .timeout_ms = 2000,
                          .on_disconnected = on_disconnected,
                          .on_reconnected = on_reconnected,
                          .on_closed = on_closed,
                          .closure = src};
    pthread_mutex_lock(&src->lock);
    src->nc_closed = false;
    pthread_mutex_unlock(&src->lock);
    char why[400];
    natsStatus s;
    if (recd_nats_connect(&src->nc, src->server, &src->auth, &t, &s, why, sizeof why) < 0) {
        pthread_mutex_lock(&src->lock);
        snprintf(src->last_error, sizeof src->last_error, "connect: %.240s", why);
        pthread_mutex_unlock(&src->lock);
        return s == NATS_OK ? NATS_INVALID_ARG : s;
    }
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = NATS_API_WAIT_MS;
    s = natsConnection_JetStream(&src->js, src->nc, &jo);
    if (s != NATS_OK)
        nats_set_error(src, "JetStream context", s);
    return s;
}

/* Opens key-value bucket name (what: "lease bucket"...), created when missing with history 1,
 * file storage and entries that expire after ttl_ms (0: never). */
static natsStatus open_bucket(nats_source *src, const char *name, const char *what,
                              uint64_t ttl_ms, kvStore **kv)
{
    natsStatus s = js_KeyValue(kv, src->js, name);
    if (s == NATS_NOT_FOUND) {
        kvConfig kc;
        kvConfig_Init(&kc);
        kc.Bucket = name;
        kc.History = 1;
        kc.TTL = (int64_t)ttl_ms * 1000000; /* ns */
        kc.StorageType = js_FileStorage;
        s = js_CreateKeyValue(kv, src->js, &kc);
        if (s == NATS_OK && ttl_ms)
            log_notice("%s: created the %s %s (TTL %llu ms)", src->shown, what, name,
                       (unsigned long long)ttl_ms);
        else if (s == NATS_OK)
            log_notice("%s: created the %s %s", src->shown, what, name);
    }
    if (s != NATS_OK)
        nats_set_error(src, what, s);
    return s;
}

/* The stream and the buckets, created when missing (a plain `nats-server -js` is enough). */
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
            log_notice("%s: created JetStream stream %s on %s", src->shown, src->stream, subject);
    }
    jsStreamInfo_Destroy(si);
    if (s != NATS_OK) {
        nats_set_error(src, "stream", s);
        return s;
    }
    /* Leases disappear when nobody renews them; a session record goes with its session. */
    s = open_bucket(src, src->bucket, "lease bucket", src->lease_ttl_ms, &src->kv);
    if (s == NATS_OK)
        s = open_bucket(src, src->sbucket, "sessions bucket", 0, &src->skv);
    return s;
}

static void lease_key(const nats_partition *p, char *key, size_t cap)
{
    snprintf(key, cap, "p%u", p->no);
}

/* The live pull request of p that a message to p's subscription belongs to (under lock), or
 * NULL. A request's end (a status) comes to its own reply subject, inbox.no; a stream message
 * keeps its own subject, and goes to the oldest request: the server fills them in order.
 * *current: p still pulls through this subscription (a stream message cannot say). */
static pull_request *request_of(nats_partition *p, natsSubscription *sub, natsMsg *m, bool data,
                                bool *current)
{
    const char *subject = natsMsg_GetSubject(m);
    size_t n = strlen(p->live_inbox);
    *current = n && sub == p->live_sub;
    if (!*current || (!data && (strncmp(subject, p->live_inbox, n) != 0 || subject[n] != '.')))
        return NULL;
    uint64_t no = data ? 0 : strtoull(subject + n + 1, NULL, 10);
    pull_request *oldest = NULL;
    for (int i = 0; i < NATS_PULLS_MAX; i++) {
        pull_request *r = &p->pulls[i];
        if (r->live && !data && r->no == no)
            return r;
        if (r->live && data && (!oldest || r->no < oldest->no))
            oldest = r;
    }
    return oldest;
}

/* libnats's delivery thread for p's subscription: a pulled message is queued for the loop at
 * once, and a request answered in full or ended by the server (its 404, 408 or 409: no more,
 * expired, refused) wakes the worker to send the next. Heartbeats are passed over. Late
 * messages of a forgotten request are this consumer's like any other. The ring holds
 * max_in_flight and the requests never ask for more than its room; should the server still send
 * more (a request forgotten too early), the message waits here for room rather than be dropped:
 * the loop takes a redelivery below its highest sequence taken for a repeat. */
static void on_pulled(natsConnection *nc, natsSubscription *sub, natsMsg *m, void *closure)
{
    (void)nc;
    nats_partition *p = closure;
    nats_source *src = p->src;
    const char *reply = natsMsg_GetReply(m);
    bool data = reply && strncmp(reply, "$JS.ACK.", 8) == 0;
    const char *status = NULL;
    bool ended = !data && natsMsgHeader_Get(m, "Status", &status) == NATS_OK && status &&
                 strcmp(status, "100") != 0;
    bool current;
    pthread_mutex_lock(&src->lock);
    pull_request *r = request_of(p, sub, m, data, &current);
    if (!data) {
        if (ended && strncmp(status, "409", 3) == 0) /* refused (max_ack_pending...): */
            p->pull_pause_ms = nats_mono_ms() + NATS_PULL_PAUSE_MS; /* not again at once */
        if (r && ended) {
            r->live = false;
            src->kicked = true;
            pthread_cond_broadcast(&src->wake);
        }
        pthread_mutex_unlock(&src->lock);
        natsMsg_Destroy(m);
        return;
    }
    while (current && p->in_flight >= src->max_in_flight && !src->stop && !src->retiring) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 50 * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&src->wake, &src->lock, &until);
        r = request_of(p, sub, m, data, &current);
    }
    if (!current || src->stop || src->retiring) { /* unacknowledged: for the next owner */
        pthread_mutex_unlock(&src->lock);
        natsMsg_Destroy(m);
        return;
    }
    p->queue[(p->qhead + p->qcount) % src->max_in_flight] = m;
    p->qcount++;
    p->in_flight++;
    if (r) {
        r->got++;
        r->bytes_got += (uint64_t)natsMsg_GetDataLength(m);
        if (r->got >= r->batch || r->bytes_got >= NATS_PULL_BYTES) {
            r->live = false;
            src->kicked = true;
            pthread_cond_broadcast(&src->wake);
        }
    }
    uv_async_send(&src->l->h.async);
    pthread_mutex_unlock(&src->lock);
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
    cc.AckPolicy = js_AckAll; /* one acknowledgement for a run of messages written */
    cc.DeliverPolicy = js_DeliverAll;
    cc.AckWait = (int64_t)src->ack_wait_ms * 1000000;
    cc.MaxAckPending = (int64_t)src->max_in_flight;
    jsConsumerInfo *ci = NULL;
    jsErrCode jerr = 0;
    natsStatus s = js_GetConsumerInfo(&ci, src->js, src->stream, durable, NULL, &jerr);
    /* An older recd's consumer acknowledges message by message; the policy of a consumer cannot
     * change, so it is made again, from its ack floor, like one a dead owner left. */
    bool explicit_acks = s == NATS_OK && ci->Config && ci->Config->AckPolicy != js_AckAll;
    if (s == NATS_OK && (ci->NumAckPending > 0 || explicit_acks)) {
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
        if (s == NATS_OK && unacked)
            log_info("%s: partition %u: %lld messages taken and not acknowledged before; read "
                     "again from stream sequence %llu",
                     src->shown, p->no, (long long)unacked, (unsigned long long)from);
        if (s == NATS_OK && explicit_acks)
            log_notice("%s: partition %u: its consumer, made with explicit acks, is made again "
                       "with AckAll from stream sequence %llu",
                       src->shown, p->no, (unsigned long long)from);
    } else if (s == NATS_NOT_FOUND) {
        s = js_AddConsumer(&ci, src->js, src->stream, &cc, NULL, &jerr);
    }
    bool ack_all = s == NATS_OK && ci && ci->Config && ci->Config->AckPolicy == js_AckAll;
    jsConsumerInfo_Destroy(ci);
    pthread_mutex_lock(&src->lock);
    p->ack_all = ack_all;
    pthread_mutex_unlock(&src->lock);
    if (s != NATS_OK) {
        nats_set_error(src, "consumer", s);
        return s;
    }
    /* A plain subscription, not js_PullSubscribe: see pull_refill(). */
    natsInbox_Destroy(p->inbox);
    p->inbox = NULL;
    char wildcard[NATS_INBOX_MAX];
    s = natsInbox_Create(&p->inbox);
    if (s == NATS_OK && strlen(p->inbox) + 2 >= sizeof wildcard)
        s = NATS_ERR;
    if (s == NATS_OK) {
        snprintf(wildcard, sizeof wildcard, "%s.*", p->inbox);
        /* under lock: its first messages may come before natsConnection_Subscribe returns */
        pthread_mutex_lock(&src->lock);
        snprintf(p->live_inbox, sizeof p->live_inbox, "%s", p->inbox);
        memset(p->pulls, 0, sizeof p->pulls);
        s = natsConnection_Subscribe(&p->live_sub, src->nc, wildcard, on_pulled, p);
        p->sub = p->live_sub;
        pthread_mutex_unlock(&src->lock);
    }
    if (s == NATS_OK)
        s = natsSubscription_SetPendingLimits(p->sub, -1, -1); /* bounded by the consumer's max_ack_pending */
    snprintf(p->next_subject, sizeof p->next_subject, "$JS.API.CONSUMER.MSG.NEXT.%s.%s", src->stream,
             durable);
    if (s != NATS_OK)
        nats_set_error(src, "pull subscription", s);
    return s;
}

/* Stops pulling p and says so to the loop thread; the lease itself is the caller's business.
 * The durable consumer stays: subscribe() created it, and libnats deletes only its own. When
 * closing, the connection's close comes next and frees the subscription. */
static void unsubscribe(nats_source *src, nats_partition *p, bool closing)
{
    natsSubscription *sub = p->sub;
    p->sub = NULL;
    p->owned = false;
    pthread_mutex_lock(&src->lock);
    p->owned_shared = false;
    p->live_inbox[0] = '\0'; /* what still comes for it is dropped (on_pulled) */
    p->live_sub = NULL;
    memset(p->pulls, 0, sizeof p->pulls);
    pthread_mutex_unlock(&src->lock);
    nats_retire_subscription(src, sub, closing);
}

static void drop_ownership(nats_source *src, nats_partition *p, const char *why)
{
    if (!p->owned)
        return;
    log_warn("%s: partition %u released: %s", src->shown, p->no, why);
    unsubscribe(src, p, false);
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
    /* Not kvStore_Keys: it frees its watcher at once (nats_retired.c says why not). */
    kvWatchOptions o;
    kvWatchOptions_Init(&o);
    o.IgnoreDeletes = true;
    o.MetaOnly = true;
    kvWatcher *w = NULL;
    if (kvStore_Watch(&w, src->kv, "i.>", &o) != NATS_OK)
        return 1;
    uint32_t n = 0;
    for (;;) {
        kvEntry *e = NULL;
        if (kvWatcher_Next(&e, w, NATS_API_WAIT_MS) != NATS_OK || !e)
            break; /* NULL: every key there was is read */
        n++;
        kvEntry_Destroy(e);
    }
    nats_retire_watcher(src, w);
    return n ? n : 1;
}

static void release_partition(nats_source *src, nats_partition *p)
{
    unsubscribe(src, p, false);
    p->draining = false;
    char key[32];
    lease_key(p, key, sizeof key);
    kvStore_Delete(src->kv, key);
    log_info("%s: partition %u handed back for another instance", src->shown, p->no);
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
        uint64_t now = nats_mono_ms();
        for (int k = 0; k < NATS_PULLS_MAX; k++) /* its requests end first: no late messages */
            idle = idle && (!p->pulls[k].live || now >= p->pulls[k].forget_ms);
        pthread_mutex_unlock(&src->lock);
        if (idle)
            release_partition(src, p);
    }
}

/* Renews the leases held, claims free ones up to a fair share and hands back the excess. */
static void tend_leases(nats_source *src)
{
    uint64_t now = nats_mono_ms();
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
            nats_set_error(src, "lease renewal", s);
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
        if (nats_load_records(src, p) != NATS_OK || subscribe(src, p) != NATS_OK) {
            kvStore_Delete(src->kv, key);
            continue;
        }
        p->owned = true;
        owned++;
        pthread_mutex_lock(&src->lock);
        p->owned_shared = true;
        pthread_mutex_unlock(&src->lock);
        log_info("%s: partition %u claimed by %s", src->shown, p->no, src->instance);
    }
    if (!stopping(src))
        rebalance(src, fair);
}

/* Keeps NATS_PULLS_MAX pull requests out for p while room allows, so that the server always has
 * one to fill while the messages of another are on their way: each asks for up to NATS_FETCH_MAX
 * messages and NATS_PULL_BYTES (a batch of packed messages stays bounded in bytes), and together
 * with the messages taken and not yet acknowledged they never ask for more than max_in_flight.
 * recd sends the pull requests itself, each with its own reply subject, instead of libnats 3.4's
 * fetch: when messages of an earlier request came late, that fetch could store more messages
 * than its batch array holds (heap corruption, seen under load). A request is sent only for a
 * quarter of a batch at least (or of what max_in_flight allows): no trickle of small ones. */
static void pull_refill(nats_source *src, nats_partition *p, uint64_t now)
{
    uint64_t nos[NATS_PULLS_MAX];
    uint32_t batches[NATS_PULLS_MAX];
    int nsend = 0;
    pthread_mutex_lock(&src->lock);
    uint32_t out = 0;
    uint64_t asked = now < p->pull_pause_ms ? src->max_in_flight : p->in_flight;
    for (int i = 0; i < NATS_PULLS_MAX; i++) {
        pull_request *r = &p->pulls[i];
        if (r->live && now >= r->forget_ms)
            r->live = false;
        if (r->live) {
            out++;
            asked += r->batch > r->got ? r->batch - r->got : 0;
        }
    }
    uint64_t room = asked < src->max_in_flight ? src->max_in_flight - asked : 0;
    uint32_t least = src->max_in_flight / NATS_PULLS_MAX;
    least = least > NATS_FETCH_MAX / 4 ? NATS_FETCH_MAX / 4 : least ? least : 1;
    for (int i = 0; i < NATS_PULLS_MAX && out < NATS_PULLS_MAX && room >= least; i++) {
        pull_request *r = &p->pulls[i];
        if (r->live)
            continue;
        uint32_t batch = room < NATS_FETCH_MAX ? (uint32_t)room : NATS_FETCH_MAX;
        *r = (pull_request){.no = ++p->pull_no,
                            .batch = batch,
                            .forget_ms = now + NATS_PULL_WAIT_MS + NATS_PULL_GRACE_MS,
                            .live = true};
        room -= batch;
        out++;
        nos[nsend] = r->no;
        batches[nsend++] = batch;
    }
    pthread_mutex_unlock(&src->lock);
    for (int i = 0; i < nsend; i++) {
        char body[128], reply[NATS_INBOX_MAX + 24];
        int len = snprintf(body, sizeof body, "{\"batch\":%u,\"max_bytes\":%u,\"expires\":%llu}",
                           batches[i], NATS_PULL_BYTES,
                           (unsigned long long)NATS_PULL_WAIT_MS * 1000000u);
        snprintf(reply, sizeof reply, "%s.%llu", p->inbox, (unsigned long long)nos[i]);
        natsStatus s = natsConnection_PublishRequest(src->nc, p->next_subject, reply, body, len);
        if (s == NATS_OK) {
            pthread_mutex_lock(&src->lock);
            src->pulls_sent++;
            pthread_mutex_unlock(&src->lock);
            continue;
        }
        nats_set_error(src, "pull request", s);
        pthread_mutex_lock(&src->lock);
        for (int k = 0; k < NATS_PULLS_MAX; k++)
            if (p->pulls[k].no == nos[i])
                p->pulls[k].live = false;
        pthread_mutex_unlock(&src->lock);
    }
}

static void release_leases(nats_source *src)
{
    uint64_t now = nats_mono_ms();
    for (uint32_t i = 0; i < src->nparts; i++) {
        nats_partition *p = &src->parts[i];
        if (!p->owned)
            continue;
        unsubscribe(src, p, true);
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

/* Closes and frees the connection, its JetStream context and the subscriptions retired on it,
 * once libnats has no thread left that could touch them or run a callback with src. */
static void close_connection(nats_source *src)
{
    jsCtx_Destroy(src->js);
    src->js = NULL;
    pthread_mutex_lock(&src->lock);
    src->ack_nc = NULL; /* the loop acknowledges nothing more: the source is closed */
    pthread_mutex_unlock(&src->lock);
    nats_retire_subscription(src, src->rsub, true);
    src->rsub = NULL;
    if (src->nc) {
        natsConnection_Close(src->nc); /* joins its read loop */
        pthread_mutex_lock(&src->lock);
        while (!src->nc_closed)
            pthread_cond_wait(&src->wake, &src->lock);
        pthread_mutex_unlock(&src->lock);
    }
    nats_free_retired(src);
    natsConnection_Destroy(src->nc);
    src->nc = NULL;
}

void *nats_worker_main(void *arg)
{
    nats_source *src = arg;
    uint64_t next_lease = 0, setup_failures = 0;
    bool ready = false;
    while (!stopping(src)) {
        if (!src->nc) {
            if (connect_server(src) != NATS_OK) {
                close_connection(src);
                worker_wait(src, NATS_RETRY_MS);
                continue;
            }
            set_connected(src, true);
            pthread_mutex_lock(&src->lock);
            src->ack_nc = src->nc;
            pthread_mutex_unlock(&src->lock);
        }
        if (!ready) {
            if (ensure_setup(src) != NATS_OK) {
                if (setup_failures++ % 30 == 0) {
                    pthread_mutex_lock(&src->lock);
                    log_warn("%s: %s (%s); retrying every %u ms", src->shown,
                             src->last_error, nats_GetLastError(NULL), NATS_RETRY_MS);
                    pthread_mutex_unlock(&src->lock);
                }
                worker_wait(src, NATS_RETRY_MS);
                continue;
            }
            ready = true;
            log_info("%s: connected to %s, stream %s, %u partitions, instance %s", src->shown,
                     src->server, src->stream, src->nparts, src->instance);
        }
        uint64_t now = nats_mono_ms();
        if (now >= next_lease) {
            tend_leases(src);
            next_lease = now + src->lease_ttl_ms / 3;
        }
        bool retiring;
        pthread_mutex_lock(&src->lock);
        retiring = src->retiring;
        pthread_mutex_unlock(&src->lock);
        nats_store_records(src);
        now = nats_mono_ms();
        for (uint32_t i = 0; i < src->nparts && !retiring; i++)
            if (src->parts[i].owned && !src->parts[i].draining)
                pull_refill(src, &src->parts[i], now);
        /* Woken by an answered request, room freed by acknowledgements or a record to write. */
        worker_wait(src, NATS_IDLE_WAIT_MS);
    }
    nats_store_records(src); /* the last ones (a shutdown's final sequences), one try */
    release_leases(src);
    kvStore_Destroy(src->skv);
    src->skv = NULL;
    kvStore_Destroy(src->kv);
    src->kv = NULL;
    close_connection(src);
    return NULL;
}

#endif
