/* SPDX-License-Identifier: MIT */
/* The state of one nats:// input, private to its files: the source, its partitions, the
 * messages taken and not yet acknowledged and the session records kept for a takeover by another
 * instance. The worker thread (nats_worker.c) and the loop thread (nats_dispatch.c,
 * nats_session_records.c, listener_nats.c) share only what is marked "under lock". Only built
 * with libnats (RECD_HAVE_NATS). */
#ifndef RECD_DAEMON_NATS_SOURCE_H
#define RECD_DAEMON_NATS_SOURCE_H

#include <nats/nats.h>
#include <pthread.h>
#include <stdio.h>

#include "listener.h"
#include "recd/fleet.h"
#include "recd/nats_connect.h"

#define NATS_FETCH_MAX 256          /* messages asked for in one pull request */
#define NATS_PULL_BYTES (4u << 20)  /* and bytes, at most (packed messages are up to ~576 KiB) */
#define NATS_PULLS_MAX 3            /* pull requests out per partition at once */
#define NATS_IDLE_WAIT_MS 100       /* the worker looks at leases and pulls this often, at least */
#define NATS_PULL_WAIT_MS 500       /* the server holds a pull request this long */
#define NATS_PULL_GRACE_MS 500      /* recd forgets one whose end did not come this much later */
#define NATS_PULL_PAUSE_MS 20       /* no pull request for this long after one was refused */
#define NATS_INBOX_MAX 64           /* a libnats inbox name ("_INBOX." and 22 characters), at most */
#define NATS_RETRY_MS 1000          /* after a failed connect or setup */
#define NATS_ACK_WAIT_MIN_MS 30000  /* JetStream redelivers what is unacknowledged this long */
#define NATS_API_WAIT_MS 3000       /* JetStream API and key-value requests */
#define NATS_TAKE_BATCH 64          /* messages the loop takes off a queue under one lock */
/* Session record writes queued for the worker, at most: this many beyond two per session allowed
 * (limits.max_sessions), a session's current record and its close, so that the queue overflows only
 * while the server stays away, never because many sessions opened at once. */
#define NATS_RECORDS_WAITING_SLACK 65536u
#define NATS_RECORD_KEY_MAX (16 + RECD_SESSION_KEY_MAX)
#define NATS_RECORDS_ROUND 1024     /* session record writes sent before their replies are read */
#define NATS_RECORD_TRIES 5         /* a session record write is given up after these */
#define NATS_RECORD_HEAD 16         /* "rsr1", next part number (u32), stream sequence (u64), LE */
#define NATS_RECORD_HEAD2 24        /* "rsr2": the same, then the highest wire seq written + 1 */

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
    uint64_t wire_written; /* highest wire seq of its frames written and acknowledged (has_wire) */
    uint64_t dup_wire_upto; /* taken over: its frames up to this wire seq are dropped (dup_wire) */
    bool has_wire;
    bool dup_wire;          /* until a frame above dup_wire_upto, or an open, comes */
    uint64_t seq_taken;    /* highest stream sequence of a message that fed it */
    uint64_t put_no;       /* the request number of its last write queued */
    bool dirty;
    bool closed_by_message; /* its record goes with it */
    bool keep;              /* closed to be taken over again: its record stays */
    bool taken_over;        /* opened here from another instance's record */
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
    bool has_wire; /* an "rsr2" record: wire_seq is the highest wire seq written */
    uint32_t part_no;
    uint64_t seq;
    uint64_t wire_seq;
    char key[RECD_SESSION_KEY_MAX + 1];
    char kvkey[NATS_RECORD_KEY_MAX];
    size_t len;
    uint8_t open[];
} taken_record;

/* A session that ended for good: its record says "closed at stream sequence seq" until the
 * partition's messages up to seq are all acknowledged, so that a consumer started again at an
 * older ack floor does not open it again from its redelivered open (loop thread). */
typedef struct closed_mark {
    struct closed_mark *next;  /* the partition's list, walked when marks expire */
    struct closed_mark **pprev; /* what points at it in that list: unlinked without a walk */
    struct closed_mark *hnext; /* its bucket in the partition's index, looked up for each frame */
    size_t key_len;
    uint64_t seq;
    bool stored; /* in the bucket: deleted once the partition is acknowledged up to seq */
    char key[RECD_SESSION_KEY_MAX + 1];
    char kvkey[NATS_RECORD_KEY_MAX];
} closed_mark;

/* A message taken and not yet acknowledged (loop thread). */
typedef struct pending_ack {
    char *reply;              /* its reply subject (malloc'd), NULL when it has none: the message
                               * itself is freed once taken, its bytes copied into the batches */
    uint64_t seq;             /* stream sequence */
    recd_session *s;          /* the session it fed, or NULL: nothing to wait for (counted in
                               * s->input_pending while set: nats_pending_release()) */
    uint64_t input_no;        /* s->inputs after it */
    uint64_t wait_req;        /* session record writes up to this one are stored first */
    uint64_t mark;            /* s->queued_total once its input was queued (marked) */
    uint64_t lost_before;     /* s->lost_total when it was taken */
    uint64_t wire_seq;        /* the highest wire seq of its frames (has_wire) */
    bool has_wire;
    bool marked;
    bool written; /* AckAll: written, acknowledged with the first later one that can be */
} pending_ack;

/* A subscription or a key-value watcher waiting to be freed (worker only, nats_retired.c). */
typedef struct nats_retired {
    natsSubscription *sub;
    kvWatcher *watcher;
} nats_retired;

/* A pull request out (shared, under src->lock): its messages come to inbox.no. */
typedef struct pull_request {
    uint64_t no;
    uint32_t batch, got;  /* messages asked for and come */
    uint64_t bytes_got;
    uint64_t forget_ms;   /* its end (a 408 at expiry) never came: forgotten then */
    bool live;
} pull_request;

typedef struct nats_partition {
    uint32_t no;
    /* worker thread */
    natsSubscription *sub; /* on inbox.*, with a callback: recd sends the pull requests */
    natsInbox *inbox;
    uint64_t pull_no;      /* the last pull request's number, its reply subject inbox.N */
    char next_subject[RECD_FLEET_PREFIX_MAX + 80]; /* $JS.API.CONSUMER.MSG.NEXT.<stream>.<durable> */
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
    char live_inbox[NATS_INBOX_MAX]; /* the subscription's inbox while owned, else "" */
    natsSubscription *live_sub;      /* and the subscription (on_pulled compares only) */
    pull_request pulls[NATS_PULLS_MAX];
    uint64_t pull_pause_ms; /* a request was refused (a 409): none before this */
    bool ack_all;           /* its consumer acknowledges every message up to the one acked */
    taken_record *takeovers; /* read at the claim: opened before any message is taken */
    /* loop thread */
    pending_ack *pending;
    size_t npending;
    uint64_t highest_taken; /* stream sequence */
    recd_wire_decoder *dec;
    session_input in;
    char peer[RECD_CONFIG_URL_MAX + 32];
    bool blocked; /* a buffer limit was hit: dispatch resumes on room */
    bool acks_all; /* ack_all, read at each batch taken */
    bool lag_seen;      /* a message of the batch being taken said its lag */
    uint64_t lag_taken; /* num_pending of the last one: published once per batch */
    struct nats_source *src;
    uint64_t cur_seq;          /* stream sequence of the message being taken */
    const uint8_t *cur_data;   /* and its bytes (a packed message's: its frames) */
    size_t cur_len;
    bool cur_packed;           /* it is a packed message (recd/fleet_pack.h) */
    bool cur_accepted;         /* a frame of it was accepted: its bytes are counted */
    uint32_t cur_samples;      /* its states and events accepted (recd_samples_total) */
    bool cur_has_wire;         /* a frame of it dispatched carried a wire seq: */
    uint64_t cur_wire;         /* the highest of them */
    const taken_record *replaying; /* the record whose open is being dispatched */
    bool dup_check;            /* sessions taken over here: their redeliveries are looked at */
    /* The message being taken is of a session that ended for good (its closed mark): the
     * unknown-session error its frames get is that repeat, counted as a duplicate. */
    bool repeat_of_closed;
    closed_mark *closed;       /* sessions of p that ended for good not long ago, newest first */
    closed_mark *closed_tail;  /* the oldest of them, cut first when over the cap */
    closed_mark **mark_buckets; /* and the same by key (nats_closed_marks.c) */
    size_t mark_nbuckets, nmarks;
} nats_partition;

typedef struct nats_source {
    LIST_ENTRY(nats_source) link;
    recd_listener *l;
    recd_ingest *g;
    recd_fleet_url url;
    char server[300];
    char stream[RECD_FLEET_PREFIX_MAX + 8], bucket[RECD_FLEET_PREFIX_MAX + 16], instance[128];
    char sbucket[RECD_FLEET_PREFIX_MAX + 20];
    recd_nats_auth auth; /* the URL's user part and options, and the nats.* TLS and creds keys */
    char shown[RECD_CONFIG_URL_MAX]; /* the URL for messages, its user part as "***" */
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
    natsConnection *ack_nc; /* under lock: set once connected; the loop acknowledges through it */
    bool nc_closed;      /* under lock: libnats ran the connection's last callback */
    char last_error[256]; /* under lock */
    uint64_t renew_failures; /* under lock: not yet added to the metric */
    uint64_t down_since_ms;  /* under lock: monotonic, 0 while connected */
    kv_request *req_head, *req_tail; /* under lock: session record writes for the worker */
    size_t nreq;                     /* under lock */
    uint64_t req_done;               /* under lock: requests up to this number are settled */
    uint64_t record_failures;        /* under lock: not yet added to the metric */
    uint64_t record_writes, pulls_sent; /* under lock: not yet added to their metrics */
    bool kicked;                     /* under lock: wake the worker (worker_wait) */

    /* loop only */
    uint64_t req_no; /* the last request numbered */
    LIST_HEAD(, nats_record) records;
    LIST_HEAD(, nats_record) dirty;

    /* worker only */
    natsConnection *nc;
    jsCtx *js;
    kvStore *kv;
    kvStore *skv; /* the sessions bucket */
    natsSubscription *rsub; /* on rinbox.*: the replies to its writes (nats_store_records) */
    natsInbox *rinbox;
    nats_retired *retired; /* unsubscribed, freed after a round trip or with the connection */
    size_t nretired, retired_cap;
} nats_source;

static inline uint64_t nats_mono_ms(void) { return uv_hrtime() / 1000000u; }

static inline void nats_set_error(nats_source *src, const char *what, natsStatus s)
{
    pthread_mutex_lock(&src->lock);
    snprintf(src->last_error, sizeof src->last_error, "%s: %s", what, natsStatus_GetText(s));
    pthread_mutex_unlock(&src->lock);
}

/* nats_worker.c: the thread's body (connection, stream, buckets, leases, pulls). */
void *nats_worker_main(void *arg);

/* nats_retired.c, worker side: subscriptions and watchers are freed through these, closing when
 * the connection's close comes next; nats_free_retired after that close. */
void nats_retire_subscription(nats_source *src, natsSubscription *sub, bool closing);
void nats_retire_watcher(nats_source *src, kvWatcher *w);
void nats_free_retired(nats_source *src);

/* nats_session_records.c, worker side: the bucket's writes, and the records read at a claim. */
void nats_store_records(nats_source *src);
natsStatus nats_load_records(nats_source *src, nats_partition *p);
void nats_free_taken(taken_record *t);

/* nats_session_records.c, loop side. */
nats_record *nats_record_of(nats_source *src, const recd_session *s);
void nats_record_open(nats_source *src, nats_partition *p, const recd_msg *m);
void nats_record_mark(nats_record *rec);
/* After a message was taken for rec's session: a part it started is recorded at once (queued
 * before the message's acknowledgement, which waits for every record queued before it, so a
 * takeover never numbers a part twice); other changes are marked (nats_record_mark). */
void nats_record_taken(nats_record *rec);
/* An open, in the packed message that opened a session taken over here from its record (the
 * record leaves that message unwritten, for the samples in it): dropped as a repeat, counted. */
bool nats_replayed_open(nats_source *src, nats_partition *p, const recd_session *s);
void nats_store_dirty(nats_source *src, bool all);
void nats_record_session_freed(nats_record *rec);
bool nats_redelivered(nats_source *src, nats_partition *p, const recd_session *s, bool has_seq,
                      uint64_t seq);
bool nats_replay_open(nats_source *src, nats_partition *p, const recd_msg *m);
/* Forgets the session a pending message fed (it waits for nothing more, or the session went). */
static inline void nats_pending_release(pending_ack *e)
{
    if (e->s) {
        e->s->input_pending--;
        e->s = NULL;
    }
}

/* nats_closed_marks.c: the marks of sessions that ended for good, by key. */
void nats_add_mark(nats_partition *p, const char *key, const char *kvkey, uint64_t seq);
/* Forgets key's mark, if any: a session of that key is open again. */
void nats_forget_mark(nats_partition *p, const char *key);
bool nats_after_close(nats_source *src, nats_partition *p, const char *key, size_t len);
/* Unlinks the marks at or below floor and returns them as a list through next (the caller
 * deletes their records and frees them). */
closed_mark *nats_take_expired_marks(nats_partition *p, uint64_t floor);
/* Unlinks the oldest marks until keep are left and returns them likewise. */
closed_mark *nats_take_oldest_marks(nats_partition *p, size_t keep);
void nats_free_marks(nats_partition *p);
/* nats_session_records.c: expired marks go with their records from the bucket. */
void nats_expire_marks(nats_source *src, nats_partition *p);

/* nats_dispatch.c: the loop thread's pass over the queues (after which listener_nats.c closes a
 * retired source that is done), and its acknowledgements. */
void nats_drain_queues(nats_source *src);
void nats_ack_written(nats_source *src, nats_partition *p);

#endif
