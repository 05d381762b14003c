/* SPDX-License-Identifier: MIT */
/* nats:// inputs (listener.h): a source's lifecycle (open, retire, close once its worker thread
 * is joined) and the ingest_nats_* calls of the ingest layer. The worker thread is in
 * nats_worker.c, the loop thread's dispatch in nats_dispatch.c, the session records in
 * nats_session_records.c; a build without libnats refuses nats:// inputs here. */

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
    (void)g, (void)cfg;
    *out = NULL;
    snprintf(why, whylen, "this recd was built without NATS support (libnats-dev)");
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

#include <unistd.h>

#include "nats_source.h"

static void source_free(nats_source *src)
{
    for (uint32_t i = 0; src->parts && i < src->nparts; i++) {
        nats_partition *p = &src->parts[i];
        for (size_t k = 0; k < p->qcount; k++)
            natsMsg_Destroy(p->queue[(p->qhead + k) % src->max_in_flight]);
        for (size_t k = 0; k < p->npending; k++)
            free(p->pending[k].reply);
        free(p->queue);
        free(p->pending);
        nats_free_taken(p->takeovers);
        nats_free_marks(p);
        recd_wire_decoder_free(p->dec);
        natsInbox_Destroy(p->inbox);
    }
    natsInbox_Destroy(src->rinbox);
    while (src->req_head) {
        kv_request *next = src->req_head->next;
        free(src->req_head);
        src->req_head = next;
    }
    free(src->parts);
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
    pthread_cond_broadcast(&src->wake);
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

/* A pass over the queues, then the close of a retired source once nothing of it is in flight. */
static void drain(nats_source *src)
{
    nats_drain_queues(src);
    finish_if_done(src);
}

static void on_async(uv_async_t *h)
{
    recd_listener *l = h->data;
    if (l->nats)
        drain(l->nats);
}

/* The nats.* keys beside the URL's own options: each said one way only. */
static int merge_key(const char *key, const char *value, char *field, size_t cap, char *why,
                     size_t whylen)
{
    if (!value)
        return 0;
    if (field[0]) {
        snprintf(why, whylen, "%s is given both in the URL and as nats.%s", key, key);
        return -EINVAL;
    }
    if (strlen(value) >= cap) {
        snprintf(why, whylen, "nats.%s is longer than %zu bytes", key, cap - 1);
        return -EINVAL;
    }
    memcpy(field, value, strlen(value) + 1);
    return 0;
}

/* The URL's host, port, prefix and options, with nats.creds and nats.tls_* (recd/nats_connect.h). */
static int parse_url(nats_source *src, const char *url, const recd_config *c, char *why,
                     size_t whylen)
{
    recd_nats_auth *a = &src->auth;
    int rc = recd_nats_url_split(url, &src->url, a, why, whylen);
    if (rc == 0)
        rc = merge_key("creds", c->nats.creds, a->creds, sizeof a->creds, why, whylen);
    if (rc == 0)
        rc = merge_key("tls_ca", c->nats.tls_ca, a->tls_ca, sizeof a->tls_ca, why, whylen);
    if (rc == 0)
        rc = merge_key("tls_cert", c->nats.tls_cert, a->tls_cert, sizeof a->tls_cert, why, whylen);
    if (rc == 0)
        rc = merge_key("tls_key", c->nats.tls_key, a->tls_key, sizeof a->tls_key, why, whylen);
    if (rc == 0)
        rc = recd_nats_auth_check(a, why, whylen);
    if (rc == 0)
        rc = recd_nats_load(why, whylen);
    recd_nats_redacted(url, src->shown, sizeof src->shown);
    recd_nats_server_url(&src->url, src->server, sizeof src->server);
    return rc;
}

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
    int rc = parse_url(src, cfg->url, c, why, whylen);
    if (rc < 0)
        goto fail;
    default_names(src, c);
    if (!name_ok(src->stream) || !name_ok(src->instance)) {
        snprintf(why, whylen, "nats.stream and nats.instance may hold only A-Z a-z 0-9 _ -");
        rc = -EINVAL;
        goto fail;
    }
    src->nparts = c->nats.partitions;
    src->max_in_flight = c->nats.max_in_flight;
    src->lease_ttl_ms = c->nats.lease_ttl_ms;
    /* Unacknowledged messages come again after this: well after a flush could have written them. */
    src->ack_wait_ms = c->flush.interval_ms * 10 > NATS_ACK_WAIT_MIN_MS ? c->flush.interval_ms * 10
                                                                         : NATS_ACK_WAIT_MIN_MS;
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
        snprintf(p->peer, sizeof p->peer, "%s partition %u", src->shown, i);
        p->in.sessions = g->sessions;
        p->in.transport = RECD_M_NATS;
        p->in.shared = true;
        p->in.peer = p->peer;
        p->in.tally = &src->tally;
    }
    pthread_mutex_lock(&src->lock);
    src->down_since_ms = nats_mono_ms();
    snprintf(src->last_error, sizeof src->last_error, "not connected yet");
    pthread_mutex_unlock(&src->lock);
    if ((rc = uv_async_init(g->loop, &l->h.async, on_async)) < 0) {
        snprintf(why, whylen, "%s", uv_strerror(rc));
        goto fail;
    }
    l->h.handle.data = l;
    if (pthread_create(&src->worker, NULL, nats_worker_main, src) != 0) {
        snprintf(why, whylen, "cannot start the NATS worker thread");
        l->nats = NULL;
        uv_close(&l->h.handle, on_closed);
        source_free(src);
        return -EAGAIN;
    }
    src->worker_started = true;
    snprintf(l->bound, sizeof l->bound, "%s", src->shown);
    LIST_INSERT_HEAD(&g->listeners, l, link);
    LIST_INSERT_HEAD(&g->nats_sources, src, link);
    *out = l;
    return 0;
fail:
    if (!why[0])
        snprintf(why, whylen, "%s", recd_strerror(rc));
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
    drain(src);
    /* What is queued now, or arrives from a pull under way, is left unacknowledged for the next
     * owner: the sessions it belongs to are closed from here on (a shutdown), and a state taken
     * after its session's close would be refused and acknowledged, lost. */
    if (!src->closed) {
        src->taking_stopped = true;
        finish_if_done(src);
    }
}

/* Called after every write completion: the scan is only marked due here, through the source's
 * own uv_async, which libuv coalesces into one drain per loop iteration. */
void ingest_nats_progress(recd_ingest *g)
{
    nats_source *src;
    LIST_FOREACH(src, &g->nats_sources, link)
        uv_async_send(&src->l->h.async);
}

void ingest_nats_session_freed(recd_ingest *g, const recd_session *s)
{
    if (s->input_record)
        nats_record_session_freed(s->input_record);
    nats_source *src;
    LIST_FOREACH(src, &g->nats_sources, link) {
        for (uint32_t i = 0; i < src->nparts; i++) {
            nats_partition *p = &src->parts[i];
            if (p->in.touched == s)
                p->in.touched = NULL; /* freed while its message is dispatched: written */
            /* Freed once everything it queued was written (or counted as lost). Most sessions
             * end with none left: a session's frames may come through any partition, so a
             * walk would be every partition's in-flight list for each session freed. */
            for (size_t k = 0; s->input_pending && k < p->npending; k++)
                if (p->pending[k].s == s)
                    nats_pending_release(&p->pending[k]);
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
                     src->shown, src->server,
                     (unsigned long long)((nats_mono_ms() - since) / 1000), err);
            return true;
        }
    }
    return false;
}

void ingest_nats_refresh_metrics(recd_ingest *g)
{
    recd_daemon_metrics *m = g->metrics;
    int64_t owned = 0, connected = 0, lag = 0;
    uint64_t failures = 0, record_failures = 0, pulls = 0, record_writes = 0;
    nats_source *src;
    LIST_FOREACH(src, &g->nats_sources, link) {
        pthread_mutex_lock(&src->lock);
        record_failures += src->record_failures;
        src->record_failures = 0;
        pulls += src->pulls_sent;
        src->pulls_sent = 0;
        record_writes += src->record_writes;
        src->record_writes = 0;
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
    if (pulls)
        recd_metric_add(m->nats_pull_requests_total, 0, pulls);
    if (record_writes)
        recd_metric_add(m->nats_session_record_writes_total, 0, record_writes);
}

void ingest_nats_close_all(recd_ingest *g)
{
    while (!LIST_EMPTY(&g->nats_sources)) {
        nats_source *src = LIST_FIRST(&g->nats_sources);
        for (uint32_t i = 0; i < src->nparts; i++)
            nats_ack_written(src, &src->parts[i]);
        nats_store_dirty(src, true); /* the worker's last round stores them */
        close_source(src);
    }
}

#endif
