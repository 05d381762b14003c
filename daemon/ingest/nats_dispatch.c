/* SPDX-License-Identifier: MIT */
/* nats:// inputs, the loop thread's side of the queues: takes what the worker pulled, decodes and
 * dispatches it like stream input (dropping redeliveries), and acknowledges each message once
 * its bytes are in files and its session's record is stored. */

#ifdef RECD_HAVE_NATS

#include "nats_source.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "recd/fleet_pack.h"
#include "recd/wire_lend.h"
#include "support/log.h"

static nats_partition *partition_of_input(session_input *in)
{
    return (nats_partition *)(void *)((char *)in - offsetof(nats_partition, in));
}

/* The highest wire seq among the frames of the message being taken that were dispatched: its
 * session's record keeps it once the message is acknowledged, so that a next owner drops those
 * frames when they come again, whole messages or parts of packed ones. */
static void note_wire_seq(nats_partition *p, bool has_seq, uint64_t seq)
{
    if (!has_seq || (p->cur_has_wire && seq <= p->cur_wire))
        return;
    p->cur_wire = seq;
    p->cur_has_wire = true;
}

/* A frame of the message being taken was accepted: counted per frame, as a stream counts it,
 * however many frames a packed message holds. */
static void note_accepted(nats_partition *p, bool sample, bool has_seq, uint64_t seq)
{
    p->cur_accepted = true;
    p->cur_samples += sample;
    note_wire_seq(p, has_seq, seq);
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
    bool sample = m->type == RECD_MSG_STATE || m->type == RECD_MSG_EVENT;
    if (p->replaying && !nats_replay_open(src, p, m))
        return 0;
    if (!p->replaying && p->closed &&
        (p->repeat_of_closed ||
         nats_after_close(src, p, m->session, strnlen(m->session, RECD_SESSION_KEY_MAX))))
        return 0;
    nats_record *closing = NULL;
    if (!p->replaying && (p->dup_check || m->type == RECD_MSG_CLOSE)) {
        recd_session *s = session_table_find(&in->sessions->table, m->session,
                                             strnlen(m->session, RECD_SESSION_KEY_MAX));
        /* an open is never a repeat by its seq: it ends the window of seqs written (below) */
        if (p->dup_check &&
            nats_redelivered(src, p, s, m->has_seq && m->type != RECD_MSG_OPEN, m->seq))
            return 0;
        if (p->dup_check && m->type == RECD_MSG_OPEN && nats_replayed_open(src, p, s))
            return 0;
        if (m->type == RECD_MSG_CLOSE && (closing = nats_record_of(src, s)))
            closing->closed_by_message = true; /* its record goes with it */
    }
    int rc = session_dispatch(in, m, meta, err, errlen);
    if (rc == 0 && in->accepted)
        note_accepted(p, sample, m->has_seq, m->seq);
    if (closing && (rc < 0 || !in->accepted))
        closing->closed_by_message = false; /* refused: the session and its record stay */
    if (rc == 0 && in->accepted && m->type == RECD_MSG_OPEN) {
        nats_record *rec = p->replaying ? NULL : nats_record_of(src, p->in.touched);
        if (rec) /* opened again by its publisher: its seqs may start again */
            rec->dup_wire = false;
        nats_record_open(src, p, m);
    }
    return rc;
}

/* session_format_of; a key it misses may be a session that ended for good, come again (a
 * consumer started at an older ack floor): noted, so that the unknown-session error its frame
 * gets is taken as the repeat it is. */
static recd_msg_format format_of(void *ctx, const char *key, size_t len, void **handle)
{
    recd_msg_format f = session_format_of(ctx, key, len, handle);
    session_input *in = ctx;
    nats_partition *p = partition_of_input(in);
    if (f == RECD_MSG_FMT_NONE && in->lookup_missed && p->closed && !p->replaying &&
        !p->repeat_of_closed && nats_after_close(p->src, p, key, len))
        p->repeat_of_closed = true;
    return f;
}

static int on_rec_state(void *ctx, const recd_wire_rec_state *st, const recd_wire_meta *meta,
                        char *err, size_t errlen)
{
    session_input *in = ctx;
    nats_partition *p = partition_of_input(in);
    in->accepted = false;
    in->lookup_missed = false;
    if (p->replaying)
        return 0;
    if (p->dup_check && nats_redelivered(p->src, p, st->handle, st->has_seq, st->seq))
        return 0;
    if (!st->handle && p->closed && nats_after_close(p->src, p, st->key, st->key_len))
        return 0;
    int rc = session_dispatch_fast(in, st, meta, err, errlen);
    if (rc == 0 && in->accepted)
        note_accepted(p, true, st->has_seq, st->seq);
    return rc;
}

static int new_decoder(nats_source *src, nats_partition *p)
{
    recd_wire_decoder_config dc = {.encoding = RECD_WIRE_BINARY,
                                   .max_frame = (size_t)src->g->cfg->limits.max_frame,
                                   .format_of = format_of,
                                   .on_msg = on_msg,
                                   .ctx = &p->in,
                                   .on_rec_state = on_rec_state};
    recd_wire_decoder_free(p->dec);
    p->dec = NULL;
    int rc = recd_wire_decoder_new(&p->dec, &dc);
    if (rc == 0)
        recd_wire__decoder_set_lend(p->dec, session_lend_state);
    return rc;
}

/* Opens the sessions of records read when p was claimed, through p's decoder (an open message as
 * it came), before any message of p is taken. */
static void take_over(nats_source *src, nats_partition *p)
{
    pthread_mutex_lock(&src->lock);
    taken_record *t = p->takeovers;
    p->takeovers = NULL;
    pthread_mutex_unlock(&src->lock);
    if (t && src->retiring) { /* not opened: the next owner takes them over */
        nats_free_taken(t);
        return;
    }
    while (t) {
        if (t->closed) {
            nats_add_mark(p, t->key, t->kvkey, t->seq);
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

/* The connection acknowledgements go through: read once per batch of them, not per message. */
static natsConnection *ack_connection(nats_source *src)
{
    pthread_mutex_lock(&src->lock);
    natsConnection *nc = src->ack_nc;
    pthread_mutex_unlock(&src->lock);
    return nc;
}

/* "+ACK" to a message's reply subject, through the connection: not natsMsg_Ack, which reaches
 * through the message's subscription, a plain one (nats_worker.c, pull()) that may be gone. */
static void ack(nats_source *src, natsConnection *nc, const char *reply)
{
    natsStatus s = nc && reply ? natsConnection_PublishString(nc, reply, "+ACK") : NATS_CONNECTION_CLOSED;
    if (s == NATS_OK) {
        recd_metric_add(src->g->metrics->nats_acked_total, 0, 1);
        recd_metric_add(src->g->metrics->nats_ack_frames_total, 0, 1);
    }
    else
        log_debug("%s: acknowledgement failed (%s): the message will come again and be dropped as "
                  "a duplicate",
                  src->shown, reply ? natsStatus_GetText(s) : "no reply subject kept");
}

/* What a held message keeps until it is acknowledged: its reply subject, not its bytes (up to a
 * packed message's 64 KiB and more, held a flush interval: heap growth and page faults on every
 * message when they were kept). NULL when it has none, or out of memory: then it comes again
 * after the ack wait and is dropped as the duplicate it is. */
static char *reply_of(natsMsg *msg)
{
    const char *reply = natsMsg_GetReply(msg);
    return reply ? strdup(reply) : NULL;
}

static void settle(nats_source *src, nats_partition *p, uint32_t n)
{
    pthread_mutex_lock(&src->lock);
    p->in_flight -= n;
    src->kicked = true;
    pthread_cond_broadcast(&src->wake); /* room again: the worker may pull */
    pthread_mutex_unlock(&src->lock);
}

/* A message with nothing to wait for: acknowledged now, or on an AckAll consumer held in the
 * pending list like any other, since its acknowledgement would cover every earlier one. One
 * without a stream sequence cannot be placed there: the next acknowledgement covers it. */
static void release(nats_source *src, nats_partition *p, natsMsg *msg, uint64_t seq)
{
    if (!p->acks_all) {
        ack(src, ack_connection(src), natsMsg_GetReply(msg));
        natsMsg_Destroy(msg);
        settle(src, p, 1);
        return;
    }
    if (!seq) {
        natsMsg_Destroy(msg);
        settle(src, p, 1);
        return;
    }
    pending_ack *e = &p->pending[p->npending++];
    memset(e, 0, sizeof *e);
    e->reply = reply_of(msg);
    e->seq = seq;
    e->written = true;
    natsMsg_Destroy(msg);
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
        if (in_pending) { /* the first delivery's acknowledgement settles it */
            natsMsg_Destroy(msg);
            settle(src, p, 1);
        } else {
            release(src, p, msg, seq);
        }
        return;
    }
    if (seq)
        p->highest_taken = seq;
    const uint8_t *data = (const uint8_t *)natsMsg_GetData(msg);
    size_t len = (size_t)natsMsg_GetDataLength(msg);
    char err[512] = "";
    p->in.touched = NULL;
    p->in.reason_set = false;
    recd_wire_reason noted = RECD_WIRE_REASON_NONE;
    int rc = p->dec ? 0 : new_decoder(src, p);
    fleet_pack pk = {0};
    p->cur_packed = rc == 0 && fleet_pack_is(data, len);
    if (p->cur_packed) /* several frames of one session: checked, then decoded as a stream */
        rc = fleet_pack_parse(data, len, (size_t)src->g->cfg->limits.max_frame, &pk, err,
                              sizeof err);
    p->cur_seq = seq;
    p->repeat_of_closed = false;
    p->cur_has_wire = false;
    p->cur_wire = 0;
    p->cur_accepted = false;
    p->cur_samples = 0;
    p->cur_data = p->cur_packed ? pk.frames : data;
    p->cur_len = p->cur_packed ? pk.frames_len : len;
    if (rc == 0) {
        /* limits.max_frame as it is now: a reload may have changed it (each message is whole) */
        recd_wire_decoder_set_max_frame(p->dec, (size_t)src->g->cfg->limits.max_frame);
        rc = recd_wire_decoder_feed(p->dec, p->cur_data, p->cur_len, err, sizeof err);
        noted = recd_wire_decoder_reason(p->dec);
    }
    if (rc == 0 && recd_wire_decoder_pending(p->dec) > 0) {
        rc = -EPROTO;
        snprintf(err, sizeof err, "a message of %zu bytes ends inside a frame", len);
    }
    if (rc < 0 && p->repeat_of_closed) { /* counted as a duplicate (nats_after_close) */
        new_decoder(src, p);
        p->in.touched = NULL;
        release(src, p, msg, seq);
        return;
    }
    if (rc < 0) {
        /* Counted and acknowledged: bad input never blocks its partition. */
        recd_metrics_decode_error(metrics, listener_error_reason(&p->in, rc, noted));
        log_warn("%s: stream message %llu dropped: %s", p->peer, (unsigned long long)seq,
                 err[0] ? err : recd_strerror(rc));
        new_decoder(src, p);
        p->in.touched = NULL;
        release(src, p, msg, seq);
        return;
    }
    if (p->cur_accepted) {
        recd_m_format f = recd_metrics_format_of(p->in.acct_format);
        src->tally.bytes[f] += len;
        src->tally.samples[f] += p->cur_samples;
    }
    pending_ack *e = &p->pending[p->npending++];
    memset(e, 0, sizeof *e);
    e->reply = reply_of(msg);
    e->seq = seq;
    e->s = p->in.touched;
    e->has_wire = p->cur_has_wire;
    e->wire_seq = p->cur_wire;
    if (e->s) {
        e->s->input_pending++;
        e->input_no = e->s->inputs;
        e->lost_before = e->s->lost_total;
        nats_record *rec = nats_record_of(src, e->s);
        if (rec) {
            if (seq > rec->seq_taken)
                rec->seq_taken = seq;
            nats_record_taken(rec); /* a new part: recorded before this wait is set */
        }
    }
    /* Its session's record (an open's own, a new part's) is stored first. */
    e->wait_req = src->req_no;
    p->in.touched = NULL;
    if (p->in.over_process || p->in.over_key[0])
        p->blocked = true;
    natsMsg_Destroy(msg); /* its frames are in the sessions' batches, its open in its record */
}

/* Keeps entry e of p's pending list at *keep, moving it down only when an earlier one went: a
 * pass that settles nothing (most, while written messages wait behind an unwritten one) then
 * writes nothing. */
static void keep_pending(nats_partition *p, size_t *keep, const pending_ack *e)
{
    if (&p->pending[*keep] != e)
        p->pending[*keep] = *e;
    (*keep)++;
}

/* AckAll: one acknowledgement, of the highest written message below every unwritten one, covers
 * the written messages up to it; those above an unwritten one wait (the consumer would take its
 * acknowledgement for theirs). Written messages without a stream sequence go with the next. */
static void ack_written_run(nats_source *src, nats_partition *p, natsConnection *nc)
{
    uint64_t limit = UINT64_MAX; /* an unwritten one without a sequence holds back every one */
    for (size_t i = 0; i < p->npending; i++)
        if (!p->pending[i].written && p->pending[i].seq < limit)
            limit = p->pending[i].seq;
    pending_ack *last = NULL;
    for (size_t i = 0; i < p->npending; i++) {
        pending_ack *e = &p->pending[i];
        if (e->written && e->seq && e->seq < limit && (!last || e->seq > last->seq))
            last = e;
    }
    uint64_t upto = last ? last->seq : 0;
    char *acked = last ? last->reply : NULL;
    size_t keep = 0;
    uint32_t done = 0;
    for (size_t i = 0; i < p->npending; i++) {
        pending_ack *e = &p->pending[i];
        if (e->written && (!e->seq || e->seq <= upto)) {
            if (e->reply != acked)
                free(e->reply);
            done++;
        } else {
            keep_pending(p, &keep, e);
        }
    }
    p->npending = keep;
    if (last) {
        ack(src, nc, acked);
        if (acked)
            recd_metric_add(src->g->metrics->nats_acked_total, 0, done - 1);
        free(acked);
    }
    if (done)
        settle(src, p, done);
}

/* Acknowledges every message of p whose bytes are in files now. */
void nats_ack_written(nats_source *src, nats_partition *p)
{
    if (!p->npending)
        return;
    pthread_mutex_lock(&src->lock);
    uint64_t stored = src->req_done;
    pthread_mutex_unlock(&src->lock);
    natsConnection *nc = ack_connection(src);
    size_t keep = 0;
    uint32_t done = 0;
    for (size_t i = 0; i < p->npending; i++) {
        pending_ack *e = &p->pending[i];
        if (e->written && !p->acks_all) { /* the consumer was made again meanwhile */
            ack(src, nc, e->reply);
            free(e->reply);
            done++;
            continue;
        }
        if (e->written || e->wait_req > stored) {
            keep_pending(p, &keep, e);
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
            nats_record *rec = nats_record_of(src, e->s);
            if (rec && e->seq > rec->seq_written) {
                rec->seq_written = e->seq;
                nats_record_mark(rec);
            }
            if (rec && e->has_wire && (!rec->has_wire || e->wire_seq > rec->wire_written)) {
                rec->wire_written = e->wire_seq;
                rec->has_wire = true;
                nats_record_mark(rec);
            }
            if (p->acks_all) {
                e->written = true;
                nats_pending_release(e); /* nothing more to wait for */
                keep_pending(p, &keep, e);
                continue;
            }
            ack(src, nc, e->reply);
            free(e->reply);
            nats_pending_release(e);
            done++;
        } else {
            keep_pending(p, &keep, e);
        }
    }
    p->npending = keep;
    if (done)
        settle(src, p, done);
    if (p->acks_all)
        ack_written_run(src, p, nc);
}

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
        p->acks_all = p->ack_all;
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
void nats_drain_queues(nats_source *src)
{
    recd_ingest *g = src->g;
    for (uint32_t i = 0; i < src->nparts; i++) {
        nats_partition *p = &src->parts[i];
        if (src->taking_stopped) {
            nats_ack_written(src, p);
            nats_expire_marks(src, p);
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
        nats_ack_written(src, p);
        nats_expire_marks(src, p);
    }
    nats_store_dirty(src, false);
    listener_tally_publish(g->metrics, RECD_M_NATS, &src->tally);
}

#endif
